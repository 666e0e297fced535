//! The journal (`<store>/journal.json`): one JSON array of entries recording what changed and why.
//! Entries are validated before they are appended; an append is locked, atomic, and re-read to
//! confirm; re-appending an identical entry is a no-op, a different one with the same id is
//! refused.

use super::{Store, fsx, ids, json};
use crate::{Result, bail};
use serde_json::{Map, Value};
use std::path::Path;

/// The journal file name at the top of the store.
pub const FILE: &str = "journal.json";

/// What `journal.json` holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Journal {
    /// No journal file yet.
    Missing,
    /// The file does not parse (the parser's message).
    Unreadable(String),
    /// Not read: not a regular file (a symlink, a directory…), over [`fsx::MAX_JOURNAL`], or an
    /// I/O error — what it is, as the rest of a sentence naming it
    /// ([`fsx::ReadFailure::describe`]).
    Refused(String),
    /// The file parses but is not an array.
    NotArray,
    /// The entries.
    Entries(Vec<Value>),
}

impl Journal {
    /// The entries readers use: an absent or non-array journal reads as empty.
    pub fn entries(&self) -> &[Value] {
        match self {
            Journal::Entries(e) => e,
            _ => &[],
        }
    }

    /// The entries, or an error when the file exists but is not a journal (writers and
    /// listings refuse to guess).
    pub fn require_entries(&self) -> Result<&[Value]> {
        match self {
            Journal::Missing => Ok(&[]),
            Journal::Entries(e) => Ok(e),
            Journal::Unreadable(err) => bail!("journal.json is not valid JSON: {err} ({FILE})"),
            Journal::Refused(what) => bail!("journal.json {what} ({FILE})"),
            Journal::NotArray => bail!("journal.json must be a JSON array of entries ({FILE})"),
        }
    }
}

/// Reads the journal of `store` (as every store file is read: [`fsx::read_in`]).
pub fn read(store: &Store) -> Journal {
    match fsx::read_in(store.root(), Path::new(FILE), fsx::MAX_JOURNAL) {
        Err(fsx::ReadFailure::Missing) => Journal::Missing,
        Err(e) => Journal::Refused(e.describe()),
        Ok(read) => match serde_json::from_slice::<Value>(&read.bytes) {
            Ok(Value::Array(a)) => Journal::Entries(a),
            Ok(_) => Journal::NotArray,
            Err(e) => Journal::Unreadable(e.to_string()),
        },
    }
}

/// Whether `s` is a valid `YYYY-MM-DD` date.
pub(crate) fn is_date(s: &str) -> bool {
    s.len() == 10 && chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok()
}

/// Validates an entry read from stdin and fills what may be defaulted: a missing `id` gets a
/// generated `j-YYYY-MM-DD-xxxxxx` (placed first), a missing `date` today's date. Unknown
/// fields are kept. Errors name the offending field.
pub fn prepare_entry(value: Value) -> Result<Map<String, Value>> {
    let Value::Object(entry) = value else {
        bail!("journal add: expected a JSON entry on stdin (stdin)");
    };
    let now = ids::now()?;
    let opt_string = |key: &str| -> Result<Option<&str>> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(_) => bail!("journal entry {key} must be a string ({key})"),
        }
    };
    if let Some(id) = opt_string("id")?
        && (id.trim().is_empty() || id.chars().any(char::is_control))
    {
        bail!("journal entry id must be a non-empty string without control characters (id)");
    }
    if let Some(date) = opt_string("date")?
        && !is_date(date)
    {
        bail!("journal entry date must be YYYY-MM-DD, got {date:?} (date)");
    }
    let title = opt_string("title")?.unwrap_or("");
    let summary = opt_string("summary")?.unwrap_or("");
    if title.trim().is_empty() && summary.trim().is_empty() {
        bail!("journal entry needs a title or a summary (title)");
    }
    let Some(Value::Array(changes)) = entry.get("changes") else {
        bail!("journal entry needs changes: one record per page touched (changes)");
    };
    if changes.is_empty() {
        bail!("journal entry needs changes: one record per page touched (changes)");
    }
    for (i, change) in changes.iter().enumerate() {
        let at = |f: &str| format!("changes[{i}].{f}");
        let Value::Object(c) = change else {
            bail!("each change must be an object (changes[{i}])");
        };
        match c.get("page") {
            Some(Value::String(p)) => {
                if let Some(problem) = super::page_id::page_id_problem(p) {
                    bail!("{problem} ({})", at("page"));
                }
            }
            _ => bail!("each change needs a page ({})", at("page")),
        }
        match c.get("commentIds") {
            None => {}
            Some(Value::Array(a)) if a.iter().all(Value::is_string) => {}
            Some(_) => bail!(
                "commentIds must be an array of comment ids ({})",
                at("commentIds")
            ),
        }
        for key in ["what", "why", "ref"] {
            if let Some(v) = c.get(key)
                && !v.is_string()
            {
                bail!("{key} must be a string ({})", at(key));
            }
        }
    }
    // Generated values go where an agent would have written them: id first, date after it.
    let has_id = opt_string("id")?.is_some();
    let has_date = opt_string("date")?.is_some();
    let mut out = Map::new();
    if !has_id {
        out.insert("id".into(), ids::journal_id(now).into());
        if !has_date {
            out.insert("date".into(), ids::date(now).into());
        }
    }
    for (k, v) in &entry {
        if (k == "id" && !has_id) || (k == "date" && !has_date) {
            continue;
        }
        out.insert(k.clone(), v.clone());
        if k == "id" && !has_date {
            out.insert("date".into(), ids::date(now).into());
        }
    }
    Ok(out)
}

/// The result of an append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Appended {
    /// The entry was added.
    Added,
    /// The same entry was already there, with this id; nothing was written.
    AlreadyPresent(String),
}

/// The keys [`prepare_entry`] fills in for `input` (the entry as sent).
pub fn generated_keys(input: &Value) -> &'static [&'static str] {
    let has = |k: &str| input.get(k).is_some_and(|v| !v.is_null());
    match (has("id"), has("date")) {
        (true, _) => &[],
        (false, true) => &["id"],
        (false, false) => &["id", "date"],
    }
}

/// Appends `entry` (already prepared) to the journal under the store lock, atomically, then
/// re-reads the file to confirm the entry is there. `generated` names the keys
/// [`prepare_entry`] filled in (an entry sent without an id): an entry equal to an existing
/// one apart from those is the same entry sent again, and is not appended twice.
pub fn append(store: &Store, entry: Map<String, Value>, generated: &[&str]) -> Result<Appended> {
    let lock = store.lock()?;
    append_locked(store, entry, generated, &lock)
}

/// [`append`] by a writer that holds the store lock already (an `apply`, which writes its
/// journal entry between its Markdown edits and its closes).
pub fn append_locked(
    store: &Store,
    entry: Map<String, Value>,
    generated: &[&str],
    _lock: &fsx::StoreLock,
) -> Result<Appended> {
    store.check_compatible()?;
    let mut id = entry
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let journal = read(store);
    let mut entries = journal.require_entries()?.to_vec();
    if !generated.is_empty() {
        let without = |m: &Map<String, Value>| -> Map<String, Value> {
            m.iter()
                .filter(|(k, _)| !generated.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        };
        let mine = without(&entry);
        if let Some(same) = entries
            .iter()
            .filter_map(Value::as_object)
            .find(|e| without(e) == mine)
        {
            id = same
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            return Ok(Appended::AlreadyPresent(id));
        }
    }
    if let Some(existing) = entries
        .iter()
        .find(|e| e.get("id").and_then(Value::as_str) == Some(id.as_str()))
    {
        if existing.as_object() == Some(&entry) {
            return Ok(Appended::AlreadyPresent(id));
        }
        bail!("journal entry {id:?} already exists with different content; choose another id (id)");
    }
    entries.push(Value::Object(entry));
    fsx::write_atomic(
        store.root(),
        Path::new(FILE),
        json::to_js_pretty(&entries).as_bytes(),
    )?;
    let confirmed = read(store)
        .entries()
        .iter()
        .any(|e| e.get("id").and_then(Value::as_str) == Some(id.as_str()));
    if !confirmed {
        bail!("journal entry {id} was lost to a concurrent write ({FILE})");
    }
    Ok(Appended::Added)
}
