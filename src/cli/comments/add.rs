//! `comments add`: a new comment on a selection (with a suggested edit, `--suggest`), a block
//! or a page, validated as the API validates it, written as one new file. Part of the CLI.
//!
//! Part of the CLI (layer 11); may call every layer below it.

use super::{MAX_QUOTE, check_body};
use crate::book::pages;
use crate::cli::{Ctx, say, say_err};
use crate::store::comment::{SCOPES, suggestion_body, suggestion_value};
use crate::store::{ids, json};
use crate::{Error, Result, bail};
use clap::Args;
use serde_json::{Value, json};

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
    /// Print the created comment.
    #[arg(long)]
    json: bool,
}

pub(super) fn add(ctx: &Ctx, a: &AddArgs) -> Result<i32> {
    crate::store::validate_page_id(&a.page)
        .map_err(|e| Error::new(e.message().replace("(page)", "(--page)")))?;
    if let Some(t) = &a.suggest
        && t.len() > MAX_QUOTE
    {
        bail!(
            "--suggest is {} bytes; the limit is {MAX_QUOTE} (--suggest)",
            t.len()
        );
    }
    let default_body = match (&a.suggest, &a.quote) {
        (Some(t), Some(q)) => Some(suggestion_body(q, t)),
        _ => None,
    };
    let body = match (&a.body, &default_body) {
        (Some(b), _) => check_body(b, "--body")?,
        (None, Some(d)) => d.as_str(),
        (None, None) => bail!("the text must not be empty (--body)"),
    };
    let short = |v: &Option<String>, flag: &str| -> Result<Value> {
        match v {
            None => Ok(Value::Null),
            Some(s) if s.len() > MAX_QUOTE => bail!(
                "{flag} is {} bytes; the limit is {MAX_QUOTE} ({flag})",
                s.len()
            ),
            Some(s) => Ok(Value::String(s.clone())),
        }
    };
    let section = short(&a.section, "--section")?;
    let (scope, anchor) = if let Some(q) = &a.quote {
        if q.is_empty() {
            bail!("the quote must not be empty (--quote)");
        }
        let text = |v: Value| {
            if v.is_null() {
                Value::String(String::new())
            } else {
                v
            }
        };
        let anchor = json!({
            "quote": short(&a.quote, "--quote")?,
            "prefix": text(short(&a.prefix, "--prefix")?),
            "suffix": text(short(&a.suffix, "--suffix")?),
            "section": section,
        });
        ("selection", anchor)
    } else if let (Some(key), Some(kind)) = (&a.block, &a.kind) {
        let Some(rest) = key.strip_prefix(&format!("{kind}:")) else {
            bail!("a {kind} block key starts with \"{kind}:\", got {key:?} (--block)");
        };
        if rest.is_empty() {
            bail!("the block key has nothing after \"{kind}:\" (--block)");
        }
        let label = match &a.label {
            Some(l) => l.chars().take(80).collect::<String>(),
            None => default_label(kind, rest),
        };
        (
            "block",
            json!({ "kind": kind, "key": key, "label": label, "section": section, "index": a.index }),
        )
    } else {
        if a.section.is_some() {
            bail!("--section goes with --quote or --block (--section)");
        }
        ("page", Value::Null)
    };
    debug_assert!(SCOPES.contains(&scope));
    if let Some(book) = &ctx.book {
        let ids = pages::PageIds::new(book);
        if ids.source_file(&a.page).is_none() {
            say_err!(
                "notabene: warning: page {:?} has no source file in this book (expected {}/<chapter path without .md>) (--page)",
                a.page,
                ids.prefix
            );
        }
    }
    let space = ctx
        .book
        .as_ref()
        .map(|b| b.config.space.clone())
        .unwrap_or_else(|| "book".into());
    let author = ids::resolve_author(a.author.as_deref(), ctx.work_dir());
    let store = &ctx.store;
    let _lock = store.lock()?;
    store.check_compatible()?;
    let now = ids::now()?;
    let ts = ids::iso(now);
    // Adds in the same millisecond share the time part of the id: draw again on a clash
    // rather than fail (the lock makes the check race-free).
    let mut id = ids::comment_id(now);
    while store
        .root()
        .join(&a.page)
        .join(format!("{}.json", ids::sanitize_id(&id)))
        .exists()
    {
        id = ids::comment_id(now);
    }
    let mut comment =
        crate::store::new_comment(&id, &space, &a.page, scope, anchor, &author, body, &ts);
    if let (Some(text), Some(quote)) = (&a.suggest, &a.quote) {
        comment.set_after("anchor", "suggestion", suggestion_value(quote, text));
    }
    store.ensure_meta()?;
    let file = store.create(&comment)?;
    if a.json {
        print!("{}", json::to_js_pretty(comment.as_map()));
    } else {
        say!(
            "notabene: added comment {} on {} ({file}).",
            comment.id().unwrap_or_default(),
            a.page
        );
    }
    Ok(0)
}

/// The label the browser client would derive from a block key.
fn default_label(kind: &str, rest: &str) -> String {
    let label = if kind == "image" {
        let path = rest.split(['?', '#']).next().unwrap_or(rest);
        path.rsplit('/').next().unwrap_or(path).to_string()
    } else {
        "diagram".to_string()
    };
    label.chars().take(80).collect()
}
