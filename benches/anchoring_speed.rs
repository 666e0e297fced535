//! Anchoring speed (method: `docs/src/benchmarks.md`): 10,000 text anchors over 1,000 pages
//! (the nomicon and Rust by Example chapters, cycled), 10 per page, captured the way the
//! original notabene client captures them, resolved on one thread with `resolve_page`, page
//! after page. Best of 3 runs for every figure, against a baseline measured in the same run:
//! building the text model and normalising every page without resolving anything.
//!
//! * (a) text unchanged: every anchor is found exactly;
//! * (b) 10% of anchors carry a typo in their quote, so they need the fuzzy stages;
//! * (c) growth with page length: the same anchors on pages made 1×, 2×, 4×, 8× longer by
//!   appending the following chapters.
//!
//!     cargo bench --bench anchoring_speed

// Tests and benches are not a library: their shared modules are `pub` for each other, and
// need no rustdoc.
#![allow(unreachable_pub, missing_docs)]

#[path = "support/anchoring.rs"]
mod anchoring;
#[path = "../tests/support/mod.rs"]
mod support;

use anchoring::*;
use notabene_anchoring::quote::TextAnchor;
use notabene_anchoring::text::{PageText, TextOptions, page_text};
use notabene_anchoring::{DEFAULT_THRESHOLD, PageIndex, StoredAnchor, resolve_page};
use std::hint::black_box;
use std::time::{Duration, Instant};

const PAGES: usize = 1_000;
const PER_PAGE: usize = 10;
const RUNS: usize = 3;
const BUCKETS: [usize; 8] = [1, 2, 3, 5, 8, 12, 20, 30];
const SEED: u64 = 0x5eed_a11c;
/// Targets (seconds, one thread).
const TARGET_UNCHANGED: f64 = 0.3;
const TARGET_FUZZY: f64 = 2.0;
/// Growth pages: base chapters, and the tolerated time ratio per length ratio.
const GROWTH_PAGES: usize = 100;
const GROWTH_FACTORS: [usize; 4] = [1, 2, 4, 8];
const GROWTH_TOLERANCE: f64 = 1.5;

fn best_of<T>(mut f: impl FnMut() -> T) -> Duration {
    (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            black_box(f());
            t.elapsed()
        })
        .min()
        .expect("RUNS > 0")
}

/// `PER_PAGE` anchors on `pt`, quotes taken from runs starting before text byte `limit`.
fn capture_anchors(
    pt: &PageText,
    md: &str,
    limit: usize,
    rng: &mut fastrand::Rng,
) -> Vec<Captured> {
    let runs: Vec<Run> = runs(md, pt)
        .into_iter()
        .filter(|r| r.text.start < limit)
        .collect();
    let mut out = Vec::new();
    if runs.is_empty() {
        return out;
    }
    let mut attempts = 0;
    while out.len() < PER_PAGE && attempts < 1000 {
        attempts += 1;
        let run = &runs[rng.usize(..runs.len())];
        let n = BUCKETS[rng.usize(..BUCKETS.len())].min(run.words.len());
        let w = rng.usize(..=run.words.len() - n);
        let (a, b) = (run.words[w].start, run.words[w + n - 1].end);
        if b > limit {
            continue;
        }
        out.push(capture(pt, a, b));
    }
    out
}

/// The anchor with one letter of its quote changed (or a letter inserted if it has none).
fn with_typo(c: &Captured, rng: &mut fastrand::Rng) -> Captured {
    let mut chars: Vec<char> = c.quote.chars().collect();
    let letters: Vec<usize> = (0..chars.len())
        .filter(|&i| chars[i].is_ascii_alphabetic())
        .collect();
    if letters.is_empty() {
        chars.insert(chars.len() / 2, 'x');
    } else {
        let i = letters[rng.usize(..letters.len())];
        let old = chars[i].to_ascii_lowercase();
        let mut new = char::from(b'a' + rng.u8(..26));
        while new == old {
            new = char::from(b'a' + rng.u8(..26));
        }
        chars[i] = new;
    }
    Captured {
        quote: chars.into_iter().collect(),
        ..c.clone()
    }
}

fn stored(anchors: &[Captured]) -> Vec<Option<StoredAnchor<'_>>> {
    anchors
        .iter()
        .map(|c| {
            Some(StoredAnchor::Text(TextAnchor {
                quote: &c.quote,
                prefix: &c.prefix,
                suffix: &c.suffix,
                section: c.section.as_deref(),
            }))
        })
        .collect()
}

/// Resolves every page's anchors, page after page; returns the number of placed anchors.
fn resolve_all(pages: &[&PageText], anchors: &[Vec<Option<StoredAnchor>>]) -> usize {
    pages
        .iter()
        .zip(anchors)
        .map(|(pt, a)| {
            resolve_page(pt, a, DEFAULT_THRESHOLD)
                .iter()
                .filter(|r| r.as_ref().is_some_and(|r| r.place.is_some()))
                .count()
        })
        .sum()
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn verdict(ok: bool) -> &'static str {
    if ok { "PASS" } else { "FAIL" }
}

fn main() {
    let corpus = corpus();
    let opts = TextOptions::default();
    let mds: Vec<&str> = (0..PAGES)
        .map(|i| corpus[i % corpus.len()].md.as_str())
        .collect();

    // Text models (kept for resolving) and the anchors.
    let models: Vec<PageText> = mds.iter().map(|md| page_text(md, &opts)).collect();
    let mut rng = fastrand::Rng::with_seed(SEED);
    let captured: Vec<Vec<Captured>> = models
        .iter()
        .zip(&mds)
        .map(|(pt, md)| capture_anchors(pt, md, pt.text.len(), &mut rng))
        .collect();
    let typoed: Vec<Vec<Captured>> = captured
        .iter()
        .enumerate()
        .map(|(p, cs)| {
            cs.iter()
                .enumerate()
                .map(|(i, c)| {
                    if (p * PER_PAGE + i).is_multiple_of(10) {
                        with_typo(c, &mut rng)
                    } else {
                        c.clone()
                    }
                })
                .collect()
        })
        .collect();
    let n_anchors: usize = captured.iter().map(Vec::len).sum();
    let n_typo: usize = captured
        .iter()
        .zip(&typoed)
        .map(|(a, b)| a.iter().zip(b).filter(|(x, y)| x.quote != y.quote).count())
        .sum();
    let chars: usize = models.iter().map(|m| m.text.chars().count()).sum();
    let stored_a: Vec<Vec<Option<StoredAnchor>>> = captured.iter().map(|c| stored(c)).collect();
    let stored_b: Vec<Vec<Option<StoredAnchor>>> = typoed.iter().map(|c| stored(c)).collect();
    let refs: Vec<&PageText> = models.iter().collect();

    // Baseline: the text model, and normalisation, of every page.
    let t_model = best_of(|| {
        mds.iter()
            .map(|md| page_text(md, &opts).text.len())
            .sum::<usize>()
    });
    let t_norm = best_of(|| {
        models
            .iter()
            .map(|m| PageIndex::new(m).len())
            .sum::<usize>()
    });
    let t_base = t_model + t_norm;

    // (a) and (b).
    let mut placed = (0, 0);
    let t_a = best_of(|| {
        placed.0 = resolve_all(&refs, &stored_a);
    });
    let t_b = best_of(|| {
        placed.1 = resolve_all(&refs, &stored_b);
    });

    println!("# Anchoring speed — one thread, best of {RUNS}\n");
    println!(
        "{PAGES} pages ({} distinct chapters cycled, {:.1} M chars of page text), {n_anchors} text anchors \
         ({PER_PAGE} per page), {n_typo} with a typo in (b). `resolve` = `resolve_page` for every \
         page, which includes normalising the page. Baseline = text model + normalisation of \
         every page, no resolving.\n",
        corpus.len(),
        chars as f64 / 1e6
    );
    println!("| measure | time | per anchor | vs baseline | target | |");
    println!("|---|---|---|---|---|---|");
    let per = |d: Duration| d.as_secs_f64() * 1e6 / n_anchors as f64;
    println!(
        "| text model (`page_text`), all pages | {:.3} s | {:.1} µs | | | |",
        secs(t_model),
        per(t_model)
    );
    println!(
        "| normalisation (`PageIndex::new`), all pages | {:.3} s | {:.1} µs | | | |",
        secs(t_norm),
        per(t_norm)
    );
    println!(
        "| **baseline** (text model + normalisation) | {:.3} s | {:.1} µs | 1.00× | | |",
        secs(t_base),
        per(t_base)
    );
    for (name, t, target, n_placed) in [
        (
            "(a) text unchanged: resolve",
            t_a,
            TARGET_UNCHANGED,
            placed.0,
        ),
        ("(b) 10% fuzzy: resolve", t_b, TARGET_FUZZY, placed.1),
    ] {
        println!(
            "| {name} ({n_placed} placed) | {:.3} s | {:.1} µs | {:.2}× | ≤ {target} s | {} |",
            secs(t),
            per(t),
            secs(t) / secs(t_base),
            verdict(secs(t) <= target)
        );
        let total = t + t_model;
        println!(
            "| {} + text model | {:.3} s | {:.1} µs | {:.2}× | ≤ {target} s | {} |",
            &name[..3],
            secs(total),
            per(total),
            secs(total) / secs(t_base),
            verdict(secs(total) <= target)
        );
    }

    // (c) growth with page length.
    let bases: Vec<usize> = (0..corpus.len())
        .filter(|&i| {
            let n = models[i].text.len();
            (2_000..8_000).contains(&n)
        })
        .take(GROWTH_PAGES)
        .collect();
    println!(
        "\n## (c) Time per anchor against page length ({} base chapters of 2–8 kB text, {PER_PAGE} anchors each, \
         anchors taken in the base chapter; longer pages append the following chapters)\n",
        bases.len()
    );
    println!(
        "| length | mean page chars | length ratio | unchanged: µs/anchor | ratio vs 1× | 10% fuzzy: µs/anchor | ratio vs 1× | linear (ratio ≤ {GROWTH_TOLERANCE} × length ratio) |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let mut first: Option<(f64, f64, f64)> = None;
    let mut growth_ok = true;
    for k in GROWTH_FACTORS {
        let mut g_mds = Vec::new();
        let mut limits = Vec::new();
        for &i in &bases {
            let base_len = models[i].text.len();
            let mut md = corpus[i].md.clone();
            let mut j = i + 1;
            while page_text(&md, &opts).text.len() < k * base_len {
                md.push_str("\n\n");
                md.push_str(&corpus[j % corpus.len()].md);
                j += 1;
            }
            g_mds.push(md);
            limits.push(base_len);
        }
        let g_models: Vec<PageText> = g_mds.iter().map(|md| page_text(md, &opts)).collect();
        let mut grng = fastrand::Rng::with_seed(SEED ^ 0xc);
        let g_cap: Vec<Vec<Captured>> = g_models
            .iter()
            .zip(&g_mds)
            .zip(&limits)
            .map(|((pt, md), &limit)| capture_anchors(pt, md, limit, &mut grng))
            .collect();
        let g_typo: Vec<Vec<Captured>> = g_cap
            .iter()
            .map(|cs| {
                cs.iter()
                    .enumerate()
                    .map(|(i, c)| {
                        if i == 0 {
                            with_typo(c, &mut grng)
                        } else {
                            c.clone()
                        }
                    })
                    .collect()
            })
            .collect();
        let n: usize = g_cap.iter().map(Vec::len).sum();
        let g_chars: f64 = g_models
            .iter()
            .map(|m| m.text.chars().count())
            .sum::<usize>() as f64
            / g_models.len() as f64;
        let g_refs: Vec<&PageText> = g_models.iter().collect();
        let sa: Vec<Vec<Option<StoredAnchor>>> = g_cap.iter().map(|c| stored(c)).collect();
        let sb: Vec<Vec<Option<StoredAnchor>>> = g_typo.iter().map(|c| stored(c)).collect();
        let ua = secs(best_of(|| resolve_all(&g_refs, &sa))) * 1e6 / n as f64;
        let ub = secs(best_of(|| resolve_all(&g_refs, &sb))) * 1e6 / n as f64;
        let (c0, a0, b0) = *first.get_or_insert((g_chars, ua, ub));
        let lr = g_chars / c0;
        let (ra, rb) = (ua / a0, ub / b0);
        let ok = ra <= GROWTH_TOLERANCE * lr && rb <= GROWTH_TOLERANCE * lr;
        growth_ok &= ok;
        println!(
            "| {k}× | {g_chars:.0} | {lr:.2} | {ua:.1} | {ra:.2} | {ub:.1} | {rb:.2} | {} |",
            verdict(ok)
        );
    }
    println!(
        "\n(a) {} · (b) {} · (c) {}",
        verdict(secs(t_a) <= TARGET_UNCHANGED),
        verdict(secs(t_b) <= TARGET_FUZZY),
        verdict(growth_ok)
    );
}
