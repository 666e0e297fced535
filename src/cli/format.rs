//! Human-readable renderings of comments for `comments ls` and `comments show`.
//!
//! Part of the CLI (layer 11); may call every layer below it.

use crate::store::{Comment, Location, Record, ids};
use serde_json::Value;

fn text(v: Option<&Value>) -> &str {
    v.and_then(Value::as_str).unwrap_or("")
}

fn indent_rest(s: &str, pad: &str) -> String {
    s.lines().collect::<Vec<_>>().join(&format!("\n{pad}"))
}

/// The anchor line: `§<section>: «<quote[:100]>»` or `§<section> [kind] <label>`, or `None`
/// for page comments.
fn anchor_line(c: &Comment) -> Option<String> {
    let a = c.anchor()?;
    let section = text(a.get("section"));
    if c.scope() == Some("block") {
        return Some(format!(
            "§{section} [{}] {}",
            text(a.get("kind")),
            text(a.get("label"))
        ));
    }
    let quote: String = text(a.get("quote")).chars().take(100).collect();
    Some(format!("§{section}: «{}»", quote.replace('\n', " ")))
}

/// The `comments ls` block of one comment:
/// `[id] status[ ⏸] scope page=<page>`, the anchor line, then `• author: body` and
/// `↳ author: body` for replies.
pub fn comment_block(c: &Comment) -> String {
    let mut out = format!(
        "[{}] {}{} {} page={}",
        c.id().unwrap_or_default(),
        c.status().unwrap_or("?"),
        if c.held() { " ⏸" } else { "" },
        c.scope().unwrap_or("?"),
        c.page().unwrap_or("?")
    );
    if let Some(line) = anchor_line(c) {
        out.push_str("\n  ");
        out.push_str(&line);
    }
    for (i, m) in c.thread().iter().enumerate() {
        let mark = if i == 0 { "•" } else { "↳" };
        out.push_str(&format!(
            "\n  {mark} {}: {}",
            text(m.get("author")),
            indent_rest(text(m.get("body")), "    ")
        ));
    }
    out
}

/// The `comments show` rendering: the list block plus anchor context, resolution and dates.
pub fn comment_detail(rec: &Record) -> String {
    let c = &rec.comment;
    let mut out = comment_block(c);
    if let Some(a) = c.anchor()
        && c.scope() == Some("selection")
    {
        out.push_str(&format!(
            "\n  quote:  {:?}\n  prefix: {:?}\n  suffix: {:?}",
            text(a.get("quote")),
            text(a.get("prefix")),
            text(a.get("suffix"))
        ));
    }
    if let Some(r) = c.get("resolution").and_then(Value::as_object) {
        out.push_str(&format!("\n  resolution: {}", text(r.get("note"))));
        if let Some(j) = r.get("journalEntryId").and_then(Value::as_str) {
            out.push_str(&format!(" (journal {j})"));
        }
    }
    let first = c.thread().first();
    out.push_str(&format!(
        "\n  by {} · created {} · updated {}",
        ids::display_name(text(first.and_then(|m| m.get("author")))),
        text(c.get("createdAt")),
        c.updated_at()
    ));
    let place = match rec.location {
        Location::File => rec.file.clone(),
        Location::Legacy { index } => format!("{}[{index}] (legacy array)", rec.file),
    };
    out.push_str(&format!("\n  file: {place}"));
    out
}
