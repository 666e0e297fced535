//! Acceptance 6: the CLI stays fast on a large store.
//!
//! Generates a store of 10,000 comments over 1,000 pages (selection anchors with a ~60-char
//! quote and 40-char prefix/suffix, 1–3 thread messages; 10% resolved or addressed and linked
//! both ways to a journal of 200 entries) in a temp dir, then times the release `notabene`
//! binary (best of 5 runs) against a baseline measured in the same run: reading and parsing
//! every file of the store in-process with `serde_json`. Prints a Markdown table.
//!
//!     cargo bench --bench store

// Tests and benches are not a library: their shared modules are `pub` for each other, and
// need no rustdoc.
#![allow(unreachable_pub, missing_docs)]

use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const PAGES: usize = 1_000;
const PER_PAGE: usize = 10;
const JOURNAL: usize = 200;
const RUNS: usize = 5;
const TARGET_MS: f64 = 500.0;

const WORDS: &[&str] = &[
    "sensor",
    "calibration",
    "offset",
    "archive",
    "upload",
    "interval",
    "retry",
    "policy",
    "channel",
    "wiring",
    "diagram",
    "pull-up",
    "resistor",
    "cable",
    "sample",
    "power",
    "shutdown",
    "install",
    "script",
    "stable",
    "release",
    "config",
    "value",
    "reading",
    "the",
    "a",
    "of",
    "and",
    "is",
    "before",
    "after",
    "every",
];

/// `len` characters of pseudo-random prose.
fn text(rng: &mut fastrand::Rng, len: usize) -> String {
    let mut s = String::new();
    while s.len() < len {
        if !s.is_empty() {
            s.push(' ');
        }
        s.push_str(WORDS[rng.usize(..WORDS.len())]);
    }
    s.truncate(len);
    s
}

fn write_json(root: &Path, rel: &str, v: &Value) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        path,
        format!("{}\n", serde_json::to_string_pretty(v).unwrap()),
    )
    .unwrap();
}

/// Writes the store; returns the number of comments.
fn generate(store: &Path) -> usize {
    let mut rng = fastrand::Rng::with_seed(2026);
    write_json(store, "meta.json", &json!({ "schemaVersion": 3 }));
    let mut entries: Vec<Value> = (0..JOURNAL)
        .map(|j| {
            json!({
                "id": format!("j-2026-07-{:02}-{:06}", 1 + j % 28, j),
                "date": format!("2026-07-{:02}", 1 + j % 28),
                "title": text(&mut rng, 50),
                "summary": text(&mut rng, 160),
                "changes": [],
            })
        })
        .collect();
    let mut n = 0;
    for p in 0..PAGES {
        let page = format!("src/part{}/chapter{p}", p / 100);
        for c in 0..PER_PAGE {
            let id = format!("c_mx{p:05}{c:02}");
            let ts = format!("2026-06-{:02}T{:02}:{:02}:00.000Z", 1 + p % 28, c, p % 60);
            let thread: Vec<Value> = (0..1 + rng.usize(..3))
                .map(|m| {
                    let len = 40 + rng.usize(..200);
                    json!({ "author": format!("Reviewer {m} <r{m}@example.com>"), "body": text(&mut rng, len), "ts": ts })
                })
                .collect();
            let handled = n % 10 == 0;
            let (status, resolution) = if handled {
                let j = rng.usize(..JOURNAL);
                let entry_id = entries[j]["id"].as_str().unwrap().to_string();
                entries[j]["changes"].as_array_mut().unwrap().push(json!({
                    "page": page, "commentIds": [id], "what": text(&mut rng, 80), "why": text(&mut rng, 80)
                }));
                let status = if rng.bool() { "resolved" } else { "addressed" };
                (
                    status,
                    json!({ "note": text(&mut rng, 60), "journalEntryId": entry_id }),
                )
            } else {
                ("open", Value::Null)
            };
            let comment = json!({
                "id": id,
                "space": "book",
                "page": page,
                "scope": "selection",
                "anchor": {
                    "quote": text(&mut rng, 60),
                    "prefix": text(&mut rng, 40),
                    "suffix": text(&mut rng, 40),
                    "section": text(&mut rng, 24),
                },
                "thread": thread,
                "status": status,
                "hold": rng.usize(..20) == 0,
                "resolution": resolution,
                "createdAt": ts,
                "updatedAt": ts,
            });
            write_json(store, &format!("{page}/{id}.json"), &comment);
            n += 1;
        }
    }
    // Entries that ended up with no change get one (verify requires changes[]).
    for e in &mut entries {
        if e["changes"].as_array().unwrap().is_empty() {
            e["changes"] = json!([{ "page": "src/part0/chapter0", "commentIds": [], "what": "Copy edit.", "why": "Typo." }]);
        }
    }
    write_json(store, "journal.json", &Value::Array(entries));
    n
}

/// Reads and parses every `*.json` file below `dir`; returns how many.
fn parse_all(dir: &Path) -> usize {
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            n += parse_all(&path);
        } else if path.extension().is_some_and(|e| e == "json") {
            let bytes = std::fs::read(&path).unwrap();
            let v: Value = serde_json::from_slice(&bytes).unwrap();
            std::hint::black_box(v);
            n += 1;
        }
    }
    n
}

/// Best wall time of `RUNS` runs of `f`.
fn best(mut f: impl FnMut()) -> Duration {
    (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap()
}

/// Runs the binary with `args` in `cwd`, capturing stdout; returns (exit code, stdout bytes).
fn cli(cwd: &Path, args: &[&str]) -> (i32, usize) {
    let out = Command::new(env!("CARGO_BIN_EXE_notabene"))
        .args(args)
        .current_dir(cwd)
        .env("NOTABENE_AUTHOR", "Bench")
        .env_remove("NOTABENE_STORE")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .expect("run notabene");
    (out.status.code().unwrap_or(-1), out.stdout.len())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this too: keep that quick.
    if !std::env::args().any(|a| a == "--bench") {
        println!("store bench: run with `cargo bench --bench store`");
        return;
    }
    let tmp = tempfile::Builder::new()
        .prefix("nb-bench-")
        .tempdir()
        .unwrap();
    let store = tmp.path().join("store");
    let t = Instant::now();
    let comments = generate(&store);
    let files = parse_all(&store);
    let bytes: u64 = walk_size(&store);
    println!(
        "Generated {comments} comments on {PAGES} pages ({files} JSON files, {:.1} MB) in {:.0} ms; binary {}\n",
        bytes as f64 / 1e6,
        ms(t.elapsed()),
        env!("CARGO_BIN_EXE_notabene")
    );

    let baseline = best(|| assert_eq!(parse_all(&store), files));
    let cwd = tmp.path();
    let (code, out_len) = cli(cwd, &["--store", "store", "comments", "ls", "--json"]);
    assert_eq!(code, 0, "comments ls --json failed");
    let (code, _) = cli(cwd, &["--store", "store", "comments", "verify"]);
    assert_eq!(code, 0, "the generated store must verify clean");

    let ls = best(|| {
        assert_eq!(
            cli(cwd, &["--store", "store", "comments", "ls", "--json"]),
            (0, out_len)
        )
    });
    let ls_open = best(|| {
        assert_eq!(
            cli(
                cwd,
                &["--store", "store", "comments", "ls", "--open", "--json"]
            )
            .0,
            0
        )
    });
    let verify = best(|| assert_eq!(cli(cwd, &["--store", "store", "comments", "verify"]).0, 0));
    let reply = best(|| {
        assert_eq!(
            cli(
                cwd,
                &[
                    "--store",
                    "store",
                    "comments",
                    "reply",
                    "c_mx0050005",
                    "--body",
                    "bench reply"
                ]
            )
            .0,
            0
        )
    });

    println!("| operation | time (ms) | ratio vs baseline | target | result |");
    println!("|---|---:|---:|---|---|");
    println!(
        "| baseline: read + serde_json-parse every file in-process | {:.1} | 1.00 | — | — |",
        ms(baseline)
    );
    for (name, d) in [
        ("`notabene comments ls --json`", ls),
        ("`notabene comments ls --open --json`", ls_open),
        ("`notabene comments verify`", verify),
        ("`notabene comments reply <id> --body …`", reply),
    ] {
        let pass = ms(d) <= TARGET_MS;
        println!(
            "| {name} | {:.1} | {:.2} | ≤ {TARGET_MS:.0} ms | {} |",
            ms(d),
            ms(d) / ms(baseline),
            if pass { "pass" } else { "FAIL" }
        );
    }
    println!(
        "\nBest of {RUNS} runs each; `comments ls --json` prints {:.1} MB.",
        out_len as f64 / 1e6
    );
}

fn walk_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                walk_size(&e.path())
            } else {
                e.metadata().unwrap().len()
            }
        })
        .sum()
}
