//! Injection: writes the markers of placed anchors into a chapter's Markdown as raw inline
//! HTML, without changing what a reader sees.
//!
//! * Text anchors become `<mark class="nb-mark" data-nb-id data-nb-status>` elements, one per
//!   inline run, so every tag opens and closes inside the same Markdown block and inline
//!   element. Boundaries are snapped outward to word boundaries (to whitespace when a word
//!   boundary would change how the Markdown parses); an inline element (emphasis,
//!   link, …) that is covered whole is wrapped whole; code spans are wrapped, never entered.
//!   Overlapping anchors are split into properly nested elements.
//! * Text inside code blocks is never touched: an empty `<span class="nb-code-anchor">` goes on
//!   the line before a fenced block, and the data island carries the exact text and offset.
//! * Images are wrapped in `<span class="nb-block" data-nb-block="IDS">`; every ```` ```mermaid ````
//!   fence becomes a one-line `<pre class="mermaid">` holding its escaped source.
//! * One data island per chapter: `<script type="application/json" class="nb-data">`.
//!
//! The result is checked by re-deriving the text model: if the visible text changed, the text
//! markers are dropped for that chapter (and reported), never the reader's text.

use crate::text::blocks::BlockKind;
use crate::text::{NO_INLINE, PageText, SegKind};
use std::collections::BTreeMap;
use std::ops::Range;

/// A placed text anchor to mark.
#[derive(Debug, Clone)]
pub struct TextMark {
    /// Comment id.
    pub id: String,
    /// Comment status (`open`, `addressed`).
    pub status: String,
    /// Raw text byte range in the page text.
    pub text: Range<usize>,
}

/// Everything to inject into one chapter.
#[derive(Debug, Clone, Default)]
pub struct Injection {
    /// Text anchors.
    pub marks: Vec<TextMark>,
    /// Block index → comment ids anchored on it.
    pub blocks: BTreeMap<usize, Vec<String>>,
    /// Code block index → comment ids with a match inside it.
    pub code: BTreeMap<usize, Vec<String>>,
    /// The data island JSON (already escaped for a script element), or None.
    pub island: Option<(String, String)>,
}

/// What happened while injecting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Text markers were dropped because they would have changed the visible text.
    pub marks_dropped: bool,
}

/// Escapes text for an HTML attribute or element content.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Escapes JSON so it can sit inside `<script>`: `<`, `>`, `&`, U+2028 and U+2029 become
/// `\uXXXX` escapes (still the same JSON value).
pub fn escape_script_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + json.len() / 16);
    let mut last = 0;
    for (i, c) in json.char_indices() {
        let esc = match c {
            '<' => "\\u003c",
            '>' => "\\u003e",
            '&' => "\\u0026",
            '\u{2028}' => "\\u2028",
            '\u{2029}' => "\\u2029",
            _ => continue,
        };
        out.push_str(&json[last..i]);
        out.push_str(esc);
        last = i + c.len_utf8();
    }
    out.push_str(&json[last..]);
    out
}

/// One contiguous piece of a mark at one nesting level.
#[derive(Debug, Clone)]
struct Run {
    level: (u32, u32),
    src: Range<usize>,
    mark: usize,
}

/// Text range covered by each inline element (over all segments inside it).
fn inline_text_ranges(page: &PageText) -> Vec<Option<Range<usize>>> {
    let mut out: Vec<Option<Range<usize>>> = vec![None; page.inlines.len()];
    for s in &page.segments {
        let mut i = s.inline;
        while i != NO_INLINE {
            let r = out[i as usize].get_or_insert(s.text.clone());
            r.start = r.start.min(s.text.start);
            r.end = r.end.max(s.text.end);
            i = page.inlines[i as usize].parent;
        }
    }
    out
}

/// How far a mark's ends are widened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Snap {
    /// To the ends of the words they cut (letters and digits).
    Word,
    /// To whitespace: punctuation and markup delimiters next to the text are included.
    Space,
}

/// Widens `[a, b)` to word (or whitespace) boundaries without leaving the block of its ends.
fn snap(page: &PageText, a: usize, b: usize, mode: Snap) -> (usize, usize) {
    let text = &page.text;
    let stops = |c: char| match mode {
        Snap::Word => !c.is_alphanumeric(),
        Snap::Space => c.is_whitespace(),
    };
    let block_at = |pos: usize| page.segment_at(pos).map(|i| page.segments[i].block);
    let (ba, bb) = (block_at(a), block_at(b.saturating_sub(1).max(a)));
    let mut a2 = a;
    while let Some(c) = text[..a2].chars().next_back() {
        if stops(c) || block_at(a2 - c.len_utf8()) != ba {
            break;
        }
        a2 -= c.len_utf8();
    }
    let mut b2 = b;
    while let Some(c) = text[b2..].chars().next() {
        if stops(c) || block_at(b2) != bb {
            break;
        }
        b2 += c.len_utf8();
    }
    (a2, b2)
}

/// The runs of one text mark.
fn runs_of(
    md: &str,
    page: &PageText,
    tags: &RawTags,
    inline_text: &[Option<Range<usize>>],
    mark: usize,
    range: &Range<usize>,
    mode: Snap,
) -> Vec<Run> {
    let (a, b) = snap(page, range.start, range.end, mode);
    let mut runs: Vec<Run> = Vec::new();
    let first = page.segments.partition_point(|s| s.text.end <= a);
    for seg in page.segments[first..]
        .iter()
        .take_while(|s| s.text.start < b)
    {
        if !matches!(
            seg.kind,
            SegKind::Plain | SegKind::Atomic | SegKind::CodeSpan
        ) || seg.text.is_empty()
        {
            // Raw text and code blocks cannot hold markup: a run stops here.
            runs.push(Run {
                level: (u32::MAX, u32::MAX),
                src: 0..0,
                mark,
            });
            continue;
        }
        let (sa, sb) = (seg.text.start.max(a), seg.text.end.min(b));
        let mut src = if seg.kind.maps_exactly() {
            seg.src.start + (sa - seg.text.start)..seg.src.start + (sb - seg.text.start)
        } else {
            seg.src.clone()
        };
        // A backslash escape (`\*`) maps to the escaped char: keep the backslash with it.
        let backslashes = md[..src.start]
            .bytes()
            .rev()
            .take_while(|&c| c == b'\\')
            .count();
        if backslashes % 2 == 1
            && md[src.start..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_punctuation())
        {
            src.start -= 1;
        }
        // Lift out of inline elements covered whole, and out of reference links
        // (`[text]`, `[text][]`, `[text][label]`), whose text may be their label: markup
        // inside would unlink them. The `[]` of a collapsed reference goes with its link.
        let mut inline = seg.inline;
        while inline != NO_INLINE {
            let el = &page.inlines[inline as usize];
            let reference = md[el.src.clone()].ends_with(']');
            let covered =
                matches!(&inline_text[inline as usize], Some(r) if r.start >= a && r.end <= b);
            if !covered && !reference {
                break;
            }
            let mut end = el.src.end;
            if reference && md[end..].starts_with("[]") {
                end += 2;
            }
            src = src.start.min(el.src.start)..src.end.max(end);
            inline = el.parent;
        }
        let level = (seg.block, inline);
        // Leaving an inline element in the middle of a word (`[RFC](u),`, `**a b**c`): a new
        // `<mark>` there would split the word for the search index (every element start is a
        // word break). Take the element whole instead, at the outer level.
        let glued = page.text[..sa]
            .chars()
            .next_back()
            .is_some_and(|c| !c.is_whitespace())
            && page.text[sa..]
                .chars()
                .next()
                .is_some_and(|c| !c.is_whitespace());
        if glued
            && let Some(last) = runs.last_mut()
            && last.level.0 == level.0
            && last.level.1 != level.1
        {
            let mut up = last.level.1;
            let mut lifted = last.src.clone();
            while up != NO_INLINE && up != level.1 {
                let el = &page.inlines[up as usize];
                let mut end = el.src.end;
                if md[el.src.clone()].ends_with(']') && md[end..].starts_with("[]") {
                    end += 2;
                }
                lifted = lifted.start.min(el.src.start)..lifted.end.max(end);
                up = el.parent;
            }
            if up == level.1 {
                last.level = level;
                last.src = lifted;
            }
        }
        match runs.last_mut() {
            Some(last) if last.level == level => {
                last.src.start = last.src.start.min(src.start);
                last.src.end = last.src.end.max(src.end);
            }
            _ => runs.push(Run { level, src, mark }),
        }
    }
    for r in &mut runs {
        tags.balance(&mut r.src);
    }
    // A run ending in a soft break would close its mark on the next line, before that line's
    // container markers (`> `): close it before the line break instead. After a literal
    // backslash (`## a\`) the closing tag would be escaped: close it before the backslash.
    for r in &mut runs {
        while r.src.end > r.src.start && matches!(md.as_bytes()[r.src.end - 1], b'\n' | b'\r') {
            r.src.end -= 1;
        }
        let backslashes = md[r.src.start..r.src.end]
            .bytes()
            .rev()
            .take_while(|&c| c == b'\\')
            .count();
        if backslashes % 2 == 1 {
            r.src.end -= 1;
        }
    }
    runs.retain(|r| r.level.0 != u32::MAX && !r.src.is_empty());
    runs
}

/// The raw inline HTML elements of a chapter, paired as mdBook's tree builder pairs them: an
/// end tag closes the innermost open tag only if it has the same name and was opened in the
/// same Markdown element; open tags still open when their Markdown element ends are closed
/// there by mdBook.
#[derive(Debug, Default)]
struct RawTags {
    /// (start tag, end tag) source ranges.
    pairs: Vec<(Range<usize>, Range<usize>)>,
    /// Start tags without an end tag.
    unclosed: Vec<Range<usize>>,
}

impl RawTags {
    fn new(md: &str, options: &crate::text::TextOptions) -> RawTags {
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
    fn balance(&self, src: &mut Range<usize>) {
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

/// The tag name of a raw HTML tag (`<span …>`, `</span>`, `<br/>`), lowercased, whether it is an
/// end tag, and whether it is self-closing; None for comments and anything else.
fn tag_name(html: &str) -> Option<(String, bool, bool)> {
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
fn is_void(name: &str) -> bool {
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

/// An insertion at a Markdown offset; `order` puts closing tags before opening ones.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Insert {
    at: usize,
    order: u8,
    seq: usize,
    text: String,
}

/// The `<mark>` insertions of all text marks, split where they overlap.
fn mark_inserts(
    md: &str,
    page: &PageText,
    tags: &RawTags,
    marks: &[TextMark],
    mode: Snap,
    out: &mut Vec<Insert>,
) {
    let inline_text = inline_text_ranges(page);
    let mut by_level: BTreeMap<(u32, u32), Vec<Run>> = BTreeMap::new();
    for (i, m) in marks.iter().enumerate() {
        for r in runs_of(md, page, tags, &inline_text, i, &m.text, mode) {
            by_level.entry(r.level).or_default().push(r);
        }
    }
    for runs in by_level.values() {
        let mut cuts: Vec<usize> = runs.iter().flat_map(|r| [r.src.start, r.src.end]).collect();
        cuts.sort_unstable();
        cuts.dedup();
        // Elementary intervals with the same active marks are merged.
        let mut prev: Option<(usize, usize, Vec<usize>)> = None;
        let flush = |iv: (usize, usize, Vec<usize>), out: &mut Vec<Insert>| {
            let (p, q, active) = iv;
            for &m in &active {
                let mk = &marks[m];
                out.push(Insert {
                    at: p,
                    order: 1,
                    seq: m,
                    text: format!(
                        "<mark class=\"nb-mark\" data-nb-id=\"{}\" data-nb-status=\"{}\">",
                        escape_html(&mk.id),
                        escape_html(&mk.status)
                    ),
                });
                out.push(Insert {
                    at: q,
                    order: 0,
                    seq: usize::MAX - m,
                    text: "</mark>".into(),
                });
            }
        };
        for w in cuts.windows(2) {
            let (p, q) = (w[0], w[1]);
            let mut active: Vec<usize> = runs
                .iter()
                .filter(|r| r.src.start <= p && r.src.end >= q)
                .map(|r| r.mark)
                .collect();
            active.sort_unstable();
            active.dedup();
            match &mut prev {
                Some((_, pq, pa)) if *pq == p && *pa == active => *pq = q,
                _ => {
                    if let Some(iv) = prev.take()
                        && !iv.2.is_empty()
                    {
                        flush(iv, out);
                    }
                    prev = Some((p, q, active));
                }
            }
        }
        if let Some(iv) = prev
            && !iv.2.is_empty()
        {
            flush(iv, out);
        }
    }
}

/// The prefix of the line holding `pos` (container markers and indentation), if it is made
/// only of spaces, tabs and `>`.
fn line_prefix(md: &str, pos: usize) -> Option<&str> {
    let start = md[..pos].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let prefix = &md[start..pos];
    prefix
        .chars()
        .all(|c| c == ' ' || c == '\t' || c == '>')
        .then_some(prefix)
}

fn apply(md: &str, mut inserts: Vec<Insert>, replaces: &[(Range<usize>, String)]) -> String {
    inserts.sort();
    let mut out = String::with_capacity(md.len() + inserts.len() * 64);
    let mut pos = 0;
    let mut ins = inserts.into_iter().peekable();
    let mut reps = replaces.iter().peekable();
    loop {
        let next_ins = ins.peek().map(|i| i.at);
        let next_rep = reps.peek().map(|r| r.0.start);
        match (next_ins, next_rep) {
            (Some(i), r) if r.is_none_or(|r| i <= r) => {
                let i = ins.next().expect("peeked");
                if i.at >= pos {
                    out.push_str(&md[pos..i.at]);
                    pos = i.at;
                    out.push_str(&i.text);
                }
            }
            (_, Some(_)) => {
                let (range, text) = reps.next().expect("peeked");
                if range.start >= pos {
                    out.push_str(&md[pos..range.start]);
                    out.push_str(text);
                    pos = range.end;
                }
            }
            (None, None) => break,
            (Some(_), None) => unreachable!("covered by the first arm"),
        }
    }
    out.push_str(&md[pos..]);
    out
}

/// Builds the chapter's new Markdown. Mermaid fences are converted whether or not they carry
/// comments, so diagrams render with the usual mermaid script.
pub fn inject(
    md: &str,
    page: &PageText,
    inj: &Injection,
    options: &crate::text::TextOptions,
) -> (String, Outcome) {
    let mut structural: Vec<Insert> = Vec::new();
    let mut replaces: Vec<(Range<usize>, String)> = Vec::new();
    for (i, b) in page.blocks.iter().enumerate() {
        let ids = inj.blocks.get(&i).map(|v| v.join(" ")).unwrap_or_default();
        match b.kind {
            BlockKind::Mermaid => {
                let source = b.source.as_deref().unwrap_or("");
                let escaped = escape_html(source)
                    .replace("\r\n", "&#10;")
                    .replace(['\n', '\r'], "&#10;");
                let attrs = if ids.is_empty() {
                    String::new()
                } else {
                    format!(" data-nb-block=\"{}\"", escape_html(&ids))
                };
                let nl = if md[b.src.clone()].ends_with('\n') {
                    "\n"
                } else {
                    ""
                };
                replaces.push((
                    b.src.clone(),
                    format!(
                        "<pre class=\"mermaid\" data-nb-key=\"{}\"{attrs}>{escaped}</pre>{nl}",
                        escape_html(&b.key)
                    ),
                ));
            }
            BlockKind::Image if !ids.is_empty() && !b.raw_html => {
                structural.push(Insert {
                    at: b.src.start,
                    order: 1,
                    seq: 0,
                    text: format!(
                        "<span class=\"nb-block\" data-nb-block=\"{}\">",
                        escape_html(&ids)
                    ),
                });
                structural.push(Insert {
                    at: b.src.end,
                    order: 0,
                    seq: usize::MAX,
                    text: "</span>".into(),
                });
            }
            BlockKind::Image => {}
        }
    }
    for (&n, ids) in &inj.code {
        let Some(cb) = page.code_blocks.get(n) else {
            continue;
        };
        let fenced = md[cb.src.clone()].trim_start().starts_with("```")
            || md[cb.src.clone()].trim_start().starts_with("~~~");
        if let Some(prefix) = line_prefix(md, cb.src.start).filter(|_| fenced) {
            let spans: String = ids
                .iter()
                .map(|id| {
                    format!(
                        "<span class=\"nb-code-anchor\" data-nb-id=\"{}\"></span>",
                        escape_html(id)
                    )
                })
                .collect();
            structural.push(Insert {
                at: cb.src.start,
                order: 0,
                seq: n,
                text: format!("{spans}\n{prefix}"),
            });
        }
    }
    replaces.sort_by_key(|r| r.0.start);
    let island = inj
        .island
        .as_ref()
        .map(|(page_id, json)| format!("\n\n<script type=\"application/json\" class=\"nb-data\" data-nb-page=\"{}\">{json}</script>\n", escape_html(page_id)))
        .unwrap_or_default();
    // Markers add no text: the re-derived text must have the same words (whitespace between
    // blocks may differ where a fence became raw HTML).
    let same_text = |candidate: &str| {
        crate::text::page_text(candidate, options)
            .text
            .split_whitespace()
            .eq(page.text.split_whitespace())
    };

    // Word boundaries first; if a mark next to punctuation (a smart quote, an emphasis
    // delimiter) would change how the Markdown parses, widen to whitespace; else drop marks.
    let tags = if inj.marks.is_empty() {
        RawTags::default()
    } else {
        RawTags::new(md, options)
    };
    for mode in [Snap::Word, Snap::Space] {
        let mut with_marks = structural.clone();
        mark_inserts(md, page, &tags, &inj.marks, mode, &mut with_marks);
        // (The island goes after the check: a script is no text, and it can be large.)
        let full = apply(md, with_marks, &replaces);
        if inj.marks.is_empty() || same_text(&full) {
            return (full + &island, Outcome::default());
        }
    }
    let without = apply(md, structural, &replaces) + &island;
    (
        without,
        Outcome {
            marks_dropped: true,
        },
    )
}
