//! Bounded waits on a condition. A test that must see something happen polls for it here
//! (the sleep between two looks only paces the poll); a test that must see something *not*
//! happen first waits here for what has to happen before it (a rebuild, a page load, the
//! client's own look at the change), then asserts the absence, never after a fixed sleep.

use std::time::{Duration, Instant};

/// How long [`until`] sleeps between two looks.
pub const PACE: Duration = Duration::from_millis(50);

/// Calls `look` until it returns `Some`, [`PACE`] apart, and returns that; panics naming
/// `what` when `timeout` passes first.
#[track_caller]
pub fn until<T>(timeout: Duration, what: &str, look: impl FnMut() -> Option<T>) -> T {
    until_every(timeout, PACE, what, look)
}

/// [`until`], looking every `pace`.
#[track_caller]
pub fn until_every<T>(
    timeout: Duration,
    pace: Duration,
    what: &str,
    mut look: impl FnMut() -> Option<T>,
) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = look() {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        std::thread::sleep(pace);
    }
}
