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
//! Owns: which placed comments are asked about and the decision. Calls: `model::book::git`
//! and `git_blobs` (the pages then, read in one git process), the anchoring crate.

use super::{BookAnchors, Decision, Origins, index_of};
use crate::model::book::git::Repo;
use crate::model::resolve::is_live;
use notabene_anchoring::text::{TextOptions, page_text};
use notabene_anchoring::{AnchorStatus, PageIndex, Resolution, StoredAnchor, quote};
use notabene_store::Scope;
use std::collections::{BTreeSet, HashMap};

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

/// For the candidates ([`is_candidate`]): those whose place stood apart on their page when the
/// comment was written, each the orphan suggesting that place. The pages then are read in one
/// git process, each (commit, chapter) once.
pub(super) fn decide(
    anchors: &BookAnchors,
    (repo, origins): (&Repo, &Origins),
    options: &TextOptions,
    candidates: &[usize],
) -> Vec<(usize, Decision)> {
    let Some(root) = repo.root() else {
        return Vec::new();
    };
    let asked: Vec<(usize, usize, String)> = candidates
        .iter()
        .filter_map(|&ci| {
            let ch = anchors.located[ci].chapter?;
            Some((ci, ch, origins.of_comment(anchors, repo, ci)?))
        })
        .collect();
    let wanted: BTreeSet<(&str, usize)> = asked
        .iter()
        .map(|(_, ch, base)| (base.as_str(), *ch))
        .collect();
    let files: Vec<(&str, &str)> = wanted
        .iter()
        .map(|&(base, ch)| (base, anchors.chapters[ch].source.as_str()))
        .collect();
    let read = crate::model::book::git_blobs::read_files(root, &files);
    let earlier: HashMap<(&str, usize), PageIndex> = wanted
        .iter()
        .zip(read)
        .filter_map(|(&key, md)| Some((key, PageIndex::owned(page_text(&md?, options)))))
        .collect();
    let mut today: HashMap<usize, PageIndex> = HashMap::new();
    let mut out = Vec::new();
    for (ci, ch, base) in &asked {
        let Some(then) = earlier.get(&(base.as_str(), *ch)) else {
            continue;
        };
        let Some(placed) = anchors.located[*ci].resolution.as_ref() else {
            continue;
        };
        let (Some(place), Some(StoredAnchor::Text(t))) = (
            placed.place.as_ref(),
            StoredAnchor::from_comment(anchors.comments[*ci].as_map()),
        ) else {
            continue;
        };
        let now = today
            .entry(*ch)
            .or_insert_with(|| index_of(anchors, *ch, options));
        if quote::stood_apart(now, place, &t, then) {
            let orphan = Resolution {
                confidence: placed.confidence,
                suggestion: Some(place.clone()),
                ..Resolution::orphan()
            };
            out.push((*ci, Decision::LookAlike(orphan)));
        }
    }
    out
}
