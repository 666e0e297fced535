//! The hub's git: a clone per branch, kept at the remote's tip, and every write a commit by its
//! reviewer pushed to the branch before it is answered. Everything here runs `git` (the real one,
//! as the user would) with no terminal prompt, in a clone the hub owns.
//!
//! A branch's clone has no commit the remote lacks, except while a write is being published
//! (under the branch's lock): so moving it to the remote's tip is a hard reset, and a push that
//! gives up is taken back the same way. A push the remote rejects because the branch moved is
//! followed by a fetch and a rebase of the one commit (store files merged by the store's merge
//! driver, which the hub sets up in each clone), then tried again.
//!
//! Owns: the clone's set-up, fetch, reset, commit and push. Calls: `git`.

use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// How many times a write's push is tried (each after a fetch and rebase) before it gives up.
pub(crate) const PUSH_TRIES: usize = 8;

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
        let driver = crate::model::book::git::merge_driver_command()?;
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

    /// Commits what changed under `paths` (relative to the work tree) as `author` with
    /// `message`, and pushes it; `Ok(false)` when nothing changed. A push rejected because the
    /// branch moved is fetched, rebased and tried again, [`PUSH_TRIES`] times in all; when it
    /// gives up the commit is taken back (the work tree at the remote's tip) and the error
    /// says why.
    pub(crate) fn publish(&self, paths: &[&str], author: &str, message: &str) -> Result<bool> {
        let mut add = vec!["add", "--all", "--"];
        add.extend_from_slice(paths);
        run(&self.dir, &add)?;
        let staged = git(&self.dir, &["diff", "--cached", "--quiet"])?;
        if staged.status.success() {
            return Ok(false);
        }
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
        let refspec = format!("HEAD:refs/heads/{}", self.branch);
        let mut why = String::new();
        for _ in 0..PUSH_TRIES {
            let out = git(&self.dir, &["push", "--porcelain", "origin", &refspec])?;
            if out.status.success() {
                // The remote-tracking ref follows, so that the next poll sees no change.
                let _ = self.fetch();
                return Ok(true);
            }
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            why = text
                .lines()
                .find(|l| l.starts_with('!') || l.contains("error") || l.contains("fatal"))
                .unwrap_or("the push failed")
                .to_string();
            let moved = [
                "fetch first",
                "non-fast-forward",
                "failed to update ref",
                "cannot lock ref",
            ]
            .iter()
            .any(|m| text.contains(m));
            if !moved {
                break;
            }
            // The branch moved: our commit on its new tip, store files merged by the driver.
            if self.fetch().is_err() {
                break;
            }
            let onto = format!("refs/remotes/origin/{}", self.branch);
            if git(&self.dir, &["rebase", "--quiet", &onto])?
                .status
                .success()
            {
                continue;
            }
            let _ = git(&self.dir, &["rebase", "--abort"]);
            why = "the write could not be merged with the branch".into();
            break;
        }
        let _ = self.fetch();
        self.reset()?;
        Err(Error::new(format!(
            "cannot push to {}: {} (push)",
            self.branch,
            notabene_core::escape::escape_terminal(why.trim())
        )))
    }
}

/// `Name <email>` split into its name and email (all of it the name when there are no `<>`).
pub(crate) fn split_author(author: &str) -> (&str, &str) {
    match author.rsplit_once('<') {
        Some((name, rest)) => (name.trim(), rest.trim_end_matches('>').trim()),
        None => (author.trim(), ""),
    }
}
