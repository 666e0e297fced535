//! The walk of a store: every name in it, sorted, depth first — the comment files to read, the
//! temp files left over, the symlinks and names that are not UTF-8 a read skips, and every
//! other file a build's state depends on — with each file's metadata when asked (read relative
//! to its directory while it is open, never following a symlink).
//!
//! The directories of one depth are read in parallel (a big store's `stat` of every file is
//! most of a later build's read); what each holds is then put in the one order a walk depth
//! first, in name order, gives, whatever the threads did.
//!
//! Owns: [`Walk`], [`Listed`], what the walk keeps of each kind of name. Calls:
//! `notabene_core::par`, the cache's [`FileKey`].

use crate::cache::FileKey;
use crate::read::NotUtf8;
use crate::{APPLY_RECORD, RESERVED};
use notabene_core::{Error, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// What a walk of the store found.
#[derive(Default)]
pub(crate) struct Walk {
    /// `*.json` files to read.
    pub(crate) files: Vec<Listed>,
    /// `*.tmp` files, store-relative.
    pub(crate) leftovers: Vec<String>,
    /// Names skipped because they are not UTF-8.
    pub(crate) not_utf8: Vec<NotUtf8>,
    /// Symlinks, store-relative.
    pub(crate) symlinks: Vec<String>,
    /// Every other name the walk met that is not a directory (the reserved files, temp
    /// files, symlinks, names of no interest to a read), store-relative, with its key when
    /// the walk read metadata and it is a regular file: what a build's state depends on
    /// beside the comment files ([`crate::build::ListingState`]).
    pub(crate) others: Vec<(String, Option<FileKey>)>,
}

/// A comment file found by the walk of a store.
pub(crate) struct Listed {
    /// Its path.
    pub(crate) path: PathBuf,
    /// Its store-relative name.
    pub(crate) rel: String,
    /// What identifies its contents (its metadata's key), when the walk read its metadata
    /// (not following a symlink: the walk keeps regular files only) or a read filled it in.
    pub(crate) key: Option<FileKey>,
}

/// One name of a directory, as the walk keeps it.
enum Item {
    File(Listed),
    Leftover(String),
    NotUtf8(NotUtf8),
    Symlink(String),
    /// Kept with its key (`Walk::others`); the second is where it also goes, if anywhere.
    Other(String, Option<FileKey>, Option<Box<Item>>),
    Dir(PathBuf, String),
}

/// Walks the store at `root` (store-relative names from `""`), reading each comment file's
/// metadata when `stat` (every other file's always: there are few).
pub(crate) fn walk(root: &Path, stat: bool) -> Result<Walk> {
    let threads = notabene_core::par::default_threads();
    let mut held: HashMap<String, Result<Vec<Item>>> = HashMap::new();
    let mut depth = vec![(root.to_path_buf(), String::new())];
    while !depth.is_empty() {
        let n = if depth.len() > 1 { threads } else { 1 };
        let read = notabene_core::par::par_map(&depth, n, |(dir, rel)| list_dir(dir, rel, stat));
        let mut next = Vec::new();
        for ((_, rel), items) in depth.into_iter().zip(read) {
            if let Ok(items) = &items {
                next.extend(items.iter().filter_map(|i| match i {
                    Item::Dir(path, rel) => Some((path.clone(), rel.clone())),
                    _ => None,
                }));
            }
            held.insert(rel, items);
        }
        depth = next;
    }
    let mut out = Walk::default();
    put(&mut held, "", &mut out)?;
    Ok(out)
}

/// Puts what directory `rel` holds into `out`, its subdirectories' where they are in name
/// order; the first directory that could not be read, in that order, is the walk's error.
fn put(held: &mut HashMap<String, Result<Vec<Item>>>, rel: &str, out: &mut Walk) -> Result<()> {
    let items = held.remove(rel).unwrap_or_else(|| Ok(Vec::new()))?;
    for item in items {
        put_item(held, item, out)?;
    }
    Ok(())
}

fn put_item(
    held: &mut HashMap<String, Result<Vec<Item>>>,
    item: Item,
    out: &mut Walk,
) -> Result<()> {
    match item {
        Item::File(f) => out.files.push(f),
        Item::Leftover(rel) => out.leftovers.push(rel),
        Item::NotUtf8(n) => out.not_utf8.push(n),
        Item::Symlink(rel) => out.symlinks.push(rel),
        Item::Other(rel, key, also) => {
            out.others.push((rel, key));
            if let Some(also) = also {
                put_item(held, *also, out)?;
            }
        }
        Item::Dir(_, rel) => put(held, &rel, out)?,
    }
    Ok(())
}

/// The names of directory `dir` (store-relative `rel`), sorted, as the walk keeps them.
fn list_dir(dir: &Path, rel: &str, stat: bool) -> Result<Vec<Item>> {
    let rd =
        std::fs::read_dir(dir).map_err(|e| Error::io("cannot read store directory", dir, e))?;
    // Each name is read once (a big store's directories hold hundreds of files).
    let mut entries: Vec<_> = rd
        .filter_map(|e| e.ok())
        .map(|e| (e.file_name(), e))
        .collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let mut items = Vec::with_capacity(entries.len());
    for (os_name, entry) in entries {
        let Ok(ft) = entry.file_type() else { continue };
        let join = |name: &str| {
            if rel.is_empty() {
                name.to_string()
            } else {
                format!("{rel}/{name}")
            }
        };
        let Some(name) = os_name.to_str() else {
            // Skipped whole; only a name that could hold comments is worth a finding.
            if ft.is_dir() || (ft.is_file() && os_name.to_string_lossy().ends_with(".json")) {
                items.push(Item::NotUtf8(NotUtf8 {
                    file: join(&escape_name(&os_name)),
                    dir: ft.is_dir(),
                }));
            }
            continue;
        };
        let child_rel = join(name);
        let at_top = rel.is_empty();
        let item = if ft.is_symlink() {
            Some(Item::Symlink(child_rel.clone()))
        } else if ft.is_dir() {
            items.push(Item::Dir(entry.path(), child_rel));
            continue;
        } else if ft.is_file() && name.ends_with(".tmp") && !(at_top && name == APPLY_RECORD) {
            Some(Item::Leftover(child_rel.clone()))
        } else if ft.is_file() && name.ends_with(".json") && !(at_top && RESERVED.contains(&name)) {
            // The metadata is read relative to the directory while it is open (without
            // walking the whole path again).
            let key = if stat { entry.metadata().ok() } else { None };
            items.push(Item::File(Listed {
                path: entry.path(),
                rel: child_rel,
                key: key.as_ref().map(FileKey::of),
            }));
            continue;
        } else {
            None
        };
        // (The few other files are keyed whether or not the comment files are.)
        let key = ft
            .is_file()
            .then(|| entry.metadata().ok())
            .flatten()
            .map(|m| FileKey::of(&m));
        items.push(Item::Other(child_rel, key, item.map(Box::new)));
    }
    Ok(items)
}

/// A file name for messages: its UTF-8 as it is, each other byte as `\xNN`.
fn escape_name(name: &std::ffi::OsStr) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for chunk in name.as_encoded_bytes().utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// A store of three depths, every kind of name at two of them, one directory not UTF-8:
    /// the walk lists them depth first in name order, however its directories were read.
    #[test]
    fn the_walk_lists_depth_first_in_name_order() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for f in [
            "meta.json",
            "journal.json",
            "z.json",
            "a/c0.json",
            "a/x.tmp",
            "a/notes.txt",
            "a/b/c2.json",
            "a/b/c1.json",
            "a/b/d/deep.json",
            "a/e/c3.json",
            "m/c4.json",
            "m/y.tmp",
        ] {
            let path = root.join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "{}").unwrap();
        }
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            std::os::unix::fs::symlink(root.join("z.json"), root.join("a/link.json")).unwrap();
            let bad = std::ffi::OsStr::from_bytes(b"n\xff");
            std::fs::create_dir_all(root.join(bad)).unwrap();
            std::fs::write(root.join(bad).join("c5.json"), "{}").unwrap();
        }
        for stat in [false, true] {
            let w = walk(root, stat).unwrap();
            let files: Vec<&str> = w.files.iter().map(|f| f.rel.as_str()).collect();
            assert_eq!(
                files,
                [
                    "a/b/c1.json",
                    "a/b/c2.json",
                    "a/b/d/deep.json",
                    "a/c0.json",
                    "a/e/c3.json",
                    "m/c4.json",
                    "z.json"
                ]
            );
            assert!(w.files.iter().all(|f| f.key.is_some() == stat));
            assert!(w.files.iter().all(|f| f.path == root.join(&f.rel)));
            assert_eq!(w.leftovers, ["a/x.tmp", "m/y.tmp"]);
            let others: Vec<(&str, bool)> = (w.others.iter())
                .map(|(rel, key)| (rel.as_str(), key.is_some()))
                .collect();
            #[cfg(unix)]
            {
                assert_eq!(w.symlinks, ["a/link.json"]);
                assert_eq!(
                    w.not_utf8,
                    [NotUtf8 {
                        file: "n\\xFF".into(),
                        dir: true
                    }]
                );
                assert_eq!(
                    others,
                    [
                        ("a/link.json", false),
                        ("a/notes.txt", true),
                        ("a/x.tmp", true),
                        ("journal.json", true),
                        ("m/y.tmp", true),
                        ("meta.json", true),
                    ]
                );
            }
        }
    }

    #[test]
    fn a_store_directory_that_cannot_be_read_is_the_walks_error() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("gone");
        let e = walk(&missing, true).err().unwrap();
        assert!(
            e.to_string().starts_with("cannot read store directory"),
            "{e}"
        );
    }
}
