//! Tests of the three-way merge of store files: comments, threads, legacy arrays, the journal
//! and `meta.json`, and the conflict file.

use super::*;
use pretty_assertions::assert_eq;
use serde_json::json;

fn pretty(v: Value) -> Vec<u8> {
    json::to_js_pretty(&v).into_bytes()
}

#[test]
fn journal_union_keeps_our_order_then_theirs() {
    let base = pretty(json!([{"id": "a"}]));
    let ours = pretty(json!([{"id": "a"}, {"id": "b"}]));
    let theirs = pretty(json!([{"id": "a"}, {"id": "c"}, {"id": "b"}]));
    let got = merge("x/.notabene/journal.json", &base, &ours, &theirs).unwrap();
    assert_eq!(got, pretty(json!([{"id": "a"}, {"id": "b"}, {"id": "c"}])));
}

#[test]
fn journal_same_id_different_content_conflicts() {
    let ours = pretty(json!([{"id": "a", "title": "x"}]));
    let theirs = pretty(json!([{"id": "a", "title": "y"}]));
    let err = merge("journal.json", b"", &ours, &theirs).unwrap_err();
    assert_eq!(
        err.0,
        "journal entry a has different content on the two sides"
    );
}

#[test]
fn journal_edit_on_one_side_and_removal_follow_the_ancestor() {
    let base = pretty(json!([{"id": "a", "t": 1}, {"id": "b"}]));
    let ours = pretty(json!([{"id": "a", "t": 2}, {"id": "b"}]));
    let theirs = pretty(json!([{"id": "a", "t": 1}]));
    let got = merge("journal.json", &base, &ours, &theirs).unwrap();
    assert_eq!(got, pretty(json!([{"id": "a", "t": 2}])));
    let theirs = pretty(json!([{"id": "b"}]));
    let err = merge("journal.json", &base, &ours, &theirs).unwrap_err();
    assert_eq!(
        err.0,
        "journal entry a was removed on one side and changed on the other"
    );
}

fn comment(thread: Value, status: &str, updated: &str, extra: Value) -> Value {
    let mut c = json!({
        "id": "c_1", "page": "p", "thread": thread, "status": status, "hold": false,
        "resolution": null, "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": updated,
    });
    for (k, v) in extra.as_object().unwrap() {
        c[k] = v.clone();
    }
    c
}

fn msg(ts: &str, body: &str) -> Value {
    json!({"author": "A", "body": body, "ts": ts})
}

#[test]
fn comment_threads_union_and_one_sided_close_survives_a_later_reply() {
    let m0 = msg("2026-01-01T00:00:00.000Z", "first");
    let base = comment(json!([m0]), "open", "2026-01-01T00:00:00.000Z", json!({}));
    // Ours: an agent closes it at 10:00.
    let mut ours = comment(
        json!([m0]),
        "addressed",
        "2026-01-02T10:00:00.000Z",
        json!({}),
    );
    ours["resolution"] = json!({"note": "done", "journalEntryId": "j"});
    // Theirs: a reviewer replies later, at 11:00, and adds an unknown field.
    let m1 = msg("2026-01-02T11:00:00.000Z", "reply");
    let theirs = comment(
        json!([m0, m1]),
        "open",
        "2026-01-02T11:00:00.000Z",
        json!({"x-extra": 1}),
    );
    let got = merge(
        "p/c_1.json",
        &pretty(base),
        &pretty(ours.clone()),
        &pretty(theirs),
    )
    .unwrap();
    let mut want = ours;
    want["thread"] = json!([m0, m1]);
    want["updatedAt"] = json!("2026-01-02T11:00:00.000Z");
    want["x-extra"] = json!(1);
    assert_eq!(String::from_utf8(got).unwrap(), json::to_js_pretty(&want));
}

#[test]
fn an_edit_of_the_first_message_meets_a_reply() {
    let m0 = msg("2026-01-01T00:00:00.000Z", "first");
    let edited = msg("2026-01-01T00:00:00.000Z", "first, edited");
    let m1 = msg("2026-01-02T00:00:00.000Z", "reply");
    let base = comment(json!([m0]), "open", "2026-01-01T00:00:00.000Z", json!({}));
    let ours = comment(
        json!([edited]),
        "open",
        "2026-01-01T01:00:00.000Z",
        json!({}),
    );
    let theirs = comment(
        json!([m0, m1]),
        "open",
        "2026-01-02T00:00:00.000Z",
        json!({}),
    );
    let got = merge("p/c_1.json", &pretty(base), &pretty(ours), &pretty(theirs)).unwrap();
    let got: Value = serde_json::from_slice(&got).unwrap();
    assert_eq!(got["thread"], json!([edited, m1]));
    // Both edited, differently: both versions stay.
    let base = comment(json!([m0]), "open", "2026-01-01T00:00:00.000Z", json!({}));
    let other = msg("2026-01-01T00:00:00.000Z", "first, edited otherwise");
    let theirs = comment(
        json!([other]),
        "open",
        "2026-01-01T02:00:00.000Z",
        json!({}),
    );
    let ours = comment(
        json!([edited]),
        "open",
        "2026-01-01T01:00:00.000Z",
        json!({}),
    );
    let got = merge("p/c_1.json", &pretty(base), &pretty(ours), &pretty(theirs)).unwrap();
    let got: Value = serde_json::from_slice(&got).unwrap();
    assert_eq!(got["thread"], json!([edited, other]));
}

#[test]
fn a_page_named_journal_merges_as_comments_and_odd_timestamps_sort() {
    let a = comment(
        json!([msg("zzz", "x"), msg("2026-01-01T00:00:00.000Z", "y")]),
        "open",
        "t",
        json!({}),
    );
    let got = merge(
        "s/p/journal.json",
        b"",
        &pretty(json!([a.clone()])),
        &pretty(json!([a])),
    )
    .unwrap();
    let got: Value = serde_json::from_slice(&got).unwrap();
    assert_eq!(got[0]["thread"][0]["body"], "y");
}

#[test]
fn a_close_on_one_side_and_a_hold_on_the_other_both_survive() {
    let m0 = msg("2026-01-01T00:00:00.000Z", "first");
    let base = comment(json!([m0]), "open", "2026-01-01T00:00:00.000Z", json!({}));
    let mut ours = comment(
        json!([m0]),
        "addressed",
        "2026-01-02T10:00:00.000Z",
        json!({}),
    );
    ours["resolution"] = json!({"note": "done", "journalEntryId": "j"});
    // Theirs, later: a reply and a hold, the close untouched.
    let m1 = msg("2026-01-02T11:00:00.000Z", "wait");
    let theirs = comment(
        json!([m0, m1]),
        "open",
        "2026-01-02T11:00:00.000Z",
        json!({"hold": true}),
    );
    let got = merge(
        "p/c_1.json",
        &pretty(base),
        &pretty(ours.clone()),
        &pretty(theirs),
    )
    .unwrap();
    let mut want = ours;
    want["thread"] = json!([m0, m1]);
    want["hold"] = json!(true);
    want["updatedAt"] = json!("2026-01-02T11:00:00.000Z");
    assert_eq!(String::from_utf8(got).unwrap(), json::to_js_pretty(&want));
}

#[test]
fn a_close_changed_on_both_sides_differently_conflicts_the_same_close_does_not() {
    let m0 = msg("2026-01-01T00:00:00.000Z", "first");
    let base = pretty(comment(
        json!([m0]),
        "open",
        "2026-01-01T00:00:00.000Z",
        json!({}),
    ));
    let closed = |status: &str, at: &str, note: &str| {
        let mut c = comment(json!([m0]), status, at, json!({}));
        c["resolution"] = json!({"note": note, "journalEntryId": "j"});
        c
    };
    let ours = closed("resolved", "2026-01-02T10:00:00.000Z", "ours");
    let theirs = closed("addressed", "2026-01-02T09:00:00.000Z", "ours");
    let err = merge("p/c_1.json", &base, &pretty(ours.clone()), &pretty(theirs)).unwrap_err();
    assert_eq!(
        err.0,
        "comment c_1: status and resolution changed differently on the two sides"
    );
    // The same status, another note: the group differs, still a conflict.
    let theirs = closed("resolved", "2026-01-02T09:00:00.000Z", "theirs");
    assert!(merge("p/c_1.json", &base, &pretty(ours.clone()), &pretty(theirs)).is_err());
    // The same close on both sides: no conflict, the later update.
    let theirs = closed("resolved", "2026-01-02T09:00:00.000Z", "ours");
    let got = merge("p/c_1.json", &base, &pretty(ours.clone()), &pretty(theirs)).unwrap();
    assert_eq!(got, pretty(ours));
    // A hold added on both sides with different values (no common ancestor value).
    let mut ours = comment(json!([m0]), "open", "2026-01-02T10:00:00.000Z", json!({}));
    let mut theirs = ours.clone();
    let mut b: Value = serde_json::from_slice(&base).unwrap();
    b.as_object_mut().unwrap().remove("hold");
    ours["hold"] = json!(false);
    theirs["hold"] = json!(true);
    let err = merge("p/c_1.json", &pretty(b), &pretty(ours), &pretty(theirs)).unwrap_err();
    assert_eq!(
        err.0,
        "comment c_1: hold changed differently on the two sides"
    );
}

#[test]
fn legacy_arrays_union_members_and_merge_each_as_a_comment() {
    let m0 = msg("2026-01-01T00:00:00.000Z", "first");
    let a = comment(json!([m0]), "open", "2026-01-01T00:00:00.000Z", json!({}));
    let mut b = a.clone();
    b["id"] = json!("c_2");
    let base = pretty(json!([a, b]));
    // Ours replies to c_1; theirs replies to c_1 too, and adds c_3.
    let mut a_ours = a.clone();
    a_ours["thread"] = json!([m0, msg("2026-01-02T00:00:00.000Z", "ours")]);
    a_ours["updatedAt"] = json!("2026-01-02T00:00:00.000Z");
    let mut a_theirs = a.clone();
    a_theirs["thread"] = json!([m0, msg("2026-01-03T00:00:00.000Z", "theirs")]);
    a_theirs["updatedAt"] = json!("2026-01-03T00:00:00.000Z");
    let mut c = a.clone();
    c["id"] = json!("c_3");
    let ours = pretty(json!([a_ours, b]));
    let theirs = pretty(json!([a_theirs, b, c]));
    let got = merge("p.json", &base, &ours, &theirs).unwrap();
    let mut a_merged = a_theirs.clone();
    a_merged["thread"] = json!([
        m0,
        msg("2026-01-02T00:00:00.000Z", "ours"),
        msg("2026-01-03T00:00:00.000Z", "theirs")
    ]);
    assert_eq!(
        String::from_utf8(got).unwrap(),
        json::to_js_pretty(&json!([a_merged, b, c]))
    );
}

#[test]
fn unparseable_sides_and_mixed_shapes_conflict() {
    let ok = pretty(json!({"id": "c_1"}));
    assert!(merge("p/c_1.json", b"", b"{", &ok).is_err());
    assert!(merge("p/c_1.json", b"", &ok, &pretty(json!([]))).is_err());
    assert!(merge("meta.json", b"", &ok, b"nope").is_err());
}

#[test]
fn meta_takes_the_higher_version() {
    let got = merge(
        "meta.json",
        b"",
        &pretty(json!({"schemaVersion": 2})),
        &pretty(json!({"schemaVersion": 3})),
    )
    .unwrap();
    assert_eq!(got, pretty(json!({"schemaVersion": 3})));
}

#[test]
fn conflict_file_keeps_both_versions() {
    let got = conflict_file(b"a\n", b"b", 7, "why");
    assert_eq!(
        String::from_utf8(got).unwrap(),
        "<<<<<<< ours (notabene: why)\na\n=======\nb\n>>>>>>> theirs\n"
    );
}
