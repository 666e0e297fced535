//! Condensed comments: what a build keeps of a comment it reads but will not anchor, and their
//! text in the store's cache.
//!
//! The caller of [`Store::load_condensed`](crate::Store::load_condensed) says, through a
//! [`Condense`], which comments it wants condensed and what to keep of each: a few of its fields
//! (a map) and a text it makes from the whole comment ([`CondensedText`]). The store keeps both,
//! and its cache keeps them as one line, so that a later build takes them from there instead of
//! parsing the file and making the text again. What the text says is the caller's: the store
//! writes it and reads it back without looking inside.
//!
//! Owns: the [`Condense`] and [`CondensedText`] traits, a condensed comment's cache text.
//! Calls: `json` (the compact writer) and the [`Comment`] type.

use crate::comment::Comment;
use crate::json::{parse_str, write_js_compact};
use serde_json::{Map, Value};
use std::sync::Arc;

/// How a build condenses the comments it reads but will not anchor: given by the caller of
/// [`Store::load_condensed`](crate::Store::load_condensed).
pub trait Condense: Sync {
    /// What the condensed texts depend on besides the comment (say, the book's space): a
    /// condensed comment the cache kept for another variant is a miss, and its file is read
    /// again. Must not contain a newline.
    fn variant(&self) -> &str;

    /// `comment` condensed ([`Comment::condensed`]), or `None` to keep it whole.
    fn condense(&self, comment: &Comment) -> Option<Comment>;

    /// The condensed text back from what its [`CondensedText::to_text`] wrote for this variant;
    /// `None` when it is not one (the cache entry is then a miss).
    fn restore(&self, text: &str) -> Option<Arc<dyn CondensedText>>;
}

/// The text a [`Condense`] made of a whole comment, kept with the condensed comment
/// ([`Comment::condensed_text`]). Its caller gets its own type back with `Any`'s downcast.
pub trait CondensedText: std::any::Any + Send + Sync + std::fmt::Debug {
    /// Its text as the store's cache keeps it, which [`Condense::restore`] reads back. A text
    /// holding a newline is not cached.
    fn to_text(&self) -> String;
}

/// A condensed comment as the store's cache keeps it: one line's value, without raw newline
/// (compact JSON escapes it): the variant, the kept fields and the condensed text,
/// tab-separated. `None` for a comment that is not condensed or a text with a newline.
pub(crate) fn to_cache_text(c: &Comment, variant: &str) -> Option<String> {
    let text = c.condensed_text()?.to_text();
    if text.contains('\n') || variant.contains('\n') {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() + 256);
    write_js_compact(variant, &mut out);
    out.push(b'\t');
    write_js_compact(c.as_map(), &mut out);
    out.push(b'\t');
    out.extend_from_slice(text.as_bytes());
    String::from_utf8(out).ok()
}

/// The condensed comment [`to_cache_text`] wrote, when it was written for the variant of
/// `forms` (another variant's is a miss).
pub(crate) fn from_cache_text(text: &str, forms: &dyn Condense) -> Option<Comment> {
    let mut parts = text.splitn(3, '\t');
    if parse_str(parts.next()?)? != forms.variant() {
        return None;
    }
    let map_text = parts.next()?;
    let map = match string_map(map_text) {
        Some(map) => map,
        None => match serde_json::from_str(map_text).ok()? {
            Value::Object(map) => map,
            _ => return None,
        },
    };
    Some(Comment::condensed(map, forms.restore(parts.next()?)?))
}

/// The map of compact JSON `text` when it is an object of strings none of which holds an
/// escape (what a condensed comment's map nearly always is), read without the general parser
/// (a build reads thousands); `None` for anything else, which the general parser reads.
fn string_map(text: &str) -> Option<Map<String, Value>> {
    let mut rest = text.strip_prefix('{')?.strip_suffix('}')?;
    let mut map = Map::with_capacity(8);
    // One quoted string, without escapes, at the start of `rest`.
    fn string<'a>(rest: &mut &'a str) -> Option<&'a str> {
        let inner = rest.strip_prefix('"')?;
        let end = inner.find(['"', '\\'])?;
        if inner.as_bytes()[end] != b'"' {
            return None;
        }
        *rest = &inner[end + 1..];
        Some(&inner[..end])
    }
    while !rest.is_empty() {
        let key = string(&mut rest)?;
        rest = rest.strip_prefix(':')?;
        let value = string(&mut rest)?;
        if rest.starts_with(',') {
            rest = &rest[1..];
            if rest.is_empty() {
                return None;
            }
        } else if !rest.is_empty() {
            return None;
        }
        // A duplicate key is left to the general parser (which keeps the last value).
        if map
            .insert(key.to_string(), Value::String(value.to_string()))
            .is_some()
        {
            return None;
        }
    }
    // Control characters must be escaped in JSON: one here means this is not JSON.
    map.iter()
        .all(|(k, v)| {
            !k.contains(|c: char| c < ' ')
                && v.as_str().is_some_and(|s| !s.contains(|c: char| c < ' '))
        })
        .then_some(map)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::Status;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    /// A condenser for the tests: resolved comments keep their id and status, and their
    /// condensed text is the variant and the whole comment's compact JSON.
    pub(crate) struct Forms(pub(crate) &'static str);

    #[derive(Debug)]
    struct Whole(String);

    impl CondensedText for Whole {
        fn to_text(&self) -> String {
            self.0.clone()
        }
    }

    impl Condense for Forms {
        fn variant(&self) -> &str {
            self.0
        }
        fn condense(&self, c: &Comment) -> Option<Comment> {
            if c.status() != Some(Status::Resolved) {
                return None;
            }
            let kept = c
                .as_map()
                .iter()
                .filter(|(k, _)| *k == "id" || *k == "status")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let text = format!("{}\t{}", self.0, Value::Object(c.as_map().clone()));
            Some(Comment::condensed(kept, Arc::new(Whole(text))))
        }
        fn restore(&self, text: &str) -> Option<Arc<dyn CondensedText>> {
            text.starts_with(&format!("{}\t", self.0))
                .then(|| Arc::new(Whole(text.to_string())) as Arc<dyn CondensedText>)
        }
    }

    #[test]
    fn the_cache_text_gives_the_same_condensed_comment_for_its_variant_only() {
        let c = Comment::from_value(json!({
            "id": "c_1", "status": "resolved", "body": "a\tb\nc", "n": [1, 2.5]
        }));
        let condensed = Forms("docs").condense(&c).unwrap();
        let text = to_cache_text(&condensed, "docs").unwrap();
        assert!(!text.contains('\n'));
        assert_eq!(from_cache_text(&text, &Forms("docs")), Some(condensed));
        assert_eq!(from_cache_text(&text, &Forms("other")), None);
        // A map that is not one is no comment.
        let head: Vec<&str> = text.splitn(3, '\t').collect();
        let bad = format!("{}\t[]\t{}", head[0], head[2]);
        assert_eq!(from_cache_text(&bad, &Forms("docs")), None);
        assert_eq!(to_cache_text(&c, "docs"), None, "a whole comment");
    }

    #[test]
    fn the_quick_map_reader_reads_what_serde_reads_or_leaves_it() {
        let serde = |t: &str| match serde_json::from_str::<Value>(t) {
            Ok(Value::Object(m)) => Some(m),
            _ => None,
        };
        for t in [
            r#"{}"#,
            r#"{"id":"c_1","page":"a/b","status":"resolved"}"#,
            r#"{"id":"é ✓ 𝄞","x":""}"#,
        ] {
            assert_eq!(string_map(t), serde(t), "{t}");
            assert!(string_map(t).is_some(), "{t}");
        }
        // Escapes, other values, duplicates and what is not JSON are left to serde.
        for t in [
            r#"{"id":"c\"1"}"#,
            r#"{"id":"c\u00e91"}"#,
            r#"{"n":1}"#,
            r#"{"a":"1","a":"2"}"#,
            r#"{"a":"1",}"#,
            r#"{"a":"1""b":"2"}"#,
            r#"{"a":"1"} "#,
            "{\"a\":\"\t\"}",
            r#"{"a":"1"#,
        ] {
            assert_eq!(string_map(t), None, "{t}");
        }
    }
}
