//! Diffs from real git for the /review page: the change's `ref` commit when the journal gives one,
//! else the working tree (staged changes included) against HEAD, else the whole file when it is new
//! and untracked. When there is nothing to show, the reason says which case it is. Also finds the
//! work tree root a book lives in (once per [`Repo`]), and commits and files at a revision; what
//! git says of the Markdown files (their moves, the state a memo is keyed by) is `markdown`'s,
//! the store's history asked ahead `store_history`'s.
//! The merge driver's local config is `git_config`'s.

use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::Command;

mod markdown;
mod store_history;
pub use markdown::{Move, MoveKind, StateAsked};

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

/// Runs `git -C root args…` for reading (no optional locks, paths unquoted, the C locale): its
/// exit code and standard output; `None` when git cannot be run.
pub(crate) fn git(root: &Path, args: &[&str]) -> Option<(i32, String)> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["-c", "core.quotepath=off", "-c", "diff.noprefix=false"])
        .args(args)
        .env("LC_ALL", "C")
        // Reads only: `git status` and `diff` then leave the index alone (no `index.lock` that a
        // commit or rebase in the same work tree, the hub's, would trip over).
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env_remove("GIT_EXTERNAL_DIFF")
        .output()
        .ok()?;
    Some((
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    ))
}

/// A git work tree, for diffs of book files. Found when first asked for (one `git rev-parse`,
/// then kept): a build that never asks git anything runs no `git`.
#[derive(Debug, Clone, Default)]
pub struct Repo {
    /// The directory to look from (`None`: no repository).
    dir: Option<PathBuf>,
    /// The top of the work tree holding `dir`, canonical, once looked up.
    root: std::sync::OnceLock<Option<PathBuf>>,
    /// The book's comment store and its sources (`src`). No chapter's source is in the store:
    /// what git is asked about the Markdown files leaves it out (a big store is thousands of
    /// files for git to walk), unless the sources are inside it.
    store: Option<(PathBuf, PathBuf)>,
    /// When kept ([`Repo::keeping_diff_state`]): what git's diffs depend on
    /// ([`Repo::diff_state`]), taken just before the first diff or version a build asks for;
    /// every clone shares it.
    diffs_under: Option<DiffStateKept>,
    /// The history of the comment store, when asked ahead ([`Repo::ask_store_history`]); every
    /// clone shares it.
    store_history: store_history::FilesAddedAsked,
}

/// The state git's diffs were computed under in a build ([`Repo::keeping_diff_state`]): empty
/// while no diff was asked for.
#[derive(Debug, Clone, Default)]
pub struct DiffStateKept(std::sync::Arc<std::sync::OnceLock<Option<String>>>);

impl DiffStateKept {
    /// `None` when no diff was asked for; else the state ([`Repo::diff_state`]: `None` inside
    /// when there is no repository).
    pub fn get(&self) -> Option<Option<&str>> {
        self.0.get().map(Option::as_deref)
    }
}

impl Repo {
    /// This repository, keeping the state its diffs are computed under
    /// ([`DiffStateKept`]): a build whose output may be replayed keys its record on it.
    pub fn keeping_diff_state(self) -> Repo {
        Repo {
            diffs_under: Some(DiffStateKept::default()),
            ..self
        }
    }

    /// What [`Repo::keeping_diff_state`] keeps (`None`: not kept).
    pub fn kept_diff_state(&self) -> Option<DiffStateKept> {
        self.diffs_under.clone()
    }

    /// Takes the state diffs are computed under, before the first, when it is kept.
    fn before_diffs(&self) {
        if let Some(kept) = &self.diffs_under {
            kept.0.get_or_init(|| self.diff_state());
        }
    }

    /// The repository containing `dir`, if any (looked up when first needed).
    pub fn discover(dir: &Path) -> Repo {
        let dir = Some(dir.to_path_buf());
        Repo {
            dir,
            ..Repo::none()
        }
    }

    /// No repository: every lookup finds nothing.
    pub fn none() -> Repo {
        Repo::default()
    }

    /// This repository, for a book whose comment store is `store` and whose sources are in
    /// `sources`.
    pub fn with_store(self, store: &Path, sources: &Path) -> Repo {
        Repo {
            store: Some((store.to_path_buf(), sources.to_path_buf())),
            ..self
        }
    }

    /// The repository root, if any.
    pub fn root(&self) -> Option<&Path> {
        self.root
            .get_or_init(|| {
                let top = git_toplevel(self.dir.as_deref()?)?;
                Some(top.canonicalize().unwrap_or(top))
            })
            .as_deref()
    }

    /// `file` relative to the repository root, `/`-separated.
    pub fn relative(&self, file: &Path) -> Option<String> {
        let root = self.root()?;
        let abs = file.canonicalize().ok()?;
        abs.strip_prefix(root).ok().map(notabene_core::slash_path)
    }

    /// The diff of `file` (None: the page has no source file) for a change with `git_ref`.
    pub fn diff(&self, file: Option<&Path>, git_ref: Option<&str>) -> Diff {
        self.before_diffs();
        let Some(root) = self.root() else {
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

impl Repo {
    /// The two versions of `file` a [`Repo::diff`] with the same arguments compares: the
    /// commit's parent and the commit, else HEAD (nothing for a new file) and the working
    /// tree. `None` when there is nothing to compare.
    pub fn versions(&self, file: Option<&Path>, git_ref: Option<&str>) -> Option<(String, String)> {
        self.before_diffs();
        let root = self.root()?;
        let rel = self.relative(file?)?;
        let show = |spec: String| match git(root, &["--literal-pathspecs", "show", &spec]) {
            Some((0, text)) => Some(text),
            _ => None,
        };
        if let Some(r) = git_ref.filter(|r| !r.trim().is_empty()) {
            if r.starts_with('-') {
                return None;
            }
            let new = show(format!("{r}:{rel}"))?;
            let old = show(format!("{r}^:{rel}")).unwrap_or_default();
            return Some((old, new));
        }
        let new = std::fs::read_to_string(root.join(&rel)).ok()?;
        let old = show(format!("HEAD:{rel}")).unwrap_or_default();
        Some((old, new))
    }
}

impl Repo {
    /// The commit to compare with for a file last known at `path` when a comment was last
    /// updated at `updated_at` (ISO 8601): the newest commit at or before that instant that
    /// holds the file, else the last commit that added or changed it.
    pub fn base_for(&self, path: &str, updated_at: Option<&str>) -> Option<String> {
        let root = self.root()?;
        if let Some(t) = updated_at {
            let before = format!("--before={t}");
            if let Some((0, c)) = git(root, &["rev-list", "-1", &before, "HEAD"]) {
                let c = c.trim();
                if !c.is_empty()
                    && matches!(
                        git(root, &["cat-file", "-e", &format!("{c}:{path}")]),
                        Some((0, _))
                    )
                {
                    return Some(c.to_string());
                }
            }
        }
        match git(
            root,
            &[
                "log",
                "-1",
                "--format=%H",
                "--diff-filter=AMR",
                "HEAD",
                "--",
                path,
            ],
        ) {
            Some((0, c)) if !c.trim().is_empty() => Some(c.trim().to_string()),
            _ => None,
        }
    }

    /// The commit current at instant `at` (ISO 8601): the newest commit of HEAD at or before
    /// it, else (history written after the instant, as in a copied repository) HEAD's root
    /// commit. None without a repository or a commit.
    pub fn commit_at(&self, at: &str) -> Option<String> {
        let root = self.root()?;
        let before = format!("--before={at}");
        if let Some((0, c)) = git(root, &["rev-list", "-1", &before, "HEAD"])
            && !c.trim().is_empty()
        {
            return Some(c.trim().to_string());
        }
        match git(root, &["rev-list", "--max-parents=0", "HEAD"]) {
            Some((0, c)) => c.lines().last().map(|l| l.trim().to_string()),
            _ => None,
        }
    }

    /// The contents of `path` in commit `base`.
    pub fn show(&self, base: &str, path: &str) -> Option<String> {
        let root = self.root()?;
        match git(
            root,
            &["--literal-pathspecs", "show", &format!("{base}:{path}")],
        ) {
            Some((0, text)) => Some(text),
            _ => None,
        }
    }
}

/// What a branch name has percent-encoded to be one path segment of a URL (the review server's
/// `/b/<branch>/`): everything but ASCII letters, digits, `-`, `_` and `.`.
pub const BRANCH_SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.');

/// The git work tree root containing `dir`, if any.
pub fn git_toplevel(dir: &Path) -> Option<PathBuf> {
    match git(dir, &["rev-parse", "--show-toplevel"]) {
        // A path that is not UTF-8 is no work tree this build can name.
        Some((0, out)) if !out.contains('\u{FFFD}') => Some(out.trim_end_matches('\n').into()),
        _ => None,
    }
}

/// The commit `rev` names in the repository holding `dir` (`HEAD`, a branch, a hash), or
/// `None` when it names none.
pub fn commit_of(dir: &Path, rev: &str) -> Option<String> {
    let (code, out) = git(
        dir,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ],
    )?;
    (code == 0).then(|| out.trim().to_string())
}

/// Whether `path` (relative to the top of the work tree) exists in commit `rev`.
pub fn exists_at(dir: &Path, rev: &str, path: &str) -> bool {
    let spec = if path.is_empty() {
        format!("{rev}^{{tree}}")
    } else {
        format!("{rev}:{path}")
    };
    git(dir, &["cat-file", "-e", &spec]).is_some_and(|(code, _)| code == 0)
}

/// Writes the files under `paths` (relative to the top of the work tree) as they are in commit
/// `rev` into `dest`, at the same relative places: `git archive` read by `tar`, nothing in the
/// repository touched.
pub fn export_at(dir: &Path, rev: &str, paths: &[String], dest: &Path) -> crate::Result<()> {
    use std::process::Stdio;
    let fail =
        |what: &str| crate::Error::new(format!("cannot read {rev} from git: {what} (--since)"));
    let mut archive = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["--literal-pathspecs", "archive", "--format=tar", rev, "--"])
        .args(paths)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| fail(&format!("git: {e}")))?;
    let stdout = archive.stdout.take().ok_or_else(|| fail("no output"))?;
    let untar = Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(dest)
        .stdin(stdout)
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| fail(&format!("tar: {e}")))?;
    let out = archive
        .wait_with_output()
        .map_err(|e| fail(&e.to_string()))?;
    if !out.status.success() {
        let msg = String::from_utf8_lossy(&out.stderr);
        return Err(fail(
            msg.lines().next().unwrap_or("git archive failed").trim(),
        ));
    }
    if !untar.status.success() {
        let msg = String::from_utf8_lossy(&untar.stderr);
        return Err(fail(msg.lines().next().unwrap_or("tar failed").trim()));
    }
    Ok(())
}
