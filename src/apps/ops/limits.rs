//! The size limits of everything a person or an agent sends in, and the checks that apply them: the
//! one place the CLI, the API (and whatever adaptor comes next) take them from.

use crate::Result;
use notabene_anchoring::text::blocks;
use notabene_core::error::{Error, ErrorKind};

/// Largest accepted request body (the API).
pub const MAX_REQUEST: usize = 1024 * 1024;
/// Largest accepted comment text (a message, an edit, a resolution note).
pub const MAX_BODY: usize = 64 * 1024;
/// Largest accepted quote, prefix, suffix, section, block key, label, author or suggestion.
pub const MAX_FIELD: usize = 8 * 1024;
/// Largest accepted MCP message (one line on `notabene mcp`'s stdin). A tool call carries a few
/// texts of at most [`MAX_BODY`] and fields of at most [`MAX_FIELD`], so a valid one is far
/// smaller; it stays under rmcp's own line cap (16 MiB), past which rmcp drops a line without
/// an answer. A line over it is answered with an error and skipped.
pub const MAX_MCP_MESSAGE: usize = 8 * 1024 * 1024;
/// Largest accepted page id.
pub const MAX_PAGE_ID: usize = 1024;
/// Largest accepted comment id or journal entry id.
pub const MAX_ID: usize = 256;
/// A block label is cut to this many characters (as the original's client cuts it).
pub const LABEL_CHARS: usize = blocks::LABEL_CHARS;

/// A message text: trimmed, not empty, at most [`MAX_BODY`] bytes.
pub fn text<'a>(body: &'a str, field: &'static str) -> Result<&'a str> {
    let t = body.trim();
    if t.is_empty() {
        return Err(Error::of(
            ErrorKind::Invalid,
            "the text must not be empty",
            field,
        ));
    }
    if t.len() > MAX_BODY {
        return Err(Error::of(
            ErrorKind::TooLarge,
            format!("the text is {} bytes; the limit is {MAX_BODY}", t.len()),
            field,
        ));
    }
    Ok(t)
}

/// A short field (quote, context, label, author…): at most `max` bytes.
pub fn short<'a>(value: &'a str, max: usize, field: &'static str) -> Result<&'a str> {
    if value.len() > max {
        return Err(Error::of(
            ErrorKind::TooLarge,
            format!("{field} is {} bytes; the limit is {max}", value.len()),
            field,
        ));
    }
    Ok(value)
}

/// A block label as stored: its first [`LABEL_CHARS`] characters.
pub fn label(value: &str) -> String {
    blocks::cap(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_inclusive_and_name_the_field() {
        assert_eq!(text(&"x".repeat(MAX_BODY), "body").unwrap().len(), MAX_BODY);
        let e = text(&"x".repeat(MAX_BODY + 1), "body").unwrap_err();
        assert_eq!(
            (e.kind(), e.message()),
            (
                ErrorKind::TooLarge,
                "the text is 65537 bytes; the limit is 65536 (body)"
            )
        );
        let e = text("  \n", "reply").unwrap_err();
        assert_eq!(e.message(), "the text must not be empty (reply)");
        assert_eq!(
            short(&"q".repeat(MAX_FIELD + 1), MAX_FIELD, "quote")
                .unwrap_err()
                .message(),
            "quote is 8193 bytes; the limit is 8192 (quote)"
        );
        assert_eq!(label(&"é".repeat(100)).chars().count(), LABEL_CHARS);
    }
}
