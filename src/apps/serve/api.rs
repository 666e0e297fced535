//! The write API under `/__notabene/api/`, with the original notabene's request and response
//! shapes: `GET/POST/PATCH/DELETE comments`, `GET journal`, `GET diff` (each distinct page diffed
//! once, at most [`MAX_DIFF_PAGES`] of them), plus `GET status` (the client's probe and live-reload
//! long-poll), `POST apply` (a suggested edit applied, as `comments apply` does) and `POST undo`
//! (the browser's Undo: one action taken back, its own fields only, while they still hold what
//! it wrote; see [`Undos`]). Every write
//! goes through the store library (locked, atomic) and changes only the one comment file concerned.
//! Bodies are validated: their serde structs and what each field may hold are `bodies`', the
//! answers and errors `answer`'s. Requests reach these operations through `routes` (the
//! router, the typed queries and bodies); the group commit of PATCHes is `patches`' and
//! `queue`'s.
//!
//! May call: the operations (`apps::ops`), the book (`model::book`), the store.

use super::answer::{Answer, ApiError};
use super::bodies::{ApplyBody, CommentBody, CreateBody, PatchBody, UndoBody};
use super::bodies::{anchor_of, suggestion_of};
use super::patches::{self, Job};
use super::signed_in::{Reviewer, Right};
use crate::apps::ops::{self, Actor, NewComment, limits};
use crate::model::book::{PageIds, Repo};
use axum::http::StatusCode;
use notabene_store::{Comment, Scope, Store, journal};
use serde_json::{Value, json};
use std::collections::BTreeMap;

pub use super::patches::PatchQueue;
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

/// What the API needs from the running server.
pub struct Api<'a> {
    /// The store.
    pub store: &'a Store,
    /// Page ids of the current build's chapters.
    pub pages: &'a BTreeMap<String, Vec<String>>,
    /// What the book's builds keep: the text of each page, which a new comment's quote must be
    /// in.
    pub texts: &'a crate::output::reuse::Reuse,
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
    /// Under the hub: the signed-in reviewer, the author of every write (whatever the body
    /// says), whose role and messages say what they may do.
    pub signed_in: Option<&'a Reviewer>,
}

pub use super::undo::{UNDO_DEPTH, Undos};
use super::undo::{Undo, later_than, undone};

/// The pages of the current build: a new comment's page must be one of them, and its quote in
/// the page's text as that build modelled it (after the book's preprocessors, in its locale:
/// what the reader selected it in). Before the first build has modelled the page, the quote is
/// taken.
struct ServedPages<'a> {
    pages: &'a BTreeMap<String, Vec<String>>,
    texts: &'a crate::output::reuse::Reuse,
}

impl ops::Pages for ServedPages<'_> {
    fn has_page(&self, page: &str) -> Option<bool> {
        Some(self.pages.contains_key(page))
    }

    fn has_quote(&self, page: &str, quote: &str) -> Option<bool> {
        let text = self.texts.page_text(page)?;
        Some(ops::quote_in_text(&text.text, quote))
    }
}

/// Why `find` found no comment.
enum Unfound {
    /// No comment has that page and id.
    Missing,
    /// The request or the store failed.
    Failed(ApiError),
}

impl From<ApiError> for Unfound {
    fn from(e: ApiError) -> Unfound {
        Unfound::Failed(e)
    }
}

/// The 403 of a signed-in reviewer without `right`.
fn refused(right: Right) -> ApiError {
    ApiError::new(
        StatusCode::FORBIDDEN,
        match right {
            Right::Comment => "you may not comment here",
            Right::Own => "only its author may change or delete this message",
            Right::Decide => "only a maintainer may change a comment's status or apply it",
        },
    )
}

impl Api<'_> {
    /// Under the hub: whether the signed-in reviewer may do `right` on the comment `id` of
    /// `page` (a comment that is not there is left to the write to report).
    fn may(&self, right: Right, page: &str, id: &str) -> Result<(), ApiError> {
        let Some(who) = self.signed_in else {
            return Ok(());
        };
        if right != Right::Own {
            return match who.may(right, None) {
                true => Ok(()),
                false => Err(refused(right)),
            };
        }
        let Some(record) = self
            .store
            .find_on_page(page, id)
            .map_err(ApiError::failed)?
        else {
            return Ok(());
        };
        let owner = record
            .comment
            .thread()
            .first()
            .and_then(|m| m.get("author"))
            .and_then(Value::as_str);
        match who.may(right, owner) {
            true => Ok(()),
            false => Err(refused(right)),
        }
    }

    fn comments(&self) -> Result<Vec<notabene_store::Record>, ApiError> {
        let snap = self.store.load().map_err(ApiError::failed)?;
        Ok(snap.comments().cloned().collect())
    }

    /// `GET comments?page=…` (or `?all`): the comments of one page, or of all.
    pub fn list(&self, page: Option<&str>, all: bool) -> Result<Answer, ApiError> {
        if !all && page.is_none() {
            return Err(ApiError::bad_request("page query param required"));
        }
        let list: Vec<Value> = self
            .comments()?
            .into_iter()
            .filter(|r| all || r.comment.page() == page)
            .map(|r| Value::Object(r.comment.as_map().clone()))
            .collect();
        Ok(Answer::ok(Value::Array(list)))
    }

    /// `GET journal`: the journal's entries.
    pub fn journal(&self) -> Answer {
        Answer::ok(Value::Array(journal::read(self.store).entries().to_vec()))
    }

    /// `POST comments`: a new comment, validated, written under the store lock.
    pub fn create(&self, o: &CreateBody) -> Result<Answer, ApiError> {
        let (Some(page), Some(space), Some(scope)) = (
            o.page.text("page", limits::MAX_PAGE_ID)?,
            o.space.text("space", 256)?,
            o.scope.text("scope", 32)?,
        ) else {
            return Err(ApiError::bad_request("page, space, scope, body required"));
        };
        let Some(scope) = Scope::parse(scope) else {
            return Err(ApiError::bad_request(
                "scope must be \"selection\", \"page\" or \"block\"",
            ));
        };
        if space.is_empty() || space != self.space {
            return Err(ApiError::bad_request("unknown space"));
        }
        let anchor = anchor_of(scope, &o.anchor)?;
        // A suggested edit: `{text}` (the quote is the anchor's), selections only.
        let suggestion = suggestion_of(scope, &o.suggestion)?;
        let body = o
            .body
            .text("body", MAX_BODY)?
            .filter(|b| !b.trim().is_empty())
            .map(str::to_string);
        if body.is_none() && suggestion.is_none() {
            return Err(ApiError::bad_request("page, space, scope, body required"));
        }
        let author = o
            .author
            .text("author", MAX_FIELD)?
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .unwrap_or(self.default_author);
        let signed = self.signed_in.map(Reviewer::author);
        let author = signed.as_deref().unwrap_or(author);
        let new = NewComment {
            page: page.to_string(),
            space: space.to_string(),
            anchor,
            body,
            suggestion,
            author: author.to_string(),
        };
        let pages = ServedPages {
            pages: self.pages,
            texts: self.texts,
        };
        let comment = ops::create(self.store, &pages, &new, false)?;
        Ok(Answer {
            status: StatusCode::CREATED,
            body: Value::Object(comment.as_map().clone()),
        })
    }

    fn find(&self, o: &CommentBody) -> Result<notabene_store::Record, Unfound> {
        let (Some(page), Some(id)) = (o.page.text("page", 1024)?, o.id.text("id", 256)?) else {
            return Err(ApiError::bad_request("page, id required").into());
        };
        self.store
            .find_on_page(page, id)
            .map_err(ApiError::failed)?
            .ok_or(Unfound::Missing)
    }

    /// `PATCH comments`: the request is parsed here, then committed with whatever other
    /// PATCHes are waiting (see [`PatchQueue`]).
    pub fn patch(&self, o: &PatchBody) -> Result<Answer, ApiError> {
        let signed = self.signed_in.map(Reviewer::author);
        let changes = match &signed {
            Some(author) => o.changes_by(author)?,
            None => o.changes(self.default_author)?,
        };
        let (Some(page), Some(id)) = (o.page.text("page", 1024)?, o.id.text("id", 256)?) else {
            return Err(ApiError::bad_request("page, id required"));
        };
        for change in &changes {
            let right = match change {
                ops::Change::Edit(_) => Right::Own,
                ops::Change::Reply { .. } => Right::Comment,
                _ => Right::Decide,
            };
            self.may(right, page, id)?;
        }
        let job = Job {
            page: page.to_string(),
            id: id.to_string(),
            changes,
        };
        self.patches.submit(
            job,
            &|jobs| patches::commit(self.store, self.undos, jobs),
            &|| Err(ApiError::internal("internal error")),
        )
    }

    /// `POST apply {id, author?}`: what `comments apply ID` does (the Markdown edited, the
    /// comment closed); 409 with the reason when it cannot be applied.
    pub fn apply(&self, o: &ApplyBody) -> Result<Answer, ApiError> {
        let id = o.id()?;
        let signed = self.signed_in.map(Reviewer::author);
        let author = match signed {
            Some(author) => author,
            None => o.author(self.default_author)?,
        };
        if let Some(who) = self.signed_in
            && !who.may(Right::Decide, None)
        {
            return Err(refused(Right::Decide));
        }
        let snap = self.store.load().map_err(ApiError::failed)?;
        if !snap.comments().any(|r| r.comment.id() == Some(id)) {
            return Err(ApiError::not_found());
        }
        let book = crate::model::book::Book::load(self.book_root).map_err(ApiError::failed)?;
        // A change made from the browser is journaled like an agent's, so /review shows it.
        let req = ops::ApplyRequest {
            ids: vec![id.to_string()],
            author,
            actor: Actor::Person,
            journal: None,
            note: None,
            force: false,
        };
        let done = match ops::apply_suggestions(&book, self.store, &req) {
            Ok(done) => done,
            // Failed after the Markdown was written (the journal, a close): not a refusal.
            Err(e) if e.kind() == notabene_core::error::ErrorKind::Io => {
                return Err(ApiError::failed(e));
            }
            Err(e) => return Err(ApiError::new(StatusCode::CONFLICT, e.message())),
        };
        // An apply interrupted earlier is finished first and listed too: answer with this one.
        let Some(c) = done.iter().map(|a| &a.comment).find(|c| c.id() == Some(id)) else {
            return Err(ApiError::internal("the apply reported no comment"));
        };
        Ok(Answer::ok(Value::Object(c.as_map().clone())))
    }

    /// `DELETE comments {page, id}`: the comment's file removed (404 `{deleted: false}` when
    /// there is none).
    pub fn delete(&self, o: &CommentBody) -> Result<Answer, ApiError> {
        if let (Some(page), Some(id)) = (o.page.as_str(), o.id.as_str()) {
            self.may(Right::Own, page, id)?;
        }
        let _lock = self.store.lock().map_err(ApiError::failed)?;
        match self.find(o) {
            Ok(rec) => {
                self.store.delete_record(&rec).map_err(ApiError::failed)?;
                // A member of a legacy array has no file of its own to put back.
                let undo = rec.location == notabene_store::Location::File;
                if undo {
                    self.undos.remember(Undo {
                        before: rec,
                        after: None,
                    });
                }
                Ok(Answer::ok(json!({ "deleted": true, "undo": undo })))
            }
            Err(Unfound::Missing) => Ok(Answer {
                status: StatusCode::NOT_FOUND,
                body: json!({ "deleted": false }),
            }),
            Err(Unfound::Failed(e)) => Err(e),
        }
    }

    /// `POST undo {page, id, updatedAt?}`: the action that left the comment at `updatedAt`
    /// taken back (without `updatedAt`: its deletion): the fields it changed put back, the
    /// messages it added removed, everything written since kept (see `undo`). 409 when
    /// something written since holds what the Undo would put back, 404 when this server
    /// recorded no such action. The answer is the comment as put back.
    pub fn undo(&self, o: &UndoBody) -> Result<Answer, ApiError> {
        let (Some(page), Some(id)) = (
            o.page.text("page", limits::MAX_PAGE_ID)?,
            o.id.text("id", limits::MAX_ID)?,
        ) else {
            return Err(ApiError::bad_request("page, id required"));
        };
        let after = o.updated_at.text("updatedAt", 64)?;
        if self.may(Right::Own, page, id).is_err() {
            self.may(Right::Decide, page, id)?;
        }
        let _lock = self.store.lock().map_err(ApiError::failed)?;
        let now = self
            .store
            .find_on_page(page, id)
            .map_err(ApiError::failed)?;
        let Some(undo) = self.undos.take(page, id, after) else {
            return Err(ApiError::new(StatusCode::NOT_FOUND, "nothing to undo"));
        };
        let current = now.as_ref().map(|r| &r.comment);
        let ts = notabene_store::ids::now().map_err(ApiError::failed)?;
        let ts = later_than(ts, current.map_or("", |c| c.updated_at()));
        let map = match undone(&undo, current, &ts) {
            Ok(map) => map,
            Err(why) => {
                // Refused, not used up: the same Undo can be asked again.
                self.undos.remember(undo);
                return Err(ApiError::new(StatusCode::CONFLICT, why.message()));
            }
        };
        let record = notabene_store::Record {
            comment: Comment::from_map(map),
            ..now.unwrap_or(undo.before)
        };
        self.store.write_record(&record).map_err(ApiError::failed)?;
        Ok(Answer::ok(Value::Object(record.comment.as_map().clone())))
    }

    /// `GET diff?page=…`: one entry per distinct page, in the order first named; more than
    /// [`MAX_DIFF_PAGES`] distinct pages is a 400 before any git runs.
    pub fn diff(&self, mut pages: Vec<String>) -> Result<Answer, ApiError> {
        let mut seen = std::collections::BTreeSet::new();
        pages.retain(|p| seen.insert(p.clone()));
        if pages.len() > MAX_DIFF_PAGES {
            return Err(ApiError::bad_request(format!(
                "too many pages: {} given, at most {MAX_DIFF_PAGES} per request (page)",
                pages.len()
            )));
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
        Ok(Answer::ok(Value::Array(list)))
    }
}
