//! The `notabene` renderer (`[output.notabene]`): writes `comments.json` — every stored comment,
//! fields unchanged, plus its `anchoring` in the book being built — into its destination.
//! `notabene anchors --json` prints the same document.

use crate::model::book::Book;
use crate::model::resolve::{self, BookAnchors};
use crate::output::forms::CommentForms as _;
use crate::{Error, Result};
use mdbook_renderer::{RenderContext, Renderer};
use notabene_store::json::to_js_pretty;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The renderer, for in-process use with `mdbook-driver` (`MDBook::with_renderer`).
pub struct CommentsJson;

impl Renderer for CommentsJson {
    fn name(&self) -> &str {
        "notabene"
    }

    fn render(&self, ctx: &RenderContext) -> mdbook_renderer::errors::Result<()> {
        render(ctx).map_err(|e| mdbook_renderer::errors::Error::msg(e.to_string()))
    }
}

/// The `comments.json` document.
pub fn document(anchors: &BookAnchors, cfg: &Book, page_prefix: &str) -> Value {
    let mut by_anchor: BTreeMap<&str, usize> = ["exact", "fuzzy", "orphan", "page"]
        .iter()
        .map(|k| (*k, 0))
        .collect();
    let mut by_status: BTreeMap<String, usize> = notabene_store::Status::ALL
        .iter()
        .map(|k| (k.as_str().to_string(), 0))
        .collect();
    let mut held = 0;
    let mut other_pages = 0;
    for (ci, c) in anchors.comments.iter().enumerate() {
        if anchors.located[ci].chapter.is_some() {
            *by_anchor.entry(anchors.status(ci)).or_default() += 1;
        } else {
            other_pages += 1;
        }
        *by_status
            .entry(c.status_str().unwrap_or("").to_string())
            .or_default() += 1;
        held += usize::from(c.held());
    }
    let pages: std::collections::BTreeSet<&str> =
        anchors.comments.iter().filter_map(|c| c.page()).collect();
    json!({
        "version": 1,
        "generator": format!("mdbook-notabene {}", env!("CARGO_PKG_VERSION")),
        "book": {
            "title": cfg.title,
            "language": cfg.build_language(),
            "space": cfg.config.space,
            "pagePrefix": page_prefix,
        },
        "summary": {
            "comments": anchors.comments.len(),
            "pages": pages.len(),
            "anchoring": by_anchor,
            "notInBook": other_pages,
            "status": by_status,
            "held": held,
        },
        "comments": (0..anchors.comments.len()).map(|ci| anchors.comment_json(ci)).collect::<Vec<_>>(),
    })
}

/// Renders `comments.json` for `ctx`.
pub fn render(ctx: &RenderContext) -> Result<()> {
    let cfg = Book::from_mdbook(&ctx.root, ctx.config.clone())?;
    if !cfg.config.enable {
        return Ok(());
    }
    let comments = resolve::chapters::read_comments(&cfg.store());
    let (anchors, ids) = resolve::chapters::anchor(&cfg, &ctx.book, comments, resolve::Which::All)?;
    let doc = document(&anchors, &cfg, &ids.prefix);
    std::fs::create_dir_all(&ctx.destination)
        .map_err(|e| Error::io("cannot create the output directory", &ctx.destination, e))?;
    notabene_store::fsx::write_atomic(
        &ctx.destination,
        std::path::Path::new("comments.json"),
        to_js_pretty(&doc).as_bytes(),
    )
}

/// The renderer protocol: a `RenderContext` as JSON (mdBook writes it to the renderer's
/// stdin), checked against the supported mdBook versions, then rendered.
pub fn render_input(input: &[u8]) -> Result<()> {
    let ctx = RenderContext::from_json(input).map_err(|e| {
        Error::new(format!(
            "cannot read mdBook's input: {e:#} — mdbook-notabene supports mdBook {} (stdin, read as a renderer's context)",
            crate::model::book::config::SUPPORTED_MDBOOK
        ))
    })?;
    crate::model::book::config::check_mdbook_version(&ctx.version);
    render(&ctx)
}
