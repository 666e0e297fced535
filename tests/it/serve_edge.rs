//! `serve`'s edge over real HTTP, against slow and oversized bodies and foreign names: a body
//! trickled byte by byte loses its connection at the body deadline, a body over the cap gets a
//! 413 its client can read, and with `--host` static pages answer only to the names the server
//! was told or to the token.

use crate::support::serve::{self, Server};

use pretty_assertions::assert_eq;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

const API: &str = "/__notabene/api/comments";
/// `serve`'s body deadline (`http::BODY_DEADLINE`).
const BODY_DEADLINE: Duration = Duration::from_secs(10);
/// `serve`'s cap on an API body (`api::MAX_REQUEST`).
const MAX_REQUEST: usize = 1024 * 1024;

/// A `POST` head for the API saying the body is `len` bytes long.
fn post_head(port: u16, len: usize) -> String {
    format!(
        "POST {API} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {len}\r\n\r\n"
    )
}

/// A body of 100 bytes trickled one byte a second (it would take 100 s) loses its connection
/// at the body deadline, with a 408, instead of holding it for as long as it trickles.
#[test]
fn a_trickled_body_is_cut_off_at_the_deadline() {
    let server = Server::start(&[], |_| {});
    let mut s = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    s.write_all(post_head(server.port, 100).as_bytes()).unwrap();
    let start = Instant::now();
    let limit = BODY_DEADLINE + Duration::from_secs(5);
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    // One byte, then a read of up to a second, until the server closes or the limit passes.
    let closed = loop {
        let _ = s.write_all(b" ");
        match s.read(&mut buf) {
            Ok(0) => break true,
            Ok(n) => answer.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => break true,
        }
        if start.elapsed() > limit {
            break false;
        }
    };
    let took = start.elapsed();
    assert!(
        closed,
        "the connection was still open after {took:?} of a trickled body"
    );
    let (code, text) = serve::parse_answer(&answer);
    assert_eq!(code, 408, "after {took:?}: {text}");
    assert!(took >= BODY_DEADLINE - Duration::from_secs(1), "{took:?}");
}

/// A body over the cap (2 MiB, the cap being 1 MiB) is read to its end and answered 413 with
/// `Connection: close`: its client, sending it whole, is not reset before it reads the answer.
#[test]
fn a_body_over_the_cap_gets_a_413_it_can_read() {
    let server = Server::start(&[], |_| {});
    let mut s = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(20))).unwrap();
    let len = 2 * MAX_REQUEST;
    s.write_all(post_head(server.port, len).as_bytes()).unwrap();
    // The body in pieces, as over a real network: the first, a pause (a server that answers
    // at the head has answered and closed by then), the rest.
    let piece = vec![b' '; 64 * 1024];
    let mut sent = s.write_all(&piece);
    std::thread::sleep(Duration::from_millis(300));
    for _ in 1..len / piece.len() {
        if sent.is_err() {
            break;
        }
        sent = s.write_all(&piece);
    }
    let mut answer = Vec::new();
    let read = s.read_to_end(&mut answer);
    let head = String::from_utf8_lossy(&answer[..answer.len().min(200)]).into_owned();
    assert!(
        sent.is_ok(),
        "the body could not be sent whole ({sent:?}); answer so far: {head:?}"
    );
    assert!(read.is_ok(), "reading the answer: {read:?}; {head:?}");
    assert!(head.starts_with("HTTP/1.1 413 "), "{head:?}");
    assert!(
        head.to_ascii_lowercase().contains("connection: close"),
        "{head:?}"
    );
    assert_eq!(
        serve::parse_answer(&answer).1,
        r#"{"error":"payload too large"}"#
    );
}

/// `(status, its error or the start of its body)` of an answer.
fn brief(raw: &str) -> (u16, String) {
    let (code, body) = serve::parse_answer(raw.as_bytes());
    (code, body.chars().take(120).collect())
}

/// `(status, whole answer)` of `GET path` with `headers`.
fn get(port: u16, path: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(&serve::request_bytes(port, "GET", path, headers, b""))
        .unwrap();
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    (
        serve::parse_answer(&raw).0,
        String::from_utf8_lossy(&raw).into_owned(),
    )
}

/// With `--host`, a static page under a name the server was not told — a DNS-rebinding page's
/// — is refused (403), while loopback names and a request with the token pass; the token of
/// the printed URL (`?nb-token=`) gives the browser a cookie that lets the page's other files
/// and the next pages through under the same name.
#[test]
fn host_mode_pages_refuse_a_foreign_host_without_the_token() {
    let server = Server::start_with(&["--host"], &[], |_| {});
    let p = server.port;
    let token = server
        .url_token
        .clone()
        .expect("a token in the printed URL");
    let rebind = format!("rebind.example:{p}");
    let refused = (
        403,
        r#"{"error":"read refused: Host not allowed (--allowed-host, or the token)"}"#.to_string(),
    );
    let (code, raw) = get(p, "/index.html", &[("Host", &rebind)]);
    assert_eq!((code, brief(&raw).1), refused);
    let loopback = format!("localhost:{p}");
    assert_eq!(get(p, "/index.html", &[("Host", &loopback)]).0, 200);
    assert_eq!(
        get(
            p,
            "/index.html",
            &[("Host", &rebind), ("x-notabene-token", &token)]
        )
        .0,
        200
    );
    // The printed URL's token: the page, and a cookie for what follows.
    let (code, raw) = get(p, &format!("/?nb-token={token}"), &[("Host", &rebind)]);
    assert_eq!(code, 200);
    let cookie = format!("nb-token-{p}={token}");
    let set = raw
        .lines()
        .find(|l| l.to_ascii_lowercase().starts_with("set-cookie:"))
        .unwrap_or_default();
    assert!(set.contains(&cookie), "{set:?}");
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Strict"),
        "{set:?}"
    );
    let with_cookie = format!("other=1; {cookie}");
    assert_eq!(
        get(
            p,
            "/guide/sensors.html",
            &[("Host", &rebind), ("Cookie", &with_cookie)]
        )
        .0,
        200
    );
    let wrong = format!("nb-token-{p}=0123456789abcdef0123456789abcdef");
    let (code, raw) = get(p, "/index.html", &[("Host", &rebind), ("Cookie", &wrong)]);
    assert_eq!((code, brief(&raw).1), refused);
    let (code, raw) = get(p, "/?nb-token=wrong", &[("Host", &rebind)]);
    assert_eq!((code, brief(&raw).1), refused);
}

/// With `--host`, a name given with `--allowed-host` serves pages without the token; others
/// still need it.
#[test]
fn host_mode_pages_answer_to_allowed_hosts() {
    let server = Server::start_with(&["--host", "--allowed-host", "Review.Example"], &[], |_| {});
    let p = server.port;
    let allowed = format!("review.example:{p}");
    assert_eq!(get(p, "/index.html", &[("Host", &allowed)]).0, 200);
    let other = format!("rebind.example:{p}");
    assert_eq!(get(p, "/index.html", &[("Host", &other)]).0, 403);
}
