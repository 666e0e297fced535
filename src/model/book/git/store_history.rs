//! The history of a book's comment store, asked ahead: the commit that added each of its files
//! ([`files_added`](crate::model::book::history::files_added), one `git log` of the store) is
//! what following a comment reads first, and on a big store it is tens of milliseconds of git
//! walking its trees. A build that will likely follow comments without a memo of its decisions
//! (a first build) asks for it as soon as its store is read, on a thread of its own, so that
//! git walks while the build anchors; following then takes the answer, if it asks at all.
//!
//! Owns: [`FilesAddedAsked`] and the `Repo` methods that ask for and take the store's history.
//! Calls: `history::files_added`.

use super::Repo;
use crate::model::book::history::{self, FilesAdded};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// [`Repo::files_added`] of one directory asked ahead ([`Repo::ask_store_history`]), shared by
/// every clone of the repository, until the first [`Repo::files_added`] of that directory takes
/// it.
#[derive(Debug, Clone, Default)]
pub(super) struct FilesAddedAsked(Arc<Mutex<Option<Running>>>);

/// The directory asked about, and the thread asking git.
type Running = (String, JoinHandle<FilesAdded>);

impl Repo {
    /// Asks, on a thread of its own, for the history of the comment store at `store`: what
    /// [`Repo::files_added`] of its directory answers. Nothing is asked outside a repository.
    pub fn ask_store_history(&self, store: &std::path::Path) {
        let (Some(top), Some(dir)) = (self.root(), self.relative(store)) else {
            return;
        };
        let (top, under) = (top.to_path_buf(), dir.clone());
        let running = std::thread::spawn(move || history::files_added(&top, &under));
        let mut slot = self
            .store_history
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        *slot = Some((dir, running));
    }

    /// For every file under `dir` (relative to the repository's root, `/`-separated; empty for
    /// all) that `HEAD`'s history holds, the commit that added it ([`history::files_added`]):
    /// the answer asked ahead for `dir`, if it was, else git's now. Empty outside a repository.
    pub fn files_added(&self, dir: &str) -> FilesAdded {
        let asked = {
            let mut slot = self
                .store_history
                .0
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            slot.take_if(|(under, _)| under == dir)
        };
        match (asked, self.root()) {
            (Some((_, running)), _) => running
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            (None, Some(top)) => history::files_added(top, dir),
            (None, None) => FilesAdded::default(),
        }
    }
}
