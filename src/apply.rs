//! Applying suggested edits: a selection comment's `suggestion` written into the book's
//! Markdown in one step, then the comment closed as `comments done` closes it. Shared by
//! `notabene comments apply` and the serve API's Apply button.
//!
//! An edit is applied only where it cannot land anywhere else: the comment's quote is found
//! `exact` and unambiguous in its chapter as the build renders it, the quote is the one the
//! suggestion was made on, and it maps to one source range of one file — the chapter's, or
//! the file an `{{#include}}` brought in — without crossing inline markup the replacement
//! would break (emphasis or link syntax, code spans, raw HTML, a block boundary). A soft line
//! break inside the quote is replaced with the rest. Every id is checked before any file is
//! written; then each Markdown file is written atomically, then the comments, all under the
//! store lock.
//!
//! Layer 9. May call: `engine` (the book as the build sees it), `resolve`, `text`, the book
//! layer, `store` and the shared helpers.

use crate::anchor::Status;
use crate::book::Book;
use crate::resolve::{BookAnchors, Chapter};
use crate::store::{Comment, Record, Store, fsx, ids};
use crate::text::{PageText, SegKind};
use crate::{Error, Result, bail};
use serde_json::{Map, Value, json};
use std::ops::Range;
use std::path::{Path, PathBuf};

/// How `apply` closes the comments it applied.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The journal entry recording the change (`resolution.journalEntryId`).
    pub journal: Option<String>,
    /// `resolution.note` (default: says what was replaced).
    pub note: Option<String>,
    /// Apply a held comment's suggestion too.
    pub force: bool,
    /// Who applied it (`suggestion.applied.by`).
    pub author: String,
}

/// One applied suggestion.
#[derive(Debug, Clone)]
pub struct Applied {
    /// The comment, closed.
    pub comment: Comment,
    /// The Markdown file written, relative to the book root, `/`-separated.
    pub file: String,
    /// The 1-based line of the file where the replacement starts.
    pub line: usize,
}

/// Where a suggestion goes: a byte range of a file (canonical path), the source bytes found
/// there when it was traced, and the text to put there.
struct Edit {
    path: PathBuf,
    range: Range<usize>,
    expected: String,
    text: String,
}

/// Applies the suggestions of comments `ids` of `book`'s store (see the module docs).
pub fn apply(
    book: &Book,
    store: &Store,
    id_list: &[String],
    opts: &Options,
) -> Result<Vec<Applied>> {
    let mut unique: Vec<&String> = Vec::new();
    for id in id_list {
        if !unique.contains(&id) {
            unique.push(id);
        }
    }
    let _lock = store.lock()?;
    store.check_compatible()?;
    let snap = store.load()?;
    let owned: Vec<String> = unique.iter().map(|s| s.to_string()).collect();
    let records: Vec<Record> = store.find(&snap, &owned)?.into_iter().cloned().collect();
    for r in &records {
        precheck(&r.comment, opts.force)?;
    }
    let (anchors, _) = crate::engine::anchor_current(book, store)?;
    let mut edits: Vec<(usize, Edit)> = Vec::new();
    for (k, r) in records.iter().enumerate() {
        edits.push((k, locate(book, &anchors, &r.comment)?));
    }
    // Two suggestions on overlapping text of one file cannot both be applied.
    for (i, (ka, a)) in edits.iter().enumerate() {
        for (kb, b) in &edits[i + 1..] {
            if a.path == b.path && a.range.start < b.range.end && b.range.start < a.range.end {
                bail!(
                    "the suggestions of {} and {} overlap in {}; apply them one at a time (ids)",
                    records[*ka].comment.id().unwrap_or_default(),
                    records[*kb].comment.id().unwrap_or_default(),
                    display(book, &a.path)
                );
            }
        }
    }
    // Each file once, its edits from the end so earlier offsets stay right; every file read,
    // checked (not a symlink, still holding what was traced) and edited before any is written.
    let mut files: Vec<PathBuf> = edits.iter().map(|(_, e)| e.path.clone()).collect();
    files.sort();
    files.dedup();
    let mut lines = vec![0usize; records.len()];
    let mut rewritten: Vec<(&PathBuf, String)> = Vec::with_capacity(files.len());
    for path in &files {
        let shown = display(book, path);
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
            bail!("{shown} is a symlink; apply the suggestion by hand; nothing written ({shown})");
        }
        let mut text =
            std::fs::read_to_string(path).map_err(|e| Error::io("cannot read", path, e))?;
        let mut here: Vec<&(usize, Edit)> = edits.iter().filter(|(_, e)| &e.path == path).collect();
        for (k, e) in &here {
            if text.get(e.range.clone()) != Some(e.expected.as_str()) {
                bail!(
                    "{shown} changed while the suggestion of {} was being applied; nothing written ({shown})",
                    records[*k].comment.id().unwrap_or_default()
                );
            }
            lines[*k] = text[..e.range.start].matches('\n').count() + 1;
        }
        here.sort_by_key(|(_, e)| std::cmp::Reverse(e.range.start));
        for (_, e) in here {
            text.replace_range(e.range.clone(), &e.text);
        }
        rewritten.push((path, text));
    }
    let mut written: Vec<String> = Vec::new();
    for (path, text) in &rewritten {
        let dir = path.parent().unwrap_or(Path::new("."));
        let name = path
            .file_name()
            .ok_or_else(|| Error::new(format!("not a file ({})", path.display())))?;
        fsx::write_atomic(dir, Path::new(name), text.as_bytes()).map_err(|e| {
            if written.is_empty() {
                e
            } else {
                Error::new(format!(
                    "{} — already written: {}; no comment was closed",
                    e.message(),
                    written.join(", ")
                ))
            }
        })?;
        written.push(display(book, path));
    }
    // Then the comments, closed as `done` closes them.
    let ts = ids::iso(ids::now()?);
    let status = book.config.review.done_status();
    let mut out = Vec::with_capacity(records.len());
    for (k, mut rec) in records.into_iter().enumerate() {
        let file = display(book, &edits[k].1.path);
        let c = &mut rec.comment;
        let (quote, text) = {
            let s = c.suggestion().expect("checked by precheck");
            (s.quote.to_string(), s.text.to_string())
        };
        let mut res = Map::new();
        let note = opts.note.clone().unwrap_or_else(|| {
            if text.is_empty() {
                format!("Applied the suggested edit: deleted “{quote}” in {file}.")
            } else {
                format!("Applied the suggested edit: “{quote}” → “{text}” in {file}.")
            }
        });
        res.insert("note".into(), note.into());
        if let Some(j) = &opts.journal {
            res.insert("journalEntryId".into(), j.clone().into());
        }
        c.set("status", status.into());
        c.set("resolution", Value::Object(res));
        let mut suggestion = c
            .get("suggestion")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        suggestion.insert(
            "applied".into(),
            json!({ "at": ts, "by": opts.author, "file": file }),
        );
        c.set("suggestion", Value::Object(suggestion));
        // The comment now marks the text it put there.
        if !text.is_empty()
            && let Some(mut anchor) = c.anchor().cloned()
        {
            anchor.insert("quote".into(), text.into());
            c.set("anchor", Value::Object(anchor));
        }
        c.set("updatedAt", ts.clone().into());
        out.push((rec, file, lines[k]));
    }
    store.ensure_meta()?;
    let mut applied = Vec::with_capacity(out.len());
    for (rec, file, line) in out {
        store.write_record(&rec).map_err(|e| {
            Error::new(format!(
                "the Markdown was changed, but closing comment {} failed: {}; run `notabene comments done {}` ({file})",
                rec.comment.id().unwrap_or_default(),
                e.message(),
                rec.comment.id().unwrap_or_default()
            ))
        })?;
        applied.push(Applied {
            comment: rec.comment,
            file,
            line,
        });
    }
    Ok(applied)
}

/// The checks that need no book: a suggestion is there, not applied yet, the comment open
/// and not held (unless forced).
fn precheck(c: &Comment, force: bool) -> Result<()> {
    let id = c.id().unwrap_or_default();
    let Some(s) = c.suggestion() else {
        bail!("comment {id:?} carries no suggested edit (suggestion)");
    };
    if s.applied {
        bail!("the suggestion of {id:?} was already applied; nothing changed (suggestion.applied)");
    }
    if c.scope() != Some("selection") {
        bail!("only a selection comment's suggestion can be applied ({id:?} is not one) (scope)");
    }
    if c.held() && !force {
        bail!(
            "comment {id:?} is on hold — a reviewer is still working on it; pass --force to apply it anyway"
        );
    }
    if c.status() != Some("open") {
        bail!(
            "comment {id:?} is {}: only an open comment's suggestion is applied (reopen it first) (status)",
            c.status().unwrap_or("without a status")
        );
    }
    Ok(())
}

/// A path for messages and `applied.file`: relative to the book root when below it.
fn display(book: &Book, path: &Path) -> String {
    let canon = book
        .root
        .canonicalize()
        .unwrap_or_else(|_| book.root.clone());
    path.strip_prefix(&canon)
        .or_else(|_| path.strip_prefix(&book.root))
        .map(crate::util::slash_path)
        .unwrap_or_else(|_| path.display().to_string())
}

/// Where comment `c`'s suggestion goes, or why it cannot go anywhere.
fn locate(book: &Book, anchors: &BookAnchors, c: &Comment) -> Result<Edit> {
    let id = c.id().unwrap_or_default();
    let s = c.suggestion().expect("checked by precheck");
    let quote = c
        .anchor()
        .and_then(|a| a.get("quote"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    if quote != s.quote {
        bail!(
            "the anchor of {id:?} no longer quotes the text the suggestion was made on; nothing written (anchor.quote)"
        );
    }
    let ci = anchors
        .comments
        .iter()
        .position(|x| x.id() == Some(id))
        .ok_or_else(|| Error::new(format!("comment {id:?} is not in this build")))?;
    let l = &anchors.located[ci];
    let (Some(ch), Some(r)) = (l.chapter, &l.resolution) else {
        bail!("comment {id:?} is not on a page of this build; nothing written (page)");
    };
    if l.followed.is_some() {
        bail!(
            "comment {id:?} was found on another page than its own; run `notabene anchors heal` first; nothing written (page)"
        );
    }
    if r.flags.ambiguous {
        bail!(
            "the quote of {id:?} appears more than once with the same context; nothing written (anchor.quote)"
        );
    }
    let (Status::Exact, Some(place)) = (r.status, &r.place) else {
        bail!(
            "the quote of {id:?} is no longer exact in its chapter ({}): the text changed since the suggestion; nothing written (anchor.quote)",
            match r.status {
                Status::Fuzzy => "fuzzy",
                _ => "not found",
            }
        );
    };
    let chapter = &anchors.chapters[ch];
    let why = |why: String| {
        Error::new(format!(
            "the quote of {id:?} {why}; nothing written (anchor.quote)"
        ))
    };
    let (range, code) =
        plain_source(&anchors.texts[ch], &chapter.content, place.text.clone()).map_err(why)?;
    let expected = chapter.content[range.clone()].to_string();
    let (path, range, file_text) = on_disk(book, chapter, range).map_err(why)?;
    let at_line_start = range.start == 0 || file_text[..range.start].ends_with('\n');
    let text = match code {
        // In a fenced code block the replacement is the code, as typed.
        Some(CodeKind::Fenced) => s.text.to_string(),
        _ if s.text.contains('\n') => bail!(
            "the suggestion of {id:?} spans lines, which this place cannot take as written; apply it by hand; nothing written (suggestion.text)"
        ),
        Some(CodeKind::Indented) => s.text.to_string(),
        None => escape_markdown(s.text, at_line_start),
    };
    Ok(Edit {
        path,
        range,
        expected,
        text,
    })
}

/// A suggestion is text as readers see it: written into Markdown it must render as that text,
/// never as markup (emphasis, links, HTML, mdBook's `{{#…}}` directives, a table's `|`), so
/// every character Markdown could read as syntax is backslash-escaped; at the start of a line,
/// so is a list or heading marker.
fn escape_markdown(text: &str, at_line_start: bool) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    // An ordered-list marker (`2.`, `3)`) is escaped at its dot or parenthesis.
    let digits = text.chars().take_while(char::is_ascii_digit).count();
    let ordered = at_line_start && digits > 0 && text[digits..].starts_with(['.', ')']);
    if at_line_start && text.starts_with(['-', '+', '=']) {
        out.push('\\');
    }
    for (i, ch) in text.char_indices() {
        if (ordered && i == digits)
            || matches!(
                ch,
                '\\' | '`'
                    | '*'
                    | '_'
                    | '['
                    | ']'
                    | '<'
                    | '>'
                    | '{'
                    | '}'
                    | '|'
                    | '~'
                    | '#'
                    | '&'
                    | '$'
            )
        {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

/// What kind of code block a quote is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CodeKind {
    /// ```` ``` ```` or `~~~` fences.
    Fenced,
    /// Indented by four spaces.
    Indented,
}

/// The Markdown range of the text range `text`, when replacing it keeps every piece of
/// markup: all of it in one block, made of text that maps to its source (plain text,
/// entities, smart punctuation, soft breaks, code block lines), with nothing but whitespace
/// between its pieces in the source.
fn plain_source(
    pt: &PageText,
    content: &str,
    text: Range<usize>,
) -> std::result::Result<(Range<usize>, Option<CodeKind>), String> {
    if text.is_empty() {
        return Err("is empty".into());
    }
    let first = pt
        .segment_at(text.start)
        .ok_or("is not in the page's text")?;
    let last = pt
        .segment_at(text.end - 1)
        .ok_or("is not in the page's text")?;
    let segs = &pt.segments[first..=last];
    if segs.iter().any(|s| s.block != segs[0].block) {
        return Err("spans more than one paragraph or block".into());
    }
    for s in segs {
        match s.kind {
            SegKind::Plain | SegKind::Atomic | SegKind::CodeBlock(_) => {}
            SegKind::CodeSpan => return Err("spans inline code the replacement would break".into()),
            SegKind::Raw => {
                return Err("spans raw HTML or generated text the replacement would break".into());
            }
        }
    }
    let range = pt.source_range(text.start, text.end);
    // Source bytes of the range that no piece of the quote comes from: markup.
    let mut covered = range.start;
    for s in segs {
        let (a, b) = (s.src.start.max(range.start), s.src.end.min(range.end));
        if a > covered {
            markup_gap(&content[covered..a])?;
        }
        covered = covered.max(b);
    }
    if covered < range.end {
        markup_gap(&content[covered..range.end])?;
    }
    let code = match segs[0].kind {
        SegKind::CodeBlock(n) => {
            if segs.iter().any(|s| s.kind != segs[0].kind) {
                return Err("spans code and text".into());
            }
            let fence = pt
                .code_blocks
                .get(n as usize)
                .map(|cb| content[cb.src.clone()].trim_start())
                .is_some_and(|src| src.starts_with("```") || src.starts_with("~~~"));
            Some(if fence {
                CodeKind::Fenced
            } else {
                CodeKind::Indented
            })
        }
        _ if segs.iter().any(|s| matches!(s.kind, SegKind::CodeBlock(_))) => {
            return Err("spans code and text".into());
        }
        _ => None,
    };
    Ok((range, code))
}

fn markup_gap(gap: &str) -> std::result::Result<(), String> {
    if gap.chars().all(char::is_whitespace) {
        Ok(())
    } else {
        Err(format!(
            "spans inline markup (`{}`) the replacement would break",
            gap.trim()
        ))
    }
}

/// The file (canonical path), byte range and text on disk of the chapter's Markdown range
/// `range`: the chapter file itself, or the file an `{{#include}}` brought in. Each step is
/// checked against the bytes it claims (an unsure trace is a refusal, never a guess), and the
/// file must be inside the book.
fn on_disk(
    book: &Book,
    chapter: &Chapter,
    range: Range<usize>,
) -> std::result::Result<(PathBuf, Range<usize>, String), String> {
    let prefix = format!("{}/", crate::book::PageIds::new(book).prefix);
    let file = book.src_dir().join(
        chapter
            .source
            .strip_prefix(&prefix)
            .unwrap_or(&chapter.source),
    );
    let content = &chapter.content;
    let slice = &content[range.clone()];
    let inside = |path: &Path| -> std::result::Result<PathBuf, String> {
        let canon = path
            .canonicalize()
            .map_err(|e| format!("comes from {} which cannot be read: {e}", path.display()))?;
        let root = book
            .root
            .canonicalize()
            .unwrap_or_else(|_| book.root.clone());
        if !canon.starts_with(&root) {
            return Err(format!("comes from {}, outside the book", path.display()));
        }
        Ok(canon)
    };
    let Some(disk) = &chapter.disk else {
        return Ok((inside(&file)?, range, content.clone()));
    };
    // The disk text is literal pieces and `{{#…}}` directives; the pieces are in the content
    // in order, each directive's expansion between them.
    let pieces = directives(disk);
    let mut at = 0usize;
    let mut placed: Vec<(Range<usize>, Range<usize>)> = Vec::new(); // (disk, content)
    for (k, piece) in pieces.literals.iter().enumerate() {
        let lit = &disk[piece.clone()];
        let found = if k == 0 {
            content.starts_with(lit).then_some(0)
        } else if k + 1 == pieces.literals.len() {
            content
                .ends_with(lit)
                .then(|| content.len() - lit.len())
                .filter(|&i| i >= at)
        } else if lit.is_empty() {
            Some(at)
        } else {
            content[at..].find(lit).map(|i| at + i)
        };
        let Some(start) = found else {
            return Err("cannot be traced back from the expanded chapter to its files".into());
        };
        placed.push((piece.clone(), start..start + lit.len()));
        at = start + lit.len();
    }
    // In a literal piece: the chapter file.
    for (d, c) in &placed {
        if c.start <= range.start && range.end <= c.end {
            let off = d.start + (range.start - c.start);
            if disk.get(off..off + range.len()) != Some(slice) {
                return Err("cannot be traced back from the expanded chapter to its file".into());
            }
            return Ok((inside(&file)?, off..off + range.len(), disk.clone()));
        }
    }
    // In the expansion of directive k (between literal k and k + 1).
    for (k, directive) in pieces.directives.iter().enumerate() {
        let (Some(before), Some(after)) = (placed.get(k), placed.get(k + 1)) else {
            continue;
        };
        let gap = before.1.end..after.1.start;
        if !(gap.start <= range.start && range.end <= gap.end) {
            continue;
        }
        let Some((target, whole)) = include_target(&disk[directive.clone()]) else {
            return Err(
                "comes from a `{{#…}}` expansion other than a file include, or an include with an anchor".into(),
            );
        };
        let included = inside(&file.parent().unwrap_or(Path::new(".")).join(target))?;
        let text = std::fs::read_to_string(&included).map_err(|e| {
            format!(
                "comes from {} which cannot be read: {e}",
                included.display()
            )
        })?;
        let expansion = &content[gap.clone()];
        // A whole-file include is the file (mdBook drops its last newline); a line range is
        // a run of its lines, found once.
        let base = if whole {
            (text == expansion || text.strip_suffix('\n') == Some(expansion)).then_some(0)
        } else {
            text.find(expansion)
                .filter(|&i| text.rfind(expansion) == Some(i))
                .filter(|&i| i == 0 || text[..i].ends_with('\n'))
        };
        let Some(base) = base else {
            return Err(format!(
                "cannot be traced to one place in the included file {}",
                display(book, &included)
            ));
        };
        let start = base + (range.start - gap.start);
        if text.get(start..start + range.len()) != Some(slice) {
            return Err(format!(
                "cannot be traced to one place in the included file {}",
                display(book, &included)
            ));
        }
        return Ok((included, start..start + range.len(), text));
    }
    Err("spans the boundary of an included file".into())
}

/// The literal pieces of a chapter file and the `{{#…}}` directives between them (pieces:
/// one more than directives).
struct Pieces {
    literals: Vec<Range<usize>>,
    directives: Vec<Range<usize>>,
}

fn directives(disk: &str) -> Pieces {
    let mut literals = Vec::new();
    let mut directives = Vec::new();
    let mut start = 0;
    let mut from = 0;
    while let Some(i) = disk[from..].find("{{").map(|i| from + i) {
        let rest = &disk[i + 2..];
        let is_directive = rest.trim_start().starts_with('#') && !disk[..i].ends_with('\\');
        match (is_directive, rest.find("}}")) {
            (true, Some(end)) => {
                literals.push(start..i);
                directives.push(i..i + 2 + end + 2);
                start = i + 2 + end + 2;
                from = start;
            }
            _ => from = i + 2,
        }
    }
    literals.push(start..disk.len());
    Pieces {
        literals,
        directives,
    }
}

/// The file of an `{{#include path[:lines]}}` directive and whether it is the whole file.
/// An anchor (`:name`) or `rustdoc_include` (hidden lines) makes an expansion that is not a
/// run of the file's bytes: `None`, like any other directive.
fn include_target(directive: &str) -> Option<(&str, bool)> {
    let inner = directive.strip_prefix("{{")?.strip_suffix("}}")?.trim();
    let rest = inner.strip_prefix("#include")?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let arg = rest.trim();
    let (path, spec) = match arg.split_once(':') {
        Some((p, spec)) => (p.trim(), Some(spec.trim())),
        None => (arg, None),
    };
    if path.is_empty() {
        return None;
    }
    match spec {
        None => Some((path, true)),
        // Line ranges: `2`, `2:5`, `:5`, `2:`.
        Some(sp) if sp.chars().all(|c| c.is_ascii_digit() || c == ':') => Some((path, false)),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::apply::{directives, escape_markdown, include_target};

    #[test]
    fn directives_split_a_chapter_into_pieces() {
        let p = directives("a {{#include x.md}} b {{ #title T }} c \\{{#include y}} d");
        assert_eq!(p.directives.len(), 2);
        assert_eq!(p.literals.len(), 3);
        assert_eq!(include_target("{{#include x.md}}"), Some(("x.md", true)));
        assert_eq!(
            include_target("{{#include x.md:2:5}}"),
            Some(("x.md", false))
        );
        assert_eq!(include_target("{{#include x.md:anchor}}"), None);
        assert_eq!(include_target("{{#rustdoc_include src/a.rs:2}}"), None);
        assert_eq!(include_target("{{#title T}}"), None);
        assert_eq!(include_target("{{#includes x}}"), None);
        assert_eq!(
            escape_markdown("a *b* [c](d) {{#x}} <i>", false),
            "a \\*b\\* \\[c\\](d) \\{\\{\\#x\\}\\} \\<i\\>"
        );
        assert_eq!(escape_markdown("- item", true), "\\- item");
        assert_eq!(escape_markdown("2. two", true), "2\\. two");
        assert_eq!(escape_markdown("- item", false), "- item");
    }
}
