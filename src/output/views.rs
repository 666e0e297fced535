//! The generated chapters: /review (one card per `addressed` comment, found by inverting the
//! journal, with real git diffs), /comments (every comment) and /journal (entries newest first).
//! Each is a small Markdown chapter holding a mount point and a JSON data island that the reader
//! client renders with `textContent` — comment text never becomes markup.

use crate::model::book::condensed::{self, PrerenderedOf};
use crate::model::book::{Book, PageIds, Repo};
use crate::model::resolve::BookAnchors;
use crate::output::forms::{CommentForms as _, Lean};
use crate::util::memo::Memo;
use data::ViewData;
use mdbook_preprocessor::book::{Book as MdBook, BookItem};
use notabene_anchoring::text::{PageText, TextOptions, page_text};
use notabene_store::{Comment, Status};
use order::ListKey;
use serde_json::{Value, json};
use std::collections::BTreeMap;

mod data;
mod order;

/// A generated chapter: file name, title, Markdown content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    /// `review`, `comments` or `journal`.
    pub name: &'static str,
    /// Path of the chapter (`review.md`).
    pub path: String,
    /// Chapter title.
    pub title: String,
    /// Markdown content.
    pub content: String,
}

fn french(book: &Book) -> bool {
    book.build_language().starts_with("fr")
}

fn text_of(v: Option<&Value>) -> &str {
    v.and_then(Value::as_str).unwrap_or("")
}

/// The first 40 characters of the text naming comment `c` ([`condensed::naming`]), whitespace runs
/// as one space.
fn snippet(c: &Comment) -> String {
    let raw = match c.prerendered() {
        Some(p) => p.naming(),
        None => condensed::naming(c.as_map()),
    };
    let flat = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > 40 {
        format!("{}…", flat.chars().take(40).collect::<String>())
    } else {
        flat
    }
}

/// The paragraphs (rendered lines) that differ between two versions of a chapter's Markdown,
/// in the text readers see (the text model: link targets, emphasis markers and other syntax
/// gone): `{section, del, add}` per run of changed paragraphs, `del` and `add` the old and new
/// text (`\n` between paragraphs, empty for a pure addition or removal), `section` the heading
/// above it. The client marks the changed words.
pub fn rendered_changes(old: &str, new: &str, options: &TextOptions) -> Vec<Value> {
    let (a, b) = (page_text(old, options), page_text(new, options));
    // Each rendered line, with ` · ` between the cells of a table row (the page's text runs
    // them together), spaces collapsed; with the text offset it starts at.
    let lines = |t: &PageText| -> Vec<(usize, String)> {
        let mut out = Vec::new();
        let (mut line, mut start, mut block) = (String::new(), 0, None);
        let mut push = |line: &mut String, start: usize| {
            let flat = line.split_whitespace().collect::<Vec<_>>().join(" ");
            if !flat.is_empty() {
                out.push((start, flat));
            }
            line.clear();
        };
        for seg in &t.segments {
            let text = &t.text[seg.text.clone()];
            for (k, part) in text.split('\n').enumerate() {
                if k > 0 {
                    push(&mut line, start);
                    start = seg.text.start
                        + text.split('\n').take(k).map(|p| p.len() + 1).sum::<usize>();
                    block = None;
                }
                if part.is_empty() {
                    continue;
                }
                if block.is_some_and(|b| b != seg.block) && !line.trim().is_empty() {
                    line.push_str(" · ");
                }
                if line.is_empty() {
                    start = seg.text.start;
                }
                line.push_str(part);
                block = Some(seg.block);
            }
        }
        push(&mut line, start);
        out
    };
    let (la, lb) = (lines(&a), lines(&b));
    let ta: Vec<&str> = la.iter().map(|l| l.1.as_str()).collect();
    let tb: Vec<&str> = lb.iter().map(|l| l.1.as_str()).collect();
    let mut pairs = crate::util::lcs::matches(&ta, &tb);
    pairs.push((ta.len(), tb.len()));
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    for (mi, mj) in pairs {
        if mi > i || mj > j {
            let section = match lb.get(j).filter(|_| mj > j) {
                Some(l) => b.section_at(l.0),
                None => la.get(i).and_then(|l| a.section_at(l.0)),
            };
            out.push(json!({
                "section": section,
                "del": ta[i..mi].join("\n"),
                "add": tb[j..mj].join("\n"),
            }));
        }
        (i, j) = (mi + 1, mj + 1);
    }
    out
}

/// Everything the views need from the book: comments with anchoring, journal, URLs per page.
pub struct ViewInput<'a> {
    /// The anchored comments.
    pub anchors: &'a BookAnchors,
    /// The journal entries (oldest first, as stored).
    pub journal: &'a [Value],
    /// The book configuration.
    pub book: &'a Book,
    /// Page ids of the book.
    pub ids: &'a PageIds,
    /// The git repository for diffs.
    pub repo: &'a Repo,
    /// The build's memo: a view's data element, deflated once, is kept under its JSON.
    pub memo: &'a Memo,
}

impl ViewInput<'_> {
    /// The chapter of `page`: its own, else the one its comments were followed to because
    /// git renamed its file (journal `changes[].page` is history and keeps the old page).
    fn chapter_of_page(&self, page: &str) -> Option<&crate::model::resolve::Chapter> {
        let chapters = &self.anchors.chapters;
        use crate::model::book::git::MoveKind;
        use crate::model::resolve::FollowedBy;
        // A rename first: on a split, the copy is the other part.
        let moved = |kind: MoveKind| {
            self.anchors
                .located
                .iter()
                .filter(|l| {
                    l.followed
                        .as_ref()
                        .is_some_and(|f| f.from == page && f.by == FollowedBy::Git(kind))
                })
                .find_map(|l| l.chapter.map(|ch| &chapters[ch]))
        };
        chapters
            .iter()
            .find(|c| c.page == page)
            .or_else(|| moved(MoveKind::Rename))
            .or_else(|| moved(MoveKind::Copy))
    }

    fn url_of_page(&self, page: &str) -> Option<String> {
        self.chapter_of_page(page).map(|c| c.url.clone())
    }

    /// The order of /review's cards and suggestions: page, creation time, id.
    fn card_order(&self, ci: usize) -> (Option<&str>, &str, Option<&str>) {
        let c = &self.anchors.comments[ci];
        (c.page(), text_of(c.get("createdAt")), c.id())
    }

    /// Comment `ci` in its [`Lean::Card`] form.
    fn lean_card(&self, ci: usize) -> Value {
        let mut out = Vec::new();
        self.anchors
            .write_lean(ci, Lean::Card, &self.book.config.space, &mut out);
        serde_json::from_slice(&out).unwrap_or(Value::Null)
    }

    fn comment_index(&self, id: &str) -> Option<usize> {
        self.anchors
            .comments
            .iter()
            .position(|c| c.id() == Some(id))
    }

    /// A change's diff for the client: git's unified diff, and `rendered`, the changed
    /// paragraphs as readers see them (see [`rendered_changes`]).
    fn diff_value(
        &self,
        file: Option<&std::path::Path>,
        git_ref: Option<&str>,
        options: &TextOptions,
    ) -> Value {
        let diff = self.repo.diff(file, git_ref);
        let has_text = !diff.text.is_empty();
        let mut v = serde_json::to_value(diff).unwrap_or(Value::Null);
        if has_text
            && let (Some(m), Some((old, new))) =
                (v.as_object_mut(), self.repo.versions(file, git_ref))
        {
            m.insert(
                "rendered".into(),
                rendered_changes(&old, &new, options).into(),
            );
        }
        v
    }

    /// The /review data: one card per addressed comment, sorted by page, creation time, id.
    pub fn review(&self) -> Value {
        let mut order: Vec<usize> = (0..self.anchors.comments.len())
            .filter(|&ci| self.anchors.comments[ci].status() == Some(Status::Addressed))
            .collect();
        order.sort_by_key(|&ci| self.card_order(ci));
        let mut diffs: BTreeMap<(String, Option<String>), (usize, Value)> = BTreeMap::new();
        let options = crate::model::book::text_options(&self.book.mdbook).unwrap_or_default();
        let cards: Vec<Value> = order
            .into_iter()
            .map(|ci| {
                let c = &self.anchors.comments[ci];
                let id = c.id().unwrap_or_default();
                let resolution = c.get("resolution").and_then(Value::as_object);
                let link = resolution.and_then(|r| r.get("journalEntryId")).and_then(Value::as_str).filter(|s| !s.is_empty());
                let entry = link.and_then(|l| self.journal.iter().find(|e| e.get("id").and_then(Value::as_str) == Some(l)));
                let changes: Vec<&Value> = entry
                    .and_then(|e| e.get("changes"))
                    .and_then(Value::as_array)
                    .map(|chs| {
                        chs.iter()
                            .filter(|ch| ch.get("commentIds").and_then(Value::as_array).is_some_and(|ids| ids.iter().any(|x| x.as_str() == Some(id))))
                            .collect()
                    })
                    .unwrap_or_default();
                let problem = match (link, entry) {
                    (None, _) => Some("no-journal-link"),
                    (Some(_), None) => Some("unknown-journal-entry"),
                    _ if changes.is_empty() => Some("not-in-journal-changes"),
                    _ => None,
                };
                let changes: Vec<Value> = changes
                    .into_iter()
                    .map(|ch| self.card_change(ch, id, &mut diffs, &options))
                    .collect();
                json!({
                    "comment": self.lean_card(ci),
                    "note": resolution.and_then(|r| r.get("note")).and_then(Value::as_str),
                    "entry": entry.map(|e| json!({
                        "id": e.get("id"), "date": e.get("date"), "title": e.get("title"), "summary": e.get("summary"),
                    })),
                    "problem": problem,
                    "changes": changes,
                })
            })
            .collect();
        let mut shared: Vec<(usize, Value)> = diffs.into_values().collect();
        shared.sort_by_key(|d| d.0);
        // Suggested edits waiting to be applied, in the same order as the cards.
        let mut waiting: Vec<usize> = (0..self.anchors.comments.len())
            .filter(|&ci| {
                let c = &self.anchors.comments[ci];
                c.status() == Some(Status::Open) && c.suggestion().is_some_and(|s| !s.applied)
            })
            .collect();
        waiting.sort_by_key(|&ci| self.card_order(ci));
        let suggestions: Vec<Value> = waiting.into_iter().map(|ci| self.lean_card(ci)).collect();
        json!({
            "view": "review",
            "mode": self.book.config.review.as_str(),
            "space": self.book.config.space,
            "suggestions": suggestions,
            "cards": cards,
            "diffs": shared.into_iter().map(|d| d.1).collect::<Vec<_>>(),
            "commands": {
                "approve": "notabene comments done {id} --status resolved",
                "reject": "notabene comments reopen {id} --reply \"{reason}\"",
            },
        })
    }

    /// One change of a card's journal entry: its page, what and why, the diff (shared by the
    /// cards through `diffs`, one per page and ref), and the other comments it also carries.
    fn card_change(
        &self,
        ch: &Value,
        id: &str,
        diffs: &mut BTreeMap<(String, Option<String>), (usize, Value)>,
        options: &TextOptions,
    ) -> Value {
        let page = text_of(ch.get("page")).to_string();
        let git_ref = ch
            .get("ref")
            .and_then(Value::as_str)
            .filter(|r| !r.is_empty())
            .map(str::to_string);
        let file = self.ids.source_file(&page).or_else(|| {
            self.chapter_of_page(&page)
                .and_then(|c| self.ids.source_file(&c.page))
        });
        // Cards share their diffs: one entry per page and ref in `diffs`.
        let next = diffs.len();
        let diff = diffs
            .entry((page.clone(), git_ref.clone()))
            .or_insert_with(|| {
                (
                    next,
                    self.diff_value(file.as_deref(), git_ref.as_deref(), options),
                )
            })
            .0;
        let also: Vec<Value> = ch
            .get("commentIds")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|other| *other != id)
            .map(|other| match self.comment_index(other) {
                Some(oi) => json!({ "id": other, "snippet": snippet(&self.anchors.comments[oi]), "url": self.anchors.url(oi) }),
                None => json!({ "id": other, "snippet": "", "url": null }),
            })
            .collect();
        json!({
            "page": page,
            "what": text_of(ch.get("what")),
            "why": text_of(ch.get("why")),
            "url": self.url_of_page(&page),
            "chapter": self.chapter_of_page(&page).map(|c| c.name.clone()),
            "file": file.as_deref().and_then(|f| self.repo.relative(f)),
            "diff": diff,
            "also": also,
        })
    }

    /// The /comments data as JSON text: the book's `space` and every comment in its
    /// [`Lean::List`] form (anchoring status, chapter, URL), newest update first. Comments on
    /// other languages' pages are left out (their text is in those builds, never an orphan
    /// here) and counted by language in `otherLanguages`.
    pub fn comments(&self) -> String {
        self.comments_data().joined()
    }

    /// [`ViewInput::comments`] in the pieces it is written in, on every thread.
    fn comments_data(&self) -> ViewData {
        use notabene_store::json::ObjectWriter;
        let comments = &self.anchors.comments;
        let other_languages = self.anchors.other_languages();
        let threads = notabene_core::par::default_threads();
        // Each comment's key read on every thread (a big store's comments are seldom in the
        // processor's cache), then sorted.
        let located = &self.anchors.located;
        let all: Vec<usize> = (0..comments.len().min(located.len())).collect();
        let spans: Vec<&[usize]> = all.chunks(all.len().div_ceil(threads).max(1024)).collect();
        let keys = notabene_core::par::par_map(&spans, threads, |span| {
            (span.iter())
                .filter(|&&ci| located[ci].other_language.is_none())
                .map(|&ci| {
                    let c = &comments[ci];
                    ListKey::of(ci, c.updated_at(), c.id().unwrap_or(""))
                })
                .collect::<Vec<_>>()
        });
        let mut order: Vec<ListKey> = keys.into_iter().flatten().collect();
        order.sort_by(ListKey::cmp);
        let order: Vec<usize> = order.into_iter().map(|k| k.ci).collect();
        let space = &self.book.config.space;
        // Entries written in parallel chunks, joined in order.
        let chunks: Vec<&[usize]> = order
            .chunks(order.len().div_ceil(threads).max(64))
            .collect();
        let firsts: Vec<(usize, &[usize])> = chunks.into_iter().enumerate().collect();
        // Each part after the first opens with the comma that joins it to the one before; it is
        // hashed where it was written when the memo will look for the list.
        let hash = self.memo.is_on();
        let parts = notabene_core::par::par_map(&firsts, threads, |&(i, chunk)| {
            let mut part = Vec::with_capacity(512 * chunk.len());
            for (n, &ci) in chunk.iter().enumerate() {
                if n > 0 || i > 0 {
                    part.push(b',');
                }
                self.anchors.write_lean(ci, Lean::List, space, &mut part);
            }
            let digest = hash.then(|| ViewData::digest(&part));
            (part, digest)
        });
        let mut head = Vec::with_capacity(64);
        let mut w = ObjectWriter::new(&mut head);
        w.member("view", "comments");
        w.member("space", space);
        if !other_languages.is_empty() {
            w.member("otherLanguages", &other_languages);
        }
        w.key("comments").push(b'[');
        let mut pieces = Vec::with_capacity(parts.len() + 2);
        pieces.push((head, None));
        pieces.extend(parts);
        pieces.push((b"]}".to_vec(), None));
        ViewData::of(pieces)
    }

    /// The /journal data: entries newest first; each change with its chapter's URL and title.
    pub fn journal(&self) -> Value {
        let entries: Vec<Value> = self
            .journal
            .iter()
            .rev()
            .map(|e| {
                let mut e = e.clone();
                if let Some(changes) = e.get_mut("changes").and_then(Value::as_array_mut) {
                    for ch in changes.iter_mut() {
                        let chapter = ch
                            .get("page")
                            .and_then(Value::as_str)
                            .and_then(|p| self.chapter_of_page(p));
                        let url = chapter.map(|c| Value::from(c.url.clone()));
                        let title = chapter.map(|c| Value::from(c.name.clone()));
                        if let Some(o) = ch.as_object_mut() {
                            o.insert("url".into(), url.unwrap_or(Value::Null));
                            o.insert("chapter".into(), title.unwrap_or(Value::Null));
                        }
                    }
                }
                e
            })
            .collect();
        json!({ "view": "journal", "entries": entries })
    }

    /// The three generated chapters.
    pub fn chapters(&self, taken: &dyn Fn(&str) -> bool) -> Vec<View> {
        let fr = french(self.book);
        let js = notabene_store::json::to_js_compact;
        let specs: [(&'static str, &str, &str, &str); 3] = [
            (
                "review",
                "Review",
                "Relecture",
                "Agent changes waiting for validation, with their diffs.",
            ),
            (
                "comments",
                "All comments",
                "Tous les commentaires",
                "Every review comment of the book.",
            ),
            (
                "journal",
                "Journal",
                "Journal",
                "What changed and why, newest first.",
            ),
        ];
        // Each view's data (the /comments list of a big store is the largest) on its own
        // thread; results in the order above.
        let data =
            notabene_core::par::par_map(&specs, notabene_core::par::default_threads(), |s| {
                let data = match s.0 {
                    "review" => ViewData::whole(js(&self.review())),
                    "comments" => self.comments_data(),
                    _ => ViewData::whole(js(&self.journal())),
                };
                data.element(self.memo, self.book.config.compress_above)
            });
        specs
            .into_iter()
            .zip(data)
            .map(|((name, en, fr_title, intro), data)| {
                let mut path = format!("{name}.md");
                if taken(&path) {
                    path = format!("notabene-{name}.md");
                }
                let title = if fr { fr_title } else { en }.to_string();
                let intro = if fr { "" } else { intro };
                let content = format!(
                    "# {title}\n\n{intro}\n\n<div class=\"nb-app\" data-nb-view=\"{name}\"></div>\n\n{data}\n"
                );
                View { name, path, title, content }
            })
            .collect()
    }
}

/// The generated chapters of a build: /review, /comments and /journal.
pub struct Views(Vec<mdbook_preprocessor::book::Chapter>);

impl Views {
    /// Appends the chapters after the book's own chapters, behind a separator.
    pub fn append_to(self, book: &mut MdBook) {
        book.push_item(BookItem::Separator);
        for ch in self.0 {
            book.push_item(ch);
        }
    }
}

/// The /review, /comments and /journal chapters of `book` (whose own chapters' paths they
/// keep clear of).
pub fn generate(
    book: &MdBook,
    anchors: &BookAnchors,
    ids: &PageIds,
    cfg: &Book,
    memo: &Memo,
) -> Views {
    let store = cfg.store();
    let journal = notabene_store::journal::read(&store);
    let input = ViewInput {
        anchors,
        journal: journal.entries(),
        book: cfg,
        ids,
        repo: cfg.repo(),
        memo,
    };
    let taken: std::collections::BTreeSet<String> = book
        .iter()
        .filter_map(|i| match i {
            BookItem::Chapter(ch) => ch.path.as_ref().map(|p| notabene_core::slash_path(p)),
            _ => None,
        })
        .collect();
    let views = input.chapters(&|p| taken.contains(p));
    Views(
        views
            .into_iter()
            .map(|v| {
                let mut ch = mdbook_preprocessor::book::Chapter::new(
                    &v.title,
                    v.content,
                    &v.path,
                    Vec::new(),
                );
                ch.source_path = None;
                ch
            })
            .collect(),
    )
}
