//! `meta.json`: the store's schema version, read (never through a symlink, a regular file of at
//! most [`fsx::MAX_META`] bytes), checked before every read and write of the store, and raised
//! by writers.
//!
//! Owns: [`Meta`], [`Store::meta`], [`Store::check_compatible`], [`Store::ensure_meta`].
//! Calls: [`fsx`] for the bounded read and the atomic write, [`json`] for the text.

use super::{SCHEMA_VERSION, Store, fsx, json};
use crate::{Result, bail};
use serde_json::Value;
use std::path::Path;

/// The file name of the schema stamp at the top of the store.
pub const FILE: &str = "meta.json";

/// What `meta.json` says.
#[derive(Debug, Clone, PartialEq)]
pub enum Meta {
    /// No `meta.json`.
    Missing,
    /// A regular file that does not parse, or without a numeric `schemaVersion`.
    Invalid,
    /// Not readable as the store's `meta.json`: not a regular file (a directory, a symlink, a
    /// FIFO…), over [`fsx::MAX_META`], or an I/O error. What it is, as the rest of a sentence
    /// naming it ([`fsx::ReadFailure::describe`]). The schema version cannot be checked, so
    /// the store is neither read nor written.
    Unreadable(String),
    /// The numeric `schemaVersion`.
    Version(f64),
}

impl Store {
    /// Reads `meta.json`.
    pub fn meta(&self) -> Meta {
        let bytes = match fsx::read_in(&self.root, Path::new(FILE), fsx::MAX_META) {
            Ok(f) => f.bytes,
            Err(fsx::ReadFailure::Missing) => return Meta::Missing,
            Err(e) => return Meta::Unreadable(e.describe()),
        };
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(v) => match v.get("schemaVersion").and_then(Value::as_f64) {
                Some(n) => Meta::Version(n),
                None => Meta::Invalid,
            },
            Err(_) => Meta::Invalid,
        }
    }

    /// Refuses a store whose `schemaVersion` is newer than this build understands, or whose
    /// `meta.json` cannot be read ([`Meta::Unreadable`]).
    pub fn check_compatible(&self) -> Result<()> {
        match self.meta() {
            Meta::Version(v) if v > SCHEMA_VERSION as f64 => bail!(
                "store schemaVersion {} is newer than this mdbook-notabene supports ({SCHEMA_VERSION}) — upgrade mdbook-notabene; refusing to read or write an unknown store shape ({})",
                json::js_number(v),
                self.root.join(FILE).display()
            ),
            Meta::Unreadable(what) => bail!(
                "{FILE} {what}: its schema version cannot be checked — refusing to read or write the store ({})",
                self.root.join(FILE).display()
            ),
            _ => Ok(()),
        }
    }

    /// Raises `meta.json` to the current schema version (never lowers it; leaves an invalid
    /// file alone for `verify` to report, and refuses an unreadable one, writing nothing). Call
    /// with the lock held.
    pub fn ensure_meta(&self) -> Result<()> {
        let raise = match self.meta() {
            Meta::Missing => true,
            Meta::Version(v) => v < SCHEMA_VERSION as f64,
            Meta::Invalid => false,
            Meta::Unreadable(_) => return self.check_compatible(),
        };
        if raise {
            let meta = serde_json::json!({ "schemaVersion": SCHEMA_VERSION });
            fsx::write_atomic(
                &self.root,
                Path::new(FILE),
                json::to_js_pretty(&meta).as_bytes(),
            )?;
        }
        Ok(())
    }
}
