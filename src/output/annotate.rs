//! The mdBook preprocessor adaptor: at `mdbook build`, anchors every comment of the store in its
//! chapter, injects markers, a per-chapter data island and the book-wide summary (for the `html`
//! renderer), reports on stderr, fails the build when `fail-on` says so, and appends the generated
//! views. In a long-lived process (`serve`) a build takes from the last one what did not change
//! ([`Reuse`]).
//!
//! mdBook runs preprocessors once per renderer: everything here is deterministic, and only the
//! `html` run does any work; other renderers get the book unchanged. The protocol on stdin/stdout
//! is the binary's (`src/bin/mdbook-notabene.rs`); this is the work on one book.

use crate::Result;
use crate::model::book::Book;
use crate::model::resolve::{self, report};
use crate::output::inject::{self, island};
use crate::util::last_build::Keep;
use crate::util::memo::{Key, Memo};
use mdbook_preprocessor::book::Book as MdBook;
use mdbook_preprocessor::{Preprocessor, PreprocessorContext};
use notabene_anchoring::text::TextOptions;
use notabene_core::say_err;
use notabene_store::Comment;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod reuse;

use reuse::InjectedChapter;
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
        run_reusing(ctx, book, None, self.reuse.as_deref())
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
}

/// Reads the store of the book at `root` as its `book.toml` (and `MDBOOK_*` variables) place
/// it, before the binary knows which renderer the run is for (it is used by the `html` run
/// only; its warnings are kept for that run to print): `None` when there is nothing to read
/// ahead (no `book.toml`, the plugin disabled, an unreadable configuration — the run proper
/// reports those).
pub fn prefetch(root: &Path) -> Option<Prefetched> {
    let text = std::fs::read_to_string(root.join("book.toml")).ok()?;
    let mut config: mdbook_preprocessor::config::Config = text.parse().ok()?;
    config.update_from_env().ok()?;
    let cfg = Book::from_mdbook(root, config).ok()?;
    if !cfg.config.enable {
        return None;
    }
    let store = cfg.store();
    let (comments, warnings) =
        resolve::chapters::read_comments_for_build(&store, &cfg.config.space);
    Some(Prefetched {
        store: store.root().to_path_buf(),
        comments,
        warnings,
    })
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
    run_reusing(ctx, book, prefetched, None)
}

/// [`run_with`], taking from `reuse` what the last build kept of unchanged chapters and
/// keeping this build's there.
fn run_reusing(
    ctx: &PreprocessorContext,
    mut book: MdBook,
    prefetched: Option<Prefetched>,
    reuse: Option<&Reuse>,
) -> Result<MdBook> {
    if let Some(r) = reuse {
        r.begin();
    }
    let cfg = Book::from_mdbook(&ctx.root, ctx.config.clone())?;
    if !works_on(&cfg, &ctx.renderer) {
        return Ok(book);
    }
    crate::model::book::warn_config(&cfg);
    let t0 = std::time::Instant::now();
    let store = cfg.store();
    let comments = match prefetched {
        Some(p) if same_dir(&p.store, store.root()) => {
            for w in p.warnings {
                say_err!("{w}");
            }
            p.comments
        }
        _ => {
            let (comments, warnings) = match reuse {
                Some(r) => resolve::chapters::read_comments_for_build_recent(
                    &store,
                    &cfg.config.space,
                    &r.store,
                ),
                None => resolve::chapters::read_comments_for_build(&store, &cfg.config.space),
            };
            for w in warnings {
                say_err!("{w}");
            }
            comments
        }
    };
    let t1 = std::time::Instant::now();
    // A long-lived process keeps its last build in memory; a build of its own takes what the
    // builds before it kept on disk.
    let memo = match reuse {
        Some(r) => r.take_memo(),
        None => Memo::open(&ctx.root),
    };
    let earlier = resolve::Earlier {
        process: reuse.map(|r| &r.anchoring),
        memo: memo.is_on().then_some(&memo),
    };
    let (anchors, ids) =
        resolve::chapters::anchor_reusing(&cfg, &book, comments, resolve::Which::Live, earlier)?;
    crate::output::assets::check_installed(&cfg)?;
    // A build that `fail-on` fails stops here, after its report; otherwise the report is
    // written beside the generated pages (below).
    let reported = report::fails(&anchors, &cfg);
    if reported {
        report::report(&anchors, &ids, &cfg)?;
    }
    let t2 = std::time::Instant::now();
    let options = crate::model::book::text_options(&cfg.mdbook)?;
    let dropped = inject_chapters(&mut book, &anchors, &ids, &cfg, &options, reuse, &memo);
    let t3 = std::time::Instant::now();
    // The report (one thread, written to stderr at once, `fail-on` applied) while the
    // generated pages are built and the memo written back: they only read the anchoring.
    let report_result = std::thread::scope(|scope| {
        let report = (!reported).then(|| scope.spawn(|| report::report(&anchors, &ids, &cfg)));
        if cfg.config.generated_pages {
            crate::output::views::append_to(&mut book, &anchors, &ids, &cfg, &memo);
        }
        match reuse {
            Some(r) => r.keep_memo(memo.carried_over()),
            None => memo.write_back(),
        }
        report.map(|r| r.join())
    });
    match report_result {
        Some(Ok(result)) => result?,
        Some(Err(panic)) => std::panic::resume_unwind(panic),
        None => {}
    }
    for page in dropped {
        say_err!(
            "notabene: warning: inline markers on {page} would have changed its text; they are left to the reader client"
        );
    }
    let t4 = std::time::Instant::now();
    if std::env::var_os("NOTABENE_TIMINGS").is_some() {
        let ms = |a: std::time::Instant, b: std::time::Instant| (b - a).as_secs_f64() * 1e3;
        let (hits, misses) = memo.counts();
        say_err!(
            "notabene: timings (ms): reading the store {:.1}, anchoring {:.1}, markers and islands {:.1}, report and generated pages {:.1}; memo: {hits} of {} results reused",
            ms(t0, t1),
            ms(t1, t2),
            ms(t2, t3),
            ms(t3, t4),
            hits + misses
        );
    }
    drop_in_background(anchors);
    Ok(book)
}

/// Every chapter's new content (markers, its data island, the book-wide summary), computed in
/// parallel, taken from `reuse` (or `memo`) where the chapter did not change, and put back
/// into `book`. Returns the pages whose inline markers were dropped.
fn inject_chapters(
    book: &mut MdBook,
    anchors: &resolve::BookAnchors,
    ids: &crate::model::book::PageIds,
    cfg: &Book,
    options: &TextOptions,
    reuse: Option<&Reuse>,
    memo: &Memo,
) -> Vec<String> {
    let threads = notabene_core::par::default_threads();
    let summary = island::summary_script(anchors, &cfg.config);
    let settings = (options.clone(), cfg.config.compress_above);
    let kept = reuse
        .map(|r| r.take_injected(&settings))
        .unwrap_or_default();
    // Every chapter's new content, computed in parallel, then put back in book order.
    let jobs: Vec<usize> = (0..anchors.chapters.len()).collect();
    let results = notabene_core::par::par_map(&jobs, threads, |&i| {
        let chapter = &anchors.chapters[i];
        let (mut injection, json) = island::injection_for(anchors, i, &cfg.config);
        if let Some(k) = kept.get(&chapter.source)
            && k.matches(&chapter.content, &injection, &json)
        {
            return (k.out.clone(), k.outcome, Keep::Reused);
        }
        let digest = memo.is_on().then(|| {
            let mut k = Key::new("inject");
            k.debug(options)
                .u64(cfg.config.compress_above as u64)
                .str(&chapter.page)
                .digest(&anchors.content_digest(i))
                .debug(&injection)
                .str(&json);
            k.finish()
        });
        if let Some(d) = &digest
            && let Some((out, outcome)) = memo.get(d).and_then(decode_injected)
        {
            return (out, outcome, Keep::Nothing);
        }
        injection.island = Some(island::island_script(&chapter.page, &json, &cfg.config));
        let (out, outcome) =
            inject::inject(&chapter.content, &anchors.texts[i], &injection, options);
        if let Some(d) = digest {
            memo.put(d, encode_injected(&out, outcome));
        }
        let keep = match reuse {
            Some(_) => Keep::New(InjectedChapter::new(
                &chapter.content,
                injection,
                json,
                &out,
                outcome,
            )),
            None => Keep::Nothing,
        };
        (out, outcome, keep)
    });
    let mut left = Vec::with_capacity(results.len());
    let mut results: Vec<Option<(String, inject::Outcome)>> = results
        .into_iter()
        .enumerate()
        .map(|(i, (content, outcome, keep))| {
            left.push((anchors.chapters[i].source.as_str(), keep));
            Some((content + &summary + "\n", outcome))
        })
        .collect();
    if let Some(r) = reuse {
        r.keep_injected(settings, kept, left);
    }
    let by_source: BTreeMap<&str, usize> = anchors
        .chapters
        .iter()
        .enumerate()
        .map(|(i, c)| (c.source.as_str(), i))
        .collect();
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

/// A chapter's injected Markdown and outcome in bytes, for the memo: one flag byte, then the
/// Markdown.
fn encode_injected(out: &str, outcome: inject::Outcome) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(out.len() + 1);
    bytes.push(u8::from(outcome.marks_dropped));
    bytes.extend_from_slice(out.as_bytes());
    bytes
}

/// What [`encode_injected`] wrote into `bytes`, when it is that.
fn decode_injected(bytes: &[u8]) -> Option<(String, inject::Outcome)> {
    let (&flag, text) = bytes.split_first()?;
    let marks_dropped = match flag {
        0 => false,
        1 => true,
        _ => return None,
    };
    let out = String::from_utf8(text.to_vec()).ok()?;
    Some((out, inject::Outcome { marks_dropped }))
}

/// Frees `value` on a short-lived thread (inline if none can be started): a big book's
/// anchoring — thousands of parsed comments, a text model per chapter — takes milliseconds to
/// free, which mdBook can spend rendering instead.
fn drop_in_background<T: Send + 'static>(value: T) {
    // On failure the closure, and `value` with it, is dropped right here.
    let _ = std::thread::Builder::new()
        .name("notabene-free".into())
        .spawn(move || drop(value));
}
