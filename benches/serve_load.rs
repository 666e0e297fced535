//! Write latency of `serve` under load (release build): 20 concurrent clients × 50 mixed API
//! writes while CLI processes write to the same store, against a baseline measured in the same
//! round: the latency of a read-only API request (`GET status`) under the same concurrency.
//! Each round runs on a fresh server and store; the table gives every round and the median.
//! Run with `cargo bench --bench serve_load` (`NB_ROUNDS` rounds, default 5).

// Tests and benches are not a library: their shared modules are `pub` for each other, and
// need no rustdoc.
#![allow(unreachable_pub, missing_docs)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Instant;
use support::serve::{Server, load, quantile, request};

/// One round's figures, in microseconds.
struct Round {
    base: (u64, u64),
    writes: (u64, u64),
    post: (u64, u64),
    patch: (u64, u64),
    writes_per_s: f64,
    cli_runs: usize,
}

fn p50_p99(v: &mut [u64]) -> (u64, u64) {
    (quantile(v, 0.5), quantile(v, 0.99))
}

fn round() -> Round {
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
    // The rebuild the writes trigger, before the server goes.
    server.wait_rebuild(g0);
    Round {
        base: p50_p99(&mut base),
        writes: p50_p99(&mut report.latencies_us),
        post: p50_p99(&mut report.post_us),
        patch: p50_p99(&mut report.patch_us),
        writes_per_s: report.latencies_us.len() as f64 / wall.as_secs_f64(),
        cli_runs: report.cli_runs.0,
    }
}

fn ms(us: u64) -> String {
    format!("{:.1}", us as f64 / 1e3)
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("serve_load: run with `cargo bench --bench serve_load`");
        return;
    }
    let rounds: usize = std::env::var("NB_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
        .max(1);
    let all: Vec<Round> = (0..rounds).map(|_| round()).collect();
    println!(
        "| round | baseline `GET status` p50 / p99 (ms) | API writes p50 / p99 (ms) | POST p99 | PATCH p99 | p50 ratio vs baseline | writes/s |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (k, r) in all.iter().enumerate() {
        println!(
            "| {} | {} / {} | {} / {} | {} | {} | {:.1} | {:.0} |",
            k + 1,
            ms(r.base.0),
            ms(r.base.1),
            ms(r.writes.0),
            ms(r.writes.1),
            ms(r.post.1),
            ms(r.patch.1),
            r.writes.0 as f64 / r.base.0.max(1) as f64,
            r.writes_per_s
        );
    }
    let median = |f: &dyn Fn(&Round) -> u64| {
        let mut v: Vec<u64> = all.iter().map(f).collect();
        quantile(&mut v, 0.5)
    };
    let (b50, w50) = (median(&|r| r.base.0), median(&|r| r.writes.0));
    println!(
        "| median | {} / {} | {} / {} | {} | {} | {:.1} | |",
        ms(b50),
        ms(median(&|r| r.base.1)),
        ms(w50),
        ms(median(&|r| r.writes.1)),
        ms(median(&|r| r.post.1)),
        ms(median(&|r| r.patch.1)),
        w50 as f64 / b50.max(1) as f64
    );
    println!(
        "\n{rounds} round(s) of 20 clients × 50 writes (40% new comments, 60% replies and holds, most on one shared comment) with {} CLI `done`/`reopen` runs each; worst p99 {} ms.",
        all[0].cli_runs,
        ms(all.iter().map(|r| r.writes.1).max().unwrap_or(0))
    );
}
