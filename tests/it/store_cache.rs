//! The build's cache of the store's files (`src/base/store/cache.rs`), through the real
//! pipeline: the real `mdbook` 0.5 binary running our binary as its preprocessor over the JSON
//! protocol, on a copy of book-example. A build with the cache warm, corrupted, deleted or off
//! writes the same bytes, every file; a comment file changed under the cache (same size, same
//! modification time) is read again. Without `mdbook` the test is skipped with a note, except
//! under CI (`CI` set), where it fails.

use crate::support::common::{self, book_example, files_under, stage};
use crate::support::preprocess::plugin_command;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

/// Every output file of a build, by path relative to `dir`.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    files_under(dir)
        .into_iter()
        .map(|f| {
            let rel = f.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            (rel, std::fs::read(&f).unwrap())
        })
        .collect()
}

/// The files that differ between two output trees (or are in one only); empty when the two
/// are the same, byte for byte.
fn differing(a: &BTreeMap<String, Vec<u8>>, b: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
    let mut names: Vec<&String> = a.keys().chain(b.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter(|n| a.get(*n) != b.get(*n))
        .cloned()
        .collect()
}

#[track_caller]
fn assert_same(a: &BTreeMap<String, Vec<u8>>, b: &BTreeMap<String, Vec<u8>>, what: &str) {
    let d = differing(a, b);
    assert!(d.is_empty(), "{what}: these files differ: {d:?}");
}

/// `mdbook build -d <out>` of `root`, our binary as the preprocessor, with `cache` as the
/// cache directory (`off` for none).
fn build(mdbook: &Path, root: &Path, out: &Path, cache: &str) -> BTreeMap<String, Vec<u8>> {
    let o = Command::new(mdbook)
        .arg("build")
        .arg("-d")
        .arg(out)
        .current_dir(root)
        .env("MDBOOK_PREPROCESSOR__NOTABENE__COMMAND", plugin_command())
        .env("NOTABENE_CACHE_DIR", cache)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "mdbook build failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    tree(out)
}

/// Sets the modification time of every file of the store an hour back (a checkout's files are
/// new, and a file modified in the last two seconds is never cached).
fn age(store: &Path, when: SystemTime) {
    for f in files_under(store) {
        std::fs::File::options()
            .write(true)
            .open(&f)
            .unwrap()
            .set_modified(when)
            .unwrap();
    }
}

fn the_cache_file(dir: &Path) -> PathBuf {
    let files = files_under(dir);
    assert_eq!(
        files.len(),
        1,
        "one cache file for the one store: {files:?}"
    );
    files[0].clone()
}

#[test]
fn a_build_writes_the_same_bytes_whatever_the_cache_holds() {
    let Some(mdbook) = common::find_tool("mdbook") else {
        if std::env::var_os("CI").is_some() {
            panic!(
                "the real mdbook binary is not installed (CI is set; .ci/run installs it with `cargo install mdbook --version 0.5.4 --locked`)"
            );
        }
        eprintln!("note: skipping the cache test: no `mdbook` on PATH or in ~/.cargo/bin");
        return;
    };
    let tmp = common::tempdir();
    let root = stage(&book_example(), tmp.path(), "book-example");
    let store = root.join(".notabene");
    let old = SystemTime::now() - Duration::from_secs(3600);
    age(&store, old);
    let cache = tmp.path().join("cache");
    let cache_arg = cache.to_str().unwrap();
    let out = |name: &str| tmp.path().join("out").join(name);

    let cold = build(&mdbook, &root, &out("cold"), cache_arg);
    assert!(cold.keys().any(|k| k.ends_with("guide/installing.html")));
    let file = the_cache_file(&cache);
    // A header line, then one line per comment file (meta.json and journal.json are not
    // comment files).
    let comment_files = files_under(&store)
        .into_iter()
        .filter(|f| f.extension().is_some_and(|x| x == "json"))
        .filter(|f| !f.ends_with("meta.json") && !f.ends_with("journal.json"))
        .count();
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.lines().count(), comment_files + 1);

    let off = build(&mdbook, &root, &out("off"), "off");
    assert_same(&off, &cold, "the cache off against the cold build");
    assert_same(
        &build(&mdbook, &root, &out("warm"), cache_arg),
        &cold,
        "warm",
    );
    assert!(
        std::fs::read_to_string(&file).unwrap() == text,
        "a warm build leaves the cache as it was"
    );

    // Corrupted: every value garbled (each line keeps its key, the checksum catches it), then
    // cut in the middle of a line, then garbage.
    let garbled = text.replace("\"status\":\"", "\"status\":\"x");
    assert_ne!(garbled, text);
    for bad in [
        garbled,
        text[..text.len() / 2].to_string(),
        "\0{garbage".into(),
    ] {
        std::fs::write(&file, bad).unwrap();
        assert_same(
            &build(&mdbook, &root, &out("corrupt"), cache_arg),
            &cold,
            "corrupt",
        );
    }
    std::fs::remove_dir_all(&cache).unwrap();
    assert_same(
        &build(&mdbook, &root, &out("deleted"), cache_arg),
        &cold,
        "deleted",
    );

    // A comment file rewritten with the same size and its old modification time: its change
    // time moved, so it is read again.
    let victim = files_under(&store)
        .into_iter()
        .find(|f| {
            std::fs::read_to_string(f)
                .is_ok_and(|t| t.contains("\"body\": \"") && !f.ends_with("journal.json"))
        })
        .unwrap();
    let before = std::fs::read_to_string(&victim).unwrap();
    let at = before.find("\"body\": \"").unwrap() + 9;
    let mut after = before.clone();
    after.replace_range(
        at..at + 1,
        if &before[at..at + 1] == "Z" { "Y" } else { "Z" },
    );
    assert_eq!(after.len(), before.len());
    build(&mdbook, &root, &out("warm-again"), cache_arg);
    std::fs::write(&victim, &after).unwrap();
    age(&store, old);
    let changed = build(&mdbook, &root, &out("changed"), cache_arg);
    assert!(
        !differing(&changed, &cold).is_empty(),
        "the changed comment is in the build"
    );
    assert_same(
        &changed,
        &build(&mdbook, &root, &out("changed-off"), "off"),
        "changed",
    );
}
