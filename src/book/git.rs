//! Diffs from real git for the /review page: the change's `ref` commit when the journal gives
//! one, else the working tree (staged changes included) against HEAD, else the whole file when
//! it is new and untracked. When there is nothing to show, the reason says which case it is.
//! Also finds the work tree root a book lives in. Part of the book layer; may call the shared
//! helpers and the `git` binary.

use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where a diff came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// `git show <ref> -- <file>`.
    Commit,
    /// `git diff HEAD -- <file>`.
    Worktree,
    /// A new file git does not track yet: the whole file as added lines.
    Untracked,
    /// Nothing could be compared.
    None,
}

/// A diff for one page's file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diff {
    /// Where it came from.
    pub source: Source,
    /// The commit compared, when the journal named one.
    #[serde(rename = "ref")]
    pub git_ref: Option<String>,
    /// Unified diff text (may be empty).
    pub text: String,
    /// Why `text` is empty: `no-git`, `unchanged`, `page-not-found`, `unknown-ref`.
    pub reason: Option<&'static str>,
}

impl Diff {
    fn empty(source: Source, git_ref: Option<&str>, reason: &'static str) -> Diff {
        Diff {
            source,
            git_ref: git_ref.map(str::to_string),
            text: String::new(),
            reason: Some(reason),
        }
    }
}

fn git(root: &Path, args: &[&str]) -> Option<(i32, String)> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["-c", "core.quotepath=off", "-c", "diff.noprefix=false"])
        .args(args)
        .env("LC_ALL", "C")
        .env_remove("GIT_EXTERNAL_DIFF")
        .output()
        .ok()?;
    Some((
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    ))
}

/// A git work tree, for diffs of book files.
#[derive(Debug, Clone)]
pub struct Repo {
    root: Option<PathBuf>,
}

impl Repo {
    /// The repository containing `dir`, if any.
    pub fn discover(dir: &Path) -> Repo {
        Repo {
            root: git_toplevel(dir).map(|p| p.canonicalize().unwrap_or(p)),
        }
    }

    /// The repository root, if any.
    pub fn root(&self) -> Option<&Path> {
        self.root.as_deref()
    }

    /// `file` relative to the repository root, `/`-separated.
    pub fn relative(&self, file: &Path) -> Option<String> {
        let root = self.root.as_ref()?;
        let abs = file.canonicalize().ok()?;
        abs.strip_prefix(root).ok().map(crate::util::slash_path)
    }

    /// The diff of `file` (None: the page has no source file) for a change with `git_ref`.
    pub fn diff(&self, file: Option<&Path>, git_ref: Option<&str>) -> Diff {
        let Some(root) = &self.root else {
            return Diff::empty(Source::None, git_ref, "no-git");
        };
        let Some(rel) = file.and_then(|f| self.relative(f)) else {
            return Diff::empty(Source::None, git_ref, "page-not-found");
        };
        if let Some(r) = git_ref.filter(|r| !r.trim().is_empty()) {
            if r.starts_with('-') {
                return Diff::empty(Source::Commit, Some(r), "unknown-ref");
            }
            let commit = format!("{r}^{{commit}}");
            if !matches!(
                git(root, &["rev-parse", "--verify", "--quiet", &commit]),
                Some((0, _))
            ) {
                return Diff::empty(Source::Commit, Some(r), "unknown-ref");
            }
            return match git(
                root,
                &[
                    "show",
                    "--no-color",
                    "--no-ext-diff",
                    "--format=",
                    r,
                    "--",
                    &rel,
                ],
            ) {
                Some((0, text)) if !text.trim().is_empty() => Diff {
                    source: Source::Commit,
                    git_ref: Some(r.to_string()),
                    text,
                    reason: None,
                },
                Some((0, _)) => Diff::empty(Source::Commit, Some(r), "unchanged"),
                _ => Diff::empty(Source::Commit, Some(r), "unknown-ref"),
            };
        }
        let tracked = matches!(
            git(root, &["ls-files", "--error-unmatch", "--", &rel]),
            Some((0, _))
        );
        if !tracked {
            return match git(
                root,
                &[
                    "diff",
                    "--no-color",
                    "--no-ext-diff",
                    "--no-index",
                    "--",
                    "/dev/null",
                    &rel,
                ],
            ) {
                Some((_, text)) if !text.is_empty() => Diff {
                    source: Source::Untracked,
                    git_ref: None,
                    text,
                    reason: None,
                },
                _ => Diff::empty(Source::Untracked, None, "unchanged"),
            };
        }
        let has_head = matches!(
            git(root, &["rev-parse", "--verify", "--quiet", "HEAD"]),
            Some((0, _))
        );
        let base = if has_head {
            "HEAD"
        } else {
            "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
        };
        match git(
            root,
            &["diff", "--no-color", "--no-ext-diff", base, "--", &rel],
        ) {
            Some((0, text)) if !text.is_empty() => Diff {
                source: Source::Worktree,
                git_ref: None,
                text,
                reason: None,
            },
            Some((0, _)) => Diff::empty(Source::Worktree, None, "unchanged"),
            _ => Diff::empty(Source::None, None, "no-git"),
        }
    }
}

/// The git work tree root containing `dir`, if any.
pub fn git_toplevel(dir: &Path) -> Option<PathBuf> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "--show-toplevel"])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?;
    Some(PathBuf::from(s.trim()))
}
