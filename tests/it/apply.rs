//! `comments add --suggest` and `comments apply` on a real book: each case asserts the exact
//! Markdown bytes after the apply (plain prose, inside emphasis, inside link text, across a
//! soft line break, in an included file), or that a refusal (a stale quote, an ambiguous one,
//! one across markup, a held comment, a second apply) is one line and writes nothing.

use crate::support::common::{AUTHOR, NOW, Out, read, reviewed_book, run, suggest, tree, write};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::path::Path;

const CHAPTER: &str = "# Guide

Plain prose sentence here.

Some *emphasised words* here.

A [link text](https://example.com) here.

A paragraph that wraps
across two lines.

Twice: same words. Twice: same words.

{{#include part.md}}
";
const PART: &str = "Included text lives here.\n";

/// A git repository holding a one-chapter book (with an included file) and its store.
fn book() -> tempfile::TempDir {
    reviewed_book(&[
        ("book.toml", "[book]\ntitle = \"Apply\"\n"),
        ("src/SUMMARY.md", "# Summary\n\n- [Guide](guide.md)\n"),
        ("src/guide.md", CHAPTER),
        ("src/part.md", PART),
    ])
}

/// The page of the chapter.
const PAGE: &str = "src/guide";

fn apply(dir: &Path, id: &str, extra: &[&str]) -> Out {
    crate::support::common::journal_entry(dir, "j-1", &[id]);
    let mut args = vec!["comments", "apply", id, "--journal", "j-1"];
    args.extend_from_slice(extra);
    run(dir, &args)
}

fn comment(dir: &Path, id: &str) -> Value {
    serde_json::from_str(run(dir, &["comments", "show", id, "--json"]).ok()).unwrap()
}

#[track_caller]
fn assert_applied(quote: &str, text: &str, chapter: &str, part: &str) {
    let tmp = book();
    let d = tmp.path();
    let id = suggest(d, PAGE, quote, text);
    let out = apply(d, &id, &[]);
    let file = if part != PART {
        "src/part.md"
    } else {
        "src/guide.md"
    };
    let line = if part != PART {
        1
    } else {
        CHAPTER[..CHAPTER.find(quote.split(' ').next().unwrap()).unwrap()]
            .matches('\n')
            .count()
            + 1
    };
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (
            0,
            format!("notabene: applied the suggestion of {id} in {file}:{line} → resolved.\n")
                .as_str(),
            ""
        )
    );
    assert_eq!(read(&d.join("src/guide.md")), chapter);
    assert_eq!(read(&d.join("src/part.md")), part);
    let c = comment(d, &id);
    assert_eq!(c["status"], "resolved");
    assert_eq!(
        c["resolution"],
        json!({
            "note": format!("Applied the suggested edit: “{quote}” → “{text}” in {file}."),
            "journalEntryId": "j-1"
        })
    );
    assert_eq!(
        c["suggestion"],
        json!({ "quote": quote, "text": text, "applied": { "at": NOW, "by": AUTHOR, "file": file } })
    );
    assert_eq!(c["anchor"]["quote"], text, "the comment marks the new text");
}

#[test]
fn plain_prose() {
    assert_applied(
        "Plain prose",
        "Simple prose",
        &CHAPTER.replace("Plain prose sentence", "Simple prose sentence"),
        PART,
    );
}

#[test]
fn inside_emphasis() {
    assert_applied(
        "emphasised",
        "stressed",
        &CHAPTER.replace("*emphasised words*", "*stressed words*"),
        PART,
    );
}

#[test]
fn inside_link_text() {
    assert_applied(
        "link text",
        "the guide",
        &CHAPTER.replace("[link text](", "[the guide]("),
        PART,
    );
}

#[test]
fn across_a_soft_line_break() {
    assert_applied(
        "wraps across",
        "runs over",
        &CHAPTER.replace("wraps\nacross two lines", "runs over two lines"),
        PART,
    );
}

#[test]
fn in_an_included_file() {
    assert_applied(
        "Included text",
        "Shared text",
        CHAPTER,
        &PART.replace("Included text", "Shared text"),
    );
}

/// Runs `comments apply ID --journal j-1 extra…` and asserts the one-line refusal `line`, with
/// nothing written under `dir`.
#[track_caller]
fn apply_refused(dir: &Path, id: &str, extra: &[&str], line: &str) {
    crate::support::common::journal_entry(dir, "j-1", &[id]);
    let before = tree(dir);
    apply(dir, id, extra).fails_with(line);
    assert_eq!(tree(dir), before, "nothing written");
}

#[test]
fn a_stale_quote_is_never_applied_elsewhere() {
    let tmp = book();
    let d = tmp.path();
    // With its context, as the browser captures it: an edited quote is still found, fuzzy.
    let out = run(
        d,
        &[
            "comments",
            "add",
            "--page",
            "src/guide",
            "--quote",
            "Plain prose",
            "--suffix",
            " sentence here.",
            "--section",
            "Guide",
            "--suggest",
            "Simple prose",
            "--json",
        ],
    );
    let id = serde_json::from_str::<Value>(out.ok()).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    write(
        &d.join("src/guide.md"),
        &CHAPTER.replace("Plain prose sentence", "Plain prosy sentence"),
    );
    apply_refused(
        d,
        &id,
        &[],
        &format!(
            "notabene: the quote of {id:?} is no longer exact in its chapter (fuzzy): the text changed since the suggestion; nothing written (anchor.quote)"
        ),
    );
    // Gone altogether: the same.
    write(
        &d.join("src/guide.md"),
        &CHAPTER.replace("Plain prose sentence", "Another sentence"),
    );
    apply_refused(
        d,
        &id,
        &[],
        &format!(
            "notabene: the quote of {id:?} is no longer exact in its chapter (not found): the text changed since the suggestion; nothing written (anchor.quote)"
        ),
    );
}

#[test]
fn an_ambiguous_quote_is_refused() {
    let tmp = book();
    let d = tmp.path();
    let id = suggest(d, PAGE, "same words", "other words");
    apply_refused(
        d,
        &id,
        &[],
        &format!(
            "notabene: the quote of {id:?} appears more than once with the same context; nothing written (anchor.quote)"
        ),
    );
}

#[test]
fn a_quote_across_inline_markup_is_refused() {
    let tmp = book();
    let d = tmp.path();
    let id = suggest(d, PAGE, "Some emphasised", "Several stressed");
    apply_refused(
        d,
        &id,
        &[],
        &format!(
            "notabene: the quote of {id:?} spans inline markup (`*`) the replacement would break; nothing written (anchor.quote)"
        ),
    );
}

#[test]
fn a_held_comment_needs_force_and_a_second_apply_changes_nothing() {
    let tmp = book();
    let d = tmp.path();
    let id = suggest(d, PAGE, "Plain prose", "Simple prose");
    run(d, &["comments", "hold", &id]).ok();
    apply_refused(
        d,
        &id,
        &[],
        &format!(
            "notabene: comment {id:?} is on hold — a reviewer is still working on it; pass --force to apply it anyway"
        ),
    );
    let out = apply(d, &id, &["--force"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let after = CHAPTER.replace("Plain prose sentence", "Simple prose sentence");
    assert_eq!(read(&d.join("src/guide.md")), after);
    // Again: refused, nothing changed (not even with --force, nor after a reopen).
    apply_refused(
        d,
        &id,
        &["--force"],
        &format!(
            "notabene: the suggestion of {id:?} was already applied; nothing changed (suggestion.applied)"
        ),
    );
    run(d, &["comments", "reopen", &id]).ok();
    apply_refused(
        d,
        &id,
        &["--force"],
        &format!(
            "notabene: the suggestion of {id:?} was already applied; nothing changed (suggestion.applied)"
        ),
    );
    assert_eq!(read(&d.join("src/guide.md")), after);
}

#[test]
fn every_id_is_checked_before_any_file_is_written() {
    let tmp = book();
    let d = tmp.path();
    let good = suggest(d, PAGE, "Plain prose", "Simple prose");
    let stale = suggest(d, PAGE, "same words", "other words");
    let before = tree(d);
    run(d, &["comments", "apply", &good, &stale]).fails_with(&format!(
            "notabene: the quote of {stale:?} appears more than once with the same context; nothing written (anchor.quote)"
        ),
    );
    assert_eq!(tree(d), before, "nothing written");
    // Both in one go when both can be applied.
    let other = suggest(d, PAGE, "link text", "the guide");
    crate::support::common::journal_entry(d, "j-1", &[&good, &other]);
    let out = run(d, &["comments", "apply", &good, &other, "--journal", "j-1"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        read(&d.join("src/guide.md")),
        CHAPTER
            .replace("Plain prose sentence", "Simple prose sentence")
            .replace("[link text](", "[the guide](")
    );
}

#[test]
fn add_suggest_writes_the_suggestion_after_the_anchor_and_a_readable_body() {
    let tmp = book();
    let d = tmp.path();
    let id = suggest(d, PAGE, "Plain prose", "Simple prose");
    let text = read(&d.join(format!(".notabene/src/guide/{id}.json")));
    let keys: Vec<String> = serde_json::from_str::<serde_json::Map<String, Value>>(&text)
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(
        keys,
        [
            "id",
            "space",
            "page",
            "scope",
            "anchor",
            "suggestion",
            "thread",
            "status",
            "hold",
            "resolution",
            "createdAt",
            "updatedAt"
        ]
    );
    let c = comment(d, &id);
    assert_eq!(
        c["suggestion"],
        json!({ "quote": "Plain prose", "text": "Simple prose" })
    );
    assert_eq!(
        c["thread"][0]["body"],
        "Suggested edit: replace “Plain prose” with “Simple prose”."
    );
    // `ls --json` carries it for agents; verify has nothing to say.
    let ls: Value =
        serde_json::from_str(run(d, &["comments", "ls", "--open", "--json"]).ok()).unwrap();
    assert_eq!(ls[0]["suggestion"], c["suggestion"]);
    assert_eq!(
        run(d, &["comments", "verify"]).ok(),
        "notabene verify: 1 comment(s), 0 journal entr(ies) — 0 error(s), 0 warning(s).\n"
    );
    // --suggest needs a quote.
    run(d, &["comments", "add", "--page", "src/guide", "--suggest", "x"]).fails_with(
        "notabene: the following required arguments were not provided: --quote <QUOTE> (see --help)",
    );
}

#[test]
fn a_suggestion_is_written_as_text_never_as_markup() {
    assert_applied(
        "Plain prose",
        "Plain *prose* {x} <b> [l](u)",
        &CHAPTER.replace(
            "Plain prose sentence",
            "Plain \\*prose\\* \\{x\\} \\<b\\> \\[l\\](u) sentence",
        ),
        PART,
    );
}
