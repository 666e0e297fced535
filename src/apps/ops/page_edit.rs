//! The in-page editor's operations: a chapter's top-level blocks as the bytes of its source
//! file (a file it includes whole listed in place of the directive, its blocks edited in that
//! file), and one block replaced in place. A replacement is checked before anything is written:
//! the block still holds the bytes the editor saw (else [`EditRefusal::Stale`] with what it
//! holds now), every other block of the chapter is byte-identical when the file is parsed
//! again, the file is one git tracks, inside the book's sources and reached through no symlink,
//! the new text adds no `{{#…}}` directive and no raw `<script>` the chapter did not have, and
//! it is at most [`MAX_BLOCK`] bytes. The file is then written as `apply` writes a chapter
//! (atomically, never over another program's save), one journal entry is appended with one
//! change record for the page, and the comments it answers are resolved, linked to it.
//!
//! May call: the store, the book (`model::book`: its page ids and git), the suggestions' file
//! writer (`ops::suggestions`), the journal and comment changes of `ops`.

use super::{Actor, Change, ResolutionNote};
use crate::model::book::Book;
use crate::model::book::pages::PageIds;
use crate::{Error, Result};
use notabene_anchoring::text::{TextOptions, page_text, parser};
use notabene_store::{Status, Store};
use serde_json::{Value, json};
use std::ops::Range;
use std::path::{Component, Path, PathBuf};

/// The largest block the editor writes (the original's cap on `PUT /api/page`).
pub const MAX_BLOCK: usize = 1 << 20;
/// The largest chapter file the editor reads.
const MAX_CHAPTER: u64 = 16 << 20;

/// One top-level block of a chapter's source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// Its id: `b` and its position among the chapter's blocks, from 0.
    pub id: String,
    /// What it is: `paragraph`, `heading`, `list`, `table`, `quote`, `code`, `html`, `rule`,
    /// `footnote`, `other`.
    pub kind: &'static str,
    /// Its bytes in the file (without the line break that ends it).
    pub markdown: String,
    /// Its text as a reader sees it (whitespace folded): what the client finds it by.
    pub text: String,
    /// Where it is in the file.
    pub range: Range<usize>,
}

/// A chapter's source file and its blocks, with the files it includes whole.
#[derive(Debug, Clone)]
pub struct PageBlocks {
    /// The file, relative to the book root, `/`-separated.
    pub file: String,
    /// Its bytes.
    pub markdown: String,
    /// Its top-level blocks, in order.
    pub blocks: Vec<Block>,
    /// The files included whole (`{{#include file.md}}` alone in a paragraph): the position of
    /// the directive's block, and the file's blocks (their ids `b<directive>.<n>`).
    pub included: Vec<(usize, PageBlocks)>,
}

impl PageBlocks {
    /// Every block of the page in reading order — an included file's blocks in place of its
    /// directive — each with the file it is in.
    pub fn listed(&self) -> Vec<(&PageBlocks, &Block)> {
        let mut out = Vec::with_capacity(self.blocks.len());
        for (i, b) in self.blocks.iter().enumerate() {
            match self.included.iter().find(|(at, _)| *at == i) {
                Some((_, inc)) => out.extend(inc.blocks.iter().map(|b| (inc, b))),
                None => out.push((self, b)),
            }
        }
        out
    }
}

/// Why an edit was not made (nothing was written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditRefusal {
    /// The page is not a chapter of the book.
    NoPage,
    /// No block has that id.
    NoBlock,
    /// The block no longer holds the bytes the editor saw: what it holds now.
    Stale(Block),
    /// The new text would change another block (named) when the chapter is parsed again.
    Neighbour(String),
    /// The file is not one git tracks (the remedy in the message).
    Untracked(String),
    /// The new text adds what the editor never writes (a directive, a raw script).
    Unsafe(String),
    /// The new text is over [`MAX_BLOCK`].
    TooBig,
    /// Something failed (the file or the store).
    Failed(Error),
}

impl From<Error> for EditRefusal {
    fn from(e: Error) -> EditRefusal {
        EditRefusal::Failed(e)
    }
}

impl std::fmt::Display for EditRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EditRefusal::NoPage => write!(f, "the page is not a chapter of this book (page)"),
            EditRefusal::NoBlock => write!(f, "the page has no such block (block)"),
            EditRefusal::Stale(_) => write!(
                f,
                "the block changed on disk since it was opened; edit it again (expected)"
            ),
            EditRefusal::Neighbour(b) => write!(
                f,
                "the new text would change the block after it or before it ({b}): close what it opens (a fence, a list, an HTML element) (markdown)"
            ),
            EditRefusal::Untracked(why) => write!(f, "{why} (page)"),
            EditRefusal::Unsafe(why) => write!(f, "{why} (markdown)"),
            EditRefusal::TooBig => write!(f, "the block is over {MAX_BLOCK} bytes (markdown)"),
            EditRefusal::Failed(e) => write!(f, "{}", e.message()),
        }
    }
}

/// The top-level blocks of `md`, parsed with `options` (mdBook's parser and settings).
pub fn blocks_of(md: &str, options: &TextOptions) -> Vec<Block> {
    use mdbook_markdown::pulldown_cmark::{Event, Tag};
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut open: Option<(usize, &'static str)> = None;
    for (event, range) in parser(md, options).into_offset_iter() {
        match event {
            Event::Start(tag) => {
                if depth == 0 {
                    let kind = match tag {
                        Tag::Paragraph => "paragraph",
                        Tag::Heading { .. } => "heading",
                        Tag::List(_) => "list",
                        Tag::Table(_) => "table",
                        Tag::BlockQuote(_) => "quote",
                        Tag::CodeBlock(_) => "code",
                        Tag::HtmlBlock => "html",
                        Tag::FootnoteDefinition(_) => "footnote",
                        _ => "other",
                    };
                    open = Some((range.start, kind));
                }
                depth += 1;
            }
            Event::End(_) => {
                depth = depth.saturating_sub(1);
                if depth == 0
                    && let Some((start, kind)) = open.take()
                {
                    push_block(&mut out, md, start..range.end.max(start), kind, options);
                }
            }
            Event::Rule if depth == 0 => push_block(&mut out, md, range, "rule", options),
            _ => {}
        }
    }
    out
}

fn push_block(
    out: &mut Vec<Block>,
    md: &str,
    range: Range<usize>,
    kind: &'static str,
    options: &TextOptions,
) {
    let mut end = range.end.min(md.len());
    while end > range.start && matches!(md.as_bytes()[end - 1], b'\n' | b'\r') {
        end -= 1;
    }
    let markdown = md[range.start..end].to_string();
    let text = page_text(&markdown, options)
        .text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    out.push(Block {
        id: format!("b{}", out.len()),
        kind,
        markdown,
        text,
        range: range.start..end,
    });
}

/// The chapter file of `page` and its blocks, through the files it includes whole.
pub fn page_blocks(book: &Book, page: &str) -> std::result::Result<PageBlocks, EditRefusal> {
    let path = PageIds::new(book)
        .source_file(page)
        .ok_or(EditRefusal::NoPage)?;
    let rel = path
        .strip_prefix(&book.root)
        .map_err(|_| EditRefusal::NoPage)?;
    let options = crate::model::book::text_options(&book.mdbook)?;
    let mut chapter = source_blocks(book, rel, &options)?;
    let dir = rel.parent().unwrap_or(Path::new(""));
    // An included file is edited only inside the book's sources, never in a git directory (a
    // branch may include `../.git/config`: the hub's clone holds the remote there).
    let src = book.src_dir();
    let src = src.strip_prefix(&book.root).unwrap_or(&src);
    for (i, b) in chapter.blocks.iter().enumerate() {
        let Some(target) = whole_include(&b.markdown)
            .and_then(|t| inside(dir, t))
            .filter(|t| t.starts_with(src) && !in_git_dir(t))
        else {
            continue;
        };
        // A file that cannot be read, or that holds directives of its own, is left folded.
        if let Ok(mut inc) = source_blocks(book, &target, &options)
            && !inc.markdown.contains("{{#")
        {
            for (n, ib) in inc.blocks.iter_mut().enumerate() {
                ib.id = format!("b{i}.{n}");
            }
            chapter.included.push((i, inc));
        }
    }
    Ok(chapter)
}

/// The blocks of the book's file `rel`, read as the store is read: through no symlink, a
/// regular file, bounded, UTF-8.
fn source_blocks(
    book: &Book,
    rel: &Path,
    options: &TextOptions,
) -> std::result::Result<PageBlocks, EditRefusal> {
    let file = notabene_core::slash_path(rel);
    let read = notabene_store::fsx::read_in(&book.root, rel, MAX_CHAPTER).map_err(|_| {
        Error::new(format!(
            "cannot read {file}: a symlink, not a regular file, or over {MAX_CHAPTER} bytes ({file})"
        ))
    })?;
    let markdown = String::from_utf8(read.bytes)
        .map_err(|_| Error::new(format!("{file} is not UTF-8 ({file})")))?;
    let blocks = blocks_of(&markdown, options);
    Ok(PageBlocks {
        file,
        markdown,
        blocks,
        included: Vec::new(),
    })
}

/// The file of a paragraph that is only `{{#include file}}` (a whole file: no line range or
/// anchor).
fn whole_include(block: &str) -> Option<&str> {
    let inner = block
        .trim()
        .strip_prefix("{{#include")?
        .strip_suffix("}}")?;
    let target = inner.trim();
    (!target.is_empty() && !target.contains([':', ' ', '\t', '\n', '{', '}'])).then_some(target)
}

/// Whether a component of `path` names a git directory (`.git`, however spelt on a
/// case-insensitive disk).
fn in_git_dir(path: &Path) -> bool {
    path.components().any(|c| {
        c.as_os_str()
            .to_string_lossy()
            .trim_end_matches(['.', ' '])
            .eq_ignore_ascii_case(".git")
    })
}

/// `dir/target` as a path inside the book (`..` resolved), or None when it leaves it.
fn inside(dir: &Path, target: &str) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in dir.join(target).components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// One edit of a block, as `PUT /__notabene/api/page` asks for it.
#[derive(Debug, Clone)]
pub struct BlockEdit {
    /// The page.
    pub page: String,
    /// The block's id.
    pub block: String,
    /// The bytes the editor saw.
    pub expected: String,
    /// The new bytes.
    pub markdown: String,
    /// The comments the edit answers, to resolve.
    pub close: Vec<String>,
    /// The journal entry's description (one line).
    pub note: String,
    /// Who edits.
    pub author: String,
}

/// What an edit did.
#[derive(Debug, Clone)]
pub struct Edited {
    /// The file written, relative to the book root.
    pub file: String,
    /// The journal entry written (when comments were closed).
    pub journal: Option<String>,
    /// The comments resolved.
    pub closed: Vec<String>,
}

/// Replaces one block of a chapter (see the module's rules); then, when `close` names
/// comments, appends one journal entry for the page and resolves them linked to it. A retry of
/// the same edit finds the block written and the entry present, and writes nothing twice.
pub fn edit_block(
    book: &Book,
    store: &Store,
    edit: &BlockEdit,
) -> std::result::Result<Edited, EditRefusal> {
    if edit.markdown.len() > MAX_BLOCK || edit.expected.len() > MAX_BLOCK {
        return Err(EditRefusal::TooBig);
    }
    let chapter = page_blocks(book, &edit.page)?;
    let new = edit.markdown.trim_end_matches(['\n', '\r']);
    let Some((page, block)) = chapter
        .listed()
        .into_iter()
        .find(|(_, b)| b.id == edit.block)
    else {
        return Err(EditRefusal::NoBlock);
    };
    tracked(book, &page.file)?;
    let done = block.markdown == new && new != edit.expected;
    if !done {
        if block.markdown != edit.expected {
            return Err(EditRefusal::Stale(block.clone()));
        }
        let spliced = format!(
            "{}{new}{}",
            &page.markdown[..block.range.start],
            &page.markdown[block.range.end..]
        );
        guard_content(&page.markdown, &spliced)?;
        let options = crate::model::book::text_options(&book.mdbook)?;
        neighbours_unchanged(page, block, new, &spliced, &options)?;
        super::suggestions::write_replacement(
            book,
            store,
            (&page.file, &page.markdown),
            block.range.start,
            &block.markdown,
            new,
        )?;
    }
    let mut out = Edited {
        file: page.file.clone(),
        journal: None,
        closed: Vec::new(),
    };
    if edit.close.is_empty() {
        return Ok(out);
    }
    let note = edit.note.trim();
    let why = first_body(store, &edit.close)?;
    let entry = json!({
        "id": journal_id(edit, new),
        "title": if note.is_empty() { "Edited in the page" } else { note },
        "summary": note,
        "changes": [{
            "page": edit.page,
            "file": page.file,
            "what": note,
            "why": why,
            "comments": edit.close,
        }],
    });
    let added = super::journal_add(store, entry)?;
    let by = edit.author.clone();
    super::change(
        store,
        &edit.close,
        &[Change::Close {
            status: Status::Resolved,
            resolution: Some(ResolutionNote {
                note: note.to_string(),
                journal: Some(added.id.clone()),
                by: Some(by.clone()),
            }),
            by,
        }],
        Actor::Person,
        false,
    )?;
    out.journal = Some(added.id);
    out.closed = edit.close.clone();
    Ok(out)
}

/// Refuses a file git does not track (with the remedy), and a book outside git.
fn tracked(book: &Book, file: &str) -> std::result::Result<(), EditRefusal> {
    let path = book.root.join(file);
    let Some(dir) = path.parent() else {
        return Err(EditRefusal::NoPage);
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match crate::model::book::git::git(dir, &["ls-files", "--error-unmatch", "--", &name]) {
        Some((0, _)) => Ok(()),
        Some(_) => Err(EditRefusal::Untracked(format!(
            "{file} is not tracked by git, so an edit could not be reviewed or undone: commit it first (git add {file})"
        ))),
        None => Err(EditRefusal::Untracked(format!(
            "{file} is not in a git repository (or git is missing), so an edit could not be reviewed or undone"
        ))),
    }
}

/// Refuses a new `{{#…}}` directive (an include) or raw `<script>`: the chapter after the edit
/// may hold no more of them than before.
fn guard_content(old: &str, new: &str) -> std::result::Result<(), EditRefusal> {
    let count = |text: &str, what: &str| text.to_ascii_lowercase().matches(what).count();
    if count(new, "{{#") > count(old, "{{#") {
        return Err(EditRefusal::Unsafe(
            "the editor adds no {{#…}} directive (an include, a playground): write it in the file"
                .into(),
        ));
    }
    if count(new, "<script") > count(old, "<script") {
        return Err(EditRefusal::Unsafe(
            "the editor adds no raw <script>: write it in the file".into(),
        ));
    }
    Ok(())
}

/// Refuses an edit after which a block before or after the edited one is not byte-identical
/// when the chapter is parsed again (an unclosed fence, a list that takes in the next
/// paragraph).
fn neighbours_unchanged(
    page: &PageBlocks,
    block: &Block,
    new: &str,
    spliced: &str,
    options: &TextOptions,
) -> std::result::Result<(), EditRefusal> {
    let after = blocks_of(spliced, options);
    let (start, end) = (block.range.start, block.range.end);
    let new_end = start + new.len();
    let shift = |r: &Range<usize>| r.start + new_end - end..r.end + new_end - end;
    let before: Vec<&Block> = page
        .blocks
        .iter()
        .filter(|b| b.range.end <= start)
        .collect();
    let later: Vec<&Block> = page
        .blocks
        .iter()
        .filter(|b| b.range.start >= end)
        .collect();
    let same = |old: &Block, range: Range<usize>| {
        after
            .iter()
            .any(|b| b.range == range && b.markdown == old.markdown)
    };
    if let Some(b) = before.iter().find(|b| !same(b, b.range.clone())) {
        return Err(EditRefusal::Neighbour(b.id.clone()));
    }
    if let Some(b) = later.iter().find(|b| !same(b, shift(&b.range))) {
        return Err(EditRefusal::Neighbour(b.id.clone()));
    }
    // Nothing new may start before the edit or run past it.
    let inside = after
        .iter()
        .filter(|b| b.range.start >= start && b.range.start < new_end.max(start + 1))
        .all(|b| b.range.end <= new_end);
    if after.len() < before.len() + later.len() || !inside {
        return Err(EditRefusal::Neighbour(block.id.clone()));
    }
    Ok(())
}

/// The first message of the first comment closed: the journal change's `why`.
fn first_body(store: &Store, ids: &[String]) -> Result<String> {
    let snap = store.load()?;
    let found = store.find(&snap, &ids[..1])?;
    Ok(found
        .first()
        .and_then(|r| r.comment.thread().first().cloned())
        .and_then(|m| m.get("body").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_default())
}

/// The journal entry's id, from the edit itself: a retry of the same edit finds its entry.
fn journal_id(edit: &BlockEdit, new: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for part in [
        edit.page.as_str(),
        edit.block.as_str(),
        edit.expected.as_str(),
        new,
        &edit.close.join(","),
        edit.note.as_str(),
    ] {
        h.update(part.len().to_le_bytes());
        h.update(part.as_bytes());
    }
    let digest = h.finalize();
    let hex: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("j-edit-{hex}")
}
