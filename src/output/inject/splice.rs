//! Writing the insertions: every mark's runs become properly nested `<mark>` tags, ordered (closing
//! before opening at one offset), then applied with block replacements in one pass.

use super::TextMark;
use super::raw_tags::RawTags;
use super::runs::{ChapterRuns, Level, Run, Snap, runs_of};
use notabene_anchoring::text::PageText;
use notabene_core::escape::escape_html;
use std::collections::BTreeMap;
use std::ops::Range;

/// What goes first among the insertions at one offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Order {
    /// A reference link's label written out (`[text][label]`): it belongs to the link, so it
    /// comes before a mark that closes or opens after the link.
    Label,
    /// Closing tags, before opening ones, so elements nest.
    Close,
    /// Opening tags.
    Open,
}

/// An insertion at a Markdown offset.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Insert {
    pub(super) at: usize,
    pub(super) order: Order,
    pub(super) seq: usize,
    pub(super) text: String,
}

/// The `<mark>` insertions of all text marks, split where they overlap.
pub(super) fn mark_inserts(
    md: &str,
    page: &PageText,
    tags: &RawTags,
    marks: &[TextMark],
    mode: Snap,
    out: &mut Vec<Insert>,
) {
    let inline_text = page.inline_text_ranges();
    let raw = tags.elements(page);
    let mut by_level: BTreeMap<Level, Vec<Run>> = BTreeMap::new();
    let mut labels: Vec<(usize, String)> = Vec::new();
    let chapter = ChapterRuns {
        md,
        page,
        tags,
        inline_text: &inline_text,
        raw: &raw,
    };
    for (i, m) in marks.iter().enumerate() {
        for r in runs_of(&chapter, i, &m.text, mode, &mut labels) {
            by_level.entry(r.level).or_default().push(r);
        }
    }
    // Reference links a mark enters get their label written out, once each.
    labels.sort();
    labels.dedup();
    for (at, text) in labels {
        out.push(Insert {
            at,
            order: Order::Label,
            seq: 0,
            text,
        });
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
                    order: Order::Open,
                    seq: m,
                    text: format!(
                        "<mark class=\"nb-mark\" data-nb-id=\"{}\" data-nb-status=\"{}\">",
                        escape_html(&mk.id),
                        escape_html(&mk.status)
                    ),
                });
                out.push(Insert {
                    at: q,
                    order: Order::Close,
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
pub(super) fn line_prefix(md: &str, pos: usize) -> Option<&str> {
    let start = md[..pos].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let prefix = &md[start..pos];
    prefix
        .chars()
        .all(|c| c == ' ' || c == '\t' || c == '>')
        .then_some(prefix)
}

pub(super) fn apply(
    md: &str,
    mut inserts: Vec<Insert>,
    replaces: &[(Range<usize>, String)],
) -> String {
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
