//! Safe file operations for the store: atomic writes (temp file in the same directory, fsync,
//! rename, directory fsync; for the git merge driver, a temp file in the store renamed onto git's
//! own file), directory creation that never follows a symlink, the store-wide OS advisory lock
//! that serialises every read-modify-write, and the one bounded read of a store file
//! ([`read_file`], [`read_in`]) every reader of comment files, `journal.json` and `meta.json`
//! goes through: never through a symlink, regular files only, at most a cap.

use crate::{Error, Result, bail};
use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

/// An exclusive advisory lock on the store directory, held until dropped. It is an OS lock
/// (`flock`), so it dies with the process: there is never a lock file to clean up.
#[derive(Debug)]
pub struct StoreLock {
    _file: File,
}

impl StoreLock {
    /// Blocks until the exclusive lock on `store` is acquired.
    pub(crate) fn acquire(store: &Path) -> Result<StoreLock> {
        let file = File::open(store)
            .map_err(|e| Error::io("cannot open the store to lock it", store, e))?;
        file.lock()
            .map_err(|e| Error::io("cannot lock the store", store, e))?;
        Ok(StoreLock { _file: file })
    }
}

/// Checks that `rel` is a plain relative path (no `..`, no root, no prefix) and returns it
/// joined under `root`.
pub fn contained(root: &Path, rel: &Path) -> Result<PathBuf> {
    for c in rel.components() {
        match c {
            Component::Normal(_) => {}
            _ => {
                return Err(Error::new(format!(
                    "refusing a path outside the store ({})",
                    rel.display()
                )));
            }
        }
    }
    Ok(root.join(rel))
}

/// Creates the directory `root/rel` (and its parents below `root`), refusing to traverse any
/// existing component that is a symlink or not a directory.
pub(crate) fn ensure_dir(root: &Path, rel: &Path) -> Result<PathBuf> {
    let mut cur = root.to_path_buf();
    for c in rel.components() {
        let Component::Normal(name) = c else {
            bail!("refusing a path outside the store ({})", rel.display());
        };
        cur.push(name);
        match fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => {
                bail!("refusing to write through a symlink ({})", cur.display())
            }
            Ok(m) if m.is_dir() => {}
            Ok(_) => bail!("expected a directory, found a file ({})", cur.display()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => match fs::create_dir(&cur) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(Error::io("cannot create directory", &cur, e)),
            },
            Err(e) => return Err(Error::io("cannot inspect", &cur, e)),
        }
    }
    Ok(cur)
}

/// Refuses when any component of `rel` below `root` (the file itself included) is a symlink.
pub fn check_no_symlink(root: &Path, rel: &Path) -> Result<()> {
    let mut cur = root.to_path_buf();
    for c in rel.components() {
        cur.push(c);
        if let Ok(m) = fs::symlink_metadata(&cur)
            && m.file_type().is_symlink()
        {
            bail!("refusing to write through a symlink ({})", cur.display());
        }
    }
    Ok(())
}

/// A new file written and fsynced under a temporary name, to be put in place with
/// [`Prepared::create`] — the slow part of a write done before the store lock is taken.
pub struct Prepared {
    pub(super) tmp: tempfile::NamedTempFile,
    pub(super) target: PathBuf,
    pub(super) dir: PathBuf,
}

/// Writes `contents` to a temp file beside `root/rel` and fsyncs it (see [`Prepared`]).
pub fn prepare(root: &Path, rel: &Path, contents: &[u8]) -> Result<Prepared> {
    let parent_rel = rel.parent().unwrap_or(Path::new(""));
    let dir = ensure_dir(root, parent_rel)?;
    check_no_symlink(root, rel)?;
    let target = contained(root, rel)?;
    prepare_at(&dir, target, contents)
}

/// A new file for `target` (outside the store: a chapter `apply` edits) written and fsynced
/// in the directory `tmp_dir` (the store's, where `verify` and `clean` look for leftovers,
/// and where neither mdBook nor the book's sources see it), to be put in place with
/// [`Prepared::replace`]. `tmp_dir` must be on the target's file system.
pub fn prepare_in(tmp_dir: &Path, target: &Path, contents: &[u8]) -> Result<Prepared> {
    prepare_at(tmp_dir, target.to_path_buf(), contents)
}

fn prepare_at(tmp_dir: &Path, target: PathBuf, contents: &[u8]) -> Result<Prepared> {
    let dir = tmp_dir.to_path_buf();
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut tmp = loop {
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(TEMP_SUFFIX)
            .tempfile_in(&dir)
            .map_err(|e| Error::io("cannot create a temporary file", &dir, e))?;
        // Held until the file is renamed or dropped: `clean` removes only temp files that no
        // live writer holds. A `clean` between the creation and the lock has removed it:
        // then start again with a new one. (Unix advisory locks only: Windows locks are
        // mandatory and would refuse our own write; there `clean` goes by age.)
        #[cfg(unix)]
        tmp.as_file()
            .lock_shared()
            .map_err(|e| Error::io("cannot lock a temporary file", tmp.path(), e))?;
        if still_named(tmp.as_file(), tmp.path()) {
            break tmp;
        }
    };
    tmp.write_all(contents)
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(|e| Error::io("cannot write", &target, e))?;
    let dir = target.parent().map_or(dir, Path::to_path_buf);
    Ok(Prepared { tmp, target, dir })
}

/// [`prepare`], but [`Prepared::replace`] puts the file at `target` instead of `root/rel`: the
/// temp file is named and placed as one for `root/rel` would be (so `clean` and `verify` find
/// it there), and `target` must be on the same file system. For the git merge driver, whose
/// result goes to git's own temp file (`%A`) while its temp file stays in the store.
pub fn prepare_for(root: &Path, rel: &Path, target: PathBuf, contents: &[u8]) -> Result<Prepared> {
    let mut prepared = prepare(root, rel, contents)?;
    prepared.dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    prepared.target = target;
    Ok(prepared)
}

impl Prepared {
    /// Adds `bytes` at the end of the prepared file, not fsynced: for bytes another program
    /// appended to the target (without an fsync of its own) while this file was prepared.
    pub fn append(&mut self, bytes: &[u8]) -> Result<()> {
        self.tmp
            .write_all(bytes)
            .map_err(|e| Error::io("cannot write", &self.target, e))
    }

    /// Puts the file in place unless one is there already (then `Ok(None)`, nothing
    /// changed, the temp file removed); the directory's fsync is returned.
    pub fn create(self) -> Result<Option<DirSync>> {
        match self.tmp.persist_noclobber(&self.target) {
            Ok(_) => Ok(Some(DirSync(self.dir))),
            Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => Ok(None),
            Err(e) => Err(Error::io("cannot create", &self.target, e.error)),
        }
    }

    /// Puts the file in place, over the old one (whose permissions it keeps); the
    /// directory's fsync is returned.
    ///
    /// The failpoint `before-rename` (feature `failpoints`) aborts the process with the temp file written and
    /// not yet renamed, as a `kill -9` would (for the leftover tests).
    pub fn replace(self) -> Result<DirSync> {
        notabene_core::failpoint::hit("before-rename");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&self.target)
                .map(|m| m.permissions().mode() & 0o777)
                .unwrap_or(0o644);
            fs::set_permissions(self.tmp.path(), fs::Permissions::from_mode(mode))
                .map_err(|e| Error::io("cannot set permissions", self.tmp.path(), e))?;
        }
        self.tmp
            .persist(&self.target)
            .map_err(|e| Error::io("cannot replace", &self.target, e.error))?;
        Ok(DirSync(self.dir))
    }
}

/// The suffix of every temp file a write makes (`.<name>.<random>.tmp`).
pub(crate) const TEMP_SUFFIX: &str = ".tmp";

/// Whether `path` still names the open `file` (a `clean` may have removed it, another program
/// renamed its own file over it).
pub fn still_named(file: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), fs::symlink_metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (file, path);
        true
    }
}

/// What [`remove_leftover`] did with one temp file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leftover {
    /// Removed.
    Removed,
    /// Already gone when its turn came (its writer finished or gave up).
    Gone,
    /// A running writer holds it: kept.
    InUse,
    /// Not one of ours (another tool's temp file, which takes no lock) and younger than
    /// [`FOREIGN_MIN_AGE`]: kept, as its writer may still be running.
    TooYoung,
}

/// How old a temp file without our name pattern must be before `clean` removes it.
pub const FOREIGN_MIN_AGE: std::time::Duration = std::time::Duration::from_secs(60);

/// Removes the temp file `root/rel` unless a live writer holds it. Ours (`.<name>.….tmp`)
/// are held by their writer's lock until renamed; other tools' get [`FOREIGN_MIN_AGE`].
/// Call with the store lock held.
pub fn remove_leftover(root: &Path, rel: &Path) -> Result<Leftover> {
    let path = contained(root, rel)?;
    check_no_symlink(root, rel)?;
    // Ours hold their advisory lock until renamed (Unix); anything else goes by age.
    let ours = cfg!(unix)
        && rel
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'));
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Leftover::Gone),
        Err(e) => return Err(Error::io("cannot open", &path, e)),
    };
    if !ours {
        let age = file
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .unwrap_or_default();
        if age < FOREIGN_MIN_AGE {
            return Ok(Leftover::TooYoung);
        }
    }
    match file.try_lock() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => return Ok(Leftover::InUse),
        Err(fs::TryLockError::Error(e)) => return Err(Error::io("cannot lock", &path, e)),
    }
    // Removed while we hold its lock: no writer can take it in between.
    remove_file(root, rel)?;
    drop(file);
    Ok(Leftover::Removed)
}

/// Writes `contents` to `root/rel` atomically: a temp file in the same directory, fsync,
/// rename over the target, fsync of the directory. Readers see the old or the new file,
/// never a half-written one. Parent directories are created; symlinks are refused.
pub fn write_atomic(root: &Path, rel: &Path, contents: &[u8]) -> Result<()> {
    write_atomic_deferred(root, rel, contents).map(DirSync::finish)
}

/// The fsync of a directory after a rename in it, left to the caller: a writer holding the
/// store lock releases it first (the rename is what other writers see; the directory's fsync
/// only makes it durable, and is done before the write is reported).
#[must_use = "finish() makes the rename durable"]
pub struct DirSync(pub(super) PathBuf);

impl DirSync {
    /// The directory to fsync.
    pub fn dir(&self) -> &Path {
        &self.0
    }

    /// Fsyncs the directory.
    pub fn finish(self) {
        sync_dir(&self.0);
    }
}

/// [`write_atomic`], but the directory's fsync is returned, not done.
pub(crate) fn write_atomic_deferred(root: &Path, rel: &Path, contents: &[u8]) -> Result<DirSync> {
    prepare(root, rel, contents)?.replace()
}

/// Removes `root/rel` (a file), refusing symlinked paths, and syncs the directory.
pub fn remove_file(root: &Path, rel: &Path) -> Result<()> {
    check_no_symlink(root, rel.parent().unwrap_or(Path::new("")))?;
    let target = contained(root, rel)?;
    fs::remove_file(&target).map_err(|e| Error::io("cannot delete", &target, e))?;
    if let Some(dir) = target.parent() {
        sync_dir(dir);
    }
    Ok(())
}

/// Removes the directory `root/rel` and then its ancestors below `root`, each only while
/// empty. Never removes anything that still holds a file or a sub-page.
pub(crate) fn remove_empty_dirs(root: &Path, rel: &Path) {
    let mut cur = Some(rel);
    while let Some(r) = cur {
        if r.as_os_str().is_empty() {
            break;
        }
        if fs::remove_dir(root.join(r)).is_err() {
            break;
        }
        cur = r.parent();
    }
}

pub(super) fn sync_dir(dir: &Path) {
    // Makes the rename durable. Best effort: not every platform can open a directory.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// The largest comment file a reader takes (a v3 file, or a legacy v1 array of a whole page):
/// a message is at most 64 KiB (`limits::MAX_BODY`), so this holds a thread of some 250
/// full-length messages or a v1 page of thousands of comments, while one hostile file cannot make
/// a build allocate more than this (and its parse a few times this).
pub const MAX_COMMENT_FILE: u64 = 16 << 20;
/// The largest `journal.json` read: it only grows (an entry of about 1 KiB per pass), so it gets
/// room for tens of thousands of entries — years of passes — and no more.
pub const MAX_JOURNAL: u64 = 64 << 20;
/// The largest `meta.json` read: it holds one number.
pub const MAX_META: u64 = 64 << 10;

/// Why [`read_file`] did not read a store file.
#[derive(Debug)]
pub enum ReadFailure {
    /// Nothing there.
    Missing,
    /// A symlink: never followed.
    Symlink,
    /// Not a regular file: what it is (`a directory`, `a FIFO`, `a device`, `a socket`).
    NotRegular(&'static str),
    /// Larger than the cap (in bytes).
    TooLarge(u64),
    /// Any other I/O error.
    Io(std::io::Error),
}

impl ReadFailure {
    /// What the file is, as the rest of a sentence naming it: `is over 64 MiB`, `is a symlink,
    /// which the store never follows`, `cannot be read: <error>`.
    pub fn describe(&self) -> String {
        match self {
            ReadFailure::Missing => "does not exist".into(),
            ReadFailure::Symlink => "is a symlink, which the store never follows".into(),
            ReadFailure::NotRegular(what) => format!("is {what}, not a regular file"),
            ReadFailure::TooLarge(cap) => format!("is over {}", size_words(*cap)),
            ReadFailure::Io(e) => format!("cannot be read: {e}"),
        }
    }

    /// The one-line error for the store file `name` (store-relative):
    /// `journal.json is over 64 MiB (journal.json)`.
    pub(crate) fn to_error(&self, name: &str) -> Error {
        Error::new(format!("{name} {} ({name})", self.describe()))
    }
}

/// `64 MiB`, `64 KiB`, or bytes.
fn size_words(n: u64) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} bytes")
    }
}

/// A store file read whole by [`read_file`].
#[derive(Debug)]
pub struct StoreFile {
    /// Its bytes.
    pub bytes: Vec<u8>,
    meta: fs::Metadata,
}

impl StoreFile {
    /// The metadata of the file read: the `fstat` of its handle just before its bytes were
    /// read, whatever its path names since. (A write after it changes the file's change time,
    /// so what is keyed on it is never taken for the file as written since.)
    pub fn metadata(&self) -> &fs::Metadata {
        &self.meta
    }
}

/// Reads the file at `path` whole, as every reader of the store does: opened without following
/// a symlink (`O_NOFOLLOW`, and `O_NONBLOCK` so that a FIFO cannot hold the open; elsewhere
/// than on Unix, a symlink is refused by its metadata first), refused unless the opened file is
/// a regular file (its `fstat`), and at most `cap` bytes (refused past it, before or while it is
/// read). The directories on the way are the caller's to have checked (the store's walk never
/// enters a symlink; [`read_in`] checks them). A file of the size its `fstat` gave is read in
/// one call (into a buffer a byte longer), with no second to find its end; one that grew since
/// is read on to its end, within `cap`.
pub fn read_file(path: &Path, cap: u64) -> std::result::Result<StoreFile, ReadFailure> {
    let mut file = open_no_follow(path)?;
    let meta = file.metadata().map_err(ReadFailure::Io)?;
    if !meta.is_file() {
        return Err(ReadFailure::NotRegular(kind_of(&meta.file_type())));
    }
    if meta.len() > cap {
        return Err(ReadFailure::TooLarge(cap));
    }
    let size = meta.len() as usize;
    let mut bytes = vec![0u8; size + 1];
    let mut got = 0;
    while got < bytes.len() {
        match file.read(&mut bytes[got..]) {
            Ok(0) => break,
            Ok(n) => {
                got += n;
                if got == size {
                    break;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ReadFailure::Io(e)),
        }
    }
    bytes.truncate(got);
    if got > size {
        (&file)
            .take(cap.saturating_add(1).saturating_sub(got as u64))
            .read_to_end(&mut bytes)
            .map_err(ReadFailure::Io)?;
    }
    if bytes.len() as u64 > cap {
        return Err(ReadFailure::TooLarge(cap));
    }
    Ok(StoreFile { bytes, meta })
}

/// [`read_file`] of `root/rel`, refused as a [`ReadFailure::Symlink`] when a directory of `rel`
/// below `root` is a symlink; a regular file's metadata is checked before it is opened, so a
/// device is never opened.
pub fn read_in(root: &Path, rel: &Path, cap: u64) -> std::result::Result<StoreFile, ReadFailure> {
    let mut cur = root.to_path_buf();
    for c in rel.components() {
        let Component::Normal(name) = c else {
            return Err(ReadFailure::Io(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a path inside the store",
            )));
        };
        cur.push(name);
        match fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => return Err(ReadFailure::Symlink),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ReadFailure::Missing),
            Err(e) => return Err(ReadFailure::Io(e)),
        }
    }
    match fs::symlink_metadata(&cur) {
        Ok(m) if !m.is_file() => Err(ReadFailure::NotRegular(kind_of(&m.file_type()))),
        _ => read_file(&cur, cap),
    }
}

/// Whether `root/rel` is reached without a symlink (the last component included); a missing
/// component counts as reached (nothing there to follow).
pub(crate) fn no_symlink_on_the_way(root: &Path, rel: &Path) -> bool {
    check_no_symlink(root, rel).is_ok()
}

fn open_no_follow(path: &Path) -> std::result::Result<File, ReadFailure> {
    let mut opts = fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    #[cfg(not(unix))]
    if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(ReadFailure::Symlink);
    }
    match opts.open(path) {
        Ok(f) => Ok(f),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(ReadFailure::Missing),
        // `O_NOFOLLOW` on a symlink: ELOOP (EMLINK on FreeBSD); told by the link itself.
        Err(e) => match fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => Err(ReadFailure::Symlink),
            _ => Err(ReadFailure::Io(e)),
        },
    }
}

/// What a file that is not a regular file is, in words.
fn kind_of(ft: &fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_char_device() || ft.is_block_device() {
            return "a device";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    if ft.is_dir() {
        "a directory"
    } else if ft.is_symlink() {
        "a symlink"
    } else {
        "not a file"
    }
}

#[cfg(all(test, unix))]
mod read_tests;
