//! What a build keeps for the next one in the same process (`serve`), chapter by chapter: the
//! anchoring ([`resolve::Reuse`]: a chapter whose Markdown and anchors looked for are unchanged is
//! not anchored again) and the injected Markdown (a chapter whose Markdown, marks and island are
//! unchanged, under the same text options and `compress-above`, is not injected again: no markers
//! placed and checked, no island deflated). Only the last build is kept. The book-wide summary is
//! not part of a chapter's island (`script.nb-summary`), so a new comment on one chapter leaves the
//! others as they were.

use crate::model::resolve;
use crate::output::inject::{Injection, Outcome};
use crate::util::last_build::{Keep, LastBuild};
use notabene_anchoring::text::TextOptions;
use std::collections::HashMap;

/// What every build of a long-lived process keeps for the next one (give the same one to
/// every build: [`super::Notabene::reusing`]).
#[derive(Debug, Default)]
pub struct Reuse {
    pub(super) anchoring: resolve::Reuse,
    /// The store's files as the last build read them.
    pub(super) store: notabene_store::Recent,
    /// The memo kept in memory from build to build: what following decided, the views' data
    /// (what the anchoring and injected chapters above do not hold).
    memo: std::sync::Mutex<crate::util::memo::Memo>,
    /// The injected chapters, under the text options and `compress-above` they were
    /// injected with.
    injected: LastBuild<(TextOptions, usize), Box<InjectedChapter>>,
}

/// A chapter's injection as the last build computed it, with what it was computed from.
#[derive(Debug)]
pub(super) struct InjectedChapter {
    content: String,
    /// What was injected, without the island element.
    injection: Injection,
    /// The island's JSON.
    island: String,
    /// The injected Markdown (without the summary).
    pub(super) out: String,
    pub(super) outcome: Outcome,
}

impl InjectedChapter {
    /// What to keep of a chapter injected now (`injection` with its island element, which is
    /// dropped: `island` is its JSON).
    pub(super) fn new(
        content: &str,
        mut injection: Injection,
        island: String,
        out: &str,
        outcome: Outcome,
    ) -> Box<InjectedChapter> {
        injection.island = None;
        Box::new(InjectedChapter {
            content: content.to_string(),
            injection,
            island,
            out: out.to_string(),
            outcome,
        })
    }

    /// Whether this is the injection of `content` with `injection` (no island element) and
    /// an island of JSON `island`.
    pub(super) fn matches(&self, content: &str, injection: &Injection, island: &str) -> bool {
        self.content == content && self.island == island && self.injection == *injection
    }
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
    /// A build starts: until it says otherwise, nothing was reused and nothing done (a
    /// disabled plugin, or a build `fail-on` stops, counts what it did).
    pub(super) fn begin(&self) {
        self.anchoring.begin();
        self.injected.begin();
    }

    /// The last build's injected chapters, when they were injected under `settings`.
    pub(super) fn take_injected(
        &self,
        settings: &(TextOptions, usize),
    ) -> HashMap<String, Box<InjectedChapter>> {
        self.injected.take(settings)
    }

    /// Keeps this build's injected chapters: what each (by source file) left, `taken` being
    /// what [`Reuse::take_injected`] gave this build.
    pub(super) fn keep_injected<'a>(
        &self,
        settings: (TextOptions, usize),
        taken: HashMap<String, Box<InjectedChapter>>,
        left: impl IntoIterator<Item = (&'a str, Keep<Box<InjectedChapter>>)>,
    ) {
        self.injected.keep(settings, taken, left);
    }

    /// Tells the next build's read of the store which of its files changed since the last
    /// build's (store-relative names; `None`: not known, every file is checked)
    /// ([`notabene_store::Recent::expect_changed`]).
    pub fn expect_store_changes(&self, changed: Option<std::collections::HashSet<String>>) {
        self.store.expect_changed(changed);
    }

    /// The memo a build starts with: the last build's, or a new one.
    pub(super) fn take_memo(&self) -> crate::util::memo::Memo {
        let mut slot = self.memo.lock().unwrap_or_else(|e| e.into_inner());
        let memo = std::mem::take(&mut *slot);
        if memo.is_on() {
            memo
        } else {
            crate::util::memo::Memo::in_memory()
        }
    }

    /// Keeps `memo` for the next build.
    pub(super) fn keep_memo(&self, memo: crate::util::memo::Memo) {
        *self.memo.lock().unwrap_or_else(|e| e.into_inner()) = memo;
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
