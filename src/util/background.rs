//! Work no one waits for: threads at a lower priority, and values freed on a thread of their
//! own, so that what a user waits for (a served page, the book mdBook renders) is not slowed.
//!
//! Owns nothing of the product's data. Calls: `libc` (Linux only; elsewhere priorities are
//! left as they are).

/// The nice value of `serve`'s rebuilds: requests are answered first.
pub const REBUILD: i32 = 10;

/// The nice value of work worth doing only when nothing else wants the processor.
pub const IDLE: i32 = 19;

/// Lowers the calling thread's scheduling priority to `nice` (and that of the threads it
/// starts after). Linux only (nice is per thread there); elsewhere it does nothing.
pub fn lower_this_thread(nice: i32) {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority has no memory effects; `0` names the calling thread on Linux.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, nice);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = nice;
}

/// Frees `value` on a short-lived thread at the lowest priority (inline if none can be
/// started): a big book's anchoring — thousands of parsed comments, a text model per chapter —
/// takes milliseconds to free, which the build's last steps (and then mdBook) spend better; a
/// one-shot build's process ends without waiting for it.
pub fn drop_in_background<T: Send + 'static>(value: T) {
    // On failure the closure, and `value` with it, is dropped right here.
    let _ = std::thread::Builder::new()
        .name("notabene-free".into())
        .spawn(move || {
            lower_this_thread(IDLE);
            drop(value)
        });
}
