//! The branches a hub serves: each checked out (its own clone under the data directory) and
//! built on its first request, served as `serve` serves a book, kept up to `--max-branches`
//! (the least recently used one stopped first; its clone stays for next time), and moved to the
//! remote's tip when it changes ([`Branches::refresh`]: polling, or a push the hub is told of).
//!
//! Every write to a branch's book goes through its `Publisher` (the book's gate: a commit by the
//! reviewer, pushed before the answer).
//!
//! Owns: the registry. Calls: `hub::publisher`, `hub::git`, `apps::serve` (the served book).

use super::git::Clone;
use super::publisher::Publisher;
use crate::apps::serve::{Access, Gate, Served};
use crate::model::book::Trust;
use crate::{Error, Result};
use notabene_core::say_err;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// What the hub was told to serve.
#[derive(Debug, Clone)]
pub struct Source {
    /// The remote.
    pub repo: String,
    /// The book inside the repository.
    pub book: PathBuf,
    /// Branch name patterns (`*` matches anything, `/` included).
    pub patterns: Vec<String>,
    /// Where clones live.
    pub data_dir: PathBuf,
    /// Who commits (`Name <email>`).
    pub committer: String,
    /// Branches served at once.
    pub max_branches: usize,
}

/// A branch being served.
pub(crate) struct Branch {
    /// Its name.
    pub(crate) name: String,
    publisher: Arc<Publisher>,
    served: Mutex<Option<Served>>,
    router: axum::Router,
    /// When it was last asked for (a counter, for the least recently used).
    used: AtomicU64,
}

impl Branch {
    /// The routes of its book, from its root.
    pub(crate) fn router(&self) -> axum::Router {
        self.router.clone()
    }

    /// What its last build skipped of the branch's configuration.
    pub(crate) fn skipped(&self) -> Vec<String> {
        lock(&self.served)
            .as_ref()
            .map(Served::skipped)
            .unwrap_or_default()
    }
}

/// The branches being served, by name.
pub(crate) struct Branches {
    source: Source,
    open: Mutex<BTreeMap<String, Arc<Branch>>>,
    /// Held while a branch is opened (one clone and first build at a time).
    opening: Mutex<()>,
    clock: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Whether `name` matches `pattern` (`*` matches any run of characters, `/` included).
pub fn matches(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, rest)) => {
            let Some(tail) = name.strip_prefix(head) else {
                return false;
            };
            (0..=tail.len())
                .filter(|i| tail.is_char_boundary(*i))
                .any(|i| matches(rest, &tail[i..]))
        }
    }
}

/// The directory of `branch`'s clone under `data_dir`: its name in hex, so that no branch name
/// can reach outside it or meet another's.
fn clone_dir(data_dir: &Path, branch: &str) -> PathBuf {
    let hex: String = branch.bytes().map(|b| format!("{b:02x}")).collect();
    data_dir.join("branches").join(hex)
}

impl Branches {
    /// The registry of `source` (nothing opened yet).
    pub(crate) fn new(source: Source) -> Branches {
        Branches {
            source,
            open: Mutex::new(BTreeMap::new()),
            opening: Mutex::new(()),
            clock: AtomicU64::new(0),
        }
    }

    /// What it serves.
    pub(crate) fn source(&self) -> &Source {
        &self.source
    }

    /// Whether `name` is a branch this hub may serve.
    pub(crate) fn allowed(&self, name: &str) -> bool {
        valid_branch(name) && self.source.patterns.iter().any(|p| matches(p, name))
    }

    /// The branch `name`, opened (cloned, built, served) when it is not yet; `None` when the
    /// hub does not serve it.
    pub(crate) fn get(&self, name: &str) -> Result<Option<Arc<Branch>>> {
        if !self.allowed(name) {
            return Ok(None);
        }
        let now = self.clock.fetch_add(1, Ordering::Relaxed);
        if let Some(b) = lock(&self.open).get(name) {
            b.used.store(now, Ordering::Relaxed);
            return Ok(Some(Arc::clone(b)));
        }
        let _one = lock(&self.opening);
        if let Some(b) = lock(&self.open).get(name) {
            return Ok(Some(Arc::clone(b)));
        }
        let branch = Arc::new(self.start(name, now)?);
        let evicted = {
            let mut open = lock(&self.open);
            open.insert(name.to_string(), Arc::clone(&branch));
            let mut gone = Vec::new();
            while open.len() > self.source.max_branches.max(1) {
                let oldest = open
                    .iter()
                    .min_by_key(|(_, b)| b.used.load(Ordering::Relaxed))
                    .map(|(n, _)| n.clone());
                match oldest.and_then(|n| open.remove(&n)) {
                    Some(b) => gone.push(b),
                    None => break,
                }
            }
            gone
        };
        for b in evicted {
            if let Some(served) = lock(&b.served).take() {
                let _ = served.close();
            }
        }
        Ok(Some(branch))
    }

    /// Clones (or updates) and builds the branch `name`.
    fn start(&self, name: &str, now: u64) -> Result<Branch> {
        let s = &self.source;
        let dir = clone_dir(&s.data_dir, name);
        let clone = Clone::open(&s.repo, name, &dir, &s.committer)?;
        let root = dir.join(&s.book);
        let book = crate::model::book::Book::load(&root)?;
        let rel = |p: &Path| {
            p.strip_prefix(&dir)
                .map(notabene_core::slash_path)
                .unwrap_or_default()
        };
        let store = book.store();
        let mut paths = vec![rel(store.root()), rel(&book.src_dir())];
        paths.retain(|p| !p.is_empty());
        if paths.is_empty() {
            return Err(Error::new(format!(
                "the book's store is outside the repository ({name})"
            )));
        }
        let publisher = Arc::new(Publisher::new(clone, paths));
        let gate: Arc<dyn Gate> = Arc::clone(&publisher) as Arc<dyn Gate>;
        let trust = Trust::Inert {
            checkout: dir.clone(),
        };
        let served = Served::start(&root, Access::Hub(gate), trust)?;
        Ok(Branch {
            name: name.to_string(),
            router: served.router(),
            served: Mutex::new(Some(served)),
            publisher,
            used: AtomicU64::new(now),
        })
    }

    /// The branches open now.
    pub(crate) fn opened(&self) -> Vec<Arc<Branch>> {
        lock(&self.open).values().cloned().collect()
    }

    /// Fetches every open branch and moves each whose remote tip changed to it (its book is
    /// then rebuilt by its watcher, and its readers reloaded). Errors are reported, not fatal.
    pub(crate) fn refresh(&self) {
        for b in self.opened() {
            self.follow(&b);
        }
    }

    /// [`Branches::refresh`] of the branch `name` alone (a webhook named it), if it is open.
    pub(crate) fn refresh_branch(&self, name: &str) {
        let open = lock(&self.open).get(name).cloned();
        if let Some(b) = open {
            self.follow(&b);
        }
    }

    /// Moves `b` to the remote's tip when it changed (its reader client written again).
    fn follow(&self, b: &Branch) {
        let checkout = b.publisher.clone.dir.clone();
        let root = checkout.join(&self.source.book);
        let trust = Trust::Inert { checkout };
        let refresh = || crate::output::engine::refresh_client_trusting(&root, &trust);
        if let Err(e) = b.publisher.follow(&refresh) {
            say_err!("notabene: cannot update branch {}: {e}", b.name);
        }
    }

    /// Stops every branch's server.
    pub(crate) fn close(&self) {
        let all: Vec<Arc<Branch>> = std::mem::take(&mut *lock(&self.open))
            .into_values()
            .collect();
        for b in all {
            if let Some(served) = lock(&b.served).take() {
                let _ = served.close();
            }
        }
    }
}

/// Whether `name` is a branch name git takes (`git check-ref-format --branch`'s rules, the
/// ones a URL could break: no `..`, no control characters or `~^:?*[\`, no leading `-` or `/`,
/// no `//`, no trailing `/` or `.lock`).
pub fn valid_branch(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && !name.starts_with(['-', '/', '.'])
        && !name.ends_with(['/', '.'])
        && !name.ends_with(".lock")
        && !name.contains("..")
        && !name.contains("//")
        && !name.contains("@{")
        && !name.contains("/.")
        && !name
            .chars()
            .any(|c| c.is_control() || c == ' ' || "~^:?*[\\".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_whole_names() {
        assert!(matches("main", "main"));
        assert!(!matches("main", "main2"));
        assert!(matches("review/*", "review/a/b"));
        assert!(!matches("review/*", "reviews/a"));
        assert!(matches("*", "anything/at/all"));
        assert!(matches("*-docs", "v2-docs"));
    }

    #[test]
    fn branch_names_that_could_escape_are_refused() {
        for ok in ["main", "feature/x", "v1.2", "a-b_c"] {
            assert!(valid_branch(ok), "{ok}");
        }
        for bad in [
            "", "../x", "a/../b", "-x", "/x", "x/", "a b", "a\u{7}", "x.lock", "a//b", "a/.b",
        ] {
            assert!(!valid_branch(bad), "{bad:?}");
        }
        let d = clone_dir(Path::new("/data"), "../../etc");
        assert_eq!(d, Path::new("/data/branches/2e2e2f2e2e2f657463"));
    }
}
