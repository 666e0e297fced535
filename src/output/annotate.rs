//! The mdBook preprocessor adaptor: at `mdbook build`, anchors every comment of the store in its
//! chapter, injects markers, a per-chapter data island and the book-wide summary (for the `html`
//! renderer), reports on stderr, fails the build when `fail-on` says so, and appends the generated
//! views.
//!
//! The work is one pipeline of stages, each with a typed output, read top to bottom in
//! `annotate` (as mdBook's `MDBook::build` reads): [`read_store`] → [`StoreSnapshot`],
//! [`anchor`] → [`Anchored`], [`inject()`] → [`Injected`], [`views::generate`] →
//! [`views::Views`], then the book is written. Each stage computes from its inputs alone; what a
//! build takes from earlier builds of its book (in a long-lived process, `serve`, the last build:
//! [`Reuse`]; else the memo) is `output::reuse`'s, handed to the stages as one [`reuse::Build`].
//!
//! mdBook runs preprocessors once per renderer: everything here is deterministic, and only the
//! `html` run does any work; other renderers get the book unchanged. The protocol on stdin/stdout
//! is the binary's (`src/bin/mdbook-notabene.rs`); this is the work on one book.
//!
//! Owns: the pipeline and its stages' types. Calls: `model::resolve`, `output::inject`,
//! `output::views`, `output::reuse`, `output::assets`.

use crate::Result;
use crate::model::book::git::StateAsked;
use crate::model::book::{Book, PageIds};
use crate::model::resolve::{self, BookAnchors, report};
use crate::output::inject::{self, island};
use crate::output::reuse::replay;
use crate::output::reuse::{self, InjectedChapter, InjectionInput};
use crate::output::views;
use crate::util::memo::{Digest, Memo};
use mdbook_preprocessor::book::Book as MdBook;
use mdbook_preprocessor::{Preprocessor, PreprocessorContext};
use notabene_core::say_err;
use notabene_store::Comment;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use reuse::{Reuse, ReuseCounts};

/// Renderers the preprocessor runs for.
pub fn supports(renderer: &str) -> bool {
    matches!(renderer, "html" | "notabene")
}

/// The preprocessor, for in-process use with `mdbook-driver` (`MDBook::with_preprocessor`).
#[derive(Default)]
pub struct Notabene {
    /// What the builds of a long-lived process keep for the next one (`serve`).
    reuse: Option<Arc<Reuse>>,
}

impl Notabene {
    /// The preprocessor of a long-lived process: each build takes from `reuse` what the last
    /// one computed for chapters that did not change, and keeps its own there.
    pub fn reusing(reuse: Arc<Reuse>) -> Notabene {
        Notabene { reuse: Some(reuse) }
    }
}

impl Preprocessor for Notabene {
    fn name(&self) -> &str {
        "notabene"
    }

    fn run(
        &self,
        ctx: &PreprocessorContext,
        book: MdBook,
    ) -> mdbook_preprocessor::errors::Result<MdBook> {
        annotate(ctx, book, None, self.reuse.as_deref())
            .map_err(|e| mdbook_preprocessor::errors::Error::msg(e.to_string()))
    }

    fn supports_renderer(&self, renderer: &str) -> mdbook_preprocessor::errors::Result<bool> {
        Ok(supports(renderer))
    }
}

/// The store's comments read ahead of the book: the binary starts reading them from the book
/// root's `book.toml` while mdBook is still writing the book to its stdin ([`prefetch`]).
pub struct Prefetched {
    /// The store that was read.
    pub store: PathBuf,
    /// Its comments.
    pub comments: Vec<Comment>,
    /// The warnings reading it gave, printed when the run uses these comments.
    pub warnings: Vec<String>,
    /// The store's cache as the read left it, to be written (the binary writes it while the
    /// build runs; a run that uses these comments writes it first, when it is still here).
    pub cache_update: Option<notabene_store::CacheUpdate>,
    /// The book root it was read for.
    pub root: PathBuf,
    /// That root's repository, looked up.
    pub repo: crate::model::book::Repo,
    /// That repository's state, asked while the store was read (`None` once the build finds
    /// the read-ahead was for another root).
    pub git_state: Option<StateAsked>,
    /// The build's memo of that root, opened while the store was read (`None` once the build
    /// finds the read-ahead was for another root).
    pub memo: Option<Memo>,
    /// The fingerprint of what the build reads beside mdBook's input, taken before the store's
    /// files were read (`None`: no store, or a file modified just now) ([`replay`]); what git's
    /// diffs depend on is added once the build is done ([`replay::complete`], with what
    /// `repo` kept).
    pub fingerprint: Option<Digest>,
}

/// Reads the store of the book at `root` as its `book.toml` (and `MDBOOK_*` variables) place
/// it, before the binary knows which renderer the run is for (it is used by the `html` run
/// only; its warnings are kept for that run to print): `None` when there is nothing to read
/// ahead (no `book.toml`, the plugin disabled, an unreadable configuration — the run proper
/// reports those).
///
/// It also decides whether the run is a replay of the last build ([`replay`]): `input` brings
/// the digest of mdBook's input once the binary has read it whole, and `heard` is told, once,
/// the record to replay — when that digest and the fingerprint of everything else the build
/// reads (taken once the store is listed) are the record's; the read then goes no further, and
/// the binary ends the run. Otherwise `heard` is told `None` (at once when there is no record
/// to compare), and the read goes on; it is not told at all when there is no store to list (or
/// it is of a newer contract, which the run proper reports).
pub fn prefetch(
    root: &Path,
    input: std::sync::mpsc::Receiver<Digest>,
    heard: impl FnOnce(Option<replay::Recorded>),
) -> Option<Prefetched> {
    let text = std::fs::read_to_string(root.join("book.toml")).ok()?;
    let mut config: mdbook_preprocessor::config::Config = text.parse().ok()?;
    config.update_from_env().ok()?;
    let cfg = Book::from_mdbook(root, config).ok()?;
    if !cfg.config.enable {
        return None;
    }
    let store = cfg.store();
    // The repository is looked up here, once (what is handed on shares the answer), and its
    // state (two `git` processes, for the follow memo's key) asked meanwhile.
    let repo = cfg.repo();
    repo.root();
    let mut git_state = Some(repo.ask_state());
    // Every build with a cache directory keeps a record (a timed one too); a timed build is
    // never a replay.
    let recording = notabene_core::disk::cache_dir().is_some();
    let timed = std::env::var_os(replay::TIMINGS_ENV).is_some();
    let head = (recording && !timed)
        .then(|| replay::RecordHead::of(root))
        .flatten();
    // The state git's diffs are computed under is asked for only when the last build asked
    // git for diffs (its record says so); this build keeps it if it asks for any.
    let mut diff_state = head.filter(|h| h.diffs).map(|_| repo.ask_diff_state());
    let repo = if recording {
        repo.clone().keeping_diff_state()
    } else {
        repo.clone()
    };
    let mut heard = Some(heard);
    if head.is_none()
        && let Some(heard) = heard.take()
    {
        heard(None);
    }
    // With a record of a build of the same input, the store's cache is not read until the
    // listing has said the run is no replay (a replay leaves both cores to the listing): the
    // thread that reads it hears the input's digest (passed on from the binary as it comes)
    // and the listing's word.
    let input_digest = std::sync::Arc::new(std::sync::OnceLock::new());
    let (event, events) = std::sync::mpsc::channel::<Option<bool>>();
    if head.is_some() {
        let (event, input_digest) = (event.clone(), std::sync::Arc::clone(&input_digest));
        // Not joined: the read-ahead may end before the binary has the whole input.
        std::thread::spawn(move || {
            let got = input.recv().ok();
            let same = head.is_some_and(|h| got == Some(h.input));
            let _ = input_digest.set(got);
            let _ = event.send(Some(same));
        });
    }
    let events = std::sync::Mutex::new(events);
    let before_cache = || {
        if head.is_none() {
            return;
        }
        let Ok(events) = events.lock() else { return };
        // `Some(true)`: the input is the record's (wait for the listing); `Some(false)`: it is
        // not; `None`: the listing says no replay; every sender gone: no word will come.
        while let Ok(Some(true)) = events.recv() {}
    };
    let mut fingerprint = None;
    let ((comments, warnings, cache_update), memo) = std::thread::scope(|scope| {
        let mut memo = None;
        let read = {
            let mut seen = |listing: Option<&notabene_store::ListingState<'_>>| {
                // Unless the run is a replay, the cache's reader hears so when this returns
                // (or unwinds).
                let no_replay = SaysWhenDropped(&event);
                // A first build (no record of an earlier one: no memo of following's
                // decisions either) follows its comments from scratch, if any need it: git
                // walks the store's history while the build goes on.
                if head.is_none() && listing.is_some() {
                    repo.ask_store_history(store.root());
                }
                let state = git_state.as_mut().and_then(|s| s.wait());
                fingerprint = listing
                    .filter(|_| recording)
                    .and_then(|l| replay::fingerprint(&cfg, &text, l, state));
                let diffs = diff_state.as_mut().map(|s| s.wait());
                let whole = fingerprint.map(|f| replay::complete(f, diffs));
                let found = head
                    .filter(|h| whole == Some(h.fingerprint))
                    .filter(|h| *input_digest.wait() == Some(h.input))
                    .and_then(|h| replay::Recorded::find(root, &h));
                let replayed = found.is_some();
                if let Some(heard) = heard.take() {
                    heard(found);
                }
                if replayed {
                    // The run is the replay's now: the binary writes it and ends the process.
                    std::mem::forget(no_replay);
                    loop {
                        std::thread::park();
                    }
                }
                drop(no_replay);
                // The memo (a file of megabytes for a big book) is read while the store's
                // files are.
                memo = Some(scope.spawn(|| Memo::open(root)));
            };
            // Without a record, nothing is decided on the listing before the files are read
            // (the record kept is keyed on it, with the keys the reads took).
            resolve::chapters::read_comments_for_build_seeing(
                &store,
                &cfg.config.space,
                &before_cache,
                &mut seen,
                head.is_some(),
            )
        };
        let memo = match memo {
            Some(handle) => handle.join().ok(),
            None => Some(Memo::open(root)),
        };
        (read, memo)
    });
    Some(Prefetched {
        store: store.root().to_path_buf(),
        comments,
        warnings,
        cache_update,
        root: root.to_path_buf(),
        repo: repo.clone(),
        git_state,
        memo,
        fingerprint,
    })
}

/// Tells the store cache's reader, when dropped, that the listing found no replay.
struct SaysWhenDropped<'a>(&'a std::sync::mpsc::Sender<Option<bool>>);

impl Drop for SaysWhenDropped<'_> {
    fn drop(&mut self) {
        let _ = self.0.send(None);
    }
}

/// The fingerprint of the read-ahead `prefetched` when it is the one of the run on `ctx` (the
/// same root and store, a run that reads the store): what the run's record is kept under
/// ([`replay::Recorded::keep`]).
pub fn fingerprint_of(prefetched: &Prefetched, ctx: &PreprocessorContext) -> Option<Digest> {
    let cfg = Book::from_mdbook(&ctx.root, ctx.config.clone()).ok()?;
    let same = works_on(&cfg, &ctx.renderer)
        && same_dir(&prefetched.root, &cfg.root)
        && same_dir(&prefetched.store, cfg.store().root());
    prefetched.fingerprint.filter(|_| same)
}

/// Whether the run on `ctx` reads the store: the plugin enabled, for the `html` renderer (the
/// binary waits for its read-ahead only then: a disabled plugin, or a run for another renderer,
/// hands the book back at once).
pub fn reads_store(ctx: &PreprocessorContext) -> bool {
    Book::from_mdbook(&ctx.root, ctx.config.clone()).is_ok_and(|cfg| works_on(&cfg, &ctx.renderer))
}

/// Whether a run for `renderer` does any work on book `cfg`: the plugin enabled, and the
/// `html` renderer. Other renderers (`notabene` writes comments.json from the book it is
/// handed, with its own anchoring) get the book unchanged: no work to repeat.
fn works_on(cfg: &Book, renderer: &str) -> bool {
    cfg.config.enable && renderer == "html"
}

/// Whether `a` and `b` name the same directory (both missing: the same path).
fn same_dir(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// The preprocessor's work on one book.
pub fn run(ctx: &PreprocessorContext, book: MdBook) -> Result<MdBook> {
    run_with(ctx, book, None)
}

/// [`run`], with the comments read ahead when they come from the store this run would read.
pub fn run_with(
    ctx: &PreprocessorContext,
    book: MdBook,
    prefetched: Option<Prefetched>,
) -> Result<MdBook> {
    annotate(ctx, book, prefetched, None)
}

/// The store's comments, as a build reads them.
pub struct StoreSnapshot {
    /// The comments with an id, in store order (resolved ones thin).
    pub comments: Vec<Comment>,
    /// The repository's state, when it was asked with the store's read.
    pub git_state: Option<StateAsked>,
}

/// Every comment anchored in the book.
pub struct Anchored {
    /// The anchoring.
    pub anchors: BookAnchors,
    /// The book's page ids.
    pub ids: PageIds,
}

/// Every chapter's new Markdown: markers, its data island, the book-wide summary.
pub struct Injected {
    /// By chapter, in the anchoring's order: the new content and what happened.
    chapters: Vec<(String, inject::InjectOutcome)>,
}

/// The build of the book of `ctx` as the preprocessor runs it, stage by stage; with `session`,
/// what the last build of this process kept of the book is reused.
fn annotate(
    ctx: &PreprocessorContext,
    mut book: MdBook,
    prefetched: Option<Prefetched>,
    session: Option<&Reuse>,
) -> Result<MdBook> {
    if let Some(s) = session {
        s.begin();
    }
    let mut cfg = Book::from_mdbook(&ctx.root, ctx.config.clone())?;
    if !works_on(&cfg, &ctx.renderer) {
        return Ok(book);
    }
    // The repository and memo the read-ahead looked up, when it was for this root; else they,
    // and what it asked of git, are not this book's.
    let mut prefetched = prefetched;
    let mut memo = None;
    if let Some(p) = prefetched.as_mut() {
        if same_dir(&p.root, &cfg.root) {
            cfg = cfg.with_repo(p.repo.clone());
            memo = p.memo.take();
        } else {
            p.git_state = None;
        }
    }
    crate::model::book::warn_config(&cfg);
    let t0 = std::time::Instant::now();
    let earlier = reuse::Build::begin(session, &ctx.root, memo);
    let snapshot = read_store(&cfg, prefetched, &earlier);
    let t1 = std::time::Instant::now();
    let anchored = anchor(&cfg, &book, snapshot, &earlier)?;
    crate::output::assets::check_installed(&cfg)?;
    // A build that `fail-on` fails stops here, after its report; otherwise the report is
    // written beside the generated pages (below).
    let reported = report::fails(&anchored.anchors, &cfg);
    if reported {
        report::report(&anchored.anchors, &anchored.ids, &cfg)?;
    }
    let t2 = std::time::Instant::now();
    let injected = inject(&anchored, &cfg, &earlier)?;
    let t3 = std::time::Instant::now();
    // The report (one thread, written to stderr at once, `fail-on` applied) while the
    // generated pages are built and the memo kept: they only read the anchoring.
    let (views, report_result) = std::thread::scope(|scope| {
        let Anchored { anchors, ids } = &anchored;
        let report = (!reported).then(|| scope.spawn(|| report::report(anchors, ids, &cfg)));
        let views = cfg
            .config
            .generated_pages
            .then(|| views::generate(&book, anchors, ids, &cfg, earlier.memo()));
        earlier.finish();
        (views, report.map(|r| r.join()))
    });
    match report_result {
        Some(Ok(result)) => result?,
        Some(Err(panic)) => std::panic::resume_unwind(panic),
        None => {}
    }
    let dropped = injected.write_into(&mut book, &anchored);
    if let Some(views) = views {
        views.append_to(&mut book);
    }
    for page in dropped {
        say_err!(
            "notabene: warning: inline markers on {page} would have changed its text; they are left to the reader client"
        );
    }
    let t4 = std::time::Instant::now();
    if std::env::var_os("NOTABENE_TIMINGS").is_some() {
        let ms = |a: std::time::Instant, b: std::time::Instant| (b - a).as_secs_f64() * 1e3;
        let (hits, misses) = earlier.memo_counts();
        notabene_core::term::err_line_unrecorded(&format!(
            "notabene: timings (ms): reading the store {:.1}, anchoring {:.1}, markers and islands {:.1}, report and generated pages {:.1}; memo: {hits} of {} results reused",
            ms(t0, t1),
            ms(t1, t2),
            ms(t2, t3),
            ms(t3, t4),
            hits + misses
        ));
    }
    crate::util::background::drop_in_background(anchored);
    Ok(book)
}

/// The first stage: the store's comments (those read ahead when they come from this build's
/// store, with the repository state asked then, which `annotate` keeps only when the read-ahead
/// was for this book's root), its warnings printed.
pub fn read_store(
    cfg: &Book,
    prefetched: Option<Prefetched>,
    earlier: &reuse::Build<'_>,
) -> StoreSnapshot {
    let store = cfg.store();
    let (comments, warnings, git_state) = match prefetched {
        Some(p) if same_dir(&p.store, store.root()) => {
            if let Some(update) = p.cache_update {
                update.write();
            }
            (p.comments, p.warnings, p.git_state)
        }
        _ => {
            let (comments, warnings) = resolve::chapters::read_comments_for_build_after(
                &store,
                &cfg.config.space,
                earlier.recent_store(),
            );
            (comments, warnings, None)
        }
    };
    for w in warnings {
        say_err!("{w}");
    }
    StoreSnapshot {
        comments,
        git_state,
    }
}

/// The second stage: every comment of `snapshot` anchored in `book` (the live ones looked for),
/// and followed where it moved.
pub fn anchor(
    cfg: &Book,
    book: &MdBook,
    snapshot: StoreSnapshot,
    earlier: &reuse::Build<'_>,
) -> Result<Anchored> {
    let lookups = earlier.anchoring();
    let (anchors, ids) = resolve::chapters::anchor_after(
        cfg,
        book,
        snapshot.comments,
        resolve::Which::Live,
        &lookups,
        snapshot.git_state,
    )?;
    lookups.keep();
    earlier.keep_page_texts(&anchors);
    Ok(Anchored { anchors, ids })
}

/// The third stage: every chapter's new content (markers, its data island, the book-wide
/// summary), computed in parallel.
pub fn inject(anchored: &Anchored, cfg: &Book, earlier: &reuse::Build<'_>) -> Result<Injected> {
    let anchors = &anchored.anchors;
    let options = crate::model::book::text_options(&cfg.mdbook)?;
    let threads = notabene_core::par::default_threads();
    let summary = island::summary_script(anchors, &cfg.config);
    let lookups = earlier.injecting(&options, cfg.config.compress_above);
    let jobs: Vec<usize> = (0..anchors.chapters.len()).collect();
    let results = notabene_core::par::par_map(&jobs, threads, |&i| {
        let chapter = &anchors.chapters[i];
        let (injection, json) = island::injection_for(anchors, i, &cfg.config);
        let content = anchors.content_digest(i);
        let input = InjectionInput {
            page: &chapter.page,
            source: &chapter.source,
            content: &content,
            injection: &injection,
            island: &json,
        };
        let InjectedChapter { out, outcome } = lookups.chapter(&input, || {
            let mut injection = injection.clone();
            injection.island = Some(island::island_script(&chapter.page, &json, &cfg.config));
            let (out, outcome) =
                inject::inject(&chapter.content, &anchors.texts[i], &injection, &options);
            InjectedChapter { out, outcome }
        });
        (out + &summary + "\n", outcome)
    });
    lookups.keep();
    Ok(Injected { chapters: results })
}

impl Injected {
    /// Puts every chapter's new content into `book` (anchored as `anchored`); returns the
    /// pages whose inline markers were dropped.
    pub fn write_into(self, book: &mut MdBook, anchored: &Anchored) -> Vec<String> {
        let Anchored { anchors, ids } = anchored;
        let by_source: BTreeMap<&str, usize> = anchors
            .chapters
            .iter()
            .enumerate()
            .map(|(i, c)| (c.source.as_str(), i))
            .collect();
        let mut results: Vec<Option<(String, inject::InjectOutcome)>> =
            self.chapters.into_iter().map(Some).collect();
        let mut dropped = Vec::new();
        book.for_each_chapter_mut(|ch| {
            let Some(sp) = &ch.source_path else { return };
            let key = resolve::chapters::source_key(ids, sp);
            let Some(&i) = by_source.get(key.as_str()) else {
                return;
            };
            let Some((content, outcome)) = results[i].take() else {
                return;
            };
            if outcome.marks_dropped {
                dropped.push(anchors.chapters[i].page.clone());
            }
            ch.content = content;
        });
        dropped
    }
}
