//! Carrying out an `apply`'s plan: each Markdown file written (never over another program's
//! save), then the journal entry, then the comments closed, then the record removed. Used for a
//! plan traced in this run and for one an interrupted run recorded; the latter is never trusted
//! with what is written: each file that does not hold its edits yet is traced again from the
//! comments the record names, and only what that tracing gives is written.
//!
//! May call: the store (`notabene_store`), the book, the suggestions' tracing (`super`).

use super::intent::{FileEdits, Intent, State};
use super::{Applied, close, trace};
use crate::model::book::Book;
use crate::{Error, Result, bail};
use notabene_core::failpoint;
use notabene_store::fsx::{self, StoreLock};
use notabene_store::swap::Exchange;
use notabene_store::{Comment, Record, Status, Store, journal};
use serde_json::{Value, json};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Component, Path, PathBuf};

/// How often a chapter that keeps changing under `apply` is read again before it gives up.
const ATTEMPTS: usize = 8;

/// How often, just before the swap, a chapter that grew is read again to carry the lines
/// appended to it.
const APPEND_CHECKS: usize = 1000;

/// Where a plan's edits come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TraceMode {
    /// TraceMode by this run, from the comments, a moment ago.
    Now,
    /// Read from the record of an interrupted run: traced again before anything is written.
    Again,
}

/// Carries out `plan` from wherever an earlier run stopped: each Markdown file written unless
/// it already holds its edits, the journal entry written when the apply writes its own, each
/// comment closed unless it already is, then the record removed. Call with the store lock
/// (`lock`) held.
pub(super) fn finish(
    book: &Book,
    store: &Store,
    lock: &StoreLock,
    plan: &Intent,
    traced: TraceMode,
) -> Result<Vec<Applied>> {
    let files = match traced {
        TraceMode::Now => plan.files.clone(),
        TraceMode::Again => retrace(book, store, plan)?,
    };
    for fe in &files {
        write_file(book, store, fe)?;
        failpoint::hit("apply-after-file");
    }
    store.ensure_meta()?;
    let ids: Vec<String> = plan.closes.iter().map(|c| c.id.clone()).collect();
    let snap = store.load()?;
    let records: Vec<Record> = store.find(&snap, &ids)?.into_iter().cloned().collect();
    // An entry of that id already there is this apply's, written by the run that was killed
    // (its text is rebuilt from comments that may have changed since: it is not written twice).
    let written = || {
        journal::read(store)
            .entries()
            .iter()
            .any(|e| e.get("id").and_then(Value::as_str) == Some(plan.journal.id.as_str()))
    };
    if let Some(actor) = &plan.journal.write
        && !written()
    {
        let entry = journal_entry(plan, &records, actor);
        journal::prepare_entry(entry)
            .and_then(|e| journal::append_locked(store, e, &[], lock))
            .map_err(|e| {
                Error::new(format!(
                    "the Markdown was changed, but the journal entry failed: {}; run the same `apply` again",
                    e.message()
                ))
                .with_kind(notabene_core::error::ErrorKind::Io)
            })?;
        failpoint::hit("apply-after-journal");
    }
    let status = book.config.review.done_status();
    let mut applied = Vec::with_capacity(records.len());
    // A comment whose suggestion someone changed since the plan is not closed as applied
    // (the Markdown holds the edit planned, not the new suggestion); the others are closed,
    // the record removed, and the apply says so.
    let mut stuck: Option<Error> = None;
    for (rec, cl) in records.into_iter().zip(&plan.closes) {
        let place = |comment: Comment| Applied {
            comment,
            file: cl.file.clone(),
            line: cl.line,
        };
        let c = &rec.comment;
        // Closed by an earlier run of this apply, or by someone else: theirs stands.
        if c.suggestion().is_some_and(|s| s.applied) || c.status() != Some(Status::Open) {
            applied.push(place(rec.comment));
            continue;
        }
        if !c
            .suggestion()
            .is_some_and(|s| s.quote == cl.quote && s.text == cl.text)
        {
            stuck.get_or_insert_with(|| {
                Error::new(format!(
                    "comment {:?} changed (suggestion) while its suggestion was being applied; {} holds the edit as planned and the comment stays open: check both, then close it by hand ({})",
                    cl.id, cl.file, rec.file
                ))
            });
            continue;
        }
        let mut closed = rec.comment.clone();
        close(&mut closed, &cl.file, status, plan);
        let record = Record {
            comment: closed,
            ..rec
        };
        store.write_record(&record).map_err(|e| {
            Error::new(format!(
                "the Markdown was changed, but closing comment {} failed: {}; run the same `apply` again ({})",
                cl.id,
                e.message(),
                cl.file
            ))
            .with_kind(notabene_core::error::ErrorKind::Io)
        })?;
        failpoint::hit("apply-after-close");
        applied.push(place(record.comment));
    }
    failpoint::hit("apply-before-cleanup");
    super::intent::remove(store)?;
    match stuck {
        Some(e) => Err(e),
        None => Ok(applied),
    }
}

/// The edits still to make of a recorded plan, traced again: a file that holds its edits needs
/// none; one that holds the bytes the plan found gets the edits its comments give now, which
/// must be the ones recorded; any other change is refused.
fn retrace(book: &Book, store: &Store, plan: &Intent) -> Result<Vec<FileEdits>> {
    let record = || {
        super::intent::location(store)
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    };
    let refused = |why: String| {
        Error::new(format!(
            "the record of an interrupted apply {why}; nothing written: check the comments it names, then delete it ({})",
            record()
        ))
    };
    check_shape(plan).map_err(|why| refused(why.to_string()))?;
    let mut todo: Vec<&FileEdits> = Vec::new();
    for fe in &plan.files {
        let path = writable(book, store, &fe.path)?;
        let text =
            std::fs::read_to_string(&path).map_err(|e| Error::io("cannot read", &path, e))?;
        match fe.state(&text) {
            State::Done => {}
            State::Before => todo.push(fe),
            State::Changed => {
                return Err(refused(format!(
                    "plans an edit of {} where the file changed since",
                    fe.path
                )));
            }
        }
    }
    // Comments closed or deleted since are left as they are: their edits are not made.
    let snap = store.load()?;
    let open = |id: &str| {
        snap.comments().any(|r| {
            r.comment.id() == Some(id)
                && r.comment.status() == Some(Status::Open)
                && r.comment.suggestion().is_some_and(|s| !s.applied)
        })
    };
    let ids: Vec<String> = todo
        .iter()
        .flat_map(|fe| plan.ids_in(&fe.path))
        .filter(|id| open(id))
        .collect();
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let again = trace(book, store, &ids, true)
        .map_err(|e| refused(format!("cannot be carried out: {}", e.message())))?;
    // Every edit traced again is one the record planned, in a file it planned to write.
    let planned = |g: &FileEdits| {
        todo.iter().any(|fe| {
            fe.path == g.path
                && g.edits.iter().all(|y| {
                    fe.edits
                        .iter()
                        .any(|x| (x.start, &x.expected, &x.text) == (y.start, &y.expected, &y.text))
                })
        })
    };
    if !again.files.iter().all(planned) {
        return Err(refused(
            "does not match what its comments ask for now".to_string(),
        ));
    }
    Ok(again.files)
}

/// Why the record of an interrupted apply is not a whole plan: a clause to put after "the
/// record of an interrupted apply …".
#[derive(Debug, Clone, PartialEq, Eq)]
enum Malformed {
    /// A comment is named twice.
    CommentTwice,
    /// A file is named twice.
    FileTwice,
    /// A file's edits are not one per comment that names it (the file).
    EditsPerComment(String),
    /// A comment is closed whose file is not written.
    CloseWithoutFile,
}

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Malformed::CommentTwice => f.write_str("names a comment twice"),
            Malformed::FileTwice => f.write_str("names a file twice"),
            Malformed::EditsPerComment(path) => {
                write!(f, "does not plan one edit per comment in {path}")
            }
            Malformed::CloseWithoutFile => {
                f.write_str("closes a comment whose file it does not plan to write")
            }
        }
    }
}

/// A record's plan is whole: each comment once, each file once, and each file with exactly
/// one edit per comment that names it.
fn check_shape(plan: &Intent) -> std::result::Result<(), Malformed> {
    let mut ids: Vec<&str> = plan.closes.iter().map(|c| c.id.as_str()).collect();
    ids.sort_unstable();
    if ids.windows(2).any(|w| w[0] == w[1]) {
        return Err(Malformed::CommentTwice);
    }
    let mut paths: Vec<&str> = plan.files.iter().map(|f| f.path.as_str()).collect();
    paths.sort_unstable();
    if paths.windows(2).any(|w| w[0] == w[1]) {
        return Err(Malformed::FileTwice);
    }
    for fe in &plan.files {
        let named = plan.closes.iter().filter(|c| c.file == fe.path).count();
        if named == 0 || named != fe.edits.len() {
            return Err(Malformed::EditsPerComment(fe.path.clone()));
        }
    }
    if plan
        .closes
        .iter()
        .any(|c| !plan.files.iter().any(|f| f.path == c.file))
    {
        return Err(Malformed::CloseWithoutFile);
    }
    Ok(())
}

/// The journal entry an apply writes itself: one change record per comment, saying what was
/// replaced and why (the comment's first message).
fn journal_entry(plan: &Intent, records: &[Record], actor: &str) -> Value {
    let what_of = |quote: &str, text: &str| {
        if text.is_empty() {
            format!("Deleted “{quote}”.")
        } else {
            format!("Replaced “{quote}” with “{text}”.")
        }
    };
    let changes: Vec<Value> = records
        .iter()
        .zip(&plan.closes)
        .map(|(r, cl)| {
            let c = &r.comment;
            let why = c
                .thread()
                .first()
                .and_then(|m| m.get("body"))
                .and_then(Value::as_str)
                .unwrap_or("");
            json!({ "page": c.page(), "commentIds": [cl.id], "what": what_of(&cl.quote, &cl.text), "why": why })
        })
        .collect();
    let how = match actor {
        "person" => "from the browser",
        _ => "with `comments apply`",
    };
    let what = match plan.closes.as_slice() {
        [one] => what_of(&one.quote, &one.text),
        many => format!("Applied {} suggested edits.", many.len()),
    };
    let title = match plan.closes.len() {
        1 => "Applied a suggested edit",
        _ => "Applied suggested edits",
    };
    json!({
        "id": plan.journal.id,
        "date": plan.at.get(..10).unwrap_or_default(),
        "title": title,
        "summary": format!("{what} Applied by {} {how}.", plan.author),
        "changes": changes,
    })
}

/// The file `rel` (relative to the book root) when an `apply` may write it: inside the book,
/// reached through no symlink, and a source of the book's pages — never under a `.git`
/// directory, `book.toml`, the theme, the store, or the build directory, whatever asked.
fn writable(book: &Book, store: &Store, rel: &str) -> Result<PathBuf> {
    let refused = |why: &str| {
        Error::new(format!(
            "refusing to write {rel}: {why}; nothing written ({rel})"
        ))
    };
    let rel_path = Path::new(rel);
    if rel_path
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        return Err(refused("it is not a path inside the book"));
    }
    for c in rel_path.components() {
        let name = c.as_os_str().to_string_lossy();
        if name
            .trim_end_matches(['.', ' '])
            .eq_ignore_ascii_case(".git")
        {
            return Err(refused("it is in a git directory"));
        }
    }
    fsx::check_no_symlink(&book.root, rel_path)
        .map_err(|_| refused("it is reached through a symlink"))?;
    let root = book
        .root
        .canonicalize()
        .map_err(|e| Error::io("cannot read", &book.root, e))?;
    let path = root.join(rel_path);
    let under = |dir: &Path| {
        let dir = root.join(dir);
        path.starts_with(dir.canonicalize().unwrap_or(dir))
    };
    let first = rel_path
        .components()
        .next()
        .map(|c| c.as_os_str().to_string_lossy().to_lowercase());
    if first.as_deref() == Some("book.toml") {
        return Err(refused("it is the book's configuration"));
    }
    let theme = book
        .mdbook
        .html_config()
        .and_then(|h| h.theme)
        .unwrap_or_else(|| PathBuf::from("theme"));
    if under(&theme) {
        return Err(refused("it is in the theme"));
    }
    let html = book.mdbook.html_config().unwrap_or_default();
    if html
        .additional_css
        .iter()
        .chain(&html.additional_js)
        .any(|f| path == root.join(f))
    {
        return Err(refused("it is a script or style sheet of the book's pages"));
    }
    let store_root = store
        .root()
        .canonicalize()
        .unwrap_or_else(|_| store.root().into());
    if path.starts_with(store_root) {
        return Err(refused("it is in the comment store"));
    }
    if under(&book.mdbook.build.build_dir) {
        return Err(refused("it is in the build directory"));
    }
    Ok(path)
}

/// Writes the edits `fe` into their file, never over a change made by someone else. The file
/// is read and edited, the new text written and fsynced beside the store; then, just before
/// the swap, the file is checked to be the same file with the same bytes (lines another program
/// appended meanwhile are carried into the new text). On Linux the new file is swapped with the
/// old one atomically (`renameat2(RENAME_EXCHANGE)`) and what was swapped out is compared with
/// what was checked: a save that landed in between is swapped back and the edit made again on
/// its text. Elsewhere the file is renamed over, and a write that reached the replaced file is
/// carried over as appended lines are. The edited bytes themselves changed: refused. A file
/// that keeps changing is given up after [`ATTEMPTS`].
/// Writes one replacement into the Markdown file `rel` of `book` (relative to the book root,
/// `text` its bytes as read): `expected` at `start` becomes `new`, as `apply` writes a chapter
/// (inside the book, through no symlink, atomically, never over another program's save). The
/// in-page editor's write.
pub(crate) fn write_replacement(
    book: &Book,
    store: &Store,
    (rel, text): (&str, &str),
    start: usize,
    expected: &str,
    new: &str,
) -> Result<()> {
    let fe = FileEdits {
        path: rel.to_string(),
        edits: vec![super::intent::Replace::new(
            text,
            start,
            expected.to_string(),
            new.to_string(),
            text.len(),
        )],
    };
    write_file(book, store, &fe)
}

fn write_file(book: &Book, store: &Store, fe: &FileEdits) -> Result<()> {
    let shown = &fe.path;
    let path = writable(book, store, &fe.path)?;
    let tmp_dir = temp_dir(store, &path, shown)?;
    let changed = || {
        Error::new(format!(
            "{shown} changed where the suggestion goes since it was traced; nothing written ({shown})"
        ))
    };
    // Without an atomic swap, after a write reached the file we replaced: (what we put in
    // place, its last text).
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
            if !fsx::still_named(&file, &path) {
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
        // The window between the last check and the swap (widened by the tests).
        failpoint::widen("apply-before-swap");
        match prepared.exchange()? {
            Exchange::Swapped(out) => {
                if out.replaced()? == seen.as_bytes() {
                    if out.in_place() {
                        out.keep_ours().finish();
                        return Ok(());
                    }
                    // Another program renamed its file over ours just after the swap: theirs
                    // stands, and the edit is made again on it.
                    drop(out);
                    continue;
                }
                // Another program saved the file between the check and the swap: its file
                // goes back in place, and the edit is made again on what it wrote.
                out.swap_back()?;
            }
            Exchange::Unsupported(prepared) => {
                prepared.replace()?.finish();
                let old = read_all(&file, &path)?;
                if old == seen {
                    return Ok(());
                }
                carried = Some((wrote, old));
            }
        }
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

/// Where the new text of the Markdown file `path` is written before it is swapped in: the
/// store directory (where `verify` and `clean` find a leftover, which git ignores and mdBook
/// never reads), or, when the store is on another file system (a rename cannot cross it), the
/// `.git` directory of the repository holding the file. Never beside the file.
pub(super) fn temp_dir(store: &Store, path: &Path, shown: &str) -> Result<PathBuf> {
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
