//! Properties of the anchoring engine on real corpus pages: a quote captured the way the
//! browser client captures it (raw text, 40 characters of context, nearest heading) resolves
//! `exact` at the place it was taken from; and results do not depend on the thread count.

use crate::support::common::corpus_pages;
use notabene_anchoring::quote::TextAnchor;
use notabene_anchoring::text::{PageText, TextOptions, page_text};
use notabene_anchoring::{DEFAULT_THRESHOLD, StoredAnchor, resolve_page};
use notabene_core::par::par_map;

/// Word starts and ends (byte offsets) of the page text.
fn words(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_whitespace(), start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, text.len()));
    }
    out
}

fn context(text: &str, a: usize, b: usize) -> (String, String) {
    let before: String = text[..a]
        .chars()
        .rev()
        .take(40)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let after: String = text[b..].chars().take(40).collect();
    (before, after)
}

struct Sample {
    quote: String,
    prefix: String,
    suffix: String,
    section: Option<String>,
    range: std::ops::Range<usize>,
}

fn sample(page: &PageText, rng: &mut fastrand::Rng) -> Option<Sample> {
    let w = words(&page.text);
    if w.len() < 2 {
        return None;
    }
    let i = rng.usize(..w.len());
    let n = rng.usize(1..=30).min(w.len() - i);
    let (a, b) = (w[i].0, w[i + n - 1].1);
    let (prefix, suffix) = context(&page.text, a, b);
    Some(Sample {
        quote: page.text[a..b].to_string(),
        prefix,
        suffix,
        section: page.section_at(a).map(str::to_string),
        range: a..b,
    })
}

#[test]
fn random_quotes_resolve_exact_where_they_were_taken() {
    let pages = corpus_pages();
    assert!(pages.len() > 250);
    let mut rng = fastrand::Rng::with_seed(0x5eed);
    let options = TextOptions::default();
    let mut checked = 0;
    let mut failures = Vec::new();
    for _ in 0..600 {
        let p = &pages[rng.usize(..pages.len())];
        let (path, md) = (&p.path, &p.md);
        let page = page_text(md, &options);
        let Some(s) = sample(&page, &mut rng) else {
            continue;
        };
        let anchor = StoredAnchor::Text(TextAnchor {
            quote: &s.quote,
            prefix: &s.prefix,
            suffix: &s.suffix,
            section: s.section.as_deref(),
        });
        let r = resolve_page(&page, &[Some(anchor)], DEFAULT_THRESHOLD)
            .remove(0)
            .unwrap();
        checked += 1;
        let place = r.place.as_ref().map(|p| p.text.clone());
        // The same quote with the same context repeated on a page is legitimately ambiguous:
        // then the first occurrence is chosen and the result is flagged.
        let ok = place.as_ref() == Some(&s.range)
            && (r.status == notabene_anchoring::AnchorStatus::Exact || r.flags.ambiguous);
        if !ok {
            failures.push(format!(
                "{}: {:?} → {:?} at {:?} (expected {:?})",
                path.display(),
                s.quote,
                r.status,
                place,
                s.range
            ));
        }
    }
    assert!(checked >= 500);
    assert!(
        failures.is_empty(),
        "{} of {checked} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let pages = corpus_pages();
    let options = TextOptions::default();
    let mut rng = fastrand::Rng::with_seed(7);
    // Each job: a page and anchors sampled from it, with some typos to exercise fuzzy paths.
    let jobs: Vec<(PageText, Vec<Sample>)> = pages
        .iter()
        .take(120)
        .map(|p| {
            let page = page_text(&p.md, &options);
            let samples = (0..6)
                .filter_map(|k| {
                    let mut s = sample(&page, &mut rng)?;
                    if k % 3 == 0 {
                        s.quote = s.quote.replacen('e', "a", 1);
                    }
                    Some(s)
                })
                .collect();
            (page, samples)
        })
        .collect();
    let run = |threads: usize| {
        par_map(&jobs, threads, |(page, samples)| {
            let anchors: Vec<_> = samples
                .iter()
                .map(|s| {
                    Some(StoredAnchor::Text(TextAnchor {
                        quote: &s.quote,
                        prefix: &s.prefix,
                        suffix: &s.suffix,
                        section: s.section.as_deref(),
                    }))
                })
                .collect();
            format!("{:?}", resolve_page(page, &anchors, DEFAULT_THRESHOLD))
        })
    };
    let one = run(1);
    assert_eq!(one, run(4));
    assert_eq!(one, run(3));
}
