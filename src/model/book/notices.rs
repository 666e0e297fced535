//! The configuration's warnings (an unknown key in `[preprocessor.notabene]`), printed once for
//! each book a process reads (one process may build several), by every entry point that reads
//! the book: the CLIs, the preprocessor under
//! `mdbook build`, `serve` (whose rebuilds read the book again and say nothing new).
//!
//! Owns: the set of warnings already printed. Calls: [`notabene_core::term`].

use super::Book;
use notabene_core::say_err;
use std::collections::BTreeSet;
use std::sync::Mutex;

/// The warnings this process has printed, each with the root of the book it was about.
static SAID: Mutex<BTreeSet<(std::path::PathBuf, String)>> = Mutex::new(BTreeSet::new());

/// Prints each of `book`'s configuration warnings on stderr (`notabene: warning: …`), unless
/// this process has printed it already for this book.
pub fn warn_config(book: &Book) {
    let mut said = SAID.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    for w in &book.warnings {
        if said.insert((book.root.clone(), w.clone())) {
            say_err!("notabene: warning: {w}");
        }
    }
}
