//! A comment whose passage was deleted, while a near copy of it stands on the same page, is not
//! marked on the copy when git shows the copy was there all along: the nomicon's HRTB chapter
//! (three versions of one program), in a real git repository, through `notabene anchors
//! --json`. The copy resembles the stored anchor as well as an edit of the original would; only
//! the page as it was when the comment was written tells them apart. A passage moved to
//! another chapter is followed there past the copy left behind; and the commented passage
//! edited around keeps its comment beside a copy (races, a sentence copied later).

use crate::support::common::{self, git};
use crate::support::preprocess;
use notabene_anchoring::text::{TextOptions, page_text};
use notabene_store::{Fresh, Record, Scope, Store, new_comment};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The commented lines, in the chapter's last program (the first one has `where F: Fn(&(u8,
/// u16)) -> &u8,` at the same place).
const QUOTE: &str = "Closure<F>\n    where for<'a> F: Fn(&'a (u8, u16)) -> &'a u8,\n{\n    fn call(&self) -> &u8 {\n        (self.func)(&self.data)\n    }\n}\n\nfn";
/// The paragraph before the last program, where the commented program starts.
const LAST: &str = "In summary, we can rewrite the original code more explicitly as:";

/// The nomicon in a git repository with one comment on [`QUOTE`] in the chapter's last
/// program; committed when `commit` (else the comment's file is left for the next commit).
fn reviewed(commit: bool) -> (tempfile::TempDir, PathBuf) {
    reviewed_on("hrtb", QUOTE, LAST, |_| {}, commit)
}

/// The nomicon in a git repository, `prepare` run on it and committed, with one comment on
/// `quote` where it first stands after `after` in chapter `chapter`; the comment committed
/// when `commit`.
fn reviewed_on(
    chapter: &str,
    quote: &str,
    after: &str,
    prepare: impl FnOnce(&Path),
    commit: bool,
) -> (tempfile::TempDir, PathBuf) {
    let tmp = common::tempdir();
    let book = common::copy_into_repo(&common::corpus("nomicon"), tmp.path(), "nomicon");
    prepare(&book);
    git(tmp.path(), &["add", "-A"]);
    git(tmp.path(), &["commit", "-qm", "the book"]);
    let md = common::read(&book.join(format!("src/{chapter}.md")));
    let pt = page_text(&md, &TextOptions::default());
    let from = pt.text.find(after).expect("the passage");
    let a = from + pt.text[from..].find(quote).expect("the quote after it");
    std::fs::create_dir_all(book.join(".notabene")).unwrap();
    let store = Store::new(book.join(".notabene"));
    let lock = store.lock().unwrap();
    store.ensure_meta().unwrap();
    let page = format!("nomicon/src/{chapter}");
    let comment = new_comment(&Fresh {
        id: "c_lookalike1",
        space: "book",
        page: &page,
        scope: Scope::Selection,
        anchor: preprocess::capture(&pt, a, a + quote.len()),
        author: "Ann <a@example.com>",
        body: "a review comment",
        ts: "2026-07-28T09:00:00.000Z",
    });
    store
        .write_record(&Record {
            file: format!("{page}/c_lookalike1.json"),
            location: notabene_store::Location::File,
            comment,
        })
        .unwrap();
    drop(lock);
    if commit {
        git(tmp.path(), &["add", "-A"]);
        git(tmp.path(), &["commit", "-qm", "a review"]);
    }
    (tmp, book)
}

/// The commented lines of the last program with the lines around them, as far as the stored
/// context reaches (from its field list to its `do_it`): their byte range in the chapter `md`.
fn commented_lines(md: &str) -> std::ops::Range<usize> {
    let last = md.find(LAST).expect("the last paragraph");
    let start = last + md[last..].find("    data: (u8, u16),").expect("its fields");
    let gone = "&data.0 }\n";
    let end = last + md[last..].find(gone).expect("its do_it") + gone.len();
    start..end
}

/// The chapter without its [`commented_lines`].
fn delete_the_commented_lines(book: &Path) {
    let path = book.join("src/hrtb.md");
    let md = common::read(&path);
    let r = commented_lines(&md);
    common::write(&path, &format!("{}{}", &md[..r.start], &md[r.end..]));
}

/// The comment's anchoring: (status, matched text, suggested text).
fn anchoring(book: &Path) -> (String, Value, Value) {
    let out = common::run(book, &["anchors", "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let a = &doc["comments"][0]["anchoring"];
    (
        a["status"].as_str().unwrap().to_string(),
        a["text"].clone(),
        a["suggestion"]["text"].clone(),
    )
}

/// The text the first program holds where the last one held the quote: the look-alike.
const COPY: &str = "where F: Fn(&(u8, u16)) -> &u8,\n{\n    fn call(&self) -> &u8 {";

#[test]
fn a_deleted_passage_is_not_marked_on_a_copy_that_stood_beside_it() {
    for commit in [true, false] {
        let (_tmp, book) = reviewed(commit);
        assert_eq!(
            anchoring(&book),
            ("exact".to_string(), json!(QUOTE), Value::Null),
            "before the edit (comment committed: {commit})"
        );
        delete_the_commented_lines(&book);
        let (status, text, suggestion) = anchoring(&book);
        assert_eq!(
            (status.as_str(), text),
            ("orphan", Value::Null),
            "comment committed: {commit}"
        );
        assert!(
            suggestion.as_str().is_some_and(|s| s.contains(COPY)),
            "the copy is suggested: {suggestion}"
        );
    }
}

#[test]
fn a_passage_moved_to_another_chapter_is_followed_past_the_copy_left_behind() {
    // The commented lines, with the lines around them, move to a program at the end of
    // `lifetime-elision`, committed after the comment: on its own page the comment is not
    // marked on the first program (a copy that stood there), and git shows its text arriving
    // on the other page.
    let (tmp, book) = reviewed(true);
    let hrtb = book.join("src/hrtb.md");
    let md = common::read(&hrtb);
    delete_the_commented_lines(&book);
    let cut = &md[commented_lines(&md)];
    let elision = book.join("src/lifetime-elision.md");
    let target = common::read(&elision);
    common::write(
        &elision,
        &format!("{target}\n```rust\nstruct Closure<F> {{\n{cut}\nfn main() {{}}\n```\n"),
    );
    git(
        tmp.path(),
        &["commit", "-qam", "the explicit version in elision"],
    );
    let out = common::run(&book, &["anchors", "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let a = &doc["comments"][0]["anchoring"];
    assert_eq!(
        (
            &a["status"],
            &a["text"],
            &a["followed"]["to"],
            &a["followed"]["by"]
        ),
        (
            &json!("exact"),
            &json!(QUOTE),
            &json!("nomicon/src/lifetime-elision"),
            &json!("quote")
        ),
        "{a}"
    );
}

#[test]
fn without_git_the_copy_is_all_there_is() {
    // The same edit in a copy of the book outside any repository: no page to compare with,
    // the copy resembles the anchor well enough to be marked (fuzzy).
    let (_tmp, book) = reviewed(true);
    delete_the_commented_lines(&book);
    let alone = common::tempdir();
    let copy = alone.path().join("nomicon");
    common::copy_dir(&book, &copy);
    let (status, text, _) = anchoring(&copy);
    assert_eq!(status, "fuzzy");
    assert!(
        text.as_str()
            .is_some_and(|t| t.contains("where F: Fn(&(u8, u16))")),
        "{text}"
    );
}

#[test]
fn the_commented_sentence_edited_around_keeps_its_mark_beside_a_copy() {
    // A near copy of a sentence stands later in the chapter (its last words differ). The
    // author rewrites the words before the commented one: the place is the commented sentence
    // with new text next to it, not the copy that stood on the page, and keeps its comment.
    const SENTENCE: &str =
        "A data race has Undefined Behavior, and is therefore impossible to perform in\nSafe Rust.";
    const COPIED: &str = "A data race has Undefined Behavior, and is therefore impossible to perform in\nSafe Rust alone, whatever the platform.";
    let quote = "and is therefore impossible to perform in\nSafe Rust";
    let (_tmp, book) = reviewed_on(
        "races",
        quote,
        "A data race has",
        |book| {
            let path = book.join("src/races.md");
            let md = common::read(&path);
            assert!(md.contains(SENTENCE));
            common::write(&path, &format!("{md}\n## Once more\n\n{COPIED}\n"));
        },
        true,
    );
    let path = book.join("src/races.md");
    let md = common::read(&path);
    common::write(
        &path,
        &md.replacen(
            "* one or more of them is unsynchronized\n\nA data race",
            "* none of them is synchronized\n\nA data race",
            1,
        ),
    );
    let (status, text, _) = anchoring(&book);
    assert_eq!((status.as_str(), text), ("exact", json!(quote)));
    // The same sentence deleted: the copy stood beside it all along.
    let md = common::read(&path);
    common::write(
        &path,
        &md.replacen(&format!("{SENTENCE} Data races"), "Data races", 1),
    );
    let (status, text, suggestion) = anchoring(&book);
    assert_eq!((status.as_str(), text), ("orphan", Value::Null));
    assert!(
        suggestion.as_str().is_some_and(|s| s.contains(quote)),
        "{suggestion}"
    );
}

#[test]
fn git_runs_as_often_for_thirty_comments_not_committed_as_for_one() {
    // Comments not committed yet are read from the commit current at their `createdAt`: the
    // commits are listed once for all of them, not asked for one by one (a first build with
    // thousands of such comments once ran two `git` processes for each).
    let (_tmp, book) = reviewed(false);
    delete_the_commented_lines(&book);
    let shim = common::tempdir();
    let log = shim.path().join("calls");
    let real = common::find_tool("git").expect("git");
    let script = shim.path().join("git");
    common::write(
        &script,
        &format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            real.display()
        ),
    );
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        shim.path().display(),
        std::env::var("PATH").unwrap()
    );
    let calls = |book: &Path| {
        let _ = std::fs::remove_file(&log);
        let out = common::run_with(book, &["anchors", "--json"], None, &[("PATH", &path)]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        common::read(&log).lines().count()
    };
    let one = calls(&book);
    let page = book.join(".notabene/nomicon/src/hrtb");
    let first = common::read(&page.join("c_lookalike1.json"));
    for i in 2..=30 {
        let id = format!("c_lookalike{i}");
        common::write(
            &page.join(format!("{id}.json")),
            &first.replace("c_lookalike1", &id),
        );
    }
    let thirty = calls(&book);
    assert_eq!(thirty, one, "git calls for 30 comments and for 1");
    let (status, ..) = anchoring(&book);
    assert_eq!(status, "orphan");
}
