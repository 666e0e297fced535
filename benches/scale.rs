//! A long-lived store on a big book: what notabene adds to a build, by how many comments are
//! open and how many were resolved long ago.
//!
//! The book: rust-by-example's 194 chapters, each filled up to about 10 KB with the chapters
//! that follow it in the corpus (rust-by-example, then the Rustonomicon) — about 2 MB of
//! Markdown, the reader client installed, search on, its own preprocessors neutralised. The
//! stores: comments generated as the browser client captures them (one in ten with a typo,
//! so the fuzzy search runs), then given their statuses.
//!
//! Printed, each next to its baseline measured in the same run:
//! 0. the headline: each store built by the real `mdbook` binary (found on PATH or in
//!    `~/.cargo/bin`; the bench fails without it) with our preprocessor, against the same book
//!    with a pass-through preprocessor (`benches/support/passthrough.rs`, built here with
//!    `cargo build --release --example passthrough`: what any plugin pays) and with none, in
//!    alternating rounds; the ratio to the pass-through is the one the targets are for, with
//!    the middle half of the rounds' ratios beside it (the machine's noise), and our build
//!    again with the cache directory deleted just before it (the first build after a clone:
//!    no store cache, no memo), and after an author's edit to one chapter (a paragraph added
//!    or taken out again: the cache and the memo warm, the last build no replay of it). A
//!    later build with nothing changed is replayed (`output::reuse::replay`). Then a build with
//!    the cache directory deleted, and one with
//!    every file in it corrupted, compared byte for byte with a build with it;
//! 1. build ratios through the command path (mdBook running the `mdbook-notabene` binary over
//!    the JSON protocol, as `mdbook build` does) and in process (`mdbook-notabene build`), for
//!    1,000 open, 10,000 open and 20,000 of which 18,000 resolved, against the same book built
//!    without notabene (medians of alternating rounds);
//! 2. the preprocessor's own time (in process, the book given) and the Markdown it adds, and
//!    its cost per comment by status;
//! 3. where the floor is: mdBook alone on our markup and on the least of it (a stand-in
//!    preprocessor hands it our output computed beforehand, with and without the `<mark>`
//!    elements), reading the store, and the floor of each scenario over the pass-through: the
//!    least markup, plus listing, reading and parsing the store files, deriving every
//!    chapter's text and writing its island;
//! 4. peak RSS of the preprocessor process with 20,000 comments against `mdbook build` of the
//!    plain book (when an `mdbook` binary is on PATH).
//!
//! `cargo bench --bench scale`; `NB_RUNS=n` sets the rounds (default 15: this machine's noise needs them). `NB_PROFILE=n` runs
//! only the preprocessor's html pass on 10,000 open comments, n times (for `perf record`;
//! `NB_COMMENTS=m` takes m comments instead, `NB_RESOLVED=k` resolves k of them, `NB_SIZES=1` prints the size of each island and
//! generated page, `NB_FLOOR=1` first times the floor's parts, `NB_PIPE=1` instead times
//! mdBook's side of the protocol). `NB_AGAINST=path` times another `mdbook-notabene` binary
//! (another commit's) in the same rounds of the headline, for an A/B of a change; `NB_CLI_ONLY=1`
//! runs only the headline. `NB_READ=n` times only the build's read of the store (n reads, the
//! cache warm); `NB_STAGE=dir` leaves the book and its store at `dir`, with its three
//! `book.toml`s, for profiling `mdbook build` by hand.

// Tests and benches are not a library: their shared modules are `pub` for each other, and
// need no rustdoc.
#![allow(unreachable_pub, missing_docs)]

#[path = "support/big_book.rs"]
mod big_book;
#[path = "../tests/support/mod.rs"]
mod support;

use big_book::*;
use mdbook_driver::MDBook;
use mdbook_driver::config::Config;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use support::common::{self, copy_dir, files_under, find_tool, plugin_bin};
use support::preprocess::*;

/// The binaries' allocator, so that in-process figures are the binaries' figures.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

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

/// The scenarios: name, comments, of which resolved, target (a later build's time through the
/// `mdbook` binary over the pass-through preprocessor's: the pipeline issue's).
const SCENARIOS: [(&str, usize, usize, f64); 3] = [
    ("1,000 open", 1_000, 0, 1.03),
    ("10,000 open", 10_000, 0, 1.20),
    ("20,000, of which 18,000 resolved", 20_000, 18_000, 1.10),
];

/// The pipeline issue's target for a first build after a clone: the scenario it is set for,
/// and its ratio to the pass-through.
const FIRST_BUILD_TARGET: (&str, f64) = ("20,000, of which 18,000 resolved", 1.25);

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        return;
    }
    if args.get(1).map(String::as_str) == Some("--peak-rss-of") {
        // A small process of its own runs the measured one: a child started from this big
        // process would inherit its high-water mark at exec.
        rss_helper(&args[2..]);
        return;
    }
    let runs: usize = std::env::var("NB_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15);
    let tmp = common::tempdir();
    // The builds' cache of the store's files goes in the bench's own directory.
    // SAFETY: no other thread runs yet.
    unsafe { std::env::set_var("NOTABENE_CACHE_DIR", tmp.path().join("cache")) };
    let (root, base) = big_book(tmp.path());
    let md0 = MDBook::load_with_config(&root, base.clone()).unwrap();
    let (plain, _) = md0.preprocess_book(&HtmlProbe).unwrap();
    let book_bytes = markdown_bytes(&plain);
    let chapters = plain.iter().count();

    // One generated set of 20,000 comments; each scenario's store is a prefix of it.
    let t = Instant::now();
    let master = tmp.path().join("master");
    std::fs::create_dir_all(&master).unwrap();
    generate_into(&root, &md0, 20_000);
    std::fs::rename(root.join(".notabene"), &master).unwrap();
    eprintln!("generated 20,000 comments in {:.1?}", t.elapsed());

    if let Some(dir) = std::env::var_os("NB_STAGE") {
        // `NB_STAGE=dir`: leave the book at `dir` with `NB_COMMENTS` comments (default
        // 10,000), `NB_RESOLVED` of them resolved, and its three `book.toml`s beside it
        // (`book.toml.{none,passthrough,ours}`), for profiling `mdbook build` by hand.
        let dir = PathBuf::from(dir);
        let count = env_usize("NB_COMMENTS").unwrap_or(10_000);
        let resolved = env_usize("NB_RESOLVED").unwrap_or(0);
        copy_dir(&root, &dir);
        fill_store(&master, &dir.join(".notabene"), count, resolved, "open");
        let names = ["none", "passthrough", "ours"];
        for (name, toml) in names.iter().zip(cli_configs(&base, &passthrough_bin())) {
            std::fs::write(dir.join(format!("book.toml.{name}")), &toml).unwrap();
        }
        std::fs::copy(dir.join("book.toml.ours"), dir.join("book.toml")).unwrap();
        eprintln!(
            "staged at {}: {count} comments, {resolved} resolved",
            dir.display()
        );
        return;
    }
    if let Some(n) = env_usize("NB_READ") {
        // `NB_READ=n`: only the build's read of the store (`NB_COMMENTS`, `NB_RESOLVED`), its
        // files aged an hour (so that the cache takes them), the cache warmed, n times.
        let count = env_usize("NB_COMMENTS").unwrap_or(20_000);
        let resolved = env_usize("NB_RESOLVED").unwrap_or(18_000);
        fill_store(&master, &root.join(".notabene"), count, resolved, "open");
        let old = std::time::SystemTime::now() - Duration::from_secs(3600);
        for f in files_under(&root.join(".notabene")) {
            std::fs::File::options()
                .write(true)
                .open(&f)
                .and_then(|file| file.set_modified(old))
                .unwrap();
        }
        let store = notabene_store::Store::new(root.join(".notabene"));
        for round in 0..=n {
            let t = Instant::now();
            let (c, _) =
                mdbook_notabene::model::resolve::chapters::read_comments_for_build(&store, "book");
            assert_eq!(c.len(), count);
            if round > 0 {
                eprintln!(
                    "read {count} comments ({resolved} resolved): {:.1?}",
                    t.elapsed()
                );
            }
        }
        return;
    }
    if let Some(n) = std::env::var("NB_PROFILE")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        // `NB_PROFILE=n`: only the preprocessor's html run on 10,000 open comments (or
        // `NB_COMMENTS`), n times (for `perf record`).
        let count = std::env::var("NB_COMMENTS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(10_000);
        let resolved = std::env::var("NB_RESOLVED")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        fill_store(&master, &root.join(".notabene"), count, resolved, "open");
        let mut with = base.clone();
        with.set(
            "preprocessor.notabene",
            serde_json::json!({ "after": ["links"] }),
        )
        .unwrap();
        let cx = mdbook_preprocessor::PreprocessorContext::new(root.clone(), with, "html".into());
        if std::env::var_os("NB_PIPE").is_some() {
            // `NB_PIPE=1`: what mdBook's side of the protocol costs. Its unbuffered `to_writer`
            // into a child's stdin (`cat`, which reads as soon as anything arrives), against
            // the same bytes written at once; and its preprocessing step with our binary
            // disabled, against no preprocessor.
            let mut off = cx.clone();
            off.config
                .set("preprocessor.notabene.enable", false)
                .unwrap();
            let mut disabled = base.clone();
            disabled
                .set(
                    "preprocessor.notabene",
                    serde_json::json!({
                        "after": ["links"],
                        "enable": false,
                        "command": format!(
                            "env MDBOOK_PREPROCESSOR__NOTABENE__ENABLE=false {}",
                            plugin_command()
                        ),
                    }),
                )
                .unwrap();
            let to_cat = |at_once: bool| {
                let mut child = std::process::Command::new("cat")
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::null())
                    .spawn()
                    .unwrap();
                let t = Instant::now();
                let stdin = child.stdin.take().unwrap();
                if at_once {
                    let bytes = serde_json::to_vec(&(&off, &plain)).unwrap();
                    std::io::Write::write_all(&mut { stdin }, &bytes).unwrap();
                } else {
                    serde_json::to_writer(stdin, &(&off, &plain)).unwrap();
                }
                child.wait().unwrap();
                t.elapsed()
            };
            let preprocess = |config: &Config| {
                let t = Instant::now();
                let md = MDBook::load_with_config(&root, config.clone()).unwrap();
                md.preprocess_book(&HtmlProbe).unwrap();
                t.elapsed()
            };
            for round in 0..n {
                eprintln!(
                    "round {round}: to `cat`: unbuffered {:.1?}, at once {:.1?}; preprocessing: our binary disabled {:.1?}, no preprocessor {:.1?}",
                    to_cat(false),
                    to_cat(true),
                    preprocess(&disabled),
                    preprocess(&base)
                );
            }
            return;
        }
        if std::env::var_os("NB_FLOOR").is_some() {
            let options = mdbook_notabene::model::book::text_options(&base).unwrap();
            let f = floor_parts(&root, &base, &plain, &options, n);
            let (r, p, t, w) = (f.read, f.store, f.text, f.islands);
            let chars: Vec<usize> = plain
                .iter()
                .filter_map(|i| match i {
                    mdbook_preprocessor::book::BookItem::Chapter(c) => Some(
                        notabene_anchoring::PageIndex::new(&notabene_anchoring::text::page_text(
                            &c.content, &options,
                        ))
                        .len(),
                    ),
                    _ => None,
                })
                .collect();
            eprintln!(
                "floor: read only {r:.1?}, read + parse {p:.1?}, text model {t:.1?}, islands written {w:.1?}; {} chapters, {} normalised chars each on average",
                chars.len(),
                chars.iter().sum::<usize>() / chars.len().max(1)
            );
        }
        for _ in 0..n {
            let t = Instant::now();
            let out = mdbook_notabene::output::annotate::run(&cx, plain.clone()).unwrap();
            eprintln!("html run: {:.1?}", t.elapsed());
            if std::env::var_os("NB_SIZES").is_some() {
                for item in out.iter() {
                    if let mdbook_preprocessor::book::BookItem::Chapter(c) = item {
                        if c.source_path.is_none() {
                            eprintln!("view {} {}", c.name, c.content.len());
                        } else if let Some(i) = c.content.rfind("class=\"nb-data\"") {
                            // The island, plain or deflated, with its element.
                            let start = c.content[..i].rfind("<script").unwrap_or(i);
                            let end = c.content[i..].find("</script>").map_or(i, |e| i + e + 9);
                            eprintln!("island {}", end - start);
                        }
                    }
                }
            }
        }
        return;
    }
    // The headline: every scenario through the real `mdbook` binary, against the pass-through
    // preprocessor (the cost any plugin pays) and the book without any preprocessor, in
    // alternating rounds.
    let mdbook = find_tool("mdbook").expect(
        "the scale bench runs the real `mdbook` 0.5 binary: `cargo install mdbook --version 0.5.4 --locked`",
    );
    let passthrough = passthrough_bin();
    let mut cli_rows = Vec::new();
    for &(name, n, resolved, target) in &SCENARIOS {
        fill_store(&master, &root.join(".notabene"), n, resolved, "open");
        let t = measure_cli(
            &mdbook,
            &passthrough,
            &root,
            &base,
            &tmp.path().join("cli-out"),
            runs,
        );
        cli_rows.push((name, target, t));
    }
    if std::env::var_os("NB_CLI_ONLY").is_some() {
        // `NB_CLI_ONLY=1`: only the builds through the `mdbook` binary.
        print_cli(&mdbook, chapters, book_bytes, runs, &cli_rows, None);
        return;
    }
    // The cache of the store's files: a build without it gives the same bytes as one with it.
    let same_bytes_without_cache =
        cache_check(&mdbook, &root, &base, &tmp.path().join("cache-check"));

    let mut rows = Vec::new();
    for &(name, n, resolved, target) in &SCENARIOS {
        fill_store(&master, &root.join(".notabene"), n, resolved, "open");
        let t = measure(&root, &base, &tmp.path().join("out"), runs);
        rows.push((name, target, t));
    }

    // The preprocessor alone, by status: 10,000 comments all open, all addressed, all
    // resolved, and none.
    let ctx = |c: &Config| {
        let mut with = c.clone();
        with.set(
            "preprocessor.notabene",
            serde_json::json!({ "after": ["links"] }),
        )
        .unwrap();
        mdbook_preprocessor::PreprocessorContext::new(root.clone(), with, "html".into())
    };
    let cx = ctx(&base);
    let mut own = Vec::new();
    for (status, n) in [
        ("none", 0),
        ("open", 10_000),
        ("addressed", 10_000),
        ("resolved", 10_000),
    ] {
        fill_store(
            &master,
            &root.join(".notabene"),
            n,
            if status == "resolved" { n } else { 0 },
            if status == "addressed" {
                "addressed"
            } else {
                "open"
            },
        );
        let mut times = Vec::new();
        let mut added = 0;
        for round in 0..=runs {
            let t = Instant::now();
            let out = mdbook_notabene::output::annotate::run(&cx, plain.clone()).unwrap();
            if round > 0 {
                times.push(t.elapsed());
            }
            added = markdown_bytes(&out).saturating_sub(book_bytes);
        }
        own.push((status, n, median(&times), added));
    }

    // What mdBook alone costs on our markup: a stand-in preprocessor hands it our output,
    // computed beforehand, against the book unchanged handed over the same way.
    let mut markup = Vec::new();
    for &(name, n, resolved, _) in &SCENARIOS {
        fill_store(&master, &root.join(".notabene"), n, resolved, "open");
        let ours = mdbook_notabene::output::annotate::run(&cx, plain.clone()).unwrap();
        let least = without_marks(&ours);
        let (mut a, mut b, mut l) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..=runs {
            for (book, times) in [(&plain, &mut a), (&ours, &mut b), (&least, &mut l)] {
                let mut c = base.clone();
                c.build.build_dir = tmp.path().join("stand-in");
                let t = Instant::now();
                let mut md = MDBook::load_with_config(&root, c).unwrap();
                md.with_preprocessor(StandIn(book.clone()));
                md.build().unwrap();
                if round > 0 {
                    times.push(t.elapsed());
                }
            }
        }
        markup.push(Markup {
            name,
            unchanged: median(&a),
            ours: median(&b),
            ours_ratio: paired(&b, &a),
            ours_added: markdown_bytes(&ours) - book_bytes,
            least: median(&l),
            least_ratio: paired(&l, &a),
            least_added: markdown_bytes(&least) - book_bytes,
        });
    }

    // The least each scenario's build must do besides mdBook's own work, part by part.
    let options = mdbook_notabene::model::book::text_options(&base).unwrap();
    let mut floors = Vec::new();
    for &(name, n, resolved, _) in &SCENARIOS {
        fill_store(&master, &root.join(".notabene"), n, resolved, "open");
        floors.push((name, floor_parts(&root, &base, &plain, &options, runs)));
    }

    // What reading the store costs: 10,000 and 20,000 comment files.
    let mut reading = Vec::new();
    for n in [10_000, 20_000] {
        fill_store(&master, &root.join(".notabene"), n, 0, "open");
        let store = notabene_store::Store::new(root.join(".notabene"));
        let space = mdbook_notabene::model::book::Book::from_mdbook(&root, base.clone())
            .unwrap()
            .config
            .space;
        let mut times = Vec::new();
        for round in 0..=runs {
            let t = Instant::now();
            let (c, _) =
                mdbook_notabene::model::resolve::chapters::read_comments_for_build(&store, &space);
            if round > 0 {
                times.push(t.elapsed());
            }
            assert_eq!(c.len(), n);
        }
        reading.push((n, median(&times)));
    }

    // Peak RSS: the preprocessor process with 20,000 comments, and mdBook on the plain book.
    fill_store(&master, &root.join(".notabene"), 20_000, 18_000, "open");
    let rss_pre = preprocessor_peak_rss(&root, &cx, &plain);
    let rss_mdbook = find_tool("mdbook").map(|mdbook| {
        let dir = tmp.path().join("rss-book");
        copy_dir(&root, &dir);
        std::fs::remove_dir_all(dir.join(".notabene")).unwrap();
        std::fs::write(dir.join("book.toml"), neutral_toml(&dir)).unwrap();
        peak_rss(
            &dir,
            Path::new("/dev/null"),
            &[
                mdbook.to_string_lossy().into_owned(),
                "build".into(),
                "-d".into(),
                tmp.path().join("rss-out").to_string_lossy().into_owned(),
            ],
        )
    });

    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!();
    print_cli(
        &mdbook,
        chapters,
        book_bytes,
        runs,
        &cli_rows,
        Some(same_bytes_without_cache),
    );
    println!(
        "In process (mdbook-driver, as `mdbook-notabene build`), against the book without notabene:"
    );
    println!();
    println!(
        "| store | without (ms) | `mdbook build` path (ms) | ratio to none | in process (ms) | ratio | command / in process | protocol alone, `enable = false` (ms) | ratio |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (name, _, t) in &rows {
        let r = t.ratio(&t.command);
        let cmd_vs_in = paired(&t.command, &t.with);
        println!(
            "| {name} | {:.0} | {:.0} | {r:.3} | {:.0} | {:.3} | {cmd_vs_in:.3} | {:.0} | {:.3} |",
            ms(median(&t.without)),
            ms(median(&t.command)),
            ms(median(&t.with)),
            t.ratio(&t.with),
            ms(median(&t.protocol)),
            t.ratio(&t.protocol),
        );
    }
    println!();
    println!(
        "The preprocessor alone (in process, the book given, html run), 10,000 comments of one status:"
    );
    println!();
    println!("| comments | run (ms) | per comment (µs) | Markdown added (KB) | added / book |");
    println!("|---|---:|---:|---:|---:|");
    let none = own[0].2;
    for (status, n, t, added) in &own {
        let per = if *n == 0 {
            "—".to_string()
        } else {
            format!(
                "{:.1}",
                (t.as_secs_f64() - none.as_secs_f64()) * 1e6 / *n as f64
            )
        };
        println!(
            "| {n} {status} | {:.1} | {per} | {} | {:.2}{} |",
            ms(*t),
            added / 1000,
            *added as f64 / book_bytes as f64,
            if *n == 10_000 && *status == "open" {
                if *added as f64 <= 2.0 * book_bytes as f64 {
                    " (target ≤ 2 ✓)"
                } else {
                    " (target ≤ 2 ✗)"
                }
            } else {
                ""
            },
        );
    }
    println!();
    println!(
        "mdBook alone on our markup (a stand-in preprocessor hands it our output computed beforehand):"
    );
    println!();
    println!(
        "| store | book unchanged (ms) | our output (ms) | ratio | Markdown added | islands and badges only, no `<mark>` (ms) | ratio | Markdown added |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for m in &markup {
        println!(
            "| {} | {:.0} | {:.0} | {:.3} | {} KB | {:.0} | {:.3} | {} KB |",
            m.name,
            ms(m.unchanged),
            ms(m.ours),
            m.ours_ratio,
            m.ours_added / 1000,
            ms(m.least),
            m.least_ratio,
            m.least_added / 1000
        );
    }
    println!();
    for (n, t) in &reading {
        println!(
            "Reading the store (walk, read, parse, in parallel): {n} comment files {:.1} ms.",
            ms(*t)
        );
    }
    println!();
    println!(
        "The floor over the pass-through preprocessor (which pays mdBook's protocol, measured alone here as our binary with `enable = false`): mdBook on the least markup (no `<mark>`: the client would paint them), plus reading the store as the build does (walk, read, parse; the reading alone shown too), deriving every chapter's text (what finding a quote needs) and writing every chapter's island once (its comments' JSON, deflated where the build deflates it: the least markup's payload) — finding the anchors, markers and the generated pages counted as free:"
    );
    println!();
    println!(
        "| store | protocol alone (to none) | least markup | read files only (ms) | read + parse, as the build does (ms) | text model (ms) | islands written (ms) | preprocessor floor (ms) | floor over the pass-through | target |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for ((((name, target, t), (_, f)), m), (_, _, c)) in
        rows.iter().zip(&floors).zip(&markup).zip(&cli_rows)
    {
        let protocol = t.ratio(&t.protocol);
        let least = m.least_ratio;
        let own = f.store + f.text + f.islands;
        // Over the pass-through (which pays the protocol): mdBook's extra work on the least
        // markup, plus our parts as a share of the pass-through build's time.
        let parts = own.as_secs_f64() / median(&c.passthrough).as_secs_f64();
        let floor = 1.0 + (least - 1.0) + parts;
        println!(
            "| {name} | {protocol:.3} | {least:.3} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | **{floor:.3}** | ≤ {target:.2} {} |",
            ms(f.read),
            ms(f.store),
            ms(f.text),
            ms(f.islands),
            ms(own),
            if floor <= *target {
                "(below the target)"
            } else {
                "(above the target)"
            }
        );
    }
    println!();
    match rss_mdbook {
        Some(base_rss) => {
            let r = rss_pre as f64 / base_rss as f64;
            println!(
                "Peak RSS: the preprocessor with 20,000 comments {} MB; `mdbook build` of the plain book {} MB; ratio {r:.2} (target ≤ 4 {}).",
                rss_pre / 1024,
                base_rss / 1024,
                if r <= 4.0 { "✓" } else { "✗" }
            );
        }
        None => println!(
            "Peak RSS: the preprocessor with 20,000 comments {} MB (no `mdbook` on PATH for the baseline).",
            rss_pre / 1024
        ),
    }
}

/// The book's `book.toml` without any preprocessor (for the `mdbook` binary).
fn neutral_toml(dir: &Path) -> String {
    let mut doc: toml_edit::DocumentMut = std::fs::read_to_string(dir.join("book.toml"))
        .unwrap()
        .parse()
        .unwrap();
    doc.remove("preprocessor");
    doc.to_string()
}

/// Makes `store` hold the first `n` comments of `master` (in id order), the `resolved` ones
/// spread evenly among them marked resolved, the others given `live` status.
fn fill_store(master: &Path, store: &Path, n: usize, resolved: usize, live: &str) {
    if store.exists() {
        std::fs::remove_dir_all(store).unwrap();
    }
    let files = files_under(master);
    let comments: Vec<&PathBuf> = files
        .iter()
        .filter(|p| {
            p.file_name()
                .is_some_and(|f| f.to_string_lossy().starts_with("c_"))
        })
        .collect();
    assert!(comments.len() >= n, "the master store holds {n} comments");
    let is_comment: std::collections::HashSet<&PathBuf> = comments.iter().copied().collect();
    for p in files.iter().filter(|p| !is_comment.contains(p)) {
        let q = store.join(p.strip_prefix(master).unwrap());
        std::fs::create_dir_all(q.parent().unwrap()).unwrap();
        std::fs::copy(p, &q).unwrap();
    }
    let mut resolved_so_far = 0;
    // Spread over the book: every (total / n)-th comment of the master set.
    let chosen = (0..n).map(|j| comments[j * comments.len() / n.max(1)]);
    for (k, p) in chosen.enumerate() {
        let text = std::fs::read_to_string(p).unwrap();
        // Spread the resolved ones evenly: comment k is resolved when the count due by k+1
        // exceeds the count so far.
        let due = ((k + 1) * resolved).checked_div(n).unwrap_or(0);
        let status = if due > resolved_so_far {
            resolved_so_far += 1;
            "resolved"
        } else {
            live
        };
        let text = text.replacen(
            "\"status\": \"open\"",
            &format!("\"status\": \"{status}\""),
            1,
        );
        let q = store.join(p.strip_prefix(master).unwrap());
        std::fs::create_dir_all(q.parent().unwrap()).unwrap();
        std::fs::write(q, text).unwrap();
    }
}

fn markdown_bytes(book: &mdbook_preprocessor::book::Book) -> usize {
    book.iter()
        .map(|i| match i {
            mdbook_preprocessor::book::BookItem::Chapter(c) => c.content.len(),
            _ => 0,
        })
        .sum()
}

/// `a[i] / b[i]` over rounds measured side by side, sorted.
fn ratios(a: &[Duration], b: &[Duration]) -> Vec<f64> {
    assert_eq!(a.len(), b.len());
    let mut r: Vec<f64> = a
        .iter()
        .zip(b)
        .map(|(x, y)| x.as_secs_f64() / y.as_secs_f64())
        .collect();
    r.sort_by(f64::total_cmp);
    r
}

/// The median of `a[i] / b[i]` over rounds measured side by side.
fn paired(a: &[Duration], b: &[Duration]) -> f64 {
    let r = ratios(a, b);
    r[r.len() / 2]
}

/// The first and third quartiles of `a[i] / b[i]` over rounds measured side by side: how far
/// the machine's noise moved the ratio.
fn quartiles(a: &[Duration], b: &[Duration]) -> (f64, f64) {
    let r = ratios(a, b);
    (r[r.len() / 4], r[(3 * r.len()) / 4])
}

/// mdBook alone on one store's markup: medians, and ratios paired by round.
struct Markup {
    name: &'static str,
    unchanged: Duration,
    ours: Duration,
    ours_ratio: f64,
    ours_added: usize,
    least: Duration,
    least_ratio: f64,
    least_added: usize,
}

fn median(v: &[Duration]) -> Duration {
    let mut v = v.to_vec();
    v.sort();
    v[v.len() / 2]
}

/// Build times of one book and store.
struct Times {
    without: Vec<Duration>,
    with: Vec<Duration>,
    command: Vec<Duration>,
    /// The command with `enable = false`: mdBook's JSON protocol alone, the book unchanged.
    protocol: Vec<Duration>,
}

impl Times {
    /// The median of the rounds' ratios to the build without notabene (each round builds every
    /// kind once, so the pairs share the machine's state).
    fn ratio(&self, v: &[Duration]) -> f64 {
        paired(v, &self.without)
    }
}

fn timed(root: &Path, config: &Config, out: &Path, ours: bool) -> Duration {
    let start = Instant::now();
    let mut md = MDBook::load_with_config(root, {
        let mut c = config.clone();
        c.build.build_dir = out.to_path_buf();
        c
    })
    .expect("load");
    if ours {
        md.with_preprocessor(mdbook_notabene::output::annotate::Notabene::default());
    }
    md.build().expect("build");
    start.elapsed()
}

/// One warm-up build of each kind, then `runs` rounds alternating the three.
fn measure(root: &Path, base: &Config, out: &Path, runs: usize) -> Times {
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
    // The plugin disabled both where mdBook hands it its configuration and where the binary
    // reads ahead (`book.toml` with the `MDBOOK_*` variables): this book's `book.toml` does not
    // name the plugin, so it is disabled through the environment, as a user's `book.toml`
    // would disable it.
    let mut protocol = command.clone();
    protocol.set("preprocessor.notabene.enable", false).unwrap();
    protocol
        .set(
            "preprocessor.notabene.command",
            format!(
                "env MDBOOK_PREPROCESSOR__NOTABENE__ENABLE=false {}",
                plugin_command()
            ),
        )
        .unwrap();
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
    for _ in 0..runs {
        t.without.push(timed(root, &without, &oa, false));
        t.command.push(timed(root, &command, &oc, false));
        t.with.push(timed(root, &with, &ob, true));
        t.protocol.push(timed(root, &protocol, &od, false));
    }
    t
}

/// Peak RSS (KiB) of the `mdbook-notabene` binary run as mdBook runs a preprocessor.
fn preprocessor_peak_rss(
    root: &Path,
    ctx: &mdbook_preprocessor::PreprocessorContext,
    book: &mdbook_preprocessor::book::Book,
) -> u64 {
    let input = root.join("preprocessor-input.json");
    std::fs::write(&input, serde_json::to_vec(&(ctx, book)).unwrap()).unwrap();
    let rss = peak_rss(root, &input, &[plugin_bin().to_string()]);
    std::fs::remove_file(&input).unwrap();
    rss
}

/// Peak RSS (KiB) of `argv` run in `cwd` with `stdin` as its input, measured by a helper
/// process (this benchmark re-run with `--peak-rss-of`).
fn peak_rss(cwd: &Path, stdin: &Path, argv: &[String]) -> u64 {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .arg("--peak-rss-of")
        .arg(cwd)
        .arg(stdin)
        .args(argv)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// `--peak-rss-of CWD STDIN ARGV…`: runs ARGV and prints its peak resident set (KiB), from
/// `wait4`.
fn rss_helper(args: &[String]) {
    let child = std::process::Command::new(&args[2])
        .args(&args[3..])
        .current_dir(&args[0])
        .stdin(std::fs::File::open(&args[1]).unwrap())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: `rusage` is plain data, written by the kernel; `pid` is our own child, not
    // yet waited for (`child` is forgotten, never waited for by std).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "the measured process failed: {}",
        args[2..].join(" ")
    );
    std::mem::forget(child);
    println!("{}", usage.ru_maxrss);
}

/// The parts of a build's floor, each the median of its rounds.
struct Floor {
    /// Listing and reading the store's files.
    read: Duration,
    /// Reading the store as the build does (walk, read, parse).
    store: Duration,
    /// Every chapter's text model and index.
    text: Duration,
    /// Every chapter's island written once: its comments' JSON, deflated where the build
    /// deflates it.
    islands: Duration,
}

/// The least any build with the store of the book at `root` must do, each part alone
/// (medians of `runs`, on the threads the preprocessor uses): list and read every comment
/// file without parsing it; read the store as the build does (walk, read, parse:
/// `read_comments`); derive every chapter's text model and normalised text (what finding a
/// quote needs); write every chapter's island once from the book's anchoring (computed
/// beforehand, not timed).
fn floor_parts(
    root: &Path,
    config: &Config,
    book: &mdbook_preprocessor::book::Book,
    options: &notabene_anchoring::text::TextOptions,
    runs: usize,
) -> Floor {
    use mdbook_notabene::output::inject::island;
    use notabene_core::par::{default_threads, par_map};
    let threads = default_threads();
    let store = root.join(".notabene");
    let store = store.as_path();
    let (mut read, mut whole, mut text, mut islands) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let store_handle = notabene_store::Store::new(store.to_path_buf());
    // The anchoring the islands are written from (not timed).
    let cfg = mdbook_notabene::model::book::Book::from_mdbook(root, config.clone()).unwrap();
    let (comments, _) = mdbook_notabene::model::resolve::chapters::read_comments_for_build(
        &store_handle,
        &cfg.config.space,
    );
    let (anchors, _) = mdbook_notabene::model::resolve::chapters::anchor(
        &cfg,
        book,
        comments,
        mdbook_notabene::model::resolve::Which::Live,
    )
    .unwrap();
    let jobs: Vec<usize> = (0..anchors.chapters.len()).collect();
    let chapters: Vec<&str> = book
        .iter()
        .filter_map(|i| match i {
            mdbook_preprocessor::book::BookItem::Chapter(c) => Some(c.content.as_str()),
            _ => None,
        })
        .collect();
    for round in 0..=runs {
        let t = Instant::now();
        let files = files_under(store);
        let bytes = par_map(&files, threads, |p| std::fs::read(p).unwrap());
        let t_read = t.elapsed();
        let t = Instant::now();
        let (comments, _) = mdbook_notabene::model::resolve::chapters::read_comments_for_build(
            &store_handle,
            &cfg.config.space,
        );
        let t_whole = t.elapsed();
        assert!(!comments.is_empty() && comments.len() <= bytes.len());
        let t = Instant::now();
        let n = par_map(&chapters, threads, |md| {
            let page = notabene_anchoring::text::page_text(md, options);
            notabene_anchoring::PageIndex::new(&page).len()
        });
        let t_text = t.elapsed();
        assert_eq!(n.len(), chapters.len());
        let t = Instant::now();
        let written = par_map(&jobs, threads, |&i| {
            let (_, json) = island::injection_for(&anchors, i, &cfg.config);
            island::island_script(&anchors.chapters[i].page, &json, &cfg.config).len()
        });
        let t_islands = t.elapsed();
        assert!(written.iter().sum::<usize>() > 0);
        if round > 0 {
            read.push(t_read);
            whole.push(t_whole);
            text.push(t_text);
            islands.push(t_islands);
        }
    }
    Floor {
        read: median(&read),
        store: median(&whole),
        text: median(&text),
        islands: median(&islands),
    }
}

/// `book` with our `<mark class="nb-mark" …>` elements unwrapped (their text kept): the markup
/// a build would add if the reader client painted the marks itself.
fn without_marks(book: &mdbook_preprocessor::book::Book) -> mdbook_preprocessor::book::Book {
    let mut out = book.clone();
    out.for_each_chapter_mut(|c| {
        let mut s = String::with_capacity(c.content.len());
        let mut rest = c.content.as_str();
        while let Some(i) = rest.find("<mark class=\"nb-mark\"") {
            s.push_str(&rest[..i]);
            let end = rest[i..].find('>').expect("a closed mark tag") + i + 1;
            rest = &rest[end..];
        }
        s.push_str(rest);
        c.content = s.replace("</mark>", "");
    });
    out
}

/// Builds the pass-through preprocessor (`benches/support/passthrough.rs`, a release example
/// of this package) and returns its path.
fn passthrough_bin() -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = std::process::Command::new(cargo)
        .args(["build", "--release", "--quiet", "--example", "passthrough"])
        .arg("--manifest-path")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
        .status()
        .expect("cargo build --example passthrough");
    assert!(status.success(), "cargo build --example passthrough failed");
    // This bench runs from <target>/release/deps; examples are in <target>/release/examples.
    let exe = std::env::current_exe().unwrap();
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .join("examples")
        .join(format!("passthrough{}", std::env::consts::EXE_SUFFIX));
    assert!(bin.is_file(), "no pass-through binary at {}", bin.display());
    bin
}

/// `config` as a `book.toml` (JSON's nulls left out: TOML has none).
fn book_toml(config: &Config) -> String {
    fn item(v: &serde_json::Value) -> Option<toml_edit::Item> {
        use serde_json::Value as J;
        Some(match v {
            J::Object(m) => {
                let mut t = toml_edit::Table::new();
                for (k, v) in m {
                    if let Some(i) = item(v) {
                        t.insert(k, i);
                    }
                }
                toml_edit::Item::Table(t)
            }
            J::Null => return None,
            other => toml_edit::Item::Value(value(other)?),
        })
    }
    fn value(v: &serde_json::Value) -> Option<toml_edit::Value> {
        use serde_json::Value as J;
        Some(match v {
            J::Null => return None,
            J::Bool(b) => (*b).into(),
            J::Number(n) => match n.as_i64() {
                Some(i) => i.into(),
                None => n.as_f64()?.into(),
            },
            J::String(s) => s.as_str().into(),
            J::Array(a) => {
                let mut arr = toml_edit::Array::new();
                for v in a {
                    arr.push(value(v)?);
                }
                arr.into()
            }
            J::Object(m) => {
                let mut t = toml_edit::InlineTable::new();
                for (k, v) in m {
                    if let Some(v) = value(v) {
                        t.insert(k, v);
                    }
                }
                t.into()
            }
        })
    }
    let json = serde_json::to_value(config).unwrap();
    let mut doc = toml_edit::DocumentMut::new();
    for (k, v) in json.as_object().unwrap() {
        if let Some(i) = item(v) {
            doc.insert(k, i);
        }
    }
    doc.to_string()
}

/// Build times through the `mdbook` binary: no preprocessor, the pass-through one, ours.
struct CliTimes {
    none: Vec<Duration>,
    passthrough: Vec<Duration>,
    /// Ours, every build after the first (the cache and the memo warm).
    ours: Vec<Duration>,
    /// Ours with the cache directory deleted just before (the cache and the memo cold).
    cold: Vec<Duration>,
    /// Ours after an author's edit to one chapter (the cache and the memo warm, the last
    /// build's record of another input: no replay).
    edited: Vec<Duration>,
    /// With `NB_AGAINST`: the other `mdbook-notabene` binary, in the same rounds.
    other: Vec<Duration>,
}

/// `NB_AGAINST=path`: another `mdbook-notabene` binary (another commit's, say) timed in the
/// same alternating rounds as this one, for an A/B of a change through the real `mdbook`
/// (started through `env`, with a cache directory of its own: Unix only).
fn against() -> Option<String> {
    std::env::var("NB_AGAINST").ok().filter(|p| !p.is_empty())
}

/// The book.toml of the book with `command` as the notabene preprocessor's.
fn with_command(base: &Config, command: &str) -> String {
    let mut c = base.clone();
    c.set("preprocessor", serde_json::json!({})).unwrap();
    c.set(
        "preprocessor.notabene",
        serde_json::json!({ "after": ["links"], "command": command }),
    )
    .unwrap();
    book_toml(&c)
}

/// The three configurations of the book at `root` for the `mdbook` binary: no preprocessor,
/// the pass-through one, and ours (each after `links`, as a user's book.toml has it).
fn cli_configs(base: &Config, passthrough: &Path) -> [String; 3] {
    let mut none = base.clone();
    none.set("preprocessor", serde_json::json!({})).unwrap();
    let mut pass = none.clone();
    pass.set(
        "preprocessor.passthrough",
        serde_json::json!({ "after": ["links"], "command": passthrough.to_string_lossy() }),
    )
    .unwrap();
    [
        book_toml(&none),
        book_toml(&pass),
        with_command(base, &plugin_command()),
    ]
}

/// One `mdbook build` of the book at `root` with `toml` as its book.toml, into `out`.
fn mdbook_build(mdbook: &Path, root: &Path, toml: &str, out: &Path) -> Duration {
    std::fs::write(root.join("book.toml"), toml).unwrap();
    let start = Instant::now();
    let o = std::process::Command::new(mdbook)
        .arg("build")
        .arg("-d")
        .arg(out)
        .current_dir(root)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .output()
        .expect("run mdbook");
    let t = start.elapsed();
    if std::env::var_os("NB_SHOW_STDERR").is_some() {
        // `NB_SHOW_STDERR=1`: what the builds print (with `NOTABENE_TIMINGS=1`, ours timed).
        eprint!("{}", String::from_utf8_lossy(&o.stderr));
    }
    assert!(
        o.status.success(),
        "mdbook build failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    t
}

/// One warm-up build of each kind, then `runs` rounds alternating the three.
fn measure_cli(
    mdbook: &Path,
    passthrough: &Path,
    root: &Path,
    base: &Config,
    out: &Path,
    runs: usize,
) -> CliTimes {
    let saved = std::fs::read(root.join("book.toml")).unwrap();
    let [none, pass, ours] = cli_configs(base, passthrough);
    for toml in [&none, &pass, &ours] {
        mdbook_build(mdbook, root, toml, out);
    }
    // Its own cache directory: the two binaries' caches may be of different versions, and
    // would each throw the other's away at every build.
    let other = against().map(|bin| {
        let cache = out.with_extension("against-cache");
        with_command(
            base,
            &format!("env NOTABENE_CACHE_DIR={} {bin}", cache.display()),
        )
    });
    if let Some(toml) = &other {
        mdbook_build(mdbook, root, toml, out);
    }
    let mut t = CliTimes {
        none: Vec::new(),
        passthrough: Vec::new(),
        ours: Vec::new(),
        cold: Vec::new(),
        edited: Vec::new(),
        other: Vec::new(),
    };
    // The chapter an author edits: a paragraph added, then taken out again, round by round.
    let chapter = root.join("src/hello.md");
    let text = std::fs::read_to_string(&chapter).unwrap();
    let edited = format!("{text}\nA paragraph the author added.\n");
    let cache = PathBuf::from(std::env::var_os("NOTABENE_CACHE_DIR").unwrap());
    for _ in 0..runs {
        t.none.push(mdbook_build(mdbook, root, &none, out));
        t.passthrough.push(mdbook_build(mdbook, root, &pass, out));
        t.ours.push(mdbook_build(mdbook, root, &ours, out));
        let now = std::fs::read_to_string(&chapter).unwrap();
        std::fs::write(&chapter, if now == text { &edited } else { &text }).unwrap();
        // Saved a minute before the build (a file modified in the last two seconds keeps
        // a build from being recorded).
        std::fs::File::options()
            .write(true)
            .open(&chapter)
            .unwrap()
            .set_modified(std::time::SystemTime::now() - Duration::from_secs(60))
            .unwrap();
        t.edited.push(mdbook_build(mdbook, root, &ours, out));
        // The first build after a clone (a CI runner without a cached home): no cache.
        std::fs::remove_dir_all(&cache).unwrap();
        t.cold.push(mdbook_build(mdbook, root, &ours, out));
        if let Some(toml) = &other {
            t.other.push(mdbook_build(mdbook, root, toml, out));
        }
    }
    std::fs::write(root.join("book.toml"), saved).unwrap();
    std::fs::write(&chapter, &text).unwrap();
    t
}

/// Prints the builds through the `mdbook` binary, and whether the cache changed any byte.
fn print_cli(
    mdbook: &Path,
    chapters: usize,
    book_bytes: usize,
    runs: usize,
    cli_rows: &[(&str, f64, CliTimes)],
    same_bytes: Option<bool>,
) {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!();
    println!(
        "Through the real `mdbook` binary ({}): a book of {chapters} chapters, {} KB of Markdown, search on; medians of {runs} alternating rounds, ratios the medians of each round's ratio.",
        mdbook.display(),
        book_bytes / 1000
    );
    println!();
    println!(
        "| store | no preprocessor (ms) | baseline: pass-through preprocessor (ms) | pass-through / none | mdbook-notabene (ms) | **ratio to the pass-through** | its rounds' middle half | target | ratio to none | first build, no cache (ms) | its ratio to the pass-through | its rounds' middle half | target | one chapter edited (ms) | its ratio to the pass-through | its rounds' middle half |"
    );
    println!("|---|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---|---|---:|---:|---|");
    let verdict =
        |r: f64, target: f64| format!("≤ {target:.2} {}", if r <= target { "✓" } else { "✗" });
    let spread = |a: &[Duration], b: &[Duration]| {
        let (q1, q3) = quartiles(a, b);
        format!("{q1:.3}–{q3:.3}")
    };
    for (name, target, t) in cli_rows {
        let r = paired(&t.ours, &t.passthrough);
        let cold = paired(&t.cold, &t.passthrough);
        let cold_target = if FIRST_BUILD_TARGET.0 == *name {
            verdict(cold, FIRST_BUILD_TARGET.1)
        } else {
            "—".into()
        };
        println!(
            "| {name} | {:.0} | {:.0} | {:.3} | {:.0} | **{r:.3}** | {} | {} | {:.3} | {:.0} | {cold:.3} | {} | {cold_target} | {:.0} | {:.3} | {} |",
            ms(median(&t.none)),
            ms(median(&t.passthrough)),
            paired(&t.passthrough, &t.none),
            ms(median(&t.ours)),
            spread(&t.ours, &t.passthrough),
            verdict(r, *target),
            paired(&t.ours, &t.none),
            ms(median(&t.cold)),
            spread(&t.cold, &t.passthrough),
            ms(median(&t.edited)),
            paired(&t.edited, &t.passthrough),
            spread(&t.edited, &t.passthrough),
        );
    }
    if let Some(bin) = against() {
        println!();
        println!("`NB_AGAINST` ({bin}), in the same rounds:");
        println!();
        println!(
            "| store | other binary (ms) | its ratio to the pass-through | this one over it |"
        );
        println!("|---|---:|---:|---:|");
        for (name, _, t) in cli_rows {
            println!(
                "| {name} | {:.0} | {:.3} | {:.3} |",
                ms(median(&t.other)),
                paired(&t.other, &t.passthrough),
                paired(&t.ours, &t.other),
            );
        }
    }
    println!();
    if let Some(same) = same_bytes {
        println!(
            "A build after deleting the cache directory (the store's cache and the build's memo), and one after corrupting every file in it, against a build with it: {}.",
            if same {
                "the same bytes, every file ✓"
            } else {
                "DIFFERENT ✗"
            }
        );
        println!();
    }
    println!(
        "A book of {chapters} chapters, {} KB of Markdown, search on; medians of {runs} alternating rounds.",
        book_bytes / 1000
    );
    println!();
}

/// Whether a build of the book at `root` (its current store) through the `mdbook` binary gives
/// the same bytes, every output file, with the cache of the store's files warm, deleted, and
/// corrupted (each cache file cut in half, then one garbled).
fn cache_check(mdbook: &Path, root: &Path, base: &Config, out: &Path) -> bool {
    let cache = PathBuf::from(std::env::var_os("NOTABENE_CACHE_DIR").unwrap());
    let saved = std::fs::read(root.join("book.toml")).unwrap();
    let [_, _, ours] = cli_configs(base, Path::new("unused"));
    mdbook_build(mdbook, root, &ours, &out.join("warm"));
    std::fs::remove_dir_all(&cache).unwrap();
    mdbook_build(mdbook, root, &ours, &out.join("deleted"));
    let cached = files_under(&cache);
    assert!(
        !cached.is_empty(),
        "the build wrote no cache into {}",
        cache.display()
    );
    for (i, f) in cached.iter().enumerate() {
        let bytes = std::fs::read(f).unwrap();
        let mut cut = bytes[..bytes.len() / 2].to_vec();
        if i == 0 {
            cut.extend_from_slice(b"\x00{not a cache");
        }
        std::fs::write(f, cut).unwrap();
    }
    mdbook_build(mdbook, root, &ours, &out.join("corrupt"));
    std::fs::write(root.join("book.toml"), saved).unwrap();
    let read_all = |dir: &Path| -> Vec<(PathBuf, Vec<u8>)> {
        files_under(dir)
            .into_iter()
            .map(|f| {
                (
                    f.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&f).unwrap(),
                )
            })
            .collect()
    };
    let warm = read_all(&out.join("warm"));
    assert!(!warm.is_empty());
    warm == read_all(&out.join("deleted")) && warm == read_all(&out.join("corrupt"))
}

/// The number in environment variable `name`, when it holds one.
fn env_usize(name: &str) -> Option<usize> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}
