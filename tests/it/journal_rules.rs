//! The journal entry a close links to (`comments done --journal`, `comments apply --journal`,
//! the MCP `done` and `apply_suggestion`): one the journal does not hold is refused, one line
//! naming `journal add`, nothing written; one that does not list the comment is accepted with a
//! note. `journal ls --json` lists newest first, as `journal ls` does, and a `--store` that does
//! not exist is an error, not an empty store.

use crate::support::common::{read, reviewed_book, run, run_with, suggest, tree};
use serde_json::{Value, json};
use std::path::Path;

const CHAPTER: &str = "# Guide\n\nPlain prose sentence here.\n\nAnother sentence there.\n";
const PAGE: &str = "src/guide";

fn book() -> tempfile::TempDir {
    reviewed_book(&[
        ("book.toml", "[book]\ntitle = \"Journal\"\n"),
        ("src/SUMMARY.md", "# Summary\n\n- [Guide](guide.md)\n"),
        ("src/guide.md", CHAPTER),
    ])
}

/// Appends a journal entry `id` listing `comments` on the chapter.
fn add_entry(dir: &Path, id: &str, comments: &[&str]) {
    let entry = json!({
        "id": id, "date": "2026-07-28", "title": format!("Entry {id}"),
        "changes": [{ "page": PAGE, "commentIds": comments, "what": "w", "why": "y" }]
    });
    run_with(dir, &["journal", "add"], Some(&entry.to_string()), &[]).ok();
}

/// A plain comment on the chapter; its id.
fn comment(dir: &Path) -> String {
    let out = run(
        dir,
        &[
            "comments",
            "add",
            "--page",
            PAGE,
            "--quote",
            "Another sentence",
            "--body",
            "Why?",
            "--json",
        ],
    );
    let c: Value = serde_json::from_str(out.ok()).unwrap();
    c["id"].as_str().unwrap().to_string()
}

const MISSING: &str = "notabene: journal entry \"j-nope\" does not exist — append it first with `journal add` (--journal)";

#[test]
fn done_refuses_a_journal_entry_that_does_not_exist() {
    let tmp = book();
    let d = tmp.path();
    let id = comment(d);
    let before = tree(&d.join(".notabene"));
    run(d, &["comments", "done", &id, "--journal", "j-nope"]).fails_with(MISSING);
    assert!(
        tree(&d.join(".notabene")) == before,
        "done wrote after a refusal"
    );
}

#[test]
fn apply_refuses_a_journal_entry_that_does_not_exist() {
    let tmp = book();
    let d = tmp.path();
    let id = suggest(d, PAGE, "Plain prose", "Simple prose");
    let before = (tree(&d.join(".notabene")), read(&d.join("src/guide.md")));
    run(d, &["comments", "apply", &id, "--journal", "j-nope"]).fails_with(MISSING);
    assert!(
        (tree(&d.join(".notabene")), read(&d.join("src/guide.md"))) == before,
        "apply wrote after a refusal"
    );
}

#[test]
fn done_accepts_an_entry_that_does_not_list_the_comment_with_a_note() {
    let tmp = book();
    let d = tmp.path();
    let id = comment(d);
    add_entry(d, "j-other", &["c_someoneelse"]);
    let out = run(d, &["comments", "done", &id, "--journal", "j-other"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stderr,
        format!(
            "notabene: note: journal entry \"j-other\" does not list \"{id}\" in its changes[].commentIds (verify reports comment-not-in-journal-changes) — append an entry that lists it with `journal add`.\n"
        )
    );
    add_entry(d, "j-listing", &[&id]);
    let other = comment(d);
    add_entry(d, "j-both", &[&other]);
    let out = run(d, &["comments", "done", &other, "--journal", "j-both"]);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
}

#[test]
fn journal_ls_json_lists_newest_first_as_journal_ls_does() {
    let tmp = book();
    let d = tmp.path();
    add_entry(d, "j-first", &["c_a"]);
    add_entry(d, "j-second", &["c_b"]);
    let v: Value = serde_json::from_str(run(d, &["journal", "ls", "--json"]).ok()).unwrap();
    let ids: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["j-second", "j-first"]);
    let text = run(d, &["journal", "ls"]).ok().to_string();
    assert!(
        text.find("j-second").unwrap() < text.find("j-first").unwrap(),
        "{text}"
    );
}

#[test]
fn a_store_flag_naming_no_directory_is_an_error() {
    let tmp = book();
    let d = tmp.path();
    run(d, &["comments", "ls", "--store", "WRONG"])
        .fails_with("notabene: no store at WRONG; check the path, or run `notabene init` to start one (--store)");
    run(d, &["journal", "ls", "--store", "WRONG"])
        .fails_with("notabene: no store at WRONG; check the path, or run `notabene init` to start one (--store)");
}

#[test]
fn mcp_done_and_apply_refuse_a_journal_entry_that_does_not_exist() {
    let Some(py) = crate::mcp::python() else {
        return;
    };
    let tmp = book();
    let d = tmp.path();
    let plain = comment(d);
    let suggested = suggest(d, PAGE, "Plain prose", "Simple prose");
    let before = (tree(&d.join(".notabene")), read(&d.join("src/guide.md")));
    let steps = json!([
        { "tool": "done", "args": { "ids": [plain], "journal": "j-nope" } },
        { "tool": "apply_suggestion", "args": { "ids": [suggested], "journal": "j-nope" } },
        { "tool": "list_comments", "args": {} },
    ]);
    let r = crate::mcp::mcp_on(&py, d, ".", &steps);
    for (i, step) in r.iter().take(2).enumerate() {
        assert_eq!(step["isError"], true, "step {i}: {}", step["text"]);
        assert_eq!(step["text"], MISSING, "step {i}");
    }
    assert_eq!(r[2]["isError"], false, "the server serves on");
    assert!(
        (tree(&d.join(".notabene")), read(&d.join("src/guide.md"))) == before,
        "the MCP server wrote after a refusal"
    );
}

/// A second `install` in the book's own directory names it `.`, not an empty path.
#[test]
fn a_second_install_names_the_book_it_found_set_up() {
    let tmp = book();
    let d = tmp.path();
    run(d, &["install"]).ok();
    assert_eq!(
        run(d, &["install"]).ok(),
        "notabene: . is already set up — nothing changed.\n"
    );
}
