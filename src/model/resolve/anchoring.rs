//! The anchoring of a whole book, chapter by chapter and in parallel: each chapter's text model
//! and the resolutions of the comments looked for in it, taken from what earlier builds kept
//! ([`Earlier`]: the last build of this process, else the build's memo) when they were computed
//! from the same Markdown, anchors, text options and threshold.
//!
//! Owns: the memo's keys of a chapter's anchoring. Calls: the anchoring crate, `util::memo`,
//! [`super::reuse`].

use super::reuse::{self, Reuse};
use super::{BookAnchors, Chapter, Located, Which, is_live};
use crate::util::last_build::Keep;
use crate::util::memo::{Digest, Key, Memo};
use notabene_anchoring::text::{PageText, TextOptions, page_text};
use notabene_anchoring::{self as anchor, Resolution, StoredAnchor};
use notabene_store::{Comment, Scope};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Anchors `comments` in `chapters` using up to `threads` threads.
pub fn anchor_book(
    chapters: Vec<Chapter>,
    comments: Vec<Comment>,
    options: &TextOptions,
    threshold: f64,
    threads: usize,
    which: Which,
) -> BookAnchors {
    anchor_book_reusing(
        chapters,
        comments,
        options,
        threshold,
        threads,
        which,
        Earlier::default(),
    )
}

/// What a build takes from earlier ones.
#[derive(Clone, Copy, Default)]
pub struct Earlier<'a> {
    /// The last build of this process (`serve`): a chapter whose Markdown and anchors looked
    /// for are unchanged gets its anchoring back, its text model whole.
    pub process: Option<&'a Reuse>,
    /// The build's memo (on disk, or kept in memory by `serve`): without `process`, a
    /// chapter's resolutions are looked up under the digest of its Markdown, the anchors
    /// looked for, the text options and the threshold (its text model light); and the
    /// decisions of following ([`follow::follow`]).
    pub memo: Option<&'a Memo>,
}

/// [`anchor_book`], taking from `earlier` the anchoring of every chapter whose Markdown and
/// anchors looked for are those of a build it kept, and keeping this build's there.
pub fn anchor_book_reusing(
    chapters: Vec<Chapter>,
    comments: Vec<Comment>,
    options: &TextOptions,
    threshold: f64,
    threads: usize,
    which: Which,
    earlier: Earlier<'_>,
) -> BookAnchors {
    let reuse = earlier.process;
    // The memo gives chapters their anchoring only where the process keeps none.
    let memo = earlier.memo.filter(|_| reuse.is_none());
    // Thin comments (a build's resolved ones) carry no anchor: only a build that does not look
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
    let kept = reuse
        .map(|r| r.take(options, threshold))
        .unwrap_or_default();
    let digests: Vec<std::sync::OnceLock<Digest>> =
        (0..chapters.len()).map(|_| Default::default()).collect();
    let results = notabene_core::par::par_map(&jobs, threads, |&ch| {
        let content = &chapters[ch].content;
        let anchors: Vec<Option<StoredAnchor>> = per_chapter[ch]
            .iter()
            .filter(|&&ci| wanted(ci))
            .map(|&ci| StoredAnchor::from_comment(comments[ci].as_map()))
            .collect();
        let key = reuse.map(|_| reuse::anchors_key(&anchors));
        if let Some(k) = &key
            && let Some(a) = kept.get(&chapters[ch].source)
            && a.matches(content, k)
        {
            let (text, res, lines) = (Arc::clone(&a.text), a.resolutions.clone(), a.lines.clone());
            return (text, res, lines, Keep::Reused);
        }
        let lines: Vec<usize> = std::iter::once(0)
            .chain(content.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        let (text, res) = match memo {
            Some(m) => {
                let digest = digests[ch].get_or_init(|| content_digest(content));
                from_memo(m, content, digest, &anchors, options, threshold)
            }
            None => {
                let text = page_text(content, options);
                let res = anchor::resolve_page(&text, &anchors, threshold);
                (text, res)
            }
        };
        let text = Arc::new(text);
        let keep = match key {
            Some(k) => Keep::New(reuse::Anchored::new(content, k, &text, &res, &lines)),
            None => Keep::Nothing,
        };
        (text, res, lines, keep)
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
    let mut left = Vec::with_capacity(results.len());
    for (ch, (text, res, lines, keep)) in results.into_iter().enumerate() {
        left.push((chapters[ch].source.as_str(), keep));
        for (&ci, r) in per_chapter[ch].iter().filter(|&&ci| wanted(ci)).zip(res) {
            located[ci].resolution = r;
        }
        for &ci in per_chapter[ch].iter().filter(|&&ci| !wanted(ci)) {
            located[ci].not_anchored = true;
        }
        texts.push(text);
        line_starts.push(lines);
    }
    if let Some(r) = reuse {
        r.keep(options, threshold, kept, left);
    }
    BookAnchors {
        chapters,
        texts,
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

/// A chapter's text model and resolutions through the build's memo: both as an earlier build
/// kept them — the model light — when the memo has both, else computed (the model whole)
/// and kept.
fn from_memo(
    memo: &Memo,
    content: &str,
    digest: &Digest,
    anchors: &[Option<StoredAnchor>],
    options: &TextOptions,
    threshold: f64,
) -> (PageText, Vec<Option<Resolution>>) {
    let res_key = memo_key(digest, anchors, options, threshold);
    let text_key = {
        let mut k = Key::new("light page_text");
        k.debug(options).digest(digest);
        k.finish()
    };
    let kept = memo
        .get(&res_key)
        .and_then(anchor::decode_resolutions)
        .filter(|res| res.len() == anchors.len());
    if let Some(res) = &kept
        && let Some(light) = memo
            .get(&text_key)
            .and_then(notabene_anchoring::text::light::decode)
    {
        return (light, res.clone());
    }
    let text = page_text(content, options);
    memo.put(text_key, notabene_anchoring::text::light::encode(&text));
    let res = match kept {
        Some(res) => res,
        None => {
            let res = anchor::resolve_page(&text, anchors, threshold);
            memo.put(res_key, anchor::encode_resolutions(&res));
            res
        }
    };
    (text, res)
}

/// The memo's address of a chapter's resolutions: everything [`anchor::resolve_page`] computes
/// them from (the text model is a function of the Markdown, given by its `digest`, and the
/// text options).
fn memo_key(
    digest: &Digest,
    anchors: &[Option<StoredAnchor>],
    options: &TextOptions,
    threshold: f64,
) -> Digest {
    let mut k = Key::new("resolve_page");
    k.debug(options).u64(threshold.to_bits()).digest(digest);
    feed_anchors(&mut k, anchors);
    k.finish()
}

/// Adds every field of each of `anchors`, in order, to `k`.
pub(super) fn feed_anchors(k: &mut Key, anchors: &[Option<StoredAnchor>]) {
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
pub(super) fn content_digest(content: &str) -> Digest {
    let mut k = Key::new("markdown");
    k.str(content);
    k.finish()
}
