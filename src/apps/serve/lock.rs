//! One policy for poisoned locks in `serve`: a lock a panicking thread held (a request handler, a
//! rebuild, an island patch) is taken anyway, with the state that thread left, and the first such
//! recovery is reported once on stderr. The state behind every lock of `serve` is whole after each
//! statement that changes it (a path, a page map, counters), so one panicking rebuild or request
//! never fails the requests after it.

use notabene_core::say_err;
use std::sync::{Mutex, MutexGuard, Once, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Locks `m`, recovering it when a panic poisoned it.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(recover)
}

/// Read-locks `l`, recovering it when a panic poisoned it.
pub(crate) fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(recover)
}

/// Write-locks `l`, recovering it when a panic poisoned it.
pub(crate) fn write<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(recover)
}

/// The guard of a poisoned lock; the first recovery in the process is reported.
fn recover<G>(poisoned: PoisonError<G>) -> G {
    static REPORTED: Once = Once::new();
    REPORTED.call_once(|| {
        say_err!(
            "notabene: a request or rebuild panicked while it held a lock; serving on with the state it left (serve)"
        );
    });
    poisoned.into_inner()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Runs `f` on another thread and asserts that it panicked.
    fn panicking<F: FnOnce() + Send>(f: F) {
        std::thread::scope(|s| assert!(s.spawn(f).join().is_err(), "the holder panicked"));
    }

    #[test]
    fn poisoned_locks_are_recovered_with_the_state_they_hold() {
        let m = Mutex::new(1);
        let l = RwLock::new(vec!["a"]);
        panicking(|| {
            let mut g = m.lock().unwrap();
            *g = 2;
            panic!("a panicking holder of the mutex (expected in this test)");
        });
        panicking(|| {
            let mut g = l.write().unwrap();
            g.push("b");
            panic!("a panicking holder of the rwlock (expected in this test)");
        });
        assert!(m.is_poisoned() && l.is_poisoned());
        assert_eq!(*lock(&m), 2);
        assert_eq!(*read(&l), ["a", "b"]);
        *lock(&m) = 3;
        write(&l).push("c");
        assert_eq!((*lock(&m), read(&l).clone()), (3, vec!["a", "b", "c"]));
    }
}
