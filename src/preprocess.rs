//! The mdBook preprocessor adaptor: at `mdbook build`, anchors every comment of the store in
//! its chapter, injects markers and a per-chapter data island (for the `html` renderer),
//! reports on stderr, fails the build when `fail-on` says so, and appends the generated views.
//!
//! mdBook runs preprocessors once per renderer: everything here is deterministic, and only
//! the `html` run does any work; other renderers get the book unchanged. The protocol on
//! stdin/stdout is the binary's (`src/bin/mdbook-notabene.rs`); this is the work on one book.
//!
//! Layer 7 (the mdBook adaptors, with [`crate::render`]). May call: `inject`, `views`,
//! `assets`, `resolve`, the book layer, `text` and the shared helpers.

use crate::Result;
use crate::book::Book;
use crate::inject::{self, island};
use crate::resolve::{self, report};
use crate::text::TextOptions;
use mdbook_preprocessor::book::Book as MdBook;
use mdbook_preprocessor::{Preprocessor, PreprocessorContext};
use std::collections::BTreeMap;

/// Renderers the preprocessor runs for.
pub fn supports(renderer: &str) -> bool {
    matches!(renderer, "html" | "notabene")
}

/// The preprocessor, for in-process use with `mdbook-driver` (`MDBook::with_preprocessor`).
pub struct Notabene;

impl Preprocessor for Notabene {
    fn name(&self) -> &str {
        "notabene"
    }

    fn run(
        &self,
        ctx: &PreprocessorContext,
        book: MdBook,
    ) -> mdbook_preprocessor::errors::Result<MdBook> {
        run(ctx, book).map_err(|e| mdbook_preprocessor::errors::Error::msg(e.to_string()))
    }

    fn supports_renderer(&self, renderer: &str) -> mdbook_preprocessor::errors::Result<bool> {
        Ok(supports(renderer))
    }
}

/// The preprocessor's work on one book.
pub fn run(ctx: &PreprocessorContext, mut book: MdBook) -> Result<MdBook> {
    let cfg = Book::from_mdbook(&ctx.root, ctx.config.clone())?;
    if !cfg.config.enable {
        return Ok(book);
    }
    // Other renderers (`notabene` writes comments.json from the book it is handed, with
    // its own anchoring) get the book unchanged: no work to repeat.
    if ctx.renderer != "html" {
        return Ok(book);
    }
    let comments = resolve::book::read_comments(&cfg.store());
    let (anchors, ids) = resolve::book::anchor(&cfg, &book, comments)?;
    crate::assets::check_installed(&cfg)?;
    report::report(&anchors, &ids, &cfg)?;
    let options = TextOptions::from_config(&cfg.mdbook)?;
    let threads = crate::util::par::default_threads();
    let summary = crate::store::json::to_js_compact(&island::island_summary(&anchors, &cfg.config));
    // Every chapter's new content, computed in parallel, then put back in book order.
    let jobs: Vec<usize> = (0..anchors.chapters.len()).collect();
    let results = crate::util::par::par_map(&jobs, threads, |&i| {
        let injection = island::injection_for(&anchors, i, &cfg.config, &summary);
        inject::inject(
            &anchors.chapters[i].content,
            &anchors.texts[i],
            &injection,
            &options,
        )
    });
    let by_source: BTreeMap<&str, usize> = anchors
        .chapters
        .iter()
        .enumerate()
        .map(|(i, c)| (c.source.as_str(), i))
        .collect();
    let mut results: Vec<Option<(String, inject::Outcome)>> =
        results.into_iter().map(Some).collect();
    let mut dropped = Vec::new();
    book.for_each_chapter_mut(|ch| {
        let Some(sp) = &ch.source_path else { return };
        let key = resolve::book::source_key(&ids, sp);
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
    for page in dropped {
        eprintln!(
            "notabene: warning: inline markers on {page} would have changed its text; they are left to the reader client"
        );
    }
    if cfg.config.generated_pages {
        crate::views::append_to(&mut book, &anchors, &ids, &cfg);
    }
    drop_in_background(anchors);
    Ok(book)
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
