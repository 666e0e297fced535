//! Acceptance 2: `comments verify` reports every finding code of the original with its level,
//! and exits 0 (clean or warnings only), 1 (any error) or 2 (no store).
//!
//! Each test starts from a minimal store that verifies clean, breaks exactly one invariant,
//! and asserts the complete list of findings (code, level, message, file, id), the counts and
//! the exit code.

use crate::support::common;

use common::{run, write};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// A comment object in contract key order.
fn comment(id: &str, page: &str) -> Value {
    json!({
        "id": id,
        "space": "book",
        "page": page,
        "scope": "page",
        "anchor": null,
        "thread": [{ "author": "Zoë <zoe@example.com>", "body": "Please fix.", "ts": "2026-07-01T10:00:00.000Z" }],
        "status": "open",
        "hold": false,
        "resolution": null,
        "createdAt": "2026-07-01T10:00:00.000Z",
        "updatedAt": "2026-07-01T10:00:00.000Z"
    })
}

/// A resolved comment linked to journal entry `j`.
fn handled(id: &str, page: &str, j: &str) -> Value {
    let mut c = comment(id, page);
    c["status"] = "resolved".into();
    c["resolution"] = json!({ "note": "Done.", "journalEntryId": j });
    c
}

/// A journal entry listing `ids` in one change on page `page`.
fn entry(id: &str, page: &str, ids: &[&str]) -> Value {
    json!({
        "id": id,
        "date": "2026-07-28",
        "title": "Fix things",
        "summary": "Fixed things.",
        "changes": [{ "page": page, "commentIds": ids, "what": "Edited.", "why": "Asked." }]
    })
}

/// A temp dir with a store at `<tmp>/store` that verifies clean: `meta.json` at 3, a
/// journal entry `j-1` listing `c_done`, an open `c_open` and a resolved `c_done` on page
/// `src/a`.
struct Fx {
    tmp: tempfile::TempDir,
    store: PathBuf,
}

impl Fx {
    fn new() -> Fx {
        let tmp = common::tempdir();
        let store = tmp.path().join("store");
        let fx = Fx { tmp, store };
        fx.put("meta.json", json!({ "schemaVersion": 3 }));
        fx.put("journal.json", json!([entry("j-1", "src/a", &["c_done"])]));
        fx.put("src/a/c_open.json", comment("c_open", "src/a"));
        fx.put("src/a/c_done.json", handled("c_done", "src/a", "j-1"));
        fx
    }

    fn put(&self, rel: &str, v: Value) {
        self.put_raw(
            rel,
            &format!("{}\n", serde_json::to_string_pretty(&v).unwrap()),
        );
    }

    fn put_raw(&self, rel: &str, text: &str) {
        write(&self.store.join(rel), text);
    }

    fn rm(&self, rel: &str) {
        std::fs::remove_file(self.store.join(rel)).unwrap();
    }

    /// Edits a stored JSON file in place.
    fn edit(&self, rel: &str, f: impl FnOnce(&mut Value)) {
        let mut v: Value = serde_json::from_str(&common::read(&self.store.join(rel))).unwrap();
        f(&mut v);
        self.put(rel, v);
    }

    /// `comments verify --json`: (exit code, report).
    fn verify(&self) -> (i32, Value) {
        verify_json(self.tmp.path(), &["--store", "store"])
    }

    /// Asserts the findings are exactly `findings`, with consistent counts, and the exit code.
    #[track_caller]
    fn expect(&self, findings: Value, exit: i32) {
        let (code, report) = self.verify();
        assert_findings(&report, &findings, exit, code);
    }
}

fn verify_json(cwd: &Path, pre: &[&str]) -> (i32, Value) {
    let mut args = pre.to_vec();
    args.extend(["comments", "verify", "--json"]);
    let out = run(cwd, &args);
    assert_eq!(out.stderr, "", "verify --json writes nothing on stderr");
    let report: Value = serde_json::from_str(&out.stdout).expect("verify --json prints JSON");
    (out.code, report)
}

#[track_caller]
fn assert_findings(report: &Value, findings: &Value, exit: i32, code: i32) {
    assert_eq!(&report["findings"], findings);
    let list = findings.as_array().unwrap();
    let errors = list.iter().filter(|f| f["level"] == "error").count();
    assert_eq!(report["errors"], json!(errors));
    assert_eq!(report["warnings"], json!(list.len() - errors));
    assert_eq!(code, exit, "exit code");
}

/// One finding.
fn fnd(level: &str, code: &str, message: &str, file: Option<&str>, id: Option<&str>) -> Value {
    let mut f = json!({ "level": level, "code": code, "message": message });
    if let Some(file) = file {
        f["file"] = file.into();
    }
    if let Some(id) = id {
        f["id"] = id.into();
    }
    f
}

#[test]
fn clean_store_has_no_findings_and_the_report_shape() {
    let fx = Fx::new();
    let (code, report) = fx.verify();
    assert_eq!(
        report,
        json!({
            "version": 1,
            "store": "store",
            "checked": { "comments": 2, "journal": 1 },
            "errors": 0,
            "warnings": 0,
            "findings": []
        })
    );
    assert_eq!(code, 0);
    // Key order of the report is part of the contract.
    let out = run(
        fx.tmp.path(),
        &["--store", "store", "comments", "verify", "--json"],
    );
    assert_eq!(
        out.stdout,
        "{\n  \"version\": 1,\n  \"store\": \"store\",\n  \"checked\": {\n    \"comments\": 2,\n    \"journal\": 1\n  },\n  \"errors\": 0,\n  \"warnings\": 0,\n  \"findings\": []\n}\n"
    );
    let out = run(fx.tmp.path(), &["--store", "store", "comments", "verify"]);
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (
            0,
            "notabene verify: 2 comment(s), 1 journal entr(ies) — 0 error(s), 0 warning(s).\n",
            ""
        )
    );
}

#[test]
fn addressed_comment_linked_both_ways_is_clean() {
    let fx = Fx::new();
    fx.edit("src/a/c_done.json", |c| c["status"] = "addressed".into());
    fx.expect(json!([]), 0);
}

#[test]
fn store_meta_missing() {
    let fx = Fx::new();
    fx.rm("meta.json");
    fx.expect(
        json!([fnd(
            "warning",
            "store-meta-missing",
            "no meta.json — run `notabene init` to stamp the schema version.",
            None,
            None
        )]),
        0,
    );
}

#[test]
fn store_meta_invalid() {
    let fx = Fx::new();
    fx.put("meta.json", json!({ "schemaVersion": "3" }));
    let expected = json!([fnd(
        "warning",
        "store-meta-invalid",
        "meta.json has no numeric schemaVersion.",
        Some("meta.json"),
        None
    )]);
    fx.expect(expected.clone(), 0);
    fx.put_raw("meta.json", "{ schemaVersion: 3 }\n");
    fx.expect(expected, 0);
}

#[test]
fn store_schema_newer() {
    let fx = Fx::new();
    fx.put("meta.json", json!({ "schemaVersion": 4 }));
    fx.expect(
        json!([fnd(
            "error",
            "store-schema-newer",
            "store schemaVersion 4 is newer than this mdbook-notabene (3) — upgrade mdbook-notabene.",
            Some("meta.json"),
            None
        )]),
        1,
    );
}

#[test]
fn journal_invalid() {
    let fx = Fx::new();
    let expected = json!([fnd(
        "error",
        "journal-invalid",
        "journal.json must be a JSON array of entries.",
        Some("journal.json"),
        None
    )]);
    // Not an array.
    fx.put("journal.json", json!({ "entries": [] }));
    fx.expect(expected.clone(), 1);
    // Not JSON.
    fx.put_raw("journal.json", "[{\"id\": \"j-1\",\n");
    fx.expect(expected, 1);
}

#[test]
fn journal_entry_no_id() {
    let fx = Fx::new();
    let mut nameless = entry("x", "src/a", &["c_open"]);
    nameless.as_object_mut().unwrap().remove("id");
    fx.put(
        "journal.json",
        json!([entry("j-1", "src/a", &["c_done"]), nameless]),
    );
    fx.expect(
        json!([fnd(
            "error",
            "journal-entry-no-id",
            "a journal entry has no id.",
            Some("journal.json"),
            None
        )]),
        1,
    );
}

#[test]
fn journal_duplicate_id() {
    let fx = Fx::new();
    fx.put(
        "journal.json",
        json!([
            entry("j-1", "src/a", &["c_done"]),
            entry("j-1", "src/a", &["c_done"])
        ]),
    );
    fx.expect(
        json!([fnd(
            "error",
            "journal-duplicate-id",
            "duplicate journal entry id \"j-1\".",
            Some("journal.json"),
            Some("j-1")
        )]),
        1,
    );
}

#[test]
fn journal_bad_date() {
    let fx = Fx::new();
    fx.edit("journal.json", |j| j[0]["date"] = "28/07/2026".into());
    fx.expect(
        json!([fnd(
            "warning",
            "journal-bad-date",
            "journal entry \"j-1\": date should be YYYY-MM-DD.",
            Some("journal.json"),
            Some("j-1")
        )]),
        0,
    );
}

#[test]
fn journal_no_title() {
    let fx = Fx::new();
    fx.edit("journal.json", |j| j[0]["title"] = "".into());
    fx.expect(
        json!([fnd(
            "warning",
            "journal-no-title",
            "journal entry \"j-1\" has no title.",
            Some("journal.json"),
            Some("j-1")
        )]),
        0,
    );
}

#[test]
fn journal_no_changes() {
    let fx = Fx::new();
    let mut empty = entry("j-2", "src/a", &[]);
    empty["changes"] = json!([]);
    fx.put(
        "journal.json",
        json!([entry("j-1", "src/a", &["c_done"]), empty]),
    );
    fx.expect(
        json!([fnd(
            "error",
            "journal-no-changes",
            "journal entry \"j-2\" records no changes[] — nothing to show at /review.",
            Some("journal.json"),
            Some("j-2")
        )]),
        1,
    );
}

#[test]
fn journal_change_no_page() {
    let fx = Fx::new();
    fx.edit("journal.json", |j| {
        j[0]["changes"]
            .as_array_mut()
            .unwrap()
            .push(json!({ "commentIds": ["c_done"], "what": "More.", "why": "Because." }));
    });
    fx.expect(
        json!([fnd(
            "error",
            "journal-change-no-page",
            "journal entry \"j-1\" has a change without a page.",
            Some("journal.json"),
            Some("j-1")
        )]),
        1,
    );
}

#[test]
fn comment_unreadable() {
    let fx = Fx::new();
    fx.put_raw("src/a/c_broken.json", "{ \"id\": \"c_broken\", ");
    let (code, report) = fx.verify();
    assert_eq!(report["checked"]["comments"], json!(3));
    assert_findings(
        &report,
        &json!([fnd(
            "error",
            "comment-unreadable",
            "unreadable JSON: EOF while parsing a value at line 1 column 20",
            Some("src/a/c_broken.json"),
            None
        )]),
        1,
        code,
    );
}

#[test]
fn comment_no_id() {
    let fx = Fx::new();
    let mut c = comment("x", "src/a");
    c.as_object_mut().unwrap().remove("id");
    fx.put("src/a/c_x.json", c);
    fx.expect(
        json!([fnd(
            "error",
            "comment-no-id",
            "comment has no id.",
            Some("src/a/c_x.json"),
            None
        )]),
        1,
    );
}

#[test]
fn comment_duplicate_id() {
    let fx = Fx::new();
    fx.put("src/b/c_open.json", comment("c_open", "src/b"));
    fx.expect(
        json!([fnd(
            "error",
            "comment-duplicate-id",
            "duplicate comment id \"c_open\" (also in src/a/c_open.json).",
            Some("src/b/c_open.json"),
            Some("c_open")
        )]),
        1,
    );
}

#[test]
fn comment_missing_field() {
    for key in ["space", "page", "scope", "status"] {
        let fx = Fx::new();
        fx.edit("src/a/c_open.json", |c| c[key] = "".into());
        fx.expect(
            json!([fnd(
                "error",
                "comment-missing-field",
                &format!("missing \"{key}\"."),
                Some("src/a/c_open.json"),
                Some("c_open")
            )]),
            1,
        );
    }
    // A null status is missing too, and only that (not also comment-bad-status).
    let fx = Fx::new();
    fx.edit("src/a/c_open.json", |c| c["status"] = Value::Null);
    fx.expect(
        json!([fnd(
            "error",
            "comment-missing-field",
            "missing \"status\".",
            Some("src/a/c_open.json"),
            Some("c_open")
        )]),
        1,
    );
    // Absent (not just empty) is reported the same way.
    let fx = Fx::new();
    fx.edit("src/a/c_open.json", |c| {
        c.as_object_mut().unwrap().remove("space");
    });
    fx.expect(
        json!([fnd(
            "error",
            "comment-missing-field",
            "missing \"space\".",
            Some("src/a/c_open.json"),
            Some("c_open")
        )]),
        1,
    );
}

#[test]
fn comment_bad_status() {
    let fx = Fx::new();
    fx.edit("src/a/c_open.json", |c| c["status"] = "done".into());
    fx.expect(
        json!([fnd(
            "error",
            "comment-bad-status",
            "unknown status \"done\".",
            Some("src/a/c_open.json"),
            Some("c_open")
        )]),
        1,
    );
}

#[test]
fn comment_bad_hold() {
    let fx = Fx::new();
    fx.edit("src/a/c_open.json", |c| c["hold"] = "yes".into());
    fx.expect(
        json!([fnd(
            "error",
            "comment-bad-hold",
            "\"hold\" must be a boolean.",
            Some("src/a/c_open.json"),
            Some("c_open")
        )]),
        1,
    );
}

#[test]
fn comment_empty_thread() {
    let fx = Fx::new();
    fx.edit("src/a/c_open.json", |c| c["thread"] = json!([]));
    fx.expect(
        json!([fnd(
            "error",
            "comment-empty-thread",
            "thread must hold at least the original comment.",
            Some("src/a/c_open.json"),
            Some("c_open")
        )]),
        1,
    );
}

#[test]
fn comment_file_id_mismatch() {
    let fx = Fx::new();
    fx.put("src/a/c_other.json", comment("c_x3", "src/a"));
    fx.expect(
        json!([fnd(
            "error",
            "comment-file-id-mismatch",
            "filename doesn't match id \"c_x3\".",
            Some("src/a/c_other.json"),
            Some("c_x3")
        )]),
        1,
    );
}

#[test]
fn comment_page_dir_mismatch() {
    let fx = Fx::new();
    fx.put("src/b/c_x4.json", comment("c_x4", "src/a"));
    fx.expect(
        json!([fnd(
            "error",
            "comment-page-dir-mismatch",
            "lives outside its page dir \"src/a\".",
            Some("src/b/c_x4.json"),
            Some("c_x4")
        )]),
        1,
    );
}

#[test]
fn comment_no_resolution() {
    let fx = Fx::new();
    fx.edit("src/a/c_done.json", |c| c["resolution"] = Value::Null);
    fx.expect(
        json!([fnd(
            "error",
            "comment-no-resolution",
            "\"resolved\" without a resolution.",
            Some("src/a/c_done.json"),
            Some("c_done")
        )]),
        1,
    );
}

#[test]
fn comment_no_journal_link() {
    let fx = Fx::new();
    fx.edit("src/a/c_done.json", |c| {
        c["status"] = "addressed".into();
        c["resolution"] = json!({ "note": "Done." });
    });
    fx.expect(
        json!([fnd(
            "error",
            "comment-no-journal-link",
            "\"addressed\" without resolution.journalEntryId.",
            Some("src/a/c_done.json"),
            Some("c_done")
        )]),
        1,
    );
}

#[test]
fn comment_unknown_journal_entry() {
    let fx = Fx::new();
    fx.edit("src/a/c_done.json", |c| {
        c["resolution"]["journalEntryId"] = "j-missing".into()
    });
    fx.expect(
        json!([fnd(
            "error",
            "comment-unknown-journal-entry",
            "journal entry \"j-missing\" does not exist.",
            Some("src/a/c_done.json"),
            Some("c_done")
        )]),
        1,
    );
}

#[test]
fn comment_not_in_journal_changes() {
    let fx = Fx::new();
    // j-1 exists but lists another (existing) comment.
    fx.put("journal.json", json!([entry("j-1", "src/a", &["c_open"])]));
    fx.expect(
        json!([fnd(
            "error",
            "comment-not-in-journal-changes",
            "journal entry \"j-1\" doesn't list this comment in any changes[] — /review would show an empty diff.",
            Some("src/a/c_done.json"),
            Some("c_done")
        )]),
        1,
    );
}

#[test]
fn comment_open_with_resolution() {
    let fx = Fx::new();
    fx.edit("src/a/c_open.json", |c| {
        c["resolution"] = json!({ "note": "stale" })
    });
    fx.expect(
        json!([fnd(
            "warning",
            "comment-open-with-resolution",
            "reopened but keeps a stale resolution.",
            Some("src/a/c_open.json"),
            Some("c_open")
        )]),
        0,
    );
}

#[test]
fn journal_unknown_comment() {
    let fx = Fx::new();
    fx.put(
        "journal.json",
        json!([entry("j-1", "src/a", &["c_done", "c_ghost"])]),
    );
    fx.expect(
        json!([fnd(
            "warning",
            "journal-unknown-comment",
            "journal entry j-1 references unknown comment \"c_ghost\".",
            Some("journal.json"),
            Some("c_ghost")
        )]),
        0,
    );
}

#[test]
fn store_legacy_layout() {
    let fx = Fx::new();
    fx.put(
        "src/l.json",
        json!([comment("c_leg1", "src/l"), comment("c_leg2", "src/l")]),
    );
    let (code, report) = fx.verify();
    assert_eq!(report["checked"]["comments"], json!(4));
    assert_findings(
        &report,
        &json!([fnd(
            "warning",
            "store-legacy-layout",
            "2 comment(s) still in the v1 array layout — run `notabene migrate`.",
            None,
            None
        )]),
        0,
        code,
    );
}

/// A book at `<tmp>` (book.toml, `src/intro.md`) in a git repository rooted at `<tmp>`, so
/// the page prefix is `src`; its store is the default `<tmp>/.notabene`.
fn book(toml: &str) -> tempfile::TempDir {
    common::git_book(&[
        ("book.toml", toml),
        ("src/intro.md", "# Intro\n"),
        ("src/guide/setup.md", "# Setup\n"),
    ])
}

fn put(path: &Path, v: Value) {
    write(
        path,
        &format!("{}\n", serde_json::to_string_pretty(&v).unwrap()),
    );
}

#[test]
fn comment_page_missing() {
    let tmp = book("[book]\ntitle = \"T\"\n");
    let store = tmp.path().join(".notabene");
    put(&store.join("meta.json"), json!({ "schemaVersion": 3 }));
    put(
        &store.join("src/intro/c_ok1.json"),
        comment("c_ok1", "src/intro"),
    );
    put(
        &store.join("src/guide/setup/c_ok2.json"),
        comment("c_ok2", "src/guide/setup"),
    );
    put(
        &store.join("src/nope/c_gone.json"),
        comment("c_gone", "src/nope"),
    );
    // Pages outside the book's prefix are not this book's to check.
    put(
        &store.join("other/x/c_out.json"),
        comment("c_out", "other/x"),
    );
    let (code, report) = verify_json(tmp.path(), &["--book", "."]);
    assert_eq!(report["store"], ".notabene");
    assert_findings(
        &report,
        &json!([fnd(
            "warning",
            "comment-page-missing",
            "page \"src/nope\" has no source file.",
            Some("src/nope/c_gone.json"),
            Some("c_gone")
        )]),
        0,
        code,
    );
    // Without a book (only --store, from a directory outside any book), pages cannot be
    // checked.
    let elsewhere = common::tempdir();
    let (code, report) = verify_json(elsewhere.path(), &["--store", store.to_str().unwrap()]);
    assert_findings(&report, &json!([]), 0, code);
}

#[test]
fn comment_page_missing_with_configured_page_prefix() {
    let tmp =
        book("[book]\ntitle = \"T\"\n\n[preprocessor.notabene]\npage-prefix = \"docs/src\"\n");
    let store = tmp.path().join(".notabene");
    put(&store.join("meta.json"), json!({ "schemaVersion": 3 }));
    put(
        &store.join("docs/src/intro/c_ok1.json"),
        comment("c_ok1", "docs/src/intro"),
    );
    put(
        &store.join("docs/src/setup/c_gone.json"),
        comment("c_gone", "docs/src/setup"),
    );
    let (code, report) = verify_json(tmp.path(), &["--book", "."]);
    assert_findings(
        &report,
        &json!([fnd(
            "warning",
            "comment-page-missing",
            "page \"docs/src/setup\" has no source file.",
            Some("docs/src/setup/c_gone.json"),
            Some("c_gone")
        )]),
        0,
        code,
    );
}

#[test]
fn human_output_lines_and_summary() {
    let fx = Fx::new();
    fx.rm("meta.json");
    fx.edit("src/a/c_open.json", |c| c["hold"] = "yes".into());
    fx.edit("journal.json", |j| j[0]["title"] = "".into());
    let out = run(fx.tmp.path(), &["--store", "store", "comments", "verify"]);
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (
            1,
            "\
! no meta.json — run `notabene init` to stamp the schema version.  [store-meta-missing]
! journal.json: journal entry \"j-1\" has no title.  [journal-no-title]
✗ src/a/c_open.json: \"hold\" must be a boolean.  [comment-bad-hold]
notabene verify: 2 comment(s), 1 journal entr(ies) — 1 error(s), 2 warning(s).
",
            ""
        )
    );
}

#[test]
fn no_store_exits_2() {
    let tmp = common::tempdir();
    let missing = tmp.path().join("nope");
    let line = format!(
        "notabene: no store at {}. Run `notabene init` first.\n",
        missing.display()
    );
    for args in [
        &["--store", "nope", "comments", "verify"][..],
        &["--store", "nope", "comments", "verify", "--json"],
    ] {
        let out = run(tmp.path(), args);
        assert_eq!(
            (out.code, out.stdout.as_str(), out.stderr.as_str()),
            (2, "", line.as_str())
        );
    }
    assert!(!missing.exists(), "verify must not create the store");
}

#[test]
fn book_example_store_has_only_the_legacy_warning() {
    let tmp = common::tempdir();
    common::copy_into_repo(&common::book_example(), tmp.path(), "book-example");
    let before = common::tree(tmp.path());
    let out = run(
        tmp.path(),
        &["--book", "book-example", "comments", "verify", "--json"],
    );
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (
            0,
            r#"{
  "version": 1,
  "store": "book-example/.notabene",
  "checked": {
    "comments": 18,
    "journal": 2
  },
  "errors": 0,
  "warnings": 1,
  "findings": [
    {
      "level": "warning",
      "code": "store-legacy-layout",
      "message": "2 comment(s) still in the v1 array layout — run `notabene migrate`."
    }
  ]
}
"#,
            ""
        )
    );
    assert_eq!(common::tree(tmp.path()), before, "verify is read-only");
}

#[test]
fn comment_bad_suggestion() {
    let fx = Fx::new();
    // Well formed: nothing to say.
    fx.edit("src/a/c_open.json", |c| {
        c["scope"] = "selection".into();
        c["anchor"] = json!({ "quote": "q", "prefix": "", "suffix": "", "section": null });
        c["suggestion"] = json!({ "quote": "q", "text": "r" });
    });
    fx.expect(json!([]), 0);
    fx.edit("src/a/c_open.json", |c| {
        c["suggestion"] = json!({ "text": 3 })
    });
    fx.expect(
        json!([fnd(
            "warning",
            "comment-bad-suggestion",
            "\"suggestion\" must be {quote, text} (strings) on a selection comment; `comments apply` ignores it.",
            Some("src/a/c_open.json"),
            Some("c_open")
        )]),
        0,
    );
}

#[test]
fn store_temp_file() {
    let fx = Fx::new();
    fx.put_raw("src/a/.c_open.json.Xy12Ab.tmp", "{\"id\": \"c_op");
    fx.expect(
        json!([fnd(
            "warning",
            "store-temp-file",
            "temp file of an interrupted write (readers ignore it) — `notabene clean` removes it.",
            Some("src/a/.c_open.json.Xy12Ab.tmp"),
            None
        )]),
        0,
    );
}

/// The names in `dir`, as the file system holds them, in byte order.
#[cfg(unix)]
fn names(dir: &Path) -> Vec<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    let mut names: Vec<Vec<u8>> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().as_bytes().to_vec())
        .collect();
    names.sort();
    names
}

#[cfg(unix)]
#[test]
fn names_that_are_not_utf8_are_skipped_reported_and_never_duplicated() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let fx = Fx::new();
    let text = |id: &str, page: &str| {
        format!(
            "{}\n",
            serde_json::to_string_pretty(&comment(id, page)).unwrap()
        )
    };
    let page = fx.store.join("src/a");
    let odd = page.join(OsStr::from_bytes(b"c_x1\xff.json"));
    std::fs::write(&odd, text("c_x1", "src/a")).unwrap();
    // A page directory, with a comment in it; and a file that is no comment (no finding).
    let dir = fx.store.join("src").join(OsStr::from_bytes(b"b\xfe\xc3"));
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("c_y1.json"), text("c_y1", "src/b")).unwrap();
    std::fs::write(page.join(OsStr::from_bytes(b"notes\xff.txt")), "x").unwrap();
    let listing = names(&page);

    let (code, report) = fx.verify();
    assert_eq!(report["checked"]["comments"], json!(3));
    assert_findings(
        &report,
        &json!([
            fnd(
                "error",
                "comment-unreadable",
                "file name is not UTF-8: readers skip it — rename it to its comment id (`<id>.json`).",
                Some("src/a/c_x1\\xFF.json"),
                None
            ),
            fnd(
                "error",
                "comment-unreadable",
                "directory name is not UTF-8: readers skip it and every comment in it — rename it to its page id.",
                Some("src/b\\xFE\\xC3"),
                None
            ),
        ]),
        1,
        code,
    );

    // Readers skip both, and say so.
    let warnings = "notabene: skipping a comment file whose name is not UTF-8 (src/a/c_x1\\xFF.json)\n\
        notabene: skipping a directory whose name is not UTF-8 (src/b\\xFE\\xC3)\n";
    let ls = run(
        fx.tmp.path(),
        &["--store", "store", "comments", "ls", "--json"],
    );
    let ids: Vec<Value> = serde_json::from_str::<Value>(&ls.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].clone())
        .collect();
    assert_eq!(
        (ls.code, ids, ls.stderr.as_str()),
        (0, vec![json!("c_done"), json!("c_open")], warnings)
    );
    // A reply finds no such comment, and writes no second file under a lossy name.
    let out = run(
        fx.tmp.path(),
        &[
            "--store", "store", "comments", "reply", "c_x1", "--body", "hi",
        ],
    );
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (
            1,
            "",
            format!(
                "{warnings}notabene: comment \"c_x1\" not found under {}/\n",
                fx.store.display()
            )
            .as_str()
        )
    );
    assert_eq!(names(&page), listing);
    assert_eq!(common::read(&odd), text("c_x1", "src/a"));
}
