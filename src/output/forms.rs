//! The forms a comment is written in out of a book's anchoring: the `anchoring` object
//! (`comments.json`, `notabene anchors --json`, `notabene anchors --check`), the whole comment
//! with it, and the compact [`Lean`] forms of the data islands, the /comments list and the
//! /review cards.
//!
//! Owns: those forms ([`CommentForms`], on [`BookAnchors`]). Calls: `model::resolve` (what the
//! anchoring holds), the store's lean writer.

use crate::model::book::condensed::PrerenderedOf;
use crate::model::resolve::{BookAnchors, is_live};
use notabene_anchoring::Place;
use serde_json::{Map, Value, json};

/// The compact forms of a comment written into the HTML: a chapter's data island and the
/// /comments list. Both leave out what the page already says and what only re-anchoring needs
/// — `space` when it is the book's, `hold: false`, `resolution: null`, `updatedAt` equal to
/// `createdAt`, the anchor's `prefix` and `suffix` — and the reader client restores the
/// defaults. `comments.json` and `notabene anchors --json` carry the full objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lean {
    /// In a chapter's island: also without `page` (the island's); `anchoring` holds `status`
    /// and, where the client paints, `block` (block index) or `code` (block, offset, text).
    /// In every lean form, `anchoring` also holds `followed`, `sameText` (page, chapter, url)
    /// and, for an anchor placed with changes, `changed` (`was`, `now`: see
    /// [`BookAnchors::change`]).
    Island,
    /// In the /comments list: a resolved comment's thread only as its first message, with
    /// `replies` (how many follow it); `anchoring` holds `status` and `chapter` (its title),
    /// and the comment's `url` follows (null when its page is not in the book).
    List,
    /// On a /review card: the whole thread, `anchoring` as in [`Lean::List`], and `url`.
    Card,
}

/// The forms of the comments of a book's anchoring (import the trait to call them on a
/// [`BookAnchors`]).
pub trait CommentForms {
    /// The `anchoring` object of comment `ci`.
    fn anchoring_json(&self, ci: usize) -> Value;

    /// Appends comment `ci` to `out` in its compact [`Lean`] form (JSON, not yet escaped for
    /// a `<script>`), `space` being the book's.
    fn write_lean(&self, ci: usize, form: Lean, space: &str, out: &mut Vec<u8>);

    /// The comment object as stored, plus its `anchoring`.
    fn comment_json(&self, ci: usize) -> Value;
}

impl CommentForms for BookAnchors {
    fn anchoring_json(&self, ci: usize) -> Value {
        let l = &self.located[ci];
        let mut m = Map::new();
        m.insert("status".into(), self.status(ci).into());
        let Some(ch) = l.chapter else {
            m.insert("confidence".into(), Value::Null);
            m.insert("reason".into(), "page-not-in-book".into());
            if let Some(lang) = &l.other_language {
                m.insert("language".into(), lang.clone().into());
            }
            if let Some((ch, r)) = &l.elsewhere
                && let Some(p) = &r.suggestion
            {
                m.insert(
                    "suggestion".into(),
                    json!({
                        "text": self.texts[*ch].text[p.text.clone()].to_string(),
                        "source": source_json(self, *ch, p),
                        "page": self.chapters[*ch].page,
                        "confidence": r.confidence,
                    }),
                );
            }
            return Value::Object(m);
        };
        let chapter = &self.chapters[ch];
        let text = &self.texts[ch];
        let r = l.resolution.as_ref();
        m.insert(
            "confidence".into(),
            r.map(|r| json!(r.confidence)).unwrap_or(Value::Null),
        );
        let matched = r
            .and_then(|r| r.place.as_ref())
            .map(|p| match r.and_then(|r| r.block) {
                Some(b) => text.blocks[b].label.clone(),
                None => text.text[p.text.clone()].to_string(),
            });
        m.insert(
            "text".into(),
            matched.map(Value::from).unwrap_or(Value::Null),
        );
        m.insert("chapter".into(), chapter.name.clone().into());
        m.insert("url".into(), self.url(ci).into());
        m.insert(
            "source".into(),
            r.and_then(|r| r.place.as_ref())
                .map(|p| source_json(self, ch, p))
                .unwrap_or(Value::Null),
        );
        let suggestion = r.and_then(|r| r.suggestion.as_ref()).map(|p| {
            json!({ "text": text.text[p.text.clone()].to_string(), "source": source_json(self, ch, p) })
        });
        m.insert("suggestion".into(), suggestion.unwrap_or(Value::Null));
        if let Some((to, r)) = &l.same_text {
            let other = &self.chapters[*to];
            let text = r
                .place
                .as_ref()
                .map(|p| self.texts[*to].text[p.text.clone()].to_string());
            m.insert(
                "sameText".into(),
                json!({ "page": other.page, "chapter": other.name, "url": other.url, "text": text }),
            );
        }
        if let Some((was, now)) = self.change(ci) {
            m.insert("changed".into(), json!({ "was": was, "now": now }));
        }
        if let Some(f) = &l.followed {
            m.insert(
                "followed".into(),
                json!({ "from": f.from, "to": chapter.page, "by": f.by.as_str() }),
            );
        }
        if let Some(r) = r {
            m.insert(
                "flags".into(),
                serde_json::to_value(r.flags).unwrap_or(Value::Null),
            );
            if let Some(b) = r.block {
                m.insert("block".into(), b.into());
            }
            if let Some((block, offset, text)) = self.code_spot(ci) {
                m.insert(
                    "code".into(),
                    json!({ "block": block, "offset": offset, "text": text }),
                );
            }
        }
        Value::Object(m)
    }

    fn write_lean(&self, ci: usize, form: Lean, space: &str, out: &mut Vec<u8>) {
        use crate::model::book::condensed as lean;
        use notabene_store::json::ObjectWriter;
        let comment = &self.comments[ci];
        // A followed comment keeps its stored page: the write API finds it there.
        let page_known = form == Lean::Island && self.located[ci].followed.is_none();
        let first_message_only = form == Lean::List && !is_live(comment);
        // A thin (resolved) comment's fields were written when its file was read: the island
        // and list forms, for this space (a resolved comment is never followed).
        let pre = comment
            .prerendered()
            .filter(|p| p.space() == space)
            .and_then(|p| match form {
                Lean::Island if page_known => Some(p.island()),
                Lean::List => Some(p.list()),
                _ => None,
            });
        let mut w = match pre {
            Some(fields) => {
                out.extend_from_slice(fields.as_bytes());
                ObjectWriter::resume(out, fields.len() == 1)
            }
            None => {
                let mut w = ObjectWriter::new(out);
                lean::write_own_fields(
                    &mut w,
                    comment.as_map(),
                    space,
                    page_known,
                    first_message_only,
                );
                w
            }
        };
        let mut aw = ObjectWriter::new(w.key("anchoring"));
        aw.member("status", self.status(ci));
        if let Some(f) = &self.located[ci].followed {
            let mut fw = ObjectWriter::new(aw.key("followed"));
            fw.member("from", &f.from);
            if let Some(ch) = self.located[ci].chapter {
                fw.member("to", &self.chapters[ch].page);
            }
            fw.member("by", f.by.as_str());
            fw.end();
        }
        if let Some((to, _)) = &self.located[ci].same_text {
            let mut sw = ObjectWriter::new(aw.key("sameText"));
            sw.member("page", &self.chapters[*to].page);
            sw.member("chapter", &self.chapters[*to].name);
            sw.member("url", &self.chapters[*to].url);
            sw.end();
        }
        if let Some((was, now)) = self.change(ci) {
            let mut cw = ObjectWriter::new(aw.key("changed"));
            cw.member("was", &was);
            cw.member("now", &now);
            cw.end();
        }
        match form {
            Lean::Island => {
                if let Some(b) = self.located[ci].resolution.as_ref().and_then(|r| r.block) {
                    aw.member("block", &b);
                }
                if let Some((block, offset, text)) = self.code_spot(ci) {
                    let mut cw = ObjectWriter::new(aw.key("code"));
                    cw.member("block", &block);
                    cw.member("offset", &offset);
                    cw.member("text", text);
                    cw.end();
                }
            }
            Lean::List | Lean::Card => {
                if let Some(ch) = self.located[ci].chapter {
                    aw.member("chapter", &self.chapters[ch].name);
                }
            }
        }
        aw.end();
        if form != Lean::Island {
            w.member("url", &self.url(ci));
        }
        w.end();
    }

    fn comment_json(&self, ci: usize) -> Value {
        let mut m = self.comments[ci].as_map().clone();
        m.insert("anchoring".into(), self.anchoring_json(ci));
        Value::Object(m)
    }
}

/// The position of `place` in the chapter's sources: where the source map traces it when the
/// chapter was expanded (its own file or an included one; `null` when it cannot be traced to one
/// place), else the same bytes of the chapter's file.
fn source_json(anchors: &BookAnchors, ch: usize, place: &Place) -> Value {
    let chapter = &anchors.chapters[ch];
    if chapter.disk().is_some() {
        return anchors
            .sources
            .as_ref()
            .and_then(|src| src.place(chapter, place.source.clone()))
            .unwrap_or(Value::Null);
    }
    let range = place.source.clone();
    let file = &chapter.content;
    let pos = range.start.min(file.len());
    let starts = anchors.line_starts(ch);
    let line = starts.partition_point(|&s| s <= pos).max(1);
    let line_start = starts[line - 1];
    let column = file[line_start..file.floor_char_boundary(pos)]
        .chars()
        .count()
        + 1;
    json!({ "path": chapter.source, "start": range.start, "end": range.end, "line": line, "column": column })
}
