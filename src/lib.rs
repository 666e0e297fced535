//! mdbook-notabene: review comments anchored to the rendered text of an mdBook book.
//!
//! The crate is laid out along the data flow:
//!
//! * [`store`] — the `.notabene` store (contract v3): reading, atomic locked writes, the
//!   journal, `verify` and `migrate`. Everything that touches store files lives here.
//! * [`text`] — the text model: a chapter's Markdown → the text of its rendered `<main>`,
//!   mapped back to Markdown bytes; normalisation; commentable blocks.
//! * [`anchor`] — re-finding anchors in a page's text (exact, fuzzy, orphan).
//! * [`resolve`] — anchoring a whole book: comments → chapters → results, in page order.
//! * [`inject`] — markers and data islands written into a chapter's Markdown.
//! * [`preprocess`] — the mdBook preprocessor (protocol, report, `fail-on`).
//! * [`views`] — the generated /review, /comments and /journal chapters; [`git`] their diffs.
//! * [`render`] — the `[output.notabene]` renderer: `comments.json`.
//! * [`assets`] — the embedded reader client and its installed-version check.
//! * [`serve`] — the loopback server: live rebuilds and the guarded write API.
//! * [`config`] — book discovery and the `[preprocessor.notabene]` table of `book.toml`.
//! * [`pages`] — page ids (the store's `page` key) and their mapping to Markdown files.
//! * [`cli`] — the agent CLI shared by the `notabene` and `mdbook-notabene` binaries.

pub mod anchor;
pub mod assets;
pub mod cli;
pub mod config;
pub mod error;
pub mod git;
pub mod inject;
pub mod pages;
pub mod preprocess;
pub mod render;
pub mod resolve;
pub mod serve;
pub mod store;
pub mod text;
pub mod views;

pub use error::{Error, Result};

/// The store schema version this build reads and writes (`meta.json` `schemaVersion`).
pub const SCHEMA_VERSION: u64 = 3;
