//! The edits authors and agents make around a commented quote, on real chapters: each test
//! edits the text the way an answer to the comment would, then checks what `notabene anchors
//! --json` reports (status, the flags saying what changed, the matched text, the page) and,
//! for book-example, what the built page marks.

use crate::support::common;
use crate::support::common::{book_example, run_plugin, stage};
use crate::support::preprocess::{html, mark_groups};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::path::Path;

/// The comment on «3 means the archive is unwritable» (reference/cli).
const UNWRITABLE: &str = "c_mwq6asw3w1ge";

/// Replaces `from` by `to` in `path` (which must contain it once at least).
fn edit(path: &Path, from: &str, to: &str) {
    let text = common::read(path);
    assert!(text.contains(from), "{} lacks {from:?}", path.display());
    common::write(path, &text.replacen(from, to, 1));
}

/// The `anchoring` of comment `id` in `notabene anchors --json`, run in `book`.
fn anchoring(book: &Path, id: &str) -> Value {
    let out = common::run(book, &["anchors", "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    doc["comments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("{id} in {}", out.stdout))["anchoring"]
        .clone()
}

/// Acceptance: the clause an agent adds right after the quote leaves the comment exact, with
/// `contextChanged`, and the page marks exactly the quote.
#[test]
fn a_clause_added_after_the_quote_keeps_the_comment_exact() {
    let tmp = common::tempdir();
    let book = stage(&book_example(), tmp.path(), "book-example");
    edit(
        &book.join("src/reference/cli.md"),
        "`3` means the archive is unwritable.",
        "`3` means the archive is unwritable (a full disk or a permissions problem).",
    );
    let a = anchoring(&book, UNWRITABLE);
    assert_eq!(
        (&a["status"], &a["text"], &a["flags"]),
        (
            &json!("exact"),
            &json!("3 means the archive is unwritable"),
            &json!({
                "quoteChanged": false,
                "contextChanged": true,
                "sectionChanged": false,
                "ambiguous": false
            })
        )
    );
    assert_eq!(a["suggestion"], Value::Null);
    // What the reader shows as changed: the stored context and quote, and the page's words
    // around the place now (the reader leaves out what `now` has beyond `was` at each end).
    assert_eq!(
        a["changed"],
        json!({ "was": CHANGED_WAS, "now": CHANGED_NOW })
    );
    let listing = common::run(
        &book,
        &["anchors", "--page", "book-example/src/reference/cli"],
    );
    assert!(
        listing.stdout.lines().any(|l| l.starts_with(&format!(
            "[{UNWRITABLE}] exact 1.00 book-example/src/reference/cli "
        )) && l.ends_with("«3 means the archive is unwritable»")),
        "{}",
        listing.stdout
    );
    let out = run_plugin(
        tmp.path(),
        &["build", "book-example", "--dest-dir", "out"],
        None,
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let groups = mark_groups(&html(&tmp.path().join("out"), "reference/cli.html"));
    let g = &groups[UNWRITABLE];
    assert_eq!(
        (
            g.span.as_str(),
            g.gaps.as_str(),
            g.statuses.iter().map(String::as_str).collect::<Vec<_>>()
        ),
        ("3 means the archive is unwritable", "", vec!["open"])
    );
}

/// `anchoring.changed` of [`UNWRITABLE`] after the clause is added.
const CHANGED_WAS: &str = "a sensor could not be opened, and 3 means the archive is unwritable. \
     Any other value is a bug: please";
const CHANGED_NOW: &str = "exit means success, 1 means a configuration error, 2 means a sensor \
     could not be opened, and 3 means the archive is unwritable (a full disk or a permissions \
     problem). Any other value is a bug: please report it together with";

/// When the comments were written: before any commit of the test's repository is not
/// possible, so git's evidence is read from its first commit.
const TS: &str = "2026-07-28T09:00:00.000Z";

/// The nomicon in a git repository at `<tmp>`, one comment (`c_edits0001`) on `quote` of
/// `src/<chapter>.md`, committed.
struct Nomicon {
    _tmp: tempfile::TempDir,
    repo: std::path::PathBuf,
    book: std::path::PathBuf,
}

const ID: &str = "c_edits00001";

impl Nomicon {
    /// `before` runs on the book before the first commit (text that stood there all along).
    fn new(chapter: &str, quote: &str, before: impl FnOnce(&Path)) -> Nomicon {
        use notabene_anchoring::text::{TextOptions, page_text};
        use notabene_store::{Fresh, Location, Record, Scope, Store, new_comment};
        let tmp = common::tempdir();
        let repo = tmp.path().to_path_buf();
        let book = stage(&crate::support::common::corpus("nomicon"), &repo, "nomicon");
        before(&book);
        let md = common::read(&book.join(format!("src/{chapter}.md")));
        let pt = page_text(&md, &TextOptions::default());
        let a = pt.text.find(quote).unwrap_or_else(|| panic!("{quote:?}"));
        assert_eq!(pt.text[a + 1..].find(quote), None, "{quote:?} is unique");
        let anchor = crate::support::preprocess::capture(&pt, a, a + quote.len());
        let page = format!("nomicon/src/{chapter}");
        let store = Store::new(book.join(".notabene"));
        std::fs::create_dir_all(book.join(".notabene")).unwrap();
        let lock = store.lock().unwrap();
        store.ensure_meta().unwrap();
        let c = new_comment(&Fresh {
            id: ID,
            space: "book",
            page: &page,
            scope: Scope::Selection,
            anchor,
            author: "Ann <a@example.com>",
            body: "Is this right?",
            ts: TS,
        });
        store
            .write_record(&Record {
                file: format!("{page}/{ID}.json"),
                location: Location::File,
                comment: c,
            })
            .unwrap();
        drop(lock);
        let n = Nomicon {
            _tmp: tmp,
            repo,
            book,
        };
        n.git(&["add", "-A"]);
        n.git(&["commit", "-qm", "the book and its review"]);
        n
    }

    fn git(&self, args: &[&str]) {
        common::git(&self.repo, args);
    }

    fn edit(&self, chapter: &str, from: &str, to: &str) {
        edit(&self.book.join(format!("src/{chapter}.md")), from, to);
    }

    /// (page it is shown on, status, matched text, flags) from `anchors --json`.
    fn landed(&self) -> (String, String, Option<String>, Value) {
        let a = anchoring(&self.book, ID);
        let page = match (&a["followed"], &a["url"]) {
            (Value::Object(f), _) => f["to"].as_str().unwrap().to_string(),
            (_, Value::String(_)) => "nomicon/src/races".to_string(),
            _ => String::new(),
        };
        (
            page,
            a["status"].as_str().unwrap().to_string(),
            a["text"].as_str().map(str::to_string),
            a["flags"].clone(),
        )
    }
}

/// Flags: (quoteChanged, contextChanged, sectionChanged), never ambiguous.
fn flags(q: bool, c: bool, s: bool) -> Value {
    json!({ "quoteChanged": q, "contextChanged": c, "sectionChanged": s, "ambiguous": false })
}

fn expect(n: &Nomicon, status: &str, text: &str, f: Value) {
    assert_eq!(
        n.landed(),
        (
            "nomicon/src/races".to_string(),
            status.to_string(),
            Some(text.to_string()),
            f
        )
    );
}

const ALIAS: &str = "impossible to alias a mutable reference";

#[test]
fn a_clause_inserted_right_after_the_quote() {
    let n = Nomicon::new("races", ALIAS, |_| {});
    n.edit(
        "races",
        "alias a mutable reference,",
        "alias a mutable reference (the borrow checker rejects the second one),",
    );
    expect(&n, "exact", ALIAS, flags(false, true, false));
}

#[test]
fn a_lead_in_inserted_right_before_the_quote() {
    let n = Nomicon::new("races", ALIAS, |_| {});
    n.edit(
        "races",
        "alone:\nit's impossible",
        "alone:\nas the borrow checker sees to it, it's impossible",
    );
    expect(&n, "exact", ALIAS, flags(false, true, false));
}

#[test]
fn a_sentence_appended_after_the_quotes_sentence() {
    let q = "is therefore impossible to perform in";
    let n = Nomicon::new("races", q, |_| {});
    n.edit(
        "races",
        "perform in\nSafe Rust.",
        "perform in\nSafe Rust. No unsafe block is needed to rely on this.",
    );
    expect(&n, "exact", q, flags(false, true, false));
}

#[test]
fn the_sentence_around_the_quote_rewritten_the_quote_kept() {
    let q = "the Send and Sync traits";
    let n = Nomicon::new("races", q, |_| {});
    n.edit(
        "races",
        "Interior mutability makes this more complicated, which is largely why\nwe have the Send and Sync traits (see the next section for more on this).",
        "Things get harder with interior mutability: to cope, Rust gives us the Send and Sync traits, covered next.",
    );
    expect(&n, "fuzzy", q, flags(false, true, false));
}

#[test]
fn the_paragraph_reflowed() {
    let n = Nomicon::new("races", ALIAS, |_| {});
    n.edit(
        "races",
        "A data race has Undefined Behavior, and is therefore impossible to perform in\nSafe Rust. Data races are prevented *mostly* through Rust's ownership system alone:\nit's impossible to alias a mutable reference, so it's impossible to perform a\ndata race.",
        "A data race has Undefined Behavior, and is therefore\nimpossible to perform in Safe Rust. Data races are prevented\n*mostly* through Rust's ownership system alone: it's impossible\nto alias a mutable reference, so it's impossible to perform a data race.",
    );
    // The mark covers the quote as the page now has it, line break included.
    expect(
        &n,
        "exact",
        "impossible\nto alias a mutable reference",
        flags(false, false, false),
    );
}

#[test]
fn a_list_item_inserted_before_the_quotes_item() {
    let q = "one or more of them is a write";
    let n = Nomicon::new("races", q, |_| {});
    n.edit(
        "races",
        "* one or more of them is a write",
        "* they share one address space\n* one or more of them is a write",
    );
    expect(&n, "exact", q, flags(false, true, false));
}

#[test]
fn a_word_of_the_quote_changed() {
    let n = Nomicon::new(
        "races",
        "Safe Rust guarantees an absence of data races",
        |_| {},
    );
    n.edit("races", "guarantees an absence", "guarantees the absence");
    expect(
        &n,
        "fuzzy",
        "Safe Rust guarantees the absence of data races",
        flags(true, false, false),
    );
}

const INTERIOR: &str = "Interior mutability makes this more complicated";
const SENTENCE: &str = "Interior mutability makes this more complicated, which is largely why\nwe have the Send and Sync traits (see the next section for more on this).";

/// Deletes [`SENTENCE`] from races.md.
fn delete_sentence(n: &Nomicon) {
    n.edit("races", &format!(" {SENTENCE}"), "");
}

/// Appends [`SENTENCE`] as a paragraph of its own to leaking.md in `book`.
fn add_to_leaking(book: &Path) {
    let p = book.join("src/leaking.md");
    let text = common::read(&p);
    common::write(&p, &format!("{text}\n{SENTENCE}\n"));
}

#[test]
fn a_deleted_sentence_that_stood_in_another_chapter_all_along_is_not_followed() {
    let n = Nomicon::new("races", INTERIOR, add_to_leaking);
    delete_sentence(&n);
    let a = anchoring(&n.book, ID);
    assert_eq!(
        (&a["status"], &a["text"], &a["followed"], &a["url"]),
        (
            &json!("orphan"),
            &Value::Null,
            &Value::Null,
            &json!(format!("races.html?nb={ID}"))
        )
    );
    assert_eq!(
        a["sameText"],
        json!({
            "page": "nomicon/src/leaking",
            "chapter": "Leaking",
            "url": "leaking.html",
            "text": INTERIOR
        })
    );
    let listing = common::run(&n.book, &["anchors"]);
    let lines: Vec<&str> = listing.stdout.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with(&format!("[{ID}] orphan ")))
        .unwrap_or_else(|| panic!("{}", listing.stdout));
    assert_eq!(
        lines.get(at + 1),
        Some(&"    the same text is on nomicon/src/leaking"),
        "{}",
        listing.stdout
    );
    // heal leaves it where it is.
    let before = common::tree(&n.book.join(".notabene"));
    let heal = common::run(&n.book, &["anchors", "heal"]);
    assert_eq!(heal.code, 0, "{}", heal.stderr);
    assert!(!heal.stdout.contains("moved "), "{}", heal.stdout);
    assert_eq!(common::tree(&n.book.join(".notabene")), before);
}

#[test]
fn a_sentence_moved_to_another_chapter_in_one_commit_is_followed() {
    let n = Nomicon::new("races", INTERIOR, |_| {});
    delete_sentence(&n);
    add_to_leaking(&n.book);
    n.git(&["commit", "-qam", "move the sentence on interior mutability"]);
    let a = anchoring(&n.book, ID);
    assert_eq!(
        (&a["status"], &a["text"], &a["followed"], &a["sameText"]),
        (
            &json!("exact"),
            &json!(INTERIOR),
            &json!({ "from": "nomicon/src/races", "to": "nomicon/src/leaking", "by": "quote" }),
            &Value::Null
        )
    );
    assert_eq!(a["url"], json!(format!("leaking.html?nb={ID}")));
}
