//! Following comments across pages: a comment whose page is not in the book (a chapter renamed,
//! moved, split, merged, or the whole book moved), and a live text comment orphaned on its own page
//! (its paragraph moved to another chapter), is looked for in the rest of the book.
//!
//! 1. **git's evidence**, page by page: the Markdown files git says were renamed or copied from
//!    the page's file since its comments were committed — since the commit that added their
//!    files to the store (`Origins`; for a comment not committed yet, the one current at its
//!    last update) — (commits since, the index, unstaged
//!    edits, files not yet tracked — [`Repo::moves_since`]); for a file git saw no move of,
//!    the chapter most of its lines went to since, when that is at least half of them (a
//!    merge, which git does not report as a move). A text comment is anchored in
//!    each file its page went to and follows the best; a block comment follows its block, a
//!    page comment its page (on a split, to the part that keeps the chapter's title).
//! 2. **Quote and context** in every chapter, for a live text comment git did not place: the
//!    same scoring and threshold as on its own page. Chapters are short-listed by exact pieces
//!    of the quote (one pass over the book's text); a match whose best two pages score within
//!    [`AMBIGUOUS`] of each other is not followed, and is reported. While the comment's own
//!    chapter is in the book, the match is followed only when git shows the text arriving on
//!    that page after the comment was written (the page's file in the commit that added the
//!    comment's file — or, not committed yet, the one current at its `createdAt` — did not
//!    hold it); otherwise it is a suggestion (`sameText`), never a move. Commits, not clocks:
//!    commits that carry the comment's own second (scripted commits, rebases that keep dates, a
//!    reviewer's clock ahead) are seen for what they are.
//!
//! 3. **Look-alikes**, for a live text comment placed on its own page where its stored quote
//!    and context are not verbatim: a place that stood on the page, apart from the commented
//!    passage, in the commit that added the comment's file is a near copy, not where the
//!    passage went — the comment is an orphan suggesting it (`look_alikes`).
//!
//! A comment that is found nowhere stays where it was (not in the book, or orphaned), with the best
//! rejected candidate anywhere as its suggestion: a deleted chapter's comments are not followed.
//! Nothing here runs when no comment is missing, orphaned, or placed with its quote or context
//! changed.
//!
//! Owns: the candidates, the decisions and applying them to the anchoring. Its parts: `git`
//! (git's evidence of moves and merges), `quotes` (the quote search across the book),
//! `look_alikes` (a place's text on the page when the comment was written), `memo`
//! (the decisions kept in the build's memo). Calls: `model::book::git`, the anchoring crate.

mod git;
mod look_alikes;
mod memo;
mod quotes;
#[cfg(test)]
mod tests;

use super::{BookAnchors, Followed, FollowedBy, is_live};
use crate::model::book::PageIds;
use crate::model::book::git::{MoveKind, Repo, StateAsked};
use crate::model::book::history::Timeline;
use crate::util::memo::Memo;
use git::{by_git, git_targets};
use memo::{decode_decisions, encode_decisions, memo_key};
use notabene_anchoring::text::TextOptions;
use notabene_anchoring::{AnchorStatus, PageIndex, Resolution, StoredAnchor, quote};
use notabene_store::Scope;
use quotes::by_quotes;
use std::collections::HashMap;
use std::path::Path;

/// Two pages whose best matches score within this of each other are a tie: not followed.
pub const AMBIGUOUS: f64 = 0.02;

/// What following decided for one comment.
#[derive(Debug, Clone)]
enum Decision {
    /// Anchored on chapter `to`.
    Follow {
        to: usize,
        resolution: Option<Resolution>,
        by: FollowedBy,
    },
    /// Matches on several pages equally well: the pages, for the report.
    Ambiguous(Vec<usize>),
    /// Found nowhere; the best rejected candidate (chapter, resolution), if any.
    Nowhere(Option<(usize, Resolution)>),
    /// Found on chapter `.0` while its own chapter is in the book, without git's evidence
    /// that the text arrived there after the comment was written: a suggestion only.
    Suggest(usize, Resolution),
    /// Placed on its own page at a look-alike that stood there, apart from the commented
    /// passage, when the comment was written: this orphan, suggesting the place.
    LookAlike(Resolution),
}

/// The commit that added each candidate comment's file to the store (through renames): the
/// point git's evidence is read from. A comment without one (not committed yet, or no store
/// given) is read from the commit current at its `createdAt`, found in `HEAD`'s commits listed
/// once (at the first such comment).
#[derive(Debug, Default)]
pub(super) struct Origins {
    /// Candidate → the commit that added its file.
    added: HashMap<usize, String>,
    /// `HEAD`'s commits with their times, when a comment not committed yet asked.
    timeline: std::sync::OnceLock<Timeline>,
}

impl Origins {
    /// The origins of `candidates`, their files under the store at `store`: one `git log`
    /// (asked ahead by a first build, [`Repo::ask_store_history`]).
    fn of(
        anchors: &BookAnchors,
        repo: &Repo,
        store: Option<&Path>,
        candidates: &[usize],
    ) -> Origins {
        let (Some(_), Some(store)) = (repo.root(), store) else {
            return Origins::default();
        };
        let Some(dir) = repo.relative(store) else {
            return Origins::default();
        };
        let added = repo.files_added(&dir);
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let mut found = HashMap::new();
        for &ci in candidates {
            let c = &anchors.comments[ci];
            if let (Some(page), Some(id)) = (c.page(), c.id())
                && let Some(commit) = added.get(&format!("{prefix}{page}/{id}.json"))
            {
                found.insert(ci, commit.to_string());
            }
        }
        // Thousands of names, freed while following goes on.
        crate::util::background::drop_in_background(added);
        Origins {
            added: found,
            timeline: std::sync::OnceLock::new(),
        }
    }

    /// The commit comment `ci`'s evidence is read from: the one that added its file, else the
    /// one current at its `createdAt` (else the first commit).
    pub(super) fn of_comment(
        &self,
        anchors: &BookAnchors,
        repo: &Repo,
        ci: usize,
    ) -> Option<String> {
        if let Some(c) = self.added.get(&ci) {
            return Some(c.clone());
        }
        let created = anchors.comments[ci]
            .as_map()
            .get("createdAt")
            .and_then(|v| v.as_str())
            .unwrap_or_default();
        let top = repo.root()?;
        self.timeline
            .get_or_init(|| Timeline::of_head(top))
            .commit_at(created)
            .unwrap_or_else(|| repo.commit_at(created))
    }

    /// The commit that added comment `ci`'s file, when one did.
    pub(super) fn added(&self, ci: usize) -> Option<&str> {
        self.added.get(&ci).map(String::as_str)
    }
}

/// The files a page id may name, relative to the repository root (page ids are
/// repository-relative when `page-prefix` is left to its default): `<page>.md`, then, for a
/// page carrying a locale, the file without it (gettext translates one file).
fn page_files(ids: &PageIds, page: &str) -> Vec<String> {
    let mut files = vec![format!("{page}.md")];
    let base = format!("{}.md", ids.without_locale(page));
    if base != files[0] {
        files.push(base);
    }
    files
}

/// Follows what can be followed in `anchors` (see the module header). Returns the pages
/// whose comments matched several pages equally, by comment: `(comment, [chapters])`.
///
/// With `memo`, the decisions are taken from an earlier build when everything they are made
/// from is the same: every chapter, the comments to follow, the page ids, options and
/// threshold, and the repository's state (its `HEAD` and the changes its work tree holds,
/// [`Repo::state`]: the one the caller asked for early, if it did), on which git's answers
/// depend.
pub fn follow(
    anchors: &mut BookAnchors,
    ids: &PageIds,
    (repo, store): (&Repo, Option<&Path>),
    options: &TextOptions,
    threshold: f64,
    memo: Option<(&Memo, Option<StateAsked>)>,
) -> Vec<(usize, Vec<usize>)> {
    // The anchoring's indexes of the pages following may look at: dropped when it is done.
    let kept_indexes = anchors.take_indexes();
    let candidates: Vec<usize> = (0..anchors.comments.len())
        .filter(|&ci| is_candidate(anchors, ids, ci))
        .collect();
    if candidates.is_empty() {
        return Vec::new();
    }
    // git is asked only when some comment is missing, orphaned, or placed with its quote or
    // context changed.
    let (memo, asked) = memo.unzip();
    let key = memo.map(|_| {
        let state = match asked.flatten() {
            Some(asked) => asked.take(),
            None => repo.state(),
        };
        memo_key(
            anchors,
            ids,
            (options, threshold),
            &candidates,
            state.as_deref(),
        )
    });
    // Kept by the candidates' places in `candidates`, not their indices in the store: a
    // comment added or removed elsewhere leaves them as they were.
    let kept = memo
        .zip(key.as_ref())
        .and_then(|(m, k)| m.get(k))
        .and_then(|bytes| decode_decisions(bytes, &candidates));
    let decisions = match kept {
        Some(d) => d,
        None => {
            // git's word on where the candidates' files came from is read while the pages of
            // those placed on their own page are indexed: the look-alikes need both.
            // Comments placed on their page are only asked whether the place is a look-alike.
            let (placed, others): (Vec<usize>, Vec<usize>) = candidates
                .iter()
                .partition(|&&ci| look_alikes::is_candidate(anchors, ci));
            let anchors = &*anchors;
            let kept: HashMap<usize, PageIndex> = (kept_indexes.into_iter())
                .filter_map(|(ch, parts)| {
                    Some((ch, PageIndex::with_parts(&anchors.texts[ch], parts)?))
                })
                .collect();
            let (origins, indexes) = std::thread::scope(|scope| {
                let origins = scope.spawn(|| Origins::of(anchors, repo, store, &candidates));
                let indexes = look_alikes::pages_now(anchors, repo, options, &placed, kept);
                let origins = origins
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                (origins, indexes)
            });
            let decisions = decide(
                anchors,
                ids,
                (repo, &origins),
                (options, threshold),
                (&placed, &others),
                indexes,
            );
            if let (Some(m), Some(k)) = (memo, key) {
                m.put(k, encode_decisions(&decisions, &candidates));
            }
            decisions
        }
    };
    let mut ambiguous = Vec::new();
    for (ci, d) in decisions {
        match d {
            Decision::Follow { to, resolution, by } => {
                let from = anchors.comments[ci].page().unwrap_or_default().to_string();
                if let Some(old) = anchors.located[ci].chapter {
                    anchors.by_chapter[old].retain(|&c| c != ci);
                }
                let list = &mut anchors.by_chapter[to];
                let at = list.partition_point(|&c| c < ci);
                list.insert(at, ci);
                let l = &mut anchors.located[ci];
                l.chapter = Some(to);
                l.resolution = resolution;
                l.followed = Some(Followed { from, by });
            }
            Decision::Ambiguous(pages) => ambiguous.push((ci, pages)),
            Decision::Nowhere(Some((ch, r))) if anchors.located[ci].chapter.is_none() => {
                anchors.located[ci].elsewhere = Some((ch, r));
            }
            Decision::Nowhere(_) => {}
            Decision::Suggest(to, r) => anchors.located[ci].same_text = Some((to, r)),
            Decision::LookAlike(r) => anchors.located[ci].resolution = Some(r),
        }
    }
    ambiguous
}

/// A comment of this build's language whose page is not in the book, a live text comment
/// orphaned on its page, or one placed there with its context changed (a possible look-alike).
fn is_candidate(anchors: &BookAnchors, ids: &PageIds, ci: usize) -> bool {
    let c = &anchors.comments[ci];
    let l = &anchors.located[ci];
    if anchors.which == super::Which::Live && !is_live(c) {
        return false;
    }
    match l.chapter {
        None => c.page().is_some_and(|p| ids.locale_of(p) == ids.language),
        Some(_) => {
            look_alikes::is_candidate(anchors, ci)
                || (c.scope() == Some(Scope::Selection)
                    && is_live(c)
                    && l.resolution
                        .as_ref()
                        .is_some_and(|r| r.status == AnchorStatus::Orphan))
        }
    }
}

/// Decides, for each of the candidates, where it goes: first by git's evidence, then by its
/// quote in the rest of the book; a comment placed on its own page (`placed`, the others
/// `others`) stays there unless git shows the place to be a look-alike that stood apart when
/// the comment was written. `indexes`: the pages already indexed (by chapter), reused by every
/// step.
fn decide<'a>(
    anchors: &'a BookAnchors,
    ids: &PageIds,
    (repo, origins): (&Repo, &Origins),
    (options, threshold): (&TextOptions, f64),
    (placed, others): (&[usize], &[usize]),
    mut indexes: HashMap<usize, PageIndex<'a>>,
) -> Vec<(usize, Decision)> {
    let mut out = look_alikes::decide(anchors, (repo, origins), options, placed, &indexes);
    // Those turned orphan are looked for in the rest of the book as every orphan is.
    let mut by_quote: Vec<(usize, quote::TextAnchor)> = out
        .iter()
        .filter_map(
            |&(ci, _)| match StoredAnchor::from_comment(anchors.comments[ci].as_map()) {
                Some(StoredAnchor::Text(t)) => Some((ci, t)),
                _ => None,
            },
        )
        .collect();
    let targets = git_targets(anchors, ids, (repo, origins), others);
    // Page indexes, built only for the chapters some comment needs (those of the look-alikes
    // already).
    for &ci in others {
        let c = &anchors.comments[ci];
        let page = c.page().unwrap_or_default();
        let anchor = StoredAnchor::from_comment(c.as_map());
        if let (Some(target), Some(a)) = (targets.get(page), anchor)
            && let Some(d) = by_git(anchors, repo, options, threshold, &mut indexes, target, a)
        {
            out.push((ci, d));
            continue;
        }
        if let Some(StoredAnchor::Text(t)) = anchor
            && is_live(c)
            && is_ours(anchors, ids, ci, page)
        {
            by_quote.push((ci, t));
        }
    }
    if by_quote.is_empty() {
        return out;
    }
    out.extend(by_quotes(
        anchors,
        (repo, origins),
        options,
        threshold,
        indexes,
        by_quote,
    ));
    out
}

/// The page index of chapter `ch` on its whole text model: a light one (read from the build's
/// memo) is derived again from the chapter's Markdown.
fn index_of<'a>(anchors: &'a BookAnchors, ch: usize, options: &TextOptions) -> PageIndex<'a> {
    let t = &anchors.texts[ch];
    if t.light {
        PageIndex::owned(notabene_anchoring::text::page_text(
            &anchors.chapters[ch].content,
            options,
        ))
    } else {
        PageIndex::new(t)
    }
}

/// Whether comment `ci` (on `page`) is this book's to search for. Another book's comment (a
/// shared store) is not searched for here: only this book's pages, or pages under the prefix
/// the store's pages point to.
fn is_ours(anchors: &BookAnchors, ids: &PageIds, ci: usize, page: &str) -> bool {
    anchors.located[ci].chapter.is_some()
        || ids.owns(page)
        || anchors
            .mismatch
            .as_ref()
            .and_then(|m| m.suggested.as_deref())
            .is_some_and(|p| p.is_empty() || page.starts_with(&format!("{p}/")))
}

/// A decision to follow to chapter `to`, as git's evidence of kind `kind` says.
fn followed(to: usize, resolution: Option<Resolution>, kind: MoveKind) -> Decision {
    Decision::Follow {
        to,
        resolution,
        by: FollowedBy::Git(kind),
    }
}
