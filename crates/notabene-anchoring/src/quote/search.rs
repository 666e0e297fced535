//! Stages 1 to 3 of the pipeline: where the page may hold the anchor.
//!
//! Owns the search for candidate places — the quote's exact occurrences (one anchor with
//! `match_indices`, a page's anchors together with Aho–Corasick), the context window searched
//! approximately and the quote inside it, the quote rewritten between its verbatim context,
//! the quote alone — and [`Candidates`], the places found, each scored as it is found. Calls the
//! score ([`super::score`]), the pattern ([`super::pattern`]) and the approximate matcher
//! ([`crate::myers`]); it decides nothing: [`super::decide`] does.

use super::pattern::Pattern;
use super::score::{Candidate, SearchContext, best_two, separated, similarity};
use crate::PageIndex;
use crate::myers;
use std::ops::Range;

/// At most this many exact occurrences of a quote (or of its window context) are scored: a
/// bound on the work a quote of one common word makes on a long page, far above what a real
/// page holds of any quote worth anchoring.
const MAX_OCCURRENCES: usize = 4096;
/// Quotes at least this long are also searched on their own (stage 3): shorter ones, with the
/// edits the search allows, match too many places once their context is gone.
const QUOTE_ALONE_MIN: usize = 20;
/// A fuzzy quote found in the context window (or alone) needs at least this similarity on each
/// side: an edited quote is only found through its context, and a deletion leaves one side
/// next to unrelated text (`cargo bench --bench anchoring_quality`, "quote+context deleted").
const WINDOW_MIN_SIDE: f64 = 0.75;
/// A side of the context counts as intact at this similarity: a typo or a word edited in 40
/// characters, not a different sentence.
pub(super) const CONTEXT_INTACT: f64 = 0.9;
/// Edits allowed in the context window (prefix end + quote + suffix start), as a share of its
/// length: the window survives an edit to the quote and one to its context.
const WINDOW_MAX_EDITS: Share = Share { num: 3, den: 10 };
/// Edits allowed to the quote searched inside an aligned window: more than in the window as a
/// whole, since the window's context already places it.
const QUOTE_IN_WINDOW_MAX_EDITS: Share = Share { num: 4, den: 10 };
/// Edits allowed to the quote searched alone: fewer, since nothing else vouches for the place.
const QUOTE_ALONE_MAX_EDITS: Share = Share { num: 1, den: 5 };
/// The quote is searched in an aligned window widened by this many chars on each side: the
/// window's alignment can end a character or two inside the quote.
const WINDOW_SLACK: usize = 4;
/// At most this many aligned windows are searched (the best ones): a page rarely holds more
/// look-alikes of a sentence with its context.
const MAX_WINDOWS: usize = 20;
/// At most this many places of the quote are scored inside one window.
const MAX_QUOTES_PER_WINDOW: usize = 5;
/// At most this many places of the quote alone are scored.
const MAX_QUOTES_ALONE: usize = 10;
/// A rewritten quote between its verbatim context is at most this many times as long as the
/// stored quote, and at least its length divided by this: a rewrite, not a paragraph inserted
/// or the quote deleted.
const REWRITE_MAX_FACTOR: usize = 3;

/// A share of a length: `num / den` of it, rounded down.
#[derive(Debug, Clone, Copy)]
struct Share {
    /// Numerator.
    num: usize,
    /// Denominator.
    den: usize,
}

impl Share {
    /// `num / den` of `len`, rounded down.
    fn of(self, len: usize) -> usize {
        (len * self.num) / self.den
    }
}

/// Match ends closer than half the pattern's length are one match ([`myers::best_ends`]).
fn cluster_gap(pattern_len: usize) -> usize {
    (pattern_len / 2).max(1)
}

/// The candidates found for one anchor.
#[derive(Debug, Default)]
pub(super) struct Candidates {
    /// Candidates that may be placed.
    pub(super) placeable: Vec<Candidate>,
    /// Candidates that may not be placed, only suggested for an orphan.
    pub(super) held: Vec<Candidate>,
}

impl Candidates {
    /// Adds `c` as placeable, or held when `placeable` is false.
    fn push(&mut self, c: Candidate, placeable: bool) {
        if placeable {
            self.placeable.push(c);
        } else {
            self.held.push(c);
        }
    }
}

/// The byte offsets in `index.string` of the exact occurrences of `quote` (normalised), left to
/// right, not overlapping each other.
pub(super) fn exact_occurrences(index: &PageIndex, quote: &str) -> Vec<usize> {
    index
        .string
        .match_indices(quote)
        .take(MAX_OCCURRENCES)
        .map(|(byte, _)| byte)
        .collect()
}

/// [`exact_occurrences`] of every pattern's quote, found in one pass over the page
/// (Aho–Corasick).
pub(super) fn exact_occurrences_all(index: &PageIndex, patterns: &[Pattern]) -> Vec<Vec<usize>> {
    let mut exact: Vec<Vec<usize>> = vec![Vec::new(); patterns.len()];
    // Distinct non-empty quotes, each with the anchors that have it.
    let mut quotes: Vec<&str> = Vec::new();
    let mut holders: Vec<Vec<usize>> = Vec::new();
    let mut seen: std::collections::HashMap<&str, usize> = Default::default();
    for (i, p) in patterns.iter().enumerate() {
        if p.quote_text.is_empty() {
            continue;
        }
        let k = *seen.entry(p.quote_text.as_str()).or_insert_with(|| {
            quotes.push(p.quote_text.as_str());
            holders.push(Vec::new());
            quotes.len() - 1
        });
        holders[k].push(i);
    }
    if !quotes.is_empty()
        // An NFA: a page is searched once, so a DFA would cost more to build than it saves.
        && let Ok(ac) = aho_corasick::AhoCorasick::builder()
            .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
            .build(&quotes)
    {
        // Per quote, the occurrences `match_indices` would give: left to right, not
        // overlapping each other (overlapping matches come in order of their end, which for
        // one quote is the order of their start).
        let mut found: Vec<Vec<usize>> = vec![Vec::new(); quotes.len()];
        let mut next_free = vec![0usize; quotes.len()];
        for m in ac.find_overlapping_iter(index.string.as_str()) {
            let k = m.pattern().as_usize();
            if m.start() >= next_free[k] && found[k].len() < MAX_OCCURRENCES {
                found[k].push(m.start());
                next_free[k] = m.end();
            }
        }
        for (k, list) in found.into_iter().enumerate() {
            for &i in &holders[k] {
                exact[i] = list.clone();
            }
        }
    }
    exact
}

/// Stage 1: the exact occurrences at byte offsets `exact` of `index.string`, scored.
pub(super) fn occurrence_candidates(ctx: &SearchContext, exact: &[usize]) -> Vec<Candidate> {
    let quote_len = ctx.pattern.quote.len();
    exact
        .iter()
        .map(|&byte| {
            let start = ctx.index.char_index(byte);
            ctx.candidate(start, start + quote_len, 1.0)
        })
        .collect()
}

/// Stage 2: the windows where the quote's context aligns, and in each the quote and the
/// rewritten-quote candidate.
pub(super) fn window_search(ctx: &SearchContext, found: &mut Candidates) {
    let t = ctx.symbols();
    let (wp, ws) = ctx.pattern.window_context();
    if !wp.is_empty() || !ws.is_empty() {
        let w: Vec<u32> = wp
            .iter()
            .chain(&ctx.pattern.quote)
            .chain(ws)
            .copied()
            .collect();
        let max_edits = WINDOW_MAX_EDITS.of(w.len());
        let hits = myers::search(&w, t, max_edits);
        for (end, _) in myers::best_ends(&hits, cluster_gap(w.len()), MAX_WINDOWS) {
            let (start, _) = myers::match_start(&w, t, end, max_edits);
            quote_in_window(ctx, start..end, found);
            rewritten_in_window(ctx, start..end, found);
        }
    }
}

/// The quote inside the aligned `window` (with [`WINDOW_SLACK`] on both sides).
fn quote_in_window(ctx: &SearchContext, window: Range<usize>, found: &mut Candidates) {
    let t = ctx.symbols();
    let quote = &ctx.pattern.quote;
    let m = quote.len();
    let lo = window.start.saturating_sub(WINDOW_SLACK);
    let hi = (window.end + WINDOW_SLACK).min(t.len());
    let max_edits = QUOTE_IN_WINDOW_MAX_EDITS.of(m);
    let hits = myers::search(quote, &t[lo..hi], max_edits);
    for (end, err) in myers::best_ends(&hits, cluster_gap(m), MAX_QUOTES_PER_WINDOW) {
        let (start, _) = myers::match_start(quote, &t[lo..hi], end, max_edits);
        if end > start {
            let c = ctx.candidate(lo + start, lo + end, similarity(err, m));
            // An edited quote is only found through its context: both sides must
            // still hold (a deletion leaves one side next to unrelated text).
            let placeable =
                c.quote_exact() || c.prefix_similarity.min(c.suffix_similarity) >= WINDOW_MIN_SIDE;
            found.push(c, placeable);
        }
    }
}

/// The rewritten-quote candidate of the aligned `window`: between the aligned prefix and
/// suffix.
fn rewritten_in_window(ctx: &SearchContext, window: Range<usize>, found: &mut Candidates) {
    let t = ctx.symbols();
    let m = ctx.pattern.quote.len();
    let (wp, ws) = ctx.pattern.window_context();
    let (x, _) = if wp.is_empty() {
        (0, 0)
    } else {
        myers::prefix_end(wp, &t[window.start..window.end])
    };
    let x = window.start + x;
    let (y, _) = if ws.is_empty() {
        (window.end - x, 0)
    } else {
        best_suffix_start(ws, &t[x..window.end])
    };
    let y = x + y;
    if y > x && (y - x) * REWRITE_MAX_FACTOR >= m && y - x <= m * REWRITE_MAX_FACTOR {
        let d = myers::edit_distance(&ctx.pattern.quote, &t[x..y]);
        let c = ctx.candidate(x, y, similarity(d, m));
        // Only an intact context on both sides justifies a rewritten quote.
        let placeable =
            c.prefix_similarity >= CONTEXT_INTACT && c.suffix_similarity >= CONTEXT_INTACT;
        found.push(c, placeable);
    }
}

/// Minimal edit distance of `pat` against a suffix of `text` (end fixed): (start, distance).
fn best_suffix_start(pat: &[u32], text: &[u32]) -> (usize, usize) {
    let rp: Vec<u32> = pat.iter().rev().copied().collect();
    let rt: Vec<u32> = text.iter().rev().copied().collect();
    let (len, d) = myers::prefix_end(&rp, &rt);
    (text.len() - len, d)
}

/// The spans between the stored context found verbatim on both sides (its nearest
/// [`WINDOW_CONTEXT`](super::pattern::WINDOW_CONTEXT) characters each), the quote rewritten there: one candidate each.
pub(super) fn between_context(ctx: &SearchContext) -> Vec<Candidate> {
    let t = ctx.symbols();
    let m = ctx.pattern.quote.len();
    let (wp, ws) = ctx.pattern.window_context();
    let mut out = Vec::new();
    if wp.is_empty() || ws.is_empty() {
        return out;
    }
    let wp_s: String = wp.iter().filter_map(|&c| char::from_u32(c)).collect();
    for (byte, _) in ctx
        .index
        .string
        .match_indices(wp_s.as_str())
        .take(MAX_OCCURRENCES)
    {
        let x = ctx.index.char_index(byte) + wp.len();
        let lo = (x + m.div_ceil(REWRITE_MAX_FACTOR)).min(t.len());
        let hi = (x + m * REWRITE_MAX_FACTOR + ws.len()).min(t.len());
        let Some(y) = t[lo..hi]
            .windows(ws.len())
            .position(|w| w == ws)
            .map(|i| lo + i)
        else {
            continue;
        };
        let d = myers::edit_distance(&ctx.pattern.quote, &t[x..y]);
        let c = ctx.candidate(x, y, similarity(d, m));
        if c.context_verbatim() {
            out.push(c);
        }
    }
    out
}

/// Stage 3: the quote alone, for long enough quotes (text moved to a new context) — not
/// needed when stage 2 found it, edited, in its own intact context, clearly.
pub(super) fn quote_alone(ctx: &SearchContext, found: &mut Candidates) {
    let t = ctx.symbols();
    let quote = &ctx.pattern.quote;
    let m = quote.len();
    let found_in_context = best_two(&found.placeable).is_some_and(|top| {
        top.best.prefix_similarity.min(top.best.suffix_similarity) >= CONTEXT_INTACT
            && top.best.score >= ctx.threshold
            && top.second.is_none_or(|s| separated(&top.best, &s))
    });
    if m >= QUOTE_ALONE_MIN && !found_in_context {
        let max_edits = QUOTE_ALONE_MAX_EDITS.of(m);
        let hits = myers::search(quote, t, max_edits);
        for (end, err) in myers::best_ends(&hits, cluster_gap(m), MAX_QUOTES_ALONE) {
            let (start, _) = myers::match_start(quote, t, end, max_edits);
            if end > start {
                let c = ctx.candidate(start, end, similarity(err, m));
                // Moved text keeps its quote; an edited quote in a new context is a
                // different sentence.
                let placeable = c.quote_exact()
                    || c.prefix_similarity.min(c.suffix_similarity) >= WINDOW_MIN_SIDE;
                found.push(c, placeable);
            }
        }
    }
}
