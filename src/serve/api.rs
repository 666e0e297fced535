//! The write API under `/__notabene/api/`, with the original notabene's request and response
//! shapes: `GET/POST/PATCH/DELETE comments`, `GET journal`, `GET diff` (each distinct page
//! diffed once, at most [`MAX_DIFF_PAGES`] of them), plus `GET status` (the client's probe and
//! live-reload long-poll) and `POST apply` (a suggested edit applied, as `comments apply`
//! does). Every write goes through the store library (locked, atomic) and changes only the one
//! comment file concerned. Bodies are validated. Requests reach these operations through
//! `routes` (the router, the typed queries and bodies); the group commit of PATCHes
//! is `queue`'s.
//!
//! Part of the serve layer (10); may call `apply`, the book layer (page ids, diffs), `store` and the shared helpers.

use crate::book::{PageIds, Repo};
use crate::store::comment::{SCOPES, STATUSES};
use crate::store::{Comment, Store, ids, journal, new_comment};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// Largest accepted request body.
pub const MAX_REQUEST: usize = 1024 * 1024;
/// Largest accepted comment body.
pub const MAX_BODY: usize = 64 * 1024;
/// Largest accepted quote, prefix, suffix, section, label or author.
pub const MAX_FIELD: usize = 8 * 1024;
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

/// A parsed PATCH: the changes it asks for.
struct Patch {
    status: Option<String>,
    hold: Option<bool>,
    resolution: Option<Value>,
    reply: Option<(Option<String>, String)>,
    edit: Option<String>,
    actor: String,
}

impl Patch {
    fn parse(o: &Map<String, Value>, default_author: &str) -> Result<Patch, Reply> {
        let status = string_field(o, "status", 32)?;
        if let Some(s) = status
            && !STATUSES.contains(&s)
        {
            return Err(err(
                400,
                "status must be \"open\", \"addressed\" or \"resolved\"",
            ));
        }
        let hold = match o.get("hold") {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(_) => return Err(err(400, "hold must be a boolean")),
        };
        let resolution = match o.get("resolution") {
            None => None,
            Some(Value::Null) => Some(Value::Null),
            Some(Value::Object(r)) => {
                let note = string_field(r, "note", MAX_BODY)?.unwrap_or("");
                let mut m = Map::new();
                m.insert("note".into(), note.into());
                if let Some(j) = string_field(r, "journalEntryId", 256)? {
                    m.insert("journalEntryId".into(), j.into());
                }
                Some(Value::Object(m))
            }
            Some(_) => {
                return Err(err(
                    400,
                    "resolution must be null or {note, journalEntryId?}",
                ));
            }
        };
        let reply = match o.get("reply") {
            None | Some(Value::Null) => None,
            Some(Value::Object(r)) => {
                let body = body_text(r, "body")?;
                let author = string_field(r, "author", MAX_FIELD)?
                    .map(str::trim)
                    .filter(|a| !a.is_empty())
                    .map(str::to_string);
                Some((author, body))
            }
            Some(_) => return Err(err(400, "reply must be {author?, body}")),
        };
        let edit = match o.get("edit") {
            None | Some(Value::Null) => None,
            Some(Value::Object(e)) => Some(body_text(e, "body")?),
            Some(_) => return Err(err(400, "edit must be {body}")),
        };
        let actor = string_field(o, "author", MAX_FIELD)?
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .unwrap_or(default_author)
            .to_string();
        Ok(Patch {
            status: status.map(str::to_string),
            hold,
            resolution,
            reply,
            edit,
            actor,
        })
    }

    /// Applies the changes to `c` at instant `ts` (`updatedAt` included).
    fn apply(&self, c: &mut Comment, ts: &str) -> Result<(), Reply> {
        if let Some(body) = &self.edit {
            if c.status() != Some("open") || c.thread().len() != 1 {
                return Err(err(
                    409,
                    "only an open comment without replies can be edited",
                ));
            }
            if let Some(Value::Array(mut t)) = c.as_map().get("thread").cloned() {
                if let Some(Value::Object(first)) = t.get_mut(0) {
                    first.insert("body".into(), body.clone().into());
                }
                c.set("thread", Value::Array(t));
            }
        }
        if let Some(s) = &self.status {
            c.set("status", s.as_str().into());
            match s.as_str() {
                // Reopening (or rejecting) clears the stale resolution.
                "open" => c.set("resolution", Value::Null),
                // A human resolve without a resolution records one, with its actor.
                _ if self.resolution.is_none()
                    && c.get("resolution").is_none_or(Value::is_null) =>
                {
                    c.set("resolution", json!({ "note": "", "by": self.actor }));
                }
                _ => {}
            }
        }
        if let Some(r) = &self.resolution {
            c.set("resolution", r.clone());
        }
        if let Some(h) = self.hold {
            c.set("hold", h.into());
        }
        if let Some((author, body)) = &self.reply {
            c.push_message(author.as_deref().unwrap_or(&self.actor), body, ts);
        }
        c.set("updatedAt", ts.into());
        Ok(())
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
}

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

/// Validates the anchor of a new comment for its scope.
fn validate_anchor(scope: &str, anchor: Option<&Value>) -> Result<Value, Reply> {
    match scope {
        "page" => Ok(Value::Null),
        "selection" => {
            let Some(Value::Object(a)) = anchor else {
                return Err(err(
                    400,
                    "a selection comment needs an anchor {quote, prefix, suffix, section}",
                ));
            };
            let quote = string_field(a, "quote", MAX_FIELD)?
                .filter(|q| !q.trim().is_empty())
                .ok_or_else(|| err(400, "anchor.quote must be a non-empty string"))?;
            let prefix = string_field(a, "prefix", MAX_FIELD)?.unwrap_or("");
            let suffix = string_field(a, "suffix", MAX_FIELD)?.unwrap_or("");
            let section = string_field(a, "section", MAX_FIELD)?;
            Ok(json!({ "quote": quote, "prefix": prefix, "suffix": suffix, "section": section }))
        }
        "block" => {
            let Some(Value::Object(a)) = anchor else {
                return Err(err(
                    400,
                    "a block comment needs an anchor {kind, key, label, section, index}",
                ));
            };
            let kind = string_field(a, "kind", 16)?
                .filter(|k| *k == "image" || *k == "mermaid")
                .ok_or_else(|| err(400, "anchor.kind must be \"image\" or \"mermaid\""))?;
            let key = string_field(a, "key", MAX_FIELD)?
                .filter(|k| k.starts_with(&format!("{kind}:")) && k.len() > kind.len() + 1)
                .ok_or_else(|| err(400, "anchor.key must be \"<kind>:<…>\""))?;
            let label = string_field(a, "label", MAX_FIELD)?.unwrap_or("");
            let section = string_field(a, "section", MAX_FIELD)?;
            let index = a
                .get("index")
                .and_then(Value::as_u64)
                .ok_or_else(|| err(400, "anchor.index must be a non-negative integer"))?;
            Ok(
                json!({ "kind": kind, "key": key, "label": label.chars().take(80).collect::<String>(), "section": section, "index": index }),
            )
        }
        _ => Err(err(
            400,
            "scope must be \"selection\", \"page\" or \"block\"",
        )),
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
    fn comments(&self) -> Result<Vec<crate::store::Record>, Reply> {
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
            string_field(o, "page", 1024)?,
            string_field(o, "space", 256)?,
            string_field(o, "scope", 32)?,
        ) else {
            return Err(err(400, "page, space, scope, body required"));
        };
        if crate::store::validate_page_id(page).is_err() {
            return Err(err(400, "invalid page id"));
        }
        if !self.pages.contains_key(page) {
            return Err(err(400, "unknown page"));
        }
        if !SCOPES.contains(&scope) {
            return Err(err(
                400,
                "scope must be \"selection\", \"page\" or \"block\"",
            ));
        }
        if space.is_empty() || space != self.space {
            return Err(err(400, "unknown space"));
        }
        let anchor = validate_anchor(scope, o.get("anchor"))?;
        // A suggested edit: `{text}` (the quote is the anchor's), selections only.
        let suggestion = match o.get("suggestion") {
            None | Some(Value::Null) => None,
            Some(Value::Object(sg)) if scope == "selection" => {
                let text = string_field(sg, "text", MAX_FIELD)?
                    .ok_or_else(|| err(400, "suggestion.text must be a string"))?;
                let quote = anchor.get("quote").and_then(Value::as_str).unwrap_or("");
                Some((quote.to_string(), text.to_string()))
            }
            Some(_) => {
                return Err(err(400, "suggestion must be {text} on a selection comment"));
            }
        };
        let body = match string_field(o, "body", MAX_BODY)?
            .map(str::trim)
            .filter(|b| !b.is_empty())
        {
            Some(b) => b.to_string(),
            None => match &suggestion {
                Some((q, t)) => crate::store::comment::suggestion_body(q, t),
                None => return Err(err(400, "page, space, scope, body required")),
            },
        };
        let author = string_field(o, "author", MAX_FIELD)?
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .unwrap_or(self.default_author);
        self.store
            .ensure_meta()
            .map_err(|e| err(500, e.message()))?;
        let now = ids::now().map_err(|e| err(500, e.message()))?;
        let ts = ids::iso(now);
        // A fresh id, drawn again in the unlikely case it is taken (same millisecond).
        let fresh = || {
            let mut c = new_comment(
                &ids::comment_id(now),
                space,
                page,
                scope,
                anchor.clone(),
                author,
                &body,
                &ts,
            );
            if let Some((q, t)) = &suggestion {
                c.set_after(
                    "anchor",
                    "suggestion",
                    crate::store::comment::suggestion_value(q, t),
                );
            }
            c
        };
        // Written and fsynced before the lock: under it, only the schema check and the
        // rename that never replaces a file (a taken id is drawn again).
        loop {
            let comment = fresh();
            let prepared = self
                .store
                .prepare_create(&comment)
                .map_err(|e| err(500, e.message()))?;
            let lock = self.store.lock().map_err(|e| err(500, e.message()))?;
            self.store
                .check_compatible()
                .map_err(|e| err(409, e.message()))?;
            let created = prepared.create().map_err(|e| err(500, e.message()))?;
            drop(lock);
            if let Some(sync) = created {
                sync.finish();
                return Ok((201, Value::Object(comment.as_map().clone())));
            }
        }
    }

    fn find(&self, o: &Map<String, Value>) -> Result<crate::store::Record, Reply> {
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
        let mut records: Vec<(crate::store::Record, bool)> = Vec::new();
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
            let ts = match ids::now() {
                Ok(t) => ids::iso(t),
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
        let mut syncs: Vec<crate::store::fsx::DirSync> = Vec::new();
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
        let book = crate::book::Book::load(self.book_root).map_err(|e| err(500, e.message()))?;
        // A change made from the browser is journaled like an agent's, so /review shows it.
        let entry_id = ids::journal_id(ids::now().map_err(|e| err(500, e.message()))?);
        let opts = crate::apply::Options {
            author: author.to_string(),
            journal: Some(entry_id.clone()),
            ..crate::apply::Options::default()
        };
        let done = match crate::apply::apply(&book, self.store, &[id.to_string()], &opts) {
            Ok(done) => done,
            Err(e) => return Err(err(409, e.message())),
        };
        // An apply interrupted earlier is finished first and listed too: answer with this one.
        let Some(c) = done.iter().map(|a| &a.comment).find(|c| c.id() == Some(id)) else {
            return Err(err(500, "the apply reported no comment"));
        };
        let what = match c.suggestion() {
            Some(s) if s.text.is_empty() => format!("Deleted “{}”.", s.quote),
            Some(s) => format!("Replaced “{}” with “{}”.", s.quote, s.text),
            None => String::new(),
        };
        let why = c
            .thread()
            .first()
            .and_then(|m| m.get("body"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let entry = json!({
            "id": entry_id,
            "title": "Applied a suggested edit",
            "summary": format!("{what} Applied by {author} from the browser."),
            "changes": [{ "page": c.page(), "commentIds": [id], "what": what, "why": why }],
        });
        journal::prepare_entry(entry)
            .and_then(|e| journal::append(self.store, e))
            .map_err(|e| {
                err(
                    500,
                    &format!("applied, but the journal entry failed: {}", e.message()),
                )
            })?;
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
                Ok((200, json!({ "deleted": true })))
            }
            Err((404, _)) => Ok((404, json!({ "deleted": false }))),
            Err(e) => Err(e),
        }
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
