//! The embedded mdBook engine: loads a book with our preprocessor (and, when the book has an
//! `[output.notabene]` table, our renderer) in process, builds it into a directory, and runs the
//! preprocess-only pass `notabene anchors` uses — the book as the HTML renderer would see it,
//! before our markers.
//!
//! `cli` and `serve` build books only through here. `pages` holds `serve`'s rebuilds that
//! render only the pages that changed.

use crate::model::book::{Book, PageIds};
use crate::model::resolve::{self, BookAnchors};
use crate::output::annotate::Notabene;
pub use crate::output::annotate::{Reuse, ReuseCounts};
use crate::{Error, Result};
use mdbook_driver::MDBook;
use mdbook_driver::book::BookItem;
use notabene_core::say_err;
use notabene_store::Store;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod inert;
mod log;
mod pages;

pub use crate::model::book::Trust;
pub use inert::content_marks;

pub use crate::output::reuse::Kept;
pub use pages::{RebuildChange, Rebuilt};

/// Loads the book at `root` with our preprocessor (and renderer) in process.
pub fn load(root: &Path) -> Result<MDBook> {
    load_with(root, Notabene::default())
}

/// [`load`], with the preprocessor given (one that keeps what builds can reuse).
fn load_with(root: &Path, preprocessor: Notabene) -> Result<MDBook> {
    load_trusting(root, preprocessor, &Trust::Full).map(|(md, _)| md)
}

/// [`load_with`], following the book's configuration as far as `trust` says; returns what was
/// skipped of it.
fn load_trusting(
    root: &Path,
    preprocessor: Notabene,
    trust: &Trust,
) -> Result<(MDBook, Vec<String>)> {
    log::install();
    let toml = root.join("book.toml");
    let cannot = |e: &dyn std::fmt::Display| {
        Error::new(format!("cannot load the book: {e:#} ({})", toml.display()))
    };
    let (loaded, skipped) = match trust {
        Trust::Full => (MDBook::load(root), Vec::new()),
        Trust::Inert { checkout } => {
            let mut config = mdbook_driver::config::Config::from_disk(&toml)
                .map_err(|e| cannot(&format!("{e:#}")))?;
            config
                .update_from_env()
                .map_err(|e| cannot(&format!("{e:#}")))?;
            let skipped = inert::neutralize(&mut config, &default_theme()?)?;
            inert::check_reads(root, &config, checkout)?;
            (MDBook::load_with_config(root, config), skipped)
        }
    };
    let mut md = loaded.map_err(|e| cannot(&format!("{e:#}")))?;
    if let Trust::Inert { checkout } = trust {
        // Registered under the name its `[preprocessor]` table has: mdBook runs this one.
        md.with_preprocessor(inert::InertIncludes {
            checkout: std::fs::canonicalize(checkout)
                .map_err(|e| Error::io("cannot read", checkout, e))?,
        });
        md.with_preprocessor(inert::InertMarks);
    }
    md.with_preprocessor(preprocessor);
    if md.config.contains_key("output.notabene") {
        md.with_renderer(crate::output::render::CommentsJson);
    }
    Ok((md, skipped))
}

/// An empty directory an inert build takes as its theme directory: mdBook's default theme.
fn default_theme() -> Result<PathBuf> {
    static DIR: std::sync::OnceLock<Option<tempfile::TempDir>> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        tempfile::Builder::new()
            .prefix("notabene-default-theme-")
            .tempdir()
            .ok()
    })
    .as_ref()
    .map(|d| d.path().to_path_buf())
    .ok_or_else(|| Error::new("cannot create an empty theme directory"))
}

/// Writes the reader client into a set-up book when its copy is missing or stale
/// ([`crate::output::assets::refresh`]), saying so on stderr. `build` and `serve` call it first.
pub fn refresh_client(root: &Path) -> Result<()> {
    refresh_client_trusting(root, &Trust::Full)
}

/// [`refresh_client`] for a book built with `trust`: an inert book's client files are written
/// only inside its checkout (a path of its `book.toml` cannot send them elsewhere).
pub fn refresh_client_trusting(root: &Path, trust: &Trust) -> Result<()> {
    let book = Book::load(root)?;
    if let Trust::Inert { checkout } = trust {
        inert::check_client_paths(&book, checkout)?;
    }
    for path in crate::output::assets::refresh(&book)? {
        say_err!(
            "notabene: wrote {path} (mdbook-notabene {})",
            env!("CARGO_PKG_VERSION")
        );
    }
    Ok(())
}

/// Builds the book at `root` (into `dest` when given, else its `build.build-dir`), after
/// [`refresh_client`]. Returns the HTML output directory.
pub fn build(root: &Path, dest: Option<&Path>) -> Result<PathBuf> {
    refresh_client(root)?;
    Ok(build_with(root, dest, Notabene::default())?.build_dir_for("html"))
}

/// Builds the book at `root` into `dest`, whole, and returns its chapters' page ids (what a
/// served site holds) with the HTML files that show each, relative to `dest`. `serve` refreshes
/// the client once, before its first build, and gives every build the same `kept`: a chapter
/// that did not change since the last build is not anchored or injected again, and the book
/// rendered is kept for [`rebuild_into`].
pub fn build_into(root: &Path, dest: &Path, kept: &Kept) -> Result<BTreeMap<String, Vec<String>>> {
    let md = load_into(root, dest, kept)?;
    kept.reuse.expect_store_changes(None);
    pages::whole(&md, dest, kept)?;
    pages_of(root, &md)
}

/// Rebuilds the book at `root` into `dest` after `change`: only the pages whose output changed
/// when nothing but the store and chapters' Markdown did (the rest is the site at `current`,
/// which the last build with `kept` made; `scratch` is a directory of the caller's the pages
/// are rendered into first), else whole (`pages`).
pub fn rebuild_into(
    root: &Path,
    (current, dest, scratch): (&Path, &Path, &Path),
    kept: &Kept,
    change: &RebuildChange,
) -> Result<(BTreeMap<String, Vec<String>>, Rebuilt)> {
    let t0 = std::time::Instant::now();
    let built = load_into(root, dest, kept).and_then(|md| {
        let t1 = std::time::Instant::now();
        let rebuilt = pages::rebuild(&md, current, dest, scratch, kept, change)?;
        Ok((md, t1, rebuilt))
    });
    let (md, t1, rebuilt) = match built {
        Ok(built) => built,
        Err(e) => {
            // The store's changes this build was told of may not have been read (the book
            // did not load, the build failed): the next read checks every file.
            kept.reuse.expect_store_changes(None);
            return Err(e);
        }
    };
    let t2 = std::time::Instant::now();
    let pages = pages_of(root, &md)?;
    if std::env::var_os("NOTABENE_TIMINGS").is_some() {
        say_err!(
            "notabene: timings (ms): rebuild: loaded {:.1}, built {:.1}, listed {:.1}",
            (t1 - t0).as_secs_f64() * 1e3,
            (t2 - t1).as_secs_f64() * 1e3,
            t2.elapsed().as_secs_f64() * 1e3
        );
    }
    Ok((pages, rebuilt))
}

/// The book at `root`, loaded with the preprocessor that keeps `kept`, its build directory set
/// to `dest`.
fn load_into(root: &Path, dest: &Path, kept: &Kept) -> Result<MDBook> {
    let preprocessor = Notabene::reusing(Arc::clone(&kept.reuse));
    let (mut md, skipped) = load_trusting(root, preprocessor, &kept.trust)?;
    *kept
        .skipped
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = skipped;
    md.config.build.build_dir = std::path::absolute(dest).unwrap_or_else(|_| dest.to_path_buf());
    Ok(md)
}

/// The page ids of the chapters of `md` with the HTML files that show each.
fn pages_of(root: &Path, md: &MDBook) -> Result<BTreeMap<String, Vec<String>>> {
    let ids = PageIds::new(&Book::load(root)?);
    let mut pages: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut first = true;
    for item in md.iter() {
        let BookItem::Chapter(ch) = item else {
            continue;
        };
        let (Some(source), Some(path)) = (&ch.source_path, &ch.path) else {
            continue;
        };
        // mdBook writes `README.md` as `index.html`, and the first chapter again as the
        // site's `index.html`.
        let path = if path.file_stem().is_some_and(|s| s == "README") {
            path.with_file_name("index.html")
        } else {
            path.with_extension("html")
        };
        let files = pages.entry(ids.for_chapter(source)).or_default();
        files.push(notabene_core::slash_path(&path));
        if std::mem::take(&mut first) && files[0] != "index.html" {
            files.push("index.html".into());
        }
    }
    Ok(pages)
}

fn build_with(root: &Path, dest: Option<&Path>, preprocessor: Notabene) -> Result<MDBook> {
    let mut md = load_with(root, preprocessor)?;
    if let Some(d) = dest {
        md.config.build.build_dir = std::path::absolute(d).unwrap_or_else(|_| d.to_path_buf());
    }
    md.build()
        .map_err(|e| Error::new(format!("build failed: {e:#}")))?;
    Ok(md)
}

/// A renderer that renders nothing: preprocessing for it yields the book as the HTML renderer
/// would get it, minus our markers (the preprocessor does its work for `html` only).
struct Probe;

impl mdbook_renderer::Renderer for Probe {
    fn name(&self) -> &str {
        "notabene"
    }
    fn render(&self, _: &mdbook_renderer::RenderContext) -> mdbook_renderer::errors::Result<()> {
        Ok(())
    }
}

/// The text of `page` as a build renders it for the page's own locale: the book loaded in that
/// language, every preprocessor that runs before notabene applied (`links`, `mdbook-gettext`,
/// …), the chapter's text model with the book's `[output.html]` options. `None` when the book
/// has no such page in that language.
pub fn rendered_text(book: &Book, page: &str) -> Result<Option<String>> {
    let ids = PageIds::new(book);
    let locale = ids.locale_of(page).to_string();
    let mut config = book.mdbook.clone();
    if locale != ids.language {
        config.book.language = Some(locale);
    }
    let localized = Book::from_mdbook(&book.root, config.clone())?;
    let mut md = MDBook::load_with_config(&book.root, config).map_err(|e| {
        Error::new(format!(
            "cannot load the book: {e:#} ({})",
            book.root.join("book.toml").display()
        ))
    })?;
    md.with_preprocessor(Notabene::default());
    let (preprocessed, _) = md
        .preprocess_book(&Probe)
        .map_err(|e| Error::new(format!("cannot preprocess the book: {e:#}")))?;
    let ids = PageIds::new(&localized);
    let options = crate::model::book::text_options(&localized.mdbook)?;
    Ok(resolve::chapters::chapters(&preprocessed, &ids)
        .into_iter()
        .find(|c| c.page == page)
        .map(|c| notabene_anchoring::text::page_text(&c.content, &options).text))
}

/// Anchors the comments of `store` in the current text of `book`, without a build. The store
/// must be readable (an unreadable store is an error here, not a warning as in a build).
pub fn anchor_current(book: &Book, store: &Store) -> Result<(BookAnchors, PageIds)> {
    let snap = store.load()?;
    snap.warn_unreadable();
    let comments = snap.comments().map(|r| r.comment.clone()).collect();
    anchor_comments(book, comments)
}

/// Anchors `comments` in the current text of `book`, without a build (`anchors --check`
/// anchors one store's comments in two versions of a book).
pub fn anchor_comments(
    book: &Book,
    comments: Vec<notabene_store::Comment>,
) -> Result<(BookAnchors, PageIds)> {
    anchor_comments_trusting(book, comments, &Trust::Full)
}

/// [`anchor_comments`], following the book's configuration as far as `trust` says (an inert
/// book runs none of its preprocessor commands and reads nothing outside its checkout).
pub fn anchor_comments_trusting(
    book: &Book,
    comments: Vec<notabene_store::Comment>,
    trust: &Trust,
) -> Result<(BookAnchors, PageIds)> {
    let (md, _) = load_trusting(&book.root, Notabene::default(), trust)?;
    let (preprocessed, _) = md
        .preprocess_book(&Probe)
        .map_err(|e| Error::new(format!("cannot preprocess the book: {e:#}")))?;
    resolve::chapters::anchor(book, &preprocessed, comments, resolve::Which::All)
}
