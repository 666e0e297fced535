//! `notabene gate`: the review state of the pages a change touches, on a copy of
//! `book-example` in git with a branch that edits two chapters — the same findings in every
//! format (golden files, `NB_BLESS=1` rewrites them), stable fingerprints, escapes that hold
//! against hostile comments and file names, re-check after a resolution, and an approval
//! through `serve`'s API that clears the gate with no Markdown change.

use crate::support::common::{
    self, book_example, copy_into_repo, git, git_output, read, run_with, write,
};
use pretty_assertions::assert_eq;
use serde_json::Value;
use std::path::{Path, PathBuf};

mod formats;
mod review_state;

/// Commits with fixed dates, so that nothing else moves between runs.
pub(super) const DATES: [(&str, &str); 2] = [
    ("GIT_AUTHOR_DATE", "2026-11-30T12:00:00Z"),
    ("GIT_COMMITTER_DATE", "2026-11-30T12:00:00Z"),
];

pub(super) fn commit(dir: &Path, message: &str) {
    git(dir, &["add", "-A"]);
    let out = git_output(dir, &["commit", "-qm", message], &DATES);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

pub(super) fn edit(book: &Path, file: &str, from: &str, to: &str) {
    let path = book.join(file);
    let text = read(&path);
    assert!(text.contains(from), "{file} holds {from:?}");
    write(&path, &text.replacen(from, to, 1));
}

/// book-example committed on `main`, then branch `edit` with one commit that edits two
/// chapters: a word on the line of a resolved comment (installing) and the text an open
/// comment quotes (configuration).
pub(super) fn repo() -> (tempfile::TempDir, PathBuf) {
    let tmp = common::tempdir();
    let book = copy_into_repo(&book_example(), tmp.path(), "book-example");
    commit(tmp.path(), "book");
    git(tmp.path(), &["branch", "-M", "main"]);
    git(tmp.path(), &["checkout", "-qb", "edit"]);
    edit(
        &book,
        "src/guide/installing.md",
        "It always picks the latest stable release;",
        "It always picks the newest stable release;",
    );
    edit(
        &book,
        "src/guide/configuration.md",
        "fall under the retry policy,",
        "fall under the retry polciy,",
    );
    commit(tmp.path(), "edit two chapters");
    (tmp, book)
}

/// `notabene --book book-example gate args…` at the top of the repository, with no CI
/// variables but `env`.
pub(super) fn gate(tmp: &Path, args: &[&str], env: &[(&str, &str)]) -> common::Out {
    let mut all = vec!["--book", "book-example", "gate"];
    all.extend_from_slice(args);
    let mut vars: Vec<(&str, &str)> = [
        "GITHUB_BASE_REF",
        "GITHUB_HEAD_REF",
        "GITHUB_STEP_SUMMARY",
        "CI_MERGE_REQUEST_DIFF_BASE_SHA",
        "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME",
        "CI_COMMIT_REF_NAME",
    ]
    .iter()
    .map(|k| (*k, ""))
    .collect();
    vars.extend_from_slice(env);
    run_with(tmp, &all, None, &vars)
}

/// `text` with every commit hash of the repository (whole, 12 and 7 digits) named by the
/// subject of its commit, so that goldens do not move with book-example's bytes.
pub(super) fn named_commits(tmp: &Path, text: &str) -> String {
    let mut out = text.to_string();
    for line in git(tmp, &["log", "--all", "--format=%H %s"]).lines() {
        let (hash, subject) = line.split_once(' ').unwrap();
        let name = format!("<{subject}>");
        for n in [40, 12, 7] {
            out = out.replace(&hash[..n], &name);
        }
    }
    out
}

/// The golden file `tests/fixtures/gate/<name>` holds `got` (written when `NB_BLESS` is set).
#[track_caller]
pub(super) fn golden(name: &str, got: &str) {
    let path = common::fixture("gate").join(name);
    if std::env::var_os("NB_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, got).unwrap();
    }
    assert_eq!(got, read(&path), "{name} (NB_BLESS=1 rewrites it)");
}

pub(super) const FORMATS: [(&str, &str); 7] = [
    ("text", "branch.txt"),
    ("json", "branch.json"),
    ("github", "branch.github.txt"),
    ("gitlab", "branch.gitlab.json"),
    ("sarif", "branch.sarif.json"),
    ("junit", "branch.junit.xml"),
    ("markdown", "branch.md"),
];

pub(super) const SITE: &str = "--site-url=https://docs.example.test/book/";

/// Each format's findings as (kind, comment id, file, line), in its order.
/// Each format's findings as (kind, comment id, file, line), in its order.
fn findings_in(format: &str, out: &str) -> Vec<(String, String, String, u64)> {
    let four = |k: &str, id: &str, file: &str, line: u64| {
        (k.to_string(), id.to_string(), file.to_string(), line)
    };
    match format {
        "json" => {
            let v: Value = serde_json::from_str(out).unwrap();
            v["findings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| {
                    four(
                        f["kind"].as_str().unwrap(),
                        f["id"].as_str().unwrap(),
                        f["file"].as_str().unwrap(),
                        f["line"].as_u64().unwrap(),
                    )
                })
                .collect()
        }
        "gitlab" => {
            let v: Value = serde_json::from_str(out).unwrap();
            v.as_array()
                .unwrap()
                .iter()
                .map(|f| {
                    let d = f["description"].as_str().unwrap();
                    let id = d.split(['(', ')']).nth(1).unwrap();
                    four(
                        f["check_name"]
                            .as_str()
                            .unwrap()
                            .trim_start_matches("notabene/"),
                        id,
                        f["location"]["path"].as_str().unwrap(),
                        f["location"]["lines"]["begin"].as_u64().unwrap(),
                    )
                })
                .collect()
        }
        "sarif" => {
            let v: Value = serde_json::from_str(out).unwrap();
            v["runs"][0]["results"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    let text = r["message"]["text"].as_str().unwrap();
                    let id = text.split(['(', ')']).nth(1).unwrap();
                    let loc = &r["locations"][0]["physicalLocation"];
                    four(
                        r["ruleId"]
                            .as_str()
                            .unwrap()
                            .trim_start_matches("notabene/"),
                        id,
                        loc["artifactLocation"]["uri"].as_str().unwrap(),
                        loc["region"]["startLine"].as_u64().unwrap(),
                    )
                })
                .collect()
        }
        "github" => out
            .lines()
            .map(|l| {
                let (props, _) = l.split_once("::").unwrap().1.split_once("::").unwrap();
                let (_, props) = props.split_once(' ').unwrap();
                let p = |k: &str| {
                    unescape(
                        props
                            .split(',')
                            .find_map(|kv| kv.strip_prefix(&format!("{k}=")))
                            .unwrap(),
                    )
                };
                let title = p("title");
                let id = title.split(['(', ')']).nth(1).unwrap().to_string();
                let kind = KINDS.iter().find(|(_, t)| title.starts_with(t)).unwrap().0;
                four(kind, &id, &p("file"), p("line").parse().unwrap())
            })
            .collect(),
        "junit" => out
            .lines()
            .filter_map(|l| l.trim().strip_prefix("<testcase classname=\""))
            .map(|l| {
                let file = l.split('"').next().unwrap();
                let name = l
                    .split("name=\"")
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap();
                let mut words = name.split(' ');
                let (kind, id) = (words.next().unwrap(), words.next().unwrap());
                let line = l
                    .split("line=\"")
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap();
                four(kind, id, file, line.parse().unwrap())
            })
            .collect(),
        other => panic!("no reader for {other}"),
    }
}

/// A workflow command's value as the runner reads it back.
fn unescape(s: &str) -> String {
    s.replace("%2C", ",")
        .replace("%3A", ":")
        .replace("%0D", "\r")
        .replace("%0A", "\n")
        .replace("%25", "%")
}

/// The kinds' titles, as annotations carry them.
const KINDS: [(&str, &str); 5] = [
    ("open", "Open review comment"),
    ("addressed", "Addressed, waiting for validation"),
    ("orphan", "Review comment lost its text"),
    ("fuzzy", "Review comment's text changed"),
    ("recheck", "Resolved comment's text changed since"),
];

#[test]
fn every_format_reports_the_same_findings_of_a_branch_that_edits_two_chapters() {
    let (tmp, _) = repo();
    let mut outputs = Vec::new();
    for (format, file) in FORMATS {
        let out = gate(
            tmp.path(),
            &["--base", "main", "--format", format, SITE],
            &[],
        );
        assert_eq!(out.code, 1, "{format}: {}", out.stderr);
        let want_err = if format == "text" {
            ""
        } else {
            "notabene: the gate fails: 2 open (--fail-on open,orphan)\n"
        };
        assert_eq!(out.stderr, want_err, "{format}");
        golden(file, &named_commits(tmp.path(), &out.stdout));
        outputs.push((format, out.stdout));
    }
    // The same findings, in the same order, in every structured format.
    let want = vec![
        (
            "recheck",
            "c_mwktnas69d1e",
            "book-example/src/guide/installing.md",
            16,
        ),
        (
            "open",
            "c_mwm6a3iye2uy",
            "book-example/src/guide/configuration.md",
            33,
        ),
        (
            "fuzzy",
            "c_mwm6a3iye2uy",
            "book-example/src/guide/configuration.md",
            33,
        ),
        (
            "addressed",
            "c_mworonpyb6ns",
            "book-example/src/guide/configuration.md",
            37,
        ),
        (
            "open",
            "c_mworge1zx4rb",
            "book-example/src/guide/configuration.md",
            41,
        ),
        (
            "fuzzy",
            "c_mworge1zx4rb",
            "book-example/src/guide/configuration.md",
            41,
        ),
    ];
    let want: Vec<_> = want
        .into_iter()
        .map(|(k, id, f, l)| (k.to_string(), id.to_string(), f.to_string(), l))
        .collect();
    for (format, out) in &outputs {
        if matches!(*format, "text" | "markdown") {
            continue;
        }
        assert_eq!(findings_in(format, out), want, "{format}");
    }
    // The GitHub format appends the Markdown report to the step's summary file.
    let summary = tmp.path().join("step-summary.md");
    write(&summary, "An earlier step's summary.\n");
    let out = gate(
        tmp.path(),
        &["--base", "main", "--format", "github", SITE],
        &[("GITHUB_STEP_SUMMARY", summary.to_str().unwrap())],
    );
    assert_eq!(out.stdout, outputs[2].1);
    assert_eq!(
        read(&summary),
        format!("An earlier step's summary.\n{}", outputs[6].1)
    );
    // Twice, and after an unrelated commit: the same bytes, so the same fingerprints.
    let again: Vec<String> = FORMATS
        .iter()
        .map(|(f, _)| gate(tmp.path(), &["--base", "main", "--format", f, SITE], &[]).stdout)
        .collect();
    assert_eq!(
        again,
        outputs.iter().map(|o| o.1.clone()).collect::<Vec<_>>()
    );
    write(&tmp.path().join("NOTES.txt"), "not part of the book\n");
    commit(tmp.path(), "unrelated");
    for (i, (f, _)) in FORMATS.iter().enumerate() {
        let out = gate(tmp.path(), &["--base", "main", "--format", f, SITE], &[]);
        assert_eq!(out.stdout, outputs[i].1, "{f} after an unrelated commit");
    }
    let fingerprints: Vec<Value> = serde_json::from_str::<Value>(&outputs[3].1)
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["fingerprint"].clone())
        .collect();
    let unique: std::collections::BTreeSet<String> = fingerprints
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        unique.len(),
        6,
        "one fingerprint per finding: {fingerprints:?}"
    );
}
