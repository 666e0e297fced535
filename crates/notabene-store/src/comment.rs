//! The comment object: an ordered JSON map (unknown fields kept verbatim) with typed accessors for
//! the fields the contract defines, and the mutations the CLI performs.

use crate::condense::{CondensedText, SharedText};
use serde_json::{Map, Value, json};
use std::ops::Range;
use std::sync::{Arc, OnceLock};

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
/// first): a long-lived process keeps the comments it read without copying them. A comment
/// condensed from the store's cache keeps its fields as the cache line holds them, and makes
/// them a map only when asked for one.
#[derive(Debug, Clone)]
pub struct Comment {
    /// The fields, in the file's order.
    fields: Fields,
    /// The condensed text of a condensed comment.
    condensed: Option<Arc<dyn CondensedText>>,
    /// `status` and `scope` as read from `map` (kept in step by every mutation): a build asks
    /// for them of every comment at every stage, without reaching into the map each time.
    typed: Typed,
}

impl Default for Comment {
    fn default() -> Comment {
        Comment::from_map(Map::new())
    }
}

/// A comment's fields.
#[derive(Debug, Clone)]
enum Fields {
    /// A map.
    Map(Arc<Map<String, Value>>),
    /// A condensed comment's, as its line of the store's cache holds them.
    Line(Arc<LineFields>),
}

/// The kept fields of a condensed comment as its line of the store's cache holds them: string
/// values without escapes, so that each key and value is a piece of the line, in its order.
#[derive(Debug)]
pub(crate) struct LineFields {
    /// The map's JSON text.
    text: SharedText,
    /// Where each key and value is in `text` (inside their quotes), held here rather than
    /// behind one more pointer: a build reads a few of them from thousands of comments.
    at: [FieldAt; LineFields::MAX],
    /// How many of `at` are fields.
    len: usize,
    /// The fields as a map, made when first asked for.
    map: OnceLock<Map<String, Value>>,
}

/// Where a key and its value are in a [`LineFields`]' text: start and end of each.
type FieldAt = [u32; 4];

impl LineFields {
    /// The most fields a comment's line holds this way (a condensed comment keeps seven).
    pub(crate) const MAX: usize = 8;

    /// The fields of `text` at `at` (from `condense::string_fields`); `None` for more than
    /// [`LineFields::MAX`] of them or a text too long to say where they are.
    pub(crate) fn new(text: SharedText, at: &[(Range<usize>, Range<usize>)]) -> Option<LineFields> {
        let mut fields = [[0; 4]; LineFields::MAX];
        for (slot, (k, v)) in fields.iter_mut().zip(at) {
            let n = |i: usize| u32::try_from(i).ok();
            *slot = [n(k.start)?, n(k.end)?, n(v.start)?, n(v.end)?];
        }
        (at.len() <= LineFields::MAX).then(|| LineFields {
            text,
            at: fields,
            len: at.len(),
            map: OnceLock::new(),
        })
    }

    /// The key and value of field `n`.
    fn field(&self, n: usize) -> Option<(&str, &str)> {
        let [ks, ke, vs, ve] = *self.at[..self.len].get(n)?;
        let text = self.text.as_str();
        let piece = |s: u32, e: u32| text.get(s as usize..e as usize);
        Some((piece(ks, ke)?, piece(vs, ve)?))
    }

    /// The fields, in order.
    fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        (0..self.len).filter_map(|n| self.field(n))
    }

    /// The fields as a map.
    fn map(&self) -> &Map<String, Value> {
        self.map.get_or_init(|| {
            self.iter()
                .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
                .collect()
        })
    }
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
    /// Read from `fields`: each key with its value when it is a string.
    fn of<'a>(fields: impl Iterator<Item = (&'a str, Option<&'a str>)>) -> Typed {
        let mut typed = Typed::default();
        for (n, (key, value)) in fields.enumerate() {
            let slot = match u16::try_from(n) {
                Ok(n) => Slot::At(n),
                Err(_) => Slot::Far,
            };
            match key {
                "status" => typed.status = value.and_then(Status::parse),
                "scope" => typed.scope = value.and_then(Scope::parse),
                "id" => typed.id = slot,
                "page" => typed.page = slot,
                "updatedAt" => typed.updated_at = slot,
                _ => {}
            }
        }
        typed
    }

    /// Read from `map`.
    fn of_map(map: &Map<String, Value>) -> Typed {
        Typed::of(map.iter().map(|(k, v)| (k.as_str(), v.as_str())))
    }
}

/// Two comments are equal when their maps are, and their condensed texts (if condensed).
impl PartialEq for Comment {
    fn eq(&self, other: &Comment) -> bool {
        self.as_map() == other.as_map()
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
            typed: Typed::of_map(&m),
            fields: Fields::Map(m.into()),
            condensed: None,
        }
    }
    /// A condensed comment ([`crate::condense`]): the fields a build reads, and the text it
    /// made from the whole comment.
    pub fn condensed(m: Map<String, Value>, text: Arc<dyn CondensedText>) -> Comment {
        Comment {
            condensed: Some(text),
            ..Comment::from_map(m)
        }
    }
    /// A condensed comment whose fields are as its cache line holds them.
    pub(crate) fn condensed_line(fields: LineFields, text: Arc<dyn CondensedText>) -> Comment {
        Comment {
            typed: Typed::of(fields.iter().map(|(k, v)| (k, Some(v)))),
            fields: Fields::Line(Arc::new(fields)),
            condensed: Some(text),
        }
    }
    /// The condensed text of a condensed comment (`None`: the comment is whole).
    pub fn condensed_text(&self) -> Option<&dyn CondensedText> {
        self.condensed.as_deref()
    }
    /// The underlying map.
    pub fn as_map(&self) -> &Map<String, Value> {
        match &self.fields {
            Fields::Map(map) => map,
            Fields::Line(line) => line.map(),
        }
    }
    /// The map, to change (a comment's own copy: a condensed comment's fields made a map).
    fn map_mut(&mut self) -> &mut Map<String, Value> {
        if let Fields::Line(line) = &self.fields {
            self.fields = Fields::Map(Arc::new(line.map().clone()));
        }
        match &mut self.fields {
            Fields::Map(map) => Arc::make_mut(map),
            Fields::Line(_) => unreachable!("made a map above"),
        }
    }
    /// A field.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_map().get(key)
    }
    fn str_field(&self, key: &str) -> Option<&str> {
        self.get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    }
    /// The string at `slot` (`key`'s), when it is one.
    fn string_at(&self, slot: Slot, key: &str) -> Option<&str> {
        match (slot, &self.fields) {
            (Slot::Absent, _) => None,
            (Slot::At(n), Fields::Map(map)) => map.iter().nth(usize::from(n))?.1.as_str(),
            (Slot::At(n), Fields::Line(line)) => Some(line.field(usize::from(n))?.1),
            (Slot::Far, _) => self.get(key)?.as_str(),
        }
    }
    /// The string at `slot` (`key`'s), when it is one and not empty.
    fn str_at(&self, slot: Slot, key: &str) -> Option<&str> {
        self.string_at(slot, key).filter(|s| !s.is_empty())
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
        self.get("hold").and_then(Value::as_bool).unwrap_or(false)
    }
    /// The anchor object, if any.
    pub fn anchor(&self) -> Option<&Map<String, Value>> {
        self.get("anchor").and_then(Value::as_object)
    }
    /// The thread messages.
    pub fn thread(&self) -> &[Value] {
        self.get("thread")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }
    /// `updatedAt`.
    pub fn updated_at(&self) -> &str {
        self.string_at(self.typed.updated_at, "updatedAt")
            .unwrap_or("")
    }
    /// The suggested edit, when `suggestion` is an object with string `quote` and `text`.
    pub fn suggestion(&self) -> Option<Suggestion<'_>> {
        let s = self.get("suggestion")?.as_object()?;
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
        if self.as_map().contains_key(key) || !self.as_map().contains_key(after) {
            self.set(key, value);
            return;
        }
        let map = self.map_mut();
        let old = std::mem::take(map);
        for (k, v) in old {
            let at = k == after;
            map.insert(k, v);
            if at {
                map.insert(key.to_string(), value.clone());
            }
        }
        self.typed = Typed::of_map(self.as_map());
    }

    /// `status == open && !hold`: what agents act on.
    pub fn is_actionable(&self) -> bool {
        self.status() == Some(Status::Open) && !self.held()
    }

    /// Sets `key` to `value`, keeping its position when it exists, appending otherwise.
    pub fn set(&mut self, key: &str, value: Value) {
        // A changed comment is whole again: its pre-written forms would be stale.
        self.condensed = None;
        let map = self.map_mut();
        if let Some(slot) = map.get_mut(key) {
            *slot = value;
        } else {
            map.insert(key.to_string(), value);
        }
        self.typed = Typed::of_map(self.as_map());
    }

    /// Removes `key`, keeping the order of the others.
    pub fn remove(&mut self, key: &str) {
        self.condensed = None;
        self.map_mut().shift_remove(key);
        self.typed = Typed::of_map(self.as_map());
    }

    /// Appends a thread message (creating the thread when absent).
    pub fn push_message(&mut self, author: &str, body: &str, ts: &str) {
        self.condensed = None;
        match self.map_mut().get_mut("thread") {
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
