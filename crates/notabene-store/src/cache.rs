//! The build's cache of what each comment file of a store held, so that a build parses only the
//! files that changed since the last one: history (thousands of resolved comments) is read
//! once, not on every build.
//!
//! It lives outside git and outside the book: in the user's cache directory
//! (`$XDG_CACHE_HOME/mdbook-notabene`, else `~/.cache/mdbook-notabene`; `~/Library/Caches` on
//! macOS, `%LOCALAPPDATA%` on Windows), or in `NOTABENE_CACHE_DIR` (`off` turns it off), one file
//! per store (named by a hash of the store's path; past 64 stores the least recently written
//! are removed). mdBook empties the build directory at each build, so it cannot live there.
//!
//! It is never trusted over the files. An entry is used only when the file's size,
//! modification time, change time, inode and device are all what they were when it was
//! read, its line's checksum holds, and the file was not modified in the last
//! [`RACY_SECS`] before it was read (a second write within the same clock tick could keep
//! every one of those). Anything else — no cache, a cache of another store or version, a cut or garbled
//! line — is a miss, and the file is read. So deleting or corrupting the cache changes
//! nothing a build writes: what it returns is exactly what parsing the files returns.
//!
//! The format (one line per file, tab-separated): `checksum size mtime mtime-ns ctime
//! ctime-ns inode device "path" value`, after a header line; `path` and `value` are compact
//! JSON, `value` what the store's reader keeps of the file (no raw newline: the file's compact
//! JSON, or a condensed comment's cache text — see `Store::load_condensed`), `checksum` an
//! FNV-1a hash of the rest of the line. The store contract is untouched: the cache is written
//! beside no store file.
//!
//! Owns: the cache file's format, name and validation.
//! Calls: `notabene_core::disk` for the cache directory, the checksum, the atomic replacement
//! and the pruning of old cache files. (The store's build read, `Store::load_condensed`, calls
//! it from its threads.)

use crate::condense::SharedText;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The first line of every cache file; another version's file is a miss.
const HEADER: &str = "mdbook-notabene store cache 4";

/// A file modified less than this many seconds before it was read is not cached: another
/// write within the same tick of the file system's clock could leave every key unchanged.
pub(crate) const RACY_SECS: u64 = 2;

/// What identifies the contents of a file without reading it: its size, modification and
/// change times, inode and device (the store's cache keys a file so, and so does a replayed
/// build's fingerprint).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileKey {
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
    ino: u64,
    dev: u64,
}

impl FileKey {
    /// The key of `meta`.
    pub fn of(meta: &std::fs::Metadata) -> FileKey {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            FileKey {
                size: meta.size(),
                mtime: (meta.mtime(), meta.mtime_nsec()),
                ctime: (meta.ctime(), meta.ctime_nsec()),
                ino: meta.ino(),
                dev: meta.dev(),
            }
        }
        #[cfg(not(unix))]
        {
            let since = |t: std::io::Result<std::time::SystemTime>| {
                t.ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or((0, 0), |d| (d.as_secs() as i64, d.subsec_nanos() as i64))
            };
            FileKey {
                size: meta.len(),
                mtime: since(meta.modified()),
                ctime: since(meta.created()),
                ino: 0,
                dev: 0,
            }
        }
    }

    /// Whether the file was modified less than [`RACY_SECS`] before `now` (or in the future),
    /// by its modification time, as git judges a "racily clean" file (the change time stays
    /// in the key: a rewrite moves it).
    fn is_racy(&self, now: i64) -> bool {
        self.mtime.0 > now - RACY_SECS as i64
    }

    /// Whether the file was modified too recently for its key to tell its contents (in the
    /// last two seconds, or in the future): another write within the same tick of the file
    /// system's clock could leave the key unchanged.
    pub fn is_recent(&self) -> bool {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        self.is_racy(now)
    }

    /// Appends the key to `out`: seven numbers of 8 bytes, little-endian.
    pub fn put_bytes(&self, out: &mut Vec<u8>) {
        let numbers = [
            self.size as i64,
            self.mtime.0,
            self.mtime.1,
            self.ctime.0,
            self.ctime.1,
            self.ino as i64,
            self.dev as i64,
        ];
        for n in numbers {
            out.extend_from_slice(&n.to_le_bytes());
        }
    }

    fn fields(&self) -> [String; 7] {
        [
            self.size.to_string(),
            self.mtime.0.to_string(),
            self.mtime.1.to_string(),
            self.ctime.0.to_string(),
            self.ctime.1.to_string(),
            self.ino.to_string(),
            self.dev.to_string(),
        ]
    }

    fn parse(f: &[&str]) -> Option<FileKey> {
        let n = |i: usize| f.get(i)?.parse::<i64>().ok();
        let u = |i: usize| f.get(i)?.parse::<u64>().ok();
        Some(FileKey {
            size: u(0)?,
            mtime: (n(1)?, n(2)?),
            ctime: (n(3)?, n(4)?),
            ino: u(5)?,
            dev: u(6)?,
        })
    }
}

/// The cache of one store, as read at the start of a build.
#[derive(Default)]
pub(crate) struct Cache {
    /// Where it is written back (`None`: caching is off).
    path: Option<PathBuf>,
    /// The cache file's text (condensed comments keep their pieces of it).
    text: std::sync::Arc<String>,
    /// The hash ([`fnv`]) of a store-relative path → its line: the key, where the path's JSON
    /// text, the value's JSON text and the whole line are in `text`. A lookup checks the path
    /// (two paths with one hash: the later line is kept, the other file read again).
    entries: HashMap<u64, Entry, FnvBuild>,
}

/// One line of a cache file, as [`Cache`] indexes it.
struct Entry {
    key: FileKey,
    path: std::ops::Range<usize>,
    value: std::ops::Range<usize>,
    line: std::ops::Range<usize>,
}

/// What a build did with one file, for the cache it writes back.
pub(crate) enum CacheOutcome {
    /// Taken from the cache: its line is kept as it is.
    Cached,
    /// Read from the file: its key and value (`None`: not cacheable, e.g. modified just now
    /// or unreadable).
    Read(Option<(FileKey, CacheValue)>),
}

/// What the cache keeps of a file read: a line's value, after its kind (`F` or `C`, then a tab).
pub(crate) enum CacheValue {
    /// `F`: the file's JSON.
    File(String),
    /// `C`: the file's one comment, condensed, in its cache text
    /// ([`crate::condense::to_cache_text`]), the text the comment read keeps its fields in.
    Condensed(SharedText),
}

impl CacheValue {
    /// The value as the line holds it: its kind, a tab, its text.
    fn write_to(&self, out: &mut String) {
        let (kind, text) = match self {
            CacheValue::File(json) => ("F", json.as_str()),
            CacheValue::Condensed(text) => ("C", text.as_str()),
        };
        out.push_str(kind);
        out.push('\t');
        out.push_str(text);
    }
}

/// How a store cache file is named: `store-<hash of the store root>.cache`.
const CACHE_FILE: (&str, &str) = ("store-", ".cache");

pub(crate) use notabene_core::disk::cache_dir;
use notabene_core::disk::{FnvBuild, file_for, fnv, prune, write_cache_file_with};

impl Cache {
    /// The cache of the store at `root` (empty when there is none, it is off, or it is not
    /// this version's or this store's).
    pub(crate) fn open(root: &Path) -> Cache {
        Cache::open_in(cache_dir(), root)
    }

    /// Whether there is a cache file for the store at `root` in `dir` (`None`: off) — one
    /// `stat`, before it is read.
    pub(crate) fn exists_in(dir: Option<&Path>, root: &Path) -> bool {
        dir.is_some_and(|dir| std::fs::symlink_metadata(file_for(dir, root, CACHE_FILE).1).is_ok())
    }

    /// Whether the cache holds no entry (none was read, or it is off).
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// [`Cache::open`] with the cache directory given (`None`: off).
    pub(crate) fn open_in(dir: Option<PathBuf>, root: &Path) -> Cache {
        let Some(dir) = dir else {
            return Cache::default();
        };
        let (store, path) = file_for(&dir, root, CACHE_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => Cache::from_text(path, text, &store),
            Err(_) => Cache {
                path: Some(path),
                ..Cache::default()
            },
        }
    }

    /// The cache in `text` (read from `path`) for the store at `store` (canonical).
    fn from_text(path: PathBuf, text: String, store: &Path) -> Cache {
        let mut cache = Cache {
            path: Some(path),
            ..Cache::default()
        };
        let header = format!("{HEADER}\t{}", json_string(&store.to_string_lossy()));
        let Some(body) = text
            .strip_prefix(&header)
            .and_then(|t| t.strip_prefix('\n'))
        else {
            return cache;
        };
        // Room for a store's lines (a few hundred bytes and more each), without counting them.
        let lines = body.len() / 512;
        let mut entries = HashMap::with_capacity_and_hasher(lines, FnvBuild::default());
        let mut at = text.len() - body.len();
        for line in body.split_inclusive('\n') {
            let start = at;
            at += line.len();
            // A line cut short (no newline) is a miss.
            let Some(line) = line.strip_suffix('\n') else {
                continue;
            };
            let Some((path, key, value)) = parse_line(line) else {
                continue;
            };
            let at_in_text = |part: &str| {
                let from = start + (part.as_ptr() as usize - line.as_ptr() as usize);
                from..from + part.len()
            };
            let Some(hash) = path_text(path).map(|p| fnv(p.as_bytes())) else {
                continue;
            };
            entries.insert(
                hash,
                Entry {
                    key,
                    path: at_in_text(path),
                    value: at_in_text(value),
                    line: start..start + line.len(),
                },
            );
        }
        cache.text = std::sync::Arc::new(text);
        cache.entries = entries;
        cache
    }

    /// The line of file `rel`, when there is one.
    fn entry(&self, rel: &str) -> Option<&Entry> {
        let e = self.entries.get(&fnv(rel.as_bytes()))?;
        (path_text(&self.text[e.path.clone()])? == rel).then_some(e)
    }

    /// The value file `rel` held, when its key is still `key`: its piece of the cache's text.
    pub(crate) fn get(&self, rel: &str, key: &FileKey) -> Option<SharedText> {
        let e = self.entry(rel)?;
        // The checksum is checked only for the lines used.
        let text = &self.text[e.line.clone()];
        let (sum, rest) = text.split_once('\t')?;
        (e.key == *key && u64::from_str_radix(sum, 16).ok()? == fnv(rest.as_bytes()))
            .then(|| SharedText::within(&self.text, e.value.clone()))
    }

    /// Writes the cache back for the files of this build, in listing order (`files`:
    /// store-relative path and what this build did with it), when anything differs from what was
    /// read. Failures are ignored: a cache that cannot be written is a cache that misses.
    pub(crate) fn write_back(&self, files: &[(impl AsRef<str>, CacheOutcome)], store_root: &Path) {
        let Some(path) = &self.path else { return };
        let changed = files.len() != self.entries.len()
            || files
                .iter()
                .any(|(_, l)| matches!(l, CacheOutcome::Read(_)));
        if !changed {
            return;
        }
        let store = std::fs::canonicalize(store_root).unwrap_or_else(|_| store_root.to_path_buf());
        let written = write_cache_file_with(path, |out| {
            writeln!(out, "{HEADER}\t{}", json_string(&store.to_string_lossy()))?;
            let mut rest = String::new();
            for (rel, outcome) in files {
                let rel = rel.as_ref();
                match outcome {
                    CacheOutcome::Cached => {
                        if let Some(e) = self.entry(rel) {
                            out.write_all(self.text[e.line.clone()].as_bytes())?;
                            out.write_all(b"\n")?;
                        }
                    }
                    CacheOutcome::Read(Some((key, value))) => {
                        rest.clear();
                        for (i, field) in key.fields().iter().enumerate() {
                            if i > 0 {
                                rest.push('\t');
                            }
                            rest.push_str(field);
                        }
                        rest.push('\t');
                        rest.push_str(&json_string(rel));
                        rest.push('\t');
                        value.write_to(&mut rest);
                        write!(out, "{:016x}\t", fnv(rest.as_bytes()))?;
                        out.write_all(rest.as_bytes())?;
                        out.write_all(b"\n")?;
                    }
                    CacheOutcome::Read(None) => {}
                }
            }
            Ok(())
        });
        if written.is_ok() {
            prune(path.parent().unwrap_or(Path::new(".")), path, CACHE_FILE);
        }
    }

    /// Whether a file with `key`, just read, may be cached.
    pub(crate) fn cacheable(key: &FileKey) -> bool {
        !key.is_recent()
    }
}

/// `s` as a JSON string.
fn json_string(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// One cache line: its path's JSON text, key and value text (the checksum is checked on use).
fn parse_line(line: &str) -> Option<(&str, FileKey, &str)> {
    let mut parts = line.splitn(10, '\t');
    let _sum = parts.next()?;
    // (A missing field is an empty one, which no number parses from.)
    let fields: [&str; 7] = std::array::from_fn(|_| parts.next().unwrap_or(""));
    let key = FileKey::parse(&fields)?;
    let path = parts.next()?;
    let value = parts.next()?;
    Some((path, key, value))
}

/// The path a line's JSON string `json` names; most need no unescaping.
fn path_text(json: &str) -> Option<std::borrow::Cow<'_, str>> {
    match json.strip_prefix('"').and_then(|p| p.strip_suffix('"')) {
        Some(plain) if !plain.contains(['\\', '"']) => Some(plain.into()),
        _ => serde_json::from_str::<String>(json).ok().map(Into::into),
    }
}

#[cfg(test)]
mod tests;
