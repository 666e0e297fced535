//! `POST /hooks/push`: a forge tells the hub a branch moved, and the hub fetches it at once
//! instead of at its next poll. The request is believed only when it proves it knows the secret
//! (`--webhook-secret-env VAR`): GitHub's `X-Hub-Signature-256` (HMAC-SHA256 of the exact body),
//! or GitLab's `X-Gitlab-Token` (the secret itself), both compared in constant time. Anything
//! else is refused (401), and the route does not exist without a secret (404). The event is a
//! hint, never state: the hub fetches and reads the branch itself.
//!
//! Owns: the webhook's checks and what it names. Calls: nothing (the hub's front runs the fetch).

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// The largest webhook body read (GitHub's push payloads with many commits run to megabytes).
pub(crate) const MAX_HOOK_BODY: usize = 8 * 1024 * 1024;

/// Whether `a` and `b` are equal, in time that depends on their lengths only (webhook tokens,
/// the reviewers' token hashes).
pub(crate) fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Whether a webhook with `body` proves it knows `secret`: GitHub's `signature`
/// (`sha256=<hex>`), or GitLab's `token`.
pub(crate) fn authentic(
    secret: &[u8],
    body: &[u8],
    signature: Option<&str>,
    token: Option<&str>,
) -> bool {
    if let Some(sig) = signature {
        let Some(hex) = sig.strip_prefix("sha256=") else {
            return false;
        };
        let Some(expected) = decode_hex(hex) else {
            return false;
        };
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret) else {
            return false;
        };
        mac.update(body);
        return mac.verify_slice(&expected).is_ok();
    }
    token.is_some_and(|t| same(t.as_bytes(), secret))
}

fn decode_hex(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The branch a push event names (`ref: refs/heads/<branch>`), if any.
pub(crate) fn pushed_branch(body: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    v.get("ref")?
        .as_str()?
        .strip_prefix("refs/heads/")
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_signatures_and_gitlab_tokens_are_checked() {
        // GitHub's documented test vector.
        let secret = b"It's a Secret to Everybody";
        let good = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
        assert!(authentic(secret, b"Hello, World!", Some(good), None));
        assert!(!authentic(secret, b"Hello, World?", Some(good), None));
        assert!(!authentic(b"another", b"Hello, World!", Some(good), None));
        assert!(!authentic(
            secret,
            b"Hello, World!",
            Some(&good[..good.len() - 2]),
            None
        ));
        assert!(!authentic(
            secret,
            b"Hello, World!",
            Some("sha1=757107"),
            None
        ));
        // A signature that fails is not saved by a right token beside it.
        assert!(!authentic(
            secret,
            b"x",
            Some("sha256=00"),
            Some("It's a Secret to Everybody")
        ));
        assert!(authentic(
            secret,
            b"x",
            None,
            Some("It's a Secret to Everybody")
        ));
        assert!(!authentic(
            secret,
            b"x",
            None,
            Some("It's a Secret to everybody")
        ));
        assert!(!authentic(secret, b"x", None, None));
        assert_eq!(
            pushed_branch(br#"{"ref":"refs/heads/feature/x"}"#).as_deref(),
            Some("feature/x")
        );
        assert_eq!(pushed_branch(br#"{"ref":"refs/tags/v1"}"#), None);
    }
}
