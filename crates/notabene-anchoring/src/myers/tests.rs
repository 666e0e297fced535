//! Tests of the approximate matcher against the plain dynamic programme.

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
