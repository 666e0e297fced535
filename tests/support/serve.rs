//! `mdbook-notabene serve` processes (on a copy of book-example, or on a book as it is) and a
//! tiny HTTP/1.1 client over `TcpStream` to talk to them (no HTTP client dependency), with
//! the waits on what the server publishes (its build generation), and the load the load test
//! and its bench put on it.

use super::common::{self, copy_book, git_commit_all};
use super::wait;
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
    _tmp: Option<tempfile::TempDir>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The author a server writes new comments as (unless a request names one).
const AUTHOR: [(&str, &str); 2] = [
    ("NOTABENE_AUTHOR", "Sam Server"),
    ("NOTABENE_AUTHOR_EMAIL", "sam@example.com"),
];

impl Server {
    /// Copies book-example into `<tmp>/book-example` (a git repository at `<tmp>`, so page
    /// ids are `book-example/src/…`), applies `prepare`, and starts `serve` on a free port.
    pub fn start(env: &[(&str, &str)], prepare: impl FnOnce(&Path)) -> Server {
        Server::start_with(&[], env, prepare)
    }

    /// [`Server::start`] with more arguments to `serve` (`--host`).
    pub fn start_with(args: &[&str], env: &[(&str, &str)], prepare: impl FnOnce(&Path)) -> Server {
        let tmp = common::tempdir();
        let book = tmp.path().join("book-example");
        copy_book(&common::book_example(), &book);
        git_commit_all(tmp.path(), "book");
        prepare(&book);
        let mut server = Server::spawn(&book, args, &[&AUTHOR[..], env].concat());
        server._tmp = Some(tmp);
        server
    }

    /// [`Server::start`], its stderr written to `log` (what it says, read after a wait).
    pub fn start_logging(log: &Path, prepare: impl FnOnce(&Path)) -> Server {
        let tmp = common::tempdir();
        let book = tmp.path().join("book-example");
        copy_book(&common::book_example(), &book);
        git_commit_all(tmp.path(), "book");
        prepare(&book);
        let stderr = std::fs::File::create(log).expect("create the server's log");
        let mut server = Server::spawn_to(&book, &[], &AUTHOR, stderr.into());
        server._tmp = Some(tmp);
        server
    }

    /// `serve` on the book at `dir` as it is (no copy; for the benchmarks' own books).
    pub fn start_dir(dir: &Path) -> Server {
        Server::spawn(dir, &[], &[])
    }

    /// [`Server::start_dir`] with `env` added (`NOTABENE_WATCH=poll`).
    pub fn start_dir_with(dir: &Path, env: &[(&str, &str)]) -> Server {
        Server::spawn(dir, &[], env)
    }

    /// Copies the book at `src` to `<name>` beside this server's book (the same git
    /// repository), installs the client in it and serves it with the same author.
    pub fn start_next_to(&self, src: &Path, name: &str) -> Server {
        let book = self.book.parent().expect("a book directory").join(name);
        copy_book(src, &book);
        common::install(&book);
        Server::spawn(&book, &[], &AUTHOR)
    }

    /// `mdbook-notabene serve <dir> --port 0 args…` with `env` (no inherited token or store),
    /// once it has printed the URL it serves at.
    fn spawn(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Server {
        Server::spawn_to(dir, args, env, Stdio::null())
    }

    /// [`Server::spawn`] with its stderr sent to `stderr`.
    fn spawn_to(dir: &Path, args: &[&str], env: &[(&str, &str)], stderr: Stdio) -> Server {
        let mut child = Command::new(common::plugin_bin())
            .args(["serve", dir.to_str().unwrap(), "--port", "0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .env_remove("NOTABENE_TOKEN")
            .env_remove("NOTABENE_STORE")
            .envs(env.iter().copied())
            .spawn()
            .expect("spawn mdbook-notabene serve");
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
            book: dir.to_path_buf(),
            url_token,
            _tmp: None,
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
        wait::until_every(
            Duration::from_secs(30),
            Duration::from_millis(20),
            &format!("the server's exit after signal {signal}"),
            || self.child.try_wait().unwrap(),
        )
    }

    /// The store directory.
    pub fn store(&self) -> PathBuf {
        self.book.join(".notabene")
    }

    /// The entries of the store's journal.
    pub fn journal(&self) -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(self.store().join("journal.json")).unwrap();
        match serde_json::from_str(&text).unwrap() {
            serde_json::Value::Array(entries) => entries,
            other => panic!("journal.json is not an array: {other}"),
        }
    }

    /// The journal entry `id` of the store (panics when there is none).
    pub fn journal_entry(&self, id: &str) -> serde_json::Value {
        self.journal()
            .into_iter()
            .find(|e| e["id"] == id)
            .unwrap_or_else(|| panic!("journal entry {id:?}"))
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

    /// The server's `GET /__notabene/api/status` answer.
    pub fn status(&self) -> serde_json::Value {
        let (code, v) = self.json("GET", "/__notabene/api/status", &serde_json::Value::Null);
        assert_eq!(code, 200, "status: {v}");
        v
    }

    /// The build generation reported by the server.
    pub fn generation(&self) -> u64 {
        self.status()["generation"].as_u64().unwrap()
    }

    /// Waits (up to 20 s) until a full rebuild has published a generation past
    /// `generation` (an island patch moves the generation, not `built`); returns it.
    pub fn wait_rebuild(&self, generation: u64) -> u64 {
        wait::until(
            Duration::from_secs(20),
            &format!("a rebuild after generation {generation}"),
            || {
                let v = self.status();
                let g = v["built"].as_u64().unwrap();
                (g > generation).then(|| v["generation"].as_u64().unwrap().max(g))
            },
        )
    }

    /// Waits until the server has caught up with writes that were done when it reported
    /// `built` as its last full build: a full build past `built` has been published, and it is
    /// the last thing the server published (no island patch since, whose rebuild would still
    /// be due). Returns that generation.
    pub fn wait_caught_up(&self, built: u64) -> u64 {
        let mut after = built;
        loop {
            self.wait_rebuild(after);
            let v = self.status();
            let (g, b) = (
                v["generation"].as_u64().unwrap(),
                v["built"].as_u64().unwrap(),
            );
            if g == b {
                return g;
            }
            after = b;
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
    raw_request(ip, port, &request_bytes(port, method, path, headers, body))
}

/// `GET path` on `127.0.0.1:port` with `headers`, reporting what went wrong (no server yet, a
/// connection closed before a complete head) instead of panicking: (status, body).
pub fn try_get(port: u16, path: &str, headers: &[(&str, &str)]) -> std::io::Result<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    s.set_write_timeout(Some(Duration::from_secs(10)))?;
    s.write_all(&request_bytes(port, "GET", path, headers, b""))?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    if !raw.windows(4).any(|w| w == b"\r\n\r\n") {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "no end of headers",
        ));
    }
    Ok(parse_answer(&raw))
}

/// The bytes of a request: `Connection: close`, a `Content-Length`, `Host: 127.0.0.1:PORT`
/// unless `headers` has a `Host` (an empty one: none), then `headers` and `body`.
pub fn request_bytes(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Vec<u8> {
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
    bytes
}

/// Sends `bytes` as they are and reads the answer to the end: (status, body; a chunked body
/// is de-chunked). Status 0: no answer.
pub fn raw_request(ip: &str, port: u16, bytes: &[u8]) -> (u16, String) {
    let mut s = TcpStream::connect((ip, port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let _ = s.write_all(bytes);
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    parse_answer(&raw)
}

/// (status, body) of an HTTP/1.1 answer; status 0 when there is no status line, the body
/// empty when there is no end of the head, de-chunked when it is chunked.
pub fn parse_answer(raw: &[u8]) -> (u16, String) {
    let (head, body) = match raw.windows(4).position(|w| w == b"\r\n\r\n") {
        Some(i) => (&raw[..i], &raw[i + 4..]),
        None => (raw, &[][..]),
    };
    let head = String::from_utf8_lossy(head);
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let chunked = head.lines().any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_vec()
    };
    (status, String::from_utf8_lossy(&body).into_owned())
}

/// Decodes a `Transfer-Encoding: chunked` body (as much of it as is complete).
fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(eol) = body.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size_line = std::str::from_utf8(&body[..eol]).unwrap_or("0");
        let size = usize::from_str_radix(size_line.split(';').next().unwrap_or("0").trim(), 16)
            .unwrap_or(0);
        body = &body[eol + 2..];
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&body[..size.min(body.len())]);
        body = body.get(size + 2..).unwrap_or_default();
    }
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
            let out = Command::new(common::bin())
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
