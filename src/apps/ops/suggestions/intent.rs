//! The record of an `apply` in progress, so that a run killed at any point is finished by the next
//! one. Before any Markdown is written, the plan is recorded (atomic, fsynced): the comments it
//! closes, for each Markdown file the edits as they were traced (offset, the bytes expected there
//! and those that followed them, the bytes to put there), when it happened, who applied it and the
//! journal entry it links to (and writes, when the apply writes its own). Then the Markdown files
//! are written, then the journal entry, then the comments, and last the record is removed. Any
//! later `apply` finds the record first and carries it out to the end from what it finds on disk,
//! so the end state is the one an uninterrupted run gives; `verify` reports a record left behind.
//!
//! **The record is local state, never data.** It lives where git never carries it: in the git
//! directory of the repository holding the store (`<git dir>/notabene/apply-<key>.json`), or,
//! outside git, in the user's state directory; `<key>` names the store's canonical path, so each
//! store of a machine has its own. A record in the store itself (the name earlier versions used,
//! [`FOREIGN`]) came with the files — through a merge, a copy, an archive — and is never read:
//! `verify` reports it. Even a local record is not trusted with what is written: finishing it
//! writes only what the comments it names still ask for, traced again in the book
//! (`suggestions::write`); the record only says which comments, and lets a run recognise an edit
//! already made.
//!
//! May call: the store (`notabene_store`), git (`model::book::git`), the suggestion's text rules.

use crate::{Error, Result, bail};
use notabene_store::verify::{Finding, Level};
use notabene_store::{Store, fsx};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The name earlier versions gave the record, in the store directory. A file of that name is
/// never carried out: it was not written by an `apply` of this work tree.
pub const FOREIGN: &str = notabene_store::APPLY_RECORD;

/// The record's format; a record of another format is refused, not guessed at.
const VERSION: u32 = 2;

/// How many bytes after an edit's expected text the record keeps, to tell a file that holds
/// the edit from one that does not when the new text is a prefix of the old (a shortening or
/// a deletion).
const AFTER: usize = 64;

/// The largest record read (a plan of many comments is a few hundred kilobytes).
const MAX_RECORD: u64 = 16 << 20;

/// One planned replacement in a Markdown file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Replace {
    /// Byte offset in the file as it was read.
    pub start: usize,
    /// The bytes found there (the quote's source).
    pub expected: String,
    /// The bytes that followed them, up to the next edit (at most `AFTER` of them).
    #[serde(default)]
    pub after: String,
    /// The bytes put there.
    pub text: String,
}

impl Replace {
    /// An edit of `text` at `start..start + expected.len()` of `file`, `next` the start of
    /// the file's next edit (or its length).
    pub fn new(file: &str, start: usize, expected: String, text: String, next: usize) -> Replace {
        let from = start + expected.len();
        let mut to = next.min(from + AFTER).min(file.len()).max(from);
        while !file.is_char_boundary(to) {
            to -= 1;
        }
        Replace {
            start,
            after: file[from..to].to_string(),
            expected,
            text,
        }
    }
}

/// The edits of one Markdown file, in ascending order, not overlapping.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEdits {
    /// The file, relative to the book root, `/`-separated.
    pub path: String,
    /// Its edits.
    pub edits: Vec<Replace>,
}

/// One comment to close.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Close {
    /// The comment's id.
    pub id: String,
    /// `applied.file`: the Markdown file written, relative to the book root.
    pub file: String,
    /// The 1-based line where the replacement starts.
    pub line: usize,
    /// The suggestion as it was planned (`quote`, `text`): a comment whose suggestion changed
    /// since is not closed as applied.
    pub quote: String,
    /// See `quote`.
    pub text: String,
}

/// The journal entry an `apply` links its resolutions to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalPlan {
    /// The entry's id (`resolution.journalEntryId`).
    pub id: String,
    /// `Some`: the apply writes the entry itself, saying it was done by this actor
    /// (`person` or `agent`); `None`: the entry is the caller's (`--journal`).
    pub write: Option<String>,
}

/// A whole `apply`: its Markdown edits, its journal entry and its closes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Intent {
    /// The record's format (`VERSION`).
    pub version: u32,
    /// When it was planned (`updatedAt`, `applied.at`).
    pub at: String,
    /// Who applied it (`applied.by`).
    pub author: String,
    /// `resolution.note`, when the caller gave one.
    pub note: Option<String>,
    /// The journal entry.
    pub journal: JournalPlan,
    /// The Markdown files, each once.
    pub files: Vec<FileEdits>,
    /// The comments, in the order they were asked for.
    pub closes: Vec<Close>,
}

/// Whether the edits are in `text` as planned, done, or neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Every expected text is where the plan found it.
    Before,
    /// Every replacement is in place.
    Done,
    /// Something else changed those bytes.
    Changed,
}

impl FileEdits {
    /// Where `text` stands (bytes after the last edit may have changed: they are not looked at).
    pub fn state(&self, text: &str) -> State {
        let holds = |at: usize, first: &str, then: &str| {
            text.get(at..at + first.len()) == Some(first)
                && text.get(at + first.len()..at + first.len() + then.len()) == Some(then)
        };
        let before = self
            .edits
            .iter()
            .all(|e| holds(e.start, &e.expected, &e.after));
        let mut shift: isize = 0;
        let mut done = true;
        for e in &self.edits {
            let at = (e.start as isize + shift) as usize;
            done &= holds(at, &e.text, &e.after);
            shift += e.text.len() as isize - e.expected.len() as isize;
        }
        match (done, before) {
            (true, _) => State::Done,
            (false, true) => State::Before,
            (false, false) => State::Changed,
        }
    }

    /// `text` with the edits made (call when [`FileEdits::state`] is [`State::Before`]).
    pub fn applied_to(&self, text: &str) -> String {
        let mut out = text.to_string();
        for e in self.edits.iter().rev() {
            out.replace_range(e.start..e.start + e.expected.len(), &e.text);
        }
        out
    }
}

impl Intent {
    /// A record of the current format.
    pub fn new(
        at: String,
        author: String,
        note: Option<String>,
        journal: JournalPlan,
        files: Vec<FileEdits>,
        closes: Vec<Close>,
    ) -> Intent {
        Intent {
            version: VERSION,
            at,
            author,
            note,
            journal,
            files,
            closes,
        }
    }

    /// The ids of the comments whose edits go into `file`.
    pub fn ids_in(&self, file: &str) -> Vec<String> {
        self.closes
            .iter()
            .filter(|c| c.file == file)
            .map(|c| c.id.clone())
            .collect()
    }
}

/// Where the record of `store` lives: `<git dir>/notabene/apply-<key>.json` when the store is
/// in a git work tree, else `<state dir>/mdbook-notabene/apply-<key>.json`; `<key>` is a digest of
/// the store's canonical path.
pub fn location(store: &Store) -> Result<PathBuf> {
    let root = store
        .root()
        .canonicalize()
        .unwrap_or_else(|_| store.root().to_path_buf());
    let key = notabene_core::disk::fnv(root.to_string_lossy().as_bytes());
    let name = format!("apply-{key:016x}.json");
    if let Some(git) = crate::model::book::git_config::git_dir(store.root()) {
        return Ok(git.join("notabene").join(name));
    }
    state_dir()
        .map(|d| d.join(name))
        .ok_or_else(|| {
            Error::new(
                "no place for the record of an apply: the store is not in a git work tree and neither XDG_STATE_HOME nor HOME is set (store)",
            )
        })
}

/// The user's state directory for the tool: `$XDG_STATE_HOME/mdbook-notabene`, else
/// `~/.local/state/mdbook-notabene` (`~/Library/Application Support` on macOS,
/// `%LOCALAPPDATA%` on Windows).
fn state_dir() -> Option<PathBuf> {
    notabene_core::disk::user_dir(
        "XDG_STATE_HOME",
        ".local/state",
        "Library/Application Support",
    )
}

/// The record left for `store`, if any.
pub fn read(store: &Store) -> Result<Option<Intent>> {
    let path = location(store)?;
    let Some(bytes) = read_local(&path)? else {
        return Ok(None);
    };
    let unreadable = |why: String| {
        Error::new(format!(
            "the record of an interrupted apply is not readable: {why}; check the Markdown and the comments it names, then delete it ({})",
            path.display()
        ))
    };
    let intent: Intent = serde_json::from_slice(&bytes).map_err(|e| unreadable(e.to_string()))?;
    if intent.version != VERSION {
        return Err(unreadable(format!(
            "format {} is not {VERSION}",
            intent.version
        )));
    }
    Ok(Some(intent))
}

/// The bytes of the record at `path` (`None`: there is none), not through a symlink, at most
/// [`MAX_RECORD`] of them.
fn read_local(path: &Path) -> Result<Option<Vec<u8>>> {
    match fsx::read_file(path, MAX_RECORD) {
        Ok(f) => Ok(Some(f.bytes)),
        Err(fsx::ReadFailure::Missing) => Ok(None),
        Err(why) => bail!(
            "the record of an interrupted apply {}; check the Markdown and the comments it names, then delete it ({})",
            why.describe(),
            path.display()
        ),
    }
}

/// Writes the record (atomically, fsynced) before anything else is written.
pub fn write(store: &Store, intent: &Intent) -> Result<()> {
    let path = location(store)?;
    let (dir, name) = split(&path)?;
    std::fs::create_dir_all(dir).map_err(|e| Error::io("cannot create", dir, e))?;
    let json = serde_json::to_string(intent).map_err(|e| Error::new(format!("{e} (apply)")))?;
    fsx::write_atomic(dir, Path::new(name), json.as_bytes())
}

/// Removes the record: the apply it described is finished.
pub fn remove(store: &Store) -> Result<()> {
    let path = location(store)?;
    let (dir, name) = split(&path)?;
    fsx::remove_file(dir, Path::new(name))
}

fn split(path: &Path) -> Result<(&Path, &str)> {
    match (path.parent(), path.file_name().and_then(|n| n.to_str())) {
        (Some(dir), Some(name)) => Ok((dir, name)),
        _ => Err(Error::new(format!(
            "no place for the record of an apply ({})",
            path.display()
        ))),
    }
}

/// What `verify` reports of records: a record in the store ([`FOREIGN`]), which came with the
/// files and is never carried out, and each comment of this work tree's own record that is not
/// closed yet. A check only: nothing is repaired here; running the same `apply` again finishes
/// an interrupted one.
pub fn findings(store: &Store) -> Vec<Finding> {
    let mut out = Vec::new();
    if std::fs::symlink_metadata(store.root().join(FOREIGN)).is_ok() {
        out.push(Finding {
            level: Level::Error,
            code: "apply-record-foreign",
            message: format!(
                "{FOREIGN} is the record of an apply that was not written here (it came with the store's files, through git or a copy); it is never carried out: delete it"
            ),
            file: Some(FOREIGN.into()),
            id: None,
        });
    }
    let shown = location(store)
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let plan = match read(store) {
        Ok(Some(plan)) => plan,
        Ok(None) => return out,
        Err(e) => {
            out.push(Finding {
                level: Level::Error,
                code: "apply-interrupted",
                message: e.message().to_string(),
                file: Some(shown),
                id: None,
            });
            return out;
        }
    };
    let snap = store.load_unchecked().unwrap_or_default();
    for cl in &plan.closes {
        let applied = snap
            .comments()
            .find(|r| r.comment.id() == Some(cl.id.as_str()))
            .is_some_and(|r| r.comment.suggestion().is_some_and(|s| s.applied));
        if applied {
            continue;
        }
        out.push(Finding {
            level: Level::Error,
            code: "apply-interrupted",
            message: format!(
                "an apply was interrupted: the suggestion of {} goes into {} while the comment is still open — run `notabene comments apply {}` again to finish it.",
                cl.id, cl.file, cl.id
            ),
            file: Some(shown.clone()),
            id: Some(cl.id.clone()),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edits() -> FileEdits {
        FileEdits {
            path: "src/a.md".into(),
            edits: vec![
                Replace::new("one two three", 0, "one".into(), "uno".into(), 8),
                Replace::new("one two three", 8, "three".into(), "3".into(), 13),
            ],
        }
    }

    #[test]
    fn the_state_of_a_file_is_read_from_its_bytes() {
        let e = edits();
        assert_eq!(e.state("one two three"), State::Before);
        assert_eq!(e.state("one two three\nappended\n"), State::Before);
        let done = e.applied_to("one two three\nmore");
        assert_eq!(done, "uno two 3\nmore");
        assert_eq!(e.state(&done), State::Done);
        assert_eq!(e.state("once two three"), State::Changed);
    }

    #[test]
    fn a_shortening_or_a_deletion_is_not_taken_for_done() {
        let file = "The cats sat on the mat today.";
        let short = FileEdits {
            path: "a.md".into(),
            edits: vec![Replace::new(
                file,
                4,
                "cats sat".into(),
                "cats".into(),
                file.len(),
            )],
        };
        assert_eq!(short.state(file), State::Before);
        let done = short.applied_to(file);
        assert_eq!(done, "The cats on the mat today.");
        assert_eq!(short.state(&done), State::Done);
        let gone = FileEdits {
            path: "a.md".into(),
            edits: vec![Replace::new(
                file,
                23,
                " today".into(),
                String::new(),
                file.len(),
            )],
        };
        assert_eq!(gone.state(file), State::Before);
        assert_eq!(gone.state(&gone.applied_to(file)), State::Done);
    }
}
