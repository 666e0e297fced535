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
//!    agreement and `w` = `SECTION_WEIGHT` (small: the section breaks ties between equal
//!    contexts, it never outweighs an edit in the context); accept the best if `S ≥ τ`, with
//!    deterministic tie-breaks. A specific quote (3+ words) found exactly once outside code,
//!    with both sides of its context changed, is placed `fuzzy` when nothing reached `τ`.
//! 5. **Refuse to guess** (`finish`): a winner the evidence does not single out — context
//!    changed on both sides, a copy in code, an edited quote with no side verbatim, a spot
//!    elsewhere with both sides verbatim, a tie — is the orphan's suggestion instead.
//!
//! The flags say exactly what differs: the quote, the prefix or suffix, the section.

use super::myers;
use super::{Flags, PageIndex, Resolution, Status};
use crate::text::SegKind;
use crate::text::normalize::{normalize, normalize_fragment};
use std::cell::OnceCell;

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

/// Context kept on each side (characters) for scoring.
const CONTEXT_CAP: usize = 64;
/// Context used to build the fuzzy search window.
const WINDOW_CONTEXT: usize = 32;
/// At most this many exact occurrences are scored.
const MAX_OCCURRENCES: usize = 4096;
/// Quotes at least this long are also searched on their own.
const QUOTE_ALONE_MIN: usize = 20;
/// What an exact quote loses for context that only holds up to the edge of its block (see
/// [`score`]).
const BLOCK_EDGE_PENALTY: f64 = 0.10;
/// What a candidate loses for each word edge it cuts when the stored quote has that edge.
const WORD_EDGE_PENALTY: f64 = 0.05;
/// A fuzzy quote found in the context window needs at least this similarity on each side.
const WINDOW_MIN_SIDE: f64 = 0.75;
/// Weight of the section agreement in a candidate's score. A block that moved under another
/// heading with its context intact must beat a lookalike under the stored heading whose
/// context differs by a character, so this stays below one character's share of the context.
const SECTION_WEIGHT: f64 = 0.01;
/// Block-edge scoring needs at least this many chars of quote plus in-block context.
const BLOCK_EDGE_MIN_EVIDENCE: usize = 20;

/// The stored anchor, normalised as the page is.
struct Pattern {
    p: Vec<u32>,
    q: Vec<u32>,
    s: Vec<u32>,
    /// The quote starts (ends) a word: a word char after a non-word char or the page start.
    word_start: bool,
    word_end: bool,
    q_string: String,
    section: Option<String>,
    /// The stored prefix (suffix) was only whitespace: no evidence, and not the page's edge.
    p_blank: bool,
    s_blank: bool,
    /// The quote is specific enough to be placed by itself when found once: at least
    /// [`SPECIFIC_WORDS`] words, or [`SPECIFIC_CHARS`] characters of a script written
    /// without spaces.
    specific: bool,
}

/// The changed side of an exact quote's context counts as kept when this many of its chars
/// next to the quote are unchanged ([`other_side_kept`]).
const KEPT_RUN: usize = 8;
/// … or when it is found whole at most this many chars away (text inserted next to the
/// quote).
const DISPLACED_MAX: usize = 240;
/// A quote of at least this many words found once on the page is placed even when both
/// sides of its context changed.
const SPECIFIC_WORDS: usize = 3;
/// The same, in characters, for scripts written without spaces between words.
const SPECIFIC_CHARS: usize = 12;

/// Whether `c` belongs to a script written without spaces between words (Han, kana,
/// Thai, Lao, Khmer, Myanmar, Tibetan).
fn spaceless(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF // Thai, Lao
        | 0x0F00..=0x0FFF // Tibetan
        | 0x1000..=0x109F // Myanmar
        | 0x1780..=0x17FF // Khmer
        | 0x3040..=0x30FF // Hiragana, Katakana
        | 0x3400..=0x4DBF // CJK extension A
        | 0x4E00..=0x9FFF // CJK unified ideographs
        | 0xF900..=0xFAFF // CJK compatibility ideographs
        | 0x20000..=0x2FFFF) // CJK extensions
}

/// See [`Pattern::specific`].
fn specific(q: &[char]) -> bool {
    let s: String = q.iter().collect();
    let words = s
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .count();
    let spaceless_chars = q.iter().filter(|&&c| spaceless(c)).count();
    words >= SPECIFIC_WORDS || spaceless_chars >= SPECIFIC_CHARS
}

fn is_word(c: u32) -> bool {
    char::from_u32(c).is_some_and(char::is_alphanumeric)
}

fn syms(v: &[char]) -> Vec<u32> {
    v.iter().map(|&c| c as u32).collect()
}

fn pattern(a: &TextAnchor) -> Pattern {
    // Whitespace at the quote's edges belongs to the context: the page text is trimmed at
    // word edges by normalisation, and so is the quote.
    let lead = &a.quote[..a.quote.len() - a.quote.trim_start().len()];
    let trail = &a.quote[a.quote.trim_end().len()..];
    let q = normalize(a.quote).chars;
    let mut p = normalize_fragment(&format!("{}{lead}", a.prefix));
    let mut s = normalize_fragment(&format!("{trail}{}", a.suffix));
    if q.is_empty() {
        p.clear();
        s.clear();
    }
    // The outer ends of the context carry no information (and the page text is trimmed).
    while p.first() == Some(&' ') {
        p.remove(0);
    }
    while s.last() == Some(&' ') {
        s.pop();
    }
    // A side that was only whitespace says nothing about where the quote is (but it was not
    // the page's edge either).
    let p_blank = p.is_empty() && !a.prefix.is_empty();
    let s_blank = s.is_empty() && !a.suffix.is_empty();
    if p.len() > CONTEXT_CAP {
        p.drain(..p.len() - CONTEXT_CAP);
    }
    s.truncate(CONTEXT_CAP);
    let section = a
        .section
        .map(|s| normalize(s).as_string())
        .filter(|s| !s.is_empty());
    let word_start = q.first().is_some_and(|&c| c.is_alphanumeric())
        && p.last().is_none_or(|&c| !c.is_alphanumeric());
    let word_end = q.last().is_some_and(|&c| c.is_alphanumeric())
        && s.first().is_none_or(|&c| !c.is_alphanumeric());
    Pattern {
        p_blank,
        s_blank,
        specific: specific(&q),
        word_start,
        word_end,
        q_string: q.iter().collect(),
        p: syms(&p),
        q: syms(&q),
        s: syms(&s),
        section,
    }
}

/// A scored candidate range `[a, b)` of normalised chars.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    a: usize,
    b: usize,
    q: f64,
    sp: f64,
    ss: f64,
    /// The stored prefix (suffix) is verbatim next to the candidate (an empty one: the
    /// candidate starts (ends) the page; an anchor with no context at all: always).
    pa: bool,
    sa: bool,
    h: f64,
    e: f64,
    score: f64,
    /// The score counts the context only as far as the candidate's block reaches (a block
    /// moved, a heading inserted): see [`block_edge_e`].
    edge: bool,
    /// The stored prefix (suffix) is verbatim next to the candidate, or verbatim as far as
    /// the candidate's block reaches.
    pe: bool,
    se: bool,
}

impl Candidate {
    /// Integer keys so that results are identical on every platform and thread count.
    fn key(
        &self,
    ) -> (
        i64,
        i64,
        bool,
        std::cmp::Reverse<usize>,
        std::cmp::Reverse<usize>,
    ) {
        (
            (self.score * 1e4).round() as i64,
            (self.e * 1e4).round() as i64,
            self.h >= 1.0,
            std::cmp::Reverse(self.a),
            std::cmp::Reverse(self.b),
        )
    }
}

fn similarity(dist: usize, len: usize) -> f64 {
    if len == 0 {
        1.0
    } else {
        (1.0 - dist as f64 / len as f64).max(0.0)
    }
}

/// Scores the candidate `[a, b)` whose quote similarity is `q`.
/// Normalised char offsets where a block of the page starts (after each block separator; table
/// cells are not separated, rows are; a code block is one block).
fn block_starts(idx: &PageIndex) -> Vec<usize> {
    let page = &*idx.page;
    let mut out = vec![0];
    for s in &page.segments {
        if s.kind == SegKind::Raw && &page.text[s.text.clone()] == "\n" {
            out.push(idx.norm.start.partition_point(|&x| x < s.text.end));
        }
    }
    out.push(idx.len() + 1);
    out.dedup();
    out
}

/// Context similarity when the page's block edge cuts the stored context: for each side, the
/// stored context counts either whole, or only as far as the candidate's block extends (the
/// rest lies in whatever block is now next door) provided that part matches (≥ 0.9). Returns
/// the best length-weighted similarity that cuts at least one side, if there is enough
/// evidence, and for each side whether it is verbatim up to the block's edge.
fn block_edge_e(
    idx: &PageIndex,
    pat: &Pattern,
    blocks: &OnceCell<Vec<usize>>,
    (a, b): (usize, usize),
    (sp, ss): (f64, f64),
) -> Option<(f64, bool, bool)> {
    let t = &idx.symbols;
    let starts = blocks.get_or_init(|| block_starts(idx));
    let (lp, ls, m) = (pat.p.len(), pat.s.len(), pat.q.len());
    let bs = starts[starts.partition_point(|&x| x <= a) - 1];
    let be = starts[starts.partition_point(|&x| x < b)]
        .saturating_sub(1)
        .min(t.len());
    let (jp, js) = (a - bs, be.saturating_sub(b));
    let cut = |j: usize, l: usize, stored: &[u32], here: &[u32]| -> Option<(usize, f64)> {
        if j >= l {
            return None;
        }
        let s = similarity(myers::edit_distance(stored, here), j);
        (s >= 0.9).then_some((j, s))
    };
    let mut p_cut = cut(jp, lp, &pat.p[lp - jp.min(lp)..], &t[bs..a]);
    let mut s_cut = cut(js, ls, &pat.s[..js.min(ls)], &t[b..b + js.min(ls)]);
    // Blocks that moved together (the items of a list, the rows of a table) keep the context
    // verbatim up to the edge of the group: the longest exact run of stored context that ends
    // at a block edge also counts.
    let cp = pat
        .p
        .iter()
        .rev()
        .zip(t[..a].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let group_start = starts[starts.partition_point(|&x| x < a - cp)];
    if group_start < a && a - group_start < lp && p_cut.is_none_or(|c| c.0 < a - group_start) {
        p_cut = Some((a - group_start, 1.0));
    }
    let cs = pat
        .s
        .iter()
        .zip(&t[b..])
        .take_while(|(x, y)| x == y)
        .count();
    let k = starts.partition_point(|&x| x <= b + cs + 1);
    if k > 0 {
        let group_end = starts[k - 1].saturating_sub(1);
        if group_end > b && group_end - b < ls && s_cut.is_none_or(|c| c.0 < group_end - b) {
            s_cut = Some((group_end - b, 1.0));
        }
    }
    let mut best: Option<f64> = None;
    for (p, s) in [
        (p_cut, Some((ls, ss))),
        (Some((lp, sp)), s_cut),
        (p_cut, s_cut),
    ] {
        let (Some(p), Some(s)) = (p, s) else { continue };
        if (p.0, s.0) == (lp, ls) || m + p.0 + s.0 < BLOCK_EDGE_MIN_EVIDENCE {
            continue;
        }
        let e = (m as f64 + p.0 as f64 * p.1 + s.0 as f64 * s.1) / (m + p.0 + s.0) as f64;
        best = Some(best.map_or(e, |x: f64| x.max(e)));
    }
    let verbatim = |c: Option<(usize, f64)>| c.is_some_and(|c| c.1 >= 1.0);
    best.map(|e| (e, verbatim(p_cut), verbatim(s_cut)))
}

fn score(
    idx: &PageIndex,
    pat: &Pattern,
    blocks: &OnceCell<Vec<usize>>,
    a: usize,
    b: usize,
    q: f64,
) -> Candidate {
    let t = &idx.symbols;
    let (lp, ls, m) = (pat.p.len(), pat.s.len(), pat.q.len());
    // Context present verbatim (the common case) needs no alignment.
    let sp = if lp == 0 || (a >= lp && t[a - lp..a] == pat.p[..]) {
        1.0
    } else {
        let from = a.saturating_sub(lp + lp / 4 + 2);
        similarity(myers::suffix_distance(&pat.p, &t[from..a]), lp)
    };
    let ss = if ls == 0 || t.get(b..b + ls) == Some(&pat.s[..]) {
        1.0
    } else {
        let to = (b + ls + ls / 4 + 2).min(t.len());
        similarity(myers::prefix_distance(&pat.s, &t[b..to]), ls)
    };
    let mut e = (m as f64 * q + lp as f64 * sp + ls as f64 * ss) / (m + lp + ls) as f64;
    let (mut edge, mut pe, mut se) = (false, false, false);
    // A block moved elsewhere, or a heading inserted before it, replaces the context beyond
    // the block's edge: an exact quote whose in-block context is intact keeps most of its
    // evidence.
    if q >= 1.0
        && (sp < 1.0 || ss < 1.0)
        && let Some((cut, p_edge, s_edge)) = block_edge_e(idx, pat, blocks, (a, b), (sp, ss))
    {
        e = e.max(cut - BLOCK_EDGE_PENALTY);
        (edge, pe, se) = (true, p_edge, s_edge);
    }
    // A quote selected on word boundaries is not found inside a word.
    e -= WORD_EDGE_PENALTY
        * f64::from(
            u8::from(pat.word_start && a > 0 && is_word(t[a - 1]))
                + u8::from(pat.word_end && b < t.len() && is_word(t[b])),
        );
    let e = e.max(0.0);
    let h = match &pat.section {
        None => 1.0,
        Some(_) if !idx.has_headings() => 1.0,
        Some(stored) => match idx.section_at(a) {
            Some(here) if here == stored => 1.0,
            Some(here) => {
                let (x, y): (Vec<u32>, Vec<u32>) = (
                    here.chars().map(|c| c as u32).collect(),
                    stored.chars().map(|c| c as u32).collect(),
                );
                if similarity(myers::edit_distance(&x, &y), x.len().max(y.len())) >= 0.8 {
                    0.5
                } else {
                    0.0
                }
            }
            None => 0.0,
        },
    };
    // An empty side was the page's edge when the quote was captured; an anchor with no
    // context at all (written from the command line) has none to contradict.
    let none = lp == 0 && ls == 0;
    let pa = none
        || if lp == 0 {
            a == 0 || pat.p_blank
        } else {
            sp >= 1.0
        };
    let sa = none
        || if ls == 0 {
            b == t.len() || pat.s_blank
        } else {
            ss >= 1.0
        };
    let (pe, se) = (pa || pe, sa || se);
    Candidate {
        a,
        b,
        q,
        sp,
        ss,
        pa,
        sa,
        h,
        e,
        score: (1.0 - SECTION_WEIGHT) * e + SECTION_WEIGHT * h,
        edge,
        pe,
        se,
    }
}

/// Minimal edit distance of `pat` against a suffix of `text` (end fixed): (start, distance).
fn best_suffix_start(pat: &[u32], text: &[u32]) -> (usize, usize) {
    let rp: Vec<u32> = pat.iter().rev().copied().collect();
    let rt: Vec<u32> = text.iter().rev().copied().collect();
    let (len, d) = myers::prefix_end(&rp, &rt);
    (text.len() - len, d)
}

/// Resolves one text anchor on a prepared page.
pub fn resolve(idx: &PageIndex, anchor: &TextAnchor, threshold: f64) -> Resolution {
    let pat = pattern(anchor);
    let exact: Vec<usize> = idx
        .string
        .match_indices(pat.q_string.as_str())
        .take(MAX_OCCURRENCES)
        .map(|(byte, _)| byte)
        .collect();
    resolve_pattern(idx, &pat, &exact, threshold)
}

/// Resolves every text anchor of a page: the exact occurrences of all their quotes are found
/// in one pass over the page (Aho–Corasick), each anchor then as [`resolve`] does.
pub fn resolve_all(idx: &PageIndex, anchors: &[&TextAnchor], threshold: f64) -> Vec<Resolution> {
    let pats: Vec<Pattern> = anchors.iter().map(|a| pattern(a)).collect();
    let mut exact: Vec<Vec<usize>> = vec![Vec::new(); pats.len()];
    // Distinct non-empty quotes, each with the anchors that have it.
    let mut quotes: Vec<&str> = Vec::new();
    let mut holders: Vec<Vec<usize>> = Vec::new();
    let mut seen: std::collections::HashMap<&str, usize> = Default::default();
    for (i, p) in pats.iter().enumerate() {
        if p.q_string.is_empty() {
            continue;
        }
        let k = *seen.entry(p.q_string.as_str()).or_insert_with(|| {
            quotes.push(p.q_string.as_str());
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
        for m in ac.find_overlapping_iter(idx.string.as_str()) {
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
    pats.iter()
        .zip(&exact)
        .map(|(p, e)| resolve_pattern(idx, p, e, threshold))
        .collect()
}

/// Resolves one anchor's pattern, given the byte offsets in `idx.string` of its quote's
/// exact occurrences.
fn resolve_pattern(idx: &PageIndex, pat: &Pattern, exact: &[usize], threshold: f64) -> Resolution {
    let m = pat.q.len();
    if m == 0 || idx.is_empty() {
        return Resolution::orphan();
    }
    let blocks = OnceCell::new();
    // Stage 1: exact occurrences.
    let occurrences: Vec<Candidate> = exact
        .iter()
        .map(|&byte| {
            let a = idx.char_index(byte);
            score(idx, pat, &blocks, a, a + m, 1.0)
        })
        .collect();
    // An exact occurrence with one side of its stored context still next to it is the
    // anchor, whatever the score of the other side.
    let intact = one_side_intact(idx, pat, &occurrences);
    if let Some((c, r)) = &intact
        && c.pa
        && c.sa
    {
        return r.clone();
    }
    let r = resolve_scored(idx, pat, occurrences.clone(), &blocks, threshold);
    if let Some((c, one)) = intact {
        // An edited quote with both sides of its context intact elsewhere is the better
        // evidence (the exact one is then a copy next to a shared line).
        let elsewhere = match (&r.place, &one.place) {
            (Some(p), Some(q)) => {
                !r.flags.context_changed
                    && (p.text.start >= q.text.end || p.text.end <= q.text.start)
            }
            _ => false,
        };
        if elsewhere {
            return r;
        }
        // … and so is a rewritten quote between its verbatim context: nothing is placed.
        if let Some(rival) = between_context(idx, pat, &blocks)
            .iter()
            .filter(|x| x.b <= c.a || x.a >= c.b)
            .max_by_key(|x| x.key())
        {
            return Resolution {
                confidence: (rival.score * 1e4).round() / 1e4,
                suggestion: Some(idx.place(rival.a, rival.b)),
                ..Resolution::orphan()
            };
        }
        return one;
    }
    // Both sides changed: a quote found exactly once, long enough to be specific, is still
    // the place (fuzzy), unless the search placed an edited quote elsewhere — not in code,
    // where a line found once is often the copy of a deleted one.
    match occurrences.as_slice() {
        [only] if r.status == Status::Orphan && pat.specific && !in_code(idx, only) => Resolution {
            status: Status::Fuzzy,
            confidence: (only.score * 1e4).round() / 1e4,
            place: Some(idx.place(only.a, only.b)),
            flags: flags_of(idx, pat, only, false),
            suggestion: None,
            block: None,
        },
        _ => r,
    }
}

/// The exact occurrence whose stored prefix or suffix is verbatim next to it (the best of
/// them) while the other side was kept ([`other_side_kept`]), placed `exact` — `fuzzy` when
/// another such occurrence is as good. Its confidence counts the quote and the intact side
/// only.
fn one_side_intact(
    idx: &PageIndex,
    pat: &Pattern,
    occ: &[Candidate],
) -> Option<(Candidate, Resolution)> {
    let unique = occ.len() == 1;
    let intact: Vec<Candidate> = occ
        .iter()
        .filter(|c| (c.pa && c.sa) || ((c.pa || c.sa) && other_side_kept(idx, pat, c, unique)))
        .copied()
        .collect();
    let (best, second) = best_two(&intact)?;
    let ambiguous = second.is_some_and(|s| !separated(&best, &s));
    let score = if best.pa && best.sa {
        best.score
    } else {
        (1.0 - SECTION_WEIGHT) + SECTION_WEIGHT * best.h
    };
    let r = Resolution {
        status: if ambiguous {
            Status::Fuzzy
        } else {
            Status::Exact
        },
        confidence: (score * 1e4).round() / 1e4,
        place: Some(idx.place(best.a, best.b)),
        flags: flags_of(idx, pat, &best, ambiguous),
        suggestion: None,
        block: None,
    };
    Some((best, r))
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
fn other_side_kept(idx: &PageIndex, pat: &Pattern, c: &Candidate, unique: bool) -> bool {
    let code = in_code(idx, c);
    if unique && pat.specific && !code {
        return true;
    }
    let t = &idx.symbols;
    let kept = |run: usize, len: usize| !code && run >= KEPT_RUN.min(len);
    if c.pa {
        let s = &pat.s;
        let run = s.iter().zip(&t[c.b..]).take_while(|(x, y)| x == y).count();
        let end = (c.b + DISPLACED_MAX + s.len()).min(t.len());
        kept(run, s.len()) || (!s.is_empty() && t[c.b..end].windows(s.len()).any(|w| w == &s[..]))
    } else {
        let p = &pat.p;
        let run = p
            .iter()
            .rev()
            .zip(t[..c.a].iter().rev())
            .take_while(|(x, y)| x == y)
            .count();
        let start = c.a.saturating_sub(DISPLACED_MAX + p.len());
        kept(run, p.len()) || (!p.is_empty() && t[start..c.a].windows(p.len()).any(|w| w == &p[..]))
    }
}

/// Whether candidate `c` lies in a code block.
fn in_code(idx: &PageIndex, c: &Candidate) -> bool {
    let place = idx.place(c.a, c.b);
    idx.page.code_block_holding(&place.text).is_some()
}

/// What differs between the stored anchor and candidate `c`.
fn flags_of(idx: &PageIndex, pat: &Pattern, c: &Candidate, ambiguous: bool) -> Flags {
    Flags {
        quote_changed: c.q < 1.0,
        context_changed: !(c.pa && c.sa),
        section_changed: pat.section.as_deref() != idx.section_at(c.a),
        ambiguous,
    }
}

/// The spans between the stored context found verbatim on both sides (its nearest
/// [`WINDOW_CONTEXT`] characters each), the quote rewritten there: one candidate each.
fn between_context(
    idx: &PageIndex,
    pat: &Pattern,
    blocks: &OnceCell<Vec<usize>>,
) -> Vec<Candidate> {
    let t = &idx.symbols;
    let m = pat.q.len();
    let wp = &pat.p[pat.p.len().saturating_sub(WINDOW_CONTEXT)..];
    let ws = &pat.s[..pat.s.len().min(WINDOW_CONTEXT)];
    let mut out = Vec::new();
    if wp.is_empty() || ws.is_empty() {
        return out;
    }
    let wp_s: String = wp.iter().filter_map(|&c| char::from_u32(c)).collect();
    for (byte, _) in idx
        .string
        .match_indices(wp_s.as_str())
        .take(MAX_OCCURRENCES)
    {
        let x = idx.char_index(byte) + wp.len();
        let lo = (x + m.div_ceil(3)).min(t.len());
        let hi = (x + m * 3 + ws.len()).min(t.len());
        let Some(y) = t[lo..hi]
            .windows(ws.len())
            .position(|w| w == ws)
            .map(|i| lo + i)
        else {
            continue;
        };
        let d = myers::edit_distance(&pat.q, &t[x..y]);
        let c = score(idx, pat, blocks, x, y, similarity(d, m));
        if c.pa && c.sa {
            out.push(c);
        }
    }
    out
}

/// Stages 2 to 4 for a pattern whose exact occurrences (`cands`) did not decide it.
fn resolve_scored(
    idx: &PageIndex,
    pat: &Pattern,
    mut cands: Vec<Candidate>,
    blocks: &OnceCell<Vec<usize>>,
    threshold: f64,
) -> Resolution {
    // Candidates that may not be placed, only suggested for an orphan.
    let mut held: Vec<Candidate> = Vec::new();
    if clear_winner(idx, pat, &cands) {
        return finish(idx, pat, &cands, &[], threshold);
    }
    // Stage 2: the context window, then the quote inside each aligned window.
    window_search(idx, pat, blocks, &mut cands, &mut held);
    // The quote rewritten between its verbatim context: the window search above allows only
    // so many edits, a rewrite can take more.
    cands.extend(between_context(idx, pat, blocks));
    // Stage 3: the quote alone, for long enough quotes (text moved to a new context).
    quote_alone(idx, pat, blocks, threshold, &mut cands, &mut held);
    finish(idx, pat, &cands, &held, threshold)
}

/// Whether the exact occurrences hold a clear winner, with nothing an edited quote could
/// find able to beat it.
fn clear_winner(idx: &PageIndex, pat: &Pattern, cands: &[Candidate]) -> bool {
    let m = pat.q.len();
    // A clear winner ends the search, unless a candidate with an edited quote but a better
    // context could still beat it: such a candidate scores at most `ceiling`.
    let (lp, ls) = (pat.p.len(), pat.s.len());
    let ceiling =
        (1.0 - SECTION_WEIGHT) * (m - 1 + lp + ls) as f64 / (m + lp + ls) as f64 + SECTION_WEIGHT;
    let decided = best_two(cands);
    // Not in code, where a copy of the quote sharing most of its context is common: there
    // the search for the quote between its verbatim context always runs.
    if let Some((best, second)) = decided
        && best.sp >= 0.9
        && best.ss >= 0.9
        && best.score >= ceiling
        && second.is_none_or(|s| separated(&best, &s))
        && !in_code(idx, &best)
    {
        return true;
    }
    false
}

/// The context searched for around the quote in stage 2: the end of the prefix and the
/// start of the suffix, [`WINDOW_CONTEXT`] symbols at most each.
fn window_context(pat: &Pattern) -> (&[u32], &[u32]) {
    let wp = &pat.p[pat.p.len().saturating_sub(WINDOW_CONTEXT)..];
    let ws = &pat.s[..pat.s.len().min(WINDOW_CONTEXT)];
    (wp, ws)
}

/// Stage 2: the windows where the quote's context aligns, and in each the quote and the
/// rewritten-quote candidate.
fn window_search(
    idx: &PageIndex,
    pat: &Pattern,
    blocks: &OnceCell<Vec<usize>>,
    cands: &mut Vec<Candidate>,
    held: &mut Vec<Candidate>,
) {
    let t = &idx.symbols;
    let (wp, ws) = window_context(pat);
    if !wp.is_empty() || !ws.is_empty() {
        let w: Vec<u32> = wp.iter().chain(&pat.q).chain(ws).copied().collect();
        let kw = (w.len() * 3) / 10;
        let hits = myers::search(&w, t, kw);
        for (end, _) in myers::best_ends(&hits, (w.len() / 2).max(1), 20) {
            let (start, _) = myers::match_start(&w, t, end, kw);
            quote_in_window(idx, pat, blocks, start, end, cands, held);
            rewritten_in_window(idx, pat, blocks, start, end, cands, held);
        }
    }
}

/// The quote inside the window `start..end` (with a little slack on both sides).
fn quote_in_window(
    idx: &PageIndex,
    pat: &Pattern,
    blocks: &OnceCell<Vec<usize>>,
    start: usize,
    end: usize,
    cands: &mut Vec<Candidate>,
    held: &mut Vec<Candidate>,
) {
    let t = &idx.symbols;
    let m = pat.q.len();
    let lo = start.saturating_sub(4);
    let hi = (end + 4).min(t.len());
    let kq = (m * 4) / 10;
    let qhits = myers::search(&pat.q, &t[lo..hi], kq);
    for (qend, err) in myers::best_ends(&qhits, (m / 2).max(1), 5) {
        let (qstart, _) = myers::match_start(&pat.q, &t[lo..hi], qend, kq);
        if qend > qstart {
            let c = score(idx, pat, blocks, lo + qstart, lo + qend, similarity(err, m));
            // An edited quote is only found through its context: both sides must
            // still hold (a deletion leaves one side next to unrelated text).
            if c.q >= 1.0 || c.sp.min(c.ss) >= WINDOW_MIN_SIDE {
                cands.push(c);
            } else {
                held.push(c);
            }
        }
    }
}

/// The rewritten-quote candidate of the window `start..end`: between the aligned prefix and
/// suffix.
fn rewritten_in_window(
    idx: &PageIndex,
    pat: &Pattern,
    blocks: &OnceCell<Vec<usize>>,
    start: usize,
    end: usize,
    cands: &mut Vec<Candidate>,
    held: &mut Vec<Candidate>,
) {
    let t = &idx.symbols;
    let m = pat.q.len();
    let (wp, ws) = window_context(pat);
    let (x, _) = if wp.is_empty() {
        (0, 0)
    } else {
        myers::prefix_end(wp, &t[start..end])
    };
    let x = start + x;
    let (y, _) = if ws.is_empty() {
        (end - x, 0)
    } else {
        best_suffix_start(ws, &t[x..end])
    };
    let y = x + y;
    if y > x && (y - x) * 3 >= m && y - x <= m * 3 {
        let d = myers::edit_distance(&pat.q, &t[x..y]);
        let c = score(idx, pat, blocks, x, y, similarity(d, m));
        // Only an intact context on both sides justifies a rewritten quote.
        if c.sp >= 0.9 && c.ss >= 0.9 {
            cands.push(c);
        } else {
            held.push(c);
        }
    }
}

/// Stage 3: the quote alone, for long enough quotes (text moved to a new context) — not
/// needed when stage 2 found it, edited, in its own intact context, clearly.
fn quote_alone(
    idx: &PageIndex,
    pat: &Pattern,
    blocks: &OnceCell<Vec<usize>>,
    threshold: f64,
    cands: &mut Vec<Candidate>,
    held: &mut Vec<Candidate>,
) {
    let t = &idx.symbols;
    let m = pat.q.len();
    let found_in_context = best_two(cands).is_some_and(|(best, second)| {
        best.sp.min(best.ss) >= 0.9
            && best.score >= threshold
            && second.is_none_or(|s| separated(&best, &s))
    });
    if m >= QUOTE_ALONE_MIN && !found_in_context {
        let k = m / 5;
        let hits = myers::search(&pat.q, t, k);
        for (end, err) in myers::best_ends(&hits, (m / 2).max(1), 10) {
            let (start, _) = myers::match_start(&pat.q, t, end, k);
            if end > start {
                let c = score(idx, pat, blocks, start, end, similarity(err, m));
                // Moved text keeps its quote; an edited quote in a new context is a
                // different sentence.
                if c.q >= 1.0 || c.sp.min(c.ss) >= WINDOW_MIN_SIDE {
                    cands.push(c);
                } else {
                    held.push(c);
                }
            }
        }
    }
}

/// Whether `best` clearly beats `second`: by a margin of the score, or by the section when
/// their contexts are (nearly) as good — the section is the tie-breaker it was stored for.
fn separated(best: &Candidate, second: &Candidate) -> bool {
    best.score - second.score >= 0.02 || best.h > second.h
}

/// The best candidate and the best one not overlapping it.
fn best_two(cands: &[Candidate]) -> Option<(Candidate, Option<Candidate>)> {
    let best = *cands.iter().max_by_key(|c| c.key())?;
    let second = cands
        .iter()
        .filter(|c| c.b <= best.a || c.a >= best.b)
        .max_by_key(|c| c.key())
        .copied();
    Some((best, second))
}

/// Stage 4: the resolution from the candidates found (`held` ones are only suggested for an
/// orphan).
fn finish(
    idx: &PageIndex,
    pat: &Pattern,
    cands: &[Candidate],
    held: &[Candidate],
    threshold: f64,
) -> Resolution {
    let Some((best, second)) = best_two(cands).filter(|(b, _)| b.score >= threshold) else {
        // An orphan: the best rejected candidate, whether below the threshold or held back.
        let Some(sugg) = cands.iter().chain(held).max_by_key(|c| c.key()) else {
            return Resolution::orphan();
        };
        return held_back(idx, sugg);
    };
    let (mut best, mut second) = prefer_exact(cands, best, second, threshold);
    // Context on both sides verbatim is the strongest evidence there is of where the quote
    // stood. A winner without it, while another spot has it, is a copy (a look-alike
    // sharing one side of its context); a fuzzy winner with it, while another spot has it
    // too, is a guess between two copies.
    let none = pat.p.is_empty() && pat.s.is_empty();
    if !none && !context_holds(idx, pat, cands, held, threshold, &mut best, &mut second) {
        return held_back(idx, &best);
    }
    placed(idx, pat, &best, second)
}

/// An orphan suggesting candidate `c`.
fn held_back(idx: &PageIndex, c: &Candidate) -> Resolution {
    Resolution {
        confidence: (c.score * 1e4).round() / 1e4,
        suggestion: Some(idx.place(c.a, c.b)),
        ..Resolution::orphan()
    }
}

/// Whether two candidates do not overlap.
fn apart(c: &Candidate, d: &Candidate) -> bool {
    c.b <= d.a || c.a >= d.b
}

/// Same place, better boundaries: an accepted exact occurrence of the quote overlapping a
/// fuzzy winner is preferred to it (a fuzzy span can swallow edited context words).
fn prefer_exact(
    cands: &[Candidate],
    best: Candidate,
    second: Option<Candidate>,
    threshold: f64,
) -> (Candidate, Option<Candidate>) {
    if best.q < 1.0
        && let Some(exact) = cands
            .iter()
            .filter(|c| c.q >= 1.0 && c.a < best.b && best.a < c.b && c.score >= threshold)
            .max_by_key(|c| c.key())
    {
        let best = *exact;
        let second = cands
            .iter()
            .filter(|c| c.b <= best.a || c.a >= best.b)
            .max_by_key(|c| c.key())
            .copied();
        return (best, second);
    }
    (best, second)
}

/// Whether the winner's context justifies placing it (false: it is held back). A rival with
/// both sides of its context verbatim takes over from a winner without, when it can be placed.
fn context_holds(
    idx: &PageIndex,
    pat: &Pattern,
    cands: &[Candidate],
    held: &[Candidate],
    threshold: f64,
    best: &mut Candidate,
    second: &mut Option<Candidate>,
) -> bool {
    let rival = cands
        .iter()
        .map(|c| (c, true))
        .chain(held.iter().map(|c| (c, false)))
        .filter(|(c, _)| c.pa && c.sa && apart(c, best))
        .max_by_key(|(c, _)| c.key());
    if let Some((rival, placeable)) = rival {
        if best.pa && best.sa {
            if best.q < 1.0 {
                return false;
            }
        } else if placeable && rival.score >= threshold {
            *best = *rival;
            *second = cands
                .iter()
                .filter(|c| apart(c, best))
                .max_by_key(|c| c.key())
                .copied();
        } else {
            return false;
        }
    }
    if best.q >= 1.0 {
        exact_holds(idx, pat, best)
    } else {
        edited_holds(cands, threshold, best)
    }
}

/// Whether an exact winner's context lets it be placed.
fn exact_holds(idx: &PageIndex, pat: &Pattern, best: &Candidate) -> bool {
    // An exact quote with both sides of its context changed is ambiguous, unless its
    // block moved (context verbatim up to the block's edges). (A specific quote found
    // once outside code is placed by the caller.)
    if !(best.pa || best.sa || (best.pe && best.se)) {
        return false;
    }
    // Code repeats its lines: an exact line there with one side of its context
    // changed (not only cut by its block's edge) is placed only when it is specific
    // and under its stored heading.
    if !(best.pe && best.se)
        && in_code(idx, best)
        && (!pat.specific || (idx.has_headings() && best.h < 1.0))
    {
        return false;
    }
    true
}

/// Whether an edited winner's context lets it be placed.
fn edited_holds(cands: &[Candidate], threshold: f64, best: &Candidate) -> bool {
    // An edited quote is placed by its context: one side verbatim, both when little
    // of the quote is left; and not while the exact quote stands elsewhere in a
    // block that moved.
    let moved_elsewhere = cands
        .iter()
        .any(|c| c.q >= 1.0 && c.edge && c.score >= threshold && apart(c, best));
    if !(best.pa || best.sa) || (best.q < 0.7 && !(best.pa && best.sa)) || moved_elsewhere {
        return false;
    }
    true
}

/// The resolution placing `best`, unless `second` is as good a spot with as intact a quote.
fn placed(
    idx: &PageIndex,
    pat: &Pattern,
    best: &Candidate,
    second: Option<Candidate>,
) -> Resolution {
    let confidence = (best.score * 1e4).round() / 1e4;
    let ambiguous = second.is_some_and(|s| !separated(best, &s));
    // Two spots as good, the other with a quote as intact: nothing tells them apart.
    if ambiguous && second.is_some_and(|s| s.q >= best.q) {
        return held_back(idx, best);
    }
    let flags = flags_of(idx, pat, best, ambiguous);
    // Exact needs the quote and a side of its context unchanged (the exact occurrences with
    // one did not get here).
    let status = if best.q >= 1.0 && (best.pa || best.sa) && !ambiguous {
        Status::Exact
    } else {
        Status::Fuzzy
    };
    Resolution {
        status,
        confidence,
        place: Some(idx.place(best.a, best.b)),
        flags,
        suggestion: None,
        block: None,
    }
}
