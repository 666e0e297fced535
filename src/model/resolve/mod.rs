//! Anchoring a whole book: every stored comment is matched to its chapter (by page id) and its
//! anchor re-found in that chapter's text model, pages in parallel, results in page order. Also
//! renders the per-comment `anchoring` object shared by the data islands, `comments.json` and
//! `notabene anchors --json`.

pub mod chapters;
pub mod follow;
pub mod report;
pub mod reuse;
pub mod source_map;

pub use reuse::Reuse;

use crate::model::book::forms::PrerenderedOf;
use crate::util::last_build::Keep;
use crate::util::memo::{Digest, Key, Memo};
use notabene_anchoring::text::{PageText, TextOptions, page_text};
use notabene_anchoring::{self as anchor, Place, Resolution, StoredAnchor};
use notabene_store::Comment;
use notabene_store::Scope;
use serde_json::{Map, Value, json};
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
    /// The Markdown file as it is on disk, when it differs from `content` (`{{#include}}`
    /// and other expansions); source positions are reported in this text.
    pub disk: Option<String>,
}

/// The compact forms of a comment written into the HTML: a chapter's data island and the
/// /comments list. Both leave out what the page already says and what only re-anchoring needs
/// — `space` when it is the book's, `hold: false`, `resolution: null`, `updatedAt` equal to
/// `createdAt`, the anchor's `prefix` and `suffix` — and the reader client restores the
/// defaults. `comments.json` and `notabene anchors --json` carry the full objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lean {
    /// In a chapter's island: also without `page` (the island's); `anchoring` holds `status`
    /// and, where the client paints, `block` (block index) or `code` (block, offset, text).
    /// In every lean form, `anchoring` also holds `followed`, `sameText` (page, chapter, url)
    /// and, for an anchor placed with changes, `changed` (`was`, `now`: see
    /// [`BookAnchors::change`]).
    Island,
    /// In the /comments list: a resolved comment's thread only as its first message, with
    /// `replies` (how many follow it); `anchoring` holds `status` and `chapter` (its title),
    /// and the comment's `url` follows (null when its page is not in the book).
    List,
    /// On a /review card: the whole thread, `anchoring` as in [`Lean::List`], and `url`.
    Card,
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

pub use crate::model::book::forms::lean_skips;

/// The anchoring of every comment of a book.
pub struct BookAnchors {
    /// Chapters in book order.
    pub chapters: Vec<Chapter>,
    /// Text model of each chapter (light ones, [`PageText::light`], from the build's memo).
    pub texts: Vec<Arc<PageText>>,
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

/// Anchors `comments` in `chapters` using up to `threads` threads.
pub fn anchor_book(
    chapters: Vec<Chapter>,
    comments: Vec<Comment>,
    options: &TextOptions,
    threshold: f64,
    threads: usize,
    which: Which,
) -> BookAnchors {
    anchor_book_reusing(
        chapters,
        comments,
        options,
        threshold,
        threads,
        which,
        Earlier::default(),
    )
}

/// What a build takes from earlier ones.
#[derive(Clone, Copy, Default)]
pub struct Earlier<'a> {
    /// The last build of this process (`serve`): a chapter whose Markdown and anchors looked
    /// for are unchanged gets its anchoring back, its text model whole.
    pub process: Option<&'a Reuse>,
    /// The build's memo (on disk, or kept in memory by `serve`): without `process`, a
    /// chapter's resolutions are looked up under the digest of its Markdown, the anchors
    /// looked for, the text options and the threshold (its text model light); and the
    /// decisions of following ([`follow::follow`]).
    pub memo: Option<&'a Memo>,
}

/// [`anchor_book`], taking from `earlier` the anchoring of every chapter whose Markdown and
/// anchors looked for are those of a build it kept, and keeping this build's there.
pub fn anchor_book_reusing(
    chapters: Vec<Chapter>,
    comments: Vec<Comment>,
    options: &TextOptions,
    threshold: f64,
    threads: usize,
    which: Which,
    earlier: Earlier<'_>,
) -> BookAnchors {
    let reuse = earlier.process;
    // The memo gives chapters their anchoring only where the process keeps none.
    let memo = earlier.memo.filter(|_| reuse.is_none());
    // Thin comments (a build's resolved ones) carry no anchor: only a build that does not look
    // for resolved comments may be handed them.
    debug_assert!(
        which == Which::Live || comments.iter().all(|c| c.prerendered().is_none()),
        "thin comments anchored with Which::All"
    );
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
    let wanted = |ci: usize| {
        which == Which::All || is_live(&comments[ci]) || comments[ci].scope() == Some(Scope::Page)
    };
    let jobs: Vec<usize> = (0..chapters.len()).collect();
    let kept = reuse
        .map(|r| r.take(options, threshold))
        .unwrap_or_default();
    let digests: Vec<std::sync::OnceLock<Digest>> =
        (0..chapters.len()).map(|_| Default::default()).collect();
    let results = notabene_core::par::par_map(&jobs, threads, |&ch| {
        let content = &chapters[ch].content;
        let anchors: Vec<Option<StoredAnchor>> = per_chapter[ch]
            .iter()
            .filter(|&&ci| wanted(ci))
            .map(|&ci| StoredAnchor::from_comment(comments[ci].as_map()))
            .collect();
        let key = reuse.map(|_| reuse::anchors_key(&anchors));
        if let Some(k) = &key
            && let Some(a) = kept.get(&chapters[ch].source)
            && a.matches(content, k)
        {
            let (text, res, lines) = (Arc::clone(&a.text), a.resolutions.clone(), a.lines.clone());
            return (text, res, lines, Keep::Reused);
        }
        let lines: Vec<usize> = std::iter::once(0)
            .chain(content.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        let (text, res) = match memo {
            Some(m) => {
                let digest = digests[ch].get_or_init(|| content_digest(content));
                from_memo(m, content, digest, &anchors, options, threshold)
            }
            None => {
                let text = page_text(content, options);
                let res = anchor::resolve_page(&text, &anchors, threshold);
                (text, res)
            }
        };
        let text = Arc::new(text);
        let keep = match key {
            Some(k) => Keep::New(reuse::Anchored::new(content, k, &text, &res, &lines)),
            None => Keep::Nothing,
        };
        (text, res, lines, keep)
    });
    let mut located: Vec<Located> = chapter_of
        .iter()
        .map(|&chapter| Located {
            chapter,
            ..Located::default()
        })
        .collect();
    let mut texts = Vec::with_capacity(results.len());
    let mut line_starts = Vec::with_capacity(results.len());
    let mut left = Vec::with_capacity(results.len());
    for (ch, (text, res, lines, keep)) in results.into_iter().enumerate() {
        left.push((chapters[ch].source.as_str(), keep));
        for (&ci, r) in per_chapter[ch].iter().filter(|&&ci| wanted(ci)).zip(res) {
            located[ci].resolution = r;
        }
        for &ci in per_chapter[ch].iter().filter(|&&ci| !wanted(ci)) {
            located[ci].not_anchored = true;
        }
        texts.push(text);
        line_starts.push(lines);
    }
    if let Some(r) = reuse {
        r.keep(options, threshold, kept, left);
    }
    BookAnchors {
        chapters,
        texts,
        comments,
        located,
        by_chapter: per_chapter,
        ambiguous: Vec::new(),
        mismatch: None,
        which,
        sources: None,
        line_starts,
        digests,
    }
}

/// A chapter's text model and resolutions through the build's memo: both as an earlier build
/// kept them — the model light — when the memo has both, else computed (the model whole)
/// and kept.
fn from_memo(
    memo: &Memo,
    content: &str,
    digest: &Digest,
    anchors: &[Option<StoredAnchor>],
    options: &TextOptions,
    threshold: f64,
) -> (PageText, Vec<Option<Resolution>>) {
    let res_key = memo_key(digest, anchors, options, threshold);
    let text_key = {
        let mut k = Key::new("light page_text");
        k.debug(options).digest(digest);
        k.finish()
    };
    let kept = memo
        .get(&res_key)
        .and_then(anchor::decode_resolutions)
        .filter(|res| res.len() == anchors.len());
    if let Some(res) = &kept
        && let Some(light) = memo
            .get(&text_key)
            .and_then(notabene_anchoring::text::light::decode)
    {
        return (light, res.clone());
    }
    let text = page_text(content, options);
    memo.put(text_key, notabene_anchoring::text::light::encode(&text));
    let res = match kept {
        Some(res) => res,
        None => {
            let res = anchor::resolve_page(&text, anchors, threshold);
            memo.put(res_key, anchor::encode_resolutions(&res));
            res
        }
    };
    (text, res)
}

/// The memo's address of a chapter's resolutions: everything [`anchor::resolve_page`] computes
/// them from (the text model is a function of the Markdown, given by its `digest`, and the
/// text options).
fn memo_key(
    digest: &Digest,
    anchors: &[Option<StoredAnchor>],
    options: &TextOptions,
    threshold: f64,
) -> Digest {
    let mut k = Key::new("resolve_page");
    k.debug(options).u64(threshold.to_bits()).digest(digest);
    feed_anchors(&mut k, anchors);
    k.finish()
}

/// Adds every field of each of `anchors`, in order, to `k`.
fn feed_anchors(k: &mut Key, anchors: &[Option<StoredAnchor>]) {
    let opt = |k: &mut Key, s: Option<&str>| {
        match s {
            None => k.u64(0),
            Some(s) => k.u64(1).str(s),
        };
    };
    k.u64(anchors.len() as u64);
    for a in anchors {
        match a {
            None => {
                k.u64(0);
            }
            Some(StoredAnchor::Page) => {
                k.u64(1);
            }
            Some(StoredAnchor::Text(t)) => {
                k.u64(2).str(t.quote).str(t.prefix).str(t.suffix);
                opt(k, t.section);
            }
            Some(StoredAnchor::Block(b)) => {
                k.u64(3).str(b.kind).str(b.key).u64(b.index as u64);
                opt(k, b.section);
            }
        }
    }
}

/// The SHA-256 of a chapter's Markdown, which the memo's keys hold in place of the text.
fn content_digest(content: &str) -> Digest {
    let mut k = Key::new("markdown");
    k.str(content);
    k.finish()
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

    /// The position of `place` in the chapter's file on disk: the same bytes when the chapter
    /// was not expanded, else the occurrence of the matched Markdown nearest to it (None when
    /// the text comes from an included file).
    fn source_json(&self, ch: usize, place: &Place) -> Value {
        let chapter = &self.chapters[ch];
        // Text an include brought in: its place in the included file.
        if let Some(place) = self
            .sources
            .as_ref()
            .and_then(|src| src.included_place(chapter, place.source.clone()))
        {
            return place;
        }
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
            if let Some(lang) = &l.other_language {
                m.insert("language".into(), lang.clone().into());
            }
            if let Some((ch, r)) = &l.elsewhere
                && let Some(p) = &r.suggestion
            {
                m.insert(
                    "suggestion".into(),
                    json!({
                        "text": self.texts[*ch].text[p.text.clone()].to_string(),
                        "source": self.source_json(*ch, p),
                        "page": self.chapters[*ch].page,
                        "confidence": r.confidence,
                    }),
                );
            }
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
        m.insert("url".into(), self.url(ci).into());
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
        if let Some((to, r)) = &l.same_text {
            let other = &self.chapters[*to];
            let text = r
                .place
                .as_ref()
                .map(|p| self.texts[*to].text[p.text.clone()].to_string());
            m.insert(
                "sameText".into(),
                json!({ "page": other.page, "chapter": other.name, "url": other.url, "text": text }),
            );
        }
        if let Some((was, now)) = self.change(ci) {
            m.insert("changed".into(), json!({ "was": was, "now": now }));
        }
        if let Some(f) = &l.followed {
            m.insert(
                "followed".into(),
                json!({ "from": f.from, "to": chapter.page, "by": f.by.as_str() }),
            );
        }
        if let Some(r) = r {
            m.insert(
                "flags".into(),
                serde_json::to_value(r.flags).unwrap_or(Value::Null),
            );
            if let Some(b) = r.block {
                m.insert("block".into(), b.into());
            }
            if let Some((block, offset, text)) = self.code_spot(ci) {
                m.insert(
                    "code".into(),
                    json!({ "block": block, "offset": offset, "text": text }),
                );
            }
        }
        Value::Object(m)
    }

    /// Where comment `ci` lies in a code block of its chapter: (block number, offset in chars
    /// from the block's start, matched text). The client paints these itself.
    fn code_spot(&self, ci: usize) -> Option<(usize, usize, &str)> {
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
        if r.status != anchor::Status::Fuzzy && !r.flags.quote_changed && !r.flags.context_changed {
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

    /// Appends comment `ci` to `out` in its compact [`Lean`] form (JSON, not yet escaped for
    /// a `<script>`), `space` being the book's.
    pub fn write_lean(&self, ci: usize, form: Lean, space: &str, out: &mut Vec<u8>) {
        use crate::model::book::forms as lean;
        use notabene_store::json::ObjectWriter;
        let comment = &self.comments[ci];
        // A followed comment keeps its stored page: the write API finds it there.
        let page_known = form == Lean::Island && self.located[ci].followed.is_none();
        let first_message_only = form == Lean::List && !is_live(comment);
        // A thin (resolved) comment's fields were written when its file was read: the island
        // and list forms, for this space (a resolved comment is never followed).
        let pre = comment
            .prerendered()
            .filter(|p| p.space == space)
            .and_then(|p| match form {
                Lean::Island if page_known => Some(&p.island),
                Lean::List => Some(&p.list),
                _ => None,
            });
        let mut w = match pre {
            Some(fields) => {
                out.extend_from_slice(fields.as_bytes());
                ObjectWriter::resume(out, fields.len() == 1)
            }
            None => {
                let mut w = ObjectWriter::new(out);
                lean::write_own_fields(
                    &mut w,
                    comment.as_map(),
                    space,
                    page_known,
                    first_message_only,
                );
                w
            }
        };
        let mut aw = ObjectWriter::new(w.key("anchoring"));
        aw.member("status", self.status(ci));
        if let Some(f) = &self.located[ci].followed {
            let mut fw = ObjectWriter::new(aw.key("followed"));
            fw.member("from", &f.from);
            if let Some(ch) = self.located[ci].chapter {
                fw.member("to", &self.chapters[ch].page);
            }
            fw.member("by", f.by.as_str());
            fw.end();
        }
        if let Some((to, _)) = &self.located[ci].same_text {
            let mut sw = ObjectWriter::new(aw.key("sameText"));
            sw.member("page", &self.chapters[*to].page);
            sw.member("chapter", &self.chapters[*to].name);
            sw.member("url", &self.chapters[*to].url);
            sw.end();
        }
        if let Some((was, now)) = self.change(ci) {
            let mut cw = ObjectWriter::new(aw.key("changed"));
            cw.member("was", &was);
            cw.member("now", &now);
            cw.end();
        }
        match form {
            Lean::Island => {
                if let Some(b) = self.located[ci].resolution.as_ref().and_then(|r| r.block) {
                    aw.member("block", &b);
                }
                if let Some((block, offset, text)) = self.code_spot(ci) {
                    let mut cw = ObjectWriter::new(aw.key("code"));
                    cw.member("block", &block);
                    cw.member("offset", &offset);
                    cw.member("text", text);
                    cw.end();
                }
            }
            Lean::List | Lean::Card => {
                if let Some(ch) = self.located[ci].chapter {
                    aw.member("chapter", &self.chapters[ch].name);
                }
            }
        }
        aw.end();
        if form != Lean::Island {
            w.member("url", &self.url(ci));
        }
        w.end();
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
    c.status() != Some(notabene_store::Status::Resolved)
}
