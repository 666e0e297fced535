//! This package's own helpers: the build's memo on disk ([`memo`]), data scripts plain or
//! deflated ([`payload`]),
//! reading a piped input whole ([`pipe`]), a small list diff ([`lcs`]) and work no one waits
//! for ([`background`]). The helpers every
//! crate shares are `notabene_core`'s.
//!
//! Owns nothing of the product's data.

pub mod background;
pub mod lcs;
pub mod memo;
pub mod payload;
pub mod pipe;
