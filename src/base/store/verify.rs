//! `comments verify`: the read-only audit of a store. Every invariant the review pages and the
//! agent protocol rely on, checked in one pass, reported as findings with the original notabene's
//! codes, levels and messages. It reports; it never repairs.

use super::SCHEMA_VERSION;
use super::journal::{self, Journal};
use super::{Location, Meta, Snapshot, Status};
use serde::Serialize;
use serde_json::Value;
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
    use Level::{Error as E, Warning as W};
    let mut out = Vec::new();
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
        Meta::Version(_) => {}
    }

    // Journal: entry ids, and comment id → entries listing it in changes[].
    let jf = Some(journal::FILE);
    let mut entry_ids: BTreeSet<String> = BTreeSet::new();
    let mut members: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let journal_ok = matches!(journal, Journal::Entries(_) | Journal::Missing);
    if !journal_ok {
        out.push(f(
            E,
            "journal-invalid",
            "journal.json must be a JSON array of entries.".into(),
            jf,
            None,
        ));
    }
    for entry in journal.entries() {
        if !truthy(entry.get("id")) {
            out.push(f(
                E,
                "journal-entry-no-id",
                "a journal entry has no id.".into(),
                jf,
                None,
            ));
            continue;
        }
        let id = as_text(&entry["id"]);
        let idr = Some(id.as_str());
        if !entry_ids.insert(id.clone()) {
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
        let changes = entry
            .get("changes")
            .and_then(Value::as_array)
            .filter(|c| !c.is_empty());
        let Some(changes) = changes else {
            out.push(f(
                E,
                "journal-no-changes",
                format!(
                    "journal entry \"{id}\" records no changes[] — nothing to show at /review."
                ),
                jf,
                idr,
            ));
            continue;
        };
        for change in changes {
            if !truthy(change.get("page")) {
                out.push(f(
                    E,
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
                members.entry(as_text(cid)).or_default().insert(id.clone());
            }
        }
    }

    // Comments.
    for u in &snap.unreadable {
        out.push(f(
            E,
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
            E,
            "comment-unreadable",
            message.into(),
            Some(&n.file),
            None,
        ));
    }
    for file in &snap.leftovers {
        out.push(f(
            W,
            "store-temp-file",
            "temp file of an interrupted write (readers ignore it) — `notabene clean` removes it."
                .into(),
            Some(file),
            None,
        ));
    }
    let mut seen: HashMap<String, String> = HashMap::new();
    let mut legacy = 0usize;
    for rec in &snap.records {
        let c = rec.comment.as_map();
        let file = Some(rec.file.as_str());
        let is_legacy = matches!(rec.location, Location::Legacy { .. });
        if is_legacy {
            legacy += 1;
        }
        if !truthy(c.get("id")) {
            out.push(f(
                E,
                "comment-no-id",
                "comment has no id.".into(),
                file,
                None,
            ));
            continue;
        }
        let id = as_text(&c["id"]);
        let idr = Some(id.as_str());
        if let Some(other) = seen.get(&id) {
            out.push(f(
                E,
                "comment-duplicate-id",
                format!("duplicate comment id \"{id}\" (also in {other})."),
                file,
                idr,
            ));
        }
        seen.insert(id.clone(), rec.file.clone());
        for key in REQUIRED {
            if matches!(c.get(*key), None | Some(Value::Null))
                || c.get(*key).and_then(Value::as_str) == Some("")
            {
                out.push(f(
                    E,
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
                E,
                "comment-bad-status",
                format!("unknown status \"{}\".", as_text(status)),
                file,
                idr,
            ));
        }
        if c.get("hold").is_some_and(|h| !h.is_boolean()) {
            out.push(f(
                E,
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
                E,
                "comment-empty-thread",
                "thread must hold at least the original comment.".into(),
                file,
                idr,
            ));
        }
        if !is_legacy {
            let (dir, base) = match rec.file.rsplit_once('/') {
                Some((d, b)) => (d, b),
                None => ("", rec.file.as_str()),
            };
            if base.trim_end_matches(".json") != id {
                out.push(f(
                    E,
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
                    E,
                    "comment-page-dir-mismatch",
                    format!("lives outside its page dir \"{page}\"."),
                    file,
                    idr,
                ));
            }
        }
        // A suggested edit (an extension of this build) must be one `comments apply` can read.
        if let Some(sg) = c.get("suggestion").filter(|v| !v.is_null()) {
            let well_formed = sg.get("quote").is_some_and(Value::is_string)
                && sg.get("text").is_some_and(Value::is_string);
            if !well_formed || c.get("scope").and_then(Value::as_str) != Some("selection") {
                out.push(f(
                    W,
                    "comment-bad-suggestion",
                    "\"suggestion\" must be {quote, text} (strings) on a selection comment; `comments apply` ignores it.".into(),
                    file,
                    idr,
                ));
            }
        }
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
                (Some(_), Some(link)) if journal_ok && !entry_ids.contains(&link) => {
                    out.push(f(E, "comment-unknown-journal-entry", format!("journal entry \"{link}\" does not exist."), file, idr))
                }
                (Some(_), Some(link)) if journal_ok && !members.get(&id).is_some_and(|m| m.contains(&link)) => out.push(f(
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
        if let (Some(exists), Some(page)) = (page_exists, c.get("page").and_then(Value::as_str))
            && !page.is_empty()
            && !exists(page)
        {
            out.push(f(
                W,
                "comment-page-missing",
                format!("page \"{page}\" has no source file."),
                file,
                idr,
            ));
        }
    }
    for (cid, entries) in &members {
        if !seen.contains_key(cid) {
            let list = entries.iter().cloned().collect::<Vec<_>>().join(", ");
            out.push(f(
                W,
                "journal-unknown-comment",
                format!("journal entry {list} references unknown comment \"{cid}\"."),
                jf,
                Some(cid),
            ));
        }
    }
    if legacy > 0 {
        out.push(f(
            W,
            "store-legacy-layout",
            format!("{legacy} comment(s) still in the v1 array layout — run `notabene migrate`."),
            None,
            None,
        ));
    }
    out
}

/// 1 when any finding is an error, else 0.
pub fn exit_code(findings: &[Finding]) -> i32 {
    i32::from(findings.iter().any(|f| f.level == Level::Error))
}
