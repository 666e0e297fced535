//! The headless-Chromium tests, as their own test binary: `browser` (the reader client on
//! built pages and fixtures) and `serve_browser` (the write side under `mdbook-notabene serve`,
//! end to end). They wait on real time (live reloads, rebuilds), so cargo runs them apart from
//! the book builds of `tests/it`, which would otherwise share the two cores with them.
//!
//! Run one area with `cargo test --test browser serve_browser::`.

// Tests and benches are not a library: their shared modules are `pub` for each other, and
// need no rustdoc.
#![allow(unreachable_pub, missing_docs)]

mod harness;
#[path = "../support/mod.rs"]
mod support;

mod axe;
mod browser;
mod corpus_book;
mod hub_browser;
mod serve_browser;
mod smoke;
