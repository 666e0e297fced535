//! What git says of the book's Markdown files: which moved (renamed or copied) since a commit,
//! and the repository's state those answers depend on (a memo's key), asked on a thread of its
//! own when a build wants it early. The comment store is left out of both. Also what git's
//! diffs of those files depend on beside that (refs, configuration, attributes: a replayed
//! build's fingerprint).
//!
//! Owns: [`Move`], [`MoveKind`], [`StateAsked`] and the `Repo` methods that ask git about
//! Markdown files. Calls: `git` (its parent's way to run git).

use super::{Repo, git};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A repository's [`Repo::state`] being asked on another thread ([`Repo::ask_state`]), or
/// already answered ([`StateAsked::wait`]).
#[derive(Debug)]
pub struct StateAsked(Asked);

#[derive(Debug)]
enum Asked {
    Running(std::thread::JoinHandle<Option<String>>),
    Answered(Option<String>),
}

impl StateAsked {
    /// The state, once git has answered.
    pub fn take(self) -> Option<String> {
        match self.0 {
            Asked::Running(h) => h
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Asked::Answered(state) => state,
        }
    }

    /// Waits for git's answer and keeps it; the state, if any.
    pub fn wait(&mut self) -> Option<&str> {
        if let Asked::Running(_) = self.0 {
            let running = std::mem::replace(&mut self.0, Asked::Answered(None));
            self.0 = Asked::Answered(StateAsked(running).take());
        }
        match &self.0 {
            Asked::Answered(state) => state.as_deref(),
            Asked::Running(_) => None,
        }
    }
}

/// How git relates a file of an earlier commit to one of the working tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum MoveKind {
    /// Renamed (or moved): the old path is gone.
    Rename,
    /// Copied: the old path may still exist (a split chapter's second part).
    Copy,
    /// Merged: the old path is gone and most of its lines arrived in another file since (a
    /// chapter merged into another one, or into a new file), which git's rename detection
    /// does not report when that file existed before or took more than one source.
    Merge,
}

impl MoveKind {
    /// `git rename`, `git copy` or `git merge`, as the build report and `anchoring.followed.by` say it.
    pub fn as_str(self) -> &'static str {
        match self {
            MoveKind::Rename => "git rename",
            MoveKind::Copy => "git copy",
            MoveKind::Merge => "git merge",
        }
    }
}

/// A Markdown file git says moved, by repository-relative paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    /// The path in the earlier commit.
    pub from: String,
    /// The path in the working tree.
    pub to: String,
    /// Rename or copy.
    pub kind: MoveKind,
}

impl Repo {
    /// The pathspec that leaves the comment store out, when it is inside the work tree and
    /// does not hold the book's sources (a store at the book's root, or above it).
    fn without_store(&self) -> Option<String> {
        let (store, sources) = self.store.as_ref()?;
        let in_store = |s: PathBuf| store.canonicalize().is_ok_and(|store| s.starts_with(store));
        if sources.canonicalize().map_or(true, in_store) {
            return None;
        }
        let rel = self.relative(store)?;
        (!rel.is_empty()).then(|| format!(":(exclude,literal){rel}"))
    }

    /// `run` with git's arguments `args` then the Markdown pathspec `md` and the one leaving
    /// the store out; again without the latter when git refuses it (a store inside a
    /// submodule, whose files the work tree's status never walks anyway).
    fn markdown_only(
        &self,
        args: &[&str],
        md: &str,
        run: impl Fn(&[&str]) -> Option<(i32, String)>,
    ) -> Option<(i32, String)> {
        let with = |extra: Option<&str>| {
            let all: Vec<&str> = (args.iter().copied()).chain([md]).chain(extra).collect();
            run(&all)
        };
        match self.without_store() {
            Some(without) => match with(Some(&without)) {
                Some((0, out)) => Some((0, out)),
                _ => with(None),
            },
            None => with(None),
        }
    }

    /// What git's answers about this repository's history and work tree depend on, for a
    /// memo's key: the commit `HEAD` names and every change to a Markdown file the work tree and
    /// the index hold (`git status`, untracked files included, with each such file's bytes) —
    /// what its moves and copies are found among ([`Repo::moves_since`]).
    /// `None` without a repository: git has nothing to say.
    pub fn state(&self) -> Option<String> {
        let root = self.root()?;
        let head = git(root, &["rev-parse", "--verify", "-q", "HEAD"])
            .map(|(_, out)| out.trim().to_string())
            .unwrap_or_default();
        let args = [
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--",
        ];
        let status = self
            .markdown_only(&args, "*.md", |a| git(root, a))
            .map(|(_, out)| out)
            .unwrap_or_default();
        let mut state = format!("{head}\n{status}");
        for entry in status.split('\0') {
            let path = entry.get(3..).unwrap_or_default();
            if path.ends_with(".md") {
                let bytes = std::fs::read(root.join(path)).unwrap_or_default();
                state.push_str(&format!(
                    "\n{path} {:016x}",
                    notabene_core::disk::fnv(&bytes)
                ));
            }
        }
        Some(state)
    }

    /// [`Repo::state`], asked on a thread of its own: taken when needed.
    pub fn ask_state(&self) -> StateAsked {
        let repo = self.clone();
        StateAsked(Asked::Running(std::thread::spawn(move || repo.state())))
    }

    /// What git's diffs of a book's files (the /review cards') depend on beside
    /// [`Repo::state`]: every ref and the commit it names (a journal entry may name a branch,
    /// or a commit fetched since), the shallow boundary, the configuration in effect (each
    /// setting with the file it is from) and the attributes files that can apply (the work
    /// tree's `.gitattributes`, `info/attributes`, the global one), each with its bytes.
    /// `None` without a repository.
    pub fn diff_state(&self) -> Option<String> {
        let root = self.root()?;
        let run = |args: &[&str]| {
            let (code, out) = git(root, args).unwrap_or((-1, String::new()));
            format!("{} {code}\n{out}\n", args.join(" "))
        };
        let mut state = run(&["for-each-ref", "--format=%(objectname) %(refname)"]);
        state.push_str(&run(&["config", "--list", "--show-origin", "-z"]));
        let mut files: Vec<PathBuf> = Vec::new();
        let paths = [
            "rev-parse",
            "--git-path",
            "shallow",
            "--git-path",
            "info/attributes",
        ];
        if let Some((0, out)) = git(root, &paths) {
            files.extend(out.lines().map(|p| root.join(p)));
        }
        let attributes = ["ls-files", "-z", "-co", "--exclude-standard", "--"];
        let glob = ":(glob)**/.gitattributes";
        if let Some((0, out)) = git(root, &[&attributes[..], &[glob]].concat()) {
            files.extend(
                out.split('\0')
                    .filter(|r| !r.is_empty())
                    .map(|r| root.join(r)),
            );
        }
        if let Some(global) = global_attributes(root, &state) {
            files.push(global);
        }
        for f in files {
            state.push_str(&format!("{}\n", f.display()));
            state.push_str(&bounded_text(&f));
        }
        Some(state)
    }

    /// [`Repo::diff_state`], asked on a thread of its own: taken when needed.
    pub fn ask_diff_state(&self) -> StateAsked {
        let repo = self.clone();
        StateAsked(Asked::Running(std::thread::spawn(move || {
            repo.diff_state()
        })))
    }

    /// Every Markdown file renamed or copied between commit `base` and the working tree as
    /// it is now — commits since, the index, unstaged edits and files git does not track yet —
    /// with git's own rename and copy detection. The repository's index is not touched: a
    /// private copy of it gets the working tree's state.
    pub fn moves_since(&self, base: &str) -> Vec<Move> {
        let Some(root) = self.root() else {
            return Vec::new();
        };
        let Ok(tmp) = tempfile::Builder::new().prefix("notabene-index-").tempdir() else {
            return Vec::new();
        };
        let index = tmp.path().join("index");
        let objects = tmp.path().join("objects");
        let Some((0, real_objects)) = git(root, &["rev-parse", "--git-path", "objects"]) else {
            return Vec::new();
        };
        let real_objects = root.join(real_objects.trim());
        if std::fs::create_dir(&objects).is_err() {
            return Vec::new();
        }
        if let Some((0, real)) = git(root, &["rev-parse", "--git-path", "index"]) {
            let real = root.join(real.trim());
            if real.is_file() && std::fs::copy(&real, &index).is_err() {
                return Vec::new();
            }
        }
        let with_index = |args: &[&str]| -> Option<(i32, String)> {
            let out = Command::new("git")
                .arg("-C")
                .arg(root)
                .args(["-c", "core.quotepath=off"])
                .args(args)
                .env("GIT_INDEX_FILE", &index)
                // New blobs go to a private object directory too; the repository's objects
                // are read through it as an alternate, never written.
                .env("GIT_OBJECT_DIRECTORY", &objects)
                .env("GIT_ALTERNATE_OBJECT_DIRECTORIES", &real_objects)
                .env("LC_ALL", "C")
                .output()
                .ok()?;
            Some((
                out.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&out.stdout).into_owned(),
            ))
        };
        let md = ":(glob)**/*.md";
        if !matches!(
            self.markdown_only(&["add", "-A", "--"], md, with_index),
            Some((0, _))
        ) {
            return Vec::new();
        }
        let diff = [
            "diff",
            "--cached",
            "--no-ext-diff",
            "-M",
            "-C",
            "-C",
            "--name-status",
            "-z",
            base,
            "--",
        ];
        let Some((0, out)) = self.markdown_only(&diff, md, with_index) else {
            return Vec::new();
        };
        parse_name_status(&out)
    }
}

/// Parses `git diff --name-status -z` output, keeping renames and copies.
fn parse_name_status(out: &str) -> Vec<Move> {
    let mut fields = out.split('\0').filter(|f| !f.is_empty());
    let mut moves = Vec::new();
    while let Some(status) = fields.next() {
        let kind = match status.as_bytes().first() {
            Some(b'R') => Some(MoveKind::Rename),
            Some(b'C') => Some(MoveKind::Copy),
            _ => None,
        };
        let Some(kind) = kind else {
            fields.next();
            continue;
        };
        let (Some(from), Some(to)) = (fields.next(), fields.next()) else {
            break;
        };
        moves.push(Move {
            from: from.to_string(),
            to: to.to_string(),
            kind,
        });
    }
    moves
}

/// The global attributes file git reads: `core.attributesFile` (its last value in `config`,
/// the output of `git config --list --show-origin -z`), else `$XDG_CONFIG_HOME/git/attributes`,
/// else `~/.config/git/attributes`.
fn global_attributes(root: &Path, config: &str) -> Option<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let set = config
        .split('\0')
        .filter_map(|entry| entry.split_once('\n'))
        .rfind(|(key, _)| key.eq_ignore_ascii_case("core.attributesfile"));
    if let Some((_, path)) = set {
        return match (path.strip_prefix("~/"), &home) {
            (Some(rest), Some(home)) => Some(home.join(rest)),
            _ => Some(root.join(path)),
        };
    }
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(".config")))?;
    Some(config.join("git/attributes"))
}

/// The first megabyte of the file at `path` (not following a last symlink; its bytes lossily
/// as text), or a line saying there is none: what an attributes file holds, for a key.
fn bounded_text(path: &Path) -> String {
    use std::io::Read;
    const MAX: u64 = 1 << 20;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return "(none)\n".into();
    };
    if !meta.is_file() {
        return format!("(not a file, {} bytes)\n", meta.len());
    }
    let mut bytes = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(MAX).read_to_end(&mut bytes));
    match read {
        Ok(_) => format!("{} {}\n", meta.len(), String::from_utf8_lossy(&bytes)),
        Err(_) => "(unreadable)\n".into(),
    }
}
