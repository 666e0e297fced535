//! This package's own helpers: the build's memo on disk ([`memo`]), data scripts plain or
//! deflated ([`payload`]),
//! reading a piped input whole ([`pipe`]) and a small list diff ([`lcs`]). The helpers every
//! crate shares are `notabene_core`'s.
//!
//! Owns nothing of the product's data.

pub mod lcs;
pub mod memo;
pub mod payload;
pub mod pipe;
