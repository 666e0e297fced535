//! A build replayed (`src/output/reuse/replay.rs`), through the real pipeline: the real
//! `mdbook` 0.5 binary running our binary as its preprocessor, on a copy of book-example whose
//! store's files are an hour old. A build after one that read the same things writes its
//! output again without computing it — the same bytes, the same lines on stderr; whatever the
//! build reads that changed (a chapter, a comment file rewritten in place with its old size
//! and modification time, a new or deleted comment, `book.toml`, the reader client, a
//! translation, git's state, the environment) makes it run, and its output is then the one a
//! build without any cache writes. A record garbled or cut, a store modified just now, a build
//! timed or failed: no replay. Without `mdbook` the tests are skipped with a note, except
//! under CI (`CI` set), where they fail.
//!
//! Whether a build ran or was replayed is seen in the cache directory: a build that runs
//! writes the store's cache and its memo there when they are missing; a replay writes
//! nothing.

use super::store_cache::{Staged, age, assert_same, differing, mdbook_or_skip, staged, tree};
use crate::support::common::{self, files_under};
use crate::support::preprocess::plugin_command;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What one `mdbook build` gave: the output tree, its stderr, whether it succeeded.
struct Built {
    out: BTreeMap<String, Vec<u8>>,
    stderr: String,
    ok: bool,
}

/// `mdbook build -d <out>` of `root`, our binary as the preprocessor, the cache directory
/// `cache` (`off` for none), with `env` set.
fn build_with(root: &Path, out: &Path, cache: &str, env: &[(&str, &str)]) -> Built {
    let mdbook = common::find_tool("mdbook").expect("mdbook");
    let mut cmd = Command::new(mdbook);
    cmd.arg("build")
        .arg("-d")
        .arg(out)
        .current_dir(root)
        .env("MDBOOK_PREPROCESSOR__NOTABENE__COMMAND", plugin_command())
        .env("NOTABENE_CACHE_DIR", cache)
        .env_remove("NOTABENE_TIMINGS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().unwrap();
    Built {
        out: if o.status.success() {
            tree(out)
        } else {
            BTreeMap::new()
        },
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        ok: o.status.success(),
    }
}

/// The files of the cache directory whose names start with `prefix`.
fn cached(cache: &Path, prefix: &str) -> Vec<PathBuf> {
    files_under(cache)
        .into_iter()
        .filter(|f| {
            f.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
        })
        .collect()
}

/// Removes the store's cache and the memo from the cache directory (the replay record stays).
fn forget_work(cache: &Path) {
    for f in cached(cache, "store-")
        .into_iter()
        .chain(cached(cache, "memo-"))
    {
        std::fs::remove_file(f).unwrap();
    }
}

/// Whether the last build ran: it wrote the store's cache again after [`forget_work`] (and
/// the memo, unless it failed).
fn ran(cache: &Path) -> bool {
    cached(cache, "store-").len() == 1
}

/// The lines mdBook itself prints (with a time in them), left out of a comparison of stderr.
fn ours(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|l| l.starts_with("notabene"))
        .map(|l| format!("{l}\n"))
        .collect()
}

struct Book {
    staged: Staged,
}

impl Book {
    fn new() -> Book {
        let staged = staged();
        // The book's sources, like its store, were written an hour ago (a file modified in
        // the last two seconds keeps a build from being recorded).
        age(&staged.root.join("src"), staged.old);
        Book { staged }
    }

    fn cache(&self) -> &Path {
        &self.staged.cache
    }

    /// A build through the cache directory, into the same output directory each time (mdBook
    /// hands its plugins the output directory with the configuration).
    fn build(&self, env: &[(&str, &str)]) -> Built {
        let out = self.staged.tmp.path().join("out");
        build_with(&self.staged.root, &out, self.cache().to_str().unwrap(), env)
    }

    /// A build with the cache off: what every build must write.
    fn truth(&self, env: &[(&str, &str)]) -> Built {
        let out = self.staged.tmp.path().join("off");
        build_with(&self.staged.root, &out, "off", env)
    }

    /// Builds until the record is this state's (a build that runs keeps it), then checks
    /// that the next build, with nothing changed, is replayed: the same bytes and lines.
    #[track_caller]
    fn replays(&self, env: &[(&str, &str)], what: &str) -> Built {
        let first = self.build(env);
        assert!(first.ok, "{what}: {}", first.stderr);
        forget_work(self.cache());
        let again = self.build(env);
        assert!(again.ok, "{what}: {}", again.stderr);
        assert!(
            !ran(self.cache()),
            "{what}: nothing changed, the build is replayed"
        );
        assert_same(&again.out, &first.out, what);
        assert_eq!(ours(&again.stderr), ours(&first.stderr), "{what}: stderr");
        again
    }

    /// The book's sources aged an hour, as after an edit made before the build.
    fn age_sources(&self) {
        age(&self.staged.root.join("src"), self.staged.old);
    }

    /// After an edit: the build runs, and writes what a build without any cache writes.
    #[track_caller]
    fn runs(&self, env: &[(&str, &str)], what: &str) -> Built {
        forget_work(self.cache());
        let after = self.build(env);
        assert!(after.ok, "{what}: {}", after.stderr);
        assert!(ran(self.cache()), "{what}: the build is not replayed");
        let truth = self.truth(env);
        assert_same(&after.out, &truth.out, what);
        assert_eq!(ours(&after.stderr), ours(&truth.stderr), "{what}: stderr");
        after
    }
}

#[test]
fn a_build_that_reads_what_the_last_one_read_is_replayed_byte_for_byte() {
    if mdbook_or_skip("the replay test").is_none() {
        return;
    }
    let book = Book::new();
    let first = book.build(&[]);
    assert!(first.ok, "{}", first.stderr);
    assert_eq!(cached(book.cache(), "replay-").len(), 1, "a record is kept");
    let replayed = book.replays(&[], "nothing changed");
    assert_same(&replayed.out, &book.truth(&[]).out, "against no cache");
    assert!(
        ours(&replayed.stderr).contains(" comments on "),
        "the build's summary is printed again: {}",
        replayed.stderr
    );
    // A timed build runs its stages (and says what the memo gave).
    forget_work(book.cache());
    let timed = book.build(&[("NOTABENE_TIMINGS", "1")]);
    assert!(timed.stderr.contains("memo: "), "{}", timed.stderr);
    assert!(ran(book.cache()), "a timed build is not replayed");
    assert_same(&timed.out, &replayed.out, "timed");
}

#[test]
fn whatever_a_build_reads_that_changed_makes_it_run() {
    if mdbook_or_skip("the replay test").is_none() {
        return;
    }
    let book = Book::new();
    let Staged {
        root, store, old, ..
    } = &book.staged;
    let (root, store, old) = (root.as_path(), store.as_path(), *old);

    // A quoted sentence of a chapter reworded (mdBook's input changes).
    book.replays(&[], "before the chapter");
    common::reword_a_quoted_sentence(root);
    book.age_sources();
    book.runs(&[], "a chapter reworded");

    // A comment's body rewritten in place: the same size, its old modification time (only its
    // change time moved).
    book.replays(&[], "before the comment");
    let victim = store.join("book-example/src/guide/installing/c_mwrmz21ih8pc.json");
    let text = std::fs::read_to_string(&victim).unwrap();
    let at = text.find("\"body\": \"").unwrap() + 9;
    let mut edited = text.clone();
    let swap = if &text[at..at + 1] == "Z" { "Y" } else { "Z" };
    edited.replace_range(at..at + 1, swap);
    assert_eq!(edited.len(), text.len());
    std::fs::write(&victim, &edited).unwrap();
    age(store, old);
    book.runs(&[], "a comment rewritten in place");

    // A comment resolved, a new comment, a comment deleted.
    book.replays(&[], "before the status");
    std::fs::write(
        &victim,
        edited.replace("\"status\": \"open\"", "\"status\": \"resolved\""),
    )
    .unwrap();
    age(store, old);
    book.runs(&[], "a comment resolved");
    book.replays(&[], "before the new comment");
    let page = "book-example/src/guide/configuration";
    let new = store.join(page).join("c_replay0test.json");
    let comment = serde_json::json!({
        "id": "c_replay0test", "space": "book", "page": page, "scope": "page",
        "anchor": null,
        "thread": [{ "author": "Rev Iewer <rev@example.com>", "body": "A new comment.", "ts": "2026-12-01T00:00:00.000Z" }],
        "status": "open", "hold": false, "resolution": null,
        "createdAt": "2026-12-01T00:00:00.000Z", "updatedAt": "2026-12-01T00:00:00.000Z"
    });
    std::fs::write(&new, serde_json::to_string_pretty(&comment).unwrap()).unwrap();
    age(store, old);
    book.runs(&[], "a new comment");
    book.replays(&[], "before the deletion");
    std::fs::remove_file(&new).unwrap();
    book.runs(&[], "a comment deleted");

    // book.toml edited where mdBook's input does not show it (a comment line).
    book.replays(&[], "before book.toml");
    let toml = std::fs::read_to_string(root.join("book.toml")).unwrap();
    std::fs::write(root.join("book.toml"), format!("# reviewed\n{toml}")).unwrap();
    book.runs(&[], "book.toml edited");

    // The reader client rewritten (a newer copy), then removed: the check runs and fails.
    book.replays(&[], "before the client");
    let client = root.join("theme/notabene.js");
    let js = std::fs::read_to_string(&client).unwrap();
    std::fs::write(&client, format!("{js}\n// edited\n")).unwrap();
    book.runs(&[], "the client edited");
    book.replays(&[], "before the client is removed");
    std::fs::remove_file(&client).unwrap();
    let failed = book.build(&[]);
    assert!(!failed.ok, "a build without the client fails");
    assert!(
        failed
            .stderr
            .contains("the notabene reader client is missing"),
        "{}",
        failed.stderr
    );
    std::fs::write(&client, &js).unwrap();

    // A translation added (`po/de.po`: the page ids of another language).
    book.replays(&[], "before po/");
    std::fs::create_dir_all(root.join("po")).unwrap();
    std::fs::write(root.join("po/de.po"), "msgid \"\"\nmsgstr \"\"\n").unwrap();
    book.runs(&[], "a translation added");

    // git's state: a commit, then an untracked Markdown file.
    book.replays(&[], "before the commit");
    common::git_commit_all(book.staged.tmp.path(), "the book");
    book.runs(&[], "a commit");
    book.replays(&[], "before the untracked file");
    std::fs::write(root.join("src/NOTES.md"), "Notes.\n").unwrap();
    book.age_sources();
    book.runs(&[], "an untracked Markdown file");

    // What git's diffs on /review depend on beside HEAD: book-example's journal names its
    // changes' commit `93b516127b17`, unknown here; a branch of that name makes it known (HEAD
    // and the work tree as they were), then git's configuration changes the diff's header.
    let tmp = book.staged.tmp.path();
    let before = book.replays(&[], "before the branch");
    common::git(tmp, &["branch", "93b516127b17"]);
    let branch = book.runs(&[], "a branch a journal entry names");
    assert!(
        !differing(&before.out, &branch.out).is_empty(),
        "the /review diff is git's now"
    );
    book.replays(&[], "before the configuration");
    common::git(tmp, &["config", "diff.dstPrefix", "new/"]);
    let prefixed = book.runs(&[], "git's diff configuration changed");
    assert!(
        !differing(&branch.out, &prefixed.out).is_empty(),
        "the /review diff names its files otherwise"
    );

    // The environment: a variable a build reads (the CI base branch).
    book.replays(&[], "before the environment");
    book.runs(&[("GITHUB_BASE_REF", "main")], "GITHUB_BASE_REF set");
    book.replays(&[("GITHUB_BASE_REF", "main")], "with GITHUB_BASE_REF");
}

#[test]
fn a_garbled_record_a_store_modified_just_now_or_a_failed_build_is_not_replayed() {
    if mdbook_or_skip("the replay test").is_none() {
        return;
    }
    let book = Book::new();
    let (store, old) = (book.staged.store.clone(), book.staged.old);
    let good = book.replays(&[], "nothing changed");
    let record = cached(book.cache(), "replay-").pop().unwrap();
    let bytes = std::fs::read(&record).unwrap();
    // One byte flipped in each tenth of the record, then the record cut in two.
    let mut bad: Vec<Vec<u8>> = (0..10)
        .map(|k| {
            let mut b = bytes.clone();
            b[bytes.len() * (2 * k + 1) / 20] ^= 0x20;
            b
        })
        .collect();
    bad.push(bytes[..bytes.len() / 2].to_vec());
    for (i, b) in bad.iter().enumerate() {
        std::fs::write(&record, b).unwrap();
        forget_work(book.cache());
        let built = book.build(&[]);
        assert!(built.ok, "{}", built.stderr);
        assert!(ran(book.cache()), "garbled record {i}: the build runs");
        assert_same(&built.out, &good.out, &format!("garbled record {i}"));
        assert_eq!(
            std::fs::read(&record).unwrap(),
            bytes,
            "garbled record {i}: the build keeps its record again"
        );
    }

    // A store file modified just now: its key may not tell its contents; no record is kept
    // under such a listing, so the next build runs too.
    std::fs::remove_file(&record).unwrap();
    let victim = files_under(&store)
        .into_iter()
        .find(|f| f.extension().is_some_and(|x| x == "json") && !f.ends_with("meta.json"))
        .unwrap();
    let text = std::fs::read(&victim).unwrap();
    std::fs::write(&victim, &text).unwrap();
    for round in 0..2 {
        forget_work(book.cache());
        let built = book.build(&[]);
        assert!(ran(book.cache()), "modified just now, round {round}: runs");
        assert!(cached(book.cache(), "replay-").is_empty(), "no record");
        assert_same(&built.out, &good.out, "modified just now");
    }
    age(&store, old);
    book.replays(&[], "aged again");

    // A build that fails (`fail-on` over what the book has) keeps no record: the next one
    // fails the same way, running.
    let fail = [("MDBOOK_PREPROCESSOR__NOTABENE__FAIL_ON", "fuzzy")];
    let first = book.build(&fail);
    let record_before = std::fs::read(cached(book.cache(), "replay-").pop().unwrap()).unwrap();
    forget_work(book.cache());
    let second = book.build(&fail);
    assert!(!first.ok && !second.ok, "fail-on fails: {}", first.stderr);
    assert!(ran(book.cache()), "a failed build is not replayed");
    assert_eq!(ours(&first.stderr), ours(&second.stderr));
    let record_after = std::fs::read(cached(book.cache(), "replay-").pop().unwrap()).unwrap();
    assert!(
        record_after == record_before,
        "a failed build leaves the last record as it was"
    );
    assert!(differing(&good.out, &book.replays(&[], "after").out).is_empty());
}
