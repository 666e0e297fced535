//! Shared by the anchoring benchmarks (mounted as `anchoring`, beside the shared test
//! `support`): the corpus pages, word-aligned quote runs on a page's text model, anchor
//! capture exactly as the original notabene browser client does it, Markdown edits with
//! offset tracking, and the original notabene resolution (the baseline).

#![allow(dead_code)]

use notabene_anchoring::text::{PageText, SegKind, TextOptions, page_text};
use std::ops::Range;

/// One corpus chapter: its path relative to `tests/corpus` (`name`) and its Markdown (`md`).
pub type Page = crate::support::common::CorpusPage;

/// Every chapter of the corpus books (`SUMMARY.md` left out), sorted by path
/// (deterministic): the shared [`crate::support::common::corpus_pages`].
pub fn corpus() -> Vec<Page> {
    crate::support::common::corpus_pages()
}

/// The block type a quote lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum BlockType {
    Prose,
    List,
    Table,
    Code,
}

impl BlockType {
    pub const ALL: [BlockType; 4] = [
        BlockType::Prose,
        BlockType::List,
        BlockType::Table,
        BlockType::Code,
    ];

    pub fn name(self) -> &'static str {
        match self {
            BlockType::Prose => "prose",
            BlockType::List => "list",
            BlockType::Table => "table",
            BlockType::Code => "code",
        }
    }
}

/// A run of consecutive text segments of one block element (or one code block) in which a
/// word-aligned quote can be taken.
pub struct Run {
    /// Raw text range.
    pub text: Range<usize>,
    /// The block element (`Segment::block`).
    pub block: u32,
    /// The code block index for code runs.
    pub code: Option<u32>,
    pub kind: BlockType,
    /// Words (maximal non-whitespace runs) as raw text ranges.
    pub words: Vec<Range<usize>>,
}

/// A page's text model and its quote runs.
pub struct Analyzed {
    pub pt: PageText,
    pub runs: Vec<Run>,
}

pub fn analyze(md: &str) -> Analyzed {
    let pt = page_text(md, &TextOptions::default());
    let runs = runs(md, &pt);
    Analyzed { pt, runs }
}

fn inline_kind(k: SegKind) -> bool {
    matches!(k, SegKind::Plain | SegKind::Atomic | SegKind::CodeSpan)
}

/// Groups segments into runs (same block element and inline-ish kinds, or one code block).
pub fn runs(md: &str, pt: &PageText) -> Vec<Run> {
    let mut out = Vec::new();
    let segs = &pt.segments;
    let mut i = 0;
    while i < segs.len() {
        let s = &segs[i];
        let code = match s.kind {
            SegKind::CodeBlock(n) => Some(n),
            k if inline_kind(k) => None,
            _ => {
                i += 1;
                continue;
            }
        };
        let mut j = i + 1;
        while j < segs.len() {
            let t = &segs[j];
            let ok = match code {
                Some(n) => t.kind == SegKind::CodeBlock(n),
                None => inline_kind(t.kind) && t.block == s.block,
            };
            if !ok {
                break;
            }
            j += 1;
        }
        let text = s.text.start..segs[j - 1].text.end;
        let kind = match code {
            Some(_) => Some(BlockType::Code),
            None => classify(md, &pt.block_elements[s.block as usize]),
        };
        if let Some(kind) = kind {
            let words = words(&pt.text, text.clone());
            if !words.is_empty() {
                out.push(Run {
                    text,
                    block: s.block,
                    code,
                    kind,
                    words,
                });
            }
        }
        i = j;
    }
    out
}

/// Classifies a block element by the Markdown line it starts on; `None` for headings.
fn classify(md: &str, r: &Range<usize>) -> Option<BlockType> {
    let line_start = md[..r.start].rfind('\n').map_or(0, |i| i + 1);
    let line = md[line_start..].lines().next().unwrap_or("");
    let mut l = line.trim_start();
    while let Some(rest) = l.strip_prefix('>') {
        l = rest.trim_start();
    }
    let block = md.get(r.clone()).unwrap_or("");
    if l.starts_with('#') {
        return None;
    }
    if let Some(last) = block.trim_end().lines().last()
        && block.trim_end().lines().count() > 1
        && !last.trim().is_empty()
        && (last.trim().chars().all(|c| c == '=') || last.trim().chars().all(|c| c == '-'))
    {
        return None;
    }
    if l.starts_with("- ") || l.starts_with("* ") || l.starts_with("+ ") {
        return Some(BlockType::List);
    }
    let digits = l.chars().take_while(|c| c.is_ascii_digit()).count();
    if digits > 0 && (l[digits..].starts_with(". ") || l[digits..].starts_with(") ")) {
        return Some(BlockType::List);
    }
    if l.starts_with('|') {
        return Some(BlockType::Table);
    }
    Some(BlockType::Prose)
}

/// Maximal non-whitespace runs of `text[r]`, as ranges of `text`.
pub fn words(text: &str, r: Range<usize>) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in text[r.clone()].char_indices() {
        let i = i + r.start;
        if c.is_whitespace() {
            if let Some(s) = start.take() {
                out.push(s..i);
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push(s..r.end);
    }
    out
}

/// Whether raw text byte `pos` lies in a segment whose text equals its source.
pub fn exact_at(pt: &PageText, pos: usize) -> bool {
    pt.segment_at(pos)
        .is_some_and(|i| pt.segments[i].kind.maps_exactly() && pt.segments[i].text.contains(&pos))
}

/// The segment holding raw text bytes `[a, b)` entirely, if it maps exactly.
pub fn exact_segment(pt: &PageText, r: &Range<usize>) -> Option<usize> {
    let i = pt.segment_at(r.start)?;
    let s = &pt.segments[i];
    (s.kind.maps_exactly() && s.text.start <= r.start && r.end <= s.text.end).then_some(i)
}

/// The Markdown byte of raw text byte `pos` (which must lie in an exact segment).
pub fn src_of(pt: &PageText, pos: usize) -> usize {
    let s = &pt.segments[pt.segment_at(pos).expect("page has text")];
    debug_assert!(s.kind.maps_exactly());
    s.src.start + (pos - s.text.start)
}

/// The Markdown bytes of raw text range `r` lying in one exact segment.
pub fn src_range(pt: &PageText, r: &Range<usize>) -> Option<Range<usize>> {
    let i = exact_segment(pt, r)?;
    let s = &pt.segments[i];
    Some(s.src.start + (r.start - s.text.start)..s.src.start + (r.end - s.text.start))
}

/// A stored anchor as the original notabene client captures it.
#[derive(Debug, Clone)]
pub struct Captured {
    pub quote: String,
    pub prefix: String,
    pub suffix: String,
    pub section: Option<String>,
}

impl Captured {
    pub fn anchor(&self) -> notabene_anchoring::quote::TextAnchor<'_> {
        notabene_anchoring::quote::TextAnchor {
            quote: &self.quote,
            prefix: &self.prefix,
            suffix: &self.suffix,
            section: self.section.as_deref(),
        }
    }
}

/// Context length in chars on each side.
pub const CONTEXT: usize = 40;

/// Captures raw text `[a, b)`: the quote, 40 chars of raw text before and after, the section.
pub fn capture(pt: &PageText, a: usize, b: usize) -> Captured {
    let before = &pt.text[..a];
    let pstart = before
        .char_indices()
        .rev()
        .nth(CONTEXT - 1)
        .map_or(0, |(i, _)| i);
    let after = &pt.text[b..];
    let send = after
        .char_indices()
        .nth(CONTEXT)
        .map_or(after.len(), |(i, _)| i);
    Captured {
        quote: pt.text[a..b].to_string(),
        prefix: before[pstart..].to_string(),
        suffix: after[..send].to_string(),
        section: pt.section_at(a).map(str::to_string),
    }
}

/// The original notabene algorithm: first exact `prefix+quote+suffix`, else first exact quote,
/// on the raw page text. Returns the raw text range of the quote.
pub fn baseline(pt: &PageText, c: &Captured) -> Option<Range<usize>> {
    if c.quote.is_empty() {
        return None;
    }
    let full = format!("{}{}{}", c.prefix, c.quote, c.suffix);
    if let Some(i) = pt.text.find(&full) {
        let a = i + c.prefix.len();
        return Some(a..a + c.quote.len());
    }
    pt.text.find(&c.quote).map(|i| i..i + c.quote.len())
}

/// Number of (possibly overlapping) occurrences of `needle` in `hay`, stopping at `cap`.
pub fn occurrences(hay: &str, needle: &str, cap: usize) -> usize {
    if needle.is_empty() {
        return cap;
    }
    let mut n = 0;
    let mut from = 0;
    while let Some(i) = hay[from..].find(needle) {
        n += 1;
        if n >= cap {
            break;
        }
        from += i + hay[from + i..].chars().next().map_or(1, char::len_utf8);
    }
    n
}

/// A Markdown edit: replace `range` by `text`.
#[derive(Debug, Clone)]
pub struct Edit {
    pub range: Range<usize>,
    pub text: String,
}

impl Edit {
    pub fn new(range: Range<usize>, text: impl Into<String>) -> Edit {
        Edit {
            range,
            text: text.into(),
        }
    }
}

/// Applied edits: the new Markdown and offset mapping.
pub struct Edited {
    pub md: String,
    edits: Vec<Edit>,
}

/// Applies non-overlapping edits (any order). Returns `None` if two edits overlap.
pub fn apply(md: &str, mut edits: Vec<Edit>) -> Option<Edited> {
    edits.sort_by_key(|e| (e.range.start, e.range.end));
    for w in edits.windows(2) {
        if w[0].range.end > w[1].range.start
            || (w[0].range.end == w[1].range.start
                && w[0].range.is_empty()
                && w[1].range.is_empty())
        {
            return None;
        }
    }
    let mut out = String::with_capacity(md.len() + 64);
    let mut pos = 0;
    for e in &edits {
        if !md.is_char_boundary(e.range.start) || !md.is_char_boundary(e.range.end) {
            return None;
        }
        out.push_str(&md[pos..e.range.start]);
        out.push_str(&e.text);
        pos = e.range.end;
    }
    out.push_str(&md[pos..]);
    Some(Edited { md: out, edits })
}

impl Edited {
    fn map(&self, p: usize, insertion_before: bool) -> usize {
        let mut delta: isize = 0;
        for e in &self.edits {
            let shifts = if e.range.is_empty() {
                e.range.start < p || (e.range.start == p && insertion_before)
            } else {
                e.range.end <= p
            };
            if shifts {
                delta += e.text.len() as isize - e.range.len() as isize;
            } else {
                assert!(
                    !(e.range.start < p && p < e.range.end),
                    "tracked offset {p} inside edit {:?}",
                    e.range
                );
            }
        }
        (p as isize + delta) as usize
    }

    /// New offset of a range start (an insertion exactly there goes before it).
    pub fn map_start(&self, p: usize) -> usize {
        self.map(p, true)
    }

    /// New offset of a range end (an insertion exactly there goes after it).
    pub fn map_end(&self, p: usize) -> usize {
        self.map(p, false)
    }

    pub fn map_range(&self, r: &Range<usize>) -> Range<usize> {
        self.map_start(r.start)..self.map_end(r.end)
    }
}

/// Intersection over union of two byte ranges.
pub fn iou(a: &Range<usize>, b: &Range<usize>) -> f64 {
    let inter = a.end.min(b.end).saturating_sub(a.start.max(b.start));
    let union = a.end.max(b.end) - a.start.min(b.start);
    if union == 0 {
        return if a == b { 1.0 } else { 0.0 };
    }
    inter as f64 / union as f64
}

/// Replacement words for insertions and rewrites.
pub const VOCAB: &[&str] = &[
    "really",
    "quite",
    "simply",
    "indeed",
    "notably",
    "perhaps",
    "certainly",
    "entirely",
    "basically",
    "frankly",
    "gadget",
    "lantern",
    "harbor",
    "meadow",
    "orbit",
    "velvet",
];

/// A vocabulary word different from `not`.
pub fn vocab(rng: &mut fastrand::Rng, not: &str) -> &'static str {
    loop {
        let w = VOCAB[rng.usize(..VOCAB.len())];
        if !w.eq_ignore_ascii_case(not) {
            return w;
        }
    }
}

/// Top-level blocks of a page (block elements and code blocks not nested in another), as
/// Markdown ranges with their kind, in source order.
#[derive(Debug, Clone)]
pub struct Unit {
    pub src: Range<usize>,
    pub heading: bool,
}

pub fn units(md: &str, pt: &PageText) -> Vec<Unit> {
    let mut all: Vec<Range<usize>> = pt.block_elements[1..]
        .iter()
        .filter(|r| !r.is_empty())
        .cloned()
        .collect();
    all.extend(pt.code_blocks.iter().map(|c| c.src.clone()));
    // Sort by start, longest first, and keep those not inside the previous kept range.
    all.sort_by_key(|r| (r.start, std::cmp::Reverse(r.end)));
    let mut out: Vec<Unit> = Vec::new();
    let mut cover = 0usize;
    for r in all {
        if r.start < cover {
            continue;
        }
        cover = r.end;
        let line_start = md[..r.start].rfind('\n').map_or(0, |i| i + 1);
        let first = md[line_start..].trim_start();
        let heading = first.starts_with('#') || {
            let t = md[r.clone()].trim_end();
            t.lines().count() > 1
                && t.lines().last().is_some_and(|l| {
                    let l = l.trim();
                    !l.is_empty() && (l.chars().all(|c| c == '=') || l.chars().all(|c| c == '-'))
                })
        };
        out.push(Unit { src: r, heading });
    }
    out
}

/// The range of unit `u` with trailing whitespace removed, if it is isolated by blank lines
/// (or the document edges) and starts a line.
pub fn isolated(md: &str, u: &Unit) -> Option<Range<usize>> {
    let s = u.src.start;
    let e = s + md[u.src.clone()].trim_end().len();
    if e <= s {
        return None;
    }
    let before = &md[..s];
    let starts_line = s == 0 || before.ends_with('\n');
    let blank_before = s == 0
        || before.trim_end_matches([' ', '\t']).ends_with("\n\n")
        || before.trim().is_empty();
    let after = &md[e..];
    let blank_after = after.trim().is_empty() || {
        let rest = after.trim_start_matches([' ', '\t']);
        let rest = rest
            .strip_prefix("\r\n")
            .or_else(|| rest.strip_prefix('\n'));
        rest.is_some_and(|r| {
            r.trim_start_matches([' ', '\t']).starts_with('\n')
                || r.trim_start_matches([' ', '\t']).starts_with("\r\n")
        })
    };
    (starts_line && blank_before && blank_after).then_some(s..e)
}

/// Expands `r` to whole lines (the trailing newline included).
pub fn full_lines(md: &str, r: &Range<usize>) -> Range<usize> {
    let s = md[..r.start].rfind('\n').map_or(0, |i| i + 1);
    let e = md[r.end.max(s)..]
        .find('\n')
        .map_or(md.len(), |i| r.end.max(s) + i + 1);
    // A range ending right after a newline already ends a line.
    let e = if r.end > s && md.as_bytes()[r.end - 1] == b'\n' {
        r.end
    } else {
        e
    };
    s..e
}

/// Straight↔curly quotes, NBSP for spaces (about half), NFD for accented Latin letters.
pub fn unicode_variant(s: &str, rng: &mut fastrand::Rng) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let mut prev: Option<char> = None;
    for c in s.chars() {
        let opening = prev.is_none_or(|p| p.is_whitespace() || "([{".contains(p));
        match c {
            '\'' => out.push(if opening { '\u{2018}' } else { '\u{2019}' }),
            '"' => out.push(if opening { '\u{201C}' } else { '\u{201D}' }),
            '\u{2018}' | '\u{2019}' => out.push('\''),
            '\u{201C}' | '\u{201D}' => out.push('"'),
            ' ' if rng.bool() => out.push('\u{A0}'),
            c => match nfd(c) {
                Some((base, mark)) => {
                    out.push(base);
                    out.push(mark);
                }
                None => out.push(c),
            },
        }
        prev = Some(c);
    }
    out
}

/// Canonical decomposition of common precomposed Latin letters.
fn nfd(c: char) -> Option<(char, char)> {
    const GRAVE: char = '\u{300}';
    const ACUTE: char = '\u{301}';
    const CIRC: char = '\u{302}';
    const TILDE: char = '\u{303}';
    const DIAER: char = '\u{308}';
    const RING: char = '\u{30A}';
    const CEDIL: char = '\u{327}';
    Some(match c {
        'à' => ('a', GRAVE),
        'á' => ('a', ACUTE),
        'â' => ('a', CIRC),
        'ã' => ('a', TILDE),
        'ä' => ('a', DIAER),
        'å' => ('a', RING),
        'ç' => ('c', CEDIL),
        'è' => ('e', GRAVE),
        'é' => ('e', ACUTE),
        'ê' => ('e', CIRC),
        'ë' => ('e', DIAER),
        'ì' => ('i', GRAVE),
        'í' => ('i', ACUTE),
        'î' => ('i', CIRC),
        'ï' => ('i', DIAER),
        'ñ' => ('n', TILDE),
        'ò' => ('o', GRAVE),
        'ó' => ('o', ACUTE),
        'ô' => ('o', CIRC),
        'õ' => ('o', TILDE),
        'ö' => ('o', DIAER),
        'ù' => ('u', GRAVE),
        'ú' => ('u', ACUTE),
        'û' => ('u', CIRC),
        'ü' => ('u', DIAER),
        'É' => ('E', ACUTE),
        'È' => ('E', GRAVE),
        'Ö' => ('O', DIAER),
        'Ü' => ('U', DIAER),
        'Ä' => ('A', DIAER),
        _ => return None,
    })
}
