//! The in-page editor's API, in the original notabene's shape: `GET page?page=P` (the chapter's
//! top-level blocks, each with its id and its source bytes), `PUT page {page, block, expected,
//! markdown, close?, note?}` (one block replaced; the comments it answers resolved and
//! journaled), `POST asset {page, filename, data}` (an image written next to the chapter) and
//! `POST preview {page, markdown}` (a block rendered as the build renders Markdown, its raw HTML
//! and script links left out). Under the review server only a maintainer edits.
//!
//! May call: `ops::page_edit`, `ops::assets`, the book.

use super::answer::{Answer, ApiError};
use super::api::Api;
use super::signed_in::Right;
use crate::apps::ops::page_edit::{self, Block, BlockEdit, EditRefusal};
use crate::apps::ops::{assets, limits};
use axum::http::StatusCode;
use mdbook_markdown::pulldown_cmark::CowStr;
use serde::Deserialize;
use serde_json::{Value, json};

/// `PUT page`.
#[derive(Debug, Deserialize)]
pub struct PageBody {
    page: String,
    block: String,
    expected: String,
    markdown: String,
    #[serde(default)]
    close: Vec<String>,
    #[serde(default)]
    note: Option<String>,
}

/// `POST asset`.
#[derive(Debug, Deserialize)]
pub struct AssetBody {
    page: String,
    /// The pasted file's name (only shown; the type comes from the bytes).
    #[serde(default)]
    #[allow(dead_code)]
    filename: Option<String>,
    /// The bytes, base64.
    data: String,
}

impl PageBody {
    /// The page it edits.
    pub(super) fn page(&self) -> &str {
        &self.page
    }
}

impl AssetBody {
    /// The page it adds an image to.
    pub(super) fn page(&self) -> &str {
        &self.page
    }
}

/// `POST preview`.
#[derive(Debug, Deserialize)]
pub struct PreviewBody {
    markdown: String,
}

fn block_json(b: &Block) -> Value {
    json!({ "id": b.id, "kind": b.kind, "markdown": b.markdown, "text": b.text })
}

/// The page's blocks in reading order, each with the file it is in.
fn blocks_json(p: &page_edit::PageBlocks) -> Vec<Value> {
    p.listed()
        .into_iter()
        .map(|(f, b)| {
            let mut v = block_json(b);
            v["file"] = json!(f.file);
            v
        })
        .collect()
}

fn refusal(page: &str, r: EditRefusal) -> Result<Answer, ApiError> {
    let message = r.to_string();
    let status = match &r {
        EditRefusal::Stale(current) => {
            return Ok(Answer {
                status: StatusCode::CONFLICT,
                body: json!({ "error": message, "current": block_json(current) }),
            });
        }
        EditRefusal::NoPage => {
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                format!("page {page:?} is not a chapter of this book (page)"),
            ));
        }
        EditRefusal::NoBlock => StatusCode::NOT_FOUND,
        EditRefusal::Neighbour(_) | EditRefusal::Unsafe(_) => StatusCode::UNPROCESSABLE_ENTITY,
        EditRefusal::Untracked(_) => StatusCode::FORBIDDEN,
        EditRefusal::TooBig => StatusCode::PAYLOAD_TOO_LARGE,
        EditRefusal::Failed(e) => return Err(ApiError::from(e.clone())),
    };
    Err(ApiError::new(status, message))
}

impl Api<'_> {
    /// Under the review server, editing the book is a maintainer's.
    fn may_edit(&self) -> Result<(), ApiError> {
        match self.signed_in {
            Some(who) if !who.may(Right::Decide, None) => Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "only a maintainer may edit the book",
            )),
            _ => Ok(()),
        }
    }

    fn book(&self) -> Result<crate::model::book::Book, ApiError> {
        crate::model::book::Book::load(self.book_root).map_err(ApiError::failed)
    }

    /// `GET page?page=P`: the chapter's file and its top-level blocks.
    pub fn page(&self, page: Option<&str>) -> Result<Answer, ApiError> {
        let Some(page) = page else {
            return Err(ApiError::bad_request("page is required (page)"));
        };
        self.may_edit()?;
        let book = self.book()?;
        match page_edit::page_blocks(&book, page) {
            Ok(p) => Ok(Answer::ok(json!({
                "page": page,
                "file": p.file,
                "blocks": blocks_json(&p),
            }))),
            Err(r) => refusal(page, r),
        }
    }

    /// `PUT page`: one block replaced, the comments `close` names resolved with one journal
    /// entry; answers the entry's id, the comments closed and the chapter's blocks now.
    pub fn put_page(&self, o: &PageBody) -> Result<Answer, ApiError> {
        self.may_edit()?;
        let author = match self.signed_in {
            Some(who) => who.author(),
            None => self.default_author.to_string(),
        };
        let note = o.note.clone().unwrap_or_default();
        limits::short(&note, limits::MAX_FIELD, "note")?;
        if note.contains(['\n', '\r']) {
            return Err(ApiError::bad_request("note is one line (note)"));
        }
        if !o.close.is_empty() && note.trim().is_empty() {
            return Err(ApiError::bad_request(
                "say in one line what you changed, for the journal (note)",
            ));
        }
        let book = self.book()?;
        let edit = BlockEdit {
            page: o.page.clone(),
            block: o.block.clone(),
            expected: o.expected.clone(),
            markdown: o.markdown.clone(),
            close: o.close.clone(),
            note,
            author,
        };
        let edited = match page_edit::edit_block(&book, self.store, &edit) {
            Ok(e) => e,
            Err(r) => return refusal(&o.page, r),
        };
        let blocks = page_edit::page_blocks(&book, &o.page)
            .map(|p| blocks_json(&p))
            .unwrap_or_default();
        Ok(Answer::ok(json!({
            "page": o.page,
            "file": edited.file,
            "journal": edited.journal,
            "closed": edited.closed,
            "blocks": blocks,
        })))
    }

    /// `POST asset`: the image written next to the chapter (201), or found there (200).
    pub fn asset(&self, o: &AssetBody) -> Result<Answer, ApiError> {
        use base64::Engine;
        self.may_edit()?;
        if o.data.len() > assets::MAX_ASSET / 3 * 4 + 4 {
            return Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the image is over {} bytes (data)", assets::MAX_ASSET),
            ));
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(o.data.trim())
            .map_err(|_| ApiError::bad_request("data is not base64 (data)"))?;
        let book = self.book()?;
        let a = assets::write_asset(&book, &o.page, &bytes)?;
        Ok(Answer {
            status: if a.reused {
                StatusCode::OK
            } else {
                StatusCode::CREATED
            },
            body: json!({ "page": o.page, "name": a.name, "markdown": a.markdown, "reused": a.reused }),
        })
    }

    /// `POST preview`: the HTML of `markdown` as the build's Markdown engine renders it, with
    /// raw HTML shown as text and only web, mail and relative links kept.
    pub fn preview(&self, o: &PreviewBody) -> Result<Answer, ApiError> {
        self.may_edit()?;
        if o.markdown.len() > page_edit::MAX_BLOCK {
            return Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "the block is over the limit (markdown)",
            ));
        }
        let book = self.book()?;
        let options = crate::model::book::text_options(&book.mdbook).map_err(ApiError::failed)?;
        Ok(Answer::ok(
            json!({ "html": preview_html(&o.markdown, &options) }),
        ))
    }
}

/// `markdown` rendered by mdBook's parser and settings; raw HTML becomes text, and a link or
/// image whose address is not web, mail or relative points nowhere.
fn preview_html(markdown: &str, options: &notabene_anchoring::text::TextOptions) -> String {
    use mdbook_markdown::pulldown_cmark::{Event, Tag, html};
    let events = notabene_anchoring::text::parser(markdown, options).map(|e| match e {
        Event::Html(h) | Event::InlineHtml(h) => Event::Text(h),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url: safe_address(dest_url),
            title,
            id,
        }),
        Event::Start(Tag::Image {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Image {
            link_type,
            dest_url: safe_address(dest_url),
            title,
            id,
        }),
        other => other,
    });
    let mut out = String::new();
    html::push_html(&mut out, events);
    out
}

/// `dest` when it is a web, mail or relative address; else `#`.
fn safe_address(dest: CowStr<'_>) -> CowStr<'_> {
    let d = dest.trim_start().to_ascii_lowercase();
    let scheme = d.split_once(':').map(|(s, _)| s).filter(|s| {
        !s.contains(['/', '?', '#'])
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
    });
    match scheme {
        None | Some("http" | "https" | "mailto") => dest,
        Some(_) => CowStr::Borrowed("#"),
    }
}
