//! Code spans a mark enters: `` `Vec<T>` `` is written `<code>Vec&#60;T&#62;</code>` (a raw
//! element, its ASCII punctuation as character references, so nothing in it is Markdown), and
//! a mark can then put a piece inside it, as in any raw element. The page's text is the same
//! (checked): what a reader sees does not change.

use super::TextMark;
use super::runs::is_full_reference;
use notabene_anchoring::text::{NO_INLINE, PageText, SegKind, TextOptions, page_text};
use std::fmt::Write as _;
use std::ops::Range;

/// The chapter with every code span a mark starts or ends inside written as raw `<code>`, and
/// its text model; None when no mark does, or the text would not stay the same.
pub(super) fn open_entered(
    md: &str,
    page: &PageText,
    marks: &[TextMark],
    options: &TextOptions,
) -> Option<(String, PageText)> {
    let cuts = |r: &Range<usize>, at: usize| r.start < at && at < r.end;
    // (source range, new text): each entered span, and the label of each shortcut or
    // collapsed reference link around one (its label is its source text, which changes).
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    for seg in page.segments.iter().filter(|s| s.kind == SegKind::CodeSpan) {
        if !marks
            .iter()
            .any(|m| cuts(&seg.text, m.text.start) || cuts(&seg.text, m.text.end))
        {
            continue;
        }
        let mut code = String::from("<code>");
        for c in page.text.get(seg.text.clone())?.chars() {
            if c.is_ascii_punctuation() {
                let _ = write!(code, "&#{};", c as u32);
            } else {
                code.push(c);
            }
        }
        code.push_str("</code>");
        edits.push((seg.src.clone(), code));
        let mut inline = seg.inline;
        while inline != NO_INLINE {
            let el = &page.inlines[inline as usize];
            let whole = md.get(el.src.clone())?;
            if whole.len() >= 2 && whole.ends_with(']') && !is_full_reference(whole) {
                let label = &whole[1..whole.len() - 1];
                if md[el.src.end..].starts_with("[]") {
                    edits.push((el.src.end + 1..el.src.end + 1, label.to_string()));
                } else {
                    edits.push((el.src.end..el.src.end, format!("[{label}]")));
                }
            }
            inline = el.parent;
        }
    }
    if edits.is_empty() {
        return None;
    }
    edits.sort_by_key(|(r, _)| (r.start, r.end));
    edits.dedup();
    let mut out = String::with_capacity(md.len() + edits.len() * 64);
    let mut pos = 0;
    for (src, text) in &edits {
        out.push_str(md.get(pos..src.start)?);
        out.push_str(text);
        pos = src.end;
    }
    out.push_str(md.get(pos..)?);
    let opened = page_text(&out, options);
    (opened.text == page.text).then_some((out, opened))
}
