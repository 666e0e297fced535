//! Marks cover exactly the quote: inside link text (also with emphasis inside the link), and in
//! scripts written without spaces (Japanese, Chinese), where word boundaries are Unicode's
//! (UAX #29) or the quote itself. Golden: the chapter's Markdown after injection, byte for byte.

use mdbook_notabene::output::inject::{Injection, TextMark, inject};
use notabene_anchoring::text::{TextOptions, page_text};
use pretty_assertions::assert_eq;

/// `md` with a mark on the first occurrence of `quote` in its rendered text.
fn marked(md: &str, quote: &str) -> String {
    let options = TextOptions::default();
    let pt = page_text(md, &options);
    let at = pt
        .text
        .find(quote)
        .unwrap_or_else(|| panic!("{quote:?} in {:?}", pt.text));
    let inj = Injection {
        marks: vec![TextMark {
            id: "c_1".into(),
            status: "open".into(),
            text: at..at + quote.len(),
        }],
        ..Injection::default()
    };
    let (out, outcome) = inject(md, &pt, &inj, &options);
    assert!(!outcome.marks_dropped, "marks kept");
    out
}

const M: &str = "<mark class=\"nb-mark\" data-nb-id=\"c_1\" data-nb-status=\"open\">";

/// The HTML of `md` as pulldown-cmark renders it with mdBook's options, and the text of its
/// `<mark>` elements.
fn rendered_marks(md: &str) -> (String, Vec<String>) {
    let parser =
        mdbook_markdown::new_cmark_parser(md, &mdbook_markdown::MarkdownOptions::default());
    let mut html = String::new();
    mdbook_markdown::pulldown_cmark::html::push_html(&mut html, parser);
    let doc = scraper::Html::parse_fragment(&html);
    let marks = doc
        .select(&scraper::Selector::parse("mark").unwrap())
        .map(|m| m.text().collect())
        .collect();
    (html, marks)
}

/// Golden: the injected Markdown, and the rendered mark's text equals the quote.
fn check(md: &str, quote: &str, want: &str) {
    let got = marked(md, quote);
    assert_eq!(got, want);
    let (html, marks) = rendered_marks(&got);
    assert_eq!(marks, vec![quote.to_string()], "{html}");
}

#[test]
fn inside_link_text() {
    check(
        "See [Encoding States and Behavior as Types](#encoding) for more.\n",
        "and Behavior",
        &format!("See [Encoding States {M}and Behavior</mark> as Types](#encoding) for more.\n"),
    );
    let (html, _) = rendered_marks(&marked(
        "See [Encoding States and Behavior as Types](#encoding) for more.\n",
        "and Behavior",
    ));
    assert!(
        html.contains("<a href=\"#encoding\">Encoding States <mark"),
        "{html}"
    );
}

#[test]
fn inside_emphasis_inside_link_text() {
    check(
        "See [Encoding *States and Behavior* as Types](#encoding) for more.\n",
        "and Behavior",
        &format!("See [Encoding *States {M}and Behavior</mark>* as Types](#encoding) for more.\n"),
    );
}

#[test]
fn inside_the_text_of_reference_links() {
    // Shortcut and collapsed references take their label from their text: it is written out.
    let defs = "\n[Encoding States and Behavior as Types]: #encoding\n";
    check(
        &format!("See [Encoding States and Behavior as Types] for more.\n{defs}"),
        "and Behavior",
        &format!(
            "See [Encoding States {M}and Behavior</mark> as Types][Encoding States and Behavior as Types] for more.\n{defs}"
        ),
    );
    check(
        &format!("See [Encoding States and Behavior as Types][] for more.\n{defs}"),
        "and Behavior",
        &format!(
            "See [Encoding States {M}and Behavior</mark> as Types][Encoding States and Behavior as Types] for more.\n{defs}"
        ),
    );
    // A full reference names its label already.
    check(
        "See [Encoding States and Behavior as Types][enc] for more.\n\n[enc]: #encoding\n",
        "and Behavior",
        &format!(
            "See [Encoding States {M}and Behavior</mark> as Types][enc] for more.\n\n[enc]: #encoding\n"
        ),
    );
    let (html, _) = rendered_marks(&marked(
        &format!("See [Encoding States and Behavior as Types] for more.\n{defs}"),
        "and Behavior",
    ));
    assert!(
        html.contains("<a href=\"#encoding\">"),
        "still a link: {html}"
    );
}

#[test]
fn japanese_and_chinese_quotes() {
    check(
        "所有権はRustの最もユニークな機能であり、言語全体に深い影響を与えています。\n",
        "ユニークな機能",
        &format!(
            "所有権はRustの最も{M}ユニークな機能</mark>であり、言語全体に深い影響を与えています。\n"
        ),
    );
    check(
        "所有权是Rust最独特的功能，对语言的其余部分有着深远的影响。\n",
        "独特的功能",
        &format!("所有权是Rust最{M}独特的功能</mark>，对语言的其余部分有着深远的影响。\n"),
    );
}

#[test]
fn latin_words_and_katakana_runs_still_snap_whole() {
    // Part of a Latin word: the whole word, as before.
    let got = marked("Encoding States and Behavior as Types.\n", "ehavio");
    assert_eq!(
        got,
        format!("Encoding States and {M}Behavior</mark> as Types.\n")
    );
    // Part of a Katakana word: UAX #29 keeps Katakana runs whole.
    let got = marked("最もユニークな機能\n", "ニー");
    assert_eq!(got, format!("最も{M}ユニーク</mark>な機能\n"));
}

#[test]
fn an_escaped_bracket_in_a_reference_link_is_no_label_end() {
    // `[foo bar\\]` is a shortcut reference whose text ends in an escaped backslash.
    let md = "See [foo bar\\\\] now.\n\n[foo bar\\\\]: #x\n";
    let got = marked(md, "foo");
    let (html, marks) = rendered_marks(&got);
    assert_eq!(marks, vec!["foo".to_string()], "{got}\n{html}");
    assert!(html.contains("<a href=\"#x\">"), "still a link: {html}");
}

/// The injected Markdown, and the text of each rendered `<mark>` piece, in order.
fn pieces(md: &str, quote: &str) -> (String, Vec<String>) {
    let got = marked(md, quote);
    let (_, marks) = rendered_marks(&got);
    (got, marks)
}

#[test]
fn a_quote_that_leaves_a_link_is_marked_in_pieces() {
    let (got, marks) = pieces(
        "See [the drop check RFC](https://x.y/z), for the full rules.\n",
        "RFC, for the",
    );
    assert_eq!(
        got,
        format!(
            "See [the drop check {M}RFC</mark>](https://x.y/z){M}, for the</mark> full rules.\n"
        )
    );
    assert_eq!(marks, ["RFC", ", for the"]);
}

#[test]
fn a_quote_that_enters_inline_code_goes_inside_it() {
    // The span becomes a raw `<code>` with its punctuation as character references.
    let (got, marks) = pieces(
        "An `Arc<&'a str>` was expected here.\n",
        "str> was expected",
    );
    assert_eq!(
        got,
        format!(
            "An <code>Arc&#60;&#38;&#39;a {M}str&#62;</mark></code>{M} was expected</mark> here.\n"
        )
    );
    assert_eq!(marks, ["str>", " was expected"]);
    let (html, _) = rendered_marks(&got);
    assert!(html.contains("<code>Arc&lt;&amp;'a <mark"), "{html}");
    // Inside a shortcut reference link, whose label is written out.
    let (got, marks) = pieces(
        "See [Bounds (`X: Y`)] and more.\n\n[Bounds (`X: Y`)]: b.html\n",
        "Y) and",
    );
    assert_eq!(marks, ["Y", ")", " and"], "{got}");
    let (html, _) = rendered_marks(&got);
    assert!(html.contains("<a href=\"b.html\">Bounds ("), "{html}");
}

#[test]
fn a_quote_that_enters_a_raw_element_is_marked_inside_and_out() {
    let (got, marks) = pieces(
        "Write <abbr title=\"HyperText Markup Language\">HTML markup</abbr> by hand.\n",
        "markup by hand",
    );
    assert_eq!(
        got,
        format!(
            "Write <abbr title=\"HyperText Markup Language\">HTML {M}markup</mark></abbr>{M} by hand</mark>.\n"
        )
    );
    assert_eq!(marks, ["markup", " by hand"]);
}

#[test]
fn a_footnote_reference_in_a_quote_is_marked_whole() {
    let md = "Unsafe code is dangerous[^ub] in general.\n\n[^ub]: Undefined behaviour.\n";
    let (got, _) = pieces(md, "dangerous1 in");
    assert_eq!(
        got,
        format!(
            "Unsafe code is {M}dangerous[^ub] in</mark> general.\n\n[^ub]: Undefined behaviour.\n"
        )
    );
}
