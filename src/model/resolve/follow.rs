//! Following comments across pages: a comment whose page is not in the book (a chapter renamed,
//! moved, split, merged, or the whole book moved), and a live text comment orphaned on its own page
//! (its paragraph moved to another chapter), is looked for in the rest of the book.
//!
//! 1. **git's evidence**, page by page: the Markdown files git says were renamed or copied from
//!    the page's file since its comments were last updated (commits since, the index, unstaged
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
//!    that page after the comment was written (the page's file in the commit current at
//!    `createdAt` did not hold it); otherwise it is a suggestion (`sameText`), never a move.
//!
//! A comment that is found nowhere stays where it was (not in the book, or orphaned), with the best
//! rejected candidate anywhere as its suggestion: a deleted chapter's comments are not followed.
//! Nothing here runs when no comment is missing.

use super::{BookAnchors, Followed, FollowedBy, is_live};
use crate::model::book::PageIds;
use crate::model::book::git::{MoveKind, Repo};
use crate::util::memo::{Digest, Key, Memo};
use notabene_anchoring::text::TextOptions;
use notabene_anchoring::text::normalize::normalize;
use notabene_anchoring::{PageIndex, Resolution, Status, StoredAnchor, block, quote};
use notabene_core::codec::{Reader, Writer};
use notabene_store::Scope;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Two pages whose best matches score within this of each other are a tie: not followed.
pub const AMBIGUOUS: f64 = 0.02;
/// Pieces of a quote searched for exactly to short-list chapters (chars each).
const PROBE_LEN: usize = 16;
/// Chapters a quote may be short-listed on; more, and the quote is too common to follow.
const MAX_SHORTLIST: usize = 16;

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
/// from is the same (every chapter, the comments to follow, the page ids, options and
/// threshold) and git had no say in them: decisions that asked git (a comment whose page is
/// gone, a quote found on another page) are made again every time.
pub fn follow(
    anchors: &mut BookAnchors,
    ids: &PageIds,
    root: &Path,
    options: &TextOptions,
    threshold: f64,
    memo: Option<&Memo>,
) -> Vec<(usize, Vec<usize>)> {
    let candidates: Vec<usize> = (0..anchors.comments.len())
        .filter(|&ci| is_candidate(anchors, ids, ci))
        .collect();
    if candidates.is_empty() {
        return Vec::new();
    }
    let key = memo.map(|_| memo_key(anchors, ids, options, threshold, &candidates));
    // Kept by the candidates' places in `candidates`, not their indices in the store: a
    // comment added or removed elsewhere leaves them as they were.
    let kept = memo
        .zip(key.as_ref())
        .and_then(|(m, k)| m.get(k))
        .and_then(|bytes| decode_decisions(bytes, &candidates));
    let decisions = match kept {
        Some(d) => d,
        None => {
            // The repository is looked up only when some comment is missing or orphaned.
            let repo = Repo::discover(root);
            let decisions = decide(anchors, ids, &repo, options, threshold, &candidates);
            if let (Some(m), Some(k)) = (memo, key)
                && !asked_git(anchors, &candidates, &decisions)
            {
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
        }
    }
    ambiguous
}

/// Whether git had a say in `decisions` on `candidates`: a candidate whose page is not in the
/// book (git's evidence of moves), or a quote found on another page while the comment's own
/// chapter is in the book (git decides between a move and a suggestion). Which of these
/// happens depends only on what [`memo_key`] holds.
fn asked_git(anchors: &BookAnchors, candidates: &[usize], decisions: &[(usize, Decision)]) -> bool {
    candidates
        .iter()
        .any(|&ci| anchors.located[ci].chapter.is_none())
        || decisions.iter().any(|(ci, d)| match d {
            Decision::Suggest(..) => true,
            Decision::Follow {
                by: FollowedBy::Quote,
                ..
            } => anchors.located[*ci].chapter.is_some(),
            _ => false,
        })
}

/// The memo's address of the decisions on `candidates`: everything [`decide`] reads but git.
fn memo_key(
    anchors: &BookAnchors,
    ids: &PageIds,
    options: &TextOptions,
    threshold: f64,
    candidates: &[usize],
) -> Digest {
    let mut k = Key::new("follow");
    k.debug(options)
        .u64(threshold.to_bits())
        .debug(&anchors.which)
        .debug(ids)
        .debug(&anchors.mismatch);
    k.u64(anchors.chapters.len() as u64);
    for (ch, c) in anchors.chapters.iter().enumerate() {
        k.str(&c.page)
            .str(&c.source)
            .str(&c.name)
            .str(&c.url)
            .digest(&anchors.content_digest(ch));
    }
    k.u64(candidates.len() as u64);
    for &ci in candidates {
        k.debug(anchors.comments[ci].as_map())
            .debug(&anchors.located[ci]);
    }
    k.finish()
}

/// `decisions` in bytes, for the memo ([`decode_decisions`] reads them back): each comment by
/// its place in `candidates` (sorted).
fn encode_decisions(decisions: &[(usize, Decision)], candidates: &[usize]) -> Vec<u8> {
    let res = |w: &mut Writer, r: Option<&Resolution>| {
        w.bytes(&notabene_anchoring::encode_resolutions(&[r.cloned()]));
    };
    let mut w = Writer::default();
    w.size(decisions.len());
    for (ci, d) in decisions {
        w.size(candidates.binary_search(ci).unwrap_or(usize::MAX));
        match d {
            Decision::Follow { to, resolution, by } => {
                w.byte(0).size(*to);
                res(&mut w, resolution.as_ref());
                w.byte(match by {
                    FollowedBy::Quote => 0,
                    FollowedBy::Git(MoveKind::Rename) => 1,
                    FollowedBy::Git(MoveKind::Copy) => 2,
                    FollowedBy::Git(MoveKind::Merge) => 3,
                });
            }
            Decision::Ambiguous(pages) => {
                w.byte(1).size(pages.len());
                for &p in pages {
                    w.size(p);
                }
            }
            Decision::Nowhere(None) => {
                w.byte(2);
            }
            Decision::Nowhere(Some((ch, r))) => {
                w.byte(3).size(*ch);
                res(&mut w, Some(r));
            }
            Decision::Suggest(ch, r) => {
                w.byte(4).size(*ch);
                res(&mut w, Some(r));
            }
        }
    }
    w.0
}

/// The decisions [`encode_decisions`] wrote into `bytes` for `candidates`; `None` when they
/// are not that, whole.
fn decode_decisions(bytes: &[u8], candidates: &[usize]) -> Option<Vec<(usize, Decision)>> {
    let res = |r: &mut Reader| -> Option<Option<Resolution>> {
        let mut one = notabene_anchoring::decode_resolutions(r.bytes()?)?;
        (one.len() == 1).then(|| one.pop().flatten())
    };
    let mut r = Reader(bytes);
    let n = r.count()?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let ci = *candidates.get(r.size()?)?;
        let d = match r.tag(5)? {
            0 => {
                let to = r.size()?;
                let resolution = res(&mut r)?;
                let by = match r.tag(4)? {
                    0 => FollowedBy::Quote,
                    1 => FollowedBy::Git(MoveKind::Rename),
                    2 => FollowedBy::Git(MoveKind::Copy),
                    _ => FollowedBy::Git(MoveKind::Merge),
                };
                Decision::Follow { to, resolution, by }
            }
            1 => {
                let k = r.count()?;
                let mut pages = Vec::with_capacity(k);
                for _ in 0..k {
                    pages.push(r.size()?);
                }
                Decision::Ambiguous(pages)
            }
            2 => Decision::Nowhere(None),
            3 => {
                let ch = r.size()?;
                Decision::Nowhere(Some((ch, res(&mut r)??)))
            }
            _ => {
                let ch = r.size()?;
                Decision::Suggest(ch, res(&mut r)??)
            }
        };
        out.push((ci, d));
    }
    r.done().then_some(out)
}

/// A comment of this build's language whose page is not in the book, or a live text comment
/// orphaned on its page.
fn is_candidate(anchors: &BookAnchors, ids: &PageIds, ci: usize) -> bool {
    let c = &anchors.comments[ci];
    let l = &anchors.located[ci];
    if anchors.which == super::Which::Live && !is_live(c) {
        return false;
    }
    match l.chapter {
        None => c.page().is_some_and(|p| ids.locale_of(p) == ids.language),
        Some(_) => {
            c.scope() == Some(Scope::Selection)
                && is_live(c)
                && l.resolution
                    .as_ref()
                    .is_some_and(|r| r.status == Status::Orphan)
        }
    }
}

/// Decides, for each of the `candidates`, where it goes: first by git's evidence, then by its
/// quote in the rest of the book.
fn decide(
    anchors: &BookAnchors,
    ids: &PageIds,
    repo: &Repo,
    options: &TextOptions,
    threshold: f64,
    candidates: &[usize],
) -> Vec<(usize, Decision)> {
    let targets = git_targets(anchors, ids, repo, candidates);
    // Page indexes, built only for the chapters some comment needs.
    let mut indexes: HashMap<usize, PageIndex> = HashMap::new();
    let mut out = Vec::new();
    let mut by_quote = Vec::new();
    for &ci in candidates {
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
        anchors, repo, options, threshold, indexes, by_quote,
    ));
    out
}

/// Where git's evidence `target` for a comment's page takes its `anchor`: a page anchor to
/// the part keeping the title, a block to its best match, a text anchor to its best match
/// unless that is an orphan (`None`: left to the quote search).
fn by_git<'a>(
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
            best.filter(|b| b.2.status != Status::Orphan)
                .map(|(ch, k, r)| followed(ch, Some(r), k))
        }
    }
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

/// The quote search: each of `by_quote` resolved on the chapters short-listed for it, then a
/// follow turned into a suggestion unless git shows the text arriving on its new page.
fn by_quotes<'a>(
    anchors: &'a BookAnchors,
    repo: &Repo,
    options: &TextOptions,
    threshold: f64,
    mut indexes: HashMap<usize, PageIndex<'a>>,
    by_quote: Vec<(usize, quote::TextAnchor)>,
) -> Vec<(usize, Decision)> {
    // The quote in every chapter: chapters short-listed in one pass over the book's text.
    let quotes: Vec<&str> = by_quote.iter().map(|(_, t)| t.quote).collect();
    let shortlists = BookProbe::new(anchors).chapters_with(&quotes);
    // Every short-listed chapter indexed once, then every quote resolved, in parallel.
    let threads = notabene_core::par::default_threads();
    let needed: Vec<usize> = shortlists
        .iter()
        .flatten()
        .copied()
        .filter(|ch| !indexes.contains_key(ch))
        .collect::<std::collections::BTreeSet<usize>>()
        .into_iter()
        .collect();
    let built = notabene_core::par::par_map(&needed, threads, |&ch| index_of(anchors, ch, options));
    indexes.extend(needed.into_iter().zip(built));
    let jobs: Vec<((usize, quote::TextAnchor), Vec<usize>)> =
        by_quote.into_iter().zip(shortlists).collect();
    let decided = notabene_core::par::par_map(&jobs, threads, |((ci, t), chapters)| {
        let own = anchors.located[*ci].chapter;
        (*ci, best_page(&indexes, own, t, chapters, threshold))
    });
    // A comment whose own chapter is still in the book follows its text to another one only
    // when git shows the text arriving there after the comment was written.
    let mut out = Vec::new();
    for ((ci, decision), ((_, t), _)) in decided.into_iter().zip(&jobs) {
        let decision = match decision {
            Decision::Follow {
                to,
                resolution: Some(r),
                by: FollowedBy::Quote,
            } if anchors.located[ci].chapter.is_some()
                && !arrived(anchors, repo, ci, to, t, options, threshold) =>
            {
                Decision::Suggest(to, r)
            }
            d => d,
        };
        out.push((ci, decision));
    }
    out
}

/// The decision for text anchor `t` from its scores on `chapters` (its `own` chapter left
/// out): the best page when no other scores within [`AMBIGUOUS`] of it.
fn best_page(
    indexes: &HashMap<usize, PageIndex>,
    own: Option<usize>,
    t: &quote::TextAnchor,
    chapters: &[usize],
    threshold: f64,
) -> Decision {
    let mut scored: Vec<(usize, Resolution)> = chapters
        .iter()
        .copied()
        .filter(|&ch| Some(ch) != own)
        .map(|ch| (ch, quote::resolve(&indexes[&ch], t, threshold)))
        .collect();
    scored.sort_by(|a, b| {
        b.1.confidence
            .partial_cmp(&a.1.confidence)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.0.cmp(&b.0))
    });
    match scored.as_slice() {
        [] => Decision::Nowhere(None),
        [(ch, r), rest @ ..] if r.status != Status::Orphan => {
            let ties: Vec<usize> = rest
                .iter()
                .filter(|(_, o)| o.status != Status::Orphan)
                .filter(|(_, o)| r.confidence - o.confidence < AMBIGUOUS)
                .map(|(c, _)| *c)
                .collect();
            if ties.is_empty() {
                Decision::Follow {
                    to: *ch,
                    resolution: Some(r.clone()),
                    by: FollowedBy::Quote,
                }
            } else {
                Decision::Ambiguous(std::iter::once(*ch).chain(ties).collect())
            }
        }
        [(ch, r), ..] => Decision::Nowhere(r.suggestion.is_some().then(|| (*ch, r.clone()))),
    }
}

/// Whether git shows the text of comment `ci` arriving on chapter `to` after the comment was
/// written: the chapter's file, in the commit current at the comment's `createdAt`, did not
/// hold the quote with its context (it did not exist, or the anchor is an orphan there),
/// while the book as built now does. False without a repository or a commit.
fn arrived(
    anchors: &BookAnchors,
    repo: &Repo,
    ci: usize,
    to: usize,
    t: &quote::TextAnchor,
    options: &TextOptions,
    threshold: f64,
) -> bool {
    let created = anchors.comments[ci]
        .as_map()
        .get("createdAt")
        .and_then(|v| v.as_str())
        .unwrap_or_default();
    let Some(base) = repo.commit_at(created) else {
        return false;
    };
    match repo.show(&base, &anchors.chapters[to].source) {
        None => true,
        Some(md) => {
            let page = notabene_anchoring::text::page_text(&md, options);
            quote::resolve(&PageIndex::new(&page), t, threshold).status == Status::Orphan
        }
    }
}

fn followed(to: usize, resolution: Option<Resolution>, kind: MoveKind) -> Decision {
    Decision::Follow {
        to,
        resolution,
        by: FollowedBy::Git(kind),
    }
}

/// git's evidence for one page: the commit compared with, the page's file in it, and the
/// chapters that file went to (renames first).
type GitTargets = (String, String, Vec<(usize, MoveKind)>);

/// For each missing page of the candidates: the commit compared with, the page's file in it,
/// and the chapters git says that file went to (renames first).
fn git_targets<'a>(
    anchors: &'a BookAnchors,
    ids: &PageIds,
    repo: &Repo,
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
    let mut earliest: BTreeMap<&str, &str> = BTreeMap::new();
    for &ci in candidates {
        let c = &anchors.comments[ci];
        if anchors.located[ci].chapter.is_some() {
            continue;
        }
        let Some(page) = c.page() else { continue };
        let e = earliest.entry(page).or_insert(c.updated_at());
        if c.updated_at() < *e {
            *e = c.updated_at();
        }
    }
    let mut by_base: HashMap<String, Vec<crate::model::book::git::Move>> = HashMap::new();
    for (page, updated) in earliest {
        let updated = Some(updated).filter(|u| !u.is_empty());
        let Some((file, base)) = page_files(ids, page)
            .into_iter()
            .find_map(|f| repo.base_for(&f, updated).map(|b| (f, b)))
        else {
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
            let md = c.disk.as_deref().unwrap_or(&c.content);
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
        let md = c.disk.as_deref().unwrap_or(&c.content);
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

/// The book's text, searched once for exact pieces of many quotes.
struct BookProbe<'a> {
    texts: &'a [std::sync::Arc<notabene_anchoring::text::PageText>],
}

/// A cheap fold shared by the probe's two sides, so that typography does not hide a quote:
/// typographic quotes and dashes to ASCII, every whitespace run to one space, invisible
/// characters dropped (the matching itself uses the full normalisation).
fn fold(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    let mut rest = s;
    while !rest.is_empty() {
        // A run of plain ASCII (no whitespace) is copied as it is.
        let plain = rest
            .bytes()
            .position(|b| !b.is_ascii() || b.is_ascii_whitespace())
            .unwrap_or(rest.len());
        if plain > 0 {
            out.push_str(&rest[..plain]);
            space = false;
            rest = &rest[plain..];
            continue;
        }
        let c = rest.chars().next().expect("not empty");
        rest = &rest[c.len_utf8()..];
        let c = match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => '"',
            '\u{2012}'..='\u{2015}' | '\u{2212}' => '-',
            '\u{00AD}' | '\u{200B}' | '\u{2060}' | '\u{FEFF}' => continue,
            c if c.is_whitespace() => {
                if !space {
                    out.push(' ');
                }
                space = true;
                continue;
            }
            c => c,
        };
        space = false;
        out.push(c);
    }
    out
}

impl<'a> BookProbe<'a> {
    fn new(anchors: &'a BookAnchors) -> BookProbe<'a> {
        BookProbe {
            texts: &anchors.texts,
        }
    }

    /// For each quote, the chapters holding the most of its pieces (its start, middle and end,
    /// folded): where the quote is, even with one piece edited. A quote whose pieces are on
    /// more than [`MAX_SHORTLIST`] chapters equally says nothing about where it went.
    fn chapters_with(&self, quotes: &[&str]) -> Vec<Vec<usize>> {
        let mut pieces: Vec<String> = Vec::new();
        let mut owner: Vec<(usize, usize)> = Vec::new();
        for (qi, quote) in quotes.iter().enumerate() {
            let q: Vec<char> = fold(quote.trim()).chars().collect();
            if q.is_empty() {
                continue;
            }
            let n = PROBE_LEN.min(q.len());
            let mut mine: Vec<String> = [0, (q.len() - n) / 2, q.len() - n]
                .iter()
                .map(|&a| q[a..a + n].iter().collect())
                .collect();
            mine.dedup();
            for (k, p) in mine.into_iter().enumerate() {
                pieces.push(p);
                owner.push((qi, k));
            }
        }
        let mut out = vec![Vec::new(); quotes.len()];
        let Ok(ac) = aho_corasick::AhoCorasick::new(&pieces) else {
            return out;
        };
        // (quote, chapter) → which of its pieces were seen there.
        let folded =
            notabene_core::par::par_map(self.texts, notabene_core::par::default_threads(), |t| {
                fold(&t.text)
            });
        let mut seen: BTreeMap<(usize, usize), u8> = BTreeMap::new();
        for (ch, t) in folded.iter().enumerate() {
            for m in ac.find_overlapping_iter(t) {
                let (qi, k) = owner[m.pattern().as_usize()];
                *seen.entry((qi, ch)).or_default() |= 1 << k;
            }
        }
        let mut best = vec![0u32; quotes.len()];
        for (&(qi, _), bits) in &seen {
            best[qi] = best[qi].max(bits.count_ones());
        }
        for ((qi, ch), bits) in seen {
            if bits.count_ones() == best[qi] {
                out[qi].push(ch);
            }
        }
        for list in &mut out {
            if list.len() > MAX_SHORTLIST {
                list.clear();
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::fold;

    #[test]
    fn the_probe_folds_typography_on_both_sides() {
        assert_eq!(
            fold("the compiler\u{2019}s  borrow\nchecker"),
            "the compiler's borrow checker"
        );
        assert_eq!(fold("\u{201C}a\u{201D} \u{2014} b\u{00AD}c"), "\"a\" - bc");
        assert_eq!(
            fold("the compiler's borrow checker"),
            "the compiler's borrow checker"
        );
    }
}
