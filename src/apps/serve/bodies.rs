//! The API's request bodies as serde structs, and what each field may hold. A field is a
//! [`Field`]: absent or `null`, or any JSON value, so that a value of the wrong type is refused
//! with the original notabene's message for that field (`hold must be a boolean`, `page is too
//! long`), not serde's; unknown fields are ignored, as the original API ignores them. The
//! PATCH's fields become the operations' [`Change`]s here, a new comment's anchor its
//! [`Anchor`].
//!
//! May call: the operations' request types (`apps::ops`), the store's `Status` and `Scope`.

use super::answer::ApiError;
use crate::apps::ops::limits::{MAX_BODY, MAX_FIELD};
use crate::apps::ops::{Anchor, Change, ResolutionNote, limits};
use axum::http::StatusCode;
use notabene_store::{Scope, Status};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A field of a request body: absent or `null` (`None`), or the JSON value it holds.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Field(Option<Value>);

impl Field {
    /// The value, when there is one (not absent, not `null`).
    pub(super) fn value(&self) -> Option<&Value> {
        self.0.as_ref().filter(|v| !v.is_null())
    }

    /// The string the field holds, if it holds one.
    pub(super) fn as_str(&self) -> Option<&str> {
        self.value().and_then(Value::as_str)
    }

    /// The field `key` as text of at most `max` bytes: `None` when absent or `null`, a 413
    /// when longer, a 400 when not a string.
    pub(super) fn text(&self, key: &str, max: usize) -> Result<Option<&str>, ApiError> {
        match self.value() {
            None => Ok(None),
            Some(Value::String(s)) if s.len() > max => Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("{key} is too long"),
            )),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(ApiError::bad_request(format!("{key} must be a string"))),
        }
    }

    /// The field `key` as trimmed, non-empty text of at most [`MAX_BODY`] bytes.
    fn body_text(&self, key: &str) -> Result<String, ApiError> {
        let t = self.text(key, MAX_BODY)?.map(str::trim).unwrap_or("");
        if t.is_empty() {
            return Err(ApiError::bad_request(format!(
                "{key} must be a non-empty string"
            )));
        }
        Ok(t.to_string())
    }

    /// An author field: trimmed, `or` when absent or blank.
    fn author(&self, or: &str) -> Result<String, ApiError> {
        Ok(self
            .text("author", MAX_FIELD)?
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .unwrap_or(or)
            .to_string())
    }

    /// The object the field holds, read as a `T` (`None`: absent, `null`, or not an object).
    pub(super) fn object<T: DeserializeOwned>(&self) -> Option<T> {
        match self.value() {
            Some(v @ Value::Object(_)) => serde_json::from_value(v.clone()).ok(),
            _ => None,
        }
    }
}

/// `POST comments`: a new comment.
#[derive(Debug, Deserialize, Default)]
#[serde(default)]
pub struct CreateBody {
    /// The page id.
    pub page: Field,
    /// The space (must be the server's).
    pub space: Field,
    /// `selection`, `page` or `block`.
    pub scope: Field,
    /// The first message.
    pub body: Field,
    /// Who writes it (else the server's author).
    pub author: Field,
    /// The anchor ([`AnchorBody`]) of a selection or block comment.
    pub anchor: Field,
    /// A suggested edit `{text}` ([`SuggestionBody`]), selections only.
    pub suggestion: Field,
}

/// A new comment's anchor: `{quote, prefix, suffix, section}` for a selection, `{kind, key,
/// label, section, index}` for a block.
#[derive(Debug, Deserialize, Default)]
#[serde(default)]
struct AnchorBody {
    quote: Field,
    prefix: Field,
    suffix: Field,
    section: Field,
    kind: Field,
    key: Field,
    label: Field,
    index: Field,
}

/// A suggested edit: `{text}`.
#[derive(Debug, Deserialize, Default)]
#[serde(default)]
pub(crate) struct SuggestionBody {
    /// The replacement of the quote.
    pub text: Field,
}

/// The anchor of a new comment, read for its scope (its rules are `ops::create`'s).
pub(super) fn anchor_of(scope: Scope, anchor: &Field) -> Result<Anchor, ApiError> {
    let text = |f: &Field, key: &str| -> Result<Option<String>, ApiError> {
        Ok(f.text(key, usize::MAX)?.map(str::to_string))
    };
    match scope {
        Scope::Page => Ok(Anchor::Page),
        Scope::Selection => {
            let Some(a) = anchor.object::<AnchorBody>() else {
                return Err(ApiError::bad_request(
                    "a selection comment needs an anchor {quote, prefix, suffix, section}",
                ));
            };
            let quote = text(&a.quote, "quote")?
                .filter(|q| !q.trim().is_empty())
                .ok_or_else(|| ApiError::bad_request("anchor.quote must be a non-empty string"))?;
            Ok(Anchor::Selection {
                quote,
                prefix: text(&a.prefix, "prefix")?.unwrap_or_default(),
                suffix: text(&a.suffix, "suffix")?.unwrap_or_default(),
                section: text(&a.section, "section")?,
            })
        }
        Scope::Block => {
            let Some(a) = anchor.object::<AnchorBody>() else {
                return Err(ApiError::bad_request(
                    "a block comment needs an anchor {kind, key, label, section, index}",
                ));
            };
            let kind = text(&a.kind, "kind")?
                .filter(|k| k == "image" || k == "mermaid")
                .ok_or_else(|| {
                    ApiError::bad_request("anchor.kind must be \"image\" or \"mermaid\"")
                })?;
            let key = text(&a.key, "key")?
                .filter(|k| k.starts_with(&format!("{kind}:")) && k.len() > kind.len() + 1)
                .ok_or_else(|| ApiError::bad_request("anchor.key must be \"<kind>:<…>\""))?;
            let index = a.index.value().and_then(Value::as_u64).ok_or_else(|| {
                ApiError::bad_request("anchor.index must be a non-negative integer")
            })?;
            Ok(Anchor::Block {
                kind,
                key,
                label: Some(text(&a.label, "label")?.unwrap_or_default()),
                section: text(&a.section, "section")?,
                index,
            })
        }
    }
}

/// The suggestion of a new comment of `scope`: its text, when there is one.
pub(super) fn suggestion_of(scope: Scope, suggestion: &Field) -> Result<Option<String>, ApiError> {
    if suggestion.value().is_none() {
        return Ok(None);
    }
    match suggestion.object::<SuggestionBody>() {
        Some(sg) if scope == Scope::Selection => Ok(Some(
            sg.text
                .text("text", MAX_FIELD)?
                .ok_or_else(|| ApiError::bad_request("suggestion.text must be a string"))?
                .to_string(),
        )),
        _ => Err(ApiError::bad_request(
            "suggestion must be {text} on a selection comment",
        )),
    }
}

/// `PATCH comments`: the comment (`page`, `id`) and the changes asked for.
#[derive(Debug, Deserialize, Default)]
#[serde(default)]
pub struct PatchBody {
    /// The comment's page.
    pub page: Field,
    /// The comment's id.
    pub id: Field,
    /// `open`, `addressed` or `resolved`.
    pub status: Field,
    /// Held or not (a boolean).
    pub hold: Field,
    /// `null` or `{note, journalEntryId?}` ([`ResolutionBody`]).
    pub resolution: Field,
    /// Who makes the changes (else the server's author).
    pub author: Field,
    /// `{body}`: the first message's new text.
    pub edit: Field,
    /// `{author?, body}`: a reply.
    pub reply: Field,
}

/// A resolution: `{note, journalEntryId?}`.
#[derive(Debug, Deserialize, Default)]
#[serde(default)]
struct ResolutionBody {
    note: Field,
    #[serde(rename = "journalEntryId")]
    journal_entry_id: Field,
}

/// `{body}` of an edit, `{author?, body}` of a reply.
#[derive(Debug, Deserialize, Default)]
#[serde(default)]
struct MessageBody {
    author: Field,
    body: Field,
}

impl PatchBody {
    /// The changes asked for, in the order the original applies them (edit, status,
    /// resolution, hold, reply); an actor named by none is `default_author`.
    pub(super) fn changes(&self, default_author: &str) -> Result<Vec<Change>, ApiError> {
        self.changes_as(default_author, false)
    }

    /// [`PatchBody::changes`] made by `author` whoever the body names (the hub's signed-in
    /// reviewer).
    pub(super) fn changes_by(&self, author: &str) -> Result<Vec<Change>, ApiError> {
        self.changes_as(author, true)
    }

    fn changes_as(&self, default_author: &str, fixed: bool) -> Result<Vec<Change>, ApiError> {
        let status = match self.status.text("status", 32)? {
            None => None,
            Some(s) => Some(Status::parse(s).ok_or_else(|| {
                let [open, addressed, resolved] = Status::ALL.map(Status::as_str);
                ApiError::bad_request(format!(
                    "status must be {open:?}, {addressed:?} or {resolved:?}"
                ))
            })?),
        };
        let hold = match self.hold.value() {
            None => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(_) => return Err(ApiError::bad_request("hold must be a boolean")),
        };
        let resolution = match (
            &self.resolution.0,
            self.resolution.object::<ResolutionBody>(),
        ) {
            (None, _) => None,
            (Some(Value::Null), _) => Some(None),
            (_, Some(r)) => Some(Some(ResolutionNote {
                note: r.note.text("note", MAX_BODY)?.unwrap_or("").to_string(),
                journal: r
                    .journal_entry_id
                    .text("journalEntryId", limits::MAX_ID)?
                    .map(str::to_string),
                by: None,
            })),
            (Some(_), None) => {
                return Err(ApiError::bad_request(
                    "resolution must be null or {note, journalEntryId?}",
                ));
            }
        };
        let actor = match fixed {
            true => default_author.to_string(),
            false => self.author.author(default_author)?,
        };
        let mut changes = Vec::new();
        if self.edit.value().is_some() {
            let Some(e) = self.edit.object::<MessageBody>() else {
                return Err(ApiError::bad_request("edit must be {body}"));
            };
            changes.push(Change::Edit(e.body.body_text("body")?));
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
        if self.reply.value().is_some() {
            let Some(r) = self.reply.object::<MessageBody>() else {
                return Err(ApiError::bad_request("reply must be {author?, body}"));
            };
            let body = r.body.body_text("body")?;
            let author = match fixed {
                true => actor.clone(),
                false => r.author.author(&actor)?,
            };
            changes.push(Change::Reply { author, body });
        }
        Ok(changes)
    }
}

/// A comment named by its page and id: `DELETE comments {page, id}`, and the `page` and `id`
/// of `POST undo`.
#[derive(Debug, Deserialize, Default)]
#[serde(default)]
pub struct CommentBody {
    /// The comment's page.
    pub page: Field,
    /// The comment's id.
    pub id: Field,
}

/// `POST undo {page, id, updatedAt?}`.
#[derive(Debug, Deserialize, Default)]
#[serde(default)]
pub struct UndoBody {
    /// The comment's page.
    pub page: Field,
    /// The comment's id.
    pub id: Field,
    /// The instant the action to take back left the comment at (absent: its deletion).
    #[serde(rename = "updatedAt")]
    pub updated_at: Field,
}

/// `POST apply {id, author?}` (unknown fields refused).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApplyBody {
    /// The comment whose suggestion is applied.
    pub id: String,
    /// Who applies it (else the server's author).
    pub author: Option<String>,
}

impl ApplyBody {
    /// The comment's id, at most 256 bytes.
    pub(super) fn id(&self) -> Result<&str, ApiError> {
        if self.id.len() > 256 {
            return Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "id is too long",
            ));
        }
        Ok(&self.id)
    }

    /// Who applies it: trimmed, `or` when absent or blank.
    pub(super) fn author(&self, or: &str) -> Result<String, ApiError> {
        Field(self.author.clone().map(Value::String)).author(or)
    }
}
