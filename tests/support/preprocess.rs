//! The preprocessor's side of the tests (`tests/it/preprocessor_*.rs`, the anchoring and
//! following tests) and of the build benches: mdBook loaded with the real `mdbook-notabene`
//! command, comments generated from a chapter's text model the way the browser client
//! captures them, and readers for the HTML mdBook writes (data islands, marker groups,
//! `<main>` text, search index) and for its warnings (a small `tracing` subscriber).

use mdbook_driver::MDBook;
use mdbook_driver::config::Config;
use mdbook_notabene::model::book::PageIds;
use notabene_anchoring::text::normalize::normalize;
use notabene_anchoring::text::{PageText, SegKind, page_text};
use notabene_store::{Fresh, Scope, Store, new_comment};
use scraper::{ElementRef, Html, Node, Selector};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The timestamp of every generated comment.
pub const TS: &str = "2026-07-28T09:00:00.000Z";
/// Raw-text context captured on each side of a quote (as the browser client does).
pub const CONTEXT: usize = 40;

/// `book.toml` of `root` as mdBook loads it (environment overrides applied), with the
/// book's own preprocessors removed (real books may run code of their own); a
/// `[preprocessor.notabene]` table is kept.
pub fn neutral_config(root: &Path) -> Config {
    let text = std::fs::read_to_string(root.join("book.toml")).unwrap();
    let mut config: Config = text.parse().unwrap();
    config.update_from_env().unwrap();
    let own: Option<Value> = config.get("preprocessor.notabene").unwrap();
    config.set("preprocessor", json!({})).unwrap();
    if let Some(own) = own {
        config.set("preprocessor.notabene", own).unwrap();
    }
    config
}

/// Writes the reader client (`theme/notabene.js`, `theme/notabene.css`, version-stamped as
/// `mdbook-notabene install` writes them) into the book at `root`.
pub fn write_client(root: &Path) {
    use mdbook_notabene::output::assets;
    for (path, body) in [
        (assets::JS_PATH, assets::JS),
        (assets::CSS_PATH, assets::CSS),
    ] {
        let file = root.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, assets::stamped(body)).unwrap();
    }
}

/// Installs the reader client into the book at `root` and lists it in `config`'s
/// `[output.html] additional-js` / `additional-css` (the preprocessor refuses a book without it).
pub fn install_client(root: &Path, config: &mut Config) {
    use mdbook_notabene::output::assets;
    write_client(root);
    for (key, path) in [
        ("output.html.additional-js", assets::JS_PATH),
        ("output.html.additional-css", assets::CSS_PATH),
    ] {
        let mut list: Vec<String> = config.get(key).unwrap().unwrap_or_default();
        if !list.iter().any(|e| e == path) {
            list.push(path.to_string());
        }
        config.set(key, list).unwrap();
    }
}

/// The command string mdBook runs for our plugin (shell-quoted when needed).
pub fn plugin_command() -> String {
    let bin = super::common::plugin_bin();
    if bin.contains([' ', '\'', '"', '\\']) {
        format!("'{}'", bin.replace('\'', "'\\''"))
    } else {
        bin.to_string()
    }
}

/// Configures `[preprocessor.notabene]` (keeping its keys) with the real binary as its
/// command, after `links`, plus `extra` keys.
pub fn add_plugin(config: &mut Config, extra: Value) {
    let mut table: Value = config
        .get("preprocessor.notabene")
        .unwrap()
        .unwrap_or_else(|| json!({}));
    let t = table.as_object_mut().unwrap();
    t.insert("command".into(), plugin_command().into());
    t.insert("after".into(), json!(["links"]));
    if let Value::Object(e) = extra {
        t.extend(e);
    }
    config.set("preprocessor.notabene", table).unwrap();
}

/// Loads the book at `root` with `config` (preprocessors are determined from it), building
/// into `out`.
pub fn load(root: &Path, mut config: Config, out: &Path) -> MDBook {
    config.build.build_dir = out.to_path_buf();
    MDBook::load_with_config(root, config).unwrap()
}

/// A chapter as mdBook hands it to a renderer (after `links` and `index`).
#[derive(Debug, Clone)]
pub struct SrcChapter {
    /// Source path relative to src.
    pub source_path: PathBuf,
    /// HTML path relative to the output (`index.html` for a README).
    pub html: String,
    /// Markdown after the built-in preprocessors.
    pub content: String,
}

/// The chapters of `md` (drafts and synthetic chapters excluded) as the markdown renderer
/// receives them. Load `md` without our preprocessor.
pub fn chapters(md: &MDBook) -> Vec<SrcChapter> {
    let (book, _) = md
        .preprocess_book(&mdbook_driver::builtin_renderers::MarkdownRenderer::new())
        .unwrap();
    book.chapters()
        .filter_map(|ch| {
            Some(SrcChapter {
                source_path: ch.source_path.clone()?,
                html: slash(&ch.path.clone()?.with_extension("html")),
                content: ch.content.clone(),
            })
        })
        .collect()
}

/// `/`-separated relative path.
pub fn slash(p: &Path) -> String {
    p.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// Page ids of the book at `root` (`book.toml` and environment as the preprocessor sees them).
pub fn page_ids(root: &Path) -> PageIds {
    PageIds::new(&mdbook_notabene::model::book::Book::load(root).unwrap())
}

// ---------------------------------------------------------------------------------------
// Comment generation

/// Where a generated anchor lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Prose,
    List,
    Table,
    Heading,
    /// Inside code block `n` (of `PageText::code_blocks`).
    Code(usize),
    /// Image or diagram `n` (of `PageText::blocks`).
    Block(usize),
    /// A page-scope comment.
    Page,
}

/// A run of text in one block element (or one code block) where a word-aligned quote can be
/// taken.
#[derive(Debug, Clone)]
pub struct Run {
    pub kind: Kind,
    /// Whitespace-delimited words, as raw text ranges, each starting and ending at a
    /// whitespace boundary of the whole page text.
    pub words: Vec<Range<usize>>,
}

fn inline_kind(k: SegKind) -> bool {
    matches!(k, SegKind::Plain | SegKind::Atomic | SegKind::CodeSpan)
}

/// Classifies a block element by the Markdown line it starts on.
fn classify(md: &str, r: &Range<usize>) -> Kind {
    let line_start = md[..r.start].rfind('\n').map_or(0, |i| i + 1);
    let line = md[line_start..].lines().next().unwrap_or("");
    let mut l = line.trim_start();
    while let Some(rest) = l.strip_prefix('>') {
        l = rest.trim_start();
    }
    let block = md.get(r.clone()).unwrap_or("");
    let setext = block.trim_end().lines().count() > 1
        && block.trim_end().lines().last().is_some_and(|last| {
            let t = last.trim();
            !t.is_empty() && (t.chars().all(|c| c == '=') || t.chars().all(|c| c == '-'))
        });
    if l.starts_with('#') || setext {
        return Kind::Heading;
    }
    if l.starts_with("- ") || l.starts_with("* ") || l.starts_with("+ ") {
        return Kind::List;
    }
    let digits = l.chars().take_while(|c| c.is_ascii_digit()).count();
    if digits > 0 && (l[digits..].starts_with(". ") || l[digits..].starts_with(") ")) {
        return Kind::List;
    }
    if l.starts_with('|') {
        return Kind::Table;
    }
    Kind::Prose
}

/// The quote runs of a page: consecutive inline segments of one block element, and code blocks.
pub fn runs(md: &str, pt: &PageText) -> Vec<Run> {
    let text = &pt.text;
    let ws_before = |i: usize| {
        text[..i]
            .chars()
            .next_back()
            .is_none_or(char::is_whitespace)
    };
    let ws_after = |i: usize| text[i..].chars().next().is_none_or(char::is_whitespace);
    let segs = &pt.segments;
    let mut out = Vec::new();
    let mut i = 0;
    while i < segs.len() {
        let s = &segs[i];
        let code = match s.kind {
            SegKind::CodeBlock(n) => Some(n),
            k if inline_kind(k) => None,
            _ => {
                i += 1;
                continue;
            }
        };
        let mut j = i + 1;
        while j < segs.len() {
            let t = &segs[j];
            let same = match code {
                Some(n) => t.kind == SegKind::CodeBlock(n),
                None => inline_kind(t.kind) && t.block == s.block,
            };
            if !same {
                break;
            }
            j += 1;
        }
        let range = s.text.start..segs[j - 1].text.end;
        let kind = match code {
            Some(n) => Kind::Code(n as usize),
            None => classify(md, &pt.block_elements[s.block as usize]),
        };
        let mut words = Vec::new();
        let mut start: Option<usize> = None;
        for (k, c) in text[range.clone()].char_indices() {
            let k = k + range.start;
            if c.is_whitespace() {
                if let Some(st) = start.take() {
                    words.push(st..k);
                }
            } else if start.is_none() {
                start = Some(k);
            }
        }
        if let Some(st) = start {
            words.push(st..range.end);
        }
        // Word-aligned on the whole page text, with something to find.
        words.retain(|w| ws_before(w.start) && ws_after(w.end));
        if !words.is_empty() {
            out.push(Run { kind, words });
        }
        i = j;
    }
    out
}

/// An anchor captured from raw text `[a, b)` exactly as the browser client does.
pub fn capture(pt: &PageText, a: usize, b: usize) -> Value {
    let before = &pt.text[..a];
    let pstart = before
        .char_indices()
        .rev()
        .nth(CONTEXT - 1)
        .map_or(0, |(i, _)| i);
    let after = &pt.text[b..];
    let send = after
        .char_indices()
        .nth(CONTEXT)
        .map_or(after.len(), |(i, _)| i);
    json!({
        "quote": &pt.text[a..b],
        "prefix": &before[pstart..],
        "suffix": &after[..send],
        "section": pt.section_at(a),
    })
}

/// How many comments to generate, and of which kinds.
#[derive(Debug, Clone)]
pub struct GenOptions {
    /// Text anchors per chapter (prose first, then list/table, then code, when available).
    pub per_chapter: usize,
    /// Only this many chapters (spread over the book), all when None.
    pub max_chapters: Option<usize>,
    /// Every n-th text anchor gets a one-letter typo in its quote (0: none).
    pub typo_every: usize,
    /// Every n-th comment is `resolved` (0: none).
    pub resolved_every: usize,
    /// Every n-th comment is `addressed` (0: none).
    pub addressed_every: usize,
    /// One page-scope comment every n chapters (0: none).
    pub page_every: usize,
    /// A block comment on the first image or diagram of a chapter that has one.
    pub blocks: bool,
    /// Random seed.
    pub seed: u64,
    /// Prefix of the generated ids.
    pub id_prefix: String,
    /// Stop after this many text anchors.
    pub max_text: Option<usize>,
    /// Quotes of a chapter may overlap (else they are disjoint, so every marker group can be
    /// checked on its own).
    pub overlap: bool,
}

impl Default for GenOptions {
    fn default() -> Self {
        GenOptions {
            per_chapter: 3,
            max_chapters: None,
            typo_every: 0,
            resolved_every: 0,
            addressed_every: 0,
            page_every: 0,
            blocks: true,
            seed: 7,
            id_prefix: "c_gen".into(),
            max_text: None,
            overlap: false,
        }
    }
}

/// A generated (and stored) comment, with what the tests expect of it.
#[derive(Debug, Clone)]
pub struct Gen {
    pub id: String,
    pub page: String,
    /// HTML file of its chapter, relative to the output.
    pub html: String,
    pub kind: Kind,
    /// The stored quote (with the typo, if any).
    pub quote: Option<String>,
    /// The text the quote was taken from (without the typo).
    pub original: Option<String>,
    /// `open`, `addressed` or `resolved`.
    pub status: &'static str,
    pub typo: bool,
}

impl Gen {
    /// Whether the reader gets a marker for it (not resolved).
    pub fn live(&self) -> bool {
        self.status != "resolved"
    }
}

/// One-letter typo in the middle of the longest ASCII-alphabetic word of `q`.
fn typo(q: &str) -> Option<String> {
    let mut best: Option<(usize, usize)> = None;
    let mut start = None;
    for (i, c) in q.char_indices().chain(std::iter::once((q.len(), ' '))) {
        match (c.is_ascii_alphabetic(), start) {
            (true, None) => start = Some(i),
            (false, Some(st)) => {
                if best.is_none_or(|(a, b)| i - st > b - a) {
                    best = Some((st, i));
                }
                start = None;
            }
            _ => {}
        }
    }
    let (a, b) = best?;
    if b - a < 4 {
        return None;
    }
    let i = a + (b - a) / 2;
    let r = if matches!(q.as_bytes()[i], b'x' | b'X') {
        "q"
    } else {
        "x"
    };
    let mut out = q.to_string();
    out.replace_range(i..i + 1, r);
    Some(out)
}

/// Picks a word-aligned quote of 1..=max_words words in `run`.
fn pick(rng: &mut fastrand::Rng, run: &Run, max_words: usize) -> Range<usize> {
    let n = rng.usize(1..=max_words.min(run.words.len()));
    let first = rng.usize(0..=run.words.len() - n);
    run.words[first].start..run.words[first + n - 1].end
}

/// Generates comments for the chapters of `md` (loaded WITHOUT our preprocessor) and writes
/// them into `<root>/.notabene` (one file per comment).
pub fn generate(root: &Path, md: &MDBook, opts: &GenOptions) -> Vec<Gen> {
    let chapters = chapters(md);
    let ids = page_ids(root);
    let options = mdbook_notabene::model::book::text_options(&md.config).unwrap();
    let mut rng = fastrand::Rng::with_seed(opts.seed);
    let models: Vec<(PageText, Vec<Run>)> = chapters
        .iter()
        .map(|ch| {
            let pt = page_text(&ch.content, &options);
            let r = runs(&ch.content, &pt);
            (pt, r)
        })
        .collect();
    // With a limit: every chapter with a table, a few with lists, the rest spread evenly.
    let chosen: Vec<usize> = match opts.max_chapters {
        Some(n) if n < chapters.len() => {
            let has = |i: usize, k: Kind| models[i].1.iter().any(|r| r.kind == k);
            let mut set: BTreeSet<usize> = (0..chapters.len())
                .filter(|&i| has(i, Kind::Table))
                .take(n / 4)
                .collect();
            let lists: Vec<usize> = (0..chapters.len())
                .filter(|&i| has(i, Kind::List) && !set.contains(&i))
                .step_by(3)
                .take(n / 4)
                .collect();
            set.extend(lists);
            let spread = (0..n).map(|k| k * chapters.len() / n);
            let rest: Vec<usize> = spread.chain(0..chapters.len()).collect();
            for i in rest {
                if set.len() >= n {
                    break;
                }
                set.insert(i);
            }
            set.into_iter().collect()
        }
        _ => (0..chapters.len()).collect(),
    };
    let mut out = Vec::new();
    let mut text_n = 0usize;
    let mut typo_due = 0usize;
    for (ci, &chi) in chosen.iter().enumerate() {
        let ch = &chapters[chi];
        let page = ids.for_chapter(&ch.source_path);
        let (pt, runs) = &models[chi];
        let by = |pred: &dyn Fn(Kind) -> bool| -> Vec<&Run> {
            runs.iter().filter(|r| pred(r.kind)).collect()
        };
        let prose = by(&|k| k == Kind::Prose);
        let tables = by(&|k| k == Kind::Table);
        let listy = if tables.is_empty() {
            by(&|k| k == Kind::List)
        } else {
            tables
        };
        let code = by(&|k| matches!(k, Kind::Code(_)));
        let any = by(&|_| true);
        let mut used: Vec<Range<usize>> = Vec::new();
        for slot in 0..opts.per_chapter {
            if opts.max_text.is_some_and(|m| text_n >= m) {
                break;
            }
            let pool = match slot % 3 {
                0 if !prose.is_empty() => &prose,
                1 if !listy.is_empty() => &listy,
                2 if !code.is_empty() => &code,
                _ => &any,
            };
            if pool.is_empty() {
                break;
            }
            // Non-overlapping quotes, so every marker group is checkable on its own.
            let mut picked = None;
            for _ in 0..20 {
                let run = pool[rng.usize(0..pool.len())];
                let max = if matches!(run.kind, Kind::Code(_)) {
                    4
                } else {
                    8
                };
                let r = pick(&mut rng, run, max);
                let q = &pt.text[r.clone()];
                let long_enough = normalize(q).len() >= 4 && q.chars().any(char::is_alphanumeric);
                let free =
                    opts.overlap || used.iter().all(|u| u.end <= r.start || r.end <= u.start);
                if long_enough && free && !used.contains(&r) {
                    picked = Some((run.kind, r));
                    break;
                }
            }
            let Some((kind, r)) = picked else { continue };
            used.push(r.clone());
            text_n += 1;
            let mut anchor = capture(pt, r.start, r.end);
            let original = pt.text[r.clone()].to_string();
            let mut is_typo = false;
            // Every n-th text anchor gets a typo, or the next one long enough for it.
            if opts.typo_every > 0 && text_n.is_multiple_of(opts.typo_every) {
                typo_due += 1;
            }
            if typo_due > 0
                && original.len() >= 20
                && let Some(t) = typo(&original)
            {
                anchor["quote"] = t.into();
                is_typo = true;
                typo_due -= 1;
            }
            out.push((
                Gen {
                    id: String::new(),
                    page: page.clone(),
                    html: ch.html.clone(),
                    kind,
                    quote: anchor["quote"].as_str().map(str::to_string),
                    original: Some(original),
                    status: "open",
                    typo: is_typo,
                },
                anchor,
            ));
        }
        if opts.blocks
            && let Some(b) = pt.blocks.iter().find(|b| !b.raw_html)
        {
            let anchor = json!({
                "kind": b.kind.as_str(), "key": b.key, "label": b.label,
                "section": b.section, "index": b.index,
            });
            out.push((
                Gen {
                    id: String::new(),
                    page: page.clone(),
                    html: ch.html.clone(),
                    kind: Kind::Block(b.index),
                    quote: None,
                    original: None,
                    status: "open",
                    typo: false,
                },
                anchor,
            ));
        }
        if opts.page_every > 0 && ci % opts.page_every == 0 {
            out.push((
                Gen {
                    id: String::new(),
                    page: page.clone(),
                    html: ch.html.clone(),
                    kind: Kind::Page,
                    quote: None,
                    original: None,
                    status: "open",
                    typo: false,
                },
                Value::Null,
            ));
        }
    }
    // Ids, statuses and the store files.
    let store = Store::new(root.join(".notabene"));
    std::fs::create_dir_all(store.root()).unwrap();
    store.ensure_meta().unwrap();
    let mut gens = Vec::with_capacity(out.len());
    for (n, (mut g, anchor)) in out.into_iter().enumerate() {
        g.id = format!("{}{:05}", opts.id_prefix, n);
        let k = n + 1;
        g.status = if opts.resolved_every > 0 && k % opts.resolved_every == 0 {
            "resolved"
        } else if opts.addressed_every > 0 && k % opts.addressed_every == 0 {
            "addressed"
        } else {
            "open"
        };
        let scope = match g.kind {
            Kind::Page => "page",
            Kind::Block(_) => "block",
            _ => "selection",
        };
        let mut c = new_comment(&Fresh {
            id: &g.id,
            space: "book",
            page: &g.page,
            scope: Scope::parse(scope).expect("a scope"),
            anchor,
            author: "Rev Iewer <rev@example.com>",
            body: &format!("Generated comment {n}."),
            ts: TS,
        });
        c.set("status", g.status.into());
        store.create(&c).unwrap();
        gens.push(g);
    }
    gens
}

// ---------------------------------------------------------------------------------------
// Reading the HTML output

/// Every file of a built book, relative path → bytes.
pub fn files(out: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(dir: &Path, rel: &str, acc: &mut BTreeMap<String, Vec<u8>>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name().to_string_lossy().into_owned();
            let r = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            if e.file_type().unwrap().is_dir() {
                walk(&e.path(), &r, acc);
            } else {
                acc.insert(r, std::fs::read(e.path()).unwrap());
            }
        }
    }
    let mut acc = BTreeMap::new();
    walk(out, "", &mut acc);
    acc
}

/// Parses an HTML file of the output.
pub fn html(out: &Path, rel: &str) -> Html {
    let path = out.join(rel);
    Html::parse_document(
        &std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
}

/// A CSS selector.
pub fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap_or_else(|e| panic!("selector {s}: {e:?}"))
}

/// The data islands of a page: (data-nb-page, parsed JSON, raw text — a deflated island's
/// inflated JSON).
pub fn islands(doc: &Html) -> Vec<(String, Value, String)> {
    doc.select(&sel("script.nb-data"))
        .map(|el| {
            let mut raw: String = el.text().collect();
            if el.value().attr("data-nb-encoding").is_some() {
                raw = mdbook_notabene::util::payload::inflate_base64(&raw)
                    .unwrap_or_else(|| panic!("deflated island does not inflate: {raw}"));
            }
            let v = serde_json::from_str(&raw)
                .unwrap_or_else(|e| panic!("island JSON does not parse: {e}: {raw}"));
            (
                el.value().attr("data-nb-page").unwrap_or("").to_string(),
                v,
                raw,
            )
        })
        .collect()
}

/// The first generated page's data (`script.nb-view-data`) of a page, parsed — inflated
/// first when it is deflated.
pub fn view_data(doc: &Html) -> Value {
    let el = doc
        .select(&sel("script.nb-view-data"))
        .next()
        .expect("a script.nb-view-data");
    let mut raw: String = el.text().collect();
    if el.value().attr("data-nb-encoding").is_some() {
        raw = mdbook_notabene::util::payload::inflate_base64(&raw)
            .unwrap_or_else(|| panic!("deflated view data does not inflate: {raw}"));
    }
    serde_json::from_str(&raw).unwrap_or_else(|e| panic!("view data does not parse: {e}: {raw}"))
}

fn has_class(el: &ElementRef, class: &str) -> bool {
    el.value().classes().any(|c| c == class)
}

/// Elements whose text is not reader text of the chapter (or is rendered later by JS), plus
/// our empty code-anchor spans.
pub fn excluded(el: &ElementRef) -> bool {
    let v = el.value();
    matches!(v.name(), "script" | "style")
        || (v.name() == "pre" && has_class(el, "mermaid"))
        || (v.name() == "code" && has_class(el, "language-mermaid"))
        || has_class(el, "nb-code-anchor")
}

/// The text of `<main>` (excluded elements skipped).
pub fn main_text(doc: &Html) -> Option<String> {
    fn walk(el: ElementRef, out: &mut String) {
        for child in el.children() {
            match child.value() {
                Node::Text(t) => out.push_str(t),
                Node::Element(_) => {
                    let e = ElementRef::wrap(child).unwrap();
                    if !excluded(&e) {
                        walk(e, out);
                    }
                }
                _ => {}
            }
        }
    }
    let main = doc.select(&sel("main")).next()?;
    let mut s = String::new();
    walk(main, &mut s);
    Some(s)
}

/// The marker group of one comment id in `<main>`.
#[derive(Debug, Clone, Default)]
pub struct Group {
    /// Number of `mark.nb-mark` elements.
    pub elements: usize,
    /// The `<main>` text from the first marked char to the last.
    pub span: String,
    /// The text inside the span that no mark of this id covers.
    pub gaps: String,
    /// The distinct `data-nb-status` values.
    pub statuses: BTreeSet<String>,
    /// Up to 80 chars of `<main>` text before the span.
    pub before: String,
    /// Up to 80 chars of `<main>` text after the span.
    pub after: String,
}

/// The marker groups of `<main>`, by comment id.
pub fn mark_groups(doc: &Html) -> BTreeMap<String, Group> {
    fn walk(
        el: ElementRef,
        stack: &mut Vec<String>,
        text: &mut String,
        covered: &mut BTreeMap<String, Vec<Range<usize>>>,
        groups: &mut BTreeMap<String, Group>,
    ) {
        for child in el.children() {
            match child.value() {
                Node::Text(t) => {
                    let a = text.len();
                    text.push_str(t);
                    for id in stack.iter() {
                        covered.entry(id.clone()).or_default().push(a..text.len());
                    }
                }
                Node::Element(_) => {
                    let e = ElementRef::wrap(child).unwrap();
                    if matches!(e.value().name(), "script" | "style") {
                        continue;
                    }
                    let mark = e.value().name() == "mark" && has_class(&e, "nb-mark");
                    if mark {
                        let id = e.value().attr("data-nb-id").unwrap_or("").to_string();
                        let g = groups.entry(id.clone()).or_default();
                        g.elements += 1;
                        g.statuses
                            .insert(e.value().attr("data-nb-status").unwrap_or("").into());
                        covered.entry(id.clone()).or_default();
                        stack.push(id);
                    }
                    walk(e, stack, text, covered, groups);
                    if mark {
                        stack.pop();
                    }
                }
                _ => {}
            }
        }
    }
    let mut groups = BTreeMap::new();
    let Some(main) = doc.select(&sel("main")).next() else {
        return groups;
    };
    let (mut text, mut covered) = (String::new(), BTreeMap::new());
    walk(main, &mut Vec::new(), &mut text, &mut covered, &mut groups);
    for (id, ranges) in covered {
        let g = groups.get_mut(&id).unwrap();
        let (Some(a), Some(b)) = (
            ranges.iter().map(|r| r.start).min(),
            ranges.iter().map(|r| r.end).max(),
        ) else {
            continue;
        };
        g.span = text[a..b].to_string();
        let v: Vec<char> = text[..a].chars().rev().take(80).collect();
        g.before = v.into_iter().rev().collect();
        g.after = text[b..].chars().take(80).collect();
        let mut pos = a;
        let mut sorted = ranges.clone();
        sorted.sort_by_key(|r| r.start);
        for r in sorted {
            if r.start > pos {
                g.gaps.push_str(&text[pos..r.start]);
            }
            pos = pos.max(r.end);
        }
    }
    groups
}

/// Whether `needle` occurs in `hay` after normalisation.
pub fn contains_normalized(hay: &str, needle: &str) -> bool {
    normalize(hay)
        .as_string()
        .contains(&normalize(needle).as_string())
}

/// For the `span.nb-code-anchor[data-nb-id=ID]` elements of `<main>`: the text of the first
/// `<pre>` that follows each in document order, and the text between the span and that pre.
pub fn code_anchors(doc: &Html) -> BTreeMap<String, Vec<(String, String)>> {
    #[derive(Default)]
    struct St {
        pending: Vec<(String, String)>,
        out: BTreeMap<String, Vec<(String, String)>>,
    }
    fn walk(el: ElementRef, st: &mut St) {
        for child in el.children() {
            match child.value() {
                Node::Text(t) => {
                    for p in st.pending.iter_mut() {
                        p.1.push_str(t);
                    }
                }
                Node::Element(_) => {
                    let e = ElementRef::wrap(child).unwrap();
                    if matches!(e.value().name(), "script" | "style") {
                        continue;
                    }
                    if e.value().name() == "pre" && !st.pending.is_empty() {
                        let text: String = e.text().collect();
                        for (id, between) in st.pending.drain(..) {
                            st.out.entry(id).or_default().push((between, text.clone()));
                        }
                    }
                    if e.value().name() == "span" && has_class(&e, "nb-code-anchor") {
                        let id = e.value().attr("data-nb-id").unwrap_or("").to_string();
                        st.pending.push((id, String::new()));
                    }
                    walk(e, st);
                }
                _ => {}
            }
        }
    }
    let mut st = St::default();
    if let Some(main) = doc.select(&sel("main")).next() {
        walk(main, &mut st);
    }
    for (id, between) in st.pending {
        st.out
            .entry(id)
            .or_default()
            .push((between, "<no pre follows>".into()));
    }
    st.out
}

/// Whether code block `n` of `pt` can carry an anchor span: a fence whose line prefix is
/// only indentation and `>` (as `inject` requires).
pub fn fence_allows(md: &str, pt: &PageText, n: usize) -> bool {
    let src = pt.code_blocks[n].src.clone();
    let body = md[src.clone()].trim_start();
    let fenced = body.starts_with("```") || body.starts_with("~~~");
    let line_start = md[..src.start].rfind('\n').map_or(0, |i| i + 1);
    fenced
        && md[line_start..src.start]
            .chars()
            .all(|c| c == ' ' || c == '\t' || c == '>')
}

// ---------------------------------------------------------------------------------------
// The search index

/// The search index JSON of a built book (`searchindex*.json`, else decoded from
/// `searchindex*.js`, where mdBook wraps it in `JSON.parse('…')` escaping `\` and `'`).
pub fn search_index(out: &Path) -> Value {
    let names: Vec<String> = std::fs::read_dir(out)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("searchindex"))
        .collect();
    if let Some(json) = names.iter().find(|n| n.ends_with(".json")) {
        return serde_json::from_slice(&std::fs::read(out.join(json)).unwrap()).unwrap();
    }
    let js = names
        .iter()
        .find(|n| n.ends_with(".js"))
        .unwrap_or_else(|| panic!("no search index in {}: {names:?}", out.display()));
    let s = std::fs::read_to_string(out.join(js)).unwrap();
    let start = s.find("JSON.parse('").expect("JSON.parse(") + "JSON.parse('".len();
    let end = s.rfind("')").expect("')");
    let mut json = String::with_capacity(end - start);
    let mut chars = s[start..end].chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            json.push(chars.next().expect("escaped char"));
        } else {
            json.push(c);
        }
    }
    serde_json::from_str(&json).unwrap()
}

/// The words of a text as the search index sees them: mdBook's tokenizer (split on
/// whitespace and `-`, lowercase) then elasticlunr's trimmer (leading and trailing characters
/// other than ASCII letters, digits and `_` removed), empty ones dropped; sorted.
pub fn tokens(s: &str) -> Vec<String> {
    let mut v: Vec<String> = s
        .split(|c: char| c.is_whitespace() || c == '-')
        .map(|t| {
            t.to_lowercase()
                .trim_matches(|c: char| !c.is_digit(36) && c != '_')
                .to_string()
        })
        .filter(|t| !t.is_empty())
        .collect();
    v.sort();
    v
}

/// The inverted index: `field term` → document id → term frequency (as written).
pub fn index_terms(index: &Value) -> BTreeMap<String, BTreeMap<String, String>> {
    fn walk(
        node: &Value,
        prefix: &mut String,
        field: &str,
        out: &mut BTreeMap<String, BTreeMap<String, String>>,
    ) {
        let Some(obj) = node.as_object() else { return };
        if let Some(docs) = obj.get("docs").and_then(Value::as_object)
            && !docs.is_empty()
        {
            out.insert(
                format!("{field} {prefix}"),
                docs.iter()
                    .map(|(d, v)| (d.clone(), v["tf"].to_string()))
                    .collect(),
            );
        }
        for (k, child) in obj {
            if k == "docs" || k == "df" {
                continue;
            }
            prefix.push_str(k);
            walk(child, prefix, field, out);
            prefix.truncate(prefix.len() - k.len());
        }
    }
    let mut out = BTreeMap::new();
    for (field, tree) in index["index"]["index"].as_object().expect("index.index") {
        walk(&tree["root"], &mut String::new(), field, &mut out);
    }
    out
}

/// The indexed documents: url → (title, body, breadcrumbs) as sorted word multisets.
pub fn indexed_words(index: &Value) -> BTreeMap<String, [Vec<String>; 3]> {
    let urls = index["doc_urls"].as_array().expect("doc_urls");
    let docs = index["index"]["documentStore"]["docs"]
        .as_object()
        .expect("documentStore.docs");
    let mut out = BTreeMap::new();
    for (k, doc) in docs {
        let url = urls[k.parse::<usize>().unwrap()]
            .as_str()
            .unwrap()
            .to_string();
        let f = |name: &str| tokens(doc[name].as_str().unwrap_or(""));
        out.insert(
            format!("{k} {url}"),
            [f("title"), f("body"), f("breadcrumbs")],
        );
    }
    out
}

// ---------------------------------------------------------------------------------------
// mdBook's warnings

/// A `tracing` subscriber collecting WARN and ERROR event messages.
#[derive(Clone, Default)]
pub struct Capture(pub Arc<Mutex<Vec<String>>>);

struct Message<'a>(&'a mut String);

impl tracing::field::Visit for Message<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0.push_str(&format!("{value:?}"));
        }
    }
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "message" {
            self.0.push_str(value);
        }
    }
}

impl tracing::Subscriber for Capture {
    fn register_callsite(
        &self,
        _: &'static tracing::Metadata<'static>,
    ) -> tracing::subscriber::Interest {
        tracing::subscriber::Interest::always()
    }
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        if *event.metadata().level() <= tracing::Level::WARN {
            let mut s = String::new();
            event.record(&mut Message(&mut s));
            self.0.lock().unwrap().push(s);
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// Runs `f` with a capturing subscriber on this thread; returns its result and the warnings.
pub fn with_warnings<T>(f: impl FnOnce() -> T) -> (T, Vec<String>) {
    let cap = Capture::default();
    let r = tracing::subscriber::with_default(cap.clone(), f);
    let w = cap.0.lock().unwrap().clone();
    (r, w)
}

/// The HTML-balance warnings among `warnings`.
pub fn html_warnings(warnings: &[String]) -> Vec<String> {
    let mut v: Vec<String> = warnings
        .iter()
        .filter(|w| w.contains("unclosed HTML tag") || w.contains("unexpected HTML end tag"))
        .cloned()
        .collect();
    v.sort();
    v
}

/// A stored comment as a data island carries it (the lean form the reader client completes):
/// without `page`, without `space` when it is the book's, without defaults (`hold: false`,
/// `resolution: null`, `updatedAt` = `createdAt`), and without the anchor's context.
pub fn lean_island(c: &Value, space: &Value) -> Value {
    let c = c.as_object().expect("a comment object");
    let mut out = serde_json::Map::new();
    for (k, v) in c {
        let drop = match k.as_str() {
            "page" => true,
            "space" => v == space,
            "hold" => *v == Value::Bool(false),
            "resolution" => v.is_null(),
            "updatedAt" => c.get("createdAt") == Some(v),
            _ => false,
        };
        if drop {
            continue;
        }
        let mut v = v.clone();
        if k == "anchor"
            && let Some(a) = v.as_object_mut()
        {
            a.shift_remove("prefix");
            a.shift_remove("suffix");
        }
        out.insert(k.clone(), v);
    }
    Value::Object(out)
}

/// The /review data with every change's shared diff (`diff`, an index into `diffs`) put back
/// in place.
pub fn inline_diffs(review: &Value) -> Value {
    let mut out = review.clone();
    let diffs = review["diffs"].as_array().cloned().unwrap_or_default();
    for card in out["cards"].as_array_mut().into_iter().flatten() {
        for ch in card["changes"].as_array_mut().into_iter().flatten() {
            if let Some(i) = ch["diff"].as_u64() {
                ch["diff"] = diffs[i as usize].clone();
            }
        }
    }
    out
}
