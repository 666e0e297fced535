//! The longest common subsequence of two short lists (a chapter's paragraphs): which items of one
//! match which of the other, for the "as rendered" view of /review. Quadratic, so it is asked only
//! for lists it can afford; longer ones match their common ends only.

/// Above this many cells (`a.len() * b.len()`) only the common prefix and suffix match.
pub const MAX_CELLS: usize = 4_000_000;

/// The index pairs `(i, j)`, increasing in both, of a longest common subsequence of `a` and
/// `b` (ties broken towards earlier items of `a`).
pub fn matches<T: PartialEq>(a: &[T], b: &[T]) -> Vec<(usize, usize)> {
    let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let rest = (a.len() - pre).min(b.len() - pre);
    let suf = a[pre..]
        .iter()
        .rev()
        .zip(b[pre..].iter().rev())
        .take(rest)
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (&a[pre..a.len() - suf], &b[pre..b.len() - suf]);
    let mut out: Vec<(usize, usize)> = (0..pre).map(|i| (i, i)).collect();
    if !ma.is_empty() && !mb.is_empty() && ma.len().saturating_mul(mb.len()) <= MAX_CELLS {
        // len[i][j]: the LCS length of ma[i..] and mb[j..].
        let w = mb.len() + 1;
        let mut len = vec![0u32; (ma.len() + 1) * w];
        for i in (0..ma.len()).rev() {
            for j in (0..mb.len()).rev() {
                len[i * w + j] = if ma[i] == mb[j] {
                    len[(i + 1) * w + j + 1] + 1
                } else {
                    len[(i + 1) * w + j].max(len[i * w + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < ma.len() && j < mb.len() {
            if ma[i] == mb[j] {
                out.push((pre + i, pre + j));
                i += 1;
                j += 1;
            } else if len[(i + 1) * w + j] >= len[i * w + j + 1] {
                i += 1;
            } else {
                j += 1;
            }
        }
    }
    out.extend((0..suf).map(|k| (a.len() - suf + k, b.len() - suf + k)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_longest_common_subsequence() {
        let a = ["a", "b", "c", "d", "e"];
        let b = ["a", "x", "c", "d", "y", "e"];
        assert_eq!(matches(&a, &b), vec![(0, 0), (2, 2), (3, 3), (4, 5)]);
        assert_eq!(matches::<&str>(&[], &["a"]), vec![]);
        assert_eq!(matches(&["a"], &["a"]), vec![(0, 0)]);
    }
}
