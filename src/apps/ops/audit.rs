//! The store audit (`comments verify`, the MCP `verify` tool): the contract's findings over the
//! store, the journal and meta.json, with the book's pages when there is a book, and the
//! interrupted suggested edits. Reads only; checks report and stop, they never repair.

use crate::Result;
use crate::model::book::{Book, pages};
use notabene_store::{Store, journal, verify};
use serde_json::{Value, json};

/// What the audit found.
#[derive(Debug)]
pub struct Audit {
    /// Every finding, errors and warnings.
    pub findings: Vec<verify::Finding>,
    /// How many are errors.
    pub errors: usize,
    /// How many are warnings.
    pub warnings: usize,
    /// Comment files read (unreadable and non-UTF-8 ones included).
    pub comments: usize,
    /// Journal entries read.
    pub journal: usize,
}

impl Audit {
    /// The `--json` report; `store` is the store directory as the caller shows it.
    pub fn to_json(&self, store: &str) -> Value {
        json!({
            "version": 1,
            "store": store,
            "checked": { "comments": self.comments, "journal": self.journal },
            "errors": self.errors,
            "warnings": self.warnings,
            "findings": self.findings,
        })
    }

    /// The exit code of `comments verify`: 0 clean or warnings only, 1 with errors.
    pub fn exit_code(&self) -> i32 {
        verify::exit_code(&self.findings)
    }
}

/// Audits `store` (against `book`'s pages when given); `None` when there is no store.
pub fn audit(store: &Store, book: Option<&Book>) -> Result<Option<Audit>> {
    if !store.exists() {
        return Ok(None);
    }
    // verify reads even a newer store: reporting store-schema-newer is its job.
    let snap = store.load_unchecked()?;
    let journal = journal::read(store);
    let meta = store.meta();
    let checker = book.map(pages::PageIds::new);
    let exists = |page: &str| -> bool {
        match &checker {
            Some(ids) => !ids.owns(page) || ids.source_file(page).is_some(),
            None => true,
        }
    };
    let mut findings = verify::verify(
        &snap,
        &journal,
        &meta,
        checker.as_ref().map(|_| &exists as &dyn Fn(&str) -> bool),
    );
    findings.extend(super::suggestions::interrupted(store));
    let errors = findings
        .iter()
        .filter(|f| f.level == verify::Level::Error)
        .count();
    let skipped = snap.not_utf8.iter().filter(|n| !n.dir).count();
    Ok(Some(Audit {
        warnings: findings.len() - errors,
        errors,
        comments: snap.records.len() + snap.unreadable.len() + skipped,
        journal: journal.entries().len(),
        findings,
    }))
}
