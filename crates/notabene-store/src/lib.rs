//! The `.notabene` store (contract v3): where it is, what it holds, and every write to it.
//!
//! Layout: `<store>/<page>/<id>.json` holds one comment (v2/v3); a legacy `<store>/<page>.json`
//! holds an array of comments (v1). `meta.json` and `journal.json` at the top level are reserved.
//! Readers accept both layouts; writers write one file per comment, except that a legacy array
//! member is updated in place in its array (as the original CLI does). A directory or comment file
//! whose name is not UTF-8 is skipped by every reader and reported by `verify`.
//!
//! Every read-modify-write holds the store lock ([`fsx::StoreLock`]) and every file write is atomic
//! ([`fsx::write_atomic`]).
//!
//! This crate knows nothing of mdBook: a store is a directory of JSON files, whatever renders the
//! pages its comments are about.

pub mod cache;
pub mod comment;
pub mod fsx;
pub mod ids;
pub mod journal;
pub mod json;
pub mod lean;
pub mod merge;
pub mod meta;
pub mod migrate;
pub mod page_id;
pub mod swap;
pub mod verify;

pub use comment::{Comment, Scope, Status, UnknownStatus};
pub use meta::Meta;
use notabene_core::bail;
use notabene_core::say_err;
pub use notabene_core::{Error, ErrorKind, Result};
pub use page_id::validate_page_id;

/// The store schema version this build reads and writes (`meta.json` `schemaVersion`).
pub const SCHEMA_VERSION: u64 = 3;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Top-level file names that are not comments.
pub const RESERVED: &[&str] = &["meta.json", "journal.json"];

/// The record an `apply` in progress keeps in the store directory (see `apply::intent`): a
/// `.tmp` name, so the store's `.gitignore` keeps it out of git (a record is local to its
/// work tree), but never listed as a leftover or removed by `clean`, because the next `apply`
/// needs it to finish.
pub const APPLY_RECORD: &str = ".apply-pending.tmp";

/// A store directory.
#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
}

/// Where a comment lives on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// Its own file (v2/v3).
    File,
    /// Member `index` of a legacy v1 array file.
    Legacy {
        /// Position in the array.
        index: usize,
    },
}

/// One comment as read from the store, with where it came from.
#[derive(Debug, Clone)]
pub struct Record {
    /// Store-relative path of the file, `/`-separated.
    pub file: String,
    /// Own file or legacy array member.
    pub location: Location,
    /// The comment object (empty when the JSON value was not an object).
    pub comment: Comment,
}

/// A `*.json` file that could not be parsed.
#[derive(Debug, Clone)]
pub struct Unreadable {
    /// Store-relative path.
    pub file: String,
    /// The parser's message.
    pub error: String,
}

/// A directory or `*.json` file of the store whose name is not UTF-8. Page ids and comment
/// file names are UTF-8, so readers skip it (and all a directory holds): read under a lossy
/// name, the next write would make a second file beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotUtf8 {
    /// Store-relative path, `/`-separated, each byte that is not UTF-8 written `\xNN`.
    pub file: String,
    /// Whether it is a directory.
    pub dir: bool,
}

/// Everything read from the store in one walk.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Every comment-shaped value, including ones without an id (verify reports those).
    pub records: Vec<Record>,
    /// Files that did not parse.
    pub unreadable: Vec<Unreadable>,
    /// Temp files (`*.tmp`) left by writes that were killed mid-way, store-relative.
    pub leftovers: Vec<String>,
    /// Directories and `*.json` files skipped because their names are not UTF-8.
    pub not_utf8: Vec<NotUtf8>,
    /// Symlinks in the store, store-relative: never followed, skipped by every reader.
    pub symlinks: Vec<String>,
}

impl Snapshot {
    /// The snapshot a build reads, for a book whose space is `space`: each resolved comment
    /// made thin ([`lean::thin`]), every other record as it is.
    pub fn thinned(mut self, space: &str) -> Snapshot {
        for r in &mut self.records {
            if let Some(t) = lean::thin(&r.comment, space) {
                r.comment = t;
            }
        }
        self
    }

    /// The records readers use: those with a non-empty string id.
    pub fn comments(&self) -> impl Iterator<Item = &Record> {
        self.records.iter().filter(|r| r.comment.id().is_some())
    }

    /// Prints one warning per unreadable file, and per name that is not UTF-8, on stderr
    /// (readers skip them).
    pub fn warn_unreadable(&self) {
        for w in self.unreadable_warnings() {
            say_err!("{w}");
        }
    }

    /// The lines [`Snapshot::warn_unreadable`] prints.
    pub fn unreadable_warnings(&self) -> Vec<String> {
        let unreadable = self.unreadable.iter().map(|u| {
            format!(
                "notabene: skipping unreadable comment file: {} ({})",
                u.error, u.file
            )
        });
        let not_utf8 = self.not_utf8.iter().map(|n| {
            let what = if n.dir { "directory" } else { "comment file" };
            format!(
                "notabene: skipping a {what} whose name is not UTF-8 ({})",
                n.file
            )
        });
        let links = self
            .symlinks
            .iter()
            .map(|l| format!("notabene: skipping a symlink in the store (never followed) ({l})"));
        unreadable.chain(not_utf8).chain(links).collect()
    }
}

impl Store {
    /// The store at `root` (which may not exist yet).
    pub fn new(root: impl Into<PathBuf>) -> Store {
        Store { root: root.into() }
    }

    /// The store directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether the store directory exists.
    pub fn exists(&self) -> bool {
        self.root.is_dir()
    }

    /// Fails with the `init` hint when the store does not exist.
    pub fn require(&self) -> Result<()> {
        if !self.exists() {
            bail!(
                "no store at {}. Run `notabene init` first.",
                self.root.display()
            );
        }
        Ok(())
    }

    /// Takes the exclusive store lock (the store must exist).
    pub fn lock(&self) -> Result<fsx::StoreLock> {
        self.require()?;
        fsx::StoreLock::acquire(&self.root)
    }

    /// Reads every comment file of the store (checking the schema version first).
    pub fn load(&self) -> Result<Snapshot> {
        self.check_compatible()?;
        self.load_unchecked()
    }

    /// Reads every comment file without the schema-version guard (for `verify`, which
    /// reports a newer store instead of refusing it).
    pub fn load_unchecked(&self) -> Result<Snapshot> {
        let (snap, _) =
            self.read_listed(false, |f| (read_comment_file(&f.path, f.rel.clone()), ()))?;
        Ok(snap)
    }

    /// [`Store::load`] for a build of a book whose space is `space`: resolved comments come
    /// thin ([`lean::thin`]), and the files unchanged since the last build are taken from its
    /// cache ([`cache`]), which is then brought up to date. The result is exactly
    /// [`Store::load`]'s with its comments thinned ([`Snapshot::thinned`]), whatever the cache
    /// holds.
    pub fn load_for_build(&self, space: &str) -> Result<Snapshot> {
        self.load_for_build_in(cache::cache_dir(), space)
    }

    /// [`Store::load_for_build`] with the cache directory given (`None`: no cache).
    pub fn load_for_build_in(&self, cache_dir: Option<PathBuf>, space: &str) -> Result<Snapshot> {
        self.check_compatible()?;
        let cache = cache::Cache::open_in(cache_dir, &self.root);
        let (snap, learnt) =
            self.read_listed(true, |f| read_comment_file_for_build(&cache, f, space))?;
        cache.write_back(&learnt, &self.root);
        Ok(snap)
    }

    /// [`Store::load_for_build`] for a long-lived process (`serve`), through what its last
    /// build read ([`Recent`]): a file whose key (size, times, inode) is what it was then is
    /// taken from there, not read or parsed again — and when the caller told which files
    /// changed since ([`Recent::expect_changed`]), a file it did not name is taken from there
    /// without a `stat`; only the first build reads the cache on disk. The result is
    /// [`Store::load_for_build`]'s as far as the caller's account of the changes is true.
    pub fn load_for_build_recent(&self, space: &str, recent: &Recent) -> Result<Snapshot> {
        self.check_compatible()?;
        // What the caller named as changed is taken, and so is the last read (a read that
        // fails from here leaves none: the next one checks every file). The last read counts
        // for the same space of the same store only.
        let changed = recent.take_changed();
        let mut slot = recent.last.lock().unwrap_or_else(|e| e.into_inner());
        let last = slot
            .take()
            .filter(|(s, root, _)| s == space && *root == self.root)
            .map(|(_, _, m)| m);
        let cache = match &last {
            Some(_) => cache::Cache::default(),
            None => cache::Cache::open(&self.root),
        };
        // With the changed files named, the others are listed without a `stat`: their key is
        // the last read's.
        let named = changed.as_ref().filter(|_| last.is_some());
        let (snap, read) = self.read_listed(named.is_none(), |f| {
            let key = match (&f.meta, named, &last) {
                (Some(meta), _, _) => Some(cache::FileKey::of(meta)),
                (None, Some(named), Some(last)) if !named.contains(&f.rel) => {
                    last.get(&f.rel).map(|(k, _)| *k)
                }
                _ => None,
            }
            .or_else(|| {
                std::fs::symlink_metadata(&f.path)
                    .ok()
                    .map(|m| cache::FileKey::of(&m))
            });
            if let (Some(last), Some(key)) = (&last, key)
                && let Some((k, part)) = last.get(&f.rel)
                && *k == key
            {
                return (part.clone(), None);
            }
            let (part, learnt) = read_comment_file_for_build(&cache, f, space);
            // Kept for the next build only when its key can be trusted (not modified just
            // now), as the cache on disk keeps it.
            let keep = key
                .filter(cache::Cache::cacheable)
                .map(|k| (k, part.clone()));
            (part, Some((learnt, keep)))
        })?;
        let mut last = last.unwrap_or_default();
        let mut next = HashMap::with_capacity(read.len());
        let mut learnt = Vec::with_capacity(read.len());
        for (rel, x) in read {
            match x {
                None => {
                    if let Some(entry) = last.remove(&rel) {
                        next.insert(rel.clone(), entry);
                    }
                    learnt.push((rel, cache::Learnt::Cached));
                }
                Some((l, keep)) => {
                    if let Some(entry) = keep {
                        next.insert(rel.clone(), entry);
                    }
                    learnt.push((rel, l));
                }
            }
        }
        cache.write_back(&learnt, &self.root);
        *slot = Some((space.to_string(), self.root.clone(), next));
        Ok(snap)
    }

    /// Lists the store's files (with their metadata when `stat`), then reads each comment
    /// file with `read`, in parallel on a big store; the snapshot keeps the listing order, and
    /// so does the list of what `read` returned beside each file's records.
    fn read_listed<X: Send>(
        &self,
        stat: bool,
        read: impl Fn(&Listed) -> (Snapshot, X) + Sync,
    ) -> Result<(Snapshot, Vec<(String, X)>)> {
        let mut walk = Walk {
            stat,
            ..Walk::default()
        };
        if self.exists() {
            self.walk(&self.root, "", &mut walk)?;
        }
        let Walk {
            files,
            leftovers,
            not_utf8,
            symlinks,
            ..
        } = walk;
        let threads = if files.len() > 256 {
            notabene_core::par::default_threads()
        } else {
            1
        };
        let parsed = notabene_core::par::par_map(&files, threads, &read);
        let mut snap = Snapshot {
            leftovers,
            not_utf8,
            symlinks,
            ..Snapshot::default()
        };
        let mut extra = Vec::with_capacity(files.len());
        for ((part, x), f) in parsed.into_iter().zip(files) {
            snap.records.extend(part.records);
            snap.unreadable.extend(part.unreadable);
            extra.push((f.rel, x));
        }
        Ok((snap, extra))
    }

    /// The temp files (`*.tmp`) in the store, store-relative, in a deterministic order.
    pub fn leftovers(&self) -> Result<Vec<String>> {
        let mut walk = Walk::default();
        if self.exists() {
            self.walk(&self.root, "", &mut walk)?;
        }
        Ok(walk.leftovers)
    }

    fn walk(&self, dir: &Path, rel: &str, out: &mut Walk) -> Result<()> {
        let rd =
            std::fs::read_dir(dir).map_err(|e| Error::io("cannot read store directory", dir, e))?;
        let mut entries: Vec<_> = rd.filter_map(|e| e.ok()).collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let Ok(ft) = entry.file_type() else { continue };
            let os_name = entry.file_name();
            let join = |name: &str| {
                if rel.is_empty() {
                    name.to_string()
                } else {
                    format!("{rel}/{name}")
                }
            };
            let Some(name) = os_name.to_str() else {
                // Skipped whole; only a name that could hold comments is worth a finding.
                if ft.is_dir() || (ft.is_file() && os_name.to_string_lossy().ends_with(".json")) {
                    out.not_utf8.push(NotUtf8 {
                        file: join(&escape_name(&os_name)),
                        dir: ft.is_dir(),
                    });
                }
                continue;
            };
            let child_rel = join(name);
            if ft.is_symlink() {
                out.symlinks.push(child_rel);
            } else if ft.is_dir() {
                self.walk(&entry.path(), &child_rel, out)?;
            } else if ft.is_file()
                && name.ends_with(".tmp")
                && !(rel.is_empty() && name == APPLY_RECORD)
            {
                out.leftovers.push(child_rel);
            } else if ft.is_file()
                && name.ends_with(".json")
                && !(rel.is_empty() && RESERVED.contains(&name))
            {
                // The metadata is read relative to the directory while it is open (without
                // walking the whole path again); the directory is closed before the next.
                let meta = if out.stat {
                    entry.metadata().ok()
                } else {
                    None
                };
                out.files.push(Listed {
                    path: entry.path(),
                    rel: child_rel,
                    meta,
                });
            }
        }
        Ok(())
    }

    /// The comments stored for `page`, in the order a full read gives them: its directory's
    /// files, then its legacy array's members (unreadable files skipped).
    pub fn load_page(&self, page: &str) -> Result<Vec<Comment>> {
        self.check_compatible()?;
        validate_page_id(page)?;
        let mut out = Vec::new();
        let dir = self.root.join(page);
        // A symlinked directory on the way is skipped, as a full read skips it.
        let rd = std::fs::read_dir(&dir).ok();
        if let Some(rd) = rd.filter(|_| fsx::no_symlink_on_the_way(&self.root, Path::new(page))) {
            let mut names: Vec<String> = rd
                .filter_map(|e| e.ok())
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                // A name that is not UTF-8 is skipped, as a full read skips it.
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.ends_with(".json"))
                .collect();
            names.sort();
            for name in names {
                let snap = read_comment_file(&dir.join(&name), format!("{page}/{name}"));
                out.extend(snap.records.into_iter().map(|r| r.comment));
            }
        }
        let legacy = format!("{page}.json");
        let read = fsx::read_in(&self.root, Path::new(&legacy), fsx::MAX_COMMENT_FILE);
        if !matches!(read, Err(fsx::ReadFailure::Missing)) {
            let snap = file_snapshot(parse(read), legacy);
            out.extend(snap.records.into_iter().map(|r| r.comment));
        }
        out.retain(|c| c.id().is_some() && c.page() == Some(page));
        Ok(out)
    }

    /// The comment of `page` in the file `<page>/<key>.json` (`key`: its id as file names
    /// write it); `None` when the file is missing, unreadable or holds another page's comment.
    pub fn read_file_of(&self, page: &str, key: &str) -> Option<Comment> {
        validate_page_id(page).ok()?;
        if key.is_empty() || ids::sanitize_id(key) != key {
            return None;
        }
        let rel = format!("{page}/{key}.json");
        let comment = Comment::from_value(parse(self.read(&rel)).ok()?);
        (comment.id().is_some() && comment.page() == Some(page)).then_some(comment)
    }

    /// Finds the records of `ids` (in order). Fails on the first id that is missing or that
    /// more than one file claims.
    pub fn find<'a>(&self, snap: &'a Snapshot, ids: &[String]) -> Result<Vec<&'a Record>> {
        ids.iter()
            .map(|id| {
                let mut hits = snap.comments().filter(|r| r.comment.id() == Some(id.as_str()));
                match (hits.next(), hits.next()) {
                    (Some(r), None) => Ok(r),
                    (None, _) => Err(Error::new(format!("comment {id:?} not found under {}/", self.root.display()))),
                    (Some(a), Some(b)) => Err(Error::new(format!(
                        "comment {id:?} is stored twice ({} and {}); run `notabene comments verify`",
                        a.file, b.file
                    ))),
                }
            })
            .collect()
    }

    /// Finds comment `id` of `page`: its canonical file `<page>/<id>.json` when that holds it,
    /// else by reading the whole store (legacy arrays, misplaced files).
    pub fn find_on_page(&self, page: &str, id: &str) -> Result<Option<Record>> {
        self.check_compatible()?;
        let file = format!("{page}/{}.json", ids::sanitize_id(id));
        if validate_page_id(page).is_ok()
            && let Ok(Value::Object(m)) = parse(self.read(&file))
        {
            let comment = Comment::from_map(m);
            if comment.id() == Some(id) && comment.page() == Some(page) {
                return Ok(Some(Record {
                    file,
                    location: Location::File,
                    comment,
                }));
            }
        }
        let snap = self.load()?;
        Ok(snap
            .comments()
            .find(|r| r.comment.id() == Some(id) && r.comment.page() == Some(page))
            .cloned())
    }

    /// The record as its file holds it now: `None` when the file no longer holds that comment
    /// at that place (moved, removed, its array reordered). Call with the lock held, for a
    /// record found before it was taken.
    pub fn reread(&self, rec: &Record) -> Result<Option<Record>> {
        self.check_compatible()?;
        let Ok(value) = parse(self.read(&rec.file)) else {
            return Ok(None);
        };
        let comment = match (&rec.location, value) {
            (Location::File, v @ Value::Object(_)) => Comment::from_value(v),
            (Location::Legacy { index }, Value::Array(mut items)) if *index < items.len() => {
                Comment::from_value(items.swap_remove(*index))
            }
            _ => return Ok(None),
        };
        if comment.id().is_none() || comment.id() != rec.comment.id() {
            return Ok(None);
        }
        Ok(Some(Record {
            file: rec.file.clone(),
            location: rec.location.clone(),
            comment,
        }))
    }

    /// Writes a record back where it came from. Call with the lock held.
    pub fn write_record(&self, rec: &Record) -> Result<()> {
        self.write_record_deferred(rec).map(fsx::DirSync::finish)
    }

    /// [`Store::write_record`], the directory's fsync left to the caller (to do once the
    /// lock is released).
    pub fn write_record_deferred(&self, rec: &Record) -> Result<fsx::DirSync> {
        let rel = Path::new(&rec.file);
        match rec.location {
            Location::File => fsx::write_atomic_deferred(
                &self.root,
                rel,
                json::to_js_pretty(rec.comment.as_map()).as_bytes(),
            ),
            Location::Legacy { index } => {
                let mut arr = self.read_array(rel)?;
                let slot = arr
                    .get_mut(index)
                    .filter(|v| v.get("id").and_then(Value::as_str) == rec.comment.id());
                let Some(slot) = slot else {
                    bail!(
                        "legacy file changed under us; nothing written ({})",
                        rec.file
                    );
                };
                *slot = Value::Object(rec.comment.as_map().clone());
                fsx::write_atomic_deferred(&self.root, rel, json::to_js_pretty(&arr).as_bytes())
            }
        }
    }

    /// Moves a record to `page`: `comment` (the record's comment with `page` and `updatedAt`
    /// already set by the caller) is written as `<page>/<id>.json`, complete and fsynced,
    /// before the old file (or legacy array member) is removed. A crash in between leaves the
    /// comment twice — `verify` reports the duplicate id — never nowhere. Call with the lock
    /// held. Returns the new record.
    ///
    /// The failpoint `rekey-after-write` (feature `failpoints`) aborts the process between the two steps (for
    /// the crash-safety test).
    pub fn rekey(&self, rec: &Record, comment: Comment) -> Result<Record> {
        let page = comment.page().unwrap_or_default().to_string();
        validate_page_id(&page)?;
        let id = comment.id().unwrap_or_default().to_string();
        let moved = Record {
            file: format!("{page}/{}.json", ids::sanitize_id(&id)),
            location: Location::File,
            comment,
        };
        if moved.file == rec.file {
            self.write_record(&moved)?;
            return Ok(moved);
        }
        if self.root.join(&moved.file).exists() {
            bail!(
                "cannot move comment {id:?}: another file is already there; nothing moved ({})",
                moved.file
            );
        }
        self.write_record(&moved)?;
        notabene_core::failpoint::hit("rekey-after-write");
        self.delete_record(rec)?;
        Ok(moved)
    }

    /// Deletes a record: its file, or its member of a legacy array (the array file goes when
    /// it empties). Empty page directories are removed. Call with the lock held.
    pub fn delete_record(&self, rec: &Record) -> Result<()> {
        let rel = Path::new(&rec.file);
        match rec.location {
            Location::File => fsx::remove_file(&self.root, rel)?,
            Location::Legacy { index } => {
                let mut arr = self.read_array(rel)?;
                if arr
                    .get(index)
                    .and_then(|v| v.get("id"))
                    .and_then(Value::as_str)
                    != rec.comment.id()
                {
                    bail!(
                        "legacy file changed under us; nothing deleted ({})",
                        rec.file
                    );
                }
                arr.remove(index);
                if arr.is_empty() {
                    fsx::remove_file(&self.root, rel)?;
                } else {
                    fsx::write_atomic(&self.root, rel, json::to_js_pretty(&arr).as_bytes())?;
                }
            }
        }
        if let Some(parent) = rel.parent() {
            fsx::remove_empty_dirs(&self.root, parent);
        }
        Ok(())
    }

    /// The file of a new comment: `<page>/<sanitised id>.json`.
    fn new_comment_file(comment: &Comment) -> Result<String> {
        let (Some(id), Some(page)) = (comment.id(), comment.page()) else {
            bail!("a comment needs an id and a page (id, page)");
        };
        validate_page_id(page)?;
        let name = ids::sanitize_id(id);
        if name.is_empty() {
            bail!("comment id {id:?} has no file-name characters (id)");
        }
        Ok(format!("{page}/{name}.json"))
    }

    /// Creates a new comment file at `<page>/<sanitised id>.json`; refuses to overwrite.
    /// Call with the lock held.
    pub fn create(&self, comment: &Comment) -> Result<String> {
        let file = Self::new_comment_file(comment)?;
        if self.root.join(&file).exists() {
            bail!("a comment file already exists ({file})");
        }
        fsx::write_atomic(
            &self.root,
            Path::new(&file),
            json::to_js_pretty(comment.as_map()).as_bytes(),
        )?;
        Ok(file)
    }

    /// The slow half of [`Store::create`], to run before taking the store lock: the new
    /// comment file written and fsynced under a temporary name. Put it in place with
    /// [`fsx::Prepared::create`] while holding the lock.
    pub fn prepare_create(&self, comment: &Comment) -> Result<fsx::Prepared> {
        fsx::prepare(
            &self.root,
            Path::new(&Self::new_comment_file(comment)?),
            json::to_js_pretty(comment.as_map()).as_bytes(),
        )
    }

    /// The comment file `rel` (store-relative), read as every reader reads it ([`fsx::read_in`]).
    fn read(&self, rel: &str) -> std::result::Result<fsx::StoreFile, fsx::ReadFailure> {
        fsx::read_in(&self.root, Path::new(rel), fsx::MAX_COMMENT_FILE)
    }

    fn read_array(&self, rel: &Path) -> Result<Vec<Value>> {
        let name = rel.to_string_lossy();
        let read = self.read(&name).map_err(|e| e.to_error(&name))?;
        match serde_json::from_slice(&read.bytes) {
            Ok(Value::Array(a)) => Ok(a),
            _ => bail!(
                "legacy file is no longer a JSON array; nothing written ({})",
                rel.display()
            ),
        }
    }
}

/// What a walk of the store found.
#[derive(Default)]
struct Walk {
    /// Whether the files' metadata is read during the walk.
    stat: bool,
    /// `*.json` files to read.
    files: Vec<Listed>,
    /// `*.tmp` files, store-relative.
    leftovers: Vec<String>,
    /// Names skipped because they are not UTF-8.
    not_utf8: Vec<NotUtf8>,
    /// Symlinks, store-relative.
    symlinks: Vec<String>,
}

/// What a long-lived process (`serve`) read of a store's comment files at its last build
/// ([`Store::load_for_build_recent`]), for the book's `space`: each file's key and records, by
/// store-relative name (a file modified just before it was read is not kept); and what its
/// caller knows of the files changed since ([`Recent::expect_changed`]).
#[derive(Debug, Default)]
pub struct Recent {
    /// The last read: its space, its store's root and its files.
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
type RecentFiles = HashMap<String, (cache::FileKey, Snapshot)>;

/// A comment file found by the walk of a store.
struct Listed {
    /// Its path.
    path: PathBuf,
    /// Its store-relative name.
    rel: String,
    /// Its metadata, when the walk read it (not following a symlink: the walk keeps regular
    /// files only).
    meta: Option<std::fs::Metadata>,
}

/// A file name for messages: its UTF-8 as it is, each other byte as `\xNN`.
fn escape_name(name: &std::ffi::OsStr) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for chunk in name.as_encoded_bytes().utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02X}");
        }
    }
    out
}

fn read_comment_file(path: &Path, file: String) -> Snapshot {
    file_snapshot(parse(fsx::read_file(path, fsx::MAX_COMMENT_FILE)), file)
}

/// Why a comment file has no JSON (shown as a sentence).
#[derive(Debug)]
enum Unparsed {
    /// The file could not be read.
    Read(fsx::ReadFailure),
    /// Its bytes are not JSON.
    Json(serde_json::Error),
}

impl std::fmt::Display for Unparsed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unparsed::Read(e) => write!(f, "the file {}", e.describe()),
            Unparsed::Json(e) => write!(f, "{e}"),
        }
    }
}

/// The JSON of a comment file read by [`fsx::read_file`], or why there is none.
fn parse(
    read: std::result::Result<fsx::StoreFile, fsx::ReadFailure>,
) -> std::result::Result<Value, Unparsed> {
    let read = read.map_err(Unparsed::Read)?;
    serde_json::from_slice::<Value>(&read.bytes).map_err(Unparsed::Json)
}

/// The records (or the error) of comment file `file`, parsed into `parsed`.
fn file_snapshot(parsed: std::result::Result<Value, Unparsed>, file: String) -> Snapshot {
    let mut snap = Snapshot::default();
    match parsed {
        Err(error) => snap.unreadable.push(Unreadable {
            file,
            error: error.to_string(),
        }),
        Ok(Value::Array(items)) => {
            for (index, item) in items.into_iter().enumerate() {
                snap.records.push(Record {
                    file: file.clone(),
                    location: Location::Legacy { index },
                    comment: Comment::from_value(item),
                });
            }
        }
        Ok(v) => snap.records.push(Record {
            file,
            location: Location::File,
            comment: Comment::from_value(v),
        }),
    }
    snap
}

/// [`read_comment_file`] for a build ([`Store::load_for_build`]): through the build's cache —
/// the cached records when the file's key is unchanged, else the file, parsed (and what to
/// cache of it) — with resolved comments thin.
///
/// A cache value is `F` and the file's JSON, or, for a file holding one comment that is thin,
/// `T` and its thin record ([`lean::to_cache_text`]), tab-separated.
fn read_comment_file_for_build(
    cache: &cache::Cache,
    f: &Listed,
    space: &str,
) -> (Snapshot, cache::Learnt) {
    let (path, file) = (f.path.as_path(), f.rel.clone());
    let Some(meta) = f
        .meta
        .clone()
        .or_else(|| std::fs::symlink_metadata(path).ok())
    else {
        return (
            read_comment_file(path, file).thinned(space),
            cache::Learnt::Read(None),
        );
    };
    let key = cache::FileKey::of(&meta);
    if let Some(text) = cache.get(&file, &key)
        && let Some(snap) = from_cache_value(text, &file, space)
    {
        return (snap, cache::Learnt::Cached);
    }
    let read = fsx::read_file(path, fsx::MAX_COMMENT_FILE);
    // Cached only when the file was not modified just now, and the file read (its `fstat`
    // after the read) is still what was stat'ed.
    let same = read
        .as_ref()
        .is_ok_and(|r| r.metadata().is_ok_and(|m| cache::FileKey::of(&m) == key));
    let parsed = parse(read);
    let cacheable = parsed.is_ok() && cache::Cache::cacheable(&key) && same;
    let whole = cacheable.then(|| parsed.as_ref().map(Value::to_string).unwrap_or_default());
    let snap = file_snapshot(parsed, file).thinned(space);
    let value = whole.map(|json| match snap.records.as_slice() {
        [r] if r.location == Location::File => match lean::to_cache_text(&r.comment) {
            Some(thin) => format!("T\t{thin}"),
            None => format!("F\t{json}"),
        },
        _ => format!("F\t{json}"),
    });
    (snap, cache::Learnt::Read(value.map(|v| (key, v))))
}

/// The records a cache value ([`read_comment_file_for_build`]) gives for `file` in a book
/// whose space is `space`; `None` (a miss) when it is garbled or a thin record of another space.
fn from_cache_value(text: &str, file: &str, space: &str) -> Option<Snapshot> {
    if let Some(json) = text.strip_prefix("F\t") {
        let v = serde_json::from_str::<Value>(json).ok()?;
        return Some(file_snapshot(Ok(v), file.to_string()).thinned(space));
    }
    let comment = lean::from_cache_text(text.strip_prefix("T\t")?, space)?;
    Some(Snapshot {
        records: vec![Record {
            file: file.to_string(),
            location: Location::File,
            comment,
        }],
        ..Snapshot::default()
    })
}

/// The fields of a comment being created, for [`new_comment`].
#[derive(Debug, Clone)]
pub struct Fresh<'a> {
    /// Its id ([`ids::comment_id`]).
    pub id: &'a str,
    /// Its space.
    pub space: &'a str,
    /// Its page id.
    pub page: &'a str,
    /// Its scope.
    pub scope: Scope,
    /// Its anchor (`null` for a page comment).
    pub anchor: Value,
    /// The author of its first message.
    pub author: &'a str,
    /// The text of its first message.
    pub body: &'a str,
    /// Its creation instant ([`ids::iso`]).
    pub ts: &'a str,
}

/// Builds a new comment object with the contract's key order: open, not held, one message.
pub fn new_comment(f: &Fresh) -> Comment {
    let mut m = Map::new();
    m.insert("id".into(), f.id.into());
    m.insert("space".into(), f.space.into());
    m.insert("page".into(), f.page.into());
    m.insert("scope".into(), f.scope.into());
    m.insert("anchor".into(), f.anchor.clone());
    m.insert(
        "thread".into(),
        Value::Array(vec![comment::message(f.author, f.body, f.ts)]),
    );
    m.insert("status".into(), Status::Open.into());
    m.insert("hold".into(), false.into());
    m.insert("resolution".into(), Value::Null);
    m.insert("createdAt".into(), f.ts.into());
    m.insert("updatedAt".into(), f.ts.into());
    Comment::from_map(m)
}
