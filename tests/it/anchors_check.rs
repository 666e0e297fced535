//! `notabene anchors --check [--since REV]`: the guard for an agent's own edits, on a copy of
//! `book-example` committed to git. An edit that detaches a comment the agent did not close
//! exits 1 and names it; an edit that only rewrites the text of the comments it closes exits 0
//! and lists them as expected.

use crate::support::common::{
    self, book_example, copy_into_repo, git, git_commit_all, read, run, write,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// A committed copy of book-example: (temp dir, book root).
fn repo() -> (tempfile::TempDir, PathBuf) {
    let tmp = common::tempdir();
    let book = copy_into_repo(&book_example(), tmp.path(), "book-example");
    git_commit_all(tmp.path(), "book");
    (tmp, book)
}

fn edit(book: &Path, file: &str, from: &str, to: &str) {
    let path = book.join(file);
    let text = read(&path);
    assert!(text.contains(from), "{file} holds {from:?}");
    write(&path, &text.replacen(from, to, 1));
}

fn check(tmp: &Path, extra: &[&str]) -> common::Out {
    let mut args = vec!["--book", "book-example", "anchors", "--check"];
    args.extend_from_slice(extra);
    run(tmp, &args)
}

#[test]
fn an_untouched_tree_is_clean() {
    let (tmp, _) = repo();
    let head = git(tmp.path(), &["rev-parse", "HEAD"]);
    let out = check(tmp.path(), &[]);
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (
            0,
            format!(
                "notabene: none of the 14 comment(s) open at HEAD ({}) anchors worse in the working tree.\n",
                &head[..12]
            )
            .as_str(),
            ""
        )
    );
}

#[test]
fn an_edit_that_detaches_a_bystander_exits_1_and_names_it() {
    let (tmp, book) = repo();
    let head = git(tmp.path(), &["rev-parse", "HEAD"]);
    // The agent answers the calibration comment, and rewrites the sentence the suggestion
    // comment quotes on the way (it was not asked to).
    edit(
        &book,
        "src/guide/sensors.md",
        "Anything else is optional and specific to the sensor kind.",
        "Other keys depend on the kind.",
    );
    let out = check(tmp.path(), &[]);
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (
            1,
            format!(
                "[c_mwt1s7r4gz7k] book-example/src/guide/sensors: exact → orphan — BYSTANDER: still open\n\
                 notabene: 1 of the 14 comment(s) open at HEAD ({}) anchor worse; 1 of them still open.\n",
                &head[..12]
            )
            .as_str(),
            ""
        )
    );
    // The same as JSON, for an agent or a hook.
    let out = check(tmp.path(), &["--json"]);
    assert_eq!(out.code, 1);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        v,
        json!({
            "since": "HEAD",
            "commit": head.trim(),
            "checked": 14,
            "worse": [{
                "id": "c_mwt1s7r4gz7k",
                "page": "book-example/src/guide/sensors",
                "before": { "status": "exact", "confidence": 1, "followedTo": null, "ambiguous": false },
                "after": { "status": "orphan", "confidence": 0, "followedTo": null, "ambiguous": false },
                "reasons": ["exact → orphan"],
                "closed": false,
                "statusNow": "open",
            }],
            "bystanders": 1,
        })
    );
    // A small change of the words makes it fuzzy: still a bystander, still exit 1.
    write(
        &book.join("src/guide/sensors.md"),
        &git(
            tmp.path(),
            &["show", "HEAD:book-example/src/guide/sensors.md"],
        ),
    );
    edit(
        &book,
        "src/guide/sensors.md",
        "Anything else is optional and specific to the sensor kind.",
        "Anything else is optional and specific to each sensor kind.",
    );
    let out = check(tmp.path(), &[]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout
            .starts_with("[c_mwt1s7r4gz7k] book-example/src/guide/sensors: exact → fuzzy (0."),
        "{}",
        out.stdout
    );
}

#[test]
fn an_edit_of_only_the_text_of_the_comments_it_closes_exits_0() {
    let (tmp, book) = repo();
    // The agent rewrites the sentence it was asked about, and closes that comment.
    edit(
        &book,
        "src/reference/cli.md",
        "`3` means the archive is unwritable",
        "`3` means that Skylark cannot write to the archive directory",
    );
    let done = run(
        tmp.path(),
        &[
            "--book",
            "book-example",
            "comments",
            "done",
            "c_mwq6asw3w1ge",
            "--note",
            "Said which directory.",
        ],
    );
    assert_eq!(done.code, 0, "{}", done.stderr);
    let out = check(tmp.path(), &[]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "[c_mwq6asw3w1ge] book-example/src/reference/cli: exact → orphan — closed in this change (addressed)"
    );
    assert!(
        lines[1].ends_with("anchor worse; 0 of them still open."),
        "{}",
        lines[1]
    );
    assert_eq!(lines.len(), 2);
    // Committed, the next check starts from there: nothing was open then that got worse.
    git(tmp.path(), &["add", "-A"]);
    git(tmp.path(), &["commit", "-qm", "pass"]);
    assert_eq!(check(tmp.path(), &[]).code, 0);
    // --since the first commit: the closed comment is still the only one listed.
    let first = git(tmp.path(), &["rev-list", "--max-parents=0", "HEAD"]);
    let out = check(tmp.path(), &["--since", first.trim(), "--json"]);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        (
            out.code,
            v["worse"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| (w["id"].clone(), w["closed"].clone()))
                .collect::<Vec<_>>()
        ),
        (0, vec![(json!("c_mwq6asw3w1ge"), json!(true))])
    );
}

#[test]
fn bad_revisions_and_a_book_outside_git_are_one_line_errors() {
    let (tmp, _) = repo();
    let out = check(tmp.path(), &["--since", "no-such-rev"]);
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (
            1,
            "",
            "notabene: unknown revision \"no-such-rev\" (--since)\n"
        )
    );
    let out = run(
        tmp.path(),
        &["--book", "book-example", "anchors", "--since", "HEAD"],
    );
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("--check"), "{}", out.stderr);
    let plain = common::tempdir();
    let book = plain.path().join("book-example");
    common::copy_book(&book_example(), &book);
    let out = run(
        plain.path(),
        &["--book", "book-example", "anchors", "--check"],
    );
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .starts_with("notabene: anchors --check compares with git history, and ")
            && out
                .stderr
                .ends_with(" is not in a git repository (--since)\n"),
        "{}",
        out.stderr
    );
}

/// A plain rename of a chapter (git mv, SUMMARY.md updated): its comments are followed to the
/// new page exactly, and nothing got worse.
#[test]
fn a_chapter_renamed_with_its_comments_followed_exactly_is_clean() {
    let (tmp, book) = repo();
    git(
        tmp.path(),
        &[
            "mv",
            "book-example/src/reference/cli.md",
            "book-example/src/reference/commands.md",
        ],
    );
    edit(
        &book,
        "src/SUMMARY.md",
        "reference/cli.md",
        "reference/commands.md",
    );
    let head = git(tmp.path(), &["rev-parse", "HEAD"]);
    let out = check(tmp.path(), &[]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (
            0,
            format!(
                "notabene: none of the 14 comment(s) open at HEAD ({}) anchors worse in the working tree.\n",
                &head[..12]
            )
            .as_str()
        ),
        "{}",
        out.stderr
    );
}
