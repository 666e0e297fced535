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
//! A later build reads thousands of condensed comments from one cache file: each keeps its
//! piece of that file's text ([`SharedText`]) instead of a copy, and its kept fields are read
//! from there ([`crate::comment`]'s line fields) until someone asks for them as a map.
//!
//! Owns: the [`Condense`] and [`CondensedText`] traits, [`SharedText`], a condensed comment's
//! cache text.
//! Calls: `json` (the compact writer) and the [`Comment`] type.

use crate::comment::{Comment, LineFields};
use crate::json::{ObjectWriter, parse_str, write_js_compact};
use serde_json::Value;
use std::ops::Range;
use std::sync::Arc;

/// A piece of a text that many values share: the whole text (the store's cache file, read
/// once) and where the piece is in it. Two pieces are equal when their texts are.
#[derive(Debug, Clone)]
pub struct SharedText {
    whole: Arc<String>,
    at: Range<usize>,
}

impl SharedText {
    /// All of `text`.
    pub fn new(text: String) -> SharedText {
        let at = 0..text.len();
        SharedText {
            whole: Arc::new(text),
            at,
        }
    }

    /// The piece of `whole` at `at` (which must lie on character boundaries in it).
    pub(crate) fn within(whole: &Arc<String>, at: Range<usize>) -> SharedText {
        SharedText {
            whole: Arc::clone(whole),
            at,
        }
    }

    /// The piece's text.
    pub fn as_str(&self) -> &str {
        &self.whole[self.at.clone()]
    }

    /// The part of this piece at `at` (relative to it, on character boundaries).
    pub fn slice(&self, at: Range<usize>) -> SharedText {
        SharedText {
            whole: Arc::clone(&self.whole),
            at: self.at.start + at.start..self.at.start + at.end,
        }
    }
}

impl PartialEq for SharedText {
    fn eq(&self, other: &SharedText) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for SharedText {}

/// How a build condenses the comments it reads but will not anchor: given by the caller of
/// [`Store::load_condensed`](crate::Store::load_condensed).
pub trait Condense: Sync {
    /// What the condensed texts depend on besides the comment (say, the book's space): a
    /// condensed comment the cache kept for another variant is a miss, and its file is read
    /// again. Must not contain a newline.
    fn variant(&self) -> &str;

    /// `comment` condensed ([`Comment::condensed`]), or `None` to keep it whole.
    fn condense(&self, comment: &Comment) -> Option<Comment>;

    /// `comment` condensed, in the text the store's cache keeps of it ([`to_cache_text`]): what
    /// a build reads the condensed comment back from ([`from_cache_text`]), so that the comment
    /// and its cache entry share one text. `None` when it is kept whole, or the text would
    /// hold a newline. A condenser that writes it straight from the comment, without the
    /// condensed comment in between ([`write_cache_text`]), overrides this; it must give the
    /// same text.
    fn cache_text(&self, comment: &Comment) -> Option<SharedText> {
        to_cache_text(&self.condense(comment)?, self.variant())
    }

    /// The condensed text back from what its [`CondensedText::to_text`] wrote for this variant
    /// (a piece of the cache file's text, which the result may keep instead of a copy); `None`
    /// when it is not one (the cache entry is then a miss).
    fn restore(&self, text: SharedText) -> Option<Arc<dyn CondensedText>>;
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
pub fn to_cache_text(c: &Comment, variant: &str) -> Option<SharedText> {
    let text = c.condensed_text()?.to_text();
    write_cache_text(variant, c.as_map().iter(), |out| {
        out.extend_from_slice(text.as_bytes())
    })
}

/// [`to_cache_text`] of a condensed comment written from its parts: `variant`, the fields it
/// keeps (`kept`, in their order) and its condensed text, which `text` writes at the end of the
/// buffer it is given. `None` when the variant or the text holds a newline.
pub fn write_cache_text<'a>(
    variant: &str,
    kept: impl Iterator<Item = (&'a String, &'a Value)>,
    text: impl FnOnce(&mut Vec<u8>),
) -> Option<SharedText> {
    if variant.contains('\n') {
        return None;
    }
    let mut out = Vec::with_capacity(1024);
    write_js_compact(variant, &mut out);
    out.push(b'\t');
    let mut fields = ObjectWriter::new(&mut out);
    for (k, v) in kept {
        fields.member(k, v);
    }
    fields.end();
    out.push(b'\t');
    let text_at = out.len();
    text(&mut out);
    if out[text_at..].contains(&b'\n') {
        return None;
    }
    String::from_utf8(out).ok().map(SharedText::new)
}

/// The condensed comment [`to_cache_text`] wrote (`text`, a piece of the cache file), when it
/// was written for the variant of `forms` (another variant's is a miss).
pub fn from_cache_text(text: &SharedText, forms: &dyn Condense) -> Option<Comment> {
    let line = text.as_str();
    let variant_end = line.find('\t')?;
    if parse_str(&line[..variant_end])? != forms.variant() {
        return None;
    }
    let map_at = variant_end + 1;
    let map_end = map_at + line[map_at..].find('\t')?;
    let condensed = forms.restore(text.slice(map_end + 1..line.len()))?;
    let map_text = text.slice(map_at..map_end);
    if let Some(fields) = string_fields(map_text.as_str())
        && let Some(fields) = LineFields::new(map_text, &fields)
    {
        return Some(Comment::condensed_line(fields, condensed));
    }
    match serde_json::from_str(&line[map_at..map_end]).ok()? {
        Value::Object(map) => Some(Comment::condensed(map, condensed)),
        _ => None,
    }
}

/// Where each key and value is in compact JSON `text` (both unquoted), when it is an object of
/// strings none of which holds an escape (what a condensed comment's map nearly always is):
/// read without the general parser, nor a copy of each string (a build reads thousands).
/// `None` for anything else, which the general parser reads.
fn string_fields(text: &str) -> Option<Vec<(Range<usize>, Range<usize>)>> {
    let mut fields = Vec::with_capacity(8);
    // One quoted string, without escapes or control characters, at `at`: its inside.
    let string = |at: usize| -> Option<Range<usize>> {
        let inner = text.get(at..)?.strip_prefix('"')?;
        // Byte by byte: the three are ASCII, and no byte of a longer character is below 0x80.
        let end = (inner.bytes()).position(|b| b == b'"' || b == b'\\' || b < b' ')?;
        (inner.as_bytes()[end] == b'"').then_some(at + 1..at + 1 + end)
    };
    let mut at = 1;
    if !text.starts_with('{') || !text.ends_with('}') {
        return None;
    }
    let end = text.len() - 1;
    while at < end {
        let key = string(at)?;
        if text.as_bytes().get(key.end + 1) != Some(&b':') {
            return None;
        }
        let value = string(key.end + 2)?;
        at = value.end + 1;
        match text.as_bytes()[at] {
            b',' if at + 1 < end => at += 1,
            b'}' if at == end => {}
            _ => return None,
        }
        // A duplicate key is left to the general parser (which keeps the last value), and so
        // is a map of more fields than a condensed comment keeps (each is checked against the
        // others).
        if fields.len() == LineFields::MAX {
            return None;
        }
        let name = &text[key.clone()];
        if fields
            .iter()
            .any(|(k, _): &(Range<usize>, _)| text[k.clone()] == *name)
        {
            return None;
        }
        fields.push((key, value));
    }
    (at == end).then_some(fields)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::Status;
    use pretty_assertions::assert_eq;
    use serde_json::{Map, json};

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
        fn restore(&self, text: SharedText) -> Option<Arc<dyn CondensedText>> {
            let text = text.as_str();
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
        let shared = to_cache_text(&condensed, "docs").unwrap();
        let text = shared.as_str();
        assert!(!text.contains('\n'));
        // The store's default for a condenser's cache text is this one.
        assert_eq!(Forms("docs").cache_text(&c).unwrap().as_str(), text);
        let read = |t: &str, forms: &Forms| from_cache_text(&SharedText::new(t.to_string()), forms);
        let back = read(text, &Forms("docs")).unwrap();
        assert_eq!(back, condensed);
        // Its fields read from the line are the map's.
        assert_eq!(
            (back.id(), back.status()),
            (Some("c_1"), Some(Status::Resolved))
        );
        assert_eq!(back.as_map(), condensed.as_map());
        assert_eq!(read(text, &Forms("other")), None);
        // A map that is not one is no comment; one the quick reader leaves is read by serde.
        let head: Vec<&str> = text.splitn(3, '\t').collect();
        let bad = format!("{}\t[]\t{}", head[0], head[2]);
        assert_eq!(read(&bad, &Forms("docs")), None);
        let escaped = format!("{}\t{{\"id\":\"c\\u005f1\"}}\t{}", head[0], head[2]);
        assert_eq!(read(&escaped, &Forms("docs")).unwrap().id(), Some("c_1"));
        assert_eq!(to_cache_text(&c, "docs"), None, "a whole comment");
    }

    #[test]
    fn the_quick_map_reader_reads_what_serde_reads_or_leaves_it() {
        let serde = |t: &str| match serde_json::from_str::<Value>(t) {
            Ok(Value::Object(m)) => Some(m),
            _ => None,
        };
        let string_map = |t: &str| {
            string_fields(t).map(|fields| {
                (fields.into_iter())
                    .map(|(k, v)| (t[k].to_string(), Value::String(t[v].to_string())))
                    .collect::<Map<String, Value>>()
            })
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
