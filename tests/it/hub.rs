//! `mdbook-notabene hub` against real parts: a git remote served by `git http-backend` behind
//! nginx, and a sign-in proxy (nginx with basic authentication that names the user in
//! `X-Forwarded-Email`/`X-Forwarded-User`). Reviewers write through the proxy; every write is a
//! commit by its reviewer in the remote; identity comes from the sign-in only; the branch moves
//! on its own and the hub follows.

use crate::support::common::{self, copy_book, git};
use crate::support::forge::{self, GitServer, Hub, Proxy, basic};
use crate::support::serve::request;
use serde_json::{Value, json};
use std::path::Path;

const USERS: &[forge::User] = &[
    ("alice", "a-pass", "alice@example.org", "Alice Liddell"),
    ("bob", "b-pass", "bob@example.org", "Bob Builder"),
    ("max", "m-pass", "max@example.org", "Max Maintainer"),
];

/// A repository holding book-example under `book-example/` (page ids `book-example/src/…`),
/// its store's files merged by the store's driver.
fn book_repo(dir: &Path) {
    copy_book(&common::book_example(), &dir.join("book-example"));
    common::git_commit_all(dir, "the book");
}

/// `method path` through the proxy as `user` (None: no credentials): (status, JSON or text).
fn as_user(
    proxy: &Proxy,
    user: Option<&str>,
    method: &str,
    path: &str,
    body: &Value,
) -> (u16, Value) {
    let auth = user.map(|u| {
        let pass = USERS.iter().find(|x| x.0 == u).unwrap().1;
        basic(u, pass)
    });
    let mut headers: Vec<(&str, &str)> = vec![("Content-Type", "application/json")];
    if let Some(a) = &auth {
        headers.push(("Authorization", a));
    }
    let host = format!("127.0.0.1:{}", proxy.port);
    let origin = format!("http://{host}");
    headers.push(("Host", &host));
    if method != "GET" {
        headers.push(("Origin", &origin));
    }
    let bytes = if body.is_null() {
        Vec::new()
    } else {
        body.to_string().into_bytes()
    };
    let (code, text) = request(proxy.port, method, path, &headers, &bytes);
    let v = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (code, v)
}

const API: &str = "/b/main/__notabene/api/";

/// The remote branch's commits, newest first: `author | subject | files`.
fn remote_log(bare: &Path) -> Vec<String> {
    git(
        bare,
        &[
            "log",
            "--format=%x00%an <%ae> | %cn | %s",
            "--name-only",
            "main",
        ],
    )
    .split('\0')
    .map(|c| c.trim().replace("\n\n", " | ").replace('\n', " | "))
    .filter(|c| !c.is_empty())
    .collect()
}

#[test]
fn reviewers_write_through_the_sign_in_and_every_write_is_their_commit_in_the_remote() {
    let Some(tools) = forge::tools("hub::reviewers_write…") else {
        return;
    };
    let work = common::tempdir();
    book_repo(work.path());
    let remote = GitServer::start(&tools);
    let url = remote.publish("book.git", work.path());
    let hub = Hub::start(
        &url,
        &["--book", "book-example", "--maintainer", "max@example.org"],
    );
    let proxy = Proxy::start(&tools, hub.port, USERS);

    // No credentials: the proxy refuses; straight to the hub with a forged header: refused.
    assert_eq!(as_user(&proxy, None, "GET", "/", &Value::Null).0, 401);
    let forged = request(
        hub.port,
        "GET",
        &format!("{API}status"),
        &[
            ("X-Forwarded-Email", "max@example.org"),
            ("X-Forwarded-User", "Max"),
        ],
        b"",
    );
    assert_eq!(
        forged,
        (
            403,
            "notabene: requests must come through the sign-in proxy\n".to_string()
        )
    );

    // Each reviewer's status names them; the branch list names the branch.
    let (code, status) = as_user(
        &proxy,
        Some("alice"),
        "GET",
        &format!("{API}status"),
        &Value::Null,
    );
    assert_eq!(
        (
            code,
            &status["identity"],
            &status["maintainer"],
            &status["writable"]
        ),
        (
            200,
            &json!("Alice Liddell <alice@example.org>"),
            &json!(false),
            &json!(true)
        )
    );
    let (_, index) = as_user(&proxy, Some("bob"), "GET", "/", &Value::Null);
    assert!(
        index
            .as_str()
            .unwrap()
            .contains("<a href=\"/b/main/\">main</a>"),
        "{index}"
    );

    // Alice comments, naming Bob as the author in the body: the sign-in wins.
    let page = "book-example/src/guide/sensors";
    let new = |body: &str, author: &str| json!({"page": page, "space": "book", "scope": "page", "body": body, "author": author});
    let (code, a) = as_user(
        &proxy,
        Some("alice"),
        "POST",
        &format!("{API}comments"),
        &new("From Alice.", "Bob Builder <bob@example.org>"),
    );
    assert_eq!(code, 201, "{a}");
    assert_eq!(
        a["thread"][0]["author"],
        "Alice Liddell <alice@example.org>"
    );
    let (code, b) = as_user(
        &proxy,
        Some("bob"),
        "POST",
        &format!("{API}comments"),
        &new("From Bob.", ""),
    );
    assert_eq!(
        (code, &b["thread"][0]["author"]),
        (201, &json!("Bob Builder <bob@example.org>"))
    );
    let (a_id, b_id) = (a["id"].as_str().unwrap(), b["id"].as_str().unwrap());

    let patch = |id: &str, extra: Value| {
        let mut v = json!({"page": page, "id": id});
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        v
    };
    let comments = format!("{API}comments");
    // Alice edits her own message; Bob cannot.
    let (code, e) = as_user(
        &proxy,
        Some("alice"),
        "PATCH",
        &comments,
        &patch(a_id, json!({"edit": {"body": "From Alice, edited."}})),
    );
    assert_eq!(
        (code, &e["thread"][0]["body"]),
        (200, &json!("From Alice, edited.")),
        "{e}"
    );
    let only_author = json!("only its author may change or delete this message");
    let (code, e) = as_user(
        &proxy,
        Some("bob"),
        "PATCH",
        &comments,
        &patch(a_id, json!({"edit": {"body": "Bob was here."}})),
    );
    assert_eq!((code, &e["error"]), (403, &only_author));
    // Bob replies to Alice (as himself, whatever the body says); he cannot delete her comment
    // nor close it.
    let (code, r) = as_user(
        &proxy,
        Some("bob"),
        "PATCH",
        &comments,
        &patch(
            a_id,
            json!({"reply": {"body": "Agreed.", "author": "Alice Liddell <alice@example.org>"}}),
        ),
    );
    assert_eq!(
        (code, &r["thread"][1]["author"]),
        (200, &json!("Bob Builder <bob@example.org>")),
        "{r}"
    );
    let (code, e) = as_user(
        &proxy,
        Some("bob"),
        "DELETE",
        &comments,
        &patch(a_id, json!({})),
    );
    assert_eq!((code, &e["error"]), (403, &only_author));
    let (code, e) = as_user(
        &proxy,
        Some("bob"),
        "PATCH",
        &comments,
        &patch(a_id, json!({"status": "resolved"})),
    );
    assert_eq!(
        (code, &e["error"]),
        (
            403,
            &json!("only a maintainer may change a comment's status or apply it")
        )
    );
    // Bob deletes his own; Max, a maintainer, resolves Alice's.
    let (code, d) = as_user(
        &proxy,
        Some("bob"),
        "DELETE",
        &comments,
        &patch(b_id, json!({})),
    );
    assert_eq!((code, &d["deleted"]), (200, &json!(true)), "{d}");
    let (code, m) = as_user(
        &proxy,
        Some("max"),
        "PATCH",
        &comments,
        &patch(a_id, json!({"status": "resolved"})),
    );
    assert_eq!((code, &m["status"]), (200, &json!("resolved")), "{m}");

    // The remote: one commit per acknowledged write, by its reviewer, committed by the hub,
    // each touching that comment's file alone; the book's own commit below them.
    let bare = remote.root.join("book.git");
    let file =
        |id: &str| format!("book-example/.notabene/book-example/src/guide/sensors/{id}.json");
    let line = |who: &str, what: &str, id: &str| {
        format!(
            "{who} | mdbook-notabene hub | notabene: {what} {id} on {page} | {}",
            file(id)
        )
    };
    let (alice, bob, max) = (
        "Alice Liddell <alice@example.org>",
        "Bob Builder <bob@example.org>",
        "Max Maintainer <max@example.org>",
    );
    let log = remote_log(&bare);
    assert_eq!(
        log[..6],
        [
            line(max, "update", a_id),
            line(bob, "delete", b_id),
            line(bob, "reply to", a_id),
            line(alice, "edit", a_id),
            line(bob, "new comment", b_id),
            line(alice, "new comment", a_id),
        ]
    );
    assert_eq!(log.len(), 7, "{log:#?}");
    assert!(
        log[6].starts_with("T <t@example.com> | T | the book | "),
        "{}",
        log[6]
    );
}
