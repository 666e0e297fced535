//! Holes found in a review of the write-safety work, each shown by a test that fails today:
//! a suggestion that shortens its quote (or deletes it) is reported applied while nothing is
//! written; a file included by two chapters takes a code suggestion from one and renders it
//! as HTML in the other; a record of an interrupted apply found in the store (it is not
//! ignored by git, so it can arrive with a pull) writes outside the book.

use crate::common::{self, read, run, write};
use pretty_assertions::assert_eq;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// A git repository holding a book whose `SUMMARY.md` is `summary`, with `files`, and a store.
fn book(summary: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
    let tmp = common::tempdir();
    let d = tmp.path();
    write(&d.join("book.toml"), "[book]\ntitle = \"Holes\"\n");
    write(&d.join("src/SUMMARY.md"), summary);
    for (rel, text) in files {
        write(&d.join(rel), text);
    }
    common::git_init(d);
    run(d, &["init", "--no-agents-md"]).ok();
    tmp
}

fn suggest(dir: &Path, page: &str, quote: &str, text: &str) -> String {
    let out = run(
        dir,
        &[
            "comments",
            "add",
            "--page",
            page,
            "--quote",
            quote,
            "--suggest",
            text,
            "--json",
        ],
    );
    let c: Value = serde_json::from_str(out.ok()).unwrap();
    c["id"].as_str().unwrap().to_string()
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
    run(d, &["comments", "apply", &id, "--journal", "j-1"]);
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
    let id = suggest(d, "src/intro", " today", "");
    run(d, &["comments", "apply", &id, "--journal", "j-1"]);
    assert_eq!(
        read(&d.join("src/intro.md")),
        "# Intro\n\nThe cats sat on the mat.\n"
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
    run(d, &["comments", "apply", &id, "--journal", "j-1"]);
    run(d, &["install"]).ok();
    let out = Command::new(env!("CARGO_BIN_EXE_mdbook-notabene"))
        .args(["build", d.to_str().unwrap()])
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
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
    write(&book_dir.join(".notabene/.apply.pending"), record);
    let id = suggest(&book_dir, "book-in-here/src/intro", "cats sat", "dogs sat");
    run(&book_dir, &["comments", "apply", &id, "--journal", "j-1"]);
    assert_eq!(read(&victim), "AAAA rest\n");
}
