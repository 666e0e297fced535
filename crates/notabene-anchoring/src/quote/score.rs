//! The score of a candidate place and the ranking of candidates.
//!
//! Owns [`SearchContext`] (the page, the pattern and the threshold one anchor is resolved with),
//! [`Candidate`] (a scored range of the page) and the one score formula
//! `S = (1 − w)·E + w·H` of `docs/src/design/anchoring.md`, with the deterministic ranking of
//! candidates ([`Candidate::key`], [`best_two`], [`separated`]). Calls the pattern
//! ([`super::pattern`]), the page index ([`crate::PageIndex`]) and the edit distances of
//! [`crate::myers`]; it searches nothing itself.

use super::pattern::Pattern;
use crate::PageIndex;
use crate::myers;
use crate::text::SegKind;
use std::cell::OnceCell;
use std::cmp::Reverse;

/// Weight `w` of the section agreement in a candidate's score. A block that moved under another
/// heading with its context intact must beat a lookalike under the stored heading whose
/// context differs by a character, so this stays below one character's share of the context.
pub(super) const SECTION_WEIGHT: f64 = 0.01;
/// What an exact quote loses for context that only holds up to the edge of its block (see
/// [`SearchContext::block_edge_evidence`]): enough that an occurrence with its whole context
/// wins over it, little enough that a moved block still reaches the default threshold
/// (`cargo bench --bench anchoring_quality`, the "block moved" scenarios).
const BLOCK_EDGE_PENALTY: f64 = 0.10;
/// What a candidate loses for each word edge it cuts when the stored quote has that edge: half
/// the block-edge penalty, so a span cut inside a word loses to one on word edges without being
/// ruled out.
const WORD_EDGE_PENALTY: f64 = 0.05;
/// Block-edge scoring needs at least this many chars of quote plus in-block context: below
/// that, a short quote with a scrap of context matches too many places to be evidence.
const BLOCK_EDGE_MIN_EVIDENCE: usize = 20;
/// The part of a stored side that lies within the candidate's block counts (block-edge
/// scoring) when it matches with at least this similarity: a typo fixed next to a moved block
/// is still the same context; a different sentence is not.
const BLOCK_EDGE_MIN_SIMILARITY: f64 = 0.9;
/// A stored side is aligned against its length plus `1 / CONTEXT_REACH_DIVISOR` of it, plus
/// [`CONTEXT_REACH_EXTRA`] chars, of the page: room for the text an edit inserts into it.
const CONTEXT_REACH_DIVISOR: usize = 4;
/// See [`CONTEXT_REACH_DIVISOR`]: the room a short side gets (a word or two inserted).
const CONTEXT_REACH_EXTRA: usize = 2;
/// A heading at the place whose text is at least this similar to the stored section is the
/// same heading, edited (a typo fixed, a word changed): it earns
/// [`EDITED_SECTION_AGREEMENT`].
const EDITED_SECTION_MIN_SIMILARITY: f64 = 0.8;
/// The section agreement `H` of a place under an edited stored heading: between a heading
/// unchanged (1) and another heading (0).
const EDITED_SECTION_AGREEMENT: f64 = 0.5;
/// Scores are compared, and confidences reported, to four decimals: ranking by integer keys
/// makes results identical on every platform and thread count.
const SCORE_SCALE: f64 = 1e4;
/// The best candidate is ambiguous when another, non-overlapping one scores within this margin
/// (and is no better placed by its section): about two characters' worth of evidence in a
/// typical anchor (a short quote between 40-character sides), less than an edited word.
pub(super) const AMBIGUITY_MARGIN: f64 = 0.02;

/// What one anchor is resolved with: the page, the anchor's pattern, the threshold, and what
/// is computed of the page only when a candidate needs it.
pub(super) struct SearchContext<'a> {
    /// The page, prepared.
    pub(super) index: &'a PageIndex<'a>,
    /// The stored anchor, normalised.
    pub(super) pattern: &'a Pattern,
    /// The acceptance threshold `τ` of the score.
    pub(super) threshold: f64,
    /// Normalised char offsets where the page's blocks start ([`block_starts`]), computed for
    /// the first candidate scored against a block edge.
    block_starts: OnceCell<Vec<usize>>,
}

/// A scored candidate: the range `[start, end)` of normalised chars and what the page holds
/// there of the stored anchor.
#[derive(Debug, Clone, Copy)]
pub(super) struct Candidate {
    /// First normalised char of the range.
    pub(super) start: usize,
    /// End of the range (exclusive).
    pub(super) end: usize,
    /// Similarity of the range to the stored quote, in [0, 1] (1: the quote, exactly).
    pub(super) quote_similarity: f64,
    /// Similarity of the text before the range to the stored prefix, in [0, 1].
    pub(super) prefix_similarity: f64,
    /// Similarity of the text after the range to the stored suffix, in [0, 1].
    pub(super) suffix_similarity: f64,
    /// The stored prefix is verbatim before the candidate (an empty one: the candidate starts
    /// the page; an anchor with no context at all: always).
    pub(super) prefix_verbatim: bool,
    /// The stored suffix is verbatim after the candidate (an empty one: the candidate ends the
    /// page; an anchor with no context at all: always).
    pub(super) suffix_verbatim: bool,
    /// Section agreement `H`: 1 under the stored heading (or with none to compare), 0.5 under
    /// an edited one, 0 under another.
    pub(super) section_agreement: f64,
    /// Evidence `E`: the length-weighted share of prefix, quote and suffix present at the
    /// place, less the block-edge and word-edge penalties, in [0, 1].
    pub(super) evidence: f64,
    /// The score `S = (1 − w)·E + w·H`.
    pub(super) score: f64,
    /// The evidence counts the context only as far as the candidate's block reaches (a block
    /// moved, a heading inserted): see [`SearchContext::block_edge_evidence`].
    pub(super) block_edge: bool,
    /// The stored prefix is verbatim before the candidate, or verbatim as far as the
    /// candidate's block reaches.
    pub(super) prefix_verbatim_to_edge: bool,
    /// The stored suffix is verbatim after the candidate, or verbatim as far as the
    /// candidate's block reaches.
    pub(super) suffix_verbatim_to_edge: bool,
}

/// The ranking key of a candidate: score, then evidence (both to [`SCORE_SCALE`]), then the
/// stored section, then the earlier start, then the earlier end.
type RankKey = (i64, i64, bool, Reverse<usize>, Reverse<usize>);

impl Candidate {
    /// Integer keys so that results are identical on every platform and thread count.
    pub(super) fn key(&self) -> RankKey {
        (
            (self.score * SCORE_SCALE).round() as i64,
            (self.evidence * SCORE_SCALE).round() as i64,
            self.section_agreement >= 1.0,
            Reverse(self.start),
            Reverse(self.end),
        )
    }

    /// The score as a confidence: rounded to [`SCORE_SCALE`].
    pub(super) fn confidence(&self) -> f64 {
        rounded(self.score)
    }

    /// The range holds the stored quote exactly.
    pub(super) fn quote_exact(&self) -> bool {
        self.quote_similarity >= 1.0
    }

    /// Both sides of the stored context are verbatim next to the candidate.
    pub(super) fn context_verbatim(&self) -> bool {
        self.prefix_verbatim && self.suffix_verbatim
    }

    /// The candidate and `other` do not overlap.
    pub(super) fn apart(&self, other: &Candidate) -> bool {
        self.end <= other.start || self.start >= other.end
    }
}

/// `score` rounded to four decimals ([`SCORE_SCALE`]).
pub(super) fn rounded(score: f64) -> f64 {
    (score * SCORE_SCALE).round() / SCORE_SCALE
}

/// The best candidate and the best one not overlapping it.
#[derive(Debug, Clone, Copy)]
pub(super) struct BestTwo {
    /// The highest-ranked candidate.
    pub(super) best: Candidate,
    /// The highest-ranked candidate apart from `best`, if any.
    pub(super) second: Option<Candidate>,
}

/// The best candidate and the best one not overlapping it.
pub(super) fn best_two(candidates: &[Candidate]) -> Option<BestTwo> {
    let best = *candidates.iter().max_by_key(|c| c.key())?;
    Some(BestTwo {
        best,
        second: best_apart_from(candidates, &best),
    })
}

/// The best of `candidates` not overlapping `best`.
pub(super) fn best_apart_from(candidates: &[Candidate], best: &Candidate) -> Option<Candidate> {
    candidates
        .iter()
        .filter(|c| c.apart(best))
        .max_by_key(|c| c.key())
        .copied()
}

/// Whether `best` clearly beats `second`: by a margin of the score, or by the section when
/// their contexts are (nearly) as good — the section is the tie-breaker it was stored for.
pub(super) fn separated(best: &Candidate, second: &Candidate) -> bool {
    best.score - second.score >= AMBIGUITY_MARGIN
        || best.section_agreement > second.section_agreement
}

/// The similarity of two sequences `len` long (the longer) at edit distance `distance`.
pub(super) fn similarity(distance: usize, len: usize) -> f64 {
    if len == 0 {
        1.0
    } else {
        (1.0 - distance as f64 / len as f64).max(0.0)
    }
}

/// Whether symbol `c` is a word char.
fn is_word(c: u32) -> bool {
    char::from_u32(c).is_some_and(char::is_alphanumeric)
}

/// How far before (after) a candidate a stored side of `len` chars is aligned.
fn context_reach(len: usize) -> usize {
    len + len / CONTEXT_REACH_DIVISOR + CONTEXT_REACH_EXTRA
}

/// Normalised char offsets where a block of the page starts (after each block separator; table
/// cells are not separated, rows are; a code block is one block).
fn block_starts(index: &PageIndex) -> Vec<usize> {
    let page = &*index.page;
    let mut out = vec![0];
    for s in &page.segments {
        if s.kind == SegKind::Raw && &page.text[s.text.clone()] == "\n" {
            out.push(index.norm.start.partition_point(|&x| x < s.text.end));
        }
    }
    out.push(index.len() + 1);
    out.dedup();
    out
}

/// The part of a stored side that counts when a block edge cuts it: its length and its
/// similarity to the page.
#[derive(Debug, Clone, Copy)]
struct SideCut {
    /// Chars of the stored side that lie within the block (next to the candidate).
    len: usize,
    /// Their similarity to the page there.
    similarity: f64,
}

/// What [`SearchContext::block_edge_evidence`] finds.
struct BlockEdgeEvidence {
    /// The best length-weighted similarity that cuts at least one side at a block edge.
    evidence: f64,
    /// The stored prefix is verbatim up to the block's edge.
    prefix_verbatim: bool,
    /// The stored suffix is verbatim up to the block's edge.
    suffix_verbatim: bool,
}

impl<'a> SearchContext<'a> {
    /// The context of one anchor's resolution.
    pub(super) fn new(
        index: &'a PageIndex<'a>,
        pattern: &'a Pattern,
        threshold: f64,
    ) -> SearchContext<'a> {
        SearchContext {
            index,
            pattern,
            threshold,
            block_starts: OnceCell::new(),
        }
    }

    /// The page as matcher symbols.
    pub(super) fn symbols(&self) -> &'a [u32] {
        &self.index.symbols
    }

    /// Whether candidate `c` lies in a code block.
    pub(super) fn in_code(&self, c: &Candidate) -> bool {
        let place = self.index.place(c.start, c.end);
        self.index.page.code_block_holding(&place.text).is_some()
    }

    /// Scores the candidate `[start, end)` whose quote similarity is `quote_similarity`.
    pub(super) fn candidate(&self, start: usize, end: usize, quote_similarity: f64) -> Candidate {
        let (idx, pat) = (self.index, self.pattern);
        let t = &idx.symbols;
        let (prefix_len, suffix_len) = (pat.prefix.len(), pat.suffix.len());
        let quote_len = pat.quote.len();
        // Context present verbatim (the common case) needs no alignment.
        let prefix_similarity = if prefix_len == 0
            || (start >= prefix_len && t[start - prefix_len..start] == pat.prefix[..])
        {
            1.0
        } else {
            let from = start.saturating_sub(context_reach(prefix_len));
            similarity(
                myers::suffix_distance(&pat.prefix, &t[from..start]),
                prefix_len,
            )
        };
        let suffix_similarity =
            if suffix_len == 0 || t.get(end..end + suffix_len) == Some(&pat.suffix[..]) {
                1.0
            } else {
                let to = (end + context_reach(suffix_len)).min(t.len());
                similarity(myers::prefix_distance(&pat.suffix, &t[end..to]), suffix_len)
            };
        let mut evidence = (quote_len as f64 * quote_similarity
            + prefix_len as f64 * prefix_similarity
            + suffix_len as f64 * suffix_similarity)
            / (quote_len + prefix_len + suffix_len) as f64;
        let (mut block_edge, mut prefix_to_edge, mut suffix_to_edge) = (false, false, false);
        // A block moved elsewhere, or a heading inserted before it, replaces the context beyond
        // the block's edge: an exact quote whose in-block context is intact keeps most of its
        // evidence.
        if quote_similarity >= 1.0
            && (prefix_similarity < 1.0 || suffix_similarity < 1.0)
            && let Some(cut) =
                self.block_edge_evidence((start, end), (prefix_similarity, suffix_similarity))
        {
            evidence = evidence.max(cut.evidence - BLOCK_EDGE_PENALTY);
            (block_edge, prefix_to_edge, suffix_to_edge) =
                (true, cut.prefix_verbatim, cut.suffix_verbatim);
        }
        // A quote selected on word boundaries is not found inside a word.
        evidence -= WORD_EDGE_PENALTY
            * f64::from(
                u8::from(pat.word_start && start > 0 && is_word(t[start - 1]))
                    + u8::from(pat.word_end && end < t.len() && is_word(t[end])),
            );
        let evidence = evidence.max(0.0);
        let section_agreement = self.section_agreement(start);
        // An empty side was the page's edge when the quote was captured; an anchor with no
        // context at all (written from the command line) has none to contradict.
        let none = pat.has_no_context();
        let prefix_verbatim = none
            || if prefix_len == 0 {
                start == 0 || pat.prefix_blank
            } else {
                prefix_similarity >= 1.0
            };
        let suffix_verbatim = none
            || if suffix_len == 0 {
                end == t.len() || pat.suffix_blank
            } else {
                suffix_similarity >= 1.0
            };
        Candidate {
            start,
            end,
            quote_similarity,
            prefix_similarity,
            suffix_similarity,
            prefix_verbatim,
            suffix_verbatim,
            section_agreement,
            evidence,
            score: (1.0 - SECTION_WEIGHT) * evidence + SECTION_WEIGHT * section_agreement,
            block_edge,
            prefix_verbatim_to_edge: prefix_verbatim || prefix_to_edge,
            suffix_verbatim_to_edge: suffix_verbatim || suffix_to_edge,
        }
    }

    /// The section agreement `H` of a candidate starting at normalised char `start`.
    fn section_agreement(&self, start: usize) -> f64 {
        match &self.pattern.section {
            None => 1.0,
            Some(_) if !self.index.has_headings() => 1.0,
            Some(stored) => match self.index.section_at(start) {
                Some(here) if here == stored => 1.0,
                Some(here) => {
                    let (x, y): (Vec<u32>, Vec<u32>) = (
                        here.chars().map(|c| c as u32).collect(),
                        stored.chars().map(|c| c as u32).collect(),
                    );
                    let distance = myers::edit_distance(&x, &y);
                    if similarity(distance, x.len().max(y.len())) >= EDITED_SECTION_MIN_SIMILARITY {
                        EDITED_SECTION_AGREEMENT
                    } else {
                        0.0
                    }
                }
                None => 0.0,
            },
        }
    }

    /// Context similarity when the page's block edge cuts the stored context: for each side,
    /// the stored context counts either whole, or only as far as the candidate's block extends
    /// (the rest lies in whatever block is now next door) provided that part matches
    /// ([`BLOCK_EDGE_MIN_SIMILARITY`]). Returns the best length-weighted similarity that cuts
    /// at least one side, if there is enough evidence, and for each side whether it is
    /// verbatim up to the block's edge.
    fn block_edge_evidence(
        &self,
        (start, end): (usize, usize),
        (prefix_similarity, suffix_similarity): (f64, f64),
    ) -> Option<BlockEdgeEvidence> {
        let (idx, pat) = (self.index, self.pattern);
        let t = &idx.symbols;
        let starts = self.block_starts.get_or_init(|| block_starts(idx));
        let (prefix_len, suffix_len) = (pat.prefix.len(), pat.suffix.len());
        let quote_len = pat.quote.len();
        let block_start = starts[starts.partition_point(|&x| x <= start) - 1];
        let block_end = starts[starts.partition_point(|&x| x < end)]
            .saturating_sub(1)
            .min(t.len());
        // Chars of the block before and after the candidate.
        let (before, after) = (start - block_start, block_end.saturating_sub(end));
        let cut = |within: usize, len: usize, stored: &[u32], here: &[u32]| -> Option<SideCut> {
            if within >= len {
                return None;
            }
            let similarity = similarity(myers::edit_distance(stored, here), within);
            (similarity >= BLOCK_EDGE_MIN_SIMILARITY).then_some(SideCut {
                len: within,
                similarity,
            })
        };
        let mut prefix_cut = cut(
            before,
            prefix_len,
            &pat.prefix[prefix_len - before.min(prefix_len)..],
            &t[block_start..start],
        );
        let mut suffix_cut = cut(
            after,
            suffix_len,
            &pat.suffix[..after.min(suffix_len)],
            &t[end..end + after.min(suffix_len)],
        );
        // Blocks that moved together (the items of a list, the rows of a table) keep the context
        // verbatim up to the edge of the group: the longest exact run of stored context that ends
        // at a block edge also counts.
        let prefix_run = pat
            .prefix
            .iter()
            .rev()
            .zip(t[..start].iter().rev())
            .take_while(|(x, y)| x == y)
            .count();
        let group_start = starts[starts.partition_point(|&x| x < start - prefix_run)];
        if group_start < start
            && start - group_start < prefix_len
            && prefix_cut.is_none_or(|c| c.len < start - group_start)
        {
            prefix_cut = Some(SideCut {
                len: start - group_start,
                similarity: 1.0,
            });
        }
        let suffix_run = pat
            .suffix
            .iter()
            .zip(&t[end..])
            .take_while(|(x, y)| x == y)
            .count();
        let blocks_to_run_end = starts.partition_point(|&x| x <= end + suffix_run + 1);
        if blocks_to_run_end > 0 {
            let group_end = starts[blocks_to_run_end - 1].saturating_sub(1);
            if group_end > end
                && group_end - end < suffix_len
                && suffix_cut.is_none_or(|c| c.len < group_end - end)
            {
                suffix_cut = Some(SideCut {
                    len: group_end - end,
                    similarity: 1.0,
                });
            }
        }
        let whole = |len: usize, similarity: f64| Some(SideCut { len, similarity });
        let mut best: Option<f64> = None;
        for (prefix, suffix) in [
            (prefix_cut, whole(suffix_len, suffix_similarity)),
            (whole(prefix_len, prefix_similarity), suffix_cut),
            (prefix_cut, suffix_cut),
        ] {
            let (Some(p), Some(s)) = (prefix, suffix) else {
                continue;
            };
            if (p.len, s.len) == (prefix_len, suffix_len)
                || quote_len + p.len + s.len < BLOCK_EDGE_MIN_EVIDENCE
            {
                continue;
            }
            let evidence =
                (quote_len as f64 + p.len as f64 * p.similarity + s.len as f64 * s.similarity)
                    / (quote_len + p.len + s.len) as f64;
            best = Some(best.map_or(evidence, |x: f64| x.max(evidence)));
        }
        let verbatim = |c: Option<SideCut>| c.is_some_and(|c| c.similarity >= 1.0);
        best.map(|evidence| BlockEdgeEvidence {
            evidence,
            prefix_verbatim: verbatim(prefix_cut),
            suffix_verbatim: verbatim(suffix_cut),
        })
    }
}
