//! `serve`'s write API over real HTTP (the guard is `serve_http`'s): validation (size,
//! scope, anchor, page), the original's request and response shapes, human resolutions that
//! keep `comments verify` clean, and a rebuild after every write.

use crate::support::common;
use crate::support::serve;

use crate::support::wait;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use serve::Server;
use std::time::Duration;

const PAGE: &str = "book-example/src/guide/sensors";
/// How long a patch of a served island may take.
const TWENTY_SECS: Duration = Duration::from_secs(20);
/// How often the island polls look (often: the patch must be seen before the rebuild).
const TEN_MS: Duration = Duration::from_millis(10);

/// POSTs a new comment; returns its id.
fn post_comment(server: &Server, body: Value) -> String {
    let (code, text) = server.request(
        "POST",
        "/__notabene/api/comments",
        &[("Content-Type", "application/json")],
        body.to_string().as_bytes(),
    );
    assert_eq!(code, 201, "{text}");
    serde_json::from_str::<Value>(&text).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string()
}

fn refused(
    server: &Server,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
    code: u16,
    reason: &str,
) {
    let before = common::tree(&server.store());
    let (got, text) = server.request(method, path, headers, body.as_bytes());
    let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    assert_eq!(
        (got, v),
        (code, json!({ "error": reason })),
        "{method} {path} {headers:?}"
    );
    assert!(
        common::tree(&server.store()) == before,
        "the store changed after a refused request"
    );
}

#[test]
fn invalid_requests_are_refused_and_change_nothing() {
    let server = Server::start(&[], |_| {});
    let api = "/__notabene/api/comments";
    let big = format!(
        "{{\"page\":\"{PAGE}\",\"space\":\"book\",\"scope\":\"page\",\"body\":\"{}\"}}",
        "x".repeat(1024 * 1024 + 10)
    );
    refused(&server, "POST", api, &[], &big, 413, "payload too large");
    let body = |v: Value| v.to_string();
    refused(
        &server,
        "POST",
        api,
        &[],
        &body(json!({ "page": PAGE, "space": "book", "scope": "paragraph", "body": "x" })),
        400,
        "scope must be \"selection\", \"page\" or \"block\"",
    );
    refused(
        &server,
        "POST",
        api,
        &[],
        &body(
            json!({ "page": "book-example/src/nope", "space": "book", "scope": "page", "body": "x" }),
        ),
        404,
        "page \"book-example/src/nope\" is not in this book (page)",
    );
    refused(
        &server,
        "POST",
        api,
        &[],
        &body(
            json!({ "page": "book-example/../../etc", "space": "book", "scope": "page", "body": "x" }),
        ),
        400,
        "invalid page id \"book-example/../../etc\": it contains a '..' segment (page)",
    );
    refused(
        &server,
        "POST",
        api,
        &[],
        &body(json!({ "page": PAGE, "space": "book", "scope": "selection", "body": "x" })),
        400,
        "a selection comment needs an anchor {quote, prefix, suffix, section}",
    );
    refused(
        &server,
        "POST",
        api,
        &[],
        &body(
            json!({ "page": PAGE, "space": "book", "scope": "block", "body": "x", "anchor": { "kind": "video", "key": "v:x", "index": 0 } }),
        ),
        400,
        "anchor.kind must be \"image\" or \"mermaid\"",
    );
    refused(
        &server,
        "POST",
        api,
        &[],
        &body(
            json!({ "page": PAGE, "space": "book", "scope": "page", "body": "x".repeat(64 * 1024 + 1) }),
        ),
        413,
        "body is too long",
    );
    refused(
        &server,
        "POST",
        api,
        &[],
        &body(json!({ "page": PAGE, "space": "book", "scope": "page", "body": "  " })),
        400,
        "page, space, scope, body required",
    );
    refused(
        &server,
        "POST",
        api,
        &[],
        "not json",
        400,
        "expected a JSON object",
    );
    refused(
        &server,
        "PATCH",
        api,
        &[],
        &body(json!({ "page": PAGE, "id": "c_mwp2po2nk5ji", "status": "done" })),
        400,
        "status must be \"open\", \"addressed\" or \"resolved\"",
    );
    refused(
        &server,
        "PATCH",
        api,
        &[],
        &body(json!({ "page": PAGE, "id": "c_nope", "hold": true })),
        404,
        "not found",
    );
    refused(
        &server,
        "GET",
        api,
        &[],
        "",
        400,
        "page query param required",
    );
}

#[test]
fn the_review_loop_through_the_api() {
    let server = Server::start(&[], |_| {});
    let api = "/__notabene/api/comments";
    let g0 = server.generation();
    // Create: the original's request shape; the comment file appears in the store.
    let (code, c) = server.json(
        "POST",
        api,
        &json!({
            "page": PAGE, "space": "book", "scope": "selection", "author": "Rae Reviewer <rae@example.com>", "body": "Add units.",
            "anchor": { "quote": "Cheap sensors drift", "prefix": "", "suffix": ", and even good ones are rarely accurate", "section": "Calibration" },
        }),
    );
    assert_eq!(code, 201, "{c}");
    let id = c["id"].as_str().unwrap().to_string();
    assert!(id.starts_with("c_"));
    let file = server.store().join(PAGE).join(format!("{id}.json"));
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(stored, c);
    let keys: Vec<&str> = stored
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "id",
            "space",
            "page",
            "scope",
            "anchor",
            "thread",
            "status",
            "hold",
            "resolution",
            "createdAt",
            "updatedAt"
        ]
    );
    assert_eq!(
        stored["thread"][0]["author"],
        "Rae Reviewer <rae@example.com>"
    );

    // The page rebuilds and its data island carries the new comment, anchored exactly. The
    // rebuild anchored and injected that chapter alone: the others kept what the first build
    // gave them.
    server.wait_rebuild(g0);
    let (_, status) = server.json("GET", "/__notabene/api/status", &Value::Null);
    let last = &status["lastBuild"];
    assert_eq!(
        (&last["anchored"], &last["injected"]),
        (&json!(1), &json!(1)),
        "{status}"
    );
    assert!(last["anchoringReused"].as_u64().unwrap() >= 5, "{status}");
    assert_eq!(last["anchoringReused"], last["injectionReused"], "{status}");
    let (_, html) = server.request("GET", "/guide/sensors.html", &[], b"");
    assert!(
        html.contains(&format!("data-nb-id=\"{id}\"")),
        "no marker for {id}"
    );

    // Reply, edit refused after a reply, human resolve records a resolution.
    let (code, r) = server.json("PATCH", api, &json!({ "page": PAGE, "id": id, "reply": { "author": "Ada Agent", "body": "Which units?" } }));
    assert_eq!((code, r["thread"].as_array().unwrap().len()), (200, 2));
    let (code, _) = server.json(
        "PATCH",
        api,
        &json!({ "page": PAGE, "id": id, "edit": { "body": "changed" } }),
    );
    assert_eq!(code, 409);
    let (code, r) = server.json("PATCH", api, &json!({ "page": PAGE, "id": id, "status": "resolved", "author": "Rae Reviewer <rae@example.com>" }));
    assert_eq!(
        (code, &r["resolution"]),
        (
            200,
            &json!({ "note": "", "by": "Rae Reviewer <rae@example.com>" })
        )
    );
    let verify = std::process::Command::new(env!("CARGO_BIN_EXE_notabene"))
        .args([
            "--book",
            server.book.to_str().unwrap(),
            "comments",
            "verify",
            "--json",
        ])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&verify.stdout).unwrap();
    assert_eq!(
        (verify.status.code(), &report["errors"]),
        (Some(0), &json!(0)),
        "{report}"
    );

    // Reopen clears the stale resolution; only this comment's file changed.
    let before = common::tree(&server.store());
    let (code, r) = server.json(
        "PATCH",
        api,
        &json!({ "page": PAGE, "id": id, "status": "open" }),
    );
    assert_eq!((code, &r["resolution"]), (200, &Value::Null));
    let after = common::tree(&server.store());
    let changed: Vec<_> = after
        .keys()
        .filter(|k| before.get(*k) != after.get(*k))
        .collect();
    assert_eq!(changed.len(), 1, "{changed:?}");

    // Listing by page, the journal, diffs.
    let (code, list) = server.json("GET", &format!("{api}?page={PAGE}"), &Value::Null);
    assert_eq!(code, 200);
    assert!(
        list.as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == id.as_str())
    );
    let (code, journal) = server.json("GET", "/__notabene/api/journal", &Value::Null);
    assert_eq!((code, journal.as_array().map(Vec::len)), (200, Some(2)));
    // A diff runs git: a request with no Origin is refused (see serve_hostile), this one is a
    // same-origin page's.
    let origin = format!("http://127.0.0.1:{}", server.port);
    let (code, text) = server.request(
        "GET",
        &format!("/__notabene/api/diff?page={PAGE}&page=book-example/src/nope"),
        &[("Origin", origin.as_str())],
        b"",
    );
    let diffs: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(code, 200);
    assert_eq!(diffs[0]["file"], "book-example/src/guide/sensors.md");
    assert_eq!(
        diffs[1],
        json!({ "page": "book-example/src/nope", "file": null, "diff": null, "error": "unresolved" })
    );

    // Delete one comment; a second delete says so.
    let (code, d) = server.json("DELETE", api, &json!({ "page": PAGE, "id": id }));
    assert_eq!((code, d), (200, json!({ "deleted": true, "undo": true })));
    assert!(!file.exists());
    let (code, d) = server.json("DELETE", api, &json!({ "page": PAGE, "id": id }));
    assert_eq!((code, d), (404, json!({ "deleted": false })));
}

/// `POST apply`: a suggested edit made through the API is applied to the chapter, the
/// comment closed and linked to a journal entry written for it (so /review shows it); a
/// second apply, a suggestion on a page comment and an unknown id are refused, nothing written.
#[test]
fn suggested_edits_through_the_api() {
    let server = Server::start(&[], |_| {});
    let page = "book-example/src/guide/installing";
    let create = |anchor: Value, suggestion: Value, scope: &str| {
        let (code, text) = server.request(
            "POST",
            "/__notabene/api/comments",
            &[("Content-Type", "application/json")],
            json!({ "page": page, "space": "book", "scope": scope, "anchor": anchor, "suggestion": suggestion, "author": "Ann" })
                .to_string()
                .as_bytes(),
        );
        (code, serde_json::from_str::<Value>(&text).unwrap())
    };
    let anchor = json!({ "quote": "most heavily", "prefix": "the ARM builds are the ones we test ", "suffix": ". You can install", "section": "Installing Skylark" });
    let (code, c) = create(
        anchor.clone(),
        json!({ "text": "most thoroughly" }),
        "selection",
    );
    assert_eq!(code, 201, "{c}");
    assert_eq!(
        c["suggestion"],
        json!({ "quote": "most heavily", "text": "most thoroughly" })
    );
    assert_eq!(
        c["thread"][0]["body"],
        "Suggested edit: replace “most heavily” with “most thoroughly”."
    );
    let id = c["id"].as_str().unwrap().to_string();
    // Not on a page comment.
    refused(
        &server,
        "POST",
        "/__notabene/api/comments",
        &[],
        &json!({ "page": page, "space": "book", "scope": "page", "body": "x", "suggestion": { "text": "y" } }).to_string(),
        400,
        "suggestion must be {text} on a selection comment",
    );
    let chapter = server.book.join("src/guide/installing.md");
    let before_md = std::fs::read_to_string(&chapter).unwrap();
    let (code, text) = server.request(
        "POST",
        "/__notabene/api/apply",
        &[("Content-Type", "application/json")],
        json!({ "id": id, "author": "Bea" }).to_string().as_bytes(),
    );
    assert_eq!(code, 200, "{text}");
    let applied: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        std::fs::read_to_string(&chapter).unwrap(),
        before_md.replacen(
            "the ones we test most heavily.",
            "the ones we test most thoroughly.",
            1
        )
    );
    assert_eq!(applied["status"], "addressed");
    assert_eq!(applied["suggestion"]["applied"]["by"], "Bea");
    let entry_id = applied["resolution"]["journalEntryId"]
        .as_str()
        .unwrap()
        .to_string();
    let entry = server.journal_entry(&entry_id);
    assert_eq!(
        entry["changes"],
        json!([{ "page": page, "commentIds": [id], "what": "Replaced “most heavily” with “most thoroughly”.", "why": "Suggested edit: replace “most heavily” with “most thoroughly”." }])
    );
    assert_eq!(entry["title"], "Applied a suggested edit");
    // Again: refused, nothing written.
    refused(
        &server,
        "POST",
        "/__notabene/api/apply",
        &[],
        &json!({ "id": id }).to_string(),
        409,
        &format!(
            "the suggestion of {id:?} was already applied; nothing changed (suggestion.applied)"
        ),
    );
    refused(
        &server,
        "POST",
        "/__notabene/api/apply",
        &[],
        &json!({ "id": "c_nope" }).to_string(),
        404,
        "not found",
    );
    refused(
        &server,
        "GET",
        "/__notabene/api/apply",
        &[],
        "",
        405,
        "method not allowed",
    );
    let verify = common::run(&server.book, &["comments", "verify"]);
    assert_eq!(verify.code, 0, "{}", verify.stdout);
}

/// A comment written through the API is in the served chapter's island long before the
/// rebuild anchors it: patched in as `pending`, with its whole anchor; the rebuild then makes
/// it `exact`. A reply reaches the island the same way, keeping the entry's anchoring.
#[test]
fn a_new_comment_is_in_the_served_chapter_before_the_rebuild() {
    let server = Server::start(&[], |_| {});
    let page = "book-example/src/guide/installing";
    let island = |server: &Server| -> Value {
        let (code, html) = server.request("GET", "/guide/installing.html", &[], b"");
        assert_eq!(code, 200);
        let open = format!("data-nb-page=\"{page}\">");
        let start = html.find(&open).unwrap() + open.len();
        let end = start + html[start..].find("</script>").unwrap();
        serde_json::from_str(&html[start..end].replace("<\\/", "</")).unwrap()
    };
    let entry = |v: &Value, id: &str| -> Option<Value> {
        v["comments"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .cloned()
    };
    let g = server.generation();
    let anchor = json!({ "quote": "Raspberry Pi", "prefix": "Most stations run on a ", "suffix": ", so the ARM builds", "section": "Installing Skylark" });
    let id = post_comment(
        &server,
        json!({ "page": page, "space": "book", "scope": "selection", "anchor": anchor, "body": "Which Pi?" }),
    );
    // Patched in before any rebuild: the generation moved, the build count did not.
    let pending = wait::until_every(TWENTY_SECS, TEN_MS, "the comment patched in", || {
        entry(&island(&server), &id)
    });
    assert_eq!(
        pending["anchoring"],
        json!({ "status": "pending" }),
        "{pending}"
    );
    assert_eq!(
        pending["anchor"], anchor,
        "the whole anchor, to search with"
    );
    assert!(pending.get("page").is_none());
    // After the rebuild: anchored.
    let mut g = server.wait_rebuild(g);
    let anchored = loop {
        let e = entry(&island(&server), &id).unwrap();
        if e["anchoring"]["status"] != "pending" {
            break e;
        }
        g = server.wait_rebuild(g);
    };
    assert_eq!(anchored["anchoring"]["status"], "exact", "{anchored}");
    // A reply: in the island at once, the anchoring kept.
    let (code, _) = server.request(
        "PATCH",
        "/__notabene/api/comments",
        &[("Content-Type", "application/json")],
        json!({ "page": page, "id": id, "reply": { "body": "A Pi 4." } })
            .to_string()
            .as_bytes(),
    );
    assert_eq!(code, 200);
    let e = wait::until_every(TWENTY_SECS, TEN_MS, "the reply in the island", || {
        entry(&island(&server), &id).filter(|e| e["thread"].as_array().unwrap().len() == 2)
    });
    assert_eq!(e["anchoring"]["status"], "exact");
}

/// The first chapter is `README.md`, which mdBook writes as `index.html`: a comment on it is
/// patched into `/` too.
#[test]
fn a_comment_on_the_readme_chapter_is_patched_into_the_index() {
    let server = Server::start(&[], |_| {});
    let id = post_comment(
        &server,
        json!({ "page": "book-example/src/README", "space": "book", "scope": "page", "body": "Say what Skylark is first." }),
    );
    let html = wait::until_every(TWENTY_SECS, TEN_MS, "the comment in index.html", || {
        let (_, html) = server.request("GET", "/", &[], b"");
        html.contains(&format!("\"id\":\"{id}\"")).then_some(html)
    });
    assert!(
        html.contains(&format!("\"id\":\"{id}\",\"scope\":\"page\"")),
        "page scope, no page field"
    );
}

/// Files changed by another program — an agent's CLI writing a comment, an editor saving a
/// chapter, a directory the book did not have — reach the served book: the watcher hears of
/// them from the OS's file events (or, without them, from its poll) and rebuilds.
#[test]
fn files_changed_by_another_program_are_rebuilt_in() {
    let server = Server::start(&[], |_| {});
    let page = |server: &Server, path: &str| {
        let (code, html) = server.request("GET", path, &[], b"");
        assert_eq!(code, 200, "{path}");
        html
    };
    // A comment written by the CLI, not through the API.
    let g = server.generation();
    let out = common::run(
        server.book.parent().unwrap(),
        &[
            "--book",
            "book-example",
            "comments",
            "add",
            "--page",
            PAGE,
            "--quote",
            "put your fastest devices first",
            "--body",
            "From the CLI.",
            "--json",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let id = serde_json::from_str::<Value>(&out.stdout).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let g = server.wait_rebuild(g);
    wait::until(
        TWENTY_SECS,
        "the CLI's comment marked in the chapter",
        || {
            page(&server, "/guide/sensors.html")
                .contains(&format!("data-nb-id=\"{id}\""))
                .then_some(())
        },
    );
    // A chapter saved by an editor.
    let chapter = server.book.join("src/guide/sensors.md");
    let text = common::read(&chapter);
    common::write(&chapter, &text.replace("# Sensors", "# Sensors and probes"));
    let g = server.wait_rebuild(g);
    wait::until(TWENTY_SECS, "the edited heading served", || {
        page(&server, "/guide/sensors.html")
            .contains("Sensors and probes")
            .then_some(())
    });
    // The book had no po/ directory: one made now is seen, and watched from then on.
    let po = server.book.join("po/fr.po");
    common::write(&po, "msgid \"\"\nmsgstr \"\"\n");
    let g = server.wait_rebuild(g);
    common::write(
        &po,
        "msgid \"\"\nmsgstr \"Content-Type: text/plain; charset=UTF-8\\n\"\n",
    );
    server.wait_rebuild(g);
}

#[test]
fn after_a_comment_serve_renders_the_pages_that_changed_then_the_whole_book_quietly() {
    let server = Server::start(&[], |_| {});
    let status = server.status();
    let (g, builds) = (
        status["generation"].as_u64().unwrap(),
        status["builds"].as_u64().unwrap(),
    );
    assert_eq!(status["lastBuild"]["rendered"], json!({ "whole": true }));
    let anchor = json!({ "quote": "next to a reference thermometer", "prefix": "To calibrate a temperature sensor, place it ", "suffix": " in a shaded, ventilated spot", "section": "Calibration" });
    let id = post_comment(
        &server,
        json!({ "page": PAGE, "space": "book", "scope": "selection", "anchor": anchor, "body": "Which unit?" }),
    );
    // The rebuild after it renders the chapter and the generated pages, and patches the
    // summary of the others; the page shows the comment's mark.
    let rendered = wait::until_every(TWENTY_SECS, TEN_MS, "a build of pages", || {
        let s = server.status();
        (s["builds"].as_u64().unwrap() > builds && s["lastBuild"]["rendered"]["whole"] == false)
            .then(|| s["lastBuild"]["rendered"].clone())
    });
    assert!(
        rendered["pages"].as_u64().unwrap() >= 2 && rendered["summaries"].as_u64().unwrap() >= 3,
        "{rendered}"
    );
    let (_, html) = server.request("GET", "/guide/sensors.html", &[], b"");
    assert!(
        html.contains(&format!("data-nb-id=\"{id}\"")),
        "the chapter is rendered with the new comment's mark"
    );
    let pages_generation = server.status()["generation"].as_u64().unwrap();
    assert!(pages_generation > g);
    let (_, chapter) = server.request("GET", "/guide/sensors.html", &[], b"");
    // Then the whole book, once quiet: print.html has the comment, and no page changed, so
    // the generation does not move (open pages are not reloaded again).
    let after = wait::until_every(TWENTY_SECS, TEN_MS, "the whole build after it", || {
        let s = server.status();
        (s["lastBuild"]["rendered"] == json!({ "whole": true })).then_some(s)
    });
    assert_eq!(after["generation"].as_u64().unwrap(), pages_generation);
    let (_, print) = server.request("GET", "/print.html", &[], b"");
    assert!(print.contains(&id), "print.html after the whole build");
    let (_, again) = server.request("GET", "/guide/sensors.html", &[], b"");
    assert!(
        again == chapter,
        "the whole build's page is the page served before it"
    );
}
