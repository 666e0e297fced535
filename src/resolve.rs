//! Anchoring a whole book: every stored comment is matched to its chapter (by page id) and its
//! anchor re-found in that chapter's text model, pages in parallel, results in page order.
//! Also renders the per-comment `anchoring` object shared by the data islands, `comments.json`
//! and `notabene anchors --json`.

use crate::anchor::{self, Place, Resolution, StoredAnchor};
use crate::store::Comment;
use crate::text::{PageText, TextOptions, page_text};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

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
    /// The Markdown file as it is on disk, when it differs from `content` (`{{#include}}`
    /// and other expansions); source positions are reported in this text.
    pub disk: Option<String>,
}

/// Where a comment landed.
#[derive(Debug, Clone)]
pub struct Located {
    /// Index of the chapter holding the comment's page, if it is in this book.
    pub chapter: Option<usize>,
    /// The anchoring result (`None` for page-scope comments and comments not in this book).
    pub resolution: Option<Resolution>,
}

/// The anchoring of every comment of a book.
pub struct BookAnchors {
    /// Chapters in book order.
    pub chapters: Vec<Chapter>,
    /// Text model of each chapter.
    pub texts: Vec<PageText>,
    /// The comments, in store order.
    pub comments: Vec<Comment>,
    /// One entry per comment.
    pub located: Vec<Located>,
    /// The comments of each chapter (indices into `comments`, in store order).
    pub by_chapter: Vec<Vec<usize>>,
    /// Byte offset of every line start of each chapter's Markdown.
    line_starts: Vec<Vec<usize>>,
}

/// Anchors `comments` in `chapters` using up to `threads` threads.
pub fn anchor_book(
    chapters: Vec<Chapter>,
    comments: Vec<Comment>,
    options: &TextOptions,
    threshold: f64,
    threads: usize,
) -> BookAnchors {
    let mut by_page: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, c) in chapters.iter().enumerate() {
        by_page.entry(c.page.as_str()).or_insert(i);
    }
    let mut per_chapter: Vec<Vec<usize>> = vec![Vec::new(); chapters.len()];
    let mut chapter_of = vec![None; comments.len()];
    for (ci, c) in comments.iter().enumerate() {
        if let Some(&ch) = c.page().and_then(|p| by_page.get(p)) {
            per_chapter[ch].push(ci);
            chapter_of[ci] = Some(ch);
        }
    }
    let jobs: Vec<usize> = (0..chapters.len()).collect();
    let results = anchor::par_map(&jobs, threads, |&ch| {
        let content = &chapters[ch].content;
        let lines: Vec<usize> = std::iter::once(0)
            .chain(content.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        let text = page_text(content, options);
        let anchors: Vec<Option<StoredAnchor>> = per_chapter[ch]
            .iter()
            .map(|&ci| StoredAnchor::from_comment(comments[ci].as_map()))
            .collect();
        let res = anchor::resolve_page(&text, &anchors, threshold);
        (text, res, lines)
    });
    let mut located: Vec<Located> = chapter_of
        .iter()
        .map(|&chapter| Located {
            chapter,
            resolution: None,
        })
        .collect();
    let mut texts = Vec::with_capacity(results.len());
    let mut line_starts = Vec::with_capacity(results.len());
    for (ch, (text, res, lines)) in results.into_iter().enumerate() {
        for (&ci, r) in per_chapter[ch].iter().zip(res) {
            located[ci].resolution = r;
        }
        texts.push(text);
        line_starts.push(lines);
    }
    BookAnchors {
        chapters,
        texts,
        comments,
        located,
        by_chapter: per_chapter,
        line_starts,
    }
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
    /// The anchoring status word of comment `ci`: exact, fuzzy, orphan or page.
    pub fn status(&self, ci: usize) -> &'static str {
        let l = &self.located[ci];
        match (&l.chapter, &l.resolution) {
            (Some(_), None) => "page",
            (_, Some(r)) => r.status.as_str(),
            (None, None) => "orphan",
        }
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

    /// The position of `place` in the chapter's file on disk: the same bytes when the chapter
    /// was not expanded, else the occurrence of the matched Markdown nearest to it (None when
    /// the text comes from an included file).
    fn source_json(&self, ch: usize, place: &Place) -> Value {
        let chapter = &self.chapters[ch];
        let range = match &chapter.disk {
            None => Some(place.source.clone()),
            Some(disk) => {
                let slice = &chapter.content[place.source.clone()];
                disk.match_indices(slice)
                    .map(|(i, _)| i)
                    .min_by_key(|i| i.abs_diff(place.source.start))
                    .map(|i| i..i + slice.len())
            }
        };
        let Some(range) = range else {
            return Value::Null;
        };
        let file = chapter.disk.as_deref().unwrap_or(&chapter.content);
        let pos = range.start.min(file.len());
        let starts = &self.line_starts[ch];
        let line = starts.partition_point(|&s| s <= pos).max(1);
        let line_start = starts[line - 1];
        let column = file[line_start..file.floor_char_boundary(pos)]
            .chars()
            .count()
            + 1;
        json!({ "path": chapter.source, "start": range.start, "end": range.end, "line": line, "column": column })
    }

    /// The `anchoring` object of comment `ci`.
    pub fn anchoring_json(&self, ci: usize) -> Value {
        let l = &self.located[ci];
        let mut m = Map::new();
        m.insert("status".into(), self.status(ci).into());
        let Some(ch) = l.chapter else {
            m.insert("confidence".into(), Value::Null);
            m.insert("reason".into(), "page-not-in-book".into());
            return Value::Object(m);
        };
        let chapter = &self.chapters[ch];
        let text = &self.texts[ch];
        let r = l.resolution.as_ref();
        m.insert(
            "confidence".into(),
            r.map(|r| json!(r.confidence)).unwrap_or(Value::Null),
        );
        let matched = r
            .and_then(|r| r.place.as_ref())
            .map(|p| match r.and_then(|r| r.block) {
                Some(b) => text.blocks[b].label.clone(),
                None => text.text[p.text.clone()].to_string(),
            });
        m.insert(
            "text".into(),
            matched.map(Value::from).unwrap_or(Value::Null),
        );
        m.insert("chapter".into(), chapter.name.clone().into());
        let id = self.comments[ci].id().unwrap_or_default();
        m.insert("url".into(), format!("{}?nb={id}", chapter.url).into());
        m.insert(
            "source".into(),
            r.and_then(|r| r.place.as_ref())
                .map(|p| self.source_json(ch, p))
                .unwrap_or(Value::Null),
        );
        let suggestion = r.and_then(|r| r.suggestion.as_ref()).map(|p| {
            json!({ "text": text.text[p.text.clone()].to_string(), "source": self.source_json(ch, p) })
        });
        m.insert("suggestion".into(), suggestion.unwrap_or(Value::Null));
        if let Some(r) = r {
            m.insert(
                "flags".into(),
                serde_json::to_value(r.flags).unwrap_or(Value::Null),
            );
            if let Some(b) = r.block {
                m.insert("block".into(), b.into());
            }
            if let Some(p) = &r.place
                && r.block.is_none()
                && let Some((n, cb)) = text
                    .code_blocks
                    .iter()
                    .enumerate()
                    .find(|(_, cb)| cb.text.start <= p.text.start && p.text.end <= cb.text.end)
            {
                // The offset counts Unicode scalar values (chars), not UTF-16 units.
                let offset = text.text[cb.text.start..p.text.start].chars().count();
                m.insert("code".into(), json!({ "block": n, "offset": offset, "text": text.text[p.text.clone()].to_string() }));
            }
        }
        Value::Object(m)
    }

    /// The comment as a chapter's data island carries it: the stored object plus a lean
    /// `anchoring` (status, confidence, flags, block, code) — the reader is on that chapter.
    pub fn island_json(&self, ci: usize) -> Value {
        self.lean_json(ci, &["text", "chapter", "url", "source", "suggestion"])
    }

    /// The comment as the /comments list carries it: the stored object plus its anchoring
    /// status, chapter and URL.
    pub fn list_json(&self, ci: usize) -> Value {
        self.lean_json(
            ci,
            &["text", "source", "suggestion", "flags", "code", "block"],
        )
    }

    fn lean_json(&self, ci: usize, drop: &[&str]) -> Value {
        let mut anchoring = self.anchoring_json(ci);
        if let Some(a) = anchoring.as_object_mut() {
            for key in drop {
                a.remove(*key);
            }
        }
        let mut m = self.comments[ci].as_map().clone();
        m.insert("anchoring".into(), anchoring);
        Value::Object(m)
    }

    /// The comment object as stored, plus its `anchoring`.
    pub fn comment_json(&self, ci: usize) -> Value {
        let mut m = self.comments[ci].as_map().clone();
        m.insert("anchoring".into(), self.anchoring_json(ci));
        Value::Object(m)
    }
}

/// Whether an anchor result is worth a reader's marker: placed and not resolved.
pub fn is_live(c: &Comment) -> bool {
    c.status() != Some("resolved")
}
