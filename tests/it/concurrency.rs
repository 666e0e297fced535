//! Acceptance 4: concurrent CLI processes on one store lose nothing and leave nothing behind.
//!
//! 8 threads each run 50 `notabene` processes one after the other — replies, done, reopen,
//! hold, unhold, journal appends and new comments — against the same few comments (v3
//! files and legacy array members). Afterwards every file parses, every reply and journal
//! entry is there exactly once, thread lengths add up, and no temp file is left.

use crate::support::common;

use common::run_with;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

const THREADS: usize = 8;
const STEPS: usize = 50;
/// The comments of the round-trip fixture store, in both layouts.
const SHARED: &[&str] = &[
    "c_mx2ssedfey4i",
    "c_mx2sspage0001",
    "c_mx2ssblock001",
    "c_legacy0001",
    "c_legacy0002",
];

/// What process `k` of thread `i` does.
fn args(i: usize, k: usize) -> (Vec<String>, Option<String>) {
    let target = SHARED[(i + k) % SHARED.len()].to_string();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    match k % 7 {
        0 => (
            s(&["comments", "reply", &target, "--body", &format!("p{i}-{k}")]),
            None,
        ),
        1 => (
            s(&[
                "comments",
                "done",
                &target,
                "--force",
                "--note",
                &format!("n{i}-{k}"),
                "--journal",
                "j-2026-07-20-rt0001",
            ]),
            None,
        ),
        2 => (s(&["comments", "reopen", &target]), None),
        3 => (s(&["comments", "hold", &target]), None),
        4 => (s(&["comments", "unhold", &target]), None),
        5 => (
            s(&["journal", "add"]),
            Some(format!(
                r#"{{"id":"j-c-{i}-{k}","date":"2026-07-28","title":"t{i}-{k}","summary":"s","changes":[{{"page":"src/legacy","commentIds":["c_legacy0001"],"what":"w","why":"y"}}]}}"#
            )),
        ),
        _ => (
            s(&[
                "comments",
                "add",
                "--page",
                "src/guide/intro",
                "--body",
                &format!("a{i}-{k}"),
            ]),
            None,
        ),
    }
}

/// Every `*.json` file below `root` (store-relative path → parsed value); panics on one that
/// does not parse.
fn parse_all(root: &Path) -> BTreeMap<String, Value> {
    common::files_matching(root, |name| name.ends_with(".json"))
        .into_iter()
        .map(|rel| {
            let text = common::read(&root.join(&rel));
            let v = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{rel} does not parse: {e}\n{text}"));
            (rel, v)
        })
        .collect()
}

#[test]
fn concurrent_processes_lose_nothing() {
    let (tmp, store) = common::fixture_store("roundtrip/store");
    let initial: BTreeMap<String, usize> = comments(&parse_all(&store))
        .into_iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["thread"].as_array().unwrap().len(),
            )
        })
        .collect();

    let failures: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|i| {
                let cwd = tmp.path();
                scope.spawn(move || {
                    let mut failed = Vec::new();
                    for k in 0..STEPS {
                        let (a, stdin) = args(i, k);
                        let mut full = vec!["--store", "store"];
                        full.extend(a.iter().map(String::as_str));
                        let out = run_with(cwd, &full, stdin.as_deref(), &[]);
                        if out.code != 0 {
                            failed.push(format!("{full:?} → exit {}: {}", out.code, out.stderr));
                        }
                    }
                    failed
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("thread"))
            .collect()
    });
    assert!(
        failures.is_empty(),
        "every process must exit 0:\n{}",
        failures.join("\n")
    );

    // Every file parses; no temp file is left anywhere.
    let files = parse_all(&store);
    let leftovers = common::files_matching(&store, |name| {
        name.ends_with(".tmp") || name.starts_with('.')
    });
    assert!(leftovers.is_empty(), "temp files left: {leftovers:?}");

    // Every reply is there exactly once, on its comment; thread lengths add up.
    let all = comments(&files);
    let mut expected_len = initial.clone();
    let mut bodies: BTreeMap<String, usize> = BTreeMap::new();
    for c in &all {
        for m in c["thread"].as_array().unwrap() {
            *bodies
                .entry(m["body"].as_str().unwrap().to_string())
                .or_default() += 1;
        }
    }
    let mut added = 0;
    for i in 0..THREADS {
        for k in 0..STEPS {
            match k % 7 {
                0 => {
                    let body = format!("p{i}-{k}");
                    assert_eq!(bodies.get(&body), Some(&1), "reply {body}");
                    *expected_len
                        .get_mut(SHARED[(i + k) % SHARED.len()])
                        .unwrap() += 1;
                }
                6 => {
                    let body = format!("a{i}-{k}");
                    assert_eq!(bodies.get(&body), Some(&1), "new comment {body}");
                    added += 1;
                }
                _ => {}
            }
        }
    }
    for c in &all {
        let id = c["id"].as_str().unwrap();
        let len = c["thread"].as_array().unwrap().len();
        match expected_len.get(id) {
            Some(n) => assert_eq!(len, *n, "thread length of {id}"),
            None => assert_eq!(len, 1, "thread length of the new comment {id}"),
        }
    }
    assert_eq!(
        all.len(),
        SHARED.len() + added,
        "every new comment has its own file"
    );
    let mut ids: Vec<&str> = all.iter().map(|c| c["id"].as_str().unwrap()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), all.len(), "comment ids are unique");
    // The legacy members are still in their array.
    assert_eq!(files["src/legacy.json"].as_array().map(Vec::len), Some(2));

    // Every journal entry is there exactly once, after the original one.
    let journal = files["journal.json"].as_array().unwrap();
    let mut jids: Vec<&str> = journal.iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert_eq!(jids[0], "j-2026-07-20-rt0001");
    let expected_entries = (0..THREADS).flat_map(|i| {
        (0..STEPS)
            .filter(|k| k % 7 == 5)
            .map(move |k| format!("j-c-{i}-{k}"))
    });
    let mut expected_entries: Vec<String> = expected_entries.collect();
    jids.sort_unstable();
    expected_entries.push("j-2026-07-20-rt0001".into());
    expected_entries.sort_unstable();
    assert_eq!(jids, expected_entries);

    // And the store is still coherent enough to list.
    let out = run_with(
        tmp.path(),
        &["--store", "store", "comments", "ls", "--json"],
        None,
        &[],
    );
    let listed: Value = serde_json::from_str(out.ok()).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), all.len());
}

/// The comments in parsed store files (v3 objects and legacy array members).
fn comments(files: &BTreeMap<String, Value>) -> Vec<Value> {
    files
        .iter()
        .filter(|(rel, _)| !matches!(rel.as_str(), "meta.json" | "journal.json"))
        .flat_map(|(_, v)| match v {
            Value::Array(a) => a.clone(),
            other => vec![other.clone()],
        })
        .collect()
}
