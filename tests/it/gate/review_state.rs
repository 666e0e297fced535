//! The review state over time: re-check after a resolution, an approval through `serve`'s API,
//! the base the gate compares with and its errors, and the MCP `gate` tool.

use super::*;
use crate::support::common::{self, book_example, copy_into_repo, git, read, run_with, write};
use crate::support::serve::Server;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::path::Path;

/// (kind, id, detail) of the findings of a `--format json` report.
fn kinds_ids_details(out: &str) -> Vec<(String, String, String)> {
    let v: Value = serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}: {out}"));
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap().to_string();
            (s("kind"), s("id"), s("detail"))
        })
        .collect()
}

#[test]
fn a_resolved_comment_whose_text_changed_later_is_rechecked_until_resolved_again() {
    let tmp = common::tempdir();
    let book = copy_into_repo(&book_example(), tmp.path(), "book-example");
    commit(tmp.path(), "book");
    let id = "c_mwt21r485yk5";
    let done = |tmp: &Path, note: &str| {
        let out = run_with(
            tmp,
            &[
                "--book",
                "book-example",
                "comments",
                "done",
                id,
                "--status",
                "resolved",
                "--note",
                note,
            ],
            None,
            &[],
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
    };
    done(tmp.path(), "Said so.");
    commit(tmp.path(), "resolve");
    let rechecks = |tmp: &Path| -> (i32, Vec<(String, String, String)>) {
        let out = gate(
            tmp,
            &["--all", "--format", "json", "--fail-on", "recheck"],
            &[],
        );
        let found = kinds_ids_details(&out.stdout)
            .into_iter()
            .filter(|f| f.0 == "recheck")
            .collect();
        (out.code, found)
    };
    assert_eq!(
        rechecks(tmp.path()),
        (0, vec![]),
        "resolved, nothing changed since"
    );
    // The text it is about, edited in a later commit (the same second: clocks say nothing).
    edit(
        &book,
        "src/guide/sensors.md",
        "mm_per_tip = 0.2",
        "mm_per_tip = 0.25",
    );
    commit(tmp.path(), "edit");
    let (code, found) = rechecks(tmp.path());
    let want = |detail: String| vec![("recheck".to_string(), id.to_string(), detail)];
    let named = |s: &str| named_commits(tmp.path(), s);
    assert_eq!(
        (
            code,
            found
                .iter()
                .map(|f| (f.0.clone(), f.1.clone(), named(&f.2)))
                .collect::<Vec<_>>()
        ),
        (
            1,
            want("resolved in <resolve>; line 29 changed since, by <edit>".into())
        )
    );
    // An edit not committed yet is the work tree's; the quote now lost, its file is looked at.
    edit(
        &book,
        "src/guide/sensors.md",
        "mm_per_tip = 0.25",
        "mm_per_tip = 0.3",
    );
    assert_eq!(
        rechecks(tmp.path())
            .1
            .iter()
            .map(|f| named(&f.2))
            .collect::<Vec<_>>(),
        ["resolved in <resolve>; its file changed since, in the work tree"]
    );
    commit(tmp.path(), "edit again");
    // Reopened and resolved again: cleared, in the work tree and once committed.
    run_with(
        tmp.path(),
        &["--book", "book-example", "comments", "reopen", id],
        None,
        &[],
    )
    .ok();
    done(tmp.path(), "Checked the new value.");
    assert_eq!(
        rechecks(tmp.path()),
        (0, vec![]),
        "resolved again, not committed"
    );
    commit(tmp.path(), "resolve again");
    assert_eq!(
        rechecks(tmp.path()),
        (0, vec![]),
        "resolved again, committed"
    );
}

#[test]
fn an_approval_through_the_served_api_clears_the_gate_with_no_markdown_change() {
    let server = Server::start(&[], |book| {
        let top = book.parent().unwrap();
        git(top, &["branch", "-M", "main"]);
        git(top, &["checkout", "-qb", "change"]);
        edit(
            book,
            "src/guide/configuration.md",
            "fall under the retry policy,",
            "fall under the retry polciy,",
        );
        commit(top, "edit");
    });
    let top = server.book.parent().unwrap().to_path_buf();
    let id = "c_mworonpyb6ns";
    let run = || {
        gate(
            &top,
            &[
                "--base",
                "main",
                "--fail-on",
                "addressed",
                "--format",
                "json",
            ],
            &[],
        )
    };
    let out = run();
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(kinds_ids_details(&out.stdout).contains(&(
        "addressed".into(),
        id.into(),
        "addressed, waiting for validation".into()
    )));
    let (code, r) = server.json(
        "PATCH",
        "/__notabene/api/comments",
        &json!({ "page": "book-example/src/guide/configuration", "id": id, "status": "resolved" }),
    );
    assert_eq!((code, r["status"].as_str()), (200, Some("resolved")), "{r}");
    let out = run();
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(!kinds_ids_details(&out.stdout).iter().any(|f| f.1 == id));
    // No Markdown changed: the store's file of that comment is all the approval wrote.
    // (`serve` writes the reader client into the book's theme, which git does not track.)
    let status = git(&top, &["status", "--porcelain"]);
    let changed: Vec<&str> = status
        .lines()
        .filter(|l| *l != "?? book-example/theme/")
        .collect();
    assert_eq!(
        changed,
        [" M book-example/.notabene/book-example/src/guide/configuration/c_mworonpyb6ns.json"],
        "{status}"
    );
}

#[test]
fn bad_arguments_and_a_missing_base_are_one_line_errors() {
    let (tmp, _) = repo();
    let err = |args: &[&str]| {
        let out = gate(tmp.path(), args, &[]);
        assert_eq!((out.code, out.stdout.as_str()), (1, ""), "{args:?}");
        out.stderr
    };
    assert_eq!(
        err(&["--fail-on", "open,bogus"]),
        "notabene: unknown kind \"bogus\": expected open, addressed, orphan, fuzzy, recheck or none (--fail-on)\n"
    );
    assert_eq!(
        err(&["--fail-on", "none,open"]),
        "notabene: none cannot be combined with other kinds (--fail-on)\n"
    );
    assert_eq!(
        err(&["--base", "no-such-branch"]),
        "notabene: no merge base of HEAD and \"no-such-branch\": not a revision of this repository (--base)\n"
    );
    assert_eq!(
        err(&["--site-url", "javascript:alert(1)"]),
        "notabene: \"javascript:alert(1)\" is not an http(s) URL (--site-url)\n"
    );
    assert_eq!(
        err(&[]),
        "notabene: no base branch to compare with: neither GITHUB_BASE_REF, CI_MERGE_REQUEST_DIFF_BASE_SHA nor origin/HEAD names a commit; pass --base REV, or --all for every page (--base)\n"
    );
    // A shallow clone has no merge base: the remedy is to fetch the history.
    let shallow = common::tempdir();
    let url = format!("file://{}", tmp.path().display());
    git(
        shallow.path(),
        &["clone", "-q", "--depth", "1", "--branch", "edit", &url, "c"],
    );
    let c = shallow.path().join("c");
    git(
        &c,
        &[
            "fetch",
            "-q",
            "--depth",
            "1",
            "origin",
            "main:refs/remotes/origin/main",
        ],
    );
    assert_eq!(
        gate(&c, &["--base", "origin/main"], &[]).stderr,
        "notabene: no merge base of HEAD and \"origin/main\": fetch the history (a shallow clone has none) (--base)\n"
    );
    // In a GitHub pull request the base branch is origin/$GITHUB_BASE_REF.
    git(
        tmp.path(),
        &["update-ref", "refs/remotes/origin/main", "main"],
    );
    let out = gate(
        tmp.path(),
        &["--format", "json"],
        &[("GITHUB_BASE_REF", "main")],
    );
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        (v["base"]["rev"].as_str(), v["base"]["from"].as_str()),
        (Some("origin/main"), Some("GITHUB_BASE_REF"))
    );
    assert_eq!(v["findings"].as_array().unwrap().len(), 6);
    // Outside git, only --all.
    let plain = common::tempdir();
    let book = plain.path().join("book");
    common::copy_book(&book_example(), &book);
    let out = run_with(&book, &["gate"], None, &[]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .starts_with("notabene: the gate compares with git history, and ")
            && out
                .stderr
                .ends_with(" is not in a git repository; pass --all for every page (--base)\n"),
        "{}",
        out.stderr
    );
    let out = run_with(&book, &["gate", "--all", "--fail-on", "none"], None, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .ends_with("is not in a git repository: resolved comments are not re-checked\n"),
        "{}",
        out.stderr
    );
}

#[test]
fn the_mcp_gate_tool_answers_the_json_report() {
    let Some(py) = crate::mcp::python() else {
        return;
    };
    let (tmp, _) = repo();
    let steps = json!([
        { "tool": "gate", "args": { "base": "main" } },
        { "tool": "gate", "args": { "base": "main", "failOn": ["addressed"] } },
        { "tool": "gate", "args": { "failOn": ["nope"], "all": true } },
    ]);
    let r = crate::mcp::mcp_on(&py, tmp.path(), "book-example", &steps);
    let cli: Value = serde_json::from_str(
        &gate(tmp.path(), &["--base", "main", "--format", "json"], &[]).stdout,
    )
    .unwrap();
    assert_eq!(r[0]["isError"], false, "{}", r[0]["text"]);
    assert_eq!(r[0]["structured"], cli);
    assert_eq!(r[1]["structured"]["failOn"], json!(["addressed"]));
    assert_eq!(r[1]["structured"]["failed"], true);
    assert_eq!(r[2]["isError"], true);
    assert_eq!(
        r[2]["text"],
        "notabene: unknown kind \"nope\": expected open, addressed, orphan, fuzzy or recheck (failOn)"
    );
}

#[test]
fn an_inert_gate_runs_none_of_a_branchs_commands() {
    let (tmp, book) = repo();
    // The branch adds a preprocessor whose command writes a file.
    let marker = tmp.path().join("pwned");
    let toml = book.join("book.toml");
    write(
        &toml,
        &format!(
            "{}\n[preprocessor.pwn]\ncommand = \"sh -c 'touch \\\"$0\\\"' {}\"\n",
            read(&toml),
            marker.display()
        ),
    );
    let out = gate(
        tmp.path(),
        &["--base", "main", "--inert", "--format", "json"],
        &[],
    );
    assert!(!marker.exists(), "an inert gate ran the branch's command");
    assert_eq!(out.code, 1, "{}", out.stderr);
    let trusting = gate(tmp.path(), &["--base", "main", "--format", "json"], &[]);
    assert!(
        marker.exists(),
        "the command runs without --inert: {}",
        trusting.stderr
    );
    // The same findings as the book without that table (the pages are the same).
    let findings = |s: &str| serde_json::from_str::<Value>(s).unwrap()["findings"].clone();
    write(
        &toml,
        read(&toml)
            .split(
                "
[preprocessor.pwn]",
            )
            .next()
            .unwrap(),
    );
    let plain = gate(tmp.path(), &["--base", "main", "--format", "json"], &[]);
    assert_eq!(findings(&out.stdout), findings(&plain.stdout));
}
