//! `mdbook-notabene hub` against real parts: a git remote served by `git http-backend` behind
//! nginx, and a sign-in proxy (nginx with basic authentication that names the user in
//! `X-Forwarded-Email`/`X-Forwarded-User`). Reviewers write through the proxy; every write is a
//! commit by its reviewer in the remote; identity comes from the sign-in only; the branch moves
//! on its own and the hub follows.

use crate::support::common::{self, git};
use crate::support::forge::{self, Hub, Origin, Proxy, push_branch};
use crate::support::serve::request;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

const USERS: &[forge::User] = &[
    ("alice", "a-pass", "alice@example.org", "Alice Liddell"),
    ("bob", "b-pass", "bob@example.org", "Bob Builder"),
    ("max", "m-pass", "max@example.org", "Max Maintainer"),
];

/// `method path` through the proxy as `user` (None: no credentials): (status, JSON or text).
fn as_user(
    proxy: &Proxy,
    user: Option<&str>,
    method: &str,
    path: &str,
    body: &Value,
) -> (u16, Value) {
    let credentials = user.map(|u| (u, USERS.iter().find(|x| x.0 == u).unwrap().1));
    forge::through(proxy, credentials, method, path, body)
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
    let o = Origin::start(&tools);
    let url = &o.url;
    let hub = Hub::start(
        url,
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
    let bare = o.bare();
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

    // The branch list counts the branch's open and addressed comments, as a clone has them, and
    // names what its book.toml asked to run that the hub did not.
    let check = common::tempdir();
    let clone = check.path().join("c");
    git(
        Path::new("/"),
        &["clone", "-q", url, clone.to_str().unwrap()],
    );
    let listed = common::run(&clone.join("book-example"), &["comments", "ls", "--json"]);
    let all: Vec<Value> = serde_json::from_str(&listed.stdout).unwrap();
    let count = |s: &str| all.iter().filter(|c| c["status"] == s).count();
    assert!(count("open") > 0 && count("addressed") > 0);
    let (_, index) = as_user(&proxy, Some("bob"), "GET", "/", &Value::Null);
    let expected = format!(
        "<li><a href=\"/b/main/\">main</a> <span class=\"nb-counts\">{} open, {} to validate</span> <small>(built; skipped from its book.toml, never run: output.html.additional-js &quot;mermaid/mermaid.min.js&quot;, output.html.additional-js &quot;mermaid/mermaid-init.js&quot;)</small></li>",
        count("open"),
        count("addressed")
    );
    assert!(
        index.as_str().unwrap().contains(&expected),
        "{index}\n{expected}"
    );
}

/// `n` comments posted by `user` through the proxy on `page`; the ids of those acknowledged
/// (a 201) and how many were not (a 503: nothing claimed).
fn post_many(proxy: &Proxy, user: &str, page: &str, n: usize) -> (Vec<String>, usize) {
    let mut ids = Vec::new();
    let mut refused = 0;
    for i in 0..n {
        let body =
            json!({"page": page, "space": "book", "scope": "page", "body": format!("{user} #{i}")});
        match as_user(proxy, Some(user), "POST", &format!("{API}comments"), &body) {
            (201, c) => ids.push(c["id"].as_str().unwrap().to_string()),
            (503, _) => refused += 1,
            (code, other) => panic!("{user} #{i}: {code} {other}"),
        }
    }
    (ids, refused)
}

/// A clone of the remote `url` at `dir`, committing as the author Ann.
fn author_clone(url: &str, dir: &Path) {
    git(Path::new("/"), &["clone", "-q", url, dir.to_str().unwrap()]);
    git(dir, &["config", "user.name", "Ann Author"]);
    git(dir, &["config", "user.email", "ann@example.org"]);
}

/// Commits `text` appended to `file` in the author's clone and pushes it, pulling (rebasing)
/// when the branch moved; returns the commit's subject.
fn author_push(dir: &Path, file: &str, text: &str) -> String {
    let path = dir.join(file);
    let mut md = std::fs::read_to_string(&path).unwrap();
    md.push_str(&format!("\n{text}\n"));
    std::fs::write(&path, md).unwrap();
    let subject = format!("docs: {text}");
    git(dir, &["commit", "-qam", &subject]);
    // The hubs push many times a second under this load: an author retries, as anyone does.
    for _ in 0..300 {
        let pushed = std::process::Command::new("git")
            .current_dir(dir)
            .args(["push", "-q", "origin", "HEAD:main"])
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        if pushed.status.success() {
            return subject;
        }
        std::thread::sleep(Duration::from_millis(fastrand::u64(0..200)));
        git(dir, &["pull", "-q", "--rebase", "origin", "main"]);
    }
    panic!("the author could not push");
}

#[test]
fn the_branch_moves_under_the_reviewers_and_every_write_lands_once() {
    let Some(tools) = forge::tools("hub::the_branch_moves…") else {
        return;
    };
    let o = Origin::start(&tools);
    let (work, url) = (&o.work, &o.url);
    let hub = Hub::start(url, &["--book", "book-example"]);
    let proxy = Proxy::start(&tools, hub.port, USERS);
    assert_eq!(
        as_user(&proxy, Some("alice"), "GET", "/b/main/", &Value::Null).0,
        200
    );

    // Two reviewers write while the author pushes three edits of a chapter.
    let author = work.path().join("author");
    author_clone(url, &author);
    let chapter = "book-example/src/guide/sensors.md";
    let (written, subjects) = std::thread::scope(|s| {
        let writers: Vec<_> = ["alice", "bob"]
            .into_iter()
            .map(|u| {
                let proxy = &proxy;
                s.spawn(move || post_many(proxy, u, "book-example/src/guide/sensors", 12))
            })
            .collect();
        let subjects: Vec<String> = (1..=3)
            .map(|i| author_push(&author, chapter, &format!("Edit {i} by the author.")))
            .collect();
        let written: Vec<(Vec<String>, usize)> =
            writers.into_iter().map(|w| w.join().unwrap()).collect();
        (written, subjects)
    });
    let acknowledged: Vec<&String> = written.iter().flat_map(|(ids, _)| ids).collect();
    assert!(acknowledged.len() >= 20, "{written:?}");

    // The remote: every acknowledged comment's file, each created once; the author's commits.
    let bare = o.bare();
    let log = git(&bare, &["log", "--format=%s", "main"]);
    for id in &acknowledged {
        let created = log
            .lines()
            .filter(|l| l.starts_with(&format!("notabene: new comment {id} ")))
            .count();
        assert_eq!(created, 1, "{id} in\n{log}");
    }
    for subject in &subjects {
        assert_eq!(
            log.lines().filter(|l| l == subject).count(),
            1,
            "{subject} in\n{log}"
        );
    }
    let check = work.path().join("check");
    git(
        Path::new("/"),
        &["clone", "-q", url, check.to_str().unwrap()],
    );
    let book = check.join("book-example");
    let verify = common::run(&book, &["comments", "verify"]);
    assert_eq!(verify.code, 0, "{}{}", verify.stdout, verify.stderr);
    let listed = common::run(&book, &["comments", "ls", "--json"]);
    let all: Value = serde_json::from_str(&listed.stdout).unwrap();
    for id in &acknowledged {
        assert_eq!(
            all.as_array()
                .unwrap()
                .iter()
                .filter(|c| &c["id"] == *id)
                .count(),
            1,
            "{id}"
        );
    }
    let md = std::fs::read_to_string(check.join(chapter)).unwrap();
    assert!(
        md.contains("Edit 3 by the author.") && !md.contains("<<<<<<<"),
        "{md}"
    );

    // The hub follows the branch: the chapter it serves has the author's last edit.
    forge::wait_served(
        &proxy,
        ("bob", "b-pass"),
        "/b/main/guide/sensors.html",
        "Edit 3 by the author.",
    );
}

/// What the reviewers of a load wrote, as acknowledged: new comments' ids, and replies'
/// bodies (each unique); and how many writes were not acknowledged.
#[derive(Default, Debug)]
struct Acknowledged {
    comments: Vec<String>,
    replies: Vec<String>,
    refused: usize,
    /// What the writes not acknowledged got: (status, answer).
    why: Vec<(u16, String)>,
}

/// `writes` writes by `user` through `proxy`: every third one a reply to one of `hot` (a
/// comment both hubs have), the others new comments. Not acknowledged: a 503, or no answer
/// (a killed hub).
fn load(proxy: &Proxy, user: &str, hot: &[String], writes: usize) -> Acknowledged {
    let page = "book-example/src/guide/sensors";
    let mut out = Acknowledged::default();
    for i in 0..writes {
        if i % 3 == 2 {
            let body = format!("{user} reply #{i}");
            let target = &hot[i % hot.len()];
            let patch = json!({"page": page, "id": target, "reply": {"body": body}});
            match as_reviewer(proxy, user, "PATCH", &format!("{API}comments"), &patch) {
                (200, _) => out.replies.push(body),
                (code @ (0 | 502 | 503), v) => {
                    out.refused += 1;
                    out.why.push((code, v.to_string()));
                }
                (code, other) => panic!("{user} reply #{i}: {code} {other}"),
            }
        } else {
            let body = json!({"page": page, "space": "book", "scope": "page", "body": format!("{user} #{i}")});
            match as_reviewer(proxy, user, "POST", &format!("{API}comments"), &body) {
                (201, c) => out.comments.push(c["id"].as_str().unwrap().to_string()),
                (code @ (0 | 502 | 503), v) => {
                    out.refused += 1;
                    out.why.push((code, v.to_string()));
                }
                (code, other) => panic!("{user} #{i}: {code} {other}"),
            }
        }
    }
    out
}

/// Checks the remote against what was acknowledged: every comment created once, every reply
/// once in its thread, `comments verify` clean on a fresh clone, no conflict markers, and the
/// author's commits kept. Returns the comments in the remote.
fn check_remote(url: &str, dir: &Path, acked: &[Acknowledged], subjects: &[String]) -> Vec<Value> {
    let check = dir.join("check");
    git(
        Path::new("/"),
        &["clone", "-q", url, check.to_str().unwrap()],
    );
    let log = git(&check, &["log", "--format=%s", "main"]);
    for id in acked.iter().flat_map(|a| &a.comments) {
        let created = log
            .lines()
            .filter(|l| l.starts_with(&format!("notabene: new comment {id} ")))
            .count();
        assert_eq!(created, 1, "{id}");
    }
    for subject in subjects {
        assert_eq!(log.lines().filter(|l| l == subject).count(), 1, "{subject}");
    }
    let book = check.join("book-example");
    let verify = common::run(&book, &["comments", "verify"]);
    assert_eq!(verify.code, 0, "{}{}", verify.stdout, verify.stderr);
    let grep = std::process::Command::new("grep")
        .args(["-rl", "<<<<<<<", "."])
        .current_dir(&check)
        .output()
        .unwrap();
    assert!(
        grep.stdout.is_empty(),
        "conflict markers in {}",
        String::from_utf8_lossy(&grep.stdout)
    );
    let listed = common::run(&book, &["comments", "ls", "--json"]);
    let all: Vec<Value> = serde_json::from_str(&listed.stdout).unwrap();
    for id in acked.iter().flat_map(|a| &a.comments) {
        assert_eq!(all.iter().filter(|c| &c["id"] == id).count(), 1, "{id}");
    }
    let bodies: Vec<&str> = all
        .iter()
        .flat_map(|c| c["thread"].as_array().unwrap())
        .filter_map(|m| m["body"].as_str())
        .collect();
    for reply in acked.iter().flat_map(|a| &a.replies) {
        assert_eq!(bodies.iter().filter(|b| *b == reply).count(), 1, "{reply}");
    }
    all
}

/// How many comments of `all` a load's reviewers made (`rN #i`).
fn loaded(all: &[Value]) -> usize {
    all.iter()
        .filter(|c| {
            let body = c["thread"][0]["body"].as_str().unwrap_or("");
            body.starts_with('r') && body.contains(" #")
        })
        .count()
}

/// `method path` as reviewer `user` (password `pw`, of [`forge::ten_reviewers`]) through `proxy`.
fn as_reviewer(proxy: &Proxy, user: &str, method: &str, path: &str, body: &Value) -> (u16, Value) {
    forge::through(proxy, Some((user, "pw")), method, path, body)
}

/// Two hubs on `url`, each behind its own sign-in proxy for the ten reviewers, and `hot`
/// comments made through the first that both serve.
struct TwoHubs {
    hubs: Vec<Hub>,
    proxies: Vec<Proxy>,
    hot: Vec<String>,
}

fn two_hubs(tools: &(std::path::PathBuf, std::path::PathBuf), url: &str) -> TwoHubs {
    let users = forge::ten_reviewers();
    let refs = forge::users(&users);
    let hubs = vec![
        Hub::start(url, &["--book", "book-example"]),
        Hub::start(url, &["--book", "book-example"]),
    ];
    let proxies: Vec<Proxy> = hubs
        .iter()
        .map(|h| Proxy::start(tools, h.port, &refs))
        .collect();
    let page = "book-example/src/guide/sensors";
    let hot: Vec<String> = (0..3)
        .map(|i| {
            let body = json!({"page": page, "space": "book", "scope": "page", "body": format!("hot #{i}")});
            let (code, c) = as_reviewer(&proxies[0], "r0", "POST", &format!("{API}comments"), &body);
            assert_eq!(code, 201, "{c}");
            c["id"].as_str().unwrap().to_string()
        })
        .collect();
    crate::support::wait::until(
        Duration::from_secs(30),
        "the second hub to have the hot comments",
        || {
            let (code, list) = as_reviewer(
                &proxies[1],
                "r1",
                "GET",
                &format!("{API}comments?page={page}"),
                &Value::Null,
            );
            let has = |id: &String| {
                list.as_array()
                    .is_some_and(|l| l.iter().any(|c| &c["id"] == id))
            };
            (code == 200 && hot.iter().all(has)).then_some(())
        },
    );
    TwoHubs { hubs, proxies, hot }
}

#[test]
fn two_hubs_on_one_remote_converge_under_ten_reviewers_and_an_author() {
    let Some(tools) = forge::tools("hub::two_hubs…") else {
        return;
    };
    let o = Origin::start(&tools);
    let (work, url) = (&o.work, &o.url);
    let two = two_hubs(&tools, url);
    let author = work.path().join("author");
    author_clone(url, &author);
    let (acked, subjects) = std::thread::scope(|s| {
        let writers: Vec<_> = (0..10)
            .map(|i| {
                let (proxy, hot) = (&two.proxies[i % 2], &two.hot);
                s.spawn(move || load(proxy, &format!("r{i}"), hot, 30))
            })
            .collect();
        let subjects: Vec<String> = (1..=5)
            .map(|i| {
                std::thread::sleep(Duration::from_millis(700));
                author_push(
                    &author,
                    "book-example/src/guide/sensors.md",
                    &format!("Author edit {i}."),
                )
            })
            .collect();
        let acked: Vec<Acknowledged> = writers.into_iter().map(|w| w.join().unwrap()).collect();
        (acked, subjects)
    });
    let written: usize = acked
        .iter()
        .map(|a| a.comments.len() + a.replies.len())
        .sum();
    let refused: usize = acked.iter().map(|a| a.refused).sum();
    assert_eq!(written + refused, 300);
    // The hubs retry a push the other's moved branch refused: every write here is taken.
    assert_eq!(
        refused,
        0,
        "{acked:?}\n{}\n{}",
        two.hubs[0].said(),
        two.hubs[1].said()
    );
    let all = check_remote(url, work.path(), &acked, &subjects);
    assert_eq!(
        loaded(&all),
        written - acked.iter().map(|a| a.replies.len()).sum::<usize>()
    );
    drop(two);
}

#[test]
fn a_hub_killed_during_the_load_loses_no_acknowledged_write() {
    let Some(tools) = forge::tools("hub::a_hub_killed…") else {
        return;
    };
    let o = Origin::start(&tools);
    let (work, url) = (&o.work, &o.url);
    let mut two = two_hubs(&tools, url);
    let victim = two.hubs[0].pid();
    let acked = std::thread::scope(|s| {
        let writers: Vec<_> = (0..6)
            .map(|i| {
                let (proxy, hot) = (&two.proxies[i % 2], &two.hot);
                s.spawn(move || load(proxy, &format!("r{i}"), hot, 20))
            })
            .collect();
        std::thread::sleep(Duration::from_millis(1500));
        let killed = std::process::Command::new("kill")
            .args(["-KILL", &victim.to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        writers
            .into_iter()
            .map(|w| w.join().unwrap())
            .collect::<Vec<Acknowledged>>()
    });
    let refused: usize = acked.iter().map(|a| a.refused).sum();
    assert!(
        refused > 0,
        "the killed hub refused nothing: killed too late? {acked:?}"
    );
    let all = check_remote(url, work.path(), &acked, &[]);
    // Nothing but what was acknowledged, and at most one write per hub under way when it died.
    // Beyond what was acknowledged, at most the writes under way on the killed hub (one per
    // reviewer writing through it), each whole (`comments verify` above).
    let acked_comments: usize = acked.iter().map(|a| a.comments.len()).sum();
    let extra = loaded(&all) - acked_comments;
    assert!(extra <= 3, "{extra} comments not acknowledged: {acked:?}");
    // Restarted on its data directory, the hub serves and takes writes again.
    let data = two.hubs[0].data.clone();
    two.hubs[0] = Hub::start_in(url, &data, &["--book", "book-example"]);
    let users = forge::ten_reviewers();
    let refs = forge::users(&users);
    let proxy = Proxy::start(&tools, two.hubs[0].port, &refs);
    let body = json!({"page": "book-example/src/guide/sensors", "space": "book", "scope": "page", "body": "after the restart"});
    let (code, c) = as_reviewer(&proxy, "r3", "POST", &format!("{API}comments"), &body);
    assert_eq!(code, 201, "{c} {}", two.hubs[0].said());
    let check = work.path().join("after");
    git(
        Path::new("/"),
        &["clone", "-q", url, check.to_str().unwrap()],
    );
    let log = git(&check, &["log", "-1", "--format=%an | %s", "main"]);
    assert_eq!(
        log.trim(),
        format!(
            "Reviewer 3 | notabene: new comment {} on book-example/src/guide/sensors",
            c["id"].as_str().unwrap()
        )
    );
}

/// GitHub's signature of `body` with `secret`: `sha256=<hex of HMAC-SHA256>`.
fn github_signature(secret: &str, body: &[u8]) -> String {
    use hmac::{KeyInit, Mac};
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body);
    let hex: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256={hex}")
}

#[test]
fn a_signed_push_webhook_makes_the_hub_fetch_and_a_forged_one_is_refused() {
    let Some(tools) = forge::tools("hub::a_signed_push_webhook…") else {
        return;
    };
    let o = Origin::start(&tools);
    let (work, url) = (&o.work, &o.url);
    let args = [
        "--book",
        "book-example",
        "--poll",
        "0",
        "--webhook-secret-env",
        "NB_HOOK",
    ];
    let hub = Hub::start_env(url, &args, &[("NB_HOOK", "s3cret hook")]);
    let proxy = Proxy::start(&tools, hub.port, USERS);
    assert_eq!(
        as_user(&proxy, Some("bob"), "GET", "/b/main/", &Value::Null).0,
        200
    );
    let author = work.path().join("author");
    author_clone(url, &author);
    author_push(
        &author,
        "book-example/src/guide/sensors.md",
        "Told by a webhook.",
    );

    let event = br#"{"ref":"refs/heads/main","after":"0000"}"#;
    let hook = |headers: &[(&str, &str)]| request(hub.port, "POST", "/hooks/push", headers, event);
    let refused = (
        401,
        "notabene: webhook refused: bad signature or token\n".to_string(),
    );
    assert_eq!(
        hook(&[("X-Hub-Signature-256", &github_signature("wrong", event))]),
        refused
    );
    assert_eq!(hook(&[("X-Gitlab-Token", "s3cret hoo")]), refused);
    assert_eq!(hook(&[]), refused);
    // Signed for another body: refused.
    let other = github_signature("s3cret hook", br#"{"ref":"refs/heads/main"}"#);
    assert_eq!(hook(&[("X-Hub-Signature-256", &other)]), refused);

    let signed = github_signature("s3cret hook", event);
    assert_eq!(
        hook(&[("X-GitHub-Event", "push"), ("X-Hub-Signature-256", &signed)]),
        (202, "notabene: fetching\n".to_string())
    );
    forge::wait_served(
        &proxy,
        ("bob", "b-pass"),
        "/b/main/guide/sensors.html",
        "Told by a webhook.",
    );
    // GitLab's token: taken too.
    assert_eq!(hook(&[("X-Gitlab-Token", "s3cret hook")]).0, 202);
}

#[test]
fn a_hostile_branch_runs_nothing_and_reads_nothing_outside_the_checkout() {
    let Some(tools) = forge::tools("hub::a_hostile_branch…") else {
        return;
    };
    let o = Origin::start(&tools);
    let (work, repo, url) = (&o.work, &o.repo, &o.url);
    let ran = work.path().join("ran");
    let sh = |what: &str| format!("sh -c 'touch {}/{what}'", ran.display());
    std::fs::create_dir_all(&ran).unwrap();
    // Commands, a script of its own, a 404 page and includes that climb out (by `..`, and by
    // a symlink in the repository to /etc).
    push_branch(repo, "hostile", |r| {
        let toml = r.join("book-example/book.toml");
        let text = std::fs::read_to_string(&toml).unwrap().replace(
            "additional-js = [",
            "input-404 = \"../../../../../../etc/passwd\"\nadditional-js = [\"evil.js\", ",
        ) + &format!(
            "\n[preprocessor.pwn]\ncommand = \"{}\"\n\n[output.pwn]\ncommand = \"{}\"\n",
            sh("preprocessor"),
            sh("renderer")
        );
        std::fs::write(&toml, text).unwrap();
        std::fs::write(
            r.join("book-example/evil.js"),
            "fetch('/b/hostile/__notabene/api/comments')",
        )
        .unwrap();
        std::os::unix::fs::symlink("/etc", r.join("etc-link")).unwrap();
        let chapter = r.join("book-example/src/guide/sensors.md");
        let md = std::fs::read_to_string(&chapter).unwrap()
            + "\nBy dots: {{#include ../../../../../../../../../../etc/passwd}}\n\nBy a link: {{#include ../../../etc-link/passwd}}\n";
        std::fs::write(&chapter, md).unwrap();
    });
    // A chapter that is a symlink out of the repository.
    push_branch(repo, "linked", |r| {
        let src = r.join("book-example/src");
        std::os::unix::fs::symlink("/etc/passwd", src.join("passwd.md")).unwrap();
        let summary =
            std::fs::read_to_string(src.join("SUMMARY.md")).unwrap() + "- [Passwords](passwd.md)\n";
        std::fs::write(src.join("SUMMARY.md"), summary).unwrap();
    });
    // A file mdBook would copy into the site, a symlink out of the repository.
    push_branch(repo, "copies-out", |r| {
        std::os::unix::fs::symlink("/etc/passwd", r.join("book-example/src/images/shadow.png"))
            .unwrap();
    });
    // The reader client written through a path of its book.toml that leaves the checkout.
    let outside = work.path().join("outside");
    push_branch(repo, "writes-out", |r| {
        let toml = r.join("book-example/book.toml");
        let rel = format!(
            "../../../../../../../../../..{}/notabene.js",
            outside.display()
        );
        let text = std::fs::read_to_string(&toml)
            .unwrap()
            .replace("\"theme/notabene.js\"", &format!("{rel:?}"));
        std::fs::write(&toml, text).unwrap();
    });

    let hub = Hub::start(url, &["--book", "book-example", "--branch", "*"]);
    let proxy = Proxy::start(&tools, hub.port, USERS);
    let get = |path: &str| as_user(&proxy, Some("bob"), "GET", path, &Value::Null);
    let (code, page) = get("/b/hostile/guide/sensors.html");
    let page = page.as_str().unwrap_or_default().to_string();
    assert_eq!(code, 200, "{page}\n{}", hub.said());
    let note = "names a file outside the repository; it was not read";
    assert_eq!(page.matches(note).count(), 2, "{page}");
    assert!(
        !page.contains("root:x:0:0") && !page.contains("evil.js"),
        "{page}"
    );
    let (code, missing) = get("/b/hostile/no-such-page.html");
    assert_eq!(code, 404);
    assert!(!missing.as_str().unwrap_or_default().contains("root:x:0:0"));
    let (_, index) = get("/");
    let index = index.as_str().unwrap_or_default().to_string();
    let skipped = format!(
        " <small>(built; skipped from its book.toml, never run: preprocessor.pwn (command &quot;{}&quot;), output.pwn (command &quot;{}&quot;), output.html.additional-js &quot;evil.js&quot;, output.html.additional-js &quot;mermaid/mermaid.min.js&quot;, output.html.additional-js &quot;mermaid/mermaid-init.js&quot;, output.html.input-404)</small>",
        sh("preprocessor").replace('\'', "&#39;"),
        sh("renderer").replace('\'', "&#39;")
    );
    let line = index
        .lines()
        .find(|l| l.contains("<a href=\"/b/hostile/\">hostile</a>"))
        .unwrap_or_default();
    assert!(
        line.ends_with(&format!("{skipped}</li>")),
        "{index}\n{skipped}"
    );
    assert_eq!(std::fs::read_dir(&ran).unwrap().count(), 0, "a command ran");

    // Refused whole: a chapter that is a symlink out, a client file written out.
    for (branch, why) in [
        (
            "linked",
            "the branch reads outside the repository: the chapter \"passwd.md\" (SUMMARY.md)",
        ),
        (
            "copies-out",
            "the branch reads outside the repository: the symlink images/shadow.png",
        ),
        (
            "writes-out",
            "the branch reads outside the repository: additional-js",
        ),
    ] {
        let (code, text) = get(&format!("/b/{branch}/"));
        assert_eq!(
            (code, text),
            (
                502,
                json!("notabene: the branch cannot be built (see the hub's log)\n")
            ),
            "{branch}"
        );
        assert!(hub.said().contains(why), "{branch}: {}", hub.said());
    }
    assert!(
        !outside.exists(),
        "the client was written outside the checkout"
    );
}

#[test]
fn without_a_proxy_reviewers_prove_who_they_are_with_their_token() {
    let Some(tools) = forge::tools("hub::without_a_proxy…") else {
        return;
    };
    use sha2::Digest;
    let o = Origin::start(&tools);
    let (work, url) = (&o.work, &o.url);
    let token = "alice-secret-token-0123456789";
    let hash: String = sha2::Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let file = work.path().join("reviewers.toml");
    std::fs::write(
        &file,
        format!("[[reviewer]]\nname = \"Alice Liddell\"\nemail = \"alice@example.org\"\ntoken-sha256 = \"{hash}\"\n"),
    )
    .unwrap();
    let hub = Hub::start_reviewers(url, &file, &["--book", "book-example"]);
    let host = format!("127.0.0.1:{}", hub.port);
    let status =
        |headers: &[(&str, &str)]| request(hub.port, "GET", &format!("{API}status"), headers, b"");
    let unknown = (
        401,
        "notabene: sign in first: no known token (/sign-in)\n".to_string(),
    );
    assert_eq!(status(&[]), unknown);
    assert_eq!(
        status(&[("Authorization", "Bearer alice-secret-token-012345678X")]),
        unknown
    );
    // Headers a proxy would set mean nothing here.
    assert_eq!(
        status(&[("X-Forwarded-Email", "alice@example.org")]),
        unknown
    );
    let bearer = format!("Bearer {token}");
    let (code, s) = status(&[("Authorization", &bearer)]);
    assert_eq!(code, 200, "{s}");
    assert_eq!(
        serde_json::from_str::<Value>(&s).unwrap()["identity"],
        "Alice Liddell <alice@example.org>"
    );

    // The sign-in page sets the cookie; a wrong token gets the form again.
    let form = ("Content-Type", "application/x-www-form-urlencoded");
    let (code, _) = request(
        hub.port,
        "POST",
        "/sign-in",
        &[form],
        b"token=nope-nope-nope-nope",
    );
    assert_eq!(code, 401);
    let mut s = std::net::TcpStream::connect(("127.0.0.1", hub.port)).unwrap();
    use std::io::{Read, Write};
    s.write_all(&crate::support::serve::request_bytes(
        hub.port,
        "POST",
        "/sign-in",
        &[form],
        format!("token={token}").as_bytes(),
    ))
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    assert!(raw.starts_with("HTTP/1.1 303 "), "{raw}");
    let cookie_line = raw
        .lines()
        .find(|l| l.to_ascii_lowercase().starts_with("set-cookie:"))
        .unwrap()
        .to_string();
    assert_eq!(
        cookie_line,
        format!("set-cookie: nb-hub-token={token}; Path=/; HttpOnly; SameSite=Strict")
    );
    let cookie = format!("nb-hub-token={token}");
    let (code, _) = status(&[("Cookie", &cookie)]);
    assert_eq!(code, 200);

    // A write with the cookie from another site's page: refused; from the hub's own: Alice's commit.
    let body = json!({"page": "book-example/src/guide/sensors", "space": "book", "scope": "page", "body": "With a token."}).to_string();
    let evil = request(
        hub.port,
        "POST",
        &format!("{API}comments"),
        &[("Cookie", &cookie), ("Origin", "http://evil.example")],
        body.as_bytes(),
    );
    assert_eq!(evil.0, 403, "{evil:?}");
    let own = format!("http://{host}");
    let (code, c) = request(
        hub.port,
        "POST",
        &format!("{API}comments"),
        &[("Cookie", &cookie), ("Origin", &own)],
        body.as_bytes(),
    );
    assert_eq!(code, 201, "{c}");
    let log = git(&o.bare(), &["log", "-1", "--format=%an <%ae>", "main"]);
    assert_eq!(log.trim(), "Alice Liddell <alice@example.org>");
}

#[test]
fn a_branch_the_remote_refuses_is_served_read_only_saying_why() {
    let Some(tools) = forge::tools("hub::a_branch_the_remote_refuses…") else {
        return;
    };
    let o = Origin::start(&tools);
    let (repo, url) = (&o.repo, &o.url);
    push_branch(repo, "frozen", |r| {
        std::fs::write(r.join("book-example/FROZEN.md"), "frozen\n").unwrap();
    });
    let hook = o.bare().join("hooks/pre-receive");
    std::fs::write(
        &hook,
        "#!/bin/sh\nwhile read old new ref; do [ \"$ref\" = refs/heads/frozen ] && { echo 'frozen is read-only' >&2; exit 1; }; done; exit 0\n",
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let hub = Hub::start(url, &["--book", "book-example", "--branch", "*"]);
    let proxy = Proxy::start(&tools, hub.port, USERS);
    let new = |branch: &str| {
        let body = json!({"page": "book-example/src/guide/sensors", "space": "book", "scope": "page", "body": format!("On {branch}.")});
        as_user(
            &proxy,
            Some("alice"),
            "POST",
            &format!("/b/{branch}/__notabene/api/comments"),
            &body,
        )
    };
    assert_eq!(
        new("frozen"),
        (
            503,
            json!({"error": "not saved: the branch could not be pushed; try again"})
        )
    );
    let (_, status) = as_user(
        &proxy,
        Some("alice"),
        "GET",
        "/b/frozen/__notabene/api/status",
        &Value::Null,
    );
    let why = status["readOnly"].as_str().unwrap_or_default().to_string();
    assert!(
        why.starts_with("this branch cannot be pushed to: ")
            && why.contains("pre-receive hook declined"),
        "{status}"
    );
    assert_eq!(status["writable"], false);
    assert_eq!(new("frozen"), (403, json!({ "error": why })));
    // The write given up is not in the branch's book, nor in the remote; main takes writes.
    let (_, list) = as_user(
        &proxy,
        Some("alice"),
        "GET",
        "/b/frozen/__notabene/api/comments?page=book-example/src/guide/sensors",
        &Value::Null,
    );
    assert!(!list.to_string().contains("On frozen."), "{list}");
    let log = git(&o.bare(), &["log", "--format=%s", "frozen"]);
    assert!(!log.contains("notabene:"), "{log}");
    assert_eq!(new("main").0, 201);
}

#[test]
fn past_max_branches_the_least_recently_used_stops_and_comes_back_on_request() {
    let Some(tools) = forge::tools("hub::past_max_branches…") else {
        return;
    };
    let o = Origin::start(&tools);
    let (repo, url) = (&o.repo, &o.url);
    push_branch(repo, "second", |r| {
        std::fs::write(r.join("book-example/SECOND.md"), "second\n").unwrap();
    });
    let hub = Hub::start(
        url,
        &[
            "--book",
            "book-example",
            "--branch",
            "*",
            "--max-branches",
            "1",
        ],
    );
    let proxy = Proxy::start(&tools, hub.port, USERS);
    let built = |proxy: &Proxy| -> Vec<String> {
        let (_, index) = as_user(proxy, Some("bob"), "GET", "/", &Value::Null);
        index
            .as_str()
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("(built"))
            .filter_map(|l| l.split("\">").nth(1)?.split('<').next().map(str::to_string))
            .collect()
    };
    let page = |branch: &str| {
        as_user(
            &proxy,
            Some("bob"),
            "GET",
            &format!("/b/{branch}/guide/sensors.html"),
            &Value::Null,
        )
        .0
    };
    assert_eq!(page("main"), 200);
    assert_eq!(built(&proxy), ["main"]);
    assert_eq!(page("second"), 200);
    assert_eq!(built(&proxy), ["second"]);
    // Back on request, from its clone; a write to it lands.
    assert_eq!(page("main"), 200);
    assert_eq!(built(&proxy), ["main"]);
    let body = json!({"page": "book-example/src/guide/sensors", "space": "book", "scope": "page", "body": "After a restart of the branch."});
    assert_eq!(
        as_user(
            &proxy,
            Some("bob"),
            "POST",
            &format!("{API}comments"),
            &body
        )
        .0,
        201
    );
}

#[test]
fn a_commit_holds_the_files_of_its_write_alone() {
    let Some(tools) = forge::tools("hub::a_commit_holds…") else {
        return;
    };
    let o = Origin::start(&tools);
    // The reader client listed inside the book's sources: the hub writes it there (untracked)
    // before the first build; no reviewer's commit may carry it.
    push_branch(&o.repo, "client-in-src", |r| {
        let toml = r.join("book-example/book.toml");
        let text = std::fs::read_to_string(&toml)
            .unwrap()
            .replace("\"theme/notabene.js\"", "\"src/notabene.js\"");
        std::fs::write(&toml, text).unwrap();
    });
    let hub = Hub::start(&o.url, &["--book", "book-example", "--branch", "*"]);
    let proxy = Proxy::start(&tools, hub.port, USERS);
    let body = json!({"page": "book-example/src/guide/sensors", "space": "book", "scope": "page", "body": "Only mine."});
    let (code, c) = as_user(
        &proxy,
        Some("alice"),
        "POST",
        "/b/client-in-src/__notabene/api/comments",
        &body,
    );
    assert_eq!(code, 201, "{c} {}", hub.said());
    let files = git(
        &o.bare(),
        &["show", "--name-only", "--format=", "client-in-src"],
    );
    assert_eq!(
        files.trim(),
        format!(
            "book-example/.notabene/book-example/src/guide/sensors/{}.json",
            c["id"].as_str().unwrap()
        )
    );
}

/// The in-page editor under the review server: a maintainer's edit of a block, with the
/// comment it answers closed, is one commit authored by them in the remote (the chapter, the
/// journal and the comment); a reviewer without the role is refused, and nothing moves.
#[test]
fn a_maintainers_edit_in_the_page_is_one_commit_by_them_and_a_reviewer_is_refused() {
    let Some(tools) = forge::tools("hub::a_maintainers_edit…") else {
        return;
    };
    let o = Origin::start(&tools);
    let hub = Hub::start(
        &o.url,
        &["--book", "book-example", "--maintainer", "max@example.org"],
    );
    let proxy = Proxy::start(&tools, hub.port, USERS);
    let page = "book-example/src/guide/sensors";
    let (code, v) = as_user(
        &proxy,
        Some("max"),
        "GET",
        &format!("{API}page?page={page}"),
        &Value::Null,
    );
    assert_eq!(code, 200, "{v} {}", hub.said());
    let block = v["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| {
            b["markdown"]
                .as_str()
                .unwrap()
                .starts_with("Every entry needs")
        })
        .unwrap()
        .clone();
    let old = block["markdown"].as_str().unwrap();
    let new = old.replace("Every entry needs", "Each entry needs");
    let body = json!({
        "page": page, "block": block["id"], "expected": old, "markdown": new,
        "close": ["c_mwt1s7r4gz7k"], "note": "Each, not every.",
    });
    let before = remote_log(&o.bare());
    // A reviewer: refused, for reading the blocks and for writing them.
    let (code, v) = as_user(&proxy, Some("alice"), "PUT", &format!("{API}page"), &body);
    assert_eq!(
        (code, v),
        (
            403,
            json!({ "error": "only a maintainer may edit the book" })
        )
    );
    let (code, _) = as_user(
        &proxy,
        Some("alice"),
        "GET",
        &format!("{API}page?page={page}"),
        &Value::Null,
    );
    assert_eq!(code, 403);
    assert_eq!(remote_log(&o.bare()), before);
    // The maintainer: one commit by them, pushed before the answer.
    let (code, v) = as_user(&proxy, Some("max"), "PUT", &format!("{API}page"), &body);
    assert_eq!(code, 200, "{v} {}", hub.said());
    let log = remote_log(&o.bare());
    assert_eq!(log.len(), before.len() + 1, "{log:?}");
    let journal = v["journal"].as_str().unwrap();
    assert_eq!(
        log[0],
        format!(
            "Max Maintainer <max@example.org> | mdbook-notabene hub | notabene: edit {page} | book-example/.notabene/book-example/src/guide/sensors/c_mwt1s7r4gz7k.json | book-example/.notabene/journal.json | book-example/src/guide/sensors.md"
        ),
        "journal {journal}"
    );
    let chapter = git(
        &o.bare(),
        &["show", "main:book-example/src/guide/sensors.md"],
    );
    assert!(chapter.contains("Each entry needs a `kind`"), "{chapter}");
}
