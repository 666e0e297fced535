//! Acceptance 2: injection changes nothing a reader or the search engine sees.
//!
//! Over every chapter of nomicon and rust-by-example (about 3 generated comments each) and a
//! book of 30 random Markdown chapters, built by mdBook running the real binary:
//! (a) the visible text of `<main>` equals that of a build with `enable = false` (scripts,
//!     styles, diagram sources and our empty code-anchor spans aside), and so do the ids of
//!     `<main>`'s elements;
//! (b) no "unclosed HTML tag" / "unexpected HTML end tag" warning appears that the build
//!     without markers does not also give;
//! (c) the search index holds the same documents with the same words;
//! (d) two builds of the same input are byte-identical;
//! and every live text anchor has its marker group (so (a)–(c) are not vacuous).
//!
//! Also, without mdBook: 200 random Markdown documents with random word-aligned anchors keep
//! their text-model text through `inject`.

use crate::support::common;
use crate::support::preprocess;

use common::{corpus, stage};
use mdbook_notabene::output::inject::{self, Injection, TextMark};
use notabene_anchoring::text::normalize::normalize;
use notabene_anchoring::text::{TextOptions, page_text};
use preprocess::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

// ---------------------------------------------------------------------------------------
// Random Markdown

const WORDS: &[&str] = &[
    "alpha",
    "beta",
    "gamma",
    "delta",
    "data",
    "value",
    "The",
    "reader",
    "sees",
    "text",
    "café",
    "naïve",
    "über",
    "日本語",
    "x2",
    "42",
    "3.14",
    "don't",
    "it's",
    "e.g.",
    "(note)",
    "well-known",
    "end.",
    "first,",
    "C++",
    "i18n",
    "foo_bar",
    "Ω",
    "over",
    "under",
    "a",
    "of",
];

struct Gen<'a> {
    rng: &'a mut fastrand::Rng,
    footnotes: Vec<String>,
    refs: Vec<String>,
}

impl Gen<'_> {
    fn word(&mut self) -> String {
        WORDS[self.rng.usize(0..WORDS.len())].to_string()
    }

    fn words(&mut self, lo: usize, hi: usize) -> String {
        let n = self.rng.usize(lo..=hi);
        (0..n).map(|_| self.word()).collect::<Vec<_>>().join(" ")
    }

    fn inline(&mut self, depth: u32) -> String {
        let r = self.rng.u32(0..100);
        if depth > 1 || r < 40 {
            return self.word();
        }
        match r {
            40..=43 => format!("*{}*", self.inlines(1, 3, depth + 1)),
            44..=46 => format!("_{}_", self.words(1, 3)),
            47..=50 => format!("**{}**", self.inlines(1, 3, depth + 1)),
            51..=54 => {
                let code = [
                    "x < y",
                    "a*b*c",
                    "<b>bold</b>",
                    "fn main()",
                    "`tick`",
                    "[x](y)",
                ];
                let c = code[self.rng.usize(0..code.len())];
                if c.contains('`') {
                    format!("`` {c} ``")
                } else {
                    format!("`{c}`")
                }
            }
            55..=57 => format!("[{}](x.md)", self.inlines(1, 3, depth + 1)),
            58 => format!("[{}](https://example.com/p \"title\")", self.words(1, 2)),
            59..=60 => {
                let label = self.words(1, 3);
                self.refs.push(label.clone());
                match self.rng.u32(0..3) {
                    0 => format!("[{label}]"),
                    1 => format!("[{label}][]"),
                    _ => format!("[{}][{label}]", self.words(1, 2)),
                }
            }
            61..=63 => format!("\"{}\"", self.words(1, 3)),
            64 => format!("'{}'", self.words(1, 2)),
            65..=66 => {
                let n = self.footnotes.len() + 1;
                let body = self.words(2, 6);
                self.footnotes.push(body);
                format!("{}[^n{n}]", self.word())
            }
            67..=68 => format!("<span class=\"k\">{}</span>", self.words(1, 3)),
            69 => "<kbd>Ctrl</kbd>+<kbd>C</kbd>".into(),
            70 => format!("x<sup>{}</sup>", self.rng.u32(2..9)),
            71 => format!("<em>{}</em>", self.words(1, 2)),
            72 => "<abbr title=\"HyperText\">HTML</abbr>".into(),
            73..=75 => ["&amp;", "&lt;", "&copy;", "&#8212;", "&nbsp;", "&gt;"]
                [self.rng.usize(0..6)]
            .into(),
            76..=77 => format!("~~{}~~", self.words(1, 2)),
            78 => "<https://example.org/x>".into(),
            79..=80 => ["\\*", "\\_", "\\[", "\\`"][self.rng.usize(0..4)].into(),
            81..=83 => ["--", "---", "...", "--"][self.rng.usize(0..4)].into(),
            84 => format!("![{}](img/p.png)", self.words(1, 2)),
            85 => format!("{}  \n{}", self.word(), self.word()),
            86 => format!("{}\\\n{}", self.word(), self.word()),
            87 => format!("{}<br>{}", self.word(), self.word()),
            88 => format!("({})", self.inlines(1, 2, depth + 1)),
            _ => self.word(),
        }
    }

    fn inlines(&mut self, lo: usize, hi: usize, depth: u32) -> String {
        let n = self.rng.usize(lo..=hi);
        (0..n)
            .map(|_| self.inline(depth))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn paragraph(&mut self) -> String {
        let n = self.rng.usize(1..=3);
        (0..n)
            .map(|_| {
                let mut s = self.inlines(3, 12, 0);
                s.push('.');
                s
            })
            .collect::<Vec<_>>()
            .join(if self.rng.bool() { " " } else { "\n" })
    }

    fn block(&mut self) -> String {
        match self.rng.u32(0..100) {
            0..=34 => self.paragraph(),
            35..=41 => format!(
                "{} {}",
                "#".repeat(self.rng.usize(1..=4)),
                self.inlines(1, 4, 1)
            ),
            42..=43 => format!("{}\n---", self.words(1, 4)),
            44..=51 => {
                let ordered = self.rng.bool();
                let n = self.rng.usize(2..=4);
                let mut out = Vec::new();
                for i in 0..n {
                    let marker = if ordered {
                        format!("{}.", i + 1)
                    } else {
                        "-".into()
                    };
                    let task = if !ordered && self.rng.u32(0..5) == 0 {
                        "[ ] "
                    } else {
                        ""
                    };
                    out.push(format!("{marker} {task}{}", self.inlines(1, 6, 0)));
                    if self.rng.u32(0..4) == 0 {
                        let pad = " ".repeat(marker.len() + 1);
                        out.push(format!("{pad}- {}", self.inlines(1, 4, 1)));
                    }
                }
                out.join("\n")
            }
            52..=57 => {
                let cols = self.rng.usize(2..=3);
                let head: Vec<String> = (0..cols).map(|_| self.words(1, 2)).collect();
                let mut out = vec![
                    format!("| {} |", head.join(" | ")),
                    format!("|{}", "---|".repeat(cols)),
                ];
                for _ in 0..self.rng.usize(1..=3) {
                    let row: Vec<String> = (0..cols).map(|_| self.inlines(1, 3, 1)).collect();
                    out.push(format!("| {} |", row.join(" | ")));
                }
                out.join("\n")
            }
            58..=64 => {
                let (fence, lang) = [
                    ("```", "rust"),
                    ("```", "text"),
                    ("~~~", ""),
                    ("```", "sh"),
                    ("```", "rust,ignore"),
                ][self.rng.usize(0..5)];
                let lines: Vec<String> = (0..self.rng.usize(1..=4))
                    .map(|_| {
                        let w = self.words(1, 5);
                        ["let x = ", "println!(\"", "// ", "# ", ""][self.rng.usize(0..5)]
                            .to_string()
                            + &w
                    })
                    .collect();
                format!("{fence}{lang}\n{}\n{fence}", lines.join("\n"))
            }
            65..=66 => format!(
                "```mermaid\ngraph TD\n    A[{}] --> B[{}]\n```",
                self.word(),
                self.word()
            ),
            67..=68 => format!("    {}\n    {}", self.words(2, 4), self.words(1, 3)),
            69..=74 => format!("> {}", self.paragraph().replace('\n', "\n> ")),
            75..=76 => format!(
                "> - {}\n> - {}",
                self.inlines(1, 4, 1),
                self.inlines(1, 4, 1)
            ),
            77..=78 => format!("> [!NOTE]\n> {}", self.paragraph().replace('\n', "\n> ")),
            79..=81 => format!("{}\n: {}", self.words(1, 2), self.inlines(2, 6, 0)),
            82..=84 => format!("<div class=\"box\">\n\n{}\n\n</div>", self.paragraph()),
            85 => format!(
                "<details><summary>{}</summary>\n\n{}\n\n</details>",
                self.words(1, 2),
                self.paragraph()
            ),
            86..=87 => "---".into(),
            88..=90 => format!("```rust\n{}\n```", {
                let body = self.words(1, 4);
                format!("# fn hidden() {{}}\nlet v = \"{body}\";\nprintln!(\"{{v}}\");")
            }),
            91..=92 => format!("![{}](img/fig.png)", self.words(1, 3)),
            _ => self.paragraph(),
        }
    }

    fn document(&mut self) -> String {
        let mut blocks = vec![format!("# {}", self.words(1, 3))];
        for _ in 0..self.rng.usize(3..=8) {
            blocks.push(self.block());
        }
        for (i, f) in self.footnotes.iter().enumerate() {
            blocks.push(format!("[^n{}]: {f}", i + 1));
        }
        let refs: BTreeSet<String> = self.refs.iter().cloned().collect();
        if !refs.is_empty() {
            blocks.push(
                refs.iter()
                    .map(|r| format!("[{r}]: https://example.com/{}", r.len()))
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
        }
        blocks.join("\n\n") + "\n"
    }
}

fn random_document(rng: &mut fastrand::Rng) -> String {
    Gen {
        rng,
        footnotes: Vec::new(),
        refs: Vec::new(),
    }
    .document()
}

#[test]
fn random_markdown_keeps_its_text_through_inject() {
    let options = TextOptions::default();
    let mut rng = fastrand::Rng::with_seed(2028);
    let (mut marks_total, mut code_total, mut blocks_total) = (0, 0, 0);
    let mut dropped = Vec::new();
    let mut failures = Vec::new();
    for n in 0..200 {
        let md = random_document(&mut rng);
        let pt = page_text(&md, &options);
        let runs = runs(&md, &pt);
        let mut inj = Injection::default();
        let mut used: Vec<std::ops::Range<usize>> = Vec::new();
        if !runs.is_empty() {
            for k in 0..rng.usize(1..=4) {
                let run = &runs[rng.usize(0..runs.len())];
                let len = rng.usize(1..=run.words.len().min(6));
                let first = rng.usize(0..=run.words.len() - len);
                let r = run.words[first].start..run.words[first + len - 1].end;
                // Overlapping anchors are allowed (they nest); identical ones are skipped.
                if used.contains(&r) {
                    continue;
                }
                used.push(r.clone());
                let id = format!("c{n}_{k}");
                match run.kind {
                    Kind::Code(b) => {
                        code_total += 1;
                        inj.code.entry(b).or_default().push(id)
                    }
                    _ => {
                        marks_total += 1;
                        inj.marks.push(TextMark {
                            id,
                            status: if k % 2 == 0 { "open" } else { "addressed" }.into(),
                            text: r,
                        })
                    }
                }
            }
        }
        if !pt.blocks.is_empty() {
            blocks_total += 1;
            inj.blocks
                .entry(rng.usize(0..pt.blocks.len()))
                .or_default()
                .push(format!("b{n}"));
        }
        let island = json!({ "page": format!("p/{n}"), "comments": [{ "body": "</script><b>x</b>\u{2028}" }] });
        inj.island = Some(mdbook_notabene::util::payload::data_script(
            "nb-data",
            &format!(" data-nb-page=\"p/{n}\""),
            &island.to_string(),
            usize::MAX,
        ));
        let (out, outcome) = inject::inject(&md, &pt, &inj, &options);
        let before = normalize(&pt.text).as_string();
        let after = normalize(&page_text(&out, &options).text).as_string();
        if before != after {
            failures.push(format!(
                "document {n}: text changed\n--- markdown\n{md}\n--- injected\n{out}\n--- before\n{before}\n--- after\n{after}"
            ));
            continue;
        }
        if outcome.marks_dropped {
            dropped.push(n);
        } else {
            for m in &inj.marks {
                if !out.contains(&format!("data-nb-id=\"{}\"", m.id)) {
                    failures.push(format!(
                        "document {n}: mark {} missing\n{md}\n---\n{out}",
                        m.id
                    ));
                }
            }
        }
        if out.matches("<mark ").count() != out.matches("</mark>").count() {
            failures.push(format!("document {n}: unbalanced marks\n{out}"));
        }
        if out.matches("class=\"nb-data\"").count() != 1 || out.contains("</script><b>") {
            failures.push(format!("document {n}: island\n{out}"));
        }
    }
    eprintln!(
        "random documents: {marks_total} text anchors, {code_total} code anchors, {blocks_total} block anchors; marks dropped in {} document(s): {dropped:?}",
        dropped.len()
    );
    assert!(marks_total > 300 && code_total > 20 && blocks_total > 20);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // Dropping is the safety net, not the rule.
    assert!(
        dropped.len() <= 4,
        "marks dropped in {} documents: {dropped:?}",
        dropped.len()
    );
}

// ---------------------------------------------------------------------------------------
// Whole books

/// Builds `root` with `config` into `out`, returning mdBook's warnings.
fn build(root: &Path, config: mdbook_driver::config::Config, out: &Path) -> Vec<String> {
    let ((), warnings) = with_warnings(|| load(root, config, out).build().unwrap());
    warnings
}

/// Ids of the elements of `<main>`, in order.
fn main_ids(doc: &scraper::Html) -> Vec<String> {
    doc.select(&sel("main [id]"))
        .filter(|e| !matches!(e.value().name(), "script"))
        .map(|e| e.value().attr("id").unwrap().to_string())
        .collect()
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
        "at char {i}:\n    without: {:?}\n    with:    {:?}",
        ctx(&a),
        ctx(&b)
    )
}

/// Multiset difference `a - b`.
fn minus(a: &[String], b: &[String]) -> Vec<String> {
    let mut left: BTreeMap<&String, usize> = BTreeMap::new();
    for x in b {
        *left.entry(x).or_default() += 1;
    }
    a.iter()
        .filter(|x| match left.get_mut(x) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .cloned()
        .collect()
}

/// Generates comments for every chapter of the staged book at `root`, builds it without
/// markers, with markers, and with markers again, and checks (a)–(d). Returns the warnings of
/// the build without markers.
/// Builds the book without and with notabene (`plugin`: its table) and checks every
/// invariant; returns the warnings of the build without.
fn check_book(root: &Path, tmp: &Path, seed: u64, plugin: Value) -> Vec<String> {
    let mut config0 = neutral_config(root);
    install_client(root, &mut config0);
    let md0 = load(root, config0.clone(), &tmp.join("unused"));
    let gens = generate(
        root,
        &md0,
        &GenOptions {
            per_chapter: 3,
            typo_every: 10,
            resolved_every: 9,
            addressed_every: 5,
            page_every: 8,
            seed,
            ..GenOptions::default()
        },
    );
    let chapters = chapters(&md0);
    assert!(gens.len() >= 2 * chapters.len(), "{} comments", gens.len());

    let (off, on, again) = (tmp.join("off"), tmp.join("on"), tmp.join("again"));
    let mut c_off = config0.clone();
    add_plugin(&mut c_off, json!({ "enable": false }));
    let mut c_on = config0;
    add_plugin(&mut c_on, plugin.clone());
    let w_off = build(root, c_off, &off);
    let w_on = build(root, c_on.clone(), &on);
    build(root, c_on, &again);

    let mut failures = Vec::new();
    let mut pages = BTreeSet::new();
    let mut groups_total = 0;
    for ch in &chapters {
        pages.insert(ch.html.clone());
        let (a, b) = (html(&off, &ch.html), html(&on, &ch.html));
        // Markers are there (so the comparison means something)…
        let groups = mark_groups(&b);
        groups_total += groups.len();
        let want: BTreeSet<String> = gens
            .iter()
            .filter(|g| {
                g.html == ch.html
                    && g.live()
                    && matches!(
                        g.kind,
                        Kind::Prose | Kind::List | Kind::Table | Kind::Heading
                    )
            })
            .map(|g| g.id.clone())
            .collect();
        let got: BTreeSet<String> = groups.keys().cloned().collect();
        if got != want {
            failures.push(format!(
                "{}: marker groups {got:?}, expected {want:?}",
                ch.html
            ));
        }
        // …and so is the island, in the form `compress-above` asks for, holding every
        // comment of the chapter the generator wrote.
        let deflate = plugin.get("compress-above") == Some(&json!(0));
        let isl = islands(&b);
        let packed = b
            .select(&sel(
                "script.nb-data[data-nb-encoding=\"deflate-raw+base64\"]",
            ))
            .count();
        let ids: BTreeSet<String> = isl
            .iter()
            .flat_map(|(_, v, _)| v["comments"].as_array().cloned().unwrap_or_default())
            .filter_map(|c| c["id"].as_str().map(str::to_string))
            .collect();
        let stored: BTreeSet<String> = gens
            .iter()
            .filter(|g| g.html == ch.html)
            .map(|g| g.id.clone())
            .collect();
        if isl.len() != 1 || packed != usize::from(deflate) || !stored.is_subset(&ids) {
            failures.push(format!(
                "{}: {} islands, {packed} deflated, ids {ids:?} for {stored:?}",
                ch.html,
                isl.len()
            ));
        }
        assert_eq!(a.select(&sel("mark.nb-mark, script.nb-data")).count(), 0);
        // (a) …and the reader's text is unchanged.
        let (ta, tb) = (
            normalize(&main_text(&a).unwrap()).as_string(),
            normalize(&main_text(&b).unwrap()).as_string(),
        );
        if ta != tb {
            failures.push(format!("{}: {}", ch.html, first_difference(&ta, &tb)));
        }
        if main_ids(&a) != main_ids(&b) {
            failures.push(format!(
                "{}: element ids differ: {:?}",
                ch.html,
                minus(&main_ids(&a), &main_ids(&b))
            ));
        }
    }
    let live_text = gens
        .iter()
        .filter(|g| {
            g.live()
                && matches!(
                    g.kind,
                    Kind::Prose | Kind::List | Kind::Table | Kind::Heading
                )
        })
        .count();
    eprintln!(
        "{}: {} chapters, {} comments, {groups_total} of {live_text} live text anchors marked; warnings without/with markers: {}/{}",
        root.display(),
        chapters.len(),
        gens.len(),
        html_warnings(&w_off).len(),
        html_warnings(&w_on).len()
    );

    // (b) No new HTML-balance warning.
    let new = minus(&html_warnings(&w_on), &html_warnings(&w_off));
    if !new.is_empty() {
        failures.push(format!("new mdBook warnings:\n{}", new.join("\n")));
    }

    // (c) The search index: same documents, same words (generated review pages aside).
    let keep = |words: BTreeMap<String, [Vec<String>; 3]>| -> BTreeMap<String, [Vec<String>; 3]> {
        words
            .into_iter()
            .filter(|(k, _)| {
                let url = k.split_once(' ').unwrap().1;
                pages.contains(url.split('#').next().unwrap())
            })
            .collect()
    };
    let (ia, ib) = (search_index(&off), search_index(&on));
    let (sa, sb) = (keep(indexed_words(&ia)), keep(indexed_words(&ib)));
    assert!(sa.len() >= chapters.len(), "{} indexed documents", sa.len());
    // The terms (after stop words and stemming), restricted to the chapters' documents.
    let docs: BTreeSet<String> = sa
        .keys()
        .map(|k| k.split_once(' ').unwrap().0.to_string())
        .collect();
    let terms = |index: &serde_json::Value| -> BTreeMap<String, BTreeMap<String, String>> {
        index_terms(index)
            .into_iter()
            .map(|(t, d)| {
                (
                    t,
                    d.into_iter().filter(|(id, _)| docs.contains(id)).collect(),
                )
            })
            .filter(|(_, d): &(String, BTreeMap<String, String>)| !d.is_empty())
            .collect()
    };
    let (ta, tb) = (terms(&ia), terms(&ib));
    // Stricter: the raw words (before the trimmer) are the same too, so no word is split. (A
    // mark piece may start at punctuation after a link, `[RFC](u), more`: the index then reads
    // `RFC ,`, the same word once its punctuation is trimmed.)
    let raw = |index: &serde_json::Value| -> BTreeMap<String, Vec<String>> {
        index["index"]["documentStore"]["docs"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, _)| docs.contains(*k))
            .map(|(k, d)| {
                let mut v: Vec<String> = d["body"]
                    .as_str()
                    .unwrap_or("")
                    .split(|c: char| c.is_whitespace() || c == '-')
                    .map(|t| t.trim_matches(|c: char| !c.is_alphanumeric()))
                    .filter(|t| !t.is_empty())
                    .map(str::to_lowercase)
                    .collect();
                v.sort();
                (k.clone(), v)
            })
            .collect()
    };
    let (ra, rb) = (raw(&ia), raw(&ib));
    for (k, v) in &ra {
        if rb.get(k) != Some(v) {
            failures.push(format!(
                "search document {k}: raw words only without markers {:?}, only with {:?}",
                minus(v, rb.get(k).map(Vec::as_slice).unwrap_or(&[])),
                rb.get(k).map(|w| minus(w, v))
            ));
        }
    }
    assert!(ta.len() > 100, "{} terms", ta.len());
    if ta != tb {
        let only = |x: &BTreeMap<String, BTreeMap<String, String>>,
                    y: &BTreeMap<String, BTreeMap<String, String>>| {
            x.iter()
                .filter(|(k, v)| y.get(*k) != Some(v))
                .map(|(k, _)| k.clone())
                .take(10)
                .collect::<Vec<_>>()
        };
        failures.push(format!(
            "search terms differ: without markers only {:?}; with markers only {:?}",
            only(&ta, &tb),
            only(&tb, &ta)
        ));
    }
    if sa != sb {
        let diff: Vec<String> = sa
            .iter()
            .filter(|(k, v)| sb.get(*k) != Some(v))
            .take(5)
            .map(|(k, v)| {
                let w = sb.get(k);
                format!(
                    "{k}: body words only without markers {:?}, only with {:?}",
                    minus(&v[1], w.map(|w| w[1].as_slice()).unwrap_or(&[])),
                    w.map(|w| minus(&w[1], &v[1]))
                )
            })
            .collect();
        failures.push(format!(
            "search index differs ({} vs {} documents):\n{}",
            sa.len(),
            sb.len(),
            diff.join("\n")
        ));
    }

    // (d) Deterministic output.
    let (fa, fb) = (files(&on), files(&again));
    assert_eq!(fa.keys().collect::<Vec<_>>(), fb.keys().collect::<Vec<_>>());
    for (name, bytes) in &fa {
        if *bytes != fb[name] {
            failures.push(format!("{name}: two builds differ"));
        }
    }

    assert!(
        failures.is_empty(),
        "{} problem(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
    w_off
}

#[test]
fn nomicon_every_chapter() {
    let tmp = common::tempdir();
    let root = stage(&corpus("nomicon"), tmp.path(), "nomicon");
    // Every data island and view deflated (`compress-above = 0`): the invariants hold for
    // that form too.
    check_book(&root, tmp.path(), 21, json!({ "compress-above": 0 }));
}

#[test]
fn rust_by_example_every_chapter() {
    let tmp = common::tempdir();
    let root = stage(&corpus("rust-by-example"), tmp.path(), "rust-by-example");
    check_book(&root, tmp.path(), 22, json!({}));
}

#[test]
fn random_markdown_book() {
    let tmp = common::tempdir();
    let root = tmp.path().join("random");
    let mut rng = fastrand::Rng::with_seed(4242);
    let mut summary = String::from("# Summary\n\n");
    for n in 1..=30 {
        let name = format!("ch{n:02}.md");
        common::write(&root.join("src").join(&name), &random_document(&mut rng));
        summary.push_str(&format!("- [Chapter {n}]({name})\n"));
    }
    // A chapter that is unbalanced on its own: its warnings must appear in both builds (and
    // prove that warnings are captured at all).
    common::write(
        &root.join("src/broken.md"),
        "# Broken\n\nSome <span class=\"open\">text that stays open.\n\nNext paragraph closes </span> it late.\n",
    );
    summary.push_str("- [Broken](broken.md)\n");
    common::write(&root.join("src/SUMMARY.md"), &summary);
    common::write(&root.join("book.toml"), "[book]\ntitle = \"Random\"\n");
    common::git_init(tmp.path());
    let w_off = check_book(&root, tmp.path(), 23, json!({}));
    let html = html_warnings(&w_off);
    assert!(
        html.iter()
            .any(|w| w.contains("unclosed HTML tag `<span>` found in `broken.md`"))
            && html
                .iter()
                .any(|w| w.contains("unexpected HTML end tag `</span>` found in `broken.md`")),
        "{html:?}"
    );
}

/// Markdown constructs that once made injection change the text (and drop every marker of the
/// chapter) or split a search word, with the exact Markdown injection now writes.
#[test]
fn tricky_constructs_get_exact_markers() {
    let options = TextOptions::default();
    let cases: &[(&str, &str, &str)] = &[
        // (markdown, quote, injected markdown without the island)
        (
            "* Breaking the [pointer aliasing rules][]\n\n[pointer aliasing rules]: r.html\n",
            "Breaking the pointer aliasing",
            // The mark covers the quote only: the collapsed reference gets its label written
            // out so that the part inside its text can be marked.
            "* <mark>Breaking the </mark>[<mark>pointer aliasing</mark> rules][pointer aliasing rules]\n\n[pointer aliasing rules]: r.html\n",
        ),
        (
            "See [this][] now.\n\n[this]: t.html\n",
            "this",
            "See <mark>[this][]</mark> now.\n\n[this]: t.html\n",
        ),
        (
            "Stars \\* and more.\n",
            "* and",
            "Stars <mark>\\* and</mark> more.\n",
        ),
        (
            "> one two\n> *three four* five\n",
            "two\nthree",
            "> one <mark>two</mark>\n> *<mark>three</mark> four* five\n",
        ),
        (
            "Text x <em>42 value</em> end.\n",
            "x 42",
            // A raw element the mark enters: a piece outside it and one inside.
            "Text <mark>x </mark><em><mark>42</mark> value</em> end.\n",
        ),
        (
            "## e.g.\\\n\nBody.\n",
            "e.g.\\",
            "## <mark>e.g.</mark>\\\n\nBody.\n",
        ),
        (
            "[The `const` RFC](https://x.y/z), more text.\n",
            "RFC, more",
            // The piece inside the link, then the piece after it.
            "[The `const` <mark>RFC</mark>](https://x.y/z)<mark>, more</mark> text.\n",
        ),
        (
            "```mermaid\ngraph TD\n  A --> B\n```\n\nAfter the diagram.\n",
            "the diagram",
            "<pre class=\"mermaid\" data-nb-key=\"mermaid:dw9r6c\">graph TD&#10;  A --&gt; B&#10;</pre>\n\nAfter <mark>the diagram</mark>.\n",
        ),
    ];
    for (md, quote, want) in cases {
        let pt = page_text(md, &options);
        let a = pt
            .text
            .find(quote)
            .unwrap_or_else(|| panic!("{quote:?} in {:?}", pt.text));
        let inj = Injection {
            marks: vec![TextMark {
                id: "c".into(),
                status: "open".into(),
                text: a..a + quote.len(),
            }],
            ..Injection::default()
        };
        let (out, outcome) = inject::inject(md, &pt, &inj, &options);
        let out = out.replace(
            "<mark class=\"nb-mark\" data-nb-id=\"c\" data-nb-status=\"open\">",
            "<mark>",
        );
        assert_eq!(
            (out.as_str(), outcome.marks_dropped),
            (*want, false),
            "{md:?}"
        );
        assert_eq!(
            normalize(&page_text(&out, &options).text).as_string(),
            normalize(&pt.text).as_string()
        );
    }
}
