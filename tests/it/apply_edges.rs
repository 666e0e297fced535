//! Edge cases of `apply` found by attacking it: a suggestion that shortens its quote (or
//! deletes it) is written, never taken for done; a file included by two chapters never takes
//! a code suggestion from one that would render as HTML in the other; a record of an
//! interrupted apply found in the store (planted by hand or by a merge) never writes outside
//! the book.

use crate::support::common::{self, build, read, reviewed_book, run, suggest, write};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// A git repository holding a book whose `SUMMARY.md` is `summary`, with `files`, and a store.
fn book(summary: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
    let mut all = vec![
        ("book.toml", "[book]\ntitle = \"Holes\"\n"),
        ("src/SUMMARY.md", summary),
    ];
    all.extend_from_slice(files);
    reviewed_book(&all)
}

const PROSE: &str = "# Intro\n\nThe cats sat on the mat today.\n";

#[test]
fn a_suggestion_that_shortens_its_quote_is_written() {
    // The text is a prefix of the quote: the file's state reads as done before any write.
    let tmp = book(
        "# Summary\n\n- [Intro](intro.md)\n",
        &[("src/intro.md", PROSE)],
    );
    let d = tmp.path();
    let id = suggest(d, "src/intro", "cats sat", "cats");
    crate::support::common::journal_entry(d, "j-1", &[&id]);
    let out = run(d, &["comments", "apply", &id, "--journal", "j-1"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        read(&d.join("src/intro.md")),
        "# Intro\n\nThe cats on the mat today.\n"
    );
}

#[test]
fn a_deletion_suggestion_is_written() {
    let tmp = book(
        "# Summary\n\n- [Intro](intro.md)\n",
        &[("src/intro.md", PROSE)],
    );
    let d = tmp.path();
    // The quote is stored trimmed, as the CLI takes it: the word goes, its spaces stay.
    let id = suggest(d, "src/intro", "today", "");
    crate::support::common::journal_entry(d, "j-1", &[&id]);
    let out = run(d, &["comments", "apply", &id, "--journal", "j-1"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        read(&d.join("src/intro.md")),
        "# Intro\n\nThe cats sat on the mat .\n"
    );
}

#[test]
fn a_code_suggestion_in_a_shared_include_never_becomes_html_elsewhere() {
    let tmp = book(
        "# Summary\n\n- [A](a.md)\n- [B](b.md)\n",
        &[
            (
                "src/a.md",
                "# A\n\nCode:\n\n```text\n{{#include snippet.txt}}\n```\n",
            ),
            ("src/b.md", "# B\n\nProse:\n\n{{#include snippet.txt}}\n"),
            ("src/snippet.txt", "hello world line\n"),
        ],
    );
    let d = tmp.path();
    let id = suggest(
        d,
        "src/a",
        "hello world line",
        "<img src=x onerror=alert(1)>",
    );
    crate::support::common::journal_entry(d, "j-1", &[&id]);
    run(d, &["comments", "apply", &id, "--journal", "j-1"]).fails_with(&format!(
        "notabene: the quote of {id:?} comes from src/snippet.txt, which src/b.md includes too (an edit checked on this page could render differently there); apply the suggestion by hand; nothing written (anchor.quote)"
    ));
    assert_eq!(read(&d.join("src/snippet.txt")), "hello world line\n");
    run(d, &["install"]).ok();
    build(d, None, &[]);
    let b = read(&d.join("book/b.html"));
    assert_eq!(
        b.contains("<img src=\"x\" onerror"),
        false,
        "b.html holds the image"
    );
}

#[test]
fn a_planted_apply_record_never_writes_outside_the_book() {
    let tmp = book(
        "# Summary\n\n- [Intro](intro.md)\n",
        &[("src/intro.md", PROSE)],
    );
    let d = tmp.path();
    let victim = d.join("outside.txt");
    let book_dir = d.join("book-in-here");
    // The book one level down, so `../outside.txt` is outside it but inside the temp dir.
    std::fs::create_dir(&book_dir).unwrap();
    for name in ["book.toml", "src", ".notabene"] {
        std::fs::rename(d.join(name), book_dir.join(name)).unwrap();
    }
    write(&victim, "AAAA rest\n");
    let record = r#"{"files":[{"path":"../outside.txt","edits":[{"start":0,"expected":"AAAA","text":"PWNED"}]}],"closes":[]}"#;
    write(&book_dir.join(".notabene/.apply-pending.tmp"), record);
    let id = suggest(&book_dir, "book-in-here/src/intro", "cats sat", "dogs sat");
    // A record in the store came with the files: never carried out, reported by verify.
    crate::support::common::journal_entry(&book_dir, "j-1", &[&id]);
    run(&book_dir, &["comments", "apply", &id, "--journal", "j-1"]).ok();
    assert_eq!(read(&victim), "AAAA rest\n");
    assert_eq!(
        read(&book_dir.join("src/intro.md")),
        PROSE.replace("cats sat", "dogs sat")
    );
    let v = run(&book_dir, &["comments", "verify"]);
    assert_eq!(v.code, 1, "{}", v.stdout);
    assert!(v.stdout.contains("[apply-record-foreign]"), "{}", v.stdout);
}

/// A comment replied to between a killed `apply` and its re-run: the re-run closes it with
/// the reply kept, and closes the others.
#[test]
fn a_reply_between_a_crash_and_the_rerun_is_kept() {
    let tmp = book(
        "# Summary\n\n- [Intro](intro.md)\n",
        &[("src/intro.md", PROSE)],
    );
    let d = tmp.path();
    let a = suggest(d, "src/intro", "cats sat", "dogs sat");
    let b = suggest(d, "src/intro", "the mat", "the rug");
    common::journal_entry(d, "j-1", &[&a, &b]);
    let args = [
        "comments",
        "apply",
        a.as_str(),
        b.as_str(),
        "--journal",
        "j-1",
    ];
    let crashed = common::run_with(
        d,
        &args,
        None,
        &[("NOTABENE_FAILPOINT", "apply-after-file")],
    );
    assert_eq!(crashed.code, -1, "{}", crashed.stderr);
    run(d, &["comments", "reply", &a, "--body", "Why dogs?"]).ok();
    let out = run(d, &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        read(&d.join("src/intro.md")),
        "# Intro\n\nThe dogs sat on the rug today.\n"
    );
    for id in [&a, &b] {
        let c: Value =
            serde_json::from_str(run(d, &["comments", "show", id, "--json"]).ok()).unwrap();
        assert_eq!(c["status"], "resolved", "{id}");
    }
    let c: Value = serde_json::from_str(run(d, &["comments", "show", &a, "--json"]).ok()).unwrap();
    let bodies: Vec<&str> = c["thread"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["body"].as_str().unwrap())
        .collect();
    assert_eq!(bodies.last(), Some(&"Why dogs?"));
}

/// A quote inside `{{#include}}`d code has its source place in the included file (`anchors
/// --json`, which the MCP tools share): its page-relative path, line, column and byte range.
#[test]
fn a_quote_in_included_code_has_its_place_in_the_included_file() {
    let code =
        "fn main() {\n    let answer = compute_the_answer();\n    println!(\"{answer}\");\n}\n";
    let tmp = book(
        "# Summary\n\n- [Intro](intro.md)\n",
        &[
            (
                "src/intro.md",
                "# Intro\n\nThe example:\n\n```rust\n{{#include ../examples/main.rs}}\n```\n",
            ),
            ("examples/main.rs", code),
        ],
    );
    let d = tmp.path();
    let id = suggest(d, "src/intro", "compute_the_answer()", "compute_it()");
    let doc: Value =
        serde_json::from_str(run(d, &["anchors", "--json", "--page", "src/intro"]).ok()).unwrap();
    let c = doc["comments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id.as_str())
        .unwrap();
    let at = code.find("compute_the_answer()").unwrap();
    assert_eq!(
        c["anchoring"]["source"],
        json!({ "path": "examples/main.rs", "start": at, "end": at + 20, "line": 2, "column": 18 })
    );
}

/// `comments ls` says which comments carry a suggested edit, and when it was applied.
#[test]
fn comments_ls_shows_a_suggestion_and_that_it_was_applied() {
    let tmp = book(
        "# Summary\n\n- [Intro](intro.md)\n",
        &[("src/intro.md", PROSE)],
    );
    let d = tmp.path();
    let id = suggest(d, "src/intro", "cats sat", "dogs sat");
    let line = |d: &std::path::Path| {
        run(d, &["comments", "ls"])
            .ok()
            .lines()
            .find(|l| l.contains("✎"))
            .map(str::to_string)
    };
    assert_eq!(line(d).as_deref(), Some("  ✎ suggests «dogs sat»"));
    run(d, &["comments", "apply", &id]).ok();
    assert_eq!(
        line(d).as_deref(),
        Some("  ✎ suggests «dogs sat» (applied)")
    );
}

/// A comment closed by someone else between a killed `apply` (before any Markdown was written)
/// and its re-run is left as it is, its edit not made; the other comment is applied.
#[test]
fn a_comment_closed_between_a_crash_and_the_rerun_is_left_as_it_is() {
    let tmp = book(
        "# Summary\n\n- [Intro](intro.md)\n",
        &[("src/intro.md", PROSE)],
    );
    let d = tmp.path();
    let a = suggest(d, "src/intro", "cats sat", "dogs sat");
    let b = suggest(d, "src/intro", "the mat", "the rug");
    let args = ["comments", "apply", a.as_str(), b.as_str()];
    let crashed = common::run_with(
        d,
        &args,
        None,
        &[("NOTABENE_FAILPOINT", "apply-after-intent")],
    );
    assert_eq!(crashed.code, -1, "{}", crashed.stderr);
    assert_eq!(
        run(d, &["comments", "done", &a, "--note", "Not needed."]).code,
        0
    );
    let out = run(d, &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        read(&d.join("src/intro.md")),
        "# Intro\n\nThe cats sat on the rug today.\n"
    );
    let v = run(d, &["comments", "verify"]);
    assert!(!v.stdout.contains("apply-interrupted"), "{}", v.stdout);
}
