//! A comment's own fields in the compact ("lean") forms a built book carries, and what a build
//! keeps of a resolved comment: those fields written once, when its file is read, so that later
//! builds copy them instead of parsing the file and writing them again.
//!
//! The lean forms (`model::resolve::Lean`) are a comment's stored fields less what the page
//! already says or only re-anchoring needs ([`lean_skips`]), followed by an `anchoring` object
//! the build computes. This module writes the first part; the anchoring is the resolver's.
//!
//! A build reads a resolved comment *condensed* ([`condensed`], the store's
//! [`notabene_store::condense`]): a map of the few fields the build reads itself (id, page,
//! status, scope, times) and its own fields pre-written in the island and list forms with the
//! text that names it ([`Prerendered`]). A build never looks for a resolved comment's anchor,
//! so nothing else of it is read. `comments.json`, the CLI and every write read the files whole.
//!
//! Owns: the lean field rules, [`Prerendered`] and its text in the store's cache, the book's
//! [`BookForms`] and the build's reads of the store ([`BuildRead`]).
//! Calls: `notabene_store` (the comment, the compact JSON writer, the condensed read).

use crate::Result;
use notabene_store::condense::write_cache_text;
use notabene_store::json::{ObjectWriter, parse_str, write_js_compact};
use notabene_store::{
    Comment, Condense, CondensedText, Recent, Scope, SharedText, Snapshot, Status, Store,
};
use serde_json::{Map, Value};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

/// Whether the lean forms leave field `k` (value `v`) of comment `c` out: a default, the
/// book's `space`, the page when the island says it (`page_known`), and the fields the
/// writer of the lean form puts itself (`anchoring`, `url`: ours replace a stored one).
pub fn lean_skips(
    c: &Map<String, Value>,
    k: &str,
    v: &Value,
    space: &str,
    page_known: bool,
) -> bool {
    match k {
        "space" => v.as_str() == Some(space),
        "page" => page_known,
        "hold" => *v == Value::Bool(false),
        "resolution" => v.is_null(),
        "updatedAt" => c.get("createdAt") == Some(v),
        "anchoring" | "url" => true,
        _ => false,
    }
}

/// Writes the stored fields of comment `c` into the lean object `w`: all but those
/// [`lean_skips`] leaves out, the anchor without its `prefix` and `suffix`, and, with
/// `first_message_only`, the thread as its first message followed by `replies` (how many
/// follow it) when it has more than one.
pub fn write_own_fields(
    w: &mut ObjectWriter,
    c: &Map<String, Value>,
    space: &str,
    page_known: bool,
    first_message_only: bool,
) {
    for (k, v) in c {
        if lean_skips(c, k, v, space, page_known) {
            continue;
        }
        match (k.as_str(), v) {
            ("anchor", Value::Object(a)) => {
                let mut aw = ObjectWriter::new(w.key(k));
                for (ak, av) in a {
                    if ak != "prefix" && ak != "suffix" {
                        aw.member(ak, av);
                    }
                }
                aw.end();
            }
            ("thread", Value::Array(t)) if first_message_only && t.len() > 1 => {
                write_js_compact(&t[..1], w.key(k));
                w.member("replies", &(t.len() - 1));
            }
            _ => write_js_compact(v, w.key(k)),
        }
    }
}

/// A resolved comment's own fields pre-written for the book's `space`: the island form in a
/// chapter's island (without `page`), the list form in the /comments list (the thread cut to
/// its first message). Each is the lean object opened and its fields written, not closed: the
/// resolver appends the `anchoring` it computes ([`ObjectWriter::resume`]). The naming text
/// names the comment where a page refers to it (its quote, its block's label, else its first
/// message).
///
/// All three live in one text, the one the store's cache keeps ([`CondensedText::to_text`]):
/// a later build's condensed comment keeps its piece of the cache file, not a copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prerendered {
    /// The book's space the fields were written for (a field `space` equal to it is left out),
    /// shared by the comments of one read.
    space: Arc<str>,
    /// The naming text as a JSON string, the island form and the list form, tab-separated
    /// (compact JSON escapes a tab or a newline inside each).
    text: SharedText,
    /// Where the island form is in `text`.
    island: Range<usize>,
    /// Where the list form is in `text`.
    list: Range<usize>,
    /// The naming text.
    naming: Naming,
}

/// Where a [`Prerendered`]'s naming text is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Naming {
    /// In its text, between the JSON string's quotes (the string holds no escape).
    Within(Range<usize>),
    /// Unescaped from its JSON string.
    Own(String),
}

impl Prerendered {
    /// The fields of `c` written for `space` (`None` only if the text written could not be read
    /// back, which the writer never gives: the comment is then read whole).
    fn written(c: &Map<String, Value>, space: Arc<str>) -> Option<Prerendered> {
        let mut out = Vec::with_capacity(1024);
        Prerendered::write(c, &space, &mut out);
        Prerendered::from_text(SharedText::new(String::from_utf8(out).ok()?), space)
    }

    /// Writes the text of the fields of `c` written for `space` ([`CondensedText::to_text`])
    /// at the end of `out`.
    fn write(c: &Map<String, Value>, space: &str, out: &mut Vec<u8>) {
        write_js_compact(naming(c), out);
        for (page_known, first_message_only) in [(true, false), (false, true)] {
            out.push(b'\t');
            let mut w = ObjectWriter::new(out);
            write_own_fields(&mut w, c, space, page_known, first_message_only);
        }
    }

    /// The forms in `text`, what [`CondensedText::to_text`] wrote (the naming text as a JSON
    /// string, the island and list forms, tab-separated), located for `space`; `None` when it
    /// is not that.
    fn from_text(text: SharedText, space: Arc<str>) -> Option<Prerendered> {
        let (name, rest) = text.as_str().split_once('\t')?;
        let (island, list) = rest.split_once('\t')?;
        if list.contains('\t') || !island.starts_with('{') {
            return None;
        }
        let inner = name.strip_prefix('"').and_then(|n| n.strip_suffix('"'));
        let naming = match inner {
            // A JSON string without escapes (and so without quotes or control characters
            // inside) says its text as it is.
            Some(inner) if !inner.contains(|c: char| c == '"' || c == '\\' || c < ' ') => {
                Naming::Within(1..1 + inner.len())
            }
            _ => Naming::Own(parse_str(name)?),
        };
        let island_at = name.len() + 1;
        let list_at = island_at + island.len() + 1;
        let (island, list) = (
            island_at..island_at + island.len(),
            list_at..list_at + list.len(),
        );
        Some(Prerendered {
            space,
            text,
            island,
            list,
            naming,
        })
    }

    /// The book's space the fields were written for.
    pub fn space(&self) -> &str {
        &self.space
    }
    /// The island form's opening and fields.
    pub fn island(&self) -> &str {
        &self.text.as_str()[self.island.clone()]
    }
    /// The list form's opening and fields.
    pub fn list(&self) -> &str {
        &self.text.as_str()[self.list.clone()]
    }
    /// The text naming the comment ([`naming`]).
    pub fn naming(&self) -> &str {
        match &self.naming {
            Naming::Within(at) => &self.text.as_str()[at.clone()],
            Naming::Own(text) => text,
        }
    }
}

/// In the store's cache: the naming text (a JSON string), the island and list forms,
/// tab-separated (compact JSON escapes a tab or a newline inside each).
impl CondensedText for Prerendered {
    fn to_text(&self) -> String {
        self.text.as_str().to_string()
    }
}

/// The text that names comment `c` where a page refers to it: its anchor's quote (or its
/// block's label), else its first message's body; empty when it has none.
pub fn naming(c: &Map<String, Value>) -> &str {
    let anchor = c.get("anchor").and_then(Value::as_object);
    anchor
        .and_then(|a| a.get("quote").or_else(|| a.get("label")))
        .and_then(Value::as_str)
        .or_else(|| {
            c.get("thread")
                .and_then(|t| t.get(0))
                .and_then(|m| m.get("body"))
                .and_then(Value::as_str)
        })
        .unwrap_or_default()
}

/// The fields a condensed comment keeps in its map: what a build reads of a resolved comment
/// besides its lean forms and its naming text (the order, the summary's counts, the /comments
/// sort).
const KEPT_FIELDS: &[&str] = &[
    "id",
    "space",
    "page",
    "scope",
    "status",
    "createdAt",
    "updatedAt",
];

/// What a build of a book whose space is `space` keeps of `c`, when it condenses it: a
/// resolved comment with an id whose anchor is not a page's (a page comment is anchored even
/// when resolved). `None` for every other comment, which a build reads whole.
pub fn condensed(c: &Comment, space: &str) -> Option<Comment> {
    condensed_for(c, &Arc::from(space))
}

/// [`condensed`] with the space shared.
fn condensed_for(c: &Comment, space: &Arc<str>) -> Option<Comment> {
    if !condenses(c) {
        return None;
    }
    let map = c.as_map();
    let kept: Map<String, Value> = kept_fields(map)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let forms = Prerendered::written(map, Arc::clone(space))?;
    Some(Comment::condensed(kept, Arc::new(forms)))
}

/// Whether a build condenses `c` ([`condensed`]).
fn condenses(c: &Comment) -> bool {
    c.status() == Some(Status::Resolved) && c.id().is_some() && c.scope() != Some(Scope::Page)
}

/// The fields of `map` a condensed comment keeps ([`KEPT_FIELDS`]), in their order.
fn kept_fields(map: &Map<String, Value>) -> impl Iterator<Item = (&String, &Value)> {
    map.iter()
        .filter(|(k, _)| KEPT_FIELDS.contains(&k.as_str()))
}

/// How a build of the book whose space is `space` condenses the comments it reads
/// ([`condensed`]), for the store's condensed read ([`Store::load_condensed`]).
#[derive(Debug, Clone)]
pub struct BookForms {
    /// The book's space, shared by the comments condensed.
    space: Arc<str>,
}

impl BookForms {
    /// The forms of a book whose space is `space`.
    pub fn new(space: &str) -> BookForms {
        BookForms {
            space: Arc::from(space),
        }
    }
}

impl Condense for BookForms {
    fn variant(&self) -> &str {
        &self.space
    }

    fn condense(&self, comment: &Comment) -> Option<Comment> {
        condensed_for(comment, &self.space)
    }

    /// Written straight from the comment: its kept fields and [`Prerendered`]'s text, without
    /// a copy of either.
    fn cache_text(&self, comment: &Comment) -> Option<SharedText> {
        if !condenses(comment) {
            return None;
        }
        let map = comment.as_map();
        write_cache_text(&self.space, kept_fields(map), |out| {
            Prerendered::write(map, &self.space, out)
        })
    }

    fn restore(&self, text: SharedText) -> Option<Arc<dyn CondensedText>> {
        Prerendered::from_text(text, Arc::clone(&self.space))
            .map(|p| Arc::new(p) as Arc<dyn CondensedText>)
    }
}

/// The pre-written lean forms of a comment a build read condensed.
pub trait PrerenderedOf {
    /// Its [`Prerendered`] forms (`None`: the comment is whole).
    fn prerendered(&self) -> Option<&Prerendered>;
}

impl PrerenderedOf for Comment {
    fn prerendered(&self) -> Option<&Prerendered> {
        let prepared: &dyn std::any::Any = self.condensed_text()?;
        prepared.downcast_ref()
    }
}

/// A build's reads of the store, for a book whose space is `space`: resolved comments
/// condensed with their lean forms ([`BookForms`]).
pub trait BuildRead {
    /// [`Store::load`] for a build: through the store's cache ([`Store::load_condensed`]).
    fn load_for_build(&self, space: &str) -> Result<Snapshot>;
    /// [`BuildRead::load_for_build`] with the cache directory given (`None`: no cache).
    fn load_for_build_in(&self, cache_dir: Option<PathBuf>, space: &str) -> Result<Snapshot>;
    /// [`BuildRead::load_for_build`] for a caller that schedules around it
    /// ([`Store::load_condensed_seeing`]): the cache read once `before_cache` returns, `seen`
    /// shown the store as listed (before any file is read when `seen_first`), the cache's
    /// update handed back.
    fn load_for_build_seeing(
        &self,
        space: &str,
        before_cache: &(dyn Fn() + Sync),
        seen: &mut dyn FnMut(Option<&notabene_store::ListingState<'_>>),
        seen_first: bool,
    ) -> Result<(Snapshot, notabene_store::CacheUpdate)>;
    /// [`BuildRead::load_for_build`] for a long-lived process, through what its last build
    /// read ([`Store::load_condensed_recent`]).
    fn load_for_build_recent(&self, space: &str, recent: &Recent) -> Result<Snapshot>;
}

impl BuildRead for Store {
    fn load_for_build(&self, space: &str) -> Result<Snapshot> {
        self.load_condensed(&BookForms::new(space))
    }

    fn load_for_build_seeing(
        &self,
        space: &str,
        before_cache: &(dyn Fn() + Sync),
        seen: &mut dyn FnMut(Option<&notabene_store::ListingState<'_>>),
        seen_first: bool,
    ) -> Result<(Snapshot, notabene_store::CacheUpdate)> {
        let forms = BookForms::new(space);
        let dir = notabene_core::disk::cache_dir();
        self.load_condensed_seeing(dir, &forms, before_cache, seen, seen_first)
    }

    fn load_for_build_in(&self, cache_dir: Option<PathBuf>, space: &str) -> Result<Snapshot> {
        self.load_condensed_in(cache_dir, &BookForms::new(space))
    }

    fn load_for_build_recent(&self, space: &str, recent: &Recent) -> Result<Snapshot> {
        self.load_condensed_recent(&BookForms::new(space), recent)
    }
}

#[cfg(test)]
mod tests;
