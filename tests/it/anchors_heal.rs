//! `notabene anchors` and `anchors heal` on a copy of book-example: the report names where
//! each anchor lands; heal re-captures only confident fuzzy anchors, atomically, and the
//! healed anchor is then exact.

use crate::support::common;

use pretty_assertions::assert_eq;
use serde_json::Value;
use std::path::Path;

const DRIFTED: &str = "c_mwm6a3iye2uy";

fn book_copy() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = common::tempdir();
    let book = common::copy_into_repo(&common::book_example(), tmp.path(), "book-example");
    (tmp, book)
}

fn status_of(book: &Path, id: &str) -> (String, Option<f64>) {
    let out = common::run(book, &["anchors", "--json"]);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    let c = doc["comments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap();
    (
        c["anchoring"]["status"].as_str().unwrap().to_string(),
        c["anchoring"]["confidence"].as_f64(),
    )
}

#[test]
fn anchors_report_names_the_markdown_place() {
    let (_tmp, book) = book_copy();
    let out = common::run(
        &book,
        &["anchors", "--page", "book-example/src/guide/configuration"],
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout
            .lines()
            .map(|l| l.split(" «").next().unwrap())
            .collect::<Vec<_>>(),
        [
            "[c_mwm6a3iye2uy] fuzzy 0.97 book-example/src/guide/configuration book-example/src/guide/configuration.md:33:181",
            "[c_mworge1zx4rb] exact 1.00 book-example/src/guide/configuration book-example/src/guide/configuration.md:41:116",
            "[c_mworonpyb6ns] exact 1.00 book-example/src/guide/configuration book-example/src/guide/configuration.md:37:123",
        ]
    );
}

#[test]
fn heal_recaptures_confident_fuzzy_anchors_only() {
    let (_tmp, book) = book_copy();
    let store = book.join(".notabene");
    let before = common::tree(&store);
    let dry = common::run(&book, &["anchors", "heal", "--dry-run"]);
    assert_eq!(
        dry.ok(),
        "would heal c_mwm6a3iye2uy: «Intervals shorter than ten seconds are accepted»\nnotabene: 1 anchor(s) would be healed.\n"
    );
    assert!(common::tree(&store) == before, "--dry-run wrote");
    // Above its confidence nothing is healed.
    let none = common::run(&book, &["anchors", "heal", "--min-confidence", "0.99"]);
    assert_eq!(none.ok(), "notabene: 0 anchor(s) healed.\n");
    assert!(common::tree(&store) == before);

    assert_eq!(status_of(&book, DRIFTED).0, "fuzzy");
    let healed = common::run(&book, &["anchors", "heal"]);
    assert_eq!(
        healed.ok(),
        "healed c_mwm6a3iye2uy: «Intervals shorter than ten seconds are accepted»\nnotabene: 1 anchor(s) healed.\n"
    );
    let file = store
        .join("book-example/src/guide/configuration")
        .join(format!("{DRIFTED}.json"));
    let c: Value = serde_json::from_str(&common::read(&file)).unwrap();
    assert_eq!(
        c["anchor"]["quote"],
        "Intervals shorter than ten seconds are accepted"
    );
    assert_eq!(c["updatedAt"], common::NOW);
    assert_eq!(status_of(&book, DRIFTED), ("exact".to_string(), Some(1.0)));
    // Only that comment's file changed.
    let after = common::tree(&store);
    let changed: Vec<&String> = after
        .keys()
        .filter(|k| before.get(*k) != after.get(*k))
        .collect();
    assert_eq!(
        changed,
        [&format!(
            "book-example/src/guide/configuration/{DRIFTED}.json"
        )]
    );
}

#[test]
fn source_positions_point_into_the_file_on_disk_even_with_includes() {
    let (_tmp, book) = book_copy();
    let chapter = book.join("src/guide/installing.md");
    let text = common::read(&chapter);
    let (head, rest) = text.split_once("\n\n").unwrap();
    common::write(
        &book.join("src/guide/note.txt"),
        "An included note, long enough to shift every byte after it.\n",
    );
    common::write(
        &chapter,
        &format!("{head}\n\n{{{{#include note.txt}}}}\n\n{rest}"),
    );
    let out = common::run(
        &book,
        &[
            "anchors",
            "--json",
            "--page",
            "book-example/src/guide/installing",
        ],
    );
    let doc: Value = serde_json::from_str(out.ok()).unwrap();
    let c = doc["comments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "c_mwktnas69d1e")
        .unwrap();
    let src = &c["anchoring"]["source"];
    assert_eq!(src["path"], "book-example/src/guide/installing.md");
    let disk = common::read(&chapter);
    let (start, end) = (
        src["start"].as_u64().unwrap() as usize,
        src["end"].as_u64().unwrap() as usize,
    );
    assert_eq!(&disk[start..end], "downloads the matching release");
    let line = src["line"].as_u64().unwrap() as usize;
    assert!(
        disk.lines()
            .nth(line - 1)
            .unwrap()
            .contains("downloads the matching release")
    );
}
