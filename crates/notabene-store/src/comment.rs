//! The comment object: an ordered JSON map (unknown fields kept verbatim) with typed accessors for
//! the fields the contract defines, and the mutations the CLI performs.

use crate::condense::CondensedText;
use serde_json::{Map, Value, json};

/// A comment's status, as the contract spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Status {
    /// Waiting for someone to act on it.
    Open,
    /// Handled, waiting for a reviewer to validate it (`review = "approve"`).
    Addressed,
    /// Done.
    Resolved,
}

impl Status {
    /// Every status, in the contract's order.
    pub const ALL: [Status; 3] = [Status::Open, Status::Addressed, Status::Resolved];

    /// The contract's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Open => "open",
            Status::Addressed => "addressed",
            Status::Resolved => "resolved",
        }
    }

    /// The status spelt `s`, if it is one.
    pub fn parse(s: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|x| x.as_str() == s)
    }

    /// "open, addressed, resolved": for messages.
    pub fn list() -> String {
        Status::ALL.map(Status::as_str).join(", ")
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that is no status (the string).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownStatus(pub String);

impl std::fmt::Display for UnknownStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "unknown status {:?} (expected: {})",
            self.0,
            Status::list()
        )
    }
}

impl std::error::Error for UnknownStatus {}

impl std::str::FromStr for Status {
    type Err = UnknownStatus;

    fn from_str(s: &str) -> Result<Status, UnknownStatus> {
        Status::parse(s).ok_or_else(|| UnknownStatus(s.to_string()))
    }
}

impl serde::Serialize for Status {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Status {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Status, D::Error> {
        let s = String::deserialize(deserializer)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl From<Status> for Value {
    fn from(s: Status) -> Value {
        Value::String(s.as_str().to_string())
    }
}

/// What a comment is anchored to, as the contract spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// A text quote.
    Selection,
    /// The whole page.
    Page,
    /// An image or a diagram.
    Block,
}

impl Scope {
    /// Every scope, in the contract's order.
    pub const ALL: [Scope; 3] = [Scope::Selection, Scope::Page, Scope::Block];

    /// The contract's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Selection => "selection",
            Scope::Page => "page",
            Scope::Block => "block",
        }
    }

    /// The scope spelt `s`, if it is one.
    pub fn parse(s: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|x| x.as_str() == s)
    }
}

impl From<Scope> for Value {
    fn from(s: Scope) -> Value {
        Value::String(s.as_str().to_string())
    }
}

/// A stored comment. Mutations touch only the fields they name; every other key, known or
/// not, keeps its value and position.
///
/// A build may read a comment *condensed* ([`crate::condense`]): the map holds only the
/// fields the build reads itself, and its condensed text (the build's text made from the whole
/// comment) comes with it (the second field).
///
/// The map is shared between copies (a clone is a reference count; a mutation copies it
/// first): a long-lived process keeps the comments it read without copying them.
#[derive(Debug, Clone, Default)]
pub struct Comment {
    /// The fields, in the file's order.
    map: std::sync::Arc<Map<String, Value>>,
    /// The condensed text of a condensed comment.
    condensed: Option<std::sync::Arc<dyn CondensedText>>,
    /// `status` and `scope` as read from `map` (kept in step by every mutation): a build asks
    /// for them of every comment at every stage, without reaching into the map each time.
    typed: Typed,
}

/// The fields of a comment a build asks for most, read once from its map: `status` and
/// `scope` typed, and where `id`, `page` and `updatedAt` are in it (a build asks for them of
/// every comment at every stage; a position is read without hashing the key, on a map that
/// is seldom in the processor's cache).
#[derive(Debug, Clone, Copy, Default)]
struct Typed {
    status: Option<Status>,
    scope: Option<Scope>,
    id: Slot,
    page: Slot,
    updated_at: Slot,
}

/// Where a field is in a comment's map.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Slot {
    /// Not in it.
    #[default]
    Absent,
    /// At this position.
    At(u16),
    /// Further than a position here holds: looked up by its key.
    Far,
}

impl Typed {
    fn of(map: &Map<String, Value>) -> Typed {
        let mut typed = Typed::default();
        for (n, (key, value)) in map.iter().enumerate() {
            let slot = match u16::try_from(n) {
                Ok(n) => Slot::At(n),
                Err(_) => Slot::Far,
            };
            match key.as_str() {
                "status" => typed.status = value.as_str().and_then(Status::parse),
                "scope" => typed.scope = value.as_str().and_then(Scope::parse),
                "id" => typed.id = slot,
                "page" => typed.page = slot,
                "updatedAt" => typed.updated_at = slot,
                _ => {}
            }
        }
        typed
    }
}

/// Two comments are equal when their maps are, and their condensed texts (if condensed).
impl PartialEq for Comment {
    fn eq(&self, other: &Comment) -> bool {
        self.map == other.map
            && match (&self.condensed, &other.condensed) {
                (None, None) => true,
                (Some(a), Some(b)) => std::sync::Arc::ptr_eq(a, b) || a.to_text() == b.to_text(),
                _ => false,
            }
    }
}

/// A suggested edit carried by a selection comment (`suggestion` in its JSON, after
/// `anchor`): `quote` is the rendered text it replaces (the anchor's quote when it was made),
/// `text` the replacement (empty: delete it). `applied` (`{at, by, file}`) is set once
/// `comments apply` has written it into the Markdown. A field of this build, not of the
/// original contract: the original keeps it, as it keeps every unknown field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Suggestion<'a> {
    /// The text to replace.
    pub quote: &'a str,
    /// The replacement.
    pub text: &'a str,
    /// Whether it was applied.
    pub applied: bool,
}

/// The `suggestion` object of a new comment.
pub fn suggestion_value(quote: &str, text: &str) -> Value {
    json!({ "quote": quote, "text": text })
}

/// The thread text of a suggestion made without a body: says what it suggests, for readers
/// that know only the thread (the original notabene, agents without suggestion support).
pub fn suggestion_body(quote: &str, text: &str) -> String {
    if text.is_empty() {
        format!("Suggested edit: delete “{quote}”.")
    } else {
        format!("Suggested edit: replace “{quote}” with “{text}”.")
    }
}

/// A thread message `{author, body, ts}`.
pub fn message(author: &str, body: &str, ts: &str) -> Value {
    json!({ "author": author, "body": body, "ts": ts })
}

impl Comment {
    /// Wraps a JSON value; a non-object becomes an empty comment (which has no id).
    pub fn from_value(v: Value) -> Comment {
        match v {
            Value::Object(m) => Comment::from_map(m),
            _ => Comment::default(),
        }
    }
    /// Wraps a map.
    pub fn from_map(m: Map<String, Value>) -> Comment {
        Comment {
            typed: Typed::of(&m),
            map: m.into(),
            condensed: None,
        }
    }
    /// A condensed comment ([`crate::condense`]): the fields a build reads, and the text it
    /// made from the whole comment.
    pub fn condensed(m: Map<String, Value>, text: std::sync::Arc<dyn CondensedText>) -> Comment {
        Comment {
            typed: Typed::of(&m),
            map: m.into(),
            condensed: Some(text),
        }
    }
    /// The condensed text of a condensed comment (`None`: the comment is whole).
    pub fn condensed_text(&self) -> Option<&dyn CondensedText> {
        self.condensed.as_deref()
    }
    /// The underlying map.
    pub fn as_map(&self) -> &Map<String, Value> {
        &self.map
    }
    /// A field.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.map.get(key)
    }
    fn str_field(&self, key: &str) -> Option<&str> {
        self.map
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    }
    /// The value at `slot` (`key`'s).
    fn value_at(&self, slot: Slot, key: &str) -> Option<&Value> {
        match slot {
            Slot::Absent => None,
            Slot::At(n) => self.map.iter().nth(usize::from(n)).map(|(_, v)| v),
            Slot::Far => self.map.get(key),
        }
    }
    /// The string at `slot` (`key`'s), when it is one and not empty.
    fn str_at(&self, slot: Slot, key: &str) -> Option<&str> {
        self.value_at(slot, key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    }
    /// The id, when it is a non-empty string.
    pub fn id(&self) -> Option<&str> {
        self.str_at(self.typed.id, "id")
    }
    /// The page.
    pub fn page(&self) -> Option<&str> {
        self.str_at(self.typed.page, "page")
    }
    /// The space.
    pub fn space(&self) -> Option<&str> {
        self.str_field("space")
    }
    /// The scope, when it is one of the contract's.
    pub fn scope(&self) -> Option<Scope> {
        self.typed.scope
    }
    /// The status, when it is one of the contract's.
    pub fn status(&self) -> Option<Status> {
        self.typed.status
    }
    /// The scope as stored, whatever it is.
    pub fn scope_str(&self) -> Option<&str> {
        self.str_field("scope")
    }
    /// The status as stored, whatever it is (for messages and checks of the file).
    pub fn status_str(&self) -> Option<&str> {
        self.str_field("status")
    }
    /// `hold == true`.
    pub fn held(&self) -> bool {
        self.map
            .get("hold")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }
    /// The anchor object, if any.
    pub fn anchor(&self) -> Option<&Map<String, Value>> {
        self.map.get("anchor").and_then(Value::as_object)
    }
    /// The thread messages.
    pub fn thread(&self) -> &[Value] {
        self.map
            .get("thread")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }
    /// `updatedAt`.
    pub fn updated_at(&self) -> &str {
        self.value_at(self.typed.updated_at, "updatedAt")
            .and_then(Value::as_str)
            .unwrap_or("")
    }
    /// The suggested edit, when `suggestion` is an object with string `quote` and `text`.
    pub fn suggestion(&self) -> Option<Suggestion<'_>> {
        let s = self.map.get("suggestion")?.as_object()?;
        Some(Suggestion {
            quote: s.get("quote")?.as_str()?,
            text: s.get("text")?.as_str()?,
            applied: s.get("applied").is_some_and(|a| !a.is_null()),
        })
    }

    /// Sets `key` to `value`: in place when it exists, else right after `after` (appended
    /// when `after` is absent).
    pub fn set_after(&mut self, after: &str, key: &str, value: Value) {
        self.condensed = None;
        if self.map.contains_key(key) || !self.map.contains_key(after) {
            self.set(key, value);
            return;
        }
        let map = std::sync::Arc::make_mut(&mut self.map);
        let old = std::mem::take(map);
        for (k, v) in old {
            let at = k == after;
            map.insert(k, v);
            if at {
                map.insert(key.to_string(), value.clone());
            }
        }
        self.typed = Typed::of(&self.map);
    }

    /// `status == open && !hold`: what agents act on.
    pub fn is_actionable(&self) -> bool {
        self.status() == Some(Status::Open) && !self.held()
    }

    /// Sets `key` to `value`, keeping its position when it exists, appending otherwise.
    pub fn set(&mut self, key: &str, value: Value) {
        // A changed comment is whole again: its pre-written forms would be stale.
        self.condensed = None;
        let map = std::sync::Arc::make_mut(&mut self.map);
        if let Some(slot) = map.get_mut(key) {
            *slot = value;
        } else {
            map.insert(key.to_string(), value);
        }
        self.typed = Typed::of(&self.map);
    }

    /// Removes `key`, keeping the order of the others.
    pub fn remove(&mut self, key: &str) {
        self.condensed = None;
        std::sync::Arc::make_mut(&mut self.map).shift_remove(key);
        self.typed = Typed::of(&self.map);
    }

    /// Appends a thread message (creating the thread when absent).
    pub fn push_message(&mut self, author: &str, body: &str, ts: &str) {
        self.condensed = None;
        match std::sync::Arc::make_mut(&mut self.map).get_mut("thread") {
            Some(Value::Array(a)) => a.push(message(author, body, ts)),
            _ => self.set("thread", Value::Array(vec![message(author, body, ts)])),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fields read by position are the map's, after every kind of change.
    #[test]
    fn fields_read_by_position_follow_every_change() {
        let fields = |c: &Comment| {
            (
                c.id().map(str::to_string),
                c.page().map(str::to_string),
                c.updated_at().to_string(),
                c.status(),
            )
        };
        let by_key = |c: &Comment| {
            let s = |k: &str| c.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
            (
                s("id").map(str::to_string),
                s("page").map(str::to_string),
                c.get("updatedAt")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                s("status").and_then(Status::parse),
            )
        };
        let mut c = Comment::from_value(json!({
            "a": 1, "id": "c_1", "page": "p", "status": "open", "updatedAt": "t1"
        }));
        assert_eq!(
            fields(&c),
            (
                Some("c_1".into()),
                Some("p".into()),
                "t1".into(),
                Some(Status::Open)
            )
        );
        c.remove("a");
        assert_eq!(fields(&c), by_key(&c));
        c.set_after("id", "b", json!(2));
        c.set("updatedAt", json!("t2"));
        c.push_message("x", "y", "t3");
        assert_eq!(fields(&c), by_key(&c));
        assert_eq!(c.updated_at(), "t2");
        c.remove("page");
        c.set("id", json!(""));
        assert_eq!(fields(&c), (None, None, "t2".into(), Some(Status::Open)));
        // Not strings, or absent: none.
        let c = Comment::from_value(json!({ "page": 3, "updatedAt": null }));
        assert_eq!(fields(&c), (None, None, String::new(), None));
        // Further than a position holds: by key.
        let mut m: Map<String, Value> = (0..70_000).map(|n| (format!("k{n}"), json!(n))).collect();
        m.insert("id".into(), json!("c_far"));
        m.insert("updatedAt".into(), json!("t9"));
        let c = Comment::from_map(m);
        assert_eq!(c.typed.id, Slot::Far);
        assert_eq!((c.id(), c.updated_at()), (Some("c_far"), "t9"));
    }
}
