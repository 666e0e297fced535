//! The in-page editor's API under `serve`: `GET page` lists a chapter's top-level blocks as
//! their source bytes; `PUT page` replaces one, changing nothing else in the file, resolves the
//! comments it answers with one journal entry (a retry writes nothing twice), and refuses — with
//! nothing written — a stale block (409 with the current text), an edit that would change a
//! neighbouring block (an unclosed fence, an HTML comment, a list that takes in the next one), a
//! file git does not track, a new `{{#include}}` or `<script>`, and a block over the cap.
//! `POST asset` writes a pasted image next to the chapter under a content-hashed name, reuses
//! it for the same bytes, and refuses what is not an image whatever its name.

use crate::support::common;
use crate::support::serve::Server;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const PAGE: &str = "book-example/src/guide/sensors";
const API: &str = "/__notabene/api/page";

fn chapter(server: &Server) -> String {
    common::read(&server.book.join("src/guide/sensors.md"))
}

/// The block of the page whose source starts with `start`: (id, markdown).
fn block(server: &Server, start: &str) -> (String, String) {
    let (code, v) = server.json("GET", &format!("{API}?page={PAGE}"), &Value::Null);
    assert_eq!(code, 200, "{v}");
    let b = v["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["markdown"].as_str().unwrap().starts_with(start))
        .unwrap_or_else(|| panic!("a block starting {start:?} in {v}"));
    (
        b["id"].as_str().unwrap().to_string(),
        b["markdown"].as_str().unwrap().to_string(),
    )
}

fn put(server: &Server, body: Value) -> (u16, Value) {
    server.json("PUT", API, &body)
}

#[test]
fn get_page_lists_the_blocks_as_their_source_bytes() {
    let server = Server::start(&[], |_| {});
    let (code, v) = server.json("GET", &format!("{API}?page={PAGE}"), &Value::Null);
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["file"], json!("src/guide/sensors.md"));
    let kinds: Vec<&str> = v["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        &kinds[..8],
        [
            "heading",
            "paragraph",
            "heading",
            "table",
            "heading",
            "paragraph",
            "code",
            "heading"
        ]
    );
    // Every block's bytes are in the file, in order.
    let md = chapter(&server);
    let mut at = 0;
    for b in v["blocks"].as_array().unwrap() {
        let m = b["markdown"].as_str().unwrap();
        let found = md[at..].find(m).expect("the block's bytes in the file");
        at += found + m.len();
        assert_eq!(
            b["id"],
            json!(format!(
                "b{}",
                v["blocks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .position(|x| x == b)
                    .unwrap()
            ))
        );
    }
    let (code, v) = server.json(
        "GET",
        &format!("{API}?page=book-example/src/nope"),
        &Value::Null,
    );
    assert_eq!(
        (code, v),
        (
            404,
            json!({ "error": "page \"book-example/src/nope\" is not a chapter of this book (page)" })
        )
    );
}

#[test]
fn an_edit_changes_only_its_block_and_resolves_what_it_answers_once() {
    let server = Server::start(&[], |_| {});
    let before = chapter(&server);
    let (id, old) = block(&server, "Every entry needs");
    let new = old.replace(
        "Every entry needs a `kind` and a bus.",
        "Every entry needs a `kind` and a bus, and nothing more.",
    );
    let body = json!({
        "page": PAGE, "block": id, "expected": old, "markdown": new,
        "close": ["c_mwt1s7r4gz7k"], "note": "Said what an entry needs.",
    });
    let (code, v) = put(&server, body.clone());
    assert_eq!(code, 200, "{v}");
    assert_eq!(chapter(&server), before.replacen(&old, &new, 1));
    let journal = v["journal"].as_str().unwrap().to_string();
    assert_eq!(v["closed"], json!(["c_mwt1s7r4gz7k"]));
    let c: Value = serde_json::from_str(&common::read(
        &server.store().join(PAGE).join("c_mwt1s7r4gz7k.json"),
    ))
    .unwrap();
    assert_eq!(c["status"], json!("resolved"));
    assert_eq!(
        c["resolution"],
        json!({ "note": "Said what an entry needs.", "journalEntryId": journal, "by": "Sam Server <sam@example.com>" })
    );
    let entry = server.journal_entry(&journal);
    assert_eq!(
        entry["changes"],
        json!([{
            "page": PAGE, "file": "src/guide/sensors.md", "what": "Said what an entry needs.",
            "why": "“Anything else” reads as if other sensors were meant; say keys.", "comments": ["c_mwt1s7r4gz7k"],
        }])
    );
    // A retry (the answer lost) writes nothing twice.
    let n = server.journal().len();
    let (code, again) = put(&server, body);
    assert_eq!((code, &again["journal"]), (200, &json!(journal)), "{again}");
    assert_eq!(server.journal().len(), n);
    assert_eq!(chapter(&server), before.replacen(&old, &new, 1));
}

#[test]
fn refused_edits_write_nothing() {
    let server = Server::start(&[], |book| {
        common::write(
            &book.join("src/draft.md"),
            "# Draft\n\nNot committed yet.\n",
        );
        let summary = common::read(&book.join("src/SUMMARY.md"));
        common::write(
            &book.join("src/SUMMARY.md"),
            &format!("{summary}- [Draft](draft.md)\n"),
        );
        common::git(
            book.parent().unwrap(),
            &["add", "book-example/src/SUMMARY.md"],
        );
        common::git(book.parent().unwrap(), &["commit", "-qm", "summary"]);
    });
    let store = common::tree(&server.store());
    let before = chapter(&server);
    let (id, old) = block(&server, "Every entry needs");
    let refused = |markdown: &str, expected: &str, code: u16, error: &str| {
        let (got, v) = put(
            &server,
            json!({ "page": PAGE, "block": id, "expected": expected, "markdown": markdown }),
        );
        assert_eq!(
            (got, v["error"].as_str().unwrap_or("")),
            (code, error),
            "{markdown:?}: {v}"
        );
        assert_eq!(
            chapter(&server),
            before,
            "{markdown:?}: the chapter is as it was"
        );
        assert!(
            common::tree(&server.store()) == store,
            "the store is as it was"
        );
        v
    };
    let neighbour = |b: &str| {
        format!(
            "the new text would change the block after it or before it ({b}): close what it opens (a fence, a list, an HTML element) (markdown)"
        )
    };
    // An unclosed fence, an unclosed HTML comment: every block after would change.
    let next = format!("b{}", id[1..].parse::<usize>().unwrap() + 1);
    refused("```rust\nfn half(", &old, 422, &neighbour(&next));
    refused("<!-- a note", &old, 422, &neighbour(&next));
    // A list item right before a list: the two become one.
    let (cal, cal_old) = block(&server, "To calibrate");
    let (got, v) = put(
        &server,
        json!({ "page": PAGE, "block": cal, "expected": cal_old, "markdown": "1. Warm it up." }),
    );
    let list = format!("b{}", cal[1..].parse::<usize>().unwrap() + 1);
    assert_eq!(
        (got, v["error"].as_str().unwrap()),
        (422, neighbour(&list).as_str())
    );
    assert_eq!(chapter(&server), before);
    // A directive or a raw script the chapter did not have.
    refused(
        "Every entry: {{#include ../../book.toml}}",
        &old,
        422,
        "the editor adds no {{#…}} directive (an include, a playground): write it in the file (markdown)",
    );
    refused(
        "Every entry <script>alert(1)</script> needs a kind.",
        &old,
        422,
        "the editor adds no raw <script>: write it in the file (markdown)",
    );
    // Over the cap: the request itself is (a block is at most 1 MiB, as the request is).
    refused(&"x".repeat(1 << 20 | 1), &old, 413, "payload too large");
    // The file changed on disk since the editor opened it: 409 with what the block holds now.
    let changed = old.replace("Every entry", "Each entry");
    common::write(
        &server.book.join("src/guide/sensors.md"),
        &before.replacen(&old, &changed, 1),
    );
    let (got, v) = put(
        &server,
        json!({ "page": PAGE, "block": id, "expected": old, "markdown": "Hello." }),
    );
    assert_eq!(
        (got, v["current"]["markdown"].as_str()),
        (409, Some(changed.as_str())),
        "{v}"
    );
    assert_eq!(chapter(&server), before.replacen(&old, &changed, 1));
    // A chapter git does not track.
    let (code, v) = server.json(
        "GET",
        &format!("{API}?page=book-example/src/draft"),
        &Value::Null,
    );
    assert_eq!(code, 200, "{v}");
    let (got, v) = put(
        &server,
        json!({ "page": "book-example/src/draft", "block": "b1", "expected": "Not committed yet.", "markdown": "Now." }),
    );
    assert_eq!(
        (got, v["error"].as_str().unwrap()),
        (
            403,
            "src/draft.md is not tracked by git, so an edit could not be reviewed or undone: commit it first (git add src/draft.md) (page)"
        )
    );
    assert_eq!(
        common::read(&server.book.join("src/draft.md")),
        "# Draft\n\nNot committed yet.\n"
    );
}

/// The smallest PNG: its signature and an IHDR chunk are what is checked.
const PNG: &[u8] =
    b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89";

#[test]
fn a_pasted_image_is_written_next_to_its_chapter_once() {
    use base64::Engine;
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let server = Server::start(&[], |_| {});
    let post = |data: &[u8], name: &str| {
        server.json(
            "POST",
            "/__notabene/api/asset",
            &json!({ "page": PAGE, "filename": name, "data": b64(data) }),
        )
    };
    let (code, v) = post(PNG, "screenshot.png");
    assert_eq!(code, 201, "{v}");
    let name = v["name"].as_str().unwrap().to_string();
    assert!(
        name.starts_with("image-")
            && name.ends_with(".png")
            && name.len() == "image-".len() + 16 + 4,
        "{name}"
    );
    assert_eq!(v["markdown"], json!(format!("![](./{name})")));
    let file = server.book.join("src/guide").join(&name);
    assert_eq!(std::fs::read(&file).unwrap(), PNG);
    // The same bytes again, under another name: the same file, reused.
    let (code, again) = post(PNG, "copy.png");
    assert_eq!(
        (code, &again["name"], &again["reused"]),
        (200, &json!(name), &json!(true))
    );
    // An HTML file named .png is no image.
    let before = common::tree(&server.book.join("src/guide"));
    let (code, v) = post(b"<!doctype html><script>alert(1)</script>", "evil.png");
    assert_eq!(
        (code, v),
        (
            400,
            json!({ "error": "not a PNG, JPEG, GIF, WebP, AVIF or SVG image (data)" })
        )
    );
    assert!(
        common::tree(&server.book.join("src/guide")) == before,
        "nothing written"
    );
    // An SVG is taken; a page of another kind that says `<svg` later is not.
    let (code, v) = post(
        b"<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"/>",
        "d.svg",
    );
    assert_eq!(code, 201, "{v}");
    assert!(v["name"].as_str().unwrap().ends_with(".svg"));
    let (code, _) = post(b"<html><svg/></html>", "x.svg");
    assert_eq!(code, 400);
    // Served as an image only: once the rebuild copied it, it comes with a policy that runs
    // nothing, even opened as a document.
    let svg = v["name"].as_str().unwrap().to_string();
    let head = crate::support::wait::until(
        std::time::Duration::from_secs(30),
        "the image served",
        || {
            use std::io::{Read, Write};
            let mut s = std::net::TcpStream::connect(("127.0.0.1", server.port)).ok()?;
            let bytes = crate::support::serve::request_bytes(
                server.port,
                "GET",
                &format!("/guide/{svg}"),
                &[],
                b"",
            );
            s.write_all(&bytes).ok()?;
            let mut out = String::new();
            s.read_to_string(&mut out).ok()?;
            out.starts_with("HTTP/1.1 200")
                .then_some(out.to_ascii_lowercase())
        },
    );
    assert!(
        head.contains("content-security-policy: default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; sandbox"),
        "{head}"
    );
}

/// A block that comes from a file the chapter includes whole is listed in its place, with its
/// file, and edited there; an include that leaves the book's sources, a symlink, or the git
/// directory stays folded.
#[test]
fn a_block_of_an_included_file_is_edited_in_that_file() {
    let server = Server::start(&[], |book| {
        common::write(
            &book.join("src/guide/shared.md"),
            "A shared note.\n\nThe second shared paragraph.\n",
        );
        let chapter = book.join("src/guide/sensors.md");
        let text = common::read(&chapter);
        common::write(
            &chapter,
            &format!(
                "{text}\n{{{{#include shared.md}}}}\n\n{{{{#include ../../../../../etc/hostname}}}}\n"
            ),
        );
        #[cfg(unix)]
        std::os::unix::fs::symlink("/etc/hostname", book.join("src/guide/link.md")).unwrap();
        let text = common::read(&chapter);
        common::write(
            &chapter,
            &format!("{text}\n{{{{#include link.md}}}}\n\n{{{{#include ../../.git/config}}}}\n"),
        );
        common::git(book.parent().unwrap(), &["add", "-A"]);
        common::git(book.parent().unwrap(), &["commit", "-qm", "shared"]);
    });
    let (code, v) = server.json("GET", &format!("{API}?page={PAGE}"), &Value::Null);
    assert_eq!(code, 200, "{v}");
    let blocks = v["blocks"].as_array().unwrap();
    let shared: Vec<(&str, &str)> = blocks
        .iter()
        .filter(|b| b["file"] == json!("src/guide/shared.md"))
        .map(|b| (b["id"].as_str().unwrap(), b["markdown"].as_str().unwrap()))
        .collect();
    assert_eq!(shared.len(), 2, "{v}");
    assert!(shared[1].0.ends_with(".1") && shared[1].1 == "The second shared paragraph.");
    // The other two includes stay as they are written.
    let folded: Vec<&str> = blocks
        .iter()
        .filter(|b| b["markdown"].as_str().unwrap().starts_with("{{#include"))
        .map(|b| b["markdown"].as_str().unwrap())
        .collect();
    assert_eq!(
        folded,
        [
            "{{#include ../../../../../etc/hostname}}",
            "{{#include link.md}}",
            "{{#include ../../.git/config}}"
        ]
    );
    let before = chapter(&server);
    let (code, v) = put(
        &server,
        json!({ "page": PAGE, "block": shared[1].0, "expected": shared[1].1,
                "markdown": "The second shared paragraph, edited." }),
    );
    assert_eq!(
        (code, &v["file"]),
        (200, &json!("src/guide/shared.md")),
        "{v}"
    );
    assert_eq!(
        common::read(&server.book.join("src/guide/shared.md")),
        "A shared note.\n\nThe second shared paragraph, edited.\n"
    );
    assert_eq!(chapter(&server), before);
}
