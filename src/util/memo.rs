//! The build's memo: what earlier builds of a book computed, chapter by chapter, kept on disk
//! so that a later build (`mdbook build` run again, `mdbook serve` rebuilding after an edit, a
//! CI job with a cached home) does not compute it again.
//!
//! It is a content-addressed map: every value is stored under the SHA-256 [`Digest`] of
//! everything it is computed from — the inputs, each length-prefixed, under a name saying what
//! is computed — so a value is found only by a build that would compute exactly it. What it is
//! computed from is the caller's to hash ([`Key`]); which code computed it is the memo's: a
//! memo written by another version or another build of the binary is not read at all
//! ([`Memo::open`]). It is never trusted over the inputs: a value is used only when its key
//! matches and its checksum holds (checked once, when the file is read, off the build's
//! path: the read-ahead opens it), and anything else — no memo, another binary's, a cut or
//! garbled one — is a miss that computes the value again. Deleting or corrupting it changes
//! no byte a build writes.
//!
//! One file per book (`memo-<hash of the book's path>.bin`) in the cache directory
//! ([`cache_dir`]), beside the store's cache. A build keeps only the entries it used or made:
//! when that set differs from what it read, the file is replaced atomically (temp file, rename;
//! not waited for on disk: a crash can at worst leave a garbled memo, which its checksums turn
//! into misses); two builds writing at once leave one of two valid files. No lock is needed.
//!
//! The format: a header line (`mdbook-notabene memo 1`, the binary's identity), then entries,
//! each the 32-byte digest, the value's length and an FNV-1a checksum of digest and value
//! (8 bytes each, little-endian), then the value.
//!
//! Owns: the memo file's format and validation. Calls: `notabene_core::disk` for the cache
//! directory, the file's name, pruning and atomic replacement; `sha2` for the digests.

use notabene_core::disk::{FnvBuild, cache_dir, file_for, fnv, prune, write_cache_file_with};
use sha2::Digest as _;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The first words of every memo file; another format's is a miss.
const HEADER: &str = "mdbook-notabene memo 1";

/// The SHA-256 of a value's inputs: its address in the memo.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Digest([u8; 32]);

impl Digest {
    /// A digest of `s` alone, for tests that need distinct digests.
    #[cfg(test)]
    pub(crate) fn of_test_text(s: &str) -> Digest {
        let mut k = Key::new("test");
        k.str(s);
        k.finish()
    }

    /// The digest's 32 bytes (written in a file).
    pub(crate) fn to_bytes(self) -> [u8; 32] {
        self.0
    }

    /// The digest of these 32 bytes (read from a file).
    pub(crate) fn from_bytes(bytes: [u8; 32]) -> Digest {
        Digest(bytes)
    }
}

/// What a memo value is computed from, hashed as it is given: every piece length-prefixed, so
/// that two different sequences of pieces never hash the same bytes. Also a [`std::fmt::Write`],
/// to hash a value's `Debug` form without building the string.
pub struct Key(sha2::Sha256);

impl Key {
    /// A key for a value of kind `what` (say `resolve`, `inject`): values of different kinds
    /// never share an address.
    pub fn new(what: &str) -> Key {
        let mut k = Key(sha2::Sha256::new());
        k.str(what);
        k
    }

    /// Adds `bytes`.
    pub fn bytes(&mut self, bytes: &[u8]) -> &mut Key {
        self.0.update((bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
        self
    }

    /// Adds `s`.
    pub fn str(&mut self, s: &str) -> &mut Key {
        self.bytes(s.as_bytes())
    }

    /// Adds `n`.
    pub fn u64(&mut self, n: u64) -> &mut Key {
        self.0.update(n.to_le_bytes());
        self
    }

    /// Adds `bytes` as they are, with no length: one piece fed in chunks (a stream read as it
    /// arrives), which the caller ends with [`Key::u64`] of its whole length — a prefix-free
    /// code as [`Key::debug`]'s is, and the same digest however the piece was cut.
    pub fn chunk(&mut self, bytes: &[u8]) -> &mut Key {
        self.0.update(bytes);
        self
    }

    /// Adds another digest (a large input hashed once, say).
    pub fn digest(&mut self, d: &Digest) -> &mut Key {
        self.0.update(d.0);
        self
    }

    /// Adds the `Debug` form of `value` (every field, strings quoted and escaped), as one piece.
    pub fn debug(&mut self, value: &impl std::fmt::Debug) -> &mut Key {
        let mut counted = Counted(self, 0);
        let _ = std::fmt::write(&mut counted, format_args!("{value:?}"));
        let n = counted.1;
        // The length goes after the text here (it is known only then): still a prefix-free
        // code, since a piece's end is fixed by the length that follows it.
        self.0.update(n.to_le_bytes());
        self
    }

    /// The digest of everything added.
    pub fn finish(self) -> Digest {
        Digest(self.0.finalize().into())
    }
}

/// A [`Key`] fed by `fmt::Write`, counting the bytes it was given.
struct Counted<'a>(&'a mut Key, u64);

impl std::fmt::Write for Counted<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.0.update(s.as_bytes());
        self.1 += s.len() as u64;
        Ok(())
    }
}

/// The memo of one book, as read at the start of a build, and what the build used and made.
#[derive(Default)]
pub struct Memo {
    /// Whether it is on: lookups may hit, and the build's values are kept.
    on: bool,
    /// Where it is written back (`None`: nowhere; an in-memory memo is carried over instead,
    /// [`Memo::carried_over`]).
    path: Option<PathBuf>,
    /// The binary's identity written in the header.
    identity: String,
    /// The file's bytes.
    data: Vec<u8>,
    /// Digest → value range in `data`, for the entries whose checksum holds.
    entries: Entries,
    /// Whether `data` held an entry whose checksum did not hold (written back without it).
    garbled: bool,
    /// What this build used of `entries`, and what it made.
    touched: Mutex<Touched>,
}

#[derive(Default)]
struct Touched {
    used: std::collections::HashSet<Digest>,
    made: Vec<(Digest, Vec<u8>)>,
    hits: usize,
    misses: usize,
}

impl Memo {
    /// The memo of the book at `root` in the cache directory ([`cache_dir`]; none when it is
    /// off): empty when there is none or it is another binary's.
    pub fn open(root: &Path) -> Memo {
        Memo::open_in(cache_dir(), root)
    }

    /// [`Memo::open`] with the cache directory given (`None`: off).
    pub fn open_in(dir: Option<PathBuf>, root: &Path) -> Memo {
        let Some(dir) = dir else {
            return Memo::default();
        };
        let (_, path) = file_for(&dir, root, MEMO_FILE);
        let identity = identity();
        let data = std::fs::read(&path).unwrap_or_default();
        let (entries, garbled) = index(&data, &identity).unwrap_or_default();
        Memo {
            on: true,
            path: Some(path),
            identity,
            data,
            entries,
            garbled,
            touched: Mutex::default(),
        }
    }

    /// A memo that is off: every lookup misses and nothing is written.
    pub fn off() -> Memo {
        Memo::default()
    }

    /// An empty memo kept in memory by a long-lived process (`serve`): on, never written to
    /// disk; each build hands the next [`Memo::carried_over`].
    pub fn in_memory() -> Memo {
        Memo {
            on: true,
            identity: identity(),
            ..Memo::default()
        }
    }

    /// The in-memory memo the next build starts with: the entries this build used and made.
    pub fn carried_over(&self) -> Memo {
        let mut data = Vec::with_capacity(self.data.len());
        // Writing to a Vec cannot fail.
        let _ = self.write_kept(&mut data);
        let (entries, garbled) = index(&data, &self.identity).unwrap_or_default();
        Memo {
            on: self.on,
            identity: self.identity.clone(),
            data,
            entries,
            garbled,
            ..Memo::default()
        }
    }

    /// Whether the memo is on (lookups may hit, and the build's values are kept).
    pub fn is_on(&self) -> bool {
        self.on
    }

    fn touched(&self) -> std::sync::MutexGuard<'_, Touched> {
        self.touched.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The value stored under `key`, when its checksum holds (else a miss).
    pub fn get(&self, key: &Digest) -> Option<&[u8]> {
        let found = self.entries.get(key).map(|range| &self.data[range.clone()]);
        let mut t = self.touched();
        match found {
            Some(_) => {
                t.used.insert(*key);
                t.hits += 1;
            }
            None => t.misses += 1,
        }
        found
    }

    /// Keeps `value` under `key` (for this build's write-back; a later [`Memo::get`] of this
    /// build does not see it).
    pub fn put(&self, key: Digest, value: Vec<u8>) {
        if self.on {
            self.touched().made.push((key, value));
        }
    }

    /// How many lookups hit and missed so far.
    pub fn counts(&self) -> (usize, usize) {
        let t = self.touched();
        (t.hits, t.misses)
    }

    /// Replaces the file with the entries this build used and made, when that differs from
    /// what it read. Failures are ignored: a memo that cannot be written is one that misses.
    pub fn write_back(&self) {
        let Some(path) = &self.path else { return };
        {
            let t = self.touched();
            if t.made.is_empty() && t.used.len() == self.entries.len() && !self.garbled {
                return;
            }
        }
        if write_cache_file_with(path, |out| self.write_kept(out)).is_ok() {
            prune(path.parent().unwrap_or(Path::new(".")), path, MEMO_FILE);
        }
    }

    /// Writes the memo of the entries this build used and made, in the file's format.
    fn write_kept(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let t = self.touched();
        writeln!(out, "{HEADER}\t{}", self.identity)?;
        let mut kept: Vec<(&Digest, &[u8])> = self
            .entries
            .iter()
            .filter(|(k, _)| t.used.contains(*k))
            .map(|(k, range)| (k, &self.data[range.clone()]))
            .collect();
        let mut seen: std::collections::HashSet<&Digest> = kept.iter().map(|(k, _)| *k).collect();
        for (k, v) in &t.made {
            if seen.insert(k) {
                kept.push((k, v));
            }
        }
        // In digest order: the same entries make the same file.
        kept.sort_by_key(|(k, _)| k.0);
        for (k, v) in kept {
            out.write_all(&k.0)?;
            out.write_all(&(v.len() as u64).to_le_bytes())?;
            out.write_all(&checksum(k, v).to_le_bytes())?;
            out.write_all(v)?;
        }
        Ok(())
    }
}

impl std::fmt::Debug for Memo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memo")
            .field("on", &self.on)
            .field("path", &self.path)
            .field("entries", &self.entries.len())
            .finish_non_exhaustive()
    }
}

/// What identifies the code that computed a memo's values: the crate's version and the
/// running binary's size and modification time (a rebuilt or reinstalled binary starts a new
/// memo).
pub(crate) fn identity() -> String {
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| std::fs::metadata(p).ok());
    let (size, mtime) = exe.map_or((0, 0), |m| {
        let t = m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        (m.len(), t)
    });
    format!("{} {size} {mtime}", env!("CARGO_PKG_VERSION"))
}

/// The checksum of an entry.
fn checksum(key: &Digest, value: &[u8]) -> u64 {
    fnv(&key.0) ^ fnv(value).rotate_left(1)
}

/// The entries of a memo file's bytes whose checksum holds, when its header is this format's
/// and `identity`'s, and whether any did not; entries after a cut one are lost.
fn index(data: &[u8], identity: &str) -> Option<(Entries, bool)> {
    let header = format!("{HEADER}\t{identity}\n");
    let mut at = data.strip_prefix(header.as_bytes()).map(|_| header.len())?;
    let mut entries = HashMap::default();
    let mut garbled = false;
    while data.len() - at >= 48 {
        let word = |i: usize| u64::from_le_bytes(data[i..i + 8].try_into().expect("8 bytes"));
        let key = Digest(data[at..at + 32].try_into().expect("32 bytes"));
        let sum = word(at + 40);
        let start = at + 48;
        let Some(end) = usize::try_from(word(at + 32))
            .ok()
            .and_then(|len| start.checked_add(len))
            .filter(|&e| e <= data.len())
        else {
            garbled = true;
            break;
        };
        if checksum(&key, &data[start..end]) == sum {
            entries.insert(key, start..end);
        } else {
            garbled = true;
        }
        at = end;
    }
    garbled |= at != data.len();
    Some((entries, garbled))
}

/// A memo's entries: digest → the value's range in its bytes.
type Entries = HashMap<Digest, std::ops::Range<usize>, FnvBuild>;

/// How a memo file is named: `memo-<hash of the book root>.bin` ([`file_for`]).
const MEMO_FILE: (&str, &str) = ("memo-", ".bin");

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> Digest {
        Digest::of_test_text(s)
    }

    #[test]
    fn keys_are_length_prefixed_and_kind_separated() {
        let ab = {
            let mut k = Key::new("x");
            k.str("ab").str("c");
            k.finish()
        };
        let a_bc = {
            let mut k = Key::new("x");
            k.str("a").str("bc");
            k.finish()
        };
        assert_ne!(ab, a_bc);
        let other_kind = {
            let mut k = Key::new("y");
            k.str("ab").str("c");
            k.finish()
        };
        assert_ne!(ab, other_kind);
        let debug = |v: &dyn std::fmt::Debug| {
            let mut k = Key::new("x");
            k.debug(&v);
            k.finish()
        };
        assert_eq!(debug(&("a", 1)), debug(&("a", 1)));
        assert_ne!(debug(&("a", 1)), debug(&("a", 2)));
    }

    #[test]
    fn values_round_trip_and_only_what_a_build_used_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let book = dir.path().join("book");
        std::fs::create_dir_all(&book).unwrap();
        let cache = Some(dir.path().join("cache"));
        let m = Memo::open_in(cache.clone(), &book);
        assert!(m.get(&key("a")).is_none());
        m.put(key("a"), b"value a".to_vec());
        m.put(key("b"), b"value b".to_vec());
        m.write_back();
        let m = Memo::open_in(cache.clone(), &book);
        assert_eq!(m.get(&key("a")), Some(&b"value a"[..]));
        assert_eq!(m.get(&key("b")), Some(&b"value b"[..]));
        assert_eq!(m.counts(), (2, 0));
        let file = std::fs::read_dir(cache.as_ref().unwrap())
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let bytes = std::fs::read(&file).unwrap();
        // Every entry used and nothing made: the file is left as it was.
        m.write_back();
        assert_eq!(std::fs::read(&file).unwrap(), bytes);
        // Only `b` used: `a` is dropped.
        let m = Memo::open_in(cache.clone(), &book);
        assert!(m.get(&key("b")).is_some());
        m.write_back();
        let m = Memo::open_in(cache.clone(), &book);
        assert!(m.get(&key("a")).is_none());
        assert_eq!(m.get(&key("b")), Some(&b"value b"[..]));
    }

    #[test]
    fn a_garbled_cut_or_foreign_memo_misses() {
        let dir = tempfile::tempdir().unwrap();
        let book = dir.path().join("book");
        std::fs::create_dir_all(&book).unwrap();
        let cache = Some(dir.path().join("cache"));
        let m = Memo::open_in(cache.clone(), &book);
        m.put(key("a"), b"value a".to_vec());
        m.put(key("b"), b"value b".to_vec());
        m.write_back();
        let file = m.path.clone().unwrap();
        let good = std::fs::read(&file).unwrap();
        let at = good.windows(7).position(|w| w == b"value a").unwrap();
        let mut garbled = good.clone();
        garbled[at] = b'V';
        std::fs::write(&file, &garbled).unwrap();
        let m = Memo::open_in(cache.clone(), &book);
        assert!(m.get(&key("a")).is_none(), "checksum");
        assert!(m.get(&key("b")).is_some());
        // A build that used all the rest writes the memo back without the garbled entry.
        m.write_back();
        let rewritten = std::fs::read(&file).unwrap();
        assert!(rewritten.windows(7).any(|w| w == b"value b"));
        assert!(!rewritten.windows(7).any(|w| w == b"Value a"));
        std::fs::write(&file, &good[..good.len() - 3]).unwrap();
        let m = Memo::open_in(cache.clone(), &book);
        let a_first = at < good.windows(7).position(|w| w == b"value b").unwrap();
        let (first, last) = if a_first { ("a", "b") } else { ("b", "a") };
        assert!(m.get(&key(last)).is_none(), "the cut entry");
        assert!(m.get(&key(first)).is_some(), "the entry before the cut");
        let foreign = String::from_utf8_lossy(&good).replacen(HEADER, "mdbook-notabene memo 0", 1);
        std::fs::write(&file, foreign.as_bytes()).unwrap();
        assert!(Memo::open_in(cache.clone(), &book).entries.is_empty());
        let mut other = good.clone();
        let nl = other.iter().position(|&b| b == b'\n').unwrap();
        other[nl - 1] ^= 1;
        std::fs::write(&file, &other).unwrap();
        assert!(
            Memo::open_in(cache.clone(), &book).entries.is_empty(),
            "another binary's"
        );
        assert!(Memo::open_in(None, &book).get(&key("a")).is_none());
    }

    #[test]
    fn an_in_memory_memo_carries_what_a_build_used_and_made_to_the_next() {
        let m = Memo::in_memory();
        assert!(m.is_on() && m.get(&key("a")).is_none());
        m.put(key("a"), b"value a".to_vec());
        m.put(key("b"), b"value b".to_vec());
        m.write_back();
        let m = m.carried_over();
        assert_eq!(m.get(&key("a")), Some(&b"value a"[..]));
        let m = m.carried_over();
        assert_eq!(m.get(&key("a")), Some(&b"value a"[..]));
        assert!(m.get(&key("b")).is_none(), "not used by the build before");
        assert!(!Memo::off().carried_over().is_on());
    }
}
