//! git's evidence for following: the chapters a missing page's file was renamed, copied or merged
//! into since its comments were written, where each kind of anchor goes among them, and whether
//! a quote's text arrived on a page after its comment was written.
//!
//! Owns: reading moves, merges and titles from git for following. Calls: `model::book::git`,
//! the anchoring crate.

use super::{BookAnchors, Decision, Origins, followed, index_of, page_files};
use crate::model::book::PageIds;
use crate::model::book::git::{MoveKind, Repo};
use notabene_anchoring::text::TextOptions;
use notabene_anchoring::text::normalize::normalize;
use notabene_anchoring::{AnchorStatus, PageIndex, Resolution, StoredAnchor, block, quote};
use std::collections::{BTreeMap, HashMap};

/// Where git's evidence `target` for a comment's page takes its `anchor`: a page anchor to
/// the part keeping the title, a block to its best match, a text anchor to its best match
/// unless that is an orphan (`None`: left to the quote search).
pub(super) fn by_git<'a>(
    anchors: &'a BookAnchors,
    repo: &Repo,
    options: &TextOptions,
    threshold: f64,
    indexes: &mut HashMap<usize, PageIndex<'a>>,
    (base, file, to): &GitTargets,
    anchor: StoredAnchor,
) -> Option<Decision> {
    match anchor {
        StoredAnchor::Page => {
            let (ch, kind) = keeps_title(anchors, repo, base, file, to);
            Some(followed(ch, None, kind))
        }
        StoredAnchor::Block(b) => {
            let (ch, kind, r) = to
                .iter()
                .map(|&(ch, k)| (ch, k, block::resolve(&anchors.texts[ch], &b)))
                .min_by(|a, b| {
                    (a.2.status, -a.2.confidence)
                        .partial_cmp(&(b.2.status, -b.2.confidence))
                        .unwrap_or(std::cmp::Ordering::Equal)
                })
                .expect("a page with targets has one");
            Some(followed(ch, Some(r), kind))
        }
        StoredAnchor::Text(t) => {
            let mut best: Option<(usize, MoveKind, Resolution)> = None;
            for &(ch, k) in to {
                let idx = indexes
                    .entry(ch)
                    .or_insert_with(|| index_of(anchors, ch, options));
                let r = quote::resolve(idx, &t, threshold);
                if best.as_ref().is_none_or(|b| r.confidence > b.2.confidence) {
                    best = Some((ch, k, r));
                }
            }
            best.filter(|b| b.2.status != AnchorStatus::Orphan)
                .map(|(ch, k, r)| followed(ch, Some(r), k))
        }
    }
}

/// Whether git shows the text of comment `ci` arriving on chapter `to` after the comment was
/// written: the chapter's file, in the commit that added the comment's file (else the one
/// current at its `createdAt`, `Origins::of_comment`), did not hold the quote with its context
/// (it did not exist, or the anchor is an orphan there), while the book as built now does.
/// False without a repository or a commit.
pub(super) fn arrived(
    anchors: &BookAnchors,
    (repo, origins): (&Repo, &Origins),
    ci: usize,
    to: usize,
    t: &quote::TextAnchor,
    (options, threshold): (&TextOptions, f64),
) -> bool {
    let Some(base) = origins.of_comment(anchors, repo, ci) else {
        return false;
    };
    match repo.show(&base, &anchors.chapters[to].source) {
        None => true,
        Some(md) => {
            let page = notabene_anchoring::text::page_text(&md, options);
            quote::resolve(&PageIndex::new(&page), t, threshold).status == AnchorStatus::Orphan
        }
    }
}

/// git's evidence for one page: the commit compared with, the page's file in it, and the
/// chapters that file went to (renames first).
pub(super) type GitTargets = (String, String, Vec<(usize, MoveKind)>);

/// For each missing page of the candidates: the commit compared with, the page's file in it,
/// and the chapters git says that file went to (renames first).
pub(super) fn git_targets<'a>(
    anchors: &'a BookAnchors,
    ids: &PageIds,
    (repo, origins): (&Repo, &Origins),
    candidates: &[usize],
) -> BTreeMap<&'a str, GitTargets> {
    let mut targets = BTreeMap::new();
    if repo.root().is_none() {
        return targets;
    }
    let by_source: HashMap<&str, usize> = anchors
        .chapters
        .iter()
        .enumerate()
        .map(|(i, c)| (c.source.as_str(), i))
        .collect();
    // Per missing page: its comments' earliest update, and the commits that added their files
    // (`None` once one of them has none: not committed yet).
    let mut earliest: BTreeMap<&str, (&str, Option<Vec<&str>>)> = BTreeMap::new();
    for &ci in candidates {
        let c = &anchors.comments[ci];
        if anchors.located[ci].chapter.is_some() {
            continue;
        }
        let Some(page) = c.page() else { continue };
        let e = earliest
            .entry(page)
            .or_insert((c.updated_at(), Some(Vec::new())));
        if c.updated_at() < e.0 {
            e.0 = c.updated_at();
        }
        e.1 = match (e.1.take(), origins.added(ci)) {
            (Some(mut list), Some(commit)) => {
                list.push(commit);
                Some(list)
            }
            _ => None,
        };
    }
    let mut by_base: HashMap<String, Vec<crate::model::book::git::Move>> = HashMap::new();
    for (page, (updated, added)) in earliest {
        let updated = Some(updated).filter(|u| !u.is_empty());
        // The commit every comment of the page was committed in or after, when it holds the
        // page's file; else the commit current at their earliest update.
        let from_commit = added.zip(repo.root()).and_then(|(list, top)| {
            let base = crate::model::book::history::common_ancestor(top, &list)?;
            page_files(ids, page)
                .into_iter()
                .find(|f| crate::model::book::git::exists_at(top, &base, f))
                .map(|f| (f, base))
        });
        let Some((file, base)) = from_commit.or_else(|| {
            page_files(ids, page)
                .into_iter()
                .find_map(|f| repo.base_for(&f, updated).map(|b| (f, b)))
        }) else {
            continue;
        };
        let moves = by_base
            .entry(base.clone())
            .or_insert_with(|| repo.moves_since(&base));
        let mut to: Vec<(usize, MoveKind)> = moves
            .iter()
            .filter(|m| m.from == file)
            .filter_map(|m| by_source.get(m.to.as_str()).map(|&ch| (ch, m.kind)))
            .collect();
        if to.is_empty()
            && let Some(ch) = merged_into(anchors, repo, &base, &file)
        {
            to.push((ch, MoveKind::Merge));
        }
        to.sort_by_key(|&(ch, kind)| (kind, ch));
        to.dedup_by_key(|t| t.0);
        if !to.is_empty() {
            targets.insert(page, (base, file, to));
        }
    }
    targets
}

/// Lines of a chapter that say where its text went: trimmed, at least this long.
const MERGE_LINE: usize = 8;

/// The chapter that file `file` of commit `base` was merged into: the file is not in the
/// book, and at least half of its distinct lines of [`MERGE_LINE`] chars or more are in that
/// chapter now while its file in `base` did not hold them (it did not exist, for a merge into
/// a new file). Of several, the one that took the most.
fn merged_into(anchors: &BookAnchors, repo: &Repo, base: &str, file: &str) -> Option<usize> {
    let old = repo.show(base, file)?;
    let lines = |md: &str| -> std::collections::HashSet<String> {
        md.lines()
            .map(str::trim)
            .filter(|l| l.chars().count() >= MERGE_LINE)
            .map(str::to_string)
            .collect()
    };
    let wanted = lines(&old);
    let half = wanted.len().div_ceil(2).max(1);
    // Chapters by how many of the lines they hold now, most first.
    let mut holding: Vec<(usize, usize)> = anchors
        .chapters
        .iter()
        .enumerate()
        .filter(|(_, c)| c.source != file)
        .map(|(ch, c)| {
            let md = c.disk().unwrap_or(&c.content);
            let now = md.lines().map(str::trim).filter(|l| wanted.contains(*l));
            (now.collect::<std::collections::HashSet<_>>().len(), ch)
        })
        .filter(|&(n, _)| n >= half)
        .collect();
    holding.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    holding.into_iter().find_map(|(_, ch)| {
        let c = &anchors.chapters[ch];
        let before = repo
            .show(base, &c.source)
            .map(|md| lines(&md))
            .unwrap_or_default();
        let md = c.disk().unwrap_or(&c.content);
        let arrived: std::collections::HashSet<&str> = md
            .lines()
            .map(str::trim)
            .filter(|l| wanted.contains(*l) && !before.contains(*l))
            .collect();
        (arrived.len() >= half).then_some(ch)
    })
}

/// Of the files a page went to, the one that keeps the chapter's title (its first heading in
/// commit `base`) — or, when git saw the other part only, the one chapter of the book with
/// that title; else the first rename target.
fn keeps_title(
    anchors: &BookAnchors,
    repo: &Repo,
    base: &str,
    file: &str,
    targets: &[(usize, MoveKind)],
) -> (usize, MoveKind) {
    // The old file's first heading as rendered (markup gone), as the chapter's is.
    let title = repo.show(base, file).and_then(|md| {
        notabene_anchoring::text::page_text(&md, &notabene_anchoring::text::TextOptions::default())
            .headings
            .first()
            .map(|h| normalize(&h.text).as_string())
    });
    if let Some(title) = title {
        let titled = |ch: usize| {
            anchors.texts[ch]
                .headings
                .first()
                .is_some_and(|h| normalize(&h.text).as_string() == title)
        };
        if let Some(&t) = targets.iter().find(|t| titled(t.0)) {
            return t;
        }
        let mut all = (0..anchors.texts.len()).filter(|&ch| titled(ch));
        if let (Some(ch), None) = (all.next(), all.next()) {
            return (ch, MoveKind::Copy);
        }
    }
    targets[0]
}
