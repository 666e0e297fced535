//! A deterministic parallel map on scoped threads: store reads, anchoring, injection and the
//! /comments list all fan out through it.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Maps `f` over `items` on up to `threads` threads; results keep the order of `items`, so
/// the output is identical whatever the thread count. Items are handed out one at a time as
/// threads become free (chapters differ in cost by a hundred times: halves fixed in advance
/// leave one thread idle).
pub fn par_map<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return items.iter().map(&f).collect();
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::with_capacity(items.len() / threads + 1);
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else {
                return done;
            };
            done.push((i, f(item)));
        }
    };
    let done: Vec<Vec<(usize, R)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads).map(|_| scope.spawn(work)).collect();
        (handles.into_iter())
            .map(|h| h.join().expect("parallel worker panicked"))
            .collect()
    });
    // Each thread's results are in the items' order: merged, item by item, from the one
    // that mapped it (no slot per item to fill and empty: a big store's read maps thousands).
    let mut done: Vec<_> = (done.into_iter())
        .map(|d| d.into_iter().peekable())
        .collect();
    let mut out = Vec::with_capacity(items.len());
    for i in 0..items.len() {
        let r = (done.iter_mut())
            .find_map(|d| d.next_if(|(at, _)| *at == i))
            .map(|(_, r)| r)
            .expect("every item was mapped");
        out.push(r);
    }
    out
}

/// The number of threads worth using here (`available_parallelism`).
pub fn default_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_order_of_the_items_whatever_the_threads() {
        let items: Vec<u64> = (0..500).collect();
        // Uneven costs, so that threads finish out of order.
        let f = |&x: &u64| (0..(x % 7) * 2_000).fold(x, |a, b| a.wrapping_mul(31).wrapping_add(b));
        let one = par_map(&items, 1, f);
        for threads in [2, 3, 8, 1000] {
            assert_eq!(par_map(&items, threads, f), one, "{threads} threads");
        }
        assert_eq!(par_map(&[] as &[u64], 4, f), Vec::<u64>::new());
    }
}
