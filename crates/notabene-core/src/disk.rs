//! Files of the user's cache and state directories that builds keep beside a book or a store:
//! where those directories are, how a file of one book or store is named there, the FNV-1a hash
//! that names and checks them, pruning the old ones and replacing one atomically.
//!
//! Owns: the cache directory's location and the files' names, pruning and atomic replacement
//! (the store's cache and the build's memo both use them). Calls: `tempfile` for the write.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The cache directory of builds (the store's cache and the memo): `NOTABENE_CACHE_DIR` (`off`
/// or empty: none), else the platform's (`$XDG_CACHE_HOME/mdbook-notabene`, else
/// `~/.cache/mdbook-notabene`; `~/Library/Caches` on macOS, `%LOCALAPPDATA%` on Windows).
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("NOTABENE_CACHE_DIR") {
        if dir.is_empty() || dir == "off" {
            return None;
        }
        return Some(PathBuf::from(dir));
    }
    user_dir("XDG_CACHE_HOME", ".cache", "Library/Caches")
}

/// The tool's directory of one kind in the user's home: `$<xdg>/mdbook-notabene` (an absolute
/// `xdg`), else `~/<unix>/mdbook-notabene`; `~/<macos>/…` on macOS, `%LOCALAPPDATA%\…` on
/// Windows. `None` without a home.
pub fn user_dir(xdg: &str, unix: &str, macos: &str) -> Option<PathBuf> {
    let home = || {
        std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
    };
    let base = if cfg!(windows) {
        std::env::var_os("LOCALAPPDATA").map(PathBuf::from)
    } else if cfg!(target_os = "macos") {
        home().map(|h| h.join(macos))
    } else {
        std::env::var_os(xdg)
            .filter(|d| Path::new(d).is_absolute())
            .map(PathBuf::from)
            .or_else(|| home().map(|h| h.join(unix)))
    };
    base.map(|b| b.join("mdbook-notabene"))
}

/// FNV-1a, 64 bits, over 8-byte words (then the tail byte by byte): stable across builds and
/// platforms, for file names and checksums (which catch corruption, not tampering).
pub fn fnv(bytes: &[u8]) -> u64 {
    const PRIME: u64 = 0x0100_0000_01b3;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        h ^= u64::from_le_bytes(w.try_into().expect("8 bytes"));
        h = h.wrapping_mul(PRIME);
        h ^= h >> 29;
    }
    for b in words.remainder() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(PRIME);
    }
    h
}

/// A hasher for maps keyed by paths and digests the notabene crates wrote themselves (the store's cache, the build's memo): [`fnv`] over the
/// bytes given (fast on short keys; not for keys an attacker chooses to collide).
#[derive(Debug, Clone, Copy, Default)]
pub struct FnvHasher(u64);

impl std::hash::Hasher for FnvHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0 = (self.0 ^ fnv(bytes)).wrapping_mul(0x0100_0000_01b3);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// The [`std::hash::BuildHasher`] of [`FnvHasher`].
pub type FnvBuild = std::hash::BuildHasherDefault<FnvHasher>;

/// The file of `dir` for the book or store at `root`: `<prefix><hash of root's canonical
/// path><suffix>`, with that canonical path (what the file says it is for).
pub fn file_for(dir: &Path, root: &Path, (prefix, suffix): (&str, &str)) -> (PathBuf, PathBuf) {
    let canonical = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let name = format!(
        "{prefix}{:016x}{suffix}",
        fnv(canonical.to_string_lossy().as_bytes())
    );
    let path = dir.join(name);
    (canonical, path)
}

/// At most this many files of one kind are kept in the cache directory…
pub const KEEP_MAX: usize = 64;
/// …and when there are more, the least recently written are removed down to this many.
pub const KEEP_AFTER_PRUNE: usize = 32;

/// A temp file of [`write_file`] older than this was left by a process that ended mid-write
/// (killed, or a run that exited with its read-ahead unfinished): no write takes this long.
pub const STALE_TEMP: std::time::Duration = std::time::Duration::from_secs(3600);

/// Removes the least recently written files of `dir` named `<prefix>…<suffix>` (never
/// `current`) when it holds more than [`KEEP_MAX`] of them (the stores and books of test runs,
/// of checkouts long gone), and the temp files of their writes ([`write_file`]'s
/// `.<prefix>…tmp`) last modified more than [`STALE_TEMP`] ago.
pub fn prune(dir: &Path, current: &Path, (prefix, suffix): (&str, &str)) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let temp_prefix = format!(".{prefix}");
    let now = std::time::SystemTime::now();
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = Vec::new();
    for e in rd.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        let is_temp = name.starts_with(&temp_prefix) && name.ends_with(".tmp");
        let is_ours = name.starts_with(prefix) && name.ends_with(suffix);
        if !(is_temp || is_ours) {
            continue;
        }
        let Some(modified) = e.metadata().ok().and_then(|m| m.modified().ok()) else {
            continue;
        };
        if !is_temp {
            files.push((modified, e.path()));
        } else if now
            .duration_since(modified)
            .is_ok_and(|age| age > STALE_TEMP)
        {
            let _ = std::fs::remove_file(e.path());
        }
    }
    if files.len() <= KEEP_MAX {
        return;
    }
    files.sort();
    let extra = files.len() - KEEP_AFTER_PRUNE;
    for (_, p) in files.into_iter().take(extra) {
        if p != current {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Replaces `path` with `bytes` atomically (a temp file beside it, `.<stem>-*.tmp`, fsync,
/// rename).
pub fn write_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace_file(path, bytes, true)
}

/// Replaces a file of the cache directory with `bytes` atomically (a temp file beside it,
/// renamed), without waiting for the disk: a crash may leave it old, empty or garbled, which
/// its reader's checksum turns into a miss (every file there is checked so), never into a
/// wrong value. A build does not wait for the disk to write what only makes the next build
/// faster.
pub fn write_cache_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace_file(path, bytes, false)
}

/// [`write_cache_file`] of what `write` writes, through a buffer: a file of megabytes is never
/// whole in memory.
pub fn write_cache_file_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    replace_file_with(path, false, write)
}

fn replace_file(path: &Path, bytes: &[u8], sync: bool) -> std::io::Result<()> {
    replace_file_with(path, sync, |w| w.write_all(bytes))
}

fn replace_file_with(
    path: &Path,
    sync: bool,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let stem = path
        .file_name()
        .map(|n| {
            n.to_string_lossy()
                .split('-')
                .next()
                .unwrap_or("")
                .to_string()
        })
        .unwrap_or_default();
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".{stem}-"))
        .suffix(".tmp")
        .tempfile_in(dir)?;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, tmp);
    write(&mut out)?;
    let tmp = out.into_inner().map_err(|e| e.into_error())?;
    if sync {
        tmp.as_file().sync_all()?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `path` with its modification time `ago` in the past.
    fn aged(path: &Path, ago: std::time::Duration) {
        std::fs::write(path, "x").unwrap();
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(std::time::SystemTime::now() - ago)
            .unwrap();
    }

    #[test]
    fn temp_files_left_by_killed_writes_are_removed_once_stale() {
        let dir = tempfile::tempdir().unwrap();
        let hour = std::time::Duration::from_secs(3600);
        let minute = std::time::Duration::from_secs(60);
        // Left by writes that never renamed: two stale, one that may still be in progress.
        aged(&dir.path().join(".store-old1.tmp"), 2 * hour);
        aged(&dir.path().join(".store-old2.tmp"), STALE_TEMP + minute);
        aged(&dir.path().join(".store-now.tmp"), minute);
        // Another kind's temp file, the cache files themselves and anything else: kept.
        aged(&dir.path().join(".memo-old.tmp"), 2 * hour);
        aged(&dir.path().join("store-0000000000000001.cache"), 2 * hour);
        aged(&dir.path().join("other.tmp"), 2 * hour);
        let current = dir.path().join("store-0000000000000002.cache");
        write_file(&current, b"new").unwrap();
        prune(dir.path(), &current, ("store-", ".cache"));
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                ".memo-old.tmp",
                ".store-now.tmp",
                "other.tmp",
                "store-0000000000000001.cache",
                "store-0000000000000002.cache"
            ]
        );
    }
}
