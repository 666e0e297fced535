//! What a suggestion may write into Markdown: the one function that turns a suggestion's text into
//! the bytes put in place of its quote, for every context the quote can stand in (prose, inline
//! code, a fenced or an indented code block), and the check of the edited chapter that the
//! replacement changed text and nothing else.
//!
//! A suggestion is untrusted text. Written into the book it must render as that text and never as
//! structure: it may not open or close a block or a fence, add HTML, a link, an image or an mdBook
//! directive (`{{#…}}`, which mdBook expands before Markdown is parsed, so `{{#include
//! /etc/passwd}}` in a code block would put that file in the page). Where a text cannot be written
//! safely it is refused with the reason, and nothing is written.

use mdbook_markdown::pulldown_cmark::Event;
use notabene_anchoring::text::TextOptions;
use std::ops::Range;

/// Where a quote stands in its chapter's Markdown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextContext {
    /// Paragraph, heading, list item or table text; `at_line_start` when the quote begins a
    /// source line (where `-`, `#` or `1.` would start a block).
    Prose {
        /// The quote begins a source line.
        at_line_start: bool,
    },
    /// Inside an inline code span (`` `…` ``).
    InlineCode,
    /// Inside a fenced code block opened by `fence_len` times `fence_char`; `prefix` is what
    /// starts each of its content lines (the container's indentation or `> `).
    Fenced {
        /// `` ` `` or `~`.
        fence_char: char,
        /// How many of them open the block.
        fence_len: usize,
        /// Put before each new line of a multi-line replacement.
        prefix: String,
        /// The lines mdBook hides from readers in this block's language.
        hidden: Option<Hidden>,
        /// The quote begins a line of the block.
        at_line_start: bool,
    },
    /// Inside a code block indented by four spaces.
    Indented,
}

/// Which lines of a code block mdBook hides from readers (they are still copied and run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hidden {
    /// Rust: `#` alone or followed by a space (`#[attr]` and `#!` are shown).
    Rust,
    /// `output.html.code.hidelines`: lines starting with this prefix.
    Prefix(String),
}

impl Hidden {
    fn hides(&self, line: &str) -> bool {
        let l = line.trim_start();
        match self {
            Hidden::Rust => l == "#" || l.starts_with("# "),
            Hidden::Prefix(p) => !p.is_empty() && l.starts_with(p.as_str()),
        }
    }
}

/// Whether `c` ends a line anywhere Markdown or a reader sees it: LF, CR (alone or in CRLF),
/// NEL, and Unicode's line and paragraph separators.
pub fn is_line_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// Why a suggestion's text cannot be written where its quote stands: a clause to put after
/// "the suggestion …".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unsafe {
    /// The text holds `{{#`.
    Directive,
    /// A multi-line text in prose.
    ProseLines,
    /// A MathJax delimiter in prose.
    MathJax,
    /// A multi-line text in inline code.
    InlineCodeLines,
    /// A backtick in inline code.
    Backtick,
    /// A multi-line text in an indented code block.
    IndentedLines,
    /// The fenced block's own fence (the fence given).
    Fence(String),
    /// A line the block's language hides.
    HiddenLine,
    /// A directive formed with the text around the edit.
    FormsDirective,
    /// The edited chapter parses otherwise: the first item that differs, now and before.
    Structure {
        /// The item of the edited chapter.
        now: String,
        /// The item of the chapter as it was.
        was: String,
    },
}

impl std::fmt::Display for Unsafe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unsafe::Directive => {
                f.write_str("holds an mdBook directive (`{{#`), which mdBook would expand")
            }
            Unsafe::ProseLines => f.write_str("spans lines, which would change the paragraph"),
            Unsafe::MathJax => f.write_str(
                "holds a MathJax delimiter, which a book with mathjax-support would typeset",
            ),
            Unsafe::InlineCodeLines => f.write_str("spans lines, which inline code cannot hold"),
            Unsafe::Backtick => f.write_str("holds a backtick, which would end the inline code"),
            Unsafe::IndentedLines => {
                f.write_str("spans lines, which this indented code block cannot take as written")
            }
            Unsafe::Fence(fence) => write!(
                f,
                "holds {fence}, the code block's own fence, which would end the block"
            ),
            Unsafe::HiddenLine => {
                f.write_str("would add a line this code block hides from readers")
            }
            Unsafe::FormsDirective => {
                f.write_str("would form an mdBook directive (`{{#…}}`) with the text around it")
            }
            Unsafe::Structure { now, was } => write!(
                f,
                "would change the page's structure ({now} where there was {was})"
            ),
        }
    }
}

/// The bytes to write in place of a quote in `ctx` for a suggestion of `text`, or why it
/// cannot be written (a clause to put after "the suggestion …"). `newline` is the file's line
/// ending, used for the line breaks of a multi-line code replacement.
pub fn replacement(text: &str, ctx: &TextContext, newline: &str) -> Result<String, Unsafe> {
    if has_directive(text) {
        return Err(Unsafe::Directive);
    }
    let multiline = text.chars().any(is_line_break);
    match ctx {
        TextContext::Prose { at_line_start } => {
            if multiline {
                return Err(Unsafe::ProseLines);
            }
            if ["\\(", "\\)", "\\[", "\\]", "$$"]
                .iter()
                .any(|d| text.contains(d))
            {
                return Err(Unsafe::MathJax);
            }
            Ok(escape_markdown(text, *at_line_start))
        }
        TextContext::InlineCode => {
            if multiline {
                return Err(Unsafe::InlineCodeLines);
            }
            if text.contains('`') {
                return Err(Unsafe::Backtick);
            }
            Ok(text.to_string())
        }
        TextContext::Indented => {
            if multiline {
                return Err(Unsafe::IndentedLines);
            }
            Ok(text.to_string())
        }
        TextContext::Fenced {
            fence_char,
            fence_len,
            prefix,
            hidden,
            at_line_start,
        } => {
            let fence: String = std::iter::repeat_n(*fence_char, *fence_len).collect();
            if text.contains(&fence) {
                return Err(Unsafe::Fence(fence));
            }
            if let Some(h) = hidden {
                let mut lines = text.split(is_line_break);
                let first = lines.next().unwrap_or("");
                if (*at_line_start && h.hides(first)) || lines.any(|l| h.hides(l)) {
                    return Err(Unsafe::HiddenLine);
                }
            }
            let mut out = String::with_capacity(text.len());
            let mut chars = text.chars().peekable();
            while let Some(c) = chars.next() {
                if is_line_break(c) {
                    if c == '\r' && chars.peek() == Some(&'\n') {
                        chars.next();
                    }
                    out.push_str(newline);
                    out.push_str(prefix);
                } else {
                    out.push(c);
                }
            }
            Ok(out)
        }
    }
}

/// Whether `text` holds `{{` followed (after optional whitespace) by `#`: the start of an
/// mdBook directive, as mdBook's link preprocessor reads it.
pub fn has_directive(text: &str) -> bool {
    text.match_indices("{{")
        .any(|(i, _)| text[i + 2..].trim_start().starts_with('#'))
}

/// A suggestion is text as readers see it: written into prose it must render as that text,
/// never as markup (emphasis, links, HTML, a table's `|`), so every character Markdown could
/// read as syntax is backslash-escaped; at the start of a line, so is a list or heading marker.
pub fn escape_markdown(text: &str, at_line_start: bool) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    // An ordered-list marker (`2.`, `3)`) is escaped at its dot or parenthesis.
    let digits = text.chars().take_while(char::is_ascii_digit).count();
    let ordered = at_line_start && digits > 0 && text[digits..].starts_with(['.', ')']);
    if at_line_start && text.starts_with(['-', '+', '=']) {
        out.push('\\');
    }
    for (i, ch) in text.char_indices() {
        if (ordered && i == digits)
            || matches!(
                ch,
                '\\' | '`'
                    | '*'
                    | '_'
                    | '['
                    | ']'
                    | '<'
                    | '>'
                    | '{'
                    | '}'
                    | '|'
                    | '~'
                    | '#'
                    | '&'
                    | '$'
            )
        {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

/// Checks the edited Markdown file `new` (whose bytes `edit` are the replacement) against
/// mdBook's directives: no `{{#…}}` may touch the replaced bytes, so none is formed with the
/// text around it (`{{` before a code quote and `#include …` as its suggestion).
pub fn check_directives(new: &str, edit: Range<usize>) -> Result<(), Unsafe> {
    for (i, _) in new.match_indices("{{") {
        if !new[i + 2..].trim_start().starts_with('#') {
            continue;
        }
        let end = new[i..].find("}}").map_or(new.len(), |e| i + e + 2);
        // A backslash before it (mdBook's escape) belongs to it too.
        let start = if new[..i].ends_with('\\') { i - 1 } else { i };
        if start <= edit.end && edit.start <= end {
            return Err(Unsafe::FormsDirective);
        }
    }
    Ok(())
}

/// Checks that the chapter Markdown `new` has exactly the structure of `old`: the same blocks
/// and inline markup, the same links, images and code-block info strings, the same HTML,
/// with only the text between them changed (what mdBook's renderer would make of both, parsed
/// with the book's options).
pub fn check_structure(old: &str, new: &str, options: &TextOptions) -> Result<(), Unsafe> {
    let (a, b) = (skeleton(old, options), skeleton(new, options));
    if a == b {
        return Ok(());
    }
    let at = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let what = |s: Option<&String>| s.map_or("the end".to_string(), |s| s.clone());
    Err(Unsafe::Structure {
        now: what(b.get(at)),
        was: what(a.get(at)),
    })
}

/// The parsed events of `md` with text runs folded into one `text` item: what must not change.
fn skeleton(md: &str, options: &TextOptions) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for event in notabene_anchoring::text::parser(md, options) {
        let item = match event {
            Event::Text(_) | Event::SoftBreak => "text".to_string(),
            Event::Code(_) => "code".to_string(),
            Event::Start(tag) => format!("start {tag:?}"),
            Event::End(tag) => format!("end {tag:?}"),
            Event::Html(h) | Event::InlineHtml(h) => format!("html {h:?}"),
            other => format!("{other:?}"),
        };
        if item == "text" && out.last().is_some_and(|l| l == "text") {
            continue;
        }
        out.push(item);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const INCLUDE: &str = "{{#include /etc/passwd}}";
    const FENCE_BREAK: &str = "one\n```\n\n<img src=x onerror=alert(1)>\n\n```text\ncode";

    fn fenced() -> TextContext {
        TextContext::Fenced {
            fence_char: '`',
            fence_len: 3,
            prefix: String::new(),
            hidden: None,
            at_line_start: false,
        }
    }

    fn prose() -> TextContext {
        TextContext::Prose {
            at_line_start: false,
        }
    }

    #[test]
    fn a_directive_is_refused_in_every_context() {
        for ctx in [
            prose(),
            TextContext::InlineCode,
            fenced(),
            TextContext::Indented,
        ] {
            let err = replacement(INCLUDE, &ctx, "\n").unwrap_err().to_string();
            assert!(err.contains("mdBook directive"), "{ctx:?}: {err}");
            assert!(
                replacement("{{ #title x }}", &ctx, "\n").is_err(),
                "{ctx:?}"
            );
        }
        // Braces without `#` are code (format strings, templates).
        assert_eq!(replacement("{{x}}", &fenced(), "\n").unwrap(), "{{x}}");
    }

    #[test]
    fn a_fence_break_is_refused_in_every_context() {
        for ctx in [
            prose(),
            TextContext::InlineCode,
            fenced(),
            TextContext::Indented,
        ] {
            assert!(replacement(FENCE_BREAK, &ctx, "\n").is_err(), "{ctx:?}");
        }
        let tilde = TextContext::Fenced {
            fence_char: '~',
            fence_len: 4,
            prefix: String::new(),
            hidden: None,
            at_line_start: false,
        };
        assert!(replacement("a\n~~~~\nb", &tilde, "\n").is_err());
        // A shorter run of the fence's character is code.
        assert_eq!(replacement("a ~~~ b", &tilde, "\n").unwrap(), "a ~~~ b");
    }

    #[test]
    fn every_line_break_counts_as_one() {
        for br in ["\n", "\r", "\r\n", "\u{2028}", "\u{2029}", "\u{85}"] {
            let text = format!("plain{br}===");
            assert!(replacement(&text, &prose(), "\n").is_err(), "{br:?}");
            assert!(
                replacement(&text, &TextContext::InlineCode, "\n").is_err(),
                "{br:?}"
            );
            assert!(
                replacement(&text, &TextContext::Indented, "\n").is_err(),
                "{br:?}"
            );
            let in_list = TextContext::Fenced {
                fence_char: '`',
                fence_len: 3,
                prefix: "  ".into(),
                hidden: None,
                at_line_start: false,
            };
            assert_eq!(
                replacement(&format!("a{br}b"), &in_list, "\r\n").unwrap(),
                "a\r\n  b"
            );
        }
        assert!(replacement("plain\r===\r- item", &prose(), "\n").is_err());
    }

    #[test]
    fn prose_is_escaped_and_inline_code_keeps_its_backticks() {
        assert_eq!(
            escape_markdown("a *b* [c](d) <i> ![x](y)", false),
            "a \\*b\\* \\[c\\](d) \\<i\\> !\\[x\\](y)"
        );
        assert_eq!(escape_markdown("- item", true), "\\- item");
        assert_eq!(escape_markdown("2. two", true), "2\\. two");
        assert_eq!(escape_markdown("- item", false), "- item");
        assert_eq!(
            replacement("a < b", &TextContext::InlineCode, "\n").unwrap(),
            "a < b"
        );
        assert!(replacement("a ` b", &TextContext::InlineCode, "\n").is_err());
    }

    #[test]
    fn hidden_lines_math_and_hard_breaks_are_refused() {
        let rust = TextContext::Fenced {
            fence_char: '`',
            fence_len: 3,
            prefix: String::new(),
            hidden: Some(Hidden::Rust),
            at_line_start: false,
        };
        assert!(replacement("a\n# secret()", &rust, "\n").is_err());
        assert!(replacement("a\n#", &rust, "\n").is_err());
        assert_eq!(
            replacement("a\n#[derive(Debug)]", &rust, "\n").unwrap(),
            "a\n#[derive(Debug)]"
        );
        assert_eq!(
            replacement("# not at a line start", &rust, "\n").unwrap(),
            "# not at a line start"
        );
        let start = TextContext::Fenced {
            fence_char: '`',
            fence_len: 3,
            prefix: String::new(),
            hidden: Some(Hidden::Rust),
            at_line_start: true,
        };
        assert!(replacement("# secret()", &start, "\n").is_err());
        for math in ["\\(x\\)", "\\[x\\]", "$$x$$"] {
            assert!(replacement(math, &prose(), "\n").is_err(), "{math}");
        }
        let o = TextOptions::default();
        assert!(check_structure("a b\nc\n", "a b  \nc\n", &o).is_err());
    }

    #[test]
    fn directives_formed_with_the_text_around_are_found() {
        // `{{` stood before the quote, `#include x}}` is the replacement.
        let new = "```\n{{#include x}}\n```\n";
        assert!(check_directives(new, 6..18).is_err());
        assert!(check_directives("{{#title T}}\n\nplain text\n", 14..19).is_ok());
        assert!(check_directives("a \\{{#include x}} b", 2..3).is_err());
    }

    #[test]
    fn the_structure_check_sees_blocks_html_and_links() {
        let o = TextOptions::default();
        let old = "Text here.\n\n```\ncode line\n```\n";
        assert!(check_structure(old, "Text there.\n\n```\nother line\n```\n", &o).is_ok());
        let broken =
            "Text here.\n\n```\none\n```\n\n<img src=x onerror=1>\n\n```text\ncode line\n```\n";
        let err = check_structure(old, broken, &o).unwrap_err().to_string();
        assert!(
            err.starts_with("would change the page's structure"),
            "{err}"
        );
        assert!(check_structure("a b c\n", "a <b>x</b> c\n", &o).is_err());
        assert!(check_structure("a [l](u) c\n", "a [l](v) c\n", &o).is_err());
        assert!(check_structure("    code\n", "    code\nmore\n", &o).is_err());
    }
}
