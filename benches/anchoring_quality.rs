//! Anchoring quality on synthetic edits of real pages (method: `docs/src/benchmarks.md`).
//!
//! Samples word-aligned quotes (1–30 words) from the nomicon and Rust by Example chapters, in
//! prose, list items, table cells and code blocks; captures each anchor exactly as the original
//! notabene client does (raw page text, 40-char prefix/suffix, nearest h1–h4); applies one of
//! twelve edit scenarios to the Markdown while tracking the quote's exact byte range; then
//! resolves it as a build does — the whole book (the page's own corpus book, the edited page
//! in it, a git repository holding every page as it was before the edit) anchored with
//! `resolve::anchor_book`, then `resolve::follow` across pages and against git — and with
//! the original notabene algorithm (first exact prefix+quote+suffix, else first exact quote),
//! and scores both against the ground truth (IoU ≥ 0.5 on Markdown bytes). A comment marked on
//! a page other than its own is misplaced. The threshold sweep resolves on the comment's own
//! page only (`notabene_anchoring::quote::resolve`). Deterministic: same output on every run.
//!
//!     cargo bench --bench anchoring_quality
//!
//! `NB_DUMP=1` additionally prints every misplaced / falsely orphaned anchor to stderr;
//! `NB_SEED=<n>` draws a different sample; `NB_TAU=<τ>` uses another threshold for the main
//! tables; `NB_CSV=<path>` writes per-anchor diagnostics.

// Tests and benches are not a library: their shared modules are `pub` for each other, and
// need no rustdoc.
#![allow(unreachable_pub, missing_docs)]

#[path = "support/anchoring.rs"]
mod anchoring;
#[path = "../tests/support/mod.rs"]
mod support;

use anchoring::*;
use mdbook_notabene::model::book::{LocaleStrategy, PageIds};
use mdbook_notabene::model::resolve::{Chapter, Which, anchor_book, follow};
use notabene_anchoring::quote::resolve;
use notabene_anchoring::text::normalize::normalize;
use notabene_anchoring::text::{PageText, SegKind, TextOptions, page_text};
use notabene_anchoring::{AnchorStatus, DEFAULT_THRESHOLD, PageIndex, Resolution};
use notabene_store::{Fresh, Scope, new_comment};
use serde_json::json;
use std::ops::Range;

const PER_SCENARIO: usize = 200;
const BUCKETS: [usize; 8] = [1, 2, 3, 5, 8, 12, 20, 30];
const SEED: u64 = 0x6e6f_7461_6265_6e65;
const MAX_ATTEMPTS: usize = 600;
const TAUS: [f64; 6] = [0.70, 0.75, 0.80, 0.85, 0.90, 0.95];

const SCENARIOS: [&str; 12] = [
    "none",
    "edits elsewhere",
    "typo in quote",
    "word ins/del in quote",
    "context edited",
    "whitespace reflow",
    "block moved",
    "quote+context deleted (truth = orphan)",
    "quote duplicated elsewhere",
    "quote rewritten > 50% (span or orphan)",
    "section renamed / heading inserted",
    "Unicode variants",
];

struct PageData {
    md: String,
    an: Analyzed,
    /// All run words, sorted, with their run index.
    words: Vec<(Range<usize>, usize)>,
    /// Normalised page text.
    norm: String,
    /// Normalised page text as matcher symbols.
    symbols: Vec<u32>,
    units: Vec<Unit>,
}

/// One sampled, edited anchor with its ground truth.
struct Sample {
    scenario: usize,
    n: usize,
    btype: BlockType,
    page: usize,
    new_md: String,
    anchor: Captured,
    /// Ground-truth Markdown range in `new_md` (None: the quote is gone).
    truth: Option<Range<usize>>,
    /// The original page has a lookalike of the anchor elsewhere (see [`lookalike`]).
    lookalike: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Correct,
    CorrectOrphan,
    Misplaced,
    FalseOrphan,
}

/// Correct = placed with IoU ≥ 0.5 against the truth; for a rewritten quote (scenario 10,
/// truth = "the rewritten span or orphan, never elsewhere") any overlap with the rewritten
/// span counts, and so does an orphan.
fn classify(s: &Sample, placed: Option<&Range<usize>>) -> Outcome {
    let rewritten = s.scenario == 10;
    match (&s.truth, placed) {
        (Some(t), Some(p)) if iou(t, p) >= 0.5 => Outcome::Correct,
        (Some(t), Some(p)) if rewritten && p.start < t.end && t.start < p.end => Outcome::Correct,
        (_, Some(_)) => Outcome::Misplaced,
        (Some(_), None) if rewritten => Outcome::CorrectOrphan,
        (Some(_), None) => Outcome::FalseOrphan,
        (None, None) => Outcome::CorrectOrphan,
    }
}

#[derive(Default, Clone, Copy)]
struct Tally {
    n: usize,
    correct: usize,
    orphan_ok: usize,
    misplaced: usize,
    false_orphan: usize,
}

impl Tally {
    fn add(&mut self, o: Outcome) {
        self.n += 1;
        match o {
            Outcome::Correct => self.correct += 1,
            Outcome::CorrectOrphan => self.orphan_ok += 1,
            Outcome::Misplaced => self.misplaced += 1,
            Outcome::FalseOrphan => self.false_orphan += 1,
        }
    }
    fn ok(&self) -> usize {
        self.correct + self.orphan_ok
    }
    fn cells(&self) -> String {
        format!("{} | {} | {}", self.ok(), self.misplaced, self.false_orphan)
    }
}

fn pct(a: usize, b: usize) -> f64 {
    if b == 0 {
        0.0
    } else {
        100.0 * a as f64 / b as f64
    }
}

fn main() {
    // NB_SEED=<n> draws another sample (for hold-out checks); the default is fixed.
    let seed = std::env::var("NB_SEED")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(SEED);
    // NB_TAU=<τ> resolves the main tables at another threshold (default: the engine's).
    let tau = std::env::var("NB_TAU")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(DEFAULT_THRESHOLD);
    let pages: Vec<PageData> = corpus()
        .into_iter()
        .map(|p| {
            let an = analyze(&p.md);
            let mut words: Vec<(Range<usize>, usize)> = an
                .runs
                .iter()
                .enumerate()
                .flat_map(|(ri, r)| r.words.iter().map(move |w| (w.clone(), ri)))
                .collect();
            words.sort_by_key(|w| w.0.start);
            let idx = PageIndex::new(&an.pt);
            let (norm, symbols) = (idx.string, idx.symbols);
            let units = units(&p.md, &an.pt);
            PageData {
                md: p.md,
                an,
                words,
                norm,
                symbols,
                units,
            }
        })
        .collect();

    // (page, run) candidates per block type and bucket.
    let mut eligible: Vec<Vec<Vec<(usize, usize)>>> = vec![vec![Vec::new(); BUCKETS.len()]; 4];
    for (pi, p) in pages.iter().enumerate() {
        for (ri, r) in p.an.runs.iter().enumerate() {
            for (bi, &n) in BUCKETS.iter().enumerate() {
                if r.words.len() >= n {
                    eligible[r.kind as usize][bi].push((pi, ri));
                }
            }
        }
    }

    let mut samples: Vec<Sample> = Vec::new();
    let mut ambiguous_at_capture = 0usize;
    let mut rejected = vec![0usize; 12];
    for scenario in 1..=12 {
        let mut rng =
            fastrand::Rng::with_seed(seed ^ (scenario as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        for i in 0..PER_SCENARIO {
            let n0 = BUCKETS[i % BUCKETS.len()];
            let n = match scenario {
                3 => n0.max(2),
                4 => n0.max(3),
                _ => n0,
            };
            let bi = BUCKETS.iter().position(|&b| b == n).expect("bucket");
            let t0 = if scenario == 6 {
                BlockType::Prose
            } else {
                BlockType::ALL[(i / BUCKETS.len()) % 4]
            };
            let mut got = None;
            for attempt in 0..MAX_ATTEMPTS {
                let t = if attempt < MAX_ATTEMPTS / 2 && !eligible[t0 as usize][bi].is_empty() {
                    t0
                } else {
                    BlockType::Prose
                };
                let list = &eligible[t as usize][bi];
                let (pi, ri) = list[rng.usize(..list.len())];
                let p = &pages[pi];
                let run = &p.an.runs[ri];
                let w = rng.usize(..=run.words.len() - n);
                let (qa, qb) = (run.words[w].start, run.words[w + n - 1].end);
                let pt = &p.an.pt;
                if !exact_at(pt, qa) || !exact_at(pt, qb - 1) {
                    continue;
                }
                let cap = capture(pt, qa, qb);
                let full =
                    normalize(&format!("{}{}{}", cap.prefix, cap.quote, cap.suffix)).as_string();
                if occurrences(&p.norm, &full, 2) != 1 {
                    ambiguous_at_capture += 1;
                    continue;
                }
                let q = Quote {
                    p,
                    run,
                    w,
                    n,
                    qa,
                    qb,
                    src: pt.source_range(qa, qb),
                    cap,
                    variant: i,
                };
                match apply_scenario(scenario, &q, &mut rng) {
                    Some((new_md, truth, anchor)) => {
                        let lookalike = lookalike(p, &q.cap);
                        got = Some(Sample {
                            lookalike,
                            scenario,
                            n,
                            btype: run.kind,
                            page: pi,
                            new_md,
                            anchor: anchor.unwrap_or(q.cap),
                            truth,
                        });
                        break;
                    }
                    None => rejected[scenario - 1] += 1,
                }
            }
            samples.push(got.unwrap_or_else(|| panic!("scenario {scenario}: no sample for #{i}")));
        }
    }

    // Resolve: ours as a build does (the whole book: the comment's chapter anchored, then
    // following across pages), ours on its own page with τ = 0 for the sweep, baseline.
    struct Res {
        ours: Outcome,
        /// Ours marked it on a page other than its own (counted as misplaced).
        other_page: bool,
        /// Ours left it orphaned with another page as a suggestion (`sameText`).
        same_text: bool,
        base: Outcome,
        /// (placed range at τ = 0, confidence)
        free: (Option<Range<usize>>, f64),
    }
    let dump = std::env::var_os("NB_DUMP").is_some();
    let book = WholeBook::new(&pages);
    let results: Vec<Res> = samples
        .iter()
        .map(|s| {
            let pt = page_text(&s.new_md, &TextOptions::default());
            let idx = PageIndex::new(&pt);
            let a = s.anchor.anchor();
            let free = resolve(&idx, &a, 0.0);
            let built = book.build(s, tau);
            let (ours, other_page) = match &built.chapter {
                Some(ch) if *ch != s.page => (Outcome::Misplaced, true),
                _ => (
                    classify(s, built.resolution.place.as_ref().map(|p| &p.source)),
                    false,
                ),
            };
            let base_place = baseline(&pt, &s.anchor).map(|t| pt.source_range(t.start, t.end));
            let base = classify(s, base_place.as_ref());
            if dump && matches!(ours, Outcome::Misplaced | Outcome::FalseOrphan) {
                dump_sample(s, &pt, &built, ours, &pages);
            }
            Res {
                ours,
                other_page,
                same_text: built.same_text.is_some(),
                base,
                free: (free.place.map(|p| p.source), free.confidence),
            }
        })
        .collect();

    if let Some(path) = std::env::var_os("NB_CSV") {
        // Per-anchor diagnostics: the τ = 0 placement's outcome and its confidence.
        let mut out = String::from("scenario,n,block,lookalike,outcome_free,confidence\n");
        for (s, r) in samples.iter().zip(&results) {
            let o = classify(s, r.free.0.as_ref());
            out.push_str(&format!(
                "{},{},{},{},{:?},{:.4}\n",
                s.scenario,
                s.n,
                s.btype.name(),
                s.lookalike,
                o,
                r.free.1
            ));
        }
        std::fs::write(path, out).expect("write NB_CSV");
    }

    println!("# Anchoring quality — synthetic edits on nomicon + Rust by Example\n");
    println!(
        "{} pages, {} anchors ({} per scenario), seed {seed:#x}, τ = {tau}. \
         Cells: correct / misplaced / false orphan (correct includes correct orphans). \
         {} candidate quotes skipped as ambiguous at capture (prefix+quote+suffix not unique).\n",
        pages.len(),
        samples.len(),
        PER_SCENARIO,
        ambiguous_at_capture
    );
    println!(
        "| # | scenario | anchors | ours correct | ours misplaced | ours false orphan | ours orphaned (ok) | baseline correct | baseline misplaced | baseline false orphan | lookalike anchors | ours misplaced, lookalikes excluded | ours marked on another page | ours: same text on another page (suggestion) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut per_scn = vec![(Tally::default(), Tally::default()); 12];
    let mut overall = (Tally::default(), Tally::default());
    // Ours on anchors without a lookalike at capture.
    let mut clean = vec![Tally::default(); 12];
    let mut clean_all = Tally::default();
    let mut per_bucket = vec![(Tally::default(), Tally::default()); BUCKETS.len()];
    let mut per_type = vec![(Tally::default(), Tally::default()); 4];
    // Per scenario: marked on another page; orphaned with a suggestion on another page.
    let mut elsewhere = [(0usize, 0usize); 12];
    for (s, r) in samples.iter().zip(&results) {
        let bi = BUCKETS.iter().position(|&b| b == s.n).unwrap();
        elsewhere[s.scenario - 1].0 += usize::from(r.other_page);
        elsewhere[s.scenario - 1].1 += usize::from(r.same_text);
        if !s.lookalike {
            clean[s.scenario - 1].add(r.ours);
            clean_all.add(r.ours);
        }
        for (t, o) in [
            (&mut per_scn[s.scenario - 1], (r.ours, r.base)),
            (&mut overall, (r.ours, r.base)),
            (&mut per_bucket[bi], (r.ours, r.base)),
            (&mut per_type[s.btype as usize], (r.ours, r.base)),
        ] {
            t.0.add(o.0);
            t.1.add(o.1);
        }
    }
    for (i, (o, b)) in per_scn.iter().enumerate() {
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            i + 1,
            SCENARIOS[i],
            o.n,
            o.ok(),
            o.misplaced,
            o.false_orphan,
            o.orphan_ok,
            b.ok(),
            b.misplaced,
            b.false_orphan,
            o.n - clean[i].n,
            clean[i].misplaced,
            elsewhere[i].0,
            elsewhere[i].1
        );
    }
    let (o, b) = overall;
    let (other_pages, same_text) = elsewhere
        .iter()
        .fold((0, 0), |(a, b), e| (a + e.0, b + e.1));
    println!(
        "| | **overall** | {} | {} ({:.1}%) | **{} ({:.2}%)** | {} ({:.1}%) | {} | {} ({:.1}%) | **{} ({:.2}%)** | {} ({:.1}%) | {} | {} ({:.2}% of {}) | {} | {} |",
        o.n,
        o.ok(),
        pct(o.ok(), o.n),
        o.misplaced,
        pct(o.misplaced, o.n),
        o.false_orphan,
        pct(o.false_orphan, o.n),
        o.orphan_ok,
        b.ok(),
        pct(b.ok(), b.n),
        b.misplaced,
        pct(b.misplaced, b.n),
        b.false_orphan,
        pct(b.false_orphan, b.n),
        o.n - clean_all.n,
        clean_all.misplaced,
        pct(clean_all.misplaced, clean_all.n),
        clean_all.n,
        other_pages,
        same_text
    );
    println!(
        "\nMisplaced, every page counted: {} of {} anchors ({:.2} per 1,000); {} of them on another page.",
        o.misplaced,
        o.n,
        1000.0 * o.misplaced as f64 / o.n as f64,
        other_pages
    );

    println!("\n## By quote length (all scenarios)\n");
    println!(
        "| words | anchors | ours correct / misplaced / false orphan | baseline correct / misplaced / false orphan |"
    );
    println!("|---|---|---|---|");
    for (bi, (o, b)) in per_bucket.iter().enumerate() {
        println!(
            "| {} | {} | {} | {} |",
            BUCKETS[bi],
            o.n,
            o.cells().replace(" | ", " / "),
            b.cells().replace(" | ", " / ")
        );
    }
    println!("\n## By block type (all scenarios)\n");
    println!(
        "| block | anchors | ours correct / misplaced / false orphan | baseline correct / misplaced / false orphan |"
    );
    println!("|---|---|---|---|");
    for t in BlockType::ALL {
        let (o, b) = per_type[t as usize];
        println!(
            "| {} | {} | {} | {} |",
            t.name(),
            o.n,
            o.cells().replace(" | ", " / "),
            b.cells().replace(" | ", " / ")
        );
    }

    println!("\n## Coverage: anchors per block type and quote length\n");
    println!(
        "| block | {} |",
        BUCKETS.map(|b| format!("{b} w")).join(" | ")
    );
    println!("|---|{}", "---|".repeat(BUCKETS.len()));
    for t in BlockType::ALL {
        let cells: Vec<String> = BUCKETS
            .iter()
            .map(|&n| {
                samples
                    .iter()
                    .filter(|s| s.btype == t && s.n == n)
                    .count()
                    .to_string()
            })
            .collect();
        println!("| {} | {} |", t.name(), cells.join(" | "));
    }

    // Threshold sweep from the τ = 0 resolutions.
    println!("\n## Threshold sweep (ours)\n");
    println!(
        "| τ | correct | misplaced | false orphan | deleted: orphaned | deleted: orphaned, lookalikes excl. | typo + word edits: correct | moved: correct | misplaced overall | misplaced, lookalikes excl. |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for tau in TAUS {
        let mut all = Tally::default();
        let mut del = Tally::default();
        let mut edit = Tally::default();
        let mut moved = Tally::default();
        let mut cl = Tally::default();
        let mut del_cl = Tally::default();
        for (s, r) in samples.iter().zip(&results) {
            let placed = r.free.0.as_ref().filter(|_| r.free.1 >= tau);
            let o = classify(s, placed);
            all.add(o);
            if !s.lookalike {
                cl.add(o);
            }
            if s.scenario == 7 {
                moved.add(o);
            }
            if s.scenario == 8 {
                del.add(o);
                if !s.lookalike {
                    del_cl.add(o);
                }
            }
            if s.scenario == 3 || s.scenario == 4 {
                edit.add(o);
            }
        }
        println!(
            "| {tau:.2} | {} | {} | {} | {}/{} ({:.1}%) | {}/{} ({:.1}%) | {}/{} ({:.1}%) | {}/{} ({:.1}%) | {:.2}% | {:.2}% |",
            all.ok(),
            all.misplaced,
            all.false_orphan,
            del.ok(),
            del.n,
            pct(del.ok(), del.n),
            del_cl.ok(),
            del_cl.n,
            pct(del_cl.ok(), del_cl.n),
            edit.ok(),
            edit.n,
            pct(edit.ok(), edit.n),
            moved.ok(),
            moved.n,
            pct(moved.ok(), moved.n),
            pct(all.misplaced, all.n),
            pct(cl.misplaced, cl.n)
        );
    }

    // Targets: on all anchors, and on anchors without a lookalike at capture.
    println!("\n## Targets (τ = {tau})\n");
    println!("| target | goal | all anchors | | lookalikes excluded | |");
    println!("|---|---|---|---|---|---|");
    let mut pass = (true, true);
    let mut target = |name: &str,
                      goal: &str,
                      ok: &dyn Fn(f64) -> bool,
                      all: (usize, usize),
                      cl: (usize, usize)| {
        let (a, c) = (pct(all.0, all.1), pct(cl.0, cl.1));
        let (oa, oc) = (ok(a), ok(c));
        pass.0 &= oa;
        pass.1 &= oc;
        let verdict = |b: bool| if b { "PASS" } else { "FAIL" };
        println!(
            "| {name} | {goal} | {a:.2}% ({}/{}) | {} | {c:.2}% ({}/{}) | {} |",
            all.0,
            all.1,
            verdict(oa),
            cl.0,
            cl.1,
            verdict(oc)
        );
    };
    let full = |x: f64| x >= 100.0;
    for (scn, name) in [
        (1, "no edit: correct"),
        (6, "whitespace reflow: correct"),
        (2, "edits elsewhere: correct"),
        (7, "moved block: correct"),
        (9, "quote duplicated elsewhere: correct"),
    ] {
        let (t, c) = (per_scn[scn - 1].0, clean[scn - 1]);
        target(name, "100%", &full, (t.ok(), t.n), (c.ok(), c.n));
    }
    for (scn, name) in [
        (3, "typo in quote: correct"),
        (4, "word ins/del in quote: correct"),
    ] {
        let (t, c) = (per_scn[scn - 1].0, clean[scn - 1]);
        target(name, "≥ 95%", &|x| x >= 95.0, (t.ok(), t.n), (c.ok(), c.n));
    }
    let (t, c) = (per_scn[7].0, clean[7]);
    target(
        "quote deleted: orphaned",
        "≥ 98%",
        &|x| x >= 98.0,
        (t.ok(), t.n),
        (c.ok(), c.n),
    );
    target(
        "misplaced, every page counted",
        "≤ 0.1%",
        &|x| x <= 0.1,
        (o.misplaced, o.n),
        (clean_all.misplaced, clean_all.n),
    );
    let verdict = |b: bool| {
        if b {
            "ALL TARGETS PASS"
        } else {
            "SOME TARGETS FAIL"
        }
    };
    println!(
        "\nAll anchors: {}. Lookalike anchors excluded: {}.",
        verdict(pass.0),
        verdict(pass.1)
    );
    if std::env::var_os("NB_REJECTS").is_some() {
        eprintln!("rejected scenario applications: {rejected:?}");
    }
}

fn dump_sample(s: &Sample, pt: &PageText, b: &Built, o: Outcome, pages: &[PageData]) {
    let r = &b.resolution;
    let truth = s.truth.as_ref().map(|t| s.new_md[t.clone()].to_string());
    // The Markdown the mark is in: the edited page, or the page it was followed to.
    let md = match b.chapter {
        Some(ch) if ch != s.page => pages[ch].md.as_str(),
        _ => s.new_md.as_str(),
    };
    let placed = r.place.as_ref().map(|p| {
        let lo = md.floor_char_boundary(p.source.start.saturating_sub(50));
        let hi = md.ceil_char_boundary((p.source.end + 50).min(md.len()));
        format!(
            "{}[[{}]]{}",
            &md[lo..p.source.start],
            &md[p.source.clone()],
            &md[p.source.end..hi]
        )
    });
    let sugg = r
        .suggestion
        .as_ref()
        .filter(|_| b.chapter == Some(s.page))
        .map(|p| s.new_md[p.source.clone()].to_string());
    eprintln!(
        "--- scenario {} ({}) {:?} lookalike={} n={} {} conf={:.4} status={:?} page={} marked on={:?} same text on={:?}\n  quote  {:?}\n  prefix {:?}\n  suffix {:?}\n  section {:?}\n  truth  {:?}\n  placed {:?}\n  sugg   {:?}\n  page sections {:?}",
        s.scenario,
        SCENARIOS[s.scenario - 1],
        o,
        s.lookalike,
        s.n,
        s.btype.name(),
        r.confidence,
        r.status,
        s.page,
        b.chapter,
        b.same_text,
        s.anchor.quote,
        s.anchor.prefix,
        s.anchor.suffix,
        s.anchor.section,
        truth,
        placed,
        sugg,
        pt.headings.iter().map(|h| &h.text).collect::<Vec<_>>()
    );
}

/// The corpus as the two books a build sees (`nomicon`, `rust-by-example`): every page a
/// chapter of its book, page id `<book>/src/<path>`, in a git repository whose one commit holds
/// every page as it was when the comments were written (the comment's file not committed: its
/// `createdAt` names that commit). The edited page is what the build reads; git has the page
/// before the edit, as a book's repository has it. No other page changes after the comment is
/// written, so git never shows its text arriving on another page: a comment whose chapter is
/// in the book is never moved by its quote, only given another page as a suggestion.
struct WholeBook {
    /// One per corpus page, in corpus order.
    chapters: Vec<Chapter>,
    /// The book of each page (its first path component).
    book: Vec<String>,
    ids: PageIds,
    /// The repository's work tree.
    root: tempfile::TempDir,
    threads: usize,
}

/// Where a build put a sample's comment.
struct Built {
    /// The page it is marked on (corpus index), its own or the one it was followed to.
    chapter: Option<usize>,
    /// Its anchoring there.
    resolution: Resolution,
    /// Orphaned on its own page, with the same text on this page (a suggestion).
    same_text: Option<usize>,
}

impl WholeBook {
    fn new(pages: &[PageData]) -> WholeBook {
        let corpus = corpus();
        assert_eq!(corpus.len(), pages.len(), "corpus read twice alike");
        let chapters = corpus
            .iter()
            .map(|p| {
                let name = p.name.trim_end_matches(".md").to_string();
                Chapter {
                    page: name.clone(),
                    name: name.clone(),
                    url: format!("{name}.html"),
                    source: p.name.clone(),
                    content: p.md.clone(),
                    disk: None,
                }
            })
            .collect();
        let book = corpus
            .iter()
            .map(|p| p.name.split('/').next().unwrap_or_default().to_string())
            .collect();
        let root = support::common::tempdir();
        for p in &corpus {
            support::common::write(&root.path().join(&p.name), &p.md);
        }
        support::common::git_commit_all(root.path(), "the corpus");
        WholeBook {
            chapters,
            book,
            ids: PageIds {
                prefix: String::new(),
                language: "en".into(),
                default_language: "en".into(),
                strategy: LocaleStrategy::Suffix,
                locales: ["en".to_string()].into_iter().collect(),
                src_dir: root.path().to_path_buf(),
            },
            root,
            threads: notabene_core::par::default_threads(),
        }
    }

    /// Builds the sample's book with its edited page and its one comment: anchoring, then
    /// following, as `mdbook build` does.
    fn build(&self, s: &Sample, tau: f64) -> Built {
        let members: Vec<usize> = (0..self.chapters.len())
            .filter(|&pi| self.book[pi] == self.book[s.page])
            .collect();
        let chapters: Vec<Chapter> = members
            .iter()
            .map(|&pi| {
                let mut c = self.chapters[pi].clone();
                if pi == s.page {
                    c.content = s.new_md.clone();
                }
                c
            })
            .collect();
        let a = &s.anchor;
        let comment = new_comment(&Fresh {
            id: "c_quality",
            space: "bench",
            page: &self.chapters[s.page].page,
            scope: Scope::Selection,
            anchor: json!({ "quote": a.quote, "prefix": a.prefix, "suffix": a.suffix, "section": a.section }),
            author: "Bench <b@example.com>",
            body: "a comment",
            ts: "2026-01-01T00:00:00.000Z",
        });
        let options = TextOptions::default();
        let mut book = anchor_book(
            chapters,
            vec![comment],
            &options,
            tau,
            self.threads,
            Which::All,
        );
        follow::follow(
            &mut book,
            &self.ids,
            (
                &mdbook_notabene::model::book::Repo::discover(self.root.path()),
                None,
            ),
            &options,
            tau,
            None,
        );
        let l = &book.located[0];
        Built {
            chapter: l.chapter.map(|ch| members[ch]),
            resolution: l.resolution.clone().unwrap_or(Resolution {
                status: AnchorStatus::Orphan,
                confidence: 0.0,
                place: None,
                flags: Default::default(),
                suggestion: None,
                block: None,
            }),
            same_text: l.same_text.as_ref().map(|(ch, _)| members[*ch]),
        }
    }
}

/// A sampled quote on its original page.
struct Quote<'a> {
    p: &'a PageData,
    run: &'a Run,
    w: usize,
    n: usize,
    qa: usize,
    qb: usize,
    /// Markdown range of the quote.
    src: Range<usize>,
    cap: Captured,
    variant: usize,
}

type Applied = (String, Option<Range<usize>>, Option<Captured>);

fn apply_scenario(scenario: usize, q: &Quote, rng: &mut fastrand::Rng) -> Option<Applied> {
    let md = q.p.md.as_str();
    let pt = &q.p.an.pt;
    let tracked = |edits: Vec<Edit>| -> Option<Applied> {
        let ed = apply(md, edits)?;
        let truth = ed.map_range(&q.src);
        Some((ed.md, Some(truth), None))
    };
    let out = match scenario {
        1 => Some((md.to_string(), Some(q.src.clone()), None)),
        2 => {
            let cands: Vec<Range<usize>> =
                q.p.words
                    .iter()
                    .filter_map(|(w, _)| core(pt, w))
                    .filter(|c| c.end + 200 <= q.qa || c.start >= q.qb + 200)
                    .filter(|c| {
                        let s = src_of(pt, c.start);
                        s + 200 <= q.src.start || s >= q.src.end + 200
                    })
                    .collect();
            if cands.is_empty() {
                return None;
            }
            let k = cands.len().min(3);
            let picks = pick_distinct(rng, cands.len(), k);
            let mut edits = Vec::new();
            for i in picks {
                let c = &cands[i];
                let s = src_range(pt, c)?;
                let word = &md[s.clone()];
                match rng.usize(..3) {
                    0 => edits.push(Edit::new(
                        s.start..s.start,
                        format!("{} ", vocab(rng, word)),
                    )),
                    1 if md[..s.start].ends_with(' ') && md[s.end..].starts_with(' ') => {
                        edits.push(Edit::new(s.start..s.end + 1, ""))
                    }
                    _ => edits.push(Edit::new(s, vocab(rng, word))),
                }
            }
            tracked(edits)
        }
        3 => {
            let positions: Vec<usize> = (q.qa..q.qb)
                .filter(|&p| {
                    pt.text.is_char_boundary(p)
                        && pt.text.as_bytes()[p].is_ascii_alphabetic()
                        && exact_at(pt, p)
                        && !near_fn_main(&pt.text, p)
                })
                .collect();
            let chars = q.cap.quote.chars().count();
            let k = (chars / 20).max(1);
            if positions.len() < k {
                return None;
            }
            let edits = pick_distinct(rng, positions.len(), k)
                .into_iter()
                .map(|i| {
                    let p = positions[i];
                    let old = pt.text.as_bytes()[p].to_ascii_lowercase();
                    let mut c = b'a' + rng.u8(..26);
                    while c == old {
                        c = b'a' + rng.u8(..26);
                    }
                    let s = src_of(pt, p);
                    Edit::new(s..s + 1, (c as char).to_string())
                })
                .collect();
            tracked(edits)
        }
        4 => {
            let words = &q.run.words[q.w..q.w + q.n];
            if rng.bool() {
                // Insert a word after an inner space.
                let spaces: Vec<usize> = (words[0].end..words[q.n - 1].start)
                    .filter(|&p| pt.text.as_bytes()[p] == b' ' && exact_at(pt, p))
                    .collect();
                if spaces.is_empty() {
                    return None;
                }
                let p = spaces[rng.usize(..spaces.len())];
                let s = src_of(pt, p) + 1;
                tracked(vec![Edit::new(s..s, format!("{} ", vocab(rng, "")))])
            } else {
                // Delete an inner word with its following space.
                let code = q.run.kind == BlockType::Code;
                let inner: Vec<Range<usize>> = words[1..q.n - 1]
                    .iter()
                    .filter(|w| {
                        let r = w.start..w.end + 1;
                        exact_segment(pt, &r).is_some()
                            && pt.text.as_bytes()[w.end] == b' '
                            && safe_word(&pt.text[(*w).clone()], code)
                    })
                    .cloned()
                    .collect();
                if inner.is_empty() {
                    return None;
                }
                let w = &inner[rng.usize(..inner.len())];
                let s = src_range(pt, &(w.start..w.end + 1))?;
                if !md[..s.start].ends_with(' ') {
                    return None;
                }
                tracked(vec![Edit::new(s, "")])
            }
        }
        5 => {
            let before =
                q.p.words
                    .iter()
                    .rev()
                    .filter(|(w, _)| w.end <= q.qa)
                    .take_while(|(w, _)| q.qa - w.end <= CONTEXT)
                    .find_map(|(w, _)| core(pt, w));
            let after =
                q.p.words
                    .iter()
                    .filter(|(w, _)| w.start >= q.qb)
                    .take_while(|(w, _)| w.start - q.qb <= CONTEXT)
                    .find_map(|(w, _)| core(pt, w));
            let mut edits = Vec::new();
            for c in [before, after].into_iter().flatten() {
                let s = src_range(pt, &c)?;
                let word = md[s.clone()].to_string();
                edits.push(Edit::new(s, vocab(rng, &word)));
            }
            if edits.is_empty() {
                return None;
            }
            tracked(edits)
        }
        6 => reflow(q, rng),
        7 => {
            let a = unit_of(q)?;
            let ra = isolated(md, &q.p.units[a])?;
            let others: Vec<Range<usize>> =
                q.p.units
                    .iter()
                    .enumerate()
                    .filter(|(j, u)| j.abs_diff(a) >= 2 && !u.heading)
                    .filter_map(|(_, u)| isolated(md, u))
                    .collect();
            if others.is_empty() {
                return None;
            }
            let rb = others[rng.usize(..others.len())].clone();
            let (ca, cb) = (&md[ra.clone()], &md[rb.clone()]);
            let (new_md, new_a) = if rb.start < ra.start {
                (
                    format!(
                        "{}{ca}{}{cb}{}",
                        &md[..rb.start],
                        &md[rb.end..ra.start],
                        &md[ra.end..]
                    ),
                    rb.start,
                )
            } else {
                (
                    format!(
                        "{}{cb}{}{ca}{}",
                        &md[..ra.start],
                        &md[ra.end..rb.start],
                        &md[rb.end..]
                    ),
                    ra.start + cb.len() + (rb.start - ra.end),
                )
            };
            let start = new_a + (q.src.start - ra.start);
            Some((new_md, Some(start..start + q.src.len()), None))
        }
        8 => {
            let block = pt.block_elements[q.run.block as usize].clone();
            let del = match q.run.kind {
                BlockType::Code => full_lines(md, &pt.code_blocks[q.run.code? as usize].src),
                BlockType::Table => {
                    let row = full_lines(md, &block);
                    let next = md[row.end..].lines().next().unwrap_or("");
                    if !next.is_empty() && next.trim().chars().all(|c| "|-: ".contains(c)) {
                        return None; // header row
                    }
                    row
                }
                _ => full_lines(md, &block),
            };
            if !(del.start <= q.src.start && q.src.end <= del.end) {
                return None;
            }
            let ed = apply(md, vec![Edit::new(del, "")])?;
            let npt = page_text(&ed.md, &TextOptions::default());
            let norm = PageIndex::new(&npt).string;
            if norm.contains(&window_norm(&q.cap)) {
                return None;
            }
            Some((ed.md, None, None))
        }
        9 => {
            let a = unit_of(q)?;
            let ra = isolated(md, &q.p.units[a])?;
            // The copy: first/last words of the block and the words next to the quote changed.
            let in_a = |c: &Range<usize>| {
                let s = src_of(pt, c.start);
                ra.start <= s && s < ra.end
            };
            let cores: Vec<Range<usize>> =
                q.p.words
                    .iter()
                    .filter_map(|(w, _)| core(pt, w))
                    .filter(in_a)
                    .collect();
            let mut pick: Vec<Range<usize>> = Vec::new();
            if let Some(c) = cores
                .iter()
                .rev()
                .find(|c| c.end <= q.qa && q.qa - c.end <= CONTEXT)
            {
                pick.push(c.clone());
            }
            if let Some(c) = cores
                .iter()
                .find(|c| c.start >= q.qb && c.start - q.qb <= CONTEXT)
            {
                pick.push(c.clone());
            }
            for c in [cores.first(), cores.last()].into_iter().flatten() {
                if (c.end <= q.qa || c.start >= q.qb) && !pick.contains(c) {
                    pick.push(c.clone());
                }
            }
            let mut local = Vec::new();
            for c in &pick {
                let s = src_range(pt, c)?;
                let word = md[s.clone()].to_string();
                local.push(Edit::new(
                    s.start - ra.start..s.end - ra.start,
                    vocab(rng, &word),
                ));
            }
            let copy = apply(&md[ra.clone()], local)?.md;
            let spots: Vec<usize> =
                q.p.units
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| j.abs_diff(a) >= 2)
                    .filter_map(|(_, u)| isolated(md, u))
                    .map(|r| r.start)
                    .collect();
            if spots.is_empty() {
                return None;
            }
            let at = spots[rng.usize(..spots.len())];
            let ed = apply(md, vec![Edit::new(at..at, format!("{copy}\n\n"))])?;
            let npt = page_text(&ed.md, &TextOptions::default());
            let norm = PageIndex::new(&npt).string;
            if occurrences(&norm, &window_norm(&q.cap), 2) != 1 {
                return None;
            }
            let truth = ed.map_range(&q.src);
            Some((ed.md, Some(truth), None))
        }
        10 => {
            let code = q.run.kind == BlockType::Code;
            let mut cands: Vec<Range<usize>> = q.run.words[q.w..q.w + q.n]
                .iter()
                .filter(|w| exact_segment(pt, w).is_some())
                .filter(|w| {
                    let t = &pt.text[(*w).clone()];
                    safe_word(t, code)
                })
                .cloned()
                .collect();
            rng.shuffle(&mut cands);
            let total = q.cap.quote.chars().count();
            let mut changed = 0;
            let mut edits = Vec::new();
            for w in cands {
                if changed * 2 > total {
                    break;
                }
                let s = src_range(pt, &w)?;
                let word = md[s.clone()].to_string();
                changed += word.chars().count();
                edits.push(Edit::new(s, vocab(rng, &word)));
            }
            if changed * 2 <= total {
                return None;
            }
            tracked(edits)
        }
        11 => {
            let heading = pt
                .headings
                .iter()
                .take_while(|h| h.offset <= q.qa)
                .filter(|h| h.level <= 4)
                .last();
            match (q.variant % 3, heading) {
                (v @ (0 | 1), Some(h)) => {
                    let end = pt.text[h.offset..]
                        .find('\n')
                        .map_or(pt.text.len(), |i| h.offset + i);
                    let segs: Vec<_> = pt
                        .segments
                        .iter()
                        .filter(|s| {
                            s.text.start >= h.offset && s.text.end <= end && !s.src.is_empty()
                        })
                        .collect();
                    let (first, last) = (segs.first()?, segs.last()?);
                    if v == 0 {
                        let at = last.src.end;
                        tracked(vec![Edit::new(at..at, " Revisited")])
                    } else {
                        tracked(vec![Edit::new(
                            first.src.start..last.src.end,
                            "A Completely Different Title",
                        )])
                    }
                }
                _ => {
                    let a = unit_of(q)?;
                    let ra = isolated(md, &q.p.units[a])?;
                    tracked(vec![Edit::new(
                        ra.start..ra.start,
                        "## Inserted Section\n\n",
                    )])
                }
            }
        }
        12 => {
            let v = Captured {
                quote: unicode_variant(&q.cap.quote, rng),
                prefix: unicode_variant(&q.cap.prefix, rng),
                suffix: unicode_variant(&q.cap.suffix, rng),
                section: q.cap.section.clone(),
            };
            Some((md.to_string(), Some(q.src.clone()), Some(v)))
        }
        _ => unreachable!(),
    }?;
    // Self-check of the ground truth where the quote's bytes are unchanged.
    if let Some(t) = &out.1 {
        match scenario {
            1 | 2 | 5 | 7 | 9 | 11 | 12 => assert_eq!(
                &out.0[t.clone()],
                &md[q.src.clone()],
                "scenario {scenario}: truth tracking"
            ),
            6 => assert_eq!(
                normalize(&out.0[t.clone()]).chars,
                normalize(&md[q.src.clone()]).chars,
                "scenario 6: truth tracking"
            ),
            _ => {}
        }
    }
    Some(out)
}

/// Whitespace reflow of the quote's paragraph: some spaces become newlines or double spaces,
/// some line breaks become spaces. Rejected unless the normalised page text is unchanged.
fn reflow(q: &Quote, rng: &mut fastrand::Rng) -> Option<Applied> {
    if q.run.kind != BlockType::Prose {
        return None;
    }
    let md = q.p.md.as_str();
    let pt = &q.p.an.pt;
    let bytes = pt.text.as_bytes();
    let mut edits = Vec::new();
    let segs: Vec<_> = pt
        .segments
        .iter()
        .filter(|s| s.block == q.run.block)
        .collect();
    for (k, s) in segs.iter().enumerate() {
        match s.kind {
            SegKind::Plain => {
                for p in s.text.clone() {
                    if bytes[p] != b' ' || p == s.text.start || p + 1 >= s.text.end {
                        continue;
                    }
                    let (prev, next) = (bytes[p - 1], bytes[p + 1]);
                    if prev.is_ascii_whitespace() || next.is_ascii_whitespace() {
                        continue;
                    }
                    let at = s.src.start + (p - s.text.start);
                    let r = rng.f64();
                    if r < 0.3 && next.is_ascii_alphabetic() && prev != b'\\' {
                        edits.push(Edit::new(at..at + 1, "\n"));
                    } else if r < 0.55 {
                        edits.push(Edit::new(at..at + 1, "  "));
                    }
                }
            }
            SegKind::Atomic if &pt.text[s.text.clone()] == "\n" && &md[s.src.clone()] == "\n" => {
                let gap_ok = segs.get(k + 1).is_some_and(|n| {
                    n.src.start >= s.src.end
                        && md[s.src.end..n.src.start]
                            .chars()
                            .all(|c| c == ' ' || c == '\t')
                });
                if gap_ok && rng.bool() {
                    edits.push(Edit::new(s.src.clone(), " "));
                }
            }
            _ => {}
        }
    }
    if edits.is_empty() {
        return None;
    }
    let ed = apply(md, edits)?;
    let npt = page_text(&ed.md, &TextOptions::default());
    if normalize(&npt.text).chars != normalize(&pt.text).chars {
        return None;
    }
    let truth = ed.map_range(&q.src);
    Some((ed.md, Some(truth), None))
}

/// The top-level unit holding the quote.
fn unit_of(q: &Quote) -> Option<usize> {
    q.p.units
        .iter()
        .position(|u| u.src.start <= q.src.start && q.src.end <= u.src.end)
}

/// The alphabetic core of a word (surrounding punctuation stripped) when it can be edited at
/// exact Markdown bytes.
fn core(pt: &PageText, w: &Range<usize>) -> Option<Range<usize>> {
    let s = &pt.text[w.clone()];
    let lead = s.len() - s.trim_start_matches('(').len();
    let t = s[lead..].trim_end_matches(['.', ',', ';', ':', '!', '?', ')']);
    let r = w.start + lead..w.start + lead + t.len();
    (t.len() >= 2
        && t.bytes().all(|b| b.is_ascii_alphabetic())
        && !matches!(t, "main" | "fn")
        && exact_segment(pt, &r).is_some())
    .then_some(r)
}

/// A word whose removal or replacement cannot change Markdown structure (prose) or the
/// playground wrapper (code), and that is a word rather than a long token.
fn safe_word(t: &str, code: bool) -> bool {
    let extra = if code {
        ".,;:!?'-_=+*&<>()[]{}\""
    } else {
        ".,;:!?'-"
    };
    t.chars().count() <= 12
        && t.chars().all(|c| c.is_alphanumeric() || extra.contains(c))
        && !t.contains("main")
        && !t.starts_with('#')
}

/// Whether raw text byte `p` lies in an `fn main` (editing it would toggle mdBook's hidden
/// `fn main` wrapper and change the text far from the edit).
fn near_fn_main(text: &str, p: usize) -> bool {
    let lo = text.floor_char_boundary(p.saturating_sub(8));
    let hi = text.ceil_char_boundary((p + 8).min(text.len()));
    text[lo..hi]
        .match_indices("fn main")
        .any(|(i, _)| (lo + i..lo + i + 7).contains(&p))
}

/// A lookalike of the anchor exists on the original page: `prefix[-32:] + quote + suffix[..32]`
/// (normalised) also matches, with at most 25% edits, at a second place at least
/// max(quote/2, 8) chars away from another match (its own place; the two may overlap, as
/// adjacent list items or table rows do). No anchor can tell such places apart once the
/// original is edited or deleted.
fn lookalike(p: &PageData, c: &Captured) -> bool {
    use notabene_anchoring::myers;
    let w: Vec<u32> = window_norm(c).chars().map(|c| c as u32).collect();
    let m = normalize(&c.quote).chars.len();
    let k = w.len() / 4;
    let hits = myers::search(&w, &p.symbols, k);
    let ends: Vec<usize> = myers::best_ends(&hits, 2, 1000)
        .into_iter()
        .map(|(end, _)| end)
        .collect();
    match (ends.iter().min(), ends.iter().max()) {
        (Some(lo), Some(hi)) => hi - lo >= (m / 2).max(8),
        _ => false,
    }
}

/// Normalised `prefix[-32:] + quote + suffix[..32]`.
fn window_norm(c: &Captured) -> String {
    let p: String = {
        let v: Vec<char> = c.prefix.chars().collect();
        v[v.len().saturating_sub(32)..].iter().collect()
    };
    let s: String = c.suffix.chars().take(32).collect();
    normalize(&format!("{p}{}{s}", c.quote)).as_string()
}

fn pick_distinct(rng: &mut fastrand::Rng, n: usize, k: usize) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..n).collect();
    rng.shuffle(&mut idx);
    idx.truncate(k);
    idx.sort_unstable();
    idx
}
