//! Load on `serve`'s write API: 20 concurrent clients × 50 mixed writes while CLI processes
//! close and reopen other comments of the same store. Afterwards every write is present
//! exactly once, every file parses, and rebuilds were debounced (no rebuild storm).
//! Latency figures come from `cargo bench --bench serve_load`; here they are only printed.

use crate::serve;

use serve::{Server, load, quantile};
use std::collections::BTreeMap;

fn all_json(dir: &std::path::Path, out: &mut Vec<(String, serde_json::Value)>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            all_json(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            let text = std::fs::read_to_string(&p).unwrap();
            let v = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{} does not parse: {e}", p.display()));
            out.push((p.display().to_string(), v));
        }
    }
}

#[test]
fn concurrent_api_and_cli_writes_lose_nothing() {
    let server = Server::start(&[], |_| {});
    let g0 = server.generation();
    let mut report = load(&server, 20, 50);
    assert_eq!(report.cli_runs, (20, 20), "every CLI run succeeds");
    let g1 = server.wait_rebuild(g0);
    std::thread::sleep(std::time::Duration::from_secs(2));

    let mut files = Vec::new();
    all_json(&server.store(), &mut files);
    let comments: Vec<&serde_json::Value> = files
        .iter()
        .map(|(_, v)| v)
        .filter(|v| v.get("thread").is_some())
        .collect();
    let mut bodies: BTreeMap<String, usize> = BTreeMap::new();
    for c in &comments {
        for m in c["thread"].as_array().unwrap() {
            *bodies
                .entry(m["body"].as_str().unwrap().to_string())
                .or_default() += 1;
        }
    }
    for b in report.created.iter().chain(&report.replies) {
        assert_eq!(
            bodies.get(b),
            Some(&1),
            "write {b:?} must be present exactly once"
        );
    }
    assert_eq!(report.created.len(), 20 * 20);
    assert!(!files.iter().any(|(p, _)| p.ends_with(".tmp")));

    let (_, status) = server.json("GET", "/__notabene/api/status", &serde_json::Value::Null);
    let builds = status["builds"].as_u64().unwrap();
    let writes = report.latencies_us.len() as u64;
    println!(
        "serve load: {writes} writes, p50 {} µs, p99 {} µs, {} rebuilds (generation {g0} → {g1})",
        quantile(&mut report.latencies_us, 0.5),
        quantile(&mut report.latencies_us, 0.99),
        builds
    );
    assert!(
        builds < writes / 10,
        "rebuild storm: {builds} rebuilds for {writes} writes"
    );
}
