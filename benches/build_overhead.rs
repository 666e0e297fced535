//! Acceptance 6: what the preprocessor adds to a real build.
//!
//! rust-by-example (its own preprocessors neutralised, the reader client installed, search
//! on) with 5,000 comments spread over its chapters — anchors captured from the text model
//! as the browser client does, about 10% with a one-letter typo so the fuzzy search runs —
//! built in process by mdBook with our preprocessor and without it, alternately, 3 times
//! each after one warm-up build of each. Prints a Markdown table of the best times and the
//! ratio (target ≤ 1.25), then where the time goes: the build without the generated review
//! pages; the preprocessor alone (reading the store, anchoring, the whole html run with and
//! without the review pages); and mdBook's own work on what the preprocessor added (a
//! stand-in preprocessor hands mdBook our output computed beforehand, whole and without its
//! generated pages, islands or marks).
//!
//! `cargo bench --bench build_overhead`; `NB_PROFILE=n` runs only the preprocessor's html
//! pass n times (to profile it with `perf record`).

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

    if let Some(n) = std::env::var("NB_PROFILE")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        // `NB_PROFILE=n`: only the preprocessor's html run, n times (for `perf record`).
        let mut with = base.clone();
        with.set(
            "preprocessor.notabene",
            serde_json::json!({ "after": ["links"] }),
        )
        .unwrap();
        let md = MDBook::load_with_config(&root, base.clone()).unwrap();
        let (book, _) = md.preprocess_book(&HtmlProbe).unwrap();
        let ctx = mdbook_preprocessor::PreprocessorContext::new(root.clone(), with, "html".into());
        for _ in 0..n {
            let t = Instant::now();
            mdbook_notabene::preprocess::run(&ctx, book.clone()).unwrap();
            eprintln!("html run: {:.1?}", t.elapsed());
        }
        return;
    }
    if let Some(n) = std::env::var("NB_PROFILE")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        // `NB_PROFILE=n`: only the preprocessor's html run, n times (for `perf record`).
        let mut with = base.clone();
        with.set(
            "preprocessor.notabene",
            serde_json::json!({ "after": ["links"] }),
        )
        .unwrap();
        let md = MDBook::load_with_config(&root, base.clone()).unwrap();
        let (book, _) = md.preprocess_book(&HtmlProbe).unwrap();
        let ctx = mdbook_preprocessor::PreprocessorContext::new(root.clone(), with, "html".into());
        for _ in 0..n {
            let t = Instant::now();
            mdbook_notabene::preprocess::run(&ctx, book.clone()).unwrap();
            eprintln!("html run: {:.1?}", t.elapsed());
        }
        return;
    }
    if std::env::var("NB_STORE").is_ok() {
        let dir = root.join(".notabene");
        for _ in 0..3 {
            let t = Instant::now();
            let mut files = Vec::new();
            fn walk(d: &Path, out: &mut Vec<std::path::PathBuf>) {
                for e in std::fs::read_dir(d).unwrap() {
                    let e = e.unwrap();
                    if e.file_type().unwrap().is_dir() {
                        walk(&e.path(), out)
                    } else {
                        out.push(e.path())
                    }
                }
            }
            walk(&dir, &mut files);
            let tw = t.elapsed();
            let t = Instant::now();
            let mut n = 0;
            for f in &files {
                n += std::fs::read(f).unwrap().len();
            }
            let tr = t.elapsed();
            let t = Instant::now();
            let bytes: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
            let tr2 = t.elapsed();
            let t = Instant::now();
            let v: Vec<serde_json::Value> = bytes
                .iter()
                .map(|b| serde_json::from_slice(b).unwrap())
                .collect();
            let tp = t.elapsed();
            let t = Instant::now();
            drop(v);
            let td = t.elapsed();
            eprintln!(
                "files {} bytes {n}: walk {tw:.1?} read {tr:.1?} read-keep {tr2:.1?} parse {tp:.1?} drop {td:.1?}",
                files.len()
            );
        }
        return;
    }
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
    // Where the time goes, 1: the preprocessor alone — reading the store, anchoring (text
    // models and resolution), everything it does for the html renderer, with and without the
    // generated pages — and the whole build without the generated pages.
    let md = MDBook::load_with_config(&root, without.clone()).unwrap();
    let (book, _) = md.preprocess_book(&HtmlProbe).unwrap();
    let ctx =
        mdbook_preprocessor::PreprocessorContext::new(root.clone(), with.clone(), "html".into());
    let cfg = mdbook_notabene::config::Book::from_config(&root, with.clone(), None).unwrap();
    let store = mdbook_notabene::preprocess::store_for(&cfg);
    let (mut reading, mut anchoring, mut run, mut no_views) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
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
        let comments = mdbook_notabene::preprocess::read_comments(&store);
        reading.push(t.elapsed());
        assert_eq!(comments.len(), COMMENTS);
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

    // Where the time goes, 2: mdBook rendering what the preprocessor added. A stand-in
    // preprocessor hands mdBook a book computed beforehand — unchanged, as ours returns it,
    // and ours without some of its parts — so only mdBook's own work differs between rows.
    let ours = mdbook_notabene::preprocess::run(&ctx, book.clone()).unwrap();
    let variants = [
        ("the book unchanged", book.clone()),
        ("our output", ours.clone()),
        ("without the generated pages", strip(&ours, Strip::Views)),
        (
            "without the generated pages and islands",
            strip(&strip(&ours, Strip::Views), Strip::Islands),
        ),
        (
            "without the generated pages and marks",
            strip(&strip(&ours, Strip::Views), Strip::Marks),
        ),
    ];
    let out_d = tmp.path().join("stand-in");
    let mut rendering: Vec<Vec<Duration>> = vec![Vec::new(); variants.len()];
    for round in 0..=RUNS {
        for (k, (_, b)) in variants.iter().enumerate() {
            let mut c = without.clone();
            c.build.build_dir = out_d.clone();
            let t = Instant::now();
            let mut md = MDBook::load_with_config(&root, c).unwrap();
            md.with_preprocessor(StandIn(b.clone()));
            md.build().unwrap();
            if round > 0 {
                rendering[k].push(t.elapsed());
            }
        }
    }
    let sizes = Sizes::of(&book, &ours);

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
        "| preprocessor alone: reading the store ({COMMENTS} files) | {:.0} | {} |",
        ms(best(&reading)),
        list(&reading)
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
    println!(
        "mdBook rendering what the preprocessor added (a stand-in preprocessor returns a book computed beforehand; best of {RUNS}):"
    );
    println!();
    println!("| book handed to mdBook | build (ms) | vs unchanged (ms) |");
    println!("|---|---:|---:|");
    let reference = ms(best(&rendering[0]));
    for ((name, _), times) in variants.iter().zip(&rendering) {
        println!(
            "| {name} | {:.0} | {:+.0} |",
            ms(best(times)),
            ms(best(times)) - reference
        );
    }
    println!();
    println!(
        "Chapter Markdown handed to mdBook: {} KB unchanged, {} KB with notabene (islands {} KB, generated pages {} KB, {marks} `mark.nb-mark` elements in the chapter pages).",
        sizes.plain / 1000,
        sizes.ours / 1000,
        sizes.islands / 1000,
        sizes.views / 1000
    );
}

/// Returns a book computed beforehand (to time mdBook's own work on it).
struct StandIn(mdbook_preprocessor::book::Book);

impl mdbook_preprocessor::Preprocessor for StandIn {
    fn name(&self) -> &str {
        "stand-in"
    }
    fn run(
        &self,
        _: &mdbook_preprocessor::PreprocessorContext,
        _: mdbook_preprocessor::book::Book,
    ) -> mdbook_preprocessor::errors::Result<mdbook_preprocessor::book::Book> {
        Ok(self.0.clone())
    }
}

/// A part of the preprocessor's output to take out again.
#[derive(Clone, Copy, PartialEq)]
enum Strip {
    /// The generated chapters (after the last separator).
    Views,
    /// The chapters' data islands.
    Islands,
    /// The `<mark>` tags (their text stays).
    Marks,
}

const ISLAND: &str = "<script type=\"application/json\" class=\"nb-data\"";

fn strip(book: &mdbook_preprocessor::book::Book, what: Strip) -> mdbook_preprocessor::book::Book {
    use mdbook_preprocessor::book::BookItem;
    let mut b = book.clone();
    if what == Strip::Views {
        let last = b
            .items
            .iter()
            .rposition(|i| matches!(i, BookItem::Separator))
            .expect("the generated pages follow a separator");
        b.items.truncate(last);
        return b;
    }
    b.for_each_chapter_mut(|ch| {
        let c = &mut ch.content;
        match what {
            Strip::Islands => {
                while let Some(i) = c.find(ISLAND) {
                    let j = i + c[i..].find("</script>").unwrap() + "</script>".len();
                    c.replace_range(i..j, "");
                }
            }
            Strip::Marks => {
                while let Some(i) = c.find("<mark class=\"nb-mark\"") {
                    let j = i + c[i..].find('>').unwrap() + 1;
                    c.replace_range(i..j, "");
                }
                *c = c.replace("</mark>", "");
            }
            Strip::Views => unreachable!(),
        }
    });
    b
}

/// Bytes of chapter Markdown.
struct Sizes {
    plain: usize,
    ours: usize,
    islands: usize,
    views: usize,
}

impl Sizes {
    fn of(plain: &mdbook_preprocessor::book::Book, ours: &mdbook_preprocessor::book::Book) -> Self {
        use mdbook_preprocessor::book::BookItem;
        let chapters = |b: &mdbook_preprocessor::book::Book| -> Vec<(bool, String)> {
            b.iter()
                .filter_map(|i| match i {
                    BookItem::Chapter(c) => Some((c.source_path.is_none(), c.content.clone())),
                    _ => None,
                })
                .collect()
        };
        let (p, o) = (chapters(plain), chapters(ours));
        Sizes {
            plain: p.iter().map(|(_, c)| c.len()).sum(),
            ours: o.iter().map(|(_, c)| c.len()).sum(),
            islands: o
                .iter()
                .filter_map(|(_, c)| {
                    let i = c.find(ISLAND)?;
                    Some(c[i..].find("</script>")? + "</script>".len())
                })
                .sum(),
            views: o.iter().filter(|(v, _)| *v).map(|(_, c)| c.len()).sum(),
        }
    }
}
