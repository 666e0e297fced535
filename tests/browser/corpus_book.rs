//! A second real book, as a new user meets it: rust-lang's async-book (`tests/corpus/async-book`,
//! which has a second output, `[output.linkcheck]`), copied into a repository of its own, set
//! up with `notabene install` exactly as the README says, served with `mdbook-notabene serve`,
//! commented from the browser, then built with the real mdBook 0.5.
//!
//! The linkcheck backend is a stand-in here (a program of that name that reads the book and
//! succeeds), so the book runs with both of its outputs, unmodified.

use crate::harness::serving::*;
use crate::harness::{Page, chromium};
use crate::support::common::{self, corpus, find_tool, git_commit_all, run};
use crate::support::serve::Server;
use std::path::Path;
use std::time::Duration;

const QUOTE: &str = "This book is a guide to asynchronous programming in Rust.";

/// A directory holding a `mdbook-linkcheck` that reads the book and succeeds.
fn linkcheck_stand_in(dir: &Path) {
    let exe = dir.join("mdbook-linkcheck");
    common::write(&exe, "#!/bin/sh\ncat >/dev/null\n");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn the_async_book_installed_served_commented_and_built_with_mdbook() {
    let Some(exe) = chromium() else { return };
    let tmp = common::tempdir();
    let book = tmp.path().join("async-book");
    common::copy_dir(&corpus("async-book"), &book);
    git_commit_all(&book, "the book");
    // README: `cd my-book`, `notabene install`.
    let out = run(&book, &["install"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let tools = tmp.path().join("tools");
    std::fs::create_dir(&tools).unwrap();
    linkcheck_stand_in(&tools);
    let plugin_dir = Path::new(common::plugin_bin()).parent().unwrap();
    let path = format!(
        "{}:{}:{}",
        tools.display(),
        plugin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );

    // `mdbook-notabene serve`: the URL it prints opens the book.
    let server = Server::start_dir_with(
        &book,
        &[
            ("PATH", path.as_str()),
            ("NOTABENE_AUTHOR", "Robin Reviewer"),
            ("NOTABENE_AUTHOR_EMAIL", "robin@example.com"),
        ],
    );
    let mut p = Page::new(&exe, 1280, 900);
    // mdBook's own book.js asks the Rust playground about the runnable examples; this machine
    // has no network, and book.js leaves that failure uncaught. Nothing of ours.
    p.expect_error("at fetch_with_timeout");
    p.goto(&format!("{}intro.html", base(server.port)));
    wait_writable(&mut p);
    drag_over_text(&mut p, QUOTE);
    p.wait_for(
        "!document.querySelector('.nb-sel-btn').hidden",
        Duration::from_secs(10),
    );
    p.click(".nb-sel-btn");
    p.wait_for(
        "document.activeElement && document.activeElement.matches('.nb-compose textarea')",
        Duration::from_secs(10),
    );
    type_text(&mut p, "Say which runtime the examples use.");
    let dir = book.join(".notabene/src/intro");
    let before = comment_files(&dir);
    let generation = generation(server.port);
    ctrl_enter(&mut p);
    p.wait_for(
        "document.querySelector('dialog.nb-identity[open]')",
        Duration::from_secs(10),
    );
    p.eval("document.querySelector('.nb-identity-name').focus()");
    type_text(&mut p, "Robin Reviewer");
    p.eval("document.querySelector('.nb-identity-email').focus()");
    type_text(&mut p, "robin@example.com");
    p.click(".nb-identity-save");
    let c = wait_new_comment(&dir, &before, Duration::from_secs(20));
    assert_eq!(c["page"], "src/intro");
    assert_eq!(c["anchor"]["quote"], QUOTE);
    assert_eq!(
        c["thread"][0]["author"],
        "Robin Reviewer <robin@example.com>"
    );
    let id = c["id"].as_str().unwrap().to_string();
    wait_rebuilt(&mut p, server.port, generation);
    p.wait_for(
        &format!("document.querySelector('mark.nb-mark[data-nb-id=\"{id}\"]')"),
        Duration::from_secs(10),
    );
    let errors = p.unexpected_errors();
    assert!(errors.is_empty(), "page errors: {errors:#?}");
    drop(server);

    // The real mdBook builds both outputs, the comment marked in the HTML one.
    let mdbook = find_tool("mdbook").expect("mdbook 0.5 (.ci/run installs it)");
    let out = std::process::Command::new(mdbook)
        .arg("build")
        .current_dir(&book)
        .env("PATH", &path)
        .env_remove("NOTABENE_STORE")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mdbook build: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(book.join("book/html/intro.html")).unwrap();
    assert!(
        html.contains(&format!("data-nb-id=\"{id}\"")),
        "the built chapter marks the comment"
    );
}
