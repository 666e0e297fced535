//! What almost every test needs: the two binaries run with a pinned, isolated environment
//! (their output as an [`Out`]), temp dirs and files, byte-for-byte snapshots of directory
//! trees, the fixtures, the vendored corpus books and book-example, small books set up in a
//! git work tree, and git itself.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

// ---------------------------------------------------------------------------------------
// The binaries

/// The instant every test pins with `NOTABENE_NOW`.
pub const NOW: &str = "2026-07-28T09:00:00.000Z";
/// The author every test pins with `NOTABENE_AUTHOR` / `NOTABENE_AUTHOR_EMAIL`.
pub const AUTHOR: &str = "Ada Agent <ada@example.com>";

/// The built `notabene` binary (the agent CLI).
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_notabene")
}

/// The built `mdbook-notabene` binary (the plugin: `install`, `build`, `serve`, …).
pub fn plugin_bin() -> &'static str {
    env!("CARGO_BIN_EXE_mdbook-notabene")
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

/// Runs `cmd` with no user or system git config, `env` on top, `stdin` fed to it (or stdin
/// closed), and collects what it did. `what` names it in panics.
fn output(cmd: Command, stdin: Option<&str>, env: &[(&str, &str)], what: &str) -> Out {
    let parts: Vec<&str> = stdin.into_iter().collect();
    output_in_parts(
        cmd,
        stdin.map(|_| parts.as_slice()),
        Duration::ZERO,
        env,
        what,
    )
}

/// `mdbook-notabene` in `cwd`, with the pinned environment, given `parts` on stdin one after
/// another, `pause` apart: a book arriving slowly, as mdBook writes it.
pub fn run_plugin_in_parts(cwd: &Path, parts: &[&str], pause: Duration) -> Out {
    let cmd = command(plugin_bin(), cwd, &[], &["NOTABENE_", "MDBOOK_"]);
    output_in_parts(cmd, Some(parts), pause, &[], "mdbook-notabene")
}

fn output_in_parts(
    mut cmd: Command,
    stdin: Option<&[&str]>,
    pause: Duration,
    env: &[(&str, &str)],
    what: &str,
) -> Out {
    cmd.env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .envs(env.iter().copied())
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("spawn {what}: {e}"));
    if let Some(parts) = stdin {
        let mut pipe = child.stdin.take().expect("stdin pipe");
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                std::thread::sleep(pause);
            }
            // The child may exit without reading everything (that is what some tests check).
            let _ = pipe.write_all(part.as_bytes());
            let _ = pipe.flush();
        }
    }
    let out = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("wait for {what}: {e}"));
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    }
}

/// `bin args…` in `cwd` without any inherited variable whose name starts with one of
/// `drop_prefixes`.
fn command(bin: &str, cwd: &Path, args: &[&str], drop_prefixes: &[&str]) -> Command {
    let mut cmd = Command::new(bin);
    cmd.args(args).current_dir(cwd);
    for (k, _) in std::env::vars_os() {
        let name = k.to_string_lossy();
        if drop_prefixes.iter().any(|p| name.starts_with(p)) {
            cmd.env_remove(&k);
        }
    }
    cmd
}

/// Runs `notabene args…` in `cwd` with the pinned environment.
pub fn run(cwd: &Path, args: &[&str]) -> Out {
    run_with(cwd, args, None, &[])
}

/// Runs `notabene args…` in `cwd`, feeding `stdin` (or nothing: stdin is closed), with the
/// pinned environment (`NOTABENE_NOW`, `NOTABENE_AUTHOR`, `NOTABENE_AUTHOR_EMAIL`, no
/// inherited `NOTABENE_*`, no user or system git config) plus `env`, which wins.
pub fn run_with(cwd: &Path, args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> Out {
    let mut cmd = command(bin(), cwd, args, &["NOTABENE_"]);
    cmd.env("NOTABENE_NOW", NOW)
        .env("NOTABENE_AUTHOR", "Ada Agent")
        .env("NOTABENE_AUTHOR_EMAIL", "ada@example.com");
    output(cmd, stdin, env, "notabene")
}

/// Runs `mdbook-notabene args…` in `cwd` with `stdin` (closed when None), no inherited
/// `NOTABENE_*` / `MDBOOK_*` variables, no git config, plus `env`.
pub fn run_plugin(cwd: &Path, args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> Out {
    let cmd = command(plugin_bin(), cwd, args, &["NOTABENE_", "MDBOOK_"]);
    output(cmd, stdin, env, "mdbook-notabene")
}

/// `mdbook-notabene install <book>`, which must succeed: the reader client embedded in the
/// binary under test, stamped, written into the book and listed in its `book.toml`.
#[track_caller]
pub fn install(book: &Path) {
    let cwd = book.parent().unwrap_or(book);
    let out = run_plugin(cwd, &["install", path_str(book)], None, &[]);
    assert_eq!(out.code, 0, "install failed:\n{}{}", out.stdout, out.stderr);
}

/// `mdbook-notabene build <book>` (into `--dest-dir <dest>` when given, else the book's own
/// `book/`), run from the directory holding the book, with `env` added. It must succeed;
/// returns its stderr (the build's report).
#[track_caller]
pub fn build(book: &Path, dest: Option<&Path>, env: &[(&str, &str)]) -> String {
    let mut args = vec!["build", path_str(book)];
    if let Some(dest) = dest {
        args.extend(["--dest-dir", path_str(dest)]);
    }
    let cwd = book.parent().unwrap_or(book);
    let out = run_plugin(cwd, &args, None, env);
    assert_eq!(
        out.code, 0,
        "mdbook-notabene build failed:\n{}{}",
        out.stdout, out.stderr
    );
    out.stderr
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// An installed tool (`mdbook`, `mdbook-gettext`, `git`): on `PATH`, else in
/// `$CARGO_HOME/bin` or `~/.cargo/bin` (where `.ci/run` installs them).
pub fn find_tool(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    if let Some(home) = std::env::var_os("CARGO_HOME") {
        dirs.push(PathBuf::from(home).join("bin"));
    }
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(PathBuf::from(home).join(".cargo/bin"));
    }
    dirs.into_iter()
        .map(|d| d.join(name))
        .find(|p| executable(p))
}

// ---------------------------------------------------------------------------------------
// Files

/// A fresh temp directory.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("nb-test-")
        .tempdir()
        .expect("temp dir")
}

/// Copies the directory `src` recursively to `dst` (created), every file of it.
pub fn copy_dir(src: &Path, dst: &Path) {
    copy_tree(src, dst, &[]);
}

/// Copies the book at `src` to `dst` (created) without what is not the book's source: its
/// build output (`book/` directories) and any `.git`.
pub fn copy_book(src: &Path, dst: &Path) {
    copy_tree(src, dst, &["book", ".git"]);
}

fn copy_tree(src: &Path, dst: &Path, skip_dirs: &[&str]) {
    std::fs::create_dir_all(dst).unwrap_or_else(|e| panic!("create {}: {e}", dst.display()));
    let entries = std::fs::read_dir(src).unwrap_or_else(|e| panic!("read {}: {e}", src.display()));
    for entry in entries {
        let entry = entry.expect("dir entry");
        let to = dst.join(entry.file_name());
        let ty = entry.file_type().expect("file type");
        if ty.is_dir() {
            if !skip_dirs.iter().any(|s| entry.file_name() == *s) {
                copy_tree(&entry.path(), &to, skip_dirs);
            }
        } else {
            std::fs::copy(entry.path(), &to)
                .unwrap_or_else(|e| panic!("copy {}: {e}", entry.path().display()));
        }
    }
}

/// Writes `contents` to `path`, creating parent directories.
pub fn write(path: &Path, contents: &str) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create parent");
    }
    std::fs::write(path, contents).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// Reads a UTF-8 file.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// Every file below `dir` (not directories), sorted.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let entries =
            std::fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display()));
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, &mut out);
    out.sort();
    out
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

// ---------------------------------------------------------------------------------------
// Fixtures, corpus books, book-example

/// The repository root (`CARGO_MANIFEST_DIR`).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `tests/fixtures/<rel>`.
pub fn fixture(rel: &str) -> PathBuf {
    repo_root().join("tests/fixtures").join(rel)
}

/// A fresh temp dir holding a copy of the fixture directory `tests/fixtures/<rel>` (a store)
/// at `<tmp>/store`; returns both.
pub fn fixture_store(rel: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempdir();
    let store = tmp.path().join("store");
    copy_dir(&fixture(rel), &store);
    (tmp, store)
}

/// The example book of the repository (read-only: copy it before building or writing).
pub fn book_example() -> PathBuf {
    repo_root().join("book-example")
}

/// The vendored corpus book `tests/corpus/<name>` (`nomicon`, `rust-by-example`; see
/// `tests/corpus/README.md`). Read-only: copy it before building or writing into it.
pub fn corpus(name: &str) -> PathBuf {
    let dir = repo_root().join("tests/corpus").join(name);
    assert!(dir.is_dir(), "no corpus book at {}", dir.display());
    dir
}

/// The corpus books, in the order [`corpus_pages`] reads them.
pub const CORPUS_BOOKS: [&str; 2] = ["nomicon", "rust-by-example"];

/// One chapter file of a corpus book.
pub struct CorpusPage {
    /// Its path.
    pub path: PathBuf,
    /// Its path relative to `tests/corpus` (`nomicon/src/…`).
    pub name: String,
    /// Its Markdown.
    pub md: String,
}

/// The `*.md` files below `dir` except `SUMMARY.md`, sorted by path.
pub fn chapter_files(dir: &Path) -> Vec<PathBuf> {
    files_under(dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .filter(|p| p.file_name().is_some_and(|n| n != "SUMMARY.md"))
        .collect()
}

/// Every chapter file (`*.md` under `src/`, `SUMMARY.md` left out) of the corpus books,
/// book by book ([`CORPUS_BOOKS`]), sorted by path: deterministic.
pub fn corpus_pages() -> Vec<CorpusPage> {
    let root = repo_root().join("tests/corpus");
    CORPUS_BOOKS
        .iter()
        .flat_map(|book| chapter_files(&corpus(book).join("src")))
        .map(|path| CorpusPage {
            name: path
                .strip_prefix(&root)
                .unwrap_or(&path)
                .to_string_lossy()
                .into_owned(),
            md: std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display())),
            path,
        })
        .collect()
}

/// Copies the book at `src` to `<tmp>/<name>` ([`copy_book`]: no build output) and makes
/// `<tmp>` a git work tree, so page ids start with `<name>/src`. Returns the book root.
pub fn copy_into_repo(src: &Path, tmp: &Path, name: &str) -> PathBuf {
    let root = tmp.join(name);
    copy_book(src, &root);
    git_init(tmp);
    root
}

/// [`copy_into_repo`], with the reader client written into the copy ([`refresh_client`]):
/// a book ready to build.
pub fn stage(src: &Path, tmp: &Path, name: &str) -> PathBuf {
    let root = copy_into_repo(src, tmp, name);
    refresh_client(&root);
    root
}

/// Writes the reader client into a copy of a set-up book (one whose `book.toml` lists it), as
/// `mdbook-notabene build` and `serve` do on first use: a checkout carries no copy of it.
pub fn refresh_client(root: &Path) {
    let book = mdbook_notabene::model::book::Book::load(root).unwrap();
    mdbook_notabene::output::assets::refresh(&book).unwrap();
}

/// A fresh temp dir holding `files` (path relative to it, contents), made a git work tree
/// (so page prefixes are deterministic).
pub fn git_book(files: &[(&str, &str)]) -> tempfile::TempDir {
    let tmp = tempdir();
    for (rel, text) in files {
        write(&tmp.path().join(rel), text);
    }
    git_init(tmp.path());
    tmp
}

/// [`git_book`], then `notabene init --no-agents-md` in it: a book with its store.
pub fn reviewed_book(files: &[(&str, &str)]) -> tempfile::TempDir {
    let tmp = git_book(files);
    run(tmp.path(), &["init", "--no-agents-md"]).ok();
    tmp
}

/// `notabene comments add --page <page> --quote <quote> --suggest <text>` in the book at
/// `dir`, which must succeed; returns the new comment's id.
#[track_caller]
pub fn suggest(dir: &Path, page: &str, quote: &str, text: &str) -> String {
    let args = [
        "comments",
        "add",
        "--page",
        page,
        "--quote",
        quote,
        "--suggest",
        text,
        "--json",
    ];
    let out = run(dir, &args);
    let c: serde_json::Value = serde_json::from_str(out.ok()).expect("comments add --json");
    c["id"].as_str().expect("an id").to_string()
}

// ---------------------------------------------------------------------------------------
// git

/// `git args…` in `dir` with `env` added: no user or system config, identity
/// `T <t@example.com>`, first branch `main`. Whatever it did (it may fail).
pub fn git_output(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Out {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(dir).args([
        "-c",
        "user.name=T",
        "-c",
        "user.email=t@example.com",
        "-c",
        "init.defaultBranch=main",
        "-c",
        "commit.gpgsign=false",
    ]);
    cmd.args(args);
    output(cmd, None, env, "git")
}

/// [`git_output`] with nothing added, which must succeed; returns its stdout.
#[track_caller]
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_output(dir, args, &[]);
    assert_eq!(out.code, 0, "git {args:?}: {}{}", out.stdout, out.stderr);
    out.stdout
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

/// A git repository at `dir` (first branch `main`) with everything in it committed as
/// `message`.
pub fn git_commit_all(dir: &Path, message: &str) {
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", message]);
}

/// Appends journal entry `id` listing `comments` (on their pages as `comments show` gives
/// them) to the store of the book at `dir`, unless the journal holds `id` already: a close or
/// an apply may link only to an entry the journal holds.
#[track_caller]
pub fn journal_entry(dir: &Path, id: &str, comments: &[&str]) {
    let listed = run(dir, &["journal", "ls", "--json"]);
    if serde_json::from_str::<serde_json::Value>(&listed.stdout)
        .ok()
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default()
        .iter()
        .any(|e| e["id"] == id)
    {
        return;
    }
    let changes: Vec<serde_json::Value> = comments
        .iter()
        .map(|c| {
            let shown = run(dir, &["comments", "show", c, "--json"]);
            let page = serde_json::from_str::<serde_json::Value>(&shown.stdout)
                .ok()
                .and_then(|v| v["page"].as_str().map(str::to_string))
                .unwrap_or_else(|| "src/unknown".into());
            serde_json::json!({ "page": page, "commentIds": [c], "what": "w", "why": "y" })
        })
        .collect();
    let entry =
        serde_json::json!({ "id": id, "date": "2026-07-28", "title": "T", "changes": changes });
    let out = run_with(dir, &["journal", "add"], Some(&entry.to_string()), &[]);
    assert_eq!(out.code, 0, "journal add: {}", out.stderr);
}

/// Rewords the sentence of a copy of `book-example` at `root` that its store's comments quote
/// (`src/guide/installing.md`): mdBook's input changes, and a comment on it turns fuzzy.
pub fn reword_a_quoted_sentence(root: &Path) {
    let chapter = root.join("src/guide/installing.md");
    let md = std::fs::read_to_string(&chapter).unwrap();
    let quote = "takes roughly twenty minutes to compile";
    assert!(md.contains(quote), "book-example quotes this sentence");
    std::fs::write(
        &chapter,
        md.replace(quote, "takes about twenty minutes to compile"),
    )
    .unwrap();
}
