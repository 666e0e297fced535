//! The repository-local git configuration and attributes the store's merge driver needs:
//! where the git directory is, reading and setting a local config key, what `git
//! check-attr` says of a path, and the driver's command line. Calls: `git` (the runner).

use super::git::git;
use std::path::{Path, PathBuf};

/// The git directory of the repository whose work tree holds `dir` (a linked work tree's own
/// one), absolute: where state local to a clone is kept, which git never carries.
pub fn git_dir(dir: &Path) -> Option<PathBuf> {
    match git(dir, &["rev-parse", "--absolute-git-dir"]) {
        Some((0, out)) if !out.trim().is_empty() => Some(PathBuf::from(out.trim_end_matches('\n'))),
        _ => None,
    }
}

/// The repository-local value of a git config `key` in the repository holding `dir`.
pub fn local_config(dir: &Path, key: &str) -> Option<String> {
    match git(dir, &["config", "--local", "--get", key]) {
        Some((0, out)) => Some(out.trim_end_matches('\n').to_string()),
        _ => None,
    }
}

/// Sets a git config `key` in the local config of the repository holding `dir` (git writes
/// its config through its own lock file).
pub fn set_local_config(dir: &Path, key: &str, value: &str) -> crate::Result<()> {
    match git(dir, &["config", "--local", key, value]) {
        Some((0, _)) => Ok(()),
        Some((_, _)) | None => Err(crate::Error::new(format!(
            "git config --local {key} failed ({})",
            dir.display()
        ))),
    }
}

/// The value git's attributes give `attr` for `path` (`unspecified` when none), as
/// `git check-attr` reports it.
pub fn check_attr(dir: &Path, attr: &str, path: &Path) -> Option<String> {
    let p = path.to_string_lossy();
    let (code, out) = git(dir, &["check-attr", attr, "--", &p])?;
    if code != 0 {
        return None;
    }
    // `<path>: <attr>: <value>`
    out.lines()
        .next()
        .and_then(|l| l.rsplit_once(": "))
        .map(|(_, v)| v.to_string())
}

/// The merge driver command git runs for store files (`merge.notabene.driver`): this program,
/// by its absolute path, quoted for the shell.
pub fn merge_driver_command() -> crate::Result<String> {
    let exe = std::env::current_exe()
        .map_err(|e| crate::Error::new(format!("cannot find this program's path: {e}")))?;
    let exe = exe.to_string_lossy();
    Ok(format!(
        "'{}' merge-driver %O %A %B %P",
        exe.replace('\'', "'\\''")
    ))
}
