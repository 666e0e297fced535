//! The anchoring of a whole book, chapter by chapter and in parallel: each chapter's text model
//! and the resolutions of the comments looked for in it. A pure stage: the same chapters and
//! comments give the same anchoring. What earlier builds computed comes in through [`Earlier`]
//! (implemented by `output::reuse`, which owns every kind of reuse); [`NothingEarlier`] takes nothing.
//!
//! Owns: the parallel anchoring of a book's chapters, and the content keys of a chapter's
//! anchoring ([`anchoring_key`], [`content_digest`]), which every reuse of it looks it up by.
//! Calls: the anchoring crate, `util::memo` (its [`Key`]s).

use super::{BookAnchors, Chapter, Located, Which, is_live};
use crate::model::book::condensed::PrerenderedOf;
use crate::util::memo::{Digest, Key, Memo};
use notabene_anchoring::text::{PageText, TextOptions, page_text};
use notabene_anchoring::{self as anchor, AnchorStatus, PageIndex, Resolution, StoredAnchor};
use notabene_store::{Comment, Scope};
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

/// A chapter's anchoring: its text model and one resolution per anchor looked for in it.
#[derive(Debug, Clone)]
pub struct ChapterAnchoring {
    /// The chapter's text model (light when it comes from the memo, [`PageText::light`]).
    pub text: Arc<PageText>,
    /// One resolution per anchor looked for, in order.
    pub resolutions: Vec<Option<Resolution>>,
}

/// One chapter as the anchoring looks it up in earlier builds: everything its anchoring is
/// computed from.
pub struct ChapterInput<'a> {
    /// The chapter.
    pub chapter: &'a Chapter,
    /// The SHA-256 of its Markdown once asked for ([`ChapterInput::content_digest`]).
    digest: &'a OnceLock<Digest>,
    /// The stored anchors looked for in it, in order.
    pub anchors: &'a [Option<StoredAnchor<'a>>],
    /// The text options.
    pub options: &'a TextOptions,
    /// The threshold.
    pub threshold: f64,
}

impl ChapterInput<'_> {
    /// The SHA-256 of the chapter's Markdown ([`content_digest`], computed once per build).
    pub fn content_digest(&self) -> &Digest {
        self.digest
            .get_or_init(|| content_digest(&self.chapter.content))
    }
}

/// What a book's anchoring takes from earlier builds (`output::reuse`). Called from the
/// anchoring's threads, chapter by chapter.
pub trait Earlier: Sync {
    /// The anchoring an earlier build computed from exactly `input`, if one was kept.
    fn anchoring(&self, input: &ChapterInput<'_>) -> Option<ChapterAnchoring>;
    /// The anchoring of `input` computed now (its text model whole), for later builds.
    fn computed(&self, input: &ChapterInput<'_>, anchoring: &ChapterAnchoring);
    /// The memo following takes its decisions from ([`super::follow::follow`]).
    fn memo(&self) -> Option<&Memo>;
}

/// Whether following may look at the page of a comment anchored so (changed, or not found):
/// the page's index is then kept for it ([`BookAnchors::take_indexes`]).
fn may_be_followed(r: &Resolution) -> bool {
    r.status == AnchorStatus::Orphan || r.flags.context_changed || r.flags.quote_changed
}

/// No earlier build: every chapter is anchored, nothing is kept.
pub struct NothingEarlier;

impl Earlier for NothingEarlier {
    fn anchoring(&self, _: &ChapterInput<'_>) -> Option<ChapterAnchoring> {
        None
    }
    fn computed(&self, _: &ChapterInput<'_>, _: &ChapterAnchoring) {}
    fn memo(&self) -> Option<&Memo> {
        None
    }
}

/// Anchors `comments` in `chapters` using up to `threads` threads.
pub fn anchor_book(
    chapters: Vec<Chapter>,
    comments: Vec<Comment>,
    options: &TextOptions,
    threshold: f64,
    threads: usize,
    which: Which,
) -> BookAnchors {
    anchor_book_after(
        chapters,
        comments,
        options,
        threshold,
        threads,
        which,
        &NothingEarlier,
    )
}

/// [`anchor_book`], taking from `earlier` the anchoring of every chapter an earlier build
/// computed from the same inputs, and handing it what is computed now.
pub fn anchor_book_after(
    chapters: Vec<Chapter>,
    comments: Vec<Comment>,
    options: &TextOptions,
    threshold: f64,
    threads: usize,
    which: Which,
    earlier: &dyn Earlier,
) -> BookAnchors {
    // Condensed comments (a build's resolved ones) carry no anchor: only a build that does not look
    // for resolved comments may be handed them.
    debug_assert!(
        which == Which::Live || comments.iter().all(|c| c.prerendered().is_none()),
        "thin comments anchored with Which::All"
    );
    let mut by_page: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, c) in chapters.iter().enumerate() {
        by_page.entry(c.page.as_str()).or_insert(i);
    }
    let mut per_chapter: Vec<Vec<usize>> = vec![Vec::new(); chapters.len()];
    let mut chapter_of = vec![None; comments.len()];
    for (ci, c) in comments.iter().enumerate() {
        if let Some(&ch) = c.page().and_then(|p| by_page.get(p)) {
            per_chapter[ch].push(ci);
            chapter_of[ci] = Some(ch);
        }
    }
    let wanted = |ci: usize| {
        which == Which::All || is_live(&comments[ci]) || comments[ci].scope() == Some(Scope::Page)
    };
    let jobs: Vec<usize> = (0..chapters.len()).collect();
    let digests: Vec<OnceLock<Digest>> = (0..chapters.len()).map(|_| Default::default()).collect();
    let results = notabene_core::par::par_map(&jobs, threads, |&ch| {
        let content = &chapters[ch].content;
        let anchors: Vec<Option<StoredAnchor>> = per_chapter[ch]
            .iter()
            .filter(|&&ci| wanted(ci))
            .map(|&ci| StoredAnchor::from_comment(comments[ci].as_map()))
            .collect();
        let lines: Vec<usize> = std::iter::once(0)
            .chain(content.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        let input = ChapterInput {
            chapter: &chapters[ch],
            digest: &digests[ch],
            anchors: &anchors,
            options,
            threshold,
        };
        let mut kept = None;
        let anchoring = earlier.anchoring(&input).unwrap_or_else(|| {
            let text = page_text(content, options);
            let (resolutions, index) = anchor::resolve_page_indexed(&text, &anchors, threshold);
            kept = index
                .filter(|_| resolutions.iter().flatten().any(may_be_followed))
                .map(PageIndex::into_parts);
            let anchoring = ChapterAnchoring {
                text: Arc::new(text),
                resolutions,
            };
            earlier.computed(&input, &anchoring);
            anchoring
        });
        (anchoring, lines, kept)
    });
    let mut located: Vec<Located> = chapter_of
        .iter()
        .map(|&chapter| Located {
            chapter,
            ..Located::default()
        })
        .collect();
    let mut texts = Vec::with_capacity(results.len());
    let mut line_starts = Vec::with_capacity(results.len());
    let mut indexes = Vec::with_capacity(results.len());
    for (ch, (anchoring, lines, kept)) in results.into_iter().enumerate() {
        indexes.push(kept);
        let wanted_here = per_chapter[ch].iter().filter(|&&ci| wanted(ci));
        for (&ci, r) in wanted_here.zip(anchoring.resolutions) {
            located[ci].resolution = r;
        }
        for &ci in per_chapter[ch].iter().filter(|&&ci| !wanted(ci)) {
            located[ci].not_anchored = true;
        }
        texts.push(anchoring.text);
        line_starts.push(lines);
    }
    BookAnchors {
        chapters,
        texts,
        indexes,
        comments,
        located,
        by_chapter: per_chapter,
        ambiguous: Vec::new(),
        mismatch: None,
        which,
        sources: None,
        line_starts,
        digests,
    }
}

/// The key of a chapter's resolutions, in the memo and in the last build a process keeps:
/// everything [`anchor::resolve_page`] computes them from (the text model is a function of the
/// Markdown, given by its digest, and the text options).
pub fn anchoring_key(input: &ChapterInput<'_>) -> Digest {
    let mut k = Key::new("resolve_page");
    k.debug(input.options)
        .u64(input.threshold.to_bits())
        .digest(input.content_digest());
    feed_anchors(&mut k, input.anchors);
    k.finish()
}

/// Adds every field of each of `anchors`, in order, to `k`.
fn feed_anchors(k: &mut Key, anchors: &[Option<StoredAnchor>]) {
    let opt = |k: &mut Key, s: Option<&str>| {
        match s {
            None => k.u64(0),
            Some(s) => k.u64(1).str(s),
        };
    };
    k.u64(anchors.len() as u64);
    for a in anchors {
        match a {
            None => {
                k.u64(0);
            }
            Some(StoredAnchor::Page) => {
                k.u64(1);
            }
            Some(StoredAnchor::Text(t)) => {
                k.u64(2).str(t.quote).str(t.prefix).str(t.suffix);
                opt(k, t.section);
            }
            Some(StoredAnchor::Block(b)) => {
                k.u64(3).str(b.kind).str(b.key).u64(b.index as u64);
                opt(k, b.section);
            }
        }
    }
}

/// The SHA-256 of a chapter's Markdown, which the memo's keys hold in place of the text.
pub fn content_digest(content: &str) -> Digest {
    let mut k = Key::new("markdown");
    k.str(content);
    k.finish()
}
