//! A `mdbook-notabene serve` process on a copy of book-example, and a tiny HTTP/1.1 client
//! over `TcpStream` to talk to it (no HTTP client dependency).
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running server; killed on drop.
pub struct Server {
    child: Child,
    /// Its port.
    pub port: u16,
    /// The book root.
    pub book: PathBuf,
    /// The token in the URL it printed (`--host` without `NOTABENE_TOKEN`).
    pub url_token: Option<String>,
    _tmp: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            if e.file_name() == "book" {
                continue;
            }
            copy_dir(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
}

impl Server {
    /// Copies book-example into `<tmp>/book-example` (a git repository at `<tmp>`, so page
    /// ids are `book-example/src/…`), applies `prepare`, and starts `serve` on a free port.
    pub fn start(env: &[(&str, &str)], prepare: impl FnOnce(&Path)) -> Server {
        Server::start_with(&[], env, prepare)
    }

    /// [`Server::start`] with more arguments to `serve` (`--host`).
    pub fn start_with(args: &[&str], env: &[(&str, &str)], prepare: impl FnOnce(&Path)) -> Server {
        let tmp = tempfile::tempdir().unwrap();
        let book = tmp.path().join("book-example");
        copy_dir(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("book-example"),
            &book,
        );
        for args in [
            &["init", "-q"][..],
            &["add", "-A"],
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "book",
            ],
        ] {
            let ok = Command::new("git")
                .args(args)
                .current_dir(tmp.path())
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .status()
                .unwrap();
            assert!(ok.success());
        }
        prepare(&book);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mdbook-notabene"));
        cmd.args(["serve", book.to_str().unwrap(), "--port", "0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .env("NOTABENE_AUTHOR", "Sam Server")
            .env("NOTABENE_AUTHOR_EMAIL", "sam@example.com")
            .env_remove("NOTABENE_TOKEN")
            .env_remove("NOTABENE_STORE");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        // `notabene: serving … at http://127.0.0.1:PORT/[?nb-token=TOKEN]`
        let url = line.trim().rsplit(' ').next().unwrap_or("");
        let port: u16 = url
            .strip_prefix("http://127.0.0.1:")
            .and_then(|rest| rest.split('/').next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        let url_token = url.split_once("?nb-token=").map(|(_, t)| t.to_string());
        Server {
            child,
            port,
            book,
            url_token,
            _tmp: tmp,
        }
    }

    /// `serve` on the book at `dir` as it is (no copy; for the benchmarks' own books).
    pub fn start_dir(dir: &Path) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mdbook-notabene"))
            .args(["serve", dir.to_str().unwrap(), "--port", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .env_remove("NOTABENE_TOKEN")
            .env_remove("NOTABENE_STORE")
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port: u16 = line
            .trim()
            .rsplit(' ')
            .next()
            .and_then(|u| u.strip_prefix("http://127.0.0.1:"))
            .and_then(|rest| rest.split('/').next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        Server {
            child,
            port,
            book: dir.to_path_buf(),
            url_token: None,
            _tmp: tempfile::tempdir().unwrap(),
        }
    }

    /// The server's process id.
    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Sends `signal` to the server and waits (up to 30 s) for it to exit; how it exited.
    pub fn signal_and_wait(&mut self, signal: i32) -> std::process::ExitStatus {
        // SAFETY: kill has no memory effects; the pid is our own child, not yet reaped.
        assert_eq!(unsafe { libc::kill(self.pid(), signal) }, 0, "kill");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "no exit 30 s after signal {signal}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The store directory.
    pub fn store(&self) -> PathBuf {
        self.book.join(".notabene")
    }

    /// Sends a request; `headers` may override `Host`.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> (u16, String) {
        request(self.port, method, path, headers, body)
    }

    /// Sends a JSON request from a same-origin page.
    pub fn json(
        &self,
        method: &str,
        path: &str,
        body: &serde_json::Value,
    ) -> (u16, serde_json::Value) {
        let (code, text) = self.request(
            method,
            path,
            &[("Content-Type", "application/json")],
            body.to_string().as_bytes(),
        );
        (
            code,
            serde_json::from_str(&text).unwrap_or(serde_json::Value::Null),
        )
    }

    /// The build generation reported by the server.
    pub fn generation(&self) -> u64 {
        let (_, v) = self.json("GET", "/__notabene/api/status", &serde_json::Value::Null);
        v["generation"].as_u64().unwrap()
    }

    /// Waits (up to 20 s) until a full rebuild has published a generation past
    /// `generation` (an island patch moves the generation, not `built`); returns it.
    pub fn wait_rebuild(&self, generation: u64) -> u64 {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let (_, v) = self.json("GET", "/__notabene/api/status", &serde_json::Value::Null);
            let g = v["built"].as_u64().unwrap();
            if g > generation {
                return v["generation"].as_u64().unwrap().max(g);
            }
            assert!(
                Instant::now() < deadline,
                "no rebuild after generation {generation}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// One HTTP/1.1 request with `Connection: close`; returns status and body. A `Host` in
/// `headers` replaces the default (`127.0.0.1:PORT`); an empty one sends none.
pub fn request(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, String) {
    request_to("127.0.0.1", port, method, path, headers, body)
}

/// [`request`] to `ip` (`127.0.0.1` or `::1`).
pub fn request_to(
    ip: &str,
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, String) {
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (k, v) in headers {
        if !(k.eq_ignore_ascii_case("host") && v.is_empty()) {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body);
    raw_request(ip, port, &bytes)
}

/// Sends `bytes` as they are and reads the answer to the end: (status, body; a chunked body
/// is de-chunked). Status 0: no answer.
pub fn raw_request(ip: &str, port: u16, bytes: &[u8]) -> (u16, String) {
    let mut s = TcpStream::connect((ip, port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let _ = s.write_all(bytes);
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, rest) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let chunked = head.lines().any(|l| {
        l.to_ascii_lowercase()
            .starts_with("transfer-encoding: chunked")
    });
    let text = if chunked {
        let mut out = String::new();
        let mut r = rest;
        while let Some((size, after)) = r.split_once("\r\n") {
            let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            if n == 0 {
                break;
            }
            out.push_str(&after[..n.min(after.len())]);
            r = after.get(n + 2..).unwrap_or("");
        }
        format!("{head}\r\n\r\n{out}")
    } else {
        text.clone()
    };
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

/// What a load run did.
pub struct LoadReport {
    /// Latency of every API write, in microseconds.
    pub latencies_us: Vec<u64>,
    /// The same, for POSTs (new comments) and PATCHes apart.
    pub post_us: Vec<u64>,
    /// PATCH latencies.
    pub patch_us: Vec<u64>,
    /// Bodies of created comments.
    pub created: Vec<String>,
    /// Bodies of replies.
    pub replies: Vec<String>,
    /// CLI processes run concurrently, and how many exited 0.
    pub cli_runs: (usize, usize),
}

/// `clients` concurrent clients × `ops` mixed API writes, plus two threads running CLI
/// `comments done`/`reopen` on other comments at the same time.
pub fn load(server: &Server, clients: usize, ops: usize) -> LoadReport {
    use serde_json::json;
    let api = "/__notabene/api/comments";
    let page = "book-example/src/guide/sensors";
    let shared = ["c_mwp2po2nk5ji"];
    let port = server.port;
    let book = server.book.clone();
    let cli = std::thread::spawn(move || {
        let mut runs = (0, 0);
        for i in 0..20 {
            let id = if i % 2 == 0 {
                "c_mworge1zx4rb"
            } else {
                "c_mwrmz21ih8pc"
            };
            let args: Vec<String> = if i % 4 < 2 {
                vec![
                    "comments".into(),
                    "done".into(),
                    id.into(),
                    "--force".into(),
                    "--note".into(),
                    format!("cli-{i}"),
                ]
            } else {
                vec!["comments".into(), "reopen".into(), id.into()]
            };
            let out = Command::new(env!("CARGO_BIN_EXE_notabene"))
                .arg("--book")
                .arg(&book)
                .args(&args)
                .output()
                .unwrap();
            runs.0 += 1;
            runs.1 += usize::from(out.status.success());
        }
        runs
    });
    let handles: Vec<_> = (0..clients)
        .map(|k| {
            std::thread::spawn(move || {
                let mut lat = Vec::new();
                let mut created = Vec::new();
                let mut replies = Vec::new();
                let mut own: Option<String> = None;
                for j in 0..ops {
                    let (method, body) = match j % 5 {
                        0 => {
                            let b = format!("c{k}-{j}");
                            created.push(b.clone());
                            ("POST", json!({ "page": page, "space": "book", "scope": "page", "body": b }))
                        }
                        1 => {
                            let b = format!("r{k}-{j}");
                            replies.push(b.clone());
                            ("PATCH", json!({ "page": page, "id": shared[0], "reply": { "body": b } }))
                        }
                        2 if own.is_some() => {
                            let b = format!("o{k}-{j}");
                            replies.push(b.clone());
                            ("PATCH", json!({ "page": page, "id": own.clone().unwrap(), "reply": { "body": b } }))
                        }
                        3 => ("PATCH", json!({ "page": page, "id": shared[0], "hold": j % 2 == 0 })),
                        _ => {
                            let b = format!("s{k}-{j}");
                            created.push(b.clone());
                            ("POST", json!({ "page": page, "space": "book", "scope": "selection", "body": b,
                                "anchor": { "quote": "Cheap sensors drift", "prefix": "", "suffix": ", and even good ones", "section": "Calibration" } }))
                        }
                    };
                    let t = Instant::now();
                    let (code, text) = request(port, method, api, &[("Content-Type", "application/json")], body.to_string().as_bytes());
                    lat.push((method == "POST", t.elapsed().as_micros() as u64));
                    assert!(code == 200 || code == 201, "{method} {body} → {code} {text}");
                    if code == 201 && j % 5 == 0 {
                        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
                        own = v["id"].as_str().map(str::to_string);
                    }
                }
                (lat, created, replies)
            })
        })
        .collect();
    let mut report = LoadReport {
        latencies_us: Vec::new(),
        post_us: Vec::new(),
        patch_us: Vec::new(),
        created: Vec::new(),
        replies: Vec::new(),
        cli_runs: (0, 0),
    };
    for h in handles {
        let (l, c, r) = h.join().unwrap();
        for (post, us) in l {
            report.latencies_us.push(us);
            if post {
                report.post_us.push(us);
            } else {
                report.patch_us.push(us);
            }
        }
        report.created.extend(c);
        report.replies.extend(r);
    }
    report.cli_runs = cli.join().unwrap();
    report
}

/// The `q`-quantile of `v` (sorted in place).
pub fn quantile(v: &mut [u64], q: f64) -> u64 {
    v.sort_unstable();
    v[((v.len() as f64 - 1.0) * q).round() as usize]
}
