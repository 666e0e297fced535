//! Commands that work on the built book: `build` (the embedded mdBook engine with our preprocessor
//! and renderer), `anchors` (the anchoring report without a build), `anchors heal`, `anchors --check` (the guard for an agent's edits, [`ops::check`]), and the mdBook
//! plugin entry points `supports` and `render`. Builds go through the engine.

use super::{Ctx, say, say_err};
use crate::apps::ops;
use crate::model::book::Book;
use crate::model::resolve::BookAnchors;
use crate::output::forms::CommentForms as _;
use crate::{Error, Result, bail};
use clap::{Args, Subcommand};
use notabene_store::json;
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
    /// Compare every comment open at --since with its anchoring in the working tree, and list
    /// those that got worse; exit 1 when one of them is still open (a bystander of the edit).
    #[arg(long)]
    pub check: bool,
    /// The revision --check compares with.
    #[arg(long, value_name = "REV", default_value = "HEAD", requires = "check")]
    pub since: String,
}

#[derive(Subcommand, Debug)]
pub(crate) enum AnchorsCmd {
    /// Re-capture quote, prefix, suffix and section of confident fuzzy anchors, and move
    /// comments found on another page to that page (crash-safe).
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
    let out = crate::output::engine::build(&root, a.dest_dir.as_deref())?;
    let shown = ctx.show(&out);
    say!(
        "notabene: built {} — open {shown}/index.html",
        ctx.show(&root)
    );
    Ok(0)
}

fn anchor_current(ctx: &Ctx) -> Result<(Book, BookAnchors, crate::model::book::PageIds)> {
    let Some(book) = ctx.book.clone() else {
        bail!("this command needs a book: no book.toml found (pass --book DIR)");
    };
    // The store of this command (flags and environment apply).
    let (anchors, ids) = crate::output::engine::anchor_current(&book, &ctx.store)?;
    if let Some(m) = &anchors.mismatch {
        say_err!("notabene: warning: {}", m.message(&ids));
    }
    Ok((book, anchors, ids))
}

pub(crate) fn anchors(ctx: &Ctx, a: &AnchorsArgs) -> Result<i32> {
    if let Some(AnchorsCmd::Heal {
        min_confidence,
        dry_run,
    }) = &a.heal
    {
        return heal(ctx, *min_confidence, *dry_run);
    }
    if a.check {
        return check(ctx, &a.since, a.json);
    }
    let (book, anchors, ids) = anchor_current(ctx)?;
    let keep = |ci: usize| {
        a.page
            .as_deref()
            .is_none_or(|p| anchors.comments[ci].page() == Some(p))
    };
    if a.json {
        let mut doc = crate::output::render::document(&anchors, &book, &ids.prefix);
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
        print_anchoring(&anchors, ci);
        shown += 1;
    }
    if shown == 0 {
        say!("notabene: no comments.");
    }
    Ok(0)
}

/// One comment's line of `notabene anchors`: id, status, confidence, page, where it was
/// followed, its source place and text; then the same text elsewhere and the closest match.
fn print_anchoring(anchors: &BookAnchors, ci: usize) {
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
    let followed = match &j["followed"] {
        Value::Object(f) => format!(
            " → {} ({})",
            f["to"].as_str().unwrap_or(""),
            f["by"].as_str().unwrap_or("")
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
        "[{}] {status}{confidence} {}{followed}{place}{text}",
        c.id().unwrap_or_default(),
        c.page().unwrap_or_default()
    );
    if let Value::Object(s) = &j["sameText"] {
        say!(
            "    the same text is on {}",
            s["page"].as_str().unwrap_or("")
        );
    }
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
}

/// `anchors --check [--since REV]`: the comments whose anchoring the working tree's edits
/// made worse; exit 1 when a bystander (one still open) is among them.
fn check(ctx: &Ctx, since: &str, as_json: bool) -> Result<i32> {
    let Some(book) = &ctx.book else {
        bail!("this command needs a book: no book.toml found (pass --book DIR)");
    };
    let r = ops::check::check(book, &ctx.store, since)?;
    if as_json {
        print!("{}", json::to_js_pretty(&ops::check::to_json(&r)));
    } else {
        for w in &r.worse {
            let who = if w.closed {
                format!(
                    "closed in this change ({})",
                    w.status_now.as_deref().unwrap_or("deleted")
                )
            } else {
                "BYSTANDER: still open".to_string()
            };
            say!("[{}] {}: {} — {who}", w.id, w.page, w.reasons.join(", "));
        }
        let short: String = r.commit.chars().take(12).collect();
        if r.worse.is_empty() {
            say!(
                "notabene: none of the {} comment(s) open at {since} ({short}) anchors worse in the working tree.",
                r.checked
            );
        } else {
            say!(
                "notabene: {} of the {} comment(s) open at {since} ({short}) anchor worse; {} of them still open.",
                r.worse.len(),
                r.checked,
                r.bystanders
            );
        }
    }
    Ok(i32::from(r.bystanders > 0))
}

fn heal(ctx: &Ctx, min_confidence: f64, dry_run: bool) -> Result<i32> {
    let (_, anchors, _) = anchor_current(ctx)?;
    let plan = ops::heal::plan(&anchors, min_confidence);
    for (id, a) in &plan.anchors {
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
    for m in &plan.moves {
        say!(
            "{} {}: {} → {}",
            if dry_run { "would move" } else { "moved" },
            m.id,
            m.from,
            m.to
        );
    }
    let (verb_anchor, verb_move) = if dry_run {
        ("would be healed", "would be moved")
    } else {
        ops::heal::write_unless_empty(&ctx.store, &plan)?;
        ("healed", "moved")
    };
    say!("notabene: {} anchor(s) {verb_anchor}.", plan.anchors.len());
    if !plan.moves.is_empty() {
        say!(
            "notabene: {} comment(s) {verb_move} to the page they were found on.",
            plan.moves.len()
        );
    }
    Ok(0)
}

/// `supports <renderer>`: exit 0 when the preprocessor runs for it, 1 otherwise.
pub(crate) fn supports(renderer: &str) -> i32 {
    i32::from(!crate::output::annotate::supports(renderer))
}

/// `render`: the renderer protocol on stdin.
pub(crate) fn render() -> Result<i32> {
    let mut input = Vec::new();
    std::io::stdin()
        .read_to_end(&mut input)
        .map_err(|e| Error::new(format!("cannot read stdin: {e} (stdin)")))?;
    crate::output::render::render_input(&input)?;
    Ok(0)
}
