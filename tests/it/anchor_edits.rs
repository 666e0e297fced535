//! The edits authors and agents make around a commented quote, on real chapters: each test
//! edits the text the way an answer to the comment would, then checks what `notabene anchors
//! --json` reports (status, the flags saying what changed, the matched text, the page) and,
//! for book-example, what the built page marks.

use crate::common;
use crate::support::{book_example, html, mark_groups, run_plugin, stage};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::path::Path;

/// The comment on «3 means the archive is unwritable» (reference/cli).
const UNWRITABLE: &str = "c_mwq6asw3w1ge";

/// Replaces `from` by `to` in `path` (which must contain it once at least).
fn edit(path: &Path, from: &str, to: &str) {
    let text = common::read(path);
    assert!(text.contains(from), "{} lacks {from:?}", path.display());
    common::write(path, &text.replacen(from, to, 1));
}

/// The `anchoring` of comment `id` in `notabene anchors --json`, run in `book`.
fn anchoring(book: &Path, id: &str) -> Value {
    let out = common::run(book, &["anchors", "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    doc["comments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("{id} in {}", out.stdout))["anchoring"]
        .clone()
}

/// Acceptance: the clause an agent adds right after the quote leaves the comment exact, with
/// `contextChanged`, and the page marks exactly the quote.
#[test]
fn a_clause_added_after_the_quote_keeps_the_comment_exact() {
    let tmp = common::tempdir();
    let book = stage(&book_example(), tmp.path(), "book-example");
    edit(
        &book.join("src/reference/cli.md"),
        "`3` means the archive is unwritable.",
        "`3` means the archive is unwritable (a full disk or a permissions problem).",
    );
    let a = anchoring(&book, UNWRITABLE);
    assert_eq!(
        (&a["status"], &a["text"], &a["flags"]),
        (
            &json!("exact"),
            &json!("3 means the archive is unwritable"),
            &json!({
                "quoteChanged": false,
                "contextChanged": true,
                "sectionChanged": false,
                "ambiguous": false
            })
        )
    );
    assert_eq!(a["suggestion"], Value::Null);
    let listing = common::run(
        &book,
        &["anchors", "--page", "book-example/src/reference/cli"],
    );
    assert!(
        listing.stdout.lines().any(|l| l.starts_with(&format!(
            "[{UNWRITABLE}] exact 1.00 book-example/src/reference/cli "
        )) && l.ends_with("«3 means the archive is unwritable»")),
        "{}",
        listing.stdout
    );
    let out = run_plugin(
        tmp.path(),
        &["build", "book-example", "--dest-dir", "out"],
        None,
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let groups = mark_groups(&html(&tmp.path().join("out"), "reference/cli.html"));
    let g = &groups[UNWRITABLE];
    assert_eq!(
        (
            g.span.as_str(),
            g.gaps.as_str(),
            g.statuses.iter().map(String::as_str).collect::<Vec<_>>()
        ),
        ("3 means the archive is unwritable", "", vec!["open"])
    );
}
