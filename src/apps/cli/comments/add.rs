//! `comments add`: a new comment on a selection (with a suggested edit, `--suggest`), a block or a
//! page: the flags as an [`ops::NewComment`], created by [`ops::create`] (the rules the API's POST
//! follows too).

use crate::apps::cli::{Ctx, say, say_err};
use crate::apps::ops::{self, Anchor, NewComment};
use crate::model::book::pages;
use crate::{Error, Result, bail};
use clap::Args;
use notabene_core::error::ErrorKind;
use notabene_store::{ids, json};

#[derive(Args, Debug)]
pub(crate) struct AddArgs {
    /// Page id, e.g. src/guide/setup.
    #[arg(long)]
    page: String,
    /// Comment text (optional with --suggest).
    #[arg(long, required_unless_present = "suggest")]
    body: Option<String>,
    /// A suggested edit: the text that should replace the quote (empty: delete it);
    /// `comments apply` writes it into the Markdown.
    #[arg(long, requires = "quote")]
    suggest: Option<String>,
    /// Quoted rendered text (selection scope).
    #[arg(long, conflicts_with = "block")]
    quote: Option<String>,
    /// Rendered text just before the quote (up to 40 characters).
    #[arg(long, requires = "quote")]
    prefix: Option<String>,
    /// Rendered text just after the quote (up to 40 characters).
    #[arg(long, requires = "quote")]
    suffix: Option<String>,
    /// Nearest preceding heading text.
    #[arg(long)]
    section: Option<String>,
    /// Block key (`image:<src>` or `mermaid:<hash>`): block scope.
    #[arg(long, requires = "kind")]
    block: Option<String>,
    /// Block kind: image or mermaid.
    #[arg(long, requires = "block", value_parser = ["image", "mermaid"])]
    kind: Option<String>,
    /// Block label (default: derived from the key).
    #[arg(long, requires = "block")]
    label: Option<String>,
    /// 0-based position among the page's images and diagrams.
    #[arg(long, requires = "block", default_value_t = 0)]
    index: u64,
    /// Author (default: git identity).
    #[arg(long)]
    author: Option<String>,
    /// Add it even when the page is not in the book or the quote is not on the page.
    #[arg(long)]
    force: bool,
    /// Print the created comment.
    #[arg(long)]
    json: bool,
}

/// What the CLI knows of the book's pages: their source files.
struct BookPages<'a>(Option<&'a crate::model::book::Book>);

impl ops::Pages for BookPages<'_> {
    fn has_page(&self, page: &str) -> Option<bool> {
        let book = self.0?;
        Some(pages::PageIds::new(book).source_file(page).is_some())
    }

    /// The page's own file first (its text model, when it has no `{{#…}}` directive: most
    /// quotes are found there at once), else the page as the build renders it for its locale
    /// (a translated page, an included file), the book's preprocessors run.
    fn has_quote(&self, page: &str, quote: &str) -> Option<bool> {
        let book = self.0?;
        let options = crate::model::book::text_options(&book.mdbook).ok()?;
        if let Some(md) = pages::PageIds::new(book)
            .source_file(page)
            .and_then(|f| std::fs::read_to_string(f).ok())
            .filter(|md| !md.contains("{{#"))
            && ops::quote_in_text(
                &notabene_anchoring::text::page_text(&md, &options).text,
                quote,
            )
        {
            return Some(true);
        }
        match crate::output::engine::rendered_text(book, page) {
            Ok(Some(text)) => Some(ops::quote_in_text(&text, quote)),
            Ok(None) => None,
            Err(e) => {
                say_err!("notabene: warning: the quote is not checked: {e}");
                None
            }
        }
    }
}

pub(super) fn add(ctx: &Ctx, a: &AddArgs) -> Result<i32> {
    let anchor = if let Some(q) = &a.quote {
        Anchor::Selection {
            quote: q.clone(),
            prefix: a.prefix.clone().unwrap_or_default(),
            suffix: a.suffix.clone().unwrap_or_default(),
            section: a.section.clone(),
        }
    } else if let (Some(key), Some(kind)) = (&a.block, &a.kind) {
        Anchor::Block {
            kind: kind.clone(),
            key: key.clone(),
            label: a.label.clone(),
            section: a.section.clone(),
            index: a.index,
        }
    } else {
        if a.section.is_some() {
            bail!("--section goes with --quote or --block (--section)");
        }
        Anchor::Page
    };
    let space = ctx
        .book
        .as_ref()
        .map(|b| b.config.space.clone())
        .unwrap_or_else(|| "book".into());
    let new = NewComment {
        page: a.page.clone(),
        space,
        anchor,
        body: a.body.clone(),
        suggestion: a.suggest.clone(),
        author: ids::resolve_author(a.author.as_deref(), ctx.work_dir()),
    };
    let comment = ops::create(&ctx.store, &BookPages(ctx.book.as_ref()), &new, a.force).map_err(
        |e| match (e.kind(), e.field()) {
            // What --force lets through: a page the book does not have (yet), a quote not
            // found on the page (an include, a preprocessor's text).
            (ErrorKind::NotFound, Some(f @ ("page" | "quote"))) => Error::new(format!(
                "{}; --force adds the comment anyway (--{f})",
                e.what()
            ))
            .with_kind(ErrorKind::NotFound),
            _ => super::flagged(e),
        },
    )?;
    if a.json {
        print!("{}", json::to_js_pretty(comment.as_map()));
    } else {
        say!(
            "notabene: added comment {} on {} ({}/{}.json).",
            comment.id().unwrap_or_default(),
            a.page,
            a.page,
            ids::sanitize_id(comment.id().unwrap_or_default())
        );
    }
    Ok(0)
}
