//! A build replayed. When nothing a build of its own (`mdbook build` running the plugin binary)
//! reads has changed since the last such build of the book — mdBook's input byte for byte, the
//! store (every file's name and key: size, modification and change times, inode, device), the
//! files of the book it reads beside them (`book.toml`, the reader client's files, the names in
//! `po/`), git's state (`Repo::state`, as the follow memo keys it), the environment a build
//! reads, the binary — its output is the last one's, and that is written again instead of being
//! computed (as cargo leaves a crate whose fingerprint is fresh). What the last build printed
//! on stderr is printed again too; its exit was success (a failed build is never recorded).
//!
//! The fingerprint is taken before the build reads anything ([`fingerprint`]): a file changed
//! while the build ran makes the next fingerprint differ, never the record stale. A store file
//! modified within the store cache's racy window has a key that may not tell its contents, so
//! no record is kept under such a listing. Like the memo it is never trusted over the inputs:
//! a record is used only when its fingerprint and the digest of mdBook's input are both this
//! build's and its checksum holds; anything else is a miss and the build runs. Deleting or
//! corrupting it changes no byte a build writes. A build timed with `NOTABENE_TIMINGS` is never
//! replayed (its stages are what is timed).
//!
//! One file per book (`replay-<hash of the book's path>.bin`) in the cache directory, beside
//! the memo. The format: a header line, then the fingerprint, the digest of mdBook's input and
//! a SHA-256 checksum of the rest (32 bytes each), the length of the stderr text (8 bytes,
//! little-endian), the stderr text, and mdBook's output.
//!
//! Owns: the fingerprint, the record's format and validation. Calls: `util::memo` (the
//! digests, the binary's identity), `notabene_core::disk` (the cache directory, the file's
//! name, pruning, atomic replacement), `notabene_core::term` (the replayed lines), the store's
//! [`ListingState`], `output::assets` (where the client files are).

use crate::model::book::Book;
use crate::util::memo::{Digest, Key, identity};
use notabene_core::disk::{cache_dir, file_for, prune, write_cache_file};
use notabene_store::{FileKey, ListingState};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The replay file's name: `replay-<hash>.bin`.
const REPLAY_FILE: (&str, &str) = ("replay-", ".bin");

/// The first line of every replay file; another format's is a miss.
const HEADER: &[u8] = b"mdbook-notabene replay 2\n";

/// The environment variables a build reads start with one of these (the store's place and
/// `fail-on`, mdBook's overrides, git's, CI's base branch)…
const ENV_READ: &[&str] = &["NOTABENE_", "MDBOOK_", "GIT_", "GITHUB_", "CI_"];

/// …or are one of these (where git finds its configuration, which `git` runs).
const ENV_READ_BY_GIT: &[&str] = &["HOME", "XDG_CONFIG_HOME", "PATH"];

/// A client file is hashed up to this many bytes (and its length beyond them).
const CLIENT_MAX: u64 = 16 << 20;

/// The variable that times a build's stages: such a build is never replayed, and it is no
/// part of the fingerprint (a timed build records what an untimed one replays).
pub const TIMINGS_ENV: &str = "NOTABENE_TIMINGS";

/// The fingerprint of what a build of `cfg` reads beside mdBook's input, as it stands now:
/// `book_toml` (the text of its `book.toml`), the store as `listing` found it, git's state
/// (`git_state`, [`crate::model::book::Repo::state`]), the files of the book's `src` directory
/// (each one's key), the client files, the names in `po/`, the environment and the binary.
/// `None` when a file of the store or of `src` was modified too recently for its key to be
/// trusted ([`ListingState::is_racy`]). What git's diffs depend on is added by [`complete`],
/// for a build that asked for any.
pub fn fingerprint(
    cfg: &Book,
    book_toml: &str,
    listing: &ListingState<'_>,
    git_state: Option<&str>,
) -> Option<Digest> {
    if listing.is_racy() {
        return None;
    }
    let mut k = Key::new("replay");
    k.str(&identity());
    let mut vars: Vec<(Vec<u8>, Vec<u8>)> = std::env::vars_os()
        .map(|(name, value)| (name.into_encoded_bytes(), value.into_encoded_bytes()))
        .filter(|(name, _)| {
            let read = ENV_READ.iter().any(|p| name.starts_with(p.as_bytes()))
                || ENV_READ_BY_GIT
                    .iter()
                    .any(|n| name.as_slice() == n.as_bytes());
            read && name.as_slice() != TIMINGS_ENV.as_bytes()
        })
        .collect();
    vars.sort();
    k.u64(vars.len() as u64);
    for (name, value) in &vars {
        k.bytes(name).bytes(value);
    }
    k.bytes(cfg.root.as_os_str().as_encoded_bytes())
        .str(book_toml);
    let mut po: Vec<Vec<u8>> = std::fs::read_dir(cfg.root.join("po"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().into_encoded_bytes())
        .collect();
    po.sort();
    k.u64(po.len() as u64);
    for name in &po {
        k.bytes(name);
    }
    let client = crate::output::assets::client_files(cfg);
    k.u64(client.len() as u64);
    for path in &client {
        k.bytes(path.as_os_str().as_encoded_bytes());
        let mut bytes = Vec::new();
        let read = std::fs::File::open(path)
            .and_then(|f| f.take(CLIENT_MAX).read_to_end(&mut bytes))
            .is_ok();
        k.u64(u64::from(read)).bytes(&bytes);
    }
    if !feed_tree(&mut k, &cfg.src_dir()) {
        return None;
    }
    let store = cfg.store();
    k.bytes(store.root().as_os_str().as_encoded_bytes());
    let mut fed = 0u64;
    listing.feed(&mut |line| {
        k.chunk(line);
        fed += line.len() as u64;
    });
    k.u64(fed);
    match git_state {
        Some(state) => k.u64(1).str(state),
        None => k.u64(0),
    };
    Some(k.finish())
}

/// A build's whole fingerprint: [`fingerprint`]'s, and, when the build asked git for diffs
/// (the /review cards'), the state they were computed under
/// ([`crate::model::book::Repo::diff_state`]: refs, configuration, attributes; `None` inside
/// without a repository). A build that asked for none has no diff in its output.
pub fn complete(base: Digest, diffs: Option<Option<&str>>) -> Digest {
    let mut k = Key::new("replay with diffs");
    k.digest(&base);
    match diffs {
        None => k.u64(0),
        Some(None) => k.u64(1),
        Some(Some(state)) => k.u64(2).str(state),
    };
    k.finish()
}

/// Feeds `k` every name under `dir` (not following symlinks), in name order, with a file's
/// key ([`FileKey`]). False when a file was modified too recently for its key to tell its
/// contents ([`FileKey::is_recent`]).
fn feed_tree(k: &mut Key, dir: &Path) -> bool {
    let mut names: Vec<_> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.flatten().map(|e| (e.file_name(), e)).collect(),
        Err(_) => {
            k.u64(0);
            return true;
        }
    };
    names.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    k.u64(names.len() as u64);
    let mut bytes = Vec::with_capacity(56);
    for (name, entry) in names {
        k.bytes(name.as_encoded_bytes());
        let Ok(meta) = entry.metadata() else {
            k.u64(0);
            continue;
        };
        if meta.is_dir() {
            k.u64(1);
            if !feed_tree(k, &entry.path()) {
                return false;
            }
            continue;
        }
        let key = FileKey::of(&meta);
        if key.is_recent() {
            return false;
        }
        bytes.clear();
        key.put_bytes(&mut bytes);
        k.u64(2).bytes(&bytes);
    }
    true
}

/// The digest of mdBook's input, fed as it is read ([`InputDigest::update`]).
pub struct InputDigest {
    key: Key,
    len: u64,
}

impl Default for InputDigest {
    fn default() -> InputDigest {
        InputDigest {
            key: Key::new("mdbook input"),
            len: 0,
        }
    }
}

impl InputDigest {
    /// Adds the next bytes read.
    pub fn update(&mut self, bytes: &[u8]) {
        self.key.chunk(bytes);
        self.len += bytes.len() as u64;
    }

    /// The digest of every byte added (the same however the input was cut).
    pub fn finish(mut self) -> Digest {
        self.key.u64(self.len);
        self.key.finish()
    }
}

/// A reader that feeds what it reads to an [`InputDigest`].
pub struct DigestingReader<'a, R> {
    /// What is read.
    pub inner: R,
    /// What it is fed to.
    pub digest: &'a mut InputDigest,
}

impl<R: Read> Read for DigestingReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.digest.update(&buf[..n]);
        Ok(n)
    }
}

/// The last build of a book as it was recorded: for which input, what it printed, what it
/// answered.
pub struct Recorded {
    input: Digest,
    stderr: String,
    stdout: Vec<u8>,
}

/// Where the record of the book at `root` is kept (`None`: the cache directory is off).
fn record_path(dir: Option<PathBuf>, root: &Path) -> Option<PathBuf> {
    Some(file_for(&dir?, root, REPLAY_FILE).1)
}

/// The checksum of a record: what it is for, the stderr text, the output.
fn checksum(head: &RecordHead, stderr: &[u8], stdout: &[u8]) -> Digest {
    let mut k = Key::new("replay record");
    k.digest(&head.fingerprint)
        .digest(&head.input)
        .u64(u64::from(head.diffs))
        .bytes(stderr)
        .bytes(stdout);
    k.finish()
}

/// What the record of a book's last build says it is for, read without its body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordHead {
    /// The fingerprint of what that build read beside mdBook's input ([`complete`]).
    pub fingerprint: Digest,
    /// The digest of mdBook's input to it.
    pub input: Digest,
    /// Whether that build asked git for diffs (its fingerprint holds their state).
    pub diffs: bool,
}

impl RecordHead {
    /// The head of the record of the book at `root` in the cache directory, if there is one.
    pub fn of(root: &Path) -> Option<RecordHead> {
        RecordHead::of_in(cache_dir(), root)
    }

    /// [`RecordHead::of`] in the cache directory `dir`.
    pub fn of_in(dir: Option<PathBuf>, root: &Path) -> Option<RecordHead> {
        let mut file = std::fs::File::open(record_path(dir, root)?).ok()?;
        read_head(&mut file).map(|(head, _, _)| head)
    }
}

/// The length of a record's head: the header line, the diffs flag, three digests, the length
/// of the stderr text.
const HEAD_LEN: usize = HEADER.len() + 1 + 3 * 32 + 8;

/// A record's head read from `file`: what it is for, its checksum, the length of its stderr
/// text.
fn read_head(file: &mut std::fs::File) -> Option<(RecordHead, Digest, u64)> {
    let mut head = [0u8; HEAD_LEN];
    file.read_exact(&mut head).ok()?;
    let (header, rest) = head.split_at(HEADER.len());
    let diffs = match rest[0] {
        0 => false,
        1 => true,
        _ => return None,
    };
    let digest = |i: usize| {
        let at = 1 + i * 32;
        Some(Digest::from_bytes(rest.get(at..at + 32)?.try_into().ok()?))
    };
    (header == HEADER).then_some(())?;
    let stderr_len = u64::from_le_bytes(rest.get(97..105)?.try_into().ok()?);
    let head = RecordHead {
        fingerprint: digest(0)?,
        input: digest(1)?,
        diffs,
    };
    Some((head, digest(2)?, stderr_len))
}

impl Recorded {
    /// The record of the last build of the book at `root` (in the cache directory `dir`),
    /// when it is the one `want` says (its fingerprint, input and diffs flag) and its checksum
    /// holds.
    pub fn find_in(dir: Option<PathBuf>, root: &Path, want: &RecordHead) -> Option<Recorded> {
        let mut file = std::fs::File::open(record_path(dir, root)?).ok()?;
        let (head, sum, stderr_len) = read_head(&mut file)?;
        if head != *want {
            return None;
        }
        let mut body = Vec::new();
        file.read_to_end(&mut body).ok()?;
        let at = usize::try_from(stderr_len)
            .ok()
            .filter(|&n| n <= body.len())?;
        let stdout = body.split_off(at);
        if checksum(&head, &body, &stdout) != sum {
            return None;
        }
        let stderr = String::from_utf8(body).ok()?;
        Some(Recorded {
            input: head.input,
            stderr,
            stdout,
        })
    }

    /// [`Recorded::find_in`] the cache directory.
    pub fn find(root: &Path, want: &RecordHead) -> Option<Recorded> {
        Recorded::find_in(cache_dir(), root, want)
    }

    /// Whether this is the record of a build of mdBook's input whose digest is `input`.
    pub fn answers(&self, input: &Digest) -> bool {
        self.input == *input
    }

    /// Prints what the recorded build printed on stderr, then writes its output to `out`.
    pub fn replay(&self, out: &mut impl Write) -> std::io::Result<()> {
        notabene_core::term::err_rendered(&self.stderr);
        out.write_all(&self.stdout)?;
        out.flush()
    }

    /// Keeps the record of a build of the book at `root` (in the cache directory `dir`) that
    /// `head` says (its whole fingerprint, the digest of mdBook's input, whether it asked git
    /// for diffs): what it printed on stderr and answered on stdout. Failures are ignored: a
    /// record that cannot be written is one that misses.
    pub fn keep_in(
        dir: Option<PathBuf>,
        root: &Path,
        head: &RecordHead,
        stderr: &str,
        stdout: &[u8],
    ) {
        let Some(path) = record_path(dir, root) else {
            return;
        };
        let mut bytes = Vec::with_capacity(HEAD_LEN + stderr.len() + stdout.len());
        bytes.extend_from_slice(HEADER);
        bytes.push(u8::from(head.diffs));
        bytes.extend_from_slice(&head.fingerprint.to_bytes());
        bytes.extend_from_slice(&head.input.to_bytes());
        let sum = checksum(head, stderr.as_bytes(), stdout);
        bytes.extend_from_slice(&sum.to_bytes());
        bytes.extend_from_slice(&(stderr.len() as u64).to_le_bytes());
        bytes.extend_from_slice(stderr.as_bytes());
        bytes.extend_from_slice(stdout);
        if write_cache_file(&path, &bytes).is_ok() {
            prune(path.parent().unwrap_or(Path::new(".")), &path, REPLAY_FILE);
        }
    }

    /// [`Recorded::keep_in`] the cache directory.
    pub fn keep(root: &Path, head: &RecordHead, stderr: &str, stdout: &[u8]) {
        Recorded::keep_in(cache_dir(), root, head, stderr, stdout);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(s: &str) -> Digest {
        Digest::of_test_text(s)
    }

    /// A record kept is found under its fingerprint, and only there; a record with any byte
    /// changed, or cut short, is found nowhere.
    #[test]
    fn a_record_is_found_whole_under_its_fingerprint_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Some(dir.path().to_path_buf());
        let root = dir.path().join("book");
        let (fp, input) = (digest("inputs"), digest("mdbook input"));
        let out = br#"{"items":[]}"#.repeat(100);
        let want = RecordHead {
            fingerprint: fp,
            input,
            diffs: true,
        };
        Recorded::keep_in(cache.clone(), &root, &want, "notabene: 1 comment\n", &out);
        assert_eq!(RecordHead::of_in(cache.clone(), &root), Some(want));
        let found = Recorded::find_in(cache.clone(), &root, &want).expect("found");
        assert!(found.answers(&input) && !found.answers(&fp));
        assert_eq!(found.stderr, "notabene: 1 comment\n");
        assert_eq!(found.stdout, out);
        for other in [
            RecordHead {
                fingerprint: input,
                ..want
            },
            RecordHead { input: fp, ..want },
            RecordHead {
                diffs: false,
                ..want
            },
        ] {
            assert!(Recorded::find_in(cache.clone(), &root, &other).is_none());
        }
        assert!(Recorded::find_in(cache.clone(), &dir.path().join("other"), &want).is_none());
        assert!(Recorded::find_in(None, &root, &want).is_none());

        let path = record_path(cache.clone(), &root).unwrap();
        let good = std::fs::read(&path).unwrap();
        for at in (0..good.len()).step_by(7) {
            let mut bad = good.clone();
            bad[at] ^= 0x01;
            std::fs::write(&path, &bad).unwrap();
            assert!(
                Recorded::find_in(cache.clone(), &root, &want).is_none(),
                "byte {at} changed"
            );
        }
        for len in [0, HEADER.len(), good.len() / 2, good.len() - 1] {
            std::fs::write(&path, &good[..len]).unwrap();
            assert!(
                Recorded::find_in(cache.clone(), &root, &want).is_none(),
                "cut at {len}"
            );
        }
    }

    #[test]
    fn the_input_digest_is_the_same_however_the_input_was_cut() {
        let text = b"[{\"root\":\"/b\"},{\"items\":[]}]";
        let whole = {
            let mut d = InputDigest::default();
            d.update(text);
            d.finish()
        };
        for cut in 0..text.len() {
            let mut d = InputDigest::default();
            d.update(&text[..cut]);
            d.update(&text[cut..]);
            assert_eq!(d.finish(), whole, "cut at {cut}");
        }
        let mut other = InputDigest::default();
        other.update(&text[1..]);
        assert_ne!(other.finish(), whole);
    }
}
