//! An `apply` record that arrives with a merged branch is never carried out: whatever it names
//! (`.git/config`, `book.toml`, raw HTML for a chapter), an `apply` through the CLI, the served
//! book's API or MCP writes only the suggestion it was asked for, and `verify` names the record.

use crate::support::common::{self, copy_dir, git, read, run, suggest, write};
use crate::support::serve::Server;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::path::Path;

const CHAPTER: &str = "src/guide/installing.md";
const QUOTE: &str = "single static binary";
const TEXT: &str = "single, static binary";

/// A repository whose root is a copy of book-example, into which a branch carrying a planted
/// record and a comment with a harmless suggestion was merged. Returns the comment's id.
fn merged(d: &Path) -> String {
    common::copy_book(&common::book_example(), d);
    common::git_commit_all(d, "book");
    run(d, &["init", "--no-agents-md"]).ok();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "store"]);
    git(d, &["checkout", "-qb", "hostile"]);
    let id = suggest(d, "src/guide/installing", QUOTE, TEXT);
    let git_marker = d.join("PWNED-git");
    let build_marker = d.join("PWNED-build");
    let edit = |text: String| json!({ "start": 0, "expected": "", "after": "", "text": text });
    let close =
        |file: &str| json!({ "id": id, "before": {}, "after": {}, "file": file, "line": 1 });
    let record = json!({
        "files": [
            { "path": ".git/config", "edits": [edit(format!("[core]\n\tfsmonitor = \"touch {}\"\n", git_marker.display()))] },
            { "path": "book.toml", "edits": [edit(format!("[preprocessor.pwn]\ncommand = \"touch {}\"\n\n", build_marker.display()))] },
            { "path": CHAPTER, "edits": [edit("<script>alert('pwned')</script>\n\n".into())] },
        ],
        "closes": [close(".git/config"), close("book.toml"), close(CHAPTER)],
    });
    write(&d.join(".notabene/.apply-pending.tmp"), &record.to_string());
    git(d, &["add", "-f", "-A"]);
    git(d, &["commit", "-qm", "a comment (and a planted record)"]);
    git(d, &["checkout", "-q", "main"]);
    git(d, &["merge", "-q", "--no-ff", "-m", "merge", "hostile"]);
    assert!(
        git(d, &["ls-files", ".notabene/.apply-pending.tmp"]).contains("apply-pending"),
        "the record is tracked"
    );
    id
}

/// After an apply of the planted comment: the chapter differs from the original by the
/// suggestion's span only, `.git/config` and `book.toml` are as they were, `git status` and a
/// build run nothing of the record's, `verify` names it.
fn check(d: &Path, how: &str, config: &str, toml: &str, chapter: &str) {
    assert_eq!(
        read(&d.join(CHAPTER)),
        chapter.replacen(QUOTE, TEXT, 1),
        "{how}: only the suggestion's span changed"
    );
    assert_eq!(read(&d.join(".git/config")), config, "{how}: .git/config");
    assert_eq!(read(&d.join("book.toml")), toml, "{how}: book.toml");
    git(d, &["status", "--porcelain"]);
    assert!(
        !d.join("PWNED-git").exists(),
        "{how}: git status ran a command"
    );
    common::build(d, Some(&d.join("site")), &[]);
    assert!(
        !d.join("PWNED-build").exists(),
        "{how}: a build ran a preprocessor"
    );
    let v = run(d, &["comments", "verify"]);
    assert_eq!(v.code, 1, "{how}: {}", v.stdout);
    assert!(
        v.stdout.contains("[apply-record-foreign]") && v.stdout.contains(".apply-pending.tmp"),
        "{how}: verify names the record: {}",
        v.stdout
    );
    assert_eq!(
        read(&d.join(".notabene/.apply-pending.tmp")).is_empty(),
        false,
        "{how}: the record is reported, not removed"
    );
}

#[test]
fn a_record_merged_with_a_branch_is_never_carried_out() {
    let base = common::tempdir();
    let id = merged(base.path());
    let config = read(&base.path().join(".git/config"));
    let toml = read(&base.path().join("book.toml"));
    let chapter = read(&base.path().join(CHAPTER));

    // The CLI.
    let tmp = common::tempdir();
    let d = tmp.path();
    copy_dir(base.path(), d);
    let out = run(d, &["comments", "apply", &id]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    check(d, "comments apply", &config, &toml, &chapter);

    // A served book's Apply button.
    let tmp = common::tempdir();
    let d = tmp.path();
    copy_dir(base.path(), d);
    {
        let server = Server::start_dir(d);
        let (code, body) = server.json("POST", "/__notabene/api/apply", &json!({ "id": id }));
        assert_eq!(code, 200, "{body}");
        assert_eq!(body["status"], "addressed", "{body}");
    }
    check(d, "POST apply", &config, &toml, &chapter);

    // MCP's apply_suggestion, through the official SDK.
    let Some(py) = crate::mcp::python() else {
        return;
    };
    let tmp = common::tempdir();
    let d = tmp.path();
    copy_dir(base.path(), &d.join("repo"));
    let d = d.join("repo");
    let results = crate::mcp::mcp_on(
        &py,
        &d,
        ".",
        &json!([{ "tool": "apply_suggestion", "args": { "ids": [id] } }]),
    );
    assert_eq!(results[0]["isError"], false, "{}", results[0]);
    check(&d, "apply_suggestion", &config, &toml, &chapter);
}
