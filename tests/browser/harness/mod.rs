//! Headless-Chromium harness for the reader-client tests (`tests/browser/browser.rs`, `tests/browser/serve_browser.rs`).
//!
//! * One Chromium per test process while tests overlap: each test holds an `Arc<Browser>`;
//!   when the last holder drops it, Chromium is closed (and killed if it lingers). A later
//!   test starts a fresh one.
//! * Each `Page` is a new target in its own browser context (isolated `localStorage`), driven
//!   over the Chrome DevTools Protocol with a sync WebSocket.
//! * `site()` builds `book-example` once per process with the binary under test, in a git
//!   repository of its own, its client (the current `theme/`) put in by `install`.
//!
//! Book set-up, the binaries and `serve` come from the shared `support` module.

#![allow(dead_code)]

pub mod serving;

use crate::support::common::{book_example, build, copy_book, fixture, git_commit_all, install};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};
use tungstenite::{Message, WebSocket};

/// Where Debian's `chromium` package puts the browser.
pub const CHROMIUM: &str = "/usr/bin/chromium";

/// `target/browser-screenshots/`.
pub fn screenshot_dir() -> PathBuf {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().unwrap_or(&tmp).join("browser-screenshots")
}

/// The browser to use, or `None` (with a note) when it is absent outside CI.
/// With `CI` set, a missing browser is a failure, not a skip.
pub fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("NOTABENE_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(CHROMIUM));
    if path.exists() {
        return Some(path);
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "CI is set but {} is missing: the browser tests need it (apt-get install -y chromium)",
            path.display()
        );
    }
    // Straight to stderr (not captured by the test harness), once per process.
    static NOTE: OnceLock<()> = OnceLock::new();
    NOTE.get_or_init(|| {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "note: browser tests skipped: {} not found (install the Debian package `chromium`; with CI set this fails)",
            path.display()
        );
    });
    None
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/* ------------------------------------------------------------------ CDP */

/// One CDP connection (browser or page endpoint).
pub struct Cdp {
    ws: WebSocket<TcpStream>,
    next: u64,
    /// Events received while waiting for responses, oldest first.
    pub events: Vec<Value>,
    /// Every uncaught exception (`Runtime.exceptionThrown`) and `console.error` call
    /// (`Runtime.consoleAPICalled` of type `error`) received, kept apart from `events` (which
    /// drops its oldest): a `Page` fails its test on any it has not been told to expect.
    pub errors: Vec<String>,
}

impl Cdp {
    fn connect(url: &str) -> Result<Cdp, String> {
        let rest = url
            .strip_prefix("ws://")
            .ok_or_else(|| format!("not a ws:// url: {url}"))?;
        let host = rest.split('/').next().unwrap_or_default();
        let stream = TcpStream::connect(host).map_err(|e| format!("connect {host}: {e}"))?;
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .map_err(|e| e.to_string())?;
        let (ws, _) =
            tungstenite::client(url, stream).map_err(|e| format!("websocket handshake: {e}"))?;
        Ok(Cdp {
            ws,
            next: 0,
            events: Vec::new(),
            errors: Vec::new(),
        })
    }

    /// Sends `method` and waits for its result; events read meanwhile are kept in `events`.
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next += 1;
        let id = self.next;
        let msg = json!({ "id": id, "method": method, "params": params });
        self.ws
            .send(Message::text(msg.to_string()))
            .map_err(|e| format!("{method}: send: {e}"))?;
        loop {
            let msg = self.ws.read().map_err(|e| format!("{method}: read: {e}"))?;
            let text = match msg {
                Message::Text(t) => t.to_string(),
                Message::Binary(b) => String::from_utf8_lossy(&b).into_owned(),
                Message::Close(_) => return Err(format!("{method}: connection closed")),
                _ => continue,
            };
            let v: Value =
                serde_json::from_str(&text).map_err(|e| format!("{method}: bad json: {e}"))?;
            if v.get("id").and_then(Value::as_u64) == Some(id) {
                if let Some(err) = v.get("error") {
                    return Err(format!("{method}: {err}"));
                }
                return Ok(v.get("result").cloned().unwrap_or(Value::Null));
            }
            if v.get("method").is_some() {
                if let Some(e) = page_error(&v) {
                    self.errors.push(e);
                }
                if self.events.len() > 5000 {
                    self.events.drain(..1000);
                }
                self.events.push(v);
            }
        }
    }
}

/// The text of an uncaught exception or a `console.error` call, from its CDP event; `None` for
/// any other event.
fn page_error(event: &Value) -> Option<String> {
    let params = &event["params"];
    match event["method"].as_str()? {
        "Runtime.exceptionThrown" => {
            let d = &params["exceptionDetails"];
            let what = d
                .pointer("/exception/description")
                .and_then(Value::as_str)
                .or_else(|| d["text"].as_str())
                .unwrap_or_default();
            let url = d["url"].as_str().unwrap_or_default();
            Some(format!(
                "uncaught exception at {url}:{}: {what}",
                d["lineNumber"]
            ))
        }
        "Runtime.consoleAPICalled" if params["type"] == "error" => {
            let args: Vec<String> = params["args"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|a| match a.get("value") {
                    Some(Value::String(s)) => s.clone(),
                    Some(v) => v.to_string(),
                    None => a["description"].as_str().unwrap_or_default().to_string(),
                })
                .collect();
            Some(format!("console.error: {}", args.join(" ")))
        }
        _ => None,
    }
}

/* -------------------------------------------------------------- browser */

/// A running headless Chromium.
pub struct Browser {
    child: Mutex<Child>,
    ws_base: String,
    conn: Mutex<Cdp>,
    _profile: tempfile::TempDir,
}

static SHARED: Mutex<Weak<Browser>> = Mutex::new(Weak::new());

/// The shared browser, started if no test holds one.
pub fn browser(exe: &Path) -> Arc<Browser> {
    let mut g = lock(&SHARED);
    if let Some(b) = g.upgrade() {
        return b;
    }
    let b = Arc::new(Browser::launch(exe).unwrap_or_else(|e| panic!("cannot start Chromium: {e}")));
    *g = Arc::downgrade(&b);
    b
}

impl Browser {
    fn launch(exe: &Path) -> Result<Browser, String> {
        let profile = tempfile::Builder::new()
            .prefix("nb-chromium-")
            .tempdir()
            .map_err(|e| e.to_string())?;
        let mut child = Command::new(exe)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--disable-dev-shm-usage",
                "--hide-scrollbars",
                "--mute-audio",
                "--force-device-scale-factor=1",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("spawn {}: {e}", exe.display()))?;
        let stderr = child.stderr.take().ok_or("no stderr")?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            let mut early = String::new();
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(t) = tx.as_ref() {
                    if let Some(at) = line.find("ws://") {
                        let _ = t.send(Ok(line[at..].trim().to_string()));
                        tx = None;
                    } else if early.len() < 4000 {
                        early.push_str(&line);
                        early.push('\n');
                    }
                }
                // Keep draining so Chromium never blocks on a full pipe.
            }
            if let Some(t) = tx {
                let _ = t.send(Err(early));
            }
        });
        let ws = match rx.recv_timeout(Duration::from_secs(40)) {
            Ok(Ok(ws)) => ws,
            other => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("no DevTools endpoint on stderr: {other:?}"));
            }
        };
        let ws_base = ws
            .find("/devtools/")
            .map(|i| ws[..i].to_string())
            .ok_or_else(|| format!("odd DevTools url {ws}"))?;
        let conn = match Cdp::connect(&ws) {
            Ok(c) => c,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(e);
            }
        };
        Ok(Browser {
            child: Mutex::new(child),
            ws_base,
            conn: Mutex::new(conn),
            _profile: profile,
        })
    }

    fn call(&self, method: &str, params: Value) -> Result<Value, String> {
        lock(&self.conn).call(method, params)
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = lock(&self.conn).call("Browser.close", json!({}));
        let mut child = lock(&self.child);
        let deadline = Instant::now() + Duration::from_secs(3);
        loop {
            match child.try_wait() {
                Ok(Some(_)) => return,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(50))
                }
                _ => break,
            }
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

/* ----------------------------------------------------------------- page */

/// A page (target) in a fresh browser context.
pub struct Page {
    browser: Arc<Browser>,
    cdp: Cdp,
    target: String,
    context: String,
    pub width: u32,
    pub height: u32,
    /// Substrings of the page errors a test provokes on purpose (`expect_error`).
    expected_errors: Vec<String>,
}

impl Page {
    /// A blank page with a `width`×`height` viewport.
    pub fn new(exe: &Path, width: u32, height: u32) -> Page {
        let browser = browser(exe);
        let ctx = browser
            .call("Target.createBrowserContext", json!({}))
            .expect("createBrowserContext");
        let context = ctx["browserContextId"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let t = browser
            .call(
                "Target.createTarget",
                json!({ "url": "about:blank", "browserContextId": context }),
            )
            .expect("createTarget");
        let target = t["targetId"].as_str().unwrap_or_default().to_string();
        let cdp = Cdp::connect(&format!("{}/devtools/page/{target}", browser.ws_base))
            .expect("connect to the page target");
        let mut page = Page {
            browser,
            cdp,
            target,
            context,
            width,
            height,
            expected_errors: Vec::new(),
        };
        for m in ["Page.enable", "Runtime.enable", "Network.enable"] {
            page.cdp.call(m, json!({})).expect(m);
        }
        page.set_viewport(width, height);
        page
    }

    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.cdp
            .call(method, params)
            .unwrap_or_else(|e| panic!("CDP {e}"))
    }

    pub fn set_viewport(&mut self, width: u32, height: u32) {
        self.width = width;
        self.height = height;
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": false }),
        );
    }

    /// From the next document on, counts in `window.__nbResponsesHandled` every response
    /// whose body the page's scripts read (`Response.text()`) and every `fetch` that failed,
    /// one task after it settled: by then whatever the page does with the answer in its
    /// promise callbacks has run. (The page's code is left as it is; this only observes.)
    pub fn count_handled_responses(&mut self) {
        let source = r#"(() => {
  window.__nbResponsesHandled = 0;
  const handled = () => setTimeout(() => { window.__nbResponsesHandled += 1; }, 0);
  const text = Response.prototype.text;
  Response.prototype.text = function () {
    return text.call(this).then((v) => { handled(); return v; }, (e) => { handled(); throw e; });
  };
  const fetch = window.fetch;
  window.fetch = function (...args) {
    return fetch.apply(this, args).catch((e) => { handled(); throw e; });
  };
})();"#;
        self.call(
            "Page.addScriptToEvaluateOnNewDocument",
            json!({ "source": source }),
        );
    }

    /// Waits until no CSS transition or animation of the document is running (after a change
    /// of theme or media that starts some).
    pub fn wait_animations_done(&mut self) {
        self.wait_for(
            "document.getAnimations().every(a => a.playState !== 'running')",
            Duration::from_secs(10),
        );
    }

    /// Navigates and waits for the `load` event of the new document.
    pub fn goto(&mut self, url: &str) {
        self.eval("window.__nbOldDocument = true");
        self.call("Page.navigate", json!({ "url": url }));
        self.wait_for(
            // book-example draws its diagrams with a vendored mermaid, which marks the page
            // `data-mermaid="drawn"` when done: the layout is final only then.
            "!window.__nbOldDocument && document.readyState === 'complete' && (!document.querySelector('pre.mermaid') || typeof mermaid === 'undefined' || document.documentElement.dataset.mermaid === 'drawn')",
            Duration::from_secs(20),
        );
        // Two frames: let load handlers (deep links, repaints) run. A live reload that lands
        // now (a rebuild the test's last write set off) navigates again: wait for that
        // document instead (three times at most).
        for _ in 0..3 {
            match self
                .try_eval("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
            {
                Ok(_) => return,
                Err(e) if e.contains("navigated or closed") => self.wait_for(
                    "document.readyState === 'complete'",
                    Duration::from_secs(20),
                ),
                Err(e) => panic!("evaluation failed after navigating to {url}: {e}"),
            }
        }
        panic!("{url} kept reloading while it loaded");
    }

    /// Reloads the current document.
    pub fn reload(&mut self) {
        let url = self
            .eval("location.href")
            .as_str()
            .unwrap_or_default()
            .to_string();
        self.goto(&url);
    }

    /// Evaluates `expr` (promises awaited) and returns its JSON value; panics on exceptions.
    pub fn eval(&mut self, expr: &str) -> Value {
        match self.try_eval(expr) {
            Ok(v) => v,
            Err(e) => panic!("evaluation failed: {e}\n--- expression:\n{expr}"),
        }
    }

    pub fn try_eval(&mut self, expr: &str) -> Result<Value, String> {
        let r = self.cdp.call(
            "Runtime.evaluate",
            json!({ "expression": expr, "awaitPromise": true, "returnByValue": true, "userGesture": true }),
        )?;
        if let Some(ex) = r.get("exceptionDetails") {
            let desc = ex
                .pointer("/exception/description")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| ex.to_string());
            return Err(desc);
        }
        Ok(r.pointer("/result/value").cloned().unwrap_or(Value::Null))
    }

    pub fn eval_str(&mut self, expr: &str) -> String {
        match self.eval(expr) {
            Value::String(s) => s,
            Value::Null => String::new(),
            v => v.to_string(),
        }
    }
    pub fn eval_bool(&mut self, expr: &str) -> bool {
        self.eval(expr).as_bool().unwrap_or(false)
    }
    pub fn eval_i64(&mut self, expr: &str) -> i64 {
        let v = self.eval(expr);
        v.as_i64()
            .or_else(|| v.as_f64().map(|f| f as i64))
            .unwrap_or_else(|| panic!("not a number: {v} from {expr}"))
    }

    /// Polls `expr` until it is truthy.
    pub fn wait_for(&mut self, expr: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        let probe = format!("!!({expr})");
        loop {
            if let Ok(Value::Bool(true)) = self.try_eval(&probe) {
                return;
            }
            if Instant::now() > deadline {
                panic!("timed out waiting for: {expr}");
            }
            std::thread::sleep(Duration::from_millis(40));
        }
    }

    /// Scrolls the first element matching `selector` into view and returns the centre of its
    /// first client rect (viewport coordinates).
    pub fn center_of(&mut self, selector: &str) -> (f64, f64) {
        let sel = serde_json::to_string(selector).unwrap();
        let v = self.eval(&format!(
            "(() => {{ const el = document.querySelector({sel}); if (!el) return null;
               el.scrollIntoView({{block: 'center'}});
               const r = el.getClientRects()[0] || el.getBoundingClientRect();
               return [r.left + r.width / 2, r.top + r.height / 2]; }})()"
        ));
        let a = v
            .as_array()
            .unwrap_or_else(|| panic!("no element for {selector}"));
        (a[0].as_f64().unwrap(), a[1].as_f64().unwrap())
    }

    /// A real mouse click (pointer events, then click) at viewport coordinates.
    pub fn click_at(&mut self, x: f64, y: f64) {
        self.call(
            "Input.dispatchMouseEvent",
            json!({ "type": "mouseMoved", "x": x, "y": y }),
        );
        for ty in ["mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({ "type": ty, "x": x, "y": y, "button": "left", "buttons": 1, "clickCount": 1 }),
            );
        }
    }

    /// Clicks the centre of the first element matching `selector`, once that point shows the
    /// element (a page still scrolling or laying out after a reload would take the click
    /// elsewhere).
    pub fn click(&mut self, selector: &str) {
        let sel = serde_json::to_string(selector).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            let (x, y) = self.center_of(selector);
            let hit = self.eval_bool(&format!(
                "(() => {{ const el = document.querySelector({sel}); const at = document.elementFromPoint({x}, {y});
                   return !!el && !!at && (el === at || el.contains(at)); }})()"
            ));
            if hit || std::time::Instant::now() >= deadline {
                self.click_at(x, y);
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }

    /// A key press: "Escape", "Enter", "Tab", " ".
    pub fn key(&mut self, key: &str) {
        let (code, vk, text) = match key {
            "Escape" => ("Escape", 27, ""),
            "Enter" => ("Enter", 13, "\r"),
            "Tab" => ("Tab", 9, ""),
            " " => ("Space", 32, " "),
            other => (other, 0, other),
        };
        let mut down =
            json!({ "type": "keyDown", "key": key, "code": code, "windowsVirtualKeyCode": vk });
        if !text.is_empty() {
            down["text"] = json!(text);
        }
        self.call("Input.dispatchKeyEvent", down);
        self.call(
            "Input.dispatchKeyEvent",
            json!({ "type": "keyUp", "key": key, "code": code, "windowsVirtualKeyCode": vk }),
        );
    }

    /// Writes a PNG of the viewport to `target/browser-screenshots/<name>.png`.
    pub fn screenshot(&mut self, name: &str) -> PathBuf {
        let r = self.call("Page.captureScreenshot", json!({ "format": "png" }));
        let data = r["data"].as_str().expect("screenshot data");
        let bytes = base64_decode(data);
        let dir = screenshot_dir();
        std::fs::create_dir_all(&dir).expect("screenshot dir");
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, bytes).expect("write screenshot");
        eprintln!("screenshot: {}", path.display());
        path
    }

    /// URLs of every request the page made since it was opened.
    pub fn requests(&mut self) -> Vec<String> {
        self.eval("0"); // flush pending events
        self.cdp
            .events
            .iter()
            .filter(|e| e["method"] == "Network.requestWillBeSent")
            .filter_map(|e| e.pointer("/params/request/url").and_then(Value::as_str))
            .map(str::to_string)
            .collect()
    }

    /// Tells the page that errors containing `needle` (an uncaught exception or a
    /// `console.error`) are provoked on purpose: they do not fail the test.
    pub fn expect_error(&mut self, needle: &str) {
        self.expected_errors.push(needle.to_string());
    }

    /// The page errors so far (uncaught exceptions, `console.error`) that no `expect_error`
    /// names.
    pub fn unexpected_errors(&mut self) -> Vec<String> {
        let _ = self.try_eval("0"); // flush pending events
        self.cdp
            .errors
            .iter()
            .filter(|e| !self.expected_errors.iter().any(|n| e.contains(n.as_str())))
            .cloned()
            .collect()
    }

    /// Fails on any page error so far that no `expect_error` names. Every `Page` does this
    /// when it is dropped (unless its test is already failing), so no test passes on a page
    /// that threw or logged an error.
    pub fn assert_no_errors(&mut self) {
        let errors = self.unexpected_errors();
        assert!(
            errors.is_empty(),
            "the page reported {} error(s):\n{}",
            errors.len(),
            errors.join("\n")
        );
    }

    /// Uncaught exceptions reported since the page was opened.
    pub fn exceptions(&mut self) -> Vec<String> {
        self.eval("0");
        self.cdp
            .events
            .iter()
            .filter(|e| e["method"] == "Runtime.exceptionThrown")
            .map(|e| {
                e.pointer("/params/exceptionDetails/exception/description")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| e["params"]["exceptionDetails"].to_string())
            })
            .collect()
    }

    /// Asserts that nothing but local files was requested, and that no script threw.
    pub fn assert_offline_and_clean(&mut self) {
        let remote: Vec<String> = self
            .requests()
            .into_iter()
            .filter(|u| {
                !(u.starts_with("file:")
                    || u.starts_with("data:")
                    || u.starts_with("about:")
                    || u.starts_with("blob:"))
            })
            .collect();
        assert!(remote.is_empty(), "network requests made: {remote:?}");
        let ex = self.exceptions();
        assert!(ex.is_empty(), "uncaught exceptions: {ex:#?}");
    }
}

impl Drop for Page {
    fn drop(&mut self) {
        let errors = if std::thread::panicking() {
            Vec::new()
        } else {
            self.unexpected_errors()
        };
        let _ = self
            .browser
            .call("Target.closeTarget", json!({ "targetId": self.target }));
        let _ = self.browser.call(
            "Target.disposeBrowserContext",
            json!({ "browserContextId": self.context }),
        );
        assert!(
            errors.is_empty(),
            "the page reported {} error(s) (uncaught exceptions, console.error):\n{}",
            errors.len(),
            errors.join("\n")
        );
    }
}

/// A `file://` URL for a path.
pub fn file_url(path: &Path) -> String {
    let mut s = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                s.push(b as char)
            }
            _ => s.push_str(&format!("%{b:02X}")),
        }
    }
    s
}

pub fn base64_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes() {
        let Some(v) = val(c) else { continue };
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

/* ----------------------------------------------------------------- site */

/// The built example book.
pub struct Site {
    /// Git root holding `book-example/`.
    pub repo: PathBuf,
    /// `--dest-dir` of the build.
    pub out: PathBuf,
}

impl Site {
    /// The `file://` URL of a page of the build (`rel` may carry a query or fragment).
    pub fn url(&self, rel: &str) -> String {
        self.url_in(&self.out, rel)
    }

    /// The same page in the build whose data islands and views are all deflated
    /// (`compress-above = 0`).
    pub fn deflated_url(&self, rel: &str) -> String {
        self.url_in(&self.out.with_file_name("out-deflated"), rel)
    }

    /// The same page in the build with `print-comments = true`.
    pub fn print_url(&self, rel: &str) -> String {
        self.url_in(&self.out.with_file_name("out-print"), rel)
    }

    /// The same page in the build with `public = true`.
    pub fn public_url(&self, rel: &str) -> String {
        self.url_in(&self.out.with_file_name("out-public"), rel)
    }

    fn url_in(&self, out: &Path, rel: &str) -> String {
        let (path, query) = match rel.find(['?', '#']) {
            Some(i) => (&rel[..i], &rel[i..]),
            None => (rel, ""),
        };
        format!("{}{query}", file_url(&out.join(path)))
    }
}

static SITE: OnceLock<Site> = OnceLock::new();

/// `book-example` plus the test comments, built once per test process.
pub fn site() -> &'static Site {
    SITE.get_or_init(build_site)
}

/// Extra comments the tests rely on (all on the configuration chapter).
pub const XSS_IMG: &str = r#"<img src=x onerror="window.__pwned=1">"#;
pub const XSS_SCRIPT: &str = "</script><script>window.__pwned=2</script>";

fn extra_comments() -> Vec<Value> {
    let page = "book-example/src/guide/configuration";
    let c =
        |id: &str, scope: &str, anchor: Value, thread: Value, status: &str, resolution: Value| {
            json!({
                "id": id, "space": "book", "page": page, "scope": scope, "anchor": anchor,
                "thread": thread, "status": status, "hold": false, "resolution": resolution,
                "createdAt": "2026-11-23T10:00:00.000Z", "updatedAt": "2026-11-23T10:00:00.000Z"
            })
        };
    let msg = |author: &str, body: &str| json!([{ "author": author, "body": body, "ts": "2026-11-23T10:00:00.000Z" }]);
    vec![
        // Orphan: the quote is nowhere in the chapter.
        c(
            "c_orphan00001",
            "selection",
            json!({ "quote": "a sentence that was never written here", "prefix": "", "suffix": "", "section": "Uploading" }),
            msg(
                "Alex Martin <alex@example.com>",
                "Where did this sentence go?",
            ),
            "open",
            Value::Null,
        ),
        // A quote inside the TOML code block.
        c(
            "c_code0000001",
            "selection",
            json!({ "quote": "max_attempts = 8", "prefix": "", "suffix": "", "section": "A minimal example" }),
            msg(
                "Camille Roux <camille@example.com>",
                "Eight attempts feels like a lot for a cellular link.",
            ),
            "open",
            Value::Null,
        ),
        // Resolved: listed under the "resolved" filter, never painted.
        c(
            "c_resolved001",
            "selection",
            json!({ "quote": "Coordinates are decimal degrees in WGS 84", "prefix": "", "suffix": "", "section": "The station section" }),
            msg("Alex Martin <alex@example.com>", "Say which datum."),
            "resolved",
            json!({ "note": "The datum is named." }),
        ),
        // XSS payloads in a page comment (author and body) …
        c(
            "c_xsspage0001",
            "page",
            Value::Null,
            msg(
                &format!("{XSS_IMG} <evil@example.com>"),
                &format!("{XSS_IMG}\n{XSS_SCRIPT}"),
            ),
            "open",
            Value::Null,
        ),
        // … and in a quote (an orphan: shown with its stored quote).
        c(
            "c_xssquote001",
            "selection",
            json!({ "quote": format!("{XSS_IMG}{XSS_SCRIPT}"), "prefix": "", "suffix": "", "section": null }),
            msg(XSS_SCRIPT, &format!("{XSS_SCRIPT}{XSS_IMG}")),
            "open",
            Value::Null,
        ),
    ]
}

/// The agent's edits of book-example that its journal records: per chapter, the text each
/// added (taken out for the commit the working tree is compared with).
pub const BEFORE_EDITS: &[(&str, &[&str])] = &[
    (
        "src/guide/configuration.md",
        &[
            " Set `compress = false` if your collector cannot accept gzip request bodies.",
            "| `compress` | `true` | Gzip each batch before sending it |\n",
        ],
    ),
    (
        "src/guide/sensors.md",
        &[" In other words, the stored value is always `raw * calibration + offset`."],
    ),
];

fn build_site() -> Site {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    // Sites of earlier runs (one directory per process) are removed after an hour.
    if let Ok(rd) = std::fs::read_dir(&tmp) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let old = e
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > Duration::from_secs(3600));
            if (name.starts_with("browser-site-") || name.starts_with("browser-fixtures-")) && old {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    let root = tmp.join(format!("browser-site-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let repo_dir = root.join("repo");
    let book = repo_dir.join("book-example");
    copy_book(&book_example(), &book);
    install(&book);

    let store = book.join(".notabene/book-example/src/guide/configuration");
    std::fs::create_dir_all(&store).unwrap();
    for c in extra_comments() {
        let id = c["id"].as_str().unwrap().to_string();
        std::fs::write(
            store.join(format!("{id}.json")),
            format!("{}\n", serde_json::to_string_pretty(&c).unwrap()),
        )
        .unwrap();
    }
    // Journal changes without `ref` are diffed against the working tree: drop the refs, commit,
    // then edit a chapter so that the review page has a real diff to show.
    let journal_path = book.join(".notabene/journal.json");
    if let Ok(text) = std::fs::read_to_string(&journal_path)
        && let Ok(mut journal) = serde_json::from_str::<Value>(&text)
    {
        for e in journal.as_array_mut().into_iter().flatten() {
            for ch in e["changes"].as_array_mut().into_iter().flatten() {
                if let Some(o) = ch.as_object_mut() {
                    o.remove("ref");
                }
            }
        }
        std::fs::write(
            &journal_path,
            format!("{}\n", serde_json::to_string_pretty(&journal).unwrap()),
        )
        .unwrap();
    }
    // HEAD holds the chapters as they were before the agent's edits the journal records (the
    // book's own history, replayed), the working tree the edits.
    let edited: Vec<(PathBuf, String)> = BEFORE_EDITS
        .iter()
        .map(|(file, _)| {
            let path = book.join(file);
            let text = std::fs::read_to_string(&path).unwrap();
            (path, text)
        })
        .collect();
    for ((path, text), (file, added)) in edited.iter().zip(BEFORE_EDITS) {
        let mut before = text.clone();
        for a in *added {
            assert!(before.contains(a), "{file} holds {a:?}");
            before = before.replacen(a, "", 1);
        }
        std::fs::write(path, before).unwrap();
    }
    git_commit_all(&repo_dir, "book");
    for (path, text) in &edited {
        std::fs::write(path, text).unwrap();
    }
    let chapter = book.join("src/guide/configuration.md");
    let mut md = std::fs::read_to_string(&chapter).unwrap();
    md.push_str("\nRestart the daemon after editing the file: Skylark reads it only at startup.\n");
    std::fs::write(&chapter, md).unwrap();

    let out = root.join("out");
    build(&book, Some(&out), &[]);
    // The same book with every data island and view deflated, as a big book's are.
    build(
        &book,
        Some(&root.join("out-deflated")),
        &[("MDBOOK_PREPROCESSOR__NOTABENE__COMPRESS_ABOVE", "0")],
    );
    // The same book printed with its comments.
    build(
        &book,
        Some(&root.join("out-print")),
        &[("MDBOOK_PREPROCESSOR__NOTABENE__PRINT_COMMENTS", "true")],
    );
    // The same book published with `public = true`.
    build(
        &book,
        Some(&root.join("out-public")),
        &[("MDBOOK_PREPROCESSOR__NOTABENE__PUBLIC", "true")],
    );
    Site {
        repo: repo_dir,
        out,
    }
}

/// A fixture page of `tests/fixtures/browser/`, copied (once per process) into a directory
/// beside the assembled client (`theme/notabene.js`, `theme/notabene.css`) it loads.
pub fn fixture_url(name: &str) -> String {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("browser-fixtures-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("theme")).unwrap();
        for e in std::fs::read_dir(fixture("browser")).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
        }
        use mdbook_notabene::output::assets;
        std::fs::write(dir.join("theme/notabene.js"), assets::JS).unwrap();
        std::fs::write(dir.join("theme/notabene.css"), assets::CSS).unwrap();
        dir
    });
    file_url(&dir.join(name))
}
