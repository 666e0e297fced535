//! Acceptance 6: what the preprocessor adds to a real build.
//!
//! rust-by-example (its own preprocessors neutralised, the reader client installed, search
//! on) with 5,000 comments spread over its chapters — anchors captured from the text model
//! as the browser client does, about 10% with a one-letter typo so the fuzzy search runs —
//! built in process by mdBook with our preprocessor and without it, alternately, 3 times
//! each after one warm-up build of each. Prints a Markdown table of the best times and the
//! ratio (target ≤ 1.25), then where the time goes: the build without the generated review
//! pages, and the preprocessor alone (store and anchoring; the whole html run, with and
//! without the review pages).
//!
//! `cargo bench --bench build_overhead`

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/fixtures/preprocessor/support.rs"]
mod support;

use mdbook_driver::MDBook;
use std::path::Path;
use std::time::{Duration, Instant};
use support::*;

/// A renderer named `html` that renders nothing (to get the book as the html renderer would).
struct HtmlProbe;

impl mdbook_renderer::Renderer for HtmlProbe {
    fn name(&self) -> &str {
        "html"
    }
    fn render(&self, _: &mdbook_renderer::RenderContext) -> mdbook_renderer::errors::Result<()> {
        Ok(())
    }
}

const COMMENTS: usize = 5_000;
const RUNS: usize = 3;
const TARGET: f64 = 1.25;

fn timed(root: &Path, config: &mdbook_driver::config::Config, out: &Path, ours: bool) -> Duration {
    let start = Instant::now();
    let mut md = MDBook::load_with_config(root, {
        let mut c = config.clone();
        c.build.build_dir = out.to_path_buf();
        c
    })
    .expect("load");
    if ours {
        md.with_preprocessor(mdbook_notabene::preprocess::Notabene);
    }
    md.build().expect("build");
    start.elapsed()
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let tmp = common::tempdir();
    let root = stage(&corpus("rust-by-example"), tmp.path(), "rust-by-example");
    let mut base = neutral_config(&root);
    install_client(&root, &mut base);
    assert!(
        base.get::<serde_json::Value>("output.html.search")
            .unwrap()
            .is_none_or(|s| s.get("enable") != Some(&serde_json::Value::Bool(false))),
        "search must be on"
    );

    let md0 = MDBook::load_with_config(&root, base.clone()).unwrap();
    let gen_start = Instant::now();
    let gens = generate(
        &root,
        &md0,
        &GenOptions {
            per_chapter: 26,
            max_text: Some(COMMENTS),
            typo_every: 10,
            overlap: true,
            blocks: false,
            seed: 6,
            ..GenOptions::default()
        },
    );
    let chapters = gens
        .iter()
        .map(|g| g.page.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let typos = gens.iter().filter(|g| g.typo).count();
    let code = gens
        .iter()
        .filter(|g| matches!(g.kind, Kind::Code(_)))
        .count();
    eprintln!(
        "generated {} comments on {chapters} chapters ({typos} with a typo, {code} in code) in {:.2?}",
        gens.len(),
        gen_start.elapsed()
    );
    assert_eq!(gens.len(), COMMENTS);

    let without = base.clone();
    let mut with = base;
    with.set(
        "preprocessor.notabene",
        serde_json::json!({ "after": ["links"] }),
    )
    .unwrap();
    let (out_a, out_b) = (tmp.path().join("without"), tmp.path().join("with"));

    // Warm-up (file cache, lazily built tables), then alternate.
    timed(&root, &without, &out_a, false);
    timed(&root, &with, &out_b, true);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        a.push(timed(&root, &without, &out_a, false));
        b.push(timed(&root, &with, &out_b, true));
    }
    // Where the time goes: the preprocessor alone (anchoring, then everything it does for the
    // html renderer), and the build without the generated review pages.
    let md = MDBook::load_with_config(&root, without.clone()).unwrap();
    let (book, _) = md.preprocess_book(&HtmlProbe).unwrap();
    let ctx =
        mdbook_preprocessor::PreprocessorContext::new(root.clone(), with.clone(), "html".into());
    let cfg = mdbook_notabene::config::Book::from_config(&root, with.clone(), None).unwrap();
    let (mut anchoring, mut run, mut no_views) = (Vec::new(), Vec::new(), Vec::new());
    let mut run_no_views = Vec::new();
    let mut with_no_views = with.clone();
    with_no_views
        .set("preprocessor.notabene.generated-pages", false)
        .unwrap();
    let ctx_no_views = mdbook_preprocessor::PreprocessorContext::new(
        root.clone(),
        with_no_views.clone(),
        "html".into(),
    );
    let out_c = tmp.path().join("no-views");
    for _ in 0..RUNS {
        let t = Instant::now();
        let (anchors, _) = mdbook_notabene::preprocess::anchor(&cfg, &book).unwrap();
        anchoring.push(t.elapsed());
        drop(anchors);
        let t = Instant::now();
        mdbook_notabene::preprocess::run(&ctx, book.clone()).unwrap();
        run.push(t.elapsed());
        let t = Instant::now();
        mdbook_notabene::preprocess::run(&ctx_no_views, book.clone()).unwrap();
        run_no_views.push(t.elapsed());
        no_views.push(timed(&root, &with_no_views, &out_c, true));
    }
    let marks = files(&out_b)
        .iter()
        .filter(|(n, _)| n.ends_with(".html") && n.as_str() != "print.html")
        .map(|(_, bytes)| {
            String::from_utf8_lossy(bytes)
                .matches("class=\"nb-mark\"")
                .count()
        })
        .sum::<usize>();

    let best = |v: &[Duration]| v.iter().min().copied().unwrap();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let list = |v: &[Duration]| {
        v.iter()
            .map(|d| format!("{:.0}", ms(*d)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let ratio = best(&b).as_secs_f64() / best(&a).as_secs_f64();
    println!();
    println!(
        "rust-by-example, {} chapters with {} comments ({typos} fuzzy candidates), search on, {RUNS} alternating runs each:",
        chapters,
        gens.len()
    );
    println!();
    println!("| build | best (ms) | runs (ms) |");
    println!("|---|---:|---|");
    println!(
        "| mdBook without notabene | {:.0} | {} |",
        ms(best(&a)),
        list(&a)
    );
    println!(
        "| mdBook with notabene | {:.0} | {} |",
        ms(best(&b)),
        list(&b)
    );
    println!(
        "| **ratio with / without** | **{ratio:.3}** | target ≤ {TARGET} {} |",
        if ratio <= TARGET { "✓" } else { "✗" }
    );
    println!(
        "| with notabene, `generated-pages = false` | {:.0} | {} (ratio {:.3}) |",
        ms(best(&no_views)),
        list(&no_views),
        best(&no_views).as_secs_f64() / best(&a).as_secs_f64()
    );
    println!(
        "| preprocessor alone: reading the store and anchoring | {:.0} | {} |",
        ms(best(&anchoring)),
        list(&anchoring)
    );
    println!(
        "| preprocessor alone: whole html run | {:.0} | {} |",
        ms(best(&run)),
        list(&run)
    );
    println!(
        "| preprocessor alone: html run, `generated-pages = false` | {:.0} | {} |",
        ms(best(&run_no_views)),
        list(&run_no_views)
    );
    println!();
    println!("{marks} `mark.nb-mark` elements in the chapter pages.");
}
