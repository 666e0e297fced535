//! The test support, one home for every test and bench target: `tests/it` and
//! `tests/browser` mount it with `#[path = "../support/mod.rs"] mod support;`, the benches
//! with `#[path = "../tests/support/mod.rs"] mod support;`. Each helper exists once, here:
//!
//! * [`common`]: the `notabene` and `mdbook-notabene` binaries run in an isolated, pinned
//!   environment (`install`, `build` included), temp dirs, file and tree helpers, fixtures,
//!   the corpus books and book-example, small books in a git work tree, git.
//! * [`preprocess`]: mdBook loaded with the plugin, generated comments, readers for the HTML
//!   it writes and for its warnings.
//! * [`serve`]: `mdbook-notabene serve` processes, an HTTP client for them, waits on their
//!   build generation, and the write load.
//! * [`forge`]: the real parts a review hub talks to (a git remote over HTTP behind nginx, a
//!   sign-in proxy) and `mdbook-notabene hub` processes.
//! * [`wait`]: bounded polls (no fixed sleep before an assertion that something did not
//!   happen).
//!
//! Each target uses only some of it.
#![allow(dead_code)]

pub mod common;
pub mod forge;
pub mod preprocess;
pub mod serve;
pub mod wait;
