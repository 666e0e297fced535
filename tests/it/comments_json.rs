//! `comments.json` (the `[output.notabene]` renderer) on book-example:
//!
//! * the same bytes whether the renderer runs in process (`mdbook-notabene build`, the
//!   embedded engine) or as mdBook's external `command` over the JSON protocol;
//! * its schema: the top-level shape and key order, every comment exactly as stored (read
//!   straight from the store files, legacy arrays included) plus one `anchoring` object whose
//!   fields are consistent (status, confidence, chapter, url, repository-relative source that
//!   really holds the matched text), and a summary that counts the comments;
//! * agreement with the HTML: every live placed text anchor has its marker group showing the
//!   JSON's matched text, every live placed block anchor its `data-nb-block` element, resolved,
//!   orphaned and page comments have no marker, no marker exists that the JSON does not
//!   predict, and each chapter's data island lists the same comments with the same anchoring.

use crate::support::common;
use crate::support::preprocess;

use common::{book_example, run_plugin};
use mdbook_driver::config::Config;
use notabene_anchoring::text::normalize::normalize;
use preprocess::*;
use pretty_assertions::assert_eq;
use scraper::Html;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The two builds of book-example, made once per test process.
struct Built {
    /// The git work tree holding `book-example/`.
    repo: PathBuf,
    /// `<repo>/book-example`.
    root: PathBuf,
    /// HTML output of the `mdbook-notabene build` run.
    html: PathBuf,
    /// `comments.json` of the `mdbook-notabene build` run (bytes).
    cli_json: Vec<u8>,
    /// `comments.json` of the JSON-protocol run (bytes).
    protocol_json: Vec<u8>,
    /// The parsed document (`cli_json`).
    doc: Value,
}

/// Builds book-example twice (embedded engine; mdBook running the binary over the JSON
/// protocol) in `target/tmp/comments-json` (kept for inspection; wiped at the next run).
fn built() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| {
        let repo = Path::new(env!("CARGO_TARGET_TMPDIR")).join("comments-json");
        if repo.exists() {
            std::fs::remove_dir_all(&repo).unwrap();
        }
        std::fs::create_dir_all(&repo).unwrap();
        // (An earlier build in the source tree is not part of the book.)
        let root = common::stage(&book_example(), &repo, "book-example");
        let toml = common::read(&root.join("book.toml"));
        assert!(!toml.contains("[output.notabene]"), "book-example changed");
        common::write(
            &root.join("book.toml"),
            &format!(
                "{toml}\n[output.notabene]\ncommand = {}\n",
                serde_json::to_string(&plugin_command()).unwrap()
            ),
        );

        // 1. The embedded engine: with two outputs mdBook writes book/html and book/notabene.
        let out = run_plugin(&repo, &["build", "book-example"], None, &[]);
        assert_eq!(
            (out.code, out.stdout.as_str()),
            (
                0,
                "notabene: built book-example — open book-example/book/html/index.html\n"
            ),
            "stderr: {}",
            out.stderr
        );
        let html = root.join("book/html");
        let cli_json = std::fs::read(root.join("book/notabene/comments.json")).unwrap();

        // 2. mdBook (in process) running the binary as preprocessor and as renderer.
        let mut config: Config = common::read(&root.join("book.toml")).parse().unwrap();
        add_plugin(&mut config, json!({}));
        let proto_out = repo.join("out-protocol");
        load(&root, config, &proto_out).build().unwrap();
        let protocol_json = std::fs::read(proto_out.join("notabene/comments.json")).unwrap();
        assert!(proto_out.join("html/index.html").is_file());

        let doc = serde_json::from_slice(&cli_json).unwrap();
        Built {
            repo,
            root,
            html,
            cli_json,
            protocol_json,
            doc,
        }
    })
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .map(String::as_str)
        .collect()
}

fn norm(s: &str) -> String {
    normalize(s).as_string()
}

/// `s` without Markdown punctuation (emphasis, code, links, images), whitespace collapsed.
fn strip_markdown(s: &str) -> String {
    let kept: String = s
        .chars()
        .filter(|c| !matches!(c, '*' | '_' | '`' | '[' | ']' | '(' | ')' | '!' | '\\'))
        .collect();
    norm(&kept)
}

/// Every comment object of the store under `store`, read straight from its files (one
/// object per file, or an array of objects in a legacy per-page file), by id.
fn stored_objects(store: &Path) -> BTreeMap<String, Map<String, Value>> {
    let mut out = BTreeMap::new();
    let mut files = 0;
    for (rel, node) in common::tree(store) {
        let common::Node::File(bytes) = node else {
            continue;
        };
        if rel == "meta.json" || rel == "journal.json" {
            continue;
        }
        assert!(rel.ends_with(".json"), "unexpected store file {rel}");
        files += 1;
        let v: Value = serde_json::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("store file {rel} does not parse: {e}"));
        let objects = match v {
            Value::Array(a) => a,
            o @ Value::Object(_) => vec![o],
            other => panic!("store file {rel} holds {other}"),
        };
        for o in objects {
            let Value::Object(m) = o else {
                panic!("{rel}: not an object")
            };
            let id = m["id"].as_str().unwrap().to_string();
            assert!(out.insert(id.clone(), m).is_none(), "duplicate id {id}");
        }
    }
    assert_eq!(files, 17, "store files of book-example");
    out
}

#[test]
fn the_embedded_engine_and_the_json_protocol_write_the_same_bytes() {
    let b = built();
    assert!(!b.cli_json.is_empty());
    assert!(
        b.cli_json == b.protocol_json,
        "comments.json differs between `mdbook-notabene build` and the JSON protocol:\n{}\n---\n{}",
        String::from_utf8_lossy(&b.cli_json),
        String::from_utf8_lossy(&b.protocol_json)
    );
    // Pretty-printed, one trailing newline at most, and nothing but comments.json written.
    let text = std::str::from_utf8(&b.cli_json).unwrap();
    assert!(text.starts_with("{\n  \"version\": 1,\n"), "{text:.60}");
    let names: Vec<String> = files(&b.root.join("book/notabene")).into_keys().collect();
    assert_eq!(names, ["comments.json"]);
}

#[test]
fn schema() {
    let b = built();
    let doc = &b.doc;

    // Top level, key order as emitted.
    assert_eq!(
        keys(doc),
        ["version", "generator", "book", "summary", "comments"]
    );
    assert_eq!(doc["version"], json!(1));
    assert_eq!(
        doc["generator"],
        json!(format!("mdbook-notabene {}", env!("CARGO_PKG_VERSION")))
    );
    assert_eq!(
        keys(&doc["book"]),
        ["title", "language", "space", "pagePrefix"]
    );
    assert_eq!(
        doc["book"],
        json!({
            "title": "Notabene Field Guide",
            "language": "en",
            "space": "book",
            "pagePrefix": "book-example/src",
        })
    );
    let summary = &doc["summary"];
    assert_eq!(
        keys(summary),
        [
            "comments",
            "pages",
            "anchoring",
            "notInBook",
            "status",
            "held"
        ]
    );
    assert_eq!(
        keys(&summary["anchoring"]),
        ["exact", "fuzzy", "orphan", "page"]
    );
    assert_eq!(keys(&summary["status"]), ["addressed", "open", "resolved"]);
    let prefix = doc["book"]["pagePrefix"].as_str().unwrap();

    // Every comment: the stored object, unchanged and in the same key order, plus `anchoring`.
    let stored = stored_objects(&b.root.join(".notabene"));
    let comments = doc["comments"].as_array().unwrap();
    assert_eq!(
        comments.len(),
        stored.len(),
        "every stored comment is listed"
    );
    let mut seen = BTreeSet::new();
    let mut by_anchor: BTreeMap<&str, u64> = ["exact", "fuzzy", "orphan", "page"]
        .iter()
        .map(|k| (*k, 0))
        .collect();
    let mut by_status: BTreeMap<String, u64> = BTreeMap::new();
    let (mut pages, mut held, mut not_in_book) = (BTreeSet::new(), 0, 0u64);
    for c in comments {
        let id = c["id"].as_str().unwrap();
        assert!(seen.insert(id), "{id} listed twice");
        let mut m = c.as_object().unwrap().clone();
        let anchoring = m.shift_remove("anchoring").expect("anchoring");
        assert_eq!(
            keys(c).last(),
            Some(&"anchoring"),
            "{id}: anchoring comes last"
        );
        let want = &stored[id];
        assert_eq!(
            m.keys().collect::<Vec<_>>(),
            want.keys().collect::<Vec<_>>(),
            "{id}: stored keys and order"
        );
        assert_eq!(&m, want, "{id}: stored values");

        // Summary tallies: anchoring counts cover the comments of this build's pages.
        let status = anchoring["status"].as_str().unwrap();
        if anchoring.get("reason") == Some(&json!("page-not-in-book")) {
            not_in_book += 1;
        } else {
            *by_anchor
                .get_mut(status)
                .unwrap_or_else(|| panic!("{id}: anchoring status {status}")) += 1;
        }
        *by_status
            .entry(c["status"].as_str().unwrap().to_string())
            .or_default() += 1;
        pages.insert(c["page"].as_str().unwrap());
        held += u64::from(c["hold"] == json!(true));

        check_anchoring(b, id, c, &anchoring, prefix);
    }
    assert_eq!(summary["comments"], json!(comments.len()));
    assert_eq!(summary["pages"], json!(pages.len()));
    assert_eq!(
        summary["anchoring"],
        serde_json::to_value(&by_anchor).unwrap()
    );
    assert_eq!(summary["status"], serde_json::to_value(&by_status).unwrap());
    assert_eq!(summary["held"], json!(held));
    assert_eq!(summary["notInBook"], json!(not_in_book));
    // And the numbers of book-example.
    assert_eq!(
        *summary,
        json!({
            "comments": 18,
            "pages": 8,
            "anchoring": { "exact": 13, "fuzzy": 1, "orphan": 1, "page": 1 },
            "notInBook": 2,
            "status": { "addressed": 2, "open": 14, "resolved": 2 },
            "held": 1,
        })
    );
}

/// One comment's `anchoring` object.
fn check_anchoring(b: &Built, id: &str, c: &Value, a: &Value, prefix: &str) {
    let status = a["status"].as_str().unwrap();
    let k = keys(a);
    let page = c["page"].as_str().unwrap();

    // A comment whose page is not in this build (the French ones in an English build): of
    // another language, never an orphan here.
    if k == ["status", "confidence", "reason", "language"] {
        assert_eq!(
            (status, &a["confidence"], &a["reason"], &a["language"]),
            (
                "other-language",
                &Value::Null,
                &json!("page-not-in-book"),
                &json!("fr")
            ),
            "{id}"
        );
        assert!(page.ends_with(".fr"), "{id}: {page} is in the book");
        return;
    }

    let base = [
        "status",
        "confidence",
        "text",
        "chapter",
        "url",
        "source",
        "suggestion",
    ];
    assert_eq!(
        &k[..base.len().min(k.len())],
        &base[..],
        "{id}: anchoring keys"
    );
    let extra: Vec<&str> = k[base.len()..].to_vec();
    let allowed = ["changed", "flags", "block", "code"];
    // `changed`: the stored words and the words there now, for an anchor placed with changes.
    if let Some(ch) = a.get("changed") {
        assert!(
            ch["was"].is_string() && ch["now"].is_string() && ch.as_object().unwrap().len() == 2,
            "{id}: anchoring.changed {ch}"
        );
        assert!(
            status == "fuzzy"
                || a["flags"]["quoteChanged"] == true
                || a["flags"]["contextChanged"] == true,
            "{id}: changed, but placed unchanged"
        );
    }
    let mut last = 0;
    for e in &extra {
        let i = allowed
            .iter()
            .position(|x| x == e)
            .unwrap_or_else(|| panic!("{id}: unexpected anchoring key {e}"));
        assert!(i >= last, "{id}: anchoring key order {k:?}");
        last = i;
    }
    assert!(
        !page.ends_with(".fr"),
        "{id}: a French page in the English build"
    );

    // Status and confidence.
    let conf = &a["confidence"];
    match status {
        "page" => {
            assert_eq!(c["scope"], json!("page"), "{id}");
            assert_eq!(
                (conf, &a["text"], &a["source"], &a["suggestion"]),
                (&Value::Null, &Value::Null, &Value::Null, &Value::Null),
                "{id}"
            );
            assert!(extra.is_empty(), "{id}: {extra:?}");
        }
        "exact" => assert_eq!(conf.as_f64(), Some(1.0), "{id}"),
        "fuzzy" => {
            let x = conf.as_f64().unwrap();
            assert!(x > 0.0 && x < 1.0, "{id}: confidence {x}");
        }
        "orphan" => {
            let x = conf.as_f64().unwrap();
            assert!((0.0..1.0).contains(&x), "{id}: confidence {x}");
            assert_eq!(
                (&a["text"], &a["source"]),
                (&Value::Null, &Value::Null),
                "{id}"
            );
        }
        other => panic!("{id}: anchoring status {other}"),
    }
    if status != "page" {
        assert_ne!(c["scope"], json!("page"), "{id}");
        let flags = &a["flags"];
        assert_eq!(
            keys(flags),
            [
                "quoteChanged",
                "contextChanged",
                "sectionChanged",
                "ambiguous"
            ],
            "{id}"
        );
        assert!(flags.as_object().unwrap().values().all(Value::is_boolean));
    }
    assert_eq!(
        a.get("block").is_some(),
        c["scope"] == json!("block") && a["text"].is_string(),
        "{id}: block"
    );

    // Chapter and URL: `<chapter html>?nb=<id>`, the chapter being the comment's page.
    assert!(a["chapter"].as_str().is_some_and(|s| !s.is_empty()), "{id}");
    let url = a["url"].as_str().unwrap();
    let (file, query) = url.split_once('?').unwrap();
    assert_eq!(query, format!("nb={id}"), "{id}");
    assert!(
        b.html.join(file).is_file(),
        "{id}: {file} not in the output"
    );
    let rel = page.strip_prefix(&format!("{prefix}/")).unwrap();
    let want_file = if rel == "README" {
        "index.html".to_string()
    } else {
        format!("{rel}.html")
    };
    assert_eq!(file, want_file, "{id}");

    // Source: the chapter's Markdown file, relative to the repository, holding the text.
    if let Some(text) = a["text"].as_str() {
        let src = &a["source"];
        assert_eq!(
            keys(src),
            ["path", "start", "end", "line", "column"],
            "{id}"
        );
        let path = src["path"].as_str().unwrap();
        assert_eq!(path, format!("{page}.md"), "{id}: source path");
        let md = common::read(&b.repo.join(path));
        let (start, end) = (
            src["start"].as_u64().unwrap() as usize,
            src["end"].as_u64().unwrap() as usize,
        );
        assert!(start < end && end <= md.len(), "{id}: {start}..{end}");
        let slice = md
            .get(start..end)
            .unwrap_or_else(|| panic!("{id}: {start}..{end} splits a char"));
        let before = &md[..start];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().unwrap().chars().count() + 1;
        assert_eq!(
            (src["line"].as_u64(), src["column"].as_u64()),
            (Some(line as u64), Some(column as u64)),
            "{id}: line/column of byte {start}"
        );
        if a.get("block").is_some() {
            // An image (its alt text is the label) or a diagram (its fenced block).
            match c["anchor"]["kind"].as_str().unwrap() {
                "image" => assert!(
                    slice.starts_with("![") && slice.contains(text),
                    "{id}: {slice:?}"
                ),
                _ => assert!(slice.starts_with("```"), "{id}: {slice:?}"),
            }
        } else {
            assert_eq!(
                strip_markdown(slice),
                strip_markdown(text),
                "{id}: {slice:?}"
            );
            if status == "exact" {
                assert_eq!(
                    norm(text),
                    norm(c["anchor"]["quote"].as_str().unwrap()),
                    "{id}"
                );
            }
        }
    }
    // A suggestion is null or { text, source } (none in book-example).
    match &a["suggestion"] {
        Value::Null => {}
        s => {
            assert_eq!(keys(s), ["text", "source"], "{id}");
            assert_eq!(status, "orphan", "{id}: a suggestion for a placed anchor");
        }
    }
}

/// The HTML files of the output's chapters (the ones carrying exactly one data island), with
/// their island.
fn chapter_islands(html_dir: &Path) -> BTreeMap<String, (Html, String, Value)> {
    let mut out = BTreeMap::new();
    for name in files(html_dir).into_keys() {
        if !name.ends_with(".html") || name == "print.html" {
            continue;
        }
        let doc = html(html_dir, &name);
        let mut isl = islands(&doc);
        match isl.len() {
            0 => continue,
            1 => {}
            n => panic!("{name}: {n} islands"),
        }
        let (page, v, _) = isl.remove(0);
        out.insert(name, (doc, page, v));
    }
    out
}

#[test]
fn html_markers_and_islands_agree_with_the_json() {
    let b = built();
    let comments = b.doc["comments"].as_array().unwrap();
    let chapters = chapter_islands(&b.html);
    assert_eq!(
        chapters.keys().map(String::as_str).collect::<Vec<_>>(),
        [
            "guide/configuration.html",
            "guide/installing.html",
            "guide/sensors.html",
            "index.html",
            "reference/cli.html",
            "reference/troubleshooting.html",
        ]
    );

    // What the JSON predicts for each chapter file: (marked text anchors, marked blocks,
    // marked code anchors), and the island's comments in store order.
    let mut want_marks: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut want_blocks: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut want_code: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut want_island: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    let mut checked = 0;
    for c in comments {
        let id = c["id"].as_str().unwrap();
        let a = &c["anchoring"];
        let status = a["status"].as_str().unwrap();
        let Some(url) = a["url"].as_str() else {
            // Not in this book: on no chapter at all.
            for (file, (doc, _, v)) in &chapters {
                assert!(!island_ids(v).contains(&id), "{file}: {id}");
                assert_eq!(
                    doc.select(&sel(&format!("[data-nb-id=\"{id}\"]"))).count(),
                    0
                );
            }
            continue;
        };
        let file = url.split_once('?').unwrap().0;
        want_island.entry(file).or_default().push(c);
        let (doc, page, _) = chapters
            .get(file)
            .unwrap_or_else(|| panic!("{id}: {file} has no island"));
        assert_eq!(
            page,
            c["page"].as_str().unwrap(),
            "{id}: {file} data-nb-page"
        );
        // The chapter title mdBook puts in <title>.
        let title: String = doc.select(&sel("title")).next().unwrap().text().collect();
        assert!(
            title.starts_with(&format!("{} - ", a["chapter"].as_str().unwrap())),
            "{id}: <title>{title}</title>"
        );

        let live = c["status"] != json!("resolved");
        let placed = matches!(status, "exact" | "fuzzy");
        let marks = doc
            .select(&sel(&format!("mark.nb-mark[data-nb-id=\"{id}\"]")))
            .count();
        let blocks = doc
            .select(&sel(&format!("[data-nb-block~=\"{id}\"]")))
            .count();
        let code = doc
            .select(&sel(&format!("span.nb-code-anchor[data-nb-id=\"{id}\"]")))
            .count();
        let is_block = a.get("block").is_some();
        let is_code = a.get("code").is_some();
        let marked = live && placed;
        assert_eq!(
            (marks > 0, blocks > 0, code > 0),
            (
                marked && !is_block && !is_code,
                marked && is_block,
                marked && is_code
            ),
            "{id} ({status}, {}): marks {marks}, block markers {blocks}, code anchors {code}",
            c["status"]
        );
        if !marked {
            // Not even a stray attribute: the id appears only inside the island.
            let raw = common::read(&b.html.join(file));
            let island_raw: String = doc
                .select(&sel("script.nb-data"))
                .next()
                .unwrap()
                .text()
                .collect();
            let outside = raw.replacen(&island_raw, "", 1);
            assert!(
                !outside.contains(id),
                "{id}: found outside the island of {file}"
            );
            checked += 1;
            continue;
        }
        if is_block {
            assert_eq!(blocks, 1, "{id}");
            want_blocks.entry(file).or_default().insert(id);
            let el = doc
                .select(&sel(&format!("[data-nb-block~=\"{id}\"]")))
                .next()
                .unwrap();
            let text = a["text"].as_str().unwrap();
            match el.value().attr("data-nb-key") {
                Some(key) => assert_eq!(Some(key), c["anchor"]["key"].as_str(), "{id}"),
                None => {
                    let img = el.select(&sel("img")).next().expect("an image");
                    assert_eq!(img.value().attr("alt"), Some(text), "{id}");
                }
            }
        } else if is_code {
            want_code.entry(file).or_default().insert(id);
        } else {
            want_marks.entry(file).or_default().insert(id);
            let groups = mark_groups(doc);
            let g = &groups[id];
            assert_eq!(
                norm(&g.span),
                norm(a["text"].as_str().unwrap()),
                "{id}: marked text vs anchoring.text"
            );
            assert!(
                !g.gaps.chars().any(char::is_alphanumeric),
                "{id}: gaps {:?}",
                g.gaps
            );
            assert_eq!(
                g.statuses,
                BTreeSet::from([c["status"].as_str().unwrap().to_string()]),
                "{id}: data-nb-status"
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 16, "comments of the English book");

    // No marker the JSON does not predict, on any chapter.
    for (file, (doc, _, v)) in &chapters {
        let f = file.as_str();
        let attr_ids = |s: &str, attr: &str| -> BTreeSet<String> {
            doc.select(&sel(s))
                .flat_map(|e| {
                    e.value()
                        .attr(attr)
                        .unwrap_or("")
                        .split_whitespace()
                        .map(str::to_string)
                        .collect::<Vec<_>>()
                })
                .collect()
        };
        let set = |m: &BTreeMap<&str, BTreeSet<&str>>| -> BTreeSet<String> {
            m.get(f)
                .map(|s| s.iter().map(|x| x.to_string()).collect())
                .unwrap_or_default()
        };
        assert_eq!(
            attr_ids("mark.nb-mark", "data-nb-id"),
            set(&want_marks),
            "{f}"
        );
        assert_eq!(
            attr_ids("[data-nb-block]", "data-nb-block"),
            set(&want_blocks),
            "{f}"
        );
        assert_eq!(
            attr_ids("span.nb-code-anchor", "data-nb-id"),
            set(&want_code),
            "{f}"
        );
        assert_eq!(
            attr_ids("[data-nb-id]", "data-nb-id"),
            &set(&want_marks) | &set(&want_code),
            "{f}: other data-nb-id elements"
        );

        // The island: the same comments, in the same order, as comments.json lists for this
        // chapter; the stored fields unchanged; its lean anchoring a subset of the JSON's.
        let want = want_island.get(f).cloned().unwrap_or_default();
        assert_eq!(
            island_ids(v),
            want.iter()
                .map(|c| c["id"].as_str().unwrap())
                .collect::<Vec<_>>(),
            "{f}: island ids"
        );
        for (ic, jc) in v["comments"].as_array().unwrap().iter().zip(&want) {
            let id = jc["id"].as_str().unwrap();
            let (mut im, mut jm) = (
                ic.as_object().unwrap().clone(),
                jc.as_object().unwrap().clone(),
            );
            let (ia, ja) = (
                im.shift_remove("anchoring").unwrap(),
                jm.shift_remove("anchoring").unwrap(),
            );
            assert_eq!(
                Value::Object(im),
                lean_island(&Value::Object(jm), &v["space"]),
                "{f}: {id} stored fields"
            );
            if jc["status"] == "resolved" {
                // The build does not look for resolved comments (nothing shows them in
                // the text); comments.json anchors every comment.
                assert_eq!(
                    ia,
                    json!({ "status": "not-anchored" }),
                    "{f}: {id} anchoring"
                );
                continue;
            }
            assert_eq!(ia["status"], ja["status"], "{f}: {id} anchoring.status");
            // (Numbers compare by value: the island writes `1.0` where comments.json,
            // printed JavaScript-style, writes `1`.)
            for (k, val) in ia.as_object().unwrap() {
                assert!(
                    ja.get(k).is_some_and(|j| same(val, j)),
                    "{f}: {id} anchoring.{k}: island {val}, comments.json {:?}",
                    ja.get(k)
                );
            }
            for k in ["status", "block", "code"] {
                assert_eq!(
                    ia.get(k).is_some(),
                    ja.get(k).is_some(),
                    "{f}: {id} anchoring.{k}"
                );
            }
            assert!(
                ia.as_object()
                    .unwrap()
                    .keys()
                    .all(|k| ["status", "changed", "block", "code"].contains(&k.as_str())),
                "{f}: {id} island anchoring {ia}"
            );
        }
    }
}

#[test]
fn the_comments_page_lists_every_comment_of_its_language_lean_newest_first() {
    let b = built();
    let doc = html(&b.html, "comments.html");
    let data = view_data(&doc);
    assert_eq!(data["view"], json!("comments"));
    assert_eq!(data["space"], json!("book"));
    // Comments on other languages' pages are counted apart, not listed.
    assert_eq!(data["otherLanguages"], json!({ "fr": 2 }));
    // comments.json in the list's order: newest update first, then id.
    let mut want: Vec<&Value> = b.doc["comments"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["anchoring"]["status"] != "other-language")
        .collect();
    assert_eq!(want.len(), 16);
    want.sort_by(|a, b| {
        (b["updatedAt"].as_str(), a["id"].as_str())
            .cmp(&(a["updatedAt"].as_str(), b["id"].as_str()))
    });
    let got = data["comments"].as_array().unwrap();
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        let mut stored = w.as_object().unwrap().clone();
        let anchoring = stored.shift_remove("anchoring").unwrap();
        // The list keeps the page; the lean island form drops it.
        let mut lean = lean_island(&Value::Object(stored), &data["space"]);
        let lean_map = lean.as_object_mut().unwrap();
        let mut entry = serde_json::Map::new();
        for (k, v) in w.as_object().unwrap() {
            if k == "page" {
                entry.insert(k.clone(), v.clone());
            } else if k == "thread" && v.as_array().unwrap().len() > 1 && w["status"] == "resolved"
            {
                // The list holds a resolved thread's first message and the number of replies.
                let t = v.as_array().unwrap();
                entry.insert(k.clone(), json!([t[0]]));
                entry.insert("replies".into(), json!(t.len() - 1));
            } else if let Some(v) = lean_map.get(k) {
                entry.insert(k.clone(), v.clone());
            }
        }
        let mut a = serde_json::Map::new();
        let status = if w["status"] == "resolved" {
            json!("not-anchored")
        } else {
            anchoring["status"].clone()
        };
        a.insert("status".into(), status);
        if let Some(ch) = anchoring.get("chapter") {
            a.insert("chapter".into(), ch.clone());
        }
        // What changed since a live comment was written, as comments.json says it.
        if let Some(ch) = anchoring
            .get("changed")
            .filter(|_| w["status"] != "resolved")
        {
            a.insert("changed".into(), ch.clone());
        }
        entry.insert("anchoring".into(), Value::Object(a));
        entry.insert(
            "url".into(),
            anchoring.get("url").cloned().unwrap_or(Value::Null),
        );
        assert_eq!(g, &Value::Object(entry), "{}", w["id"]);
    }
}

/// JSON equality with numbers compared by value (`1` = `1.0`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|((k, p), (l, q))| k == l && same(p, q))
        }
        _ => a == b,
    }
}

fn island_ids(v: &Value) -> Vec<&str> {
    v["comments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect()
}
