#![doc = include_str!("../README.md")]
//!
//! # Inside
//!
//! The modules: the one-line error type ([`Error`], [`bail!`]), a deterministic parallel map ([`par`]), base-36 ids, HTML / `<script>`-JSON / terminal
//! escaping ([`escape`]), the human-readable output to stdout and stderr ([`term`]), a small
//! binary codec ([`codec`]), the files a build keeps in the user's cache directory ([`disk`]),
//! and the crash points of the crash-safety tests ([`failpoint`]).
//!
//! Owns nothing of the product's data and calls no other notabene crate.

pub mod codec;
pub mod disk;
pub mod error;
pub mod escape;
pub mod failpoint;
pub mod par;
pub mod term;

pub use error::{Error, ErrorKind, Result};

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
