//! Every operation on comments, once: create, reply, edit, hold, reopen, close, delete (and the
//! suggested edits of [`crate::apps::ops::suggestions`], which it re-exports). The CLI and the API
//! are adaptors over these functions: they parse their input into the typed requests here, and
//! print or serialise what comes back. Every rule lives here, and where the two differ it is by a
//! rule written here (see [`Actor`]).
//!
//! Errors are typed ([`ErrorKind`]) and name the request field they are about ([`Error::field`]);
//! each adaptor names the field its own way (`--page`, `page`).

pub mod assets;
pub mod audit;
pub mod check;
mod create;
pub mod gate;
pub mod heal;
mod journal_link;
pub mod limits;
pub mod page_edit;
pub mod suggestions;

use crate::Result;
use notabene_core::error::{Error, ErrorKind};
use notabene_store::{Comment, Record, Status, Store, ids, journal};
use serde_json::{Map, Value, json};

pub use create::{Anchor, NewComment, Pages, create, quote_in_text};
pub use journal_link::{check_link as check_journal_link, journal_nudge};
pub use suggestions::{Applied, ApplyOptions, apply};

/// The agent protocol shipped with this build (`notabene protocol`, `<store>/protocol.md`, the
/// MCP server's `notabene://protocol.md` resource).
pub const PROTOCOL: &str = include_str!("../../protocol.md");

/// Who asks for an operation. The rules that differ between a person and an agent are
/// written on this type, and nowhere else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Actor {
    /// A person, through the browser (`serve`'s API).
    Person,
    /// An agent (or a person acting as one) through the CLI.
    Agent,
}

impl Actor {
    /// The actor's name in a record (`person`, `agent`).
    pub fn as_str(self) -> &'static str {
        match self {
            Actor::Person => "person",
            Actor::Agent => "agent",
        }
    }

    /// A held comment is one a reviewer is still working on. A person may close it (their
    /// own hold, or a reviewer's call); an agent may not, unless it forces (`--force`).
    pub fn may_close_held(self, force: bool) -> bool {
        self == Actor::Person || force
    }

    /// Whether closing a comment from `from` to `to` is an approval that is recorded in its
    /// thread ([`APPROVAL`], by the person): a person resolving what the agent addressed. An
    /// agent's `done --status resolved` records nothing (it is not a validation), and a retry
    /// finds the comment resolved already, so the message is never written twice.
    pub fn records_approval(self, from: Option<Status>, to: Status) -> bool {
        self == Actor::Person && from == Some(Status::Addressed) && to == Status::Resolved
    }
}

/// The thread message that records an approval: a person who resolves a comment the agent
/// marked `addressed` validates the agent's change. Kept as a message (author, body, time) so
/// that every reader of the store, the original's included, keeps who approved byte for byte.
pub const APPROVAL: &str = "Approved the proposed change.";

/// A resolution: the note of whoever closed the comment, the journal entry it links to,
/// and who closed it when that is not the agent of the journal.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResolutionNote {
    /// What was done.
    pub note: String,
    /// The journal entry describing the change (`journalEntryId`).
    pub journal: Option<String>,
    /// Who closed it (`by`), when a person did.
    pub by: Option<String>,
}

impl ResolutionNote {
    fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("note".into(), self.note.clone().into());
        if let Some(j) = &self.journal {
            m.insert("journalEntryId".into(), j.clone().into());
        }
        if let Some(b) = &self.by {
            m.insert("by".into(), b.clone().into());
        }
        Value::Object(m)
    }
}

/// One change to an existing comment.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Replaces the text of the first message (an open comment without replies only).
    Edit(String),
    /// Closes it as `status` (addressed or resolved). `None` keeps a resolution it has, or
    /// records `{note: "", by}` with the actor's name when it has none.
    Close {
        /// addressed or resolved.
        status: Status,
        /// The resolution to record.
        resolution: Option<ResolutionNote>,
        /// Who closes it (for a resolution recorded without one).
        by: String,
    },
    /// Opens it again: `status: open`, the stale resolution cleared.
    Reopen,
    /// Sets the resolution as given (`null` clears it), without a status change.
    SetResolution(Option<ResolutionNote>),
    /// Puts it on hold, or takes it off.
    Hold(bool),
    /// Appends a message.
    Reply {
        /// Its author.
        author: String,
        /// Its text.
        body: String,
    },
}

/// What the changes did beyond the records written, for the adaptors to tell.
#[derive(Debug, Default)]
pub struct ChangeOutcome {
    /// The records as written.
    pub records: Vec<Record>,
    /// Ids whose earlier resolution note a close replaced.
    pub replaced_notes: Vec<String>,
}

/// Applies `changes` to `c`, in order, at instant `ts` (`updatedAt` included), by `actor`:
/// the rules of every change, in one place. Returns whether a close replaced an earlier note.
pub fn apply_changes(
    c: &mut Comment,
    changes: &[Change],
    actor: Actor,
    force: bool,
    ts: &str,
) -> Result<bool> {
    let id = c.id().unwrap_or_default().to_string();
    let mut replaced = false;
    for change in changes {
        match change {
            Change::Edit(body) => {
                if c.status() != Some(Status::Open) || c.thread().len() != 1 {
                    return Err(Error::of(
                        ErrorKind::Conflict,
                        "only an open comment without replies can be edited",
                        "edit",
                    ));
                }
                if let Some(Value::Array(mut t)) = c.as_map().get("thread").cloned() {
                    if let Some(Value::Object(first)) = t.get_mut(0) {
                        first.insert("body".into(), body.clone().into());
                    }
                    c.set("thread", Value::Array(t));
                }
            }
            Change::Close {
                status,
                resolution,
                by,
            } => {
                if c.held() && !actor.may_close_held(force) {
                    return Err(Error::new(format!(
                        "comment {id:?} is on hold — a reviewer is still working on it; pass --force to close it anyway"
                    ))
                    .with_kind(ErrorKind::Conflict));
                }
                let earlier = c
                    .get("resolution")
                    .and_then(|r| r.get("note"))
                    .and_then(Value::as_str)
                    .filter(|n| !n.is_empty());
                if c.status() == Some(Status::Addressed)
                    && resolution.is_some()
                    && earlier.is_some()
                {
                    replaced = true;
                }
                if actor.records_approval(c.status(), *status) {
                    c.push_message(by, APPROVAL, ts);
                }
                c.set("status", (*status).into());
                match resolution {
                    Some(r) => c.set("resolution", r.to_value()),
                    None if c.get("resolution").is_none_or(Value::is_null) => {
                        c.set("resolution", json!({ "note": "", "by": by }));
                    }
                    None => {}
                }
            }
            Change::Reopen => {
                c.set("status", Status::Open.into());
                c.set("resolution", Value::Null);
            }
            Change::SetResolution(r) => {
                c.set(
                    "resolution",
                    r.as_ref().map_or(Value::Null, ResolutionNote::to_value),
                );
            }
            Change::Hold(h) => c.set("hold", (*h).into()),
            Change::Reply { author, body } => c.push_message(author, body, ts),
        }
    }
    c.set("updatedAt", ts.into());
    Ok(replaced)
}

/// Changes the comments `ids` (each once, in order): all are found and checked under the
/// store's lock before anything is written; then each is written, atomically.
pub fn change(
    store: &Store,
    ids: &[String],
    changes: &[Change],
    actor: Actor,
    force: bool,
) -> Result<ChangeOutcome> {
    let mut unique: Vec<String> = Vec::new();
    for id in ids {
        if !unique.contains(id) {
            unique.push(id.clone());
        }
    }
    // The whole store is read to find the files before the lock is taken; under it only
    // those files are read again (a concurrent move sends us back to a full read, locked).
    let snap = store.load()?;
    snap.warn_unreadable();
    let located: Vec<Record> = store.find(&snap, &unique)?.into_iter().cloned().collect();
    // The journal entry a close links to must exist (before the lock: the journal only grows).
    for c in changes {
        if let Change::Close {
            resolution: Some(ResolutionNote {
                journal: Some(j), ..
            }),
            ..
        } = c
        {
            journal_link::check_link(store, j)?;
        }
    }
    let _lock = store.lock()?;
    let mut found: Vec<Record> = Vec::with_capacity(located.len());
    for r in &located {
        match store.reread(r)? {
            Some(fresh) => found.push(fresh),
            None => {
                let snap = store.load()?;
                found = store.find(&snap, &unique)?.into_iter().cloned().collect();
                break;
            }
        }
    }
    let ts = ids::iso(ids::now()?);
    let mut out = ChangeOutcome::default();
    // Every change is made (and checked) before the first file is written.
    for mut rec in found {
        if apply_changes(&mut rec.comment, changes, actor, force, &ts)? {
            out.replaced_notes
                .push(rec.comment.id().unwrap_or_default().to_string());
        }
        out.records.push(rec);
    }
    store.ensure_meta()?;
    for rec in &out.records {
        store.write_record(rec)?;
    }
    Ok(out)
}

/// Deletes comment `id` (its file, or its entry of a legacy array).
pub fn delete(store: &Store, id: &str) -> Result<Record> {
    let _lock = store.lock()?;
    let snap = store.load()?;
    let rec = store.find(&snap, &[id.to_string()])?[0].clone();
    store.delete_record(&rec)?;
    Ok(rec)
}

/// A request to apply suggested edits.
#[derive(Debug, Clone)]
pub struct ApplyRequest {
    /// The comments whose suggestions to write.
    pub ids: Vec<String>,
    /// Who applies them.
    pub author: String,
    /// Who asks: a person in the browser, an agent with the CLI.
    pub actor: Actor,
    /// The journal entry that records the change; `None` writes one, as the browser does.
    pub journal: Option<String>,
    /// The resolution note (default: says what was replaced).
    pub note: Option<String>,
    /// Applies held comments' suggestions too.
    pub force: bool,
}

/// Applies suggested edits ([`apply`]) and, unless the request names a journal entry of its
/// own, records them in one new journal entry that the resolutions link to: /review shows
/// every applied edit with what changed and why, whoever applied it. The entry is written by
/// the apply itself, after the edits (an edit refused is never journaled) and before the
/// closes, and is part of its record: a run killed anywhere and finished by the next leaves
/// every resolution linked to an entry the journal holds.
pub fn apply_suggestions(
    book: &crate::model::book::Book,
    store: &Store,
    req: &ApplyRequest,
) -> Result<Vec<Applied>> {
    let (journal, write_journal) = match &req.journal {
        Some(j) => {
            journal_link::check_link(store, j)?;
            (j.clone(), None)
        }
        None => (ids::journal_id(ids::now()?), Some(req.actor)),
    };
    let opts = ApplyOptions {
        author: req.author.clone(),
        journal,
        write_journal,
        note: req.note.clone(),
        force: req.force,
    };
    apply(book, store, &req.ids, &opts)
}

/// An operation's error as an agent reads it, through the CLI or the MCP server alike: the
/// request field named as the CLI's flag (`--page`), so that both say the same line.
pub fn agent_error(e: Error) -> Error {
    let kind = e.kind();
    Error::new(e.naming(|f| format!("--{f}"))).with_kind(kind)
}

/// The status `done` closes with: the one `review` gives (auto → resolved, approve →
/// addressed), or `given` (addressed or resolved; open is refused: that is `reopen`).
pub fn done_status(review: crate::model::book::Review, given: Option<&str>) -> Result<Status> {
    match given.map(|s| (s, Status::parse(s))) {
        None => Ok(review.done_status()),
        Some((_, Some(Status::Open))) => Err(Error::of(
            ErrorKind::Invalid,
            "--status open does not close a comment — use `comments reopen`",
            "status",
        )),
        Some((_, Some(s))) => Ok(s),
        Some((s, None)) => Err(Error::of(
            ErrorKind::Invalid,
            format!("unknown status {s:?} (expected: {})", Status::list()),
            "status",
        )),
    }
}

/// A status filter (`ls --status`, `list_comments`' `status`).
pub fn status_filter(s: &str) -> Result<Status> {
    Status::parse(s).ok_or_else(|| {
        Error::of(
            ErrorKind::Invalid,
            format!("unknown status {s:?} (expected: {})", Status::list()),
            "status",
        )
    })
}

/// What [`journal_add`] did: the entry's id (the one already there when an identical entry
/// was), and the line an agent is told.
#[derive(Debug)]
pub struct JournalAdded {
    /// The entry's id.
    pub id: String,
    /// `notabene: appended journal entry …` or `… is already present — nothing written.`
    pub line: String,
}

/// Appends one journal entry (`journal add`, the MCP `journal_add`): validated, its keys in the
/// order given, written atomically under the store lock; an identical entry is not written twice.
pub fn journal_add(store: &Store, value: Value) -> Result<JournalAdded> {
    let generated = journal::generated_keys(&value);
    let entry = journal::prepare_entry(value)?;
    let id = entry
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    Ok(match journal::append(store, entry, generated)? {
        journal::Appended::AlreadyPresent(existing) => JournalAdded {
            line: format!(
                "notabene: journal entry {existing} is already present — nothing written."
            ),
            id: existing,
        },
        _ => JournalAdded {
            line: format!("notabene: appended journal entry {id}."),
            id,
        },
    })
}

/// The lines that say what an `apply` did: one per applied suggestion, and the journal entry
/// it wrote when none was given (`journal_given`).
pub fn applied_lines(done: &[Applied], journal_given: bool) -> Vec<String> {
    let mut lines: Vec<String> = done
        .iter()
        .map(|d| {
            format!(
                "notabene: applied the suggestion of {} in {}:{} → {}.",
                d.comment.id().unwrap_or_default(),
                d.file,
                d.line,
                d.comment.status_str().unwrap_or_default()
            )
        })
        .collect();
    if !journal_given
        && let Some(j) = done
            .first()
            .and_then(|d| d.comment.get("resolution"))
            .and_then(|r| r.get("journalEntryId"))
            .and_then(Value::as_str)
    {
        lines.push(format!("notabene: recorded in journal entry {j}."));
    }
    lines
}
