//! The gate's formats against their published schemas and documented fields, and against
//! hostile comments and file names: every value stays data.

use super::*;
use crate::support::common::{self, read, run_with, write};
use pretty_assertions::assert_eq;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// `check-jsonschema` 0.39.0 in the tests' Python environment (installed there when missing);
/// `None` where there is no python3 (the MCP tests skip likewise; under `CI` that fails).
pub(super) fn check_jsonschema() -> Option<PathBuf> {
    let Some(py) = crate::mcp::python() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "python3 is required under CI for the schema checks"
        );
        return None;
    };
    let tool = py.with_file_name("check-jsonschema");
    if !tool.is_file() {
        let ok = crate::mcp::pip_install(&py, "check-jsonschema==0.39.0");
        assert!(ok && tool.is_file(), "could not install check-jsonschema");
    }
    Some(tool)
}

/// The SARIF 2.1.0 schema as the `serde-sarif` crate publishes it (`src/schema.json` of the
/// package Cargo fetched): not written by hand.
pub(super) fn published_sarif_schema() -> PathBuf {
    let out = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(common::repo_root().join("Cargo.toml"))
        .output()
        .expect("cargo metadata");
    let meta: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata's JSON");
    let manifest = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "serde-sarif")
        .expect("serde-sarif among the packages")["manifest_path"]
        .as_str()
        .unwrap()
        .to_string();
    let schema = Path::new(&manifest)
        .with_file_name("src")
        .join("schema.json");
    assert!(
        read(&schema).contains("Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"),
        "{}",
        schema.display()
    );
    schema
}

/// Validates `file` with check-jsonschema and `args`: (exit code, its output).
pub(super) fn validate(tool: &Path, args: &[&str], file: &Path) -> (i32, String) {
    let out = std::process::Command::new(tool)
        .args(args)
        .arg(file)
        .output()
        .expect("run check-jsonschema");
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn the_sarif_report_validates_against_the_published_schema() {
    let Some(tool) = check_jsonschema() else {
        return;
    };
    let (tmp, _) = repo();
    let schema = published_sarif_schema();
    let schema = schema.to_str().unwrap();
    // The published schema's `language` pattern is not an ECMAScript regex in Unicode mode:
    // its patterns are read as Python's.
    let args = ["--regex-variant", "python", "--schemafile", schema];
    for extra in [
        &[SITE][..],
        &["--hub-url", "https://hub.example.test", "--branch", "edit"],
    ] {
        let mut a = vec!["--base", "main", "--format", "sarif"];
        a.extend_from_slice(extra);
        let out = gate(tmp.path(), &a, &[]);
        let file = tmp.path().join("gate.sarif");
        write(&file, &out.stdout);
        let (code, said) = validate(&tool, &args, &file);
        assert_eq!(code, 0, "{said}");
        // The validator does reject what is not SARIF: the same log without its version.
        let mut v: Value = serde_json::from_str(&out.stdout).unwrap();
        v.as_object_mut().unwrap().remove("version");
        write(&file, &v.to_string());
        let (code, said) = validate(&tool, &args, &file);
        assert_eq!(code, 1, "{said}");
    }
    // The hub's links: the branch's book on the hub.
    let out = gate(
        tmp.path(),
        &[
            "--base",
            "main",
            "--format",
            "json",
            "--hub-url",
            "https://hub.example.test/",
            "--branch",
            "feature/x y",
        ],
        &[],
    );
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        v["findings"][0]["link"],
        "https://hub.example.test/b/feature%2Fx%20y/guide/installing.html?nb=c_mwktnas69d1e"
    );
}

#[test]
fn the_gitlab_report_has_the_code_quality_fields_and_stable_fingerprints() {
    let (tmp, _) = repo();
    let out = gate(tmp.path(), &["--base", "main", "--format", "gitlab"], &[]);
    let list: Value = serde_json::from_str(&out.stdout).unwrap();
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 6);
    let mut fingerprints = std::collections::BTreeSet::new();
    for f in list {
        assert!(
            f["description"].as_str().is_some_and(|d| !d.is_empty()),
            "{f}"
        );
        assert!(
            f["check_name"]
                .as_str()
                .is_some_and(|c| c.starts_with("notabene/")),
            "{f}"
        );
        assert!(
            ["info", "minor", "major", "critical", "blocker"]
                .contains(&f["severity"].as_str().unwrap()),
            "{f}"
        );
        let path = f["location"]["path"].as_str().unwrap();
        assert!(
            !path.starts_with('/') && tmp.path().join(path).is_file(),
            "{path}"
        );
        assert!(
            f["location"]["lines"]["begin"].as_u64().unwrap() >= 1,
            "{f}"
        );
        assert!(
            fingerprints.insert(f["fingerprint"].as_str().unwrap().to_string()),
            "unique"
        );
    }
    // The severity follows --fail-on: the open comments are major by default, minor with none.
    let severities = |out: &str| -> Vec<String> {
        serde_json::from_str::<Value>(out)
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["severity"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        severities(&out.stdout),
        ["minor", "major", "minor", "minor", "major", "minor"]
    );
    let none = gate(
        tmp.path(),
        &["--base", "main", "--format", "gitlab", "--fail-on", "none"],
        &[],
    );
    assert_eq!(none.code, 0);
    assert_eq!(severities(&none.stdout), ["minor"; 6]);
}

/// A chapter whose file name holds a comma, a colon and spaces, and a comment on it whose text
/// is everything a format could take for its own syntax.
const HOSTILE: &str = "50% done\r\n::error file=x.md,line=1::injected\n| a | b |\n`code` ``` @octocat [x](javascript:alert(1)) <img src=x onerror=alert(1)> </failure><![CDATA[ ]]> \u{1b}[31mred\u{7} &amp;";

fn hostile_repo() -> (tempfile::TempDir, PathBuf, String) {
    let (tmp, book) = repo();
    write(
        &book.join("src/notes, part 1: intro.md"),
        "# Notes\n\nThe station keeps its notes here.\n",
    );
    let summary = book.join("src/SUMMARY.md");
    write(
        &summary,
        &format!("{}- [Notes](<notes, part 1: intro.md>)\n", read(&summary)),
    );
    let out = run_with(
        tmp.path(),
        &[
            "--book",
            "book-example",
            "comments",
            "add",
            "--json",
            "--page",
            "book-example/src/notes, part 1: intro",
            "--quote",
            "keeps its notes",
            "--body",
            HOSTILE,
            "--author",
            "Mallory <m@example.com>",
        ],
        None,
        &[],
    );
    let id = serde_json::from_str::<Value>(out.ok()).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    (tmp, book, id)
}

#[test]
fn hostile_comments_and_file_names_stay_data_in_every_format() {
    let (tmp, _, id) = hostile_repo();
    let file = "book-example/src/notes, part 1: intro.md";
    let run = |format: &str| {
        gate(
            tmp.path(),
            &["--base", "main", "--format", format, SITE],
            &[],
        )
    };
    // GitHub: one command per line, `::level props::data`, no raw `:` or `,` in a property
    // value and no raw CR or LF anywhere; read back, the values are the comment's.
    let github = run("github").stdout;
    let lines: Vec<&str> = github.lines().collect();
    assert_eq!(lines.len(), 7, "{github}");
    for l in &lines {
        let (head, data) = l[2..].split_once("::").unwrap();
        let (level, props) = head.split_once(' ').unwrap();
        assert!(level == "error" || level == "warning", "{l}");
        for kv in props.split(',') {
            let (k, v) = kv.split_once('=').unwrap();
            assert!(["file", "line", "endLine", "title"].contains(&k), "{l}");
            assert!(!v.contains([':', ',', '\r', '\n']), "{l}");
        }
        assert!(!data.contains(['\r', '\n']), "{l}");
    }
    let mine = lines.iter().find(|l| l.contains(&id)).unwrap();
    let (head, data) = mine[2..].split_once("::").unwrap();
    assert_eq!(
        head,
        format!(
            "error file=book-example/src/notes%2C part 1%3A intro.md,line=3,endLine=3,title=Open review comment ({id})"
        )
    );
    assert_eq!(
        unescape(data),
        format!(
            "Mallory: {HOSTILE}\nopen\nhttps://docs.example.test/book/notes,%20part%201:%20intro.html?nb={id}"
        )
    );
    // Markdown: the message is one code span on one line, its pipes escaped, its fence longer
    // than its longest run of backticks.
    let md = run("markdown").stdout;
    let row = md.lines().find(|l| l.contains(&id)).unwrap();
    assert_eq!(
        row,
        format!(
            "| ✗ open | [` {id} `](<https://docs.example.test/book/notes,%20part%201:%20intro.html?nb={id}>) | 3 | ` Mallory ` | ```` 50% done ::error file=x.md,line=1::injected \\| a \\| b \\| `code` ``` @octocat [x](javascript:alert(1)) <img src=x onerror=alert(1)> </failure><![CDATA[ ]]> [31mred… ```` |"
        )
    );
    // JUnit: well-formed XML whose failure holds the message as text.
    let junit = run("junit").stdout;
    assert!(junit.contains("&lt;img src=x onerror=alert(1)&gt; &lt;/failure&gt;&lt;![CDATA[ ]]&gt; [31mred &amp;amp;"), "{junit}");
    let xml = tmp.path().join("gate.xml");
    write(&xml, &junit);
    let parsed = std::process::Command::new("python3")
        .args(["-c", "import sys, xml.etree.ElementTree as E; t = E.parse(sys.argv[1]); print(len(t.findall('.//testcase')), len(t.findall('.//failure')))"])
        .arg(&xml)
        .output()
        .expect("python3");
    assert_eq!(
        String::from_utf8_lossy(&parsed.stdout),
        "7 3\n",
        "{}",
        String::from_utf8_lossy(&parsed.stderr)
    );
    // JSON, GitLab and SARIF: the text round-trips.
    let json: Value = serde_json::from_str(&run("json").stdout).unwrap();
    let f = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == id.as_str())
        .unwrap();
    assert_eq!(
        (f["message"].as_str().unwrap(), f["file"].as_str().unwrap()),
        (HOSTILE, file)
    );
    // The terminal: no escape or bell reaches it.
    let text = run("text").stdout;
    assert!(!text.contains(['\u{1b}', '\u{7}', '\r']), "{text}");
}

#[test]
fn the_action_and_the_ci_templates_pass_their_published_schemas() {
    let Some(tool) = check_jsonschema() else {
        return;
    };
    let root = common::repo_root();
    for (schema, file) in [
        ("vendor.github-actions", "action.yml"),
        ("vendor.github-workflows", "docs/ci/review-gate.github.yml"),
        ("vendor.gitlab-ci", "docs/ci/notabene-gate.gitlab-ci.yml"),
    ] {
        let (code, said) = validate(&tool, &["--builtin-schema", schema], &root.join(file));
        assert_eq!(code, 0, "{file}: {said}");
    }
    // The check does refuse a broken action: a `run` step without its shell.
    let action = read(&root.join("action.yml"));
    let tmp = common::tempdir();
    let broken = tmp.path().join("action.yml");
    write(&broken, &action.replacen("      shell: bash\n", "", 1));
    let (code, said) = validate(
        &tool,
        &["--builtin-schema", "vendor.github-actions"],
        &broken,
    );
    assert_eq!(code, 1, "{said}");
    // The action runs the gate's two formats and uploads the SARIF; the docs page shows the
    // action, a complete workflow and the GitLab job as the repository holds them.
    for part in [
        "--format sarif > \"$sarif\" || true",
        "--format github\n",
        "uses: github/codeql-action/upload-sarif@v4",
    ] {
        assert!(action.contains(part), "action.yml runs {part:?}");
    }
    let page = read(&root.join("docs/src/guide/gate.md"));
    for include in [
        "{{#include ../../../action.yml}}",
        "{{#include ../../ci/review-gate.github.yml}}",
        "{{#include ../../ci/notabene-gate.gitlab-ci.yml}}",
    ] {
        assert!(page.contains(include), "the docs page includes {include}");
    }
}
