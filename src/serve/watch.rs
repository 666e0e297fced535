//! Polled rebuilds for `serve`: snapshots of the watched files, a debounce, a build into a
//! fresh directory through the engine, the swap, and a wake-up for pages waiting on the build
//! generation. Part of the serve layer.

use super::Site;
use std::collections::BTreeMap;
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

/// Starts the watcher thread: poll, debounce, rebuild into `work/site-N`, swap, wake waiting
/// pages. `initial` is the state the first build saw.
pub(super) fn spawn(
    site: Arc<Site>,
    root: &Path,
    work: &Path,
    watched: Vec<PathBuf>,
    initial: Snapshot,
) {
    {
        let root = root.to_path_buf();
        let work_dir = work.to_path_buf();
        std::thread::spawn(move || {
            lower_priority();
            let mut last = initial;
            let mut n = 1u64;
            loop {
                std::thread::sleep(Duration::from_millis(200));
                let now = snapshot(&watched);
                if now == last {
                    continue;
                }
                // Debounce: wait until the tree is quiet for 300 ms.
                let mut settled = now;
                let start = Instant::now();
                loop {
                    std::thread::sleep(Duration::from_millis(300));
                    let again = snapshot(&watched);
                    if again == settled || start.elapsed() > Duration::from_secs(5) {
                        break;
                    }
                    settled = again;
                }
                last = settled;
                let dest = work_dir.join(format!("site-{n}"));
                n += 1;
                match crate::engine::build_into(&root, &dest) {
                    Ok(pages) => {
                        let old =
                            std::mem::replace(&mut *site.dir.write().expect("site lock"), dest);
                        *site.pages.write().expect("pages lock") = pages;
                        *site.builds.lock().expect("builds lock") += 1;
                        site.generation.send_modify(|g| *g += 1);
                        let _ = std::fs::remove_dir_all(old);
                    }
                    Err(e) => eprintln!("notabene: {e}"),
                }
            }
        });
    }
}
