//! The write guard of the original notabene dev server, as a pure function: loopback Origin
//! (anti-CSRF), loopback Host (anti-DNS-rebinding), optional `NOTABENE_TOKEN`. Reads get the
//! Host check too.
//!
//! Part of the serve layer (9); standard library only.

/// What the guard looks at.
#[derive(Debug, Clone, Copy, Default)]
pub struct Request<'a> {
    /// The `Origin` header.
    pub origin: Option<&'a str>,
    /// The `Host` header.
    pub host: Option<&'a str>,
    /// The `x-notabene-token` header.
    pub token: Option<&'a str>,
}

/// The server's posture.
#[derive(Debug, Clone, Copy, Default)]
pub struct Policy<'a> {
    /// `--host`: bound to every interface (trusted networks only).
    pub host_mode: bool,
    /// `NOTABENE_TOKEN`, when set.
    pub token: Option<&'a str>,
}

/// Whether `hostname` (no port, brackets stripped) is a loopback name.
pub fn is_loopback(hostname: &str) -> bool {
    let h = hostname
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    h == "localhost"
        || h == "::1"
        || h.strip_prefix("127.").is_some_and(|rest| {
            rest.split('.').count() == 3 && rest.split('.').all(|p| p.parse::<u8>().is_ok())
        })
}

/// The hostname of a `Host` header value (`name:port`, `[::1]:port`).
pub fn host_name(host: &str) -> &str {
    let host = host.trim();
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("");
    }
    host.rsplit_once(':').map(|(h, _)| h).unwrap_or(host)
}

/// The hostname of an `Origin` value (`scheme://host[:port]`), if well formed.
fn origin_host(origin: &str) -> Option<&str> {
    let (scheme, rest) = origin.split_once("://")?;
    if scheme.is_empty() || rest.is_empty() || rest.contains('/') {
        return None;
    }
    let name = host_name(rest);
    (!name.is_empty()).then_some(name)
}

fn host_check(req: &Request, policy: &Policy, verb: &str) -> Result<(), String> {
    if !policy.host_mode && !req.host.map(host_name).is_some_and(is_loopback) {
        return Err(format!("{verb} refused: non-loopback Host"));
    }
    Ok(())
}

/// Checks a mutating request, in the original's order; the error is the 403 reason.
pub fn check_write(req: &Request, policy: &Policy) -> Result<(), String> {
    if let Some(origin) = req.origin {
        let Some(oh) = origin_host(origin) else {
            return Err("write refused: bad Origin".into());
        };
        let same_host = policy.host_mode
            && req
                .host
                .map(host_name)
                .is_some_and(|h| h.eq_ignore_ascii_case(oh));
        if !is_loopback(oh) && !same_host {
            return Err("write refused: cross-origin".into());
        }
    }
    host_check(req, policy, "write")?;
    if let Some(expected) = policy.token
        && req.token != Some(expected)
    {
        return Err("write refused: invalid or missing token".into());
    }
    Ok(())
}

/// Checks a read: the Host check (against DNS rebinding).
pub fn check_read(req: &Request, policy: &Policy) -> Result<(), String> {
    host_check(req, policy, "read")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(
        origin: Option<&str>,
        host: Option<&str>,
        token: Option<&str>,
        policy: Policy,
    ) -> Result<(), String> {
        check_write(
            &Request {
                origin,
                host,
                token,
            },
            &policy,
        )
    }

    #[test]
    fn write_guard_in_order() {
        let lo = Policy::default();
        assert_eq!(w(None, Some("127.0.0.1:3000"), None, lo), Ok(()));
        assert_eq!(
            w(
                Some("http://localhost:3000"),
                Some("localhost:3000"),
                None,
                lo
            ),
            Ok(())
        );
        assert_eq!(
            w(Some("http://[::1]:3000"), Some("[::1]:3000"), None, lo),
            Ok(())
        );
        assert_eq!(
            w(
                Some("https://evil.example"),
                Some("127.0.0.1:3000"),
                None,
                lo
            ),
            Err("write refused: cross-origin".into())
        );
        assert_eq!(
            w(Some("null"), Some("127.0.0.1:3000"), None, lo),
            Err("write refused: bad Origin".into())
        );
        assert_eq!(
            w(None, Some("evil.example:3000"), None, lo),
            Err("write refused: non-loopback Host".into())
        );
        assert_eq!(
            w(None, None, None, lo),
            Err("write refused: non-loopback Host".into())
        );
        let tok = Policy {
            token: Some("s3cret"),
            ..Policy::default()
        };
        assert_eq!(
            w(None, Some("localhost"), None, tok),
            Err("write refused: invalid or missing token".into())
        );
        assert_eq!(
            w(None, Some("localhost"), Some("nope"), tok),
            Err("write refused: invalid or missing token".into())
        );
        assert_eq!(w(None, Some("localhost"), Some("s3cret"), tok), Ok(()));
        let lan = Policy {
            host_mode: true,
            ..Policy::default()
        };
        assert_eq!(
            w(
                Some("http://192.168.1.5:3000"),
                Some("192.168.1.5:3000"),
                None,
                lan
            ),
            Ok(())
        );
        assert_eq!(
            w(
                Some("http://evil.example"),
                Some("192.168.1.5:3000"),
                None,
                lan
            ),
            Err("write refused: cross-origin".into())
        );
        assert_eq!(
            check_read(
                &Request {
                    host: Some("attacker.example"),
                    ..Request::default()
                },
                &lo
            ),
            Err("read refused: non-loopback Host".into())
        );
        assert!(
            is_loopback("127.1.2.3") && !is_loopback("127.evil.com") && !is_loopback("0.0.0.0")
        );
    }
}
