//! The text model against mdBook's real HTML: for every chapter of both corpus books, the
//! model's text equals, after normalisation, the text content of the chapter's `<main>` as the
//! real mdBook 0.5 HTML renderer writes it (built in process).
//!
//! Documented exclusions on the HTML side (not reader text, or rendered later by JS):
//! `<script>`/`<style>` content, and the source of ```` ```mermaid ```` blocks (a diagram,
//! which contributes no text; mermaid.js replaces it with an SVG).

use crate::support::common;
use notabene_anchoring::text::normalize::normalize;
use notabene_anchoring::text::page_text;
use scraper::{ElementRef, Html, Node, Selector};
use std::path::Path;

fn excluded(el: &ElementRef) -> bool {
    let v = el.value();
    matches!(v.name(), "script" | "style")
        || (v.name() == "code" && v.classes().any(|c| c == "language-mermaid"))
}

fn main_text(el: ElementRef, out: &mut String) {
    for child in el.children() {
        match child.value() {
            Node::Text(t) => out.push_str(t),
            Node::Element(_) => {
                let e = ElementRef::wrap(child).unwrap();
                if !excluded(&e) {
                    main_text(e, out);
                }
            }
            _ => {}
        }
    }
}

fn first_difference(a: &str, b: &str) -> String {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let i = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let ctx = |v: &[char]| {
        v[i.saturating_sub(60)..(i + 60).min(v.len())]
            .iter()
            .collect::<String>()
    };
    format!(
        "at char {i}:\n    model: {:?}\n    html:  {:?}",
        ctx(&a),
        ctx(&b)
    )
}

fn check_book(name: &str) {
    check_dir(&common::corpus(name), 50);
}

fn check_dir(dir: &Path, min_chapters: usize) {
    let tmp = common::tempdir();
    let root = tmp.path().join("book");
    common::copy_dir(dir, &root);
    let mut md = mdbook_driver::MDBook::load(&root).unwrap();
    // Real books' own preprocessors are not part of this test (and may run code).
    md.config
        .set("preprocessor", serde_json::json!({}))
        .unwrap();
    md.build().unwrap();
    let (book, _) = md
        .preprocess_book(&mdbook_driver::builtin_renderers::MarkdownRenderer::new())
        .unwrap();
    let options = mdbook_notabene::model::book::text_options(&md.config).unwrap();
    let out = md.build_dir_for("html");
    let main_sel = Selector::parse("main").unwrap();
    let mut failures = Vec::new();
    let mut checked = 0;
    for ch in book.chapters() {
        let Some(path) = &ch.path else { continue };
        let html_path = out.join(path).with_extension("html");
        let html = Html::parse_document(&std::fs::read_to_string(&html_path).unwrap());
        let main = html.select(&main_sel).next().expect("<main>");
        let mut expected = String::new();
        main_text(main, &mut expected);
        let model = page_text(&ch.content, &options);
        let (m, h) = (
            normalize(&model.text).as_string(),
            normalize(&expected).as_string(),
        );
        checked += 1;
        if m != h {
            failures.push(format!("{}: {}", path.display(), first_difference(&m, &h)));
        }
    }
    assert!(checked >= min_chapters, "only {checked} chapters checked");
    assert!(
        failures.is_empty(),
        "{} of {checked} chapters differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn nomicon_text_matches_mdbook_html() {
    check_book("nomicon");
}

#[test]
fn rust_by_example_text_matches_mdbook_html() {
    check_book("rust-by-example");
}

#[test]
fn edge_case_book_text_matches_mdbook_html() {
    check_dir(&common::fixture("text-model"), 3);
}
