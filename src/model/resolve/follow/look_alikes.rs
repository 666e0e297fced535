//! git's word on a comment placed on its own page where its stored quote or context is not
//! verbatim:
//! whether that place is a look-alike that stood on the page, apart from the commented
//! passage, when the comment was written. Such a place is not where the passage went (it was
//! there all along, and was not what the reviewer selected): the comment is an orphan
//! suggesting it, never marked on it.
//!
//! The page then is the chapter's file in the commit that added the comment's file to the
//! store (`Origins`; not committed yet, the commit current at its `createdAt`), read as the
//! build reads a chapter (the same text model, without the preprocessors that run before
//! notabene: where they changed the text, the stored anchor is not found on it and nothing is
//! said). Without a repository, or a commit, the place stands.
//!
//! A comment turned orphan this way is then looked for in the rest of the book like any other
//! orphan (its passage may have moved to another chapter, git showing it arrive there).
//!
//! Owns: which placed comments are asked about, their pages now, and the decision.
//! Calls: `model::book::git` and `git_blobs` (the pages then, read in one git process), the
//! anchoring crate.

use super::{BookAnchors, Decision, Origins, index_of};
use crate::model::book::git::Repo;
use crate::model::resolve::is_live;
use notabene_anchoring::text::{TextOptions, page_text};
use notabene_anchoring::{AnchorStatus, PageIndex, Resolution, StoredAnchor, quote};
use notabene_store::Scope;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Whether comment `ci` is one to ask git about: a live text comment placed on its own page
/// where its stored quote and context are not verbatim.
pub(super) fn is_candidate(anchors: &BookAnchors, ci: usize) -> bool {
    let c = &anchors.comments[ci];
    let l = &anchors.located[ci];
    l.chapter.is_some()
        && l.followed.is_none()
        && c.scope() == Some(Scope::Selection)
        && is_live(c)
        && l.resolution.as_ref().is_some_and(|r| {
            r.status != AnchorStatus::Orphan && (r.flags.context_changed || r.flags.quote_changed)
        })
}

/// A page read from git's history is at most this long (a chapter, not whatever a branch
/// committed once).
const PAGE_MAX: usize = 16 << 20;

/// The pages now of the chapters `placed` (candidates, [`is_candidate`]) are on, indexed in
/// parallel, with those the anchoring `kept`: what [`decide`] compares each page then with
/// (and every later step reuses). Only those kept without a repository to read the pages then
/// from.
pub(super) fn pages_now<'a>(
    anchors: &'a BookAnchors,
    repo: &Repo,
    options: &TextOptions,
    placed: &[usize],
    mut kept: HashMap<usize, PageIndex<'a>>,
) -> HashMap<usize, PageIndex<'a>> {
    if repo.root().is_none() {
        return kept;
    }
    let chapters: Vec<usize> = placed
        .iter()
        .filter_map(|&ci| anchors.located[ci].chapter)
        .filter(|ch| !kept.contains_key(ch))
        .collect::<BTreeSet<usize>>()
        .into_iter()
        .collect();
    let threads = notabene_core::par::default_threads();
    let built =
        notabene_core::par::par_map(&chapters, threads, |&ch| index_of(anchors, ch, options));
    kept.extend(chapters.into_iter().zip(built));
    kept
}

/// For the candidates ([`is_candidate`]): those whose place stood apart on their page when the
/// comment was written, each the orphan suggesting that place. The pages then are read in one
/// git process, each (commit, chapter) once and one at a time; `now` holds the pages now
/// ([`pages_now`]; one missing is indexed here). A page then that is the chapter's Markdown
/// now, byte for byte, is its page now: it is not read into a text model again.
pub(super) fn decide(
    anchors: &BookAnchors,
    (repo, origins): (&Repo, &Origins),
    options: &TextOptions,
    candidates: &[usize],
    now: &HashMap<usize, PageIndex>,
) -> Vec<(usize, Decision)> {
    let Some(root) = repo.root() else {
        return Vec::new();
    };
    // The comments asked about, by the page they are compared with: (commit, chapter).
    let mut asked: BTreeMap<(String, usize), Vec<usize>> = BTreeMap::new();
    for &ci in candidates {
        if let (Some(ch), Some(base)) = (
            anchors.located[ci].chapter,
            origins.of_comment(anchors, repo, ci),
        ) {
            asked.entry((base, ch)).or_default().push(ci);
        }
    }
    let keys: Vec<(&(String, usize), &Vec<usize>)> = asked.iter().collect();
    let files: Vec<(&str, &str)> = keys
        .iter()
        .map(|((base, ch), _)| (base.as_str(), anchors.chapters[*ch].source.as_str()))
        .collect();
    let mut missing: HashMap<usize, PageIndex> = HashMap::new();
    let mut out = Vec::new();
    crate::model::book::git_blobs::each_file(root, &files, PAGE_MAX, |i, md| {
        let (((_, ch), comments), Some(md)) = (keys[i], md) else {
            return;
        };
        let today = match now.get(ch) {
            Some(index) => index,
            None => missing
                .entry(*ch)
                .or_insert_with(|| index_of(anchors, *ch, options)),
        };
        let other;
        let then = if md == anchors.chapters[*ch].content {
            today
        } else {
            other = PageIndex::owned(page_text(&md, options));
            &other
        };
        for &ci in comments {
            if let Some(d) = look_alike(anchors, ci, today, then) {
                out.push((ci, d));
            }
        }
    });
    // Deterministic whatever order git answered in.
    out.sort_by_key(|(ci, _)| *ci);
    out
}

/// Comment `ci`'s decision when its place on page `now` stood apart on page `then`.
fn look_alike(
    anchors: &BookAnchors,
    ci: usize,
    now: &PageIndex,
    then: &PageIndex,
) -> Option<Decision> {
    let placed = anchors.located[ci].resolution.as_ref()?;
    let place = placed.place.as_ref()?;
    let Some(StoredAnchor::Text(t)) = StoredAnchor::from_comment(anchors.comments[ci].as_map())
    else {
        return None;
    };
    quote::stood_apart(now, place, &t, then).then(|| {
        Decision::LookAlike(Resolution {
            confidence: placed.confidence,
            suggestion: Some(place.clone()),
            ..Resolution::orphan()
        })
    })
}
