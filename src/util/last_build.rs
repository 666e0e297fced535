//! What a long-lived process keeps of its last build, item by item (`serve`'s rebuilds): a map from
//! an item's key (a chapter's source file) to what was computed for it, valid only under the
//! settings it was computed with, and how many items the last build reused and computed. Only the
//! last build is kept: an item the build did not name is forgotten.
//!
//! A build [`LastBuild::take`]s the map (empty when the settings changed), looks items up in it
//! while it works, and [`LastBuild::keep`]s what each item left: reused (moved over from the taken
//! map), computed anew, or nothing.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

/// What one item of a build leaves for the next.
#[derive(Debug)]
pub enum Keep<V> {
    /// Taken from the last build: kept as it was.
    Reused,
    /// Computed now: kept for the next build.
    New(V),
    /// Computed now, nothing to keep.
    Nothing,
}

/// The last build's items under its settings `S`.
#[derive(Debug)]
pub struct LastBuild<S, V> {
    state: Mutex<State<S, V>>,
}

#[derive(Debug)]
struct State<S, V> {
    settings: Option<S>,
    items: HashMap<String, V>,
    /// Items the last build reused, and items it computed.
    counts: (usize, usize),
}

impl<S, V> Default for LastBuild<S, V> {
    fn default() -> Self {
        LastBuild {
            state: Mutex::new(State {
                settings: None,
                items: HashMap::new(),
                counts: (0, 0),
            }),
        }
    }
}

impl<S: PartialEq, V> LastBuild<S, V> {
    /// The state, also after a panic in another build (what it holds is whole: every change
    /// is one assignment).
    fn state(&self) -> MutexGuard<'_, State<S, V>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A build starts: its counts are zero until it keeps what it did.
    pub fn begin(&self) {
        self.state().counts = (0, 0);
    }

    /// The last build's items, when they were computed under `settings` (else none). Taken
    /// out: [`LastBuild::keep`] puts back what the build leaves.
    pub fn take(&self, settings: &S) -> HashMap<String, V> {
        let mut state = self.state();
        let items = std::mem::take(&mut state.items);
        if state.settings.as_ref() == Some(settings) {
            items
        } else {
            HashMap::new()
        }
    }

    /// Keeps, under `settings`, what each item of this build left (`taken` is what
    /// [`LastBuild::take`] gave it: reused items are moved over from it), and counts them.
    pub fn keep<'a>(
        &self,
        settings: S,
        mut taken: HashMap<String, V>,
        left: impl IntoIterator<Item = (&'a str, Keep<V>)>,
    ) {
        let mut items = HashMap::new();
        let mut counts = (0, 0);
        for (key, keep) in left {
            match keep {
                Keep::Reused => {
                    counts.0 += 1;
                    if let Some(v) = taken.remove(key) {
                        items.insert(key.to_string(), v);
                    }
                }
                Keep::New(v) => {
                    counts.1 += 1;
                    items.insert(key.to_string(), v);
                }
                Keep::Nothing => counts.1 += 1,
            }
        }
        let mut state = self.state();
        state.settings = Some(settings);
        state.items = items;
        state.counts = counts;
    }

    /// The last build's items: how many it reused, how many it computed.
    pub fn counts(&self) -> (usize, usize) {
        self.state().counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_build_under_its_settings() {
        let last: LastBuild<u8, &str> = LastBuild::default();
        assert!(last.take(&1).is_empty());
        last.keep(
            1,
            HashMap::new(),
            [("a", Keep::New("A")), ("b", Keep::New("B"))],
        );
        assert_eq!(last.counts(), (0, 2));
        // The next build under the same settings: `a` reused, `b` computed again, `c` new
        // with nothing to keep; `b`'s old value is dropped.
        let taken = last.take(&1);
        assert_eq!(taken.len(), 2);
        last.keep(
            1,
            taken,
            [
                ("a", Keep::Reused),
                ("b", Keep::New("B2")),
                ("c", Keep::Nothing),
            ],
        );
        assert_eq!(last.counts(), (1, 2));
        let mut kept: Vec<_> = last.take(&1).into_iter().collect();
        kept.sort();
        assert_eq!(kept, [("a".to_string(), "A"), ("b".to_string(), "B2")]);
        // Other settings: nothing is given back.
        last.keep(1, HashMap::new(), [("a", Keep::New("A"))]);
        assert!(last.take(&2).is_empty());
        last.begin();
        assert_eq!(last.counts(), (0, 0));
    }
}
