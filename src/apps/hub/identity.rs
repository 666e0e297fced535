//! Who a request to the hub comes from. Behind a sign-in proxy (oauth2-proxy, nginx
//! `auth_request`, Cloudflare Access, Tailscale Serve), the proxy names the reviewer in headers
//! (`--identity-header`, `--name-header`); those headers are a bare claim that only the proxy's
//! position makes true, so they are believed only from the proxy's address: the TCP peer of the
//! connection (never `X-Forwarded-For`) must be in a `--trusted-proxy` range. A request from any
//! other peer is refused, whatever it carries. Without a proxy, `--reviewers FILE` lists the
//! reviewers and the hashes of their tokens (`hub::reviewers`).
//!
//! Owns: trusted ranges, the identity headers, roles by email. Calls: `hub::reviewers`.

use crate::apps::serve::{Reviewer, Role};
use crate::{Error, Result};
use axum::http::{HeaderMap, StatusCode};
use std::net::IpAddr;

/// An address range, `ADDR/BITS` (an address alone: that address).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    addr: IpAddr,
    bits: u8,
}

impl Cidr {
    /// Parses `ADDR/BITS` or `ADDR`.
    pub fn parse(text: &str) -> Result<Cidr> {
        let bad = || Error::new(format!("not an address range: {text:?} (--trusted-proxy)"));
        let (addr, bits) = match text.split_once('/') {
            Some((a, b)) => (a, Some(b)),
            None => (text, None),
        };
        let addr: IpAddr = addr.trim().parse().map_err(|_| bad())?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let bits = match bits {
            Some(b) => b
                .trim()
                .parse::<u8>()
                .ok()
                .filter(|b| *b <= max)
                .ok_or_else(bad)?,
            None => max,
        };
        Ok(Cidr { addr, bits })
    }

    /// Loopback, IPv4 and IPv6: the default trusted proxy (one on the same machine).
    pub fn loopback() -> Vec<Cidr> {
        vec![
            Cidr {
                addr: IpAddr::from([127, 0, 0, 0]),
                bits: 8,
            },
            Cidr {
                addr: IpAddr::from([0u16, 0, 0, 0, 0, 0, 0, 1]),
                bits: 128,
            },
        ]
    }

    /// Whether `ip` is in the range (an IPv4 address mapped into IPv6 is taken as IPv4).
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        let (a, b, width) = match (self.addr, ip) {
            (IpAddr::V4(a), IpAddr::V4(b)) => (u32::from(a) as u128, u32::from(b) as u128, 32),
            (IpAddr::V6(a), IpAddr::V6(b)) => (u128::from(a), u128::from(b), 128),
            _ => return false,
        };
        let shift = width - u32::from(self.bits);
        match shift {
            0 => a == b,
            s if s >= 128 => true,
            s => (a >> s) == (b >> s),
        }
    }
}

/// How the hub knows its reviewers.
#[derive(Debug, Clone)]
pub struct SignIn {
    /// Who vouches for them.
    pub by: Vouched,
    /// Reads need no identity.
    pub public_read: bool,
}

/// Who vouches for a reviewer.
#[derive(Debug, Clone)]
pub enum Vouched {
    /// A sign-in proxy, in headers.
    Proxy {
        /// The header holding the reviewer's email (`X-Forwarded-Email`).
        identity_header: String,
        /// The header holding their name (`X-Forwarded-User`); else the email's local part.
        name_header: Option<String>,
        /// The peers whose headers are believed.
        trusted: Vec<Cidr>,
        /// Emails of the maintainers (everyone else is a reviewer).
        maintainers: Vec<String>,
    },
    /// Their token (`--reviewers FILE`).
    Tokens(Vec<super::reviewers::Listed>),
}

/// Why a request is refused at the hub's door.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// 403 (an untrusted peer) or 401 (no identity).
    pub status: StatusCode,
    /// What to tell the client.
    pub message: &'static str,
}

impl SignIn {
    /// The reviewer a request from `peer` with `headers` comes from: `Ok(None)` for a read
    /// with `--public-read` and no identity; refused when the peer is not a trusted proxy or
    /// (for a write, or any request without `--public-read`) names nobody.
    pub fn reviewer(
        &self,
        peer: Option<IpAddr>,
        headers: &HeaderMap,
        read: bool,
    ) -> std::result::Result<Option<Reviewer>, Refused> {
        let nobody = |message| match read && self.public_read {
            true => Ok(None),
            false => Err(Refused {
                status: StatusCode::UNAUTHORIZED,
                message,
            }),
        };
        let (identity_header, name_header, trusted, maintainers) = match &self.by {
            Vouched::Tokens(listed) => {
                let found = super::reviewers::token_of(headers)
                    .and_then(|t| super::reviewers::by_token(listed, &t).cloned());
                return match found {
                    Some(who) => Ok(Some(who)),
                    None => nobody("sign in first: no known token (/sign-in)"),
                };
            }
            Vouched::Proxy {
                identity_header,
                name_header,
                trusted,
                maintainers,
            } => (identity_header, name_header, trusted, maintainers),
        };
        if !peer.is_some_and(|p| trusted.iter().any(|c| c.contains(p))) {
            return Err(Refused {
                status: StatusCode::FORBIDDEN,
                message: "requests must come through the sign-in proxy",
            });
        }
        let text = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::trim)
                .filter(|v| !v.is_empty())
        };
        let email = text(identity_header).filter(|e| plain(e) && e.contains('@'));
        let Some(email) = email else {
            return nobody("sign in first: the proxy named no reviewer");
        };
        let name = name_header
            .as_deref()
            .and_then(text)
            .filter(|n| plain(n))
            .unwrap_or_else(|| email.split('@').next().unwrap_or(email));
        let role = match maintainers.iter().any(|m| m.eq_ignore_ascii_case(email)) {
            true => Role::Maintainer,
            false => Role::Reviewer,
        };
        Ok(Some(Reviewer {
            name: name.to_string(),
            email: email.to_string(),
            role,
        }))
    }
}

/// Whether a header's text can stand in `Name <email>` as it is: no angle brackets, no control
/// characters, at most 200 characters.
pub(crate) fn plain(text: &str) -> bool {
    text.len() <= 200 && !text.chars().any(|c| c.is_control() || c == '<' || c == '>')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sign_in() -> SignIn {
        SignIn {
            by: Vouched::Proxy {
                identity_header: "x-forwarded-email".into(),
                name_header: Some("x-forwarded-user".into()),
                trusted: vec![Cidr::parse("10.0.0.0/8").unwrap()],
                maintainers: vec!["Max@Example.org".into()],
            },
            public_read: false,
        }
    }

    #[test]
    fn ranges_hold_their_addresses_only() {
        let c = Cidr::parse("10.1.0.0/16").unwrap();
        assert!(c.contains("10.1.255.3".parse().unwrap()));
        assert!(!c.contains("10.2.0.1".parse().unwrap()));
        assert!(c.contains("::ffff:10.1.0.9".parse().unwrap()));
        assert!(
            Cidr::parse("0.0.0.0/0")
                .unwrap()
                .contains("8.8.8.8".parse().unwrap())
        );
        assert!(Cidr::loopback()[1].contains("::1".parse().unwrap()));
        assert!(
            !Cidr::parse("127.0.0.2")
                .unwrap()
                .contains("127.0.0.1".parse().unwrap())
        );
        for bad in ["10.0.0.0/33", "nope", "10.0.0.0/x", "::1/129"] {
            assert!(Cidr::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn headers_are_believed_from_trusted_peers_only() {
        let s = sign_in();
        let mut h = HeaderMap::new();
        h.insert("x-forwarded-email", "max@example.org".parse().unwrap());
        h.insert("x-forwarded-user", "Max".parse().unwrap());
        let from = |ip: &str, read, h: &HeaderMap| s.reviewer(Some(ip.parse().unwrap()), h, read);
        let max = from("10.0.0.1", false, &h).unwrap().unwrap();
        assert_eq!(
            (max.author().as_str(), max.role),
            ("Max <max@example.org>", Role::Maintainer)
        );
        assert_eq!(
            from("192.168.0.1", true, &h).unwrap_err().status,
            StatusCode::FORBIDDEN
        );
        assert_eq!(
            s.reviewer(None, &h, true).unwrap_err().status,
            StatusCode::FORBIDDEN
        );
        h.insert("x-forwarded-user", "Evil <x@y>".parse().unwrap());
        assert_eq!(from("10.0.0.1", false, &h).unwrap().unwrap().name, "max");
        h.remove("x-forwarded-email");
        assert_eq!(
            from("10.0.0.1", true, &h).unwrap_err().status,
            StatusCode::UNAUTHORIZED
        );
        let public = SignIn {
            public_read: true,
            ..sign_in()
        };
        let p = |read| public.reviewer(Some("10.0.0.1".parse().unwrap()), &h, read);
        assert_eq!(p(true), Ok(None));
        assert_eq!(p(false).unwrap_err().status, StatusCode::UNAUTHORIZED);
    }
}
