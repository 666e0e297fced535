//! The API guard, as a pure function. A request to the API — a read or a write, the live-reload
//! socket included — is allowed only when:
//! * its `Host` is the server's own name and port (`127.0.0.1`, `localhost` or `[::1]` with
//!   the bound port; with `--host`, any name with that port, since the token then stands in);
//! * its `Origin` is absent or equals the server's own origin exactly: `http://` plus that
//!   `Host` (a page on another loopback port, over https, from another site, `null` or
//!   malformed is refused — so is a DNS-rebinding page, whose Host is not ours);
//! * it carries the token, when there is one (`NOTABENE_TOKEN`, or the one `--host` generates):
//!   `x-notabene-token`, or `token=` in the query for the WebSocket, compared in constant time —
//!   writes always, reads with `--host` (on loopback the Host check already stops rebinding);
//! * it is a costly read ([`Access::CostlyRead`]: `diff`, which runs git) with no `Origin`
//!   only when it carries the token; with no token configured, a costly read needs the
//!   server's own `Origin`.
//!
//! Why reads with no `Origin` are answered only when they are cheap: any page the reader opens can
//! make the browser fetch `<img src="http://127.0.0.1:PORT/…">`, and a browser sends no `Origin`
//! with such a request, nor with a same-origin `GET` of the reader client itself — so the absence
//! of an `Origin` tells the client and a hostile page apart no more than it tells either from
//! `curl`. What the hostile page cannot do is read the answer (no CORS headers; JSON, `nosniff`),
//! so what is at stake is cost, not data: a static file, the status, the comments and the journal
//! cost no more than loading a page, and stay open to reads with no `Origin` (the reader client's
//! own reads depend on it, and on loopback there is no token to require). A read that starts
//! subprocesses is refused without the proof a page of another site cannot give: the server's own
//! `Origin` (a browser never sends it for another site's page; a tool such as `curl` can send it)
//! or the token. Requiring the token of every read instead would leave loopback, where there is no
//! token by default, without a working client.
//!
//! Static pages get the Host check only ([`check_page`]) — and with `--host`, where any name
//! reaches the port, a DNS-rebinding page would pass it: there, a page's `Host` must also name
//! the server as it was told (a loopback name, or an `--allowed-host`), or the request carry
//! the token (`x-notabene-token`, the `nb-token=` of the printed URL, or the cookie a page so
//! opened is given, which the browser keeps for the server's name: a rebinding page, under its
//! own name, has none). A refusal is a 403, as every refusal of the guard.

/// What a request does, for the guard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// A read no costlier than a static file: `status`, `comments`, `journal`, the socket.
    Read,
    /// A read that runs subprocesses (`diff` runs git): never answered on the strength of a
    /// missing `Origin` alone.
    CostlyRead,
    /// Anything that is not `GET`/`HEAD`.
    Write,
}

/// What the guard looks at.
#[derive(Debug, Clone, Copy, Default)]
pub struct Request<'a> {
    /// The `Origin` header.
    pub origin: Option<&'a str>,
    /// The `Host` header.
    pub host: Option<&'a str>,
    /// The `x-notabene-token` header (or the WebSocket's `token=`; for a page, also its
    /// `nb-token=` or its cookie).
    pub token: Option<&'a str>,
}

/// The server's posture.
#[derive(Debug, Clone, Copy, Default)]
pub struct Policy<'a> {
    /// `--host`: bound to every interface (trusted networks only).
    pub host_mode: bool,
    /// The bound port.
    pub port: u16,
    /// The token every API request must carry, when there is one.
    pub token: Option<&'a str>,
    /// `--allowed-host`: with `--host`, the names besides loopback pages are served under
    /// without the token (lower case; an IPv6 address in brackets).
    pub allowed: &'a [String],
}

/// The loopback names the server answers to.
const LOOPBACK: [&str; 3] = ["127.0.0.1", "localhost", "[::1]"];

/// Splits a `Host` value into name and port (`name:port`, `[::1]:port`); `None` when it has
/// no port or is malformed.
fn split_host(host: &str) -> Option<(&str, u16)> {
    let (name, port) = host.rsplit_once(':')?;
    if name.is_empty() || name.ends_with(':') || (name.contains(':') && !name.starts_with('[')) {
        return None;
    }
    let port = port.parse().ok()?;
    Some((name, port))
}

/// Why a request's `Host` does not name this server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadHost {
    /// There is no `Host`.
    Missing,
    /// It is not `name:port`.
    Malformed,
    /// Its name is not a loopback name (without `--host`).
    NotLoopback,
    /// Its port is not this server's.
    OtherServer,
}

impl std::fmt::Display for BadHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BadHost::Missing => "no Host",
            BadHost::Malformed => "bad Host",
            BadHost::NotLoopback => "non-loopback Host",
            BadHost::OtherServer => "Host is not this server",
        })
    }
}

/// Why the guard refuses a request (shown as the 403's reason, `write refused: …`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The `Host` does not name this server (`writing`: the request is a write).
    Host {
        /// The request is a write.
        writing: bool,
        /// What is wrong with the `Host`.
        why: BadHost,
    },
    /// The `Origin` is not this server's.
    CrossOrigin {
        /// The request is a write.
        writing: bool,
    },
    /// The token is required and missing or wrong.
    Token {
        /// The request is a write.
        writing: bool,
    },
    /// A costly read with no `Origin` and no token (`token`: the server has one).
    NoOrigin {
        /// The server has a token (the proof it asks for).
        token: bool,
    },
    /// With `--host`, a page's `Host` is not a name the server was told, and no token.
    HostNotAllowed,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let verb = |writing: bool| if writing { "write" } else { "read" };
        match self {
            Refusal::Host { writing, why } => write!(f, "{} refused: {why}", verb(*writing)),
            Refusal::CrossOrigin { writing } => {
                write!(f, "{} refused: cross-origin", verb(*writing))
            }
            Refusal::Token { writing } => {
                write!(f, "{} refused: invalid or missing token", verb(*writing))
            }
            Refusal::NoOrigin { token } => {
                let proof = if *token {
                    "the token"
                } else {
                    "this server's Origin"
                };
                write!(
                    f,
                    "read refused: no Origin (this read runs git: it needs {proof})"
                )
            }
            Refusal::HostNotAllowed => {
                f.write_str("read refused: Host not allowed (--allowed-host, or the token)")
            }
        }
    }
}

/// The Host check: `Ok` when `host` names this server.
fn host_ok(host: Option<&str>, policy: &Policy) -> Result<(), BadHost> {
    let Some(host) = host else {
        return Err(BadHost::Missing);
    };
    let Some((name, port)) = split_host(host) else {
        return Err(BadHost::Malformed);
    };
    if !policy.host_mode && !LOOPBACK.iter().any(|l| l.eq_ignore_ascii_case(name)) {
        return Err(BadHost::NotLoopback);
    }
    if port != policy.port {
        return Err(BadHost::OtherServer);
    }
    Ok(())
}

/// Equality in time independent of where the first difference is.
fn same_secret(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut diff = (a.len() != b.len()) as u8;
    for i in 0..a.len().max(b.len()) {
        diff |= a.get(i).copied().unwrap_or(0) ^ b.get(i).copied().unwrap_or(0);
    }
    diff == 0
}

/// Checks an API request; the error is the 403 reason. The token, when there is one, is
/// required of writes, and with `--host` of reads too; a costly read with no `Origin` needs
/// the token (or, without one, the server's own `Origin`).
pub fn check_api(req: &Request, policy: &Policy, access: Access) -> Result<(), Refusal> {
    let writing = access == Access::Write;
    host_ok(req.host, policy).map_err(|why| Refusal::Host { writing, why })?;
    if let Some(origin) = req.origin {
        let own = req.host.map(|h| format!("http://{h}"));
        if !own.is_some_and(|o| o.eq_ignore_ascii_case(origin.trim())) {
            return Err(Refusal::CrossOrigin { writing });
        }
    }
    let token_ok = |expected: &str| req.token.is_some_and(|t| same_secret(t, expected));
    if let Some(expected) = policy.token
        && (writing || policy.host_mode)
        && !token_ok(expected)
    {
        return Err(Refusal::Token { writing });
    }
    if access == Access::CostlyRead && req.origin.is_none() && !policy.token.is_some_and(token_ok) {
        return Err(Refusal::NoOrigin {
            token: policy.token.is_some(),
        });
    }
    Ok(())
}

/// Whether `req` carries the policy's token (compared in constant time).
pub fn carries_token(req: &Request, policy: &Policy) -> bool {
    policy
        .token
        .is_some_and(|t| req.token.is_some_and(|r| same_secret(r, t)))
}

/// Checks a request for a static page: the Host check (against DNS rebinding); with `--host`,
/// a name the server was told (loopback, `--allowed-host`) or the token.
pub fn check_page(req: &Request, policy: &Policy) -> Result<(), Refusal> {
    host_ok(req.host, policy).map_err(|why| Refusal::Host {
        writing: false,
        why,
    })?;
    if !policy.host_mode {
        return Ok(());
    }
    let name = req.host.and_then(split_host).map_or("", |(n, _)| n);
    let told = LOOPBACK
        .iter()
        .copied()
        .chain(policy.allowed.iter().map(String::as_str))
        .any(|n| n.eq_ignore_ascii_case(name));
    if told || carries_token(req, policy) {
        return Ok(());
    }
    Err(Refusal::HostNotAllowed)
}

/// An `--allowed-host` value as the guard compares it: a host name or an IP address, no port
/// (an IPv6 address with or without brackets), in lower case.
pub fn allowed_host(arg: &str) -> crate::Result<String> {
    let name = arg.trim().to_ascii_lowercase();
    let bare = name.trim_start_matches('[').trim_end_matches(']');
    if bare.parse::<std::net::Ipv6Addr>().is_ok() {
        return Ok(format!("[{bare}]"));
    }
    let ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_');
    if !ok {
        return Err(crate::Error::of(
            notabene_core::error::ErrorKind::Invalid,
            format!("not a host name (a name or an IP address, no port): {arg}"),
            "--allowed-host",
        ));
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PORT: u16 = 3005;

    fn api(
        origin: Option<&str>,
        host: Option<&str>,
        token: Option<&str>,
        policy: Policy,
    ) -> Option<String> {
        check_api(
            &Request {
                origin,
                host,
                token,
            },
            &policy,
            Access::Write,
        )
        .err()
        .map(|r| r.to_string())
    }

    fn local() -> Policy<'static> {
        Policy {
            host_mode: false,
            port: PORT,
            token: None,
            allowed: &[],
        }
    }

    #[test]
    fn own_origin_on_every_loopback_name() {
        for name in ["127.0.0.1", "localhost", "[::1]"] {
            let host = format!("{name}:{PORT}");
            let origin = format!("http://{host}");
            assert_eq!(
                api(Some(&origin), Some(&host), None, local()),
                None,
                "{host}"
            );
            assert_eq!(api(None, Some(&host), None, local()), None, "{host}");
        }
    }

    #[test]
    fn anything_else_is_refused_with_its_reason() {
        let host = format!("127.0.0.1:{PORT}");
        let cases = [
            (
                Some("http://127.0.0.1:8080"),
                Some(host.as_str()),
                "write refused: cross-origin",
            ),
            (
                Some("https://127.0.0.1:3005"),
                Some(host.as_str()),
                "write refused: cross-origin",
            ),
            (
                Some("http://localhost:3005"),
                Some(host.as_str()),
                "write refused: cross-origin",
            ),
            (
                Some("https://evil.example"),
                Some(host.as_str()),
                "write refused: cross-origin",
            ),
            (
                Some("null"),
                Some(host.as_str()),
                "write refused: cross-origin",
            ),
            (
                Some("not a url"),
                Some(host.as_str()),
                "write refused: cross-origin",
            ),
            (
                None,
                Some("rebind.example:3005"),
                "write refused: non-loopback Host",
            ),
            (
                Some("http://rebind.example:3005"),
                Some("rebind.example:3005"),
                "write refused: non-loopback Host",
            ),
            (
                None,
                Some("127.0.0.1:8080"),
                "write refused: Host is not this server",
            ),
            (
                None,
                Some("evil.example:80"),
                "write refused: non-loopback Host",
            ),
            (None, Some("127.0.0.1"), "write refused: bad Host"),
            (None, None, "write refused: no Host"),
        ];
        for (origin, host, reason) in cases {
            assert_eq!(
                api(origin, host, None, local()),
                Some(reason.to_string()),
                "{origin:?} {host:?}"
            );
        }
    }

    #[test]
    fn host_mode_takes_any_name_but_requires_the_token() {
        let policy = Policy {
            host_mode: true,
            port: PORT,
            token: Some("s3cret"),
            allowed: &[],
        };
        let host = "rebind.example:3005";
        let origin = "http://rebind.example:3005";
        assert_eq!(
            api(Some(origin), Some(host), None, policy),
            Some("write refused: invalid or missing token".into())
        );
        assert_eq!(
            api(Some(origin), Some(host), Some("s3creT"), policy),
            Some("write refused: invalid or missing token".into())
        );
        assert_eq!(api(Some(origin), Some(host), Some("s3cret"), policy), None);
        assert_eq!(
            api(
                Some("http://other.example:3005"),
                Some(host),
                Some("s3cret"),
                policy
            ),
            Some("write refused: cross-origin".into())
        );
    }

    #[test]
    fn a_costly_read_with_no_origin_needs_proof() {
        let host = format!("127.0.0.1:{PORT}");
        let own = format!("http://{host}");
        let read = |origin, token, policy| {
            check_api(
                &Request {
                    origin,
                    host: Some(host.as_str()),
                    token,
                },
                &policy,
                Access::CostlyRead,
            )
            .map_err(|r| r.to_string())
        };
        let cheap = check_api(
            &Request {
                origin: None,
                host: Some(host.as_str()),
                token: None,
            },
            &local(),
            Access::Read,
        );
        assert_eq!(cheap, Ok(()));
        assert_eq!(
            read(None, None, local()),
            Err(
                "read refused: no Origin (this read runs git: it needs this server's Origin)"
                    .into()
            )
        );
        assert_eq!(read(Some(own.as_str()), None, local()), Ok(()));
        assert_eq!(
            read(Some("http://evil.example"), None, local()),
            Err("read refused: cross-origin".into())
        );
        let tokened = Policy {
            token: Some("s3cret"),
            ..local()
        };
        assert_eq!(
            read(None, None, tokened),
            Err("read refused: no Origin (this read runs git: it needs the token)".into())
        );
        assert_eq!(
            read(None, Some("s3creT"), tokened),
            Err("read refused: no Origin (this read runs git: it needs the token)".into())
        );
        assert_eq!(read(None, Some("s3cret"), tokened), Ok(()));
        assert_eq!(read(Some(own.as_str()), None, tokened), Ok(()));
    }

    #[test]
    fn host_mode_pages_need_a_told_name_or_the_token() {
        let allowed = ["review.example".to_string(), "[fd00::1]".to_string()];
        let policy = Policy {
            host_mode: true,
            port: PORT,
            token: Some("s3cret"),
            allowed: &allowed,
        };
        let page = |host: &str, token| {
            check_page(
                &Request {
                    origin: None,
                    host: Some(host),
                    token,
                },
                &policy,
            )
            .map_err(|r| r.to_string())
        };
        for host in [
            "127.0.0.1:3005",
            "LOCALHOST:3005",
            "[::1]:3005",
            "Review.Example:3005",
            "[fd00::1]:3005",
        ] {
            assert_eq!(page(host, None), Ok(()), "{host}");
        }
        let refused = Err("read refused: Host not allowed (--allowed-host, or the token)".into());
        assert_eq!(page("rebind.example:3005", None), refused);
        assert_eq!(page("rebind.example:3005", Some("s3creT")), refused);
        assert_eq!(page("rebind.example:3005", Some("s3cret")), Ok(()));
        assert_eq!(
            page("review.example:8080", Some("s3cret")),
            Err("read refused: Host is not this server".into())
        );
        // On loopback, as before: loopback names only, token or not.
        let local = Policy {
            allowed: &allowed,
            ..local()
        };
        let g = Request {
            host: Some("review.example:3005"),
            ..Request::default()
        };
        assert_eq!(
            check_page(&g, &local).map_err(|r| r.to_string()),
            Err("read refused: non-loopback Host".into())
        );
    }

    #[test]
    fn allowed_hosts_are_names_or_addresses_without_a_port() {
        let ok = |a: &str| allowed_host(a).map_err(|e| e.to_string());
        assert_eq!(ok("Review.Example"), Ok("review.example".into()));
        assert_eq!(ok("192.0.2.7"), Ok("192.0.2.7".into()));
        assert_eq!(ok("fd00::1"), Ok("[fd00::1]".into()));
        assert_eq!(ok("[FD00::1]"), Ok("[fd00::1]".into()));
        for bad in ["", "review.example:3000", "http://review.example", "a b"] {
            assert!(
                ok(bad).is_err_and(|e| e.contains("(--allowed-host)")),
                "{bad}"
            );
        }
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("abc", "abcd"));
        assert!(!same_secret("", "a"));
    }
}
