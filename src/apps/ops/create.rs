//! Creating a comment: the [`NewComment`] request, its [`Anchor`] (validated for its scope and
//! sizes), the book's [`Pages`] it is checked against (the page exists, the quote is on it),
//! and [`create`], which writes it as one new file under the store's lock.
//!
//! May call: the store, the text model (`notabene_anchoring::text`), `limits`.

use super::limits;
use crate::Result;
use notabene_core::error::{Error, ErrorKind};
use notabene_store::comment::{suggestion_body, suggestion_value};
use notabene_store::{Comment, Scope, Store, ids};
use serde_json::{Value, json};

/// What a new comment is anchored to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Anchor {
    /// The whole page.
    Page,
    /// A text quote with its context.
    Selection {
        /// The rendered text.
        quote: String,
        /// The text just before it.
        prefix: String,
        /// The text just after it.
        suffix: String,
        /// The nearest heading before it.
        section: Option<String>,
    },
    /// An image or a diagram.
    Block {
        /// `image` or `mermaid`.
        kind: String,
        /// `<kind>:<src or hash>`.
        key: String,
        /// What the reader sees it as (cut to [`limits::LABEL_CHARS`]).
        label: Option<String>,
        /// The nearest heading before it.
        section: Option<String>,
        /// Its position among the page's images and diagrams.
        index: u64,
    },
}

impl Anchor {
    /// The scope this anchor gives a comment.
    pub fn scope(&self) -> Scope {
        match self {
            Anchor::Page => Scope::Page,
            Anchor::Selection { .. } => Scope::Selection,
            Anchor::Block { .. } => Scope::Block,
        }
    }

    /// Checks the anchor and returns its stored JSON.
    fn validate(&self) -> Result<Value> {
        let field = |v: &Option<String>, name: &'static str| -> Result<Value> {
            v.as_deref().map_or(Ok(Value::Null), |s| {
                limits::short(s, limits::MAX_FIELD, name).map(Value::from)
            })
        };
        match self {
            Anchor::Page => Ok(Value::Null),
            Anchor::Selection {
                quote,
                prefix,
                suffix,
                section,
            } => {
                if quote.trim().is_empty() {
                    return Err(Error::of(
                        ErrorKind::Invalid,
                        "the quote must not be empty",
                        "quote",
                    ));
                }
                Ok(json!({
                    "quote": limits::short(quote, limits::MAX_FIELD, "quote")?,
                    "prefix": limits::short(prefix, limits::MAX_FIELD, "prefix")?,
                    "suffix": limits::short(suffix, limits::MAX_FIELD, "suffix")?,
                    "section": field(section, "section")?,
                }))
            }
            Anchor::Block {
                kind,
                key,
                label,
                section,
                index,
            } => {
                if kind != "image" && kind != "mermaid" {
                    return Err(Error::of(
                        ErrorKind::Invalid,
                        format!("a block is an image or a mermaid diagram, not {kind:?}"),
                        "kind",
                    ));
                }
                limits::short(key, limits::MAX_FIELD, "block")?;
                let Some(rest) = key.strip_prefix(&format!("{kind}:")) else {
                    return Err(Error::of(
                        ErrorKind::Invalid,
                        format!("a {kind} block key starts with \"{kind}:\", got {key:?}"),
                        "block",
                    ));
                };
                if rest.is_empty() {
                    return Err(Error::of(
                        ErrorKind::Invalid,
                        format!("the block key has nothing after \"{kind}:\""),
                        "block",
                    ));
                }
                let label = match label {
                    Some(l) => limits::label(limits::short(l, limits::MAX_FIELD, "label")?),
                    None => default_label(kind, rest),
                };
                Ok(json!({
                    "kind": kind, "key": key, "label": label,
                    "section": field(section, "section")?, "index": index,
                }))
            }
        }
    }
}

/// The label the browser client derives from a block key.
fn default_label(kind: &str, rest: &str) -> String {
    let label = if kind == "image" {
        let path = rest.split(['?', '#']).next().unwrap_or(rest);
        path.rsplit('/').next().unwrap_or(path).to_string()
    } else {
        "diagram".to_string()
    };
    limits::label(&label)
}

/// A new comment, as a person or an agent asks for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewComment {
    /// Its page id.
    pub page: String,
    /// Its space (the book's).
    pub space: String,
    /// What it is anchored to.
    pub anchor: Anchor,
    /// Its text (optional with a suggestion: then it says what the suggestion does).
    pub body: Option<String>,
    /// A suggested edit: the text that should replace the quote (selections only).
    pub suggestion: Option<String>,
    /// Its author.
    pub author: String,
}

/// What the book says about a new comment's page.
pub trait Pages {
    /// Whether `page` is a page of the book (`None`: no book to ask).
    fn has_page(&self, page: &str) -> Option<bool>;
    /// Whether `quote` is in the text of `page` as the build renders it for the page's locale
    /// ([`quote_in_text`] on its text model); `None`: not known (no book, or the book could
    /// not be read), and the quote is taken.
    fn has_quote(&self, page: &str, quote: &str) -> Option<bool>;
}

/// Creates a comment: validated (page id, page in the book, anchor, sizes, the quote on the
/// page), then written as one new file under the store's lock. `force` lets a page the book
/// does not have (yet) and a quote not found on it through.
pub fn create(store: &Store, pages: &dyn Pages, new: &NewComment, force: bool) -> Result<Comment> {
    store.require()?;
    store
        .check_compatible()
        .map_err(|e| e.with_kind(ErrorKind::Conflict))?;
    if let Some(problem) = notabene_store::page_id::page_id_problem(&new.page) {
        return Err(Error::of(ErrorKind::Invalid, problem, "page"));
    }
    limits::short(&new.page, limits::MAX_PAGE_ID, "page")?;
    if !force && pages.has_page(&new.page) == Some(false) {
        return Err(Error::of(
            ErrorKind::NotFound,
            format!("page {:?} is not in this book", new.page),
            "page",
        ));
    }
    let anchor = new.anchor.validate()?;
    let quote = anchor.get("quote").and_then(Value::as_str);
    if let (Some(q), false) = (quote, force)
        && pages.has_quote(&new.page, q) == Some(false)
    {
        return Err(Error::of(
            ErrorKind::NotFound,
            format!("the quote is not on page {:?}", new.page),
            "quote",
        ));
    }
    let suggestion = match (&new.suggestion, quote) {
        (None, _) => None,
        (Some(t), Some(q)) => Some((
            q.to_string(),
            limits::short(t, limits::MAX_FIELD, "suggest")?,
        )),
        (Some(_), None) => {
            return Err(Error::of(
                ErrorKind::Invalid,
                "a suggestion goes with a quote",
                "suggest",
            ));
        }
    };
    let body = match (&new.body, &suggestion) {
        (Some(b), _) => limits::text(b, "body")?.to_string(),
        (None, Some((q, t))) => suggestion_body(q, t),
        (None, None) => limits::text("", "body")?.to_string(),
    };
    let author = limits::short(new.author.trim(), limits::MAX_FIELD, "author")?;
    store.ensure_meta()?;
    let now = ids::now()?;
    let ts = ids::iso(now);
    // Written and fsynced before the lock: under it, only the schema check and the rename
    // that never replaces a file (a taken id is drawn again).
    loop {
        let mut comment = notabene_store::new_comment(&notabene_store::Fresh {
            id: &ids::comment_id(now),
            space: &new.space,
            page: &new.page,
            scope: new.anchor.scope(),
            anchor: anchor.clone(),
            author,
            body: &body,
            ts: &ts,
        });
        if let Some((q, t)) = &suggestion {
            comment.set_after("anchor", "suggestion", suggestion_value(q, t));
        }
        let prepared = store.prepare_create(&comment)?;
        let lock = store.lock()?;
        store
            .check_compatible()
            .map_err(|e| e.with_kind(ErrorKind::Conflict))?;
        let created = prepared.create()?;
        drop(lock);
        if let Some(sync) = created {
            sync.finish();
            return Ok(comment);
        }
    }
}

/// Whether `quote` is in `text` (a page's text model), whitespace-normalised as anchors are.
pub fn quote_in_text(text: &str, quote: &str) -> bool {
    let norm = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    norm(text).contains(&norm(quote))
}
