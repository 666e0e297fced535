//! Shared helpers of the CLI integration tests: run the real `notabene` binary, copy
//! fixtures into temp dirs, snapshot directory trees byte for byte.
//!
//! Each test binary uses only some of these helpers.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The instant every test pins with `NOTABENE_NOW`.
pub const NOW: &str = "2026-07-28T09:00:00.000Z";
/// The author every test pins with `NOTABENE_AUTHOR` / `NOTABENE_AUTHOR_EMAIL`.
pub const AUTHOR: &str = "Ada Agent <ada@example.com>";

/// The built `notabene` binary.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_notabene")
}

/// What a process did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Out {
    /// Exit code (-1 when killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Out {
    /// Asserts exit 0 and an empty stderr; returns stdout.
    #[track_caller]
    pub fn ok(&self) -> &str {
        assert_eq!(
            (self.code, self.stderr.as_str()),
            (0, ""),
            "stdout: {}",
            self.stdout
        );
        &self.stdout
    }

    /// Asserts the CLI failure convention: exit 1, nothing on stdout, exactly `line` (one
    /// line) on stderr.
    #[track_caller]
    pub fn fails_with(&self, line: &str) {
        assert!(!line.contains('\n'), "expected stderr must be one line");
        pretty_assertions::assert_eq!(
            (self.code, self.stdout.as_str(), self.stderr.as_str()),
            (1, "", format!("{line}\n").as_str())
        );
    }
}

/// Runs `notabene args…` in `cwd` with the pinned environment.
pub fn run(cwd: &Path, args: &[&str]) -> Out {
    run_with(cwd, args, None, &[])
}

/// Runs `notabene args…` in `cwd`, feeding `stdin` (or nothing: stdin is closed), with the
/// pinned environment (`NOTABENE_NOW`, `NOTABENE_AUTHOR`, `NOTABENE_AUTHOR_EMAIL`, no
/// inherited `NOTABENE_*`, no user or system git config) plus `env`, which wins.
pub fn run_with(cwd: &Path, args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> Out {
    let mut cmd = Command::new(bin());
    cmd.args(args).current_dir(cwd);
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("NOTABENE_") {
            cmd.env_remove(&k);
        }
    }
    cmd.env("NOTABENE_NOW", NOW)
        .env("NOTABENE_AUTHOR", "Ada Agent")
        .env("NOTABENE_AUTHOR_EMAIL", "ada@example.com")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn notabene");
    if let Some(input) = stdin {
        let mut pipe = child.stdin.take().expect("stdin pipe");
        pipe.write_all(input.as_bytes()).expect("write stdin");
    }
    let out = child.wait_with_output().expect("wait for notabene");
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    }
}

/// `tests/fixtures/<rel>`.
pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// A fresh temp directory.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("nb-test-")
        .tempdir()
        .expect("temp dir")
}

/// Copies the directory `src` recursively to `dst` (created).
pub fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).expect("create copy target");
    for entry in std::fs::read_dir(src).expect("read fixture dir") {
        let entry = entry.expect("dir entry");
        let to = dst.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &to);
        } else {
            std::fs::copy(entry.path(), &to).expect("copy fixture file");
        }
    }
}

/// Writes `contents` to `path`, creating parent directories.
pub fn write(path: &Path, contents: &str) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create parent");
    }
    std::fs::write(path, contents).expect("write file");
}

/// Reads a UTF-8 file.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// `git init -q dir` (so page prefixes and AGENTS.md placement are deterministic).
pub fn git_init(dir: &Path) {
    let status = Command::new("git")
        .args(["init", "-q"])
        .arg(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .expect("run git");
    assert!(status.success(), "git init failed");
}

/// One node of a snapshotted tree.
#[derive(Clone, PartialEq, Eq)]
pub enum Node {
    /// A directory.
    Dir,
    /// A file and its bytes.
    File(Vec<u8>),
}

impl fmt::Debug for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Node::Dir => f.write_str("<dir>"),
            Node::File(bytes) => match std::str::from_utf8(bytes) {
                Ok(s) => write!(f, "{s:?}"),
                Err(_) => write!(f, "{bytes:?}"),
            },
        }
    }
}

/// A directory tree: `/`-separated relative path → node, sorted.
pub type Tree = BTreeMap<String, Node>;

/// Snapshots every directory and file under `root` (not `root` itself).
pub fn tree(root: &Path) -> Tree {
    fn walk(dir: &Path, rel: &str, out: &mut Tree) {
        for entry in std::fs::read_dir(dir).expect("read dir") {
            let entry = entry.expect("dir entry");
            let name = entry.file_name().to_string_lossy().into_owned();
            let child = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            if entry.file_type().expect("file type").is_dir() {
                out.insert(child.clone(), Node::Dir);
                walk(&entry.path(), &child, out);
            } else {
                out.insert(
                    child,
                    Node::File(std::fs::read(entry.path()).expect("read file")),
                );
            }
        }
    }
    let mut out = Tree::new();
    walk(root, "", &mut out);
    out
}

/// `base` with the files of the directory `overlay` put on top (added or replaced).
pub fn overlay(mut base: Tree, overlay: &Path) -> Tree {
    base.extend(tree(overlay));
    base
}

/// The store-relative paths of every file below `root` whose name matches `pred`.
pub fn files_matching(root: &Path, pred: impl Fn(&str) -> bool) -> Vec<String> {
    tree(root)
        .into_iter()
        .filter(|(path, node)| {
            matches!(node, Node::File(_)) && pred(path.rsplit('/').next().unwrap_or(path))
        })
        .map(|(path, _)| path)
        .collect()
}
