//! The comment object: an ordered JSON map (unknown fields kept verbatim) with typed
//! accessors for the fields the contract defines, and the mutations the CLI performs.
//!
//! Part of the store layer (1); may call the shared helpers only.

use serde_json::{Map, Value, json};

/// The comment statuses of the contract.
pub const STATUSES: &[&str] = &["open", "addressed", "resolved"];
/// The comment scopes of the contract.
pub const SCOPES: &[&str] = &["selection", "page", "block"];

/// A stored comment. Mutations touch only the fields they name; every other key, known or
/// not, keeps its value and position.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Comment(Map<String, Value>);

/// A thread message `{author, body, ts}`.
pub fn message(author: &str, body: &str, ts: &str) -> Value {
    json!({ "author": author, "body": body, "ts": ts })
}

impl Comment {
    /// Wraps a JSON value; a non-object becomes an empty comment (which has no id).
    pub fn from_value(v: Value) -> Comment {
        match v {
            Value::Object(m) => Comment(m),
            _ => Comment(Map::new()),
        }
    }
    /// Wraps a map.
    pub fn from_map(m: Map<String, Value>) -> Comment {
        Comment(m)
    }
    /// The underlying map.
    pub fn as_map(&self) -> &Map<String, Value> {
        &self.0
    }
    /// A field.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }
    fn str_field(&self, key: &str) -> Option<&str> {
        self.0
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    }
    /// The id, when it is a non-empty string.
    pub fn id(&self) -> Option<&str> {
        self.str_field("id")
    }
    /// The page.
    pub fn page(&self) -> Option<&str> {
        self.str_field("page")
    }
    /// The space.
    pub fn space(&self) -> Option<&str> {
        self.str_field("space")
    }
    /// The scope.
    pub fn scope(&self) -> Option<&str> {
        self.str_field("scope")
    }
    /// The status.
    pub fn status(&self) -> Option<&str> {
        self.str_field("status")
    }
    /// `hold == true`.
    pub fn held(&self) -> bool {
        self.0.get("hold").and_then(Value::as_bool).unwrap_or(false)
    }
    /// The anchor object, if any.
    pub fn anchor(&self) -> Option<&Map<String, Value>> {
        self.0.get("anchor").and_then(Value::as_object)
    }
    /// The thread messages.
    pub fn thread(&self) -> &[Value] {
        self.0
            .get("thread")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }
    /// `updatedAt`.
    pub fn updated_at(&self) -> &str {
        self.0
            .get("updatedAt")
            .and_then(Value::as_str)
            .unwrap_or("")
    }
    /// `status == open && !hold`: what agents act on.
    pub fn is_actionable(&self) -> bool {
        self.status() == Some("open") && !self.held()
    }

    /// Sets `key` to `value`, keeping its position when it exists, appending otherwise.
    pub fn set(&mut self, key: &str, value: Value) {
        if let Some(slot) = self.0.get_mut(key) {
            *slot = value;
        } else {
            self.0.insert(key.to_string(), value);
        }
    }

    /// Appends a thread message (creating the thread when absent).
    pub fn push_message(&mut self, author: &str, body: &str, ts: &str) {
        match self.0.get_mut("thread") {
            Some(Value::Array(a)) => a.push(message(author, body, ts)),
            _ => self.set("thread", Value::Array(vec![message(author, body, ts)])),
        }
    }
}
