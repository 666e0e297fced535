//! Approximate substring search over symbol sequences: Myers' 1999 bit-vector algorithm in Hyyrö's
//! formulation, for semi-global matching (the whole pattern against any substring of the text),
//! with any pattern length (64-bit blocks, horizontal deltas carried between blocks).
//!
//! This module owns the fuzzy engine of anchoring (the approximate stages of the resolution
//! pipeline in [`crate::quote`]; see `docs/src/design/anchoring.md`): finding match
//! ends with at most `k` Levenshtein edits (with Ukkonen's cut-off: blocks that cannot hold a cell
//! `<= k` are not computed), picking the best local minima, recovering match starts, and the small
//! edit-distance helpers used to score context (the `E` term of [`crate::quote`]'s score) — all of
//! them bit-parallel over the same column step, so each costs O(⌈m/64⌉ · n). Symbols are
//! `u32`: code points or dense per-page ids; nothing here depends on what they mean. It calls
//! nothing else of the crate. [`search`] and [`best_ends`] are public (the benchmarks find
//! look-alikes with them); the match starts and the distances serve the crate only.
//!
//! Conventions: text positions are indices into the symbol slice; a match *end* is exclusive.
//! `D[i][j]` is the minimal edit distance between `pattern[..i]` and some substring of the text
//! ending at `j`, so `D[0][j] = 0` and `D[i][0] = i`.

/// Bits per block.
const W: usize = 64;

/// Symbols below this are looked up in a direct table; larger ones by binary search.
const SMALL: usize = 256;

/// Equality masks of a pattern: for each distinct symbol, one `u64` per block with bit `i % 64`
/// of block `i / 64` set where `pattern[i]` is that symbol. Row 0 is all zeros (symbols absent
/// from the pattern).
struct Peq {
    blocks: usize,
    small: [u32; SMALL],
    /// Sorted (symbol, row) pairs for symbols `>= SMALL`.
    large: Vec<(u32, u32)>,
    masks: Vec<u64>,
}

impl Peq {
    fn new(pattern: &[u32]) -> Peq {
        let blocks = pattern.len().div_ceil(W).max(1);
        let mut small = [0u32; SMALL];
        let mut large: Vec<(u32, u32)> = pattern
            .iter()
            .filter(|&&c| c as usize >= SMALL)
            .map(|&c| (c, 0))
            .collect();
        large.sort_unstable();
        large.dedup();
        let mut rows = 1u32;
        for entry in &mut large {
            entry.1 = rows;
            rows += 1;
        }
        for &c in pattern {
            if let Some(slot) = small.get_mut(c as usize)
                && *slot == 0
            {
                *slot = rows;
                rows += 1;
            }
        }
        let mut peq = Peq {
            blocks,
            small,
            large,
            masks: vec![0; rows as usize * blocks],
        };
        for (i, &c) in pattern.iter().enumerate() {
            let at = peq.row(c) * blocks + i / W;
            peq.masks[at] |= 1u64 << (i % W);
        }
        peq
    }

    #[inline]
    fn row(&self, c: u32) -> usize {
        match self.small.get(c as usize) {
            Some(&r) => r as usize,
            None => match self.large.binary_search_by_key(&c, |e| e.0) {
                Ok(i) => self.large[i].1 as usize,
                Err(_) => 0,
            },
        }
    }

    #[inline]
    fn eq(&self, c: u32) -> &[u64] {
        let at = self.row(c) * self.blocks;
        &self.masks[at..at + self.blocks]
    }
}

/// One column step of one block (Hyyrö). `hin` is the horizontal delta entering the block from
/// above (-1, 0 or +1). Updates `pv`/`mv` and returns the horizontal delta at the row selected by
/// `out_bit`.
#[inline(always)]
fn step(pv: &mut u64, mv: &mut u64, eq: u64, hin: i32, out_bit: u64) -> i32 {
    let hin_neg = u64::from(hin < 0);
    let hin_pos = u64::from(hin > 0);
    let xv = eq | *mv;
    let eq = eq | hin_neg;
    let xh = ((eq & *pv).wrapping_add(*pv) ^ *pv) | eq;
    let mut ph = *mv | !(xh | *pv);
    let mut mh = *pv & xh;
    let hout = i32::from(ph & out_bit != 0) - i32::from(mh & out_bit != 0);
    ph = (ph << 1) | hin_pos;
    mh = (mh << 1) | hin_neg;
    *pv = mh | !(xv | ph);
    *mv = ph & xv;
    hout
}

/// End positions (exclusive, in text indices) where `pattern` matches with at most `k` edits
/// (Levenshtein: substitution, insertion, deletion each cost 1), with the edit count at that
/// end.
///
/// Reports every end position `j` (`0..=text.len()`) with `D[m][j] <= k`, in increasing `j`;
/// `j = 0` (the empty substring) is reported when `m <= k`. Consecutive ends of one match are
/// all reported, so callers usually pass the result to [`best_ends`].
///
/// An empty pattern matches everywhere: every `j` in `0..=text.len()` is reported with 0
/// errors (this is `D[0][j] = 0`, consistent with the definition above).
///
/// Cost: O(⌈m/64⌉ · n) time; allocations are the result, the pattern's equality masks and two
/// words per block.
pub fn search(pattern: &[u32], text: &[u32], k: usize) -> Vec<(usize, usize)> {
    let m = pattern.len();
    if m == 0 {
        return (0..=text.len()).map(|j| (j, 0)).collect();
    }
    let mut out = Vec::new();
    if m <= k {
        out.push((0, m));
    }
    let peq = Peq::new(pattern);
    let last_bit = 1u64 << ((m - 1) % W);
    let mut score = m;
    if peq.blocks == 1 {
        let (mut pv, mut mv) = (!0u64, 0u64);
        for (j, &c) in text.iter().enumerate() {
            let eq = peq.eq(c)[0];
            score = add(score, step(&mut pv, &mut mv, eq, 0, last_bit));
            if score <= k {
                out.push((j + 1, score));
            }
        }
    } else if peq.blocks == 2 {
        search2(&peq, text, k, m, &mut out);
    } else {
        // Ukkonen's cut-off, by blocks (Myers 1999, §4): only blocks `0..=y` are computed. A
        // block below `y` holds no cell `<= k` — the bottom-row value `bottom[b]` bounds its
        // cells from below by `bottom[b] - 63` — so no match of at most `k` edits passes
        // through it, and the values that matter are exact without it.
        let last = peq.blocks - 1;
        // The row whose value a block's `bottom` tracks: its last, or the pattern's last.
        let out_bit = |b: usize| if b == last { last_bit } else { 1u64 << (W - 1) };
        // Rows of block `b` up to its tracked row: 64, or what the last block holds.
        let rows = |b: usize| if b == last { (m - 1) % W + 1 } else { W };
        let mut pv = vec![!0u64; peq.blocks];
        let mut mv = vec![0u64; peq.blocks];
        // Column 0 is `D[i][0] = i`: the blocks with a row `<= k` are active.
        let mut bottom: Vec<usize> = (0..peq.blocks).map(|b| b * W + rows(b)).collect();
        let mut y = if k == 0 { 0 } else { ((k - 1) / W).min(last) };
        for (j, &c) in text.iter().enumerate() {
            let eqs = peq.eq(c);
            let mut hin = 0;
            for b in 0..=y {
                hin = step(&mut pv[b], &mut mv[b], eqs[b], hin, out_bit(b));
                bottom[b] = add(bottom[b], hin);
            }
            // The next block can hold a cell `<= k` in this column only through the last
            // active block's bottom in the previous column (`bottom[y] - hin`): it is
            // started from values above every true one (+1 per row below that bottom),
            // which leaves the cells `<= k` exact.
            if y < last && add(bottom[y], -hin) <= k {
                let prev = add(bottom[y], -hin);
                y += 1;
                pv[y] = !0;
                mv[y] = 0;
                let d = step(&mut pv[y], &mut mv[y], eqs[y], hin, out_bit(y));
                bottom[y] = add(prev + rows(y), d);
            } else {
                while y > 0 && bottom[y] >= k.saturating_add(W) {
                    y -= 1;
                }
            }
            if y == last && bottom[last] <= k {
                out.push((j + 1, bottom[last]));
            }
        }
    }
    out
}

/// [`search`] for a pattern of two blocks (65 to 128 symbols: a quote with its context
/// window, the common case): the general loop's steps with the two blocks' state in locals,
/// block 1 computed only while Ukkonen's cut-off keeps it active (the same rule as there).
fn search2(peq: &Peq, text: &[u32], k: usize, m: usize, out: &mut Vec<(usize, usize)>) {
    let last_bit = 1u64 << ((m - 1) % W);
    let (mut pv0, mut mv0, mut pv1, mut mv1) = (!0u64, 0u64, !0u64, 0u64);
    // Bottom-row values: block 0's row 64, block 1's (the pattern's) last row.
    let (mut b0, mut b1) = (W, m);
    let rows1 = m - W;
    let mut active = k > W;
    for (j, &c) in text.iter().enumerate() {
        let eqs = peq.eq(c);
        let (e0, e1) = (eqs[0], eqs[1]);
        let h0 = step(&mut pv0, &mut mv0, e0, 0, 1u64 << (W - 1));
        b0 = add(b0, h0);
        if active {
            let h1 = step(&mut pv1, &mut mv1, e1, h0, last_bit);
            b1 = add(b1, h1);
            if b1 >= k.saturating_add(W) {
                active = false;
            }
        } else if add(b0, -h0) <= k {
            let prev = add(b0, -h0);
            active = true;
            pv1 = !0;
            mv1 = 0;
            let d = step(&mut pv1, &mut mv1, e1, h0, last_bit);
            b1 = add(prev + rows1, d);
        }
        if active && b1 <= k {
            out.push((j + 1, b1));
        }
    }
}

/// `score + d` for a delta in {-1, 0, 1}; the score is an edit distance, so never below 0.
#[inline(always)]
fn add(score: usize, d: i32) -> usize {
    score.saturating_add_signed(d as isize)
}

/// The last row of the edit-distance table of `pattern` against `text`, bit-parallel: calls
/// `f(j, D[m][j])` for every `j` in `1..=text.len()`. With `anchored`, `D[0][j] = j` (the
/// match starts where the text starts: Levenshtein against text prefixes); without,
/// `D[0][j] = 0` (it starts anywhere). `D[i][0] = i` either way, and `D[m][0] = m` is not
/// reported. The same values as the plain dynamic programme, in O(⌈m/64⌉ · n).
fn last_row(pattern: &[u32], text: &[u32], anchored: bool, mut f: impl FnMut(usize, usize)) {
    let m = pattern.len();
    if m == 0 {
        for j in 1..=text.len() {
            f(j, if anchored { j } else { 0 });
        }
        return;
    }
    let peq = Peq::new(pattern);
    let last = peq.blocks - 1;
    let last_bit = 1u64 << ((m - 1) % W);
    let top = i32::from(anchored);
    let mut pv = vec![!0u64; peq.blocks];
    let mut mv = vec![0u64; peq.blocks];
    let mut score = m;
    for (j, &c) in text.iter().enumerate() {
        let eqs = peq.eq(c);
        let mut hin = top;
        for b in 0..last {
            hin = step(&mut pv[b], &mut mv[b], eqs[b], hin, 1u64 << (W - 1));
        }
        score = add(
            score,
            step(&mut pv[last], &mut mv[last], eqs[last], hin, last_bit),
        );
        f(j + 1, score);
    }
}

/// Best local minima of `search` results: hits are grouped into clusters of end positions in
/// which consecutive ends (in increasing order) are less than `gap` apart; each cluster keeps its
/// lowest-error end (the leftmost among equals). Returns at most `max` of them, sorted by
/// (errors, end).
///
/// `hits` need not be sorted. `gap == 0` or `gap == 1` makes every distinct end its own cluster;
/// `max == 0` returns nothing.
pub fn best_ends(hits: &[(usize, usize)], gap: usize, max: usize) -> Vec<(usize, usize)> {
    if max == 0 || hits.is_empty() {
        return Vec::new();
    }
    let mut sorted;
    let hits = if hits.windows(2).all(|w| w[0] <= w[1]) {
        hits
    } else {
        sorted = hits.to_vec();
        sorted.sort_unstable();
        &sorted[..]
    };
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut best = hits[0];
    let mut prev_end = hits[0].0;
    for &(end, err) in &hits[1..] {
        if end - prev_end >= gap.max(1) {
            out.push(best);
            best = (end, err);
        } else if err < best.1 {
            best = (end, err);
        }
        prev_end = end;
    }
    out.push(best);
    out.sort_unstable_by_key(|&(end, err)| (err, end));
    out.truncate(max);
    out
}

/// For a match ending at `end` (exclusive) with at most `k` edits, recovers the start: the
/// largest `s` such that `ed(pattern, text[s..end])` equals the minimum over all `s`; returns
/// `(s, that distance)`.
///
/// The distance equals the error count `search` reported at `end`. The result is exact for
/// every input: starts in `[end - m - k, end]` are tried first, and if the best distance found
/// there exceeds `k` (the caller's bound did not hold) the window widens to `[end - 2m, end]`,
/// which always contains the optimum. `end` is clamped to `text.len()`. An empty pattern gives
/// `(end, 0)`. Cost O(⌈m/64⌉ · (m + k)) time (bit-parallel).
pub(crate) fn match_start(pattern: &[u32], text: &[u32], end: usize, k: usize) -> (usize, usize) {
    let end = end.min(text.len());
    let m = pattern.len();
    if m == 0 {
        return (end, 0);
    }
    let k = k.min(m);
    let (s, d) = start_in_window(pattern, &text[end.saturating_sub(m + k)..end], end);
    if d <= k || end <= m + k {
        return (s, d);
    }
    start_in_window(pattern, &text[end.saturating_sub(2 * m)..end], end)
}

/// Scans `window` (which ends at text position `end`) from its right end leftwards: the DP has
/// the window's end anchored and its start free, so after consuming `t` symbols the last row
/// holds `ed(pattern, window[len - t..])`. Returns the largest start with the minimal distance.
fn start_in_window(pattern: &[u32], window: &[u32], end: usize) -> (usize, usize) {
    // Both reversed, the window's end is where the match starts: after `t` symbols the last
    // row holds `ed(pattern, window[len - t..])`.
    let rp: Vec<u32> = pattern.iter().rev().copied().collect();
    let rw: Vec<u32> = window.iter().rev().copied().collect();
    let mut best = (end, pattern.len());
    last_row(&rp, &rw, true, |t, d| {
        if d < best.1 {
            best = (end - t, d);
        }
    });
    best
}

/// Plain Levenshtein distance between two sequences (used for scoring context).
/// O(⌈min(|a|, |b|)/64⌉ · max(|a|, |b|)) time (bit-parallel).
pub(crate) fn edit_distance(a: &[u32], b: &[u32]) -> usize {
    let (a, b) = if a.len() < b.len() { (b, a) } else { (a, b) };
    // Strip a common prefix and suffix: they never change the distance.
    let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[pre..], &b[pre..]);
    let suf = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a, b) = (&a[..a.len() - suf], &b[..b.len() - suf]);
    if b.is_empty() {
        return a.len();
    }
    // The shorter `b` is the pattern (fewer blocks), `a` the text, both ends anchored.
    let mut d = b.len();
    last_row(b, a, true, |_, v| d = v);
    d
}

/// The minimal edit distance of `a` against any SUFFIX of `b` (`b`'s start free, end fixed) —
/// used to score a stored prefix that must end exactly at a candidate's start.
/// Returns `|a|` when `b` is empty and 0 when `a` is empty. O(⌈|a|/64⌉ · |b|) time.
pub(crate) fn suffix_distance(a: &[u32], b: &[u32]) -> usize {
    // Semi-global: D[0][j] = 0, answer D[|a|][|b|].
    let mut d = a.len();
    last_row(a, b, false, |_, v| d = v);
    d
}

/// The minimal edit distance of `a` against any PREFIX of `b` (`b`'s start fixed, end free).
/// Returns `|a|` when `b` is empty and 0 when `a` is empty. O(⌈|a|/64⌉ · |b|) time.
pub(crate) fn prefix_distance(a: &[u32], b: &[u32]) -> usize {
    // Anchored at b's start: D[0][j] = j; answer min_j D[|a|][j].
    let mut best = a.len();
    last_row(a, b, true, |_, v| best = best.min(v));
    best
}

/// The prefix of `b` that `a` matches best: `(its length, the distance)`, the length closest to
/// `|a|` among equally good ones (the shorter on a tie). `(0, |a|)` when `b` is empty.
/// O(⌈|a|/64⌉ · |b|) time.
pub(crate) fn prefix_end(a: &[u32], b: &[u32]) -> (usize, usize) {
    let m = a.len();
    let mut best = (0usize, m);
    last_row(a, b, true, |end, d| {
        if d < best.1 || (d == best.1 && end.abs_diff(m) < best.0.abs_diff(m)) {
            best = (end, d);
        }
    });
    best
}

#[cfg(test)]
mod tests;
