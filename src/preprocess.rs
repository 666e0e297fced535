//! The mdBook preprocessor: at `mdbook build`, anchors every comment of the store in its
//! chapter, injects markers and a per-chapter data island (for the `html` renderer), reports
//! on stderr, and fails the build when `fail-on` says so.
//!
//! mdBook runs preprocessors once per renderer: everything here is deterministic, and only
//! the `html` run does any work (reads the store, anchors, injects, reports); other renderers
//! get the book unchanged.

use crate::anchor::{self, DEFAULT_THRESHOLD};
use crate::config::{Book, FailOn};
use crate::inject::{self, Injection, TextMark};
use crate::pages::PageIds;
use crate::resolve::{self, BookAnchors, Chapter};
use crate::store::{Comment, Store};
use crate::text::TextOptions;
use crate::{Error, Result};
use mdbook_preprocessor::book::{Book as MdBook, BookItem};
use mdbook_preprocessor::{Preprocessor, PreprocessorContext};
use serde_json::json;
use std::collections::BTreeMap;
use std::io::{IsTerminal, Read, Write};

/// The mdBook versions whose wire format this build understands.
pub const SUPPORTED_MDBOOK: &str = ">=0.5.0, <0.6.0";

/// Renderers the preprocessor runs for.
pub fn supports(renderer: &str) -> bool {
    matches!(renderer, "html" | "notabene")
}

/// The preprocessor, for in-process use with `mdbook-driver` (`MDBook::with_preprocessor`).
pub struct Notabene;

impl Preprocessor for Notabene {
    fn name(&self) -> &str {
        "notabene"
    }

    fn run(
        &self,
        ctx: &PreprocessorContext,
        book: MdBook,
    ) -> mdbook_preprocessor::errors::Result<MdBook> {
        run(ctx, book).map_err(|e| mdbook_preprocessor::errors::Error::msg(e.to_string()))
    }

    fn supports_renderer(&self, renderer: &str) -> mdbook_preprocessor::errors::Result<bool> {
        Ok(supports(renderer))
    }
}

/// The book's configuration with `[book] language` as written in book.toml (before
/// environment overrides), which is the default language when none is configured.
fn load_book(ctx: &PreprocessorContext) -> Result<Book> {
    let file_language = std::fs::read_to_string(ctx.root.join("book.toml"))
        .ok()
        .and_then(|t| t.parse::<mdbook_preprocessor::config::Config>().ok())
        .and_then(|c| c.book.language);
    Book::from_config(&ctx.root, ctx.config.clone(), file_language)
}

/// The store of a build: `NOTABENE_STORE`, else `[preprocessor.notabene] store`, else `.notabene`.
pub fn store_for(book: &Book) -> Store {
    match std::env::var_os("NOTABENE_STORE").filter(|s| !s.is_empty()) {
        Some(s) => Store::new(std::path::absolute(s).unwrap_or_default()),
        None => Store::new(
            book.root
                .join(book.config.store.as_deref().unwrap_or(".notabene")),
        ),
    }
}

/// The chapters of `book` that have a source file, with their page ids. A chapter's
/// `source` is its file relative to the repository root (`<page-prefix>/<path>`), the path
/// an agent opens.
pub fn chapters(book: &MdBook, ids: &PageIds) -> Vec<Chapter> {
    book.iter()
        .filter_map(|item| match item {
            BookItem::Chapter(ch) => Some(ch),
            _ => None,
        })
        .filter(|ch| ch.path.is_some())
        .filter_map(|ch| {
            let source_path = ch.source_path.as_ref()?;
            let url = ch.path.as_ref()?.with_extension("html");
            let disk = std::fs::read_to_string(ids.src_dir.join(source_path))
                .ok()
                .filter(|d| *d != ch.content);
            Some(Chapter {
                page: ids.for_chapter(source_path),
                name: ch.name.clone(),
                url: crate::config::slash_path(&url),
                source: crate::config::slash_path(
                    &std::path::Path::new(&ids.prefix).join(source_path),
                ),
                content: ch.content.clone(),
                disk,
            })
        })
        .collect()
}

/// Reads the store's comments for a build; problems are warnings, never a crash.
pub fn read_comments(store: &Store) -> Vec<Comment> {
    if !store.exists() {
        return Vec::new();
    }
    match store.load() {
        Ok(snap) => {
            snap.warn_unreadable();
            snap.records
                .into_iter()
                .filter(|r| r.comment.id().is_some())
                .map(|r| r.comment)
                .collect()
        }
        Err(e) => {
            eprintln!("notabene: warning: {e} — building without comments");
            Vec::new()
        }
    }
}

/// Anchors the store's comments in `book` for the configured language.
pub fn anchor(book_cfg: &Book, book: &MdBook) -> Result<(BookAnchors, PageIds)> {
    let ids = PageIds::new(book_cfg);
    let options = TextOptions::from_config(&book_cfg.mdbook)?;
    let comments = read_comments(&store_for(book_cfg));
    let threshold = book_cfg.config.threshold.unwrap_or(DEFAULT_THRESHOLD);
    let chapters = chapters(book, &ids);
    Ok((
        resolve::anchor_book(
            chapters,
            comments,
            &options,
            threshold,
            anchor::default_threads(),
        ),
        ids,
    ))
}

/// The preprocessor's work on one book.
pub fn run(ctx: &PreprocessorContext, mut book: MdBook) -> Result<MdBook> {
    let cfg = load_book(ctx)?;
    if !cfg.config.enable {
        return Ok(book);
    }
    // Other renderers (`notabene` writes comments.json from the book it is handed, with
    // its own anchoring) get the book unchanged: no work to repeat.
    if ctx.renderer == "html" {
        let (anchors, ids) = anchor(&cfg, &book)?;
        crate::assets::check_installed(&cfg)?;
        report(&anchors, &ids, &cfg)?;
        let options = TextOptions::from_config(&cfg.mdbook)?;
        let threads = anchor::default_threads();
        let summary = crate::store::json::to_js_compact(&island_summary(&anchors, &cfg.config));
        // Every chapter's new content, computed in parallel, then put back in book order.
        let jobs: Vec<usize> = (0..anchors.chapters.len()).collect();
        let results = anchor::par_map(&jobs, threads, |&i| {
            let injection = injection_for(&anchors, i, &cfg.config, &summary);
            inject::inject(
                &anchors.chapters[i].content,
                &anchors.texts[i],
                &injection,
                &options,
            )
        });
        let by_source: BTreeMap<&str, usize> = anchors
            .chapters
            .iter()
            .enumerate()
            .map(|(i, c)| (c.source.as_str(), i))
            .collect();
        let mut results: Vec<Option<(String, inject::Outcome)>> =
            results.into_iter().map(Some).collect();
        let mut dropped = Vec::new();
        book.for_each_chapter_mut(|ch| {
            let Some(sp) = &ch.source_path else { return };
            let key = crate::config::slash_path(&std::path::Path::new(&ids.prefix).join(sp));
            let Some(&i) = by_source.get(key.as_str()) else {
                return;
            };
            let Some((content, outcome)) = results[i].take() else {
                return;
            };
            if outcome.marks_dropped {
                dropped.push(anchors.chapters[i].page.clone());
            }
            ch.content = content;
        });
        for page in dropped {
            eprintln!(
                "notabene: warning: inline markers on {page} would have changed its text; they are left to the reader client"
            );
        }
        if cfg.config.generated_pages {
            add_views(&mut book, &anchors, &ids, &cfg);
        }
        drop_in_background(anchors);
    }
    Ok(book)
}

/// Frees `value` on a short-lived thread (inline if none can be started): a big book's
/// anchoring — thousands of parsed comments, a text model per chapter — takes milliseconds to
/// free, which mdBook can spend rendering instead.
fn drop_in_background<T: Send + 'static>(value: T) {
    // On failure the closure, and `value` with it, is dropped right here.
    let _ = std::thread::Builder::new()
        .name("notabene-free".into())
        .spawn(move || drop(value));
}

/// Appends the /review, /comments and /journal chapters after the book's own chapters.
fn add_views(book: &mut MdBook, anchors: &BookAnchors, ids: &PageIds, cfg: &Book) {
    let store = store_for(cfg);
    let journal = crate::store::journal::read(&store);
    let repo = crate::git::Repo::discover(&cfg.root);
    let input = crate::views::ViewInput {
        anchors,
        journal: journal.entries(),
        book: cfg,
        ids,
        repo: &repo,
    };
    let taken: std::collections::BTreeSet<String> = book
        .iter()
        .filter_map(|i| match i {
            BookItem::Chapter(ch) => ch.path.as_ref().map(|p| crate::config::slash_path(p)),
            _ => None,
        })
        .collect();
    let views = input.chapters(&|p| taken.contains(p));
    book.push_item(BookItem::Separator);
    for v in views {
        let mut ch =
            mdbook_preprocessor::book::Chapter::new(&v.title, v.content, &v.path, Vec::new());
        ch.source_path = None;
        book.push_item(ch);
    }
}

/// The `summary` every island of a book carries: open and addressed comments in the book.
pub fn island_summary(anchors: &BookAnchors, config: &crate::config::Config) -> serde_json::Value {
    let (mut open, mut addressed) = (0, 0);
    for (l, c) in anchors.located.iter().zip(&anchors.comments) {
        match (l.chapter, c.status()) {
            (Some(_), Some("open")) => open += 1,
            (Some(_), Some("addressed")) => addressed += 1,
            _ => {}
        }
    }
    json!({ "open": open, "addressed": addressed, "review": config.review.as_str() })
}

/// What to inject into chapter `ch`; `summary` is the book-wide island summary as JSON text
/// ([`island_summary`]).
pub fn injection_for(
    anchors: &BookAnchors,
    ch: usize,
    config: &crate::config::Config,
    summary: &str,
) -> Injection {
    use crate::store::json::{ObjectWriter, write_js_compact};
    let mut inj = Injection::default();
    let text = &anchors.texts[ch];
    let page = &anchors.chapters[ch].page;
    let mut json = Vec::with_capacity(256 * (anchors.by_chapter[ch].len() + 1));
    let mut w = ObjectWriter::new(&mut json);
    w.member("version", &1);
    w.member("page", page);
    w.member("space", &config.space);
    w.member("mode", config.review.as_str());
    w.key("summary").extend_from_slice(summary.as_bytes());
    let blocks: Vec<serde_json::Value> = text
        .blocks
        .iter()
        .map(|b| json!({ "kind": b.kind.as_str(), "key": b.key, "label": b.label, "section": b.section, "index": b.index }))
        .collect();
    write_js_compact(&blocks, w.key("blocks"));
    let list = w.key("comments");
    list.push(b'[');
    for (n, &ci) in anchors.by_chapter[ch].iter().enumerate() {
        if n > 0 {
            list.push(b',');
        }
        anchors.write_lean(ci, resolve::Lean::Island, &config.space, list);
        let l = &anchors.located[ci];
        let c = &anchors.comments[ci];
        let (Some(r), true) = (&l.resolution, resolve::is_live(c)) else {
            continue;
        };
        let Some(place) = &r.place else { continue };
        let id = c.id().unwrap_or_default().to_string();
        if let Some(b) = r.block {
            inj.blocks.entry(b).or_default().push(id);
            continue;
        }
        if let Some(n) = text.code_block_holding(&place.text) {
            inj.code.entry(n).or_default().push(id);
            continue;
        }
        inj.marks.push(TextMark {
            id,
            status: c.status().unwrap_or("open").to_string(),
            text: place.text.clone(),
        });
    }
    list.push(b']');
    w.end();
    let json = String::from_utf8(json).expect("serde_json writes UTF-8");
    inj.island = Some((page.clone(), inject::escape_script_json(&json)));
    inj
}

fn head(s: &str) -> String {
    let t: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if t.chars().count() > 50 {
        format!("{}…", t.chars().take(50).collect::<String>())
    } else {
        t
    }
}

/// Prints the build report (stderr, written at once) and applies `fail-on`.
pub fn report(anchors: &BookAnchors, ids: &PageIds, cfg: &Book) -> Result<()> {
    use std::fmt::Write as _;
    // One write for the whole report: a book with many drifted anchors prints hundreds of
    // lines, and stderr is unbuffered.
    let mut out = String::new();
    let live = |c: &Comment| resolve::is_live(c);
    let counts = anchors.counts(live);
    let total = counts.exact + counts.fuzzy + counts.orphan + counts.page;
    let pages: std::collections::BTreeSet<usize> = anchors
        .located
        .iter()
        .enumerate()
        .filter(|(ci, l)| l.chapter.is_some() && live(&anchors.comments[*ci]))
        .filter_map(|(_, l)| l.chapter)
        .collect();
    let page_part = if counts.page > 0 {
        format!(", {} page-level", counts.page)
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "notabene: {total} comments on {} pages — {} exact, {} fuzzy, {} orphaned{page_part}",
        pages.len(),
        counts.exact,
        counts.fuzzy,
        counts.orphan
    );
    let mut missing: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (ci, l) in anchors.located.iter().enumerate() {
        let c = &anchors.comments[ci];
        if !live(c) {
            continue;
        }
        let id = c.id().unwrap_or_default();
        let page = c.page().unwrap_or_default();
        let Some(ch) = l.chapter else {
            if ids.owns(page) && ids.locale_of(page) == ids.language {
                missing.entry(page).or_default().push(id);
            }
            continue;
        };
        let Some(r) = &l.resolution else { continue };
        let quote = c
            .anchor()
            .and_then(|a| a.get("quote").or(a.get("label")))
            .and_then(|v| v.as_str())
            .unwrap_or("");
        match r.status {
            anchor::Status::Fuzzy => {
                _ = writeln!(
                    out,
                    "notabene: warning: fuzzy anchor {id} on {page} ({:.2}): «{}»",
                    r.confidence,
                    head(quote)
                )
            }
            anchor::Status::Orphan => {
                let suggestion = r
                    .suggestion
                    .as_ref()
                    .map(|p| {
                        format!(
                            " — closest: «{}» ({:.2})",
                            head(&anchors.texts[ch].text[p.text.clone()]),
                            r.confidence
                        )
                    })
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "notabene: warning: orphaned anchor {id} on {page}: «{}»{suggestion}",
                    head(quote)
                );
            }
            anchor::Status::Exact => {}
        }
    }
    for (page, list) in missing {
        let _ = writeln!(
            out,
            "notabene: warning: {} comment(s) on page {page:?}, which is not in this book ({})",
            list.len(),
            list.join(", ")
        );
    }
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(out.as_bytes()).and_then(|()| err.flush());
    let failing = match cfg.config.fail_on {
        FailOn::Never => 0,
        FailOn::Orphan => counts.orphan,
        FailOn::Fuzzy => counts.orphan + counts.fuzzy,
    };
    if failing > 0 {
        let what = if cfg.config.fail_on == FailOn::Orphan {
            "orphaned"
        } else {
            "fuzzy or orphaned"
        };
        let key = if cfg.config.fail_on == FailOn::Orphan {
            "orphan"
        } else {
            "fuzzy"
        };
        return Err(Error::new(format!(
            "{failing} {what} anchor(s) and fail-on = \"{key}\" (book.toml [preprocessor.notabene] fail-on)"
        )));
    }
    Ok(())
}

/// `mdbook-notabene` with no arguments: the preprocessor protocol on stdin/stdout.
/// Returns the exit code.
pub fn main_stdin() -> i32 {
    if std::io::stdin().is_terminal() {
        return crate::cli::run(["mdbook-notabene", "--help"]);
    }
    let mut input = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut input) {
        eprintln!("notabene: cannot read stdin: {e} (stdin)");
        return 1;
    }
    // A renderer gets one object (the RenderContext), a preprocessor a `[context, book]`
    // array: the first byte tells them apart without parsing the book twice.
    if input.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{') {
        return crate::render::render_json(&input);
    }
    let (ctx, book) = match mdbook_preprocessor::parse_input(input.as_slice()) {
        Ok(x) => x,
        Err(e) => {
            eprintln!(
                "notabene: cannot read mdBook's input: {e:#} — mdbook-notabene supports mdBook {SUPPORTED_MDBOOK} (stdin)"
            );
            return 1;
        }
    };
    check_version(&ctx.mdbook_version);
    match run(&ctx, book) {
        Ok(book) => {
            // Stdout is line-buffered and JSON has no newlines: buffer the book ourselves.
            let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            if serde_json::to_writer(&mut out, &book)
                .and_then(|()| out.flush().map_err(serde_json::Error::io))
                .is_err()
            {
                eprintln!("notabene: cannot write the book to stdout (stdout)");
                return 1;
            }
            0
        }
        Err(e) => {
            eprintln!("notabene: {e}");
            1
        }
    }
}

/// Warns when the calling mdBook is outside the supported range.
pub fn check_version(version: &str) {
    let req = semver::VersionReq::parse(SUPPORTED_MDBOOK).expect("valid requirement");
    match semver::Version::parse(version) {
        Ok(v) if req.matches(&v) => {}
        _ => eprintln!(
            "notabene: warning: called by mdBook {version}; mdbook-notabene {} supports mdBook {SUPPORTED_MDBOOK}",
            env!("CARGO_PKG_VERSION")
        ),
    }
}
