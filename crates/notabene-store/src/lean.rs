//! A comment's own fields in the compact ("lean") forms the HTML carries, and the build's thin
//! record of a resolved comment: those fields written once, when its file is read, so that
//! later builds copy them instead of parsing the file and writing them again.
//!
//! The lean forms (`model::resolve::Lean`) are a comment's stored fields less what the page
//! already says or only re-anchoring needs ([`lean_skips`]), followed by an `anchoring` object
//! the build computes. This module writes the first part; the anchoring is the resolver's.
//!
//! A *thin* comment ([`thin`]) is a resolved comment as a build needs it: a map of the few
//! fields the build reads itself (id, page, status, scope, times, the quote or first message
//! that names it) and its own fields pre-written in the island and list forms
//! ([`Prerendered`]). A build never looks for a resolved comment's anchor, so nothing else of
//! it is read. `comments.json`, the CLI and every write read the files whole.
//!
//! Owns: the lean field rules, the thin record and its text form for the store's cache.
//! Calls: `json` (the compact writer) of this module's parent.

use super::comment::{Comment, Scope, Status};
use super::json::{ObjectWriter, write_js_compact};
use serde_json::{Map, Value};

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

/// A resolved comment's own fields pre-written for the book's `space`: `island` in a
/// chapter's island (without `page`), `list` in the /comments list (the thread cut to its
/// first message). Each is the lean object opened and its fields written, not closed: the
/// resolver appends the `anchoring` it computes ([`ObjectWriter::resume`]). `naming` is the
/// text that names the comment where a page refers to it (its quote, its block's label, else
/// its first message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prerendered {
    /// The book's space the fields were written for (a field `space` equal to it is left out).
    pub space: String,
    /// The island form's opening and fields.
    pub island: String,
    /// The list form's opening and fields.
    pub list: String,
    /// The text naming the comment ([`naming`]).
    pub naming: String,
}

impl Prerendered {
    /// The fields of `c` written for `space`.
    pub fn of(c: &Map<String, Value>, space: &str) -> Prerendered {
        let open = |page_known: bool, first_message_only: bool| {
            let mut out = Vec::with_capacity(512);
            let mut w = ObjectWriter::new(&mut out);
            write_own_fields(&mut w, c, space, page_known, first_message_only);
            String::from_utf8(out).expect("serde_json writes UTF-8")
        };
        Prerendered {
            space: space.to_string(),
            island: open(true, false),
            list: open(false, true),
            naming: naming(c).to_string(),
        }
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

/// The fields a thin comment keeps in its map: what a build reads of a resolved comment
/// besides its lean forms and its naming text (the order, the summary's counts, the /comments
/// sort).
const THIN_KEYS: &[&str] = &[
    "id",
    "space",
    "page",
    "scope",
    "status",
    "createdAt",
    "updatedAt",
];

/// The build's thin record of `c` for a book whose space is `space`, when `c` is one: a
/// resolved comment with an id whose anchor is not a page's (a page comment is anchored even
/// when resolved). `None` for every other comment, which a build reads whole.
pub fn thin(c: &Comment, space: &str) -> Option<Comment> {
    if c.status() != Some(Status::Resolved) || c.id().is_none() || c.scope() == Some(Scope::Page) {
        return None;
    }
    let map = c.as_map();
    let kept: Map<String, Value> = map
        .iter()
        .filter(|(k, _)| THIN_KEYS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Some(Comment::thin(kept, Prerendered::of(map, space)))
}

/// A thin comment as the store's cache keeps it: one line's value, without raw tab or newline
/// inside its parts (compact JSON escapes both): `space`, the map, the naming text, the island
/// and list forms, tab-separated.
pub fn to_cache_text(c: &Comment) -> Option<String> {
    let p = c.prerendered()?;
    let mut out = Vec::with_capacity(p.island.len() + p.list.len() + 256);
    write_js_compact(&p.space, &mut out);
    out.push(b'\t');
    write_js_compact(c.as_map(), &mut out);
    out.push(b'\t');
    write_js_compact(&p.naming, &mut out);
    out.push(b'\t');
    out.extend_from_slice(p.island.as_bytes());
    out.push(b'\t');
    out.extend_from_slice(p.list.as_bytes());
    String::from_utf8(out).ok()
}

/// A JSON string's value: its inside as it is when it holds no escape, else parsed.
fn json_str(text: &str) -> Option<String> {
    let inside = text.strip_prefix('"')?.strip_suffix('"')?;
    if inside.contains(['\\', '"']) {
        serde_json::from_str(text).ok()
    } else {
        Some(inside.to_string())
    }
}

/// The map of compact JSON `text` when it is an object of strings none of which holds an
/// escape (what a thin record's map nearly always is), read without the general parser (a
/// build reads thousands); `None` for anything else, which the general parser reads.
fn string_map(text: &str) -> Option<Map<String, Value>> {
    let mut rest = text.strip_prefix('{')?.strip_suffix('}')?;
    let mut map = Map::with_capacity(THIN_KEYS.len());
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

/// The thin comment [`to_cache_text`] wrote, when it was written for `space` (another space's
/// record is a miss: its fields were left out against another book's space).
pub fn from_cache_text(text: &str, space: &str) -> Option<Comment> {
    let mut parts = text.splitn(5, '\t');
    let written_for = json_str(parts.next()?)?;
    if written_for != space {
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
    let naming = json_str(parts.next()?)?;
    let island = parts.next()?;
    let list = parts.next()?;
    if island.contains('\t') || list.contains('\t') || !island.starts_with('{') {
        return None;
    }
    Some(Comment::thin(
        map,
        Prerendered {
            space: written_for,
            island: island.to_string(),
            list: list.to_string(),
            naming,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn resolved() -> Comment {
        Comment::from_value(json!({
            "id": "c_1", "space": "docs", "page": "guide/setup", "scope": "selection",
            "anchor": { "quote": "the \"quick\"\tfox", "prefix": "see ", "suffix": " run", "hint": 3 },
            "suggestion": { "quote": "quick", "text": "slow", "applied": { "at": "t" } },
            "thread": [
                { "author": "ana", "body": "line one\nline two", "ts": "2026-01-01T00:00:00.000Z" },
                { "author": "bo", "body": "done", "ts": "2026-01-02T00:00:00.000Z" }
            ],
            "status": "resolved", "hold": false, "resolution": { "by": "bo" },
            "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-02T00:00:00.000Z",
            "x-custom": [1, 2.5, null]
        }))
    }

    #[test]
    fn a_thin_comment_keeps_what_a_build_reads_and_its_fields_prewritten() {
        let c = resolved();
        let t = thin(&c, "docs").unwrap();
        assert_eq!(
            serde_json::to_value(t.as_map()).unwrap(),
            json!({
                "id": "c_1", "space": "docs", "page": "guide/setup", "scope": "selection",
                "status": "resolved",
                "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-02T00:00:00.000Z"
            })
        );
        let p = t.prerendered().unwrap();
        assert_eq!(p.naming, "the \"quick\"\tfox");
        assert_eq!(
            p.island,
            r#"{"id":"c_1","scope":"selection","anchor":{"quote":"the \"quick\"\tfox","hint":3},"suggestion":{"quote":"quick","text":"slow","applied":{"at":"t"}},"thread":[{"author":"ana","body":"line one\nline two","ts":"2026-01-01T00:00:00.000Z"},{"author":"bo","body":"done","ts":"2026-01-02T00:00:00.000Z"}],"status":"resolved","resolution":{"by":"bo"},"createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-02T00:00:00.000Z","x-custom":[1,2.5,null]"#
        );
        assert_eq!(
            p.list,
            r#"{"id":"c_1","page":"guide/setup","scope":"selection","anchor":{"quote":"the \"quick\"\tfox","hint":3},"suggestion":{"quote":"quick","text":"slow","applied":{"at":"t"}},"thread":[{"author":"ana","body":"line one\nline two","ts":"2026-01-01T00:00:00.000Z"}],"replies":1,"status":"resolved","resolution":{"by":"bo"},"createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-02T00:00:00.000Z","x-custom":[1,2.5,null]"#
        );
        // Another book's space is written out.
        assert!(
            thin(&c, "other")
                .unwrap()
                .prerendered()
                .unwrap()
                .island
                .starts_with(r#"{"id":"c_1","space":"docs","#)
        );
    }

    #[test]
    fn only_resolved_comments_with_an_id_off_a_whole_page_are_thin() {
        let with = |k: &str, v: Value| {
            let mut c = resolved();
            c.set(k, v);
            c
        };
        assert!(thin(&resolved(), "docs").is_some());
        assert!(thin(&with("status", json!("open")), "docs").is_none());
        assert!(thin(&with("status", json!("addressed")), "docs").is_none());
        assert!(thin(&with("status", json!("Resolved")), "docs").is_none());
        assert!(thin(&with("scope", json!("page")), "docs").is_none());
        assert!(thin(&with("id", json!("")), "docs").is_none());
        assert!(thin(&with("id", json!(7)), "docs").is_none());
        assert!(thin(&with("scope", json!("element")), "docs").is_some());
    }

    #[test]
    fn the_cache_text_gives_the_same_thin_comment_for_its_space_only() {
        let t = thin(&resolved(), "docs").unwrap();
        let text = to_cache_text(&t).unwrap();
        assert!(!text.contains('\n'));
        assert_eq!(text.matches('\t').count(), 4);
        assert_eq!(from_cache_text(&text, "docs"), Some(t));
        assert_eq!(from_cache_text(&text, "other"), None);
        // Fewer parts, or a map that is not one, is no record (the cache's checksum catches
        // the rest of a corruption).
        let head: Vec<&str> = text.splitn(5, '\t').collect();
        assert_eq!(from_cache_text(&head[..4].join("\t"), "docs"), None);
        assert_eq!(
            from_cache_text(
                &format!("{}\t[]\t{}\t{}\t{}", head[0], head[2], head[3], head[4]),
                "docs"
            ),
            None
        );
        // The naming text of a comment with no quote is its first message.
        let mut c = resolved();
        c.set("anchor", json!({ "kind": "image" }));
        assert_eq!(
            thin(&c, "docs").unwrap().prerendered().unwrap().naming,
            "line one\nline two"
        );
        assert_eq!(to_cache_text(&resolved()), None);
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
