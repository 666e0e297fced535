//! Reviewers without a sign-in proxy: `--reviewers FILE`, a TOML list of reviewers, each with a
//! name, an email, the SHA-256 of their token and a role. A request proves who it is with the
//! token, as `Authorization: Bearer <token>` or as the cookie the sign-in page (`/sign-in`) sets;
//! the hub keeps only the tokens' hashes, and compares them in constant time.
//!
//! ```toml
//! [[reviewer]]
//! name = "Alice Liddell"
//! email = "alice@example.org"
//! token-sha256 = "<64 hex digits: sha256sum of the token>"
//! role = "maintainer"   # or "reviewer" (the default)
//! ```
//!
//! Owns: the file's format, the token's checks, the sign-in cookie. Calls: nothing.

use crate::apps::serve::{Reviewer, Role};
use crate::{Error, Result};
use axum::http::HeaderMap;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::path::Path;

/// The cookie the sign-in page sets.
pub(crate) const COOKIE: &str = "nb-hub-token";
/// The largest reviewers file read.
const MAX_FILE: u64 = 4 * 1024 * 1024;

/// One reviewer of the file.
#[derive(Debug, Clone)]
pub struct Listed {
    reviewer: Reviewer,
    token_sha256: [u8; 32],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    reviewer: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Entry {
    name: String,
    email: String,
    token_sha256: String,
    #[serde(default)]
    role: Option<String>,
}

/// Whether a name or email can stand in `Name <email>` as it is (and is not blank).
fn plain(text: &str) -> bool {
    !text.trim().is_empty() && super::identity::plain(text)
}

/// Reads the reviewers file at `path`.
pub fn read(path: &Path) -> Result<Vec<Listed>> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| Error::io("cannot read", path, e))?;
    if meta.len() > MAX_FILE {
        return Err(Error::new(format!(
            "the reviewers file is too large ({shown})"
        )));
    }
    let text = std::fs::read_to_string(path).map_err(|e| Error::io("cannot read", path, e))?;
    let file: File = toml::from_str(&text).map_err(|e| {
        let first = e.message().lines().next().unwrap_or("").to_string();
        Error::new(format!("not a reviewers file: {first} ({shown})"))
    })?;
    let mut out: Vec<Listed> = Vec::new();
    for e in file.reviewer {
        let who = &e.email;
        if !plain(&e.name) || !plain(&e.email) || !e.email.contains('@') {
            return Err(Error::new(format!(
                "a reviewer needs a name and an email without < or > ({shown}: {who:?})"
            )));
        }
        let hash = decode_hash(&e.token_sha256).ok_or_else(|| {
            Error::new(format!(
                "token-sha256 of {who} is not 64 hex digits ({shown})"
            ))
        })?;
        let role = match e.role.as_deref() {
            None | Some("reviewer") => Role::Reviewer,
            Some("maintainer") => Role::Maintainer,
            Some(other) => {
                return Err(Error::new(format!(
                    "the role of {who} is {other:?}, not \"reviewer\" or \"maintainer\" ({shown})"
                )));
            }
        };
        if out
            .iter()
            .any(|l| l.reviewer.email.eq_ignore_ascii_case(who))
        {
            return Err(Error::new(format!("{who} is listed twice ({shown})")));
        }
        out.push(Listed {
            reviewer: Reviewer {
                name: e.name.trim().to_string(),
                email: e.email.trim().to_string(),
                role,
            },
            token_sha256: hash,
        });
    }
    if out.is_empty() {
        return Err(Error::new(format!(
            "the reviewers file lists nobody ({shown})"
        )));
    }
    Ok(out)
}

fn decode_hash(hex: &str) -> Option<[u8; 32]> {
    let hex = hex.trim();
    if hex.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// Whether `token` can be a token at all (what a cookie holds as it is).
pub(crate) fn token_shape(token: &str) -> bool {
    (16..=256).contains(&token.len())
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.~".contains(&b))
}

/// The reviewer whose token is `token` (every entry compared, in constant time each).
pub(crate) fn by_token<'a>(listed: &'a [Listed], token: &str) -> Option<&'a Reviewer> {
    if !token_shape(token) {
        return None;
    }
    let hash: [u8; 32] = Sha256::digest(token.as_bytes()).into();
    let mut found = None;
    for l in listed {
        if super::hooks::same(&l.token_sha256, &hash) {
            found = Some(&l.reviewer);
        }
    }
    found
}

/// The token a request carries: `Authorization: Bearer …`, else the sign-in cookie.
pub(crate) fn token_of(headers: &HeaderMap) -> Option<String> {
    let bearer = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    if let Some(t) = bearer {
        return Some(t.to_string());
    }
    headers
        .get_all(axum::http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find(|(k, _)| *k == COOKIE)
        .map(|(_, v)| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sha(t: &str) -> String {
        Sha256::digest(t.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    #[test]
    fn the_file_names_reviewers_and_their_tokens_prove_who_they_are() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("reviewers.toml");
        let write = |text: &str| std::fs::write(&path, text).unwrap();
        let alice = "alice-token-0123456789";
        write(&format!(
            "[[reviewer]]\nname = \"Alice\"\nemail = \"alice@example.org\"\ntoken-sha256 = \"{}\"\nrole = \"maintainer\"\n\n[[reviewer]]\nname = \"Bob\"\nemail = \"bob@example.org\"\ntoken-sha256 = \"{}\"\n",
            sha(alice),
            sha("bob-token-0123456789ab")
        ));
        let listed = read(&path).unwrap();
        let a = by_token(&listed, alice).unwrap();
        assert_eq!(
            (a.author().as_str(), a.role),
            ("Alice <alice@example.org>", Role::Maintainer)
        );
        assert_eq!(
            by_token(&listed, "bob-token-0123456789ab").unwrap().role,
            Role::Reviewer
        );
        assert!(by_token(&listed, "bob-token-0123456789aB").is_none());
        assert!(by_token(&listed, "short").is_none());
        let mut h = HeaderMap::new();
        h.insert("cookie", format!("x=1; {COOKIE}={alice}").parse().unwrap());
        assert_eq!(token_of(&h).as_deref(), Some(alice));
        h.insert(
            "authorization",
            "Bearer other-0123456789abc".parse().unwrap(),
        );
        assert_eq!(token_of(&h).as_deref(), Some("other-0123456789abc"));

        let shown = path.display().to_string();
        for (text, error) in [
            (
                "[[reviewer]]\nname = \"A\"\nemail = \"a@x\"\ntoken-sha256 = \"12\"\n".to_string(),
                format!("token-sha256 of a@x is not 64 hex digits ({shown})"),
            ),
            (
                format!(
                    "[[reviewer]]\nname = \"A\"\nemail = \"a@x\"\ntoken-sha256 = \"{}\"\nrole = \"admin\"\n",
                    sha("t")
                ),
                format!(
                    "the role of a@x is \"admin\", not \"reviewer\" or \"maintainer\" ({shown})"
                ),
            ),
            (
                format!(
                    "[[reviewer]]\nname = \"A <x>\"\nemail = \"a@x\"\ntoken-sha256 = \"{}\"\n",
                    sha("t")
                ),
                format!("a reviewer needs a name and an email without < or > ({shown}: \"a@x\")"),
            ),
            (
                String::new(),
                format!("the reviewers file lists nobody ({shown})"),
            ),
            (
                "[[reviewer]]\nnam = 1\n".to_string(),
                format!(
                    "not a reviewers file: unknown field `nam`, expected one of `name`, `email`, `token-sha256`, `role` ({shown})"
                ),
            ),
        ] {
            write(&text);
            assert_eq!(read(&path).unwrap_err().to_string(), error);
        }
    }
}
