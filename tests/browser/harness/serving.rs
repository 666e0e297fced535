//! Helpers for the browser tests of `serve` (`tests/browser/serve_browser.rs`): a served book with the
//! current client installed, a second server on another book of the same temporary repository,
//! page reloads, store polling, and the CLI.

#![allow(dead_code)]

use super::Page;
use crate::support::common::corpus;
pub use crate::support::common::install;
use crate::support::serve::Server;
use crate::support::wait;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `serve` on a copy of book-example with the current client installed.
pub fn book_example() -> Server {
    Server::start(&[], install)
}

/// `serve` on a copy of book-example changed by `prepare`, with the current client installed.
pub fn book_example_with(prepare: impl FnOnce(&Path)) -> Server {
    Server::start(&[], |book| {
        prepare(book);
        install(book);
    })
}

/// The base URL of a server.
pub fn base(port: u16) -> String {
    format!("http://127.0.0.1:{port}/")
}

/// Copies the corpus book `tests/corpus/<name>` next to the server's book-example (same git
/// repository), installs notabene in it and serves it.
pub fn corpus_next_to(server: &Server, name: &str) -> Server {
    server.start_next_to(&corpus(name), name)
}

/// Waits until a full build past generation `after` is done and the page shows it: a page
/// served from that build or a later one (its `Server-Timing` names it), loaded, writable,
/// its scroll restored. (A write first reaches open pages as a patched island, one reload
/// earlier; this waits for the rebuilt page.)
pub fn wait_rebuilt(p: &mut Page, port: u16, after: u64) {
    let b = wait::until(
        Duration::from_secs(60),
        &format!("a rebuild after generation {after}"),
        || Some(built(port)).filter(|b| *b > after),
    );
    p.wait_for(
        &format!(
            "(performance.getEntriesByType('navigation')[0].serverTiming.find(e => e.name === 'nb-generation') || {{duration: 0}}).duration >= {b} && document.readyState === 'complete' && document.documentElement.classList.contains('nb-write') && document.documentElement.dataset.nbScroll === 'restored'"
        ),
        Duration::from_secs(30),
    );
}

/// The generation the last full build published.
pub fn built(port: u16) -> u64 {
    let (_, text) = crate::support::serve::request(port, "GET", "/__notabene/api/status", &[], b"");
    serde_json::from_str::<Value>(&text).unwrap()["built"]
        .as_u64()
        .unwrap()
}

/// The build generation of the server on `port` (island patches move it too).
pub fn generation(port: u16) -> u64 {
    let (_, text) = crate::support::serve::request(port, "GET", "/__notabene/api/status", &[], b"");
    serde_json::from_str::<Value>(&text).unwrap()["generation"]
        .as_u64()
        .unwrap()
}

/// Waits until the server has rebuilt past `after` and then stayed quiet for `quiet`. (The
/// quiet window stands in for what the server does not say, whether it has seen changes it
/// has not built yet; no assertion that something did not happen relies on it.)
pub fn settle(port: u16, after: u64, quiet: Duration) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut g = generation(port);
    // A full build past `after` (a patched island moves the generation sooner).
    while built(port) <= after {
        assert!(
            Instant::now() < deadline,
            "no rebuild after generation {after}"
        );
        std::thread::sleep(Duration::from_millis(100));
        g = generation(port);
    }
    let mut since = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let now = generation(port);
        if now != g {
            g = now;
            since = Instant::now();
        } else if since.elapsed() >= quiet {
            return g;
        }
        assert!(Instant::now() < deadline, "the server keeps rebuilding");
    }
}

/// Marks the current document so that a reload (or navigation) can be detected.
pub fn mark_document(p: &mut Page) {
    p.eval("window.__nbOldDocument = true");
}

/// Waits for the document marked by `mark_document` to be replaced by a loaded one in write
/// mode (the live reload after a write), with its scroll position put back — and for the page
/// to show the server's latest full build with nothing newer pending (a write first reaches
/// open pages as a patched island, one reload before the rebuilt page).
pub fn wait_reloaded(p: &mut Page, timeout: Duration) {
    let ready = "document.readyState === 'complete' && document.documentElement.classList.contains('nb-write') && document.documentElement.dataset.nbScroll === 'restored'";
    p.wait_for(&format!("!window.__nbOldDocument && {ready}"), timeout);
    let deadline = Instant::now() + timeout;
    let served_expr = format!(
        "({ready}) ? (performance.getEntriesByType('navigation')[0].serverTiming.find(e => e.name === 'nb-generation') || {{duration: 0}}).duration : -1"
    );
    loop {
        // The page may be navigating (a later reload) while this asks: that answer is an
        // error, and the question is asked again.
        let state = p
            .try_eval("[+location.port, localStorage.getItem('notabene:token') || '']")
            .and_then(|page| Ok((page, p.try_eval(&served_expr)?)));
        if let Ok((page, served)) = state {
            let port = page[0].as_u64().unwrap_or_default() as u16;
            // `--host` mode: the API wants the page's token.
            let token = page[1].as_str().unwrap_or_default();
            let headers: Vec<(&str, &str)> = if token.is_empty() {
                vec![]
            } else {
                vec![("x-notabene-token", token)]
            };
            let (_, text) = crate::support::serve::request(
                port,
                "GET",
                "/__notabene/api/status",
                &headers,
                b"",
            );
            let v: Value = serde_json::from_str(&text).unwrap();
            let (g, b) = (
                v["generation"].as_u64().unwrap(),
                v["built"].as_u64().unwrap(),
            );
            let served = served.as_f64().unwrap_or(-1.0) as i64;
            // Shown, and the server quiet for a moment: a rebuild that follows close behind
            // (the whole book, once quiet) reloads the page again, and the test would act on a
            // page about to go. Then the page is waited for again.
            if g == b && served >= b as i64 && quiet_since(port, &headers, g, QUIET) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the page never showed the rebuilt book (generation {g}, built {b}, page {served})"
            );
        } else {
            assert!(
                Instant::now() < deadline,
                "the page never settled: {state:?}"
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// How long the server must publish nothing new for a reloaded page to count as settled.
const QUIET: Duration = Duration::from_millis(600);

/// Whether the server on `port` (asked with `headers`: `--host` mode's token) stays at
/// generation `g` for `quiet`.
fn quiet_since(port: u16, headers: &[(&str, &str)], g: u64, quiet: Duration) -> bool {
    let until = Instant::now() + quiet;
    while Instant::now() < until {
        std::thread::sleep(Duration::from_millis(100));
        let (_, text) =
            crate::support::serve::request(port, "GET", "/__notabene/api/status", headers, b"");
        let now = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v["generation"].as_u64());
        if now != Some(g) {
            return false;
        }
    }
    true
}

/// Waits for the document marked by `mark_document` to be replaced by a loaded one in write
/// mode, whichever reload it is (the patched island's included).
pub fn wait_next_load(p: &mut Page, timeout: Duration) {
    p.wait_for(
        "!window.__nbOldDocument && document.readyState === 'complete' && document.documentElement.classList.contains('nb-write') && document.documentElement.dataset.nbScroll === 'restored'",
        timeout,
    );
}

/// Waits until the client has found the write API.
pub fn wait_writable(p: &mut Page) {
    p.wait_for(
        "document.documentElement.classList.contains('nb-write')",
        Duration::from_secs(10),
    );
}

/// The comment files of a page directory of the store.
pub fn comment_files(dir: &Path) -> BTreeSet<PathBuf> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect()
        })
        .unwrap_or_default()
}

/// Waits (up to `timeout`) for a comment file in `dir` that is not in `before`; returns it parsed.
pub fn wait_new_comment(dir: &Path, before: &BTreeSet<PathBuf>, timeout: Duration) -> Value {
    let p = wait::until(
        timeout,
        &format!("a new comment file in {}", dir.display()),
        || comment_files(dir).difference(before).next().cloned(),
    );
    // The store writes atomically (temp file + rename): a listed .json is complete.
    let text = std::fs::read_to_string(&p).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", p.display()))
}

/// Reads a comment file, waiting (up to `timeout`) until `ok` holds for it.
pub fn wait_comment(
    path: &Path,
    timeout: Duration,
    what: &str,
    ok: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + timeout;
    loop {
        let v = std::fs::read_to_string(path)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .unwrap_or(Value::Null);
        if ok(&v) {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "{}: still not {what} after {timeout:?}:\n{v:#}",
            path.display()
        );
        std::thread::sleep(wait::PACE);
    }
}

/// Runs the agent CLI `notabene --book <book> ARGS` with `stdin`; returns stdout (asserts success).
pub fn cli(book: &Path, args: &[&str], stdin: &str) -> String {
    let mut child = Command::new(crate::support::common::bin())
        .arg("--book")
        .arg(book)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run notabene");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "notabene {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Types text into the focused element (like an IME commit: one `input` event).
pub fn type_text(p: &mut Page, text: &str) {
    p.call("Input.insertText", json!({ "text": text }));
}

/// Ctrl+Enter on the focused element.
pub fn ctrl_enter(p: &mut Page) {
    for ty in ["rawKeyDown", "keyUp"] {
        p.call(
            "Input.dispatchKeyEvent",
            json!({ "type": ty, "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "modifiers": 2 }),
        );
    }
}

/// A key with Shift held ("End", "ArrowRight", …).
pub fn shift_key(p: &mut Page, key: &str, vk: u32) {
    p.call(
        "Input.dispatchKeyEvent",
        json!({ "type": "keyDown", "key": "Shift", "code": "ShiftLeft", "windowsVirtualKeyCode": 16, "modifiers": 8 }),
    );
    for ty in ["rawKeyDown", "keyUp"] {
        p.call(
            "Input.dispatchKeyEvent",
            json!({ "type": ty, "key": key, "code": key, "windowsVirtualKeyCode": vk, "modifiers": 8 }),
        );
    }
    p.call(
        "Input.dispatchKeyEvent",
        json!({ "type": "keyUp", "key": "Shift", "code": "ShiftLeft", "windowsVirtualKeyCode": 16, "modifiers": 0 }),
    );
}

/// A real mouse drag with the left button from one point to another.
pub fn drag(p: &mut Page, from: (f64, f64), to: (f64, f64)) {
    p.call(
        "Input.dispatchMouseEvent",
        json!({ "type": "mouseMoved", "x": from.0, "y": from.1 }),
    );
    p.call(
        "Input.dispatchMouseEvent",
        json!({ "type": "mousePressed", "x": from.0, "y": from.1, "button": "left", "buttons": 1, "clickCount": 1 }),
    );
    for k in 1..=8 {
        let f = f64::from(k) / 8.0;
        p.call(
            "Input.dispatchMouseEvent",
            json!({ "type": "mouseMoved", "x": from.0 + (to.0 - from.0) * f, "y": from.1 + (to.1 - from.1) * f, "button": "left", "buttons": 1 }),
        );
    }
    p.call(
        "Input.dispatchMouseEvent",
        json!({ "type": "mouseReleased", "x": to.0, "y": to.1, "button": "left", "buttons": 0, "clickCount": 1 }),
    );
}

/// A triple click (paragraph selection) at a point.
pub fn triple_click(p: &mut Page, at: (f64, f64)) {
    p.call(
        "Input.dispatchMouseEvent",
        json!({ "type": "mouseMoved", "x": at.0, "y": at.1 }),
    );
    for n in 1..=3 {
        for ty in ["mousePressed", "mouseReleased"] {
            p.call(
                "Input.dispatchMouseEvent",
                json!({ "type": ty, "x": at.0, "y": at.1, "button": "left", "buttons": if ty == "mousePressed" { 1 } else { 0 }, "clickCount": n }),
            );
        }
    }
}

/// JS: the island of the current page, parsed.
pub const ISLAND: &str = "JSON.parse(document.querySelector('script.nb-data').textContent)";

/// JS (expression): a function `(needle) => Range` over the first run of `main` text equal to
/// `needle` (searched in the text of each block element, across its text nodes).
pub const RANGE_OF: &str = r#"((needle) => {
  const blocks = document.querySelectorAll('main p, main li, main td, main h1, main h2, main h3, main blockquote');
  for (const b of blocks) {
    const nodes = [];
    const w = document.createTreeWalker(b, NodeFilter.SHOW_TEXT);
    let text = '';
    for (let n = w.nextNode(); n; n = w.nextNode()) { nodes.push([n, text.length]); text += n.nodeValue; }
    const at = text.indexOf(needle);
    if (at < 0) continue;
    const point = (off, end) => {
      for (let i = 0; i < nodes.length; i++) {
        const [n, s] = nodes[i];
        const e = s + n.nodeValue.length;
        if (end ? off <= e : off < e) return [n, off - s];
      }
      const [n, s] = nodes[nodes.length - 1];
      return [n, n.nodeValue.length];
    };
    const r = document.createRange();
    r.setStart(...point(at, false));
    r.setEnd(...point(at + needle.length, true));
    return r;
  }
  return null;
})"#;

/// A plain static file server (no notabene API) on a directory: a published book over http.
pub struct StaticSite {
    pub port: u16,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Drop for StaticSite {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = std::net::TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Serves `dir` read-only over HTTP on a free port (404 for anything missing).
pub fn static_site(dir: &Path) -> StaticSite {
    use std::io::Read;
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = stop.clone();
    let root = dir.to_path_buf();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            if flag.load(std::sync::atomic::Ordering::SeqCst) {
                break;
            }
            let Ok(mut s) = stream else { continue };
            let root = root.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                let n = s.read(&mut buf).unwrap_or(0);
                let head = String::from_utf8_lossy(&buf[..n]).into_owned();
                let target = head.split(' ').nth(1).unwrap_or("/");
                let path = target.split(['?', '#']).next().unwrap_or("/");
                let mut file = root.join(path.trim_start_matches('/'));
                if file.is_dir() {
                    file = file.join("index.html");
                }
                let ok = !path.contains("..") && file.is_file();
                let body = if ok {
                    std::fs::read(&file).unwrap_or_default()
                } else {
                    b"not found".to_vec()
                };
                let ty = match file.extension().and_then(|e| e.to_str()) {
                    Some("html") => "text/html; charset=utf-8",
                    Some("css") => "text/css",
                    Some("js") => "text/javascript",
                    Some("svg") => "image/svg+xml",
                    _ => "application/octet-stream",
                };
                let head = format!(
                    "HTTP/1.1 {} X\r\nContent-Type: {ty}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    if ok { 200 } else { 404 },
                    body.len()
                );
                let _ = s.write_all(head.as_bytes());
                let _ = s.write_all(&body);
            });
        }
    });
    StaticSite { port, stop }
}

/// Scrolls `text` (a run of `main` text) into view and selects it with a real mouse drag from
/// its first character to its last.
pub fn drag_over_text(p: &mut Page, text: &str) {
    let pts = p.eval(&format!(
        "(() => {{ const r = {RANGE_OF}({s}); if (!r) return null;
           r.startContainer.parentElement.scrollIntoView({{block: 'center'}});
           const first = document.createRange(); first.setStart(r.startContainer, r.startOffset); first.setEnd(r.startContainer, r.startOffset + 1);
           const last = document.createRange(); last.setStart(r.endContainer, r.endOffset - 1); last.setEnd(r.endContainer, r.endOffset);
           const a = first.getClientRects()[0], b = last.getClientRects()[0];
           return [a.left + 1, a.top + a.height / 2, b.right - 1, b.top + b.height / 2]; }})()",
        s = serde_json::to_string(text).unwrap()
    ));
    let pts: Vec<f64> = pts
        .as_array()
        .expect("the text is on the page")
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    drag(p, (pts[0], pts[1]), (pts[2], pts[3]));
}
