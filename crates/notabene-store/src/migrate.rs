//! `migrate`: converts legacy v1 array files into one file per comment (v3 layout), under the store
//! lock, atomically, idempotently. Members that cannot be moved (no id, or an existing different
//! file with that id) stay in their array and are reported — nothing is dropped. An array with a
//! member that is not an object (a string, a number, `null`, an array) is not migrated at all: the
//! file is left byte for byte as it is, and each such member reported.

use super::SCHEMA_VERSION;
use super::{Location, Meta, Record, Snapshot, Store, fsx, ids, json};
use crate::Result;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// What a migration did (or, dry, would do).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Legacy array files converted (fully or partly); a file none of whose members could
    /// move is left untouched and not counted.
    pub pages: usize,
    /// Comment files written.
    pub moved: usize,
    /// Members left in their array: (file, what was kept, why and what to do).
    pub kept: Vec<(String, String)>,
    /// Whether `meta.json` was (or would be) raised to the current version.
    pub meta_raised: bool,
}

/// Migrates `store`. With `dry_run` nothing is written.
pub fn migrate(store: &Store, dry_run: bool) -> Result<Report> {
    store.require()?;
    let _lock = if dry_run { None } else { Some(store.lock()?) };
    let snap: Snapshot = store.load()?;
    let mut by_file: BTreeMap<&str, Vec<&Record>> = BTreeMap::new();
    for rec in &snap.records {
        if let Location::Legacy { .. } = rec.location {
            by_file.entry(rec.file.as_str()).or_default().push(rec);
        }
    }
    let mut report = Report::default();
    for (file, members) in by_file {
        migrate_file(store, file, members, dry_run, &mut report)?;
    }
    report.meta_raised = match store.meta() {
        Meta::Version(v) => v < SCHEMA_VERSION as f64,
        Meta::Missing | Meta::Invalid => true,
        // Refused by `load` above; never reached.
        Meta::Unreadable(_) => false,
    };
    if report.meta_raised && !dry_run {
        let meta = serde_json::json!({ "schemaVersion": SCHEMA_VERSION });
        fsx::write_atomic(
            store.root(),
            Path::new("meta.json"),
            json::to_js_pretty(&meta).as_bytes(),
        )?;
    }
    Ok(report)
}

/// What became of one member of a legacy array.
enum Member {
    /// Left in its array (the reason is in the report).
    Kept(Value),
    /// An identical comment file already exists.
    Existing,
    /// Its comment file was (or, dry, would be) written.
    Written,
}

/// Migrates the legacy array `file` holding `members`, adding to `report`.
fn migrate_file(
    store: &Store,
    file: &str,
    members: Vec<&Record>,
    dry_run: bool,
    report: &mut Report,
) -> Result<()> {
    // A member that is not an object is no comment, and has no faithful place in a
    // rewritten array: the whole file stays as it is.
    let odd = non_objects(store, file)?;
    if !odd.is_empty() {
        report.kept.extend(odd.into_iter().map(|(index, what)| {
            (
                file.to_string(),
                format!("the whole array: its member [{index}] is {what}, not a comment object — make it one or remove it, and re-run migrate"),
            )
        }));
        return Ok(());
    }
    let mut keep: Vec<Value> = Vec::new();
    let mut writes = 0usize;
    let total = members.len();
    for rec in members {
        match move_member(store, file, rec, dry_run, &mut report.kept)? {
            Member::Kept(value) => keep.push(value),
            Member::Existing => {}
            Member::Written => writes += 1,
        }
    }
    if keep.len() == total {
        // Nothing could move: leave the file exactly as it is.
        return Ok(());
    }
    report.pages += 1;
    report.moved += writes;
    if !dry_run {
        if keep.is_empty() {
            fsx::remove_file(store.root(), Path::new(file))?;
        } else {
            fsx::write_atomic(
                store.root(),
                Path::new(file),
                json::to_js_pretty(&keep).as_bytes(),
            )?;
        }
    }
    Ok(())
}

/// Moves one member of the legacy array `file` to its own file, or says in `kept` why not.
fn move_member(
    store: &Store,
    file: &str,
    rec: &Record,
    dry_run: bool,
    kept: &mut Vec<(String, String)>,
) -> Result<Member> {
    let page_dir = file.trim_end_matches(".json");
    let value = Value::Object(rec.comment.as_map().clone());
    let Some(id) = rec.comment.id() else {
        kept.push((
            file.to_string(),
            "a member without an id in its array — give it an id and re-run migrate".into(),
        ));
        return Ok(Member::Kept(value));
    };
    let name = ids::sanitize_id(id);
    if name.is_empty() {
        kept.push((
            file.to_string(),
            format!("comment {id:?} in its array: its id has no file-name characters — give it an id made of [A-Za-z0-9_-] and re-run migrate"),
        ));
        return Ok(Member::Kept(value));
    }
    let target = format!("{page_dir}/{name}.json");
    let existing = fsx::read_in(store.root(), Path::new(&target), fsx::MAX_COMMENT_FILE);
    if !matches!(existing, Err(fsx::ReadFailure::Missing)) {
        let existing = existing.ok().map(|r| r.bytes).unwrap_or_default();
        if serde_json::from_slice::<Value>(&existing).ok().as_ref() != Some(&value) {
            kept.push((
                file.to_string(),
                format!("comment {id:?} in its array: it differs from the existing {target} — reconcile the two by hand and re-run migrate"),
            ));
            return Ok(Member::Kept(value));
        }
        // An identical file already exists: the member is migrated.
        return Ok(Member::Existing);
    }
    if !dry_run {
        fsx::write_atomic(
            store.root(),
            Path::new(&target),
            json::to_js_pretty(&value).as_bytes(),
        )?;
    }
    Ok(Member::Written)
}

/// The members of the legacy array `file` that are not objects: (index from 0, what it is).
fn non_objects(store: &Store, file: &str) -> Result<Vec<(usize, &'static str)>> {
    let read = fsx::read_in(store.root(), Path::new(file), fsx::MAX_COMMENT_FILE)
        .map_err(|e| e.to_error(file))?;
    let Ok(Value::Array(items)) = serde_json::from_slice::<Value>(&read.bytes) else {
        crate::bail!("legacy file is no longer a JSON array; nothing migrated ({file})");
    };
    Ok(items
        .iter()
        .enumerate()
        .filter_map(|(i, v)| {
            let what = match v {
                Value::Object(_) => return None,
                Value::Null => "null",
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                Value::String(_) => "a string",
                Value::Array(_) => "an array",
            };
            Some((i, what))
        })
        .collect())
}
