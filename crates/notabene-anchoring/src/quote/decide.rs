//! Stages 4 and 5 of the pipeline: from the candidates found to one [`Resolution`].
//!
//! Owns the rules of `docs/src/design/anchoring.md` that accept the best candidate (`S ≥ τ`),
//! place an exact occurrence by one intact side of its context, place a specific quote found
//! once, and refuse to guess (a winner the evidence does not single out becomes the orphan's
//! suggestion), with the flags of what changed. Calls the score and ranking
//! ([`super::score`]), the pattern ([`super::pattern`]) and, for a rewritten quote that beats
//! an exact one, the search of the spans between the verbatim context
//! ([`super::search::between_context`]).

use super::score::{
    BestTwo, Candidate, SECTION_WEIGHT, SearchContext, best_apart_from, best_two, rounded,
    separated,
};
use super::search::{CONTEXT_INTACT, Candidates, between_context};
use crate::{AnchorStatus, Flags, Resolution};

/// The changed side of an exact quote's context counts as kept when this many of its chars
/// next to the quote are unchanged ([`other_side_kept`]): more than a short word shared by
/// chance, less than the 40 characters a side holds.
const KEPT_RUN: usize = 8;
/// … or when it is found whole at most this many chars away (text inserted next to the
/// quote): a sentence or two inserted, not the same words further down the page.
const DISPLACED_MAX: usize = 240;
/// An edited quote keeps at least this much of the stored one (its similarity) to be placed by
/// one verbatim side of its context; less, and it takes both sides.
const EDITED_QUOTE_MIN: f64 = 0.7;
/// Both sides of an exact occurrence's context keep at least this similarity to the stored
/// ones to place it with both changed ([`specific_or_searched`]): a word rewritten next to the
/// quote on each side leaves a 40-char side about 0.7–0.9 similar; a different passage, under
/// 0.5.
const SIDES_KEPT: f64 = 0.6;
/// … and its weaker side is this much more similar than any other occurrence's: the others
/// stand in another context, not in a copy of this one.
const SIDES_MARGIN: f64 = 0.3;
/// … and the quote has at least this many chars: a shorter one (`}`, `-`, `is`) has copies in
/// a context as close (the next table cell, the sibling list item, the closing brace below).
const SIDES_QUOTE_MIN: usize = 3;
/// A fuzzy place found with less confidence than this (an exact quote found once, far from any
/// of its context; a quote rewritten past recognition) is a guess: suggested, not marked. The
/// threshold τ does not apply to these places, which come from rules past the score.
const GUESS_FLOOR: f64 = 0.7;

/// An exact occurrence placed by one intact side of its context ([`one_side_intact`]).
pub(super) struct IntactOccurrence {
    /// The occurrence.
    pub(super) occurrence: Candidate,
    /// Its resolution (exact, or fuzzy when another such occurrence is as good).
    pub(super) resolution: Resolution,
}

/// Whether the exact occurrences hold a clear winner, with nothing an edited quote could
/// find able to beat it.
pub(super) fn clear_winner(ctx: &SearchContext, occurrences: &[Candidate]) -> bool {
    let pat = ctx.pattern;
    // A clear winner ends the search, unless a candidate with an edited quote but a better
    // context could still beat it: such a candidate (one edit at least, its context whole)
    // scores at most `ceiling`.
    let (prefix_len, quote_len, suffix_len) = (pat.prefix.len(), pat.quote.len(), pat.suffix.len());
    let ceiling = (1.0 - SECTION_WEIGHT) * (quote_len - 1 + prefix_len + suffix_len) as f64
        / (quote_len + prefix_len + suffix_len) as f64
        + SECTION_WEIGHT;
    // Not in code, where a copy of the quote sharing most of its context is common: there
    // the search for the quote between its verbatim context always runs.
    best_two(occurrences).is_some_and(|BestTwo { best, second }| {
        best.prefix_similarity >= CONTEXT_INTACT
            && best.suffix_similarity >= CONTEXT_INTACT
            && best.score >= ceiling
            && second.is_none_or(|s| separated(&best, &s))
            && !ctx.in_code(&best)
    })
}

/// The exact occurrence whose stored prefix or suffix is verbatim next to it (the best of
/// them) while the other side was kept ([`other_side_kept`]), placed `exact` — `fuzzy` when
/// another such occurrence is as good. Its confidence counts the quote and the intact side
/// only.
pub(super) fn one_side_intact(
    ctx: &SearchContext,
    occurrences: &[Candidate],
) -> Option<IntactOccurrence> {
    let unique = occurrences.len() == 1;
    let intact: Vec<Candidate> = occurrences
        .iter()
        .filter(|c| {
            c.context_verbatim()
                || ((c.prefix_verbatim || c.suffix_verbatim) && other_side_kept(ctx, c, unique))
        })
        .copied()
        .collect();
    let BestTwo { best, second } = best_two(&intact)?;
    let ambiguous = second.is_some_and(|s| !separated(&best, &s));
    let score = if best.context_verbatim() {
        best.score
    } else {
        (1.0 - SECTION_WEIGHT) + SECTION_WEIGHT * best.section_agreement
    };
    let resolution = Resolution {
        status: if ambiguous {
            AnchorStatus::Fuzzy
        } else {
            AnchorStatus::Exact
        },
        confidence: rounded(score),
        place: Some(ctx.index.place(best.start, best.end)),
        flags: flags_of(ctx, &best, ambiguous),
        suggestion: None,
        block: None,
    };
    Some(IntactOccurrence {
        occurrence: best,
        resolution,
    })
}

/// For an exact occurrence `c` with one side of its context intact: whether the other side
/// was kept rather than replaced — its start (nearest the quote) still there for
/// [`KEPT_RUN`] chars, or the whole stored side found within [`DISPLACED_MAX`] chars
/// (text inserted between it and the quote) — or the quote is specific and found once.
/// A short quote next to a shared line (a table row, a repeated statement) has one side
/// intact by chance, and the other replaced.
///
/// In a code block only the displaced side counts: code repeats its lines and their shapes,
/// so a copy of the quote often shares the start of its context, or is the only one left.
fn other_side_kept(ctx: &SearchContext, c: &Candidate, unique: bool) -> bool {
    let pat = ctx.pattern;
    let code = ctx.in_code(c);
    if unique && pat.specific && !code {
        return true;
    }
    let t = ctx.symbols();
    let kept = |run: usize, len: usize| !code && run >= KEPT_RUN.min(len);
    if c.prefix_verbatim {
        let s = &pat.suffix;
        let run = s
            .iter()
            .zip(&t[c.end..])
            .take_while(|(x, y)| x == y)
            .count();
        let end = (c.end + DISPLACED_MAX + s.len()).min(t.len());
        kept(run, s.len()) || (!s.is_empty() && t[c.end..end].windows(s.len()).any(|w| w == &s[..]))
    } else {
        let p = &pat.prefix;
        let run = p
            .iter()
            .rev()
            .zip(t[..c.start].iter().rev())
            .take_while(|(x, y)| x == y)
            .count();
        let start = c.start.saturating_sub(DISPLACED_MAX + p.len());
        kept(run, p.len())
            || (!p.is_empty() && t[start..c.start].windows(p.len()).any(|w| w == &p[..]))
    }
}

/// The resolution when an exact occurrence has one side of its context intact (`intact`) and
/// the search went on (`searched`): an edited quote elsewhere with both sides of its context
/// intact is the better evidence (the exact one is then a copy next to a shared line); so is
/// a rewritten quote between its verbatim context, and nothing is placed; else the occurrence.
pub(super) fn intact_or_searched(
    ctx: &SearchContext,
    intact: IntactOccurrence,
    searched: Resolution,
) -> Resolution {
    let elsewhere = match (&searched.place, &intact.resolution.place) {
        (Some(p), Some(q)) => {
            !searched.flags.context_changed
                && (p.text.start >= q.text.end || p.text.end <= q.text.start)
        }
        _ => false,
    };
    if elsewhere {
        return searched;
    }
    if let Some(rival) = between_context(ctx)
        .iter()
        .filter(|x| x.apart(&intact.occurrence))
        .max_by_key(|x| x.key())
    {
        return held_back(ctx, rival);
    }
    intact.resolution
}

/// The resolution when no occurrence has a side of its context intact, while the search
/// placed nothing: an exact occurrence is still the place (fuzzy, context changed) when
/// - it is the only one, specific (3+ words), not in code and under the stored heading, and
///   the search found nothing else close (an edited quote between verbatim context is the
///   better evidence); or
/// - it stands under the stored heading, both sides of its context still resemble the stored
///   ones ([`SIDES_KEPT`]: the words next to the quote were rewritten, not the passage), no
///   other occurrence comes as close on its weaker side ([`SIDES_MARGIN`]), and the search
///   found nothing else that resembles the anchor (its best candidate, if any, is this one).
pub(super) fn specific_or_searched(
    ctx: &SearchContext,
    occurrences: &[Candidate],
    searched: Resolution,
) -> Resolution {
    if searched.status != AnchorStatus::Orphan {
        return searched;
    }
    let specific_once = match occurrences {
        [only]
            if ctx.pattern.specific
                && !ctx.in_code(only)
                && only.section_agreement >= 1.0
                && nothing_else_close(ctx, only, &searched) =>
        {
            Some(*only)
        }
        _ => None,
    };
    let Some(only) = specific_once.or_else(|| context_kept(ctx, occurrences, &searched)) else {
        return searched;
    };
    Resolution {
        status: AnchorStatus::Fuzzy,
        confidence: only.confidence(),
        place: Some(ctx.index.place(only.start, only.end)),
        flags: flags_of(ctx, &only, false),
        suggestion: None,
        block: None,
    }
}

/// The exact occurrence whose context on both sides still resembles the stored one, clearly
/// more than any other occurrence's, under the stored heading, with nothing else the search
/// found close to the anchor ([`specific_or_searched`]).
fn context_kept(
    ctx: &SearchContext,
    occurrences: &[Candidate],
    searched: &Resolution,
) -> Option<Candidate> {
    // How much of its context a spot keeps: its weaker side.
    let kept = |c: &Candidate| c.prefix_similarity.min(c.suffix_similarity);
    let mut ranked: Vec<&Candidate> = occurrences.iter().collect();
    ranked.sort_by(|a, b| kept(b).total_cmp(&kept(a)).then(a.start.cmp(&b.start)));
    let best = **ranked.first()?;
    let clear = ranked
        .get(1)
        .is_none_or(|second| kept(&best) - kept(second) >= SIDES_MARGIN);
    let nothing_else = nothing_else_close(ctx, &best, searched);
    (clear
        && nothing_else
        && kept(&best) >= SIDES_KEPT
        && best.section_agreement >= 1.0
        && ctx.pattern.quote.len() >= SIDES_QUOTE_MIN)
        .then_some(best)
}

/// Whether the search found nothing close to the anchor but `c` itself: its best candidate,
/// if any, overlaps `c`.
fn nothing_else_close(ctx: &SearchContext, c: &Candidate, searched: &Resolution) -> bool {
    searched.suggestion.as_ref().is_none_or(|s| {
        let here = ctx.index.place(c.start, c.end);
        s.text.start < here.text.end && here.text.start < s.text.end
    })
}

/// Lets a resolution through unless it is a fuzzy place found with less than [`GUESS_FLOOR`]
/// confidence: then an orphan suggesting that place.
pub(super) fn not_a_guess(r: Resolution) -> Resolution {
    if r.status == AnchorStatus::Fuzzy && r.confidence < GUESS_FLOOR {
        return Resolution {
            confidence: r.confidence,
            suggestion: r.place,
            ..Resolution::orphan()
        };
    }
    r
}

/// Stage 4: the resolution from the candidates found (held ones are only suggested for an
/// orphan).
pub(super) fn finish(ctx: &SearchContext, found: &Candidates) -> Resolution {
    let Some(top) = best_two(&found.placeable).filter(|top| top.best.score >= ctx.threshold) else {
        // An orphan: the best rejected candidate, whether below the threshold or held back.
        let Some(suggestion) = found
            .placeable
            .iter()
            .chain(&found.held)
            .max_by_key(|c| c.key())
        else {
            return Resolution::orphan();
        };
        return held_back(ctx, suggestion);
    };
    let mut top = prefer_exact(ctx, &found.placeable, top);
    // Context on both sides verbatim is the strongest evidence there is of where the quote
    // stood. A winner without it, while another spot has it, is a copy (a look-alike
    // sharing one side of its context); a fuzzy winner with it, while another spot has it
    // too, is a guess between two copies.
    if !ctx.pattern.has_no_context() && !context_holds(ctx, found, &mut top) {
        return held_back(ctx, &top.best);
    }
    placed(ctx, &top.best, top.second)
}

/// An orphan suggesting candidate `c`.
fn held_back(ctx: &SearchContext, c: &Candidate) -> Resolution {
    Resolution {
        confidence: c.confidence(),
        suggestion: Some(ctx.index.place(c.start, c.end)),
        ..Resolution::orphan()
    }
}

/// Same place, better boundaries: an accepted exact occurrence of the quote overlapping a
/// fuzzy winner is preferred to it (a fuzzy span can swallow edited context words).
fn prefer_exact(ctx: &SearchContext, placeable: &[Candidate], top: BestTwo) -> BestTwo {
    let best = &top.best;
    if !best.quote_exact()
        && let Some(exact) = placeable
            .iter()
            .filter(|c| {
                c.quote_exact()
                    && c.start < best.end
                    && best.start < c.end
                    && c.score >= ctx.threshold
            })
            .max_by_key(|c| c.key())
    {
        return BestTwo {
            best: *exact,
            second: best_apart_from(placeable, exact),
        };
    }
    top
}

/// Whether the winner's context justifies placing it (false: it is held back). A rival with
/// both sides of its context verbatim takes over from a winner without, when it can be placed.
fn context_holds(ctx: &SearchContext, found: &Candidates, top: &mut BestTwo) -> bool {
    let rival = found
        .placeable
        .iter()
        .map(|c| (c, true))
        .chain(found.held.iter().map(|c| (c, false)))
        .filter(|(c, _)| c.context_verbatim() && c.apart(&top.best))
        .max_by_key(|(c, _)| c.key());
    if let Some((rival, placeable)) = rival {
        if top.best.context_verbatim() {
            if !top.best.quote_exact() {
                return false;
            }
        } else if placeable && rival.score >= ctx.threshold {
            top.best = *rival;
            top.second = best_apart_from(&found.placeable, &top.best);
        } else {
            return false;
        }
    }
    if top.best.quote_exact() {
        exact_holds(ctx, &top.best)
    } else {
        edited_holds(ctx, &found.placeable, &top.best)
    }
}

/// Whether an exact winner's context lets it be placed.
fn exact_holds(ctx: &SearchContext, best: &Candidate) -> bool {
    // An exact quote with both sides of its context changed is ambiguous, unless its
    // block moved (context verbatim up to the block's edges). (A specific quote found
    // once outside code is placed by the caller.)
    let verbatim_to_edges = best.prefix_verbatim_to_edge && best.suffix_verbatim_to_edge;
    if !(best.prefix_verbatim || best.suffix_verbatim || verbatim_to_edges) {
        return false;
    }
    // Code repeats its lines: an exact line there with one side of its context
    // changed (not only cut by its block's edge) is placed only when it is specific
    // and under its stored heading.
    if !verbatim_to_edges
        && ctx.in_code(best)
        && (!ctx.pattern.specific || (ctx.index.has_headings() && best.section_agreement < 1.0))
    {
        return false;
    }
    true
}

/// Whether an edited winner's context lets it be placed.
fn edited_holds(ctx: &SearchContext, placeable: &[Candidate], best: &Candidate) -> bool {
    // An edited quote is placed by its context: one side verbatim, both when little
    // of the quote is left; and not while the exact quote stands elsewhere in a
    // block that moved.
    let moved_elsewhere = placeable
        .iter()
        .any(|c| c.quote_exact() && c.block_edge && c.score >= ctx.threshold && c.apart(best));
    if !(best.prefix_verbatim || best.suffix_verbatim)
        || (best.quote_similarity < EDITED_QUOTE_MIN && !best.context_verbatim())
        || moved_elsewhere
    {
        return false;
    }
    true
}

/// The resolution placing `best`, unless `second` is as good a spot with as intact a quote.
fn placed(ctx: &SearchContext, best: &Candidate, second: Option<Candidate>) -> Resolution {
    let confidence = best.confidence();
    let ambiguous = second.is_some_and(|s| !separated(best, &s));
    // Two spots as good, the other with a quote as intact: nothing tells them apart.
    if ambiguous && second.is_some_and(|s| s.quote_similarity >= best.quote_similarity) {
        return held_back(ctx, best);
    }
    let flags = flags_of(ctx, best, ambiguous);
    // Exact needs the quote and a side of its context unchanged (the exact occurrences with
    // one did not get here).
    let status =
        if best.quote_exact() && (best.prefix_verbatim || best.suffix_verbatim) && !ambiguous {
            AnchorStatus::Exact
        } else {
            AnchorStatus::Fuzzy
        };
    Resolution {
        status,
        confidence,
        place: Some(ctx.index.place(best.start, best.end)),
        flags,
        suggestion: None,
        block: None,
    }
}

/// What differs between the stored anchor and candidate `c`.
fn flags_of(ctx: &SearchContext, c: &Candidate, ambiguous: bool) -> Flags {
    Flags {
        quote_changed: c.quote_similarity < 1.0,
        context_changed: !c.context_verbatim(),
        section_changed: ctx.pattern.section.as_deref() != ctx.index.section_at(c.start),
        ambiguous,
    }
}
