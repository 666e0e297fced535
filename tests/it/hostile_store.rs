//! A store carried by a git branch can hold anything: symlinks to files outside it, a
//! directory where `meta.json` should be, files too big to read. Readers never follow a
//! symlink, read regular files only and up to a cap, and `comments verify` reports each of
//! them; a `meta.json` that cannot be read stops every command before anything is written.

use crate::support::common;

use common::{Out, run_with, tree};
use mdbook_notabene::model::book::condensed::BuildRead;
use notabene_store::{Store, journal};
use pretty_assertions::assert_eq;
use serde_json::Value;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

/// A temp dir holding a copy of the round-trip fixture store at `<tmp>/store`.
fn setup() -> (tempfile::TempDir, PathBuf) {
    common::fixture_store("roundtrip/store")
}

fn nb(tmp: &tempfile::TempDir, args: &[&str], stdin: Option<&str>) -> Out {
    let mut full = vec!["--store", "store"];
    full.extend_from_slice(args);
    run_with(tmp.path(), &full, stdin, &[])
}

/// Asserts that `args` fails with exactly `line` and changes nothing in the temp dir.
#[track_caller]
fn refused(tmp: &tempfile::TempDir, args: &[&str], stdin: Option<&str>, line: &str) {
    let before = tree(tmp.path());
    nb(tmp, args, stdin).fails_with(line);
    assert_eq!(
        tree(tmp.path()),
        before,
        "a refused command wrote ({args:?})"
    );
}

/// The (code, file) of every finding of `comments verify --json` whose code is in `codes`.
fn findings(tmp: &tempfile::TempDir, codes: &[&str]) -> Vec<(String, String, String)> {
    let out = nb(tmp, &["comments", "verify", "--json"], None);
    let report: Value = serde_json::from_str(&out.stdout).expect("verify --json prints JSON");
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| codes.contains(&f["code"].as_str().unwrap_or_default()))
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or_default().to_string();
            (s("level"), s("code"), s("file"))
        })
        .collect()
}

fn finding(level: &str, code: &str, file: &str) -> (String, String, String) {
    (level.into(), code.into(), file.into())
}

const ENTRY: &str = r#"{"id":"j-new","date":"2026-07-28","title":"t","summary":"s","changes":[{"page":"src/legacy","commentIds":["c_legacy0001"],"what":"w","why":"y"}]}"#;

#[test]
fn a_symlinked_journal_is_never_read_and_verify_reports_it() {
    let (tmp, store) = setup();
    let outside = tmp.path().join("secret.json");
    common::write(
        &outside,
        r#"[{"id":"j-secret","date":"2026-01-01","title":"outside the store","changes":[]}]"#,
    );
    std::fs::remove_file(store.join("journal.json")).unwrap();
    symlink(&outside, store.join("journal.json")).unwrap();
    let line = "notabene: journal.json is a symlink, which the store never follows (journal.json)";
    refused(&tmp, &["journal", "ls"], None, line);
    refused(&tmp, &["journal", "ls", "--json"], None, line);
    refused(&tmp, &["journal", "add"], Some(ENTRY), line);
    // What the review pages and `GET journal` read: nothing of the outside file.
    let j = journal::read(&Store::new(&store));
    assert!(j.entries().is_empty(), "{j:?}");
    assert_eq!(
        findings(&tmp, &["store-symlink", "journal-invalid"]),
        [
            finding("error", "journal-invalid", "journal.json"),
            finding("error", "store-symlink", "journal.json"),
        ]
    );
}

#[test]
fn a_symlinked_comment_file_or_page_directory_is_never_read_and_verify_reports_it() {
    let (tmp, store) = setup();
    let outside = tmp.path().join("outside");
    let comment = |id: &str, page: &str| {
        format!(
            r#"{{"id":"{id}","space":"book","page":"{page}","scope":"page","anchor":null,"thread":[{{"author":"a","body":"outside","ts":"2026-07-01T10:00:00.000Z"}}],"status":"open","hold":false,"resolution":null,"createdAt":"2026-07-01T10:00:00.000Z","updatedAt":"2026-07-01T10:00:00.000Z"}}"#
        )
    };
    common::write(
        &outside.join("c_link.json"),
        &comment("c_link", "src/guide/intro"),
    );
    common::write(&outside.join("c_dir.json"), &comment("c_dir", "src/linked"));
    common::write(
        &outside.join("legacy.json"),
        &format!("[{}]", comment("c_arr", "src/arr")),
    );
    symlink(
        outside.join("c_link.json"),
        store.join("src/guide/intro/c_link.json"),
    )
    .unwrap();
    symlink(&outside, store.join("src/linked")).unwrap();
    symlink(outside.join("legacy.json"), store.join("src/arr.json")).unwrap();

    let s = Store::new(&store);
    let ids = |snap: &notabene_store::Snapshot| -> Vec<String> {
        snap.comments()
            .map(|r| r.comment.id().unwrap().to_string())
            .collect()
    };
    let snap = s.load().unwrap();
    assert!(
        !ids(&snap)
            .iter()
            .any(|i| ["c_link", "c_dir", "c_arr"].contains(&i.as_str()))
    );
    assert_eq!(
        snap.symlinks,
        ["src/arr.json", "src/guide/intro/c_link.json", "src/linked"]
    );
    let built = s.load_for_build_in(None, "book").unwrap();
    assert_eq!(ids(&built), ids(&snap));
    // The reads by page and by file name (serve's) do not follow them either.
    let page = s.load_page("src/guide/intro").unwrap();
    assert!(!page.iter().any(|c| c.id() == Some("c_link")));
    assert_eq!(s.read_file_of("src/guide/intro", "c_link"), None);
    assert_eq!(
        s.find_on_page("src/guide/intro", "c_link")
            .unwrap()
            .map(|r| r.file),
        None
    );
    assert!(s.load_page("src/linked").unwrap().is_empty());
    assert_eq!(s.read_file_of("src/linked", "c_dir"), None);
    assert_eq!(
        s.find_on_page("src/linked", "c_dir")
            .unwrap()
            .map(|r| r.file),
        None
    );
    assert!(s.load_page("src/arr").unwrap().is_empty());
    // Readers say what they skipped; verify reports each as an error.
    let out = nb(&tmp, &["comments", "ls", "--json"], None);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            0,
            "notabene: skipping a symlink in the store (never followed) (src/arr.json)\n\
             notabene: skipping a symlink in the store (never followed) (src/guide/intro/c_link.json)\n\
             notabene: skipping a symlink in the store (never followed) (src/linked)\n"
        )
    );
    assert_eq!(
        findings(&tmp, &["store-symlink"]),
        [
            finding("error", "store-symlink", "src/arr.json"),
            finding("error", "store-symlink", "src/guide/intro/c_link.json"),
            finding("error", "store-symlink", "src/linked"),
        ]
    );
}

#[test]
fn a_meta_json_that_is_not_a_regular_file_stops_every_command_and_nothing_is_written() {
    let (tmp, store) = setup();
    let meta = store.join("meta.json");
    let refusal = |what: &str| {
        format!(
            "notabene: meta.json {what}: its schema version cannot be checked — refusing to read or write the store ({})",
            meta.display()
        )
    };
    std::fs::remove_file(&meta).unwrap();
    // A directory (with a newer version inside, which must not matter).
    common::write(&meta.join("x"), "{\"schemaVersion\": 9}\n");
    let line = refusal("is a directory, not a regular file");
    refused(
        &tmp,
        &["comments", "add", "--page", "src/x", "--body", "hi"],
        None,
        &line,
    );
    refused(&tmp, &["comments", "hold", "c_mx2ssedfey4i"], None, &line);
    refused(&tmp, &["journal", "add"], Some(ENTRY), &line);
    refused(&tmp, &["comments", "ls"], None, &line);
    assert_eq!(
        findings(&tmp, &["store-meta-unreadable", "store-symlink"]),
        [finding("error", "store-meta-unreadable", "meta.json")]
    );
    // A symlink to a file outside the store that says an old version.
    std::fs::remove_dir_all(&meta).unwrap();
    let outside = tmp.path().join("meta-outside.json");
    common::write(&outside, "{\"schemaVersion\": 1}\n");
    symlink(&outside, &meta).unwrap();
    let line = refusal("is a symlink, which the store never follows");
    refused(
        &tmp,
        &["comments", "add", "--page", "src/x", "--body", "hi"],
        None,
        &line,
    );
    refused(&tmp, &["migrate"], None, &line);
    assert_eq!(
        findings(&tmp, &["store-meta-unreadable", "store-symlink"]),
        [
            finding("error", "store-meta-unreadable", "meta.json"),
            finding("error", "store-symlink", "meta.json"),
        ]
    );
}

/// Makes `path` a sparse file of `len` bytes (no real bytes written).
fn sparse(path: &Path, len: u64) {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .unwrap();
    f.set_len(len).unwrap();
}

#[test]
fn store_files_over_their_cap_are_refused_naming_them() {
    let (tmp, store) = setup();
    // journal.json: an error for its readers and writers.
    sparse(&store.join("journal.json"), (64 << 20) + 1);
    let line = "notabene: journal.json is over 64 MiB (journal.json)";
    refused(&tmp, &["journal", "ls"], None, line);
    refused(&tmp, &["journal", "add"], Some(ENTRY), line);
    common::write(&store.join("journal.json"), "[]\n");
    // A comment file: skipped with a warning naming it, reported by verify.
    let big = "src/guide/intro/c_big.json";
    sparse(&store.join(big), (16 << 20) + 1);
    let out = nb(&tmp, &["comments", "ls", "--json"], None);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            0,
            "notabene: skipping unreadable comment file: the file is over 16 MiB (src/guide/intro/c_big.json)\n"
        )
    );
    assert_eq!(
        findings(&tmp, &["comment-unreadable"]),
        [finding("error", "comment-unreadable", big)]
    );
    std::fs::remove_file(store.join(big)).unwrap();
    // meta.json: the store is refused.
    sparse(&store.join("meta.json"), (64 << 10) + 1);
    refused(
        &tmp,
        &["comments", "add", "--page", "src/x", "--body", "hi"],
        None,
        &format!(
            "notabene: meta.json is over 64 KiB: its schema version cannot be checked — refusing to read or write the store ({})",
            store.join("meta.json").display()
        ),
    );
}
