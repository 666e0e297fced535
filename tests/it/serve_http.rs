//! `serve` over real HTTP: the guard, case by case (own origin on every loopback name, other
//! ports, schemes and sites, `null`, malformed, DNS rebinding, no Host, `--host` and its
//! token), malformed framing answered with a 4xx and nothing written, a request head trickled
//! by 300 connections not delaying anyone else, and static paths with special characters.

use crate::support::common;
use crate::support::serve;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use serve::Server;
use std::io::Write;
use std::time::{Duration, Instant};

const API: &str = "/__notabene/api/comments";

fn new_page_comment() -> String {
    json!({ "page": "book-example/src/guide/sensors", "space": "book", "scope": "page", "body": "A page note" })
        .to_string()
}

/// Sends a request; asserts its status and `error`, and that the store did not change.
fn expect(
    server: &Server,
    ip: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
    want: (u16, Option<&str>),
) {
    let before = common::tree(&server.store());
    let (code, text) = serve::request_to(ip, server.port, method, path, headers, body.as_bytes());
    let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let error = v.get("error").and_then(Value::as_str);
    assert_eq!((code, error), want, "{method} {path} {headers:?}: {text}");
    if want.0 >= 400 {
        assert!(
            common::tree(&server.store()) == before,
            "the store changed after a refused request ({headers:?})"
        );
    }
}

fn ipv6_loopback() -> bool {
    std::net::TcpListener::bind(("::1", 0)).is_ok()
}

#[test]
fn the_guard_allows_only_this_servers_own_origin() {
    let server = Server::start(&[], |_| {});
    let p = server.port;
    let (own4, own_l, own6) = (
        format!("127.0.0.1:{p}"),
        format!("localhost:{p}"),
        format!("[::1]:{p}"),
    );
    let body = new_page_comment();
    // Own origin, on each loopback name: reads and writes pass.
    for (ip, host) in [("127.0.0.1", &own4), ("127.0.0.1", &own_l), ("::1", &own6)] {
        if ip == "::1" && !ipv6_loopback() {
            eprintln!("no IPv6 loopback on this machine: [::1] checked over IPv4 only");
        }
        let ip = if ip == "::1" && !ipv6_loopback() {
            "127.0.0.1"
        } else {
            ip
        };
        let origin = format!("http://{host}");
        let h = [("Host", host.as_str()), ("Origin", origin.as_str())];
        expect(
            &server,
            ip,
            "GET",
            "/__notabene/api/journal",
            &h,
            "",
            (200, None),
        );
        expect(&server, ip, "POST", API, &h, &body, (201, None));
        // No Origin (a same-origin GET, curl): the Host alone decides.
        expect(
            &server,
            ip,
            "GET",
            "/__notabene/api/journal",
            &h[..1],
            "",
            (200, None),
        );
    }
    // Everything else is refused, reads and writes alike, with the reason.
    let cases: Vec<(&str, String)> = vec![
        ("another loopback port", "http://127.0.0.1:8080".into()),
        ("https on our port", format!("https://127.0.0.1:{p}")),
        ("a foreign site", "https://evil.example".into()),
        ("null", "null".into()),
        ("malformed", "not a url".into()),
        (
            "another loopback name than the Host's",
            format!("http://localhost:{p}"),
        ),
        ("an Origin with a path", format!("http://127.0.0.1:{p}/")),
        (
            "another port of ours",
            format!("http://127.0.0.1:{}", p + 1),
        ),
    ];
    for (what, origin) in &cases {
        let h = [("Host", own4.as_str()), ("Origin", origin.as_str())];
        for (method, path, b) in [
            ("GET", "/__notabene/api/journal", ""),
            ("POST", API, body.as_str()),
        ] {
            let verb = if method == "GET" { "read" } else { "write" };
            let r = format!("{verb} refused: cross-origin");
            eprintln!("case: {what}");
            expect(&server, "127.0.0.1", method, path, &h, b, (403, Some(&r)));
        }
    }
    // DNS rebinding: the attacker's name as Host, with and without its Origin.
    let rebind = format!("rebind.example:{p}");
    let rebind_origin = format!("http://{rebind}");
    for h in [
        vec![("Host", rebind.as_str())],
        vec![
            ("Host", rebind.as_str()),
            ("Origin", rebind_origin.as_str()),
        ],
    ] {
        expect(
            &server,
            "127.0.0.1",
            "GET",
            "/__notabene/api/journal",
            &h,
            "",
            (403, Some("read refused: non-loopback Host")),
        );
        expect(
            &server,
            "127.0.0.1",
            "POST",
            API,
            &h,
            &body,
            (403, Some("write refused: non-loopback Host")),
        );
        expect(
            &server,
            "127.0.0.1",
            "GET",
            "/index.html",
            &h,
            "",
            (403, Some("read refused: non-loopback Host")),
        );
    }
    // No Host at all (hyper answers HTTP/1.1 without Host itself, or we do).
    let (code, _) = serve::request(p, "POST", API, &[("Host", "")], body.as_bytes());
    assert!(matches!(code, 400 | 403), "no Host: {code}");
    // A Host with our name but another port.
    let other = format!("127.0.0.1:{}", p + 1);
    expect(
        &server,
        "127.0.0.1",
        "POST",
        API,
        &[("Host", other.as_str())],
        &body,
        (403, Some("write refused: Host is not this server")),
    );
}

#[test]
fn a_token_guards_writes_and_host_mode_guards_everything() {
    // NOTABENE_TOKEN on loopback: writes need it, reads do not.
    let server = Server::start(&[("NOTABENE_TOKEN", "s3cret")], |_| {});
    let body = new_page_comment();
    expect(
        &server,
        "127.0.0.1",
        "GET",
        "/__notabene/api/journal",
        &[],
        "",
        (200, None),
    );
    expect(
        &server,
        "127.0.0.1",
        "POST",
        API,
        &[],
        &body,
        (403, Some("write refused: invalid or missing token")),
    );
    expect(
        &server,
        "127.0.0.1",
        "POST",
        API,
        &[("x-notabene-token", "s3creT")],
        &body,
        (403, Some("write refused: invalid or missing token")),
    );
    expect(
        &server,
        "127.0.0.1",
        "POST",
        API,
        &[("x-notabene-token", "s3cret")],
        &body,
        (201, None),
    );
    drop(server);

    // --host with no token set: one is generated and printed in the URL; every API request
    // needs it, whatever the Host — a rebinding page has no token.
    let server = Server::start_with(&["--host"], &[], |_| {});
    let token = server
        .url_token
        .clone()
        .expect("the URL carries a generated token");
    assert_eq!(token.len(), 32, "{token}");
    assert!(token.bytes().all(|b| b.is_ascii_hexdigit()), "{token}");
    let p = server.port;
    let rebind = format!("rebind.example:{p}");
    let rebind_origin = format!("http://{rebind}");
    let h = [
        ("Host", rebind.as_str()),
        ("Origin", rebind_origin.as_str()),
    ];
    expect(
        &server,
        "127.0.0.1",
        "GET",
        "/__notabene/api/journal",
        &h,
        "",
        (403, Some("read refused: invalid or missing token")),
    );
    expect(
        &server,
        "127.0.0.1",
        "POST",
        API,
        &h,
        &body,
        (403, Some("write refused: invalid or missing token")),
    );
    let wrong = [
        h[0],
        h[1],
        ("x-notabene-token", "0123456789abcdef0123456789abcdef"),
    ];
    expect(
        &server,
        "127.0.0.1",
        "POST",
        API,
        &wrong,
        &body,
        (403, Some("write refused: invalid or missing token")),
    );
    // The right token, from a page on this server under whatever name it is reached by.
    let lan = format!("192.0.2.7:{p}");
    let lan_origin = format!("http://{lan}");
    let right = [
        ("Host", lan.as_str()),
        ("Origin", lan_origin.as_str()),
        ("x-notabene-token", token.as_str()),
    ];
    expect(
        &server,
        "127.0.0.1",
        "GET",
        "/__notabene/api/journal",
        &right,
        "",
        (200, None),
    );
    expect(
        &server,
        "127.0.0.1",
        "POST",
        API,
        &right,
        &body,
        (201, None),
    );
    // Its token does not make another site's page same-origin.
    let cross = [
        ("Host", lan.as_str()),
        ("Origin", "http://evil.example"),
        ("x-notabene-token", token.as_str()),
    ];
    expect(
        &server,
        "127.0.0.1",
        "POST",
        API,
        &cross,
        &body,
        (403, Some("write refused: cross-origin")),
    );
}

#[test]
fn malformed_framing_gets_a_4xx_and_writes_nothing() {
    let server = Server::start(&[], |_| {});
    let p = server.port;
    let body = new_page_comment();
    let head = |extra: &str| {
        format!(
            "POST {API} HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\nContent-Type: application/json\r\n{extra}\r\n"
        )
    };
    let cases: Vec<(&str, Vec<u8>, u16)> = vec![
        (
            "two different Content-Lengths",
            format!(
                "{}{body}",
                head(&format!(
                    "Content-Length: {}\r\nContent-Length: 5\r\n",
                    body.len()
                ))
            )
            .into_bytes(),
            400,
        ),
        (
            "an invalid Content-Length",
            format!("{}{body}", head("Content-Length: 12abc\r\n")).into_bytes(),
            400,
        ),
        (
            "a head of 100 KB",
            format!(
                "{}{body}",
                head(&format!(
                    "Content-Length: {}\r\nX-Big: {}\r\n",
                    body.len(),
                    "a".repeat(100 * 1024)
                ))
            )
            .into_bytes(),
            431,
        ),
        (
            "bad chunking",
            format!(
                "{}zz\r\n{body}\r\n0\r\n\r\n",
                head("Transfer-Encoding: chunked\r\n")
            )
            .into_bytes(),
            400,
        ),
        // Past the bound of what is read and discarded (4 MiB): refused before it is read.
        (
            "a body said to be 64 MiB",
            format!(
                "{}{}",
                head(&format!("Content-Length: {}\r\n", 64 << 20)),
                "x".repeat(1024)
            )
            .into_bytes(),
            413,
        ),
    ];
    for (what, bytes, want) in cases {
        let before = common::tree(&server.store());
        let (code, text) = serve::raw_request("127.0.0.1", p, &bytes);
        assert_eq!(code, want, "{what}: {text}");
        assert!(
            common::tree(&server.store()) == before,
            "{what}: the store changed"
        );
    }
    // The same request, well framed, goes through.
    let (code, text) = serve::request(
        p,
        "POST",
        API,
        &[("Content-Type", "application/json")],
        body.as_bytes(),
    );
    assert_eq!(code, 201, "{text}");
}

#[test]
fn trickling_connections_do_not_delay_a_legitimate_request() {
    let server = Server::start(&[], |_| {});
    let p = server.port;
    // 300 connections each send part of a request head, then nothing.
    let mut slow = Vec::new();
    for _ in 0..300 {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", p)).unwrap();
        s.write_all(b"GET /index.html HTTP/1.1\r\nHost: 127.0.0.1")
            .unwrap();
        slow.push(s);
    }
    let mut times = Vec::new();
    for _ in 0..7 {
        let t = Instant::now();
        let (code, _) = serve::request(p, "GET", "/__notabene/api/status", &[], b"");
        times.push(t.elapsed());
        assert_eq!(code, 200);
    }
    times.sort();
    let median = times[times.len() / 2];
    eprintln!("status under 300 trickling connections: {times:?}");
    assert!(
        median <= Duration::from_millis(100),
        "a legitimate request waited {median:?} (median of 7)"
    );
    drop(slow);
}

#[test]
fn static_paths_with_special_characters() {
    let server = Server::start(&[], |book| {
        let dir = book.join("src/files");
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in [
            ("c++.txt", "plus plus"),
            ("a b.txt", "a space"),
            ("naïve.txt", "non-ASCII"),
            ("100%.txt", "percent"),
        ] {
            std::fs::write(dir.join(name), text).unwrap();
        }
    });
    let p = server.port;
    for (path, body) in [
        ("/files/c++.txt", "plus plus"),
        ("/files/c%2B%2B.txt", "plus plus"),
        ("/files/a%20b.txt", "a space"),
        ("/files/na%C3%AFve.txt", "non-ASCII"),
        ("/files/100%25.txt", "percent"),
    ] {
        let bytes =
            format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\nConnection: close\r\n\r\n");
        let (code, text) = serve::raw_request("127.0.0.1", p, bytes.as_bytes());
        assert_eq!((code, text.as_str()), (200, body), "{path}");
    }
    // Content types.
    let head = |path: &str| {
        let bytes =
            format!("HEAD {path} HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\nConnection: close\r\n\r\n");
        let mut s = std::net::TcpStream::connect(("127.0.0.1", p)).unwrap();
        s.write_all(bytes.as_bytes()).unwrap();
        let mut raw = String::new();
        let _ = std::io::Read::read_to_string(&mut s, &mut raw);
        raw.lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-type: ")
                    .map(str::to_string)
            })
            .unwrap_or_default()
    };
    assert!(
        head("/index.html").starts_with("text/html"),
        "{}",
        head("/index.html")
    );
    // (The site's own CSS and JS, by the hashed names mdBook gives them.)
    let site = |ext: &str| {
        let (_, index) = serve::request(p, "GET", "/index.html", &[], b"");
        let name = index
            .match_indices("theme/notabene-")
            .map(|(at, _)| &index[at..at + index[at..].find('"').unwrap()])
            .find(|n| n.ends_with(&format!(".{ext}")))
            .expect("the page links the client");
        format!("/{name}")
    };
    let css = site("css");
    assert!(head(&css).starts_with("text/css"), "{css}: {}", head(&css));
    let js = site("js");
    assert!(head(&js).contains("javascript"), "{js}: {}", head(&js));
    assert!(head("/files/c++.txt").starts_with("text/plain"));
    // Traversal never reaches a file outside the site.
    for path in [
        "/../book.toml",
        "/%2e%2e/book.toml",
        "/files/..%2f..%2fbook.toml",
        "/..%5cbook.toml",
    ] {
        let bytes =
            format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\nConnection: close\r\n\r\n");
        let (code, text) = serve::raw_request("127.0.0.1", p, bytes.as_bytes());
        assert!(matches!(code, 400 | 404), "{path}: {code}");
        assert!(!text.contains("[book]"), "{path} served book.toml");
    }
    // A missing page is the book's 404 page, with a 404.
    let (code, text) = serve::request(p, "GET", "/no/such/page.html", &[], b"");
    assert_eq!(code, 404);
    assert!(text.contains("<html"), "the book's 404 page");
}

/// The value of response header `name` (lower case) of `GET path`.
fn header_of(port: u16, path: &str, name: &str) -> Option<String> {
    let bytes =
        format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(bytes.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let _ = std::io::Read::read_to_end(&mut s, &mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let head = text
        .split("\r\n\r\n")
        .next()
        .unwrap_or_default()
        .to_string();
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(": ")?;
        (k.eq_ignore_ascii_case(name)).then(|| v.to_string())
    })
}

#[test]
fn static_responses_name_the_build_they_come_from() {
    let server = Server::start(&[], |_| {});
    let p = server.port;
    let timing = |path: &str| header_of(p, path, "server-timing");
    assert_eq!(
        timing("/index.html").as_deref(),
        Some("nb-generation;dur=1")
    );
    assert_eq!(
        timing("/no-such-page.html").as_deref(),
        Some("nb-generation;dur=1")
    );
    let g = server.generation();
    let (code, _) = server.request(
        "POST",
        "/__notabene/api/comments",
        &[("Content-Type", "application/json")],
        new_page_comment().as_bytes(),
    );
    assert_eq!(code, 201);
    let g2 = server.wait_rebuild(g);
    assert_eq!(
        timing("/index.html"),
        Some(format!("nb-generation;dur={g2}"))
    );
}
