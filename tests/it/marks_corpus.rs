//! Marks are the quote, on both corpus books: for generated word-aligned quotes — every quote
//! that starts inside an inline element (link, emphasis, inline code, footnote reference) and
//! ends after it, every one that starts before one and ends inside it, and random ones — the
//! chapter is injected and rendered by mdBook's Markdown engine, and the text the `<mark>`
//! pieces of the comment cover is exactly the quote's (whitespace-normalised), with no
//! uncovered word between its first and last piece.

use crate::support::common::corpus_pages;
use mdbook_notabene::output::inject::{Injection, TextMark, inject};
use notabene_anchoring::text::{PageText, SegKind, Segment, TextOptions, page_text};
use std::ops::Range;

/// A quote to mark: its page text range and why it was picked.
struct Quote {
    text: Range<usize>,
    kind: &'static str,
}

/// Words (maximal non-whitespace runs) of the page text, each in one block and made only of
/// text a mark can hold (plain text, entities, inline code; not code blocks or raw HTML).
fn words(pt: &PageText, md: &str) -> Vec<(Range<usize>, u32)> {
    let mut out: Vec<(Range<usize>, u32)> = Vec::new();
    let t = &pt.text;
    let mut i = 0;
    while i < t.len() {
        let c = t[i..].chars().next().unwrap_or(' ');
        if c.is_whitespace() {
            i += c.len_utf8();
            continue;
        }
        let start = i;
        while i < t.len() && !t[i..].chars().next().unwrap_or(' ').is_whitespace() {
            i += t[i..].chars().next().map_or(1, char::len_utf8);
        }
        let first = pt.segments.partition_point(|s| s.text.end <= start);
        let segs: Vec<_> = pt.segments[first..]
            .iter()
            .take_while(|s| s.text.start < i)
            .collect();
        let markable = segs.iter().all(|s| {
            (matches!(s.kind, SegKind::Plain | SegKind::Atomic | SegKind::CodeSpan)
                || footnote(md, s))
                && s.block == segs[0].block
        });
        if markable && !segs.is_empty() {
            out.push((start..i, segs[0].block));
        }
    }
    out
}

/// Whether a segment is a footnote reference (`[^note]`, its number in the text).
fn footnote(md: &str, s: &Segment) -> bool {
    s.kind == SegKind::Raw && md[s.src.clone()].starts_with("[^")
}

/// The quotes of one page: around each inline element, and `random` more, deterministic.
fn quotes(pt: &PageText, md: &str, seed: u64, random: usize) -> Vec<Quote> {
    let words = words(pt, md);
    let mut out = Vec::new();
    // Consecutive words of one block from `i` to `j` (inclusive), as a quote.
    let span = |i: usize, j: usize| -> Option<Range<usize>> {
        let (wi, wj) = (words.get(i)?, words.get(j)?);
        (wi.1 == wj.1 && i <= j && j - i < 12).then_some(wi.0.start..wj.0.end)
    };
    // Every inline element, code span and footnote reference: (its text, what it is).
    let inline_text = pt.inline_text_ranges();
    let mut elements: Vec<(Range<usize>, &'static str)> = pt
        .inlines
        .iter()
        .zip(&inline_text)
        .filter_map(|(el, r)| {
            let kind = match md[el.src.clone()].chars().next() {
                Some('[') => "link",
                Some('*' | '_') => "emphasis",
                Some('<') => "raw element",
                _ => "other",
            };
            Some((r.clone()?, kind))
        })
        .collect();
    for s in &pt.segments {
        if s.kind == SegKind::CodeSpan {
            elements.push((s.text.clone(), "code"));
        } else if footnote(md, s) {
            elements.push((s.text.clone(), "footnote"));
        }
    }
    for (n, (r, kind)) in elements.into_iter().enumerate() {
        let first = words.partition_point(|w| w.0.end <= r.start);
        let last = words.partition_point(|w| w.0.start < r.end);
        if first >= last {
            continue;
        }
        // Starts on the element's last word (inside it when it has two), ends 1–3 words on.
        let k = 1 + (n % 3);
        if let Some(q) = span(last - 1, last - 1 + k) {
            out.push(Quote { text: q, kind });
        }
        // Starts 1–3 words before, ends on the element's first word.
        if let Some(q) = first.checked_sub(k).and_then(|i| span(i, first)) {
            out.push(Quote { text: q, kind });
        }
    }
    let mut rng = seed;
    let mut next = |m: usize| {
        // A 64-bit LCG: deterministic, no dependency.
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((rng >> 33) as usize) % m.max(1)
    };
    for _ in 0..random {
        if words.is_empty() {
            break;
        }
        let i = next(words.len());
        let len = next(8);
        if let Some(q) = span(i, i + len) {
            out.push(Quote {
                text: q,
                kind: "random",
            });
        }
    }
    out
}

/// The rendered page's text, and for each character whether a `<mark>` covers it.
fn rendered(md: &str) -> (Vec<char>, Vec<bool>) {
    let parser =
        mdbook_markdown::new_cmark_parser(md, &mdbook_markdown::MarkdownOptions::default());
    let mut html = String::new();
    mdbook_markdown::pulldown_cmark::html::push_html(&mut html, parser);
    let doc = scraper::Html::parse_fragment(&html);
    let (mut chars, mut covered) = (Vec::new(), Vec::new());
    for node in doc.root_element().descendants() {
        if let Some(text) = node.value().as_text() {
            let in_mark = node.ancestors().any(|a| {
                a.value()
                    .as_element()
                    .is_some_and(|e| e.name() == "mark" && e.attr("data-nb-id").is_some())
            });
            for c in text.chars() {
                chars.push(c);
                covered.push(in_mark);
            }
        }
    }
    (chars, covered)
}

fn normalise(s: impl Iterator<Item = char>) -> String {
    s.collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// What the marks of one quote cover, if it is not exactly the quote.
fn mismatch(md: &str, pt: &PageText, q: &Quote, options: &TextOptions) -> Option<String> {
    let inj = Injection {
        marks: vec![TextMark {
            id: "c_1".into(),
            status: "open".into(),
            text: q.text.clone(),
        }],
        ..Injection::default()
    };
    let (out, outcome) = inject(md, pt, &inj, options);
    let want = normalise(pt.text[q.text.clone()].chars());
    if outcome.marks_dropped {
        return Some(format!("{}: {want:?} dropped", q.kind));
    }
    let (chars, covered) = rendered(&out);
    let (Some(a), Some(b)) = (
        covered.iter().position(|&c| c),
        covered.iter().rposition(|&c| c),
    ) else {
        return Some(format!("{}: {want:?} no mark", q.kind));
    };
    let got = normalise(chars[a..=b].iter().copied());
    let gap = (a..=b).any(|i| !covered[i] && !chars[i].is_whitespace());
    (got != want || gap).then(|| format!("{}: {want:?} marked {got:?} (gap: {gap})", q.kind))
}

#[test]
fn every_mark_is_its_quote_on_both_corpus_books() {
    let options = TextOptions::default();
    let (mut total, mut bad) = (0usize, Vec::new());
    let mut by_kind: std::collections::BTreeMap<&str, (usize, usize)> = Default::default();
    for (n, page) in corpus_pages().iter().enumerate() {
        let pt = page_text(&page.md, &options);
        for q in quotes(&pt, &page.md, n as u64, 4) {
            total += 1;
            let e = by_kind.entry(q.kind).or_default();
            e.0 += 1;
            if let Some(m) = mismatch(&page.md, &pt, &q, &options) {
                e.1 += 1;
                bad.push(format!("{}: {m}", page.name));
            }
        }
    }
    eprintln!("{by_kind:?}");
    assert!(total > 2000, "{total} quotes");
    assert!(
        bad.is_empty(),
        "{} of {total} marks are not their quote:\n{}",
        bad.len(),
        bad.iter().take(40).cloned().collect::<Vec<_>>().join("\n")
    );
}
