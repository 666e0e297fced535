//! The store cache's format, validation and pruning.

use super::*;
use crate::condense::tests::Forms;
use notabene_core::disk::{KEEP_AFTER_PRUNE, KEEP_MAX};

fn key(size: u64) -> FileKey {
    FileKey {
        size,
        mtime: (1, 2),
        ctime: (3, 4),
        ino: 5,
        dev: 6,
    }
}

#[test]
fn a_line_round_trips_and_any_changed_byte_is_a_miss() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.cache");
    let store = dir.path().join("store");
    std::fs::create_dir_all(&store).unwrap();
    let cache = Cache {
        path: Some(path.clone()),
        ..Cache::default()
    };
    cache.write_back(
        &[
            (
                "p/a.json",
                CacheOutcome::Read(Some((key(10), CacheValue::File(r#"{"id":"a"}"#.into())))),
            ),
            (
                "p/b\t.json",
                CacheOutcome::Read(Some((
                    key(11),
                    CacheValue::Condensed(SharedText::new("\"docs\"\t{\"id\":\"b\"}\tx".into())),
                ))),
            ),
            ("p/c.json", CacheOutcome::Read(None)),
        ],
        &store,
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let canonical = std::fs::canonicalize(&store).unwrap();
    let read = |text: &str| Cache::from_text(path.clone(), text.to_string(), &canonical);
    let get =
        |c: &Cache, rel: &str, size: u64| c.get(rel, &key(size)).map(|t| t.as_str().to_string());
    let c = read(&text);
    assert_eq!(
        get(&c, "p/a.json", 10).as_deref(),
        Some("F\t{\"id\":\"a\"}")
    );
    assert_eq!(
        get(&c, "p/b\t.json", 11).as_deref(),
        Some("C\t\"docs\"\t{\"id\":\"b\"}\tx")
    );
    assert_eq!(c.get("p/a.json", &key(12)), None, "another size");
    assert_eq!(c.get("p/c.json", &key(10)), None, "not cacheable");
    // A garbled value keeps its key but fails the checksum.
    let c = read(&text.replace(r#"{"id":"a"}"#, r#"{"id":"x"}"#));
    assert_eq!(c.get("p/a.json", &key(10)), None);
    // Cut in the middle of the last line: that line is a miss, the first still a hit.
    let cut = &text[..text.len() - 3];
    let c = read(cut);
    assert_eq!(
        get(&c, "p/a.json", 10).as_deref(),
        Some("F\t{\"id\":\"a\"}")
    );
    assert_eq!(c.get("p/b\t.json", &key(11)), None);
}

#[test]
fn a_file_modified_just_now_is_not_cached() {
    let now = 1_000_000;
    let mut k = key(1);
    k.mtime.0 = now;
    assert!(k.is_racy(now));
    k.mtime.0 = now - RACY_SECS as i64 - 1;
    assert!(!k.is_racy(now));
    k.mtime.0 = now + 5;
    assert!(k.is_racy(now), "a modification time in the future");
}

/// What a load returns, to compare: every record and unreadable file, in order.
fn dump(snap: &crate::Snapshot) -> Vec<String> {
    let mut out: Vec<String> = snap
        .records
        .iter()
        .map(|r| {
            format!(
                "{} {:?} {} {:?}",
                r.file,
                r.location,
                Value::Object(r.comment.as_map().clone()),
                r.comment.condensed_text().map(|p| p.to_text())
            )
        })
        .collect();
    out.extend(
        snap.unreadable
            .iter()
            .map(|u| format!("unreadable {} {}", u.file, u.error)),
    );
    out
}

/// Writes `text` to `path`, its modification time set to `when`.
fn write_aged(path: &Path, text: &str, when: std::time::SystemTime) {
    std::fs::write(path, text).unwrap();
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(when)
        .unwrap();
}

/// A temp dir with a store (`.notabene`, its `guide/` made) and a cache directory beside it.
fn store_and_cache() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join(".notabene");
    std::fs::create_dir_all(root.join("guide")).unwrap();
    let cache_dir = dir.path().join("cache");
    (dir, root, cache_dir)
}

/// A minute ago: a file written then may be cached.
fn minute_ago() -> std::time::SystemTime {
    std::time::SystemTime::now() - std::time::Duration::from_secs(60)
}

#[test]
fn a_read_told_what_changed_takes_the_other_files_from_the_last_read() {
    use crate::{Recent, Store};
    use std::collections::HashSet;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join(".notabene");
    std::fs::create_dir_all(root.join("guide")).unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    // A file rewritten by another program, its modification time put back.
    let write = |name: &str, body: &str| {
        let text = format!(
            r#"{{"id":"{}","status":"open","body":"{body}"}}"#,
            &name[..1]
        );
        write_aged(&root.join("guide").join(name), &text, old);
    };
    write("a.json", "a1");
    write("b.json", "b1");
    let store = Store::new(root.clone());
    let recent = Recent::default();
    let bodies = || -> Vec<String> {
        let snap = store
            .load_condensed_recent(&Forms("docs"), &recent)
            .unwrap();
        snap.records
            .iter()
            .map(|r| r.comment.as_map()["body"].as_str().unwrap().to_string())
            .collect()
    };
    let named = |names: &[&str]| -> Option<HashSet<String>> {
        Some(names.iter().map(|n| format!("guide/{n}")).collect())
    };
    assert_eq!(bodies(), ["a1", "b1"], "the first read");
    // Both rewritten, one named: the other is the last read's (no `stat` told it).
    write("a.json", "a2");
    write("b.json", "b2");
    recent.expect_changed(named(&["a.json"]));
    assert_eq!(bodies(), ["a2", "b1"], "only a named");
    // What two calls name adds up (a build that failed before its read).
    recent.expect_changed(named(&["b.json"]));
    recent.expect_changed(named(&[]));
    assert_eq!(bodies(), ["a2", "b2"], "b named by the first call");
    // Not known, among calls that name files, stands: every file is checked.
    write("a.json", "a3");
    recent.expect_changed(named(&[]));
    recent.expect_changed(None);
    recent.expect_changed(named(&[]));
    assert_eq!(bodies(), ["a3", "b2"], "not known");
    // Told nothing: every file is checked.
    write("b.json", "b3");
    assert_eq!(bodies(), ["a3", "b3"], "told nothing");
    // A file named that is new, or removed.
    write("c.json", "c1");
    std::fs::remove_file(root.join("guide/a.json")).unwrap();
    recent.expect_changed(named(&["c.json", "a.json"]));
    assert_eq!(bodies(), ["b3", "c1"], "one new, one removed");
    // Another store (book.toml moved it) with the same names: its own files, whatever
    // was told.
    let other = dir.path().join("other");
    std::fs::create_dir_all(other.join("guide")).unwrap();
    for (name, body) in [("b.json", "other b"), ("c.json", "other c")] {
        let text = format!(
            r#"{{"id":"{}","status":"open","body":"{body}"}}"#,
            &name[..1]
        );
        write_aged(&other.join("guide").join(name), &text, old);
    }
    recent.expect_changed(named(&[]));
    let snap = Store::new(other)
        .load_condensed_recent(&Forms("docs"), &recent)
        .unwrap();
    let got: Vec<&str> = snap
        .records
        .iter()
        .map(|r| r.comment.as_map()["body"].as_str().unwrap())
        .collect();
    assert_eq!(got, ["other b", "other c"], "another store");
}

#[test]
fn a_cached_load_is_the_files_whatever_the_cache_holds() {
    use crate::Store;
    let (dir, root, cache_dir) = store_and_cache();
    let write = |rel: &str, text: &str| write_aged(&root.join(rel), text, minute_ago());
    write(
        "guide/a.json",
        r#"{"id":"a","space":"docs","status":"resolved","thread":[{"body":"x"},{"body":"y"}],"n":1.5e3}"#,
    );
    write("guide/b.json", r#"{"id":"b","status":"open","n":1.5e3}"#);
    write("guide.json", r#"[{"id":"c"},{"id":"d"}]"#);
    write("guide/bad.json", "{not json");
    let store = Store::new(root.clone());
    let truth = dump(&store.load().unwrap().condensed(&Forms("docs")));
    assert!(truth[0].contains("Some("), "{truth:?}");
    let cached_for = |space: &'static str| {
        dump(
            &store
                .load_condensed_in(Some(cache_dir.clone()), &Forms(space))
                .unwrap(),
        )
    };
    let cached = || cached_for("docs");
    assert_eq!(cached(), truth, "cold");
    let files = |d: &Path| std::fs::read_dir(d).unwrap().count();
    assert_eq!(files(&cache_dir), 1, "one cache file for the store");
    let cache_file = std::fs::read_dir(&cache_dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(&cache_file).unwrap();
    assert_eq!(
        text.lines().count(),
        4,
        "a header and the three readable files"
    );
    assert_eq!(cached(), truth, "warm");
    // Condensed comments are cached for one variant: another reads the file again.
    let other = dump(&store.load().unwrap().condensed(&Forms("other")));
    assert_ne!(other, truth);
    assert_eq!(cached_for("other"), other, "another space");
    assert_eq!(cached(), truth, "back to the first space");
    // A file rewritten with the same size: its modification time differs.
    write("guide/b.json", r#"{"id":"b","status":"done"}"#);
    let truth = dump(&store.load().unwrap().condensed(&Forms("docs")));
    assert_ne!(
        cached(),
        dump(&Store::new(dir.path().join("none")).load().unwrap())
    );
    assert_eq!(cached(), truth, "a file changed under the cache");
    // Garbled, cut and foreign caches.
    for bad in [
        text.replace("resolved", "RESOLVED"),
        text[..text.len() / 2].to_string(),
        "garbage".to_string(),
        text.replacen("store cache 3", "store cache 0", 1),
    ] {
        std::fs::write(&cache_file, bad).unwrap();
        assert_eq!(cached(), truth);
    }
    std::fs::remove_dir_all(&cache_dir).unwrap();
    assert_eq!(cached(), truth, "deleted");
    // Off: nothing written.
    let off = dump(&store.load_condensed_in(None, &Forms("docs")).unwrap());
    assert_eq!(off, truth);
}

#[test]
fn old_caches_are_pruned_beyond_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for i in 0..KEEP_MAX + 5 {
        let p = dir.path().join(format!("store-{i:016x}.cache"));
        std::fs::write(&p, "x").unwrap();
        let when = old + std::time::Duration::from_secs(i as u64);
        std::fs::File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(when)
            .unwrap();
    }
    std::fs::write(dir.path().join("other.txt"), "kept").unwrap();
    let current = dir.path().join(format!("store-{:016x}.cache", 0));
    prune(dir.path(), &current, CACHE_FILE);
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    // The newest 32, the current one (the oldest here) and the file that is not a cache.
    assert_eq!(left.len(), KEEP_AFTER_PRUNE + 2, "{left:?}");
    assert!(left.contains(&"other.txt".to_string()));
    assert!(left.contains(&format!("store-{:016x}.cache", 0)));
    assert!(left.contains(&format!("store-{:016x}.cache", KEEP_MAX + 4)));
    assert!(!left.contains(&format!("store-{:016x}.cache", 1)));
}

/// [`Forms`], noting the comments it is handed (by id: one per record read from a file).
struct Counting<'a>(
    Forms,
    &'a std::sync::Mutex<std::collections::BTreeSet<String>>,
);

impl Counting<'_> {
    /// How many comments it was handed.
    fn count(&self) -> usize {
        self.1.lock().unwrap().len()
    }
}

impl crate::Condense for Counting<'_> {
    fn variant(&self) -> &str {
        self.0.variant()
    }
    fn condense(&self, c: &crate::Comment) -> Option<crate::Comment> {
        self.1
            .lock()
            .unwrap()
            .insert(c.id().unwrap_or_default().to_string());
        self.0.condense(c)
    }
    fn restore(&self, text: SharedText) -> Option<std::sync::Arc<dyn crate::CondensedText>> {
        self.0.restore(text)
    }
}

#[test]
fn with_no_cache_file_the_listing_is_keyed_by_the_reads_and_shown_after_them() {
    use crate::Store;
    let (_dir, root, cache_dir) = store_and_cache();
    let write = |rel: &str, text: &str| write_aged(&root.join(rel), text, minute_ago());
    write("guide/a.json", r#"{"id":"a","status":"resolved"}"#);
    write("guide/b.json", r#"{"id":"b","status":"open"}"#);
    write("guide.json", r#"[{"id":"c"},{"id":"d"}]"#);
    write("meta.json", r#"{"version":3}"#);
    let store = Store::new(root.clone());
    let records = std::sync::Mutex::default();
    let forms = Counting(Forms("docs"), &records);
    // The listing's bytes, how many records had been read when it was shown, the cache.
    let listing = |seen_first: bool| {
        records.lock().unwrap().clear();
        let (mut fed, mut read_then) = (Vec::new(), None);
        let (_, update) = store
            .load_condensed_seeing(
                Some(cache_dir.clone()),
                &forms,
                &|| {},
                &mut |l| {
                    read_then = Some(forms.count());
                    l.unwrap().feed(&mut |b| fed.extend_from_slice(b));
                },
                seen_first,
            )
            .unwrap();
        (fed, read_then.unwrap(), update)
    };
    // No cache file and no need to see it first: shown once the four records are read, each
    // file keyed by its read's own `fstat`.
    let (after, read_then, _) = listing(false);
    assert_eq!(read_then, 4);
    // Asked for first: shown before any file is read, keyed by the listing: the same bytes.
    let (first, read_then, update) = listing(true);
    assert_eq!(read_then, 0);
    assert_eq!(first, after);
    // With a cache file to look in, the listing is stat'ed and shown first.
    update.write();
    let (cached, read_then, _) = listing(false);
    assert_eq!(read_then, 0);
    assert_eq!(cached, after);
}
