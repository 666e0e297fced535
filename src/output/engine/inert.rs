//! Building a book whose content may be hostile (a branch the hub serves): the branch's author
//! must not get the reviewers' rights, nor the hub's. So, for `Trust::Inert` (`model::book::Trust`):
//!
//! * only mdBook's own preprocessors (`links`, `index`), its `html` renderer and notabene run:
//!   every other `[preprocessor.*]` and `[output.*]` table of the branch's `book.toml` is
//!   dropped, and any `command` a kept table names (reported as skipped, never run);
//! * the theme is mdBook's default (a theme directory of the branch's could carry any
//!   script), `additional-js` keeps notabene's client alone, `input-404` is dropped;
//! * nothing is read outside the checkout: the book's `src`, every symlink under it, every
//!   chapter `SUMMARY.md` links to, `additional-css`, and every path a `{{#include}}`,
//!   `{{#rustdoc_include}}`, `{{#playground}}` or `{{#template}}` names (in chapters and, as
//!   mdBook expands them, in what they include) must resolve inside it, symlinks followed;
//!   else the build is refused before mdBook reads anything.
//!
//! Owns: what an inert build keeps of a configuration and what it checks before reading.
//! Calls: nothing (mdBook's `Config`).

use crate::{Error, Result};
use mdbook_driver::config::Config;
use serde_json::Value;
use std::path::{Component, Path};

/// mdBook's own preprocessors, and ours.
const PREPROCESSORS: [&str; 3] = ["links", "index", "notabene"];
/// mdBook's HTML renderer, and ours.
const RENDERERS: [&str; 2] = ["html", "notabene"];
/// How deep mdBook expands includes within includes.
const MAX_DEPTH: usize = 10;
/// The largest file scanned for directives (mdBook would read a larger one whole; the check
/// refuses it instead).
const MAX_SCANNED: u64 = 16 * 1024 * 1024;

fn bad(what: String) -> Error {
    Error::new(format!("the branch reads outside the repository: {what}"))
}

/// Drops from `config` what an inert build does not run or read; returns what was skipped, one
/// line each (`preprocessor.mermaid (command "mdbook-mermaid")`).
pub(crate) fn neutralize(config: &mut Config, default_theme: &Path) -> Result<Vec<String>> {
    let mut skipped = Vec::new();
    for (section, allowed) in [
        ("preprocessor", &PREPROCESSORS[..]),
        ("output", &RENDERERS[..]),
    ] {
        let tables: std::collections::BTreeMap<String, Value> = match section {
            "preprocessor" => config.preprocessors(),
            _ => config.outputs(),
        }
        .map_err(|e| Error::new(format!("cannot read [{section}]: {e:#} (book.toml)")))?;
        let mut kept = serde_json::Map::new();
        for (name, mut table) in tables {
            let command = table
                .get("command")
                .and_then(Value::as_str)
                .map(|c| format!(" (command {c:?})"))
                .unwrap_or_default();
            if !allowed.contains(&name.as_str()) {
                skipped.push(format!("{section}.{name}{command}"));
                continue;
            }
            if let Some(t) = table.as_object_mut()
                && t.remove("command").is_some()
            {
                skipped.push(format!("{section}.{name}{command}"));
            }
            kept.insert(name, table);
        }
        if section == "preprocessor" {
            // Ours, before `links`: directives reading outside are replaced, never read.
            kept.insert(
                INERT_INCLUDES.to_string(),
                serde_json::json!({ "before": ["links"] }),
            );
            // And last: the marks around each chapter's content.
            let all: Vec<String> = kept.keys().cloned().collect();
            kept.insert(INERT_MARKS.to_string(), serde_json::json!({ "after": all }));
        }
        config
            .set(section, Value::Object(kept))
            .map_err(|e| Error::new(format!("cannot set [{section}]: {e:#}")))?;
    }
    let html: Option<Value> = config.get("output.html").ok().flatten();
    if let Some(Value::Object(mut html)) = html {
        html.insert(
            "theme".into(),
            Value::String(default_theme.display().to_string()),
        );
        let js: Vec<String> = html
            .get("additional-js")
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default();
        let (ours, theirs): (Vec<String>, Vec<String>) = js
            .into_iter()
            .partition(|e| Path::new(e).file_name().is_some_and(|f| f == "notabene.js"));
        skipped.extend(
            theirs
                .iter()
                .map(|e| format!("output.html.additional-js {e:?}")),
        );
        html.insert("additional-js".into(), Value::from(ours));
        if html.remove("input-404").is_some() {
            skipped.push("output.html.input-404".into());
        }
        config
            .set("output.html", Value::Object(html))
            .map_err(|e| Error::new(format!("cannot set [output.html]: {e:#}")))?;
    }
    Ok(skipped)
}

/// Checks that the reader client's files, as the book's `[output.html]` lists them, would be
/// written inside `checkout` (no `..`, no absolute path, no symlinked directory leading out).
pub(crate) fn check_client_paths(book: &crate::model::book::Book, checkout: &Path) -> Result<()> {
    let checkout =
        std::fs::canonicalize(checkout).map_err(|e| Error::io("cannot read", checkout, e))?;
    for key in ["additional-js", "additional-css"] {
        let entries = book
            .mdbook
            .get::<Vec<String>>(&format!("output.html.{key}"))
            .ok()
            .flatten()
            .unwrap_or_default();
        for entry in entries {
            let path = Path::new(&entry);
            let climbs = path.is_absolute() || path.components().any(|c| c == Component::ParentDir);
            let parent = book.root.join(path).parent().map(Path::to_path_buf);
            if climbs || !parent.is_some_and(|p| inside(&p, &checkout)) {
                return Err(bad(format!("{key} {entry:?} (book.toml)")));
            }
        }
    }
    Ok(())
}

/// Whether `path` (existing) is inside `checkout` (canonical), symlinks followed; a path that
/// does not exist is left to mdBook (which reports it) unless its text climbs out.
fn inside(path: &Path, checkout: &Path) -> bool {
    match std::fs::canonicalize(path) {
        Ok(real) => real.starts_with(checkout),
        Err(_) => !path.components().any(|c| c == Component::ParentDir),
    }
}

/// Checks, before mdBook reads anything, that a build of the book at `root` with `config` reads
/// nothing outside `checkout`.
pub(crate) fn check_reads(root: &Path, config: &Config, checkout: &Path) -> Result<()> {
    let checkout =
        std::fs::canonicalize(checkout).map_err(|e| Error::io("cannot read", checkout, e))?;
    let src = root.join(&config.book.src);
    if !inside(&src, &checkout) {
        return Err(bad(format!(
            "the book's src ({})",
            config.book.src.display()
        )));
    }
    for css in config
        .get::<Vec<String>>("output.html.additional-css")
        .ok()
        .flatten()
        .unwrap_or_default()
    {
        if !inside(&root.join(&css), &checkout) {
            return Err(bad(format!("additional-css {css:?}")));
        }
    }
    let summary = src.join("SUMMARY.md");
    if let Ok(text) = std::fs::read_to_string(&summary) {
        for link in summary_links(&text) {
            if !inside(&src.join(&link), &checkout) {
                return Err(bad(format!("the chapter {link:?} (SUMMARY.md)")));
            }
        }
    }
    let chapters: Vec<std::path::PathBuf> = std::fs::read_to_string(&summary)
        .map(|t| summary_links(&t))
        .unwrap_or_default()
        .iter()
        .filter_map(|l| std::fs::canonicalize(src.join(l)).ok())
        .collect();
    walk(&src, &checkout, &src, &chapters)
}

/// Every symlink under `dir` must stay inside; every Markdown file's directives too.
fn walk(dir: &Path, checkout: &Path, src: &Path, chapters: &[std::path::PathBuf]) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io("cannot read", dir, e))?;
    for entry in entries.flatten() {
        let path = entry.path();
        let shown = || {
            path.strip_prefix(src)
                .unwrap_or(&path)
                .display()
                .to_string()
        };
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_symlink() {
            if !inside(&path, checkout) {
                return Err(bad(format!("the symlink {}", shown())));
            }
            continue;
        }
        if kind.is_dir() {
            walk(&path, checkout, src, chapters)?;
        } else if path.extension().is_some_and(|e| e == "md") {
            let chapter = std::fs::canonicalize(&path).is_ok_and(|p| chapters.contains(&p));
            directives(&path, checkout, 0, chapter)?;
        }
    }
    Ok(())
}

/// The directives of the file at `path` (and, within mdBook's depth, of what they include);
/// `chapter`: a chapter `SUMMARY.md` names.
fn directives(path: &Path, checkout: &Path, depth: usize, chapter: bool) -> Result<()> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    let meta = std::fs::metadata(path).map_err(|e| Error::io("cannot read", path, e))?;
    if meta.len() > MAX_SCANNED {
        return Err(bad(format!("{} is too large to check", path.display())));
    }
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(());
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    for d in directives_in(&text) {
        let file = dir.join(&d.path);
        if !inside(&file, checkout) {
            // In a chapter, [`InertIncludes`] replaces it before mdBook reads it; anywhere
            // else (a file a chapter includes), the build is refused.
            if chapter && depth == 0 {
                continue;
            }
            return Err(bad(format!(
                "{{{{#{} {}}}}} in {}",
                d.name,
                d.path,
                path.file_name()
                    .map(|f| f.to_string_lossy())
                    .unwrap_or_default()
            )));
        }
        if file.is_file() {
            directives(&file, checkout, depth + 1, false)?;
        }
    }
    Ok(())
}

/// A `{{#name path…}}` directive that reads a file, as mdBook's links preprocessor finds it
/// (`\{{#…}}` is escaped).
struct Directive {
    /// Its bytes in the text, braces included.
    span: std::ops::Range<usize>,
    /// `include`, `rustdoc_include`, `playground`, `playpen` or `template`.
    name: String,
    /// The path it names, without its `:anchor` or `:lines`.
    path: String,
}

/// The directives of `text` that read a file.
fn directives_in(text: &str) -> Vec<Directive> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(found) = text[at..].find("{{") {
        let open = at + found;
        at = open + 2;
        if text[..open].ends_with('\\') {
            continue;
        }
        let Some(len) = text[at..].find("}}") else {
            break;
        };
        let inner = text[at..at + len].trim_start();
        let Some(inner) = inner.strip_prefix('#') else {
            continue;
        };
        let mut words = inner.split_whitespace();
        let (Some(name), Some(arg)) = (words.next(), words.next()) else {
            continue;
        };
        if !matches!(
            name,
            "include" | "rustdoc_include" | "playground" | "playpen" | "template"
        ) {
            continue;
        }
        out.push(Directive {
            span: open..at + len + 2,
            name: name.to_string(),
            path: arg.split(':').next().unwrap_or(arg).to_string(),
        });
        at += len + 2;
    }
    out
}

/// (name, path) of the directives of `text` (for tests and messages).
#[cfg(test)]
fn linked(text: &str) -> Vec<(String, String)> {
    directives_in(text)
        .into_iter()
        .map(|d| (d.name, d.path))
        .collect()
}

/// The two HTML comments an inert build puts around every chapter's content (after every
/// other preprocessor): `<!--nb-content-<secret>-->` and `<!--nb-content-end-<secret>-->`, the
/// secret 128 random bits drawn once per process. A branch cannot write them (it does not know
/// the secret: the hub takes the marks out of every page it serves), so in a page, whatever lies
/// before the first and after the last is the theme's: the hub lets only the scripts there run
/// (`apps::serve::csp`).
pub fn content_marks() -> &'static (String, String) {
    static MARKS: std::sync::OnceLock<(String, String)> = std::sync::OnceLock::new();
    MARKS.get_or_init(|| {
        let mut bits = [0u8; 16];
        // Without the OS's randomness the marks are still unguessable enough to fail safe: a
        // page whose marks cannot be found runs no script at all.
        let _ = getrandom::fill(&mut bits);
        let secret: String = bits.iter().map(|b| format!("{b:02x}")).collect();
        (
            format!("<!--nb-content-{secret}-->"),
            format!("<!--nb-content-end-{secret}-->"),
        )
    })
}

/// The preprocessor an inert build runs after every other: each chapter's content between the
/// [`content_marks`].
pub(crate) struct InertMarks;

/// Its name in `[preprocessor]` (ordered after notabene by [`neutralize`]).
pub(crate) const INERT_MARKS: &str = "notabene-inert-marks";

impl mdbook_preprocessor::Preprocessor for InertMarks {
    fn name(&self) -> &str {
        INERT_MARKS
    }

    fn run(
        &self,
        _: &mdbook_preprocessor::PreprocessorContext,
        mut book: mdbook_preprocessor::book::Book,
    ) -> mdbook_preprocessor::errors::Result<mdbook_preprocessor::book::Book> {
        let (start, end) = content_marks();
        book.for_each_chapter_mut(|ch| {
            ch.content = format!("{start}\n\n{}\n\n{end}\n", ch.content);
        });
        Ok(book)
    }

    /// The marks are for the page policy of the HTML pages only: the `notabene` renderer
    /// (`comments.json`) and the anchoring of the gate read the chapters as they are.
    fn supports_renderer(&self, renderer: &str) -> mdbook_preprocessor::errors::Result<bool> {
        Ok(renderer == "html")
    }
}

/// The preprocessor an inert build runs before mdBook's `links`: in each chapter, a directive
/// that would read outside the checkout is replaced by a note saying so (what it names is
/// never read). Directives within included files are checked before the build
/// ([`check_reads`]), which refuses it when one reads outside.
pub(crate) struct InertIncludes {
    /// The repository's work tree (canonical).
    pub(crate) checkout: std::path::PathBuf,
}

/// Its name in `[preprocessor]` (ordered before `links` by [`neutralize`]).
pub(crate) const INERT_INCLUDES: &str = "notabene-inert-includes";

impl mdbook_preprocessor::Preprocessor for InertIncludes {
    fn name(&self) -> &str {
        INERT_INCLUDES
    }

    fn run(
        &self,
        ctx: &mdbook_preprocessor::PreprocessorContext,
        mut book: mdbook_preprocessor::book::Book,
    ) -> mdbook_preprocessor::errors::Result<mdbook_preprocessor::book::Book> {
        let src = ctx.root.join(&ctx.config.book.src);
        book.for_each_chapter_mut(|ch| {
            let Some(source) = &ch.source_path else { return };
            let dir = src.join(source);
            let dir = dir.parent().unwrap_or(&src);
            let mut content = String::with_capacity(ch.content.len());
            let mut from = 0;
            for d in directives_in(&ch.content) {
                if inside(&dir.join(&d.path), &self.checkout) {
                    continue;
                }
                content.push_str(&ch.content[from..d.span.start]);
                content.push_str(&format!(
                    "*(notabene: this {} directive names a file outside the repository; it was not read)*",
                    d.name
                ));
                from = d.span.end;
            }
            if from > 0 {
                content.push_str(&ch.content[from..]);
                ch.content = content;
            }
        });
        Ok(book)
    }
}

/// The link destinations of `SUMMARY.md` (`[title](path)`), local ones only.
fn summary_links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let Some(end) = rest.find(')') else { break };
        let link = rest[..end].trim();
        let link = link.split('#').next().unwrap_or("");
        if !link.is_empty() && !link.contains("://") {
            out.push(link.to_string());
        }
        rest = &rest[end..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directives_that_read_files_are_found_as_mdbook_finds_them() {
        let text = "a {{#include ../x.md}} b \\{{#include /etc/passwd}} {{ #rustdoc_include src/a.rs:3:5 }} {{#title T}} {{#template t.md k=v}}";
        assert_eq!(
            linked(text),
            [
                ("include".to_string(), "../x.md".to_string()),
                ("rustdoc_include".into(), "src/a.rs".into()),
                ("template".into(), "t.md".into()),
            ]
        );
        assert_eq!(
            summary_links("- [A](a.md)\n- [B](../../etc/passwd)\n[web](https://x.org) [](#)"),
            ["a.md", "../../etc/passwd"]
        );
    }

    #[test]
    fn commands_and_foreign_scripts_are_dropped_and_named() {
        let mut config: Config = r#"
[book]
title = "t"
[preprocessor.links]
[preprocessor.evil]
command = "touch /tmp/pwned"
[preprocessor.notabene]
command = "sh -c pwn"
[output.html]
additional-js = ["theme/notabene.js", "evil.js"]
input-404 = "../../etc/passwd"
[output.pdf]
command = "rm -rf /"
"#
        .parse()
        .unwrap();
        let skipped = neutralize(&mut config, Path::new("/nowhere")).unwrap();
        assert_eq!(
            skipped,
            [
                "preprocessor.evil (command \"touch /tmp/pwned\")",
                "preprocessor.notabene (command \"sh -c pwn\")",
                "output.pdf (command \"rm -rf /\")",
                "output.html.additional-js \"evil.js\"",
                "output.html.input-404",
            ]
        );
        let pre: std::collections::BTreeMap<String, Value> = config.preprocessors().unwrap();
        assert_eq!(
            pre.keys().collect::<Vec<_>>(),
            [
                "links",
                "notabene",
                "notabene-inert-includes",
                "notabene-inert-marks"
            ]
        );
        assert_eq!(pre["notabene"].get("command"), None);
        let js: Vec<String> = config.get("output.html.additional-js").unwrap().unwrap();
        assert_eq!(js, ["theme/notabene.js"]);
        let theme: String = config.get("output.html.theme").unwrap().unwrap();
        assert_eq!(theme, "/nowhere");
    }
}
