//! What a long-lived process keeps of its last build, item by item (`serve`'s rebuilds): a map
//! from an item's name (a chapter's source file) to what was computed for it, under the
//! [`Digest`] of everything it was computed from (the memo's keys, [`crate::util::memo::Key`]),
//! and how many items the last build reused and computed. Only the last build is kept: an item
//! the build did not name is forgotten.
//!
//! A build [`LastBuild::take`]s the map, looks items up in it while it works (a value is reused
//! only under the same digest), and [`LastBuild::keep`]s what each item left: reused (moved over
//! from the taken map), computed anew, or nothing.
//!
//! Owns: the last build's items and counts. Calls: nothing.

use crate::util::memo::Digest;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

/// What one item of a build leaves for the next.
#[derive(Debug)]
pub(crate) enum Keep<V> {
    /// Taken from the last build: kept as it was.
    Reused,
    /// Computed now from what the digest says: kept for the next build.
    New(Digest, V),
    /// Computed now, nothing to keep.
    Nothing,
}

/// The last build's items, each under the digest of its inputs.
pub(crate) type Items<V> = HashMap<String, (Digest, V)>;

/// The last build's items.
#[derive(Debug)]
pub(crate) struct LastBuild<V> {
    state: Mutex<State<V>>,
}

#[derive(Debug)]
struct State<V> {
    items: Items<V>,
    /// Items the last build reused, and items it computed.
    counts: (usize, usize),
}

impl<V> Default for LastBuild<V> {
    fn default() -> Self {
        LastBuild {
            state: Mutex::new(State {
                items: HashMap::new(),
                counts: (0, 0),
            }),
        }
    }
}

impl<V> LastBuild<V> {
    /// The state, also after a panic in another build (what it holds is whole: every change
    /// is one assignment).
    fn state(&self) -> MutexGuard<'_, State<V>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A build starts: its counts are zero until it keeps what it did.
    pub(crate) fn begin(&self) {
        self.state().counts = (0, 0);
    }

    /// The last build's items, taken out: [`LastBuild::keep`] puts back what the build leaves.
    pub(crate) fn take(&self) -> Items<V> {
        std::mem::take(&mut self.state().items)
    }

    /// Keeps what each item of this build left (`taken` is what [`LastBuild::take`] gave it:
    /// reused items are moved over from it), and counts them.
    pub(crate) fn keep(
        &self,
        mut taken: Items<V>,
        left: impl IntoIterator<Item = (String, Keep<V>)>,
    ) {
        let mut items = HashMap::new();
        let mut counts = (0, 0);
        for (name, keep) in left {
            match keep {
                Keep::Reused => {
                    counts.0 += 1;
                    if let Some(v) = taken.remove(&name) {
                        items.insert(name, v);
                    }
                }
                Keep::New(digest, v) => {
                    counts.1 += 1;
                    items.insert(name, (digest, v));
                }
                Keep::Nothing => counts.1 += 1,
            }
        }
        let mut state = self.state();
        state.items = items;
        state.counts = counts;
    }

    /// The last build's items: how many it reused, how many it computed.
    pub(crate) fn counts(&self) -> (usize, usize) {
        self.state().counts
    }
}

/// The value of `items` named `name` when it was computed from what `digest` says.
pub(crate) fn get<'a, V>(items: &'a Items<V>, name: &str, digest: &Digest) -> Option<&'a V> {
    items.get(name).filter(|(d, _)| d == digest).map(|(_, v)| v)
}

/// What one build leaves for the next, item by item, gathered from the threads computing it
/// (then handed to [`LastBuild::keep`]).
pub(super) struct Left<V>(Mutex<Vec<(String, Keep<V>)>>);

impl<V> Default for Left<V> {
    fn default() -> Self {
        Left(Mutex::default())
    }
}

impl<V> Left<V> {
    /// What the item `source` leaves.
    pub(super) fn push(&self, source: &str, keep: Keep<V>) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((source.to_string(), keep));
    }

    /// Everything left, in the order it was left.
    pub(super) fn into_items(self) -> Vec<(String, Keep<V>)> {
        self.0.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(s: &str) -> Digest {
        Digest::of_test_text(s)
    }

    #[test]
    fn keeps_the_last_build_under_its_digests() {
        let last: LastBuild<&str> = LastBuild::default();
        assert!(last.take().is_empty());
        last.keep(
            HashMap::new(),
            [
                ("a".into(), Keep::New(digest("a"), "A")),
                ("b".into(), Keep::New(digest("b"), "B")),
            ],
        );
        assert_eq!(last.counts(), (0, 2));
        // The next build: `a` reused, `b` computed again, `c` new with nothing to keep; `b`'s
        // old value is dropped.
        let taken = last.take();
        assert_eq!(get(&taken, "a", &digest("a")), Some(&"A"));
        assert_eq!(get(&taken, "a", &digest("other inputs")), None);
        last.keep(
            taken,
            [
                ("a".into(), Keep::Reused),
                ("b".into(), Keep::New(digest("b2"), "B2")),
                ("c".into(), Keep::Nothing),
            ],
        );
        assert_eq!(last.counts(), (1, 2));
        let mut kept: Vec<_> = last.take().into_iter().map(|(k, (_, v))| (k, v)).collect();
        kept.sort();
        assert_eq!(kept, [("a".to_string(), "A"), ("b".to_string(), "B2")]);
        last.begin();
        assert_eq!(last.counts(), (0, 0));
    }
}
