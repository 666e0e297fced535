//! Polled rebuilds for `serve`: snapshots of the watched files, a debounce, a build into a
//! fresh directory through the engine, the swap, and a wake-up for pages waiting on the build
//! generation. Nothing is written into the build directory once the server stops
//! (`Site::stopped`). Part of the serve layer.

use super::Site;
use crate::util::term::say_err;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// File state the watcher compares: (modified, length) by path.
pub(super) type Snapshot = BTreeMap<PathBuf, (Option<SystemTime>, u64)>;

/// Files whose changes trigger a rebuild: (path, modified, length), sorted.
pub(super) fn snapshot(paths: &[PathBuf]) -> Snapshot {
    let mut out = BTreeMap::new();
    fn walk(p: &Path, out: &mut Snapshot) {
        let Ok(meta) = std::fs::symlink_metadata(p) else {
            return;
        };
        if meta.is_dir() {
            if let Ok(rd) = std::fs::read_dir(p) {
                for e in rd.flatten() {
                    walk(&e.path(), out);
                }
            }
        } else if meta.is_file() {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            // Temp files of atomic writes come and go; only their result matters.
            if !name.ends_with(".tmp") {
                out.insert(p.to_path_buf(), (meta.modified().ok(), meta.len()));
            }
        }
    }
    for p in paths {
        walk(p, &mut out);
    }
    out
}

/// Lowers this thread's scheduling priority (and that of the threads it starts, the
/// build's workers): on a busy machine the server answers requests first and the rebuild
/// takes what is left (Linux: nice is per thread).
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority has no memory effects; `0` names the calling thread on Linux.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 10);
    }
}

/// What island patching needs: the store, the book's space, and the pages the API names
/// after its writes.
pub(super) struct Patching {
    pub store: crate::store::Store,
    pub space: String,
    /// (page, the written comment's file key and what happened to it) of each write; no
    /// key: read the page whole.
    pub wake: std::sync::mpsc::Receiver<super::Hint>,
}

/// Starts the watcher thread: poll, debounce, rebuild into `work/site-N`, swap, wake waiting
/// pages. `initial` is the state the first build saw.
///
/// A change of comment files alone is also patched into the served chapters' islands at
/// once ([`super::patch`]), before the debounce: the API names the page of each write on
/// `wake`, and a comment file changed by another process is patched within a poll.
pub(super) fn spawn(
    site: Arc<Site>,
    root: &Path,
    work: &Path,
    watched: Vec<PathBuf>,
    initial: Snapshot,
    patching: Patching,
) {
    {
        let root = root.to_path_buf();
        let work_dir = work.to_path_buf();
        std::thread::spawn(move || {
            lower_priority();
            let mut last = initial;
            let mut n = 1u64;
            let patch = |site: &Site, pages: &super::patch::Changes| {
                if pages.is_empty() {
                    return;
                }
                let stopped = site.stopped.lock().unwrap_or_else(|e| e.into_inner());
                if *stopped {
                    return;
                }
                let dir = site.dir.read().expect("site lock").clone();
                let chapters = site.pages.read().expect("pages lock").clone();
                match super::patch::patch_islands(
                    &dir,
                    &chapters,
                    &patching.store,
                    &patching.space,
                    pages,
                ) {
                    Ok(0) => {}
                    Ok(_) => site.generation.send_modify(|g| {
                        *g += 1;
                        *site.last_patch.lock().expect("patch lock") =
                            Some((*g, pages.keys().cloned().collect()));
                    }),
                    Err(e) => say_err!("notabene: {e}"),
                }
                drop(stopped);
            };
            // Pages the API named since the last snapshot: already patched, so the snapshot's
            // own diff leaves them alone.
            let hinted: std::cell::RefCell<BTreeSet<String>> = Default::default();
            // Pages named during a storm of writes, patched once it calms.
            let deferred: std::cell::RefCell<super::patch::Changes> = Default::default();
            // Waits `total`, patching the pages the API names as they come, a burst of writes
            // at a time.
            let wait = |site: &Site, total: Duration| {
                let end = Instant::now() + total;
                let mut heard = false;
                loop {
                    let left = end.saturating_duration_since(Instant::now());
                    let Ok(first) = patching.wake.recv_timeout(left) else {
                        // A whole wait without a write: what a storm left is patched in.
                        if !heard {
                            let pages = deferred.take();
                            patch(site, &pages);
                        }
                        return;
                    };
                    heard = true;
                    // More writes are gathered until 100 ms pass without one (400 ms at most):
                    // a lone write is patched in soon, a storm of them a few times a second.
                    // (Slept, then drained: the thread wakes a few times per batch, not once
                    // per write.)
                    // A storm (writes still coming after 400 ms) is not patched while it
                    // lasts: it is patched in once it calms, and rebuilt after that.
                    let mut hints = vec![first];
                    let gather = Instant::now() + Duration::from_millis(400).min(left);
                    let calm = loop {
                        std::thread::sleep(
                            Duration::from_millis(100)
                                .min(gather.saturating_duration_since(Instant::now())),
                        );
                        let before = hints.len();
                        hints.extend(patching.wake.try_iter());
                        if hints.len() == before {
                            break true;
                        }
                        if Instant::now() >= gather {
                            break false;
                        }
                    };
                    let mut pages = deferred.take();
                    for (page, key) in hints {
                        let slot = pages.entry(page).or_insert_with(|| Some(BTreeMap::new()));
                        match (slot, key) {
                            (Some(keys), Some((key, kind))) => {
                                // A comment created then changed in one batch is still new.
                                let k = keys.entry(key).or_insert(kind);
                                if *k != super::patch::Kind::Created
                                    || kind == super::patch::Kind::Removed
                                {
                                    *k = kind;
                                }
                            }
                            (slot, _) => *slot = None,
                        }
                    }
                    hinted.borrow_mut().extend(pages.keys().cloned());
                    if calm {
                        patch(site, &pages);
                    } else {
                        deferred.replace(pages);
                    }
                }
            };
            // Comment files changed by others (an agent's CLI): patched once seen.
            let quick = |site: &Site, before: &Snapshot, after: &Snapshot| {
                let done = std::mem::take(&mut *hinted.borrow_mut());
                if let Some(mut pages) =
                    super::patch::changed_pages(before, after, patching.store.root())
                {
                    pages.retain(|page, _| !done.contains(page));
                    patch(site, &pages);
                }
            };
            loop {
                wait(&site, Duration::from_millis(200));
                let now = snapshot(&watched);
                if now == last {
                    continue;
                }
                quick(&site, &last, &now);
                // Debounce: wait until the tree is quiet for 300 ms.
                let mut settled = now;
                let start = Instant::now();
                loop {
                    wait(&site, Duration::from_millis(300));
                    let again = snapshot(&watched);
                    if again == settled || start.elapsed() > Duration::from_secs(5) {
                        break;
                    }
                    quick(&site, &settled, &again);
                    settled = again;
                }
                last = settled;
                // The build reads the store as it is now: what a storm left is in it.
                deferred.take();
                let stopped = site.stopped.lock().unwrap_or_else(|e| e.into_inner());
                if *stopped {
                    return;
                }
                let dest = work_dir.join(format!("site-{n}"));
                n += 1;
                match crate::engine::build_into(&root, &dest, &site.reuse) {
                    Ok(pages) => {
                        *site.last_build.lock().expect("build counts lock") = site.reuse.counts();
                        let old =
                            std::mem::replace(&mut *site.dir.write().expect("site lock"), dest);
                        *site.pages.write().expect("pages lock") = pages;
                        site.generation.send_modify(|g| {
                            *g += 1;
                            let mut b = site.builds.lock().expect("builds lock");
                            *b = (b.0 + 1, *g);
                        });
                        let _ = std::fs::remove_dir_all(old);
                    }
                    Err(e) => say_err!("notabene: {e}"),
                }
                drop(stopped);
            }
        });
    }
}
