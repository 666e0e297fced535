//! The write side of the client against a real `mdbook-notabene serve`, in headless Chromium:
//! the whole review loop (select → comment → live reload → mark; agent CLI → review card with
//! its diff → approve), block and page comments, thread actions and reject, and the fidelity of
//! anchor capture (200 random selections on book-example and on the Rustonomicon must all
//! re-anchor exactly after the rebuild).
//!
//! Needs `/usr/bin/chromium` (Debian package `chromium`). Without it the tests print a note and
//! pass, unless `CI` is set: then they fail.

use crate::harness;
use crate::harness::serving;
use crate::support::common::build;
use crate::support::serve;
use crate::support::wait;

use harness::{Page, chromium};
use serde_json::{Value, json};
use serve::Server;
use serving::*;
use std::time::{Duration, Instant};

macro_rules! page {
    ($w:expr, $h:expr) => {
        match chromium() {
            Some(exe) => Page::new(&exe, $w, $h),
            None => return,
        }
    };
}

const SECS: Duration = Duration::from_secs(10);
const WRITE: Duration = Duration::from_secs(20);

/// Asserts that the page asked nothing of any other origin, and that no script threw.
fn assert_same_origin_and_clean(p: &mut Page, port: u16) {
    let origin = base(port);
    let foreign: Vec<String> = p
        .requests()
        .into_iter()
        .filter(|u| !(u.starts_with(&origin) || u.starts_with("data:") || u.starts_with("about:")))
        .collect();
    assert!(foreign.is_empty(), "requests to other origins: {foreign:?}");
    let api: Vec<String> = p
        .requests()
        .into_iter()
        .filter(|u| {
            u.contains("/__notabene/") && !u.starts_with(&format!("{origin}__notabene/api/"))
        })
        .collect();
    assert!(api.is_empty(), "odd API urls: {api:?}");
    let ex = p.exceptions();
    assert!(ex.is_empty(), "uncaught exceptions: {ex:#?}");
}

fn island_entry(p: &mut Page, id: &str) -> Value {
    p.eval(&format!(
        "{ISLAND}.comments.find(c => c.id === {})",
        serde_json::to_string(id).unwrap()
    ))
}

/* ------------------------------------------------------------- the loop */

#[test]
fn review_loop_select_comment_reload_agent_review_approve() {
    let mut p = page!(1280, 900);
    let t0 = Instant::now();
    let server = book_example();
    let url = base(server.port);
    p.goto(&format!("{url}guide/installing.html"));
    wait_writable(&mut p);
    // The page knows the build it was served from (a stale page reloads at once).
    assert_eq!(
        p.eval_str("JSON.stringify(performance.getEntriesByType('navigation')[0].serverTiming.map(e => [e.name, e.duration]))"),
        "[[\"nb-generation\",1]]"
    );
    // No identity yet: the first write asks for it.
    assert_eq!(
        p.eval_str("localStorage.getItem('notabene:author') || ''"),
        ""
    );

    // A real mouse drag over a whole sentence.
    let sentence =
        "Most stations run on a Raspberry Pi, so the ARM builds are the ones we test most heavily.";
    drag_over_text(&mut p, sentence);
    assert_eq!(
        p.eval_str("String(getSelection())"),
        sentence,
        "the drag selected the sentence"
    );
    p.wait_for("!document.querySelector('.nb-sel-btn').hidden", SECS);
    // The button sits next to the selection, inside the viewport.
    let inside = p.eval_bool(
        "(() => { const r = document.querySelector('.nb-sel-btn').getBoundingClientRect();
                  return r.top >= 0 && r.bottom <= innerHeight && r.left >= 0 && r.right <= innerWidth; })()",
    );
    assert!(inside, "the Comment button is on screen");
    let scroll_before = p.eval_i64("Math.round(scrollY)");
    p.screenshot("serve-selection-button");
    p.click(".nb-sel-btn");
    p.wait_for(
        "document.activeElement && document.activeElement.matches('.nb-compose textarea')",
        SECS,
    );
    assert_eq!(
        p.eval_str("document.querySelector('.nb-compose-quote').textContent"),
        format!("“{sentence}”"),
        "the composer shows the quote"
    );
    assert!(p.eval_bool("getSelection().isCollapsed || !String(getSelection()).trim()"));
    type_text(&mut p, "Name the boards: a Pi 4 and a Pi Zero 2 W?");
    p.screenshot("serve-composer");
    let dir = server.store().join("book-example/src/guide/installing");
    let before = comment_files(&dir);
    let g_write = generation(server.port);
    ctrl_enter(&mut p);
    // The identity dialog comes first.
    p.wait_for("document.querySelector('dialog.nb-identity[open]')", SECS);
    p.eval("document.querySelector('.nb-identity-name').focus()");
    type_text(&mut p, "  Robin Reviewer ");
    p.eval("document.querySelector('.nb-identity-email').focus()");
    type_text(&mut p, "robin@example.com ");
    p.screenshot("serve-identity-dialog");
    p.click(".nb-identity-save");
    let t_write = Instant::now();
    let c = wait_new_comment(&dir, &before, WRITE);
    eprintln!("selection comment stored in {:?}", t_write.elapsed());
    let paragraph =
        "Skylark ships as a single static binary for Linux on x86_64, ARMv7 and AArch64. ";
    let after = " You can install a prebuilt binary, build from source with Cargo, or use the Debian package";
    let prefix: String = paragraph
        .chars()
        .skip(paragraph.chars().count() - 40)
        .collect();
    let suffix: String = after.chars().take(40).collect();
    assert_eq!(c["page"], "book-example/src/guide/installing");
    assert_eq!(c["space"], "book");
    assert_eq!(c["scope"], "selection");
    assert_eq!(
        c["anchor"],
        json!({ "quote": sentence, "prefix": prefix, "suffix": suffix, "section": "Installing Skylark" })
    );
    assert_eq!(
        c["thread"][0]["author"],
        "Robin Reviewer <robin@example.com>"
    );
    assert_eq!(
        c["thread"][0]["body"],
        "Name the boards: a Pi 4 and a Pi Zero 2 W?"
    );
    assert_eq!(c["status"], "open");
    let id = c["id"].as_str().unwrap().to_string();

    // The live reload shows it as a mark (at once, patched in; then rebuilt), anchored
    // exactly, at the same scroll position.
    wait_rebuilt(&mut p, server.port, g_write);
    eprintln!(
        "reloaded with the comment {:?} after the write",
        t_write.elapsed()
    );
    p.wait_for(
        &format!("document.querySelector('mark.nb-mark[data-nb-id=\"{id}\"]')"),
        SECS,
    );
    assert_eq!(
        p.eval_str(&format!(
            "[...document.querySelectorAll('mark.nb-mark[data-nb-id=\"{id}\"]')].map(m => m.textContent).join('')"
        )),
        sentence
    );
    let entry = island_entry(&mut p, &id);
    assert_eq!(entry["anchoring"]["status"], "exact", "{entry:#}");
    let scroll_after = p.eval_i64("Math.round(scrollY)");
    assert!(
        (scroll_after - scroll_before).abs() <= 40,
        "scroll kept across the reload: {scroll_before} → {scroll_after}"
    );
    assert_eq!(
        p.eval_str("localStorage.getItem('notabene:author')"),
        "Robin Reviewer"
    );
    assert_eq!(
        p.eval_str("localStorage.getItem('notabene:email')"),
        "robin@example.com"
    );
    assert_eq!(
        p.eval_str("document.querySelector('.nb-identity-btn').textContent"),
        "You: Robin Reviewer"
    );

    // The agent: a journal entry, an edit of the chapter, `comments done --status addressed`.
    let g0 = generation(server.port);
    let entry = json!({
        "title": "Name the boards we test on",
        "summary": "Answered the reviewer's question about test hardware.",
        "changes": [{
            "page": "book-example/src/guide/installing",
            "commentIds": [id],
            "what": "Added a sentence naming the two boards every release is tested on.",
            "why": "The reviewer asked which boards."
        }]
    });
    let out = cli(
        &server.book,
        &["journal", "add", "--json"],
        &entry.to_string(),
    );
    let journal_id = serde_json::from_str::<Value>(out.trim()).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let chapter = server.book.join("src/guide/installing.md");
    let mut md = std::fs::read_to_string(&chapter).unwrap();
    md.push_str(
        "\nEvery release is tested on a Raspberry Pi 4 and a Pi Zero 2 W before it ships.\n",
    );
    std::fs::write(&chapter, md).unwrap();
    cli(
        &server.book,
        &[
            "comments",
            "done",
            &id,
            "--journal",
            &journal_id,
            "--status",
            "addressed",
            "--note",
            "Named the two boards.",
        ],
        "",
    );
    let file = dir.join(format!("{id}.json"));
    let done = std::fs::read_to_string(&file).unwrap();
    assert!(done.contains("\"status\": \"addressed\""), "{done}");
    settle(server.port, g0, Duration::from_millis(1200));

    // /review: the card with its diff, then Approve.
    p.goto(&format!("{url}review.html"));
    wait_writable(&mut p);
    let card = format!(".nb-card[data-nb-id=\"{id}\"]");
    p.wait_for(&format!("document.querySelector('{card}')"), SECS);
    let added = p.eval_str(&format!(
        "[...document.querySelectorAll('{card} .nb-d-add .nb-code')].map(td => td.textContent).join('\\n')"
    ));
    assert!(
        added.contains("Every release is tested on a Raspberry Pi 4 and a Pi Zero 2 W"),
        "the card shows the worktree diff: {added:?}"
    );
    assert!(p.eval_bool(&format!(
        "document.querySelector('{card} .nb-proposed').textContent.includes('Named the two boards.')"
    )));
    p.eval(&format!(
        "document.querySelector('{card} .nb-card-actions').scrollIntoView({{block: 'center'}})"
    ));
    p.screenshot("serve-review-card");
    // Who asked is on the card; nobody has applied or approved anything yet.
    assert_eq!(
        p.eval_str(&format!(
            "document.querySelector('{card} .nb-credits').textContent"
        )),
        "Asked by Robin Reviewer"
    );
    mark_document(&mut p);
    p.click(&format!("{card} .nb-approve"));
    let resolved = wait_comment(&file, WRITE, "resolved", |v| v["status"] == "resolved");
    // The approval is the person's, recorded as a message of the thread.
    let last = resolved["thread"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        (
            last["body"].as_str().unwrap(),
            last["author"]
                .as_str()
                .unwrap()
                .starts_with("Robin Reviewer")
        ),
        (mdbook_notabene::apps::ops::APPROVAL, true),
        "{last}"
    );
    assert_eq!(
        resolved["resolution"]["journalEntryId"],
        journal_id.as_str()
    );
    assert_eq!(resolved["resolution"]["note"], "Named the two boards.");
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("\"status\": \"resolved\""),
        "the file on disk says resolved"
    );
    // The approved card is gone after the rebuild.
    wait_reloaded(&mut p, WRITE);
    p.wait_for(&format!("!document.querySelector('{card}')"), SECS);
    assert_same_origin_and_clean(&mut p, server.port);
    eprintln!("review loop: {:?}", t0.elapsed());
}

/* ------------------------------------------- blocks, page discussion, keyboard */

#[test]
fn block_comments_page_comments_and_keyboard_selection() {
    let mut p = page!(1280, 900);
    let server = book_example();
    let url = base(server.port);
    p.goto(&format!("{url}index.html"));
    wait_writable(&mut p);
    p.eval("localStorage.setItem('notabene:author', 'Kim Keys'); localStorage.setItem('notabene:email', '')");
    let blocks = p.eval(&format!("{ISLAND}.blocks"));
    assert_eq!(blocks[0]["kind"], "mermaid", "{blocks:#}");
    assert_eq!(blocks[1]["kind"], "image", "{blocks:#}");
    // One button per block, none on mdBook's duplicate zoom image.
    assert_eq!(
        p.eval_i64("document.querySelectorAll('main .nb-block-add').length"),
        2
    );
    let dir = server.store().join("book-example/src/README");

    // The diagram: hover shows its button; click, write, save.
    let (x, y) = p.center_of("main pre.mermaid");
    p.call(
        "Input.dispatchMouseEvent",
        json!({ "type": "mouseMoved", "x": x, "y": y }),
    );
    p.wait_for(
        "getComputedStyle(document.querySelector('.nb-block-add[data-nb-block-index=\"0\"]')).opacity === '1'",
        SECS,
    );
    p.screenshot("serve-diagram-button");
    p.click(".nb-block-add[data-nb-block-index=\"0\"]");
    p.wait_for(
        "document.activeElement && document.activeElement.matches('.nb-compose textarea')",
        SECS,
    );
    assert!(
        p.eval_str("document.querySelector('.nb-compose-quote').textContent")
            .starts_with("📊 graph")
    );
    type_text(&mut p, "Add the dead-letter folder.");
    p.screenshot("serve-block-composer");
    let before = comment_files(&dir);
    mark_document(&mut p);
    p.click(".nb-compose-save");
    let c = wait_new_comment(&dir, &before, WRITE);
    assert_eq!(c["scope"], "block");
    assert_eq!(
        c["anchor"], blocks[0],
        "the stored anchor is the island's block entry"
    );
    assert_eq!(c["thread"][0]["author"], "Kim Keys");
    let diagram_id = c["id"].as_str().unwrap().to_string();
    wait_reloaded(&mut p, WRITE);
    let e = island_entry(&mut p, &diagram_id);
    assert_eq!(e["anchoring"]["status"], "exact", "{e:#}");
    assert!(p.eval_bool(&format!(
        "document.querySelector('.nb-badge').dataset.nbIds.split(' ').includes('{diagram_id}')"
    )));

    // The image, from the keyboard: focus its button, Enter, type, Ctrl+Enter.
    p.eval("document.querySelector('.nb-block-add[data-nb-block-index=\"1\"]').focus()");
    // A focused block button is visible (after its short fade-in).
    p.wait_for(
        "getComputedStyle(document.activeElement).opacity === '1'",
        SECS,
    );
    p.key("Enter");
    p.wait_for(
        "document.activeElement && document.activeElement.matches('.nb-compose textarea')",
        SECS,
    );
    assert!(
        p.eval_str("document.querySelector('.nb-compose-quote').textContent")
            .starts_with("🖼 Station wiring diagram")
    );
    type_text(&mut p, "Draw the pull-up resistors.");
    let before = comment_files(&dir);
    mark_document(&mut p);
    ctrl_enter(&mut p);
    let c = wait_new_comment(&dir, &before, WRITE);
    assert_eq!(c["anchor"], blocks[1]);
    wait_reloaded(&mut p, WRITE);

    // The page discussion composer.
    p.eval(
        "document.querySelector('.nb-discussion .nb-page-body').scrollIntoView({block: 'center'})",
    );
    p.click(".nb-discussion .nb-page-body");
    type_text(&mut p, "Say which platforms are supported.");
    p.screenshot("serve-page-composer");
    let before = comment_files(&dir);
    mark_document(&mut p);
    p.click(".nb-page-send");
    let c = wait_new_comment(&dir, &before, WRITE);
    assert_eq!(c["scope"], "page");
    assert_eq!(c["anchor"], Value::Null);
    assert_eq!(c["thread"][0]["body"], "Say which platforms are supported.");
    let page_id = c["id"].as_str().unwrap().to_string();
    wait_reloaded(&mut p, WRITE);
    p.wait_for(
        &format!("document.querySelector('.nb-discussion-item[data-nb-id=\"{page_id}\"]')"),
        SECS,
    );

    // Keyboard selection: one word selected, Shift+End extends it to the end of the line.
    p.eval(&format!(
        "(() => {{ const r = {RANGE_OF}('Skylark runs');
           r.startContainer.parentElement.scrollIntoView({{block: 'center'}});
           getSelection().removeAllRanges(); getSelection().addRange(r); }})()"
    ));
    p.wait_for("!document.querySelector('.nb-sel-btn').hidden", SECS);
    shift_key(&mut p, "End", 35);
    p.wait_for(
        "String(getSelection()).length > 'Skylark runs'.length",
        SECS,
    );
    p.wait_for("!document.querySelector('.nb-sel-btn').hidden", SECS);
    // Ctrl+Alt+M opens the composer on it; Escape closes it.
    for ty in ["rawKeyDown", "keyUp"] {
        p.call(
            "Input.dispatchKeyEvent",
            json!({ "type": ty, "key": "m", "code": "KeyM", "windowsVirtualKeyCode": 77, "modifiers": 3 }),
        );
    }
    p.wait_for(
        "document.activeElement && document.activeElement.matches('.nb-compose textarea')",
        SECS,
    );
    assert!(
        p.eval_str("document.querySelector('.nb-compose-quote').textContent")
            .starts_with("“Skylark runs as a single long-lived process.")
    );
    // The hint is there: this pointer can hover and has a keyboard.
    assert!(p.eval_bool("!!document.querySelector('.nb-compose .nb-hint')"));
    p.key("Escape");
    p.wait_for("!document.querySelector('.nb-compose')", SECS);
    // The focus is back in the text it was selected in, and so is the selection.
    assert_eq!(
        p.eval_str("document.activeElement.closest('main') ? document.activeElement.localName + ':' + String(getSelection()).slice(0, 15) : document.activeElement.localName"),
        "p:Skylark runs as"
    );
    p.eval(&format!(
        "(() => {{ const r = {RANGE_OF}('Skylark runs'); getSelection().removeAllRanges(); getSelection().addRange(r); }})()"
    ));
    shift_key(&mut p, "End", 35);
    p.wait_for("!document.querySelector('.nb-sel-btn').hidden", SECS);
    assert!(
        p.eval_str("String(getSelection())")
            .starts_with("Skylark runs as")
    );
    // A triple click selects a paragraph with an element boundary at its end: captured cleanly.
    p.eval("getSelection().removeAllRanges()");
    p.wait_for("document.querySelector('.nb-sel-btn').hidden", SECS);
    let (x, y) = p.center_of("main blockquote p");
    triple_click(&mut p, (x, y));
    p.wait_for("!document.querySelector('.nb-sel-btn').hidden", SECS);
    eprintln!(
        "triple click: {}",
        p.eval("(() => { const r = getSelection().getRangeAt(0); const d = (n) => n.nodeType === 3 ? '#text' : n.localName + '.' + n.className;
                 return [d(r.startContainer), r.startOffset, d(r.endContainer), r.endOffset]; })()")
    );
    let a = p.eval("window.__notabene.captureAnchor(getSelection().getRangeAt(0))");
    assert!(
        a["quote"]
            .as_str()
            .unwrap()
            .trim()
            .starts_with("Skylark is a fictional tool"),
        "{a:#}"
    );
    assert!(
        a["quote"]
            .as_str()
            .unwrap()
            .trim()
            .ends_with("happy accident."),
        "{a:#}"
    );
    assert_eq!(a["section"], "Wiring at a glance");
    // A selection inside the client's own UI offers nothing.
    p.eval(
        "(() => { const t = document.querySelector('.nb-discussion .nb-body'); const r = document.createRange();
                  r.selectNodeContents(t); getSelection().removeAllRanges(); getSelection().addRange(r); })()",
    );
    p.wait_for("document.querySelector('.nb-sel-btn').hidden", SECS);
    assert_eq!(
        p.eval("window.__notabene.captureAnchor(getSelection().getRangeAt(0))"),
        Value::Null
    );
    assert_same_origin_and_clean(&mut p, server.port);
}

/* ------------------------------------------- token, inline errors, drafts */

#[test]
fn token_inline_errors_and_drafts_hold_the_live_reload() {
    let mut p = page!(1280, 900);
    let server = Server::start(&[("NOTABENE_TOKEN", "s3cret")], install);
    let url = base(server.port);
    p.goto(&format!("{url}reference/cli.html"));
    wait_writable(&mut p);
    p.eval("localStorage.setItem('notabene:author', 'Tom Token')");
    let dir = server.store().join("book-example/src/reference/cli");
    let before = comment_files(&dir);
    // Without the token the server refuses: the reason is shown inline, nothing is written.
    p.eval("document.querySelector('.nb-page-body').scrollIntoView({block: 'center'})");
    p.click(".nb-page-body");
    type_text(&mut p, "Document the exit codes.");
    p.click(".nb-page-send");
    p.wait_for(
        "!document.querySelector('.nb-composer .nb-error').hidden",
        SECS,
    );
    assert_eq!(
        p.eval_str("document.querySelector('.nb-composer .nb-error').textContent"),
        "Not saved: write refused: invalid or missing token"
    );
    assert_eq!(
        p.eval_str("document.querySelector('.nb-page-body').value"),
        "Document the exit codes."
    );
    assert_eq!(comment_files(&dir), before, "nothing written");

    // A rebuild while a draft is open does not reload the page: a note offers to.
    let g = generation(server.port);
    let (code, v) = serve::request(
        server.port,
        "POST",
        "/__notabene/api/comments",
        &[("Content-Type", "application/json"), ("x-notabene-token", "s3cret")],
        json!({ "page": "book-example/src/reference/cli", "space": "book", "scope": "page", "body": "From elsewhere" })
            .to_string()
            .as_bytes(),
    );
    assert_eq!(code, 201, "{v}");
    settle(server.port, g, Duration::from_millis(300));
    mark_document(&mut p);
    p.wait_for("document.querySelector('.nb-toast .nb-toast-action') && !document.querySelector('.nb-toast').hidden", SECS);
    // While the draft is open the client looks again every second and, finding it, keeps the
    // page and shows its note if it is hidden: hide the note, and once it is back the client
    // has looked again since the rebuild (or the page has reloaded).
    p.eval("(t => { if (t) t.hidden = true; })(document.querySelector('.nb-toast'))");
    p.wait_for(
        "!window.__nbOldDocument || (t => t && !t.hidden)(document.querySelector('.nb-toast'))",
        SECS,
    );
    assert!(
        p.eval_bool("!!window.__nbOldDocument"),
        "the page kept the draft"
    );

    // With the token (from localStorage) the same draft is saved; the page then reloads.
    p.eval("localStorage.setItem('notabene:token', 's3cret')");
    p.click(".nb-page-send");
    let c = wait_new_comment(&dir, &before, WRITE);
    let c = if c["thread"][0]["body"] == "From elsewhere" {
        let mut seen = before.clone();
        seen.insert(dir.join(format!("{}.json", c["id"].as_str().unwrap())));
        wait_new_comment(&dir, &seen, WRITE)
    } else {
        c
    };
    assert_eq!(c["thread"][0]["body"], "Document the exit codes.");
    assert_eq!(c["thread"][0]["author"], "Tom Token");
    let id = c["id"].as_str().unwrap().to_string();
    // The page reloads (maybe twice: the rebuild it was holding back, then this write's).
    wait_reloaded(&mut p, WRITE);
    p.wait_for(
        &format!("{ISLAND}.comments.some(c => c.id === '{id}') && document.querySelector('.nb-discussion-item[data-nb-id=\"{id}\"]')"),
        WRITE,
    );
    assert_same_origin_and_clean(&mut p, server.port);
}

/// A new comment is shown at once: its mark appears in the open page within 200 ms of the
/// POST (the client shows what the API returned, no rebuild needed), while another comment's
/// draft stays open and the scroll position stays; the rebuild that follows is held back
/// (with a note) rather than reloading over the draft.
#[test]
fn a_new_comment_shows_at_once_while_another_draft_stays_open() {
    let mut p = page!(1280, 900);
    let server = book_example();
    let url = base(server.port);
    p.goto(&format!("{url}guide/installing.html"));
    wait_writable(&mut p);
    p.eval("localStorage.setItem('notabene:author', 'Nia Now <nia@example.com>')");
    // Another comment's composer, with a draft: the page-comment box.
    p.eval("document.querySelector('.nb-page-body').scrollIntoView({block: 'center'})");
    p.click(".nb-page-body");
    type_text(&mut p, "A page-level draft, not sent yet.");

    let sentence = "You can install a prebuilt binary, build from source with Cargo, or use the Debian package";
    drag_over_text(&mut p, sentence);
    p.wait_for("!document.querySelector('.nb-sel-btn').hidden", SECS);
    p.click(".nb-sel-btn");
    p.wait_for(
        "document.activeElement && document.activeElement.matches('.nb-compose textarea')",
        SECS,
    );
    type_text(&mut p, "Say which Debian releases.");
    let scroll_before = p.eval_i64("Math.round(scrollY)");
    // In the page: when the POST left, and when a mark of a comment not in the island appeared.
    p.eval(&format!(
        "(() => {{
           const known = new Set({ISLAND}.comments.map(c => c.id));
           const fetch0 = window.fetch;
           window.fetch = function (u, o) {{
             if (o && o.method === 'POST' && window.__nbPostAt === undefined) window.__nbPostAt = performance.now();
             return fetch0.apply(this, arguments);
           }};
           new MutationObserver(() => {{
             if (window.__nbMarkAt !== undefined) return;
             const m = [...document.querySelectorAll('mark.nb-mark[data-nb-id]')].find(m => !known.has(m.dataset.nbId));
             if (m) {{ window.__nbMarkAt = performance.now(); window.__nbMarkId = m.dataset.nbId; }}
           }}).observe(document.body, {{ childList: true, subtree: true }});
         }})()"
    ));
    // Live reload comes over the WebSocket: no long poll.
    p.wait_for("document.documentElement.dataset.nbLive === 'socket'", SECS);
    let g = generation(server.port);
    mark_document(&mut p);
    ctrl_enter(&mut p);
    p.wait_for("window.__nbMarkAt !== undefined", SECS);
    let shown_ms = p
        .eval("window.__nbMarkAt - window.__nbPostAt")
        .as_f64()
        .unwrap();
    eprintln!("new comment's mark shown {shown_ms:.0} ms after its POST");
    assert!(
        shown_ms <= 200.0,
        "the mark shows within 200 ms of the POST ({shown_ms:.0} ms)"
    );
    let id = p.eval_str("window.__nbMarkId");
    // The mark covers the selected text, and the panel lists the comment.
    assert_eq!(
        p.eval_str(&format!(
            "[...document.querySelectorAll('mark.nb-mark[data-nb-id=\"{id}\"]')].map(m => m.textContent).join('')"
        )),
        sentence
    );
    // The stored comment is the one shown.
    let file = find_comment_file(&server.store(), &id);
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert_eq!(stored["anchor"]["quote"], sentence);
    assert_eq!(stored["thread"][0]["body"], "Say which Debian releases.");

    // The rebuild comes; the draft holds the reload back, with a note. Nothing moved.
    settle(server.port, g, Duration::from_millis(300));
    p.wait_for(
        "document.querySelector('.nb-toast .nb-toast-action') && !document.querySelector('.nb-toast').hidden",
        WRITE,
    );
    assert!(
        p.eval_bool("!!window.__nbOldDocument"),
        "the page was not reloaded over the draft"
    );
    assert_eq!(
        p.eval_str("document.querySelector('.nb-page-body').value"),
        "A page-level draft, not sent yet."
    );
    assert_eq!(
        p.eval_i64("Math.round(scrollY)"),
        scroll_before,
        "the scroll position stayed"
    );
    assert!(
        p.eval_bool(
            "!performance.getEntriesByType('resource').some(e => e.name.includes('status?since='))"
        ),
        "the rebuild was announced over the socket, not a long poll"
    );
    assert_same_origin_and_clean(&mut p, server.port);
}

/// `serve --host` prints a generated token in the URL to open: the page keeps it, takes it out
/// of the address bar, and its API requests (the live-reload socket included) carry it.
#[test]
fn host_mode_the_page_keeps_the_printed_token() {
    let mut p = page!(1280, 900);
    let server = Server::start_with(&["--host"], &[], install);
    let token = server
        .url_token
        .clone()
        .expect("a token in the printed URL");
    p.goto(&format!(
        "{}reference/cli.html?nb-token={token}",
        base(server.port)
    ));
    wait_writable(&mut p);
    assert_eq!(p.eval_str("localStorage.getItem('notabene:token')"), token);
    assert_eq!(
        p.eval_str("location.search"),
        "",
        "the token left the address bar"
    );
    p.wait_for("document.documentElement.dataset.nbLive === 'socket'", SECS);
    p.eval("localStorage.setItem('notabene:author', 'Hana Host')");
    let dir = server.store().join("book-example/src/reference/cli");
    let before = comment_files(&dir);
    p.eval("document.querySelector('.nb-page-body').scrollIntoView({block: 'center'})");
    p.click(".nb-page-body");
    type_text(&mut p, "Written with the printed token.");
    mark_document(&mut p);
    p.click(".nb-page-send");
    let c = wait_new_comment(&dir, &before, WRITE);
    assert_eq!(c["thread"][0]["body"], "Written with the printed token.");
    // The socket (with the token) announces the rebuild: the page reloads.
    wait_reloaded(&mut p, WRITE);
    assert_same_origin_and_clean(&mut p, server.port);
}

/* ------------------------------------------------------- suggested edits */

/// POSTs a comment as another client would; returns its id.
fn post_comment(port: u16, body: Value) -> String {
    let (code, v) = serve::request(
        port,
        "POST",
        "/__notabene/api/comments",
        &[("Content-Type", "application/json")],
        body.to_string().as_bytes(),
    );
    assert_eq!(code, 201, "{v}");
    serde_json::from_str::<Value>(&v).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Select text → "Suggest a change" → type the replacement: the thread shows the old words
/// struck and the new ones inserted; Apply (on the page, then on /review for a second one)
/// writes the Markdown through the API, the page rebuilds with the new text, and /review
/// shows the applied change word by word.
#[test]
fn suggest_a_change_apply_it_and_see_it_rebuilt_and_on_review() {
    let mut p = page!(1280, 900);
    let server = book_example();
    let url = base(server.port);
    let original = std::fs::read_to_string(server.book.join("src/guide/installing.md")).unwrap();
    p.goto(&format!("{url}guide/installing.html"));
    wait_writable(&mut p);
    p.eval("localStorage.setItem('notabene:author', 'Sam Suggester')");
    let quote = "the ones we test most heavily";
    drag_over_text(&mut p, quote);
    p.wait_for("!document.querySelector('.nb-sel-btn').hidden", SECS);
    p.click(".nb-sel-btn");
    p.wait_for(
        "document.querySelector('.nb-compose .nb-suggest-toggle')",
        SECS,
    );
    p.click(".nb-compose .nb-suggest-toggle");
    // The replacement starts as the quote, selected: typing replaces it.
    assert_eq!(
        p.eval_str("document.activeElement.className"),
        "nb-input nb-suggest-text"
    );
    assert_eq!(p.eval_str("document.activeElement.value"), quote);
    type_text(&mut p, "the ones we test most thoroughly");
    let dir = server.store().join("book-example/src/guide/installing");
    let before = comment_files(&dir);
    let g0 = generation(server.port);
    p.click(".nb-compose-save");
    let c = wait_new_comment(&dir, &before, WRITE);
    assert_eq!(
        c["suggestion"],
        json!({ "quote": quote, "text": "the ones we test most thoroughly" })
    );
    assert_eq!(
        c["thread"][0]["body"],
        format!("Suggested edit: replace “{quote}” with “the ones we test most thoroughly”.")
    );
    let id = c["id"].as_str().unwrap().to_string();
    let thread = format!(".nb-thread[data-nb-id=\"{id}\"]");
    let words = |p: &mut Page, sel: &str| {
        p.eval_str(&format!(
            "JSON.stringify([...document.querySelectorAll('{sel} .nb-suggestion .nb-word')].map(w => w.localName + ':' + w.textContent))"
        ))
    };

    // After the rebuild, its thread offers Apply.
    wait_rebuilt(&mut p, server.port, g0);
    p.wait_for(
        &format!("document.querySelector('mark.nb-mark[data-nb-id=\"{id}\"]')"),
        SECS,
    );
    p.click(&format!("mark.nb-mark[data-nb-id=\"{id}\"]"));
    p.wait_for(
        &format!("document.querySelector('.nb-pop {thread} .nb-apply')"),
        SECS,
    );
    assert_eq!(
        words(&mut p, &format!(".nb-pop {thread}")),
        r#"["del:heavily","ins:thoroughly"]"#
    );
    p.screenshot("serve-suggestion");
    mark_document(&mut p);
    p.click(&format!(".nb-pop {thread} .nb-apply"));
    let chapter = server.book.join("src/guide/installing.md");
    wait::until(WRITE, "the chapter edited", || {
        std::fs::read_to_string(&chapter)
            .unwrap()
            .contains("most thoroughly")
            .then_some(())
    });
    let md = std::fs::read_to_string(&chapter).unwrap();
    assert!(
        md.contains("the ARM builds are the ones we test most thoroughly."),
        "{md}"
    );
    assert!(!md.contains("most heavily"));
    // The page rebuilds with the new text; the comment is addressed (approve mode), applied.
    // (The chapter is written before the comment: a rebuild may see the one and not yet the
    // other, and the next one both.)
    wait_reloaded(&mut p, WRITE);
    p.wait_for(
        &format!("document.querySelector('main').textContent.includes('the ones we test most thoroughly') && {ISLAND}.comments.some(c => c.id === '{id}' && c.status === 'addressed')"),
        WRITE,
    );
    let entry = island_entry(&mut p, &id);
    assert_eq!(entry["status"], "addressed", "{entry:#}");
    assert_eq!(entry["suggestion"]["applied"]["by"], "Sam Suggester");
    assert_eq!(
        entry["suggestion"]["applied"]["file"],
        "src/guide/installing.md"
    );

    // A second suggestion, applied from /review.
    let g = generation(server.port);
    mark_document(&mut p);
    let second = post_comment(
        server.port,
        json!({
            "page": "book-example/src/guide/installing", "space": "book", "scope": "selection",
            "anchor": { "quote": "Raspberry Pi", "prefix": "Most stations run on a ", "suffix": ", so the ARM builds are the ones", "section": "Installing Skylark" },
            "suggestion": { "text": "Raspberry Pi board" },
            "body": "Say board."
        }),
    );
    // Its rebuild done, and the open page reloaded for it: then /review.
    settle(server.port, g, Duration::from_millis(300));
    wait_reloaded(&mut p, WRITE);
    p.goto(&format!("{url}review.html"));
    wait_writable(&mut p);
    let pending = format!(".nb-suggestions .nb-card[data-nb-id=\"{second}\"]");
    p.wait_for(
        &format!("document.querySelector('{pending} .nb-apply')"),
        WRITE,
    );
    assert_eq!(words(&mut p, &pending), r#"["ins: board"]"#);
    p.screenshot("review-suggestions");
    mark_document(&mut p);
    p.click(&format!("{pending} .nb-apply"));
    wait::until(WRITE, "the chapter edited from /review", || {
        std::fs::read_to_string(&chapter)
            .unwrap()
            .contains("Raspberry Pi board")
            .then_some(())
    });
    // /review, rebuilt: both applied changes are cards, their words marked.
    wait_reloaded(&mut p, WRITE);
    let card = format!(".nb-card[data-nb-id=\"{id}\"]");
    p.wait_for(
        &format!("document.querySelector('{card} .nb-diff del.nb-word')"),
        WRITE,
    );
    let marked = p.eval_str(&format!(
        "JSON.stringify([...document.querySelectorAll('{card} .nb-diff .nb-word')].map(w => w.localName + ':' + w.textContent))"
    ));
    assert!(
        marked.contains("\"del:heavily\"") && marked.contains("\"ins:thoroughly\""),
        "{marked}"
    );
    assert!(
        !p.eval_bool(&format!("!!document.querySelector('{pending}')")),
        "applied: no longer pending"
    );
    // The person who applied it is named, never "the agent". (The apply writes its journal
    // entry, then closes the comment: a rebuild between the two shows the card before its
    // resolution, and the next one shows both.)
    p.wait_for(
        &format!("document.querySelector('{card} .nb-proposed .nb-resolution-label')"),
        WRITE,
    );
    assert_eq!(
        p.eval_str(&format!(
            "document.querySelector('{card} .nb-proposed .nb-resolution-label').textContent"
        )),
        "Applied by Sam Suggester — "
    );
    let credits = p.eval_str(&format!(
        "document.querySelector('{card} .nb-credits').textContent"
    ));
    assert!(credits.ends_with("· applied by Sam Suggester"), "{credits}");

    // Rejecting the applied edit offers to put the old text back: a new suggestion on the
    // applied text, applied at once. The chapter is then as it was, but for the second edit.
    // (On /review as it stays: the builds the apply set off are all served first, so no live
    // reload comes between the click and the look at the card.)
    settle(server.port, 0, Duration::from_millis(1500));
    p.goto(&format!("{url}review.html"));
    p.wait_for(
        &format!("document.querySelector('{card} .nb-proposed .nb-resolution-label')"),
        WRITE,
    );
    p.click(&format!("{card} .nb-reject"));
    p.wait_for(
        &format!("document.activeElement === document.querySelector('{card} .nb-reason')"),
        SECS,
    );
    assert_eq!(
        p.eval(&format!(
            "(() => {{ const l = document.querySelector('{card} .nb-revert'); return [l.hidden, l.textContent, l.querySelector('input').checked]; }})()"
        )),
        json!([false, " Also put back “the ones we test most heavily” (a new suggested edit, applied at once)", true])
    );
    type_text(&mut p, "Heavily was right: ARM is what we test most.");
    let before = comment_files(&dir);
    mark_document(&mut p);
    p.click(&format!("{card} .nb-reject-send"));
    let want = original.replacen("Raspberry Pi,", "Raspberry Pi board,", 1);
    assert_ne!(want, original);
    wait::until(WRITE, "the old text back in the chapter", || {
        (std::fs::read_to_string(&chapter).unwrap() == want).then_some(())
    });
    let first = wait_comment(&dir.join(format!("{id}.json")), WRITE, "reopened", |v| {
        v["status"] == "open"
    });
    assert_eq!(
        first["thread"].as_array().unwrap().last().unwrap()["body"],
        "Heavily was right: ARM is what we test most."
    );
    let revert = wait_new_comment(&dir, &before, WRITE);
    let revert = wait_comment(
        &dir.join(format!("{}.json", revert["id"].as_str().unwrap())),
        WRITE,
        "the revert applied",
        |v| v["status"] == "addressed",
    );
    assert_eq!(
        (
            &revert["suggestion"]["quote"],
            &revert["suggestion"]["text"],
            &revert["suggestion"]["applied"]["by"]
        ),
        (
            &json!("the ones we test most thoroughly"),
            &json!(quote),
            &json!("Sam Suggester")
        )
    );
    assert_eq!(
        revert["thread"][0]["body"],
        "Rejected the applied edit: this puts “the ones we test most heavily” back."
    );
    wait_reloaded(&mut p, WRITE);
    assert_eq!(
        toast_text(&mut p),
        "Rejected: the comment is open again, and “the ones we test most heavily” is back in the chapter."
    );
    assert_same_origin_and_clean(&mut p, server.port);
}

/// A comment another reviewer writes reaches an open page at once: the server patches it
/// into the chapter's island before any rebuild, the page reloads, and the client marks its
/// quote itself (the rebuild that follows marks it too).
#[test]
fn a_comment_from_elsewhere_is_marked_before_the_rebuild() {
    let mut p = page!(1280, 900);
    let server = book_example();
    let url = base(server.port);
    p.goto(&format!("{url}guide/installing.html"));
    wait_writable(&mut p);
    // The reload the patch causes comes well before the rebuild's (which waits 300 ms for
    // the store to be quiet, then builds): that page has it pending, marked by the client.
    // A loaded machine can be slow enough for the rebuilt page to come first; that attempt
    // does not count, and a new comment is tried (three times at most).
    let mut id = String::new();
    for attempt in 1..=3 {
        mark_document(&mut p);
        let t = Instant::now();
        id = post_comment(
            server.port,
            json!({
                "page": "book-example/src/guide/installing", "space": "book", "scope": "selection",
                "anchor": { "quote": "Raspberry Pi", "prefix": "Most stations run on a ", "suffix": ", so the ARM builds", "section": "Installing Skylark" },
                "body": "Which Pi?", "author": "Olga Other"
            }),
        );
        wait_next_load(&mut p, WRITE);
        let seen = p.try_eval(&format!(
            "[{ISLAND}.comments.find(c => c.id === '{id}').anchoring.status, [...document.querySelectorAll('mark.nb-mark[data-nb-id=\"{id}\"]')].map(m => m.textContent).join('')]"
        ));
        eprintln!(
            "attempt {attempt}: {seen:?} {:?} after the POST",
            t.elapsed()
        );
        match seen {
            Ok(v) if v[0] == "pending" => {
                assert_eq!(v, json!(["pending", "Raspberry Pi"]));
                break;
            }
            _ if attempt < 3 => wait_reloaded(&mut p, WRITE),
            seen => panic!("the rebuild always came before the patched page: {seen:?}"),
        }
    }
    // The pending mark opens its thread. The rebuild's reload may come while it opens (on a
    // slow machine the build is done some 600 ms after the POST): then the rebuilt page's
    // mark must open it.
    mark_document(&mut p);
    let mark = format!("mark.nb-mark[data-nb-id=\"{id}\"]");
    let thread = format!("document.querySelector('.nb-pop .nb-thread[data-nb-id=\"{id}\"]')");
    // The reload may also come between finding the mark and clicking it: the click is made
    // on the mark of whichever page is there, once it has one.
    let js_mark = serde_json::to_string(&mark).unwrap();
    let mut at = None;
    for _ in 0..3 {
        p.wait_for(&format!("document.querySelector({js_mark})"), SECS);
        at = p
            .try_eval(&format!(
                "(() => {{ const el = document.querySelector({js_mark}); if (!el) return null;
                   el.scrollIntoView({{block: 'center'}});
                   const r = el.getClientRects()[0] || el.getBoundingClientRect();
                   return [r.left + r.width / 2, r.top + r.height / 2]; }})()"
            ))
            .ok()
            .and_then(|v| Some((v.get(0)?.as_f64()?, v.get(1)?.as_f64()?)));
        if at.is_some() {
            break;
        }
    }
    let (x, y) = at.expect("the comment's mark, on the patched or the rebuilt page");
    p.click_at(x, y);
    p.wait_for(&format!("{thread} || !window.__nbOldDocument"), SECS);
    let opened = p.try_eval(&format!(
        "{thread} && window.__nbOldDocument === true ? document.querySelector('.nb-pop').textContent : null"
    ));
    let text = match opened {
        Ok(Value::String(text)) => text,
        _ => {
            eprintln!("the rebuild reloaded the page before the thread opened");
            wait_reloaded(&mut p, WRITE);
            p.wait_for(&format!("document.querySelector({js_mark})"), SECS);
            p.click(&mark);
            p.wait_for(&thread, SECS);
            p.eval_str("document.querySelector('.nb-pop').textContent")
        }
    };
    assert!(text.contains("Which Pi?"), "{text}");
}

/// A patch of another chapter's island does not reload a page that shows none of it; the
/// rebuild that follows does.
#[test]
fn a_patch_of_another_chapter_leaves_the_page_alone() {
    let mut p = page!(1280, 900);
    let server = book_example();
    let url = base(server.port);
    p.goto(&format!("{url}guide/configuration.html"));
    wait_writable(&mut p);
    p.wait_for("document.documentElement.dataset.nbLive === 'socket'", SECS);
    mark_document(&mut p);
    let g = generation(server.port);
    post_comment(
        server.port,
        json!({ "page": "book-example/src/guide/installing", "space": "book", "scope": "page", "body": "Elsewhere." }),
    );
    // The page heard of the patch (the rebuild comes at least 300 ms later) and stayed.
    p.wait_for(
        &format!(
            "document.documentElement.dataset.nbGeneration === '{}'",
            g + 1
        ),
        SECS,
    );
    assert!(
        p.eval_bool("window.__nbOldDocument === true"),
        "no reload for another chapter's patch"
    );
    // The rebuild reloads it.
    wait_reloaded(&mut p, WRITE);
}

/* ------------------------------------------------- a static site over http */

#[test]
fn a_static_site_over_http_stays_read_only() {
    let mut p = page!(1280, 900);
    // The same book, built and published by a plain file server: the API is not there.
    let server = book_example();
    // A suggested edit in the store: shown, never with an Apply button.
    let suggestion_id = post_comment(
        server.port,
        json!({
            "page": "book-example/src/guide/installing", "space": "book", "scope": "selection",
            "anchor": { "quote": "Raspberry Pi", "prefix": "Most stations run on a ", "suffix": ", so the ARM builds", "section": "Installing Skylark" },
            "suggestion": { "text": "Raspberry Pi board" }
        }),
    );
    let out = server.book.parent().unwrap().join("published");
    build(&server.book, Some(&out), &[]);
    let site = static_site(&out);
    let url = base(site.port);
    p.count_handled_responses();
    p.goto(&format!("{url}guide/installing.html"));
    p.wait_for(
        "performance.getEntriesByType('resource').some(e => e.name.includes('/__notabene/api/status'))",
        SECS,
    );
    // The probe's answer (a 404) handled by the client: the write side stayed off.
    p.wait_for("window.__nbResponsesHandled >= 1", SECS);
    assert!(!p.eval_bool("document.documentElement.classList.contains('nb-write')"));
    assert_eq!(
        p.eval_i64("document.querySelectorAll('.nb-sel-btn, .nb-block-add, .nb-composer, .nb-actions').length"),
        0,
        "no write UI"
    );
    p.click(&format!("mark.nb-mark[data-nb-id=\"{suggestion_id}\"]"));
    p.wait_for(
        &format!("document.querySelector('.nb-pop .nb-thread[data-nb-id=\"{suggestion_id}\"] .nb-suggestion ins.nb-word')"),
        SECS,
    );
    assert_eq!(
        p.eval_i64("document.querySelectorAll('.nb-apply').length"),
        0,
        "read-only"
    );
    p.eval("document.querySelector('.nb-pop .nb-close') && document.querySelector('.nb-pop .nb-close').click()");
    // Selecting text offers nothing. The selection seen as the client would see it: a
    // `selectionchange` listener added now runs after any of the client's (listeners run in
    // the order they were added), and the timer it sets fires after the client's own look at
    // the selection (120 ms after the event; timers of a longer delay set later fire later).
    p.eval(
        "document.addEventListener('selectionchange', () => setTimeout(() => { window.__nbSelSeen = true; }, 250), { once: true })",
    );
    p.eval(&format!(
        "(() => {{ const r = {RANGE_OF}('Most stations run on a Raspberry Pi'); getSelection().removeAllRanges(); getSelection().addRange(r); }})()"
    ));
    p.wait_for("window.__nbSelSeen === true", SECS);
    assert_eq!(
        p.eval_i64("document.querySelectorAll('.nb-sel-btn').length"),
        0
    );
    // A word selected with the mouse (a double click): a toast says why nothing is offered.
    let at = p.eval(&format!(
        "(() => {{ const b = {RANGE_OF}('stations').getBoundingClientRect(); return [b.left + b.width / 2, b.top + b.height / 2]; }})()"
    ));
    let (x, y) = (at[0].as_f64().unwrap(), at[1].as_f64().unwrap());
    for count in [1, 2] {
        for ty in ["mousePressed", "mouseReleased"] {
            p.call(
                "Input.dispatchMouseEvent",
                json!({ "type": ty, "x": x, "y": y, "button": "left", "buttons": 1, "clickCount": count }),
            );
        }
    }
    p.wait_for(
        "String(getSelection()).trim() === 'stations' && !!document.querySelector('.nb-toast:not([hidden])')",
        SECS,
    );
    assert_eq!(
        p.eval_str("document.querySelector('.nb-toast').textContent"),
        "Comments are read-only here — run mdbook-notabene serve to comment."
    );
    // /review keeps showing the CLI command.
    p.goto(&format!("{url}review.html"));
    p.wait_for("document.querySelector('.nb-card .nb-approve')", SECS);
    p.click(".nb-card .nb-approve");
    p.wait_for("!document.querySelector('.nb-card .nb-cmd').hidden", SECS);
    assert!(
        p.eval_str("document.querySelector('.nb-card .nb-cmd-text').textContent")
            .starts_with("notabene comments done ")
    );
    // The only API request was the probe (one per page), answered 404.
    let api: Vec<String> = p
        .requests()
        .into_iter()
        .filter(|u| u.contains("__notabene"))
        .collect();
    assert_eq!(
        api,
        vec![
            format!("{url}__notabene/api/status"),
            format!("{url}__notabene/api/status")
        ],
        "only the status probe"
    );
    assert_same_origin_and_clean(&mut p, site.port);
}

/* ------------------------------------------------------- touch, narrow */

#[test]
fn touch_screen_docks_the_comment_button_and_composes_in_a_sheet() {
    let mut p = page!(390, 844);
    p.call(
        "Emulation.setDeviceMetricsOverride",
        json!({ "width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": true }),
    );
    p.call(
        "Emulation.setTouchEmulationEnabled",
        json!({ "enabled": true, "maxTouchPoints": 5 }),
    );
    let server = book_example();
    let url = base(server.port);
    p.goto(&format!("{url}guide/sensors.html"));
    wait_writable(&mut p);
    assert!(
        p.eval_bool("matchMedia('(pointer: coarse)').matches"),
        "touch emulation"
    );
    p.eval("localStorage.setItem('notabene:author', 'Tess Touch')");
    // A long-press selection ends with pointercancel on Android: the selection is picked up.
    let quote = "Wind and rain sensors are calibrated by the manufacturer.";
    p.eval(&format!(
        "(() => {{ const r = {RANGE_OF}({q}); r.startContainer.parentElement.scrollIntoView({{block: 'center'}});
           getSelection().removeAllRanges(); getSelection().addRange(r);
           document.dispatchEvent(new PointerEvent('pointercancel', {{ bubbles: true, pointerType: 'touch' }})); }})()",
        q = serde_json::to_string(quote).unwrap()
    ));
    p.wait_for("!document.querySelector('.nb-sel-btn').hidden", SECS);
    let docked = p.eval(
        "(() => { const b = document.querySelector('.nb-sel-btn'); const r = b.getBoundingClientRect();
                  return [b.classList.contains('nb-docked'), getComputedStyle(b).position, Math.round(innerHeight - r.bottom), Math.round(r.height)]; })()",
    );
    assert_eq!(docked[0], true, "{docked}");
    assert_eq!(docked[1], "fixed", "{docked}");
    assert!(
        docked[2].as_i64().unwrap() < 40,
        "docked at the bottom: {docked}"
    );
    assert!(
        docked[3].as_i64().unwrap() >= 44,
        "a finger-sized target: {docked}"
    );
    p.screenshot("serve-touch-docked");
    p.click(".nb-sel-btn");
    p.wait_for("document.querySelector('.nb-compose.nb-sheet')", SECS);
    // No "Ctrl+Enter" hint where the pointer is a finger.
    assert!(p.eval_bool(
        "matchMedia('(pointer: coarse)').matches && !document.querySelector('.nb-compose .nb-hint')"
    ));
    p.wait_for(
        "document.activeElement && document.activeElement.matches('.nb-compose textarea')",
        SECS,
    );
    type_text(&mut p, "Which manufacturer factors?");
    // The sheet slides in: let it settle before tapping inside it.
    p.wait_for("document.getAnimations().length === 0", SECS);
    let inside = p.eval_bool(
        "document.querySelector('.nb-compose-save').getBoundingClientRect().bottom <= innerHeight",
    );
    assert!(inside, "the sheet's Save button is on screen");
    p.screenshot("serve-touch-sheet");
    let dir = server.store().join("book-example/src/guide/sensors");
    let before = comment_files(&dir);
    let g = generation(server.port);
    p.click(".nb-compose-save");
    let c = wait_new_comment(&dir, &before, WRITE);
    assert_eq!(c["anchor"]["quote"], quote);
    assert_eq!(c["thread"][0]["author"], "Tess Touch");
    let id = c["id"].as_str().unwrap().to_string();
    wait_rebuilt(&mut p, server.port, g);
    let e = island_entry(&mut p, &id);
    assert_eq!(e["anchoring"]["status"], "exact", "{e:#}");
    assert_same_origin_and_clean(&mut p, server.port);
}

/* ------------------------------------------------- thread actions and reject */

#[test]
fn thread_actions_reply_edit_hold_resolve_reopen_delete_and_reject() {
    let mut p = page!(1280, 900);
    let server = book_example();
    let url = base(server.port);
    let page = "book-example/src/guide/sensors";
    let (code, c) = server.json(
        "POST",
        "/__notabene/api/comments",
        &json!({ "page": page, "space": "book", "scope": "page", "body": "Typo in the title", "author": "Ann Other" }),
    );
    assert_eq!(code, 201, "{c}");
    let id = c["id"].as_str().unwrap().to_string();
    let file = server.store().join(page).join(format!("{id}.json"));
    let g = generation(server.port);
    settle(server.port, g, Duration::from_millis(600));
    p.goto(&format!("{url}guide/sensors.html"));
    wait_writable(&mut p);
    p.eval("localStorage.setItem('notabene:author', 'Lee Editor'); localStorage.setItem('notabene:email', 'lee@example.com')");
    let item = format!(".nb-discussion-item[data-nb-id=\"{id}\"]");

    // Edit (an open comment without replies).
    p.eval(&format!(
        "document.querySelector('{item}').scrollIntoView({{block: 'center'}})"
    ));
    p.click(&format!("{item} .nb-act-edit"));
    p.wait_for(
        "document.activeElement && document.activeElement.matches('.nb-edit-body')",
        SECS,
    );
    assert_eq!(
        p.eval_str("document.activeElement.value"),
        "Typo in the title"
    );
    p.eval("document.activeElement.select()");
    type_text(&mut p, "Typo in the title: “Sensrs”");
    mark_document(&mut p);
    ctrl_enter(&mut p);
    wait_comment(&file, WRITE, "edited", |v| {
        v["thread"][0]["body"] == "Typo in the title: “Sensrs”"
    });
    wait_reloaded(&mut p, WRITE);

    // Reply.
    p.click(&format!("{item} .nb-act-reply"));
    p.wait_for(
        "document.activeElement && document.activeElement.matches('.nb-reply-body')",
        SECS,
    );
    type_text(&mut p, "Fixed in the next pass.");
    p.screenshot("serve-thread-reply");
    mark_document(&mut p);
    p.click(&format!("{item} .nb-reply-send"));
    let v = wait_comment(&file, WRITE, "replied", |v| {
        v["thread"].as_array().is_some_and(|t| t.len() == 2)
    });
    assert_eq!(
        v["thread"][1],
        json!({ "author": "Lee Editor <lee@example.com>", "body": "Fixed in the next pass.", "ts": v["thread"][1]["ts"] })
    );
    wait_reloaded(&mut p, WRITE);
    assert!(
        !p.eval_bool(&format!("!!document.querySelector('{item} .nb-act-edit')")),
        "no edit once answered"
    );

    // Hold, then resolve, then reopen.
    mark_document(&mut p);
    p.click(&format!("{item} .nb-act-hold"));
    wait_comment(&file, WRITE, "held", |v| v["hold"] == true);
    wait_reloaded(&mut p, WRITE);
    assert_eq!(
        p.eval_str(&format!(
            "document.querySelector('{item} .nb-act-hold').textContent"
        )),
        "Release hold"
    );
    mark_document(&mut p);
    p.click(&format!("{item} .nb-act-resolve"));
    let v = wait_comment(&file, WRITE, "resolved", |v| v["status"] == "resolved");
    assert_eq!(
        v["resolution"],
        json!({ "note": "", "by": "Lee Editor <lee@example.com>" })
    );
    wait_reloaded(&mut p, WRITE);
    p.eval(&format!(
        "document.querySelector('{item}').closest('details').open = true"
    ));
    mark_document(&mut p);
    p.click(&format!("{item} .nb-act-reopen"));
    let v = wait_comment(&file, WRITE, "reopened", |v| v["status"] == "open");
    assert_eq!(v["resolution"], Value::Null);
    wait_reloaded(&mut p, WRITE);

    // Resolve a text comment from its popover (a click on its mark), on another chapter.
    p.goto(&format!("{url}guide/configuration.html"));
    wait_writable(&mut p);
    let mark_id = p.eval_str(
        "(() => { const m = [...document.querySelectorAll('mark.nb-mark[data-nb-status=\"open\"]')]
                   .find(m => !m.classList.contains('nb-held')); return m ? m.dataset.nbId : ''; })()",
    );
    assert!(
        !mark_id.is_empty(),
        "an open mark on the configuration chapter"
    );
    let mark_file = find_comment_file(&server.store(), &mark_id);
    p.click(&format!("mark.nb-mark[data-nb-id=\"{mark_id}\"]"));
    p.wait_for(
        &format!(
            "document.querySelector('.nb-pop .nb-thread[data-nb-id=\"{mark_id}\"] .nb-act-resolve')"
        ),
        SECS,
    );
    mark_document(&mut p);
    p.click(&format!(
        ".nb-pop .nb-thread[data-nb-id=\"{mark_id}\"] .nb-act-resolve"
    ));
    wait_comment(&mark_file, WRITE, "resolved", |v| v["status"] == "resolved");
    wait_reloaded(&mut p, WRITE);
    assert!(!p.eval_bool(&format!(
        "!!document.querySelector('mark.nb-mark[data-nb-id=\"{mark_id}\"]')"
    )));
    p.goto(&format!("{url}guide/sensors.html"));
    wait_writable(&mut p);

    // Delete, after a confirmation.
    p.eval(&format!(
        "document.querySelector('{item}').scrollIntoView({{block: 'center'}})"
    ));
    p.click(&format!("{item} .nb-act-delete"));
    p.wait_for(
        &format!("document.querySelector('{item} .nb-delete-confirm')"),
        SECS,
    );
    p.screenshot("serve-delete-confirm");
    assert!(file.exists(), "nothing deleted before the confirmation");
    mark_document(&mut p);
    p.click(&format!("{item} .nb-delete-confirm"));
    wait::until(WRITE, "the comment file deleted", || {
        (!file.exists()).then_some(())
    });
    wait_reloaded(&mut p, WRITE);
    assert!(!p.eval_bool(&format!("!!document.querySelector('{item}')")));

    // Reject on /review: the reason becomes a reply and the comment is open again.
    p.goto(&format!("{url}review.html"));
    wait_writable(&mut p);
    let card_id =
        p.eval_str("document.querySelector('.nb-card:not(.nb-suggestion-card)').dataset.nbId");
    let card = format!(".nb-card[data-nb-id=\"{card_id}\"]");
    let card_page = p.eval_str(&format!(
        "(() => {{ const a = document.querySelector('{card} .nb-card-page'); return a.getAttribute('href'); }})()"
    ));
    assert!(!card_page.is_empty());
    let card_file = find_comment_file(&server.store(), &card_id);
    p.click(&format!("{card} .nb-reject"));
    p.wait_for(
        &format!("document.activeElement === document.querySelector('{card} .nb-reason')"),
        SECS,
    );
    // An empty reason is refused, inline.
    p.click(&format!("{card} .nb-reject-send"));
    p.wait_for(
        &format!("!document.querySelector('{card} .nb-card-actions .nb-error').hidden"),
        SECS,
    );
    p.eval(&format!(
        "document.querySelector('{card} .nb-reason').focus()"
    ));
    type_text(&mut p, "The table still lists gzip as the default.");
    mark_document(&mut p);
    p.click(&format!("{card} .nb-reject-send"));
    let v = wait_comment(&card_file, WRITE, "rejected", |v| v["status"] == "open");
    let last = v["thread"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["body"], "The table still lists gzip as the default.");
    assert_eq!(last["author"], "Lee Editor <lee@example.com>");
    wait_reloaded(&mut p, WRITE);
    p.wait_for(&format!("!document.querySelector('{card}')"), SECS);
    assert_same_origin_and_clean(&mut p, server.port);
}

/// After each action the reader sees its result: the thread acted on is open again after the
/// live reload, the page where it was, and the toast's Undo takes the change back through the
/// API — in the store too, byte for byte.
#[test]
fn you_see_what_you_did_and_can_undo_it() {
    let mut p = page!(1400, 1000);
    let server = book_example();
    let url = base(server.port);
    p.goto(&format!("{url}guide/configuration.html"));
    wait_writable(&mut p);
    p.eval("localStorage.setItem('notabene:author', 'Lee Editor')");
    let id = p.eval_str(
        "(() => { const m = [...document.querySelectorAll('mark.nb-mark[data-nb-status=\"open\"]')]
                   .find(m => !m.classList.contains('nb-held')); return m ? m.dataset.nbId : ''; })()",
    );
    assert!(!id.is_empty(), "an open mark on the configuration chapter");
    let file = find_comment_file(&server.store(), &id);
    let before = std::fs::read(&file).unwrap();
    let mark = format!("mark.nb-mark[data-nb-id=\"{id}\"]");
    let thread = format!(".nb-pop .nb-thread[data-nb-id=\"{id}\"]");
    let open_thread = |p: &mut Page| {
        p.eval(&format!(
            "document.querySelector('{mark}').scrollIntoView({{block: 'center'}})"
        ));
        p.click(&mark);
        p.wait_for(
            &format!("!!document.querySelector('{thread} .nb-act-reply')"),
            SECS,
        );
    };
    open_thread(&mut p);

    // Reply, then the reload: the thread is open, with the reply, the page where it was.
    p.click(&format!("{thread} .nb-act-reply"));
    p.wait_for(
        "document.activeElement && document.activeElement.matches('.nb-reply-body')",
        SECS,
    );
    type_text(&mut p, "Checked against the code: still true.");
    let y = p.eval("window.scrollY").as_f64().unwrap();
    mark_document(&mut p);
    ctrl_enter(&mut p);
    wait_comment(&file, WRITE, "replied", |v| {
        v["thread"].as_array().is_some_and(|t| t.len() == 2)
    });
    wait_reloaded(&mut p, WRITE);
    p.wait_for(&format!("!!document.querySelector('{thread}')"), SECS);
    assert!(
        p.eval_str(&format!("document.querySelector('{thread}').textContent"))
            .contains("Checked against the code: still true."),
        "the reply is shown in the reopened thread"
    );
    assert_eq!(toast_text(&mut p), "Reply sent.");
    let y2 = p.eval("window.scrollY").as_f64().unwrap();
    assert!(
        (y2 - y).abs() <= 2.0,
        "the page stayed where it was: {y} → {y2}"
    );
    let replied = std::fs::read(&file).unwrap();

    // Resolve, then Undo: open again, in the store byte for byte.
    mark_document(&mut p);
    p.click(&format!("{thread} .nb-act-resolve"));
    wait_comment(&file, WRITE, "resolved", |v| v["status"] == "resolved");
    wait_reloaded(&mut p, WRITE);
    // Resolved: its mark is gone, and its entry is open in the panel.
    p.wait_for(&format!("!document.querySelector('{mark}') && !!document.querySelector('#nb-panel .nb-entry[data-nb-id=\"{id}\"] .nb-entry-main[aria-expanded=\"true\"]')"), SECS);
    // (A rebuild of the reply may land first and reload the page with its own toast: the
    // resolve's reload follows, with its toast, whose Undo is the one to click.)
    wait_toast(&mut p, "Resolved.");
    mark_document(&mut p);
    p.click(".nb-toast .nb-toast-action");
    wait_comment(&file, WRITE, "undone", |v| v["status"] == "open");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        replied,
        "the undo put back the very bytes"
    );
    wait_reloaded(&mut p, WRITE);
    p.wait_for(&format!("!!document.querySelector('{thread}')"), SECS);
    // (As above: the resolve's own rebuild may reload the page once more, with its toast,
    // before the undo's reload shows this one.)
    wait_toast(&mut p, "Undone.");

    // Hold, then Undo.
    mark_document(&mut p);
    p.click(&format!("{thread} .nb-act-hold"));
    wait_comment(&file, WRITE, "held", |v| v["hold"] == true);
    wait_reloaded(&mut p, WRITE);
    wait_toast(&mut p, "Put on hold.");
    mark_document(&mut p);
    p.click(".nb-toast .nb-toast-action");
    wait_comment(&file, WRITE, "hold undone", |v| v["hold"] != true);
    assert_eq!(std::fs::read(&file).unwrap(), replied);
    wait_reloaded(&mut p, WRITE);

    // Delete, then Undo: the file is back as it was.
    p.wait_for(
        &format!("!!document.querySelector('{thread} .nb-act-delete')"),
        SECS,
    );
    p.click(&format!("{thread} .nb-act-delete"));
    p.wait_for(
        &format!("!!document.querySelector('{thread} .nb-delete-confirm')"),
        SECS,
    );
    // The delete's answer reaches the page only after the rebuild it causes was announced (a
    // slow answer): the reload waits for it, and the toast with its Undo survives the reload.
    p.eval(
        "(() => {
           const fetch0 = window.fetch;
           window.fetch = async function (u, o) {
             const answer = await fetch0.apply(this, arguments);
             if (!(o && o.method === 'DELETE')) return answer;
             const g = document.documentElement.dataset.nbGeneration;
             const until = performance.now() + 10000;
             while (document.documentElement.dataset.nbGeneration === g && performance.now() < until) {
               await new Promise((r) => setTimeout(r, 20));
             }
             sessionStorage.setItem('nbTestAnsweredAfter', String(document.documentElement.dataset.nbGeneration !== g));
             return answer;
           };
         })()",
    );
    mark_document(&mut p);
    p.click(&format!("{thread} .nb-delete-confirm"));
    wait::until(WRITE, "the comment file deleted", || {
        (!file.exists()).then_some(())
    });
    wait_toast(&mut p, "Comment deleted.");
    // (It did: the answer came after the rebuild was announced.)
    p.wait_for(
        "sessionStorage.getItem('nbTestAnsweredAfter') === 'true'",
        SECS,
    );
    p.wait_for(
        "!!document.querySelector('.nb-toast:not([hidden]) .nb-toast-action')",
        SECS,
    );
    p.click(".nb-toast .nb-toast-action");
    wait::until(WRITE, "the comment file restored", || {
        file.exists().then_some(())
    });
    assert_eq!(std::fs::read(&file).unwrap(), replied);
    wait_reloaded(&mut p, WRITE);
    p.wait_for(&format!("!!document.querySelector('{mark}')"), SECS);

    // An undo of a change that was changed since is refused, and the store is left alone.
    let (code, v) = server.json(
        "POST",
        "/__notabene/api/undo",
        &json!({ "page": "book-example/src/guide/configuration", "id": id, "updatedAt": "2000-01-01T00:00:00.000Z" }),
    );
    assert_eq!(
        (code, v["error"].as_str().unwrap_or("")),
        (404, "nothing to undo")
    );
    assert_eq!(std::fs::read(&file).unwrap(), replied);
    assert_ne!(replied, before);

    // Approve on /review, then Undo: addressed again.
    p.goto(&format!("{url}review.html"));
    wait_writable(&mut p);
    let card_id =
        p.eval_str("document.querySelector('.nb-card[data-nb-status=\"addressed\"]').dataset.nbId");
    let card = format!(".nb-card[data-nb-id=\"{card_id}\"]");
    let card_file = find_comment_file(&server.store(), &card_id);
    let card_before = std::fs::read(&card_file).unwrap();
    p.eval(&format!(
        "document.querySelector('{card}').scrollIntoView({{block: 'center'}})"
    ));
    mark_document(&mut p);
    p.click(&format!("{card} .nb-approve"));
    wait_comment(&card_file, WRITE, "approved", |v| v["status"] == "resolved");
    wait_reloaded(&mut p, WRITE);
    assert_eq!(toast_text(&mut p), "Approved.");
    mark_document(&mut p);
    p.click(".nb-toast .nb-toast-action");
    wait_comment(&card_file, WRITE, "approval undone", |v| {
        v["status"] == "addressed"
    });
    assert_eq!(std::fs::read(&card_file).unwrap(), card_before);
    wait_reloaded(&mut p, WRITE);
    p.wait_for(
        &format!("!!document.querySelector('{card}.nb-card-again')"),
        SECS,
    );
    assert_same_origin_and_clean(&mut p, server.port);
}

/// The text of the toast on screen ('' when none).
/// Waits (up to a write's time) until the visible toast says `text`: a reload that lands
/// before the one the test waits for shows its own toast first.
fn wait_toast(p: &mut Page, text: &str) {
    p.wait_for(
        &format!("document.querySelector('.nb-toast:not([hidden]) .nb-toast-text')?.textContent === {text:?}"),
        WRITE,
    );
    assert_eq!(toast_text(p), text);
}

/// The text of the toast shown, waited for. It is read in one question: a live reload may land
/// between two (the page after an action is reloaded once patched and once rebuilt, the toast
/// said again after each), and a question asked while the page navigates is asked again.
fn toast_text(p: &mut Page) -> String {
    let shown =
        "document.querySelector('.nb-toast:not([hidden]) .nb-toast-text')?.textContent || ''";
    let deadline = Instant::now() + SECS;
    loop {
        if let Ok(Value::String(text)) = p.try_eval(shown)
            && !text.is_empty()
        {
            return text;
        }
        assert!(Instant::now() < deadline, "no toast shown within {SECS:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The file of comment `id` anywhere in the store.
fn find_comment_file(store: &std::path::Path, id: &str) -> std::path::PathBuf {
    fn walk(p: &std::path::Path, name: &str) -> Option<std::path::PathBuf> {
        if p.is_dir() {
            std::fs::read_dir(p)
                .ok()?
                .flatten()
                .find_map(|e| walk(&e.path(), name))
        } else {
            (p.file_name()? == name).then(|| p.to_path_buf())
        }
    }
    walk(store, &format!("{id}.json")).unwrap_or_else(|| panic!("no file for comment {id}"))
}

/* ------------------------------------------------------ capture fidelity */

/// JS: `(seed, count) => {items: [{quote, prefix, suffix, section, expected}], ambiguous}` —
/// `count` random word-aligned ranges of 1–30 words of `main` text (none touching script,
/// style, diagrams or client UI), each captured with the client's `captureAnchor`. A range
/// whose whole context (40 units + quote + 40 units) occurs more than once in the chapter
/// cannot be told apart by any text-quote anchor (repeated code in the Rustonomicon): it is
/// counted in `ambiguous` and another one is drawn.
const RANDOM_CAPTURES: &str = r#"((seed, count) => {
  let s = seed >>> 0;
  const rnd = () => { s = (s + 0x6D2B79F5) | 0; let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t; return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
  const main = document.querySelector('main');
  const SKIP = 'script, style, pre.mermaid, [data-nb-ui]';
  const words = [];
  const w = document.createTreeWalker(main, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, {
    acceptNode: (n) => n.nodeType === 3 ? NodeFilter.FILTER_ACCEPT : (n.matches(SKIP) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_SKIP) });
  for (let n = w.nextNode(); n; n = w.nextNode()) {
    const re = /\S+/g; let m;
    while ((m = re.exec(n.nodeValue))) words.push({ node: n, start: m.index, end: m.index + m[0].length });
  }
  const excluded = [...main.querySelectorAll(SKIP)];
  const flat = window.__notabene.flatText();
  const occurrences = (needle) => { let n = 0; for (let at = flat.indexOf(needle); at >= 0 && n < 2; at = flat.indexOf(needle, at + 1)) n++; return n; };
  const out = [];
  let ambiguous = 0;
  for (let tries = 0; out.length < count && tries < count * 100; tries++) {
    const len = 1 + Math.floor(rnd() * 30);
    const i = Math.floor(rnd() * words.length);
    const j = Math.min(words.length - 1, i + len - 1);
    const r = document.createRange();
    r.setStart(words[i].node, words[i].start);
    r.setEnd(words[j].node, words[j].end);
    if (excluded.some((el) => r.intersectsNode(el))) continue;
    const a = window.__notabene.captureAnchor(r);
    if (!a) throw new Error('no anchor for ' + JSON.stringify(String(r)));
    if (a.quote !== String(r)) throw new Error('quote ' + JSON.stringify(a.quote) + ' != selection ' + JSON.stringify(String(r)));
    if (occurrences(a.prefix + a.quote + a.suffix) > 1) { ambiguous++; continue; }
    out.push(Object.assign(a, { expected: String(r) }));
  }
  return { items: out, ambiguous };
})"#;

/// JS: `(items) => Promise<[id|error]>`: POSTs every capture (one batch, in parallel).
const POST_ALL: &str = r#"((items) => Promise.all(items.map((it, k) => fetch('/__notabene/api/comments', {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ page: it.page, space: it.space, scope: 'selection', author: 'Fidelity Bot',
      body: 'fidelity #' + k, anchor: { quote: it.quote, prefix: it.prefix, suffix: it.suffix, section: it.section } })
  }).then((r) => r.json().then((j) => r.status === 201 ? j.id : 'ERROR ' + r.status + ' ' + JSON.stringify(j))))))"#;

/// JS: `(urls) => Promise<{id: anchoring}>`: the island comments of each chapter, as rebuilt.
const ISLANDS_OF: &str = r#"((urls) => Promise.all(urls.map((u) => fetch(u, { cache: 'no-store' }).then((r) => r.text()).then((html) => {
    const doc = new DOMParser().parseFromString(html, 'text/html');
    const isl = doc.querySelector('script.nb-data');
    return isl ? JSON.parse(isl.textContent).comments : [];
  }))).then((lists) => { const out = {}; lists.flat().forEach((c) => { out[c.id] = c.anchoring || null; }); return out; }))"#;

fn normalize(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn seed() -> u32 {
    std::env::var("NB_FIDELITY_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_261_130)
}

/// Makes `total` captures spread over `chapters` (relative URLs) of the book served on `port`,
/// POSTs them in one batch, waits for the rebuild and checks every anchor.
fn fidelity(
    p: &mut Page,
    port: u16,
    book: &std::path::Path,
    chapters: &[String],
    total: usize,
    label: &str,
) {
    let t0 = Instant::now();
    let url = base(port);
    let seed = seed();
    eprintln!(
        "{label}: seed {seed} (NB_FIDELITY_SEED), {} chapters",
        chapters.len()
    );
    let mut items: Vec<Value> = Vec::new();
    let mut ambiguous = 0;
    for (k, ch) in chapters.iter().enumerate() {
        let want = total / chapters.len() + usize::from(k < total % chapters.len());
        p.goto(&format!("{url}{ch}"));
        let island = p.eval(ISLAND);
        let got = p.eval(&format!(
            "{RANDOM_CAPTURES}({}, {want})",
            seed.wrapping_add(k as u32 * 7919)
        ));
        ambiguous += got["ambiguous"].as_i64().unwrap_or(0);
        let got = got["items"].as_array().unwrap().clone();
        assert_eq!(got.len(), want, "{ch}: not enough selectable text");
        for mut g in got {
            g["page"] = island["page"].clone();
            g["space"] = island["space"].clone();
            g["url"] = json!(ch);
            items.push(g);
        }
    }
    let t_capture = t0.elapsed();
    // POST from a same-origin page of the server that has no chapter (no live reload there).
    p.goto(&format!("{url}__fidelity__"));
    let g0 = generation(port);
    let ids = p.eval(&format!("{POST_ALL}({})", Value::Array(items.clone())));
    let ids: Vec<String> = ids
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    let errors: Vec<&String> = ids.iter().filter(|i| i.starts_with("ERROR")).collect();
    assert!(errors.is_empty(), "{label}: POSTs refused: {errors:#?}");
    let t_post = t0.elapsed();
    settle(port, g0, Duration::from_millis(800));
    let urls: Vec<String> = chapters.iter().map(|c| format!("{url}{c}")).collect();
    let deadline = Instant::now() + Duration::from_secs(90);
    let anchoring = loop {
        let a = p.eval(&format!("{ISLANDS_OF}({})", json!(urls)));
        if ids.iter().all(|id| a.get(id).is_some()) {
            break a;
        }
        assert!(
            Instant::now() < deadline,
            "{label}: the rebuilt pages lack some comments"
        );
        std::thread::sleep(Duration::from_millis(300));
    };
    // The island carries the status; the anchored text comes from the same resolver through
    // `notabene anchors --json` (islands are lean: no text) unless the island has it.
    let listing: Value = serde_json::from_str(&cli(book, &["anchors", "--json"], "")).unwrap();
    let texts: std::collections::HashMap<String, String> = listing["comments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap_or_default().to_string(),
                c["anchoring"]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect();
    let mut failures = Vec::new();
    for (id, it) in ids.iter().zip(&items) {
        let a = &anchoring[id];
        let expected = normalize(it["expected"].as_str().unwrap());
        let text = normalize(
            a["text"]
                .as_str()
                .or_else(|| texts.get(id).map(String::as_str))
                .unwrap_or(""),
        );
        if a["status"] != "exact" || text != expected {
            failures.push(json!({
                "id": id, "url": it["url"], "status": a["status"], "confidence": a["confidence"],
                "selected": expected, "anchored": text,
                "anchor": { "quote": it["quote"], "prefix": it["prefix"], "suffix": it["suffix"], "section": it["section"] }
            }));
        }
    }
    eprintln!(
        "{label}: {} captures ({ambiguous} ambiguous ranges redrawn) in {t_capture:?}, posted by {t_post:?}, all checked by {:?}; {} failures",
        ids.len(),
        t0.elapsed(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{label}: {} of {} captures did not re-anchor exactly:\n{:#}",
        failures.len(),
        ids.len(),
        Value::Array(failures.clone())
    );
}

#[test]
fn capture_fidelity_random_selections_book_example_and_nomicon() {
    let mut p = page!(1280, 900);
    // mdBook's own book.js asks play.rust-lang.org which crates its playground has, on a page
    // with runnable Rust (the Nomicon's); a test machine without a network has no answer, and
    // book.js leaves that rejection uncaught. That is mdBook's, not the client's.
    p.expect_error("at fetch_with_timeout");
    let server = book_example();
    let chapters: Vec<String> = [
        "index.html",
        "guide/installing.html",
        "guide/configuration.html",
        "guide/sensors.html",
        "reference/cli.html",
        "reference/troubleshooting.html",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    fidelity(
        &mut p,
        server.port,
        &server.book,
        &chapters,
        100,
        "book-example",
    );

    let nomicon = corpus_next_to(&server, "nomicon");
    let summary = std::fs::read_to_string(nomicon.book.join("src/SUMMARY.md")).unwrap();
    let all: Vec<String> = summary
        .lines()
        .filter_map(|l| {
            let at = l.find("](")?;
            let rest = &l[at + 2..];
            let md = &rest[..rest.find(')')?];
            md.strip_suffix(".md").map(|s| format!("{s}.html"))
        })
        .collect();
    assert!(all.len() > 20, "{all:?}");
    // Ten chapters spread over the book.
    let chapters: Vec<String> = (0..10).map(|i| all[i * all.len() / 10].clone()).collect();
    fidelity(
        &mut p,
        nomicon.port,
        &nomicon.book,
        &chapters,
        100,
        "nomicon",
    );
}

/// The in-page editor under `serve`: the ✎ of a paragraph opens its Markdown; the edit is
/// saved with Ctrl+Enter, the card that follows closes the comment it answers with a one-line
/// description. The chapter file differs only in that block, the comment is resolved with the
/// journal entry linked, the page's other comments are still exact after the rebuild, and the
/// page shows the new text.
#[test]
fn edit_a_paragraph_in_the_page_and_close_the_comment_it_answers() {
    let mut p = page!(1280, 900);
    let server = book_example();
    let url = base(server.port);
    let file = server.book.join("src/guide/sensors.md");
    let original = std::fs::read_to_string(&file).unwrap();
    p.goto(&format!("{url}guide/sensors.html"));
    wait_writable(&mut p);
    let para = "[...document.querySelectorAll('main > p')].find(e => e.textContent.startsWith('Every entry needs'))";
    p.wait_for(
        &format!("{para} && {para}.previousElementSibling.matches('button.nb-edit-btn')"),
        SECS,
    );
    assert_eq!(
        p.eval_str("document.documentElement.dataset.nbEditor"),
        "on"
    );
    // The ✎ is a keyboard stop, named.
    assert_eq!(
        p.eval_str(&format!(
            "{para}.previousElementSibling.getAttribute('aria-label')"
        )),
        "Edit this block"
    );
    p.eval(&format!("{para}.previousElementSibling.focus()"));
    p.key("Enter");
    p.wait_for(
        "document.activeElement && document.activeElement.matches('.nb-editor-src')",
        SECS,
    );
    let old = "Every entry needs a `kind` and a bus.";
    assert!(p.eval_str("document.activeElement.value").starts_with(old));
    // The preview is the server's rendering of the Markdown.
    p.wait_for("!!document.querySelector('.nb-editor-preview code')", SECS);
    let new = "Every entry needs a `kind` and a bus, and nothing more.";
    p.eval(&format!(
        "(() => {{ const t = document.activeElement; const at = t.value.indexOf({old:?}); t.setSelectionRange(at, at + {len}); }})()",
        len = old.len()
    ));
    type_text(&mut p, new);
    ctrl_enter(&mut p);
    // The card: the comment marked in this block first.
    p.wait_for("!document.querySelector('.nb-editor-card').hidden", SECS);
    let ids: Vec<String> = serde_json::from_str(&p.eval_str(
        "JSON.stringify([...document.querySelectorAll('.nb-editor-tick')].map(b => b.value))",
    ))
    .unwrap();
    assert_eq!(
        ids.first().map(String::as_str),
        Some("c_mwt1s7r4gz7k"),
        "{ids:?}"
    );
    p.eval("document.querySelector('.nb-editor-tick[value=c_mwt1s7r4gz7k]').click()");
    p.eval("document.querySelector('.nb-editor-desc').focus()");
    type_text(&mut p, "Said what an entry needs.");
    p.screenshot("in-page-editor");
    let g0 = generation(server.port);
    ctrl_enter(&mut p);
    wait_rebuilt(&mut p, server.port, g0);
    // The file: only that block changed.
    let now = std::fs::read_to_string(&file).unwrap();
    assert_eq!(now, original.replacen(old, new, 1));
    // The comment: resolved, linked to the journal entry that records the change.
    let c: Value = serde_json::from_str(
        &std::fs::read_to_string(
            server
                .store()
                .join("book-example/src/guide/sensors/c_mwt1s7r4gz7k.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(c["status"], json!("resolved"));
    assert_eq!(c["resolution"]["note"], json!("Said what an entry needs."));
    let entry = server.journal_entry(c["resolution"]["journalEntryId"].as_str().unwrap());
    assert_eq!(entry["changes"][0]["comments"], json!(["c_mwt1s7r4gz7k"]));
    // The page shows the new text, and the other comments keep their exact anchors.
    p.wait_for(
        &format!(
            "document.querySelector('main').textContent.includes({:?})",
            "and a bus, and nothing more."
        ),
        SECS,
    );
    // Reloaded where it was: the edited paragraph in view.
    assert!(p.eval_bool(&format!(
        "(() => {{ const r = {para}.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; }})()"
    )));
    for id in ["c_mwp2po2nk5ji", "c_mwt21r485yk5"] {
        let a = island_entry(&mut p, id);
        assert_eq!(a["anchoring"]["status"], json!("exact"), "{id}: {a}");
    }
    p.screenshot("in-page-editor-saved");

    // /review's "Fix in page" opens the chapter with the editor on the comment's block.
    p.goto(&format!("{url}review.html"));
    wait_writable(&mut p);
    let fix = "document.querySelector('.nb-card[data-nb-id=c_mwp2po2nk5ji] .nb-fix-in-page')";
    p.wait_for(&format!("{fix} && {fix}.getClientRects().length > 0"), SECS);
    let href = p.eval_str(&format!("{fix}.href"));
    assert!(
        href.contains("edit=1") && href.contains("nb=c_mwp2po2nk5ji"),
        "{href}"
    );
    p.goto(&href);
    p.wait_for("!!document.querySelector('.nb-editor-src')", SECS);
    assert!(
        p.eval_str("document.querySelector('.nb-editor-src').value")
            .contains("the raw reading is multiplied by `calibration`")
    );

    // An image pasted into the source: written next to the chapter, its Markdown inserted; the
    // same bytes pasted again reuse the file.
    let paste = r#"(() => {
        const png = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='), c => c.charCodeAt(0));
        const t = document.querySelector('.nb-editor-src');
        t.setSelectionRange(0, 0);
        const dt = new DataTransfer();
        dt.items.add(new File([png], 'shot.png', { type: 'image/png' }));
        t.dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
    })()"#;
    p.eval(paste);
    p.wait_for(
        "document.querySelector('.nb-editor-src').value.startsWith('![](./image-')",
        SECS,
    );
    let md = p.eval_str("document.querySelector('.nb-editor-src').value");
    let name = md["![](./".len()..md.find(')').unwrap()].to_string();
    assert!(name.ends_with(".png"), "{name}");
    assert!(server.book.join("src/guide").join(&name).is_file());
    p.eval(paste);
    p.wait_for(
        &format!(
            "document.querySelector('.nb-editor-src').value.startsWith('![](./{name})![](./{name})')"
        ),
        SECS,
    );
    let images = std::fs::read_dir(server.book.join("src/guide"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("image-")
        })
        .count();
    assert_eq!(images, 1, "the second paste reused the file");
    p.key("Escape");
    p.wait_for("!document.querySelector('.nb-editor')", SECS);
}
