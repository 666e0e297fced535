//! Acceptance 3–5 for the preprocessor and its binary:
//!
//! * security: comment values (body, author, quote, page id) holding `</script>`,
//!   `<img onerror>`, quotes and U+2028 stay data in the islands, in attributes and in
//!   `comments.json`;
//! * i18n: `MDBOOK_BOOK__LANGUAGE=fr` builds use `.fr` page ids (suffix strategy) or
//!   `fr/…` ones (directory strategy) and show only that language's comments;
//! * the mdBook protocol: `supports`, the `[context, book]` JSON on stdin, version warnings,
//!   unreadable input;
//! * configuration errors, `fail-on`, unreadable store files, `enable = false`;
//! * `notabene anchors --json` agrees with the build's islands.

use crate::support::common;
use crate::support::preprocess;

use common::{book_example, run_plugin, stage};
use mdbook_driver::config::Config;
use mdbook_preprocessor::PreprocessorContext;
use mdbook_preprocessor::book::Book as MdBook;
use notabene_anchoring::text::{TextOptions, page_text};
use notabene_store::{Fresh, Scope, Store, new_comment};
use preprocess::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

const REPORT: &str =
    "notabene: 14 comments on 6 pages — 11 exact, 1 fuzzy, 1 orphaned, 1 page-level";
const FUZZY_WARNING: &str = "notabene: warning: fuzzy anchor c_mwm6a3iye2uy on book-example/src/guide/configuration (0.97): «Intervals shorter than five seconds are accepted»";
const ORPHAN_WARNING: &str = "notabene: warning: orphaned anchor c_mwqa9e2k7d1f on book-example/src/reference/cli: «The --dry-run flag prints the planned uploads with…»";
/// The French comments, counted apart in an English build (never orphaned there).
const OTHER_LANGUAGES: &str =
    "notabene: 2 comments of other languages (fr: 2), shown in their own builds";
const SUPPORTED: &str = ">=0.5.0, <0.6.0";

/// The report lines of an English build of book-example.
fn report() -> String {
    format!("{REPORT}\n{FUZZY_WARNING}\n{ORPHAN_WARNING}\n{OTHER_LANGUAGES}\n")
}

/// A copy of book-example at `<tmp>/book-example` in a fresh git work tree.
fn example(tmp: &Path) -> PathBuf {
    stage(&book_example(), tmp, "book-example")
}

/// Replaces `from` by `to` in `root/rel` (which must contain it).
fn edit(root: &Path, rel: &str, from: &str, to: &str) {
    let path = root.join(rel);
    let text = common::read(&path);
    assert!(text.contains(from), "{rel} does not contain {from:?}");
    common::write(&path, &text.replacen(from, to, 1));
}

/// `mdbook-notabene build book-example --dest-dir <dest>` in `tmp`.
fn build_example(tmp: &Path, dest: &str, env: &[(&str, &str)]) -> common::Out {
    run_plugin(
        tmp,
        &["build", "book-example", "--dest-dir", dest],
        None,
        env,
    )
}

/// (page attribute, island JSON) of an output page, which must have exactly one island.
fn island(out: &Path, file: &str) -> (String, Value) {
    let doc = html(out, file);
    let mut isl = islands(&doc);
    assert_eq!(isl.len(), 1, "{file}: islands");
    let (page, v, _) = isl.remove(0);
    (page, v)
}

fn island_ids(v: &Value) -> Vec<String> {
    v["comments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect()
}

// ---------------------------------------------------------------------------------------
// Security

/// `s` with the content hashes of asset names (`toc-0123abcd.js`) removed.
fn unhash(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('-') {
        let hash = rest.get(i + 1..i + 9);
        if hash.is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
            && rest[i + 9..].starts_with('.')
        {
            out.push_str(&rest[..i]);
            rest = &rest[i + 9..];
        } else {
            out.push_str(&rest[..=i]);
            rest = &rest[i + 1..];
        }
    }
    out.push_str(rest);
    out
}

const SCRIPT_END: &str = "</script>";
const IMG: &str = "<img src=x onerror=alert(1)>";

#[test]
fn hostile_values_stay_data() {
    let tmp = common::tempdir();
    let root = tmp.path().join("sec");
    common::git_init(tmp.path());
    let prefix = format!("x{SCRIPT_END}\"><img onerror=alert(2)>'\u{2028}y");
    common::write(
        &root.join("book.toml"),
        &format!(
            "[book]\ntitle = \"Security\"\n\n[preprocessor.notabene]\ncommand = {cmd}\nafter = [\"links\"]\npage-prefix = {prefix}\n\n[output.html]\nadditional-js = [\"theme/notabene.js\"]\nadditional-css = [\"theme/notabene.css\"]\n\n[output.notabene]\ncommand = {cmd}\n",
            cmd = serde_json::to_string(&plugin_command()).unwrap(),
            prefix = serde_json::to_string(&prefix).unwrap(),
        ),
    );
    write_client(&root);
    common::write(
        &root.join("src/SUMMARY.md"),
        "# Summary\n\n- [Payloads](payloads.md)\n- [Other](other.md)\n",
    );
    let chapter = format!(
        "# Payloads\n\nThe markup `{SCRIPT_END}` ends a script, `{IMG}` runs code, `\"'` are quotes, and a line separator\u{2028}is invisible here.\n\nAnother paragraph.\n"
    );
    common::write(&root.join("src/payloads.md"), &chapter);
    common::write(&root.join("src/other.md"), "# Other\n\nNothing to see.\n");

    // The quote spans the payloads, captured from the text model as the browser does.
    let pt = page_text(&chapter, &TextOptions::default());
    let a = pt.text.find(SCRIPT_END).unwrap();
    let b = pt.text.find("is invisible").unwrap() + "is invisible".len();
    let anchor = capture(&pt, a, b);
    let quote = anchor["quote"].as_str().unwrap().to_string();
    assert!(quote.contains(IMG) && quote.contains("\"'") && quote.contains('\u{2028}'));
    let page = format!("{prefix}/payloads");
    let payload = format!("{SCRIPT_END}{IMG}\"'\u{2028}</SCRIPT >");
    let store = Store::new(root.join(".notabene"));
    std::fs::create_dir_all(store.root()).unwrap();
    let comments = [
        new_comment(&Fresh {
            id: "c_sel",
            space: "book",
            page: &page,
            scope: Scope::Selection,
            anchor,
            author: &format!("Mallory {payload} <m@x>"),
            body: &format!("body {payload}"),
            ts: TS,
        }),
        new_comment(&Fresh {
            id: "c_page",
            space: "book",
            page: &page,
            scope: Scope::Page,
            anchor: Value::Null,
            author: &payload,
            body: &payload,
            ts: TS,
        }),
    ];
    for c in &comments {
        store.create(c).unwrap();
    }
    let stored: BTreeMap<String, Value> = comments
        .iter()
        .map(|c| {
            (
                c.id().unwrap().to_string(),
                Value::Object(c.as_map().clone()),
            )
        })
        .collect();

    // mdBook runs the binary as preprocessor and as renderer (JSON protocol both ways).
    let out = tmp.path().join("out");
    let config: Config = common::read(&root.join("book.toml")).parse().unwrap();
    load(&root, config.clone(), &out).build().unwrap();
    let mut off_config = config;
    off_config
        .set("preprocessor.notabene.enable", false)
        .unwrap();
    let off = tmp.path().join("off");
    load(&root, off_config, &off).build().unwrap();
    let (html_out, html_off) = (out.join("html"), off.join("html"));

    // No injected element anywhere; scripts are mdBook's own plus one island per chapter.
    // (Asset names carry content hashes, which differ where the content does: the table of
    // contents and the search index gain the generated review pages.)
    let scripts = |doc: &scraper::Html| -> Vec<String> {
        doc.select(&sel(
            "script:not(.nb-data):not(.nb-view-data):not(.nb-summary)",
        ))
        .map(|e| {
            unhash(&format!(
                "{:?} {}",
                e.value().attr("src"),
                e.text().collect::<String>()
            ))
        })
        .collect()
    };
    let mut islands_seen = 0;
    for (name, bytes) in files(&html_out) {
        if !name.ends_with(".html") {
            continue;
        }
        let text = String::from_utf8(bytes).unwrap();
        assert!(!text.contains("<img src=x onerror"), "{name}");
        assert!(!text.contains("<img onerror"), "{name}");
        let doc = scraper::Html::parse_document(&text);
        assert_eq!(doc.select(&sel("img[onerror]")).count(), 0, "{name}");
        // Generated review pages exist only with the preprocessor: same template as a chapter.
        let off_doc = if html_off.join(&name).exists() {
            html(&html_off, &name)
        } else {
            html(&html_off, "other.html")
        };
        assert_eq!(scripts(&doc), scripts(&off_doc), "{name}: scripts");
        let n = doc.select(&sel("script.nb-data")).count();
        let want = match name.as_str() {
            "payloads.html" | "other.html" | "index.html" => 1,
            "print.html" => 2,
            _ => 0,
        };
        assert_eq!(n, want, "{name}: islands");
        // Each chapter's island comes with the book-wide summary.
        assert_eq!(
            doc.select(&sel("script.nb-summary")).count(),
            n,
            "{name}: summaries"
        );
        islands_seen += n;
        // The generated review pages carry their data the same way.
        let views: Vec<String> = doc
            .select(&sel("script.nb-view-data"))
            .map(|e| e.text().collect())
            .collect();
        let want = match name.as_str() {
            "review.html" | "comments.html" | "journal.html" => 1,
            "print.html" => 3,
            _ => 0,
        };
        assert_eq!(views.len(), want, "{name}: view data");
        for raw in &views {
            assert!(
                !raw.contains('<') && !raw.contains('\u{2028}'),
                "{name}: {raw}"
            );
            serde_json::from_str::<Value>(raw).unwrap();
        }
    }
    assert_eq!(islands_seen, 5);

    // The island is the stored data (lean), escaped for a script element.
    let doc = html(&html_out, "payloads.html");
    let isl = islands(&doc);
    let (attr, v, raw) = &isl[0];
    assert_eq!(attr, &page);
    assert_eq!(v["page"], json!(page));
    assert!(!raw.to_lowercase().contains("</script"));
    assert!(!raw.contains('<') && !raw.contains('\u{2028}'));
    let listed: BTreeMap<String, Value> = v["comments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let mut m = c.as_object().unwrap().clone();
            let anchoring = m.remove("anchoring").unwrap();
            let want = if m["id"] == "c_sel" { "exact" } else { "page" };
            assert_eq!(anchoring["status"], json!(want));
            (m["id"].as_str().unwrap().to_string(), Value::Object(m))
        })
        .collect();
    let lean: BTreeMap<String, Value> = stored
        .iter()
        .map(|(id, c)| (id.clone(), lean_island(c, &v["space"])))
        .collect();
    assert_eq!(listed, lean);
    // The marker shows the quote.
    let groups = mark_groups(&doc);
    assert_eq!(groups.keys().collect::<Vec<_>>(), ["c_sel"]);
    assert!(contains_normalized(&groups["c_sel"].span, &quote));
    assert_eq!(
        html(&html_out, "other.html")
            .select(&sel("script.nb-data"))
            .next()
            .unwrap()
            .value()
            .attr("data-nb-page"),
        Some(format!("{prefix}/other").as_str())
    );

    // comments.json holds the values as JSON strings.
    let text = common::read(&out.join("notabene/comments.json"));
    let doc: Value = serde_json::from_str(&text).unwrap();
    let by_id: BTreeMap<&str, &Value> = doc["comments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_str().unwrap(), c))
        .collect();
    for (id, c) in &stored {
        for key in ["page", "anchor", "thread"] {
            assert_eq!(by_id[id.as_str()][key], c[key], "{id} {key}");
        }
    }
    assert!(text.contains(&serde_json::to_string(&payload).unwrap()));
    assert!(text.contains(&serde_json::to_string(&page).unwrap()));
    assert_eq!(doc["book"]["pagePrefix"], json!(prefix));
}

// ---------------------------------------------------------------------------------------
// Languages

#[test]
fn french_builds_use_french_page_ids_and_comments() {
    let tmp = common::tempdir();
    let root = example(tmp.path());
    let fr = [("MDBOOK_BOOK__LANGUAGE", "fr")];

    // Suffix strategy (the default): `….fr`.
    let out = build_example(tmp.path(), "out-fr", &fr);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            0,
            "notabene: 2 comments on 2 pages — 1 exact, 0 fuzzy, 0 orphaned, 1 page-level\n\
             notabene: 16 comments of other languages (en: 16), shown in their own builds\n"
        )
    );
    let dir = tmp.path().join("out-fr");
    let pages: Vec<(&str, &str, &[&str])> = vec![
        (
            "index.html",
            "book-example/src/README.fr",
            &["c_mwqb3r9t2a6n"],
        ),
        (
            "guide/installing.html",
            "book-example/src/guide/installing.fr",
            &["c_mwqb1x0p4s8e"],
        ),
        (
            "guide/configuration.html",
            "book-example/src/guide/configuration.fr",
            &[],
        ),
        (
            "reference/cli.html",
            "book-example/src/reference/cli.fr",
            &[],
        ),
    ];
    for (file, page, ids) in &pages {
        let (attr, v) = island(&dir, file);
        assert_eq!((attr.as_str(), v["page"].as_str()), (*page, Some(*page)));
        assert_eq!(island_ids(&v), *ids, "{file}");
        // Only the French comment is marked.
        let marked: Vec<String> = mark_groups(&html(&dir, file)).into_keys().collect();
        let want: Vec<String> = if *file == "guide/installing.html" {
            vec!["c_mwqb1x0p4s8e".into()]
        } else {
            vec![]
        };
        assert_eq!(marked, want, "{file}");
    }
    let g = &mark_groups(&html(&dir, "guide/installing.html"))["c_mwqb1x0p4s8e"];
    assert_eq!(g.span, "verifies its checksum");

    // The English build shows none of the French comments.
    let out = build_example(tmp.path(), "out-en", &[]);
    assert_eq!((out.code, out.stderr), (0, report()));
    let en = tmp.path().join("out-en");
    for (file, _, _) in &pages {
        let text = common::read(&en.join(file));
        assert!(!text.contains("c_mwqb"), "{file}");
    }
    assert_eq!(
        island(&en, "guide/installing.html").0,
        "book-example/src/guide/installing"
    );

    // Directory strategy: `fr/…`; the French comments move accordingly.
    edit(
        &root,
        "book.toml",
        "[preprocessor.notabene]\n",
        "[preprocessor.notabene]\nlocale-strategy = \"directory\"\n",
    );
    let store = root.join(".notabene/book-example/src");
    for (from, to) in [
        ("guide/installing.fr", "fr/guide/installing"),
        ("README.fr", "fr/README"),
    ] {
        let dir = store.join(from);
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let text = common::read(&e.path()).replace(
                &format!("book-example/src/{from}\""),
                &format!("book-example/src/{to}\""),
            );
            common::write(&store.join(to).join(e.file_name()), &text);
        }
        std::fs::remove_dir_all(dir).unwrap();
    }
    let out = build_example(tmp.path(), "out-fr-dir", &fr);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            0,
            "notabene: 2 comments on 2 pages — 1 exact, 0 fuzzy, 0 orphaned, 1 page-level\n\
             notabene: 16 comments of other languages (en: 16), shown in their own builds\n"
        )
    );
    let dir = tmp.path().join("out-fr-dir");
    let (attr, v) = island(&dir, "guide/installing.html");
    assert_eq!(attr, "book-example/src/fr/guide/installing");
    assert_eq!(island_ids(&v), ["c_mwqb1x0p4s8e"]);
    let (attr, v) = island(&dir, "index.html");
    assert_eq!(attr, "book-example/src/fr/README");
    assert_eq!(island_ids(&v), ["c_mwqb3r9t2a6n"]);
    // English page ids do not change with the strategy.
    let out = build_example(tmp.path(), "out-en-dir", &[]);
    assert_eq!((out.code, out.stderr), (0, report()));
    assert_eq!(
        island(&tmp.path().join("out-en-dir"), "guide/installing.html").0,
        "book-example/src/guide/installing"
    );
}

// ---------------------------------------------------------------------------------------
// The mdBook protocol

#[test]
fn supports_answers_by_exit_code_only() {
    let tmp = common::tempdir();
    for (renderer, code) in [
        ("html", 0),
        ("notabene", 0),
        ("xgettext", 1),
        ("markdown", 1),
        ("test", 1),
        ("epub", 1),
    ] {
        let out = run_plugin(tmp.path(), &["supports", renderer], None, &[]);
        assert_eq!(
            (out.code, out.stdout.as_str(), out.stderr.as_str()),
            (code, "", ""),
            "{renderer}"
        );
    }
}

/// A renderer named `html` that renders nothing (to preprocess as mdBook does for html).
struct HtmlProbe;

impl mdbook_renderer::Renderer for HtmlProbe {
    fn name(&self) -> &str {
        "html"
    }
    fn render(&self, _: &mdbook_renderer::RenderContext) -> mdbook_renderer::errors::Result<()> {
        Ok(())
    }
}

/// The book at `root` as mdBook hands it to preprocessors after its built-in ones, and the
/// context of the `html` run.
fn html_input(root: &Path) -> (PreprocessorContext, MdBook) {
    let config: Config = common::read(&root.join("book.toml")).parse().unwrap();
    let mut builtin_only = config.clone();
    builtin_only.set("preprocessor", json!({})).unwrap();
    let md = mdbook_driver::MDBook::load_with_config(root, builtin_only).unwrap();
    let (book, _) = md.preprocess_book(&HtmlProbe).unwrap();
    let ctx = PreprocessorContext::new(root.to_path_buf(), config, "html".into());
    (ctx, book)
}

#[test]
fn json_protocol_on_stdin() {
    let tmp = common::tempdir();
    let root = example(tmp.path());
    let (mut ctx, book) = html_input(&root);
    let input = |ctx: &PreprocessorContext| serde_json::to_string(&(ctx, &book)).unwrap();
    // The input round-trips through mdBook's own parser.
    let (ctx2, book2) = mdbook_preprocessor::parse_input(input(&ctx).as_bytes()).unwrap();
    assert_eq!(book2, book);
    assert_eq!(
        (ctx2.root, ctx2.renderer, ctx2.mdbook_version),
        (
            ctx.root.clone(),
            ctx.renderer.clone(),
            ctx.mdbook_version.clone()
        )
    );
    let expected = mdbook_notabene::output::annotate::run(&ctx, book.clone()).unwrap();
    assert_ne!(expected, book);

    for (version, warning) in [
        (mdbook_preprocessor::MDBOOK_VERSION, None),
        ("0.5.0", None),
        ("0.4.40", Some("0.4.40")),
        ("0.6.0", Some("0.6.0")),
    ] {
        ctx.mdbook_version = version.into();
        let out = run_plugin(&root, &[], Some(&input(&ctx)), &[]);
        let warn = warning
            .map(|v| {
                format!(
                    "notabene: warning: called by mdBook {v}; mdbook-notabene {} supports mdBook {SUPPORTED}\n",
                    env!("CARGO_PKG_VERSION")
                )
            })
            .unwrap_or_default();
        assert_eq!(
            (out.code, out.stderr.clone()),
            (0, format!("{warn}{}", report())),
            "{version}"
        );
        let got: MdBook = serde_json::from_str(&out.stdout).expect("stdout is only the book");
        assert!(
            got == expected,
            "{version}: the book differs from the in-process run"
        );
    }

    // Other renderers: the book comes back unchanged, silently.
    ctx.mdbook_version = mdbook_preprocessor::MDBOOK_VERSION.into();
    ctx.renderer = "notabene".into();
    let out = run_plugin(&root, &[], Some(&input(&ctx)), &[]);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    assert!(serde_json::from_str::<MdBook>(&out.stdout).unwrap() == book);

    // Input that is not mdBook 0.5's.
    for garbage in ["{\"sections\": []}", "[{}, {}]", "not json"] {
        let out = run_plugin(&root, &[], Some(garbage), &[]);
        assert_eq!((out.code, out.stdout.as_str()), (1, ""), "{garbage}");
        assert_eq!(out.stderr.lines().count(), 1, "{garbage}: {}", out.stderr);
        assert!(
            out.stderr
                .starts_with("notabene: cannot read mdBook's input:")
                && out.stderr.contains(SUPPORTED),
            "{garbage}: {}",
            out.stderr
        );
    }
}

/// A book that arrives slowly (mdBook writes it token by token) is parsed as it comes once the
/// store is read: the answer is the one a book handed over at once gets, and input that is not
/// mdBook's is refused in the same words.
#[test]
fn a_book_arriving_slowly_gets_the_answer_of_one_arriving_at_once() {
    let tmp = common::tempdir();
    let root = example(tmp.path());
    let (ctx, book) = html_input(&root);
    let input = serde_json::to_string(&(&ctx, &book)).unwrap();
    let at_once = run_plugin(&root, &[], Some(&input), &[]);
    assert_eq!(
        (at_once.code, at_once.stderr.as_str()),
        (0, report().as_str())
    );
    // The store of book-example is read well within the pause: the rest is parsed as it comes.
    let pause = Duration::from_millis(1500);
    let (head, tail) = input.split_at(input.len() / 3);
    let slowly = common::run_plugin_in_parts(&root, &[head, tail], pause);
    assert_eq!(slowly, at_once);
    let got: MdBook = serde_json::from_str(&slowly.stdout).unwrap();
    assert!(got == mdbook_notabene::output::annotate::run(&ctx, book.clone()).unwrap());
    // Cut short, or not JSON after a good start: one line, as for a book read whole.
    for (parts, says) in [
        (
            vec!["[", " garbage"],
            "Unable to parse the input: expected value",
        ),
        (
            vec![&input[..20], &input[20..input.len() - 10]],
            "Unable to parse the input: EOF while parsing",
        ),
    ] {
        let out = common::run_plugin_in_parts(&root, &parts, pause);
        assert_eq!((out.code, out.stdout.as_str()), (1, ""));
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
        assert!(
            out.stderr
                .starts_with("notabene: cannot read mdBook's input: ")
                && out.stderr.contains(says)
                && out.stderr.contains(SUPPORTED),
            "{}",
            out.stderr
        );
        let whole = run_plugin(&root, &[], Some(&parts.concat()), &[]);
        assert_eq!(out, whole, "the same words as for the input read whole");
    }
}

// ---------------------------------------------------------------------------------------
// Configuration, fail-on, store problems

#[test]
fn bad_config_values_fail_the_build_naming_the_key() {
    let tmp = common::tempdir();
    let root = example(tmp.path());
    let original = common::read(&root.join("book.toml"));
    let at = "(book.toml [preprocessor.notabene]";
    // One refused value per key, written in place of the line it names (book-example sets
    // review and languages; the others take review's place).
    for (line, message) in [
        (
            "review = \"sometimes\"",
            format!(
                "notabene: review must be \"auto\" or \"approve\", got \"sometimes\" {at} review)"
            ),
        ),
        (
            "threshold = 3",
            format!("notabene: threshold must be a number in (0, 1] {at} threshold)"),
        ),
        (
            "fail-on = \"always\"",
            format!(
                "notabene: fail-on must be \"never\" or \"orphan\" or \"fuzzy\", got \"always\" {at} fail-on)"
            ),
        ),
        (
            "enable = \"yes\"",
            format!("notabene: enable must be true or false {at} enable)"),
        ),
        (
            "store = \"\"",
            format!("notabene: store must not be empty {at} store)"),
        ),
        (
            "space = \"a/b\"",
            format!(
                "notabene: space must be a non-empty name without slashes, got \"a/b\" {at} space)"
            ),
        ),
        (
            "page-prefix = \"src/../x\"",
            format!(
                "notabene: page-prefix: invalid page id \"src/../x\": it contains a '..' segment {at} page-prefix)"
            ),
        ),
        (
            "default-language = \"en us\"",
            format!(
                "notabene: default-language must be a language code like \"en\", got \"en us\" {at} default-language)"
            ),
        ),
        (
            "locale-strategy = \"folder\"",
            format!(
                "notabene: locale-strategy must be \"suffix\" or \"directory\", got \"folder\" {at} locale-strategy)"
            ),
        ),
        (
            "generated-pages = 1",
            format!("notabene: generated-pages must be true or false {at} generated-pages)"),
        ),
        (
            "languages = \"fr\"",
            format!(
                "notabene: languages must be an array of language codes like [\"en\", \"fr\"] {at} languages)"
            ),
        ),
        (
            "compress-above = -1",
            format!(
                "notabene: compress-above must be a number of bytes, 0 or more {at} compress-above)"
            ),
        ),
    ] {
        let replaced = if line.starts_with("languages") {
            "languages = [\"en\", \"fr\"]"
        } else {
            "review = \"approve\""
        };
        assert!(original.contains(replaced), "book-example changed");
        common::write(
            &root.join("book.toml"),
            &original.replacen(replaced, line, 1),
        );
        build_example(tmp.path(), "out", &[]).fails_with(&message);
        assert!(!tmp.path().join("out").exists());
    }
}

#[test]
fn fail_on_fails_the_build_for_the_configured_statuses() {
    let tmp = common::tempdir();
    let root = example(tmp.path());
    let failing = |n: usize, what: &str, key: &str| {
        format!(
            "{}notabene: build failed: {n} {what} anchor(s) and fail-on = \"{key}\" (book.toml [preprocessor.notabene] fail-on)\n",
            report()
        )
    };
    let set = |value: &str| {
        let original = common::read(&book_example().join("book.toml"));
        common::write(
            &root.join("book.toml"),
            &original.replacen(
                "review = \"approve\"",
                &format!("review = \"approve\"\nfail-on = \"{value}\""),
                1,
            ),
        );
    };

    set("fuzzy");
    let out = build_example(tmp.path(), "out", &[]);
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr),
        (1, "", failing(2, "fuzzy or orphaned", "fuzzy"))
    );
    set("orphan");
    let out = build_example(tmp.path(), "out", &[]);
    assert_eq!(
        (out.code, out.stderr),
        (1, failing(1, "orphaned", "orphan"))
    );
    set("never");
    assert_eq!(build_example(tmp.path(), "out", &[]).code, 0);

    // Without the orphaned comment, `orphan` passes (a fuzzy anchor is fine)…
    std::fs::remove_file(root.join(".notabene/book-example/src/reference/cli/c_mwqa9e2k7d1f.json"))
        .unwrap();
    set("orphan");
    let out = build_example(tmp.path(), "out", &[]);
    assert_eq!(
        (out.code, out.stderr),
        (
            0,
            "notabene: 13 comments on 6 pages — 11 exact, 1 fuzzy, 0 orphaned, 1 page-level\n"
                .to_string()
                + FUZZY_WARNING
                + "\n"
                + OTHER_LANGUAGES
                + "\n"
        )
    );
    // …until a quoted sentence is deleted from its chapter.
    edit(
        &root,
        "src/guide/sensors.md",
        "Skylark applies calibration as a simple linear correction: the raw reading is multiplied by `calibration` and then `offset` is added. ",
        "",
    );
    let out = build_example(tmp.path(), "out", &[]);
    assert_eq!(out.code, 1);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(
        lines[0],
        "notabene: 13 comments on 6 pages — 10 exact, 1 fuzzy, 1 orphaned, 1 page-level"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("notabene: warning: orphaned anchor c_mwp2po2nk5ji on book-example/src/guide/sensors: «the raw reading is multiplied by calibration and t…»")),
        "{}",
        out.stderr
    );
    assert_eq!(
        *lines.last().unwrap(),
        "notabene: build failed: 1 orphaned anchor(s) and fail-on = \"orphan\" (book.toml [preprocessor.notabene] fail-on)"
    );
}

#[test]
fn an_unreadable_store_file_is_a_warning() {
    let tmp = common::tempdir();
    let root = example(tmp.path());
    common::write(
        &root.join(".notabene/book-example/src/README/broken.json"),
        "{not json",
    );
    let out = build_example(tmp.path(), "out", &[]);
    assert_eq!(out.code, 0);
    assert_eq!(
        out.stderr,
        format!(
            "notabene: skipping unreadable comment file: key must be a string at line 1 column 2 (book-example/src/README/broken.json)\n{}",
            report()
        )
    );
    assert_eq!(
        island_ids(&island(&tmp.path().join("out"), "index.html").1),
        ["c_mwoto81iq7k2", "c_mwotwnoo3fwz", "c_mwrlggv2m0ta"]
    );
}

#[test]
fn enable_false_leaves_the_book_alone() {
    let tmp = common::tempdir();
    let root = example(tmp.path());
    edit(
        &root,
        "book.toml",
        "review = \"approve\"",
        "review = \"approve\"\nenable = false",
    );
    let out = build_example(tmp.path(), "out", &[]);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    let dir = tmp.path().join("out");
    for (name, bytes) in files(&dir) {
        if !name.ends_with(".html") {
            continue;
        }
        let text = String::from_utf8(bytes).unwrap();
        for needle in [
            "nb-mark",
            "nb-data",
            "nb-block",
            "nb-code-anchor",
            "nb-summary",
            "data-nb-",
        ] {
            assert!(!text.contains(needle), "{name}: {needle}");
        }
    }
    let doc = html(&dir, "index.html");
    assert_eq!(doc.select(&sel("pre.mermaid")).count(), 0);
    let code: Vec<String> = doc
        .select(&sel("code.language-mermaid"))
        .map(|e| e.text().collect())
        .collect();
    assert_eq!(
        code,
        [
            "graph TD\n    A[Sensor bus] --> B[Skylark daemon]\n    B --> C[(Local archive)]\n    B --> D[Upload queue]\n"
        ]
    );
    // No generated review pages either.
    assert!(!dir.join("review.html").exists());
}

// ---------------------------------------------------------------------------------------
// `notabene anchors --json`

#[test]
fn anchors_json_agrees_with_the_build() {
    let tmp = common::tempdir();
    let root = example(tmp.path());
    let out = build_example(tmp.path(), "out", &[]);
    assert_eq!(out.code, 0);
    let dir = tmp.path().join("out");
    let mut from_islands: BTreeMap<String, String> = BTreeMap::new();
    for file in [
        "index.html",
        "guide/installing.html",
        "guide/configuration.html",
        "guide/sensors.html",
        "reference/cli.html",
        "reference/troubleshooting.html",
    ] {
        for c in island(&dir, file).1["comments"].as_array().unwrap() {
            from_islands.insert(
                c["id"].as_str().unwrap().into(),
                c["anchoring"]["status"].as_str().unwrap().into(),
            );
        }
    }
    assert_eq!(from_islands.len(), 16);

    let doc: Value = serde_json::from_str(common::run(&root, &["anchors", "--json"]).ok()).unwrap();
    let comments = doc["comments"].as_array().unwrap();
    let stored = Store::new(root.join(".notabene")).load().unwrap();
    assert_eq!(comments.len(), stored.comments().count());
    assert_eq!(comments.len(), 18);
    let mut counts: BTreeMap<String, u64> = ["exact", "fuzzy", "orphan", "page"]
        .iter()
        .map(|k| (k.to_string(), 0))
        .collect();
    for c in comments {
        let id = c["id"].as_str().unwrap();
        let status = c["anchoring"]["status"].as_str().unwrap();
        if from_islands.contains_key(id) {
            *counts.get_mut(status).unwrap() += 1;
        }
        match from_islands.get(id) {
            // The build does not look for resolved comments; `anchors` does.
            Some(s) if s == "not-anchored" => {
                assert_eq!(c["status"], "resolved", "{id}");
                assert_ne!(status, "not-anchored", "{id}");
            }
            Some(s) => assert_eq!(status, s, "{id}"),
            // The French comments are not in the English book.
            None => {
                assert!(c["page"].as_str().unwrap().ends_with(".fr"), "{id}");
                assert_eq!(
                    (status, c["anchoring"]["reason"].as_str()),
                    ("other-language", Some("page-not-in-book")),
                    "{id}"
                );
            }
        }
    }
    assert_eq!(
        doc["summary"]["anchoring"],
        serde_json::to_value(&counts).unwrap()
    );
    assert_eq!(
        doc["summary"]["anchoring"],
        json!({ "exact": 13, "fuzzy": 1, "orphan": 1, "page": 1 })
    );
    assert_eq!(doc["summary"]["notInBook"], json!(2));

    // --page keeps that page's comments.
    let doc: Value = serde_json::from_str(
        common::run(
            &root,
            &[
                "anchors",
                "--json",
                "--page",
                "book-example/src/guide/configuration",
            ],
        )
        .ok(),
    )
    .unwrap();
    let ids: Vec<&str> = doc["comments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["c_mwm6a3iye2uy", "c_mworge1zx4rb", "c_mworonpyb6ns"]);
}
