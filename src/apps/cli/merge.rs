//! The store in git: `merge-driver` (the merge git runs for store files), the octopus strategy
//! `git-merge-notabene` (git's own octopus strategy never runs merge drivers), the git set-up
//! `init` does (the store's `.gitattributes` and `.gitignore`, `merge.notabene.driver` and
//! `pull.octopus` in the clone's config), what `doctor` reports of it, and `clean` (temp files of
//! killed writes, removed under the store lock). The driver's own temp file lives in the store,
//! never in the work tree's top (see `temp_home`).

use super::{Ctx, say, say_err};
use crate::model::book::{git, git_config};
use crate::{Error, Result};
use clap::Args;
use notabene_store::{Store, fsx, merge};
use serde_json::{Value, json};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The name store files carry in `.gitattributes` (`merge=notabene`).
pub(crate) const DRIVER: &str = "notabene";
/// The program name git runs for the merge strategy `notabene` (a link to this program).
pub(crate) const STRATEGY_PROGRAM: &str = "git-merge-notabene";
/// The attributes line `init` writes.
const ATTRIBUTES_LINE: &str = "*.json merge=notabene";
const ATTRIBUTES: &str = "# Written by `notabene init`: git merges the review store's files with `notabene merge-driver`\n# (set up once per clone by `notabene init`; without it git merges them as text).\n*.json merge=notabene\n";
/// The ignore line `init` writes.
const IGNORE_LINE: &str = "*.tmp";
const IGNORE: &str = "# Written by `notabene init`: temp files of interrupted writes never reach git\n# (`notabene comments verify` lists them, `notabene clean` removes them).\n*.tmp\n";

#[derive(Args, Debug)]
pub(crate) struct MergeDriverArgs {
    /// The common ancestor's version (git's %O).
    base: PathBuf,
    /// Our version, and where the result goes (git's %A).
    ours: PathBuf,
    /// Their version (git's %B).
    theirs: PathBuf,
    /// The file's path in the repository (git's %P).
    path: String,
}

/// `merge-driver %O %A %B %P`: exit 0 with the merge in `%A`, or 1 with both versions in
/// `%A` between conflict markers.
pub(crate) fn merge_driver(a: &MergeDriverArgs) -> Result<i32> {
    let read = |p: &Path| std::fs::read(p).map_err(|e| Error::io("cannot read", p, e));
    let (base, ours, theirs) = (read(&a.base)?, read(&a.ours)?, read(&a.theirs)?);
    let (bytes, code) = match merge::merge(&a.path, &base, &ours, &theirs) {
        Ok(bytes) => (bytes, 0),
        Err(why) => {
            say_err!(
                "notabene: merge conflict, both versions kept for a person: {why} ({})",
                a.path
            );
            (merge::conflict_file(&ours, &theirs, 7, &why.0), 1)
        }
    };
    // A store directory that refuses the temp file (read-only, full) still gets the result.
    let prepared = temp_home(&a.path)
        .and_then(|rel| fsx::prepare_for(Path::new("."), &rel, a.ours.clone(), &bytes).ok());
    match prepared {
        Some(p) => p.replace()?.finish(),
        None => write_in_place(&a.ours, &bytes)?,
    }
    Ok(code)
}

/// Where the driver's temp file goes, relative to the working directory: beside the file's own
/// path in the work tree (`%P`), that is inside the store, whose `.gitignore` (written by
/// `init` with the `.gitattributes` that sends the file to this driver) ignores `*.tmp`, and
/// where `clean` removes the temp file of a killed driver and `verify` lists it. Never beside
/// `%A`: git makes `%A` at the top of the work tree, where a leftover would be a stray file
/// that `git add -A` commits.
///
/// `None` when the working directory is not the top of a work tree (no `.git` there: a bare
/// repository's `merge-tree`) or `%P`'s directory is not there as a real directory (a page
/// only the merged commits have, in the octopus strategy's `merge-tree` steps).
fn temp_home(path: &str) -> Option<PathBuf> {
    let rel = Path::new(path);
    let parent = rel.parent()?;
    if parent.as_os_str().is_empty()
        || fsx::contained(Path::new("."), rel).is_err()
        || fsx::check_no_symlink(Path::new("."), parent).is_err()
        || std::fs::symlink_metadata(".git").is_err()
        || !std::fs::symlink_metadata(parent).is_ok_and(|m| m.is_dir())
    {
        return None;
    }
    Some(rel.to_path_buf())
}

/// Writes the merge result over `%A` itself, when there is no place for a temp file
/// ([`temp_home`]). `%A` is git's own temp file, which git reads once the driver has exited and
/// then removes: no other reader sees it half-written, and nothing is left behind.
fn write_in_place(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .and_then(|mut f| f.write_all(bytes))
        .map_err(|e| Error::io("cannot write the merge result", path, e))
}

/// Runs `git args…` in the working directory; (exit code, stdout, stderr).
fn git_out(args: &[&str]) -> Option<(i32, String, String)> {
    let out = Command::new("git")
        .args(args)
        // The strategy's intermediate commits are never referenced: any identity will do.
        .env("GIT_AUTHOR_NAME", "notabene")
        .env("GIT_AUTHOR_EMAIL", "notabene@localhost")
        .env("GIT_COMMITTER_NAME", "notabene")
        .env("GIT_COMMITTER_EMAIL", "notabene@localhost")
        .output()
        .ok()?;
    Some((
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

/// The merge strategy `notabene`, run by git as `git-merge-notabene <base>… -- <head>
/// <remote>…`: an octopus merge made of one git merge (`merge-tree`, which runs the store's
/// merge driver) per head, into the index and the work tree. Like git's octopus it refuses a
/// merge that needs a person (exit 2: git then restores the tree); 0 when merged.
pub(crate) fn strategy(args: &[OsString]) -> i32 {
    let args: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let heads = match args.iter().position(|a| a == "--") {
        Some(i) => &args[i + 1..],
        None => &[][..],
    };
    let [head, remotes @ ..] = heads else {
        say_err!("notabene: usage: {STRATEGY_PROGRAM} <base>… -- <head> <remote>… (arguments)");
        return 2;
    };
    if remotes.is_empty() {
        say_err!("notabene: nothing to merge into {head} (arguments)");
        return 2;
    }
    if git_out(&["diff-index", "--quiet", "--cached", "HEAD", "--"]).map(|o| o.0) != Some(0) {
        say_err!(
            "notabene: the index has changes: commit or stash them before an octopus merge (index)"
        );
        return 2;
    }
    let mut current = head.clone();
    let mut tree = String::new();
    for remote in remotes {
        match git_out(&[
            "merge-tree",
            "--write-tree",
            "--name-only",
            &current,
            remote,
        ]) {
            Some((0, out, _)) => tree = out.lines().next().unwrap_or_default().to_string(),
            Some((1, out, _)) => {
                let files: Vec<&str> = out.lines().skip(1).take_while(|l| !l.is_empty()).collect();
                say_err!(
                    "notabene: merging {remote} needs a person: merge the heads one by one ({})",
                    files.join(", ")
                );
                return 2;
            }
            other => {
                let why = other.map(|o| o.2).unwrap_or_default();
                say_err!("notabene: git merge-tree failed: {} ({remote})", why.trim());
                return 2;
            }
        }
        let step = git_out(&[
            "commit-tree",
            &tree,
            "-p",
            &current,
            "-p",
            remote,
            "-m",
            "notabene octopus step",
        ]);
        match step {
            Some((0, out, _)) => current = out.trim().to_string(),
            other => {
                let why = other.map(|o| o.2).unwrap_or_default();
                say_err!(
                    "notabene: git commit-tree failed: {} ({remote})",
                    why.trim()
                );
                return 2;
            }
        }
        say!("Merged {remote}");
    }
    // The index and work tree go from the head's tree to the merged one; git refuses when a
    // local change would be lost.
    match git_out(&["read-tree", "-u", "-m", head, &tree]) {
        Some((0, _, _)) => 0,
        other => {
            let why = other.map(|o| o.2).unwrap_or_default();
            say_err!("notabene: git read-tree failed: {} (work tree)", why.trim());
            2
        }
    }
}

/// `program` found on PATH, as the shell would find it.
fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// Why the octopus strategy program is not on PATH.
#[derive(Debug)]
enum NoStrategy {
    /// This program's path is not known.
    NoExe(std::io::Error),
    /// This program's directory is not on PATH (the program).
    NotOnPath(PathBuf),
    /// A file that is not a link is where the link goes.
    NotALink(PathBuf),
    /// The dangling link could not be removed.
    Replace(PathBuf, std::io::Error),
    /// The link could not be made.
    Link(PathBuf, std::io::Error),
    /// No links here: the program must be copied (from, to).
    #[cfg(not(unix))]
    CopyByHand(PathBuf, PathBuf),
}

impl std::fmt::Display for NoStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoStrategy::NoExe(e) => write!(f, "{e}"),
            NoStrategy::NotOnPath(exe) => write!(
                f,
                "put a link named {STRATEGY_PROGRAM} to {} on PATH, then run `notabene init` again",
                exe.display()
            ),
            NoStrategy::NotALink(link) => write!(f, "{} exists and is not a link", link.display()),
            NoStrategy::Replace(link, e) => write!(f, "cannot replace {}: {e}", link.display()),
            NoStrategy::Link(link, e) => write!(f, "cannot link {}: {e}", link.display()),
            #[cfg(not(unix))]
            NoStrategy::CopyByHand(exe, link) => write!(
                f,
                "copy {} to {} to merge octopus-style",
                exe.display(),
                link.display()
            ),
        }
    }
}

/// Makes `git-merge-notabene` findable on PATH: a link to this program beside it when its
/// directory is on PATH. Returns where it is, or why not.
fn ensure_strategy_program() -> std::result::Result<(PathBuf, bool), NoStrategy> {
    let exe = std::env::current_exe().map_err(NoStrategy::NoExe)?;
    // One on PATH that runs a program (a link of another install is as good as ours).
    if let Some(found) = on_path(STRATEGY_PROGRAM) {
        return Ok((found, false));
    }
    let dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    let dir_on_path = std::env::var_os("PATH").is_some_and(|p| {
        std::env::split_paths(&p).any(|d| d.canonicalize().ok() == dir.canonicalize().ok())
    });
    let link = dir.join(STRATEGY_PROGRAM);
    if !dir_on_path {
        return Err(NoStrategy::NotOnPath(exe));
    }
    #[cfg(unix)]
    {
        // A link there that leads nowhere (the program moved) is replaced; a file is not ours.
        if let Ok(meta) = std::fs::symlink_metadata(&link) {
            if !meta.file_type().is_symlink() {
                return Err(NoStrategy::NotALink(link));
            }
            if let Err(e) = std::fs::remove_file(&link) {
                return Err(NoStrategy::Replace(link, e));
            }
        }
        match std::os::unix::fs::symlink(&exe, &link) {
            Ok(()) => Ok((link, true)),
            // Another `init` made it meanwhile.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && link.is_file() => {
                Ok((link, false))
            }
            Err(e) => Err(NoStrategy::Link(link, e)),
        }
    }
    #[cfg(not(unix))]
    {
        Err(NoStrategy::CopyByHand(exe, link))
    }
}

/// Ensures `file` in the store holds `line`: written whole when missing, the line appended
/// when another tool's file lacks it. Returns what was done. Call with the store lock held.
fn ensure_line(ctx: &Ctx, file: &str, line: &str, whole: &str, why: &str) -> Result<String> {
    let store = &ctx.store;
    let path = store.root().join(file);
    let shown = ctx.show(&path);
    let new = match std::fs::read_to_string(&path) {
        Ok(text) if text.lines().any(|l| l.trim() == line) => {
            return Ok(format!("notabene: {shown} is current."));
        }
        Ok(text) if text.is_empty() || text.ends_with('\n') => format!("{text}{line}\n"),
        Ok(text) => format!("{text}\n{line}\n"),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => whole.to_string(),
        Err(e) => return Err(Error::io("cannot read", &path, e)),
    };
    fsx::write_atomic(store.root(), Path::new(file), new.as_bytes())?;
    Ok(format!("notabene: wrote {shown} ({why})."))
}

/// The git half of `init`: the store's `.gitattributes` and `.gitignore` (under the store
/// lock), then `merge.notabene.driver` in this clone's config. Returns one line per step.
pub(crate) fn setup(ctx: &Ctx) -> Result<Vec<String>> {
    let store = &ctx.store;
    let mut said = Vec::new();
    {
        let _lock = store.lock()?;
        said.push(ensure_line(
            ctx,
            ".gitattributes",
            ATTRIBUTES_LINE,
            ATTRIBUTES,
            "store files merge with the notabene driver",
        )?);
        said.push(ensure_line(
            ctx,
            ".gitignore",
            IGNORE_LINE,
            IGNORE,
            "temp files stay out of git",
        )?);
    }
    if git::git_toplevel(store.root()).is_none() {
        said.push(
            "notabene: not a git repository — no merge driver configured (run `notabene init` again in a clone)."
                .to_string(),
        );
        return Ok(said);
    }
    let command = git_config::merge_driver_command()?;
    let key = format!("merge.{DRIVER}.driver");
    if git_config::local_config(store.root(), &key).as_deref() == Some(command.as_str()) {
        said.push(format!(
            "notabene: the git merge driver is configured in this clone ({key})."
        ));
    } else {
        git_config::set_local_config(
            store.root(),
            &format!("merge.{DRIVER}.name"),
            "notabene review store",
        )?;
        git_config::set_local_config(store.root(), &key, &command)?;
        said.push(format!(
            "notabene: configured the git merge driver in this clone ({key} in .git/config)."
        ));
    }
    // Octopus merges (`git merge a b c`): git's own strategy never runs merge drivers.
    match ensure_strategy_program() {
        Ok((program, linked)) => {
            if linked {
                said.push(format!(
                    "notabene: linked {} to this program (the octopus merge strategy).",
                    program.display()
                ));
            }
            if git_config::local_config(store.root(), "pull.octopus").as_deref() == Some(DRIVER) {
                said.push(
                    "notabene: octopus merges use the notabene strategy (pull.octopus).".into(),
                );
            } else {
                git_config::set_local_config(store.root(), "pull.octopus", DRIVER)?;
                said.push("notabene: configured octopus merges to use the notabene strategy in this clone (pull.octopus).".into());
            }
        }
        Err(why) => said.push(format!(
            "notabene: octopus merges keep git's own strategy (it conflicts on the store): {why}."
        )),
    }
    Ok(said)
}

/// The state of the merge set-up in this clone, for `doctor`.
pub(crate) struct MergeState {
    /// The JSON report.
    pub json: Value,
    /// The human line.
    pub line: String,
}

/// What `doctor` says of the merge set-up in the work tree at `git_root` (`None`: not a
/// repository).
pub(crate) fn state(store: &Store, git_root: Option<&Path>) -> MergeState {
    let Some(root) = git_root else {
        return MergeState {
            json: json!({
                "repository": false, "attribute": null, "driver": null, "configured": false,
                "octopus": { "strategy": null, "program": null },
            }),
            line: "not a git repository (the merge driver is set up in a clone)".into(),
        };
    };
    let attribute = git_config::check_attr(root, "merge", &store.root().join("journal.json"));
    let driver = git_config::local_config(root, &format!("merge.{DRIVER}.driver"));
    // A configured driver whose program is gone (moved, uninstalled) merges nothing.
    let program_missing = driver.as_deref().is_some_and(|d| {
        d.strip_prefix('\'')
            .and_then(|rest| rest.split_once('\''))
            .is_some_and(|(exe, _)| !Path::new(exe).exists())
    });
    let marked = attribute.as_deref() == Some(DRIVER);
    let configured = marked && driver.is_some() && !program_missing;
    let line = if !marked {
        "store files carry no merge=notabene attribute: run `notabene init` (git merges them as text; journal appends on two branches conflict)".to_string()
    } else if driver.is_none() {
        "not configured in this clone: run `notabene init` (until then git merges the store as text, and journal appends on two branches conflict)".to_string()
    } else if program_missing {
        "configured, but its program is gone: run `notabene init` again".to_string()
    } else {
        "git merge driver configured (store files merge without conflicts)".to_string()
    };
    let octopus = git_config::local_config(root, "pull.octopus");
    let strategy = on_path(STRATEGY_PROGRAM);
    let line = match (&octopus, &strategy) {
        _ if !configured => line,
        (Some(o), Some(_)) if o == DRIVER => format!("{line}; octopus merges use it"),
        (Some(o), None) if o == DRIVER => format!(
            "{line}; octopus merges will fail: {STRATEGY_PROGRAM} is not on PATH (run `notabene init`)"
        ),
        _ => format!(
            "{line}; octopus merges use git's own strategy, which conflicts on the store (run `notabene init`)"
        ),
    };
    MergeState {
        json: json!({
            "repository": true,
            "attribute": attribute,
            "driver": driver,
            "configured": configured,
            "octopus": {
                "strategy": octopus,
                "program": strategy.map(|p| p.display().to_string()),
            },
        }),
        line,
    }
}

#[derive(Args, Debug)]
pub(crate) struct CleanArgs {
    /// List what would be removed, remove nothing.
    #[arg(long)]
    dry_run: bool,
}

/// `clean`: removes the temp files of interrupted writes, holding the store lock, skipping
/// any a running writer holds.
pub(crate) fn clean(ctx: &Ctx, a: &CleanArgs) -> Result<i32> {
    let store = &ctx.store;
    let _lock = store.lock()?;
    let leftovers = store.leftovers()?;
    let (mut removed, mut kept) = (0usize, 0usize);
    for rel in &leftovers {
        let shown = ctx.show(&store.root().join(rel));
        if a.dry_run {
            say!("notabene: would remove {shown}");
            continue;
        }
        match fsx::remove_leftover(store.root(), Path::new(rel))? {
            fsx::Leftover::Removed => {
                removed += 1;
                say!("notabene: removed {shown}");
            }
            fsx::Leftover::Gone => {}
            fsx::Leftover::InUse => {
                kept += 1;
                say!("notabene: kept {shown} (a running write holds it)");
            }
            fsx::Leftover::TooYoung => {
                kept += 1;
                say!("notabene: kept {shown} (another tool's, younger than a minute)");
            }
        }
    }
    if a.dry_run {
        say!(
            "notabene: {} temp file(s) would be removed.",
            leftovers.len()
        );
    } else {
        say!("notabene: removed {removed} temp file(s), kept {kept}.");
    }
    Ok(0)
}
