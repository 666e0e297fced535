//! The record of an `apply` in progress, so that a run killed at any point is finished by the next
//! one. Before any Markdown is written, the whole plan is written to the store as [`FILE`] (atomic,
//! fsynced): for each Markdown file the edits (offset, the bytes expected there and those that
//! followed them, the bytes to put there), and for each comment its state before and its closed
//! state after. Then the Markdown files are written, then the comments, and last the record is
//! removed. Any later `apply` finds the record first and carries it out to the end, step by step
//! from what it finds on disk, so the end state is byte for byte the one an uninterrupted run
//! gives; `verify` reports a record left behind (a Markdown edit made whose comment may still be
//! open).
//!
//! The name does not end in `.json`, so no reader of the store takes it for a comment file, and
//! ends in `.tmp`, so the store's `.gitignore` keeps it local to its work tree; readers do not list
//! it as a leftover, and `clean` leaves it. A record is still checked before it is carried out
//! ([`Intent::check`]): a file inside the book, reached through no symlink, named by a comment of
//! the record, and no mdBook directive in what it writes.

use crate::base::store::fsx;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::Path;

/// The record's file name, in the store directory.
pub const FILE: &str = crate::base::store::APPLY_RECORD;

/// How many bytes after an edit's expected text the record keeps, to tell a file that holds
/// the edit from one that does not when the new text is a prefix of the old (a shortening or
/// a deletion).
const AFTER: usize = 64;

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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Close {
    /// The comment's id.
    pub id: String,
    /// The comment as it was when the plan was made.
    pub before: Map<String, Value>,
    /// The comment closed.
    pub after: Map<String, Value>,
    /// `applied.file`: the Markdown file written, relative to the book root.
    pub file: String,
    /// The 1-based line where the replacement starts.
    pub line: usize,
}

/// A whole `apply`: its Markdown edits and its closes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Intent {
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
    /// Refuses a record that could write anything an `apply` would not: a file outside the
    /// book or through a symlink, a file no comment of the record names, a replacement holding
    /// an mdBook directive. (A record is local, but a store is shared through git, and a file
    /// can always be put there by hand.)
    pub fn check(&self, book_root: &Path) -> Result<()> {
        let bad = |why: &str| {
            Error::new(format!(
                "the record of an interrupted apply {why}; check it, then delete it ({FILE})"
            ))
        };
        for fe in &self.files {
            let rel = Path::new(&fe.path);
            fsx::contained(book_root, rel).map_err(|_| bad("names a file outside the book"))?;
            fsx::check_no_symlink(book_root, rel)
                .map_err(|_| bad("names a file reached through a symlink"))?;
            if !self.closes.iter().any(|c| c.file == fe.path) {
                return Err(bad("names a file none of its comments was applied in"));
            }
            if fe
                .edits
                .iter()
                .any(|e| super::safe_text::has_directive(&e.text))
            {
                return Err(bad("writes an mdBook directive"));
            }
        }
        Ok(())
    }
}

/// The record left in `store`, if any.
pub fn read(store: &Path) -> Result<Option<Intent>> {
    let path = store.join(FILE);
    // Read as every store file is: never through a symlink, a regular file, capped.
    let bytes = match fsx::read_in(store, Path::new(FILE), fsx::MAX_COMMENT_FILE) {
        Ok(read) => read.bytes,
        Err(fsx::ReadFailure::Missing) => return Ok(None),
        Err(e) => return Err(e.to_error(FILE)),
    };
    serde_json::from_slice(&bytes).map(Some).map_err(|e| {
        Error::new(format!(
            "the record of an interrupted apply is not readable: {e}; check the Markdown and the comments it names, then delete it ({})",
            path.display()
        ))
    })
}

/// Writes the record (atomically, fsynced) before anything else is written.
pub fn write(store: &Path, intent: &Intent) -> Result<()> {
    let json = serde_json::to_string(intent).map_err(|e| Error::new(format!("{e} ({FILE})")))?;
    fsx::write_atomic(store, Path::new(FILE), json.as_bytes())
}

/// Removes the record: the apply it described is finished.
pub fn remove(store: &Path) -> Result<()> {
    fsx::remove_file(store, Path::new(FILE))
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
