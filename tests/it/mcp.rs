//! `notabene mcp` driven by a real MCP client: the official Python SDK (`mcp` on PyPI, pinned
//! below), running `tests/mcp/client.py`. `.ci/run` installs it into `<target>/mcp-venv`; where
//! that is missing the test makes the virtual environment itself, and it is skipped, saying so,
//! only where there is no `python3` at all.
//!
//! The review loop through the tools must leave the same bytes as the CLI doing the same steps,
//! and every error is a tool error carrying the CLI's one line, the server serving on.

use crate::support::common::{
    self, NOW, book_example, copy_into_repo, git_commit_all, read, run, run_with, tree, write,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The version of the Python SDK the tests speak with (`.ci/run` installs the same).
const MCP_SDK: &str = "mcp==2.3.0";

/// The Python of a virtual environment holding the SDK, or `None` where there is no python3.
pub(crate) fn python() -> Option<PathBuf> {
    static PY: OnceLock<Option<PathBuf>> = OnceLock::new();
    PY.get_or_init(|| {
        if let Some(p) = std::env::var_os("NOTABENE_MCP_PYTHON") {
            return Some(PathBuf::from(p));
        }
        let venv = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .parent()
            .expect("the target directory")
            .join("mcp-venv");
        let py = venv.join("bin/python");
        let has_sdk = |py: &Path| {
            Command::new(py)
                .args(["-c", "import mcp"])
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        if py.is_file() && has_sdk(&py) {
            return Some(py);
        }
        if Command::new("python3").arg("--version").output().is_err() {
            eprintln!(
                "python3 not found: the MCP client tests are skipped (install Python 3 to run them)"
            );
            return None;
        }
        let ok = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .is_ok_and(|s| s.success())
            && pip_install(&py, MCP_SDK);
        assert!(
            ok && has_sdk(&py),
            "could not install {MCP_SDK} into {}",
            venv.display()
        );
        Some(py)
    })
    .clone()
}

/// Installs `spec` (`name==version`) into the environment of `py` with pip: whether it did.
pub(crate) fn pip_install(py: &Path, spec: &str) -> bool {
    Command::new(py)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            spec,
        ])
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `steps` on one MCP connection to `notabene mcp --book book-example` in `dir`, with the
/// CLI tests' pinned environment; the results, one per step.
fn mcp(py: &Path, dir: &Path, steps: &Value) -> Vec<Value> {
    mcp_on(py, dir, "book-example", steps)
}

/// [`mcp`] on the book at `book` (relative to `dir`).
pub(crate) fn mcp_on(py: &Path, dir: &Path, book: &str, steps: &Value) -> Vec<Value> {
    let script = common::repo_root().join("tests/mcp/client.py");
    let mut cmd = Command::new(py);
    cmd.arg(&script)
        .arg(common::bin())
        .arg(book)
        .current_dir(dir)
        .env("NOTABENE_NOW", NOW)
        .env("NOTABENE_AUTHOR", "Ada Agent")
        .env("NOTABENE_AUTHOR_EMAIL", "ada@example.com")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("NOTABENE_STORE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("run the MCP client");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(steps.to_string().as_bytes()).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the MCP client failed:\n{stderr}");
    let results: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "client output: {e}\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    assert_eq!(results.len(), steps.as_array().unwrap().len());
    results
}

/// A committed copy of book-example in a fresh repository.
fn repo() -> (tempfile::TempDir, PathBuf) {
    let tmp = common::tempdir();
    let book = copy_into_repo(&book_example(), tmp.path(), "book-example");
    git_commit_all(tmp.path(), "book");
    (tmp, book)
}

/// Rendered text and a Markdown slice compared as readers see them: emphasis, code and link
/// syntax out, smart punctuation folded, white space collapsed.
fn plain(s: &str) -> String {
    // `[text](url)` → `text`.
    let mut t = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("](") {
        t.push_str(&rest[..i]);
        rest = rest[i..].find(')').map_or("", |j| &rest[i + j + 1..]);
    }
    t.push_str(rest);
    t.replace(['*', '_', '`', '[', ']'], "")
        .replace(['“', '”'], "\"")
        .replace(['‘', '’'], "'")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

const JOURNAL_ID: &str = "j-2026-07-28-mcp001";

fn journal_entry() -> Value {
    json!({
        "id": JOURNAL_ID,
        "date": "2026-07-28",
        "title": "Sensor keys and exit code 3",
        "summary": "Applied the suggested wording for optional sensor keys; answered the exit-code comment.",
        "changes": [
            { "page": "book-example/src/guide/sensors", "commentIds": ["c_mwt1s7r4gz7k"],
              "what": "Declaring a sensor: other keys are optional and depend on the kind",
              "why": "The reviewer's suggested edit" },
            { "page": "book-example/src/reference/cli", "commentIds": ["c_mwq6asw3w1ge"],
              "what": "No edit: exit code 3 is already described",
              "why": "The sentence answers the question" }
        ]
    })
}

#[test]
fn the_review_loop_through_a_real_mcp_client_leaves_the_bytes_the_cli_leaves() {
    let Some(py) = python() else { return };
    let (a, book_a) = repo();
    let (b, book_b) = repo();

    let steps = json!([
        { "op": "list_tools" },
        { "tool": "list_comments", "args": {} },
        { "tool": "reply", "args": { "id": "c_mworge1zx4rb", "body": "Yes: HTTP 429 counts as a network error and is retried." } },
        { "tool": "journal_add", "args": journal_entry() },
        { "tool": "apply_suggestion", "args": { "ids": ["c_mwt1s7r4gz7k"], "journal": JOURNAL_ID } },
        { "tool": "done", "args": { "ids": ["c_mwq6asw3w1ge"], "note": "Exit code 3 is described in the table above.", "journal": JOURNAL_ID } },
        { "tool": "check_edit", "args": {} },
        { "tool": "verify", "args": {} },
        { "op": "read_resource", "uri": "notabene://protocol.md" },
        { "op": "list_prompts" },
        { "op": "get_prompt", "name": "address-open-comments" },
    ]);
    let r = mcp(&py, a.path(), &steps);

    // The tools, each with an object schema generated from its typed request.
    let tools = r[0]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "list_comments",
            "show_comment",
            "reply",
            "journal_add",
            "done",
            "reopen",
            "hold",
            "apply_suggestion",
            "verify",
            "anchors",
            "check_edit",
            "gate"
        ]
    );
    let schema =
        |name: &str| tools.iter().find(|t| t["name"] == name).unwrap()["inputSchema"].clone();
    assert_eq!(schema("reply")["required"], json!(["id", "body"]));
    assert_eq!(schema("reply")["properties"]["body"]["type"], "string");
    assert_eq!(schema("journal_add")["required"], json!(["changes"]));
    assert_eq!(
        schema("journal_add")["properties"]["changes"]["type"],
        "array"
    );
    assert!(tools.iter().all(|t| t["inputSchema"]["type"] == "object"));

    // The roster: open and not held, each with its source place, which holds its text.
    assert_eq!(r[1]["isError"], false, "{}", r[1]["text"]);
    let roster = r[1]["structured"]["comments"].as_array().unwrap();
    // (The other copy is still as the MCP session found this one.)
    let cli: Value = serde_json::from_str(
        run(
            b.path(),
            &[
                "--book",
                "book-example",
                "comments",
                "ls",
                "--open",
                "--json",
            ],
        )
        .ok(),
    )
    .unwrap();
    let ids = |v: &[Value]| {
        v.iter()
            .map(|c| c["id"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        ids(roster),
        ids(cli.as_array().unwrap()),
        "the same roster as `comments ls --open`"
    );
    assert!(roster.len() >= 10);
    let mut placed = 0;
    for c in roster {
        let an = &c["anchoring"];
        let Some(src) = an["source"].as_object() else {
            assert!(
                c["scope"] == "page"
                    || ["orphan", "other-language"].contains(&an["status"].as_str().unwrap()),
                "{c:#}"
            );
            continue;
        };
        // Source paths are relative to the repository root; the file as it was when listed
        // (the committed one: the session's later steps edited the working tree).
        let file = common::git(
            a.path(),
            &["show", &format!("HEAD:{}", src["path"].as_str().unwrap())],
        );
        let (start, end) = (
            src["start"].as_u64().unwrap() as usize,
            src["end"].as_u64().unwrap() as usize,
        );
        let slice = &file[start..end];
        let line = file[..start].matches('\n').count() + 1;
        assert_eq!(src["line"].as_u64().unwrap() as usize, line, "{}", c["id"]);
        let text = an["text"].as_str().unwrap();
        if c["scope"] == "block" {
            assert!(
                slice.contains(text) || slice.contains("mermaid"),
                "{}: {slice:?}",
                c["id"]
            );
        } else {
            assert_eq!(
                plain(slice),
                plain(text),
                "{}: the source range holds the matched text",
                c["id"]
            );
        }
        placed += 1;
    }
    assert!(placed >= 8, "{placed} placed");

    // Each write answered, as the CLI would say it.
    for (i, line) in [
        (
            2,
            "notabene: replied to c_mworge1zx4rb (by Test Agent (agent)).\n",
        ),
        (3, "notabene: appended journal entry j-2026-07-28-mcp001.\n"),
        (5, "notabene: 1 comment(s) → addressed (review: approve).\n"),
    ] {
        assert_eq!(r[i]["isError"], false, "{}", r[i]["text"]);
        assert!(
            r[i]["text"].as_str().unwrap().ends_with(line),
            "{}",
            r[i]["text"]
        );
    }
    assert_eq!(r[4]["isError"], false, "{}", r[4]["text"]);
    assert_eq!(
        r[4]["structured"]["comments"][0]["suggestion"]["applied"]["by"],
        "Test Agent (agent)"
    );
    // The guard: the applied suggestion changed its own text only (closed: expected).
    assert_eq!(r[6]["structured"]["bystanders"], 0, "{}", r[6]["text"]);
    assert_eq!(r[7]["structured"]["errors"], 0, "{}", r[7]["text"]);
    assert_eq!(r[8]["text"], mdbook_notabene::apps::ops::PROTOCOL);
    assert_eq!(r[9]["prompts"], json!(["address-open-comments"]));
    assert!(r[10]["text"].as_str().unwrap().contains("check_edit"));

    // The CLI, the same steps on the other copy.
    let cli = |args: &[&str]| {
        let mut full = vec!["--book", "book-example"];
        full.extend_from_slice(args);
        let out = run(b.path(), &full);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    };
    // The MCP client wrote as itself, an agent: the CLI names the same author.
    cli(&[
        "comments",
        "reply",
        "c_mworge1zx4rb",
        "--body",
        "Yes: HTTP 429 counts as a network error and is retried.",
        "--author",
        "Test Agent (agent)",
    ]);
    let out = run_with(
        b.path(),
        &["--book", "book-example", "journal", "add"],
        Some(&journal_entry().to_string()),
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    cli(&[
        "comments",
        "apply",
        "c_mwt1s7r4gz7k",
        "--journal",
        JOURNAL_ID,
        "--author",
        "Test Agent (agent)",
    ]);
    cli(&[
        "comments",
        "done",
        "c_mwq6asw3w1ge",
        "--note",
        "Exit code 3 is described in the table above.",
        "--journal",
        JOURNAL_ID,
    ]);
    let (ta, tb) = (
        tree(&book_a.join(".notabene")),
        tree(&book_b.join(".notabene")),
    );
    let differ: Vec<_> = ta
        .iter()
        .filter(|(k, v)| tb.get(*k) != Some(v))
        .map(|(k, v)| (k.clone(), v.clone(), tb.get(k).cloned()))
        .collect();
    assert_eq!(differ, vec![], "the store, byte for byte");
    assert_eq!(ta.len(), tb.len());
    assert_eq!(
        read(&book_a.join("src/guide/sensors.md")),
        read(&book_b.join("src/guide/sensors.md"))
    );
    assert!(
        read(&book_a.join("src/guide/sensors.md"))
            .contains("Every other key is optional and depends on the sensor kind.")
    );
}

#[test]
fn protocol_errors_are_tool_errors_with_the_cli_line_and_the_server_serves_on() {
    let Some(py) = python() else { return };
    let (a, book) = repo();
    // A stale suggestion: the text it replaces was edited since.
    let sensors = book.join("src/guide/sensors.md");
    write(
        &sensors,
        &read(&sensors).replace(
            "Anything else is optional and specific to the sensor kind.",
            "Anything else is optional.",
        ),
    );
    let steps = json!([
        { "tool": "no_such_tool", "args": {} },
        { "tool": "reply", "args": { "id": "c_mworge1zx4rb" } },
        { "tool": "reply", "args": { "id": "c_mworge1zx4rb", "body": "x", "colour": "red" } },
        { "tool": "done", "args": { "ids": ["c_mwrmz21ih8pc"], "note": "Timed it." } },
        { "tool": "apply_suggestion", "args": { "ids": ["c_mwt1s7r4gz7k"] } },
        { "tool": "done", "args": { "ids": ["c_mwq6asw3w1ge"], "status": "open" } },
        { "tool": "show_comment", "args": { "id": "c_nope" } },
        { "tool": "check_edit", "args": {} },
        { "tool": "list_comments", "args": { "page": "book-example/src/guide/installing" } },
    ]);
    let before = tree(&book.join(".notabene"));
    let r = mcp(&py, a.path(), &steps);
    let err = |i: usize| {
        assert_eq!(r[i]["isError"], true, "step {i}: {}", r[i]["text"]);
        r[i]["text"].as_str().unwrap().to_string()
    };
    assert!(
        err(0).starts_with(
            "notabene: unknown tool \"no_such_tool\" (expected one of: list_comments, "
        ),
        "{}",
        err(0)
    );
    assert_eq!(
        err(1),
        "notabene: bad arguments for reply: missing field `body` (arguments)"
    );
    assert!(
        err(2).starts_with("notabene: bad arguments for reply: unknown field `colour`"),
        "{}",
        err(2)
    );
    // The CLI's own line for the same requests, on the same book.
    let cli_err = |args: &[&str]| {
        let mut full = vec!["--book", "book-example"];
        full.extend_from_slice(args);
        let out = run(a.path(), &full);
        assert_eq!(out.code, 1, "{args:?}");
        out.stderr.trim_end().to_string()
    };
    assert_eq!(
        err(3),
        cli_err(&["comments", "done", "c_mwrmz21ih8pc", "--note", "Timed it."])
    );
    assert!(err(3).contains("hold"), "{}", err(3));
    assert_eq!(err(4), cli_err(&["comments", "apply", "c_mwt1s7r4gz7k"]));
    assert_eq!(
        err(5),
        cli_err(&["comments", "done", "c_mwq6asw3w1ge", "--status", "open"])
    );
    assert_eq!(err(6), cli_err(&["comments", "show", "c_nope"]));
    // Nothing was written by the refused calls.
    assert_eq!(tree(&book.join(".notabene")), before);
    // And the server still answers: the guard sees the stale edit's bystander.
    assert_eq!(r[7]["isError"], false);
    assert_eq!(r[7]["structured"]["bystanders"], 1);
    assert_eq!(r[7]["structured"]["worse"][0]["id"], "c_mwt1s7r4gz7k");
    assert_eq!(r[8]["isError"], false);
    let listed: Vec<&str> = r[8]["structured"]["comments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        listed,
        Vec::<&str>::new(),
        "installing's open comment is held: not on the roster"
    );
}

#[test]
fn a_reply_through_mcp_is_by_the_client_marked_as_an_agent() {
    let Some(py) = python() else { return };
    let (a, book) = repo();
    // NOTABENE_AUTHOR is the person's (the test pins it): the agent does not write as them.
    let r = mcp(
        &py,
        a.path(),
        &json!([
            { "tool": "reply", "args": { "id": "c_mworge1zx4rb", "body": "An agent's answer." } },
            { "tool": "reply", "args": { "id": "c_mworge1zx4rb", "body": "Signed.", "author": "Ada <ada@example.com>" } },
        ]),
    );
    assert_eq!(r[0]["isError"], false, "{}", r[0]["text"]);
    let c: Value =
        serde_json::from_str(run(&book, &["comments", "show", "c_mworge1zx4rb", "--json"]).ok())
            .unwrap();
    let thread = c["thread"].as_array().unwrap();
    let last_two: Vec<(&str, &str)> = thread[thread.len() - 2..]
        .iter()
        .map(|m| (m["author"].as_str().unwrap(), m["body"].as_str().unwrap()))
        .collect();
    assert_eq!(
        last_two,
        [
            ("Test Agent (agent)", "An agent's answer."),
            ("Ada (agent) <ada@example.com>", "Signed.")
        ]
    );
}
