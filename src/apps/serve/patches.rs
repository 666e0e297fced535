//! The PATCHes of `comments`, committed in groups: a [`Job`] per request, queued on the
//! [`PatchQueue`] (see `queue`), and [`commit`], which applies a group's jobs under one store
//! lock, each to the comment as the earlier ones left it, writes each changed file once, and
//! remembers each action for `POST undo`.
//!
//! May call: the operations' changes (`apps::ops`), the store, `undo`.

use super::answer::{Answer, ApiError};
use super::undo::{Undo, Undos, later_than};
use crate::apps::ops::{self, Actor, Change};
use notabene_store::{Record, Store, ids};
use serde_json::Value;

/// PATCH requests waiting for the store lock, committed in groups (see `queue`).
pub type PatchQueue = super::queue::GroupCommit<Job, Result<Answer, ApiError>>;

/// A PATCH waiting in the [`PatchQueue`]: the comment it changes and how (the changes in the
/// order the original applies them, made by [`ops::apply_changes`] as a person's).
pub struct Job {
    pub(super) page: String,
    pub(super) id: String,
    pub(super) changes: Vec<Change>,
}

/// One group: under the store lock, each PATCH applied in arrival order to the comment as
/// the earlier ones left it, then each changed file written once; the directories'
/// fsyncs after the lock is released, before anyone is answered.
pub(super) fn commit(store: &Store, undos: &Undos, jobs: &[Job]) -> Vec<Result<Answer, ApiError>> {
    let all = |e: ApiError| jobs.iter().map(|_| Err(e.clone())).collect();
    let lock = match store.lock() {
        Ok(l) => l,
        Err(e) => return all(ApiError::failed(e)),
    };
    if let Err(e) = store.check_compatible() {
        return all(ApiError::new(axum::http::StatusCode::CONFLICT, e.message()));
    }
    let mut records: Vec<(Record, bool)> = Vec::new();
    // Each action with the comment just before it and just after it, for `POST undo`.
    let mut actions: Vec<(usize, Undo)> = Vec::new();
    let mut out: Vec<Result<Answer, ApiError>> = Vec::with_capacity(jobs.len());
    let mut touched: Vec<Option<usize>> = Vec::with_capacity(jobs.len());
    for job in jobs {
        let known = records.iter().position(|(r, _)| {
            r.comment.id() == Some(job.id.as_str()) && r.comment.page() == Some(job.page.as_str())
        });
        let at = match known {
            Some(i) => i,
            None => match store.find_on_page(&job.page, &job.id) {
                Ok(Some(rec)) => {
                    records.push((rec, false));
                    records.len() - 1
                }
                Ok(None) => {
                    out.push(Err(ApiError::not_found()));
                    touched.push(None);
                    continue;
                }
                Err(e) => {
                    out.push(Err(ApiError::failed(e)));
                    touched.push(None);
                    continue;
                }
            },
        };
        // Each action on a comment ends at an instant of its own: Undo names it so.
        let ts = match ids::now() {
            Ok(t) => later_than(t, records[at].0.comment.updated_at()),
            Err(e) => {
                out.push(Err(ApiError::failed(e)));
                touched.push(None);
                continue;
            }
        };
        let mut c = records[at].0.comment.clone();
        match ops::apply_changes(&mut c, &job.changes, Actor::Person, false, &ts) {
            Ok(_) => {
                out.push(Ok(Answer::ok(Value::Object(c.as_map().clone()))));
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
                out.push(Err(e.into()));
                touched.push(None);
            }
        }
    }
    let mut syncs: Vec<notabene_store::fsx::DirSync> = Vec::new();
    let mut failed: Vec<(usize, ApiError)> = Vec::new();
    for (i, (rec, dirty)) in records.iter().enumerate() {
        if !dirty {
            continue;
        }
        match store.write_record_deferred(rec) {
            Ok(sync) => {
                if !syncs.iter().any(|s| s.dir() == sync.dir()) {
                    syncs.push(sync);
                }
                for (_, undo) in actions.iter().filter(|(at, _)| *at == i) {
                    undos.remember(undo.clone());
                }
            }
            Err(e) => failed.push((i, ApiError::failed(e))),
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
