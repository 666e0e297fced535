//! Where the gate's findings are: each comment's source file and lines (its anchored text
//! traced through `{{#include}}`, else its chapter's file at line 1, else its own store file),
//! and every path relative to the top of the repository.
//!
//! Calls: `model::resolve::source_map`, `model::book::history`.

use crate::model::book::Book;
use crate::model::book::history::History;
use crate::model::resolve::BookAnchors;
use crate::model::resolve::source_map::{Sources, trace};
use notabene_store::Store;
use std::path::{Path, PathBuf};

/// A comment's place in the sources.
#[derive(Debug, Clone)]
pub(super) struct Place {
    /// Relative to the top of the repository (or to the book root outside git).
    pub(super) file: String,
    /// The first line of its anchored text (1 when it has none).
    pub(super) line: usize,
    /// Its last line.
    pub(super) end_line: usize,
    /// Whether the lines are its anchored text's (`false`: the file's first line).
    pub(super) in_text: bool,
}

/// The places of one book's comments.
pub(super) struct Places<'a> {
    pub(super) anchors: &'a BookAnchors,
    pub(super) history: Option<&'a History>,
    sources: Sources,
    book_root: PathBuf,
    store_root: PathBuf,
}

impl<'a> Places<'a> {
    pub(super) fn new(
        anchors: &'a BookAnchors,
        history: Option<&'a History>,
        book: &Book,
        store: &Store,
    ) -> Places<'a> {
        Places {
            anchors,
            history,
            sources: anchors.sources.clone().unwrap_or_else(|| Sources::of(book)),
            book_root: book.root.clone(),
            store_root: store.root().to_path_buf(),
        }
    }

    /// `path` relative to the top of the repository, or to the book root outside git.
    pub(super) fn relative(&self, path: &Path) -> String {
        if let Some(rel) = self.history.and_then(|h| h.relative(path)) {
            return rel;
        }
        let root = self
            .book_root
            .canonicalize()
            .unwrap_or(self.book_root.clone());
        let abs = path.canonicalize().unwrap_or(path.to_path_buf());
        abs.strip_prefix(&root)
            .map(notabene_core::slash_path)
            .unwrap_or_else(|_| notabene_core::slash_path(path))
    }

    /// The store file `rel` (store-relative), relative to the top of the repository.
    pub(super) fn store_file(&self, rel: &str) -> String {
        self.relative(&self.store_root.join(rel))
    }

    /// Chapter `ch`'s own file, relative to the top of the repository.
    pub(super) fn chapter_file(&self, ch: usize) -> String {
        self.relative(&self.sources.file_of(&self.anchors.chapters[ch]))
    }

    /// The files chapter `ch` is read from, relative to the top of the repository.
    pub(super) fn files_of_chapter(&self, ch: usize) -> Vec<String> {
        self.sources
            .files_of(&self.anchors.chapters[ch])
            .iter()
            .map(|p| self.relative(p))
            .collect()
    }

    /// Where comment `ci` is, `store_file` its store file (store-relative: where a comment
    /// whose page is not in the book is shown).
    pub(super) fn of(&self, ci: usize, store_file: &str) -> Place {
        let a = self.anchors;
        let l = &a.located[ci];
        let Some(ch) = l.chapter else {
            return Place {
                file: self.store_file(store_file),
                line: 1,
                end_line: 1,
                in_text: false,
            };
        };
        let chapter = &a.chapters[ch];
        let whole_file = || Place {
            file: self.chapter_file(ch),
            line: 1,
            end_line: 1,
            in_text: false,
        };
        let Some(range) = l
            .resolution
            .as_ref()
            .and_then(|r| r.place.as_ref())
            .map(|p| p.source.clone())
        else {
            return whole_file();
        };
        let (path, range, text) = if chapter.disk().is_some() {
            match trace(&self.sources, chapter, range) {
                Ok(t) => (t.path, t.range, t.text),
                Err(_) => return whole_file(),
            }
        } else {
            (
                self.sources.file_of(chapter),
                range,
                chapter.content.clone(),
            )
        };
        let line_of = |at: usize| {
            let at = at.min(text.len());
            text.as_bytes()[..at]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                + 1
        };
        let line = line_of(range.start);
        Place {
            file: self.relative(&path),
            line,
            end_line: line_of(range.end.saturating_sub(1)).max(line),
            in_text: true,
        }
    }
}
