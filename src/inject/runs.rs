//! A text mark cut into runs: contiguous pieces at one nesting level of the chapter's inline
//! elements, with its ends snapped to word (or whitespace) boundaries; an inline element
//! covered whole is taken whole, code spans are never entered. Part of the inject layer.

use super::raw_tags::RawTags;
use crate::text::{NO_INLINE, PageText, SegKind};
use std::ops::Range;

/// One contiguous piece of a mark at one nesting level.
#[derive(Debug, Clone)]
pub(super) struct Run {
    pub(super) level: (u32, u32),
    pub(super) src: Range<usize>,
    pub(super) mark: usize,
}

/// Text range covered by each inline element (over all segments inside it).
pub(super) fn inline_text_ranges(page: &PageText) -> Vec<Option<Range<usize>>> {
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
pub(super) enum Snap {
    /// To the ends of the words they cut (letters and digits).
    Word,
    /// To whitespace: punctuation and markup delimiters next to the text are included.
    Space,
}

/// Widens `[a, b)` to word (or whitespace) boundaries without leaving the block of its ends.
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
pub(super) fn runs_of(
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
