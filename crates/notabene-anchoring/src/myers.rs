//! Approximate substring search over symbol sequences: Myers' 1999 bit-vector algorithm in Hyyrö's
//! formulation, for semi-global matching (the whole pattern against any substring of the text),
//! with any pattern length (64-bit blocks, horizontal deltas carried between blocks).
//!
//! This module owns the fuzzy engine of anchoring (the approximate stages of the resolution
//! pipeline in [`crate::text`]; see `docs/src/design/anchoring.md`): finding match
//! ends with at most `k` Levenshtein edits (with Ukkonen's cut-off: blocks that cannot hold a cell
//! `<= k` are not computed), picking the best local minima, recovering match starts, and the small
//! edit-distance helpers used to score context (the `E` term of that module's score) — all of
//! them bit-parallel over the same column step, so each costs O(⌈m/64⌉ · n). Symbols are
//! `u32`: code points or dense per-page ids; nothing here depends on what they mean.
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
        search2(&peq, text, k, m, last_bit, &mut out);
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
fn search2(
    peq: &Peq,
    text: &[u32],
    k: usize,
    m: usize,
    last_bit: u64,
    out: &mut Vec<(usize, usize)>,
) {
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
pub fn match_start(pattern: &[u32], text: &[u32], end: usize, k: usize) -> (usize, usize) {
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
pub fn edit_distance(a: &[u32], b: &[u32]) -> usize {
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
pub fn suffix_distance(a: &[u32], b: &[u32]) -> usize {
    // Semi-global: D[0][j] = 0, answer D[|a|][|b|].
    let mut d = a.len();
    last_row(a, b, false, |_, v| d = v);
    d
}

/// The minimal edit distance of `a` against any PREFIX of `b` (`b`'s start fixed, end free).
/// Returns `|a|` when `b` is empty and 0 when `a` is empty. O(⌈|a|/64⌉ · |b|) time.
pub fn prefix_distance(a: &[u32], b: &[u32]) -> usize {
    // Anchored at b's start: D[0][j] = j; answer min_j D[|a|][j].
    let mut best = a.len();
    last_row(a, b, true, |_, v| best = best.min(v));
    best
}

/// The prefix of `b` that `a` matches best: `(its length, the distance)`, the length closest to
/// `|a|` among equally good ones (the shorter on a tie). `(0, |a|)` when `b` is empty.
/// O(⌈|a|/64⌉ · |b|) time.
pub fn prefix_end(a: &[u32], b: &[u32]) -> (usize, usize) {
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
mod tests {
    use super::*;

    /// Full semi-global DP: D[0][j] = 0, D[i][0] = i.
    fn naive_search(p: &[u32], t: &[u32], k: usize) -> Vec<(usize, usize)> {
        naive_last_row(p, t)
            .into_iter()
            .enumerate()
            .filter(|&(_, d)| d <= k)
            .collect()
    }

    /// D[m][j] for every j in 0..=n.
    fn naive_last_row(p: &[u32], t: &[u32]) -> Vec<usize> {
        naive_row(p, t, false)
    }

    /// `naive_last_row` with the match anchored at the text's start (`D[0][j] = j`).
    fn naive_anchored_last_row(p: &[u32], t: &[u32]) -> Vec<usize> {
        naive_row(p, t, true)
    }

    fn naive_row(p: &[u32], t: &[u32], anchored: bool) -> Vec<usize> {
        let m = p.len();
        let mut prev: Vec<usize> = (0..=m).collect();
        let mut out = vec![m];
        for (j, &c) in t.iter().enumerate() {
            let mut cur = vec![if anchored { j + 1 } else { 0 }; m + 1];
            for i in 1..=m {
                cur[i] = (prev[i - 1] + usize::from(p[i - 1] != c))
                    .min(prev[i] + 1)
                    .min(cur[i - 1] + 1);
            }
            out.push(cur[m]);
            prev = cur;
        }
        out
    }

    /// The distance helpers over several blocks (patterns up to 200 symbols) agree with the
    /// plain dynamic programme.
    #[test]
    fn long_distances_match_the_plain_dp() {
        let mut rng = fastrand::Rng::with_seed(0xD157);
        for _ in 0..600 {
            let sigma = rng.u32(2..=26);
            let la = rng.usize(0..=200);
            let a = random_seq(&mut rng, la, sigma);
            let lb = rng.usize(0..=260);
            let b = if rng.bool() && la > 0 {
                planted_text(&mut rng, &a, lb, sigma)
            } else {
                random_seq(&mut rng, lb, sigma)
            };
            let free = naive_last_row(&a, &b);
            let anchored = naive_anchored_last_row(&a, &b);
            assert_eq!(
                suffix_distance(&a, &b),
                free[b.len()],
                "la={la} lb={}",
                b.len()
            );
            assert_eq!(
                prefix_distance(&a, &b),
                *anchored.iter().min().unwrap(),
                "la={la} lb={}",
                b.len()
            );
            // The best prefix: the least distance, then the length closest to |a|, then the
            // shorter.
            let want = (0..=b.len())
                .min_by_key(|&j| (anchored[j], j.abs_diff(la), j))
                .map(|j| (j, anchored[j]))
                .unwrap();
            assert_eq!(prefix_end(&a, &b), want, "la={la} lb={}", b.len());
            assert_eq!(edit_distance(&a, &b), anchored[b.len()], "la={la}");
            assert_eq!(edit_distance(&b, &a), anchored[b.len()], "la={la}");
            // (The naive recovery is cubic: on patterns of three blocks at most.)
            if !b.is_empty() && la <= 130 && rng.u8(0..4) == 0 {
                let end = rng.usize(0..=b.len().min(160));
                let k = rng.usize(0..=la.max(1));
                assert_eq!(
                    match_start(&a, &b, end, k),
                    naive_start(&a, &b, end),
                    "la={la} end={end}"
                );
            }
        }
    }

    /// Full-matrix Levenshtein.
    fn naive_ed(a: &[u32], b: &[u32]) -> usize {
        let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for (i, row) in d.iter_mut().enumerate() {
            row[0] = i;
        }
        for (j, cell) in d[0].iter_mut().enumerate() {
            *cell = j;
        }
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                d[i][j] = (d[i - 1][j - 1] + usize::from(a[i - 1] != b[j - 1]))
                    .min(d[i - 1][j] + 1)
                    .min(d[i][j - 1] + 1);
            }
        }
        d[a.len()][b.len()]
    }

    /// Largest s minimising ed(p, t[s..end]), by brute force over every s.
    fn naive_start(p: &[u32], t: &[u32], end: usize) -> (usize, usize) {
        let mut best = (end, usize::MAX);
        for s in (0..=end).rev() {
            let d = naive_ed(p, &t[s..end]);
            if d < best.1 {
                best = (s, d);
            }
        }
        best
    }

    fn syms(s: &str) -> Vec<u32> {
        s.chars().map(u32::from).collect()
    }

    fn random_seq(rng: &mut fastrand::Rng, len: usize, sigma: u32) -> Vec<u32> {
        (0..len)
            .map(|_| u32::from(b'a') + rng.u32(0..sigma))
            .collect()
    }

    /// A text with mutated copies of the pattern planted in it, so that low-k matches exist.
    fn planted_text(rng: &mut fastrand::Rng, p: &[u32], n: usize, sigma: u32) -> Vec<u32> {
        let mut t = random_seq(rng, n, sigma);
        if n > 0 && rng.bool() {
            let at = rng.usize(0..n);
            let mut copy = p.to_vec();
            for _ in 0..rng.usize(0..=p.len() / 4 + 1) {
                if copy.is_empty() {
                    break;
                }
                let i = rng.usize(0..copy.len());
                match rng.u8(0..3) {
                    0 => copy[i] = u32::from(b'a') + rng.u32(0..sigma),
                    1 => {
                        copy.remove(i);
                    }
                    _ => copy.insert(i, u32::from(b'a') + rng.u32(0..sigma)),
                }
            }
            let tail = t.split_off(at);
            t.extend(copy);
            t.extend(tail);
        }
        t
    }

    #[test]
    fn small_examples() {
        // "thrae" in "three blind mice" ends at 4 and 5 with one error.
        let hits = search(&syms("thrae"), &syms("three blind mice"), 1);
        assert_eq!(hits, vec![(4, 1), (5, 1)]);
        assert_eq!(
            match_start(&syms("thrae"), &syms("three blind mice"), 5, 1),
            (0, 1)
        );
        assert_eq!(search(&syms("abc"), &syms("xxabcxx"), 0), vec![(5, 0)]);
        assert_eq!(
            search(&syms("abc"), &syms("xxabcxx"), 0),
            naive_search(&syms("abc"), &syms("xxabcxx"), 0)
        );
        // Astral code points are one symbol each.
        let p = syms("a\u{1F600}b");
        assert_eq!(search(&p, &syms("xxa\u{1F600}bx"), 0), vec![(5, 0)]);
        assert_eq!(search(&p, &syms("xxa\u{1F601}bx"), 1), vec![(5, 1)]);
    }

    #[test]
    fn empty_pattern_matches_everywhere_with_zero_errors() {
        assert_eq!(
            search(&[], &syms("abc"), 0),
            vec![(0, 0), (1, 0), (2, 0), (3, 0)]
        );
        assert_eq!(search(&[], &[], 5), vec![(0, 0)]);
        assert_eq!(
            search(&[], &syms("ab"), 0),
            naive_search(&[], &syms("ab"), 0)
        );
        assert_eq!(match_start(&[], &syms("abc"), 2, 0), (2, 0));
    }

    #[test]
    fn empty_text() {
        assert_eq!(search(&syms("abc"), &[], 0), vec![]);
        assert_eq!(search(&syms("abc"), &[], 2), vec![]);
        assert_eq!(search(&syms("abc"), &[], 3), vec![(0, 3)]);
        assert_eq!(match_start(&syms("abc"), &[], 0, 3), (0, 3));
        assert_eq!(match_start(&syms("abc"), &[], 10, 3), (0, 3));
    }

    #[test]
    fn k_at_least_m_reports_every_end() {
        let p = random_seq(&mut fastrand::Rng::with_seed(7), 150, 4);
        let t = syms("hello world");
        for k in [150, 151, usize::MAX] {
            let hits = search(&p, &t, k);
            assert_eq!(hits.len(), t.len() + 1);
            assert_eq!(hits, naive_search(&p, &t, k));
        }
        let hits = search(&syms("ab"), &syms("zzzz"), usize::MAX);
        assert_eq!(hits, vec![(0, 2), (1, 2), (2, 2), (3, 2), (4, 2)]);
    }

    #[test]
    fn large_symbols_and_block_edges() {
        let mut rng = fastrand::Rng::with_seed(11);
        for m in [63, 64, 65, 127, 128, 129, 192, 256, 257] {
            let p = random_seq(&mut rng, m, 3);
            let t = planted_text(&mut rng, &p, 400, 3);
            // Spread the symbols over large, sparse values (binary-search lookup path).
            let big = |v: &[u32]| -> Vec<u32> { v.iter().map(|c| (c - 96) * 70_000).collect() };
            let (p, t) = (big(&p), big(&t));
            for k in [0, m / 10, m / 3, m] {
                assert_eq!(search(&p, &t, k), naive_search(&p, &t, k), "m={m} k={k}");
            }
        }
    }

    #[test]
    fn search_matches_naive_dp_on_random_inputs() {
        let mut rng = fastrand::Rng::with_seed(0xB17_5EED);
        let mut cases = 0usize;
        for &sigma in &[2u32, 4, 26] {
            for _ in 0..400 {
                // Bias towards the block edges, but cover 1..=200.
                let m = match rng.u8(0..4) {
                    0 => rng.usize(1..=8),
                    1 => *rng
                        .choice(&[63usize, 64, 65, 127, 128, 129, 191, 192, 193])
                        .unwrap_or(&64),
                    _ => rng.usize(1..=200),
                };
                let n = rng.usize(0..=500);
                let p = random_seq(&mut rng, m, sigma);
                let t = planted_text(&mut rng, &p, n, sigma);
                let row = naive_last_row(&p, &t);
                let mut ks = vec![0, m, m + 3, rng.usize(0..=m), rng.usize(0..=m / 3)];
                ks.dedup();
                for k in ks {
                    let want: Vec<(usize, usize)> = row
                        .iter()
                        .copied()
                        .enumerate()
                        .filter(|&(_, d)| d <= k)
                        .collect();
                    assert_eq!(
                        search(&p, &t, k),
                        want,
                        "sigma={sigma} m={m} n={} k={k}",
                        t.len()
                    );
                    cases += 1;
                }
            }
        }
        assert!(cases >= 5000, "{cases}");
    }

    #[test]
    fn match_start_matches_naive_recovery() {
        let mut rng = fastrand::Rng::with_seed(0x57A27);
        let mut checked = 0usize;
        for _ in 0..300 {
            let sigma = *rng.choice(&[2u32, 4, 26]).unwrap_or(&4);
            let m = rng.usize(1..=30);
            let n = rng.usize(0..=90);
            let p = random_seq(&mut rng, m, sigma);
            let t = planted_text(&mut rng, &p, n, sigma);
            let k = rng.usize(0..=m / 2);
            // Reported ends (a sample of them), with the bound they were found under.
            let hits = search(&p, &t, k);
            let step = hits.len() / 6 + 1;
            for &(end, err) in hits.iter().step_by(step) {
                let got = match_start(&p, &t, end, k);
                assert_eq!(got, naive_start(&p, &t, end), "p={p:?} t={t:?} end={end}");
                assert_eq!(got.1, err);
                assert_eq!(naive_ed(&p, &t[got.0..end]), err);
                checked += 1;
            }
            // Arbitrary ends, including ones where the bound does not hold.
            for _ in 0..3 {
                let end = rng.usize(0..=t.len() + 2);
                let got = match_start(&p, &t, end, rng.usize(0..=m));
                assert_eq!(got, naive_start(&p, &t, end.min(t.len())));
                checked += 1;
            }
        }
        assert!(checked > 1000, "{checked}");
    }

    #[test]
    fn best_ends_clusters_and_ranks() {
        let hits = vec![
            (4, 1),
            (5, 1),
            (6, 2),
            (20, 0),
            (21, 1),
            (40, 2),
            (41, 1),
            (42, 1),
        ];
        assert_eq!(best_ends(&hits, 5, 10), vec![(20, 0), (4, 1), (41, 1)]);
        assert_eq!(best_ends(&hits, 5, 2), vec![(20, 0), (4, 1)]);
        assert_eq!(best_ends(&hits, 5, 0), vec![]);
        // gap 0 (like 1): every distinct end is its own cluster.
        assert_eq!(best_ends(&hits, 0, 100).len(), hits.len());
        assert_eq!(best_ends(&[(3, 2), (3, 1)], 0, 9), vec![(3, 1)]);
        // A huge gap: one cluster.
        assert_eq!(best_ends(&hits, usize::MAX, 100), vec![(20, 0)]);
        // Unsorted input is handled.
        let mut shuffled = hits.clone();
        shuffled.reverse();
        assert_eq!(best_ends(&shuffled, 5, 10), vec![(20, 0), (4, 1), (41, 1)]);
        assert_eq!(best_ends(&[], 5, 10), vec![]);
        // Chaining: consecutive ends less than `gap` apart join one cluster.
        assert_eq!(
            best_ends(&[(0, 3), (3, 2), (6, 1), (9, 2)], 4, 10),
            vec![(6, 1)]
        );
    }

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance(&syms("kitten"), &syms("sitting")), 3);
        assert_eq!(edit_distance(&syms(""), &syms("abc")), 3);
        assert_eq!(edit_distance(&syms("abc"), &syms("")), 3);
        assert_eq!(edit_distance(&[], &[]), 0);
        assert_eq!(suffix_distance(&syms("lo"), &syms("hello")), 0);
        assert_eq!(suffix_distance(&syms("he"), &syms("hello")), 2);
        assert_eq!(suffix_distance(&syms("abc"), &[]), 3);
        assert_eq!(suffix_distance(&[], &syms("abc")), 0);
        assert_eq!(prefix_distance(&syms("he"), &syms("hello")), 0);
        assert_eq!(prefix_distance(&syms("lo"), &syms("hello")), 2);
        assert_eq!(prefix_distance(&syms("abc"), &[]), 3);
        assert_eq!(prefix_distance(&[], &syms("abc")), 0);

        let mut rng = fastrand::Rng::with_seed(0xED17);
        for _ in 0..2000 {
            let sigma = rng.u32(1..=5);
            let la = rng.usize(0..=12);
            let a = random_seq(&mut rng, la, sigma);
            let lb = rng.usize(0..=12);
            let b = random_seq(&mut rng, lb, sigma);
            assert_eq!(edit_distance(&a, &b), naive_ed(&a, &b));
            assert_eq!(edit_distance(&b, &a), naive_ed(&a, &b));
            let suf = (0..=b.len()).map(|i| naive_ed(&a, &b[i..])).min();
            assert_eq!(Some(suffix_distance(&a, &b)), suf);
            let pre = (0..=b.len()).map(|j| naive_ed(&a, &b[..j])).min();
            assert_eq!(Some(prefix_distance(&a, &b)), pre);
        }
    }

    /// Micro-benchmark: `cargo test --release -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn bench_search_ns_per_char() {
        let mut rng = fastrand::Rng::with_seed(42);
        let n = 30_000;
        let text = random_seq(&mut rng, n, 26);
        for m in [32usize, 100, 150, 300] {
            let p = text[n / 2..n / 2 + m].to_vec();
            let k = m / 5;
            let reps = 200;
            let mut found = 0;
            let t0 = std::time::Instant::now();
            for _ in 0..reps {
                found += std::hint::black_box(search(std::hint::black_box(&p), &text, k)).len();
            }
            let ns = t0.elapsed().as_nanos() as f64 / (reps * n) as f64;
            println!(
                "m = {m:3} ({} block(s)), k = {k:2}: {ns:.2} ns/char ({found} hits)",
                m.div_ceil(64)
            );
        }
    }
}
