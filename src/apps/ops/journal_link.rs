//! The rule on the journal entry a close links to (`comments done --journal J`, `comments
//! apply --journal J`, the MCP `done` and `apply_suggestion`): the entry must be in the
//! journal ([`check_link`]; `verify`'s `comment-unknown-journal-entry`), else the close is
//! refused. An entry that does not list the comment is accepted with a note
//! ([`journal_nudge`]; `verify`'s `comment-not-in-journal-changes`), as is a close that names
//! no entry; an apply that names none writes its own.
//!
//! Owns: that rule and its messages. Calls: [`notabene_store::journal`] (read only).

use crate::Result;
use notabene_core::error::{Error, ErrorKind};
use notabene_store::{Store, journal};
use serde_json::Value;

/// The nudge for a close of comments `ids` that links journal entry `entry` (one
/// [`check_link`] let through): with none, the protocol links every resolution to one; an entry
/// that does not list a comment is accepted (the journal is append-only: the entry cannot be
/// corrected in place), and the note says how to record it.
pub fn journal_nudge(store: &Store, entry: Option<&str>, ids: &[String]) -> Option<String> {
    let Some(entry) = entry else {
        return Some(
            "no --journal <entryId> — the protocol links every resolution to a journal entry."
                .into(),
        );
    };
    let journal = journal::read(store);
    let found = find(&journal, entry)?;
    let missing: Vec<&str> = ids
        .iter()
        .map(String::as_str)
        .filter(|id| !lists(found, id))
        .collect();
    (!missing.is_empty()).then(|| {
        format!(
            "note: journal entry {entry:?} does not list {} in its changes[].commentIds (verify reports comment-not-in-journal-changes) — append an entry that lists it with `journal add`.",
            missing.iter().map(|m| format!("{m:?}")).collect::<Vec<_>>().join(", ")
        )
    })
}

/// The entry `entry` of `journal`.
fn find<'a>(journal: &'a journal::Journal, entry: &str) -> Option<&'a Value> {
    journal
        .entries()
        .iter()
        .find(|e| e.get("id").and_then(Value::as_str) == Some(entry))
}

/// Whether journal entry `found` lists comment `id` in a `changes[].commentIds`.
fn lists(found: &Value, id: &str) -> bool {
    found
        .get("changes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("commentIds").and_then(Value::as_array))
        .flatten()
        .any(|c| c.as_str() == Some(id))
}

/// Refuses to link a close to journal entry `entry` unless the journal holds it: the remedy
/// is to append it first (`journal add`).
pub fn check_link(store: &Store, entry: &str) -> Result<()> {
    match find(&journal::read(store), entry) {
        Some(_) => Ok(()),
        None => Err(Error::of(
            ErrorKind::NotFound,
            format!("journal entry {entry:?} does not exist — append it first with `journal add`"),
            "journal",
        )),
    }
}
