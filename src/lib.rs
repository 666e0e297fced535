//! mdbook-notabene: review comments anchored to the rendered text of an mdBook book.
//!
//! # Tiers and layers
//!
//! The code follows the data flow, in four tiers, each a folder of `src/`:
//!
//! - [`base`]: what knows nothing of mdBook: the shared helpers, the `.notabene` store, the
//!   text model of a chapter, and anchoring on one page.
//! - [`model`]: a book as mdBook and git see it (`book.toml`, page ids, the repository), and
//!   the whole store anchored in it.
//! - [`output`]: what a build writes: markers and data islands, the generated pages, the
//!   embedded reader client, the mdBook preprocessor and renderer work, the embedded engine.
//! - [`apps`]: what acts for a user: the comment operations, the `serve` server, the CLI.
//!
//! Inside the tiers, modules are in layers. [`LAYERS`] is the one list, bottom up; a module imports
//! only from the layers before its own, and `tests/it/layers.rs` holds the code to it.

pub mod apps;
pub mod base;
pub mod model;
pub mod output;

pub use base::util::error::{Error, Result};

/// The crate's layers, bottom up, as `tier::module` paths (and `bin`, the binaries under
/// `src/bin/`). A module may import from the layers before its own, never from its own
/// layer's other modules or from a later one. Tiers are contiguous, in the order of the list.
pub const LAYERS: &[&[&str]] = &[
    &["base::util"],
    &["base::store"],
    &["base::text"],
    &["base::anchor"],
    &["model::book"],
    &["model::resolve"],
    &["output::inject", "output::views", "output::assets"],
    &["output::annotate", "output::render"],
    &["output::engine"],
    &["apps::ops"],
    &["apps::serve", "apps::mcp"],
    &["apps::cli"],
    &["bin"],
];
