//! mdbook-notabene: review comments anchored to the rendered text of an mdBook book.
//!
//! # Layers
//!
//! The modules follow the data flow, in layers; a module imports only from layers below its
//! own (and from inside its own module). [`LAYERS`] is the list, bottom up, and
//! `tests/it/layers.rs` holds the code to it.
//!
//! | layer | modules | owns |
//! |---|---|---|
//! | 0 | [`util`] | the error type, parallel map, base-36 ids, HTML / script-JSON / terminal escaping, the escaped human-readable output, paths |
//! | 1 | [`store`] | the `.notabene` store (contract v3): reads, locked atomic writes, journal, verify, migrate, page-id validation |
//! | 2 | [`text`] | the text model: a chapter's Markdown → its rendered text, mapped to Markdown bytes |
//! | 3 | [`anchor`] | re-finding one page's anchors in its text (exact, fuzzy, orphan) |
//! | 4 | [`book`] | `book.toml` and the notabene table, page ids, the git repository |
//! | 5 | [`resolve`] | a book and a store → anchored chapters; the build report |
//! | 6 | [`inject`], [`views`], [`assets`] | markers and data islands; /review /comments /journal; the embedded reader client |
//! | 7 | [`preprocess`], [`render`] | the mdBook adaptors (preprocessor, `comments.json` renderer) |
//! | 8 | [`engine`] | the embedded mdBook: load, build, preprocess-only pass |
//! | 9 | [`apply`] | suggested edits written into the book's Markdown, their comments closed |
//! | 10 | [`serve`] | the loopback server: rebuilds, static site, guarded write API |
//! | 11 | [`cli`] | the agent CLI shared by both binaries |
//! | 12 | `src/bin/` | the binaries; the mdBook stdin protocols are dispatched there |

pub mod anchor;
pub mod apply;
pub mod assets;
pub mod book;
pub mod cli;
pub mod engine;
pub mod inject;
pub mod ops;
pub mod preprocess;
pub mod render;
pub mod resolve;
pub mod serve;
pub mod store;
pub mod text;
pub mod util;
pub mod views;

pub use util::error::{Error, Result};

/// The crate's layers, bottom up: the top-level modules of each. A module may import from
/// the layers before its own, never from its own layer's other modules or from a later one.
/// `bin` is the binaries under `src/bin/`.
pub const LAYERS: &[&[&str]] = &[
    &["util"],
    &["store"],
    &["text"],
    &["anchor"],
    &["book"],
    &["resolve"],
    &["inject", "views", "assets"],
    &["preprocess", "render"],
    &["engine"],
    &["apply"],
    &["ops"],
    &["serve"],
    &["cli"],
    &["bin"],
];
