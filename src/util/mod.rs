//! This package's own helpers: the build's memo on disk ([`memo`]), what a long-lived process
//! keeps of its last build ([`last_build`]), data scripts plain or deflated ([`payload`]),
//! reading a piped input whole ([`pipe`]) and a small list diff ([`lcs`]). The helpers every
//! crate shares are `notabene_core`'s.
//!
//! Owns nothing of the product's data.

pub mod last_build;
pub mod lcs;
pub mod memo;
pub mod payload;
pub mod pipe;
