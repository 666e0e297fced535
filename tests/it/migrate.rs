//! Acceptance 3: `migrate` turns a mixed v1/v3 store into the v3 layout — exactly the
//! expected tree and bytes (`tests/fixtures/migrate/<case>/after`), `meta.json` raised to 3 —
//! is idempotent, keeps members it cannot move (and says so), leaves an array holding a
//! member that is not an object byte for byte as it is, and `--dry-run` writes nothing.

use crate::support::common;

use common::{fixture, run, tree};
use pretty_assertions::assert_eq;
use std::path::PathBuf;

/// A temp dir holding a copy of `tests/fixtures/migrate/<case>/before` at `<tmp>/store`.
fn setup(case: &str) -> (tempfile::TempDir, PathBuf) {
    common::fixture_store(&format!("migrate/{case}/before"))
}

fn migrate(tmp: &tempfile::TempDir, extra: &[&str]) -> common::Out {
    let mut args = vec!["--store", "store", "migrate"];
    args.extend_from_slice(extra);
    run(tmp.path(), &args)
}

#[test]
fn mixed_store_to_v3_layout_then_idempotent() {
    let (tmp, store) = setup("mixed");
    let out = migrate(&tmp, &[]);
    assert_eq!(
        out.ok(),
        "notabene: migrated 2 page file(s) → 4 comment file(s) (store schemaVersion 3).\n"
    );
    let after = tree(&fixture("migrate/mixed/after"));
    assert_eq!(tree(&store), after);
    assert_eq!(
        common::read(&store.join("meta.json")),
        "{\n  \"schemaVersion\": 3\n}\n"
    );

    // A second run changes nothing.
    let out = migrate(&tmp, &[]);
    assert_eq!(
        out.ok(),
        "notabene: migrated 0 page file(s) → 0 comment file(s) (store schemaVersion 3).\n"
    );
    assert_eq!(tree(&store), after);

    // Every comment reads the same after the migration (same objects, v3 files first).
    let ls = run(
        tmp.path(),
        &["--store", "store", "comments", "ls", "--json"],
    );
    let ids: Vec<String> = serde_json::from_str::<serde_json::Value>(ls.ok())
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, ["c_a1", "c_a2", "c_bc1", "c.weird/id", "c_b1"]);
}

#[test]
fn dry_run_writes_nothing() {
    let (tmp, store) = setup("mixed");
    let before = tree(&store);
    let out = migrate(&tmp, &["--dry-run"]);
    assert_eq!(
        out.ok(),
        "notabene: would migrate 2 page file(s) → 4 comment file(s) (store schemaVersion 3).\n"
    );
    assert_eq!(tree(&store), before);
}

#[test]
fn members_without_an_id_stay_in_their_array() {
    let (tmp, store) = setup("no-id");
    let kept = "notabene: kept a member without an id in its array — give it an id and re-run migrate (src/k.json)\n";
    let out = migrate(&tmp, &[]);
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (
            0,
            "notabene: migrated 1 page file(s) → 1 comment file(s) (store schemaVersion 3).\n",
            kept
        )
    );
    let after = tree(&fixture("migrate/no-id/after"));
    assert_eq!(tree(&store), after);
    // Re-running moves nothing and leaves the array file untouched, but still reports it.
    let out = migrate(&tmp, &[]);
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (
            0,
            "notabene: migrated 0 page file(s) → 0 comment file(s) (store schemaVersion 3).\n",
            kept
        )
    );
    assert_eq!(tree(&store), after);
}

#[test]
fn an_array_with_members_that_are_not_objects_is_left_byte_for_byte() {
    let (tmp, store) = setup("no-id");
    // A comment, then a string, a number, null and an array, in a hand's own formatting.
    let comment = &common::read(&fixture("migrate/no-id/after/src/k/c_k1.json"))
        .replace("c_k1", "c_o1")
        .replace("src/k", "src/odd");
    let odd = format!(
        "[{}, \"note\",1.50 , null,[ 1,{{}} ]]\n",
        comment.trim_end()
    );
    common::write(&store.join("src/odd.json"), &odd);
    let kept = "notabene: kept a member without an id in its array — give it an id and re-run migrate (src/k.json)\n\
        notabene: kept the whole array: its member [1] is a string, not a comment object — make it one or remove it, and re-run migrate (src/odd.json)\n\
        notabene: kept the whole array: its member [2] is a number, not a comment object — make it one or remove it, and re-run migrate (src/odd.json)\n\
        notabene: kept the whole array: its member [3] is null, not a comment object — make it one or remove it, and re-run migrate (src/odd.json)\n\
        notabene: kept the whole array: its member [4] is an array, not a comment object — make it one or remove it, and re-run migrate (src/odd.json)\n";
    let mut after = tree(&fixture("migrate/no-id/after"));
    after.insert(
        "src/odd.json".into(),
        common::Node::File(odd.clone().into_bytes()),
    );
    for dry in [true, false] {
        let out = migrate(&tmp, if dry { &["--dry-run"] } else { &[] });
        let did = if dry { "would migrate" } else { "migrated" };
        assert_eq!(
            (out.code, out.stdout.as_str(), out.stderr.as_str()),
            (
                0,
                format!(
                    "notabene: {did} 1 page file(s) → 1 comment file(s) (store schemaVersion 3).\n"
                )
                .as_str(),
                kept
            )
        );
    }
    assert_eq!(tree(&store), after);
    assert_eq!(common::read(&store.join("src/odd.json")), odd);
}

#[test]
fn member_conflicting_with_an_existing_file_is_kept() {
    let (tmp, store) = setup("mixed");
    // A hand-made v3 file for c_a2 that differs from the array member.
    let mut other: serde_json::Value = serde_json::from_str(&common::read(&fixture(
        "migrate/mixed/after/src/a/c_a2.json",
    )))
    .unwrap();
    other["status"] = "resolved".into();
    let other_text = format!("{}\n", serde_json::to_string_pretty(&other).unwrap());
    common::write(&store.join("src/a/c_a2.json"), &other_text);
    // And an already-migrated, identical copy of c_bc1 (an interrupted earlier run).
    let bc1 = common::read(&fixture("migrate/mixed/after/src/b/c/c_bc1.json"));
    common::write(&store.join("src/b/c/c_bc1.json"), &bc1);

    let out = migrate(&tmp, &[]);
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (
            0,
            "notabene: migrated 2 page file(s) → 2 comment file(s) (store schemaVersion 3).\n",
            "notabene: kept comment \"c_a2\" in its array: it differs from the existing src/a/c_a2.json — reconcile the two by hand and re-run migrate (src/a.json)\n"
        )
    );
    let mut expected = tree(&fixture("migrate/mixed/after"));
    expected.insert(
        "src/a/c_a2.json".into(),
        common::Node::File(other_text.into_bytes()),
    );
    // The conflicting member stays, alone, in its array.
    let a: serde_json::Value =
        serde_json::from_str(&common::read(&fixture("migrate/mixed/before/src/a.json"))).unwrap();
    let rest = format!(
        "[\n{}]\n",
        indent(&common::read(&fixture(
            "migrate/mixed/after/src/a/c_a2.json"
        )))
    );
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&rest).unwrap(),
        serde_json::json!([a[1]])
    );
    expected.insert("src/a.json".into(), common::Node::File(rest.into_bytes()));
    assert_eq!(tree(&store), expected);
}

/// Indents every line of a JSON text by two spaces (an object as a member of an array).
fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

#[test]
fn no_store_is_an_error() {
    let tmp = common::tempdir();
    let out = migrate(&tmp, &[]);
    out.fails_with(&format!(
        "notabene: no store at {}. Run `notabene init` first.",
        tmp.path().join("store").display()
    ));
    assert!(!tmp.path().join("store").exists());
}

#[test]
fn newer_store_is_refused() {
    let (tmp, store) = setup("mixed");
    common::write(&store.join("meta.json"), "{\n  \"schemaVersion\": 4\n}\n");
    let before = tree(&store);
    let out = migrate(&tmp, &[]);
    out.fails_with(&format!(
        "notabene: store schemaVersion 4 is newer than this mdbook-notabene supports (3) — upgrade mdbook-notabene; refusing to read or write an unknown store shape ({})",
        store.join("meta.json").display()
    ));
    assert_eq!(tree(&store), before);
}
