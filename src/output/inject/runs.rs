//! A text mark cut into runs: contiguous pieces at one level of the chapter's elements (inline
//! Markdown elements and paired raw HTML elements), with its ends snapped to word (or
//! whitespace) boundaries. An element the mark covers whole is taken whole; one it enters gets
//! a piece inside it, so the pieces cover exactly the quote. A code span is a unit here (see
//! `code_spans` for how a mark enters one); a footnote reference is marked whole.

use super::raw_tags::{NO_RAW, RawElement, RawTags, innermost};
use notabene_anchoring::text::{NO_INLINE, PageText, SegKind};
use std::ops::Range;

/// What marks are cut against: the chapter's Markdown, its text model, its raw tags, the text
/// range of each inline element and its paired raw elements.
#[derive(Clone, Copy)]
pub(super) struct ChapterRuns<'a> {
    pub(super) md: &'a str,
    pub(super) page: &'a PageText,
    pub(super) tags: &'a RawTags,
    pub(super) inline_text: &'a [Option<Range<usize>>],
    pub(super) raw: &'a [RawElement],
}

/// Where a piece of a mark sits: its block and the innermost inline element and raw element
/// around it that the mark does not cover whole. Pieces at one level are siblings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Level {
    pub(super) block: u32,
    pub(super) inline: u32,
    pub(super) raw: u32,
}

impl Level {
    /// Text no markup can go into (raw HTML text, a code block): a mark's piece ends there.
    const STOP: Level = Level {
        block: u32::MAX,
        inline: u32::MAX,
        raw: u32::MAX,
    };
}

/// One contiguous piece of a mark at one level.
#[derive(Debug, Clone)]
pub(super) struct Run {
    pub(super) level: Level,
    pub(super) src: Range<usize>,
    pub(super) mark: usize,
}

/// How far a mark's ends are widened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Snap {
    /// To the ends of the words they cut (letters and digits).
    Word,
    /// To whitespace: punctuation and markup delimiters next to the text are included.
    Space,
}

/// Scripts written without spaces between words (Han, kana, Thai, Lao, Khmer, Myanmar, full-
/// width forms): a space-delimited "word" there is a whole clause.
fn spaceless(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF // Thai, Lao
        | 0x1000..=0x109F // Myanmar
        | 0x1780..=0x17FF // Khmer
        | 0x3040..=0x30FF // Hiragana, Katakana
        | 0x31F0..=0x31FF // Katakana extensions
        | 0x3400..=0x4DBF // CJK extension A
        | 0x4E00..=0x9FFF // CJK unified ideographs
        | 0xF900..=0xFAFF // CJK compatibility ideographs
        | 0xFF00..=0xFFEF // half- and full-width forms
        | 0x20000..=0x3134F) // CJK extensions B–G
}

fn katakana(c: char) -> bool {
    matches!(c as u32, 0x30A0..=0x30FF | 0x31F0..=0x31FF | 0xFF66..=0xFF9F)
}

/// Whether a word boundary lies between `outer` and `inner` in a spaceless script: Unicode
/// word segmentation (UAX #29) joins Katakana runs and nothing else there, so the quote's own
/// edge is kept (finer than a clause).
fn spaceless_edge(outer: char, inner: char) -> bool {
    (spaceless(outer) || spaceless(inner)) && !(katakana(outer) && katakana(inner))
}

/// Widens `[a, b)` to word (or whitespace) boundaries without leaving the block of its ends.
/// Latin and other spaced scripts snap to whole words; spaceless scripts (Japanese, Chinese,
/// Thai…) keep the quote's edges, as Unicode word segmentation finds no wider word there.
pub(super) fn snap(page: &PageText, a: usize, b: usize, mode: Snap) -> (usize, usize) {
    let text = &page.text;
    let stops = |c: char| match mode {
        Snap::Word => !c.is_alphanumeric(),
        Snap::Space => c.is_whitespace(),
    };
    let block_at = |pos: usize| page.segment_at(pos).map(|i| page.segments[i].block);
    let (ba, bb) = (block_at(a), block_at(b.saturating_sub(1).max(a)));
    let mut a2 = a;
    while let Some(c) = text[..a2].chars().next_back() {
        let inner = text[a2..].chars().next();
        if stops(c)
            || block_at(a2 - c.len_utf8()) != ba
            || inner.is_some_and(|i| spaceless_edge(c, i))
        {
            break;
        }
        a2 -= c.len_utf8();
    }
    let mut b2 = b;
    while let Some(c) = text[b2..].chars().next() {
        let inner = text[..b2].chars().next_back();
        if stops(c) || block_at(b2) != bb || inner.is_some_and(|i| spaceless_edge(c, i)) {
            break;
        }
        b2 += c.len_utf8();
    }
    (a2, b2)
}

/// Whether a link's source `[text][label]` names its label (a full reference), rather than
/// taking it from its text (`[text]`).
pub(super) fn is_full_reference(whole: &str) -> bool {
    let bytes = whole.as_bytes();
    // A bracket is escaped when an odd number of backslashes stands before it.
    let escaped = |i: usize| bytes[..i].iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 1;
    let mut depth = 0usize;
    for i in (0..bytes.len()).rev() {
        match bytes[i] {
            b']' if !escaped(i) => depth += 1,
            b'[' if !escaped(i) => {
                let Some(d) = depth.checked_sub(1) else {
                    return false;
                };
                depth = d;
                if depth == 0 {
                    return i > 0 && bytes[i - 1] == b']' && !escaped(i - 1) && i + 2 < bytes.len();
                }
            }
            _ => {}
        }
    }
    false
}

/// The runs of one text mark; a reference link whose text the mark enters adds its label to
/// `labels` (offset, text to insert).
pub(super) fn runs_of(
    chapter: &ChapterRuns,
    mark: usize,
    range: &Range<usize>,
    mode: Snap,
    labels: &mut Vec<(usize, String)>,
) -> Vec<Run> {
    let ChapterRuns { md, page, tags, .. } = *chapter;
    let (a, b) = snap(page, range.start, range.end, mode);
    let mut runs: Vec<Run> = Vec::new();
    let first = page.segments.partition_point(|s| s.text.end <= a);
    for seg in page.segments[first..]
        .iter()
        .take_while(|s| s.text.start < b)
    {
        let markable = matches!(
            seg.kind,
            SegKind::Plain | SegKind::Atomic | SegKind::CodeSpan
        ) || footnote_reference(md, seg);
        if !markable || seg.text.is_empty() {
            // Raw text and code blocks cannot hold markup: a run stops here.
            runs.push(Run {
                level: Level::STOP,
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
        keep_escape(md, &mut src);
        let level = lift_covered(chapter, seg.block, seg.inline, &mut src, a..b);
        write_labels(chapter, level.inline, labels);
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
    close_before_breaks(md, &mut runs);
    runs.retain(|r| r.level != Level::STOP && !r.src.is_empty());
    runs
}

/// Whether a raw segment is a footnote reference (`[^note]`, shown as its number): it is
/// marked whole, as a unit.
fn footnote_reference(md: &str, seg: &notabene_anchoring::text::Segment) -> bool {
    seg.kind == SegKind::Raw
        && md
            .get(seg.src.clone())
            .is_some_and(|s| s.starts_with("[^") && s.ends_with(']'))
}

/// A backslash escape (`\*`) maps to the escaped char: keeps the backslash with it.
fn keep_escape(md: &str, src: &mut Range<usize>) {
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
}

/// Lifts `src` out of the elements (inline and raw) the mark covers whole, from the innermost
/// outwards; the level of the innermost one it does not cover is returned.
fn lift_covered(
    chapter: &ChapterRuns,
    block: u32,
    inline: u32,
    src: &mut Range<usize>,
    marked: Range<usize>,
) -> Level {
    let mut level = Level {
        block,
        inline,
        raw: innermost(chapter.raw, src),
    };
    let within = |r: &Option<Range<usize>>| {
        r.as_ref()
            .is_none_or(|r| r.start >= marked.start && r.end <= marked.end)
    };
    loop {
        let covered = if raw_is_inner(chapter, level) {
            within(&chapter.raw[level.raw as usize].text)
        } else {
            level.inline != NO_INLINE && within(&chapter.inline_text[level.inline as usize])
        };
        if !covered {
            return level;
        }
        match step_out(chapter, level, src) {
            Some(outer) => level = outer,
            None => return level,
        }
    }
}

/// Whether the raw element of `level` lies inside its inline element (so it is the innermost).
fn raw_is_inner(chapter: &ChapterRuns, level: Level) -> bool {
    if level.raw == NO_RAW {
        return false;
    }
    if level.inline == NO_INLINE {
        return true;
    }
    let raw = &chapter.raw[level.raw as usize];
    let inline = &chapter.page.inlines[level.inline as usize].src;
    raw.start.start >= inline.start && raw.end.end <= inline.end
}

/// Widens `src` over the innermost element of `level` (a collapsed reference link's `[]`
/// included) and answers the level outside it; None at the block's level.
fn step_out(chapter: &ChapterRuns, level: Level, src: &mut Range<usize>) -> Option<Level> {
    if raw_is_inner(chapter, level) {
        let el = &chapter.raw[level.raw as usize];
        *src = src.start.min(el.start.start)..src.end.max(el.end.end);
        return Some(Level {
            raw: el.parent,
            ..level
        });
    }
    if level.inline == NO_INLINE {
        return None;
    }
    let md = chapter.md;
    let el = &chapter.page.inlines[level.inline as usize];
    let mut end = el.src.end;
    if md[el.src.clone()].ends_with(']') && md[end..].starts_with("[]") {
        end += 2;
    }
    *src = src.start.min(el.src.start)..src.end.max(end);
    Some(Level {
        inline: el.parent,
        ..level
    })
}

/// A shortcut or collapsed reference link (`[text]`, `[text][]`) takes its label from its
/// text, which a mark inside would change: every such link around a piece gets its label
/// written out (`[text][text]`, added to `labels`).
fn write_labels(chapter: &ChapterRuns, mut inline: u32, labels: &mut Vec<(usize, String)>) {
    let md = chapter.md;
    while inline != NO_INLINE {
        let el = &chapter.page.inlines[inline as usize];
        let whole = &md[el.src.clone()];
        if whole.ends_with(']') && !is_full_reference(whole) && whole.len() >= 2 {
            let label = &whole[1..whole.len() - 1];
            if md[el.src.end..].starts_with("[]") {
                labels.push((el.src.end + 1, label.to_string()));
            } else {
                labels.push((el.src.end, format!("[{label}]")));
            }
        }
        inline = el.parent;
    }
}

/// A run ending in a soft break would close its mark on the next line, before that line's
/// container markers (`> `): it closes before the line break instead. After a literal
/// backslash (`## a\`) the closing tag would be escaped: it closes before the backslash.
fn close_before_breaks(md: &str, runs: &mut [Run]) {
    for r in runs {
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
}
