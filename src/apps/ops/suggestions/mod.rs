//! Applying suggested edits: a selection comment's `suggestion` written into the book's Markdown in
//! one step, then the comment closed as `comments done` closes it. Shared by `notabene comments
//! apply` and the serve API's Apply button: both call [`apply`], so every rule below holds the same
//! way through both.
//!
//! An edit is applied only where it cannot land anywhere else: the comment's quote is found `exact`
//! and unambiguous in its chapter as the build renders it, the quote is the one the suggestion was
//! made on, and it maps to one source range of one file — the chapter's, or the file an
//! `{{#include}}` brought in — without crossing inline markup the replacement would break
//! (emphasis or link syntax, code spans, raw HTML, a block boundary). A file reached through a
//! symlink is refused, not followed.
//!
//! What is written is text and only text ([`safe_text`]): the suggestion is escaped or refused for
//! its context, and the edited chapter must parse to the same structure.
//!
//! Crash safety ([`intent`]): every id is checked and every edit traced before anything is written;
//! the plan is recorded where git never carries it (the git directory), then each Markdown file
//! is written, then the journal entry, then the comments, all under the store lock, then the
//! record is removed. A killed run is finished by the next `apply`, which writes only what the
//! comments still ask for, traced again ([`write`]). Temp files live in the store directory (where
//! `verify` and `clean` find them, and mdBook never looks), never beside the chapter. A chapter
//! changed by another program while it is written is never overwritten: on Linux the new file is
//! swapped in atomically and what it replaced is compared with what was checked; anything else is
//! swapped back and the edit made again on the new text, or the apply refused when the quoted
//! bytes themselves changed. Whatever a record says, nothing is written but a chapter source:
//! never under `.git`, to `book.toml`, the theme, the store, or outside the book.

use crate::model::book::Book;
use crate::{Error, Result, bail};
use notabene_core::failpoint;
use notabene_store::{Comment, Record, Scope, Store, ids};
use serde_json::{Map, Value, json};
use std::ops::Range;
use std::path::{Path, PathBuf};

pub mod intent;
mod locate;
pub mod safe_text;
mod write;
pub(crate) use write::write_replacement;

use intent::{Close, FileEdits, Intent, JournalPlan, Replace};
use locate::locate;

/// How `apply` closes the comments it applied.
#[derive(Debug, Clone, Default)]
pub struct ApplyOptions {
    /// The journal entry recording the change (`resolution.journalEntryId`).
    pub journal: String,
    /// `Some`: the apply writes that entry itself (between its edits and its closes, so a run
    /// killed at any point and finished by the next leaves every resolution linked to an entry
    /// the journal holds), saying the edits were applied by this actor; `None`: the entry is
    /// the caller's.
    pub write_journal: Option<super::Actor>,
    /// `resolution.note` (default: says what was replaced).
    pub note: Option<String>,
    /// Apply a held comment's suggestion too.
    pub force: bool,
    /// Who applied it (`suggestion.applied.by`).
    pub author: String,
}

/// One applied suggestion.
#[derive(Debug, Clone)]
pub struct Applied {
    /// The comment, closed.
    pub comment: Comment,
    /// The Markdown file written, relative to the book root, `/`-separated.
    pub file: String,
    /// The 1-based line of the file where the replacement starts.
    pub line: usize,
}

/// Where a suggestion goes: a byte range of a file (canonical path), the source bytes found
/// there when it was traced, and the text to put there.
struct Edit {
    path: PathBuf,
    range: Range<usize>,
    expected: String,
    text: String,
}

/// Applies the suggestions of comments `ids` of `book`'s store (see the module docs).
///
/// An `apply` interrupted earlier (its record is in the git directory, see [`intent`]) is
/// finished first; ids it covered are not applied twice, so re-running a killed `apply` with
/// the same ids brings the book and the store to the state an uninterrupted run gives.
pub fn apply(
    book: &Book,
    store: &Store,
    id_list: &[String],
    opts: &ApplyOptions,
) -> Result<Vec<Applied>> {
    let mut unique: Vec<String> = Vec::new();
    for id in id_list {
        if !unique.contains(id) {
            unique.push(id.clone());
        }
    }
    let lock = store.lock()?;
    store.check_compatible()?;
    sweep(store)?;
    let mut out = match intent::read(store)? {
        Some(pending) => write::finish(book, store, &lock, &pending, write::TraceMode::Again)?,
        None => Vec::new(),
    };
    unique.retain(|id| !out.iter().any(|a| a.comment.id() == Some(id.as_str())));
    if unique.is_empty() {
        return Ok(out);
    }
    let plan = plan(book, store, &unique, opts)?;
    intent::write(store, &plan)?;
    failpoint::hit("apply-after-intent");
    out.extend(write::finish(
        book,
        store,
        &lock,
        &plan,
        write::TraceMode::Now,
    )?);
    Ok(out)
}

/// Removes the temp files of writes that were killed (as `notabene clean` does: only ours,
/// and only those no live writer holds), so a re-run leaves none of a killed run's behind.
/// Call with the store lock held.
fn sweep(store: &Store) -> Result<()> {
    for rel in store.leftovers()? {
        notabene_store::fsx::remove_leftover(store.root(), Path::new(&rel))?;
    }
    Ok(())
}

/// What `verify` reports of `apply` records: one in the store, which came with the files and
/// is never carried out, and the comments of this work tree's interrupted `apply` that are not
/// closed yet. A check only; running the same `apply` again finishes an interrupted one.
pub fn interrupted(store: &Store) -> Vec<notabene_store::verify::Finding> {
    intent::findings(store)
}

/// The comments of `ids` (in that order) with their edits traced and checked, grouped by
/// file, before anything is written.
struct TracedComments {
    /// The comments.
    records: Vec<Record>,
    /// Each file's edits, each file once, in path order.
    files: Vec<FileEdits>,
    /// Each comment's file (`applied.file`) and the 1-based line its edit starts on.
    places: Vec<(String, usize)>,
}

/// Traces the suggestions of `ids` in the book as it is now: every check, every edit located,
/// every file read and its edits checked against it. `force`: held comments too.
fn trace(book: &Book, store: &Store, ids: &[String], force: bool) -> Result<TracedComments> {
    let snap = store.load()?;
    let records: Vec<Record> = store.find(&snap, ids)?.into_iter().cloned().collect();
    for r in &records {
        precheck(&r.comment, force)?;
    }
    let (anchors, _) = crate::output::engine::anchor_current(book, store)?;
    let options = crate::model::book::text_options(&book.mdbook)?;
    let mut edits: Vec<(usize, Edit)> = Vec::new();
    for (k, r) in records.iter().enumerate() {
        edits.push((k, locate(book, &anchors, &r.comment, &options)?));
    }
    // Two suggestions on overlapping text of one file cannot both be applied.
    for (i, (ka, a)) in edits.iter().enumerate() {
        for (kb, b) in &edits[i + 1..] {
            if a.path == b.path && a.range.start <= b.range.end && b.range.start <= a.range.end {
                bail!(
                    "the suggestions of {} and {} overlap in {}; apply them one at a time (ids)",
                    records[*ka].comment.id().unwrap_or_default(),
                    records[*kb].comment.id().unwrap_or_default(),
                    display(book, &a.path)
                );
            }
        }
    }
    // Each file once, its edits in order; every file read and checked (still holding what
    // was traced, somewhere to write it through) before anything is written.
    let mut paths: Vec<PathBuf> = edits.iter().map(|(_, e)| e.path.clone()).collect();
    paths.sort();
    paths.dedup();
    let mut places = vec![(String::new(), 0usize); records.len()];
    let mut files = Vec::with_capacity(paths.len());
    for path in &paths {
        let shown = display(book, path);
        write::temp_dir(store, path, &shown)?;
        let text = std::fs::read_to_string(path).map_err(|e| Error::io("cannot read", path, e))?;
        let mut here: Vec<&(usize, Edit)> = edits.iter().filter(|(_, e)| &e.path == path).collect();
        here.sort_by_key(|(_, e)| e.range.start);
        for (k, e) in &here {
            if text.get(e.range.clone()) != Some(e.expected.as_str()) {
                bail!(
                    "{shown} changed while the suggestion of {} was being applied; nothing written ({shown})",
                    records[*k].comment.id().unwrap_or_default()
                );
            }
            places[*k] = (
                shown.clone(),
                text[..e.range.start].matches('\n').count() + 1,
            );
        }
        let fe = FileEdits {
            path: shown.clone(),
            edits: here
                .iter()
                .enumerate()
                .map(|(i, (_, e))| {
                    let next = here.get(i + 1).map_or(text.len(), |(_, n)| n.range.start);
                    Replace::new(
                        &text,
                        e.range.start,
                        e.expected.clone(),
                        e.text.clone(),
                        next,
                    )
                })
                .collect(),
        };
        // The edited file, checked as a whole: no directive formed across an edit's edges.
        let new = fe.applied_to(&text);
        let mut shift: isize = 0;
        for (k, e) in &here {
            let at = (e.range.start as isize + shift) as usize;
            safe_text::check_directives(&new, at..at + e.text.len()).map_err(|why| {
                Error::new(format!(
                    "the suggestion of {:?} {why}; nothing written (suggestion.text)",
                    records[*k].comment.id().unwrap_or_default()
                ))
            })?;
            shift += e.text.len() as isize - e.expected.len() as isize;
        }
        files.push(fe);
    }
    Ok(TracedComments {
        records,
        files,
        places,
    })
}

/// Every check, every edit traced, before anything is written: the plan [`write::finish`]
/// carries out.
fn plan(book: &Book, store: &Store, ids: &[String], opts: &ApplyOptions) -> Result<Intent> {
    let traced = trace(book, store, ids, opts.force)?;
    let closes = traced
        .records
        .iter()
        .zip(&traced.places)
        .map(|(rec, (file, line))| {
            let s = rec.comment.suggestion().expect("checked by precheck");
            Close {
                id: rec.comment.id().unwrap_or_default().to_string(),
                file: file.clone(),
                line: *line,
                quote: s.quote.to_string(),
                text: s.text.to_string(),
            }
        })
        .collect();
    let journal = JournalPlan {
        id: opts.journal.clone(),
        write: opts.write_journal.map(|a| a.as_str().to_string()),
    };
    Ok(Intent::new(
        ids::iso(ids::now()?),
        opts.author.clone(),
        opts.note.clone(),
        journal,
        traced.files,
        closes,
    ))
}

/// Comment `c` closed as `done` closes it, its suggestion marked applied: in `file`, at `ts`,
/// by the plan's author, with its note and journal entry.
fn close(c: &mut Comment, file: &str, status: notabene_store::Status, plan: &Intent) {
    let (quote, text) = {
        let s = c.suggestion().expect("checked by precheck");
        (s.quote.to_string(), s.text.to_string())
    };
    let mut res = Map::new();
    let note = plan.note.clone().unwrap_or_else(|| {
        if text.is_empty() {
            format!("Applied the suggested edit: deleted “{quote}” in {file}.")
        } else {
            format!("Applied the suggested edit: “{quote}” → “{text}” in {file}.")
        }
    });
    res.insert("note".into(), note.into());
    res.insert("journalEntryId".into(), plan.journal.id.clone().into());
    c.set("status", status.into());
    c.set("resolution", Value::Object(res));
    let mut suggestion = c
        .get("suggestion")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    suggestion.insert(
        "applied".into(),
        json!({ "at": plan.at, "by": plan.author, "file": file }),
    );
    c.set("suggestion", Value::Object(suggestion));
    // The comment now marks the text it put there.
    if !text.is_empty()
        && let Some(mut anchor) = c.anchor().cloned()
    {
        anchor.insert("quote".into(), text.into());
        c.set("anchor", Value::Object(anchor));
    }
    c.set("updatedAt", plan.at.clone().into());
}

/// The checks that need no book: a suggestion is there, not applied yet, the comment open
/// and not held (unless forced).
fn precheck(c: &Comment, force: bool) -> Result<()> {
    let id = c.id().unwrap_or_default();
    let Some(s) = c.suggestion() else {
        bail!("comment {id:?} carries no suggested edit (suggestion)");
    };
    if s.applied {
        bail!("the suggestion of {id:?} was already applied; nothing changed (suggestion.applied)");
    }
    if c.scope() != Some(Scope::Selection) {
        bail!("only a selection comment's suggestion can be applied ({id:?} is not one) (scope)");
    }
    if c.held() && !force {
        bail!(
            "comment {id:?} is on hold — a reviewer is still working on it; pass --force to apply it anyway"
        );
    }
    if c.status() != Some(notabene_store::Status::Open) {
        bail!(
            "comment {id:?} is {}: only an open comment's suggestion is applied (reopen it first) (status)",
            c.status_str().unwrap_or("without a status")
        );
    }
    Ok(())
}

/// A path for messages and `applied.file`: relative to the book root when below it.
fn display(book: &Book, path: &Path) -> String {
    let canon = book
        .root
        .canonicalize()
        .unwrap_or_else(|_| book.root.clone());
    path.strip_prefix(&canon)
        .or_else(|_| path.strip_prefix(&book.root))
        .map(notabene_core::slash_path)
        .unwrap_or_else(|_| path.display().to_string())
}
