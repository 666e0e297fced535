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
//! the plan is recorded in the store, then each Markdown file is written, then the comments, all
//! under the store lock, then the record is removed. A killed run is finished by the next `apply`.
//! Temp files live in the store directory (where `verify` and `clean` find them, and mdBook never
//! looks), never beside the chapter. A chapter changed by another program while it is written is
//! never overwritten: it is read again and the edit made on the new text, or the apply is refused
//! when the quoted bytes themselves changed.

use crate::base::anchor::Status;
use crate::base::store::Scope;
use crate::base::store::verify::{Finding, Level};
use crate::base::store::{Comment, Record, Store, fsx, ids};
use crate::base::text::{PageText, SegKind, TextOptions};
use crate::base::util::failpoint;
use crate::model::book::Book;
use crate::model::resolve::{BookAnchors, Chapter};
use crate::{Error, Result, bail};
use serde_json::{Map, Value, json};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::{Path, PathBuf};

pub mod intent;
pub mod safe_text;

use intent::{Close, FileEdits, Intent, Replace, State};
use safe_text::Context;

/// How `apply` closes the comments it applied.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The journal entry recording the change (`resolution.journalEntryId`).
    pub journal: Option<String>,
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

/// How often a chapter that keeps changing under `apply` is read again before it gives up.
const ATTEMPTS: usize = 8;

/// How often, just before the rename, a chapter that grew is read again to carry the lines
/// appended to it.
const APPEND_CHECKS: usize = 1000;

/// Applies the suggestions of comments `ids` of `book`'s store (see the module docs).
///
/// An `apply` interrupted earlier (its record, [`intent::FILE`], is in the store) is finished
/// first; ids it covered are not applied twice, so re-running a killed `apply` with the same
/// ids brings the book and the store to the state an uninterrupted run gives.
pub fn apply(
    book: &Book,
    store: &Store,
    id_list: &[String],
    opts: &Options,
) -> Result<Vec<Applied>> {
    let mut unique: Vec<String> = Vec::new();
    for id in id_list {
        if !unique.contains(id) {
            unique.push(id.clone());
        }
    }
    let _lock = store.lock()?;
    store.check_compatible()?;
    sweep(store)?;
    let mut out = match intent::read(store.root())? {
        Some(pending) => {
            pending.check(&book.root)?;
            finish(book, store, &pending)?
        }
        None => Vec::new(),
    };
    unique.retain(|id| !out.iter().any(|a| a.comment.id() == Some(id.as_str())));
    if unique.is_empty() {
        return Ok(out);
    }
    let plan = plan(book, store, &unique, opts)?;
    intent::write(store.root(), &plan)?;
    failpoint::hit("apply-after-intent");
    out.extend(finish(book, store, &plan)?);
    Ok(out)
}

/// Removes the temp files of writes that were killed (as `notabene clean` does: only ours,
/// and only those no live writer holds), so a re-run leaves none of a killed run's behind.
/// Call with the store lock held.
fn sweep(store: &Store) -> Result<()> {
    for rel in store.leftovers()? {
        fsx::remove_leftover(store.root(), Path::new(&rel))?;
    }
    Ok(())
}

/// What `verify` reports of an `apply` that was interrupted: each comment of its record that
/// is not closed yet, with the Markdown file its edit is (or is about to be) written in. A
/// check only: nothing is repaired here; running the same `apply` again finishes it.
pub fn interrupted(store: &Store, book: Option<&Book>) -> Vec<Finding> {
    let plan = match intent::read(store.root()) {
        Ok(Some(plan)) => plan,
        Ok(None) => return Vec::new(),
        Err(e) => {
            return vec![Finding {
                level: Level::Error,
                code: "apply-interrupted",
                message: e.message().to_string(),
                file: Some(intent::FILE.into()),
                id: None,
            }];
        }
    };
    let snap = store.load_unchecked().unwrap_or_default();
    let mut out = Vec::new();
    for cl in &plan.closes {
        let now = snap
            .comments()
            .find(|r| r.comment.id() == Some(cl.id.as_str()));
        if now.is_some_and(|r| *r.comment.as_map() == cl.after) {
            continue;
        }
        let written = book.is_some_and(|b| {
            plan.files.iter().any(|fe| {
                fe.path == cl.file
                    && std::fs::read_to_string(b.root.join(&fe.path))
                        .is_ok_and(|t| fe.state(&t) == State::Done)
            })
        });
        let what = if written {
            "is written in"
        } else {
            "is planned for"
        };
        out.push(Finding {
            level: Level::Error,
            code: "apply-interrupted",
            message: format!(
                "an apply was interrupted: the suggestion of {} {what} {} while the comment is still open — run `notabene comments apply {}` again to finish it.",
                cl.id, cl.file, cl.id
            ),
            file: Some(intent::FILE.into()),
            id: Some(cl.id.clone()),
        });
    }
    out
}

/// Every check, every edit traced and every closed comment computed, before anything is
/// written: the plan [`finish`] carries out.
fn plan(book: &Book, store: &Store, ids: &[String], opts: &Options) -> Result<Intent> {
    let snap = store.load()?;
    let records: Vec<Record> = store.find(&snap, ids)?.into_iter().cloned().collect();
    for r in &records {
        precheck(&r.comment, opts.force)?;
    }
    let (anchors, _) = crate::output::engine::anchor_current(book, store)?;
    let options = TextOptions::from_config(&book.mdbook)?;
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
    let mut lines = vec![0usize; records.len()];
    let mut files = Vec::with_capacity(paths.len());
    for path in &paths {
        let shown = display(book, path);
        temp_dir(store, path, &shown)?;
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
            lines[*k] = text[..e.range.start].matches('\n').count() + 1;
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
    let ts = ids::iso(ids::now()?);
    let status = book.config.review.done_status();
    let mut closes = Vec::with_capacity(records.len());
    for (k, rec) in records.into_iter().enumerate() {
        let file = display(book, &edits[k].1.path);
        let before = rec.comment.as_map().clone();
        let mut c = rec.comment;
        close(&mut c, &file, &ts, status, opts);
        closes.push(Close {
            id: c.id().unwrap_or_default().to_string(),
            before,
            after: c.as_map().clone(),
            file,
            line: lines[k],
        });
    }
    Ok(Intent { files, closes })
}

/// Comment `c` closed as `done` closes it, its suggestion marked applied.
fn close(
    c: &mut Comment,
    file: &str,
    ts: &str,
    status: crate::base::store::Status,
    opts: &Options,
) {
    let (quote, text) = {
        let s = c.suggestion().expect("checked by precheck");
        (s.quote.to_string(), s.text.to_string())
    };
    let mut res = Map::new();
    let note = opts.note.clone().unwrap_or_else(|| {
        if text.is_empty() {
            format!("Applied the suggested edit: deleted “{quote}” in {file}.")
        } else {
            format!("Applied the suggested edit: “{quote}” → “{text}” in {file}.")
        }
    });
    res.insert("note".into(), note.into());
    if let Some(j) = &opts.journal {
        res.insert("journalEntryId".into(), j.clone().into());
    }
    c.set("status", status.into());
    c.set("resolution", Value::Object(res));
    let mut suggestion = c
        .get("suggestion")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    suggestion.insert(
        "applied".into(),
        json!({ "at": ts, "by": opts.author, "file": file }),
    );
    c.set("suggestion", Value::Object(suggestion));
    // The comment now marks the text it put there.
    if !text.is_empty()
        && let Some(mut anchor) = c.anchor().cloned()
    {
        anchor.insert("quote".into(), text.into());
        c.set("anchor", Value::Object(anchor));
    }
    c.set("updatedAt", ts.to_string().into());
}

/// Carries out `plan` from wherever an earlier run stopped: each Markdown file written unless
/// it already holds its edits, each comment closed unless it already is, then the record
/// removed. Call with the store lock held.
fn finish(book: &Book, store: &Store, plan: &Intent) -> Result<Vec<Applied>> {
    for fe in &plan.files {
        write_file(book, store, fe)?;
        failpoint::hit("apply-after-file");
    }
    store.ensure_meta()?;
    let ids: Vec<String> = plan.closes.iter().map(|c| c.id.clone()).collect();
    let snap = store.load()?;
    let records: Vec<Record> = store.find(&snap, &ids)?.into_iter().cloned().collect();
    let mut applied = Vec::with_capacity(records.len());
    // A comment changed by someone else since the plan stops nothing but itself: the others
    // are closed, and the record stays until it is settled.
    let mut stuck: Option<Error> = None;
    for (rec, cl) in records.into_iter().zip(&plan.closes) {
        let now = rec.comment.as_map();
        let closed = if *now == cl.after {
            None
        } else if *now == cl.before {
            Some(cl.after.clone())
        } else {
            match merge_close(&cl.before, &cl.after, now) {
                Merged::Closed(m) => Some(m),
                Merged::ClosedElsewhere => None,
                Merged::Conflict(key) => {
                    stuck.get_or_insert_with(|| {
                        Error::new(format!(
                            "comment {:?} changed ({key}) while its suggestion was being applied; the Markdown holds the edit: close the comment with `notabene comments done {}`, then run the same `apply` again ({})",
                            cl.id, cl.id, rec.file
                        ))
                    });
                    continue;
                }
            }
        };
        let comment = match closed {
            Some(m) => {
                let record = Record {
                    comment: Comment::from_map(m),
                    ..rec
                };
                store.write_record(&record).map_err(|e| {
                    Error::new(format!(
                        "the Markdown was changed, but closing comment {} failed: {}; run the same `apply` again ({})",
                        cl.id,
                        e.message(),
                        cl.file
                    ))
                })?;
                failpoint::hit("apply-after-close");
                record.comment
            }
            None => rec.comment,
        };
        applied.push(Applied {
            comment,
            file: cl.file.clone(),
            line: cl.line,
        });
    }
    if let Some(e) = stuck {
        return Err(e);
    }
    failpoint::hit("apply-before-cleanup");
    intent::remove(store.root())?;
    Ok(applied)
}

/// What closing a comment comes to when someone else changed it since the plan was made.
#[derive(Debug, PartialEq)]
enum Merged {
    /// The close, with the other change kept (a reply, a hold, a field of its own).
    Closed(Map<String, Value>),
    /// Someone else closed it: theirs stands.
    ClosedElsewhere,
    /// The other change touched what the close sets, differently (the key named).
    Conflict(String),
}

/// Merges the planned close (`before` → `after`) with the change someone else made
/// (`before` → `now`), field by field as the store's merge does: a field changed on one side
/// takes that side; `updatedAt` the later; changed on both sides differently, a conflict.
fn merge_close(
    before: &Map<String, Value>,
    after: &Map<String, Value>,
    now: &Map<String, Value>,
) -> Merged {
    let open = |m: &Map<String, Value>| {
        m.get("status").and_then(Value::as_str) == Some(crate::base::store::Status::Open.as_str())
    };
    if open(before) && !open(now) {
        return Merged::ClosedElsewhere;
    }
    let mut out = Map::new();
    let keys = after
        .keys()
        .chain(now.keys().filter(|k| !after.contains_key(*k)));
    for k in keys {
        let (b, a, n) = (before.get(k), after.get(k), now.get(k));
        let v = if k == "updatedAt" {
            let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
            if text(n) > text(a) { n } else { a }
        } else if n == b || a == n {
            a
        } else if a == b {
            n
        } else {
            return Merged::Conflict(k.clone());
        };
        if let Some(v) = v {
            out.insert(k.clone(), v.clone());
        }
    }
    Merged::Closed(out)
}

/// Writes the edits `fe` into their file, never over a change made by someone else. The file
/// is read and edited, the new text written and fsynced beside the store; then, just before
/// the rename, the file is checked to be the same file with the same bytes. Lines another
/// program appended meanwhile are carried into the new text as they are (a change anywhere
/// else starts again from a new read); after the rename, the replaced file is read once more,
/// and a write that reached it in between is carried over the same way. The edited bytes
/// themselves changed: refused. A file that keeps changing is given up after [`ATTEMPTS`].
fn write_file(book: &Book, store: &Store, fe: &FileEdits) -> Result<()> {
    let rel = Path::new(&fe.path);
    let shown = &fe.path;
    fsx::check_no_symlink(&book.root, rel).map_err(|_| {
        Error::new(format!(
            "{shown} is a symlink or is reached through one; apply the suggestion by hand; nothing written ({shown})"
        ))
    })?;
    let path = book.root.join(rel);
    let tmp_dir = temp_dir(store, &path, shown)?;
    let changed = || {
        Error::new(format!(
            "{shown} changed where the suggestion goes since it was traced; nothing written ({shown})"
        ))
    };
    // After a write reached the file we replaced: (what we put in place, its last text).
    let mut carried: Option<(String, String)> = None;
    for _ in 0..ATTEMPTS {
        let file = File::open(&path).map_err(|e| Error::io("cannot read", &path, e))?;
        let cur = read_all(&file, &path)?;
        let want = match carried.take() {
            Some((wrote, old)) => {
                let Some(later) = cur.strip_prefix(wrote.as_str()) else {
                    bail!(
                        "{shown} was changed by another program while the suggestion was written; check it and apply again ({shown})"
                    );
                };
                if fe.state(&old) != State::Before {
                    return Err(changed());
                }
                fe.applied_to(&old) + later
            }
            None => match fe.state(&cur) {
                State::Done => return Ok(()),
                State::Before => fe.applied_to(&cur),
                State::Changed => return Err(changed()),
            },
        };
        if want == cur {
            return Ok(());
        }
        let mut prepared = fsx::prepare_in(&tmp_dir, &path, want.as_bytes())?;
        let (mut wrote, mut seen) = (want, cur);
        let mut stable = false;
        for _ in 0..APPEND_CHECKS {
            if !same_file(&file, &path) {
                break;
            }
            let now = read_all(&file, &path)?;
            if now == seen {
                stable = true;
                break;
            }
            let Some(extra) = now.strip_prefix(seen.as_str()) else {
                break;
            };
            prepared.append(extra.as_bytes())?;
            wrote.push_str(extra);
            seen = now;
        }
        if !stable {
            drop(prepared);
            continue;
        }
        prepared.replace()?.finish();
        let old = read_all(&file, &path)?;
        if old == seen {
            return Ok(());
        }
        carried = Some((wrote, old));
    }
    bail!("{shown} keeps changing while the suggestion is written; try again later ({shown})")
}

fn read_all(mut file: &File, path: &Path) -> Result<String> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0))
        .and_then(|_| file.read_to_string(&mut text))
        .map_err(|e| Error::io("cannot read", path, e))?;
    Ok(text)
}

/// Whether `path` still names the open `file`.
fn same_file(file: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), std::fs::symlink_metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (file, path);
        true
    }
}

/// Where the new text of the Markdown file `path` is written before it is renamed over it:
/// the store directory (where `verify` and `clean` find a leftover, which git ignores and
/// mdBook never reads), or, when the store is on another file system (a rename cannot cross
/// it), the `.git` directory of the repository holding the file. Never beside the file.
fn temp_dir(store: &Store, path: &Path, shown: &str) -> Result<PathBuf> {
    let dir = path.parent().unwrap_or(Path::new("."));
    if same_device(store.root(), dir) {
        return Ok(store.root().to_path_buf());
    }
    dir.ancestors()
        .map(|a| a.join(".git"))
        .find(|g| g.is_dir())
        .filter(|g| same_device(g, dir))
        .ok_or_else(|| {
            Error::new(format!(
                "the store ({}) is on another file system than {shown}, and no git directory beside it can hold the new text while it is written; keep the store beside the book or apply the suggestion by hand; nothing written ({shown})",
                store.root().display()
            ))
        })
}

/// Whether two directories are on one file system (a rename between them works).
fn same_device(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(x), Ok(y)) => x.dev() == y.dev(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (a, b);
        true
    }
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
    if c.status() != Some(crate::base::store::Status::Open) {
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
        .map(crate::base::util::slash_path)
        .unwrap_or_else(|_| path.display().to_string())
}

/// Where comment `c`'s suggestion goes, or why it cannot go anywhere.
fn locate(book: &Book, anchors: &BookAnchors, c: &Comment, options: &TextOptions) -> Result<Edit> {
    let id = c.id().unwrap_or_default();
    let s = c.suggestion().expect("checked by precheck");
    let quote = c
        .anchor()
        .and_then(|a| a.get("quote"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    if quote != s.quote {
        bail!(
            "the anchor of {id:?} no longer quotes the text the suggestion was made on; nothing written (anchor.quote)"
        );
    }
    let ci = anchors
        .comments
        .iter()
        .position(|x| x.id() == Some(id))
        .ok_or_else(|| Error::new(format!("comment {id:?} is not in this build")))?;
    let l = &anchors.located[ci];
    let (Some(ch), Some(r)) = (l.chapter, &l.resolution) else {
        bail!("comment {id:?} is not on a page of this build; nothing written (page)");
    };
    if l.followed.is_some() {
        bail!(
            "comment {id:?} was found on another page than its own; run `notabene anchors heal` first; nothing written (page)"
        );
    }
    if r.flags.ambiguous {
        bail!(
            "the quote of {id:?} appears more than once with the same context; nothing written (anchor.quote)"
        );
    }
    let (Status::Exact, Some(place)) = (r.status, &r.place) else {
        bail!(
            "the quote of {id:?} is no longer exact in its chapter ({}): the text changed since the suggestion; nothing written (anchor.quote)",
            match r.status {
                Status::Fuzzy => "fuzzy",
                _ => "not found",
            }
        );
    };
    let chapter = &anchors.chapters[ch];
    let why = |why: String| {
        Error::new(format!(
            "the quote of {id:?} {why}; nothing written (anchor.quote)"
        ))
    };
    let pt = &anchors.texts[ch];
    let (range, code) = plain_source(pt, &chapter.content, place.text.clone()).map_err(why)?;
    let expected = chapter.content[range.clone()].to_string();
    let content_range = range.clone();
    let (path, range, file_text) = on_disk(book, chapter, range).map_err(why)?;
    only_here(book, chapter, &path).map_err(why)?;
    let at_line_start = range.start == 0 || file_text[..range.start].ends_with('\n');
    // In code, a line's start is after the container's indentation or `>` markers.
    let line_start_in_code = file_text[..range.start]
        .rsplit('\n')
        .next()
        .is_some_and(|l| l.chars().all(|c| c == '>' || c.is_whitespace()));
    let ctx = match code {
        None => Context::Prose { at_line_start },
        Some((CodeKind::Indented, _)) => Context::Indented,
        Some((CodeKind::Fenced, n)) => fenced(pt, &chapter.content, n, options, line_start_in_code),
    };
    let newline = if file_text.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let refused = |why: String| {
        Error::new(format!(
            "the suggestion of {id:?} {why}; nothing written (suggestion.text)"
        ))
    };
    let text = safe_text::replacement(s.text, &ctx, newline).map_err(refused)?;
    // The chapter as the renderer would get it, edited: text changed, nothing else.
    let mut edited = chapter.content.clone();
    edited.replace_range(content_range, &text);
    safe_text::check_structure(&chapter.content, &edited, &options.markdown()).map_err(refused)?;
    Ok(Edit {
        path,
        range,
        expected,
        text,
    })
}

/// Refuses a file that renders elsewhere too: the chapter's own file included by another
/// file, or an included file that another file (or the chapter twice) includes as well. The
/// edit was checked against this chapter only; where else the same bytes land (inside code
/// here, in prose there) it could render as something else.
fn only_here(book: &Book, chapter: &Chapter, path: &Path) -> std::result::Result<(), String> {
    let prefix = format!("{}/", crate::model::book::PageIds::new(book).prefix);
    let own_rel = chapter
        .source
        .strip_prefix(&prefix)
        .unwrap_or(&chapter.source);
    let own = book.src_dir().join(own_rel).canonicalize().ok();
    let from = includers(&book.src_dir(), path);
    let expected = if own.as_deref() == Some(path) { 0 } else { 1 };
    let others: Vec<&PathBuf> = from
        .iter()
        .filter(|f| Some(f.as_path()) != own.as_deref())
        .collect();
    if from.len() == expected && others.is_empty() {
        return Ok(());
    }
    let shown = display(book, path);
    Err(match others.first() {
        Some(by) => format!(
            "comes from {shown}, which {} includes too (an edit checked on this page could render differently there); apply the suggestion by hand",
            display(book, by)
        ),
        None => format!(
            "comes from {shown}, which its chapter includes {} times; apply the suggestion by hand",
            from.len()
        ),
    })
}

/// Every file under `src` (canonical paths, one entry per directive) whose `{{#include}}`,
/// `{{#rustdoc_include}}` or `{{#playground}}` names the file `target` (canonical).
fn includers(src: &Path, target: &Path) -> Vec<PathBuf> {
    const MAX: u64 = 1 << 20;
    let mut out = Vec::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = entries.filter_map(|e| e.ok()).collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let Ok(ft) = e.file_type() else { continue };
            let p = e.path();
            if ft.is_dir() {
                dirs.push(p);
                continue;
            }
            if !ft.is_file() || e.metadata().map_or(true, |m| m.len() > MAX) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&p) else {
                continue;
            };
            if !text.contains("{{") {
                continue;
            }
            for d in directives(&text).directives {
                let inner = text[d].trim_start_matches('{').trim_end_matches('}').trim();
                let Some(rest) = inner.strip_prefix('#') else {
                    continue;
                };
                let mut words = rest.split_whitespace();
                let (Some(name), Some(arg)) = (words.next(), words.next()) else {
                    continue;
                };
                if !matches!(name, "include" | "rustdoc_include" | "playground") {
                    continue;
                }
                let file = arg.split(':').next().unwrap_or(arg);
                let named = p
                    .parent()
                    .unwrap_or(Path::new("."))
                    .join(file)
                    .canonicalize();
                if named.is_ok_and(|n| n == target) {
                    out.push(p.canonicalize().unwrap_or_else(|_| p.clone()));
                }
            }
        }
    }
    out
}

/// The context of a quote in fenced code block `n`: its fence, and what starts each of its
/// lines (the fence line's indentation and `>` markers, list markers as spaces).
fn fenced(
    pt: &PageText,
    content: &str,
    n: u32,
    options: &TextOptions,
    at_line_start: bool,
) -> Context {
    let src = pt
        .code_blocks
        .get(n as usize)
        .map_or(0..0, |cb| cb.src.clone());
    let line_start = content[..src.start].rfind('\n').map_or(0, |i| i + 1);
    let block = &content[src.start..src.end.max(src.start)];
    let fence = block.trim_start();
    let lead = &block[..block.len() - fence.len()];
    let fence_char = fence.chars().next().unwrap_or('`');
    let fence_len = fence.chars().take_while(|&c| c == fence_char).count();
    // The language's hidden-line marker: mdBook hides `# ` lines of Rust, and the prefix
    // `output.html.code.hidelines` gives for other languages.
    let info = fence[fence_char.len_utf8() * fence_len..]
        .lines()
        .next()
        .unwrap_or("");
    let lang = info
        .split(|c: char| c == ',' || c.is_whitespace())
        .find(|w| !w.is_empty())
        .unwrap_or("");
    let hidden = if lang == "rust" {
        Some(safe_text::Hidden::Rust)
    } else {
        options
            .hidelines
            .get(lang)
            .map(|p| safe_text::Hidden::Prefix(p.clone()))
    };
    let prefix = content[line_start..src.start]
        .chars()
        .chain(lead.chars())
        .map(|c| {
            if c == '>' || c.is_whitespace() {
                c
            } else {
                ' '
            }
        })
        .collect();
    Context::Fenced {
        fence_char,
        fence_len,
        prefix,
        hidden,
        at_line_start,
    }
}

/// The kind of code block a quote is in, and the block's index in the page's text.
type InCode = (CodeKind, u32);

/// What kind of code block a quote is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CodeKind {
    /// ```` ``` ```` or `~~~` fences.
    Fenced,
    /// Indented by four spaces.
    Indented,
}

/// The Markdown range of the text range `text`, when replacing it keeps every piece of
/// markup: all of it in one block, made of text that maps to its source (plain text,
/// entities, smart punctuation, soft breaks, code block lines), with nothing but whitespace
/// between its pieces in the source.
fn plain_source(
    pt: &PageText,
    content: &str,
    text: Range<usize>,
) -> std::result::Result<(Range<usize>, Option<InCode>), String> {
    if text.is_empty() {
        return Err("is empty".into());
    }
    let first = pt
        .segment_at(text.start)
        .ok_or("is not in the page's text")?;
    let last = pt
        .segment_at(text.end - 1)
        .ok_or("is not in the page's text")?;
    let segs = &pt.segments[first..=last];
    if segs.iter().any(|s| s.block != segs[0].block) {
        return Err("spans more than one paragraph or block".into());
    }
    for s in segs {
        match s.kind {
            SegKind::Plain | SegKind::Atomic | SegKind::CodeBlock(_) => {}
            SegKind::CodeSpan => return Err("spans inline code the replacement would break".into()),
            SegKind::Raw => {
                return Err("spans raw HTML or generated text the replacement would break".into());
            }
        }
    }
    let range = pt.source_range(text.start, text.end);
    // Source bytes of the range that no piece of the quote comes from: markup.
    let mut covered = range.start;
    for s in segs {
        let (a, b) = (s.src.start.max(range.start), s.src.end.min(range.end));
        if a > covered {
            markup_gap(&content[covered..a])?;
        }
        covered = covered.max(b);
    }
    if covered < range.end {
        markup_gap(&content[covered..range.end])?;
    }
    let code = match segs[0].kind {
        SegKind::CodeBlock(n) => {
            if segs.iter().any(|s| s.kind != segs[0].kind) {
                return Err("spans code and text".into());
            }
            let fence = pt
                .code_blocks
                .get(n as usize)
                .map(|cb| content[cb.src.clone()].trim_start())
                .is_some_and(|src| src.starts_with("```") || src.starts_with("~~~"));
            Some((
                if fence {
                    CodeKind::Fenced
                } else {
                    CodeKind::Indented
                },
                n,
            ))
        }
        _ if segs.iter().any(|s| matches!(s.kind, SegKind::CodeBlock(_))) => {
            return Err("spans code and text".into());
        }
        _ => None,
    };
    Ok((range, code))
}

fn markup_gap(gap: &str) -> std::result::Result<(), String> {
    if gap.chars().all(char::is_whitespace) {
        Ok(())
    } else {
        Err(format!(
            "spans inline markup (`{}`) the replacement would break",
            gap.trim()
        ))
    }
}

/// The file (canonical path), byte range and text on disk of the chapter's Markdown range
/// `range`: the chapter file itself, or the file an `{{#include}}` brought in. Each step is
/// checked against the bytes it claims (an unsure trace is a refusal, never a guess), and the
/// file must be inside the book.
fn on_disk(
    book: &Book,
    chapter: &Chapter,
    range: Range<usize>,
) -> std::result::Result<(PathBuf, Range<usize>, String), String> {
    let prefix = format!("{}/", crate::model::book::PageIds::new(book).prefix);
    let file = book.src_dir().join(
        chapter
            .source
            .strip_prefix(&prefix)
            .unwrap_or(&chapter.source),
    );
    let content = &chapter.content;
    let slice = &content[range.clone()];
    let inside = |path: &Path| inside_book(book, path);
    let Some(disk) = &chapter.disk else {
        return Ok((inside(&file)?, range, content.clone()));
    };
    // The disk text is literal pieces and `{{#…}}` directives; the pieces are in the content
    // in order, each directive's expansion between them.
    let pieces = directives(disk);
    // No directive: the file is the chapter, byte for byte where the quote is (bytes past it
    // may have been appended since mdBook read it; the write checks them again).
    if pieces.directives.is_empty() {
        if disk.get(range.clone()) != Some(slice) {
            return Err("cannot be traced back from the expanded chapter to its file".into());
        }
        return Ok((inside(&file)?, range, disk.clone()));
    }
    let placed = place_literals(disk, content, &pieces)?;
    // In a literal piece: the chapter file.
    for (d, c) in &placed {
        if c.start <= range.start && range.end <= c.end {
            let off = d.start + (range.start - c.start);
            if disk.get(off..off + range.len()) != Some(slice) {
                return Err("cannot be traced back from the expanded chapter to its file".into());
            }
            return Ok((inside(&file)?, off..off + range.len(), disk.clone()));
        }
    }
    // In the expansion of directive k (between literal k and k + 1).
    for (k, directive) in pieces.directives.iter().enumerate() {
        let (Some(before), Some(after)) = (placed.get(k), placed.get(k + 1)) else {
            continue;
        };
        let gap = before.1.end..after.1.start;
        if !(gap.start <= range.start && range.end <= gap.end) {
            continue;
        }
        let Some((target, whole)) = include_target(&disk[directive.clone()]) else {
            return Err(
                "comes from a `{{#…}}` expansion other than a file include, or an include with an anchor".into(),
            );
        };
        let included = inside(&file.parent().unwrap_or(Path::new(".")).join(target))?;
        let text = std::fs::read_to_string(&included).map_err(|e| {
            format!(
                "comes from {} which cannot be read: {e}",
                included.display()
            )
        })?;
        let expansion = &content[gap.clone()];
        // A whole-file include is the file (mdBook drops its last newline); a line range is
        // a run of its lines, found once.
        let base = if whole {
            (text == expansion || text.strip_suffix('\n') == Some(expansion)).then_some(0)
        } else {
            text.find(expansion)
                .filter(|&i| text.rfind(expansion) == Some(i))
                .filter(|&i| i == 0 || text[..i].ends_with('\n'))
        };
        let Some(base) = base else {
            return Err(format!(
                "cannot be traced to one place in the included file {}",
                display(book, &included)
            ));
        };
        let start = base + (range.start - gap.start);
        if text.get(start..start + range.len()) != Some(slice) {
            return Err(format!(
                "cannot be traced to one place in the included file {}",
                display(book, &included)
            ));
        }
        return Ok((included, start..start + range.len(), text));
    }
    Err("spans the boundary of an included file".into())
}

/// `path` canonical, when it is inside the book and reached through no symlink from the book
/// root (the file a symlink names may be anywhere, and an edit there is not the book's).
fn inside_book(book: &Book, path: &Path) -> std::result::Result<PathBuf, String> {
    // A symlink on the way from the book root is refused, not followed: the file it
    // names may be anywhere, and an edit there is not the book's.
    if let Ok(rel) = path.strip_prefix(&book.root) {
        let mut cur = book.root.clone();
        for c in rel.components() {
            match c {
                std::path::Component::ParentDir => {
                    cur.pop();
                }
                std::path::Component::Normal(name) => {
                    cur.push(name);
                    if std::fs::symlink_metadata(&cur).is_ok_and(|m| m.file_type().is_symlink()) {
                        return Err(format!(
                            "comes from {}, which is reached through a symlink; apply the suggestion by hand",
                            display(book, path)
                        ));
                    }
                }
                _ => {}
            }
        }
    }
    let canon = path
        .canonicalize()
        .map_err(|e| format!("comes from {} which cannot be read: {e}", path.display()))?;
    let root = book
        .root
        .canonicalize()
        .unwrap_or_else(|_| book.root.clone());
    if !canon.starts_with(&root) {
        return Err(format!("comes from {}, outside the book", path.display()));
    }
    Ok(canon)
}

/// A literal piece of a chapter file: its range on disk, and in the expanded chapter.
type Placed = (Range<usize>, Range<usize>);

/// Where each literal piece of the chapter file is in the expanded `content`, in order, as
/// (disk range, content range); an error when one is not found where it must be.
fn place_literals(
    disk: &str,
    content: &str,
    pieces: &Pieces,
) -> std::result::Result<Vec<Placed>, String> {
    let mut at = 0usize;
    let mut placed: Vec<Placed> = Vec::new();
    for (k, piece) in pieces.literals.iter().enumerate() {
        let lit = &disk[piece.clone()];
        let found = if k == 0 {
            content.starts_with(lit).then_some(0)
        } else if k + 1 == pieces.literals.len() {
            content
                .ends_with(lit)
                .then(|| content.len() - lit.len())
                .filter(|&i| i >= at)
        } else if lit.is_empty() {
            Some(at)
        } else {
            content[at..].find(lit).map(|i| at + i)
        };
        let Some(start) = found else {
            return Err("cannot be traced back from the expanded chapter to its files".into());
        };
        placed.push((piece.clone(), start..start + lit.len()));
        at = start + lit.len();
    }
    Ok(placed)
}

/// The literal pieces of a chapter file and the `{{#…}}` directives between them (pieces:
/// one more than directives).
struct Pieces {
    literals: Vec<Range<usize>>,
    directives: Vec<Range<usize>>,
}

fn directives(disk: &str) -> Pieces {
    let mut literals = Vec::new();
    let mut directives = Vec::new();
    let mut start = 0;
    let mut from = 0;
    while let Some(i) = disk[from..].find("{{").map(|i| from + i) {
        let rest = &disk[i + 2..];
        let is_directive = rest.trim_start().starts_with('#') && !disk[..i].ends_with('\\');
        match (is_directive, rest.find("}}")) {
            (true, Some(end)) => {
                literals.push(start..i);
                directives.push(i..i + 2 + end + 2);
                start = i + 2 + end + 2;
                from = start;
            }
            _ => from = i + 2,
        }
    }
    literals.push(start..disk.len());
    Pieces {
        literals,
        directives,
    }
}

/// The file of an `{{#include path[:lines]}}` directive and whether it is the whole file.
/// An anchor (`:name`) or `rustdoc_include` (hidden lines) makes an expansion that is not a
/// run of the file's bytes: `None`, like any other directive.
fn include_target(directive: &str) -> Option<(&str, bool)> {
    let inner = directive.strip_prefix("{{")?.strip_suffix("}}")?.trim();
    let rest = inner.strip_prefix("#include")?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let arg = rest.trim();
    let (path, spec) = match arg.split_once(':') {
        Some((p, spec)) => (p.trim(), Some(spec.trim())),
        None => (arg, None),
    };
    if path.is_empty() {
        return None;
    }
    match spec {
        None => Some((path, true)),
        // Line ranges: `2`, `2:5`, `:5`, `2:`.
        Some(sp) if sp.chars().all(|c| c.is_ascii_digit() || c == ':') => Some((path, false)),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::apps::ops::suggestions::{directives, include_target};

    #[test]
    fn directives_split_a_chapter_into_pieces() {
        let p = directives("a {{#include x.md}} b {{ #title T }} c \\{{#include y}} d");
        assert_eq!(p.directives.len(), 2);
        assert_eq!(p.literals.len(), 3);
        assert_eq!(include_target("{{#include x.md}}"), Some(("x.md", true)));
        assert_eq!(
            include_target("{{#include x.md:2:5}}"),
            Some(("x.md", false))
        );
        assert_eq!(include_target("{{#include x.md:anchor}}"), None);
        assert_eq!(include_target("{{#rustdoc_include src/a.rs:2}}"), None);
        assert_eq!(include_target("{{#title T}}"), None);
        assert_eq!(include_target("{{#includes x}}"), None);
    }
}
