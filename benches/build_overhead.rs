//! Acceptance 6: what the preprocessor adds to a real build.
//!
//! rust-by-example (its own preprocessors neutralised, the reader client installed, search
//! on) with 5,000 comments spread over its chapters — anchors captured from the text model
//! as the browser client does, about 10% with a one-letter typo so the fuzzy search runs —
//! built by mdBook in process without notabene, with our preprocessor in process (what
//! `mdbook-notabene build` does) and with the `mdbook-notabene` binary as the preprocessor
//! command (what `mdbook build` does: the book crosses the JSON protocol both ways),
//! alternately, 3 times each after one warm-up build of each. Prints a Markdown table of the
//! best times and the ratio (target ≤ 1.25), then where the time goes: the build without the
//! generated review pages; the preprocessor alone (reading the store, anchoring, the whole
//! html run with and without the review pages); mdBook's own work on what the preprocessor
//! added (a stand-in preprocessor hands mdBook our output computed beforehand, whole and
//! without its generated pages, islands or marks); and the ratios at a tenth of the density
//! (500 comments).
//!
//! `cargo bench --bench build_overhead`; `NB_PROFILE=n` runs only the preprocessor's html
//! pass n times (to profile it with `perf record`).

#[path = "../tests/it/common.rs"]
mod common;
#[path = "../tests/it/support.rs"]
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

    let (chapters, typos) = comments(&root, &base, COMMENTS);

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
    let mut with = base.clone();
    with.set(
        "preprocessor.notabene",
        serde_json::json!({ "after": ["links"] }),
    )
    .unwrap();
    let out_b = tmp.path().join("with");
    let main = measure(&root, &base, &tmp.path().join("main"));
    let (a, b, cmd) = (&main.without, &main.with, &main.command);
    timed(&root, &with, &out_b, true);

    // The same at a tenth of the density.
    let tmp_low = common::tempdir();
    let root_low = stage(
        &corpus("rust-by-example"),
        tmp_low.path(),
        "rust-by-example",
    );
    let mut base_low = neutral_config(&root_low);
    install_client(&root_low, &mut base_low);
    comments(&root_low, &base_low, COMMENTS / 10);
    let low = measure(&root_low, &base_low, &tmp_low.path().join("out"));

    // Where the time goes, 1: the preprocessor alone — reading the store, anchoring (text
    // models and resolution), everything it does for the html renderer, with and without the
    // generated pages — and the whole build without the generated pages.
    let md = MDBook::load_with_config(&root, without.clone()).unwrap();
    let (book, _) = md.preprocess_book(&HtmlProbe).unwrap();
    let ctx =
        mdbook_preprocessor::PreprocessorContext::new(root.clone(), with.clone(), "html".into());
    let cfg = mdbook_notabene::book::Book::from_config(&root, with.clone(), None).unwrap();
    let store = cfg.store();
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
        let comments = mdbook_notabene::resolve::book::read_comments(&store);
        reading.push(t.elapsed());
        assert_eq!(comments.len(), COMMENTS);
        let t = Instant::now();
        let (anchors, _) = mdbook_notabene::resolve::book::anchor(
            &cfg,
            &book,
            mdbook_notabene::resolve::book::read_comments(&store),
        )
        .unwrap();
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

    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let list = |v: &[Duration]| {
        v.iter()
            .map(|d| format!("{:.0}", ms(*d)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let ratio = Times::ratio(b, a);
    println!();
    println!(
        "rust-by-example, {chapters} chapters with {COMMENTS} comments ({typos} fuzzy candidates), search on, {RUNS} alternating runs each:"
    );
    println!();
    println!("| build | best (ms) | runs (ms) |");
    println!("|---|---:|---|");
    println!(
        "| mdBook without notabene | {:.0} | {} |",
        ms(best(a)),
        list(a)
    );
    println!(
        "| mdBook with notabene (in process, `mdbook-notabene build`) | {:.0} | {} |",
        ms(best(b)),
        list(b)
    );
    println!(
        "| **ratio with / without** | **{ratio:.3}** | target ≤ {TARGET} {} |",
        if ratio <= TARGET { "✓" } else { "✗" }
    );
    println!(
        "| mdBook with the `mdbook-notabene` command (`mdbook build`, JSON protocol) | {:.0} | {} (ratio {:.3}) |",
        ms(best(cmd)),
        list(cmd),
        Times::ratio(cmd, a)
    );
    println!(
        "| the same command with `enable = false` (the JSON protocol alone: book unchanged) | {:.0} | {} (ratio {:.3}) |",
        ms(best(&main.protocol)),
        list(&main.protocol),
        Times::ratio(&main.protocol, a)
    );
    println!(
        "| with notabene, `generated-pages = false` | {:.0} | {} (ratio {:.3}) |",
        ms(best(&no_views)),
        list(&no_views),
        Times::ratio(&no_views, a)
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
    println!();
    println!("Ratio with / without against comment density (same book, same generator):");
    println!();
    println!(
        "| comments | without (ms) | in process | ratio | `mdbook-notabene` command | ratio | command, `enable = false` | ratio |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (n, t) in [(COMMENTS / 10, &low), (COMMENTS, &main)] {
        println!(
            "| {n} | {:.0} | {:.0} | {:.3} | {:.0} | {:.3} | {:.0} | {:.3} |",
            ms(best(&t.without)),
            ms(best(&t.with)),
            Times::ratio(&t.with, &t.without),
            ms(best(&t.command)),
            Times::ratio(&t.command, &t.without),
            ms(best(&t.protocol)),
            Times::ratio(&t.protocol, &t.without)
        );
    }
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

/// Writes `n` generated comments (anchors captured from the text model as the browser client
/// does, one in ten with a one-letter typo) into the store of the book at `root`; returns the
/// number of chapters they are on and of typos.
fn comments(root: &Path, base: &mdbook_driver::config::Config, n: usize) -> (usize, usize) {
    let md0 = MDBook::load_with_config(root, base.clone()).unwrap();
    let gen_start = Instant::now();
    let gens = generate(
        root,
        &md0,
        &GenOptions {
            per_chapter: 26,
            max_text: Some(n),
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
    assert_eq!(gens.len(), n);
    (chapters, typos)
}

/// Build times of one book: without notabene, with it in process (`mdbook-notabene build`),
/// and with the `mdbook-notabene` binary as mdBook's preprocessor command (`mdbook build`:
/// the book goes over the JSON protocol both ways).
struct Times {
    without: Vec<Duration>,
    with: Vec<Duration>,
    command: Vec<Duration>,
    /// The command with `enable = false`: the JSON protocol alone, the book unchanged.
    protocol: Vec<Duration>,
}

impl Times {
    fn ratio(v: &[Duration], base: &[Duration]) -> f64 {
        best(v).as_secs_f64() / best(base).as_secs_f64()
    }
}

fn best(v: &[Duration]) -> Duration {
    v.iter().min().copied().unwrap()
}

/// One warm-up build of each kind, then `RUNS` rounds alternating the three.
fn measure(root: &Path, base: &mdbook_driver::config::Config, out: &Path) -> Times {
    let without = base.clone();
    let mut with = base.clone();
    with.set(
        "preprocessor.notabene",
        serde_json::json!({ "after": ["links"] }),
    )
    .unwrap();
    let mut command = base.clone();
    command
        .set(
            "preprocessor.notabene",
            serde_json::json!({ "after": ["links"], "command": plugin_command() }),
        )
        .unwrap();
    let mut protocol = command.clone();
    protocol.set("preprocessor.notabene.enable", false).unwrap();
    let (oa, ob, oc, od) = (
        out.join("without"),
        out.join("with"),
        out.join("command"),
        out.join("protocol"),
    );
    timed(root, &without, &oa, false);
    timed(root, &with, &ob, true);
    timed(root, &command, &oc, false);
    timed(root, &protocol, &od, false);
    let mut t = Times {
        without: Vec::new(),
        with: Vec::new(),
        command: Vec::new(),
        protocol: Vec::new(),
    };
    for _ in 0..RUNS {
        t.without.push(timed(root, &without, &oa, false));
        t.with.push(timed(root, &with, &ob, true));
        t.command.push(timed(root, &command, &oc, false));
        t.protocol.push(timed(root, &protocol, &od, false));
    }
    t
}
