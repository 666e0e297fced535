//! Page ids — the store's `page` key — and their mapping back to Markdown source files.
//!
//! A page id is `<page-prefix>/<chapter path relative to src, without extension>`, `/`
//! separated and case-preserving, so an agent finds the file by appending `.md`.

use crate::config::Book;
use crate::{Result, bail};
use std::path::PathBuf;

/// Refuses page ids that could escape the store or confuse tools: empty ids, absolute paths,
/// backslashes, empty, `.` or `..` segments, NUL and other control characters.
pub fn validate_page_id(page: &str) -> Result<()> {
    let reason = if page.is_empty() {
        Some("it is empty")
    } else if page.chars().any(char::is_control) {
        Some("it contains a control character")
    } else if page.contains('\\') {
        Some("it contains a backslash")
    } else if page.starts_with('/') || (page.len() >= 2 && page.as_bytes()[1] == b':') {
        Some("it is an absolute path")
    } else if page.split('/').any(|s| s == "..") {
        Some("it contains a '..' segment")
    } else if page.split('/').any(|s| s.is_empty() || s == ".") {
        Some("it contains an empty or '.' segment")
    } else {
        None
    };
    match reason {
        Some(r) => bail!("invalid page id {page:?}: {r} (page)"),
        None => Ok(()),
    }
}

/// The Markdown file of `page` in `book`, if the page lies under the book's page prefix and
/// the file exists: `<src>/<rest>.md`.
pub fn source_file(book: &Book, prefix: &str, page: &str) -> Option<PathBuf> {
    let rest = if prefix.is_empty() {
        page
    } else {
        page.strip_prefix(prefix)?.strip_prefix('/')?
    };
    if validate_page_id(rest).is_err() {
        return None;
    }
    let file = book.src_dir().join(format!("{rest}.md"));
    file.is_file().then_some(file)
}

/// Whether `page` is under `prefix` (and so belongs to this book).
pub fn under_prefix(prefix: &str, page: &str) -> bool {
    prefix.is_empty() || page.strip_prefix(prefix).is_some_and(|r| r.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_id_validation() {
        for ok in ["src/README", "docs/src/guide/setup.fr", "src/a b/ü"] {
            validate_page_id(ok).unwrap();
        }
        for (bad, why) in [
            ("", "it is empty"),
            ("src/../etc", "it contains a '..' segment"),
            ("/etc/passwd", "it is an absolute path"),
            ("C:/x", "it is an absolute path"),
            ("src\\x", "it contains a backslash"),
            ("src/x\0y", "it contains a control character"),
            ("src//x", "it contains an empty or '.' segment"),
            ("src/./x", "it contains an empty or '.' segment"),
        ] {
            let e = validate_page_id(bad).unwrap_err();
            assert_eq!(e.message(), format!("invalid page id {bad:?}: {why} (page)"));
        }
    }
}
