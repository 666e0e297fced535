#![doc = include_str!("../README.md")]
//!
//! # Inside
//!
//! Layout: `<store>/<page>/<id>.json` holds one comment (v2/v3); a legacy `<store>/<page>.json`
//! holds an array of comments (v1). `meta.json` and `journal.json` at the top level are reserved.
//! Readers accept both layouts; writers write one file per comment, except that a legacy array
//! member is updated in place in its array (as the original CLI does). A directory or comment file
//! whose name is not UTF-8 is skipped by every reader and reported by `verify`.
//!
//! Every read-modify-write holds the store lock ([`fsx::StoreLock`]) and every file write is atomic
//! ([`fsx::write_atomic`]).
//!
//! The [`Store`] type's methods are spread over the modules by what they do: this file locates
//! the store (its root, whether it exists, its lock); `read` lists and parses its files
//! ([`Store::load`], [`Snapshot`]); `write` creates, rewrites, moves and deletes comments;
//! `build` is a build's read, through the parse cache (`cache`); [`meta`] guards the schema
//! version. [`journal`], [`verify`], [`migrate`] and [`merge`] are the journal, the checks, the
//! migration from older layouts and git's merge driver.
//!
//! Two words of this crate:
//!
//! - A *condensed* comment ([`condense`]) is what a build keeps of a comment it reads but will
//!   not anchor: a few of its fields and a text the caller made from the whole comment
//!   ([`CondensedText`]); the caller says which comments and what ([`Condense`]).
//! - [`Recent`] is what a long-lived process's last build read of the store, so that its next
//!   build reads only the files that changed.

mod build;
pub(crate) mod cache;
pub mod comment;
pub mod condense;
pub mod fsx;
pub mod ids;
pub mod journal;
pub mod json;
pub mod merge;
pub mod meta;
pub mod migrate;
pub mod page_id;
mod read;
pub mod swap;
pub mod verify;
mod walk;
mod write;

pub use build::{CacheUpdate, ListingState, Recent};
pub use cache::FileKey;
pub use comment::{Comment, Scope, Status, UnknownStatus};
pub use condense::{Condense, CondensedText, SharedText};
pub use meta::Meta;
pub use notabene_core::{Error, ErrorKind, Result};
pub use page_id::validate_page_id;
pub use read::{NotUtf8, Snapshot, Unreadable};
pub use write::{Fresh, new_comment};

use notabene_core::bail;
use std::path::{Path, PathBuf};

/// The store schema version this build reads and writes (`meta.json` `schemaVersion`).
pub const SCHEMA_VERSION: u64 = 3;

/// Top-level file names that are not comments.
pub(crate) const RESERVED: &[&str] = &["meta.json", "journal.json"];

/// The record an `apply` in progress keeps in the store directory (see `apply::intent`): a
/// `.tmp` name, so the store's `.gitignore` keeps it out of git (a record is local to its
/// work tree), but never listed as a leftover or removed by `clean`, because the next `apply`
/// needs it to finish.
pub const APPLY_RECORD: &str = ".apply-pending.tmp";

/// A store directory.
#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
}

/// Where a comment lives on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// Its own file (v2/v3).
    File,
    /// Member `index` of a legacy v1 array file.
    Legacy {
        /// Position in the array.
        index: usize,
    },
}

/// One comment as read from the store, with where it came from.
#[derive(Debug, Clone)]
pub struct Record {
    /// Store-relative path of the file, `/`-separated.
    pub file: String,
    /// Own file or legacy array member.
    pub location: Location,
    /// The comment object (empty when the JSON value was not an object).
    pub comment: Comment,
}

impl Store {
    /// The store at `root` (which may not exist yet).
    pub fn new(root: impl Into<PathBuf>) -> Store {
        Store { root: root.into() }
    }

    /// The store directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether the store directory exists.
    pub fn exists(&self) -> bool {
        self.root.is_dir()
    }

    /// Fails with the `init` hint when the store does not exist.
    pub fn require(&self) -> Result<()> {
        if !self.exists() {
            bail!(
                "no store at {}. Run `notabene init` first.",
                self.root.display()
            );
        }
        Ok(())
    }

    /// Takes the exclusive store lock (the store must exist).
    pub fn lock(&self) -> Result<fsx::StoreLock> {
        self.require()?;
        fsx::StoreLock::acquire(&self.root)
    }
}
