//! Acceptance 1: the preprocessor through the real mdBook pipeline.
//!
//! * book-example, built by `mdbook-notabene build` (in-process preprocessor; its stderr
//!   report is checked line for line) and by mdBook running the binary over the JSON protocol
//!   (the two outputs are byte-identical); golden data islands, markers, block markers.
//! * nomicon and rust-by-example with generated comments (3 per chapter on 40 chapters of
//!   each: prose, lists/tables, code blocks; some with a typo, resolved, addressed or
//!   page-scope), built by mdBook running the binary: one marker group per live text anchor
//!   containing its quote, a code anchor before the `<pre>` of each code match, one data
//!   island per chapter listing exactly that page's comments.

use crate::support::common;
use crate::support::preprocess;

use common::{book_example, corpus, run_plugin, stage};
use notabene_anchoring::text::normalize::normalize;
use notabene_anchoring::text::page_text;
use notabene_store::Store;
use preprocess::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The build report of book-example (resolved comments are not counted).
/// The French comments (`….fr` pages) are not part of the English build.
const REPORT: &str =
    "notabene: 14 comments on 6 pages — 11 exact, 1 fuzzy, 1 orphaned, 1 page-level";
const FUZZY_WARNING: &str = "notabene: warning: fuzzy anchor c_mwm6a3iye2uy on book-example/src/guide/configuration (0.97): «Intervals shorter than five seconds are accepted»";
const OTHER_LANGUAGES: &str =
    "notabene: 2 comments of other languages (fr: 2), shown in their own builds";
const ORPHAN_WARNING: &str = "notabene: warning: orphaned anchor c_mwqa9e2k7d1f on book-example/src/reference/cli: «The --dry-run flag prints the planned uploads with…»";

/// (HTML file, page id, the island's comments as (id, status, anchoring status)).
type Golden = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str, &'static str)],
);

/// book-example: HTML file, page id, and the island's comments as (id, status, anchoring
/// status), in store order.
const GOLDEN: &[Golden] = &[
    (
        "index.html",
        "book-example/src/README",
        &[
            ("c_mwoto81iq7k2", "open", "exact"),
            ("c_mwotwnoo3fwz", "open", "exact"),
            ("c_mwrlggv2m0ta", "open", "page"),
        ],
    ),
    (
        "guide/installing.html",
        "book-example/src/guide/installing",
        &[
            ("c_mwktnas69d1e", "resolved", "not-anchored"),
            ("c_mwrmz21ih8pc", "open", "exact"),
        ],
    ),
    (
        "guide/configuration.html",
        "book-example/src/guide/configuration",
        &[
            ("c_mwm6a3iye2uy", "open", "fuzzy"),
            ("c_mworge1zx4rb", "open", "exact"),
            ("c_mworonpyb6ns", "addressed", "exact"),
        ],
    ),
    (
        "guide/sensors.html",
        "book-example/src/guide/sensors",
        &[
            ("c_mwp2po2nk5ji", "addressed", "exact"),
            ("c_mwt1s7r4gz7k", "open", "exact"),
            ("c_mwt21r485yk5", "open", "exact"),
        ],
    ),
    (
        "reference/cli.html",
        "book-example/src/reference/cli",
        &[
            ("c_mwlygiefp2lo", "resolved", "not-anchored"),
            ("c_mwq6asw3w1ge", "open", "exact"),
            ("c_mwqa9e2k7d1f", "open", "orphan"),
        ],
    ),
    (
        "reference/troubleshooting.html",
        "book-example/src/reference/troubleshooting",
        &[
            ("c_mushb49fr8vd", "open", "exact"),
            ("c_mushjro0z0nq", "open", "exact"),
        ],
    ),
];

/// book-example: the text each live text anchor's marker group shows.
const MARKED: &[(&str, &str)] = &[
    (
        "c_mwm6a3iye2uy",
        "Intervals shorter than ten seconds are accepted",
    ),
    ("c_mworge1zx4rb", "the retry policy"),
    ("c_mworonpyb6ns", "compressed with gzip"),
    (
        "c_mwrmz21ih8pc",
        "takes roughly twenty minutes to compile the full dependency tree",
    ),
    (
        "c_mwp2po2nk5ji",
        "the raw reading is multiplied by calibration and then offset is added",
    ),
    (
        "c_mwt1s7r4gz7k",
        "Anything else is optional and specific to the sensor kind.",
    ),
    ("c_mwq6asw3w1ge", "3 means the archive is unwritable"),
    ("c_mushb49fr8vd", "the wiring diagram in the introduction"),
    (
        "c_mushjro0z0nq",
        "the archive grows by roughly 40 MB per year",
    ),
];

fn norm(s: &str) -> String {
    normalize(s).as_string()
}

fn no_alnum(s: &str) -> bool {
    !s.chars().any(char::is_alphanumeric)
}

/// The stored comments of a store, by id.
fn stored(root: &Path) -> BTreeMap<String, Value> {
    let snap = Store::new(root.join(".notabene")).load().unwrap();
    snap.comments()
        .map(|r| {
            (
                r.comment.id().unwrap().to_string(),
                Value::Object(r.comment.as_map().clone()),
            )
        })
        .collect()
}

/// Island comments without `anchoring`, by id.
fn without_anchoring(island: &Value) -> BTreeMap<String, Value> {
    island["comments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let mut m = c.as_object().unwrap().clone();
            m.remove("anchoring");
            (c["id"].as_str().unwrap().to_string(), Value::Object(m))
        })
        .collect()
}

#[test]
fn book_example_through_the_cli_and_the_json_protocol() {
    let tmp = common::tempdir();
    let root = stage(&book_example(), tmp.path(), "book-example");
    let cli_out = tmp.path().join("out-cli");

    // 1. `mdbook-notabene build`: the report on stderr, nothing else.
    let out = run_plugin(
        tmp.path(),
        &["build", "book-example", "--dest-dir", "out-cli"],
        None,
        &[],
    );
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (
            0,
            "notabene: built book-example — open out-cli/index.html\n",
            format!("{REPORT}\n{FUZZY_WARNING}\n{ORPHAN_WARNING}\n{OTHER_LANGUAGES}\n").as_str()
        )
    );

    // 2. mdBook running the binary over the JSON protocol gives the same bytes.
    let proto_out = tmp.path().join("out-protocol");
    let mut config = neutral_config(&root);
    add_plugin(&mut config, json!({ "review": "approve" }));
    load(&root, config, &proto_out).build().unwrap();
    let (a, b) = (files(&cli_out), files(&proto_out));
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (name, bytes) in &a {
        assert!(
            *bytes == b[name],
            "{name} differs between the CLI build and the protocol build"
        );
    }

    // 3. Golden islands: one per chapter, exactly the page's comments, stored values intact.
    let store = stored(&root);
    let mut live_ids = BTreeSet::new();
    for (file, page, want) in GOLDEN {
        let doc = html(&cli_out, file);
        let isl = islands(&doc);
        assert_eq!(isl.len(), 1, "{file}: islands");
        let (attr, v, raw) = &isl[0];
        assert_eq!(attr, page, "{file}: data-nb-page");
        assert_eq!(v["page"], json!(page));
        assert_eq!(v["version"], json!(1));
        assert_eq!(v["space"], json!("book"));
        assert_eq!(v["mode"], json!("approve"));
        // Open and addressed comments of the English build (resolved and French ones aside),
        // in an element of their own, not in the island.
        assert_eq!(v.get("summary"), None, "{file}: summary inside the island");
        let summaries: Vec<Value> = doc
            .select(&sel("script.nb-summary"))
            .map(|el| serde_json::from_str(&el.text().collect::<String>()).unwrap())
            .collect();
        assert_eq!(
            summaries,
            vec![json!({ "open": 12, "addressed": 2, "review": "approve" })],
            "{file}: summary"
        );
        assert!(!raw.contains("</"), "{file}: raw island holds an end tag");
        let got: Vec<(String, String, String)> = v["comments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["id"].as_str().unwrap().into(),
                    c["status"].as_str().unwrap().into(),
                    c["anchoring"]["status"].as_str().unwrap().into(),
                )
            })
            .collect();
        let want: Vec<(String, String, String)> = want
            .iter()
            .map(|(i, s, a)| (i.to_string(), s.to_string(), a.to_string()))
            .collect();
        assert_eq!(got, want, "{file}");
        for (id, c) in without_anchoring(v) {
            assert_eq!(
                c,
                lean_island(&store[&id], &json!("book")),
                "{file}: {id} round trip"
            );
        }
        for (id, status, _) in &want {
            if status != "resolved" {
                live_ids.insert(id.clone());
            }
        }

        // 4. Marker groups: exactly the live text anchors of the page, showing their text,
        // with the stored context around them.
        let groups = mark_groups(&doc);
        let expected: BTreeMap<&str, &str> = MARKED
            .iter()
            .copied()
            .filter(|(id, _)| want.iter().any(|w| w.0 == *id))
            .collect();
        assert_eq!(
            groups.keys().map(String::as_str).collect::<Vec<_>>(),
            expected.keys().copied().collect::<Vec<_>>(),
            "{file}: marked ids"
        );
        for (id, text) in &expected {
            let g = &groups[*id];
            assert_eq!(norm(&g.span), *text, "{file}: {id}");
            assert!(no_alnum(&g.gaps), "{file}: {id} gaps {:?}", g.gaps);
            let status = &store[*id]["status"];
            assert_eq!(
                g.statuses,
                BTreeSet::from([status.as_str().unwrap().to_string()])
            );
            let anchor = &store[*id]["anchor"];
            if *id != "c_mwm6a3iye2uy" {
                assert_eq!(norm(&g.span), norm(anchor["quote"].as_str().unwrap()));
            }
            // The stored context surrounds the group (so the right occurrence is marked:
            // `the retry policy` appears twice on its page).
            assert!(
                norm(&g.before).ends_with(&norm(anchor["prefix"].as_str().unwrap())),
                "{file}: {id} before {:?}",
                g.before
            );
            assert!(
                norm(&g.after).starts_with(&norm(anchor["suffix"].as_str().unwrap())),
                "{file}: {id} after {:?}",
                g.after
            );
        }
        // Resolved comments have no marker of any kind.
        let text = std::fs::read_to_string(cli_out.join(file)).unwrap();
        for (id, status, _) in &want {
            if status == "resolved" {
                assert!(!text.contains(&format!("data-nb-id=\"{id}\"")), "{id}");
                assert_eq!(
                    doc.select(&sel(&format!("[data-nb-block~=\"{id}\"]")))
                        .count(),
                    0
                );
            }
        }
        // The one quote inside a code block (sensors' TOML) is a code anchor, not a mark.
        let code: Vec<String> = doc
            .select(&sel("span.nb-code-anchor"))
            .filter_map(|e| e.value().attr("data-nb-id").map(str::to_string))
            .collect();
        let want_code: &[&str] = if *file == "guide/sensors.html" {
            &["c_mwt21r485yk5"]
        } else {
            &[]
        };
        assert_eq!(code, want_code, "{file}: code anchors");
    }
    assert_eq!(live_ids.len(), 14);

    // 5. Block comments: the image and the diagram of the introduction.
    let doc = html(&cli_out, "index.html");
    let img: Vec<_> = doc
        .select(&sel("span.nb-block[data-nb-block~=\"c_mwoto81iq7k2\"]"))
        .collect();
    assert_eq!(img.len(), 1);
    assert!(
        img[0]
            .select(&sel("img[src=\"images/wiring.svg\"]"))
            .next()
            .is_some()
    );
    let diagram: Vec<_> = doc
        .select(&sel("pre.mermaid[data-nb-block~=\"c_mwotwnoo3fwz\"]"))
        .collect();
    assert_eq!(diagram.len(), 1);
    assert_eq!(
        diagram[0].value().attr("data-nb-key"),
        Some("mermaid:1i7vbgk")
    );
    assert_eq!(
        diagram[0].text().collect::<String>(),
        "graph TD\n    A[Sensor bus] --> B[Skylark daemon]\n    B --> C[(Local archive)]\n    B --> D[Upload queue]\n"
    );
    assert_eq!(doc.select(&sel("[data-nb-block]")).count(), 2);

    // 6. print.html carries every chapter's island, in book order.
    let print = html(&cli_out, "print.html");
    let pages: Vec<String> = islands(&print).into_iter().map(|i| i.0).collect();
    assert_eq!(
        pages,
        GOLDEN.iter().map(|g| g.1.to_string()).collect::<Vec<_>>()
    );
}

/// Builds a corpus book with generated comments through mdBook running the binary, and
/// checks every chapter.
fn corpus_end_to_end(name: &str, seed: u64) {
    let tmp = common::tempdir();
    let root = stage(&corpus(name), tmp.path(), name);
    let config0 = neutral_config(&root);
    let md0 = load(&root, config0.clone(), &tmp.path().join("unused"));
    let gens = generate(
        &root,
        &md0,
        &GenOptions {
            per_chapter: 3,
            max_chapters: Some(40),
            typo_every: 10,
            resolved_every: 9,
            addressed_every: 5,
            page_every: 8,
            seed,
            ..GenOptions::default()
        },
    );
    let count = |f: &dyn Fn(&Gen) -> bool| gens.iter().filter(|g| f(g)).count();
    let code = count(&|g| matches!(g.kind, Kind::Code(_)));
    let listy = count(&|g| matches!(g.kind, Kind::List | Kind::Table));
    let tables = count(&|g| g.kind == Kind::Table);
    eprintln!(
        "{name}: {} comments: {code} in code, {listy} in lists/tables ({tables} tables), {} typos, {} resolved, {} page",
        gens.len(),
        count(&|g| g.typo),
        count(&|g| g.status == "resolved"),
        count(&|g| g.kind == Kind::Page),
    );
    assert!(gens.len() >= 110, "{name}: {} comments", gens.len());
    assert!(
        code >= 20 && listy >= 10,
        "{name}: too few code/list anchors"
    );
    assert!(count(&|g| g.typo) >= 5 && count(&|g| g.status == "resolved") >= 5);

    let out = tmp.path().join("out");
    let mut config = config0;
    install_client(&root, &mut config);
    add_plugin(&mut config, json!({}));
    load(&root, config, &out).build().unwrap();

    let options = mdbook_notabene::model::book::text_options(&md0.config).unwrap();
    let ids = page_ids(&root);
    let mut checked = 0;
    let mut failures = Vec::new();
    for ch in chapters(&md0) {
        let page = ids.for_chapter(&ch.source_path);
        assert!(page.starts_with(&format!("{name}/src/")), "{page}");
        let mine: Vec<&Gen> = gens.iter().filter(|g| g.page == page).collect();
        let doc = html(&out, &ch.html);
        let file = &ch.html;

        // One island: this page, exactly its comments, each with an anchoring status.
        let isl = islands(&doc);
        assert_eq!(isl.len(), 1, "{file}: islands");
        let (attr, v, _) = &isl[0];
        assert_eq!(attr, &page);
        assert_eq!(v["page"], json!(page));
        let listed: BTreeMap<String, &Value> = v["comments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["id"].as_str().unwrap().to_string(), c))
            .collect();
        assert_eq!(
            listed.keys().cloned().collect::<BTreeSet<_>>(),
            mine.iter().map(|g| g.id.clone()).collect::<BTreeSet<_>>(),
            "{file}: island ids"
        );

        let pt = page_text(&ch.content, &options);
        let groups = mark_groups(&doc);
        let code_spans = code_anchors(&doc);
        let mut want_marks = BTreeSet::new();
        let mut want_code = BTreeSet::new();
        for g in &mine {
            let c = listed[&g.id];
            let anchoring = &c["anchoring"];
            let want_status = match g.kind {
                Kind::Page => "page",
                // The build does not look for resolved comments.
                _ if g.status == "resolved" => "not-anchored",
                _ if g.typo => "fuzzy",
                _ => "exact",
            };
            if anchoring["status"] != json!(want_status) {
                failures.push(format!(
                    "{file}: {} status {} (want {want_status}) quote {:?}",
                    g.id, anchoring["status"], g.quote
                ));
                continue;
            }
            match g.kind {
                Kind::Prose | Kind::List | Kind::Table | Kind::Heading if g.live() => {
                    want_marks.insert(g.id.clone());
                    let original = g.original.as_deref().unwrap();
                    match groups.get(&g.id) {
                        None => failures.push(format!("{file}: {} has no marker", g.id)),
                        Some(m) => {
                            if !contains_normalized(&m.span, original) || !no_alnum(&m.gaps) {
                                failures.push(format!(
                                    "{file}: {} marks {:?} (gaps {:?}), quote {original:?}",
                                    g.id, m.span, m.gaps
                                ));
                            }
                            if m.statuses != BTreeSet::from([g.status.to_string()]) {
                                failures
                                    .push(format!("{file}: {} statuses {:?}", g.id, m.statuses));
                            }
                        }
                    }
                }
                // A resolved comment in code is not looked for: no code position.
                Kind::Code(_) if !g.live() => {
                    assert_eq!(anchoring["code"], Value::Null, "{file}: {}", g.id)
                }
                Kind::Code(n) => {
                    let original = g.original.as_deref().unwrap();
                    assert_eq!(anchoring["code"]["block"], json!(n), "{file}: {}", g.id);
                    assert_eq!(
                        anchoring["code"]["text"],
                        json!(original),
                        "{file}: {}",
                        g.id
                    );
                    if g.live() && fence_allows(&ch.content, &pt, n) {
                        want_code.insert(g.id.clone());
                        match code_spans.get(&g.id).map(Vec::as_slice) {
                            Some([(between, pre)]) => {
                                if !between.trim().is_empty() || !contains_normalized(pre, original)
                                {
                                    failures.push(format!(
                                        "{file}: code anchor {} is followed by {between:?} then a pre without {original:?}",
                                        g.id
                                    ));
                                }
                            }
                            other => {
                                failures.push(format!("{file}: code anchor {}: {other:?}", g.id))
                            }
                        }
                    }
                }
                Kind::Block(_) if g.live() => {
                    let el = doc
                        .select(&sel(&format!("[data-nb-block~=\"{}\"]", g.id)))
                        .map(|e| {
                            format!(
                                "{}.{}",
                                e.value().name(),
                                e.value().attr("class").unwrap_or("")
                            )
                        })
                        .collect::<Vec<_>>();
                    if el != ["span.nb-block"] && el != ["pre.mermaid"] {
                        failures.push(format!("{file}: block {}: {el:?}", g.id));
                    }
                }
                _ => {}
            }
        }
        let marked: BTreeSet<String> = groups.keys().cloned().collect();
        if marked != want_marks {
            failures.push(format!(
                "{file}: marked {marked:?}, expected {want_marks:?}"
            ));
        }
        let coded: BTreeSet<String> = code_spans.keys().cloned().collect();
        if coded != want_code {
            failures.push(format!(
                "{file}: code anchors {coded:?}, expected {want_code:?}"
            ));
        }
        checked += 1;
    }
    assert!(checked >= 60, "{name}: only {checked} chapters");
    assert!(
        failures.is_empty(),
        "{name}: {} problem(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn nomicon_with_generated_comments() {
    corpus_end_to_end("nomicon", 11);
}

#[test]
fn rust_by_example_with_generated_comments() {
    corpus_end_to_end("rust-by-example", 12);
}
