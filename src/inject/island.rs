//! A chapter's [`Injection`] from the book's anchoring: its data island (page, mode, the
//! book-wide summary, its commentable blocks and its comments in lean form) and what to mark —
//! text ranges, blocks and code blocks of the live comments that have a place.
//!
//! Part of the inject layer; may call `resolve`, the book layer, `store` (JSON writers) and
//! the shared helpers.

use super::{Injection, TextMark};
use crate::book::Config;
use crate::resolve::{BookAnchors, Lean, is_live};
use crate::store::json::{ObjectWriter, write_js_compact};
use crate::util::escape::escape_html;
use crate::util::payload::data_script;
use serde_json::json;

/// The `summary` every island of a book carries: open and addressed comments in the book.
pub fn island_summary(anchors: &BookAnchors, config: &Config) -> serde_json::Value {
    let (mut open, mut addressed) = (0, 0);
    for (l, c) in anchors.located.iter().zip(&anchors.comments) {
        match (l.chapter, c.status()) {
            (Some(_), Some("open")) => open += 1,
            (Some(_), Some("addressed")) => addressed += 1,
            _ => {}
        }
    }
    json!({ "open": open, "addressed": addressed, "review": config.review.as_str() })
}

/// What to inject into chapter `ch`; `summary` is the book-wide island summary as JSON text
/// ([`island_summary`]).
pub fn injection_for(
    anchors: &BookAnchors,
    ch: usize,
    config: &Config,
    summary: &str,
) -> Injection {
    let mut inj = Injection::default();
    let text = &anchors.texts[ch];
    let page = &anchors.chapters[ch].page;
    let mut json = Vec::with_capacity(256 * (anchors.by_chapter[ch].len() + 1));
    let mut w = ObjectWriter::new(&mut json);
    w.member("version", &1);
    w.member("page", page);
    w.member("space", &config.space);
    w.member("mode", config.review.as_str());
    w.key("summary").extend_from_slice(summary.as_bytes());
    let blocks: Vec<serde_json::Value> = text
        .blocks
        .iter()
        .map(|b| json!({ "kind": b.kind.as_str(), "key": b.key, "label": b.label, "section": b.section, "index": b.index }))
        .collect();
    write_js_compact(&blocks, w.key("blocks"));
    let list = w.key("comments");
    list.push(b'[');
    for (n, &ci) in anchors.by_chapter[ch].iter().enumerate() {
        if n > 0 {
            list.push(b',');
        }
        anchors.write_lean(ci, Lean::Island, &config.space, list);
        let l = &anchors.located[ci];
        let c = &anchors.comments[ci];
        let (Some(r), true) = (&l.resolution, is_live(c)) else {
            continue;
        };
        let Some(place) = &r.place else { continue };
        let id = c.id().unwrap_or_default().to_string();
        if let Some(b) = r.block {
            inj.blocks.entry(b).or_default().push(id);
            continue;
        }
        if let Some(n) = text.code_block_holding(&place.text) {
            inj.code.entry(n).or_default().push(id);
            continue;
        }
        inj.marks.push(TextMark {
            id,
            status: c.status().unwrap_or("open").to_string(),
            text: place.text.clone(),
        });
    }
    list.push(b']');
    w.end();
    let json = String::from_utf8(json).expect("serde_json writes UTF-8");
    inj.island = Some(data_script(
        "nb-data",
        &format!(" data-nb-page=\"{}\"", escape_html(page)),
        &json,
        config.compress_above,
    ));
    inj
}
