//! Reading the store: parsing the comment files its walk lists (`walk`) into records, the
//! [`Snapshot`] of one whole read, and the reads of one page or one comment.
//!
//! Owns: [`Snapshot`], [`Unreadable`], [`NotUtf8`], the parse of a comment file (own file or
//! legacy array).
//! Calls: `walk` (the listing), `fsx` (no-follow reads), `meta` (the schema-version guard),
//! `notabene_core::par`.

use crate::walk::{Listed, Walk};
use crate::{Comment, Location, Record, Store, fsx, ids, validate_page_id};
use notabene_core::{Error, Result, say_err};
use serde_json::Value;
use std::path::Path;

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

    /// Lists the store's files (with their metadata when `stat`), then reads each comment
    /// file with `read`, in parallel on a big store; the snapshot keeps the listing order, and
    /// so does the list of what `read` returned beside each file's records.
    pub(crate) fn read_listed<X: Send>(
        &self,
        stat: bool,
        read: impl Fn(&Listed) -> (Snapshot, X) + Sync,
    ) -> Result<(Snapshot, Vec<(String, X)>)> {
        Ok(self.read_walked(&self.list(stat)?, read))
    }

    /// The store's files, listed (with their keys when `stat`), for
    /// [`Store::read_walked`].
    pub(crate) fn list(&self, stat: bool) -> Result<Walk> {
        if !self.exists() {
            return Ok(Walk::default());
        }
        crate::walk::walk(&self.root, stat)
    }

    /// [`Store::read_listed`] of the files `walk` listed.
    pub(crate) fn read_walked<X: Send>(
        &self,
        walk: &Walk,
        read: impl Fn(&Listed) -> (Snapshot, X) + Sync,
    ) -> (Snapshot, Vec<(String, X)>) {
        let files = &walk.files;
        let threads = if files.len() > 256 {
            notabene_core::par::default_threads()
        } else {
            1
        };
        let parsed = notabene_core::par::par_map(files, threads, &read);
        let mut snap = Snapshot {
            leftovers: walk.leftovers.clone(),
            not_utf8: walk.not_utf8.clone(),
            symlinks: walk.symlinks.clone(),
            ..Snapshot::default()
        };
        let mut extra = Vec::with_capacity(files.len());
        for ((part, x), f) in parsed.into_iter().zip(files) {
            snap.records.extend(part.records);
            snap.unreadable.extend(part.unreadable);
            extra.push((f.rel.clone(), x));
        }
        (snap, extra)
    }

    /// The temp files (`*.tmp`) in the store, store-relative, in a deterministic order.
    pub fn leftovers(&self) -> Result<Vec<String>> {
        Ok(self.list(false)?.leftovers)
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

    /// The comment file `rel` (store-relative), read as every reader reads it ([`fsx::read_in`]).
    pub(crate) fn read(&self, rel: &str) -> std::result::Result<fsx::StoreFile, fsx::ReadFailure> {
        fsx::read_in(&self.root, Path::new(rel), fsx::MAX_COMMENT_FILE)
    }
}

/// The records (or the error) of the comment file at `path`, store-relative `file`.
pub(crate) fn read_comment_file(path: &Path, file: String) -> Snapshot {
    file_snapshot(parse(fsx::read_file(path, fsx::MAX_COMMENT_FILE)), file)
}

/// Why a comment file has no JSON (shown as a sentence).
#[derive(Debug)]
pub(crate) enum Unparsed {
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
pub(crate) fn parse(
    read: std::result::Result<fsx::StoreFile, fsx::ReadFailure>,
) -> std::result::Result<Value, Unparsed> {
    let read = read.map_err(Unparsed::Read)?;
    // Text checked as UTF-8 once, whole, is parsed without checking each string again; bytes
    // that are not UTF-8 are parsed as bytes, for the parser's own error.
    match std::str::from_utf8(&read.bytes) {
        Ok(text) => serde_json::from_str::<Value>(text),
        Err(_) => serde_json::from_slice::<Value>(&read.bytes),
    }
    .map_err(Unparsed::Json)
}

/// The records (or the error) of comment file `file`, parsed into `parsed`.
pub(crate) fn file_snapshot(
    parsed: std::result::Result<Value, Unparsed>,
    file: String,
) -> Snapshot {
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
