//! Many books in one process: the builds of different books, and of two checkouts of one book
//! with different comments in their stores, run at once on threads of one process (as the review
//! server will serve many branches of a book), each through the entry points `serve`'s builds
//! (`engine::build_into`, `engine::rebuild_into`, with a `Kept` of its own) and the preprocessor
//! (`annotate::run`, and the embedded engine's `engine::build`) use. Every byte each writes is the
//! byte a build of that book alone writes: no state of one book leaks into another's build.

use crate::rebuild_reuse::{assert_same, pages};
use crate::support::common;
use crate::support::common::{book_example, copy_into_repo, stage};
use crate::support::preprocess::files;
use mdbook_driver::config::Config;
use mdbook_notabene::output::engine::{self, Kept, RebuildChange, Rebuilt};
use mdbook_preprocessor::PreprocessorContext;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A small book of its own, with the reader client, the `notabene` renderer (`comments.json`)
/// and two comments.
fn small_book(tmp: &Path) -> PathBuf {
    let root = tmp.join("small");
    for (rel, text) in [
        (
            "book.toml",
            "[book]\ntitle = \"Small\"\n\n[preprocessor.notabene]\n\n[output.html]\nadditional-js = [\"theme/notabene.js\"]\nadditional-css = [\"theme/notabene.css\"]\n\n[output.notabene]\n",
        ),
        (
            "src/SUMMARY.md",
            "# Summary\n\n- [Guide](guide.md)\n- [Notes](notes.md)\n",
        ),
        (
            "src/guide.md",
            "# Guide\n\nPlain prose sentence here.\n\nSome *emphasised words* here.\n",
        ),
        (
            "src/notes.md",
            "# Notes\n\nA second chapter with a sentence to quote.\n",
        ),
    ] {
        common::write(&root.join(rel), text);
    }
    common::git_init(&root);
    common::run(&root, &["init", "--no-agents-md"]).ok();
    common::refresh_client(&root);
    common::suggest(&root, "src/guide", "Plain prose", "Simple prose");
    common::suggest(&root, "src/notes", "sentence to quote", "line to quote");
    root
}

/// The comment files of the store of the book at `root`, sorted.
fn comment_files(root: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = common::files_under(&root.join(".notabene"))
        .into_iter()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("c_"))
        })
        .collect();
    found.sort();
    found
}

/// A new comment in the store of `root`, a copy of its first one under id `id`; returns its file.
fn add_comment(root: &Path, id: &str) -> PathBuf {
    let model = comment_files(root).into_iter().next().expect("a comment");
    let old = model.file_stem().unwrap().to_string_lossy().into_owned();
    let new = model.with_file_name(format!("{id}.json"));
    common::write(&new, &common::read(&model).replace(&old, id));
    new
}

/// The books: two different ones, and two checkouts of one (the second with a comment fewer and
/// one more than the first).
fn books(tmp: &Path) -> Vec<PathBuf> {
    let example = stage(&book_example(), &tmp.join("example"), "book-example");
    let small = small_book(tmp);
    let first = stage(&book_example(), &tmp.join("checkout-1"), "book-example");
    let second = copy_into_repo(&book_example(), &tmp.join("checkout-2"), "book-example");
    common::refresh_client(&second);
    let gone = comment_files(&second).pop().expect("a comment");
    std::fs::remove_file(gone).unwrap();
    add_comment(&second, "c_mwzz00000009");
    vec![example, small, first, second]
}

/// A renderer named `html` that renders nothing (to preprocess as mdBook does for html).
struct HtmlProbe;

impl mdbook_renderer::Renderer for HtmlProbe {
    fn name(&self) -> &str {
        "html"
    }
    fn render(&self, _: &mdbook_renderer::RenderContext) -> mdbook_renderer::errors::Result<()> {
        Ok(())
    }
}

/// The book the preprocessor's library entry (`annotate::run`) gives for `root`, as JSON.
fn preprocessed(root: &Path) -> String {
    let config: Config = common::read(&root.join("book.toml")).parse().unwrap();
    let mut builtin_only = config.clone();
    builtin_only
        .set("preprocessor", serde_json::json!({}))
        .unwrap();
    let md = mdbook_driver::MDBook::load_with_config(root, builtin_only).unwrap();
    let (book, _) = md.preprocess_book(&HtmlProbe).unwrap();
    let ctx = PreprocessorContext::new(root.to_path_buf(), config, "html".into());
    let out = mdbook_notabene::output::annotate::run(&ctx, book).unwrap();
    serde_json::to_string(&out).unwrap()
}

/// What one round of builds of a book wrote.
#[derive(PartialEq, Eq)]
struct Written {
    /// The site `serve`'s builds wrote.
    served: BTreeMap<String, Vec<u8>>,
    /// The site the embedded engine's build wrote.
    built: BTreeMap<String, Vec<u8>>,
    /// The preprocessor's book.
    book: String,
}

/// The first round: `serve`'s first build (with `kept`), a build, the preprocessor's run.
fn first_round(root: &Path, out: &Path, kept: &Kept) -> Written {
    engine::build_into(root, &out.join("served"), kept).unwrap();
    engine::build(root, Some(&out.join("built"))).unwrap();
    Written {
        served: files(&out.join("served")),
        built: files(&out.join("built")),
        book: preprocessed(root),
    }
}

/// The second round, after a new comment in `changed`: `serve`'s rebuild of the pages that
/// changed, then its whole build (with the first round's `kept`), a build, the preprocessor's
/// run. The served site is the whole build's; the pages' rebuild's pages are returned apart.
fn second_round(
    root: &Path,
    out: &Path,
    kept: &Kept,
    changed: &Path,
) -> (Written, BTreeMap<String, Vec<u8>>) {
    let files_changed: BTreeSet<PathBuf> = [changed.to_path_buf()].into();
    let none = BTreeSet::new();
    engine::rebuild_into(
        root,
        (
            &out.join("served"),
            &out.join("pages"),
            &out.join("scratch"),
        ),
        kept,
        &RebuildChange {
            files: Some(&files_changed),
            touched: &none,
        },
    )
    .unwrap();
    let (_, whole) = engine::rebuild_into(
        root,
        (&out.join("pages"), &out.join("whole"), &out.join("scratch")),
        kept,
        &RebuildChange {
            files: None,
            touched: &none,
        },
    )
    .unwrap();
    assert_eq!(whole, Rebuilt::Whole);
    let pages = pages(&out.join("pages"));
    engine::build(root, Some(&out.join("built"))).unwrap();
    (
        Written {
            served: files(&out.join("whole")),
            built: files(&out.join("built")),
            book: preprocessed(root),
        },
        pages,
    )
}

/// Asserts that what a round of builds at once wrote is what a round of each book alone wrote.
#[track_caller]
fn assert_written(together: &Written, alone: &Written, what: &str) {
    assert_same(
        &together.served,
        &alone.served,
        &format!("{what}: serve's site"),
    );
    assert_same(&together.built, &alone.built, &format!("{what}: the build"));
    assert!(
        together.book == alone.book,
        "{what}: the preprocessor's book differs"
    );
}

/// Runs `work` on every book at once, one thread each; returns what each gave, in order.
fn at_once<T: Send>(books: &[PathBuf], work: impl Fn(usize, &Path) -> T + Sync) -> Vec<T> {
    std::thread::scope(|s| {
        let handles: Vec<_> = books
            .iter()
            .enumerate()
            .map(|(i, root)| {
                let work = &work;
                s.spawn(move || work(i, root))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

#[test]
fn books_built_at_once_in_one_process_write_what_each_alone_writes() {
    let tmp = common::tempdir();
    let books = books(tmp.path());
    let out = |i: usize, round: &str| tmp.path().join("out").join(format!("{i}-{round}"));
    let kept: Vec<Kept> = books.iter().map(|_| Kept::default()).collect();

    // Every book's first builds at once, then each alone (sequentially, with a `Kept` of its
    // own, as a process serving only it).
    let together = at_once(&books, |i, root| {
        first_round(root, &out(i, "together-1"), &kept[i])
    });
    for (i, root) in books.iter().enumerate() {
        let alone = first_round(root, &out(i, "alone-1"), &Kept::default());
        assert_written(&together[i], &alone, &format!("book {i}, first builds"));
    }

    // A new comment in every store; every book's rebuilds at once, then each alone.
    let changed: Vec<PathBuf> = books
        .iter()
        .map(|root| add_comment(root, "c_mwzz00000001"))
        .collect();
    let together = at_once(&books, |i, root| {
        second_round(root, &out(i, "together-1"), &kept[i], &changed[i])
    });
    for (i, root) in books.iter().enumerate() {
        let alone_kept = Kept::default();
        first_round(root, &out(i, "alone-2"), &alone_kept);
        let (alone, _) = second_round(root, &out(i, "alone-2"), &alone_kept, &changed[i]);
        let what = format!("book {i}, rebuilds after a new comment");
        assert_written(&together[i].0, &alone, &what);
        // The rebuild of pages shows what the whole build shows (but for print.html and the
        // search index, which the whole build after it gives).
        assert_same(
            &together[i].1,
            &pages(&out(i, "alone-2").join("whole")),
            &what,
        );
    }
    // The two checkouts of one book differ (their stores do), and so do their sites.
    assert!(together[2].0.served != together[3].0.served);
}
