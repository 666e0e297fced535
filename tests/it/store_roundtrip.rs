//! Acceptance 1: the store round-trips byte for byte.
//!
//! The fixture store (`tests/fixtures/roundtrip/store`) is in the original's exact format,
//! `JSON.stringify(x, null, 2) + "\n"`: a v1 array file, v3 files with unknown fields at the
//! top level and inside `anchor`/`thread`, non-ASCII text (é, 日本語, emoji, U+2028), `Name
//! <email>` authors and non-integer numbers. Reading must print every comment in full, and
//! each mutation must change exactly the intended fields of exactly the intended file,
//! matching the bytes the original CLI writes (`tests/fixtures/roundtrip/expected/<case>/`,
//! produced by `tests/fixtures/generate.mjs` with JavaScript's own serialiser).

use crate::support::common;

use common::{AUTHOR, fixture, overlay, read, run, tree};
use pretty_assertions::assert_eq;
use std::path::PathBuf;

/// A temp dir holding a copy of the fixture store at `<tmp>/store`.
fn setup() -> (tempfile::TempDir, PathBuf) {
    common::fixture_store("roundtrip/store")
}

fn nb(tmp: &tempfile::TempDir, args: &[&str]) -> common::Out {
    let mut full = vec!["--store", "store"];
    full.extend_from_slice(args);
    run(tmp.path(), &full)
}

/// The ids of a JSON array of comments printed on stdout.
fn ids(stdout: &str) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(stdout).expect("stdout is JSON");
    v.as_array()
        .expect("an array")
        .iter()
        .map(|c| c["id"].as_str().expect("id").to_string())
        .collect()
}

#[test]
fn ls_json_prints_every_comment_in_full() {
    let (tmp, store) = setup();
    let before = tree(&store);
    let out = nb(&tmp, &["comments", "ls", "--json"]);
    assert_eq!(out.ok(), read(&fixture("roundtrip/ls.json")));
    assert_eq!(tree(&store), before, "ls must not write");
}

#[test]
fn ls_filters() {
    let (tmp, _store) = setup();
    // --open: open and not on hold (c_mx2sspage0001 is held; the others are resolved).
    let out = nb(&tmp, &["comments", "ls", "--open", "--json"]);
    assert_eq!(ids(out.ok()), ["c_mx2ssedfey4i", "c_legacy0001"]);
    let out = nb(&tmp, &["comments", "ls", "--page", "src/legacy", "--json"]);
    assert_eq!(ids(out.ok()), ["c_legacy0001", "c_legacy0002"]);
    // --page is an exact match, not a prefix.
    let out = nb(&tmp, &["comments", "ls", "--page", "src/guide", "--json"]);
    assert_eq!(out.ok(), "[]\n");
    let out = nb(&tmp, &["comments", "ls", "--page", "src/guide"]);
    assert_eq!(out.ok(), "notabene: no comments.\n");
    let out = nb(&tmp, &["comments", "ls", "--status", "resolved", "--json"]);
    assert_eq!(ids(out.ok()), ["c_mx2ssblock001", "c_legacy0002"]);
}

#[test]
fn ls_human_format() {
    let (tmp, _store) = setup();
    let out = nb(&tmp, &["comments", "ls"]);
    let expected = "\
[c_mx2ssblock001] resolved block page=src/guide/intro
  §Wiring [mermaid] flowchart: sensor → bus
  • Camille: Which bus is this?
[c_mx2ssedfey4i] open selection page=src/guide/intro
  §Démarrage rapide: «café au lait — 日本語 🎉»
  • Zoë Martin <zoe@example.com>: Ligne 1
    Ligne 2 — 日本語 🎉\u{2028}fin
[c_mx2sspage0001] open ⏸ page page=src/guide/intro
  • Alex Martin <alex@example.com>: The page never says which platforms are supported.
  ↳ Alex Martin <alex@example.com>: Still drafting a list — hold on.
[c_legacy0001] open selection page=src/legacy
  §: «Calibration multiplies the raw reading first, then adds the offset; the order matters because the of»
  • Zoë: Give the formula — « raw × k + b » ?
[c_legacy0002] resolved page page=src/legacy
  • Alex Martin <alex@example.com>: Split this page in two.
";
    assert_eq!(out.ok(), expected);
    let out = nb(&tmp, &["comments", "ls", "--open", "--page", "src/legacy"]);
    assert_eq!(
        out.ok(),
        "\
[c_legacy0001] open selection page=src/legacy
  §: «Calibration multiplies the raw reading first, then adds the offset; the order matters because the of»
  • Zoë: Give the formula — « raw × k + b » ?
"
    );
}

/// Runs one mutation on a fresh copy of the fixture store and checks its output and that the
/// store afterwards is the original with exactly the files of `expected/<case>/` replaced.
#[track_caller]
fn case(name: &str, args: &[&str], stdout: &str, stderr: &str) {
    let (tmp, store) = setup();
    let before = tree(&store);
    let out = nb(&tmp, args);
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (0, stdout, stderr),
        "case {name}"
    );
    let expected = overlay(
        before.clone(),
        &fixture(&format!("roundtrip/expected/{name}")),
    );
    assert_ne!(
        expected, before,
        "case {name}: the expected files must differ from the fixture"
    );
    assert_eq!(tree(&store), expected, "case {name}");
}

#[test]
fn done_on_v3_file() {
    case(
        "done_v3",
        &[
            "comments",
            "done",
            "c_mx2ssedfey4i",
            "--note",
            "Réécrit : « café » ✓",
            "--journal",
            "j-2026-07-20-rt0001",
        ],
        "notabene: 1 comment(s) → resolved (review: auto).\n",
        "",
    );
}

#[test]
fn done_on_legacy_member_updates_it_in_its_array() {
    case(
        "done_legacy",
        &[
            "comments",
            "done",
            "c_legacy0001",
            "--status",
            "addressed",
            "--note",
            "Formula added.",
            "--journal",
            "j-2026-07-20-rt0001",
        ],
        "notabene: 1 comment(s) → addressed (review: auto).\n",
        "",
    );
}

#[test]
fn done_on_both_layouts_without_journal() {
    case(
        "done_both",
        &["comments", "done", "c_mx2ssedfey4i", "c_legacy0001"],
        "notabene: 2 comment(s) → resolved (review: auto).\n",
        "notabene: no --journal <entryId> — the protocol links every resolution to a journal entry.\n",
    );
}

#[test]
fn reopen_with_reply_on_v3_file() {
    case(
        "reopen_v3",
        &[
            "comments",
            "reopen",
            "c_mx2ssblock001",
            "--reply",
            "Pas encore — 日本語",
            "--author",
            "Camille Roux <camille@example.com>",
        ],
        "notabene: 1 comment(s) → open (reply by Camille Roux <camille@example.com>).\n",
        "",
    );
}

#[test]
fn reopen_with_reply_on_legacy_member() {
    case(
        "reopen_legacy",
        &[
            "comments",
            "reopen",
            "c_legacy0002",
            "--reply",
            "Still one page.",
        ],
        &format!("notabene: 1 comment(s) → open (reply by {AUTHOR}).\n"),
        "",
    );
}

#[test]
fn reply_on_v3_file() {
    case(
        "reply_v3",
        &[
            "comments",
            "reply",
            "c_mx2sspage0001",
            "--body",
            "Ça marche 🎉\u{2028}merci",
        ],
        &format!("notabene: replied to c_mx2sspage0001 (by {AUTHOR}).\n"),
        "",
    );
}

#[test]
fn reply_json_prints_the_file_as_written() {
    let (tmp, store) = setup();
    let out = nb(
        &tmp,
        &[
            "comments",
            "reply",
            "c_mx2sspage0001",
            "--body",
            "Ça marche 🎉\u{2028}merci",
            "--json",
        ],
    );
    let expected = read(&fixture(
        "roundtrip/expected/reply_v3/src/guide/intro/c_mx2sspage0001.json",
    ));
    assert_eq!(out.ok(), expected);
    assert_eq!(
        read(&store.join("src/guide/intro/c_mx2sspage0001.json")),
        expected
    );
}

#[test]
fn reply_on_legacy_member() {
    case(
        "reply_legacy",
        &[
            "comments",
            "reply",
            "c_legacy0001",
            "--body",
            "Formula: raw × k + b.",
            "--author",
            "Zoë Martin <zoe@example.com>",
        ],
        "notabene: replied to c_legacy0001 (by Zoë Martin <zoe@example.com>).\n",
        "",
    );
}

#[test]
fn hold_on_v3_file() {
    case(
        "hold_v3",
        &["comments", "hold", "c_mx2ssedfey4i"],
        "notabene: 1 comment(s) → on hold.\n",
        "",
    );
}

#[test]
fn hold_on_legacy_member_without_a_hold_field_appends_it() {
    case(
        "hold_legacy",
        &["comments", "hold", "c_legacy0001"],
        "notabene: 1 comment(s) → on hold.\n",
        "",
    );
}

#[test]
fn unhold_on_v3_file() {
    case(
        "unhold_v3",
        &["comments", "unhold", "c_mx2sspage0001"],
        "notabene: 1 comment(s) → off hold.\n",
        "",
    );
}

#[test]
fn done_json_prints_the_updated_comments() {
    let (tmp, store) = setup();
    let out = nb(
        &tmp,
        &[
            "comments",
            "done",
            "c_mx2ssedfey4i",
            "c_legacy0001",
            "--json",
        ],
    );
    assert_eq!(out.code, 0);
    let printed: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    let v3: serde_json::Value = serde_json::from_str(&read(&fixture(
        "roundtrip/expected/done_both/src/guide/intro/c_mx2ssedfey4i.json",
    )))
    .unwrap();
    let legacy: serde_json::Value = serde_json::from_str(&read(&fixture(
        "roundtrip/expected/done_both/src/legacy.json",
    )))
    .unwrap();
    assert_eq!(printed, serde_json::json!([v3, legacy[0]]));
    // Same text as the files: 2-space JSON, each object indented one level in the array.
    let obj = read(&store.join("src/guide/intro/c_mx2ssedfey4i.json"));
    let indented: String = obj.trim_end().lines().map(|l| format!("  {l}\n")).collect();
    assert!(
        out.stdout
            .starts_with(&format!("[\n{}", indented.trim_end())),
        "{}",
        out.stdout
    );
}

#[test]
fn show_json_of_a_legacy_member_is_the_member() {
    let (tmp, _store) = setup();
    let out = nb(&tmp, &["comments", "show", "c_legacy0002", "--json"]);
    let arr: serde_json::Value =
        serde_json::from_str(&read(&fixture("roundtrip/store/src/legacy.json"))).unwrap();
    let member = out.ok();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(member).unwrap(),
        arr[1]
    );
    assert!(
        member.starts_with("{\n  \"id\": \"c_legacy0002\",\n  \"space\": \"book\",\n"),
        "{member}"
    );
}

/// A store with suggested edits, written the way the original's JSON writer writes
/// (`tests/fixtures/suggestion/`, from `generate.mjs`): its readers' view (`ls --json`) is
/// ours byte for byte, `verify` finds nothing, and `done` / `reopen` keep the suggestion
/// byte-exact (the bytes the original CLI's object spreads give).
#[test]
fn suggestions_round_trip_with_the_original() {
    let (tmp, _) = common::fixture_store("suggestion/store");
    assert_eq!(
        nb(&tmp, &["comments", "ls", "--json"]).ok(),
        read(&fixture("suggestion/ls.json"))
    );
    assert_eq!(
        nb(&tmp, &["comments", "verify"]).ok(),
        "notabene verify: 2 comment(s), 1 journal entr(ies) — 0 error(s), 0 warning(s).\n"
    );
    for (name, args) in [
        (
            "done",
            &[
                "comments",
                "done",
                "c_mx2sssugg0001",
                "--note",
                "Applied by hand.",
                "--journal",
                "j-2026-07-21-sg0001",
            ][..],
        ),
        (
            "reopen",
            &[
                "comments",
                "reopen",
                "c_mx2sssugg0002",
                "--reply",
                "Not yet: the collector still says retry.",
            ][..],
        ),
    ] {
        let (tmp, store) = common::fixture_store("suggestion/store");
        let before = tree(&store);
        nb(&tmp, args).ok();
        let expected = overlay(
            before.clone(),
            &fixture(&format!("suggestion/expected/{name}")),
        );
        assert_ne!(expected, before);
        assert_eq!(tree(&store), expected, "case {name}");
    }
}

/// What `comments add --suggest` writes is the contract's canonical JSON (what the original's
/// `JSON.stringify(JSON.parse(file), null, 2) + "\n"` gives back), the suggestion after the
/// anchor, so the original reads and rewrites it unchanged.
#[test]
fn a_suggestion_we_write_is_canonical_for_the_original() {
    let tmp = common::tempdir();
    let store = tmp.path().join("store");
    std::fs::create_dir_all(&store).unwrap();
    let out = nb(
        &tmp,
        &[
            "comments",
            "add",
            "--page",
            "src/guide/intro",
            "--quote",
            "retry policy",
            "--prefix",
            "the client applies a ",
            "--suffix",
            " before giving up",
            "--section",
            "Timeouts",
            "--suggest",
            "backoff policy — « exponentielle »",
            "--author",
            "Zoë Martin <zoe@example.com>",
            "--json",
        ],
    );
    let printed = out.ok().to_string();
    let c: serde_json::Value = serde_json::from_str(&printed).unwrap();
    let file = store.join(format!(
        "src/guide/intro/{}.json",
        c["id"].as_str().unwrap()
    ));
    let bytes = read(&file);
    assert_eq!(bytes, printed);
    assert_eq!(bytes, notabene_store::json::to_js_pretty(&c));
    // The same object as the fixture written by the original's writer, but for id and times.
    let mut theirs: serde_json::Value = serde_json::from_str(&read(&fixture(
        "suggestion/store/src/guide/intro/c_mx2sssugg0001.json",
    )))
    .unwrap();
    for k in ["id", "createdAt", "updatedAt"] {
        theirs[k] = c[k].clone();
    }
    theirs["thread"][0]["ts"] = c["thread"][0]["ts"].clone();
    assert_eq!(bytes, notabene_store::json::to_js_pretty(&theirs));
}
