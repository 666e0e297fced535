//! What a book's anchoring keeps from one build to the next in a long-lived process (`serve`): each
//! chapter's text model and the resolutions of the comments looked for in it, keyed by exactly what
//! they are computed from — the chapter's Markdown and the stored anchors looked for there, in
//! order, under the same text options and threshold. A rebuild after a store change re-anchors only
//! the chapters whose Markdown or anchors looked for changed (a new comment, one resolved or
//! reopened, an anchor healed — not a reply or a hold); the others get back what the last build
//! computed, which is what anchoring them again would give. (mdBook refuses a file listed twice in
//! `SUMMARY.md`, so a source file names one chapter.)
//!
//! Only the last build is kept (a chapter gone from the book is forgotten): the memory it takes is
//! one build's Markdown, anchors keys and text models.

use crate::util::last_build::{Keep, LastBuild};
use crate::util::memo::{Digest, Key};
use notabene_anchoring::text::{PageText, TextOptions};
use notabene_anchoring::{Resolution, StoredAnchor};
use std::collections::HashMap;
use std::sync::Arc;

/// A chapter's anchoring as the last build computed it.
#[derive(Debug, Clone)]
pub(super) struct Anchored {
    /// The chapter's Markdown it was computed from.
    content: String,
    /// The stored anchors looked for, in order ([`anchors_key`]).
    anchors: Digest,
    /// The chapter's text model (shared with the builds that reuse it).
    pub(super) text: Arc<PageText>,
    /// One resolution per anchor looked for.
    pub(super) resolutions: Vec<Option<Resolution>>,
    /// Byte offset of every line start of the Markdown.
    pub(super) lines: Vec<usize>,
}

/// The last build's anchoring, chapter by chapter (keyed by the chapter's source file), under
/// the text options and threshold (its bits) it was computed with.
#[derive(Debug, Default)]
pub struct Reuse {
    last: LastBuild<(TextOptions, u64), Box<Anchored>>,
}

/// The key of the anchors looked for in a chapter: the digest of every field of each, in
/// order ([`super::anchoring::feed_anchors`]).
pub(super) fn anchors_key(anchors: &[Option<StoredAnchor>]) -> Digest {
    let mut k = Key::new("anchors");
    super::anchoring::feed_anchors(&mut k, anchors);
    k.finish()
}

impl Reuse {
    /// The kept anchoring of every chapter, when it was computed with `options` and
    /// `threshold` (else nothing: everything is anchored again).
    pub(super) fn take(
        &self,
        options: &TextOptions,
        threshold: f64,
    ) -> HashMap<String, Box<Anchored>> {
        self.last.take(&(options.clone(), threshold.to_bits()))
    }

    /// Keeps this build's anchoring for the next one: what each chapter (by source file)
    /// left, `taken` being what [`Reuse::take`] gave this build.
    pub(super) fn keep<'a>(
        &self,
        options: &TextOptions,
        threshold: f64,
        taken: HashMap<String, Box<Anchored>>,
        left: impl IntoIterator<Item = (&'a str, Keep<Box<Anchored>>)>,
    ) {
        self.last
            .keep((options.clone(), threshold.to_bits()), taken, left);
    }

    /// A build starts: its counts are zero until it keeps its anchoring.
    pub fn begin(&self) {
        self.last.begin();
    }

    /// The last build's chapters: how many kept their anchoring from the build before, how
    /// many were anchored.
    pub fn counts(&self) -> (usize, usize) {
        self.last.counts()
    }
}

impl Anchored {
    /// This chapter's kept anchoring when it was computed from `content` and `anchors`.
    pub(super) fn matches(&self, content: &str, anchors: &Digest) -> bool {
        self.content == content && self.anchors == *anchors
    }

    /// What to keep of a chapter anchored now.
    pub(super) fn new(
        content: &str,
        anchors: Digest,
        text: &Arc<PageText>,
        resolutions: &[Option<Resolution>],
        lines: &[usize],
    ) -> Box<Anchored> {
        Box::new(Anchored {
            content: content.to_string(),
            anchors,
            text: Arc::clone(text),
            resolutions: resolutions.to_vec(),
            lines: lines.to_vec(),
        })
    }
}
