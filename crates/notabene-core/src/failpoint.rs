//! Crash points for the crash-safety tests: `NOTABENE_FAILPOINT=NAME` (or `NAME@N`, the N-th time
//! the point is reached in this process) aborts the process at the point named, as a `kill -9`
//! would. Compiled only with the `failpoints` cargo feature: without it (release builds, `cargo
//! install`) [`hit`] is an empty function and the variable is never read.

/// The environment variable that names the point to crash at.
pub const ENV: &str = "NOTABENE_FAILPOINT";

/// Aborts the process when `NOTABENE_FAILPOINT` names `point` (see the module docs).
#[cfg(feature = "failpoints")]
pub fn hit(point: &str) {
    use std::collections::BTreeMap;
    use std::sync::Mutex;
    static HITS: Mutex<BTreeMap<String, usize>> = Mutex::new(BTreeMap::new());
    let Ok(want) = std::env::var(ENV) else {
        return;
    };
    let (name, nth) = match want.split_once('@') {
        Some((n, k)) => (n, k.parse::<usize>().unwrap_or(1)),
        None => (want.as_str(), 1),
    };
    if name != point {
        return;
    }
    let mut hits = HITS.lock().unwrap_or_else(|p| p.into_inner());
    let count = hits.entry(point.to_string()).or_insert(0);
    *count += 1;
    if *count == nth {
        std::process::abort();
    }
}

/// Without the `failpoints` feature: nothing.
#[cfg(not(feature = "failpoints"))]
#[inline(always)]
pub fn hit(_point: &str) {}

/// The environment variable that widens a race window: `NOTABENE_WIDEN=NAME:MS` sleeps `MS`
/// milliseconds each time point `NAME` is reached (feature `failpoints`), so a test can write
/// into a window that is otherwise microseconds wide.
pub const WIDEN_ENV: &str = "NOTABENE_WIDEN";

/// Sleeps at `point` when `NOTABENE_WIDEN` names it (see [`WIDEN_ENV`]).
#[cfg(feature = "failpoints")]
pub fn widen(point: &str) {
    let Ok(want) = std::env::var(WIDEN_ENV) else {
        return;
    };
    if let Some((name, ms)) = want.split_once(':')
        && name == point
        && let Ok(ms) = ms.parse::<u64>()
    {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

/// Without the `failpoints` feature: nothing.
#[cfg(not(feature = "failpoints"))]
#[inline(always)]
pub fn widen(_point: &str) {}
