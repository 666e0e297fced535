//! Human-readable renderings of comments for `comments ls` and `comments show`, as lines: the
//! caller prints them through `say!`-style output, which escapes every control and bidi character
//! of each line (so a newline inside an author, a section or a quote cannot start a line of its
//! own). A message body's lines are shown as an indented block.

use notabene_store::Scope;
use notabene_store::{Comment, Location, Record, ids};
use serde_json::Value;

fn text(v: Option<&Value>) -> &str {
    v.and_then(Value::as_str).unwrap_or("")
}

/// The anchor line: `§<section>: «<quote[:100]>»` or `§<section> [kind] <label>`, or `None`
/// for page comments.
fn anchor_line(c: &Comment) -> Option<String> {
    let a = c.anchor()?;
    let section = text(a.get("section"));
    if c.scope() == Some(Scope::Block) {
        return Some(format!(
            "§{section} [{}] {}",
            text(a.get("kind")),
            text(a.get("label"))
        ));
    }
    let quote: String = text(a.get("quote")).chars().take(100).collect();
    Some(format!("§{section}: «{}»", quote.replace('\n', " ")))
}

/// The suggested-edit line: `✎ suggests «<text[:100]>»` (`✎ suggests deleting the quote`),
/// `(applied)` once it was; `None` without a suggestion.
fn suggestion_line(c: &Comment) -> Option<String> {
    let s = c.suggestion()?;
    let what = if s.text.is_empty() {
        "deleting the quote".to_string()
    } else {
        let t: String = s.text.chars().take(100).collect();
        format!("«{}»", t.replace('\n', " "))
    };
    Some(format!(
        "✎ suggests {what}{}",
        if s.applied { " (applied)" } else { "" }
    ))
}

/// The `comments ls` block of one comment, line by line:
/// `[id] status[ ⏸] scope page=<page>`, the anchor line, the suggestion line
/// ([`suggestion_line`]), then `• author: body` and
/// `↳ author: body` for replies, a body's further lines indented below it.
pub(crate) fn comment_block(c: &Comment) -> Vec<String> {
    let mut out = vec![format!(
        "[{}] {}{} {} page={}",
        c.id().unwrap_or_default(),
        c.status_str().unwrap_or("?"),
        if c.held() { " ⏸" } else { "" },
        c.scope_str().unwrap_or("?"),
        c.page().unwrap_or("?")
    )];
    if let Some(line) = anchor_line(c) {
        out.push(format!("  {line}"));
    }
    if let Some(line) = suggestion_line(c) {
        out.push(format!("  {line}"));
    }
    for (i, m) in c.thread().iter().enumerate() {
        let mark = if i == 0 { "•" } else { "↳" };
        // A CRLF ends a line as LF does; a lone CR stays in its line, where it is escaped.
        let mut body = text(m.get("body")).lines();
        out.push(format!(
            "  {mark} {}: {}",
            text(m.get("author")),
            body.next().unwrap_or("")
        ));
        out.extend(body.map(|l| format!("    {l}")));
    }
    out
}

/// The `comments show` rendering, line by line: the list block plus anchor context,
/// resolution and dates.
pub(crate) fn comment_detail(rec: &Record) -> Vec<String> {
    let c = &rec.comment;
    let mut out = comment_block(c);
    if let Some(a) = c.anchor()
        && c.scope() == Some(Scope::Selection)
    {
        out.push(format!("  quote:  {:?}", text(a.get("quote"))));
        out.push(format!("  prefix: {:?}", text(a.get("prefix"))));
        out.push(format!("  suffix: {:?}", text(a.get("suffix"))));
    }
    if let Some(r) = c.get("resolution").and_then(Value::as_object) {
        let mut line = format!("  resolution: {}", text(r.get("note")));
        if let Some(j) = r.get("journalEntryId").and_then(Value::as_str) {
            line.push_str(&format!(" (journal {j})"));
        }
        out.push(line);
    }
    let first = c.thread().first();
    out.push(format!(
        "  by {} · created {} · updated {}",
        ids::display_name(text(first.and_then(|m| m.get("author")))),
        text(c.get("createdAt")),
        c.updated_at()
    ));
    let place = match rec.location {
        Location::File => rec.file.clone(),
        Location::Legacy { index } => format!("{}[{index}] (legacy array)", rec.file),
    };
    out.push(format!("  file: {place}"));
    out
}
