//! What builds keep in the cache directory, through the real pipeline: the real `mdbook` 0.5
//! binary running our binary as its preprocessor over the JSON protocol, on a copy of
//! book-example. The cache of the store's files (`crates/notabene-store/src/cache.rs`): a build with it
//! warm, corrupted, deleted or off writes the same bytes, every file; a comment file changed
//! under it (same size, same modification time) is read again. The build's memo
//! (`src/util/memo.rs`): a second build takes every chapter's results from it and writes
//! the same bytes; after the edits authors and agents make (a quoted sentence reworded, a
//! comment resolved, a new one, the threshold changed) the build is the one a build without it
//! writes, byte for byte, and only what the edit touched is computed again; a garbled memo is
//! a miss. Without `mdbook` the tests are skipped with a note, except under CI (`CI` set),
//! where they fail.

use crate::support::common::{self, book_example, files_under, stage};
use crate::support::preprocess::plugin_command;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

/// Every output file of a build, by path relative to `dir`.
pub(crate) fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
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
pub(crate) fn differing(
    a: &BTreeMap<String, Vec<u8>>,
    b: &BTreeMap<String, Vec<u8>>,
) -> Vec<String> {
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
pub(crate) fn assert_same(
    a: &BTreeMap<String, Vec<u8>>,
    b: &BTreeMap<String, Vec<u8>>,
    what: &str,
) {
    let d = differing(a, b);
    assert!(d.is_empty(), "{what}: these files differ: {d:?}");
}

/// `mdbook build -d <out>` of `root`, our binary as the preprocessor, with `cache` as the
/// cache directory (`off` for none).
fn build(mdbook: &Path, root: &Path, out: &Path, cache: &str) -> BTreeMap<String, Vec<u8>> {
    build_timed(mdbook, root, out, cache).0
}

/// [`build`], and how many results the memo gave of how many the build looked up (from the
/// timings line `NOTABENE_TIMINGS` prints).
fn build_timed(
    mdbook: &Path,
    root: &Path,
    out: &Path,
    cache: &str,
) -> (BTreeMap<String, Vec<u8>>, (usize, usize)) {
    let o = Command::new(mdbook)
        .arg("build")
        .arg("-d")
        .arg(out)
        .current_dir(root)
        .env("MDBOOK_PREPROCESSOR__NOTABENE__COMMAND", plugin_command())
        .env("NOTABENE_CACHE_DIR", cache)
        .env("NOTABENE_TIMINGS", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "mdbook build failed: {stderr}");
    let memo = stderr
        .lines()
        .find_map(|l| {
            let rest = l.split_once("memo: ")?.1;
            let (hits, rest) = rest.split_once(" of ")?;
            let total = rest.split_once(' ')?.0;
            Some((hits.parse().ok()?, total.parse().ok()?))
        })
        .unwrap_or_else(|| panic!("no memo counts in the timings: {stderr}"));
    (tree(out), memo)
}

/// The real `mdbook` binary, or `None` (with a note) where it may be missing: not under CI.
pub(crate) fn mdbook_or_skip(what: &str) -> Option<PathBuf> {
    let found = common::find_tool("mdbook");
    if found.is_none() {
        if std::env::var_os("CI").is_some() {
            panic!(
                "the real mdbook binary is not installed (CI is set; .ci/run installs it with `cargo install mdbook --version 0.5.4 --locked`)"
            );
        }
        eprintln!("note: skipping {what}: no `mdbook` on PATH or in ~/.cargo/bin");
    }
    found
}

/// Sets the modification time of every file of the store an hour back (a checkout's files are
/// new, and a file modified in the last two seconds is never cached).
pub(crate) fn age(store: &Path, when: SystemTime) {
    for f in files_under(store) {
        std::fs::File::options()
            .write(true)
            .open(&f)
            .unwrap()
            .set_modified(when)
            .unwrap();
    }
}

/// The one file of `dir` whose name starts with `prefix` (`store-`: the store's cache;
/// `memo-`: the build's memo).
fn the_file(dir: &Path, prefix: &str) -> PathBuf {
    let files: Vec<PathBuf> = files_under(dir)
        .into_iter()
        .filter(|f| {
            f.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
        })
        .collect();
    assert_eq!(
        files.len(),
        1,
        "one {prefix}* file for the one book: {files:?}"
    );
    files[0].clone()
}

/// `book-example` staged in a temporary directory, its store's files an hour old, and the
/// directory for the cache beside it (not created).
pub(crate) struct Staged {
    pub(crate) tmp: tempfile::TempDir,
    pub(crate) root: PathBuf,
    pub(crate) store: PathBuf,
    pub(crate) old: SystemTime,
    pub(crate) cache: PathBuf,
}

pub(crate) fn staged() -> Staged {
    let tmp = common::tempdir();
    let root = stage(&book_example(), tmp.path(), "book-example");
    let store = root.join(".notabene");
    let old = SystemTime::now() - Duration::from_secs(3600);
    age(&store, old);
    let cache = tmp.path().join("cache");
    Staged {
        tmp,
        root,
        store,
        old,
        cache,
    }
}

#[test]
fn a_build_writes_the_same_bytes_whatever_the_cache_holds() {
    let Some(mdbook) = mdbook_or_skip("the cache test") else {
        return;
    };
    let Staged {
        tmp,
        root,
        store,
        old,
        cache,
    } = staged();
    let cache_arg = cache.to_str().unwrap();
    let out = |name: &str| tmp.path().join("out").join(name);

    let cold = build(&mdbook, &root, &out("cold"), cache_arg);
    assert!(cold.keys().any(|k| k.ends_with("guide/installing.html")));
    let file = the_file(&cache, "store-");
    let memo = the_file(&cache, "memo-");
    // A header line, then one line per comment file (meta.json and journal.json are not
    // comment files).
    let comment_files = files_under(&store)
        .into_iter()
        .filter(|f| f.extension().is_some_and(|x| x == "json"))
        .filter(|f| !f.ends_with("meta.json") && !f.ends_with("journal.json"))
        .count();
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.lines().count(), comment_files + 1);

    let memo_bytes = std::fs::read(&memo).unwrap();
    let off = build(&mdbook, &root, &out("off"), "off");
    assert_same(&off, &cold, "the cache off against the cold build");
    let (warm, (hits, looked_up)) = build_timed(&mdbook, &root, &out("warm"), cache_arg);
    assert_same(&warm, &cold, "warm");
    assert!(
        hits == looked_up && hits > 10,
        "a warm build takes every result from the memo: {hits} of {looked_up}"
    );
    assert!(
        std::fs::read_to_string(&file).unwrap() == text,
        "a warm build leaves the cache as it was"
    );
    assert!(
        std::fs::read(&memo).unwrap() == memo_bytes,
        "a warm build leaves the memo as it was"
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
    std::fs::write(&file, &text).unwrap();
    // The memo garbled: every value's bytes flipped in turn (its checksum catches each), then
    // cut in the middle, then another binary's header.
    for bad in garbled_memos(&memo_bytes) {
        std::fs::write(&memo, &bad).unwrap();
        assert_same(
            &build(&mdbook, &root, &out("corrupt-memo"), cache_arg),
            &cold,
            "corrupt memo",
        );
        std::fs::write(&memo, &memo_bytes).unwrap();
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

/// Bad copies of a memo file: one byte flipped in the middle of each eighth of it, the file cut
/// in two, and its header's format number changed.
fn garbled_memos(good: &[u8]) -> Vec<Vec<u8>> {
    let header = good.iter().position(|&b| b == b'\n').unwrap() + 1;
    let mut out = Vec::new();
    for k in 0..8 {
        let at = header + (good.len() - header) * (2 * k + 1) / 16;
        let mut bad = good.to_vec();
        bad[at] ^= 0x20;
        out.push(bad);
    }
    out.push(good[..good.len() / 2].to_vec());
    let mut other = good.to_vec();
    let digit = good[..header]
        .iter()
        .rposition(|b| b.is_ascii_digit())
        .unwrap();
    other[digit] = if other[digit] == b'9' { b'8' } else { b'9' };
    out.push(other);
    out
}

/// Checks what a build took from the memo (`counts`: hits, lookups): at least `min_hits` hits
/// and at least `min_misses` misses.
#[track_caller]
fn assert_memo(counts: (usize, usize), min_hits: usize, min_misses: usize, what: &str) {
    let (hits, total) = counts;
    assert!(
        hits >= min_hits && total - hits >= min_misses,
        "{what}: the memo gave {hits} of {total} results (expected at least {min_hits} hits and {min_misses} misses)"
    );
}

#[test]
fn after_the_edits_people_make_a_build_through_the_memo_is_the_build_without_it() {
    let Some(mdbook) = mdbook_or_skip("the memo test") else {
        return;
    };
    let Staged {
        tmp,
        root,
        store,
        old,
        cache,
    } = staged();
    let cache_arg = cache.to_str().unwrap();
    let out = |name: &str| tmp.path().join("out").join(name);
    let (_, first) = build_timed(&mdbook, &root, &out("first"), cache_arg);
    assert_eq!(first.0, 0, "an empty memo gives nothing");
    let (_, second) = build_timed(&mdbook, &root, &out("second"), cache_arg);
    assert_memo(second, first.1, 0, "nothing changed");
    let total = second.1;

    // Each edit, then a build through the memo, compared with a build without it.
    let check = |name: &str, min_hits: usize, min_misses: usize| {
        let (through, counts) = build_timed(&mdbook, &root, &out(name), cache_arg);
        let without = build(&mdbook, &root, &out(&format!("{name}-off")), "off");
        assert_same(&through, &without, name);
        assert_memo(counts, min_hits, min_misses, name);
        // And the next build, with nothing changed, takes it all from the memo.
        let (again, counts) =
            build_timed(&mdbook, &root, &out(&format!("{name}-again")), cache_arg);
        assert_same(&again, &without, name);
        assert_memo(counts, counts.1, 0, &format!("{name}, built again"));
    };

    // An agent rewords the sentence a comment quotes: that chapter is anchored and injected
    // again (its comment now fuzzy), the others come from the memo.
    common::reword_a_quoted_sentence(&root);
    check("reworded", total / 2, 2);
    let chapter = root.join("src/guide/installing.md");

    // An author adds a paragraph at the end of a commented chapter: the marks before it stay
    // where they were, the chapter's text does not.
    let md = std::fs::read_to_string(&chapter).unwrap();
    std::fs::write(
        &chapter,
        format!("{md}\nA closing paragraph added by the author.\n"),
    )
    .unwrap();
    check("appended", total / 2, 2);

    // A comment resolved (its file rewritten, as `comments done` does): its chapter's island
    // and the generated pages change.
    let victim = store.join("book-example/src/guide/installing/c_mwrmz21ih8pc.json");
    let text = std::fs::read_to_string(&victim).unwrap();
    std::fs::write(
        &victim,
        text.replace("\"status\": \"open\"", "\"status\": \"resolved\""),
    )
    .unwrap();
    age(&store, old);
    check("resolved", total / 2, 1);

    // A new comment on another chapter.
    let page = "book-example/src/guide/configuration";
    let new = store.join(page).join("c_memo0test01.json");
    std::fs::write(
        &new,
        serde_json::to_string_pretty(&serde_json::json!({
            "id": "c_memo0test01", "space": "book", "page": page, "scope": "page",
            "anchor": null,
            "thread": [{ "author": "Rev Iewer <rev@example.com>", "body": "A new comment.", "ts": "2026-12-01T00:00:00.000Z" }],
            "status": "open", "hold": false, "resolution": null,
            "createdAt": "2026-12-01T00:00:00.000Z", "updatedAt": "2026-12-01T00:00:00.000Z"
        }))
        .unwrap(),
    )
    .unwrap();
    age(&store, old);
    check("new comment", total / 2, 1);

    // The threshold changed in book.toml: every chapter's anchors are looked for again.
    let toml = std::fs::read_to_string(root.join("book.toml")).unwrap();
    std::fs::write(
        root.join("book.toml"),
        toml.replace(
            "[preprocessor.notabene]\n",
            "[preprocessor.notabene]\nthreshold = 0.9\n",
        ),
    )
    .unwrap();
    check("threshold", 0, total / 4);
}
