//! A build's read of the store: every comment file, with the comments the caller wants
//! condensed ([`crate::condense`]), through the store's parse cache ([`crate::cache`]) — and,
//! for a long-lived process, through what its last build read ([`Recent`]).
//!
//! Owns: [`Store::load_condensed`] and its variants, [`Recent`], the cache's values.
//! Calls: `read` (the listing and the parse of a comment file), `cache`, `condense`.

use crate::cache::{self, CacheOutcome, CacheValue, FileKey};
use crate::condense::{self, Condense, SharedText};
use crate::read::{file_snapshot, parse};
use crate::walk::{Listed, Walk};
use crate::{Location, Record, Result, Snapshot, Store, fsx};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

/// The store's cache as a build's read leaves it, not yet written ([`CacheUpdate::write`]): a
/// build writes it while its later stages run.
pub struct CacheUpdate {
    cache: cache::Cache,
    outcomes: Vec<(String, CacheOutcome)>,
    root: PathBuf,
}

impl CacheUpdate {
    /// Writes the cache file, when the read found anything else than it held (atomically;
    /// failures are ignored: a cache that cannot be written is a cache that misses).
    pub fn write(self) {
        self.cache.write_back(&self.outcomes, &self.root);
    }
}

/// The store as a build's listing found it: every name in it that is not a directory (a name
/// that is not UTF-8: only a directory's, or a `.json` file's, which readers skip with a
/// finding), with what identifies a regular file's contents without reading it (size,
/// modification and change times, inode, device — the cache's key), taken before any comment
/// file is read (or, shown after the read, a comment file's taken by its read, just before its
/// bytes were: [`Store::load_condensed_seeing`]).
/// Two listings that [`ListingState::feed`] the same bytes found the same files with the same
/// keys.
pub struct ListingState<'a> {
    walk: &'a Walk,
}

impl ListingState<'_> {
    /// Hands `out` the listing, name by name in listing order: each a kind byte, the name's
    /// length and bytes, and a regular file's key (or a zero: no key), in little-endian
    /// binary.
    pub fn feed(&self, out: &mut dyn FnMut(&[u8])) {
        let w = self.walk;
        let mut buf = Vec::with_capacity(256);
        let mut put = |kind: u8, name: &str, key: Option<FileKey>| {
            buf.clear();
            buf.push(kind);
            buf.extend_from_slice(&(name.len() as u64).to_le_bytes());
            buf.extend_from_slice(name.as_bytes());
            match key {
                Some(key) => {
                    buf.push(1);
                    key.put_bytes(&mut buf);
                }
                None => buf.push(0),
            }
            out(&buf);
        };
        for f in &w.files {
            put(b'c', &f.rel, f.key);
        }
        for (name, key) in &w.others {
            put(b'o', name, *key);
        }
        for n in &w.not_utf8 {
            put(if n.dir { b'D' } else { b'F' }, &n.file, None);
        }
    }

    /// Whether a file was modified too recently for its key to tell its contents (in the last
    /// two seconds, as the store's cache judges it): another write within the same tick of the
    /// file system's clock could leave the key unchanged. What is keyed on such a listing must
    /// not be kept.
    pub fn is_racy(&self) -> bool {
        let keys = self.walk.files.iter().filter_map(|f| f.key);
        let others = self.walk.others.iter().filter_map(|(_, k)| *k);
        keys.chain(others).any(|k| k.is_recent())
    }
}

impl Snapshot {
    /// The snapshot with each comment `forms` condenses condensed, every other record as it
    /// is.
    pub fn condensed(mut self, forms: &dyn Condense) -> Snapshot {
        for r in &mut self.records {
            if let Some(c) = forms.condense(&r.comment) {
                r.comment = c;
            }
        }
        self
    }
}

impl Store {
    /// [`Store::load`] for a build: the comments `forms` condenses come condensed, and the
    /// files unchanged since the last build are taken from the store's parse cache (see the
    /// crate docs), which is then brought up to date. The result is exactly
    /// [`Store::load`]'s [`Snapshot::condensed`], whatever the cache holds.
    pub fn load_condensed(&self, forms: &dyn Condense) -> Result<Snapshot> {
        self.load_condensed_in(cache::cache_dir(), forms)
    }

    /// [`Store::load_condensed`] with the cache directory given (`None`: no cache).
    pub fn load_condensed_in(
        &self,
        cache_dir: Option<PathBuf>,
        forms: &dyn Condense,
    ) -> Result<Snapshot> {
        let (snap, update) =
            self.load_condensed_seeing(cache_dir, forms, &|| {}, &mut |_| {}, false)?;
        update.write();
        Ok(snap)
    }

    /// [`Store::load_condensed_in`] for a caller that schedules around it: the cache file is
    /// read and indexed while the store is listed, once `before_cache` returns (on the thread
    /// that reads it: it may wait, until `seen` is called); `seen` is shown the store's state
    /// as listed ([`ListingState`]: what a caller keys its own reuse on), or `None` when the
    /// listing failed (its error is then returned); the cache brought up to date is handed
    /// back, to be written when the caller says ([`CacheUpdate::write`]).
    ///
    /// `seen` is shown the listing before any comment file is read when `seen_first` or when
    /// there is a cache file to look in. Otherwise (a first build: no cache yet, and a caller
    /// with no use for the listing before the read) it is shown once the files are read, each
    /// file's key then its read's own `fstat`: the listing reads no metadata of its own.
    pub fn load_condensed_seeing(
        &self,
        cache_dir: Option<PathBuf>,
        forms: &dyn Condense,
        before_cache: &(dyn Fn() + Sync),
        seen: &mut dyn FnMut(Option<&ListingState<'_>>),
        seen_first: bool,
    ) -> Result<(Snapshot, CacheUpdate)> {
        self.check_compatible()?;
        let stat = seen_first || cache::Cache::exists_in(cache_dir.as_deref(), self.root());
        let (listed, cache) = std::thread::scope(|scope| {
            let cache = scope.spawn(|| {
                before_cache();
                cache::Cache::open_in(cache_dir, self.root())
            });
            let listed = self.list(stat);
            if stat || listed.is_err() {
                seen(
                    listed
                        .as_ref()
                        .ok()
                        .map(|walk| ListingState { walk })
                        .as_ref(),
                );
            }
            let cache = cache
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (listed, cache)
        });
        let mut walk = listed?;
        let (snap, read) =
            self.read_walked(&walk, |f| read_comment_file_for_build(&cache, f, forms));
        let mut outcomes = Vec::with_capacity(read.len());
        for (f, (rel, (outcome, key))) in walk.files.iter_mut().zip(read) {
            if !stat {
                f.key = key;
            }
            outcomes.push((rel, outcome));
        }
        if !stat {
            seen(Some(&ListingState { walk: &walk }));
        }
        let update = CacheUpdate {
            cache,
            outcomes,
            root: self.root().to_path_buf(),
        };
        Ok((snap, update))
    }

    /// [`Store::load_condensed`] for a long-lived process (`serve`), through what its last
    /// build read ([`Recent`]): a file whose key (size, times, inode) is what it was then is
    /// taken from there, not read or parsed again — and when the caller told which files
    /// changed since ([`Recent::expect_changed`]), a file it did not name is taken from there
    /// without a `stat`; only the first build reads the cache on disk. The result is
    /// [`Store::load_condensed`]'s as far as the caller's account of the changes is true.
    pub fn load_condensed_recent(&self, forms: &dyn Condense, recent: &Recent) -> Result<Snapshot> {
        self.check_compatible()?;
        let variant = forms.variant();
        let root = self.root();
        // What the caller named as changed is taken, and so is the last read (a read that
        // fails from here leaves none: the next one checks every file). The last read counts
        // for the same variant of the same store only.
        let changed = recent.take_changed();
        let mut slot = recent.last.lock().unwrap_or_else(|e| e.into_inner());
        let last = slot
            .take()
            .filter(|(v, r, _)| v == variant && r == root)
            .map(|(_, _, m)| m);
        let cache = match &last {
            Some(_) => cache::Cache::default(),
            None => cache::Cache::open(root),
        };
        // With the changed files named, the others are listed without a `stat`: their key is
        // the last read's.
        let named = changed.as_ref().filter(|_| last.is_some());
        let (snap, read) = self.read_listed(named.is_none(), |f| {
            let key = match (f.key, named, &last) {
                (Some(key), _, _) => Some(key),
                (None, Some(named), Some(last)) if !named.contains(&f.rel) => {
                    last.get(&f.rel).map(|(k, _)| *k)
                }
                _ => None,
            }
            .or_else(|| {
                std::fs::symlink_metadata(&f.path)
                    .ok()
                    .map(|m| FileKey::of(&m))
            });
            if let (Some(last), Some(key)) = (&last, key)
                && let Some((k, part)) = last.get(&f.rel)
                && *k == key
            {
                return (part.clone(), None);
            }
            let (part, (outcome, _)) = read_comment_file_for_build(&cache, f, forms);
            // Kept for the next build only when its key can be trusted (not modified just
            // now), as the cache on disk keeps it.
            let keep = key
                .filter(cache::Cache::cacheable)
                .map(|k| (k, part.clone()));
            (part, Some((outcome, keep)))
        })?;
        let mut last = last.unwrap_or_default();
        let mut next = HashMap::with_capacity(read.len());
        let mut outcomes = Vec::with_capacity(read.len());
        for (rel, x) in read {
            match x {
                None => {
                    if let Some(entry) = last.remove(&rel) {
                        next.insert(rel.clone(), entry);
                    }
                    outcomes.push((rel, CacheOutcome::Cached));
                }
                Some((outcome, keep)) => {
                    if let Some(entry) = keep {
                        next.insert(rel.clone(), entry);
                    }
                    outcomes.push((rel, outcome));
                }
            }
        }
        cache.write_back(&outcomes, root);
        *slot = Some((variant.to_string(), root.to_path_buf(), next));
        Ok(snap)
    }
}

/// What a long-lived process (`serve`) read of a store's comment files at its last build
/// ([`Store::load_condensed_recent`]), for one variant of its condensed comments: each file's
/// key and records, by store-relative name (a file modified just before it was read is not
/// kept); and what its caller knows of the files changed since ([`Recent::expect_changed`]).
#[derive(Debug, Default)]
pub struct Recent {
    /// The last read: its variant, its store's root and its files.
    last: std::sync::Mutex<Option<(String, PathBuf, RecentFiles)>>,
    /// What the caller told of the files changed since the last read.
    told: std::sync::Mutex<Told>,
}

/// What a [`Recent`]'s caller told of the files changed since its last read.
#[derive(Debug, Default)]
enum Told {
    /// Nothing: every file is checked.
    #[default]
    Nothing,
    /// These files (store-relative names) changed, and no other.
    Changed(HashSet<String>),
    /// Not known: every file is checked.
    Unknown,
}

impl Recent {
    /// Tells the next read what changed since the last one: `Some` of the store-relative names
    /// of the files that changed (created, modified or removed: a file not named is taken
    /// from the last read without a `stat`), or `None` when that is not known (every file is
    /// checked, as when nothing is told). What several calls name before a read adds up, and
    /// a `None` among them stands: a build that failed before its read leaves its changes to
    /// the next.
    pub fn expect_changed(&self, changed: Option<HashSet<String>>) {
        let mut told = self.told.lock().unwrap_or_else(|e| e.into_inner());
        *told = match (std::mem::take(&mut *told), changed) {
            (Told::Nothing, Some(named)) => Told::Changed(named),
            (Told::Changed(mut named), Some(more)) => {
                named.extend(more);
                Told::Changed(named)
            }
            _ => Told::Unknown,
        };
    }

    /// What was told since the last read, taken: the files named as changed, if known.
    fn take_changed(&self) -> Option<HashSet<String>> {
        match std::mem::take(&mut *self.told.lock().unwrap_or_else(|e| e.into_inner())) {
            Told::Changed(named) => Some(named),
            Told::Nothing | Told::Unknown => None,
        }
    }
}

/// The files of a [`Recent`]: store-relative name → key and records.
type RecentFiles = HashMap<String, (FileKey, Snapshot)>;

/// A comment file read for a build ([`Store::load_condensed`]): through the build's cache —
/// the cached records when the file's key is unchanged, else the file, parsed (and what to
/// cache of it) — with the comments `forms` condenses condensed.
///
/// A cache value is `F` and the file's JSON, or, for a file holding one comment that is
/// condensed, `C` and its cache text ([`condense::to_cache_text`]), tab-separated.
fn read_comment_file_for_build(
    cache: &cache::Cache,
    f: &Listed,
    forms: &dyn Condense,
) -> (Snapshot, (CacheOutcome, Option<FileKey>)) {
    let (path, file) = (f.path.as_path(), f.rel.clone());
    // The key to look the cache up with: the listing's, else (with a cache to look in) the
    // file's own metadata.
    let listed = f.key.or_else(|| {
        (!cache.is_empty())
            .then(|| std::fs::symlink_metadata(path).ok())
            .flatten()
            .map(|m| FileKey::of(&m))
    });
    if let Some(key) = listed
        && let Some(text) = cache.get(&file, &key)
        && let Some(snap) = from_cache_value(&text, &file, forms)
    {
        return (snap, (CacheOutcome::Cached, Some(key)));
    }
    let read = fsx::read_file(path, fsx::MAX_COMMENT_FILE);
    // The file read is keyed by its own `fstat`, taken before its bytes were read; cached only
    // when that is what was listed (if it was), and it was not modified just now.
    let read_key = read.as_ref().ok().map(|r| FileKey::of(r.metadata()));
    let key = read_key.filter(|k| listed.is_none_or(|l| l == *k));
    let parsed = parse(read);
    let cacheable = parsed.is_ok() && key.is_some_and(|k| cache::Cache::cacheable(&k));
    // A file holding one object is cached as its comment (condensed, or its own map, which is
    // the file's object); any other as the file's JSON.
    let one_object = matches!(parsed, Ok(Value::Object(_)));
    let whole = (cacheable && !one_object)
        .then(|| parsed.as_ref().map(Value::to_string).unwrap_or_default());
    let mut snap = file_snapshot(parsed, file);
    // A comment that condenses is read back from its cache text, as a later build reads it
    // from the cache: the comment and the cache share that text.
    if one_object
        && let [r] = snap.records.as_mut_slice()
        && let Some(text) = forms.cache_text(&r.comment)
        && let Some(comment) = condense::from_cache_text(&text, forms)
    {
        r.comment = comment;
        let value = cacheable.then_some(CacheValue::Condensed(text));
        return (snap, (CacheOutcome::Read(key.zip(value)), read_key));
    }
    let snap = snap.condensed(forms);
    let value = match (whole, snap.records.as_slice()) {
        (Some(json), _) => Some(CacheValue::File(json)),
        (None, [r]) if cacheable && one_object => {
            Some(match condense::to_cache_text(&r.comment, forms.variant()) {
                Some(text) => CacheValue::Condensed(text),
                // As `Value::to_string` writes the file's object.
                None => {
                    CacheValue::File(serde_json::to_string(r.comment.as_map()).unwrap_or_default())
                }
            })
        }
        _ => None,
    };
    (snap, (CacheOutcome::Read(key.zip(value)), read_key))
}

/// The records a cache value ([`read_comment_file_for_build`]) gives for `file`; `None` (a
/// miss) when it is garbled or a condensed comment of another variant.
fn from_cache_value(text: &SharedText, file: &str, forms: &dyn Condense) -> Option<Snapshot> {
    if let Some(json) = text.as_str().strip_prefix("F\t") {
        let v = serde_json::from_str::<Value>(json).ok()?;
        return Some(file_snapshot(Ok(v), file.to_string()).condensed(forms));
    }
    let rest = text.as_str().strip_prefix("C\t")?;
    let comment = condense::from_cache_text(&text.slice(2..2 + rest.len()), forms)?;
    Some(Snapshot {
        records: vec![Record {
            file: file.to_string(),
            location: Location::File,
            comment,
        }],
        ..Snapshot::default()
    })
}
