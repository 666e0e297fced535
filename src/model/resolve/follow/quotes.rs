//! The quote search across the book: chapters short-listed by exact pieces of each quote (one
//! pass over the book's text, [`BookProbe`]), the quote resolved on each, the best page taken
//! unless another scores within [`super::AMBIGUOUS`] of it.
//!
//! Owns: the short-list and the choice of a page by quote. Calls: the anchoring crate,
//! `aho-corasick`, [`super::git::arrived`].

use super::git::arrived;
use super::{AMBIGUOUS, BookAnchors, Decision, FollowedBy, index_of};
use crate::model::book::git::Repo;
use notabene_anchoring::text::TextOptions;
use notabene_anchoring::{AnchorStatus, PageIndex, Resolution, quote};
use std::collections::{BTreeMap, HashMap};

/// Pieces of a quote searched for exactly to short-list chapters (chars each).
const PROBE_LEN: usize = 16;
/// Chapters a quote may be short-listed on; more, and the quote is too common to follow.
const MAX_SHORTLIST: usize = 16;

/// The quote search: each of `by_quote` resolved on the chapters short-listed for it, then a
/// follow turned into a suggestion unless git shows the text arriving on its new page.
pub(super) fn by_quotes<'a>(
    anchors: &'a BookAnchors,
    (repo, origins): (&Repo, &super::Origins),
    options: &TextOptions,
    threshold: f64,
    mut indexes: HashMap<usize, PageIndex<'a>>,
    by_quote: Vec<(usize, quote::TextAnchor)>,
) -> Vec<(usize, Decision)> {
    // The quote in every chapter: chapters short-listed in one pass over the book's text.
    let quotes: Vec<&str> = by_quote.iter().map(|(_, t)| t.quote).collect();
    let shortlists = BookProbe::new(anchors).chapters_with(&quotes);
    // Every short-listed chapter indexed once, then every quote resolved, in parallel.
    let threads = notabene_core::par::default_threads();
    let needed: Vec<usize> = shortlists
        .iter()
        .flatten()
        .copied()
        .filter(|ch| !indexes.contains_key(ch))
        .collect::<std::collections::BTreeSet<usize>>()
        .into_iter()
        .collect();
    let built = notabene_core::par::par_map(&needed, threads, |&ch| index_of(anchors, ch, options));
    indexes.extend(needed.into_iter().zip(built));
    let jobs: Vec<((usize, quote::TextAnchor), Vec<usize>)> =
        by_quote.into_iter().zip(shortlists).collect();
    let decided = notabene_core::par::par_map(&jobs, threads, |((ci, t), chapters)| {
        let own = anchors.located[*ci].chapter;
        (*ci, best_page(&indexes, own, t, chapters, threshold))
    });
    // A comment whose own chapter is still in the book follows its text to another one only
    // when git shows the text arriving there after the comment was written.
    let mut out = Vec::new();
    for ((ci, decision), ((_, t), _)) in decided.into_iter().zip(&jobs) {
        let decision = match decision {
            Decision::Follow {
                to,
                resolution: Some(r),
                by: FollowedBy::Quote,
            } if anchors.located[ci].chapter.is_some()
                && !arrived(anchors, (repo, origins), ci, to, t, (options, threshold)) =>
            {
                Decision::Suggest(to, r)
            }
            d => d,
        };
        out.push((ci, decision));
    }
    out
}

/// The decision for text anchor `t` from its scores on `chapters` (its `own` chapter left
/// out): the best page when no other scores within [`AMBIGUOUS`] of it.
fn best_page(
    indexes: &HashMap<usize, PageIndex>,
    own: Option<usize>,
    t: &quote::TextAnchor,
    chapters: &[usize],
    threshold: f64,
) -> Decision {
    let mut scored: Vec<(usize, Resolution)> = chapters
        .iter()
        .copied()
        .filter(|&ch| Some(ch) != own)
        .map(|ch| (ch, quote::resolve(&indexes[&ch], t, threshold)))
        .collect();
    scored.sort_by(|a, b| {
        b.1.confidence
            .partial_cmp(&a.1.confidence)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.0.cmp(&b.0))
    });
    match scored.as_slice() {
        [] => Decision::Nowhere(None),
        [(ch, r), rest @ ..] if r.status != AnchorStatus::Orphan => {
            let ties: Vec<usize> = rest
                .iter()
                .filter(|(_, o)| o.status != AnchorStatus::Orphan)
                .filter(|(_, o)| r.confidence - o.confidence < AMBIGUOUS)
                .map(|(c, _)| *c)
                .collect();
            if ties.is_empty() {
                Decision::Follow {
                    to: *ch,
                    resolution: Some(r.clone()),
                    by: FollowedBy::Quote,
                }
            } else {
                Decision::Ambiguous(std::iter::once(*ch).chain(ties).collect())
            }
        }
        [(ch, r), ..] => Decision::Nowhere(r.suggestion.is_some().then(|| (*ch, r.clone()))),
    }
}

/// The book's text, searched once for exact pieces of many quotes.
struct BookProbe<'a> {
    texts: &'a [std::sync::Arc<notabene_anchoring::text::PageText>],
}

/// A cheap fold shared by the probe's two sides, so that typography does not hide a quote:
/// typographic quotes and dashes to ASCII, every whitespace run to one space, invisible
/// characters dropped (the matching itself uses the full normalisation).
pub(super) fn fold(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    let mut rest = s;
    while !rest.is_empty() {
        // A run of plain ASCII (no whitespace) is copied as it is.
        let plain = rest
            .bytes()
            .position(|b| !b.is_ascii() || b.is_ascii_whitespace())
            .unwrap_or(rest.len());
        if plain > 0 {
            out.push_str(&rest[..plain]);
            space = false;
            rest = &rest[plain..];
            continue;
        }
        let c = rest.chars().next().expect("not empty");
        rest = &rest[c.len_utf8()..];
        let c = match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => '"',
            '\u{2012}'..='\u{2015}' | '\u{2212}' => '-',
            '\u{00AD}' | '\u{200B}' | '\u{2060}' | '\u{FEFF}' => continue,
            c if c.is_whitespace() => {
                if !space {
                    out.push(' ');
                }
                space = true;
                continue;
            }
            c => c,
        };
        space = false;
        out.push(c);
    }
    out
}

impl<'a> BookProbe<'a> {
    fn new(anchors: &'a BookAnchors) -> BookProbe<'a> {
        BookProbe {
            texts: &anchors.texts,
        }
    }

    /// For each quote, the chapters holding the most of its pieces (its start, middle and end,
    /// folded): where the quote is, even with one piece edited. A quote whose pieces are on
    /// more than [`MAX_SHORTLIST`] chapters equally says nothing about where it went.
    fn chapters_with(&self, quotes: &[&str]) -> Vec<Vec<usize>> {
        let mut pieces: Vec<String> = Vec::new();
        let mut owner: Vec<(usize, usize)> = Vec::new();
        for (qi, quote) in quotes.iter().enumerate() {
            let q: Vec<char> = fold(quote.trim()).chars().collect();
            if q.is_empty() {
                continue;
            }
            let n = PROBE_LEN.min(q.len());
            let mut mine: Vec<String> = [0, (q.len() - n) / 2, q.len() - n]
                .iter()
                .map(|&a| q[a..a + n].iter().collect())
                .collect();
            mine.dedup();
            for (k, p) in mine.into_iter().enumerate() {
                pieces.push(p);
                owner.push((qi, k));
            }
        }
        let mut out = vec![Vec::new(); quotes.len()];
        let Ok(ac) = aho_corasick::AhoCorasick::new(&pieces) else {
            return out;
        };
        // (quote, chapter) → which of its pieces were seen there.
        let folded =
            notabene_core::par::par_map(self.texts, notabene_core::par::default_threads(), |t| {
                fold(&t.text)
            });
        let mut seen: BTreeMap<(usize, usize), u8> = BTreeMap::new();
        for (ch, t) in folded.iter().enumerate() {
            for m in ac.find_overlapping_iter(t) {
                let (qi, k) = owner[m.pattern().as_usize()];
                *seen.entry((qi, ch)).or_default() |= 1 << k;
            }
        }
        let mut best = vec![0u32; quotes.len()];
        for (&(qi, _), bits) in &seen {
            best[qi] = best[qi].max(bits.count_ones());
        }
        for ((qi, ch), bits) in seen {
            if bits.count_ones() == best[qi] {
                out[qi].push(ch);
            }
        }
        for list in &mut out {
            if list.len() > MAX_SHORTLIST {
                list.clear();
            }
        }
        out
    }
}
