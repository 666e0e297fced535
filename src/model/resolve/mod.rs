//! Anchoring a whole book: every stored comment is matched to its chapter (by page id) and its
//! anchor re-found in that chapter's text model, pages in parallel, results in page order
//! (`anchoring`), then followed to other pages where it moved ([`follow`]).
//!
//! Owns: what a book's anchoring holds ([`BookAnchors`]: chapters, text models, where each comment
//! landed) and what can be read from it (status, counts, the change at a fuzzy place, a
//! comment's URL). The forms written out of it (data islands, `comments.json`) are the output
//! tier's (`output::forms`). Calls: `model::book`, the anchoring crate, the store.

mod anchoring;
pub mod chapters;
pub mod follow;
pub mod report;
pub mod source_map;

pub use anchoring::{
    ChapterAnchoring, ChapterInput, Earlier, NothingEarlier, anchor_book, anchor_book_after,
    anchoring_key, content_digest,
};

use crate::util::memo::Digest;
use notabene_anchoring::text::PageText;
use notabene_anchoring::{self as anchor, Resolution};
use notabene_store::Comment;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Words of the page's text taken beyond the stored context on each side for
/// [`BookAnchors::change`].
pub const CHANGE_SLACK: usize = 10;

/// A chapter of the book being built, with its page id.
#[derive(Debug, Clone)]
pub struct Chapter {
    /// The store `page` key.
    pub page: String,
    /// The chapter's name (title in the sidebar).
    pub name: String,
    /// Its HTML path relative to the site root (`guide/setup.html`, `index.html`).
    pub url: String,
    /// Its Markdown file relative to the book root (`src/guide/setup.md`).
    pub source: String,
    /// Its Markdown as handed to the HTML renderer.
    pub content: String,
    /// Its Markdown file as it is on disk, read when first asked for ([`Chapter::disk`]);
    /// `None` when there is no file to read.
    pub disk: Option<Disk>,
}

impl Chapter {
    /// The Markdown file as it is on disk, when it differs from `content` (`{{#include}}` and
    /// other expansions); source positions are reported in this text.
    pub fn disk(&self) -> Option<&str> {
        self.disk.as_ref()?.text(&self.content)
    }
}

/// A chapter's Markdown file, read when first asked for: a build whose anchoring comes from
/// its memo never reads its chapters' files.
#[derive(Debug, Clone)]
pub struct Disk {
    /// The file.
    file: std::path::PathBuf,
    /// Its text when it differs from the chapter's content, once read.
    text: std::sync::OnceLock<Option<String>>,
}

impl Disk {
    /// The chapter file at `file`, not read yet.
    pub fn at(file: std::path::PathBuf) -> Disk {
        Disk {
            file,
            text: std::sync::OnceLock::new(),
        }
    }

    /// Its text, when it can be read and differs from `content`.
    fn text(&self, content: &str) -> Option<&str> {
        self.text
            .get_or_init(|| {
                std::fs::read_to_string(&self.file)
                    .ok()
                    .filter(|d| d != content)
            })
            .as_deref()
    }
}

/// Where a comment landed.
#[derive(Debug, Clone, Default)]
pub struct Located {
    /// Index of the chapter holding the comment: its page's, or the one it was followed to.
    pub chapter: Option<usize>,
    /// The anchoring result (`None` for page-scope comments and comments not in this book).
    pub resolution: Option<Resolution>,
    /// Set when the comment was found on another page than the stored one.
    pub followed: Option<Followed>,
    /// For a comment whose page is not in the book and that was found nowhere: the closest
    /// rejected candidate, in chapter `.0`.
    pub elsewhere: Option<(usize, Resolution)>,
    /// For a comment not in the book whose page belongs to another language's build: that
    /// language.
    pub other_language: Option<String>,
    /// A resolved comment the build did not look for ([`Which::Live`]).
    pub not_anchored: bool,
    /// For a comment orphaned on its own page: another chapter holding its text, where git
    /// does not show the text arriving after the comment was written — a suggestion, never a
    /// move (chapter, the anchoring there).
    pub same_text: Option<(usize, Resolution)>,
}

/// Where a followed comment came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Followed {
    /// The page it is stored under.
    pub from: String,
    /// How its new page was found.
    pub by: FollowedBy,
}

/// How a followed comment's new page was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FollowedBy {
    /// git renamed or copied the stored page's file.
    Git(crate::model::book::git::MoveKind),
    /// Its quote and context, in another chapter.
    Quote,
}

impl FollowedBy {
    /// `git rename`, `git copy` or `quote`.
    pub fn as_str(self) -> &'static str {
        match self {
            FollowedBy::Git(k) => k.as_str(),
            FollowedBy::Quote => "quote",
        }
    }
}

pub use crate::model::book::condensed::lean_skips;

/// The anchoring of every comment of a book.
pub struct BookAnchors {
    /// Chapters in book order.
    pub chapters: Vec<Chapter>,
    /// Text model of each chapter (light ones, [`PageText::light`], from the build's memo).
    pub texts: Vec<Arc<PageText>>,
    /// The index the anchoring made of a chapter's text where following may look at it again
    /// (a comment there changed or not found), until following takes them
    /// ([`BookAnchors::take_indexes`]).
    indexes: Vec<Option<notabene_anchoring::IndexParts>>,
    /// The comments, in store order.
    pub comments: Vec<Comment>,
    /// One entry per comment.
    pub located: Vec<Located>,
    /// The comments of each chapter (indices into `comments`, in store order).
    pub by_chapter: Vec<Vec<usize>>,
    /// Comments that matched several pages equally well (not followed), with the chapters.
    pub ambiguous: Vec<(usize, Vec<usize>)>,
    /// Set when the store's pages do not match the book's ([`chapters::mismatch`]).
    pub mismatch: Option<chapters::Mismatch>,
    /// Which comments were looked for.
    pub which: Which,
    /// Where the book's files are, when the chapters came from a book on disk: source places
    /// are traced through `{{#include}}` ([`source_map`]).
    pub sources: Option<source_map::Sources>,
    /// Byte offset of every line start of each chapter's Markdown.
    line_starts: Vec<Vec<usize>>,
    /// The SHA-256 of each chapter's Markdown, once asked for ([`BookAnchors::content_digest`]).
    digests: Vec<std::sync::OnceLock<Digest>>,
}

/// Which comments a book's anchoring re-finds in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// Every comment (`comments.json`, `notabene anchors`).
    All,
    /// Open and addressed ones: resolved comments are not shown in the text, so the build
    /// does not look for them (they keep their page; [`BookAnchors::status`] says
    /// `not-anchored`).
    Live,
}

/// Counts by anchoring status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Found unchanged.
    pub exact: usize,
    /// Found with changes.
    pub fuzzy: usize,
    /// Not found.
    pub orphan: usize,
    /// Page-scope comments (nothing to find).
    pub page: usize,
}

impl BookAnchors {
    /// The indexes the anchoring kept of chapters' texts ([`BookAnchors::indexes`]), taken:
    /// by chapter (following is their last reader).
    pub(super) fn take_indexes(&mut self) -> Vec<(usize, notabene_anchoring::IndexParts)> {
        (std::mem::take(&mut self.indexes).into_iter().enumerate())
            .filter_map(|(ch, parts)| Some((ch, parts?)))
            .collect()
    }

    /// The SHA-256 of chapter `ch`'s Markdown (computed once).
    pub fn content_digest(&self, ch: usize) -> Digest {
        *self.digests[ch].get_or_init(|| content_digest(&self.chapters[ch].content))
    }

    /// The anchoring status word of comment `ci`: exact, fuzzy, orphan or page; for a comment
    /// of another language's build, `other-language`.
    pub fn status(&self, ci: usize) -> &'static str {
        let l = &self.located[ci];
        match (&l.chapter, &l.resolution) {
            (Some(_), None) if l.not_anchored => "not-anchored",
            (Some(_), None) => "page",
            (_, Some(r)) => r.status.as_str(),
            (None, None) if l.other_language.is_some() => "other-language",
            (None, None) => "orphan",
        }
    }

    /// The comments on other languages' pages, counted by language.
    pub fn other_languages(&self) -> BTreeMap<&str, usize> {
        let mut out: BTreeMap<&str, usize> = BTreeMap::new();
        for lang in self
            .located
            .iter()
            .filter_map(|l| l.other_language.as_deref())
        {
            *out.entry(lang).or_default() += 1;
        }
        out
    }

    /// Counts over the comments `filter` keeps (in this book).
    pub fn counts(&self, filter: impl Fn(&Comment) -> bool) -> Counts {
        let mut c = Counts::default();
        for (ci, l) in self.located.iter().enumerate() {
            if l.chapter.is_none() || !filter(&self.comments[ci]) {
                continue;
            }
            match self.status(ci) {
                "exact" => c.exact += 1,
                "fuzzy" => c.fuzzy += 1,
                "page" => c.page += 1,
                _ => c.orphan += 1,
            }
        }
        c
    }

    /// Where comment `ci` lies in a code block of its chapter: (block number, offset in chars
    /// from the block's start, matched text). The client paints these itself.
    pub fn code_spot(&self, ci: usize) -> Option<(usize, usize, &str)> {
        let ch = self.located[ci].chapter?;
        let r = self.located[ci].resolution.as_ref()?;
        let p = r.place.as_ref().filter(|_| r.block.is_none())?;
        let text = &self.texts[ch];
        let n = text.code_block_holding(&p.text)?;
        let cb = &text.code_blocks[n];
        // The offset counts Unicode scalar values (chars), not UTF-16 units.
        let offset = text.text[cb.text.start..p.text.start].chars().count();
        Some((n, offset, &text.text[p.text.clone()]))
    }

    /// For comment `ci` placed with changes (fuzzy, or exact with its quote or context
    /// changed; text anchors only): the stored words and the words at the place now, from
    /// which the reader shows what changed. `was` is the stored prefix, quote and suffix with
    /// the contexts cut to whole words (their outer words may be cut off in the capture);
    /// `now` the page's text from [`CHANGE_SLACK`] more words before the place than the
    /// prefix holds to as many more after it than the suffix holds, so that words inserted
    /// next to the quote do not push the stored context out of it (the reader leaves out
    /// what `now` has beyond `was` at either end). Whitespace runs are one space. None when
    /// `now` holds `was` unchanged.
    pub fn change(&self, ci: usize) -> Option<(String, String)> {
        let l = &self.located[ci];
        let r = l.resolution.as_ref()?;
        let p = r.place.as_ref().filter(|_| r.block.is_none())?;
        if r.status != anchor::AnchorStatus::Fuzzy
            && !r.flags.quote_changed
            && !r.flags.context_changed
        {
            return None;
        }
        let a = self.comments[ci].as_map().get("anchor")?.as_object()?;
        let field = |k: &str| a.get(k).and_then(Value::as_str).unwrap_or_default();
        let prefix = field("prefix");
        let pre = prefix
            .find(char::is_whitespace)
            .map_or("", |i| &prefix[i..]);
        let suffix = field("suffix");
        let suf = suffix
            .rfind(char::is_whitespace)
            .map_or("", |i| &suffix[..i]);
        let collapse = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        let was = collapse(&format!("{pre}{}{suf}", field("quote")));
        let text = &self.texts[l.chapter?].text;
        let offset = |w: &str| w.as_ptr() as usize - text.as_ptr() as usize;
        let k = pre.split_whitespace().count() + CHANGE_SLACK;
        // The k-th word back from the place (or the first word, when fewer come before it).
        let start = text[..p.text.start]
            .split_whitespace()
            .rev()
            .take(k)
            .last()
            .map_or(p.text.start, offset);
        let end = text[p.text.end..]
            .split_whitespace()
            .take(suf.split_whitespace().count() + CHANGE_SLACK)
            .last()
            .map_or(p.text.end, |w| offset(w) + w.len());
        let now = collapse(&text[start..end]);
        (!now.contains(&was)).then_some((was, now))
    }

    /// The URL of comment `ci` in the book (`guide/setup.html?nb=ID`), if its page is in it.
    pub fn url(&self, ci: usize) -> Option<String> {
        let ch = self.located[ci].chapter?;
        let id = self.comments[ci].id()?;
        Some(format!("{}?nb={id}", self.chapters[ch].url))
    }

    /// Byte offset of every line start of chapter `ch`'s Markdown.
    pub fn line_starts(&self, ch: usize) -> &[usize] {
        &self.line_starts[ch]
    }
}

/// Whether an anchor result is worth a reader's marker: placed and not resolved.
pub fn is_live(c: &Comment) -> bool {
    c.status() != Some(notabene_store::Status::Resolved)
}
