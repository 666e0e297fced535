//! From an mdBook book and a store to [`BookAnchors`]: the chapters that have a source file
//! (with their page ids and repository-relative paths), the store's comments read for a build,
//! and the anchoring with the book's text options and threshold. The preprocessor, the
//! `notabene` renderer and `notabene anchors` all anchor through [`anchor`], which also
//! follows comments to other pages ([`super::follow`]).
//!
//! Part of the resolve layer; may call the book layer, `anchor`, `text` and `store`.

use super::{BookAnchors, Chapter};
use crate::Result;
use crate::anchor::DEFAULT_THRESHOLD;
use crate::book::{Book, PageIds};
use crate::store::{Comment, Store};
use crate::text::TextOptions;
use crate::util::slash_path;
use mdbook_preprocessor::book::{Book as MdBook, BookItem};
use std::path::Path;

/// The chapters of `book` that have a source file, with their page ids. A chapter's
/// `source` is its file relative to the repository root (`<page-prefix>/<path>`), the path
/// an agent opens.
pub fn chapters(book: &MdBook, ids: &PageIds) -> Vec<Chapter> {
    book.iter()
        .filter_map(|item| match item {
            BookItem::Chapter(ch) => Some(ch),
            _ => None,
        })
        .filter(|ch| ch.path.is_some())
        .filter_map(|ch| {
            let source_path = ch.source_path.as_ref()?;
            let url = ch.path.as_ref()?.with_extension("html");
            let disk = std::fs::read_to_string(ids.src_dir.join(source_path))
                .ok()
                .filter(|d| *d != ch.content);
            Some(Chapter {
                page: ids.for_chapter(source_path),
                name: ch.name.clone(),
                url: slash_path(&url),
                source: source_key(ids, source_path),
                content: ch.content.clone(),
                disk,
            })
        })
        .collect()
}

/// A chapter's source file relative to the repository root: `<page-prefix>/<path>`, the key
/// [`Chapter::source`] carries.
pub fn source_key(ids: &PageIds, source_path: &Path) -> String {
    slash_path(&Path::new(&ids.prefix).join(source_path))
}

/// Reads the store's comments for a build; problems are warnings, never a crash.
pub fn read_comments(store: &Store) -> Vec<Comment> {
    if !store.exists() {
        return Vec::new();
    }
    match store.load() {
        Ok(snap) => {
            snap.warn_unreadable();
            snap.records
                .into_iter()
                .filter(|r| r.comment.id().is_some())
                .map(|r| r.comment)
                .collect()
        }
        Err(e) => {
            eprintln!("notabene: warning: {e} — building without comments");
            Vec::new()
        }
    }
}

/// Anchors `comments` in `book` (as preprocessed for the HTML renderer) with the text options
/// and threshold of `book_cfg`, for its configured language.
pub fn anchor(
    book_cfg: &Book,
    book: &MdBook,
    comments: Vec<Comment>,
) -> Result<(BookAnchors, PageIds)> {
    let ids = PageIds::new(book_cfg);
    let options = TextOptions::from_config(&book_cfg.mdbook)?;
    let threshold = book_cfg.config.threshold.unwrap_or(DEFAULT_THRESHOLD);
    let chapters = chapters(book, &ids);
    let mut anchors = super::anchor_book(
        chapters,
        comments,
        &options,
        threshold,
        crate::util::par::default_threads(),
    );
    for (ci, c) in anchors.comments.iter().enumerate() {
        let l = &mut anchors.located[ci];
        if l.chapter.is_none()
            && let Some(page) = c.page()
            && ids.owns(page)
            && ids.locale_of(page) != ids.language
        {
            l.other_language = Some(ids.locale_of(page).to_string());
        }
    }
    anchors.ambiguous = super::follow::follow(&mut anchors, &ids, &book_cfg.root, threshold);
    Ok((anchors, ids))
}
