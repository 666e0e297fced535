//! `serve` against a hostile page and under load, over real HTTP against the real binary:
//! `diff` (the read that runs git) is capped, deduplicated and refused to a request with no
//! `Origin` (an `<img>`), WebSockets count against the connection cap, the accept loop pauses
//! at the file-descriptor limit instead of spinning, and SIGINT / SIGTERM remove the build
//! directory. git runs are counted by a `git` on the server's `PATH` that logs each run and
//! then runs the real git.

use crate::support::common;
use crate::support::serve;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use serve::Server;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const PAGE: &str = "book-example/src/guide/sensors";

/// A directory holding a `git` that appends one line per run to `log`, then runs the real
/// git; returns the `PATH` to give the server.
fn logging_git(dir: &Path, log: &Path) -> String {
    let real = common::find_tool("git").expect("git on PATH");
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = bin.join("git");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            real.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Lines in the git log so far (git runs).
fn git_runs(log: &Path) -> usize {
    std::fs::read_to_string(log)
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// A diff of 1,000 distinct pages is a 400 naming the parameter, in under 100 ms and without
/// one git run; a page named three times is diffed once (as many git runs as naming it once).
#[test]
fn diff_of_a_thousand_pages_is_refused_before_git_runs() {
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("git.log");
    let path = logging_git(logs.path(), &log);
    let server = Server::start(&[("PATH", &path)], |_| {});
    let origin = format!("http://127.0.0.1:{}", server.port);
    let headers = [("Origin", origin.as_str())];

    let query: Vec<String> = (0..1000)
        .map(|i| format!("page=book-example/src/p{i:04}"))
        .collect();
    let url = format!("/__notabene/api/diff?{}", query.join("&"));
    let before = git_runs(&log);
    let t = Instant::now();
    let (code, text) = server.request("GET", &url, &headers, b"");
    let elapsed = t.elapsed();
    assert_eq!(
        (code, parse(&text)),
        (
            400,
            json!({ "error": "too many pages: 1000 given, at most 20 per request (page)" })
        )
    );
    assert_eq!(git_runs(&log), before, "no git ran for a refused diff");
    assert!(
        elapsed < Duration::from_millis(100),
        "answered in {elapsed:?}"
    );

    // 1,000 copies of one page are one page.
    let copies = vec![format!("page={PAGE}"); 1000].join("&");
    let before = git_runs(&log);
    let (code, text) = server.request(
        "GET",
        &format!("/__notabene/api/diff?{copies}"),
        &headers,
        b"",
    );
    let copies_runs = git_runs(&log) - before;
    let (code_one, text_one) = server.request(
        "GET",
        &format!("/__notabene/api/diff?page={PAGE}"),
        &headers,
        b"",
    );
    let one_runs = git_runs(&log) - before - copies_runs;
    assert_eq!((code, code_one), (200, 200));
    assert_eq!(parse(&text), parse(&text_one));
    assert_eq!(
        parse(&text),
        json!([{ "page": PAGE, "file": "book-example/src/guide/sensors.md", "diff": "" }])
    );
    assert!(one_runs > 0, "the logging git sees the server's git runs");
    assert_eq!(
        copies_runs, one_runs,
        "a page named 1,000 times is diffed once"
    );

    // 20 distinct pages are still answered (the cap is not an off-by-one).
    let twenty: Vec<String> = (0..19)
        .map(|i| format!("page=book-example/src/p{i:02}"))
        .chain([format!("page={PAGE}")])
        .collect();
    let (code, text) = server.request(
        "GET",
        &format!("/__notabene/api/diff?{}", twenty.join("&")),
        &headers,
        b"",
    );
    assert_eq!(code, 200, "{text}");
    assert_eq!(parse(&text).as_array().map(Vec::len), Some(20));
}

/// What an `<img src=…/api/diff?page=…>` on another site sends: no `Origin`. The diff (it
/// runs git) is refused with the rule's reason and git does not run; cheap reads and static
/// files with the same headers are answered, and the same diff with this server's Origin is.
#[test]
fn an_img_request_with_no_origin_gets_no_diff() {
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("git.log");
    let path = logging_git(logs.path(), &log);
    let server = Server::start(&[("PATH", &path)], |_| {});
    let img = [
        ("Accept", "image/avif,image/webp,image/apng,*/*;q=0.8"),
        ("Referer", "https://evil.example/"),
        ("Sec-Fetch-Dest", "image"),
        ("Sec-Fetch-Mode", "no-cors"),
        ("Sec-Fetch-Site", "cross-site"),
    ];
    let diff = format!("/__notabene/api/diff?page={PAGE}");
    let before = git_runs(&log);
    let (code, text) = server.request("GET", &diff, &img, b"");
    assert_eq!(
        (code, parse(&text)),
        (
            403,
            json!({ "error": "read refused: no Origin (this read runs git: it needs this server's Origin)" })
        )
    );
    assert_eq!(git_runs(&log), before, "no git ran");

    let (code, status) = server.request("GET", "/__notabene/api/status", &img, b"");
    assert_eq!((code, parse(&status)["api"].clone()), (200, json!(1)));
    let (code, list) = server.request(
        "GET",
        &format!("/__notabene/api/comments?page={PAGE}"),
        &img,
        b"",
    );
    assert_eq!(code, 200);
    assert!(parse(&list).as_array().is_some_and(|l| !l.is_empty()));
    let (code, page) = server.request("GET", "/guide/sensors.html", &img, b"");
    assert_eq!(code, 200);
    assert!(page.contains("<html"), "a static page is served");

    let origin = format!("http://127.0.0.1:{}", server.port);
    let (code, text) = server.request("GET", &diff, &[("Origin", origin.as_str())], b"");
    assert_eq!(
        (code, parse(&text)),
        (
            200,
            json!([{ "page": PAGE, "file": "book-example/src/guide/sensors.md", "diff": "" }])
        )
    );
    assert!(git_runs(&log) > before, "the answered diff ran git");
}

/// A WebSocket handshake to the live-reload socket; `Some(stream)` when it was upgraded (101),
/// `None` when the server closed the connection, answered anything else or nothing within
/// `wait` (a connection the server cannot accept waits in the kernel's queue).
fn ws_attempt(port: u16, wait: Duration) -> Option<TcpStream> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(wait)).unwrap();
    let head = format!(
        "GET /__notabene/ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: http://127.0.0.1:{port}\r\n\
         Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
         Sec-WebSocket-Version: 13\r\n\r\n"
    );
    s.write_all(head.as_bytes()).ok()?;
    let mut got = Vec::new();
    let mut buf = [0u8; 512];
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    got.starts_with(b"HTTP/1.1 101 ").then_some(s)
}

/// A process's resident memory in kB (`VmRSS`).
fn rss_kb(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// Open sockets of a process (its descriptors that are sockets: connections and listeners).
fn sockets(pid: i32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
        .filter(|e| {
            std::fs::read_link(e.path()).is_ok_and(|l| l.to_string_lossy().starts_with("socket:"))
        })
        .count()
}

/// 2,000 WebSocket attempts against the default cap of 1,024: exactly the cap are upgraded and
/// stay open, every other is closed at once; the server holds no more sockets than that (and
/// its listeners) and stays under 200 MB. Closing one socket frees its slot for the next.
#[test]
fn websockets_count_against_the_connection_cap() {
    let server = Server::start(&[], |_| {});
    let cap = 1024;
    let listeners = sockets(server.pid());
    let mut open = Vec::new();
    let mut closed = 0;
    for _ in 0..2000 {
        match ws_attempt(server.port, Duration::from_secs(10)) {
            Some(s) => open.push(s),
            None => closed += 1,
        }
    }
    let (held, rss) = (sockets(server.pid()), rss_kb(server.pid()));
    println!(
        "2,000 WebSocket attempts: {} open, {closed} closed; server RSS {} MB",
        open.len(),
        rss / 1024
    );
    assert_eq!((open.len(), closed), (cap, 2000 - cap));
    assert_eq!(
        held,
        listeners + cap,
        "server sockets: the cap and the listeners"
    );
    assert!(rss < 200 * 1024, "server RSS {rss} kB");

    // A closed socket gives its slot back (the server sees the close soon after).
    drop(open.pop());
    let deadline = Instant::now() + Duration::from_secs(10);
    let again = loop {
        if let Some(s) = ws_attempt(server.port, Duration::from_secs(10)) {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "no slot freed by a closed socket"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    open.push(again);
    assert!(
        ws_attempt(server.port, Duration::from_secs(10)).is_none(),
        "the cap again"
    );
}

/// CPU time (user + system, clock ticks) of a process's tokio worker threads, which run the
/// accept loop, and how many there are.
fn worker_ticks(pid: i32) -> (u64, usize) {
    let (mut total, mut workers) = (0, 0);
    for t in std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
    {
        let Ok(stat) = std::fs::read_to_string(t.path().join("stat")) else {
            continue;
        };
        let Some((name, rest)) = stat.split_once(" (").and_then(|(_, r)| r.rsplit_once(") "))
        else {
            continue;
        };
        if !name.starts_with("tokio-") {
            continue;
        }
        workers += 1;
        let f: Vec<&str> = rest.split(' ').collect();
        // Fields 14 and 15 (utime, stime) of stat; `rest` starts at field 3.
        total += f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
    }
    (total, workers)
}

/// At the file-descriptor limit the accept loop sleeps between tries instead of spinning:
/// over a second with a connection waiting and no descriptor to accept it, the workers use a
/// few percent of a core at most; once descriptors are free, that connection is answered.
#[cfg(target_os = "linux")]
#[test]
fn accept_loop_pauses_at_the_descriptor_limit() {
    let server = Server::start(&[], |_| {});
    let pid = server.pid();
    let used = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count() as u64;
    let limit = libc::rlimit {
        rlim_cur: used + 4,
        rlim_max: 20_000.max(used + 4),
    };
    // SAFETY: prlimit reads `limit` and writes nothing (no old limit asked for).
    let set = unsafe { libc::prlimit(pid, libc::RLIMIT_NOFILE, &limit, std::ptr::null_mut()) };
    assert_eq!(set, 0, "prlimit");
    // Descriptors taken by live sockets until one attempt is not accepted.
    let mut held = Vec::new();
    while held.len() < 64 {
        match ws_attempt(server.port, Duration::from_millis(500)) {
            Some(s) => held.push(s),
            None => break,
        }
    }
    assert!(held.len() < 64, "the limit was reached");
    // One more connection waits in the queue: every accept fails with EMFILE. The kernel
    // completes its handshake without the server: once `connect` returns, it is queued.
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let port = server.port;
    let waiting = std::thread::spawn(move || {
        let t = Instant::now();
        let _ = stream.write_all(&serve::request_bytes(
            port,
            "GET",
            "/__notabene/api/status",
            &[],
            b"",
        ));
        let mut raw = Vec::new();
        let _ = stream.read_to_end(&mut raw);
        (serve::parse_answer(&raw).0, t.elapsed())
    });
    let (t0, workers) = worker_ticks(pid);
    assert_eq!(workers, 2, "the runtime's worker threads");
    let start = Instant::now();
    std::thread::sleep(Duration::from_secs(1));
    let ticks = worker_ticks(pid).0 - t0;
    let hz = 100.0; // USER_HZ on Linux
    let share = ticks as f64 / hz / start.elapsed().as_secs_f64();
    println!(
        "accept loop at the descriptor limit: {:.1}% of a core",
        share * 100.0
    );
    assert!(
        share < 0.2,
        "the accept loop spins: {:.0}% of a core",
        share * 100.0
    );

    let freed = Instant::now();
    drop(held);
    let (code, waited) = waiting.join().unwrap();
    assert_eq!(
        code, 200,
        "the waiting request is answered once descriptors are free"
    );
    println!(
        "answered {:?} after descriptors were freed",
        freed.elapsed()
    );
    assert!(waited < Duration::from_secs(30));
}

/// The `notabene-serve-*` entries of `dir`.
fn build_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// SIGTERM and SIGINT stop the server: it exits 0 by itself and its build directory (in
/// `TMPDIR`) is gone.
#[test]
fn sigterm_and_sigint_remove_the_build_directory() {
    for signal in [libc::SIGTERM, libc::SIGINT] {
        let tmp = tempfile::tempdir().unwrap();
        let tmpdir = tmp.path().to_str().unwrap().to_string();
        let mut server = Server::start(&[("TMPDIR", &tmpdir)], |_| {});
        let dirs = build_dirs(tmp.path());
        assert_eq!(dirs.len(), 1, "{dirs:?}");
        let name = dirs[0].file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("notabene-serve-"), "{name}");
        assert!(dirs[0].join("site-0").join("index.html").is_file());
        let status = server.signal_and_wait(signal);
        assert_eq!(status.code(), Some(0), "signal {signal}: {status:?}");
        assert_eq!(
            build_dirs(tmp.path()),
            Vec::<PathBuf>::new(),
            "signal {signal}"
        );
    }
}
