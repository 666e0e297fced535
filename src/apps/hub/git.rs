//! The hub's git: a clone per branch, kept at the remote's tip, and every write a commit by its
//! reviewer pushed to the branch before it is answered. Everything here runs `git` (the real one,
//! as the user would) with no terminal prompt, in a clone the hub owns.
//!
//! A branch's clone has no commit the remote lacks, except writes being published (see
//! `hub::publisher`): so moving it to the remote's tip is a hard reset. After a push the remote
//! rejects because the branch moved, a rebase puts the clone's commits on its new tip (store
//! files merged by the store's merge driver, which the hub sets up in each clone).
//!
//! Owns: the clone's set-up, fetch, reset, commit, push and rebase. Calls: `git`.

use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `git` with `args` in `dir` (no prompt, no pager, no user or system config that could change
/// what a clone does: only the hub's own settings).
fn git(dir: &Path, args: &[&str]) -> Result<Output> {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("LC_ALL", "C")
        .output()
        .map_err(|e| Error::new(format!("cannot run git: {e} (git)")))
}

/// `git args` that must succeed; its stdout.
fn run(dir: &Path, args: &[&str]) -> Result<String> {
    let out = git(dir, args)?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        return Err(Error::new(format!(
            "git {} failed: {} (git)",
            args.first().unwrap_or(&""),
            notabene_core::escape::escape_terminal(first)
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The branches of the remote `repo`, by name.
pub(crate) fn remote_branches(repo: &str) -> Result<Vec<String>> {
    let out = run(Path::new("."), &["ls-remote", "--heads", "--", repo])?;
    Ok(out
        .lines()
        .filter_map(|l| l.split_once("\trefs/heads/").map(|(_, b)| b.to_string()))
        .collect())
}

/// The remote's default branch (what its `HEAD` names).
pub(crate) fn default_branch(repo: &str) -> Result<String> {
    let out = run(
        Path::new("."),
        &["ls-remote", "--symref", "--", repo, "HEAD"],
    )?;
    out.lines()
        .find_map(|l| l.strip_prefix("ref: refs/heads/"))
        .and_then(|l| l.split('\t').next())
        .map(str::to_string)
        .ok_or_else(|| Error::new(format!("the remote names no default branch ({repo})")))
}

/// A branch's clone, set up for the hub: `dir` holds `branch` of `repo`, its store files merged
/// by the store's driver, commits made by `committer`.
pub(crate) struct Clone {
    /// The work tree.
    pub(crate) dir: PathBuf,
    /// The branch.
    pub(crate) branch: String,
}

impl Clone {
    /// Clones `branch` of `repo` into `dir` (or takes the clone already there, moved to the
    /// remote's tip), and sets it up.
    pub(crate) fn open(repo: &str, branch: &str, dir: &Path, committer: &str) -> Result<Clone> {
        if !dir.join(".git").is_dir() {
            if let Some(parent) = dir.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| Error::io("cannot create", parent, e))?;
            }
            let target = dir.to_string_lossy();
            run(
                Path::new("."),
                &[
                    "clone",
                    "--quiet",
                    "--single-branch",
                    "--no-tags",
                    "--branch",
                    branch,
                    "--",
                    repo,
                    &target,
                ],
            )?;
        }
        let clone = Clone {
            dir: dir.to_path_buf(),
            branch: branch.to_string(),
        };
        clone.set_up(committer)?;
        clone.fetch()?;
        clone.reset()?;
        Ok(clone)
    }

    /// The hub's settings in the clone: who commits, the store's merge driver for every JSON
    /// file of the store (whatever the branch's `.gitattributes` says), rebase on pull.
    fn set_up(&self, committer: &str) -> Result<()> {
        let (name, email) = split_author(committer);
        let driver = crate::model::book::git_config::merge_driver_command()?;
        for (key, value) in [
            ("user.name", name),
            ("user.email", email),
            ("merge.notabene.name", "notabene comment merge"),
            ("merge.notabene.driver", driver.as_str()),
            ("core.hooksPath", "/dev/null"),
            ("commit.gpgSign", "false"),
        ] {
            run(&self.dir, &["config", key, value])?;
        }
        let info = self.dir.join(".git/info");
        std::fs::create_dir_all(&info).map_err(|e| Error::io("cannot create", &info, e))?;
        let attributes = info.join("attributes");
        std::fs::write(&attributes, "*.json merge=notabene\n")
            .map_err(|e| Error::io("cannot write", &attributes, e))
    }

    /// Fetches the branch; returns the remote's tip.
    pub(crate) fn fetch(&self) -> Result<String> {
        let refspec = format!("+refs/heads/{0}:refs/remotes/origin/{0}", self.branch);
        run(
            &self.dir,
            &["fetch", "--quiet", "--no-tags", "origin", &refspec],
        )?;
        self.remote_tip()
    }

    /// The remote's tip as last fetched.
    pub(crate) fn remote_tip(&self) -> Result<String> {
        run(
            &self.dir,
            &[
                "rev-parse",
                "--verify",
                &format!("refs/remotes/origin/{}", self.branch),
            ],
        )
    }

    /// The commit the work tree holds.
    pub(crate) fn head(&self) -> Result<String> {
        run(&self.dir, &["rev-parse", "--verify", "HEAD"])
    }

    /// Moves the work tree to the remote's tip as last fetched (the clone has no commit of its
    /// own outside a write being published: nothing is lost).
    pub(crate) fn reset(&self) -> Result<()> {
        let tip = format!("refs/remotes/origin/{}", self.branch);
        run(
            &self.dir,
            &["checkout", "--quiet", "-B", &self.branch, &tip],
        )?;
        run(&self.dir, &["reset", "--quiet", "--hard", &tip])?;
        Ok(())
    }

    /// Puts `paths` (relative to the work tree) back as the last commit has them, in the index
    /// and the work tree (a write that could not be committed).
    pub(crate) fn reset_paths(&self, paths: &[&str]) -> Result<()> {
        for command in [
            &["reset", "--quiet", "HEAD", "--"][..],
            &["checkout", "--quiet", "HEAD", "--"][..],
            &["clean", "--quiet", "-d", "--force", "--"][..],
        ] {
            let mut args = command.to_vec();
            args.extend_from_slice(paths);
            // Each step on its own: a path the last commit lacks fails `checkout`, not `clean`.
            let _ = run(&self.dir, &args);
        }
        Ok(())
    }

    /// The files under `paths` (relative to the work tree) that differ from the last commit,
    /// untracked ones included, as git names them.
    pub(crate) fn dirty(&self, paths: &[&str]) -> Result<std::collections::BTreeSet<String>> {
        let mut args = vec![
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--",
        ];
        args.extend_from_slice(paths);
        let out = git(&self.dir, &args)?;
        if !out.status.success() {
            return Err(Error::new("git status failed (git)"));
        }
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut files = std::collections::BTreeSet::new();
        let mut entries = text.split('\0');
        while let Some(entry) = entries.next() {
            let Some(path) = entry.get(3..).filter(|p| !p.is_empty()) else {
                continue;
            };
            files.insert(path.to_string());
            // A rename names its source next.
            if entry.starts_with('R') || entry.starts_with('C') {
                entries.next();
            }
        }
        Ok(files)
    }

    /// Commits `files` (relative to the work tree: what one write changed) as `author` with
    /// `message`; `Ok(false)` when nothing changed.
    pub(crate) fn commit(&self, files: &[String], author: &str, message: &str) -> Result<bool> {
        if files.is_empty() {
            return Ok(false);
        }
        // Paths as they are (a `*` in a name is no pattern).
        let mut add = vec!["--literal-pathspecs", "add", "--all", "--"];
        add.extend(files.iter().map(String::as_str));
        run(&self.dir, &add)?;
        let author_arg = format!("--author={author}");
        run(
            &self.dir,
            &[
                "commit",
                "--quiet",
                "--no-verify",
                &author_arg,
                "-m",
                message,
            ],
        )?;
        Ok(true)
    }

    /// Pushes `commit` to the branch (never forced: the remote checks that the branch is
    /// where it was, so a concurrent update is never overwritten).
    pub(crate) fn push(&self, commit: &str) -> Result<Pushed> {
        let refspec = format!("{commit}:refs/heads/{}", self.branch);
        let out = git(&self.dir, &["push", "--porcelain", "origin", &refspec])?;
        if out.status.success() {
            return Ok(Pushed::Done);
        }
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let moved = [
            "fetch first",
            "non-fast-forward",
            "failed to update ref",
            "cannot lock ref",
            "stale info",
        ]
        .iter()
        .any(|m| text.contains(m));
        if moved {
            return Ok(Pushed::Moved);
        }
        let why = text
            .lines()
            .find(|l| l.starts_with('!') || l.contains("error") || l.contains("fatal"))
            .unwrap_or("the push failed");
        Ok(Pushed::Refused(
            notabene_core::escape::escape_terminal(why.trim()).into_owned(),
        ))
    }

    /// After the branch moved: fetches it and puts the clone's own commits on its new tip
    /// (store files merged by the store's driver); [`Rebased::Conflict`] when they do not merge
    /// (the rebase is undone).
    pub(crate) fn rebase(&self) -> Result<Rebased> {
        self.fetch()?;
        let onto = format!("refs/remotes/origin/{}", self.branch);
        let out = git(&self.dir, &["rebase", "--quiet", &onto])?;
        if out.status.success() {
            return Ok(Rebased::Done);
        }
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let why = text
            .lines()
            .find(|l| l.contains("CONFLICT") || l.contains("error"))
            .unwrap_or("the rebase failed");
        let why = notabene_core::escape::escape_terminal(why.trim()).into_owned();
        let _ = git(&self.dir, &["rebase", "--abort"]);
        Ok(Rebased::Conflict(why))
    }
}

/// What a push did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Pushed {
    /// The branch holds the commit.
    Done,
    /// The branch moved since it was fetched: fetch, rebase, try again.
    Moved,
    /// Refused for another reason (no right to push, no such branch): trying again will not do.
    Refused(String),
}

/// What a rebase on the moved branch did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Rebased {
    /// The clone's commits are on the branch's new tip.
    Done,
    /// They do not merge with it (git's line saying why); the rebase was undone.
    Conflict(String),
}

/// `Name <email>` split into its name and email (all of it the name when there are no `<>`).
pub(crate) fn split_author(author: &str) -> (&str, &str) {
    match author.rsplit_once('<') {
        Some((name, rest)) => (name.trim(), rest.trim_end_matches('>').trim()),
        None => (author.trim(), ""),
    }
}
