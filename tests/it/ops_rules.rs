//! The rules of the comment operations (`src/apps/ops/`), held through both adaptors: the CLI an
//! agent runs, and the API the browser calls under `serve`. One server, one store: what the
//! one refuses, the other refuses the same way, or differs by the rule the operations module
//! writes down (a person may close a held comment, an agent may not).

use crate::support::common;
use crate::support::serve::Server;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const PAGE: &str = "book-example/src/guide/sensors";
const API: &str = "/__notabene/api/comments";

/// A new page comment, through the API; its id.
fn post(server: &Server, body: &str) -> String {
    let (code, v) = server.json(
        "POST",
        API,
        &json!({ "page": PAGE, "space": "book", "scope": "page", "body": body }),
    );
    assert_eq!(code, 201, "{v}");
    v["id"].as_str().unwrap().to_string()
}

/// The comment as its file holds it.
fn stored(server: &Server, id: &str) -> Value {
    let text = common::read(&server.store().join(PAGE).join(format!("{id}.json")));
    serde_json::from_str(&text).unwrap()
}

/// Runs the CLI in the served book.
fn cli(server: &Server, args: &[&str]) -> common::Out {
    common::run(server.store().parent().unwrap(), args)
}

#[test]
fn a_held_comment_is_closed_by_a_person_through_the_api_not_by_an_agent_through_the_cli() {
    let server = Server::start(&[], |_| {});
    let id = post(&server, "Is a full disk a 3?");
    cli(&server, &["comments", "hold", &id]).ok();
    // The agent: refused, nothing written.
    let before = stored(&server, &id);
    cli(&server, &["comments", "done", &id, "--note", "n"]).fails_with(&format!(
        "notabene: comment {id:?} is on hold — a reviewer is still working on it; pass --force to close it anyway"
    ));
    assert_eq!(stored(&server, &id), before);
    // A person, in the browser: closed, the resolution saying who.
    let (code, v) = server.json(
        "PATCH",
        API,
        &json!({ "page": PAGE, "id": id, "status": "resolved", "author": "Ana" }),
    );
    assert_eq!(code, 200, "{v}");
    let after = stored(&server, &id);
    assert_eq!(
        (&after["status"], &after["hold"], &after["resolution"]),
        (
            &json!("resolved"),
            &json!(true),
            &json!({ "note": "", "by": "Ana" })
        )
    );
}

#[test]
fn a_page_not_in_the_book_is_refused_by_both_and_forced_through_the_cli() {
    let server = Server::start(&[], |_| {});
    let nope = "book-example/src/nope";
    let before = common::tree(&server.store());
    let (code, v) = server.json(
        "POST",
        API,
        &json!({ "page": nope, "space": "book", "scope": "page", "body": "x" }),
    );
    assert_eq!(
        (code, v),
        (
            404,
            json!({ "error": "page \"book-example/src/nope\" is not in this book (page)" })
        )
    );
    cli(&server, &["comments", "add", "--page", nope, "--body", "x"]).fails_with(
        "notabene: page \"book-example/src/nope\" is not in this book; --force adds the comment anyway (--page)",
    );
    assert!(common::tree(&server.store()) == before, "nothing written");
    let out = cli(
        &server,
        &["comments", "add", "--page", nope, "--body", "x", "--force"],
    );
    assert!(
        out.ok().starts_with("notabene: added comment c_"),
        "{}",
        out.ok()
    );
}

#[test]
fn a_quote_not_on_the_page_is_refused_by_both_and_forced_through_the_cli() {
    let server = Server::start(&[], |_| {});
    // The API looks in the page as the served build modelled it.
    let before = common::tree(&server.store());
    let anchor =
        |quote: &str| json!({ "quote": quote, "prefix": "", "suffix": "", "section": null });
    let (code, v) = server.json(
        "POST",
        API,
        &json!({ "page": PAGE, "space": "book", "scope": "selection", "body": "x",
                 "anchor": anchor("words nobody wrote") }),
    );
    assert_eq!(
        (code, v),
        (
            404,
            json!({ "error": "the quote is not on page \"book-example/src/guide/sensors\" (quote)" })
        )
    );
    assert!(common::tree(&server.store()) == before, "nothing written");
    // Whitespace is normalised, as anchors are: a quote across a line break is taken.
    let (code, v) = server.json(
        "POST",
        API,
        &json!({ "page": PAGE, "space": "book", "scope": "selection", "body": "x",
                 "anchor": anchor("Cheap  sensors\ndrift") }),
    );
    assert_eq!(code, 201, "{v}");
    let args = [
        "comments",
        "add",
        "--page",
        PAGE,
        "--body",
        "x",
        "--quote",
        "words nobody wrote",
    ];
    cli(&server, &args).fails_with(
        "notabene: the quote is not on page \"book-example/src/guide/sensors\"; --force adds the comment anyway (--quote)",
    );
    let forced: Vec<&str> = args.iter().copied().chain(["--force"]).collect();
    assert!(
        cli(&server, &forced)
            .ok()
            .starts_with("notabene: added comment c_")
    );
}

#[test]
fn the_size_limits_are_the_same_through_both() {
    let server = Server::start(&[], |_| {});
    let id = post(&server, "first");
    let limit = mdbook_notabene::apps::ops::limits::MAX_BODY;
    let at = "x".repeat(limit);
    let over = "x".repeat(limit + 1);
    // At the limit: a reply through each.
    cli(&server, &["comments", "reply", &id, "--body", &at]).ok();
    let (code, _) = server.json(
        "PATCH",
        API,
        &json!({ "page": PAGE, "id": id, "reply": { "body": at } }),
    );
    assert_eq!(code, 200);
    assert_eq!(stored(&server, &id)["thread"].as_array().unwrap().len(), 3);
    // One byte over: refused by each, nothing written.
    let before = stored(&server, &id);
    cli(&server, &["comments", "reply", &id, "--body", &over]).fails_with(&format!(
        "notabene: the text is {} bytes; the limit is {limit} (--body)",
        limit + 1
    ));
    let (code, v) = server.json(
        "PATCH",
        API,
        &json!({ "page": PAGE, "id": id, "reply": { "body": over } }),
    );
    assert_eq!((code, v), (413, json!({ "error": "body is too long" })));
    assert_eq!(stored(&server, &id), before);
}

#[test]
fn comments_apply_without_journal_writes_its_own_entry_as_the_browser_does() {
    let server = Server::start(&[], |_| {});
    let (code, v) = server.json(
        "POST",
        API,
        &json!({
            "page": PAGE, "space": "book", "scope": "selection", "author": "Ann",
            "anchor": { "quote": "fastest devices", "prefix": "so put your ", "suffix": " first.", "section": "Sensors" },
            "suggestion": { "text": "quickest devices" },
        }),
    );
    assert_eq!(code, 201, "{v}");
    let id = v["id"].as_str().unwrap().to_string();
    let out = cli(&server, &["comments", "apply", &id, "--author", "agent"]);
    let c = stored(&server, &id);
    let entry_id = c["resolution"]["journalEntryId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        out.ok(),
        format!(
            "notabene: applied the suggestion of {id} in src/guide/sensors.md:3 → addressed.\nnotabene: recorded in journal entry {entry_id}.\n"
        )
    );
    let journal: Value =
        serde_json::from_str(&common::read(&server.store().join("journal.json"))).unwrap();
    let entry = journal
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == json!(entry_id))
        .expect("the entry the resolution links to");
    assert_eq!(
        (&entry["title"], &entry["summary"], &entry["changes"]),
        (
            &json!("Applied a suggested edit"),
            &json!(
                "Replaced “fastest devices” with “quickest devices”. Applied by agent with `comments apply`."
            ),
            &json!([{ "page": PAGE, "commentIds": [id], "what": "Replaced “fastest devices” with “quickest devices”.", "why": c["thread"][0]["body"] }]),
        )
    );
}

#[test]
fn done_on_an_addressed_comment_warns_that_its_note_is_replaced() {
    let server = Server::start(&[], |_| {});
    let id = post(&server, "Name the policy.");
    crate::support::common::journal_entry(&server.book, "j-x", &[&id]);
    let done = |note: &str| {
        cli(
            &server,
            &[
                "comments",
                "done",
                &id,
                "--status",
                "addressed",
                "--note",
                note,
                "--journal",
                "j-x",
            ],
        )
    };
    let first = done("first");
    assert_eq!(first.code, 0);
    assert!(!first.stderr.contains("replaced"), "{}", first.stderr);
    let second = done("second");
    assert_eq!(second.code, 0);
    assert_eq!(
        second.stderr.lines().next().unwrap(),
        format!(
            "notabene: warning: comment {id:?} was already addressed; its earlier note is replaced."
        )
    );
    assert_eq!(stored(&server, &id)["resolution"]["note"], json!("second"));
}

#[test]
fn journal_add_of_an_entry_without_id_is_idempotent() {
    let server = Server::start(&[], |_| {});
    let entry = r#"{"title": "Named the policy", "summary": "s", "changes": [{"page": "book-example/src/guide/sensors", "what": "w", "why": "y"}]}"#;
    let dir = server.store().parent().unwrap().to_path_buf();
    let add = || common::run_with(&dir, &["journal", "add", "--json"], Some(entry), &[]);
    let first = add();
    let id: Value = serde_json::from_str(first.ok()).unwrap();
    let second = add();
    assert_eq!(second.ok(), first.ok(), "the same id, nothing appended");
    let journal: Value =
        serde_json::from_str(&common::read(&server.store().join("journal.json"))).unwrap();
    let same: Vec<&Value> = journal
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["title"] == json!("Named the policy"))
        .collect();
    assert_eq!((same.len(), &same[0]["id"]), (1, &id["id"]));
}

#[test]
fn an_approval_is_recorded_as_the_persons_message_once_and_an_agents_close_records_none() {
    let server = Server::start(&[], |_| {});
    let address = |id: &str| {
        crate::support::common::journal_entry(&server.book, "j-x", &[id]);
        let out = cli(
            &server,
            &[
                "comments",
                "done",
                id,
                "--status",
                "addressed",
                "--note",
                "Did it.",
                "--journal",
                "j-x",
            ],
        );
        // An entry that does not list this comment (the first one listed): a note, not an error.
        assert_eq!(out.code, 0, "{}", out.stderr);
    };
    let approve = |id: &str| {
        let (code, v) = server.json(
            "PATCH",
            API,
            &json!({ "page": PAGE, "id": id, "status": "resolved", "author": "Ana" }),
        );
        assert_eq!(code, 200, "{v}");
    };
    let messages = |id: &str| -> Vec<(String, String)> {
        stored(&server, id)["thread"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["author"].as_str().unwrap().to_string(),
                    m["body"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    // A person approves the agent's change: their message, and the agent's resolution kept.
    let id = post(&server, "Name the policy.");
    address(&id);
    approve(&id);
    approve(&id);
    let first = messages(&id)[0].clone();
    assert_eq!(
        messages(&id),
        vec![
            first,
            (
                "Ana".to_string(),
                mdbook_notabene::apps::ops::APPROVAL.to_string()
            )
        ]
    );
    assert_eq!(stored(&server, &id)["resolution"]["note"], json!("Did it."));
    // An agent resolving it itself validates nothing: no message.
    let other = post(&server, "Say why.");
    address(&other);
    let closed = cli(
        &server,
        &[
            "comments", "done", &other, "--status", "resolved", "--note", "n",
        ],
    );
    assert_eq!(closed.code, 0, "{}", closed.stderr);
    assert_eq!(messages(&other).len(), 1);
}
