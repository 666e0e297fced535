//! A chapter's [`Injection`] from the book's anchoring: its data island (page, mode, its
//! commentable blocks and its comments in lean form) and what to mark — text ranges, blocks and
//! code blocks of the live comments that have a place — and the book-wide summary every chapter
//! carries in an element of its own (`script.nb-summary`), so that a new comment on one chapter
//! leaves the other chapters' islands as they were.

use super::{Injection, TextMark};
use crate::model::book::Config;
use crate::model::resolve::{BookAnchors, is_live};
use crate::output::forms::{CommentForms as _, Lean};
use crate::util::payload::data_script;
use notabene_core::escape::escape_html;
use notabene_store::Status;
use notabene_store::json::{ObjectWriter, write_js_compact};
use serde_json::json;

/// The `summary` every chapter of a book carries: open and addressed comments in the book,
/// the review mode, and `print` / `public` when the book sets `print-comments` / `public`.
pub fn island_summary(anchors: &BookAnchors, config: &Config) -> serde_json::Value {
    let (mut open, mut addressed) = (0, 0);
    for (l, c) in anchors.located.iter().zip(&anchors.comments) {
        match (l.chapter, c.status()) {
            (Some(_), Some(Status::Open)) => open += 1,
            (Some(_), Some(Status::Addressed)) => addressed += 1,
            _ => {}
        }
    }
    let mut summary = json!({ (Status::Open.as_str()): open, (Status::Addressed.as_str()): addressed, "review": config.review.as_str() });
    // Written only when set, so that books without them keep their pages byte for byte.
    if config.print_comments {
        summary["print"] = true.into();
    }
    if config.public {
        summary["public"] = true.into();
    }
    summary
}

/// The summary element every chapter ends with: `<script type="application/json"
/// class="nb-summary">` holding [`island_summary`] (never deflated: it is a few bytes).
pub fn summary_script(anchors: &BookAnchors, config: &Config) -> String {
    let json = notabene_store::json::to_js_compact(&island_summary(anchors, config));
    data_script("nb-summary", "", &json, usize::MAX)
}

/// What to inject into chapter `ch`, without its island's element, and the island's JSON
/// ([`island_script`] makes the element).
pub fn injection_for(anchors: &BookAnchors, ch: usize, config: &Config) -> (Injection, String) {
    let mut inj = Injection::default();
    let text = &anchors.texts[ch];
    let page = &anchors.chapters[ch].page;
    let mut json = Vec::with_capacity(256 * (anchors.by_chapter[ch].len() + 1));
    let mut w = ObjectWriter::new(&mut json);
    w.member("version", &1);
    w.member("page", page);
    w.member("space", &config.space);
    w.member("mode", config.review.as_str());
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
            status: c.status_str().unwrap_or(Status::Open.as_str()).to_string(),
            text: place.text.clone(),
        });
    }
    list.push(b']');
    w.end();
    let json = String::from_utf8(json).expect("serde_json writes UTF-8");
    (inj, json)
}

/// The data island element of `page` holding `json` (deflated above the book's
/// `compress-above`).
pub fn island_script(page: &str, json: &str, config: &Config) -> String {
    data_script(
        "nb-data",
        &format!(" data-nb-page=\"{}\"", escape_html(page)),
        json,
        config.compress_above,
    )
}
