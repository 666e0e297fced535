//! Acceptance 5: bad input is refused with one `notabene: …` line on stderr and exit 1, and
//! a refused command leaves the store byte-identical. Unreadable comment files are skipped
//! by readers (one warning line each) without blocking writes to other comments.

use crate::support::common;

use common::{Out, fixture, run, run_with, tree};
use pretty_assertions::assert_eq;
use std::path::PathBuf;

/// A temp dir holding a copy of the round-trip fixture store at `<tmp>/store`: v3 files, a
/// legacy array, a held comment (`c_mx2sspage0001`), a journal with `j-2026-07-20-rt0001`.
fn setup() -> (tempfile::TempDir, PathBuf) {
    common::fixture_store("roundtrip/store")
}

fn nb(tmp: &tempfile::TempDir, args: &[&str], stdin: Option<&str>) -> Out {
    let mut full = vec!["--store", "store"];
    full.extend_from_slice(args);
    run_with(tmp.path(), &full, stdin, &[])
}

/// Asserts that `args` (with `stdin`) fails with exactly `line` and changes nothing in the
/// whole temp dir.
#[track_caller]
fn refused(tmp: &tempfile::TempDir, args: &[&str], stdin: Option<&str>, line: &str) {
    let before = tree(tmp.path());
    nb(tmp, args, stdin).fails_with(line);
    assert_eq!(
        tree(tmp.path()),
        before,
        "a refused command must not write ({args:?})"
    );
}

/// A valid journal entry with id `id` (and `title`).
fn entry(id: &str, title: &str) -> String {
    format!(
        r#"{{"id":"{id}","date":"2026-07-28","title":"{title}","summary":"s","changes":[{{"page":"src/legacy","commentIds":["c_legacy0001"],"what":"w","why":"y"}}]}}"#
    )
}

const BROKEN: &str = "src/guide/intro/c_broken.json";
const BROKEN_WARNING: &str = "notabene: skipping unreadable comment file: key must be a string at line 1 column 3 (src/guide/intro/c_broken.json)\n";

#[test]
fn malformed_comment_file_is_skipped_with_one_warning() {
    let (tmp, store) = setup();
    common::write(&store.join(BROKEN), "{ nope\n");
    // ls: one warning line naming the file, exit 0, every other comment listed.
    let out = nb(&tmp, &["comments", "ls", "--json"], None);
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (
            0,
            common::read(&fixture("roundtrip/ls.json")).as_str(),
            BROKEN_WARNING
        )
    );
    // A mutation of another comment still works and writes only that comment.
    let before = tree(&store);
    let out = nb(&tmp, &["comments", "hold", "c_mx2ssedfey4i"], None);
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (0, "notabene: 1 comment(s) → on hold.\n", BROKEN_WARNING)
    );
    assert_eq!(
        tree(&store),
        common::overlay(before, &fixture("roundtrip/expected/hold_v3"))
    );
    let out = nb(
        &tmp,
        &[
            "comments",
            "done",
            "c_legacy0001",
            "--journal",
            "j-2026-07-20-rt0001",
            "--note",
            "n",
        ],
        None,
    );
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (
            0,
            "notabene: 1 comment(s) → resolved (review: auto).\n",
            BROKEN_WARNING
        )
    );
    // verify reports it as an error.
    let out = nb(&tmp, &["comments", "verify"], None);
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.contains("✗ src/guide/intro/c_broken.json: unreadable JSON: key must be a string at line 1 column 3  [comment-unreadable]\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn malformed_journal_refuses_journal_add() {
    let (tmp, store) = setup();
    common::write(&store.join("journal.json"), "[{\"id\": \"j-1\",\n");
    refused(
        &tmp,
        &["journal", "add"],
        Some(&entry("j-new", "t")),
        "notabene: journal.json is not valid JSON: EOF while parsing a value at line 2 column 0 (journal.json)",
    );
    common::write(&store.join("journal.json"), "{\"entries\": []}\n");
    refused(
        &tmp,
        &["journal", "add"],
        Some(&entry("j-new", "t")),
        "notabene: journal.json must be a JSON array of entries (journal.json)",
    );
    refused(
        &tmp,
        &["journal", "ls"],
        None,
        "notabene: journal.json must be a JSON array of entries (journal.json)",
    );
}

#[test]
fn newer_schema_version_is_refused_by_readers_and_writers() {
    let (tmp, store) = setup();
    common::write(&store.join("meta.json"), "{\n  \"schemaVersion\": 4\n}\n");
    let line = format!(
        "notabene: store schemaVersion 4 is newer than this mdbook-notabene supports (3) — upgrade mdbook-notabene; refusing to read or write an unknown store shape ({})",
        store.join("meta.json").display()
    );
    let entry = entry("j-new", "t");
    let cases: &[(&[&str], Option<&str>)] = &[
        (&["comments", "ls"], None),
        (&["comments", "ls", "--json"], None),
        (&["comments", "show", "c_legacy0001"], None),
        (
            &[
                "comments",
                "done",
                "c_mx2ssedfey4i",
                "--journal",
                "j-2026-07-20-rt0001",
            ],
            None,
        ),
        (&["comments", "reopen", "c_mx2ssblock001"], None),
        (
            &["comments", "reply", "c_mx2ssedfey4i", "--body", "hi"],
            None,
        ),
        (&["comments", "hold", "c_mx2ssedfey4i"], None),
        (&["comments", "rm", "c_mx2ssedfey4i"], None),
        (
            &["comments", "add", "--page", "src/x", "--body", "hi"],
            None,
        ),
        (&["journal", "add"], Some(entry.as_str())),
        (&["journal", "ls"], None),
        (&["migrate"], None),
    ];
    for (args, stdin) in cases {
        refused(&tmp, args, *stdin, &line);
    }
    // A fractional newer version is printed the way JavaScript prints it.
    common::write(&store.join("meta.json"), "{\n  \"schemaVersion\": 3.5\n}\n");
    refused(
        &tmp,
        &["comments", "ls"],
        None,
        &line.replace("schemaVersion 4 ", "schemaVersion 3.5 "),
    );
}

#[test]
fn traversal_page_ids_are_refused() {
    let (tmp, _store) = setup();
    refused(
        &tmp,
        &["comments", "add", "--page", "../x", "--body", "hi"],
        None,
        "notabene: invalid page id \"../x\": it contains a '..' segment (--page)",
    );
    refused(
        &tmp,
        &["comments", "add", "--page", ".git/hooks", "--body", "hi"],
        None,
        "notabene: invalid page id \".git/hooks\": it contains a '.git' segment (--page)",
    );
    refused(
        &tmp,
        &["comments", "add", "--page", "/etc/x", "--body", "hi"],
        None,
        "notabene: invalid page id \"/etc/x\": it is an absolute path (--page)",
    );
    refused(
        &tmp,
        &["journal", "add"],
        Some(
            r#"{"id":"j-t","date":"2026-07-28","title":"t","summary":"s","changes":[{"page":"a/../b","commentIds":[],"what":"w","why":"y"}]}"#,
        ),
        "notabene: invalid page id \"a/../b\": it contains a '..' segment (changes[0].page)",
    );
}

/// Names Windows resolves to `.git` or to a device (trailing dots and spaces dropped, any case,
/// a device with any extension) are refused as page ids, by writers and by the journal.
#[test]
fn git_and_windows_device_lookalike_page_ids_are_refused() {
    let (tmp, _store) = setup();
    for (page, why) in [
        (".git.", "it contains a '.git' segment"),
        (".git ", "it contains a '.git' segment"),
        ("src/.GIT", "it contains a '.git' segment"),
        (
            "con",
            "it contains a segment Windows reads as the device CON",
        ),
        (
            "src/Com1.md",
            "it contains a segment Windows reads as the device COM1",
        ),
        (
            "src/nul.txt/x",
            "it contains a segment Windows reads as the device NUL",
        ),
    ] {
        refused(
            &tmp,
            &["comments", "add", "--page", page, "--body", "hi"],
            None,
            &format!("notabene: invalid page id {page:?}: {why} (--page)"),
        );
    }
    refused(
        &tmp,
        &["journal", "add"],
        Some(
            r#"{"id":"j-t","date":"2026-07-28","title":"t","summary":"s","changes":[{"page":"a/.git. ","commentIds":[],"what":"w","why":"y"}]}"#,
        ),
        "notabene: invalid page id \"a/.git. \": it contains a '.git' segment (changes[0].page)",
    );
}

#[test]
fn unknown_id_is_refused() {
    let (tmp, store) = setup();
    let line = format!(
        "notabene: comment \"nope\" not found under {}/",
        store.display()
    );
    for args in [
        &["comments", "done", "nope"][..],
        &["comments", "reopen", "nope"],
        &["comments", "reply", "nope", "--body", "hi"],
        &["comments", "hold", "nope"],
        &["comments", "unhold", "nope"],
        &["comments", "rm", "nope"],
        &["comments", "show", "nope"],
    ] {
        refused(&tmp, args, None, &line);
    }
}

#[test]
fn bad_flags_are_one_line_errors() {
    let (tmp, _store) = setup();
    refused(
        &tmp,
        &["comments", "ls", "--bogus"],
        None,
        "notabene: unexpected argument '--bogus' found (see --help)",
    );
    refused(
        &tmp,
        &["comments", "done"],
        None,
        "notabene: the following required arguments were not provided: <IDS>... (see --help)",
    );
    refused(
        &tmp,
        &["comments", "add", "--page", "src/x"],
        None,
        "notabene: the following required arguments were not provided: --body <BODY> (see --help)",
    );
    refused(
        &tmp,
        &[
            "comments",
            "add",
            "--page",
            "src/x",
            "--body",
            "hi",
            "--block",
            "image:a.png",
            "--kind",
            "png",
        ],
        None,
        "notabene: invalid value 'png' for '--kind <KIND>' [possible values: image, mermaid] (see --help)",
    );
    refused(
        &tmp,
        &["comments", "bogus"],
        None,
        "notabene: unrecognized subcommand 'bogus' (see --help)",
    );
    refused(
        &tmp,
        &["journal"],
        None,
        "notabene: a subcommand is required (see --help)",
    );
    refused(
        &tmp,
        &["comments", "done", "c_mx2ssedfey4i", "--status", "open"],
        None,
        "notabene: --status open does not close a comment — use `comments reopen` (--status)",
    );
    refused(
        &tmp,
        &["comments", "done", "c_mx2ssedfey4i", "--status", "fixed"],
        None,
        "notabene: unknown status \"fixed\" (expected: open, addressed, resolved) (--status)",
    );
    refused(
        &tmp,
        &["comments", "reply", "c_mx2ssedfey4i", "--body", "  \n "],
        None,
        "notabene: the text must not be empty (--body)",
    );
}

#[test]
fn invalid_stdin_for_journal_add() {
    let (tmp, _store) = setup();
    refused(
        &tmp,
        &["journal", "add"],
        Some("{nope"),
        "notabene: journal add: expected a JSON entry on stdin: key must be a string at line 1 column 2 (stdin)",
    );
    refused(
        &tmp,
        &["journal", "add"],
        Some("[1]"),
        "notabene: journal add: expected a JSON entry on stdin (stdin)",
    );
    refused(
        &tmp,
        &["journal", "add"],
        Some(""),
        "notabene: journal add: expected a JSON entry on stdin: EOF while parsing a value at line 1 column 0 (stdin)",
    );
    refused(
        &tmp,
        &["journal", "add"],
        Some(r#"{"id":"j-t","title":"t","changes":[]}"#),
        "notabene: journal entry needs changes: one record per page touched (changes)",
    );
    refused(
        &tmp,
        &["journal", "add"],
        Some(r#"{"id":"j-t","date":"28/07/2026","title":"t","changes":[{"page":"src/a"}]}"#),
        "notabene: journal entry date must be YYYY-MM-DD, got \"28/07/2026\" (date)",
    );
}

#[test]
fn multi_id_done_with_an_unknown_second_id_writes_nothing() {
    let (tmp, store) = setup();
    refused(
        &tmp,
        &[
            "comments",
            "done",
            "c_mx2ssedfey4i",
            "nope",
            "--journal",
            "j-2026-07-20-rt0001",
        ],
        None,
        &format!(
            "notabene: comment \"nope\" not found under {}/",
            store.display()
        ),
    );
    refused(
        &tmp,
        &[
            "comments",
            "reopen",
            "c_mx2ssblock001",
            "nope",
            "--reply",
            "again",
        ],
        None,
        &format!(
            "notabene: comment \"nope\" not found under {}/",
            store.display()
        ),
    );
}

#[test]
fn held_comment_needs_force() {
    let (tmp, store) = setup();
    let held = "notabene: comment \"c_mx2sspage0001\" is on hold — a reviewer is still working on it; pass --force to close it anyway";
    refused(&tmp, &["comments", "done", "c_mx2sspage0001"], None, held);
    // Also when it is not the first id: nothing is written for the others either.
    refused(
        &tmp,
        &["comments", "done", "c_mx2ssedfey4i", "c_mx2sspage0001"],
        None,
        held,
    );
    let out = nb(
        &tmp,
        &[
            "comments",
            "done",
            "c_mx2sspage0001",
            "--force",
            "--journal",
            "j-2026-07-20-rt0001",
        ],
        None,
    );
    assert_eq!(
        out.ok(),
        "notabene: 1 comment(s) → resolved (review: auto).\n"
    );
    let c: serde_json::Value = serde_json::from_str(&common::read(
        &store.join("src/guide/intro/c_mx2sspage0001.json"),
    ))
    .unwrap();
    assert_eq!(
        (c["status"].as_str(), c["hold"].as_bool()),
        (Some("resolved"), Some(true))
    );
}

#[test]
fn journal_add_is_idempotent_and_refuses_a_conflicting_entry() {
    let (tmp, store) = setup();
    let out = nb(
        &tmp,
        &["journal", "add"],
        Some(&entry("j-2026-07-28-idem", "First")),
    );
    assert_eq!(
        out.ok(),
        "notabene: appended journal entry j-2026-07-28-idem.\n"
    );
    let after_first = tree(&store);
    let journal: serde_json::Value =
        serde_json::from_str(&common::read(&store.join("journal.json"))).unwrap();
    assert_eq!(journal.as_array().unwrap().len(), 2);
    // The same entry again: a no-op.
    let out = nb(
        &tmp,
        &["journal", "add"],
        Some(&entry("j-2026-07-28-idem", "First")),
    );
    assert_eq!(
        out.ok(),
        "notabene: journal entry j-2026-07-28-idem is already present — nothing written.\n"
    );
    assert_eq!(tree(&store), after_first);
    let out = nb(
        &tmp,
        &["journal", "add", "--json"],
        Some(&entry("j-2026-07-28-idem", "First")),
    );
    assert_eq!(out.ok(), "{\"id\":\"j-2026-07-28-idem\"}\n");
    assert_eq!(tree(&store), after_first);
    // Same id, different content: refused.
    refused(
        &tmp,
        &["journal", "add"],
        Some(&entry("j-2026-07-28-idem", "Second")),
        "notabene: journal entry \"j-2026-07-28-idem\" already exists with different content; choose another id (id)",
    );
}

#[test]
fn unknown_command_prints_a_line() {
    let tmp = common::tempdir();
    let out = run(tmp.path(), &["bogus"]);
    out.fails_with("notabene: unrecognized subcommand 'bogus' (see --help)");
}
