//! `serve` on the ~2 MB book with 10,000 open comments (release build): how soon a comment
//! written through the API is in the served chapter — the HTML the next reader or reload
//! gets — first as a reviewer writes (`NB_WRITES` comments, default 50, spaced 0.5 s apart
//! whatever the server is doing: a write can land while the rebuild of the one before runs),
//! then one write at a time against the baseline measured in the same run (how soon the full
//! rebuild that follows has it); then a rebuild after one new comment that renders only the
//! pages that changed, against a build that keeps nothing. Run with `cargo bench --bench
//! serve_chapter` (`NB_ROUNDS` rebuild rounds, default 7). Targets: the new comment in the
//! served chapter at p95 ≤ 200 ms as a reviewer writes, the rebuild after it ≤ 400 ms.

// Tests and benches are not a library: their shared modules are `pub` for each other, and
// need no rustdoc.
#![allow(unreachable_pub, missing_docs)]

#[path = "support/big_book.rs"]
mod big_book;
#[path = "../tests/support/mod.rs"]
mod support;

use big_book::*;
use mdbook_driver::MDBook;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use support::common::{self, files_under};
use support::serve::{Server, quantile};

/// The binaries' allocator, so that the in-process rebuilds are timed as `serve` runs them.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("serve_chapter: run with `cargo bench --bench serve_chapter`");
        return;
    }
    let writes: usize = std::env::var("NB_WRITES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let tmp = common::tempdir();
    // The builds' cache of the store's files goes in the bench's own directory (the server
    // inherits it).
    // SAFETY: no other thread runs yet.
    unsafe { std::env::set_var("NOTABENE_CACHE_DIR", tmp.path().join("cache")) };
    let (root, base) = big_book(tmp.path());
    let md = MDBook::load_with_config(&root, base).unwrap();
    generate_into(&root, &md, 10_000);
    // The book as the scale bench builds it: Rust by Example's own preprocessor
    // (`mdbook-gettext`, optional, run where it is installed) taken out of its book.toml. It
    // passes the whole book through JSON on every build, with notabene or without, so it
    // would time whether it is installed here; the engine-alone row below has no
    // preprocessor either.
    without_other_preprocessors(&root);
    // The book set up as a user sets it up.
    common::install(&root);
    idle(&root);
    let server = Server::start_dir(&root);
    // The chapters and a quote on each (an anchor a comment already has there, whose quote
    // is in the chapter's text: one generated anchor in ten has a typo, which the API refuses
    // for a new comment).
    let mut targets: Vec<(String, String, Value)> = Vec::new();
    let mut texts: std::collections::HashMap<String, String> = Default::default();
    // Its comment files (not `meta.json` or the journal).
    let files: Vec<std::path::PathBuf> = files_under(&server.store())
        .into_iter()
        .filter(|p| {
            p.extension().is_some_and(|x| x == "json")
                && p.file_name()
                    .is_some_and(|n| n != "meta.json" && n != "journal.json")
        })
        .collect();
    for f in &files {
        let c: Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        let page = c["page"].as_str().unwrap_or("").to_string();
        // `<prefix>/src/<chapter>` is served as `/<chapter>.html` (README as index.html:
        // skipped).
        let html = page
            .split_once("src/")
            .map(|(_, p)| format!("/{p}.html"))
            .filter(|h| !h.ends_with("README.html"));
        let mut on_page = |rel: &str| {
            let text = texts.entry(rel.to_string()).or_insert_with(|| {
                let md = std::fs::read_to_string(root.join("src").join(format!("{rel}.md")));
                let options = notabene_anchoring::text::TextOptions::default();
                notabene_anchoring::text::page_text(&md.unwrap_or_default(), &options).text
            });
            c["anchor"]["quote"]
                .as_str()
                .is_some_and(|q| mdbook_notabene::apps::ops::quote_in_text(text, q))
        };
        if let Some(html) = html
            && c["scope"] == "selection"
            && !targets.iter().any(|t| t.0 == page)
            && on_page(html.trim_start_matches('/').trim_end_matches(".html"))
        {
            targets.push((page, html, c["anchor"].clone()));
        }
    }
    spaced(&server, &targets, writes);
    let (mut patched, mut rebuilt) = (Vec::new(), Vec::new());
    for k in 0..writes {
        let (page, html, anchor) = &targets[(k * 7) % targets.len()];
        let builds = builds(&server);
        let t = Instant::now();
        let (code, text) = server.request(
            "POST",
            "/__notabene/api/comments",
            &[("Content-Type", "application/json")],
            json!({ "page": page, "space": "book", "scope": "selection", "anchor": anchor, "body": format!("bench {k}") })
                .to_string()
                .as_bytes(),
        );
        assert_eq!(code, 201, "{text}");
        let id = serde_json::from_str::<Value>(&text).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string();
        patched.push(served(&server, page, html, &id, t));
        // The full rebuild it triggers.
        while self::builds(&server) == builds {
            assert!(t.elapsed() < Duration::from_secs(120), "no rebuild");
            std::thread::sleep(Duration::from_millis(20));
        }
        rebuilt.push(t.elapsed());
    }
    let us = |v: &[Duration]| -> Vec<u64> { v.iter().map(|d| d.as_micros() as u64).collect() };
    let (mut p, mut r) = (us(&patched), us(&rebuilt));
    let ms = |x: u64| format!("{:.0}", x as f64 / 1e3);
    println!("| a new comment (POST) is in the served chapter | p50 (ms) | p95 (ms) |");
    println!("|---|---:|---:|");
    println!(
        "| baseline: after the full rebuild | {} | {} |",
        ms(quantile(&mut r, 0.5)),
        ms(quantile(&mut r, 0.95))
    );
    let p95 = quantile(&mut p, 0.95);
    println!(
        "| island patched (target p95 ≤ 300) | {} | {} {} |",
        ms(quantile(&mut p, 0.5)),
        ms(p95),
        if p95 <= 300_000 { "✓" } else { "✗" }
    );
    println!(
        "\n{writes} writes on {} chapters, 10,000 open comments; the full rebuild is {:.1}× slower at p50.",
        targets.len(),
        quantile(&mut r, 0.5) as f64 / quantile(&mut p, 0.5).max(1) as f64
    );
    drop(server);
    rebuilds(&root, &files, tmp.path());
}

/// Waits until the chapter `html` the server serves holds comment `id` in its island (plain or
/// deflated); returns the time since `t`.
fn served(server: &Server, page: &str, html: &str, id: &str, t: Instant) -> Duration {
    let needle = format!("\"id\":\"{id}\"");
    let attrs = format!(
        " data-nb-page=\"{}\"",
        notabene_core::escape::escape_html(page)
    );
    loop {
        let (_, body) = server.request("GET", html, &[], b"");
        let island = mdbook_notabene::util::payload::find_data_script(&body, "nb-data", &attrs);
        if island.is_some_and(|i| i.json.contains(&needle)) {
            return t.elapsed();
        }
        assert!(t.elapsed() < Duration::from_secs(60), "never in {html}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// What a reviewer gets: `writes` comments posted 0.5 s apart on a schedule (each from its own
/// thread, so a slow answer does not delay the next write), each timed from its POST until the
/// served chapter has it — whatever rebuild the writes before it set off is running meanwhile.
fn spaced(server: &Server, targets: &[(String, String, Value)], writes: usize) {
    let start = Instant::now();
    let times: Vec<Duration> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..writes)
            .map(|k| {
                let at = start + Duration::from_millis(500 * k as u64);
                let (page, html, anchor) = &targets[(k * 7 + 3) % targets.len()];
                s.spawn(move || {
                    std::thread::sleep(at.saturating_duration_since(Instant::now()));
                    let t = Instant::now();
                    let body = json!({ "page": page, "space": "book", "scope": "selection", "anchor": anchor, "body": format!("spaced {k}") });
                    let (code, text) = server.request(
                        "POST",
                        "/__notabene/api/comments",
                        &[("Content-Type", "application/json")],
                        body.to_string().as_bytes(),
                    );
                    assert_eq!(code, 201, "{text}");
                    let id = serde_json::from_str::<Value>(&text).unwrap()["id"]
                        .as_str()
                        .unwrap()
                        .to_string();
                    served(server, page, html, &id, t)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut us: Vec<u64> = times.iter().map(|d| d.as_micros() as u64).collect();
    let ms = |x: u64| format!("{:.0}", x as f64 / 1e3);
    let p95 = quantile(&mut us, 0.95);
    println!(
        "| {writes} comments posted 0.5 s apart: in the served chapter | p50 (ms) | p95 (ms) | max (ms) |"
    );
    println!("|---|---:|---:|---:|");
    println!(
        "| from the POST to the chapter a reload gets (target p95 ≤ 200) | {} | {} {} | {} |",
        ms(quantile(&mut us, 0.5)),
        ms(p95),
        if p95 <= 200_000 { "✓" } else { "✗" },
        ms(quantile(&mut us, 1.0))
    );
    println!();
    // Quiet again before the next measure: no build for 3 s.
    loop {
        let b = builds(server);
        std::thread::sleep(Duration::from_secs(3));
        if builds(server) == b {
            break;
        }
    }
}

/// `serve` doing nothing on this book: the CPU it uses over `NB_IDLE_SECS` (default 60) seconds,
/// read from `/proc/PID/stat` (user + system ticks), with the OS's file events (as it runs) and
/// with `NOTABENE_WATCH=poll` (the baseline: every watched file re-read five times a second),
/// one after the other in the same run. Linux only (elsewhere the table says so).
fn idle(root: &std::path::Path) {
    let secs: u64 = std::env::var("NB_IDLE_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let ticks = |pid: i32| -> Option<u64> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The fields after the command name (which may hold spaces) in parentheses.
        let rest = &stat[stat.rfind(')')? + 2..];
        let f: Vec<&str> = rest.split(' ').collect();
        Some(f[11].parse::<u64>().ok()? + f[12].parse::<u64>().ok()?)
    };
    // Clock ticks per second (`getconf CLK_TCK`).
    let hz = std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse::<f64>().ok())
        .unwrap_or(100.0);
    let files = files_under(root).len();
    println!("| `serve` idle, {secs} s, {files} files watched | CPU ticks | share of a core |");
    println!("|---|---:|---:|");
    for (name, env) in [
        (
            "baseline: polling (`NOTABENE_WATCH=poll`)",
            &[("NOTABENE_WATCH", "poll")][..],
        ),
        ("file events (target < 1%)", &[][..]),
    ] {
        let server = Server::start_dir_with(root, env);
        // Settled: the first build served, nothing pending.
        let g = server.generation();
        std::thread::sleep(Duration::from_secs(3));
        assert_eq!(server.generation(), g, "nothing happens while idle");
        let Some(before) = ticks(server.pid()) else {
            println!("| {name} | no /proc here | |");
            continue;
        };
        std::thread::sleep(Duration::from_secs(secs));
        let used = ticks(server.pid()).unwrap() - before;
        println!(
            "| {name} | {used} | {:.2}% |",
            used as f64 / hz / secs as f64 * 100.0
        );
    }
    println!();
}

/// A rebuild after one new comment, in process as `serve` builds: the pages that changed
/// rendered (`serve`'s rebuild: the chapter, the generated pages, the summary of the others),
/// and the whole book with what the last build kept (what `serve` did before, and does behind
/// a build of pages for `print.html` and the search index), against a build that keeps nothing
/// (`mdbook-notabene build`'s with no memo, the baseline) and the engine alone on the book
/// without notabene, alternating in the same run (`NB_ROUNDS` rounds, default 7).
fn rebuilds(root: &std::path::Path, files: &[std::path::PathBuf], tmp: &std::path::Path) {
    use mdbook_notabene::output::engine::{
        Kept, RebuildChange, Rebuilt, build, build_into, rebuild_into,
    };
    let rounds: usize = std::env::var("NB_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7);
    let kept = Kept::default();
    let mut current = tmp.join("site-0");
    build_into(root, &current, &kept).unwrap();
    let (mut pages, mut whole, mut fresh, mut plain) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    // The floor: the engine alone, the same book without notabene (every page rendered).
    let plain_config = {
        let text = std::fs::read_to_string(root.join("book.toml")).unwrap();
        let mut c: mdbook_driver::config::Config = text.parse().unwrap();
        c.set("preprocessor", json!({})).unwrap();
        c.build.build_dir = tmp.join("plain");
        c
    };
    let plain_build = || {
        let t = Instant::now();
        MDBook::load_with_config(root, plain_config.clone())
            .unwrap()
            .build()
            .unwrap();
        let d = t.elapsed();
        let _ = std::fs::remove_dir_all(tmp.join("plain"));
        d
    };
    let fresh_build = || {
        let dest = tmp.join("fresh");
        // A build that keeps nothing: no memo of the builds before it either.
        // SAFETY: this thread is the bench's only one between builds.
        unsafe { std::env::set_var("NOTABENE_CACHE_DIR", "off") };
        let t = Instant::now();
        build(root, Some(&dest)).unwrap();
        let d = t.elapsed();
        // SAFETY: as above.
        unsafe { std::env::set_var("NOTABENE_CACHE_DIR", tmp.join("cache")) };
        let _ = std::fs::remove_dir_all(&dest);
        d
    };
    let mut last = (0, 0);
    for k in 0..rounds {
        // One new comment: a copy of one of the store's, under a new id.
        let model = &files[(k * 13) % files.len()];
        let text = std::fs::read_to_string(model).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        let (old, new) = (v["id"].as_str().unwrap(), format!("c_mwzzbench{k:04}"));
        let written = model.with_file_name(format!("{new}.json"));
        std::fs::write(&written, text.replace(old, &new)).unwrap();
        let mut timed_pages = || {
            let dest = tmp.join(format!("site-{}", k + 1));
            let changed: std::collections::BTreeSet<_> = [written.clone()].into();
            let t = Instant::now();
            let (_, rebuilt) = rebuild_into(
                root,
                (&current, &dest, &tmp.join("scratch")),
                &kept,
                &RebuildChange {
                    files: Some(&changed),
                    touched: &Default::default(),
                },
            )
            .unwrap();
            let d = t.elapsed();
            let Rebuilt::Pages { rendered, patched } = rebuilt else {
                panic!("a new comment renders pages: {rebuilt:?}");
            };
            last = (rendered, patched);
            let _ = std::fs::remove_dir_all(&current);
            current = dest;
            d
        };
        let timed_whole = || {
            let dest = tmp.join("whole");
            let t = Instant::now();
            build_into(root, &dest, &kept).unwrap();
            let d = t.elapsed();
            let _ = std::fs::remove_dir_all(&dest);
            d
        };
        if k % 2 == 0 {
            fresh.push(fresh_build());
            pages.push(timed_pages());
            whole.push(timed_whole());
            plain.push(plain_build());
        } else {
            plain.push(plain_build());
            pages.push(timed_pages());
            whole.push(timed_whole());
            fresh.push(fresh_build());
        }
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let ms = |v: &[Duration]| median(v.iter().map(|d| d.as_secs_f64() * 1e3).collect());
    // The first and third quartiles of the rounds: how far this machine's noise moved them.
    let spread = |v: &[Duration]| {
        let mut t: Vec<f64> = v.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        t.sort_by(f64::total_cmp);
        format!("{:.0}–{:.0}", t[t.len() / 4], t[(3 * t.len()) / 4])
    };
    let ratio = |v: &[Duration]| {
        median(
            v.iter()
                .zip(&fresh)
                .map(|(a, b)| a.as_secs_f64() / b.as_secs_f64())
                .collect(),
        )
    };
    println!(
        "\n| a rebuild after one new comment ({rounds} rounds, in process) | median (ms) | its rounds' middle half (ms) | ratio |"
    );
    println!("|---|---:|---|---:|");
    println!(
        "| baseline: a build that keeps nothing (`mdbook-notabene build`, no memo) | {:.0} | {} | 1.00 |",
        ms(&fresh),
        spread(&fresh)
    );
    let pages_ms = ms(&pages);
    println!(
        "| `serve`'s rebuild: the pages that changed rendered (target ≤ 400 ms) | {pages_ms:.0} {} | {} | {:.2} |",
        if pages_ms <= 400.0 { "✓" } else { "✗" },
        spread(&pages),
        ratio(&pages)
    );
    println!(
        "| the whole book, unchanged chapters kept (behind it: `print.html`, the search index) | {:.0} | {} | {:.2} |",
        ms(&whole),
        spread(&whole),
        ratio(&whole)
    );
    println!(
        "| the engine alone, the book without notabene (mdBook renders every page) | {:.0} | {} | {:.2} |",
        ms(&plain),
        spread(&plain),
        ratio(&plain)
    );
    println!(
        "\nThe last rebuild of pages: {} chapters rendered, {} summaries patched.",
        last.0, last.1
    );
}

/// Takes every `[preprocessor.*]` table out of the book.toml of the book at `root`.
fn without_other_preprocessors(root: &std::path::Path) {
    let path = root.join("book.toml");
    let mut doc: toml_edit::DocumentMut = std::fs::read_to_string(&path).unwrap().parse().unwrap();
    doc.remove("preprocessor");
    std::fs::write(&path, doc.to_string()).unwrap();
}

fn builds(server: &Server) -> u64 {
    let (_, v) = server.json("GET", "/__notabene/api/status", &Value::Null);
    v["builds"].as_u64().unwrap_or(0)
}
