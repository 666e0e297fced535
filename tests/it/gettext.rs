//! A gettext book (Rust by Example with its Japanese translation, through the real
//! `mdbook-gettext` preprocessor): comments left on the Japanese pages are never orphans of the
//! English build — its /comments page counts them apart and its report in one line — and the
//! Japanese build anchors every one of them `exact`.

use crate::support::common::{self, *};
use crate::support::preprocess::*;
use notabene_anchoring::text::{TextOptions, page_text};
use notabene_store::{Fresh, Location, Record, Scope, Store, new_comment};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::path::Path;

const COMMENTS: usize = 8;

/// Japanese quotes (10 chars, all of them Japanese script) from the translated chapters.
fn japanese_comments(root: &Path, out: &Path) -> Vec<(String, String, Value)> {
    let mut config: mdbook_driver::config::Config =
        common::read(&root.join("book.toml")).parse().unwrap();
    config.book.language = Some("ja".into());
    add_plugin(&mut config, json!({ "enable": false }));
    let md = load(root, config, out);
    let options = TextOptions::default();
    let mut picked = Vec::new();
    for ch in chapters(&md) {
        if picked.len() == COMMENTS {
            break;
        }
        let english = std::fs::read_to_string(root.join("src").join(&ch.source_path)).unwrap();
        if ch.content == english {
            continue;
        }
        let pt = page_text(&ch.content, &options);
        let chars: Vec<(usize, char)> = pt.text.char_indices().collect();
        let japanese = |c: char| matches!(c as u32, 0x3040..=0x30FF | 0x4E00..=0x9FFF);
        let Some(w) = chars.windows(10).find(|w| {
            w.iter().all(|&(_, c)| japanese(c)) && {
                let q: String = w.iter().map(|&(_, c)| c).collect();
                pt.text.matches(&q).count() == 1
            }
        }) else {
            continue;
        };
        let a = w[0].0;
        let b = w[9].0 + w[9].1.len_utf8();
        let rel = slash(&ch.source_path.with_extension(""));
        picked.push((
            format!("rust-by-example/src/{rel}.ja"),
            pt.text[a..b].to_string(),
            capture(&pt, a, b),
        ));
    }
    assert_eq!(
        picked.len(),
        COMMENTS,
        "translated chapters with a Japanese quote"
    );
    picked
}

/// `PATH` with the directory of the real `mdbook-gettext` first; `None` (the test skipped)
/// where it is missing, which fails under `CI`.
fn gettext_path() -> Option<String> {
    if find_tool("mdbook-gettext").is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but mdbook-gettext is missing (.ci/run installs it: cargo install mdbook-i18n-helpers --version 0.4.0 --locked)"
        );
        eprintln!("note: skipping the gettext test: no mdbook-gettext on PATH or in ~/.cargo/bin");
        return None;
    }
    let path = {
        let mut dirs = vec![
            find_tool("mdbook-gettext")
                .unwrap()
                .parent()
                .unwrap()
                .to_path_buf(),
        ];
        dirs.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        std::env::join_paths(dirs).unwrap().into_string().unwrap()
    };
    Some(path)
}

/// Rust by Example staged in a git repository at a temporary directory, notabene installed.
fn installed_rust_by_example() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = common::tempdir();
    let root = stage(&corpus("rust-by-example"), tmp.path(), "rust-by-example");
    let out = common::run(tmp.path(), &["install", root.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    (tmp, root)
}

#[test]
fn translated_comments_are_never_orphans_of_the_english_build() {
    let Some(path) = gettext_path() else { return };
    let (tmp, root) = installed_rust_by_example();
    let b = root.to_str().unwrap();
    let comments = japanese_comments(&root, &tmp.path().join("probe"));
    let store = Store::new(root.join(".notabene"));
    {
        let _lock = store.lock().unwrap();
        for (n, (page, quote, anchor)) in comments.iter().enumerate() {
            let id = format!("c_ja{n:04}");
            let c = new_comment(&Fresh {
                id: &id,
                space: "book",
                page,
                scope: Scope::Selection,
                anchor: anchor.clone(),
                author: "Aiko <a@example.jp>",
                body: quote,
                ts: "2026-07-28T09:00:00.000Z",
            });
            store
                .write_record(&Record {
                    file: format!("{page}/{id}.json"),
                    location: Location::File,
                    comment: c,
                })
                .unwrap();
        }
    }
    let env = [("PATH", path.as_str())];

    // English: counted apart, listed nowhere as orphans.
    let en_out = tmp.path().join("en");
    let en = common::run_with(
        tmp.path(),
        &["build", b, "-d", en_out.to_str().unwrap()],
        None,
        &env,
    );
    assert_eq!(en.code, 0, "{}", en.stderr);
    assert_eq!(
        en.stderr,
        format!(
            "notabene: 0 comments on 0 pages — 0 exact, 0 fuzzy, 0 orphaned\nnotabene: {COMMENTS} comments of other languages (ja: {COMMENTS}), shown in their own builds\n"
        )
    );
    let doc = html(&en_out, "comments.html");
    let data = view_data(&doc);
    assert_eq!(data["otherLanguages"], json!({ "ja": COMMENTS }));
    assert_eq!(
        data["comments"],
        json!([]),
        "no translated comment listed (as an orphan or else)"
    );

    // Japanese: every one exact, on its page.
    let ja_out = tmp.path().join("ja");
    let ja = common::run_with(
        tmp.path(),
        &["build", b, "-d", ja_out.to_str().unwrap()],
        None,
        &[("PATH", path.as_str()), ("MDBOOK_BOOK__LANGUAGE", "ja")],
    );
    assert_eq!(ja.code, 0, "{}", ja.stderr);
    assert_eq!(
        ja.stderr,
        format!(
            "notabene: {COMMENTS} comments on {COMMENTS} pages — {COMMENTS} exact, 0 fuzzy, 0 orphaned\n"
        )
    );
}

/// `comments add` checks a quote against the page as its locale renders it (the book in that
/// language, through `mdbook-gettext`), not against the English source: a Japanese quote on a
/// Japanese page is taken, one the page does not hold is refused.
#[test]
fn comments_add_checks_a_quote_on_a_translated_page_as_that_locale_renders_it() {
    let Some(path) = gettext_path() else { return };
    let (tmp, root) = installed_rust_by_example();
    let b = root.to_str().unwrap();
    let (page, quote, _) = japanese_comments(&root, &tmp.path().join("probe")).remove(0);
    let add = |quote: &str| {
        common::run_with(
            tmp.path(),
            &[
                "--book",
                b,
                "comments",
                "add",
                "--json",
                "--page",
                &page,
                "--quote",
                quote,
                "--body",
                "訳を確認してください",
            ],
            None,
            &[("PATH", path.as_str())],
        )
    };
    let out = add(&quote);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let c: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        (c["page"].as_str(), c["anchor"]["quote"].as_str()),
        (Some(page.as_str()), Some(quote.as_str()))
    );
    let out = add("この文はどのページにもありません");
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            1,
            format!(
                "notabene: the quote is not on page {page:?}; --force adds the comment anyway (--quote)\n"
            ).as_str()
        )
    );
}

/// The API checks a new comment's quote in the page as the served build modelled it: the
/// Japanese build of Rust by Example (`serve`, `book.language = "ja"`, the real
/// `mdbook-gettext`) takes a Japanese quote and refuses one the page does not have — the
/// English source's sentence included.
#[test]
fn the_api_checks_a_quote_on_a_translated_page_as_that_locale_renders_it() {
    let Some(path) = gettext_path() else { return };
    let (tmp, root) = installed_rust_by_example();
    let (page, quote, _) = japanese_comments(&root, &tmp.path().join("probe")).remove(0);
    let source = page
        .trim_start_matches("rust-by-example/src/")
        .trim_end_matches(".ja");
    let english = page_text(
        &common::read(&root.join("src").join(format!("{source}.md"))),
        &TextOptions::default(),
    )
    .text;
    let english_sentence = english
        .split(". ")
        .find(|s| s.split_whitespace().count() >= 6)
        .expect("an English sentence")
        .to_string();
    let server = crate::support::serve::Server::start_dir_with(
        &root,
        &[("PATH", path.as_str()), ("MDBOOK_BOOK__LANGUAGE", "ja")],
    );
    let post = |quote: &str| {
        server.json(
            "POST",
            "/__notabene/api/comments",
            &json!({
                "page": page, "space": "book", "scope": "selection", "body": "訳を確認してください",
                "anchor": { "quote": quote, "prefix": "", "suffix": "", "section": null },
            }),
        )
    };
    let (code, c) = post(&quote);
    assert_eq!(code, 201, "{c}");
    assert_eq!(c["anchor"]["quote"], json!(quote));
    for missing in [
        "この文はどのページにもありません",
        english_sentence.as_str(),
    ] {
        let (code, v) = post(missing);
        assert_eq!(
            (code, &v["error"]),
            (
                404,
                &json!(format!("the quote is not on page {page:?} (quote)"))
            ),
            "{missing:?}"
        );
    }
}
