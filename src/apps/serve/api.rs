//! The write API under `/__notabene/api/`, with the original notabene's request and response
//! shapes: `GET/POST/PATCH/DELETE comments`, `GET journal`, `GET diff` (each distinct page diffed
//! once, at most [`MAX_DIFF_PAGES`] of them), plus `GET status` (the client's probe and live-reload
//! long-poll), `POST apply` (a suggested edit applied, as `comments apply` does) and `POST undo`
//! (the browser's Undo: one action taken back, its own fields only, while they still hold what
//! it wrote; see [`Undos`]). Every write
//! goes through the store library (locked, atomic) and changes only the one comment file concerned.
//! Bodies are validated. Requests reach these operations through `routes` (the router, the typed
//! queries and bodies); the group commit of PATCHes is `queue`'s.

use crate::apps::ops::{self, Actor, Anchor, Change, NewComment, Resolution, limits};
use crate::model::book::{PageIds, Repo};
use notabene_store::{Comment, Scope, Status, Store, ids, journal};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

pub use crate::apps::ops::limits::{MAX_BODY, MAX_FIELD, MAX_REQUEST};
/// Most distinct pages one `GET diff` may name (each runs git); more is a 400.
pub const MAX_DIFF_PAGES: usize = 20;

/// What a request to `rest` does, for the guard: `diff` runs git (a costly read).
pub fn access(method: &str, rest: &str) -> super::guard::Access {
    use super::guard::Access;
    match (method, rest) {
        ("GET" | "HEAD", "diff") => Access::CostlyRead,
        ("GET" | "HEAD", _) => Access::Read,
        _ => Access::Write,
    }
}

/// An API response: status code and JSON body.
pub type Reply = (u16, Value);

fn err(code: u16, msg: &str) -> Reply {
    (code, json!({ "error": msg }))
}

/// PATCH requests waiting for the store lock, committed in groups (see `queue`).
pub type PatchQueue = super::queue::GroupCommit<Job, Result<Reply, Reply>>;

/// A PATCH waiting in the [`PatchQueue`]: the comment it changes and how.
pub struct Job {
    page: String,
    id: String,
    patch: Patch,
}

/// A parsed PATCH: the changes it asks for, in the order the original applies them (edit,
/// status, resolution, hold, reply), made by [`ops::apply_changes`] as a person's.
struct Patch {
    changes: Vec<Change>,
}

/// The reply for an operation's error: its kind is the status code, its field named as the
/// request names it.
fn reply_of(e: crate::Error) -> Reply {
    use notabene_core::error::ErrorKind;
    let code = match e.kind() {
        ErrorKind::Invalid => 400,
        ErrorKind::NotFound => 404,
        ErrorKind::Conflict => 409,
        ErrorKind::TooLarge => 413,
        ErrorKind::Io | ErrorKind::Other => 500,
    };
    err(code, &e.naming(str::to_string))
}

/// A resolution object of a request: `{note, journalEntryId?}`.
fn resolution_of(r: &Map<String, Value>) -> Result<Resolution, Reply> {
    Ok(Resolution {
        note: string_field(r, "note", MAX_BODY)?.unwrap_or("").to_string(),
        journal: string_field(r, "journalEntryId", limits::MAX_ID)?.map(str::to_string),
        by: None,
    })
}

impl Patch {
    fn parse(o: &Map<String, Value>, default_author: &str) -> Result<Patch, Reply> {
        let status = match string_field(o, "status", 32)? {
            None => None,
            Some(s) => Some(Status::parse(s).ok_or_else(|| {
                err(
                    400,
                    "status must be \"open\", \"addressed\" or \"resolved\"",
                )
            })?),
        };
        let hold = match o.get("hold") {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(_) => return Err(err(400, "hold must be a boolean")),
        };
        let resolution = match o.get("resolution") {
            None => None,
            Some(Value::Null) => Some(None),
            Some(Value::Object(r)) => Some(Some(resolution_of(r)?)),
            Some(_) => {
                return Err(err(
                    400,
                    "resolution must be null or {note, journalEntryId?}",
                ));
            }
        };
        let actor = string_field(o, "author", MAX_FIELD)?
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .unwrap_or(default_author)
            .to_string();
        let mut changes = Vec::new();
        match o.get("edit") {
            None | Some(Value::Null) => {}
            Some(Value::Object(e)) => changes.push(Change::Edit(body_text(e, "body")?)),
            Some(_) => return Err(err(400, "edit must be {body}")),
        }
        match status {
            None => {}
            Some(Status::Open) => changes.push(Change::Reopen),
            Some(status) => changes.push(Change::Close {
                status,
                resolution: None,
                by: actor.clone(),
            }),
        }
        if let Some(r) = resolution {
            changes.push(Change::SetResolution(r));
        }
        if let Some(h) = hold {
            changes.push(Change::Hold(h));
        }
        match o.get("reply") {
            None | Some(Value::Null) => {}
            Some(Value::Object(r)) => {
                let body = body_text(r, "body")?;
                let author = string_field(r, "author", MAX_FIELD)?
                    .map(str::trim)
                    .filter(|a| !a.is_empty())
                    .unwrap_or(&actor)
                    .to_string();
                changes.push(Change::Reply { author, body });
            }
            Some(_) => return Err(err(400, "reply must be {author?, body}")),
        }
        Ok(Patch { changes })
    }

    /// Makes the changes to `c` at instant `ts` (`updatedAt` included).
    fn apply(&self, c: &mut Comment, ts: &str) -> Result<(), Reply> {
        ops::apply_changes(c, &self.changes, Actor::Person, false, ts)
            .map(|_| ())
            .map_err(reply_of)
    }
}

/// What the API needs from the running server.
pub struct Api<'a> {
    /// The store.
    pub store: &'a Store,
    /// Page ids of the current build's chapters.
    pub pages: &'a BTreeMap<String, Vec<String>>,
    /// Page-id scheme (for diffs).
    pub ids: &'a PageIds,
    /// The git repository (for diffs).
    pub repo: &'a Repo,
    /// The `space` of new comments.
    pub space: &'a str,
    /// Author used when a request names none.
    pub default_author: &'a str,
    /// The book root (the Apply button loads the book as it is now).
    pub book_root: &'a std::path::Path,
    /// PATCHes waiting to be committed together.
    pub patches: &'a PatchQueue,
    /// What the recent writes replaced, for `POST undo`.
    pub undos: &'a Undos,
}

pub use super::undo::{UNDO_DEPTH, Undos};
use super::undo::{Undo, later_than, undone};

fn string_field<'v>(
    o: &'v Map<String, Value>,
    key: &str,
    max: usize,
) -> Result<Option<&'v str>, Reply> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.len() > max => Err(err(413, &format!("{key} is too long"))),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(err(400, &format!("{key} must be a string"))),
    }
}

/// The pages of the current build: a new comment's page must be one of them (the served
/// book does not look for the quote: the reader selected it on the page).
struct ServedPages<'a>(&'a BTreeMap<String, Vec<String>>);

impl ops::Pages for ServedPages<'_> {
    fn has_page(&self, page: &str) -> Option<bool> {
        Some(self.0.contains_key(page))
    }

    fn markdown(&self, _page: &str) -> Option<String> {
        None
    }
}

/// The anchor of a new comment, read for its scope (its rules are [`ops::create`]'s).
fn anchor_of(scope: Scope, anchor: Option<&Value>) -> Result<Anchor, Reply> {
    let text = |a: &Map<String, Value>, key: &str| -> Result<Option<String>, Reply> {
        match a.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(err(400, &format!("{key} must be a string"))),
        }
    };
    match scope {
        Scope::Page => Ok(Anchor::Page),
        Scope::Selection => {
            let Some(Value::Object(a)) = anchor else {
                return Err(err(
                    400,
                    "a selection comment needs an anchor {quote, prefix, suffix, section}",
                ));
            };
            let quote = text(a, "quote")?
                .filter(|q| !q.trim().is_empty())
                .ok_or_else(|| err(400, "anchor.quote must be a non-empty string"))?;
            Ok(Anchor::Selection {
                quote,
                prefix: text(a, "prefix")?.unwrap_or_default(),
                suffix: text(a, "suffix")?.unwrap_or_default(),
                section: text(a, "section")?,
            })
        }
        Scope::Block => {
            let Some(Value::Object(a)) = anchor else {
                return Err(err(
                    400,
                    "a block comment needs an anchor {kind, key, label, section, index}",
                ));
            };
            let kind = text(a, "kind")?
                .filter(|k| k == "image" || k == "mermaid")
                .ok_or_else(|| err(400, "anchor.kind must be \"image\" or \"mermaid\""))?;
            let key = text(a, "key")?
                .filter(|k| k.starts_with(&format!("{kind}:")) && k.len() > kind.len() + 1)
                .ok_or_else(|| err(400, "anchor.key must be \"<kind>:<…>\""))?;
            let index = a
                .get("index")
                .and_then(Value::as_u64)
                .ok_or_else(|| err(400, "anchor.index must be a non-negative integer"))?;
            Ok(Anchor::Block {
                kind,
                key,
                label: Some(text(a, "label")?.unwrap_or_default()),
                section: text(a, "section")?,
                index,
            })
        }
    }
}

fn body_text(o: &Map<String, Value>, key: &str) -> Result<String, Reply> {
    let t = string_field(o, key, MAX_BODY)?.map(str::trim).unwrap_or("");
    if t.is_empty() {
        return Err(err(400, &format!("{key} must be a non-empty string")));
    }
    Ok(t.to_string())
}

impl Api<'_> {
    fn comments(&self) -> Result<Vec<notabene_store::Record>, Reply> {
        let snap = self.store.load().map_err(|e| err(500, e.message()))?;
        Ok(snap.comments().cloned().collect())
    }

    /// `GET comments?page=…` (or `?all`): the comments of one page, or of all.
    pub fn list(&self, page: Option<&str>, all: bool) -> Result<Reply, Reply> {
        if !all && page.is_none() {
            return Err(err(400, "page query param required"));
        }
        let list: Vec<Value> = self
            .comments()?
            .into_iter()
            .filter(|r| all || r.comment.page() == page)
            .map(|r| Value::Object(r.comment.as_map().clone()))
            .collect();
        Ok((200, Value::Array(list)))
    }

    /// `GET journal`: the journal's entries.
    pub fn journal(&self) -> Reply {
        (
            200,
            Value::Array(journal::read(self.store).entries().to_vec()),
        )
    }

    /// `POST comments`: a new comment, validated, written under the store lock.
    pub fn create(&self, o: &Map<String, Value>) -> Result<Reply, Reply> {
        let (Some(page), Some(space), Some(scope)) = (
            string_field(o, "page", limits::MAX_PAGE_ID)?,
            string_field(o, "space", 256)?,
            string_field(o, "scope", 32)?,
        ) else {
            return Err(err(400, "page, space, scope, body required"));
        };
        let Some(scope) = Scope::parse(scope) else {
            return Err(err(
                400,
                "scope must be \"selection\", \"page\" or \"block\"",
            ));
        };
        if space.is_empty() || space != self.space {
            return Err(err(400, "unknown space"));
        }
        let anchor = anchor_of(scope, o.get("anchor"))?;
        // A suggested edit: `{text}` (the quote is the anchor's), selections only.
        let suggestion = match o.get("suggestion") {
            None | Some(Value::Null) => None,
            Some(Value::Object(sg)) if scope == Scope::Selection => Some(
                string_field(sg, "text", MAX_FIELD)?
                    .ok_or_else(|| err(400, "suggestion.text must be a string"))?
                    .to_string(),
            ),
            Some(_) => {
                return Err(err(400, "suggestion must be {text} on a selection comment"));
            }
        };
        let body = string_field(o, "body", MAX_BODY)?
            .filter(|b| !b.trim().is_empty())
            .map(str::to_string);
        if body.is_none() && suggestion.is_none() {
            return Err(err(400, "page, space, scope, body required"));
        }
        let author = string_field(o, "author", MAX_FIELD)?
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .unwrap_or(self.default_author);
        let new = NewComment {
            page: page.to_string(),
            space: space.to_string(),
            anchor,
            body,
            suggestion,
            author: author.to_string(),
        };
        let comment =
            ops::create(self.store, &ServedPages(self.pages), &new, false).map_err(reply_of)?;
        Ok((201, Value::Object(comment.as_map().clone())))
    }

    fn find(&self, o: &Map<String, Value>) -> Result<notabene_store::Record, Reply> {
        let (Some(page), Some(id)) = (string_field(o, "page", 1024)?, string_field(o, "id", 256)?)
        else {
            return Err(err(400, "page, id required"));
        };
        self.store
            .find_on_page(page, id)
            .map_err(|e| err(500, e.message()))?
            .ok_or_else(|| err(404, "not found"))
    }

    /// `PATCH comments`: the request is parsed here, then committed with whatever other
    /// PATCHes are waiting (see [`PatchQueue`]).
    pub fn patch(&self, o: &Map<String, Value>) -> Result<Reply, Reply> {
        let patch = Patch::parse(o, self.default_author)?;
        let (Some(page), Some(id)) = (string_field(o, "page", 1024)?, string_field(o, "id", 256)?)
        else {
            return Err(err(400, "page, id required"));
        };
        let job = Job {
            page: page.to_string(),
            id: id.to_string(),
            patch,
        };
        self.patches
            .submit(job, &|jobs| self.commit_patches(jobs), &|| {
                Err(err(500, "internal error"))
            })
    }

    /// One group: under the store lock, each PATCH applied in arrival order to the comment as
    /// the earlier ones left it, then each changed file written once; the directories'
    /// fsyncs after the lock is released, before anyone is answered.
    fn commit_patches(&self, jobs: &[Job]) -> Vec<Result<Reply, Reply>> {
        let all = |e: Reply| jobs.iter().map(|_| Err(e.clone())).collect();
        let lock = match self.store.lock() {
            Ok(l) => l,
            Err(e) => return all(err(500, e.message())),
        };
        if let Err(e) = self.store.check_compatible() {
            return all(err(409, e.message()));
        }
        let mut records: Vec<(notabene_store::Record, bool)> = Vec::new();
        // Each action with the comment just before it and just after it, for `POST undo`.
        let mut actions: Vec<(usize, Undo)> = Vec::new();
        let mut out: Vec<Result<Reply, Reply>> = Vec::with_capacity(jobs.len());
        let mut touched: Vec<Option<usize>> = Vec::with_capacity(jobs.len());
        for job in jobs {
            let known = records.iter().position(|(r, _)| {
                r.comment.id() == Some(job.id.as_str())
                    && r.comment.page() == Some(job.page.as_str())
            });
            let at = match known {
                Some(i) => i,
                None => match self.store.find_on_page(&job.page, &job.id) {
                    Ok(Some(rec)) => {
                        records.push((rec, false));
                        records.len() - 1
                    }
                    Ok(None) => {
                        out.push(Err(err(404, "not found")));
                        touched.push(None);
                        continue;
                    }
                    Err(e) => {
                        out.push(Err(err(500, e.message())));
                        touched.push(None);
                        continue;
                    }
                },
            };
            // Each action on a comment ends at an instant of its own: Undo names it so.
            let ts = match ids::now() {
                Ok(t) => later_than(t, records[at].0.comment.updated_at()),
                Err(e) => {
                    out.push(Err(err(500, e.message())));
                    touched.push(None);
                    continue;
                }
            };
            let mut c = records[at].0.comment.clone();
            match job.patch.apply(&mut c, &ts) {
                Ok(()) => {
                    out.push(Ok((200, Value::Object(c.as_map().clone()))));
                    let before = records[at].0.clone();
                    actions.push((
                        at,
                        Undo {
                            before,
                            after: Some(c.as_map().clone()),
                        },
                    ));
                    records[at].0.comment = c;
                    records[at].1 = true;
                    touched.push(Some(at));
                }
                Err(e) => {
                    out.push(Err(e));
                    touched.push(None);
                }
            }
        }
        let mut syncs: Vec<notabene_store::fsx::DirSync> = Vec::new();
        let mut failed: Vec<(usize, Reply)> = Vec::new();
        for (i, (rec, dirty)) in records.iter().enumerate() {
            if !dirty {
                continue;
            }
            match self.store.write_record_deferred(rec) {
                Ok(sync) => {
                    if !syncs.iter().any(|s| s.dir() == sync.dir()) {
                        syncs.push(sync);
                    }
                    for (_, undo) in actions.iter().filter(|(at, _)| *at == i) {
                        self.undos.remember(undo.clone());
                    }
                }
                Err(e) => failed.push((i, err(500, e.message()))),
            }
        }
        drop(lock);
        for sync in syncs {
            sync.finish();
        }
        // A file that could not be written fails every request that changed it.
        for (k, t) in touched.iter().enumerate() {
            if let Some(i) = t
                && let Some((_, e)) = failed.iter().find(|(f, _)| f == i)
            {
                out[k] = Err(e.clone());
            }
        }
        out
    }

    /// `POST apply {id, author?}`: what `comments apply ID` does (the Markdown edited, the
    /// comment closed); 409 with the reason when it cannot be applied.
    pub fn apply(&self, o: &Map<String, Value>) -> Result<Reply, Reply> {
        let id = string_field(o, "id", 256)?.ok_or_else(|| err(400, "id required"))?;
        let author = string_field(o, "author", MAX_FIELD)?
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .unwrap_or(self.default_author);
        let snap = self.store.load().map_err(|e| err(500, e.message()))?;
        if !snap.comments().any(|r| r.comment.id() == Some(id)) {
            return Err(err(404, "not found"));
        }
        let book =
            crate::model::book::Book::load(self.book_root).map_err(|e| err(500, e.message()))?;
        // A change made from the browser is journaled like an agent's, so /review shows it.
        let req = ops::ApplyRequest {
            ids: vec![id.to_string()],
            author: author.to_string(),
            actor: Actor::Person,
            journal: None,
            note: None,
            force: false,
        };
        let done = match ops::apply_suggestions(&book, self.store, &req) {
            Ok(done) => done,
            // Failed after the Markdown was written (the journal, a close): not a refusal.
            Err(e) if e.kind() == notabene_core::error::ErrorKind::Io => {
                return Err(err(500, e.message()));
            }
            Err(e) => return Err(err(409, e.message())),
        };
        // An apply interrupted earlier is finished first and listed too: answer with this one.
        let Some(c) = done.iter().map(|a| &a.comment).find(|c| c.id() == Some(id)) else {
            return Err(err(500, "the apply reported no comment"));
        };
        Ok((200, Value::Object(c.as_map().clone())))
    }

    /// `DELETE comments {page, id}`: the comment's file removed (404 `{deleted: false}` when
    /// there is none).
    pub fn delete(&self, o: &Map<String, Value>) -> Result<Reply, Reply> {
        let _lock = self.store.lock().map_err(|e| err(500, e.message()))?;
        match self.find(o) {
            Ok(rec) => {
                self.store
                    .delete_record(&rec)
                    .map_err(|e| err(500, e.message()))?;
                // A member of a legacy array has no file of its own to put back.
                let undo = rec.location == notabene_store::Location::File;
                if undo {
                    self.undos.remember(Undo {
                        before: rec,
                        after: None,
                    });
                }
                Ok((200, json!({ "deleted": true, "undo": undo })))
            }
            Err((404, _)) => Ok((404, json!({ "deleted": false }))),
            Err(e) => Err(e),
        }
    }

    /// `POST undo {page, id, updatedAt?}`: the action that left the comment at `updatedAt`
    /// taken back (without `updatedAt`: its deletion): the fields it changed put back, the
    /// messages it added removed, everything written since kept (see `undo`). 409 when
    /// something written since holds what the Undo would put back, 404 when this server
    /// recorded no such action. The answer is the comment as put back.
    pub fn undo(&self, o: &Map<String, Value>) -> Result<Reply, Reply> {
        let (Some(page), Some(id)) = (
            string_field(o, "page", limits::MAX_PAGE_ID)?,
            string_field(o, "id", limits::MAX_ID)?,
        ) else {
            return Err(err(400, "page, id required"));
        };
        let after = string_field(o, "updatedAt", 64)?;
        let _lock = self.store.lock().map_err(|e| err(500, e.message()))?;
        let now = self
            .store
            .find_on_page(page, id)
            .map_err(|e| err(500, e.message()))?;
        let Some(undo) = self.undos.take(page, id, after) else {
            return Err(err(404, "nothing to undo"));
        };
        let current = now.as_ref().map(|r| &r.comment);
        let ts = ids::now().map_err(|e| err(500, e.message()))?;
        let ts = later_than(ts, current.map_or("", |c| c.updated_at()));
        let map = match undone(&undo, current, &ts) {
            Ok(map) => map,
            Err(why) => {
                // Refused, not used up: the same Undo can be asked again.
                self.undos.remember(undo);
                return Err(err(409, &why.message()));
            }
        };
        let record = notabene_store::Record {
            comment: Comment::from_map(map),
            ..now.unwrap_or(undo.before)
        };
        self.store
            .write_record(&record)
            .map_err(|e| err(500, e.message()))?;
        Ok((200, Value::Object(record.comment.as_map().clone())))
    }

    /// `GET diff?page=…`: one entry per distinct page, in the order first named; more than
    /// [`MAX_DIFF_PAGES`] distinct pages is a 400 before any git runs.
    pub fn diff(&self, mut pages: Vec<String>) -> Reply {
        let mut seen = std::collections::BTreeSet::new();
        pages.retain(|p| seen.insert(p.clone()));
        if pages.len() > MAX_DIFF_PAGES {
            return err(
                400,
                &format!(
                    "too many pages: {} given, at most {MAX_DIFF_PAGES} per request (page)",
                    pages.len()
                ),
            );
        }
        let list: Vec<Value> = pages
            .into_iter()
            .map(|page| {
                let file = self.ids.source_file(&page);
                let d = self.repo.diff(file.as_deref(), None);
                let rel = file.as_deref().and_then(|f| self.repo.relative(f));
                let mut v = json!({ "page": page, "file": rel, "diff": if d.text.is_empty() && file.is_none() { Value::Null } else { Value::String(d.text.clone()) } });
                if let Some(reason) = d.reason {
                    let error = match reason {
                        "no-git" => "git",
                        "page-not-found" => "unresolved",
                        other => other,
                    };
                    if error != "unchanged" {
                        v["error"] = error.into();
                    }
                }
                v
            })
            .collect();
        (200, Value::Array(list))
    }
}
