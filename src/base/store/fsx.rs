//! Safe file operations for the store: atomic writes (temp file in the same directory, fsync,
//! rename, directory fsync; for the git merge driver, a temp file in the store renamed onto git's
//! own file), directory creation that never follows a symlink, and the store-wide OS advisory lock
//! that serialises every read-modify-write.

use crate::{Error, Result, bail};
use std::fs::{self, File};
use std::io::Write;
use std::path::{Component, Path, PathBuf};

/// An exclusive advisory lock on the store directory, held until dropped. It is an OS lock
/// (`flock`), so it dies with the process: there is never a lock file to clean up.
#[derive(Debug)]
pub struct StoreLock {
    _file: File,
}

impl StoreLock {
    /// Blocks until the exclusive lock on `store` is acquired.
    pub fn acquire(store: &Path) -> Result<StoreLock> {
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
pub fn ensure_dir(root: &Path, rel: &Path) -> Result<PathBuf> {
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
    tmp: tempfile::NamedTempFile,
    target: PathBuf,
    dir: PathBuf,
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
        crate::base::util::failpoint::hit("before-rename");
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

/// What [`Prepared::exchange`] did.
pub enum Exchange {
    /// The new file is in place; what it replaced is kept under the temp name until the
    /// caller has looked at it.
    Swapped(Swapped),
    /// No atomic swap here (not Linux, or a file system without it): nothing was done.
    Unsupported(Prepared),
}

/// A new file swapped in by [`Prepared::exchange`], the file it replaced kept under the temp
/// name: compare it with what was checked, then keep the new file or swap back.
pub struct Swapped {
    /// Names the replaced file now (the handle inside is the new file's). Dropped: removed.
    tmp: tempfile::NamedTempFile,
    target: PathBuf,
    dir: PathBuf,
}

impl Prepared {
    /// Swaps the new file and the target atomically (Linux `renameat2(RENAME_EXCHANGE)`), so
    /// no save by another program between a check and the swap is lost: it is what comes out,
    /// and [`Swapped::swap_back`] puts it back. The new file keeps the old one's permissions.
    ///
    /// The failpoint `before-rename` (feature `failpoints`) aborts the process before the swap.
    pub fn exchange(self) -> Result<Exchange> {
        #[cfg(target_os = "linux")]
        {
            crate::base::util::failpoint::hit("before-rename");
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&self.target)
                .map(|m| m.permissions().mode() & 0o777)
                .unwrap_or(0o644);
            fs::set_permissions(self.tmp.path(), fs::Permissions::from_mode(mode))
                .map_err(|e| Error::io("cannot set permissions", self.tmp.path(), e))?;
            match swap(self.tmp.path(), &self.target) {
                Ok(()) => Ok(Exchange::Swapped(Swapped {
                    tmp: self.tmp,
                    target: self.target,
                    dir: self.dir,
                })),
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP)
                    ) =>
                {
                    Ok(Exchange::Unsupported(self))
                }
                Err(e) => Err(Error::io("cannot replace", &self.target, e)),
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            Ok(Exchange::Unsupported(self))
        }
    }
}

impl Swapped {
    /// The bytes of the file the new one replaced.
    pub fn replaced(&self) -> Result<Vec<u8>> {
        fs::read(self.tmp.path()).map_err(|e| Error::io("cannot read", self.tmp.path(), e))
    }

    /// Keeps the new file in place, removes the replaced one; the directory's fsync is returned.
    pub fn keep_ours(self) -> DirSync {
        let Swapped { tmp, dir, .. } = self;
        drop(tmp);
        DirSync(dir)
    }

    /// Puts the replaced file back in place and removes the new one. When yet another file took
    /// the target's name between the two swaps, that newest file is put in place instead.
    pub fn swap_back(self) -> Result<()> {
        #[cfg(target_os = "linux")]
        {
            swap(self.tmp.path(), &self.target)
                .map_err(|e| Error::io("cannot put back", &self.target, e))?;
            // Ours came back under the temp name, unless a rename replaced it meanwhile.
            if !still_named(self.tmp.as_file(), self.tmp.path()) {
                swap(self.tmp.path(), &self.target)
                    .map_err(|e| Error::io("cannot put back", &self.target, e))?;
            }
            sync_dir(&self.dir);
        }
        Ok(())
    }
}

/// Exchanges the names `a` and `b` atomically (both must exist, on one file system).
#[cfg(target_os = "linux")]
fn swap(a: &Path, b: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    /// `RENAME_EXCHANGE` of `<linux/fs.h>`.
    const RENAME_EXCHANGE: libc::c_uint = 2;
    let c = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))
    };
    let (a, b) = (c(a)?, c(b)?);
    // SAFETY: both paths are valid NUL-terminated strings that outlive the call; the syscall
    // reads them and nothing else.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            RENAME_EXCHANGE,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The suffix of every temp file a write makes (`.<name>.<random>.tmp`).
pub const TEMP_SUFFIX: &str = ".tmp";

/// Whether `path` still names the open `file` (a `clean` may have removed it).
fn still_named(file: &File, path: &Path) -> bool {
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
    Recent,
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
            return Ok(Leftover::Recent);
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
pub struct DirSync(PathBuf);

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
pub fn write_atomic_deferred(root: &Path, rel: &Path, contents: &[u8]) -> Result<DirSync> {
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
pub fn remove_empty_dirs(root: &Path, rel: &Path) {
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

fn sync_dir(dir: &Path) {
    // Makes the rename durable. Best effort: not every platform can open a directory.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}
