//! Load on `serve`'s write API: 20 concurrent clients × 50 mixed writes while CLI processes
//! close and reopen other comments of the same store. Afterwards every write is present
//! exactly once, every file parses, and rebuilds were debounced (no rebuild storm).
//! Latency figures come from `cargo bench --bench serve_load`; here they are only printed.

use crate::support::common::{files_matching, read};
use crate::support::serve::{Server, load, quantile};
use std::collections::BTreeMap;

#[test]
fn concurrent_api_and_cli_writes_lose_nothing() {
    let server = Server::start(&[], |_| {});
    let g0 = server.generation();
    let mut report = load(&server, 20, 50);
    assert_eq!(report.cli_runs, (20, 20), "every CLI run succeeds");
    // Every write has been answered. The server then rebuilds (once the store is quiet): the
    // rebuilds are counted once it has caught up, its last publication a full build that
    // came after the load.
    let built = server.status()["built"].as_u64().unwrap();
    let g1 = server.wait_caught_up(built);

    let store = server.store();
    let files: Vec<(String, serde_json::Value)> =
        files_matching(&store, |name| name.ends_with(".json"))
            .into_iter()
            .map(|rel| {
                let v = serde_json::from_str(&read(&store.join(&rel)))
                    .unwrap_or_else(|e| panic!("{rel} does not parse: {e}"));
                (rel, v)
            })
            .collect();
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
    assert_eq!(
        files_matching(&store, |name| name.ends_with(".tmp")),
        Vec::<String>::new(),
        "no temp file left in the store"
    );

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
