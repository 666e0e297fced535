//! Shared helpers: the crate's error type, a deterministic parallel map, base-36 id encoding, HTML
//! / `<script>`-JSON / terminal escaping, the human-readable output to stdout and stderr (escaped
//! for the terminal), data scripts (plain or deflated), reading a piped input whole, `/`-separated
//! paths, a small list diff, what a long-lived process keeps of its last build, and the build's
//! memo on disk (with the cache directory it shares with the store's cache).
//!
//! Owns nothing of the product's data.

pub mod codec;
pub mod error;
pub mod escape;
pub mod failpoint;
pub mod last_build;
pub mod lcs;
pub mod memo;
pub mod par;
pub mod payload;
pub mod pipe;
pub mod term;

use std::path::Path;

/// `n` in lowercase base 36 (the digits of comment, journal and block ids).
pub fn base36(mut n: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    if n == 0 {
        return "0".into();
    }
    let mut out = Vec::new();
    while n > 0 {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
    }
    out.reverse();
    String::from_utf8(out).expect("ASCII digits")
}

/// `rel` with `/` separators and no `.` components.
pub fn slash_path(rel: &Path) -> String {
    rel.components()
        .filter_map(|c| match c {
            std::path::Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}
