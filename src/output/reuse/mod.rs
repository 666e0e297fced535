//! Reuse, in one place: what a build takes from earlier builds of the same book instead of
//! computing it again. The build's stages (`output::annotate`) compute from their inputs
//! alone; this module wraps them.
//! Everything is keyed the one way — the SHA-256 of everything a value is computed from
//! ([`crate::util::memo::Key`]) — and kept in one of two places:
//!
//! - the **memo** ([`Memo`]): one file per book in the cache directory, read by a build of its
//!   own (`mdbook build`, the binary) and written back after it; a long-lived process keeps it
//!   in memory from build to build instead;
//! - the **last build** of a long-lived process ([`Reuse`], `last_build::LastBuild`), for
//!   `serve`: every chapter's anchoring (its text model whole) and injected Markdown, and the
//!   store's files as read ([`notabene_store::Recent`]). A chapter whose inputs have the digest
//!   they had is taken from there, its text model shared.
//!
//! The state belongs to a book, never to the process: a [`Kept`] is one book's (`serve` holds
//! one per book it builds; nothing here is static), and a build of its own keeps nothing but its
//! memo file, named by the book's path. Two books, or two checkouts of one, built at once in one
//! process share nothing (`tests/it/many_books.rs`).
//!
//! Around them all, a build of its own replays ([`replay`]): when nothing it reads changed since
//! the last one (mdBook's input, the store's listing, the files beside it, git's state, the
//! environment, the binary), the plugin binary writes that build's output again and runs no
//! stage; its record is a third file in the cache directory.
//!
//! The store's parse cache (`notabene_store::cache`) is the one reuse that is not here: it is
//! keyed by each file's stat (size, times, inode), not by content, since its point is not to
//! read the file at all; it lives in the store crate, under the store's reader.
//!
//! Owns: [`Reuse`] and [`Kept`] (one book's state), [`Build`] (one build's view of it), the
//! lookups around the anchoring ([`Build::anchoring`]) and the injection
//! ([`Build::injecting`]), the replay of a whole build ([`replay`]). Calls: `model::resolve`
//! (the keys of a chapter's anchoring), `util::memo`, the store's [`notabene_store::Recent`]
//! and [`notabene_store::ListingState`].

mod anchoring;
mod injecting;
mod last_build;
pub mod replay;

use crate::util::memo::{Digest, Memo};
use last_build::LastBuild;
use mdbook_preprocessor::book::Book as MdBook;
use notabene_anchoring::text::TextOptions;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub use anchoring::AnchoringAfter;
pub use injecting::{InjectedChapter, InjectingAfter, InjectionInput};

/// What the builds of one book in a long-lived process keep for the next one (give the same
/// one to every build of the book: `annotate::Notabene::reusing`).
#[derive(Debug, Default)]
pub struct Reuse {
    /// Every chapter's anchoring, under [`crate::model::resolve::anchoring_key`].
    anchoring: LastBuild<crate::model::resolve::ChapterAnchoring>,
    /// Every chapter's injected Markdown, under its injection's key.
    injected: LastBuild<InjectedChapter>,
    /// The store's files as the last build read them.
    store: notabene_store::Recent,
    /// The memo kept in memory from build to build: what following decided, the views' data
    /// (what the anchoring and injected chapters above do not hold).
    memo: Mutex<Memo>,
    /// Every page's text as the last build modelled it (page id → text model): what a new
    /// comment's quote is looked for in ([`Reuse::page_text`]).
    page_texts: Mutex<HashMap<String, Arc<notabene_anchoring::text::PageText>>>,
}

/// What the last build of a [`Reuse`] did, chapter by chapter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReuseCounts {
    /// Chapters whose anchoring was kept from the build before.
    pub anchoring_reused: usize,
    /// Chapters anchored.
    pub anchored: usize,
    /// Chapters whose injected Markdown was kept from the build before.
    pub injection_reused: usize,
    /// Chapters injected.
    pub injected: usize,
}

impl Reuse {
    /// The text model of `page` (a page id) as the last build saw the page: after the
    /// preprocessors that run before notabene, in the build's locale. None before the first
    /// build, or for a page the last build did not have.
    pub fn page_text(&self, page: &str) -> Option<Arc<notabene_anchoring::text::PageText>> {
        let texts = self.page_texts.lock().unwrap_or_else(|e| e.into_inner());
        texts.get(page).cloned()
    }

    /// A build starts: until it says otherwise, nothing was reused and nothing done (a
    /// disabled plugin, or a build `fail-on` stops, counts what it did).
    pub fn begin(&self) {
        self.anchoring.begin();
        self.injected.begin();
    }

    /// Tells the next build's read of the store which of its files changed since the last
    /// build's (store-relative names; `None`: not known, every file is checked)
    /// ([`notabene_store::Recent::expect_changed`]).
    pub fn expect_store_changes(&self, changed: Option<std::collections::HashSet<String>>) {
        self.store.expect_changed(changed);
    }

    /// What the last build did.
    pub fn counts(&self) -> ReuseCounts {
        let (anchoring_reused, anchored) = self.anchoring.counts();
        let (injection_reused, injected) = self.injected.counts();
        ReuseCounts {
            anchoring_reused,
            anchored,
            injection_reused,
            injected,
        }
    }
}

/// One book's builds in a long-lived process (`serve` holds one per book): what the
/// preprocessor reuses of unchanged chapters ([`Reuse`]) and the book the last build rendered,
/// which a rebuild of pages compares with (`engine::rebuild_into`).
#[derive(Default)]
pub struct Kept {
    /// What the preprocessor reuses of unchanged chapters.
    pub reuse: Arc<Reuse>,
    /// The book the last build rendered.
    pub(crate) rendered: Mutex<Option<Rendered>>,
    /// How far the book's configuration is followed (the hub's branches: inert).
    pub trust: crate::model::book::Trust,
    /// What the last build skipped of the book's configuration (an inert build's commands).
    pub skipped: Mutex<Vec<String>>,
}

/// The book the last build rendered, as the renderer got it.
pub(crate) struct Rendered {
    /// The book.
    pub(crate) book: MdBook,
    /// The digest of the book with every chapter's content left out.
    pub(crate) skeleton: Digest,
    /// The chapter titles the renderer was given.
    pub(crate) titles: HashMap<PathBuf, String>,
}

/// One build's view of what earlier builds of its book kept: the book's [`Reuse`] in a
/// long-lived process, and the memo (that process's, in memory, else the book's file).
pub struct Build<'a> {
    session: Option<&'a Reuse>,
    memo: Memo,
}

impl<'a> Build<'a> {
    /// The view of the build of the book at `root` that starts now: with `session`, what that
    /// process's last build kept (and its memo); else the memo on disk — `opened` when it was
    /// opened ahead for this root ([`Memo::open`]: the binary opens it while mdBook writes the
    /// book).
    pub fn begin(session: Option<&'a Reuse>, root: &Path, opened: Option<Memo>) -> Build<'a> {
        let memo = match session {
            Some(s) => {
                let mut slot = s.memo.lock().unwrap_or_else(|e| e.into_inner());
                let memo = std::mem::take(&mut *slot);
                if memo.is_on() {
                    memo
                } else {
                    Memo::in_memory()
                }
            }
            None => opened.unwrap_or_else(|| Memo::open(root)),
        };
        Build { session, memo }
    }

    /// The store's files as the last build of this process read them.
    pub fn recent_store(&self) -> Option<&'a notabene_store::Recent> {
        self.session.map(|s| &s.store)
    }

    /// The build's memo (off when the cache directory is).
    pub fn memo(&self) -> &Memo {
        &self.memo
    }

    /// The lookups of chapters' anchoring: the last build's (its text models whole), else the
    /// memo's (light). Hand it to the anchoring, then [`AnchoringAfter::keep`] it.
    pub fn anchoring(&self) -> AnchoringAfter<'_> {
        AnchoringAfter::new(self.session, &self.memo)
    }

    /// The lookups of chapters' injected Markdown under `options` and `compress_above`: the last
    /// build's, then the memo's. [`InjectingAfter::keep`] it after the injection.
    pub fn injecting<'b>(
        &'b self,
        options: &'b TextOptions,
        compress_above: usize,
    ) -> InjectingAfter<'b> {
        InjectingAfter::new(self.session, &self.memo, options, compress_above)
    }

    /// Keeps every chapter's text model of this build for [`Reuse::page_text`] (in a
    /// long-lived process; a build of its own keeps none).
    pub fn keep_page_texts(&self, anchors: &crate::model::resolve::BookAnchors) {
        let Some(session) = self.session else {
            return;
        };
        let texts = anchors
            .chapters
            .iter()
            .zip(&anchors.texts)
            .map(|(chapter, text)| (chapter.page.clone(), Arc::clone(text)))
            .collect();
        *session.page_texts.lock().unwrap_or_else(|e| e.into_inner()) = texts;
    }

    /// What the build counted in the memo: lookups that hit, lookups that missed.
    pub fn memo_counts(&self) -> (usize, usize) {
        self.memo.counts()
    }

    /// The build is done: its memo is kept for the next build of this process, or written back
    /// to the book's file.
    pub fn finish(&self) {
        match self.session {
            Some(s) => *s.memo.lock().unwrap_or_else(|e| e.into_inner()) = self.memo.carried_over(),
            None => self.memo.write_back(),
        }
    }
}
