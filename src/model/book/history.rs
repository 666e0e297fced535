//! What git's history says about a change, for the review gate: the revision a change is
//! compared with (its merge base with the base branch), the files it touched, the commit that
//! last wrote a comment's file, and which commits last changed a range of lines; and, for
//! following, the commit that added each comment's file ([`files_added`]).
//!
//! Every path is relative to the top of the work tree, `/`-separated, and given to git as a
//! literal pathspec (a file named `*.md` is that file). Reads only: git runs without optional
//! locks. Calls: `git` (the runner).

use super::git::{git, git_toplevel};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The commit git writes for lines not committed yet (`git blame` of the work tree).
const NOT_COMMITTED: &str = "0000000000000000000000000000000000000000";

/// A work tree's history.
#[derive(Debug)]
pub struct History {
    /// The top of the work tree, canonical.
    top: PathBuf,
    /// `is-ancestor` answers already asked: (ancestor, descendant) → answer.
    ancestry: Mutex<HashMap<(String, String), bool>>,
}

/// Where a default base came from, for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultBase {
    /// The revision (`origin/main`, a commit).
    pub rev: String,
    /// What named it (`GITHUB_BASE_REF`, `origin/HEAD`).
    pub from: &'static str,
}

/// Who changed a range of lines since a commit, when someone did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangedBy {
    /// A later commit (its hash).
    Commit(String),
    /// The work tree: changes not committed yet.
    WorkTree,
}

impl History {
    /// The history of the work tree holding `dir`; `None` outside one.
    pub fn discover(dir: &Path) -> Option<History> {
        let top = git_toplevel(dir)?;
        Some(History {
            top: top.canonicalize().unwrap_or(top),
            ancestry: Mutex::default(),
        })
    }

    /// The top of the work tree.
    pub fn top(&self) -> &Path {
        &self.top
    }

    /// `path` relative to the top of the work tree, `/`-separated, when it is inside.
    pub fn relative(&self, path: &Path) -> Option<String> {
        let abs = std::path::absolute(path).ok()?;
        let abs = abs.canonicalize().unwrap_or(abs);
        abs.strip_prefix(&self.top)
            .ok()
            .map(notabene_core::slash_path)
    }

    fn git(&self, args: &[&str]) -> Option<(i32, String)> {
        let mut all = vec!["--literal-pathspecs"];
        all.extend_from_slice(args);
        git(&self.top, &all)
    }

    /// The commit `rev` names, or `None`.
    pub fn commit(&self, rev: &str) -> Option<String> {
        if rev.starts_with('-') {
            return None;
        }
        super::git::commit_of(&self.top, rev)
    }

    /// The merge base of `HEAD` and `rev`: the commit a change on this branch started from.
    pub fn merge_base(&self, rev: &str) -> Option<String> {
        let commit = self.commit(rev)?;
        match self.git(&["merge-base", "HEAD", &commit]) {
            Some((0, out)) => Some(out.trim().to_string()).filter(|c| !c.is_empty()),
            _ => None,
        }
    }

    /// The base branch CI names, else the remote's default branch: `origin/$GITHUB_BASE_REF`
    /// (a GitHub pull request), `$CI_MERGE_REQUEST_DIFF_BASE_SHA` (a GitLab merge request),
    /// else what `origin/HEAD` points to. `None` when none of them names a commit.
    pub fn default_base(&self) -> Option<DefaultBase> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let mut candidates = Vec::new();
        if let Some(b) = env("GITHUB_BASE_REF") {
            candidates.push((format!("origin/{}", b.trim()), "GITHUB_BASE_REF"));
        }
        if let Some(sha) = env("CI_MERGE_REQUEST_DIFF_BASE_SHA") {
            candidates.push((sha.trim().to_string(), "CI_MERGE_REQUEST_DIFF_BASE_SHA"));
        }
        candidates.push(("origin/HEAD".to_string(), "origin/HEAD"));
        candidates
            .into_iter()
            .find(|(rev, _)| self.commit(rev).is_some())
            .map(|(rev, from)| DefaultBase { rev, from })
    }

    /// The files that differ between `commit` and the work tree (committed since, staged or
    /// not, and files git does not track yet), relative to the top.
    pub fn changed_since(&self, commit: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let lists = [
            self.git(&["diff", "--name-only", "-z", "--no-renames", commit, "--"]),
            self.git(&["ls-files", "-z", "--others", "--exclude-standard"]),
        ];
        for (_, text) in lists.into_iter().flatten().filter(|(code, _)| *code == 0) {
            out.extend(
                text.split('\0')
                    .filter(|p| !p.is_empty())
                    .map(str::to_string),
            );
        }
        out
    }

    /// Whether `path` differs in the work tree (or the index) from `HEAD`, or is not tracked.
    pub fn is_dirty(&self, path: &str) -> bool {
        match self.git(&["status", "--porcelain", "-z", "--", path]) {
            Some((0, out)) => !out.is_empty(),
            _ => true,
        }
    }

    /// The last commit that wrote `path` (through its renames), or `None` when none did.
    pub fn last_commit(&self, path: &str) -> Option<String> {
        match self.git(&["log", "-1", "--follow", "--format=%H", "--", path]) {
            Some((0, out)) => Some(out.trim().to_string()).filter(|c| !c.is_empty()),
            _ => None,
        }
    }

    /// Whether commit `a` is `b` or one of its ancestors.
    pub fn is_ancestor(&self, a: &str, b: &str) -> bool {
        let key = (a.to_string(), b.to_string());
        if let Some(known) = self.ancestry.lock().ok().and_then(|m| m.get(&key).copied()) {
            return known;
        }
        let yes = matches!(
            self.git(&["merge-base", "--is-ancestor", a, b]),
            Some((0, _))
        );
        if let Ok(mut m) = self.ancestry.lock() {
            m.insert(key, yes);
        }
        yes
    }

    /// Whether `path` changed after `commit`: a commit since it on the way to `HEAD` touched
    /// it, or the work tree did.
    pub fn file_changed_after(&self, commit: &str, path: &str) -> Option<ChangedBy> {
        if self.is_dirty(path) {
            return Some(ChangedBy::WorkTree);
        }
        let range = format!("{commit}..HEAD");
        match self.git(&["log", "-1", "--format=%H", &range, "--", path]) {
            Some((0, out)) if !out.trim().is_empty() => {
                Some(ChangedBy::Commit(out.trim().to_string()))
            }
            _ => None,
        }
    }

    /// Who changed lines `first..=last` of `path` (as the work tree has it) after `commit`:
    /// the first line `git blame` gives to a commit that is not `commit` or one of its
    /// ancestors, or to the work tree. `None` when every line was written by then.
    pub fn lines_changed_after(
        &self,
        commit: &str,
        path: &str,
        first: usize,
        last: usize,
    ) -> Option<ChangedBy> {
        let range = format!("{},{}", first.max(1), last.max(first).max(1));
        let Some((0, out)) = self.git(&["blame", "--porcelain", "-L", &range, "--", path]) else {
            // Not tracked, or the range is past its end: the work tree's.
            return Some(ChangedBy::WorkTree);
        };
        for sha in blamed_commits(&out) {
            if sha == NOT_COMMITTED {
                return Some(ChangedBy::WorkTree);
            }
            if !self.is_ancestor(&sha, commit) {
                return Some(ChangedBy::Commit(sha));
            }
        }
        None
    }

    /// `commit` abbreviated as git would (at least 7 characters).
    pub fn short(&self, commit: &str) -> String {
        match self.git(&["rev-parse", "--short", commit]) {
            Some((0, out)) if !out.trim().is_empty() => out.trim().to_string(),
            _ => commit.chars().take(7).collect(),
        }
    }
}

/// For every file under `dir` (relative to `top`, the top of a work tree; empty for all) that
/// `HEAD`'s history holds: the commit that added it, followed through its renames (a comment's
/// file moved with its page keeps the commit that first added it). One `git log` for all.
pub fn files_added(top: &Path, dir: &str) -> FilesAdded {
    let spec = if dir.is_empty() { "." } else { dir };
    let out = git(
        top,
        &[
            "--literal-pathspecs",
            "log",
            "--reverse",
            "--diff-filter=AR",
            "-M",
            "--name-status",
            "-z",
            "--format=%x01%H",
            "HEAD",
            "--",
            spec,
        ],
    );
    let mut added = FilesAdded::default();
    let Some((0, text)) = out else {
        return added;
    };
    for chunk in text.split('\u{1}').filter(|c| !c.is_empty()) {
        let mut fields = chunk.split('\0');
        let Some(commit) = fields.next().map(str::trim) else {
            continue;
        };
        let at = added.commits.len();
        added.commits.push(commit.to_string());
        let mut fields = fields
            .map(|f| f.trim_start_matches('\n'))
            .filter(|f| !f.is_empty());
        while let Some(status) = fields.next() {
            if status.starts_with('R') {
                let (Some(from), Some(to)) = (fields.next(), fields.next()) else {
                    break;
                };
                let first = added.by_file.remove(from).unwrap_or(at);
                added.by_file.insert(to.to_string(), first);
            } else if status == "A" {
                let Some(path) = fields.next() else { break };
                added.by_file.entry(path.to_string()).or_insert(at);
            } else {
                break;
            }
        }
    }
    added
}

/// What [`files_added`] found: each file's adding commit, the commits held once each (a big
/// store's files are thousands, added by a few commits).
#[derive(Debug, Default)]
pub struct FilesAdded {
    /// The commits `git log` listed, in its order.
    commits: Vec<String>,
    /// File → the commit that added it (a position in `commits`).
    by_file: HashMap<String, usize>,
}

impl FilesAdded {
    /// The commit that added `file` (relative to the top of the work tree), if one did.
    pub fn get(&self, file: &str) -> Option<&str> {
        let at = *self.by_file.get(file)?;
        self.commits.get(at).map(String::as_str)
    }

    /// Every file found and the commit that added it, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        (self.by_file.iter())
            .filter_map(|(file, &at)| Some((file.as_str(), self.commits.get(at)?.as_str())))
    }
}

/// `HEAD`'s commits with their committer times, in `git rev-list` order, listed once: the
/// commit current at each of many instants without a `git` process for each
/// ([`Timeline::commit_at`] answers as [`Repo::commit_at`](super::Repo::commit_at) does).
#[derive(Debug, Default)]
pub struct Timeline {
    /// `(committer time, commit)` in `git rev-list HEAD` order.
    commits: Vec<(i64, String)>,
    /// For each position, the earliest time at or before it in that order (never rising): the
    /// first commit at or before an instant is found by halving.
    earliest: Vec<i64>,
    /// The last root commit (no parent) in that order.
    root: Option<String>,
}

impl Timeline {
    /// `HEAD`'s commits in the work tree at `top`: one `git rev-list`. Empty without a commit.
    pub fn of_head(top: &Path) -> Timeline {
        let mut t = Timeline::default();
        let Some((0, out)) = git(top, &["rev-list", "--timestamp", "--parents", "HEAD"]) else {
            return t;
        };
        for line in out.lines() {
            let mut fields = line.split(' ');
            let (Some(Ok(time)), Some(commit)) =
                (fields.next().map(str::parse::<i64>), fields.next())
            else {
                continue;
            };
            if fields.next().is_none() {
                t.root = Some(commit.to_string());
            }
            let low = t.earliest.last().map_or(time, |&e| e.min(time));
            t.earliest.push(low);
            t.commits.push((time, commit.to_string()));
        }
        t
    }

    /// The commit current at `at`: the first in `git rev-list HEAD` order committed at or
    /// before it (what `git rev-list -1 --before=<at> HEAD` gives), else the last root commit.
    /// `None` when `at` is not an instant of the store's form (`2026-01-02T03:04:05.678Z`,
    /// which git reads to the whole second): the caller then asks git.
    pub fn commit_at(&self, at: &str) -> Option<Option<String>> {
        let instant =
            chrono::NaiveDateTime::parse_from_str(at.strip_suffix('Z')?, "%Y-%m-%dT%H:%M:%S%.f")
                .ok()?
                .and_utc()
                .timestamp();
        let first = self.earliest.partition_point(|&e| e > instant);
        Some(match self.commits.get(first) {
            Some((_, commit)) => Some(commit.clone()),
            None => self.root.clone(),
        })
    }
}

/// The newest commit every one of `commits` descends from (`git merge-base --octopus`); the
/// commit itself when there is one.
pub fn common_ancestor(top: &Path, commits: &[&str]) -> Option<String> {
    match commits {
        [] => None,
        [one] => Some(one.to_string()),
        many => {
            let mut args = vec!["merge-base", "--octopus"];
            args.extend_from_slice(many);
            match git(top, &args) {
                Some((0, out)) => Some(out.trim().to_string()).filter(|c| !c.is_empty()),
                _ => None,
            }
        }
    }
}

/// The commits of `git blame --porcelain` output, in the order of the lines, each once.
fn blamed_commits(porcelain: &str) -> Vec<String> {
    let mut seen = Vec::new();
    for line in porcelain.lines() {
        let mut parts = line.split(' ');
        let (Some(sha), Some(orig), Some(fin)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let is_header = sha.len() == 40
            && sha.bytes().all(|b| b.is_ascii_hexdigit())
            && orig.parse::<usize>().is_ok()
            && fin.parse::<usize>().is_ok();
        if is_header && !seen.iter().any(|s| s == sha) {
            seen.push(sha.to_string());
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::{Timeline, blamed_commits, files_added};
    use crate::model::book::git::Repo;
    use std::path::Path;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
            .args(["-c", "commit.gpgsign=false"])
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("git");
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    #[test]
    fn a_file_keeps_the_commit_that_added_it_through_its_renames() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path();
        git(top, &["init", "-q"]);
        std::fs::create_dir_all(top.join("s/old page")).unwrap();
        std::fs::write(top.join("s/old page/c_1.json"), "{\"id\":\"c_1\"}\n").unwrap();
        std::fs::write(top.join("outside.json"), "{}\n").unwrap();
        git(top, &["add", "-A"]);
        git(top, &["commit", "-qm", "one"]);
        let one = git(top, &["rev-parse", "HEAD"]);
        std::fs::create_dir_all(top.join("s/new")).unwrap();
        git(top, &["mv", "s/old page/c_1.json", "s/new/c_1.json"]);
        std::fs::write(top.join("s/new/c_2.json"), "{\"id\":\"c_2\"}\n").unwrap();
        git(top, &["add", "-A"]);
        git(top, &["commit", "-qm", "two"]);
        let two = git(top, &["rev-parse", "HEAD"]);
        let added = files_added(top, "s");
        let mut got: Vec<(&str, &str)> = added.iter().collect();
        got.sort();
        assert_eq!(
            got,
            [
                ("s/new/c_1.json", one.as_str()),
                ("s/new/c_2.json", two.as_str())
            ]
        );
    }

    #[test]
    fn blame_headers_are_read_and_content_lines_are_not() {
        let a = "a".repeat(40);
        let z = "0".repeat(40);
        let out = format!(
            "{a} 1 1 2\nauthor X\nfilename f.md\n\t{a} 2 2 lookalike content\n{a} 2 2\n\tsecond\n{z} 3 3 1\n\tnew\n"
        );
        assert_eq!(blamed_commits(&out), vec![a, z]);
    }

    #[test]
    fn the_timeline_names_the_commit_git_names_at_every_instant() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path();
        let repo = || Repo::discover(top);
        git(top, &["init", "-q"]);
        assert_eq!(
            Timeline::of_head(top).commit_at("2026-07-28T09:00:00Z"),
            Some(None)
        );
        assert_eq!(repo().commit_at("2026-07-28T09:00:00Z"), None);
        let commit = |at: &str, file: &str| {
            std::fs::write(top.join(file), at).unwrap();
            git(top, &["add", "-A"]);
            let out = std::process::Command::new("git")
                .arg("-C")
                .arg(top)
                .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
                .args(["-c", "commit.gpgsign=false", "commit", "-qm", at])
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_COMMITTER_DATE", at)
                .env("GIT_AUTHOR_DATE", at)
                .output()
                .unwrap();
            assert!(out.status.success());
        };
        // Two roots merged, and a clock that went back (the third commit dated before the
        // second).
        commit("2026-07-28T09:00:00Z", "a");
        commit("2026-07-28T10:00:00Z", "a");
        commit("2026-07-28T09:30:00Z", "a");
        let main = git(top, &["symbolic-ref", "--short", "HEAD"]);
        git(top, &["checkout", "-q", "--orphan", "other"]);
        commit("2026-07-28T08:00:00Z", "b");
        git(top, &["checkout", "-q", &main]);
        git(
            top,
            &[
                "merge",
                "-q",
                "--allow-unrelated-histories",
                "--no-edit",
                "other",
            ],
        );
        let timeline = Timeline::of_head(top);
        for at in [
            "2026-07-28T07:59:59.999Z",
            "2026-07-28T08:00:00.000Z",
            "2026-07-28T08:59:59.999Z",
            "2026-07-28T09:00:00Z",
            "2026-07-28T09:00:00.999Z",
            "2026-07-28T09:29:59Z",
            "2026-07-28T09:30:00.5Z",
            "2026-07-28T09:59:59.000Z",
            "2026-07-28T10:00:00.000Z",
            "2030-01-01T00:00:00.000Z",
        ] {
            assert_eq!(
                timeline.commit_at(at),
                Some(repo().commit_at(at)),
                "at {at}"
            );
        }
        // Not the store's form: git is asked.
        for at in [
            "2026-07-28T11:00:00+02:00",
            "yesterday",
            "",
            "2026-02-30T00:00:00Z",
        ] {
            assert_eq!(timeline.commit_at(at), None, "{at}");
        }
    }
}
