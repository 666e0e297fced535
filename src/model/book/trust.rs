//! How far a book's own configuration is followed when it is built: all of it (the author's
//! own book), or as the hub builds a branch whose content may be hostile (`output::engine`'s
//! inert builds).
//!
//! Owns: [`Trust`]. Calls: nothing.

use std::path::PathBuf;

/// How far a book's own configuration is followed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Trust {
    /// As `mdbook build` would follow it: every preprocessor and renderer it names runs.
    #[default]
    Full,
    /// A branch the hub serves: only mdBook's own preprocessors, its HTML renderer and
    /// notabene run, the default theme, nothing read outside `checkout`.
    Inert {
        /// The repository's work tree.
        checkout: PathBuf,
    },
}
