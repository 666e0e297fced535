//! Commands that work on the built book: `build` (the embedded mdBook engine with our
//! preprocessor and renderer), `anchors` (the anchoring report without a build), `anchors heal`,
//! and the mdBook plugin entry points `supports` and `render`. Builds go through the engine.
//!
//! Part of the CLI (layer 10); may call every layer below it.

use super::{Ctx, say};
use crate::anchor::Status;
use crate::book::Book;
use crate::resolve::BookAnchors;
use crate::store::{ids, json};
use crate::{Error, Result, bail};
use clap::{Args, Subcommand};
use serde_json::Value;
use std::io::Read;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub(crate) struct BuildArgs {
    /// The book root (default: --book, else the nearest book.toml).
    pub dir: Option<PathBuf>,
    /// Output directory (default: build.build-dir, `book`).
    #[arg(long, short = 'd', value_name = "DIR")]
    pub dest_dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub(crate) struct AnchorsArgs {
    #[command(subcommand)]
    pub heal: Option<AnchorsCmd>,
    /// The comments.json document.
    #[arg(long)]
    pub json: bool,
    /// Only this page.
    #[arg(long)]
    pub page: Option<String>,
}

#[derive(Subcommand, Debug)]
pub(crate) enum AnchorsCmd {
    /// Re-capture quote, prefix, suffix and section of confident fuzzy anchors.
    Heal {
        /// Minimum confidence of a fuzzy anchor to heal.
        #[arg(long, default_value_t = 0.9)]
        min_confidence: f64,
        /// Report without writing.
        #[arg(long)]
        dry_run: bool,
    },
}

pub(crate) fn build(ctx: &Ctx, a: &BuildArgs) -> Result<i32> {
    let root = match (&a.dir, &ctx.book) {
        (Some(d), _) => d.clone(),
        (None, Some(b)) => b.root.clone(),
        (None, None) => bail!("no book.toml found (pass the book directory)"),
    };
    if !root.join("book.toml").is_file() {
        bail!("no book.toml in {} (BOOK)", root.display());
    }
    let out = crate::engine::build(&root, a.dest_dir.as_deref())?;
    let shown = ctx.show(&out);
    say!(
        "notabene: built {} — open {shown}/index.html",
        ctx.show(&root)
    );
    Ok(0)
}

fn anchor_current(ctx: &Ctx) -> Result<(Book, BookAnchors, String)> {
    let Some(book) = ctx.book.clone() else {
        bail!("this command needs a book: no book.toml found (pass --book DIR)");
    };
    // The store of this command (flags and environment apply).
    let (anchors, ids) = crate::engine::anchor_current(&book, &ctx.store)?;
    Ok((book, anchors, ids.prefix))
}

pub(crate) fn anchors(ctx: &Ctx, a: &AnchorsArgs) -> Result<i32> {
    if let Some(AnchorsCmd::Heal {
        min_confidence,
        dry_run,
    }) = &a.heal
    {
        return heal(ctx, *min_confidence, *dry_run);
    }
    let (book, anchors, prefix) = anchor_current(ctx)?;
    let keep = |ci: usize| {
        a.page
            .as_deref()
            .is_none_or(|p| anchors.comments[ci].page() == Some(p))
    };
    if a.json {
        let mut doc = crate::render::document(&anchors, &book, &prefix);
        if a.page.is_some()
            && let Some(list) = doc.get_mut("comments").and_then(Value::as_array_mut)
        {
            let mut i = 0;
            list.retain(|_| {
                let k = keep(i);
                i += 1;
                k
            });
        }
        print!("{}", json::to_js_pretty(&doc));
        return Ok(0);
    }
    let mut shown = 0;
    for ci in (0..anchors.comments.len()).filter(|&ci| keep(ci)) {
        let c = &anchors.comments[ci];
        let j = anchors.anchoring_json(ci);
        let status = if anchors.located[ci].chapter.is_none() {
            "not in this build"
        } else {
            j["status"].as_str().unwrap_or("")
        };
        let confidence = j["confidence"]
            .as_f64()
            .map(|c| format!(" {c:.2}"))
            .unwrap_or_default();
        let place = match &j["source"] {
            Value::Object(s) => format!(
                " {}:{}:{}",
                s["path"].as_str().unwrap_or(""),
                s["line"],
                s["column"]
            ),
            _ => String::new(),
        };
        let text = j["text"]
            .as_str()
            .map(|t| {
                format!(
                    " «{}»",
                    t.split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ")
                        .chars()
                        .take(60)
                        .collect::<String>()
                )
            })
            .unwrap_or_default();
        say!(
            "[{}] {status}{confidence} {}{place}{text}",
            c.id().unwrap_or_default(),
            c.page().unwrap_or_default()
        );
        if let Value::Object(s) = &j["suggestion"] {
            say!(
                "    closest: «{}»",
                s["text"]
                    .as_str()
                    .unwrap_or("")
                    .chars()
                    .take(60)
                    .collect::<String>()
            );
        }
        shown += 1;
    }
    if shown == 0 {
        say!("notabene: no comments.");
    }
    Ok(0)
}

fn context_before(text: &str, at: usize) -> String {
    let v: Vec<char> = text[..at].chars().rev().take(40).collect();
    v.into_iter().rev().collect()
}

fn heal(ctx: &Ctx, min_confidence: f64, dry_run: bool) -> Result<i32> {
    let (_, anchors, _) = anchor_current(ctx)?;
    // New anchors for confident, unambiguous fuzzy text anchors.
    let mut updates: Vec<(String, Value)> = Vec::new();
    for (ci, l) in anchors.located.iter().enumerate() {
        let c = &anchors.comments[ci];
        let (Some(ch), Some(r)) = (l.chapter, &l.resolution) else {
            continue;
        };
        if r.status != Status::Fuzzy
            || r.flags.ambiguous
            || r.block.is_some()
            || r.confidence < min_confidence
            || c.scope() != Some("selection")
        {
            continue;
        }
        let Some(place) = &r.place else { continue };
        let text = &anchors.texts[ch];
        let mut anchor = c.anchor().cloned().unwrap_or_default();
        anchor.insert("quote".into(), text.text[place.text.clone()].into());
        anchor.insert(
            "prefix".into(),
            context_before(&text.text, place.text.start).into(),
        );
        anchor.insert(
            "suffix".into(),
            text.text[place.text.end..]
                .chars()
                .take(40)
                .collect::<String>()
                .into(),
        );
        anchor.insert(
            "section".into(),
            text.section_at(place.text.start)
                .map(Value::from)
                .unwrap_or(Value::Null),
        );
        updates.push((
            c.id().unwrap_or_default().to_string(),
            Value::Object(anchor),
        ));
    }
    for (id, a) in &updates {
        say!(
            "{} {id}: «{}»",
            if dry_run { "would heal" } else { "healed" },
            a["quote"]
                .as_str()
                .unwrap_or("")
                .chars()
                .take(60)
                .collect::<String>()
        );
    }
    if dry_run || updates.is_empty() {
        say!(
            "notabene: {} anchor(s) {}.",
            updates.len(),
            if dry_run { "would be healed" } else { "healed" }
        );
        return Ok(0);
    }
    let store = &ctx.store;
    let _lock = store.lock()?;
    let snap = store.load()?;
    let ids_list: Vec<String> = updates.iter().map(|(id, _)| id.clone()).collect();
    let found: Vec<_> = store.find(&snap, &ids_list)?.into_iter().cloned().collect();
    let ts = ids::iso(ids::now()?);
    for (mut rec, (_, anchor)) in found.into_iter().zip(updates.iter()) {
        rec.comment.set("anchor", anchor.clone());
        rec.comment.set("updatedAt", ts.clone().into());
        store.write_record(&rec)?;
    }
    say!("notabene: {} anchor(s) healed.", updates.len());
    Ok(0)
}

/// `supports <renderer>`: exit 0 when the preprocessor runs for it, 1 otherwise.
pub(crate) fn supports(renderer: &str) -> i32 {
    i32::from(!crate::preprocess::supports(renderer))
}

/// `render`: the renderer protocol on stdin.
pub(crate) fn render() -> Result<i32> {
    let mut input = Vec::new();
    std::io::stdin()
        .read_to_end(&mut input)
        .map_err(|e| Error::new(format!("cannot read stdin: {e} (stdin)")))?;
    crate::render::render_input(&input)?;
    Ok(0)
}
