//! `comments verify`: the read-only audit of a store. Every invariant the review pages and the
//! agent protocol rely on, checked in one pass, reported as findings with the original notabene's
//! codes, levels and messages. It reports; it never repairs.

use super::SCHEMA_VERSION;
use super::journal::{self, Journal};
use super::{Location, Meta, Record, Snapshot, Status};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// `error` or `warning`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Makes `verify` exit 1.
    Error,
    /// Reported; exit stays 0.
    Warning,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Severity.
    pub level: Level,
    /// Stable code, e.g. `comment-no-resolution`.
    pub code: &'static str,
    /// Human message.
    pub message: String,
    /// Store-relative file, when the finding is about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Comment or journal entry id, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

fn f(
    level: Level,
    code: &'static str,
    message: String,
    file: Option<&str>,
    id: Option<&str>,
) -> Finding {
    Finding {
        level,
        code,
        message,
        file: file.map(str::to_string),
        id: id.map(str::to_string),
    }
}

fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Number(n)) => n.as_f64().is_some_and(|x| x != 0.0),
        Some(_) => true,
    }
}

fn as_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

const REQUIRED: &[&str] = &["id", "space", "page", "scope", "status"];

/// Audits a store read into `snap`, with its `journal` and `meta`. `page_exists` answers
/// whether a page id has a source file (`None` when the book's pages are not known).
pub fn verify(
    snap: &Snapshot,
    journal: &Journal,
    meta: &Meta,
    page_exists: Option<&dyn Fn(&str) -> bool>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    check_meta(meta, &mut out);
    let index = check_journal(journal, &mut out);
    check_files(snap, &mut out);
    let mut seen: HashMap<String, String> = HashMap::new();
    let mut legacy = 0usize;
    for rec in &snap.records {
        if matches!(rec.location, Location::Legacy { .. }) {
            legacy += 1;
        }
        check_record(rec, &index, &mut seen, page_exists, &mut out);
    }
    check_journal_refs(&index, &seen, &mut out);
    if legacy > 0 {
        out.push(f(
            Level::Warning,
            "store-legacy-layout",
            format!("{legacy} comment(s) still in the v1 array layout — run `notabene migrate`."),
            None,
            None,
        ));
    }
    out
}

/// What the journal check learned that the comment checks need.
struct JournalIndex {
    /// Whether journal.json was absent or a valid array of entries.
    ok: bool,
    /// Every entry id seen.
    entry_ids: BTreeSet<String>,
    /// Comment id → ids of the entries listing it in changes[].
    members: BTreeMap<String, BTreeSet<String>>,
}

/// The `store-meta-*` and `store-schema-newer` checks.
fn check_meta(meta: &Meta, out: &mut Vec<Finding>) {
    use Level::{Error as E, Warning as W};
    match meta {
        Meta::Missing => out.push(f(W, "store-meta-missing", "no meta.json — run `notabene init` to stamp the schema version.".into(), None, None)),
        Meta::Invalid => out.push(f(W, "store-meta-invalid", "meta.json has no numeric schemaVersion.".into(), Some("meta.json"), None)),
        Meta::Version(v) if *v > SCHEMA_VERSION as f64 => out.push(f(
            E,
            "store-schema-newer",
            format!(
                "store schemaVersion {} is newer than this mdbook-notabene ({SCHEMA_VERSION}) — upgrade mdbook-notabene.",
                super::json::js_number(*v)
            ),
            Some("meta.json"),
            None,
        )),
        Meta::Unreadable(what) => out.push(f(
            E,
            "store-meta-unreadable",
            format!("meta.json {what}: its schema version cannot be checked, so every command refuses the store — make it a regular file (`notabene init` writes one)."),
            Some("meta.json"),
            None,
        )),
        Meta::Version(_) => {}
    }
}

/// The `journal-*` checks on the journal itself; returns its entry ids and memberships.
fn check_journal(journal: &Journal, out: &mut Vec<Finding>) -> JournalIndex {
    let mut index = JournalIndex {
        ok: matches!(journal, Journal::Entries(_) | Journal::Missing),
        entry_ids: BTreeSet::new(),
        members: BTreeMap::new(),
    };
    if !index.ok {
        let message = match journal {
            Journal::Refused(what) => format!("journal.json {what}."),
            _ => "journal.json must be a JSON array of entries.".into(),
        };
        out.push(f(
            Level::Error,
            "journal-invalid",
            message,
            Some(journal::FILE),
            None,
        ));
    }
    for entry in journal.entries() {
        check_entry(entry, &mut index, out);
    }
    index
}

/// The checks on one journal entry, recording its id and the comments its changes list.
fn check_entry(entry: &Value, index: &mut JournalIndex, out: &mut Vec<Finding>) {
    use Level::{Error as E, Warning as W};
    let jf = Some(journal::FILE);
    if !truthy(entry.get("id")) {
        out.push(f(
            E,
            "journal-entry-no-id",
            "a journal entry has no id.".into(),
            jf,
            None,
        ));
        return;
    }
    let id = as_text(&entry["id"]);
    let idr = Some(id.as_str());
    if !index.entry_ids.insert(id.clone()) {
        out.push(f(
            E,
            "journal-duplicate-id",
            format!("duplicate journal entry id \"{id}\"."),
            jf,
            idr,
        ));
    }
    if !entry
        .get("date")
        .and_then(Value::as_str)
        .is_some_and(journal::is_date)
    {
        out.push(f(
            W,
            "journal-bad-date",
            format!("journal entry \"{id}\": date should be YYYY-MM-DD."),
            jf,
            idr,
        ));
    }
    if !truthy(entry.get("title")) {
        out.push(f(
            W,
            "journal-no-title",
            format!("journal entry \"{id}\" has no title."),
            jf,
            idr,
        ));
    }
    check_changes(entry, &id, index, out);
}

/// The checks on one entry's changes[], recording the comments each change lists.
fn check_changes(entry: &Value, id: &str, index: &mut JournalIndex, out: &mut Vec<Finding>) {
    let (jf, idr) = (Some(journal::FILE), Some(id));
    let changes = entry
        .get("changes")
        .and_then(Value::as_array)
        .filter(|c| !c.is_empty());
    let Some(changes) = changes else {
        out.push(f(
            Level::Error,
            "journal-no-changes",
            format!("journal entry \"{id}\" records no changes[] — nothing to show at /review."),
            jf,
            idr,
        ));
        return;
    };
    for change in changes {
        if !truthy(change.get("page")) {
            out.push(f(
                Level::Error,
                "journal-change-no-page",
                format!("journal entry \"{id}\" has a change without a page."),
                jf,
                idr,
            ));
        }
        for cid in change
            .get("commentIds")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            index
                .members
                .entry(as_text(cid))
                .or_default()
                .insert(id.to_string());
        }
    }
}

/// The checks on files that yielded no comment: unreadable, non-UTF-8 names, symlinks, temp files.
fn check_files(snap: &Snapshot, out: &mut Vec<Finding>) {
    for u in &snap.unreadable {
        out.push(f(
            Level::Error,
            "comment-unreadable",
            format!("unreadable JSON: {}", u.error),
            Some(&u.file),
            None,
        ));
    }
    for n in &snap.not_utf8 {
        let message = if n.dir {
            "directory name is not UTF-8: readers skip it and every comment in it — rename it to its page id."
        } else {
            "file name is not UTF-8: readers skip it — rename it to its comment id (`<id>.json`)."
        };
        out.push(f(
            Level::Error,
            "comment-unreadable",
            message.into(),
            Some(&n.file),
            None,
        ));
    }
    for link in &snap.symlinks {
        out.push(f(
            Level::Error,
            "store-symlink",
            "symlink in the store: readers never follow it (nor what it points to) — replace it with the file or directory itself, or remove it.".into(),
            Some(link),
            None,
        ));
    }
    for file in &snap.leftovers {
        out.push(f(
            Level::Warning,
            "store-temp-file",
            "temp file of an interrupted write (readers ignore it) — `notabene clean` removes it."
                .into(),
            Some(file),
            None,
        ));
    }
}

/// The checks on one comment record, in the order they are reported; `seen` maps ids to files.
fn check_record(
    rec: &Record,
    index: &JournalIndex,
    seen: &mut HashMap<String, String>,
    page_exists: Option<&dyn Fn(&str) -> bool>,
    out: &mut Vec<Finding>,
) {
    let c = rec.comment.as_map();
    let file = Some(rec.file.as_str());
    if !truthy(c.get("id")) {
        out.push(f(
            Level::Error,
            "comment-no-id",
            "comment has no id.".into(),
            file,
            None,
        ));
        return;
    }
    let id = as_text(&c["id"]);
    if let Some(other) = seen.get(&id) {
        out.push(f(
            Level::Error,
            "comment-duplicate-id",
            format!("duplicate comment id \"{id}\" (also in {other})."),
            file,
            Some(&id),
        ));
    }
    seen.insert(id.clone(), rec.file.clone());
    check_fields(c, file, &id, out);
    if !matches!(rec.location, Location::Legacy { .. }) {
        check_placement(c, &rec.file, &id, out);
    }
    check_suggestion(c, file, &id, out);
    check_resolution(c, index, file, &id, out);
    if let (Some(exists), Some(page)) = (page_exists, c.get("page").and_then(Value::as_str))
        && !page.is_empty()
        && !exists(page)
    {
        out.push(f(
            Level::Warning,
            "comment-page-missing",
            format!("page \"{page}\" has no source file."),
            file,
            Some(&id),
        ));
    }
}

/// The field-shape checks: required fields, status, hold, thread.
fn check_fields(c: &Map<String, Value>, file: Option<&str>, id: &str, out: &mut Vec<Finding>) {
    let idr = Some(id);
    for key in REQUIRED {
        if matches!(c.get(*key), None | Some(Value::Null))
            || c.get(*key).and_then(Value::as_str) == Some("")
        {
            out.push(f(
                Level::Error,
                "comment-missing-field",
                format!("missing \"{key}\"."),
                file,
                idr,
            ));
        }
    }
    // An empty or null status is already `comment-missing-field`; report it once.
    if let Some(status) = c
        .get("status")
        .filter(|s| !s.is_null() && s.as_str() != Some(""))
        && status
            .as_str()
            .and_then(super::comment::Status::parse)
            .is_none()
    {
        out.push(f(
            Level::Error,
            "comment-bad-status",
            format!("unknown status \"{}\".", as_text(status)),
            file,
            idr,
        ));
    }
    if c.get("hold").is_some_and(|h| !h.is_boolean()) {
        out.push(f(
            Level::Error,
            "comment-bad-hold",
            "\"hold\" must be a boolean.".into(),
            file,
            idr,
        ));
    }
    if c.get("thread")
        .and_then(Value::as_array)
        .is_none_or(|t| t.is_empty())
    {
        out.push(f(
            Level::Error,
            "comment-empty-thread",
            "thread must hold at least the original comment.".into(),
            file,
            idr,
        ));
    }
}

/// The checks that an own-file comment's file name and directory match its id and page.
fn check_placement(c: &Map<String, Value>, path: &str, id: &str, out: &mut Vec<Finding>) {
    let (file, idr) = (Some(path), Some(id));
    let (dir, base) = match path.rsplit_once('/') {
        Some((d, b)) => (d, b),
        None => ("", path),
    };
    if base.trim_end_matches(".json") != id {
        out.push(f(
            Level::Error,
            "comment-file-id-mismatch",
            format!("filename doesn't match id \"{id}\"."),
            file,
            idr,
        ));
    }
    if let Some(page) = c.get("page").and_then(Value::as_str)
        && !page.is_empty()
        && !dir.is_empty()
        && dir != page
    {
        out.push(f(
            Level::Error,
            "comment-page-dir-mismatch",
            format!("lives outside its page dir \"{page}\"."),
            file,
            idr,
        ));
    }
}

/// A suggested edit (an extension of this build) must be one `comments apply` can read.
fn check_suggestion(c: &Map<String, Value>, file: Option<&str>, id: &str, out: &mut Vec<Finding>) {
    if let Some(sg) = c.get("suggestion").filter(|v| !v.is_null()) {
        let well_formed = sg.get("quote").is_some_and(Value::is_string)
            && sg.get("text").is_some_and(Value::is_string);
        if !well_formed || c.get("scope").and_then(Value::as_str) != Some("selection") {
            out.push(f(
                Level::Warning,
                "comment-bad-suggestion",
                "\"suggestion\" must be {quote, text} (strings) on a selection comment; `comments apply` ignores it.".into(),
                file,
                Some(id),
            ));
        }
    }
}

/// The checks that a resolved or addressed comment links a journal entry listing it, and
/// that an open one keeps no resolution.
fn check_resolution(
    c: &Map<String, Value>,
    index: &JournalIndex,
    file: Option<&str>,
    id: &str,
    out: &mut Vec<Finding>,
) {
    use Level::{Error as E, Warning as W};
    let idr = Some(id);
    let status = c.get("status").and_then(Value::as_str).unwrap_or("");
    let parsed = super::comment::Status::parse(status);
    let resolution = c.get("resolution").filter(|r| truthy(Some(r)));
    if matches!(parsed, Some(Status::Resolved | Status::Addressed)) {
        let link = resolution
            .and_then(|r| r.get("journalEntryId"))
            .filter(|l| truthy(Some(l)))
            .map(as_text);
        match (resolution, link) {
            (None, _) => out.push(f(E, "comment-no-resolution", format!("\"{status}\" without a resolution."), file, idr)),
            // A human's resolve (from the browser) records who resolved it, with no journal
            // entry: there is no agent change to show at /review.
            (Some(r), None) if parsed == Some(Status::Resolved) && r.get("by").is_some_and(|b| truthy(Some(b))) => {}
            (Some(_), None) => {
                out.push(f(E, "comment-no-journal-link", format!("\"{status}\" without resolution.journalEntryId."), file, idr))
            }
            (Some(_), Some(link)) if index.ok && !index.entry_ids.contains(&link) => {
                out.push(f(E, "comment-unknown-journal-entry", format!("journal entry \"{link}\" does not exist."), file, idr))
            }
            (Some(_), Some(link)) if index.ok && !index.members.get(id).is_some_and(|m| m.contains(&link)) => out.push(f(
                E,
                "comment-not-in-journal-changes",
                format!("journal entry \"{link}\" doesn't list this comment in any changes[] — /review would show an empty diff."),
                file,
                idr,
            )),
            _ => {}
        }
    } else if parsed == Some(Status::Open) && resolution.is_some() {
        out.push(f(
            W,
            "comment-open-with-resolution",
            "reopened but keeps a stale resolution.".into(),
            file,
            idr,
        ));
    }
}

/// The `journal-unknown-comment` check: journal changes listing ids no comment has.
fn check_journal_refs(
    index: &JournalIndex,
    seen: &HashMap<String, String>,
    out: &mut Vec<Finding>,
) {
    for (cid, entries) in &index.members {
        if !seen.contains_key(cid) {
            let list = entries.iter().cloned().collect::<Vec<_>>().join(", ");
            out.push(f(
                Level::Warning,
                "journal-unknown-comment",
                format!("journal entry {list} references unknown comment \"{cid}\"."),
                Some(journal::FILE),
                Some(cid),
            ));
        }
    }
}

/// 1 when any finding is an error, else 0.
pub fn exit_code(findings: &[Finding]) -> i32 {
    i32::from(findings.iter().any(|f| f.level == Level::Error))
}
