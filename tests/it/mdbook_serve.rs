//! `mdbook serve` — the real mdBook 0.5 binary, not the embedded engine — on book-example:
//! mdBook runs `mdbook-notabene` from `PATH` as its preprocessor, and because `install` put
//! the store in `build.extra-watch-dirs`, changing a comment file in the store triggers a
//! rebuild whose page shows the change (a new comment gets its marker, an edited body shows in
//! the data island).
//!
//! The `mdbook` binary comes from `PATH` or `~/.cargo/bin` (`.ci/run` installs it). Without
//! it the test is skipped with a note, except under CI (`CI` set), where it fails.

use crate::support::common;
use crate::support::preprocess;
use crate::support::serve;

use common::{book_example, plugin_bin};
use mdbook_driver::config::Config;
use notabene_anchoring::text::page_text;
use notabene_store::json::to_js_pretty;
use notabene_store::{Fresh, Scope, Store, new_comment};
use preprocess::*;
use serde_json::Value;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a store change may take to show in the served page.
const REBUILD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the first build (before the server answers) may take.
const START_TIMEOUT: Duration = Duration::from_secs(120);
/// The chapter the test changes.
const PAGE_PATH: &str = "/guide/installing.html";
const PAGE_ID: &str = "book-example/src/guide/installing";
/// An existing open comment of that chapter.
const EXISTING: &str = "c_mwrmz21ih8pc";
/// The comment the test adds.
const NEW_ID: &str = "c_mzzserve0001";

/// The real `mdbook`: on `PATH`, else in `$CARGO_HOME/bin` or `~/.cargo/bin`.
fn find_mdbook() -> Option<PathBuf> {
    common::find_tool("mdbook")
}

/// A running `mdbook serve`, killed when dropped.
struct Server {
    child: Child,
    /// Its stdout and stderr.
    log: PathBuf,
}

impl Server {
    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Panics with `what` and the server's log, unless the server is still running.
    #[track_caller]
    fn assert_running(&mut self, what: &str) {
        if let Ok(Some(status)) = self.child.try_wait() {
            panic!(
                "mdbook serve exited ({status}) while {what}; its log:\n{}",
                self.log()
            );
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port nobody listens on right now.
fn free_port() -> u16 {
    TcpListener::bind(("127.0.0.1", 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `GET path` on the server: (status code, body).
fn get(port: u16, path: &str) -> std::io::Result<(u16, String)> {
    serve::try_get(port, path, &[("Cache-Control", "no-cache")])
}

/// Polls `path` until a 200 answer satisfies `done`; returns that body and the time it took.
#[track_caller]
fn poll(
    server: &mut Server,
    port: u16,
    path: &str,
    timeout: Duration,
    what: &str,
    done: impl Fn(&str) -> bool,
) -> (String, Duration) {
    poll_nudging(server, port, path, timeout, what, done, || {})
}

/// How long [`poll_nudging`] waits for a change to show before it makes the change again.
const NUDGE_AFTER: Duration = Duration::from_secs(3);

/// [`poll`], calling `nudge` (which makes the change the poll waits for again) whenever
/// [`NUDGE_AFTER`] passes without `done`.
#[track_caller]
fn poll_nudging(
    server: &mut Server,
    port: u16,
    path: &str,
    timeout: Duration,
    what: &str,
    done: impl Fn(&str) -> bool,
    nudge: impl Fn(),
) -> (String, Duration) {
    let t0 = Instant::now();
    let mut nudged = t0;
    let mut last = String::from("(no answer)");
    while t0.elapsed() < timeout {
        server.assert_running(what);
        match get(port, path) {
            Ok((200, body)) if done(&body) => return (body, t0.elapsed()),
            Ok((code, _)) => last = format!("HTTP {code}"),
            Err(e) => last = format!("error: {e}"),
        }
        if nudged.elapsed() >= NUDGE_AFTER {
            nudge();
            nudged = Instant::now();
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!(
        "timed out after {timeout:?} {what} (last answer: {last}); mdbook serve log:\n{}",
        server.log()
    );
}

/// The comments of a served page's data island.
fn island_comments(body: &str) -> Vec<Value> {
    let doc = scraper::Html::parse_document(body);
    let isl = islands(&doc);
    assert_eq!(isl.len(), 1, "islands of {PAGE_PATH}");
    assert_eq!(isl[0].0, PAGE_ID);
    isl[0].1["comments"].as_array().unwrap().clone()
}

fn body_of(comments: &[Value], id: &str) -> Option<String> {
    comments
        .iter()
        .find(|c| c["id"] == id)
        .and_then(|c| c["thread"][0]["body"].as_str())
        .map(str::to_string)
}

#[test]
fn mdbook_serve_rebuilds_when_the_store_changes() {
    let Some(mdbook) = find_mdbook() else {
        if std::env::var_os("CI").is_some() {
            panic!(
                "the real mdbook binary is not installed (CI is set; .ci/run installs it with `cargo install mdbook --version 0.5.4 --locked`)"
            );
        }
        eprintln!(
            "note: skipping mdbook_serve_rebuilds_when_the_store_changes: no `mdbook` on PATH or in ~/.cargo/bin (cargo install mdbook --version 0.5.4 --locked)"
        );
        return;
    };
    let version = Command::new(&mdbook).arg("--version").output().unwrap();
    let version = String::from_utf8_lossy(&version.stdout).trim().to_string();
    assert!(
        version.starts_with("mdbook v0.5"),
        "{}: version {version:?}, want mdBook 0.5",
        mdbook.display()
    );

    // book-example in a git work tree (page ids `book-example/src/…`), without a build.
    let tmp = common::tempdir();
    let root = common::stage(&book_example(), tmp.path(), "book-example");
    let config: Config = common::read(&root.join("book.toml")).parse().unwrap();
    assert!(
        config
            .build
            .extra_watch_dirs
            .iter()
            .any(|d| d == Path::new(".notabene")),
        "book-example's book.toml must list .notabene in build.extra-watch-dirs: {:?}",
        config.build.extra_watch_dirs
    );
    let pre: Value = config.get("preprocessor.notabene").unwrap().unwrap();
    assert!(
        pre.get("command").is_none(),
        "book-example names no command: mdBook runs mdbook-notabene from PATH"
    );

    // mdBook finds `mdbook-notabene` on PATH: the one this test suite built.
    let plugin_dir = Path::new(plugin_bin()).parent().unwrap();
    let path = std::env::join_paths(
        std::iter::once(plugin_dir.to_path_buf()).chain(
            std::env::var_os("PATH")
                .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
                .unwrap_or_default(),
        ),
    )
    .unwrap();

    let port = free_port();
    let log = tmp.path().join("serve.log");
    let log_file = std::fs::File::create(&log).unwrap();
    let mut cmd = Command::new(&mdbook);
    cmd.arg("serve")
        .arg(&root)
        .args(["--port", &port.to_string(), "--hostname", "127.0.0.1"])
        .current_dir(tmp.path());
    for (k, _) in std::env::vars_os() {
        let k2 = k.to_string_lossy();
        if k2.starts_with("NOTABENE_") || k2.starts_with("MDBOOK_") {
            cmd.env_remove(&k);
        }
    }
    cmd.env("PATH", &path)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(Stdio::null())
        .stdout(log_file.try_clone().unwrap())
        .stderr(log_file);
    let t0 = Instant::now();
    let mut server = Server {
        child: cmd.spawn().expect("spawn mdbook serve"),
        log,
    };

    // 1. The first build is served, with the preprocessor's work in it.
    let (page, started) = poll(
        &mut server,
        port,
        PAGE_PATH,
        START_TIMEOUT,
        "waiting for the first build",
        |_| true,
    );
    assert!(
        page.contains(&format!("data-nb-id=\"{EXISTING}\"")),
        "the served page has no marker of {EXISTING}: is the preprocessor running?\n{}",
        server.log()
    );
    assert!(!page.contains(NEW_ID));
    // mdBook starts serving before its poller takes the snapshot that later scans compare
    // with: a change made before that snapshot would go unnoticed. It logs "Watching for
    // changes..." just before (and nothing when the snapshot is taken): the change below is
    // made again while it does not show, so one made too early is seen the next time.
    let t_watch = Instant::now();
    while !server.log().contains("Watching for changes") {
        server.assert_running("waiting for the watcher");
        assert!(
            t_watch.elapsed() < START_TIMEOUT,
            "mdbook serve never logged \"Watching for changes\":\n{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let before = island_comments(&page);
    let old_body = body_of(&before, EXISTING).expect("existing comment in the island");
    let log_text = server.log();
    assert!(
        log_text.contains("notabene: 14 comments on 6 pages"),
        "the preprocessor's report is not in the server's log:\n{log_text}"
    );

    // 2. A new comment file in the store: a selection quoting a sentence of the chapter.
    let md = common::read(&root.join("src/guide/installing.md"));
    let quote = "The installer never modifies files outside the prefix";
    let options = mdbook_notabene::model::book::text_options(&config).unwrap();
    let pt = page_text(&md, &options);
    let a = pt.text.find(quote).expect("quote in the text model");
    let anchor = capture(&pt, a, a + quote.len());
    let comment = new_comment(&Fresh {
        id: NEW_ID,
        space: "book",
        page: PAGE_ID,
        scope: Scope::Selection,
        anchor,
        author: "Serve Tester <serve@example.com>",
        body: "Say which prefix: the default one or SKYLARK_PREFIX.",
        ts: common::NOW,
    });
    let store = Store::new(root.join(".notabene"));
    let t_new = Instant::now();
    store.create(&comment).unwrap();
    let file = root.join(format!(".notabene/{PAGE_ID}/{NEW_ID}.json"));
    assert!(file.is_file(), "{} not written", file.display());
    let marker = format!("data-nb-id=\"{NEW_ID}\"");
    let bytes = std::fs::read(&file).unwrap();
    let (page, _) = poll_nudging(
        &mut server,
        port,
        PAGE_PATH,
        REBUILD_TIMEOUT,
        "waiting for the new comment's marker",
        |body| body.contains(&marker),
        // The same bytes, a new modification time: a change for mdBook's poller (written
        // beside the book and renamed into place: a build never reads half a file).
        || {
            let next = tmp.path().join("nudge.json");
            std::fs::write(&next, &bytes).unwrap();
            std::fs::rename(&next, &file).unwrap();
        },
    );
    let new_took = t_new.elapsed();
    let doc = scraper::Html::parse_document(&page);
    let marked: String = doc
        .select(&sel(&format!("mark.nb-mark[data-nb-id=\"{NEW_ID}\"]")))
        .flat_map(|e| e.text())
        .collect();
    assert_eq!(
        notabene_anchoring::text::normalize::normalize(&marked).as_string(),
        quote
    );
    let comments = island_comments(&page);
    let new = comments
        .iter()
        .find(|c| c["id"] == NEW_ID)
        .expect("new comment in the island");
    assert_eq!(new["anchoring"]["status"], "exact");
    assert_eq!(
        body_of(&comments, EXISTING).as_deref(),
        Some(old_body.as_str())
    );

    // 3. An existing comment's body changes in its file.
    let existing = root.join(format!(".notabene/{PAGE_ID}/{EXISTING}.json"));
    let mut v: Value = serde_json::from_str(&common::read(&existing)).unwrap();
    let new_body = "Re-timed: 24 minutes on a Pi 3 and 9 on a Pi 4 (serve test).";
    v["thread"][0]["body"] = new_body.into();
    let t_edit = Instant::now();
    std::fs::write(&existing, to_js_pretty(&v)).unwrap();
    let (page, _) = poll(
        &mut server,
        port,
        PAGE_PATH,
        REBUILD_TIMEOUT,
        "waiting for the edited body in the island",
        |body| {
            // The island is JSON in a script element: parse it rather than search the bytes.
            let doc = scraper::Html::parse_document(body);
            islands(&doc)
                .first()
                .and_then(|(_, v, _)| {
                    v["comments"]
                        .as_array()?
                        .iter()
                        .find(|c| c["id"] == EXISTING)
                        .and_then(|c| c["thread"][0]["body"].as_str().map(|b| b == new_body))
                })
                .unwrap_or(false)
        },
    );
    let edit_took = t_edit.elapsed();
    let comments = island_comments(&page);
    assert_eq!(
        body_of(&comments, EXISTING).as_deref(),
        Some(new_body),
        "edited body"
    );
    assert!(page.contains(&format!("data-nb-id=\"{EXISTING}\"")));
    assert!(page.contains(&marker), "the new comment is still marked");
    server.assert_running("at the end");
    let log_text = server.log();
    assert!(
        log_text.matches("Files changed:").count() >= 2 && !log_text.contains("ERROR"),
        "mdbook serve log:\n{log_text}"
    );
    eprintln!(
        "mdbook serve ({version}): first page after {started:?} (total {:?}); new comment shown after {new_took:?}; edited body shown after {edit_took:?}",
        t0.elapsed()
    );
}
