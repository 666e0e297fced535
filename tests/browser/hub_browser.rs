//! The hub in headless Chromium, through its real parts (`support::forge`: a git remote behind
//! nginx, a sign-in proxy with basic authentication): two reviewers comment on one branch, each
//! under their own name, and see each other's comments; a script a branch's Markdown carries is
//! blocked by the page's Content-Security-Policy while the reader client runs.

use crate::harness::serving::{ISLAND, ctrl_enter, drag_over_text, type_text, wait_writable};
use crate::harness::{Page, chromium};
use crate::support::common::git;
use crate::support::forge::{self, Hub, Origin, Proxy, basic, push_branch};
use serde_json::json;
use std::time::Duration;

const SECS: Duration = Duration::from_secs(20);

const USERS: &[forge::User] = &[
    ("alice", "a-pass", "alice@example.org", "Alice Liddell"),
    ("bob", "b-pass", "bob@example.org", "Bob Builder"),
];

/// The hub's browser tests start nginx, fcgiwrap, a hub and its builds: one at a time, so that
/// the other browser tests, which wait on real time, do not share the two cores with two of them.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Navigates `p` to `url` and waits (60 s at most: a branch's first build is in the hub's first
/// answer) for the page to have loaded.
fn open(p: &mut Page, url: &str) {
    p.eval("window.__nbOldDocument = true");
    p.call("Page.navigate", json!({ "url": url }));
    p.wait_for(
        "!window.__nbOldDocument && document.readyState === 'complete'",
        Duration::from_secs(60),
    );
}

/// A page signed in through the proxy as `user`.
fn signed_in(exe: &std::path::Path, user: &str) -> Page {
    let mut p = Page::new(exe, 1280, 900);
    // A live reload (a write's rebuild served) can cut a page's loading between mdBook's
    // `mark.min.js` and its `searcher.js`: the document going away reports the searcher's
    // error as it goes. Nothing of the hub's; seen under CI's load only.
    p.expect_error("Mark is not defined");
    let pass = USERS.iter().find(|u| u.0 == user).unwrap().1;
    p.call(
        "Network.setExtraHTTPHeaders",
        json!({ "headers": { "Authorization": basic(user, pass) } }),
    );
    p
}

/// Whether the page's island holds a comment whose first message is `body` by `author`.
fn island_has(body: &str, author: &str) -> String {
    format!(
        "{ISLAND}.comments.some(c => c.thread[0].body === {} && c.thread[0].author === {})",
        json!(body),
        json!(author)
    )
}

/// The branch's status through the proxy (as Alice).
fn status(proxy: &Proxy) -> serde_json::Value {
    let auth = basic("alice", "a-pass");
    let (_, text) = crate::support::serve::request(
        proxy.port,
        "GET",
        "/b/main/__notabene/api/status",
        &[
            ("Authorization", &auth),
            ("Host", &format!("127.0.0.1:{}", proxy.port)),
        ],
        b"",
    );
    serde_json::from_str(&text).unwrap_or_default()
}

/// Waits until the branch's book was rebuilt past `after` (a full build) and then stayed quiet
/// for 600 ms: a page opened then is not reloaded under the test's hands.
fn settle(proxy: &Proxy, after: u64) -> u64 {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let num = |v: &serde_json::Value, k: &str| v[k].as_u64().unwrap_or(0);
    while num(&status(proxy), "built") <= after {
        assert!(
            std::time::Instant::now() < deadline,
            "no rebuild after {after}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (mut g, mut since) = (num(&status(proxy), "generation"), std::time::Instant::now());
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let now = num(&status(proxy), "generation");
        if now != g {
            (g, since) = (now, std::time::Instant::now());
        } else if since.elapsed() >= Duration::from_millis(600) {
            return num(&status(proxy), "built");
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the branch keeps rebuilding"
        );
    }
}

/// Selects `sentence` on the page and comments `body` on it, through the reader client.
fn comment(p: &mut Page, sentence: &str, body: &str) {
    drag_over_text(p, sentence);
    p.wait_for("!document.querySelector('.nb-sel-btn').hidden", SECS);
    p.click(".nb-sel-btn");
    p.wait_for(
        "document.activeElement && document.activeElement.matches('.nb-compose textarea')",
        SECS,
    );
    type_text(p, body);
    ctrl_enter(p);
}

#[test]
fn two_reviewers_signed_in_comment_on_one_branch_under_their_own_names() {
    let Some(exe) = chromium() else { return };
    let Some(tools) = forge::tools("hub_browser::two_reviewers…") else {
        return;
    };
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let o = Origin::start(&tools);
    let hub = Hub::start(&o.url, &["--book", "book-example"]);
    let proxy = Proxy::start(&tools, hub.port, USERS);
    let page = format!(
        "http://127.0.0.1:{}/b/main/guide/installing.html",
        proxy.port
    );
    let (alice_name, bob_name) = (
        "Alice Liddell <alice@example.org>",
        "Bob Builder <bob@example.org>",
    );

    let built = status(&proxy)["built"].as_u64().unwrap_or(0);
    let mut alice = signed_in(&exe, "alice");
    open(&mut alice, &page);
    wait_writable(&mut alice);
    // The sign-in names her: no name to type, her name on the identity control.
    assert_eq!(
        alice.eval_str("document.querySelector('.nb-identity-btn').textContent"),
        "You: Alice Liddell"
    );
    comment(
        &mut alice,
        "You can install a prebuilt binary",
        "Alice's remark.",
    );
    alice.wait_for(&island_has("Alice's remark.", alice_name), SECS);
    let built = settle(&proxy, built);

    let mut bob = signed_in(&exe, "bob");
    open(&mut bob, &page);
    wait_writable(&mut bob);
    bob.wait_for(&island_has("Alice's remark.", alice_name), SECS);
    comment(&mut bob, "build from source with Cargo", "Bob's remark.");
    bob.wait_for(&island_has("Bob's remark.", bob_name), SECS);
    settle(&proxy, built);
    open(&mut bob, &page);
    wait_writable(&mut bob);

    // Alice sees Bob's after a reload.
    open(&mut alice, &page);
    wait_writable(&mut alice);
    alice.wait_for(&island_has("Bob's remark.", bob_name), SECS);
    // A reviewer edits no block: no ✎ (the server refuses her the blocks).
    alice.wait_for("!!document.documentElement.dataset.nbEditor", SECS);
    assert_eq!(
        alice.eval_str("document.documentElement.dataset.nbEditor + ' ' + document.querySelectorAll('.nb-edit-btn').length"),
        "off 0"
    );

    // Each thread offers edit and delete to its author alone, and resolve to no reviewer.
    // Its thread, opened from the panel's entry.
    // (the name shown on its first message, the actions offered)
    let actions = |p: &mut Page, body: &str| -> (String, Vec<String>) {
        let id = p.eval_str(&format!(
            "{ISLAND}.comments.find(c => c.thread[0].body === {}).id",
            json!(body)
        ));
        let thread = format!(".nb-thread[data-nb-id=\"{id}\"] .nb-actions-bar");
        p.eval(&format!("document.querySelector('li.nb-entry[data-nb-id=\"{id}\"]').scrollIntoView({{block: 'center'}})"));
        p.click(&format!("li.nb-entry[data-nb-id=\"{id}\"]"));
        p.wait_for(&format!("!!document.querySelector('{thread}')"), SECS);
        let names = p.eval(&format!(
            "[...document.querySelector('{thread}').querySelectorAll('button')].map(b => [...b.classList].find(k => k.startsWith('nb-act-')))"
        ));
        let shown = p.eval_str(&format!(
            "document.querySelector('.nb-thread[data-nb-id=\"{id}\"] .nb-author').textContent"
        ));
        p.key("Escape");
        (shown, serde_json::from_value(names).unwrap_or_default())
    };
    for (p, (own, me), (other, them)) in [
        (
            &mut alice,
            ("Alice's remark.", "Alice Liddell"),
            ("Bob's remark.", "Bob Builder"),
        ),
        (
            &mut bob,
            ("Bob's remark.", "Bob Builder"),
            ("Alice's remark.", "Alice Liddell"),
        ),
    ] {
        p.eval("window.scrollTo(0, 0)");
        if p.eval_bool("document.getElementById('nb-panel').hidden") {
            p.click("#nb-panel-toggle");
        }
        let edit_delete = ["nb-act-reply", "nb-act-edit", "nb-act-delete"].map(String::from);
        assert_eq!(actions(p, own), (me.to_string(), edit_delete.to_vec()));
        assert_eq!(
            actions(p, other),
            (them.to_string(), vec!["nb-act-reply".to_string()])
        );
        p.assert_no_errors();
    }

    // The remote: one commit per comment, each by its reviewer.
    let log = git(&o.bare(), &["log", "--format=%an <%ae> | %s", "-2", "main"]);
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(
        lines[0].starts_with(&format!("{bob_name} | notabene: new comment ")),
        "{log}"
    );
    assert!(
        lines[1].starts_with(&format!("{alice_name} | notabene: new comment ")),
        "{log}"
    );
}

#[test]
fn a_script_in_a_branch_is_blocked_by_the_policy_and_the_client_still_runs() {
    let Some(exe) = chromium() else { return };
    let Some(tools) = forge::tools("hub_browser::a_script…") else {
        return;
    };
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let o = Origin::start(&tools);
    let api = "/b/hostile/__notabene/api/comments";
    let ran = o.work.path().join("ran");
    std::fs::create_dir_all(&ran).unwrap();
    // One branch with everything: a command in its book.toml, includes of /etc/passwd by `..`
    // and by a symlink, and scripts in its Markdown and in a page of its own.
    push_branch(&o.repo, "hostile", |r| {
        let toml = r.join("book-example/book.toml");
        let text = std::fs::read_to_string(&toml).unwrap()
            + &format!(
                "\n[preprocessor.pwn]\ncommand = \"sh -c 'touch {}/preprocessor'\"\n",
                ran.display()
            );
        std::fs::write(&toml, text).unwrap();
        std::os::unix::fs::symlink("/etc", r.join("etc-link")).unwrap();
        let chapter = r.join("book-example/src/guide/installing.md");
        let attack = format!(
            "\n<script>window.pwned = 1; fetch('{api}', {{method: 'POST', body: JSON.stringify({{page: 'book-example/src/guide/installing', space: 'book', scope: 'page', body: 'by a script'}})}});</script>\n\n<img src=\"data:,\" onerror=\"window.pwned = 2\">\n\n</main><script>window.pwned = 3</script><main>\n"
        );
        let includes = "\n{{#include ../../../../../../../../../../etc/passwd}}\n\n{{#include ../../../etc-link/passwd}}\n";
        let md = std::fs::read_to_string(&chapter).unwrap() + &attack + includes;
        std::fs::write(&chapter, md).unwrap();
        std::fs::write(
            r.join("book-example/src/evil.html"),
            "<script>window.pwned = 4</script>",
        )
        .unwrap();
    });
    let hub = Hub::start(&o.url, &["--book", "book-example", "--branch", "*"]);
    let proxy = Proxy::start(&tools, hub.port, USERS);
    let mut p = signed_in(&exe, "bob");
    for blocked in ["Content Security Policy", "Refused to execute"] {
        p.expect_error(blocked);
    }
    open(
        &mut p,
        &format!(
            "http://127.0.0.1:{}/b/hostile/guide/installing.html",
            proxy.port
        ),
    );
    // The reader client (the theme's scripts) runs and finds the write API.
    wait_writable(&mut p);
    assert_eq!(p.eval("typeof window.pwned"), json!("undefined"));
    // The marks around the content (their secret) never reach the reader.
    assert!(!p.eval_bool("document.documentElement.outerHTML.includes('nb-content-')"));
    // Nothing ran, nothing was read outside the checkout.
    assert_eq!(
        std::fs::read_dir(&ran).unwrap().count(),
        0,
        "the branch's command ran"
    );
    let text = p.eval_str("document.querySelector('main').textContent");
    assert!(!text.contains("root:x:0:0"), "{text}");
    assert_eq!(
        text.matches("names a file outside the repository; it was not read")
            .count(),
        2
    );
    let posted: Vec<String> = p
        .requests()
        .into_iter()
        .filter(|u| u.contains(api))
        .collect();
    assert!(
        posted.is_empty(),
        "the page's script reached the API: {posted:?}"
    );
    // A page the branch copied into its site runs nothing either.
    open(
        &mut p,
        &format!("http://127.0.0.1:{}/b/hostile/evil.html", proxy.port),
    );
    assert_eq!(p.eval("typeof window.pwned"), json!("undefined"));
    let log = git(&o.bare(), &["log", "--format=%s", "hostile"]);
    assert!(!log.contains("notabene:"), "{log}");
}
