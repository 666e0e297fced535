//! The review hub as its reviewers see it, with a local remote (`git http-backend` behind nginx)
//! and a sign-in proxy (nginx, basic authentication), both real (`tests/support/forge.rs`; nginx
//! and fcgiwrap must be installed):
//!
//! 1. 10 reviewers write at once through the proxy, 10 comments each: how long until a write is
//!    acknowledged (its POST answered: the commit is in the remote), and until another
//!    reviewer's page shows it (a GET of the chapter, as a reload gets it, has the comment) —
//!    against a baseline measured in the same run: a `GET status` through the proxy under the
//!    same concurrency, and one `git commit` + `git push` of a plain clone to the same remote;
//! 2. the memory (resident set) of a hub serving 20 branches of book-example, against the same
//!    hub with none open and with one.
//!
//! `cargo bench --bench hub` (`NB_WRITES=n` writes per reviewer, default 10).

// Tests and benches are not a library: their shared modules are `pub` for each other, and
// need no rustdoc.
#![allow(unreachable_pub, missing_docs)]

#[path = "../tests/support/mod.rs"]
mod support;

use serde_json::{Value, json};
use std::time::{Duration, Instant};
use support::common::{self, git};
use support::forge::{self, GitServer, Hub, Proxy, book_repo};
use support::serve::quantile;

const PAGE: &str = "book-example/src/guide/sensors";

/// `method path` as `user` (password `pw`) through `proxy`: (status, body as text).
fn call(proxy: &Proxy, user: &str, method: &str, path: &str, body: &Value) -> (u16, String) {
    let (code, v) = forge::through(proxy, Some((user, "pw")), method, path, body);
    let text = match v {
        Value::String(t) => t,
        other => other.to_string(),
    };
    (code, text)
}

/// Resident set of process `pid`, in MB.
fn rss_mb(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

fn main() {
    let Some(tools) = forge::tools("the hub bench") else {
        eprintln!("hub bench: nginx and fcgiwrap are needed");
        return;
    };
    let writes: usize = std::env::var("NB_WRITES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let work = common::tempdir();
    book_repo(work.path());
    // Twenty branches for the memory figure.
    for i in 0..20 {
        git(work.path(), &["branch", &format!("review/{i:02}")]);
    }
    let remote = GitServer::start(&tools);
    let url = remote.publish("book.git", work.path());
    let users = forge::ten_reviewers();
    let refs = forge::users(&users);

    // 1. Writes.
    let hub = Hub::start(&url, &["--book", "book-example", "--poll", "0"]);
    let proxy = Proxy::start(&tools, hub.port, &refs);
    assert_eq!(call(&proxy, "r0", "GET", "/b/main/", &Value::Null).0, 200);
    let api = "/b/main/__notabene/api/";
    let base: Vec<u64> = std::thread::scope(|s| {
        let all: Vec<_> = (0..10)
            .map(|i| {
                let proxy = &proxy;
                s.spawn(move || {
                    (0..writes)
                        .map(|_| {
                            let t = Instant::now();
                            let (code, _) = call(
                                proxy,
                                &format!("r{i}"),
                                "GET",
                                &format!("{api}status"),
                                &Value::Null,
                            );
                            assert_eq!(code, 200);
                            t.elapsed().as_micros() as u64
                        })
                        .collect::<Vec<u64>>()
                })
            })
            .collect();
        all.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    // One plain commit and push of a clone to the same remote (what a write cannot avoid).
    let plain = work.path().join("plain");
    git(
        std::path::Path::new("/"),
        &["clone", "-q", &url, plain.to_str().unwrap()],
    );
    let mut pushes = Vec::new();
    for i in 0..10 {
        std::fs::write(plain.join(format!("f{i}.txt")), "x").unwrap();
        let t = Instant::now();
        git(&plain, &["add", "-A"]);
        git(&plain, &["commit", "-qm", "x"]);
        git(&plain, &["push", "-q", "origin", "HEAD:refs/heads/plain"]);
        pushes.push(t.elapsed().as_micros() as u64);
    }
    let (mut acked, mut shown) = (Vec::new(), Vec::new());
    let started = Instant::now();
    std::thread::scope(|s| {
        let all: Vec<_> = (0..10)
            .map(|i| {
                let proxy = &proxy;
                s.spawn(move || {
                    let (mut acked, mut shown) = (Vec::new(), Vec::new());
                    let other = format!("r{}", (i + 1) % 10);
                    for n in 0..writes {
                        let body = json!({"page": PAGE, "space": "book", "scope": "page", "body": format!("r{i} #{n}")});
                        let t = Instant::now();
                        let (code, c) = call(proxy, &format!("r{i}"), "POST", &format!("{api}comments"), &body);
                        assert_eq!(code, 201, "{c}");
                        acked.push(t.elapsed().as_micros() as u64);
                        let id = serde_json::from_str::<Value>(&c).unwrap()["id"].as_str().unwrap().to_string();
                        // Another reviewer's page, as a reload gets it.
                        loop {
                            let (code, page) = call(proxy, &other, "GET", "/b/main/guide/sensors.html", &Value::Null);
                            if code == 200 && page.contains(&id) {
                                break;
                            }
                            assert!(t.elapsed() < Duration::from_secs(60), "{id} never shown");
                            std::thread::sleep(Duration::from_millis(10));
                        }
                        shown.push(t.elapsed().as_micros() as u64);
                    }
                    (acked, shown)
                })
            })
            .collect();
        for h in all {
            let (a, b) = h.join().unwrap();
            acked.extend(a);
            shown.extend(b);
        }
    });
    let wall = started.elapsed();
    let (mut base, mut pushes) = (base, pushes);
    let base_p50 = quantile(&mut base, 0.5);
    let push_p50 = quantile(&mut pushes, 0.5);
    println!(
        "hub bench: 10 reviewers × {writes} comments through the sign-in proxy ({:.1} s, {:.1} writes/s)",
        wall.as_secs_f64(),
        (10 * writes) as f64 / wall.as_secs_f64()
    );
    println!("| measure | p50 (ms) | p95 (ms) | max (ms) | target |");
    println!("|---|---:|---:|---:|---|");
    let row = |name: &str, v: &mut Vec<u64>, target: &str| {
        let (p50, p95) = (quantile(v, 0.5), quantile(v, 0.95));
        let max = *v.iter().max().unwrap_or(&0);
        println!(
            "| {name} | {:.1} | {:.1} | {:.1} | {target} |",
            ms(p50),
            ms(p95),
            ms(max)
        );
        p95
    };
    row(
        "baseline: GET status through the proxy, same concurrency",
        &mut base,
        "—",
    );
    row(
        "baseline: one commit + push of a plain clone, alone",
        &mut pushes,
        "—",
    );
    let a95 = row(
        "a write acknowledged (in the remote)",
        &mut acked,
        "p95 ≤ 400",
    );
    let s95 = row(
        "another reviewer's page shows it",
        &mut shown,
        "p95 ≤ 1,000",
    );
    println!(
        "acknowledged p95 {:.1} ms = {:.1}× one plain push ({:.1} ms), {:.1}× a proxied read ({:.1} ms); shown p95 {:.1} ms",
        ms(a95),
        a95 as f64 / push_p50 as f64,
        ms(push_p50),
        a95 as f64 / base_p50 as f64,
        ms(base_p50),
        ms(s95)
    );
    drop(proxy);
    drop(hub);

    // 2. Memory with 20 branches.
    let hub = Hub::start(
        &url,
        &[
            "--book",
            "book-example",
            "--poll",
            "0",
            "--branch",
            "review/*",
            "--max-branches",
            "20",
        ],
    );
    let proxy = Proxy::start(&tools, hub.port, &refs);
    std::thread::sleep(Duration::from_millis(300));
    let none = rss_mb(hub.pid());
    let mut after = Vec::new();
    for i in 0..20 {
        let (code, _) = call(
            &proxy,
            "r0",
            "GET",
            &format!("/b/review%2F{i:02}/"),
            &Value::Null,
        );
        assert_eq!(code, 200);
        after.push(rss_mb(hub.pid()));
    }
    std::thread::sleep(Duration::from_secs(2));
    let twenty = rss_mb(hub.pid());
    println!("| hub resident set | MB |");
    println!("|---|---:|");
    println!("| no branch open | {none:.1} |");
    println!("| 1 branch of book-example | {:.1} |", after[0]);
    println!(
        "| 20 branches | {twenty:.1} ({:.1} per branch after the first) |",
        (twenty - after[0]) / 19.0
    );
}
