//! The raw inline HTML tags of a chapter, paired as mdBook's tree builder pairs them, so a mark
//! never straddles an open tag: a mark that enters a raw element (`<abbr>`, `<code>`) is cut
//! into a piece inside it and pieces outside, as for a Markdown inline element.

use notabene_anchoring::text::PageText;
use std::ops::Range;

/// The raw inline HTML elements of a chapter, paired as mdBook's tree builder pairs them: an
/// end tag closes the innermost open tag only if it has the same name and was opened in the
/// same Markdown element; open tags still open when their Markdown element ends are closed
/// there by mdBook.
#[derive(Debug, Default)]
pub(super) struct RawTags {
    /// (start tag, end tag) source ranges.
    pub(super) pairs: Vec<(Range<usize>, Range<usize>)>,
    /// Start tags without an end tag.
    pub(super) unclosed: Vec<Range<usize>>,
}

impl RawTags {
    pub(super) fn new(md: &str, options: &notabene_anchoring::text::TextOptions) -> RawTags {
        use mdbook_markdown::pulldown_cmark::Event;
        let mut tags = RawTags::default();
        if !md.contains('<') {
            return tags;
        }
        let mut m = mdbook_markdown::MarkdownOptions::default();
        m.smart_punctuation = options.smart_punctuation;
        m.definition_lists = options.definition_lists;
        m.admonitions = options.admonitions;
        // (name, start tag, Markdown depth)
        let mut open: Vec<(String, Range<usize>, usize)> = Vec::new();
        let mut depth = 0usize;
        for (event, range) in mdbook_markdown::new_cmark_parser(md, &m).into_offset_iter() {
            match event {
                Event::Start(_) => depth += 1,
                Event::End(_) => {
                    while open.last().is_some_and(|o| o.2 == depth) {
                        tags.unclosed.push(open.pop().expect("non-empty").1);
                    }
                    depth = depth.saturating_sub(1);
                }
                Event::InlineHtml(html) => {
                    let Some((name, end_tag, self_closing)) = tag_name(&html) else {
                        continue;
                    };
                    if end_tag {
                        if open.last().is_some_and(|o| o.0 == name && o.2 == depth) {
                            let (_, start, _) = open.pop().expect("non-empty");
                            tags.pairs.push((start, range));
                        }
                    } else if !self_closing && !is_void(&name) {
                        open.push((name, range, depth));
                    }
                }
                _ => {}
            }
        }
        tags.unclosed.extend(open.into_iter().map(|o| o.1));
        tags
    }

    /// Widens `src` over the raw elements it enters or leaves, so a mark nests properly with
    /// them; a start tag that is never closed is left out of the mark (it starts after it).
    pub(super) fn balance(&self, src: &mut Range<usize>) {
        let inside =
            |r: &Range<usize>, src: &Range<usize>| r.start >= src.start && r.start < src.end;
        for _ in 0..16 {
            let mut changed = false;
            for (a, b) in &self.pairs {
                if inside(a, src) != inside(b, src) && (a.start < src.start || b.end > src.end) {
                    *src = src.start.min(a.start)..src.end.max(b.end);
                    changed = true;
                }
            }
            for a in &self.unclosed {
                if inside(a, src) {
                    src.start = a.end.min(src.end);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }
}

/// A paired raw inline element: its tags, the page text inside it, and the innermost paired
/// element around it.
#[derive(Debug, Clone)]
pub(super) struct RawElement {
    /// The start tag's source range.
    pub(super) start: Range<usize>,
    /// The end tag's source range.
    pub(super) end: Range<usize>,
    /// The page text inside it (None when it holds none).
    pub(super) text: Option<Range<usize>>,
    /// The enclosing raw element, or [`NO_RAW`].
    pub(super) parent: u32,
}

/// No raw element.
pub(super) const NO_RAW: u32 = u32::MAX;

impl RawTags {
    /// The paired elements, with the page text each holds and their nesting.
    pub(super) fn elements(&self, page: &PageText) -> Vec<RawElement> {
        let mut out: Vec<RawElement> = self
            .pairs
            .iter()
            .map(|(a, b)| RawElement {
                start: a.clone(),
                end: b.clone(),
                text: None,
                parent: NO_RAW,
            })
            .collect();
        let holds = |outer: &RawElement, src: &Range<usize>| {
            outer.start.end <= src.start && src.end <= outer.end.start
        };
        for i in 0..out.len() {
            let whole = out[i].start.start..out[i].end.end;
            // The innermost other element holding this one: the one starting last.
            out[i].parent = (0..out.len())
                .filter(|&j| j != i && holds(&out[j], &whole))
                .max_by_key(|&j| out[j].start.start)
                .map_or(NO_RAW, |j| j as u32);
        }
        for s in &page.segments {
            for el in out.iter_mut() {
                if holds(el, &s.src) && !s.text.is_empty() {
                    let r = el.text.get_or_insert(s.text.clone());
                    r.start = r.start.min(s.text.start);
                    r.end = r.end.max(s.text.end);
                }
            }
        }
        out
    }
}

/// The innermost element of `elements` holding source range `src`, or [`NO_RAW`].
pub(super) fn innermost(elements: &[RawElement], src: &Range<usize>) -> u32 {
    elements
        .iter()
        .enumerate()
        .filter(|(_, el)| el.start.end <= src.start && src.end <= el.end.start)
        .max_by_key(|(_, el)| el.start.start)
        .map_or(NO_RAW, |(i, _)| i as u32)
}

/// The tag name of a raw HTML tag (`<span …>`, `</span>`, `<br/>`), lowercased, whether it is an
/// end tag, and whether it is self-closing; None for comments and anything else.
pub(super) fn tag_name(html: &str) -> Option<(String, bool, bool)> {
    let t = html.trim();
    let rest = t.strip_prefix('<')?;
    let (end_tag, rest) = match rest.strip_prefix('/') {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let name: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) || !t.ends_with('>') {
        return None;
    }
    Some((name.to_ascii_lowercase(), end_tag, t.ends_with("/>")))
}

/// HTML void elements (no end tag), as mdBook lists them.
pub(super) fn is_void(name: &str) -> bool {
    matches!(
        name,
        "area"
            | "base"
            | "br"
            | "col"
            | "embed"
            | "hr"
            | "img"
            | "input"
            | "link"
            | "meta"
            | "param"
            | "source"
            | "track"
            | "wbr"
    )
}
