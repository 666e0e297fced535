//! Swapping a new file in atomically: [`Prepared::exchange`] exchanges a prepared file with its
//! target (Linux `renameat2(RENAME_EXCHANGE)`), keeping what it replaced under the temp name so
//! the caller can compare it with what it checked, then keep the new file or swap back. For
//! `apply`, which must never overwrite a save another program made between its check and its
//! write. Elsewhere (and on file systems without the swap) nothing is done and the caller renames.
//!
//! May call: the store's file helpers (`fsx`).

use super::fsx::{DirSync, Prepared};
use crate::{Error, Result};
#[cfg(target_os = "linux")]
use std::fs;
use std::path::{Path, PathBuf};

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
            notabene_core::failpoint::hit("before-rename");
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

    /// Whether the target still names the new file (no other program renamed its own over it
    /// since the swap).
    pub fn in_place(&self) -> bool {
        super::fsx::still_named(self.tmp.as_file(), &self.target)
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
            if !super::fsx::still_named(self.tmp.as_file(), self.tmp.path()) {
                swap(self.tmp.path(), &self.target)
                    .map_err(|e| Error::io("cannot put back", &self.target, e))?;
            }
            super::fsx::sync_dir(&self.dir);
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
