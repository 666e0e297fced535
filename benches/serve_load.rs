//! Write latency of `serve` under load (release build): 20 concurrent clients × 50 mixed API
//! writes while CLI processes write to the same store, against a baseline measured in the same
//! run: the latency of a read-only API request (`GET status`) under the same concurrency.
//! Run with `cargo bench --bench serve_load`.

#[path = "../tests/it/serve.rs"]
mod serve;

use serve::{Server, load, quantile, request};
use std::time::Instant;

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("serve_load: run with `cargo bench --bench serve_load`");
        return;
    }
    let server = Server::start(&[], |_| {});
    let port = server.port;
    // Baseline: the same concurrency, read-only requests.
    let handles: Vec<_> = (0..20)
        .map(|_| {
            std::thread::spawn(move || {
                (0..50)
                    .map(|_| {
                        let t = Instant::now();
                        let (code, _) = request(port, "GET", "/__notabene/api/status", &[], b"");
                        assert_eq!(code, 200);
                        t.elapsed().as_micros() as u64
                    })
                    .collect::<Vec<u64>>()
            })
        })
        .collect();
    let mut base: Vec<u64> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let g0 = server.generation();
    let started = Instant::now();
    let mut report = load(&server, 20, 50);
    let wall = started.elapsed();
    server.wait_rebuild(g0);
    std::thread::sleep(std::time::Duration::from_secs(2));
    let (_, status) = server.json("GET", "/__notabene/api/status", &serde_json::Value::Null);
    let (b50, b99) = (quantile(&mut base, 0.5), quantile(&mut base, 0.99));
    let (w50, w99) = (
        quantile(&mut report.latencies_us, 0.5),
        quantile(&mut report.latencies_us, 0.99),
    );
    println!("| measure | p50 (ms) | p99 (ms) | p50 ratio vs baseline |");
    println!("|---|---:|---:|---:|");
    println!(
        "| baseline: `GET status`, 20 × 50 concurrent | {:.1} | {:.1} | 1.0 |",
        b50 as f64 / 1e3,
        b99 as f64 / 1e3
    );
    println!(
        "| API writes, 20 clients × 50 + {} CLI runs | {:.1} | {:.1} | {:.1} |",
        report.cli_runs.0,
        w50 as f64 / 1e3,
        w99 as f64 / 1e3,
        w50 as f64 / b50.max(1) as f64
    );
    println!(
        "\n{} writes in {:.1} s ({:.0} writes/s), {} rebuild(s)",
        report.latencies_us.len(),
        wall.as_secs_f64(),
        report.latencies_us.len() as f64 / wall.as_secs_f64(),
        status["builds"]
    );
}
