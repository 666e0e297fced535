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

/// Where a suggestion goes: a byte range of a file, and the text to put there.
struct Edit {
    path: PathBuf,
    range: Range<usize>,
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
    // Each file once, its edits from the end so earlier offsets stay right.
    let mut files: Vec<PathBuf> = edits.iter().map(|(_, e)| e.path.clone()).collect();
    files.sort();
    files.dedup();
    let mut lines = vec![0usize; records.len()];
    for path in &files {
        let mut text =
            std::fs::read_to_string(path).map_err(|e| Error::io("cannot read", path, e))?;
        let mut here: Vec<&(usize, Edit)> = edits.iter().filter(|(_, e)| &e.path == path).collect();
        for (k, e) in &here {
            lines[*k] = text[..e.range.start].matches('\n').count() + 1;
        }
        here.sort_by_key(|(_, e)| std::cmp::Reverse(e.range.start));
        for (_, e) in here {
            text.replace_range(e.range.clone(), &e.text);
        }
        let dir = path.parent().unwrap_or(Path::new("."));
        let name = path
            .file_name()
            .ok_or_else(|| Error::new(format!("not a file ({})", path.display())))?;
        fsx::write_atomic(dir, Path::new(name), text.as_bytes())?;
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
    path.strip_prefix(&book.root)
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
    let range =
        plain_source(&anchors.texts[ch], &chapter.content, place.text.clone()).map_err(|why| {
            Error::new(format!(
                "the quote of {id:?} {why}; nothing written (anchor.quote)"
            ))
        })?;
    let (path, range) = on_disk(book, chapter, range).map_err(|why| {
        Error::new(format!(
            "the quote of {id:?} {why}; nothing written (anchor.quote)"
        ))
    })?;
    Ok(Edit {
        path,
        range,
        text: s.text.to_string(),
    })
}

/// The Markdown range of the text range `text`, when replacing it keeps every piece of
/// markup: all of it in one block, made of text that maps to its source (plain text,
/// entities, smart punctuation, soft breaks, code block lines), with nothing but whitespace
/// between its pieces in the source.
fn plain_source(
    pt: &PageText,
    content: &str,
    text: Range<usize>,
) -> std::result::Result<Range<usize>, String> {
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
    Ok(range)
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

/// The file and byte range on disk of the chapter's Markdown range `range`: the chapter file
/// itself, or the file an `{{#include}}` brought in.
fn on_disk(
    book: &Book,
    chapter: &Chapter,
    range: Range<usize>,
) -> std::result::Result<(PathBuf, Range<usize>), String> {
    let file = book.src_dir().join(
        chapter
            .source
            .strip_prefix(&format!("{}/", crate::book::PageIds::new(book).prefix))
            .unwrap_or(&chapter.source),
    );
    let Some(disk) = &chapter.disk else {
        return Ok((file, range));
    };
    let content = &chapter.content;
    // The disk text is literal pieces and `{{#…}}` directives; the pieces are in the content
    // in order, each directive's expansion between them.
    let pieces = directives(disk);
    let mut at = 0usize;
    let mut placed: Vec<(Range<usize>, Range<usize>)> = Vec::new(); // (disk, content)
    for (k, piece) in pieces.literals.iter().enumerate() {
        let lit = &disk[piece.clone()];
        let found = if k == 0 {
            content.starts_with(lit).then_some(0)
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
            return Ok((file, off..off + range.len()));
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
        let Some(target) = include_target(&disk[directive.clone()]) else {
            return Err("comes from a `{{#…}}` expansion that is not a file include".into());
        };
        let included = file.parent().unwrap_or(Path::new(".")).join(target);
        let text = std::fs::read_to_string(&included).map_err(|e| {
            format!(
                "comes from {} which cannot be read: {e}",
                included.display()
            )
        })?;
        let expansion = &content[gap.clone()];
        let slice = &content[range.clone()];
        // Where the expansion sits in the included file (whole or a line range), else where
        // the quoted source alone is, when that is once only.
        let unique = |hay: &str, needle: &str| -> Option<usize> {
            let i = hay.find(needle)?;
            (hay.rfind(needle) == Some(i)).then_some(i)
        };
        let start = match unique(&text, expansion) {
            Some(i) => i + (range.start - gap.start),
            None => unique(&text, slice).ok_or_else(|| {
                format!(
                    "cannot be found exactly once in the included file {}",
                    included.display()
                )
            })?,
        };
        return Ok((included, start..start + range.len()));
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

/// The file of an `{{#include path[:…]}}` (or `rustdoc_include`) directive.
fn include_target(directive: &str) -> Option<&str> {
    let inner = directive.strip_prefix("{{")?.strip_suffix("}}")?.trim();
    let rest = inner
        .strip_prefix("#include")
        .or_else(|| inner.strip_prefix("#rustdoc_include"))?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let arg = rest.trim();
    Some(arg.split(':').next().unwrap_or(arg).trim()).filter(|p| !p.is_empty())
}

#[cfg(test)]
mod tests {
    use crate::apply::{directives, include_target};

    #[test]
    fn directives_split_a_chapter_into_pieces() {
        let p = directives("a {{#include x.md}} b {{ #title T }} c \\{{#include y}} d");
        assert_eq!(p.directives.len(), 2);
        assert_eq!(p.literals.len(), 3);
        assert_eq!(include_target("{{#include x.md:2:5}}"), Some("x.md"));
        assert_eq!(
            include_target("{{#rustdoc_include src/a.rs:anchor}}"),
            Some("src/a.rs")
        );
        assert_eq!(include_target("{{#title T}}"), None);
        assert_eq!(include_target("{{#includes x}}"), None);
    }
}
