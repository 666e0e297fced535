//! The browser's Undo (`POST undo`): what this server's recent writes changed, one action at a
//! time, and taking one back without touching anything else. PATCHes that arrive together are
//! committed as one group; each action in it is remembered with the comment as it was just
//! before it and just after it, so an Undo restores only the fields that action changed (a reply
//! it added is removed, the other replies kept), and only while they still hold what it wrote.
//! Anything later that an Undo would overwrite makes it a 409 that names what changed.
//!
//! Each action of a comment ends at its own `updatedAt` ([`later_than`]), which is how the
//! browser names the action it takes back.
//!
//! May call: the store's records (`notabene_store`).

use notabene_store::{Comment, Record, ids};
use serde_json::{Map, Value};
use std::collections::VecDeque;
use std::sync::Mutex;

/// How many recent changes `POST undo` can take back (older ones are forgotten).
pub const UNDO_DEPTH: usize = 64;

/// The recent actions of this server that can be taken back, newest last. Kept in memory only:
/// a restarted server offers no undo.
#[derive(Debug, Default)]
pub struct Undos(Mutex<VecDeque<Undo>>);

/// One action that can be taken back.
#[derive(Debug, Clone)]
pub struct Undo {
    /// The comment just before the action.
    pub before: Record,
    /// The comment just after it; `None`: the action deleted it.
    pub after: Option<Map<String, Value>>,
}

impl Undo {
    /// The `updatedAt` the action left (`None` for a deletion).
    fn ended_at(&self) -> Option<&str> {
        self.after
            .as_ref()
            .map(|m| m.get("updatedAt").and_then(Value::as_str).unwrap_or(""))
    }
}

impl Undos {
    /// Remembers one action (the oldest is forgotten past [`UNDO_DEPTH`]).
    pub fn remember(&self, undo: Undo) {
        let mut q = super::lock::lock(&self.0);
        if q.len() == UNDO_DEPTH {
            q.pop_front();
        }
        q.push_back(undo);
    }

    /// Takes the latest action on comment `id` of `page` that ended at `after` (a deletion:
    /// `None`).
    pub fn take(&self, page: &str, id: &str, after: Option<&str>) -> Option<Undo> {
        let mut q = super::lock::lock(&self.0);
        let at = q.iter().rposition(|u| {
            u.before.comment.id() == Some(id)
                && u.before.comment.page() == Some(page)
                && u.ended_at() == after
        })?;
        q.remove(at)
    }
}

/// Why an Undo was refused: what changed since the action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The comment was deleted since.
    Deleted,
    /// A deleted comment exists again.
    Exists,
    /// A field the action changed holds something else now (its name).
    Changed(String),
}

impl Refused {
    /// The message of the 409.
    pub(crate) fn message(&self) -> String {
        match self {
            Refused::Deleted => "the comment was deleted since; nothing was undone".into(),
            Refused::Exists => "the comment exists again; nothing was undone".into(),
            Refused::Changed(key) => format!(
                "the comment changed since ({key} was changed by a later write); nothing was undone"
            ),
        }
    }
}

/// The comment as it is once `undo` is taken back from `now` (the comment as it is; `None`:
/// deleted), at instant `ts`: the action's own fields put back, everything else kept.
pub(crate) fn undone(
    undo: &Undo,
    now: Option<&Comment>,
    ts: &str,
) -> Result<Map<String, Value>, Refused> {
    let before = undo.before.comment.as_map();
    let (after, now) = match (&undo.after, now) {
        (None, None) => return Ok(before.clone()),
        (None, Some(_)) => return Err(Refused::Exists),
        (Some(_), None) => return Err(Refused::Deleted),
        (Some(a), Some(n)) => (a, n.as_map()),
    };
    // Nothing else changed it: back exactly as it was.
    if now == after {
        return Ok(before.clone());
    }
    let mut out = Comment::from_map(now.clone());
    let keys: Vec<&String> = before
        .keys()
        .chain(after.keys().filter(|k| !before.contains_key(*k)))
        .collect();
    for key in keys {
        let (b, a, n) = (before.get(key), after.get(key), now.get(key));
        if b == a || key == "updatedAt" {
            continue;
        }
        if key == "thread" {
            let thread = thread_undone(b, a, n).ok_or_else(|| Refused::Changed(key.clone()))?;
            out.set(key, Value::Array(thread));
            continue;
        }
        if n != a {
            return Err(Refused::Changed(key.clone()));
        }
        match b {
            Some(v) => out.set(key, v.clone()),
            None => out.remove(key),
        }
    }
    out.set("updatedAt", Value::String(ts.to_string()));
    Ok(out.as_map().clone())
}

/// The thread `now` without what the action (`before` → `after`) did to it: the messages it
/// added removed, the messages it edited put back; `None` when one of those was changed since.
fn thread_undone(
    before: Option<&Value>,
    after: Option<&Value>,
    now: Option<&Value>,
) -> Option<Vec<Value>> {
    let list = |v: Option<&Value>| v.and_then(Value::as_array).cloned().unwrap_or_default();
    let (b, a, mut n) = (list(before), list(after), list(now));
    if a.len() < b.len() {
        return (n == a).then_some(b);
    }
    for (i, (was, became)) in b.iter().zip(&a).enumerate() {
        if was != became {
            if n.get(i) != Some(became) {
                return None;
            }
            n[i] = was.clone();
        }
    }
    for added in &a[b.len()..] {
        let at = n.iter().rposition(|m| m == added)?;
        n.remove(at);
    }
    Some(n)
}

/// An `updatedAt` for a write at instant `now` to a comment last changed at `prev`: `now`, or
/// one millisecond after `prev` when that is not earlier, so each action on a comment ends at
/// its own instant (writes that arrive together share a clock reading).
pub(crate) fn later_than(now: chrono::DateTime<chrono::Utc>, prev: &str) -> String {
    // Compared as written: in whole milliseconds.
    match chrono::DateTime::parse_from_rfc3339(prev) {
        Ok(p) if p.timestamp_millis() >= now.timestamp_millis() => {
            ids::iso(p.with_timezone(&chrono::Utc) + chrono::Duration::milliseconds(1))
        }
        _ => ids::iso(now),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use notabene_store::Location;
    use serde_json::json;

    fn record(v: Value) -> Record {
        Record {
            file: "c.json".into(),
            location: Location::File,
            comment: Comment::from_map(v.as_object().unwrap().clone()),
        }
    }

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn a_reply_taken_back_leaves_the_later_replies() {
        let m = |b: &str| json!({ "author": "A", "body": b });
        let before = json!({ "id": "c", "page": "p", "thread": [m("q")], "updatedAt": "1" });
        let after =
            json!({ "id": "c", "page": "p", "thread": [m("q"), m("r1")], "updatedAt": "2" });
        let now = json!({ "id": "c", "page": "p", "thread": [m("q"), m("r1"), m("r2")], "updatedAt": "3" });
        let undo = Undo {
            before: record(before),
            after: Some(map(after)),
        };
        let now = Comment::from_map(map(now));
        assert_eq!(
            Value::Object(undone(&undo, Some(&now), "4").unwrap()),
            json!({ "id": "c", "page": "p", "thread": [m("q"), m("r2")], "updatedAt": "4" })
        );
    }

    #[test]
    fn a_resolve_taken_back_keeps_a_reply_and_refuses_to_clobber() {
        let before =
            json!({ "id": "c", "page": "p", "status": "open", "thread": [1], "updatedAt": "1" });
        let after = json!({ "id": "c", "page": "p", "status": "resolved", "thread": [1], "resolution": {"note": "n"}, "updatedAt": "2" });
        let undo = Undo {
            before: record(before.clone()),
            after: Some(map(after.clone())),
        };
        // Nothing since: exactly as it was.
        let now = Comment::from_map(map(after));
        assert_eq!(
            Value::Object(undone(&undo, Some(&now), "9").unwrap()),
            before
        );
        // A reply since: kept.
        let now = json!({ "id": "c", "page": "p", "status": "resolved", "thread": [1, 2], "resolution": {"note": "n"}, "updatedAt": "3" });
        assert_eq!(
            Value::Object(undone(&undo, Some(&Comment::from_map(map(now))), "9").unwrap()),
            json!({ "id": "c", "page": "p", "status": "open", "thread": [1, 2], "updatedAt": "9" })
        );
        // Reopened and closed again by someone else: refused.
        let now = json!({ "id": "c", "page": "p", "status": "resolved", "thread": [1], "resolution": {"note": "other"}, "updatedAt": "3" });
        assert_eq!(
            undone(&undo, Some(&Comment::from_map(map(now))), "9"),
            Err(Refused::Changed("resolution".into()))
        );
    }

    #[test]
    fn each_action_ends_at_its_own_instant() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-01-01T00:00:00.000Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        assert_eq!(
            later_than(now, "2025-12-31T00:00:00.000Z"),
            "2026-01-01T00:00:00.000Z"
        );
        assert_eq!(
            later_than(now, "2026-01-01T00:00:00.000Z"),
            "2026-01-01T00:00:00.001Z"
        );
        assert_eq!(
            later_than(now, "2026-01-01T00:00:00.004Z"),
            "2026-01-01T00:00:00.005Z"
        );
        assert_eq!(later_than(now, "garbage"), "2026-01-01T00:00:00.000Z");
        let within = now + chrono::Duration::microseconds(600);
        assert_eq!(
            later_than(within, "2026-01-01T00:00:00.000Z"),
            "2026-01-01T00:00:00.001Z"
        );
    }
}
