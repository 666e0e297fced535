//! From an mdBook book and a store to [`BookAnchors`]: the chapters that have a source file (with
//! their page ids and repository-relative paths), the store's comments read for a build, and the
//! anchoring with the book's text options and threshold. The preprocessor, the `notabene` renderer
//! and `notabene anchors` all anchor through [`anchor`] (the preprocessor through
//! [`anchor_after`], which takes unchanged chapters from earlier builds, [`super::Earlier`]); both
//! also follow comments to other pages ([`super::follow`]).

use super::{BookAnchors, Chapter, Which};
use crate::Result;
use crate::model::book::condensed::BuildRead;
use crate::model::book::git::StateAsked;
use crate::model::book::{Book, PageIds};
use mdbook_preprocessor::book::{Book as MdBook, BookItem};
use notabene_anchoring::DEFAULT_THRESHOLD;
use notabene_core::say_err;
use notabene_core::slash_path;
use notabene_store::{Comment, Store};
use std::path::Path;

/// The chapters of `book` that have a source file, with their page ids. A chapter's
/// `source` is its file relative to the repository root (`<page-prefix>/<path>`), the path
/// an agent opens.
pub fn chapters(book: &MdBook, ids: &PageIds) -> Vec<Chapter> {
    let with_source: Vec<_> = book
        .iter()
        .filter_map(|item| match item {
            BookItem::Chapter(ch) => Some((ch, ch.path.as_ref()?, ch.source_path.as_ref()?)),
            _ => None,
        })
        .collect();
    // Each chapter's file is read when first asked for (a build whose anchoring is in its
    // memo reads none); its content copied on every thread.
    notabene_core::par::par_map(
        &with_source,
        notabene_core::par::default_threads(),
        |&(ch, path, source_path)| Chapter {
            page: ids.for_chapter(source_path),
            name: ch.name.clone(),
            url: slash_path(&path.with_extension("html")),
            source: source_key(ids, source_path),
            content: ch.content.clone(),
            disk: Some(super::Disk::at(ids.src_dir.join(source_path))),
        },
    )
}

/// A chapter's source file relative to the repository root: `<page-prefix>/<path>`, the key
/// [`Chapter::source`] carries.
pub fn source_key(ids: &PageIds, source_path: &Path) -> String {
    slash_path(&Path::new(&ids.prefix).join(source_path))
}

/// Reads the store's comments whole (for `comments.json`); problems are warnings (printed),
/// never a crash.
pub fn read_comments(store: &Store) -> Vec<Comment> {
    let (comments, warnings) = comments_of(store, Store::load);
    for w in warnings {
        say_err!("{w}");
    }
    comments
}

/// The store's comments as the preprocessor's build reads them, for a book whose space is
/// `space`: through the build's cache, resolved comments thin ([`Store::load_for_build`]), the
/// warnings returned (whole stderr lines) instead of printed — the binary's read-ahead prints
/// them only when its result is used.
pub fn read_comments_for_build(store: &Store, space: &str) -> (Vec<Comment>, Vec<String>) {
    comments_of(store, |s| s.load_for_build(space))
}

/// [`read_comments_for_build`] for a caller that schedules around it
/// ([`notabene_store::Store::load_condensed_seeing`]): the store's cache read once
/// `before_cache` returns, `seen` shown the store as listed (before any file is read when
/// `seen_first`; not at all when there is no store), and the cache's update handed back to be
/// written when the caller says.
pub fn read_comments_for_build_seeing(
    store: &Store,
    space: &str,
    before_cache: &(dyn Fn() + Sync),
    seen: &mut dyn FnMut(Option<&notabene_store::ListingState<'_>>),
    seen_first: bool,
) -> (
    Vec<Comment>,
    Vec<String>,
    Option<notabene_store::CacheUpdate>,
) {
    let mut update = None;
    let (comments, warnings) = comments_of(store, |s| {
        let (snap, u) = s.load_for_build_seeing(space, before_cache, seen, seen_first)?;
        update = Some(u);
        Ok(snap)
    });
    (comments, warnings, update)
}

/// [`read_comments_for_build`] through what the last build of a long-lived process read
/// ([`notabene_store::Recent`]), when there is one.
pub fn read_comments_for_build_after(
    store: &Store,
    space: &str,
    recent: Option<&notabene_store::Recent>,
) -> (Vec<Comment>, Vec<String>) {
    match recent {
        Some(recent) => comments_of(store, |s| s.load_for_build_recent(space, recent)),
        None => read_comments_for_build(store, space),
    }
}

/// The comments with an id of what `load` reads of `store`, and the warnings of reading it.
fn comments_of(
    store: &Store,
    load: impl FnOnce(&Store) -> Result<notabene_store::Snapshot>,
) -> (Vec<Comment>, Vec<String>) {
    if !store.exists() {
        return (Vec::new(), Vec::new());
    }
    match load(store) {
        Ok(snap) => {
            let warnings = snap.unreadable_warnings();
            let comments = snap
                .records
                .into_iter()
                .filter(|r| r.comment.id().is_some())
                .map(|r| r.comment)
                .collect();
            (comments, warnings)
        }
        Err(e) => (
            Vec::new(),
            vec![format!(
                "notabene: warning: {e} — building without comments"
            )],
        ),
    }
}

/// Anchors `comments` in `book` (as preprocessed for the HTML renderer) with the text options
/// and threshold of `book_cfg`, for its configured language; `which` says whether resolved
/// comments are looked for too.
pub fn anchor(
    book_cfg: &Book,
    book: &MdBook,
    comments: Vec<Comment>,
    which: Which,
) -> Result<(BookAnchors, PageIds)> {
    anchor_after(
        book_cfg,
        book,
        comments,
        which,
        &super::NothingEarlier,
        None,
    )
}

/// [`anchor`], taking from `earlier` what earlier builds computed of chapters that did not
/// change since ([`super::Earlier`]), and following with its memo. Following comments to other
/// pages is done again whole: it depends on the whole book. `git_state`: the repository's
/// state when the caller asked for it already ([`Repo::ask_state`](crate::model::book::Repo::ask_state);
/// else following asks for it, when the memo needs it).
pub fn anchor_after(
    book_cfg: &Book,
    book: &MdBook,
    comments: Vec<Comment>,
    which: Which,
    earlier: &dyn super::Earlier,
    git_state: Option<StateAsked>,
) -> Result<(BookAnchors, PageIds)> {
    let ids = PageIds::new(book_cfg);
    let options = crate::model::book::text_options(&book_cfg.mdbook)?;
    let threshold = book_cfg.config.threshold.unwrap_or(DEFAULT_THRESHOLD);
    let chapters = chapters(book, &ids);
    let memo = earlier.memo();
    let mut anchors = super::anchor_book_after(
        chapters,
        comments,
        &options,
        threshold,
        notabene_core::par::default_threads(),
        which,
        earlier,
    );
    anchors.sources = Some(super::source_map::Sources::of(book_cfg));
    for (ci, c) in anchors.comments.iter().enumerate() {
        let l = &mut anchors.located[ci];
        if l.chapter.is_none()
            && let Some(page) = c.page()
            && ids.locale_of(page) != ids.language
        {
            l.other_language = Some(ids.locale_of(page).to_string());
        }
    }
    let pages: std::collections::BTreeSet<String> =
        anchors.chapters.iter().map(|c| c.page.clone()).collect();
    // A comment the anchoring put on a chapter is on the book: counted by its chapter's
    // locale, without reading its page again (a big store has thousands).
    let counted: Vec<bool> = anchors
        .chapters
        .iter()
        .map(|c| ids.locale_of(&c.page) == ids.language)
        .collect();
    let on_book = anchors
        .located
        .iter()
        .filter(|l| l.chapter.is_some_and(|ch| counted[ch]))
        .count();
    let off_book = (anchors.comments.iter().zip(&anchors.located))
        .filter(|(_, l)| l.chapter.is_none())
        .filter_map(|(c, _)| c.page());
    anchors.mismatch = mismatch(&ids, &pages, on_book, off_book);
    let store = book_cfg.store();
    anchors.ambiguous = super::follow::follow(
        &mut anchors,
        &ids,
        (book_cfg.repo(), Some(store.root())),
        &options,
        threshold,
        memo.map(|m| (m, git_state)),
    );
    // Without a prefix to name, the line is for comments that stay off the book: when every
    // one of them was followed to its page (a chapter renamed), there is nothing to say.
    if anchors
        .mismatch
        .as_ref()
        .is_some_and(|m| m.suggested.is_none())
        && anchors.located.iter().zip(&anchors.comments).all(|(l, c)| {
            l.chapter.is_some() || c.page().is_none_or(|p| ids.locale_of(p) != ids.language)
        })
    {
        anchors.mismatch = None;
    }
    Ok((anchors, ids))
}

/// The store does not match the book: most of the store's comments for this language are on
/// pages the book does not have. `suggested` is the one `page-prefix` that would place the
/// most of them (when it places at least half), `missing` how many are off the book.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// Comments of this language whose stored page is not a page of the book.
    pub missing: usize,
    /// Comments of this language in the store.
    pub total: usize,
    /// The prefix their pages are under, when one substitution places most of them.
    pub suggested: Option<String>,
    /// How many of them the suggested prefix places.
    pub placed: usize,
}

impl Mismatch {
    /// The one-line diagnostic (without the `notabene: warning: ` head).
    pub fn message(&self, ids: &PageIds) -> String {
        let ours = if ids.prefix.is_empty() {
            "the book's src directory".to_string()
        } else {
            format!("{:?}", ids.prefix)
        };
        match &self.suggested {
            Some(p) => format!(
                "{} of the store's {} comments for this language are on pages this book does not have; they are under {p:?}, this book's pages under {ours} — set page-prefix = {p:?} in [preprocessor.notabene] (book.toml)",
                self.missing, self.total
            ),
            None => format!(
                "{} of the store's {} comments for this language are on pages this book does not have (this book's pages are under {ours}; see `notabene anchors`)",
                self.missing, self.total
            ),
        }
    }
}

/// Checks the store's pages against the book's: `pages` are the book's page ids, `on_book` the
/// comments of this language already known to be on one of them (not in `stored_pages`, whose
/// comments are looked at one by one). Returns a [`Mismatch`] when most of this language's
/// comments (at least one) are off the book.
pub fn mismatch<'a>(
    ids: &PageIds,
    pages: &std::collections::BTreeSet<String>,
    on_book: usize,
    stored_pages: impl Iterator<Item = &'a str>,
) -> Option<Mismatch> {
    let rests: std::collections::BTreeSet<&str> = pages
        .iter()
        .map(|p| {
            if ids.prefix.is_empty() {
                p.as_str()
            } else {
                p.strip_prefix(&format!("{}/", ids.prefix)).unwrap_or(p)
            }
        })
        .collect();
    let (mut total, mut missing) = (on_book, 0);
    let mut by_prefix: std::collections::BTreeMap<String, usize> = Default::default();
    for page in stored_pages {
        if ids.locale_of(page) != ids.language {
            continue;
        }
        total += 1;
        if pages.contains(page) {
            continue;
        }
        missing += 1;
        for (i, _) in page.match_indices('/') {
            if rests.contains(&page[i + 1..]) {
                *by_prefix.entry(page[..i].to_string()).or_default() += 1;
            }
        }
        if rests.contains(page) {
            *by_prefix.entry(String::new()).or_default() += 1;
        }
    }
    if missing == 0 || missing * 2 < total {
        return None;
    }
    let best = by_prefix
        .into_iter()
        .filter(|(p, _)| *p != ids.prefix)
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)));
    let (suggested, placed) = match best {
        Some((p, n)) if n * 2 >= missing => (Some(p), n),
        _ => (None, 0),
    };
    Some(Mismatch {
        missing,
        total,
        suggested,
        placed,
    })
}
