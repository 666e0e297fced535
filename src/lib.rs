//! mdbook-notabene: review comments anchored to the rendered text of an mdBook book.
//!
//! # Crates, tiers and layers
//!
//! What knows nothing of mdBook is in crates of its own, which Cargo keeps from calling up:
//! `notabene_core` (the one-line error, escaping, the cache directory's files), `notabene_store`
//! (the `.notabene` store, contract v3) and `notabene_anchoring` (the text model of a chapter and
//! anchoring on one page). This package builds on them, following the data flow, in four tiers,
//! each a folder of `src/`:
//!
//! - [`util`]: this package's helpers: the build's memo, data scripts, reading a pipe.
//! - [`model`]: a book as mdBook and git see it (`book.toml`, page ids, the repository), and
//!   the whole store anchored in it.
//! - [`output`]: what a build writes: markers and data islands, the generated pages, the
//!   embedded reader client, the mdBook preprocessor and renderer work, the embedded engine.
//! - [`apps`]: what acts for a user: the comment operations, the `serve` server, the CLI.
//!
//! Inside the tiers, modules are in layers. [`LAYERS`] is the one list, bottom up; a module imports
//! only from the layers before its own, and `tests/it/layers.rs` holds the code to it.

pub mod apps;
pub mod model;
pub mod output;
pub mod util;

pub use notabene_core::{Error, ErrorKind, Result, bail};

/// The crate's layers, bottom up, as `tier::module` paths (and `bin`, the binaries under
/// `src/bin/`). A module may import from the layers before its own, never from its own
/// layer's other modules or from a later one. Tiers are contiguous, in the order of the list.
pub const LAYERS: &[&[&str]] = &[
    &[
        "util::background",
        "util::lcs",
        "util::memo",
        "util::payload",
        "util::pipe",
    ],
    &["model::book"],
    &["model::resolve"],
    &["output::forms"],
    &["output::inject", "output::views", "output::assets"],
    &["output::reuse"],
    &["output::annotate", "output::render"],
    &["output::engine"],
    &["apps::ops"],
    &["apps::serve", "apps::mcp"],
    &["apps::hub"],
    &["apps::cli"],
    &["bin"],
];
