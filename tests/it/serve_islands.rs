//! `serve`'s island patches and its rebuilds run side by side: a comment written while a
//! rebuild is under way is in the served chapter before that rebuild is served, and stays in
//! it when the rebuild — which read the store before the write — is swapped in.

use crate::support::serve::Server;
use crate::support::wait;
use serde_json::{Value, json};
use std::time::Duration;

/// How long the rebuild waits before it is served (`NOTABENE_WIDEN`): the window the write
/// lands in.
const WINDOW_MS: u64 = 6000;

#[test]
fn a_comment_written_during_a_rebuild_is_served_at_once_and_kept_by_the_rebuild() {
    let widen = format!("serve-before-swap:{WINDOW_MS}");
    let server = Server::start(&[("NOTABENE_WIDEN", widen.as_str())], |_| {});
    let builds = |server: &Server| server.status()["builds"].as_u64().unwrap();
    let before = builds(&server);
    // An edit of one chapter sets a rebuild off; it reads the store, then waits in the window.
    let sensors = server.book.join("src/guide/sensors.md");
    let text = std::fs::read_to_string(&sensors).unwrap();
    std::fs::write(
        &sensors,
        format!("{text}\nA paragraph added while reviewing.\n"),
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(WINDOW_MS / 2));
    // A comment on another chapter, written while that rebuild waits.
    let page = "book-example/src/guide/installing";
    let anchor = json!({ "quote": "Raspberry Pi", "prefix": "Most stations run on a ", "suffix": ", so the ARM builds", "section": "Installing Skylark" });
    let (code, text) = server.request(
        "POST",
        "/__notabene/api/comments",
        &[("Content-Type", "application/json")],
        json!({ "page": page, "space": "book", "scope": "selection", "anchor": anchor, "body": "Which Pi?" })
            .to_string()
            .as_bytes(),
    );
    assert_eq!(code, 201, "{text}");
    let id = serde_json::from_str::<Value>(&text).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let served = |server: &Server| {
        let (code, html) = server.request("GET", "/guide/installing.html", &[], b"");
        assert_eq!(code, 200);
        html.contains(&format!("\"id\":\"{id}\""))
    };
    // In the served chapter while the rebuild still waits: no build was served meanwhile.
    wait::until_every(
        Duration::from_secs(20),
        Duration::from_millis(10),
        "the comment in the served chapter",
        || served(&server).then_some(()),
    );
    assert_eq!(
        builds(&server),
        before,
        "the patch waited for the rebuild to be served"
    );
    // The rebuild is served; the chapter still has the comment (the build read the store before
    // it was written, and the next rebuild waits in the window too).
    wait::until_every(
        Duration::from_secs(30),
        Duration::from_millis(10),
        "the rebuild served",
        || (builds(&server) > before).then_some(()),
    );
    assert!(
        served(&server),
        "the rebuild served without the comment written while it ran"
    );
}
