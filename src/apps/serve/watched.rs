//! What the watcher knows of the watched files: a [`FileStamps`] of their [`Stamp`]s, brought up
//! to date for the paths the OS's file events name ([`refreshed`]), and the events themselves
//! ([`Events`], through `notify`; polling where no native watcher can be set up, with the
//! reason, [`Unwatched`]). When to rebuild and what to build is `watch`'s.
//!
//! May call: `notify`, the file system, `lock`.

use super::lock;
use notabene_core::say_err;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// File state the watcher compares: (modified, length) by path.
pub(super) type FileStamps = BTreeMap<PathBuf, Stamp>;

/// What tells a watched file's versions apart without reading it: its modification time, its
/// length and (on Unix) its change time and inode, which a rewrite that keeps the first two
/// (`cp -p`, `rsync -t`, an atomic rename of a file so made) still moves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Stamp {
    /// The modification time.
    pub(super) modified: Option<SystemTime>,
    /// The length in bytes.
    pub(super) len: u64,
    /// The change time (seconds, nanoseconds) and the inode (Unix; else zeros).
    changed: (i64, i64, u64),
}

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Stamp {
        #[cfg(unix)]
        let changed = {
            use std::os::unix::fs::MetadataExt;
            (meta.ctime(), meta.ctime_nsec(), meta.ino())
        };
        #[cfg(not(unix))]
        let changed = (0, 0, 0);
        Stamp {
            modified: meta.modified().ok(),
            len: meta.len(),
            changed,
        }
    }
}

/// Files whose changes trigger a rebuild, by path, sorted.
pub(super) fn snapshot(paths: &[PathBuf]) -> FileStamps {
    let mut out = BTreeMap::new();
    fn walk(p: &Path, out: &mut FileStamps) {
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
                out.insert(p.to_path_buf(), Stamp::of(&meta));
            }
        }
    }
    for p in paths {
        walk(p, &mut out);
    }
    out
}

/// Why the watcher polls instead of hearing the system's events.
#[derive(Debug)]
pub(super) enum Unwatched {
    /// `NOTABENE_WATCH=poll` asks for it.
    Asked,
    /// No native watcher could be made.
    Watcher(notify::Error),
    /// A path could not be registered.
    Path(PathBuf, notify::Error),
}

impl std::fmt::Display for Unwatched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unwatched::Asked => f.write_str("NOTABENE_WATCH=poll"),
            Unwatched::Watcher(e) => write!(f, "{e}"),
            Unwatched::Path(path, e) => write!(f, "{}: {e}", path.display()),
        }
    }
}

/// How the watcher learns that a watched file may have changed.
pub(super) enum Events {
    /// The OS's file events: `heard` gathers the paths `notify` names.
    Native {
        /// Kept alive for as long as the events are wanted.
        watcher: notify::RecommendedWatcher,
        /// The directories registered with it, and whether with their subdirectories.
        registered: BTreeMap<PathBuf, bool>,
        /// What the events said since they were last taken.
        heard: Arc<Mutex<Heard>>,
    },
    /// No native watcher could be set up (`why`): every poll compares snapshots.
    Polling {
        /// Why not native.
        why: Unwatched,
    },
}

/// The events heard since they were last taken.
#[derive(Default)]
pub(super) struct Heard {
    /// Any event at all.
    any: bool,
    /// An event that names no path, asks for a rescan (a queue overflowed) or is an
    /// error: the whole tree must be looked at.
    all: bool,
    /// The paths the events named.
    paths: BTreeSet<PathBuf>,
}

/// What changed, as far as the watcher knows.
pub(super) enum Changed {
    /// Possibly anything: compare a whole new snapshot.
    All,
    /// These paths (files or directories, existing or not) and nothing else.
    Paths(BTreeSet<PathBuf>),
}

impl Events {
    /// Native events on the paths of `watched`, else polling (when `notify` has no watcher
    /// here, a path cannot be registered — the inotify limit, say —, or `NOTABENE_WATCH=poll`).
    /// The flag starts set, so the first look compares with the snapshot taken before the
    /// first build.
    pub(super) fn watch(watched: &[PathBuf]) -> Events {
        // A file system whose events do not reach this machine (a network mount) needs the
        // poll: `NOTABENE_WATCH=poll` asks for it.
        if std::env::var("NOTABENE_WATCH").is_ok_and(|v| v == "poll") {
            return Events::Polling {
                why: Unwatched::Asked,
            };
        }
        // The first look compares the whole tree with the snapshot taken before the first build.
        let heard = Arc::new(Mutex::new(Heard {
            any: true,
            all: true,
            paths: BTreeSet::new(),
        }));
        let sink = Arc::clone(&heard);
        let handler = move |event: notify::Result<notify::Event>| {
            let mut h = lock::lock(&sink);
            match event {
                Ok(e) if e.kind.is_access() => return,
                // An error (an overflowed queue among them) may hide a change: look at all.
                Err(_) => h.all = true,
                Ok(e) if e.need_rescan() || e.paths.is_empty() => h.all = true,
                Ok(e) => h.paths.extend(e.paths),
            }
            h.any = true;
        };
        let watcher = match notify::recommended_watcher(handler) {
            Ok(w) => w,
            Err(e) => {
                return Events::Polling {
                    why: Unwatched::Watcher(e),
                };
            }
        };
        let mut events = Events::Native {
            watcher,
            registered: BTreeMap::new(),
            heard,
        };
        if let Err(why) = events.register(watched) {
            return Events::Polling { why };
        }
        events
    }

    /// Registers every path of `watched`: a directory recursively; a file, or a path that does
    /// not exist yet, through its parent directory (an editor that saves by renaming a new file
    /// over the old one, and a directory that appears, are seen there). A registered directory
    /// that is gone is forgotten (its watch died with it), so that it is registered again when
    /// it comes back; a directory registered without its subdirectories is registered again
    /// with them when a watched path asks for that.
    fn register(&mut self, watched: &[PathBuf]) -> Result<(), Unwatched> {
        use notify::Watcher as _;
        let Events::Native {
            watcher,
            registered,
            ..
        } = self
        else {
            return Ok(());
        };
        registered.retain(|p, _| p.is_dir());
        for p in watched {
            let (path, recursive) = if p.is_dir() {
                (p.clone(), true)
            } else {
                match p.parent().filter(|d| d.is_dir()) {
                    Some(d) => (d.to_path_buf(), false),
                    None => continue,
                }
            };
            let known = registered.get(&path).copied();
            if known == Some(true) || known == Some(recursive) {
                continue;
            }
            if known.is_some() {
                let _ = watcher.unwatch(&path);
            }
            let mode = if recursive {
                notify::RecursiveMode::Recursive
            } else {
                notify::RecursiveMode::NonRecursive
            };
            watcher
                .watch(&path, mode)
                .map_err(|e| Unwatched::Path(path.clone(), e))?;
            registered.insert(path, recursive);
        }
        Ok(())
    }

    /// What may have changed since the last call (`None`: nothing); a watched path that
    /// appeared since is registered now.
    pub(super) fn changed(&mut self, watched: &[PathBuf]) -> Option<Changed> {
        let heard = match self {
            Events::Native { heard, .. } => std::mem::take(&mut *lock::lock(heard)),
            Events::Polling { .. } => return Some(Changed::All),
        };
        if !heard.any {
            return None;
        }
        if let Err(why) = self.register(watched) {
            say_err!("notabene: watching by polling every 200 ms from now on ({why})");
            *self = Events::Polling { why };
            return Some(Changed::All);
        }
        Some(if heard.all {
            Changed::All
        } else {
            Changed::Paths(heard.paths)
        })
    }
}

/// `last` brought up to date for `changed`: the whole of `watched` walked again, or only the
/// paths the events named (each under a watched path: its entries dropped, then walked
/// again, so a removed file or directory leaves, a new one comes in).
pub(super) fn refreshed(last: &FileStamps, changed: Changed, watched: &[PathBuf]) -> FileStamps {
    let paths = match changed {
        Changed::All => return snapshot(watched),
        Changed::Paths(paths) => paths,
    };
    let mut out = last.clone();
    for p in paths {
        // Watched through its parent, a file's siblings send events too.
        if !watched.iter().any(|w| p.starts_with(w)) {
            continue;
        }
        let gone: Vec<PathBuf> = out
            .range(p.clone()..)
            .take_while(|(k, _)| k.starts_with(&p))
            .map(|(k, _)| k.clone())
            .collect();
        for k in gone {
            out.remove(&k);
        }
        out.extend(snapshot(std::slice::from_ref(&p)));
    }
    out
}
