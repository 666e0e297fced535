//! A suggestion writes text and only text, and `apply` is safe against crashes and other
//! writers: hostile suggestions (an mdBook `{{#include}}`, a fence break with an `onerror`
//! image, CR line breaks) in fenced, indented and inline code and in prose, through the CLI
//! and through `serve`'s API, are refused with nothing written and nothing in the built site;
//! a symlinked chapter is refused; an `apply` of 50 ids killed at each crash point and run
//! again ends byte for byte where an uninterrupted run ends; a program appending to the
//! chapter while `apply` runs loses no line.

use crate::support::common::{
    self, Out, Tree, build, git, git_init, read, reviewed_book, run, run_with, suggest, tree, write,
};
use crate::support::serve::Server;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::path::Path;

const INCLUDE: &str = "{{#include /etc/passwd}}";
const FENCE_BREAK: &str = "one\n```\n\n<img src=x onerror=alert(1)>\n\n```text\ncode";

const CODE: &str = "# Code

Prose line here.

```text
code line one
code line two
```

    indented line one
    indented line two

Inline `inline words here` in text.

- A list item:

  ```text
  listed code one
  listed code two
  ```
";

/// A git repository holding a one-chapter book with code of every kind, and its store.
fn code_book() -> tempfile::TempDir {
    reviewed_book(&[
        ("book.toml", "[book]\ntitle = \"Safety\"\n"),
        ("src/SUMMARY.md", "# Summary\n\n- [Code](code.md)\n"),
        ("src/code.md", CODE),
    ])
}

fn apply(dir: &Path, ids: &[&str]) -> Out {
    common::journal_entry(dir, "j-1", ids);
    let mut args = vec!["comments", "apply"];
    args.extend_from_slice(ids);
    args.extend_from_slice(&["--journal", "j-1"]);
    run(dir, &args)
}

/// `comments apply ID` refused with exactly `line`, nothing written under `dir`.
#[track_caller]
fn refused(dir: &Path, id: &str, line: &str) {
    common::journal_entry(dir, "j-1", &[id]);
    let before = tree(dir);
    apply(dir, &[id]).fails_with(line);
    assert_eq!(tree(dir), before, "nothing written");
}

/// Every file of a built site that holds `/etc/passwd`'s first line, or an element with an
/// `onerror` attribute.
fn injected(site: &Path) -> Vec<String> {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    let first = passwd.lines().next().unwrap_or("root:x:0:0").to_string();
    let sel = scraper::Selector::parse("[onerror]").unwrap();
    let mut out = Vec::new();
    for (path, node) in tree(site) {
        let common::Node::File(bytes) = node else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        if text.contains(&first) {
            out.push(format!("{path}: /etc/passwd"));
        }
        if path.ends_with(".html")
            && scraper::Html::parse_document(&text)
                .select(&sel)
                .next()
                .is_some()
        {
            out.push(format!("{path}: onerror"));
        }
    }
    out
}

/// Installs the plugin into the book at `d` and builds it with the embedded engine.
fn install_and_build(d: &Path) {
    run(d, &["install"]).ok();
    build(d, None, &[]);
}

#[test]
fn hostile_suggestions_in_code_are_refused_by_the_cli_and_never_reach_the_site() {
    let tmp = code_book();
    let d = tmp.path();
    let directive = "holds an mdBook directive (`{{#`), which mdBook would expand";
    let cases: &[(&str, &str, &str)] = &[
        ("code line two", INCLUDE, directive),
        (
            "code line two",
            FENCE_BREAK,
            "holds ```, the code block's own fence, which would end the block",
        ),
        ("indented line two", INCLUDE, directive),
        (
            "indented line two",
            FENCE_BREAK,
            "spans lines, which this indented code block cannot take as written",
        ),
        ("Prose line", INCLUDE, directive),
        (
            "Prose line",
            "plain\r===\r- item",
            "spans lines, which would change the paragraph",
        ),
        (
            "Prose line",
            "plain\u{2028}# heading",
            "spans lines, which would change the paragraph",
        ),
    ];
    for (quote, text, why) in cases {
        let id = suggest(d, "src/code", quote, text);
        refused(
            d,
            &id,
            &format!("notabene: the suggestion of {id:?} {why}; nothing written (suggestion.text)"),
        );
    }
    // Inside inline code nothing is applied at all.
    for text in [INCLUDE, FENCE_BREAK] {
        let id = suggest(d, "src/code", "inline words", text);
        refused(
            d,
            &id,
            &format!(
                "notabene: the quote of {id:?} spans inline code the replacement would break; nothing written (anchor.quote)"
            ),
        );
    }
    assert_eq!(read(&d.join("src/code.md")), CODE);
    // The book, built with the comments holding those texts: none of it is in the site.
    install_and_build(d);
    assert!(d.join("book/code.html").exists());
    assert_eq!(injected(&d.join("book")), Vec::<String>::new());
}

#[test]
fn code_suggestions_that_are_only_code_are_applied() {
    let tmp = code_book();
    let d = tmp.path();
    // Multi-line code in a fence, with the fence's character in a shorter run, and in a list
    // item, where each new line takes the item's indentation.
    let a = suggest(d, "src/code", "code line two", "code line 2\r\nlet s = ``;");
    let b = suggest(d, "src/code", "listed code two", "listed 2\nlisted 3");
    let c = suggest(d, "src/code", "indented line two", "indented {{x}}");
    // HTML in code, on lines of their own inside the list item: still code.
    let e = suggest(
        d,
        "src/code",
        "listed code one",
        "x\n\n<img src=x onerror=alert(1)>",
    );
    let out = apply(d, &[&a, &b, &c, &e]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        read(&d.join("src/code.md")),
        CODE.replace("code line two", "code line 2\nlet s = ``;")
            .replace("listed code two", "listed 2\n  listed 3")
            .replace("indented line two", "indented {{x}}")
            .replace("listed code one", "x\n  \n  <img src=x onerror=alert(1)>")
    );
    install_and_build(d);
    let page = read(&d.join("book/code.html"));
    assert!(
        page.contains("&lt;img src=x onerror=alert(1)&gt;"),
        "shown as code"
    );
    assert_eq!(injected(&d.join("book")), Vec::<String>::new());
}

#[test]
fn a_chapter_reached_through_a_symlink_is_refused() {
    let tmp = code_book();
    let d = tmp.path();
    write(
        &d.join("elsewhere/real.md"),
        "# Linked\n\nLinked prose here.\n",
    );
    std::os::unix::fs::symlink("../elsewhere/real.md", d.join("src/linked.md")).unwrap();
    write(
        &d.join("src/SUMMARY.md"),
        "# Summary\n\n- [Code](code.md)\n- [Linked](linked.md)\n",
    );
    let id = suggest(d, "src/linked", "Linked prose", "Other prose");
    refused(
        d,
        &id,
        &format!(
            "notabene: the quote of {id:?} comes from src/linked.md, which is reached through a symlink; apply the suggestion by hand; nothing written (anchor.quote)"
        ),
    );
    assert_eq!(
        read(&d.join("elsewhere/real.md")),
        "# Linked\n\nLinked prose here.\n"
    );
}

/// `serve`'s `POST apply` refuses the same suggestions with the same reason, writes nothing,
/// and the served pages hold none of it.
#[test]
fn hostile_suggestions_are_refused_through_the_api() {
    let server = Server::start(&[], |book| {
        let path = book.join("src/guide/installing.md");
        let mut md = std::fs::read_to_string(&path).unwrap();
        md.push_str("\n```text\nserved code one\nserved code two\n```\n\n    served indented one\n    served indented two\n\nServed `inline served words` here.\n");
        std::fs::write(&path, md).unwrap();
    });
    let page = "book-example/src/guide/installing";
    let chapter = server.book.join("src/guide/installing.md");
    let before_md = read(&chapter);
    let directive = "holds an mdBook directive (`{{#`), which mdBook would expand";
    let cases: &[(&str, &str)] = &[
        ("served code two", directive),
        (
            "served code two",
            "holds ```, the code block's own fence, which would end the block",
        ),
        ("served indented two", directive),
        (
            "served indented two",
            "spans lines, which this indented code block cannot take as written",
        ),
    ];
    let inline = "spans inline code the replacement would break";
    let cases: Vec<(&str, &str)> = cases
        .iter()
        .copied()
        .chain([("inline served", inline), ("inline served", inline)])
        .collect();
    for (k, (quote, why)) in cases.iter().enumerate() {
        let text = if k % 2 == 0 { INCLUDE } else { FENCE_BREAK };
        let (code, body) = server.request(
            "POST",
            "/__notabene/api/comments",
            &[("Content-Type", "application/json")],
            json!({ "page": page, "space": "book", "scope": "selection", "author": "Eve",
                    "anchor": { "quote": quote },
                    "suggestion": { "text": text } })
            .to_string()
            .as_bytes(),
        );
        assert_eq!(code, 201, "{body}");
        let id = serde_json::from_str::<Value>(&body).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string();
        let store_before = tree(&server.store());
        let (code, body) = server.request(
            "POST",
            "/__notabene/api/apply",
            &[("Content-Type", "application/json")],
            json!({ "id": id }).to_string().as_bytes(),
        );
        assert_eq!(
            (code, serde_json::from_str::<Value>(&body).unwrap()),
            (
                409,
                json!({ "error": if *why == inline {
                    format!("the quote of {id:?} {why}; nothing written (anchor.quote)")
                } else {
                    format!("the suggestion of {id:?} {why}; nothing written (suggestion.text)")
                } })
            )
        );
        assert!(tree(&server.store()) == store_before, "the store changed");
        assert_eq!(read(&chapter), before_md, "the chapter changed");
    }
    // The served site, rebuilt with those comments, holds none of it.
    let generation = server.generation();
    let (code, _) = server.request(
        "POST",
        "/__notabene/api/comments",
        &[("Content-Type", "application/json")],
        json!({ "page": page, "space": "book", "scope": "page", "body": "rebuild" })
            .to_string()
            .as_bytes(),
    );
    assert_eq!(code, 201);
    server.wait_rebuild(generation);
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    let first = passwd.lines().next().unwrap_or("root:x:0:0").to_string();
    let sel = scraper::Selector::parse("[onerror]").unwrap();
    for url in ["/guide/installing.html", "/print.html"] {
        let (code, body) = server.request("GET", url, &[], b"");
        assert_eq!(code, 200, "{url}");
        assert!(body.contains("served code two"), "{url} is the built page");
        assert!(!body.contains(&first), "{url} holds /etc/passwd");
        assert!(
            scraper::Html::parse_document(&body)
                .select(&sel)
                .next()
                .is_none(),
            "{url} has an onerror attribute"
        );
    }
}

const PARAGRAPHS: usize = 10;
const CHAPTERS: usize = 5;

/// A git repository with a book of `CHAPTERS` chapters of `PARAGRAPHS` paragraphs, one
/// suggestion on each paragraph (50), all committed; returns the ids.
fn fifty(d: &Path) -> Vec<String> {
    write(&d.join("book.toml"), "[book]\ntitle = \"Fifty\"\n");
    let mut summary = String::from("# Summary\n\n");
    for ch in 0..CHAPTERS {
        summary.push_str(&format!("- [Chapter {ch}](ch{ch}.md)\n"));
        let mut md = format!("# Chapter {ch}\n\n");
        for p in 0..PARAGRAPHS {
            md.push_str(&format!(
                "Paragraph {p} of chapter {ch} says old words {ch}x{p} here.\n\n"
            ));
        }
        write(&d.join(format!("src/ch{ch}.md")), &md);
    }
    write(&d.join("src/SUMMARY.md"), &summary);
    git_init(d);
    run(d, &["init", "--no-agents-md"]).ok();
    let mut ids = Vec::new();
    for ch in 0..CHAPTERS {
        for p in 0..PARAGRAPHS {
            ids.push(suggest(
                d,
                &format!("src/ch{ch}"),
                &format!("old words {ch}x{p}"),
                &format!("new *words* {ch}x{p}"),
            ));
        }
    }
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "book"]);
    ids
}

/// The book and its store, without `.git`.
fn work(d: &Path) -> Tree {
    tree(d)
        .into_iter()
        .filter(|(p, _)| p != ".git" && !p.starts_with(".git/"))
        .collect()
}

#[test]
fn an_apply_killed_at_any_point_is_finished_by_the_next_one() {
    let base = common::tempdir();
    let ids = fifty(base.path());
    let id_refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    // A journal entry of its own, written before: the writes counted below are the apply's only.
    common::journal_entry(base.path(), "j-crash", &id_refs);
    common::git_commit_all(base.path(), "journal");
    let mut args = vec!["comments", "apply", "--journal", "j-crash"];
    args.extend_from_slice(&id_refs);
    // The uninterrupted run.
    let reference = common::tempdir();
    common::copy_dir(base.path(), reference.path());
    let out = run(reference.path(), &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let want = work(reference.path());
    let status = git(reference.path(), &["status", "--porcelain"]);
    let mut changed: Vec<&str> = status.lines().collect();
    changed.sort();
    assert_eq!(changed.len(), CHAPTERS + ids.len(), "{status}");
    assert!(
        changed.iter().all(|l| l.starts_with(" M ")),
        "only changes to files that were there: {status}"
    );
    // Writes: the record (1), the chapters (2..=6), the comments (7..=56).
    for point in [
        "before-rename@1",
        "apply-after-intent",
        "before-rename@2",
        "apply-after-file@1",
        "before-rename@4",
        "apply-after-file@5",
        "before-rename@7",
        "apply-after-close@1",
        "before-rename@30",
        "apply-after-close@49",
        "apply-before-cleanup",
    ] {
        let tmp = common::tempdir();
        let d = tmp.path();
        common::copy_dir(base.path(), d);
        let crashed = run_with(d, &args, None, &[("NOTABENE_FAILPOINT", point)]);
        assert_eq!(
            crashed.code, -1,
            "{point}: the process aborts: {}",
            crashed.stderr
        );
        if !["before-rename@1", "apply-before-cleanup"].contains(&point) {
            // Killed after the record was written, before the last close: verify says what
            // is unfinished.
            let v = run(d, &["comments", "verify"]);
            assert!(
                v.stdout.contains("[apply-interrupted]"),
                "{point}: {}",
                v.stdout
            );
            assert_eq!(v.code, 1, "{point}");
        }
        let again = run(d, &args);
        assert_eq!(again.code, 0, "{point}: {}", again.stderr);
        assert_eq!(
            work(d),
            want,
            "{point}: the same bytes as an uninterrupted run"
        );
        assert_eq!(
            git(d, &["status", "--porcelain"]),
            status,
            "{point}: nothing but the intended changes"
        );
        // And a third run changes nothing.
        let third = run(d, &args);
        assert_eq!(third.code, 1, "{point}");
        assert_eq!(work(d), want, "{point}");
    }
}

#[test]
fn lines_appended_while_apply_runs_are_kept() {
    for round in 0..3 {
        let tmp = common::tempdir();
        let d = tmp.path();
        let ids = fifty(d);
        // Ten suggestions, all in chapter 0, while another program appends to it.
        let chapter = d.join("src/ch0.md");
        let original = read(&chapter);
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = {
            let stop = stop.clone();
            let chapter = chapter.clone();
            std::thread::spawn(move || {
                use std::io::Write;
                let mut n = 0usize;
                while !stop.load(std::sync::atomic::Ordering::SeqCst) || n < 20 {
                    let mut f = std::fs::OpenOptions::new()
                        .append(true)
                        .open(&chapter)
                        .unwrap();
                    writeln!(f, "\nAppended line {n}.").unwrap();
                    drop(f);
                    n += 1;
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                n
            })
        };
        let mut args = vec!["comments", "apply"];
        args.extend(ids[..PARAGRAPHS].iter().map(String::as_str));
        let out = run(d, &args);
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let appended = writer.join().unwrap();
        assert_eq!(out.code, 0, "round {round}: {}", out.stderr);
        let mut want = original.clone();
        for p in 0..PARAGRAPHS {
            want = want.replace(
                &format!("old words 0x{p}"),
                &format!("new \\*words\\* 0x{p}"),
            );
        }
        for n in 0..appended {
            want.push_str(&format!("\nAppended line {n}.\n"));
        }
        assert_eq!(
            read(&chapter),
            want,
            "round {round}: every appended line kept"
        );
    }
}

/// An `apply` that writes its own journal entry (no `--journal`, as the browser and MCP do),
/// killed during its edits or after them, then run again with the same ids: every resolution
/// links to the entry the journal holds, and `verify` is clean.
#[test]
fn a_killed_apply_that_journals_itself_leaves_every_resolution_linked() {
    let base = common::tempdir();
    let ids = fifty(base.path());
    let mut args = vec!["comments", "apply"];
    args.extend(ids.iter().map(String::as_str));
    // Writes: the record (1), the chapters (2..=6), the journal (7), the comments (8..=57).
    for point in [
        "apply-after-intent",
        "before-rename@2",
        "apply-after-file@1",
        "before-rename@4",
        "apply-after-file@5",
        "before-rename@7",
        "apply-after-journal",
        "before-rename@8",
        "apply-after-close@20",
        "apply-before-cleanup",
    ] {
        let tmp = common::tempdir();
        let d = tmp.path();
        common::copy_dir(base.path(), d);
        let crashed = run_with(d, &args, None, &[("NOTABENE_FAILPOINT", point)]);
        assert_eq!(crashed.code, -1, "{point}: {}", crashed.stderr);
        let again = run(d, &args);
        assert_eq!(again.code, 0, "{point}: {}", again.stderr);
        let journal: Value =
            serde_json::from_str(&read(&d.join(".notabene/journal.json"))).expect("journal.json");
        let entries = journal.as_array().expect("an array");
        assert_eq!(entries.len(), 1, "{point}: one entry: {journal}");
        let entry = entries[0]["id"].as_str().unwrap();
        let listed: Vec<&str> = entries[0]["changes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["commentIds"][0].as_str().unwrap())
            .collect();
        assert_eq!(listed, ids, "{point}: the entry lists every comment");
        for id in &ids {
            let c: Value =
                serde_json::from_str(run(d, &["comments", "show", id, "--json"]).ok()).unwrap();
            assert_eq!(
                c["resolution"]["journalEntryId"], entry,
                "{point}: {id} links to the entry"
            );
        }
        let v = run(d, &["comments", "verify"]);
        assert_eq!(v.code, 0, "{point}: verify is clean: {}", v.stdout);
    }
}

/// Runs `comments apply <id>` in `d` with the window between its last check of the chapter and
/// the swap widened to 1.5 s; once the new text waits in the store (the window is open),
/// `save` plays an editor saving the chapter. What the apply printed.
fn apply_racing(d: &Path, id: &str, save: impl FnOnce()) -> Out {
    common::journal_entry(d, "j-1", &[id]);
    let (dir, id) = (d.to_path_buf(), id.to_string());
    let apply = std::thread::spawn(move || {
        run_with(
            &dir,
            &["comments", "apply", &id, "--journal", "j-1"],
            None,
            &[("NOTABENE_WIDEN", "apply-before-swap:1500")],
        )
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let waiting = || {
        std::fs::read_dir(d.join(".notabene"))
            .unwrap()
            .filter_map(Result::ok)
            .any(|e| e.file_name().to_string_lossy().starts_with(".ch0.md."))
    };
    while !waiting() {
        assert!(!apply.is_finished(), "the apply ended before its window");
        assert!(std::time::Instant::now() < deadline, "no window seen");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    save();
    apply.join().unwrap()
}

#[test]
fn an_editor_saving_while_apply_swaps_the_chapter_loses_nothing() {
    // An editor that saves by rename (most do) adds a paragraph in the window: the apply
    // makes its edit again on the editor's text, and both are in the file.
    let tmp = common::tempdir();
    let d = tmp.path();
    let ids = fifty(d);
    let chapter = d.join("src/ch0.md");
    let original = read(&chapter);
    let saved = format!("{original}An editor's new paragraph.\n");
    let out = apply_racing(d, &ids[3], || {
        let beside = d.join("src/.ch0.md.editor-save");
        write(&beside, &saved);
        std::fs::rename(&beside, &chapter).unwrap();
    });
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        read(&chapter),
        saved.replace("old words 0x3", "new \\*words\\* 0x3"),
        "the editor's save and the suggestion are both in the file"
    );

    // An editor that saves in place and changes the quoted words: the apply is refused, says
    // nothing was written, and the file is the editor's.
    let tmp = common::tempdir();
    let d = tmp.path();
    let ids = fifty(d);
    let chapter = d.join("src/ch0.md");
    let saved = read(&chapter).replace("old words 0x3", "older words 0x3");
    let out = apply_racing(d, &ids[3], || {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&chapter)
            .unwrap();
        f.write_all(saved.as_bytes()).unwrap();
    });
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("nothing written"), "{}", out.stderr);
    assert_eq!(read(&chapter), saved, "the file is the editor's");
    let c: Value =
        serde_json::from_str(run(d, &["comments", "show", &ids[3], "--json"]).ok()).unwrap();
    assert_eq!(c["status"], "open");
}
