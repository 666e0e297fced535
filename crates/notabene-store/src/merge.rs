//! Three-way merges of store files, for the git merge driver (`notabene merge-driver`): the
//! journal, comment files, legacy v1 arrays and `meta.json`. Each merge is a pure function of the
//! three versions' bytes; the output is the contract's canonical bytes (`JSON.stringify(value,
//! null, 2) + "\n"`), or a [`Conflict`] that names why it is one — a merge never guesses.
//!
//! The rules, per file kind:
//! - **journal** (`journal.json`): the union of entries by id, ours in our order, then theirs'
//!   new ones in theirs. An entry changed on one side only takes that change; an entry
//!   removed on one side and unchanged on the other stays removed. The same id with different
//!   content on both sides, or removed on one side and changed on the other, is a conflict.
//! - **comment** (`<page>/<id>.json`): the thread is the union of messages (by `ts`, `author`
//!   and `body`) in timestamp order, so no reply is lost. `status` and `resolution` merge as
//!   one value (a close sets both, a reopen clears both), and `hold` as its own: changed on one
//!   side only, that side's; changed on both sides differently, a conflict. `updatedAt` is the
//!   later one. Every other field, unknown ones included, merges key by key: changed on one
//!   side only, that side's; changed on both, the side whose `updatedAt` is later (ours on a
//!   tie).
//! - **legacy v1 array** (`<page>.json`): the union of members by id, each member merged as a
//!   comment; removals as in the journal.
//! - **meta** (`meta.json`): the side with the higher `schemaVersion`.

use super::json;
use serde_json::{Map, Value};
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

/// Why a merge was left to a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict(pub String);

impl std::fmt::Display for Conflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

type Merged<T> = std::result::Result<T, Conflict>;

fn conflict<T>(why: impl Into<String>) -> Merged<T> {
    Err(Conflict(why.into()))
}

/// Which rules a file merges by, from its path (`/`-separated, as git's `%P` gives it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `journal.json`.
    Journal,
    /// `meta.json`.
    Meta,
    /// A comment file or a legacy array (told apart by content).
    Comments,
}

impl Kind {
    /// The kind of the file at `path`.
    pub fn of(path: &str) -> Kind {
        match path.rsplit(['/', '\\']).next().unwrap_or(path) {
            "journal.json" => Kind::Journal,
            "meta.json" => Kind::Meta,
            _ => Kind::Comments,
        }
    }
}

/// Merges the three versions of the store file at `path`: `base` (the common ancestor; empty
/// when there is none), `ours` and `theirs`. Returns the merged file's bytes.
pub fn merge(path: &str, base: &[u8], ours: &[u8], theirs: &[u8]) -> Merged<Vec<u8>> {
    let base = parse_side(base, "the common ancestor", true)?;
    let ours = parse_side(ours, "our side", false)?.unwrap_or(Value::Null);
    let theirs = parse_side(theirs, "their side", false)?.unwrap_or(Value::Null);
    // A page whose file is `journal.json` or `meta.json` below the store's top holds comments:
    // the content tells.
    let holds_comments = |v: &Value| match v {
        Value::Array(a) => a.iter().any(|m| m.get("thread").is_some()),
        Value::Object(m) => m.contains_key("thread"),
        _ => false,
    };
    let kind = match Kind::of(path) {
        Kind::Journal | Kind::Meta if holds_comments(&ours) || holds_comments(&theirs) => {
            Kind::Comments
        }
        k => k,
    };
    let merged = match (kind, ours, theirs) {
        (Kind::Journal, Value::Array(o), Value::Array(t)) => {
            let b = base_array(base, "the common ancestor's journal is not an array")?;
            Value::Array(merge_journal(&b, &o, &t)?)
        }
        (Kind::Journal, _, _) => return conflict("a side's journal is not a JSON array"),
        (Kind::Meta, Value::Object(o), Value::Object(t)) => Value::Object(merge_meta(o, t)),
        (Kind::Meta, _, _) => return conflict("a side's meta.json is not a JSON object"),
        (Kind::Comments, Value::Object(o), Value::Object(t)) => {
            let b = match base {
                None => None,
                Some(Value::Object(b)) => Some(b),
                Some(_) => return conflict("the common ancestor is not a comment object"),
            };
            Value::Object(merge_comment(b.as_ref(), &o, &t)?)
        }
        (Kind::Comments, Value::Array(o), Value::Array(t)) => {
            let b = base_array(base, "the common ancestor is not a v1 comment array")?;
            Value::Array(merge_array(&b, &o, &t)?)
        }
        (Kind::Comments, _, _) => {
            return conflict("the two sides are not both comment objects or both v1 arrays");
        }
    };
    Ok(json::to_js_pretty(&merged).into_bytes())
}

/// The ancestor of two arrays: empty when there is none, a conflict (`why`) when it is not
/// an array.
fn base_array(base: Option<Value>, why: &str) -> Merged<Vec<Value>> {
    match base {
        None => Ok(Vec::new()),
        Some(Value::Array(b)) => Ok(b),
        Some(_) => conflict(why),
    }
}

/// Parses one side; an empty base (no common ancestor) is `None`.
fn parse_side(bytes: &[u8], which: &str, may_be_empty: bool) -> Merged<Option<Value>> {
    if may_be_empty && bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(v) => Ok(Some(v)),
        Err(e) => conflict(format!("{which} is not valid JSON: {e}")),
    }
}

/// What a three-way comparison of one value found.
enum Pick<'a> {
    /// Both sides agree (or only one side changed it): the value, `None` for absent.
    Take(Option<&'a Value>),
    /// Both sides changed it, differently.
    Both,
}

fn pick<'a>(base: Option<&Value>, ours: Option<&'a Value>, theirs: Option<&'a Value>) -> Pick<'a> {
    if ours == theirs || base == theirs {
        Pick::Take(ours)
    } else if base == ours {
        Pick::Take(theirs)
    } else {
        Pick::Both
    }
}

/// The key an entry is matched by across the sides: its id, else its whole content.
fn entry_key(v: &Value) -> String {
    match v.get("id") {
        Some(Value::String(s)) if !s.is_empty() => format!("id:{s}"),
        _ => format!("content:{}", json::to_js_compact(v)),
    }
}

/// The entries of one side by key; a key twice on one side is a conflict.
fn keyed<'a>(side: &'a [Value], which: &str) -> Merged<HashMap<String, &'a Value>> {
    let mut map = HashMap::with_capacity(side.len());
    for v in side {
        let key = entry_key(v);
        if map.insert(key.clone(), v).is_some() {
            return conflict(format!(
                "{which} holds {} twice",
                key.strip_prefix("id:").unwrap_or("an entry")
            ));
        }
    }
    Ok(map)
}

/// Unions keyed lists three-way: ours in order, then theirs' new entries; `both` decides an
/// entry present on both sides.
fn union3(
    base: &[Value],
    ours: &[Value],
    theirs: &[Value],
    what: &str,
    mut both: impl FnMut(Option<&Value>, &Value, &Value) -> Merged<Value>,
) -> Merged<Vec<Value>> {
    let b = keyed(base, "the common ancestor")?;
    let o = keyed(ours, "our side")?;
    let t = keyed(theirs, "their side")?;
    let name = |key: &str| {
        key.strip_prefix("id:")
            .unwrap_or("(without id)")
            .to_string()
    };
    let mut out = Vec::with_capacity(ours.len().max(theirs.len()));
    for v in ours {
        let key = entry_key(v);
        match (t.get(&key), b.get(&key)) {
            (Some(tv), bv) => out.push(both(bv.copied(), v, tv)?),
            // Removed on their side: stays removed if we did not change it.
            (None, Some(bv)) if *bv == v => {}
            (None, Some(_)) => {
                return conflict(format!(
                    "{what} {} was removed on one side and changed on the other",
                    name(&key)
                ));
            }
            (None, None) => out.push(v.clone()),
        }
    }
    for v in theirs {
        let key = entry_key(v);
        if o.contains_key(&key) {
            continue;
        }
        match b.get(&key) {
            Some(bv) if *bv == v => {}
            Some(_) => {
                return conflict(format!(
                    "{what} {} was removed on one side and changed on the other",
                    name(&key)
                ));
            }
            None => out.push(v.clone()),
        }
    }
    Ok(out)
}

/// Merges journal entry lists.
pub(crate) fn merge_journal(
    base: &[Value],
    ours: &[Value],
    theirs: &[Value],
) -> Merged<Vec<Value>> {
    union3(base, ours, theirs, "journal entry", |b, o, t| {
        match pick(b, Some(o), Some(t)) {
            Pick::Take(v) => Ok(v.cloned().unwrap_or(Value::Null)),
            Pick::Both => conflict(format!(
                "journal entry {} has different content on the two sides",
                o.get("id")
                    .and_then(Value::as_str)
                    .unwrap_or("(without id)")
            )),
        }
    })
}

/// Merges legacy v1 arrays: members by id, each merged as a comment.
pub(crate) fn merge_array(base: &[Value], ours: &[Value], theirs: &[Value]) -> Merged<Vec<Value>> {
    union3(base, ours, theirs, "comment", |b, o, t| match (b, o, t) {
        (b, Value::Object(o), Value::Object(t)) => {
            let b = b.and_then(Value::as_object);
            Ok(Value::Object(merge_comment(b, o, t)?))
        }
        _ => match pick(b, Some(o), Some(t)) {
            Pick::Take(v) => Ok(v.cloned().unwrap_or(Value::Null)),
            Pick::Both => conflict("a v1 array member is not a comment object"),
        },
    })
}

/// `meta.json`: the side with the higher `schemaVersion` (ours when equal).
pub(crate) fn merge_meta(
    ours: Map<String, Value>,
    theirs: Map<String, Value>,
) -> Map<String, Value> {
    let version = |m: &Map<String, Value>| m.get("schemaVersion").and_then(Value::as_f64);
    match version(&theirs).partial_cmp(&version(&ours)) {
        Some(Ordering::Greater) => theirs,
        _ => ours,
    }
}

/// Orders two `updatedAt` values: as instants when both parse, else as strings.
fn later(a: &str, b: &str) -> Ordering {
    match (
        chrono::DateTime::parse_from_rfc3339(a),
        chrono::DateTime::parse_from_rfc3339(b),
    ) {
        (Ok(x), Ok(y)) => x.cmp(&y),
        _ => a.cmp(b),
    }
}

/// The fields that merge as one value, each group on its own: a close sets `status` and
/// `resolution` together (a reopen clears both); a hold is independent of either.
const GROUPS: &[&[&str]] = &[&["status", "resolution"], &["hold"]];

/// Merges one comment object three-way (`base` is `None` when both sides added it).
pub(crate) fn merge_comment(
    base: Option<&Map<String, Value>>,
    ours: &Map<String, Value>,
    theirs: &Map<String, Value>,
) -> Merged<Map<String, Value>> {
    if ours.get("id") != theirs.get("id") {
        return conflict("the two sides are different comments (id)");
    }
    let updated = |m: &Map<String, Value>| {
        m.get("updatedAt")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let (ou, tu) = (updated(ours), updated(theirs));
    let theirs_later = later(&tu, &ou) == Ordering::Greater;
    let get = |m: Option<&Map<String, Value>>, k: &str| m.and_then(|m| m.get(k)).cloned();

    // Each group as one value: the group's keys whose value comes from their side.
    let mut from_theirs: HashSet<&str> = HashSet::new();
    for keys in GROUPS {
        let group = |m: Option<&Map<String, Value>>| {
            Value::Array(
                keys.iter()
                    .map(|k| get(m, k).unwrap_or(Value::Null))
                    .collect(),
            )
        };
        let (bg, og, tg) = (group(base), group(Some(ours)), group(Some(theirs)));
        match pick(base.map(|_| &bg), Some(&og), Some(&tg)) {
            Pick::Take(v) if v == Some(&tg) && og != tg => from_theirs.extend(keys.iter()),
            Pick::Take(_) => {}
            Pick::Both => {
                let id = ours
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or("(without id)");
                return conflict(format!(
                    "comment {id}: {} changed differently on the two sides",
                    keys.join(" and ")
                ));
            }
        }
    }

    // Key order: ours, then keys only theirs has.
    let mut keys: Vec<&String> = ours.keys().collect();
    keys.extend(theirs.keys().filter(|k| !ours.contains_key(*k)));
    let mut out = Map::new();
    for key in keys {
        let k = key.as_str();
        let value = match k {
            "thread" => Some(merge_thread(
                base.and_then(|b| b.get(k)),
                ours.get(k),
                theirs.get(k),
            )?),
            "updatedAt" => {
                if theirs_later {
                    theirs.get(k).cloned()
                } else {
                    ours.get(k).cloned()
                }
            }
            _ if GROUPS.iter().any(|g| g.contains(&k)) => {
                let side = if from_theirs.contains(k) {
                    theirs
                } else {
                    ours
                };
                side.get(k).cloned()
            }
            _ => match pick(base.and_then(|b| b.get(k)), ours.get(k), theirs.get(k)) {
                Pick::Take(v) => v.cloned(),
                Pick::Both if theirs_later => theirs.get(k).cloned(),
                Pick::Both => ours.get(k).cloned(),
            },
        };
        if let Some(v) = value {
            out.insert(key.clone(), v);
        }
    }
    Ok(out)
}

/// The union of two threads' messages, three-way: a message is known by its `ts` and
/// `author` (and its rank among messages with both equal); one whose body changed on one side
/// only takes that change (an edit of the first message); changed on both, both versions are
/// kept. Every other message of either side is kept, so no reply is lost. Timestamp order (a
/// stable sort: messages at the same instant keep ours-then-theirs order).
fn merge_thread(
    base: Option<&Value>,
    ours: Option<&Value>,
    theirs: Option<&Value>,
) -> Merged<Value> {
    let list = |v: Option<&Value>, which: &str| -> Merged<Vec<Value>> {
        match v {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(a)) => Ok(a.clone()),
            Some(_) => conflict(format!("{which} thread is not an array (thread)")),
        }
    };
    // (ts, author, rank) of each message, rank counting earlier messages with the same two.
    let keyed = |msgs: Vec<Value>| -> Vec<(String, Value)> {
        let mut seen: HashMap<String, usize> = HashMap::new();
        msgs.into_iter()
            .map(|m| {
                let who = json::to_js_compact(&[
                    m.get("ts").cloned().unwrap_or(Value::Null),
                    m.get("author").cloned().unwrap_or(Value::Null),
                ]);
                let n = seen.entry(who.clone()).or_default();
                *n += 1;
                (format!("{who}#{n}"), m)
            })
            .collect()
    };
    let b: HashMap<String, Value> = keyed(list(base, "the ancestor's")?).into_iter().collect();
    let t = keyed(list(theirs, "their")?);
    let t_map: HashMap<&str, &Value> = t.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let mut out: Vec<Value> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    for (k, m) in keyed(list(ours, "our")?) {
        match t_map.get(k.as_str()) {
            Some(tm) => match pick(b.get(&k), Some(&m), Some(tm)) {
                Pick::Take(v) => out.push(v.cloned().unwrap_or(m)),
                Pick::Both => {
                    out.push(m);
                    out.push((*tm).clone());
                }
            },
            None => out.push(m),
        }
        seen.insert(k);
    }
    for (k, m) in t {
        if !seen.contains(&k) {
            out.push(m);
        }
    }
    out.sort_by_cached_key(|m| ts_key(m.get("ts").and_then(Value::as_str).unwrap_or("")));
    Ok(Value::Array(out))
}

/// A total order on timestamps: parsed instants first, in time order, then unparseable
/// strings in string order.
fn ts_key(ts: &str) -> (u8, i64, u32, String) {
    match chrono::DateTime::parse_from_rfc3339(ts) {
        Ok(t) => (0, t.timestamp(), t.timestamp_subsec_nanos(), String::new()),
        Err(_) => (1, 0, 0, ts.to_string()),
    }
}

/// The file left for a person when a merge conflicts: both versions whole, between git's
/// conflict markers (`size` characters each), so neither is lost.
pub fn conflict_file(ours: &[u8], theirs: &[u8], size: usize, why: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(ours.len() + theirs.len() + 128);
    let line = |out: &mut Vec<u8>, c: char, label: &str| {
        out.extend(std::iter::repeat_n(c as u8, size));
        if !label.is_empty() {
            out.push(b' ');
            out.extend_from_slice(label.as_bytes());
        }
        out.push(b'\n');
    };
    let body = |out: &mut Vec<u8>, bytes: &[u8]| {
        out.extend_from_slice(bytes);
        if !bytes.is_empty() && !bytes.ends_with(b"\n") {
            out.push(b'\n');
        }
    };
    line(&mut out, '<', &format!("ours (notabene: {why})"));
    body(&mut out, ours);
    line(&mut out, '=', "");
    body(&mut out, theirs);
    line(&mut out, '>', "theirs");
    out
}

#[cfg(test)]
mod tests;
