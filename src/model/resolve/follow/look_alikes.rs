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
//! Owns: which placed comments are asked about and the decision. Calls: `model::book::git`,
//! the anchoring crate.

use super::{BookAnchors, Decision, Origins, index_of};
use crate::model::book::git::Repo;
use crate::model::resolve::is_live;
use notabene_anchoring::text::TextOptions;
use notabene_anchoring::{AnchorStatus, PageIndex, Resolution, StoredAnchor, quote};
use notabene_store::Scope;
use std::collections::HashMap;

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

/// The pages as they were at a commit, read once per (commit, chapter): `None` when the
/// chapter's file was not in that commit.
pub(super) type EarlierPages = HashMap<(String, usize), Option<PageIndex<'static>>>;

/// For a candidate ([`is_candidate`]) whose place stood apart on its page when the comment
/// was written: the orphan suggesting that place. `None`: the place stands.
pub(super) fn decide(
    anchors: &BookAnchors,
    (repo, origins): (&Repo, &Origins),
    options: &TextOptions,
    earlier: &mut EarlierPages,
    ci: usize,
) -> Option<Decision> {
    let ch = anchors.located[ci].chapter?;
    let placed = anchors.located[ci].resolution.as_ref()?;
    let place = placed.place.as_ref()?;
    let Some(StoredAnchor::Text(t)) = StoredAnchor::from_comment(anchors.comments[ci].as_map())
    else {
        return None;
    };
    let base = origins.of_comment(anchors, repo, ci)?;
    let then = earlier.entry((base.clone(), ch)).or_insert_with(|| {
        repo.show(&base, &anchors.chapters[ch].source)
            .map(|md| PageIndex::owned(notabene_anchoring::text::page_text(&md, options)))
    });
    let then = then.as_ref()?;
    let now = index_of(anchors, ch, options);
    quote::stood_apart(&now, place, &t, then).then(|| {
        Decision::LookAlike(Resolution {
            confidence: placed.confidence,
            suggestion: Some(place.clone()),
            ..Resolution::orphan()
        })
    })
}
