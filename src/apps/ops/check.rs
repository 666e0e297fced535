//! The guard for an agent's own edits (`anchors --check`, the MCP `check_edit` tool): every
//! comment open at a git revision, anchored in the book as it was then and as it is in the
//! working tree, and the ones whose anchoring got worse — exact to fuzzy, to orphan, followed
//! to another page, or now ambiguous. Each says whether the change closed it (expected: the
//! agent rewrote the text it was asked to) or left it open (a bystander the edit broke).
//!
//! Reads git (the revision's files, exported to a temporary directory), the book and both
//! stores; writes nothing. Calls `output::engine` to anchor, `model::book` for git.

use crate::Result;
use crate::model::book::Book;
use crate::model::book::git::{self, MoveKind};
use crate::model::resolve::BookAnchors;
use crate::output::forms::CommentForms as _;
use notabene_store::{Comment, Status, Store};
use serde::Serialize;
use serde_json::Value;
use std::path::Path;

/// A comment's anchoring at one version of the book.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Grade {
    /// `exact`, `fuzzy`, `orphan`, `page`, `not-anchored` or `other-language`, as `anchors` says it as `anchors` says it.
    pub status: String,
    /// The score of the match, when there is one.
    pub confidence: Option<f64>,
    /// The page it was found on when that is not its own (followed).
    #[serde(rename = "followedTo")]
    pub followed_to: Option<String>,
    /// How it was followed (`git rename`, `git copy`, `git merge`, `quote`).
    #[serde(skip)]
    pub followed_by: Option<String>,
    /// Another place matches about as well.
    pub ambiguous: bool,
}

impl Grade {
    fn of(anchors: &BookAnchors, ci: usize) -> Grade {
        let j = anchors.anchoring_json(ci);
        Grade {
            status: anchors.status(ci).to_string(),
            confidence: j["confidence"].as_f64(),
            followed_to: j["followed"]["to"].as_str().map(str::to_string),
            followed_by: j["followed"]["by"].as_str().map(str::to_string),
            ambiguous: j["flags"]["ambiguous"].as_bool() == Some(true),
        }
    }

    /// 0 exact, 1 fuzzy, 2 lost (orphan, not anchored); `None` for what is not placed in the
    /// text (page comments, other languages).
    fn rank(&self) -> Option<u8> {
        match self.status.as_str() {
            "exact" => Some(0),
            "fuzzy" => Some(1),
            "orphan" | "not-anchored" => Some(2),
            _ => None,
        }
    }
}

/// One comment whose anchoring got worse.
#[derive(Debug, Clone, Serialize)]
pub struct Worse {
    /// Comment id.
    pub id: String,
    /// Its page.
    pub page: String,
    /// Its anchoring at the revision.
    pub before: Grade,
    /// Its anchoring in the working tree.
    pub after: Grade,
    /// What got worse, in words (`exact → fuzzy`, `followed to …`, `now ambiguous`).
    pub reasons: Vec<String>,
    /// The comment is no longer open in the working tree's store (closed or deleted by this
    /// change): expected. `false`: a bystander.
    pub closed: bool,
    /// Its status in the working tree's store (`null` when it was deleted).
    #[serde(rename = "statusNow")]
    pub status_now: Option<String>,
}

/// What `check` found.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    /// The revision compared with, as given.
    pub since: String,
    /// Its commit.
    pub commit: String,
    /// How many comments open at the revision were compared.
    pub checked: usize,
    /// The comments whose anchoring got worse, in store order.
    pub worse: Vec<Worse>,
    /// How many of them are bystanders (still open).
    pub bystanders: usize,
}

/// Compares the anchoring of every comment open at `since` in the book as it was then with
/// that in the working tree. `store` is the working tree's store.
pub fn check(book: &Book, store: &Store, since: &str) -> Result<CheckReport> {
    let top = git::git_toplevel(&book.root).ok_or_else(|| {
        crate::Error::new(format!(
            "anchors --check compares with git history, and {} is not in a git repository (--since)",
            book.root.display()
        ))
    })?;
    let commit = git::commit_of(&top, since)
        .ok_or_else(|| crate::Error::new(format!("unknown revision {since:?} (--since)")))?;
    let rel = |p: &Path| -> Option<String> {
        let p = std::path::absolute(p).ok()?;
        let top = top.canonicalize().ok()?;
        let p = p.canonicalize().unwrap_or(p);
        p.strip_prefix(&top)
            .ok()
            .map(|r| r.to_string_lossy().replace('\\', "/"))
    };
    let book_rel = rel(&book.root).ok_or_else(|| {
        crate::Error::new(format!(
            "the book {} is outside its git work tree (--since)",
            book.root.display()
        ))
    })?;
    let store_rel = rel(store.root()).ok_or_else(|| {
        crate::Error::new(format!(
            "the store {} is outside the git work tree, so its history cannot be read (--since)",
            store.root().display()
        ))
    })?;
    let report = |checked, worse: Vec<Worse>| {
        let bystanders = worse.iter().filter(|w| !w.closed).count();
        CheckReport {
            since: since.to_string(),
            commit: commit.clone(),
            checked,
            worse,
            bystanders,
        }
    };
    // No book or no store at the revision: nothing was open then.
    let store_then = Some(store_rel.as_str()).filter(|s| git::exists_at(&top, &commit, s));
    let Some(store_then) = store_then else {
        return Ok(report(0, Vec::new()));
    };
    if !git::exists_at(&top, &commit, &format!("{}book.toml", slash(&book_rel))) {
        return Ok(report(0, Vec::new()));
    }
    let tmp = tempfile::tempdir()
        .map_err(|e| crate::Error::new(format!("cannot make a temporary directory: {e}")))?;
    let mut paths = vec![if book_rel.is_empty() || store_then.is_empty() {
        ".".to_string()
    } else {
        book_rel.clone()
    }];
    if paths[0] != "." && !store_then.starts_with(&slash(&book_rel)) {
        paths.push(store_then.to_string());
    }
    git::export_at(&top, &commit, &paths, tmp.path())?;
    // The revision's text with the working tree's configuration: the preprocessors run are
    // the ones `anchors` runs now, never commands an old book.toml named.
    let old_root = tmp.path().join(&book_rel);
    std::fs::copy(book.root.join("book.toml"), old_root.join("book.toml"))
        .map_err(|e| crate::Error::io("cannot copy book.toml", &old_root, e))?;
    let mut old_book = Book::load(&old_root)?;
    // The copy has no git root of its own: its page ids are the working tree's.
    old_book.config.page_prefix = Some(book.page_prefix());
    let old_store = Store::new(tmp.path().join(store_then));
    let open_then: Vec<Comment> = old_store
        .load()?
        .comments()
        .map(|r| r.comment.clone())
        .filter(|c| c.status() == Some(Status::Open))
        .collect();
    let checked = open_then.len();
    let current = store.load()?;
    // Now: each comment as the working tree's store has it (healed since, say), else as it was.
    let as_now: Vec<Comment> = open_then
        .iter()
        .map(|c| {
            current
                .comments()
                .find(|r| r.comment.id().is_some() && r.comment.id() == c.id())
                .map_or_else(|| c.clone(), |r| r.comment.clone())
        })
        .collect();
    let (then, _) = crate::output::engine::anchor_comments(&old_book, open_then)?;
    let (now, _) = crate::output::engine::anchor_comments(book, as_now)?;
    let status_now = |id: &str| -> Option<String> {
        current
            .comments()
            .find(|r| r.comment.id() == Some(id))
            .and_then(|r| r.comment.status_str().map(str::to_string))
    };
    let mut worse = Vec::new();
    for ci in 0..checked {
        let (before, after) = (Grade::of(&then, ci), Grade::of(&now, ci));
        let reasons = reasons(&before, &after);
        if reasons.is_empty() {
            continue;
        }
        let c = &then.comments[ci];
        let id = c.id().unwrap_or_default().to_string();
        let status = status_now(&id);
        worse.push(Worse {
            page: c.page().unwrap_or_default().to_string(),
            closed: status.as_deref().and_then(Status::parse) != Some(Status::Open),
            status_now: status,
            id,
            before,
            after,
            reasons,
        });
    }
    Ok(report(checked, worse))
}

fn slash(rel: &str) -> String {
    if rel.is_empty() {
        String::new()
    } else {
        format!("{rel}/")
    }
}

/// What got worse from `before` to `after`, in words; empty when nothing did.
fn reasons(before: &Grade, after: &Grade) -> Vec<String> {
    let mut out = Vec::new();
    if let (Some(b), Some(a)) = (before.rank(), after.rank())
        && a > b
    {
        out.push(match after.confidence {
            Some(c) if after.status == "fuzzy" => {
                format!("{} → {} ({c:.2})", before.status, after.status)
            }
            _ => format!("{} → {}", before.status, after.status),
        });
    } else if before.rank().is_some() && after.rank().is_none() && after.status != "page"
        || before.status == "page" && after.status == "orphan"
    {
        out.push(format!("{} → {}", before.status, after.status));
    }
    // A chapter git renamed, its comment found exactly on the new page: nothing got worse.
    let renamed =
        after.followed_by.as_deref() == Some(MoveKind::Rename.as_str()) && after.status == "exact";
    if after.followed_to.is_some() && after.followed_to != before.followed_to && !renamed {
        out.push(format!(
            "followed to {}",
            after.followed_to.as_deref().unwrap_or_default()
        ));
    }
    if after.ambiguous && !before.ambiguous {
        out.push("now ambiguous".to_string());
    }
    out
}

/// The report as `anchors --check --json` prints it and `check_edit` returns it.
pub fn to_json(r: &CheckReport) -> Value {
    serde_json::to_value(r).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(status: &str, followed: Option<&str>, ambiguous: bool) -> Grade {
        Grade {
            status: status.into(),
            confidence: None,
            followed_to: followed.map(str::to_string),
            followed_by: None,
            ambiguous,
        }
    }

    #[test]
    fn what_counts_as_worse() {
        assert!(reasons(&g("exact", None, false), &g("exact", None, false)).is_empty());
        assert!(reasons(&g("fuzzy", None, false), &g("exact", None, false)).is_empty());
        assert_eq!(
            reasons(&g("exact", None, false), &g("fuzzy", None, false)),
            ["exact → fuzzy"]
        );
        assert_eq!(
            reasons(&g("fuzzy", None, false), &g("orphan", None, false)),
            ["fuzzy → orphan"]
        );
        assert_eq!(
            reasons(&g("exact", None, false), &g("exact", Some("src/b"), true)),
            ["followed to src/b", "now ambiguous"]
        );
        // A chapter git renamed, the comment exact on the new page: not worse; followed by its
        // quote, or fuzzy after the rename: worse.
        let moved = |by: &str, status: &str| Grade {
            followed_by: Some(by.into()),
            ..g(status, Some("src/b"), false)
        };
        assert!(reasons(&g("exact", None, false), &moved("git rename", "exact")).is_empty());
        assert_eq!(
            reasons(&g("exact", None, false), &moved("quote", "exact")),
            ["followed to src/b"]
        );
        assert_eq!(
            reasons(&g("exact", None, false), &moved("git rename", "fuzzy")),
            ["exact → fuzzy", "followed to src/b"]
        );
        // Followed already at the revision, to the same page: not worse.
        assert!(
            reasons(
                &g("exact", Some("src/b"), false),
                &g("exact", Some("src/b"), false)
            )
            .is_empty()
        );
        // A page comment whose page is gone.
        assert_eq!(
            reasons(&g("page", None, false), &g("orphan", None, false)),
            ["page → orphan"]
        );
        assert!(reasons(&g("page", None, false), &g("page", None, false)).is_empty());
    }
}
