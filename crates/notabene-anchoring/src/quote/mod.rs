//! Text-quote anchors: the resolution pipeline (`docs/src/design/anchoring.md`) on the normalised
//! page text.
//!
//! 1. **Exact**: every occurrence of the quote, scored by how much of the stored prefix and
//!    suffix is present right there. A clear winner with its context ends the search — the
//!    fuzzy matcher never runs for it. An occurrence with the stored prefix or suffix still
//!    verbatim next to it, the other side kept or displaced by inserted text, is the anchor
//!    (`exact`, `contextChanged`) whatever its score, unless an edited quote elsewhere has
//!    both sides intact.
//! 2. **Context window**: `prefix[-32:] + quote + suffix[:32]` searched approximately; inside each
//!    aligned window the quote is searched approximately, and the span between the aligned
//!    prefix and suffix is a "rewritten quote" candidate.
//! 3. **Quote alone** (20+ characters): the quote searched approximately on its own.
//! 4. **Decide**: one score for every candidate, `S = (1 − w)·E + w·H`, where `E` is the
//!    length-weighted share of prefix + quote + suffix present at that spot, `H` the section
//!    agreement and `w` the section weight (small: the section breaks ties between equal
//!    contexts, it never outweighs an edit in the context); accept the best if `S ≥ τ`, with
//!    deterministic tie-breaks. A specific quote (3+ words) found exactly once outside code,
//!    with both sides of its context changed, is placed `fuzzy` when nothing reached `τ`.
//! 5. **Refuse to guess**: a winner the evidence does not single out — context changed on both
//!    sides, a copy in code, an edited quote with no side verbatim, a spot elsewhere with both
//!    sides verbatim, a tie — is the orphan's suggestion instead.
//!
//! The flags say exactly what differs: the quote, the prefix or suffix, the section.
//!
//! This module owns the public API ([`TextAnchor`], [`resolve`], [`resolve_all`]) and runs the
//! stages in order; each stage is a module of its own, and each calls only those before it:
//! `pattern` (the stored anchor, normalised), `score` (a candidate's score and the ranking),
//! `search` (stages 1–3: the candidate places), `decide` (stages 4–5: the resolution); and
//! after them `look_alike`, for a caller that has the page as it was when the comment was
//! written ([`stood_apart`]).

mod decide;
mod look_alike;
mod pattern;
mod score;
mod search;

use crate::{PageIndex, Resolution};
pub use look_alike::stood_apart;
use pattern::Pattern;
use score::{Candidate, SearchContext};
use search::Candidates;

/// A stored text-quote anchor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextAnchor<'a> {
    /// The selected rendered text.
    pub quote: &'a str,
    /// Rendered text before the quote (up to 40 characters in the original).
    pub prefix: &'a str,
    /// Rendered text after the quote.
    pub suffix: &'a str,
    /// Text of the nearest preceding h1–h4, if any.
    pub section: Option<&'a str>,
}

/// Resolves one text anchor on a prepared page.
pub fn resolve(idx: &PageIndex, anchor: &TextAnchor, threshold: f64) -> Resolution {
    let pattern = Pattern::new(anchor);
    let exact = search::exact_occurrences(idx, &pattern.quote_text);
    resolve_pattern(idx, &pattern, &exact, threshold)
}

/// Resolves every text anchor of a page: the exact occurrences of all their quotes are found
/// in one pass over the page (Aho–Corasick), each anchor then as [`resolve`] does.
pub fn resolve_all(idx: &PageIndex, anchors: &[&TextAnchor], threshold: f64) -> Vec<Resolution> {
    let patterns: Vec<Pattern> = anchors.iter().map(|a| Pattern::new(a)).collect();
    let exact = search::exact_occurrences_all(idx, &patterns);
    patterns
        .iter()
        .zip(&exact)
        .map(|(pattern, exact)| resolve_pattern(idx, pattern, exact, threshold))
        .collect()
}

/// Resolves one anchor's pattern, given the byte offsets in `idx.string` of its quote's
/// exact occurrences.
fn resolve_pattern(
    idx: &PageIndex,
    pattern: &Pattern,
    exact: &[usize],
    threshold: f64,
) -> Resolution {
    if pattern.quote.is_empty() || idx.is_empty() {
        return Resolution::orphan();
    }
    let ctx = SearchContext::new(idx, pattern, threshold);
    // Stage 1: exact occurrences.
    let occurrences = search::occurrence_candidates(&ctx, exact);
    // An exact occurrence with one side of its stored context still next to it is the
    // anchor, whatever the score of the other side.
    let intact = decide::one_side_intact(&ctx, &occurrences);
    if let Some(intact) = &intact
        && intact.occurrence.context_verbatim()
    {
        return intact.resolution.clone();
    }
    let searched = decide::not_a_guess(resolve_scored(&ctx, occurrences.clone()));
    match intact {
        Some(intact) => decide::intact_or_searched(&ctx, intact, searched),
        None => decide::specific_or_searched(&ctx, &occurrences, searched),
    }
}

/// Stages 2 to 4 for a pattern whose exact occurrences did not decide it.
fn resolve_scored(ctx: &SearchContext, occurrences: Vec<Candidate>) -> Resolution {
    let mut found = Candidates {
        placeable: occurrences,
        held: Vec::new(),
    };
    if decide::clear_winner(ctx, &found.placeable) {
        return decide::finish(ctx, &found);
    }
    // Stage 2: the context window, then the quote inside each aligned window.
    search::window_search(ctx, &mut found);
    // The quote rewritten between its verbatim context: the window search above allows only
    // so many edits, a rewrite can take more.
    found.placeable.extend(search::between_context(ctx));
    // Stage 3: the quote alone, for long enough quotes (text moved to a new context).
    search::quote_alone(ctx, &mut found);
    decide::finish(ctx, &found)
}
