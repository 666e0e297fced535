//! Commands that work on the built book: `build` (the embedded mdBook engine with our preprocessor
//! and renderer), `anchors` (the anchoring report without a build), `anchors heal`, and the mdBook
//! plugin entry points `supports` and `render`. Builds go through the engine.

use super::{Ctx, say, say_err};
use crate::base::anchor::Status;
use crate::base::store::Scope;
use crate::base::store::{ids, json};
use crate::model::book::Book;
use crate::model::resolve::BookAnchors;
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
            || c.scope() != Some(Scope::Selection)
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
    // Followed comments: re-keyed to the page they were found on.
    let moves: Vec<(String, String, String)> = anchors
        .located
        .iter()
        .enumerate()
        .filter_map(|(ci, l)| {
            let (f, ch) = (l.followed.as_ref()?, l.chapter?);
            let id = anchors.comments[ci].id()?.to_string();
            Some((id, f.from.clone(), anchors.chapters[ch].page.clone()))
        })
        .collect();
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
    for (id, from, to) in &moves {
        say!(
            "{} {id}: {from} → {to}",
            if dry_run { "would move" } else { "moved" }
        );
    }
    let summary = |verb_anchor: &str, verb_move: &str| {
        say!("notabene: {} anchor(s) {verb_anchor}.", updates.len());
        if !moves.is_empty() {
            say!(
                "notabene: {} comment(s) {verb_move} to the page they were found on.",
                moves.len()
            );
        }
    };
    if dry_run || (updates.is_empty() && moves.is_empty()) {
        if dry_run {
            summary("would be healed", "would be moved");
        } else {
            summary("healed", "moved");
        }
        return Ok(0);
    }
    let store = &ctx.store;
    let _lock = store.lock()?;
    let snap = store.load()?;
    let ts = ids::iso(ids::now()?);
    let moved_ids: std::collections::BTreeSet<&str> =
        moves.iter().map(|(id, _, _)| id.as_str()).collect();
    let ids_list: Vec<String> = updates
        .iter()
        .map(|(id, _)| id.clone())
        .filter(|id| !moved_ids.contains(id.as_str()))
        .collect();
    let healed: std::collections::BTreeMap<&str, &Value> =
        updates.iter().map(|(id, a)| (id.as_str(), a)).collect();
    let found: Vec<_> = store.find(&snap, &ids_list)?.into_iter().cloned().collect();
    for (mut rec, id) in found.into_iter().zip(&ids_list) {
        rec.comment.set("anchor", healed[id.as_str()].clone());
        rec.comment.set("updatedAt", ts.clone().into());
        store.write_record(&rec)?;
    }
    // Every stored copy of each comment, found once.
    let mut copies: std::collections::BTreeMap<&str, Vec<&crate::base::store::Record>> =
        std::collections::BTreeMap::new();
    for r in snap.comments() {
        if let Some(id) = r.comment.id() {
            copies.entry(id).or_default().push(r);
        }
    }
    // Members of one legacy array go from the last to the first, so the positions read in
    // `snap` stay right while the array shrinks.
    let position = |id: &str| {
        copies
            .get(id)
            .and_then(|c| c.first())
            .map(|r| match r.location {
                crate::base::store::Location::Legacy { index } => {
                    (r.file.clone(), usize::MAX - index)
                }
                crate::base::store::Location::File => (r.file.clone(), 0),
            })
    };
    let mut ordered: Vec<&(String, String, String)> = moves.iter().collect();
    ordered.sort_by_cached_key(|(id, _, _)| position(id));
    for (id, from, to) in ordered {
        let all = copies.get(id.as_str()).map(Vec::as_slice).unwrap_or(&[]);
        rekey(
            store,
            all,
            id,
            from,
            to,
            healed.get(id.as_str()).copied(),
            &ts,
        )?;
    }
    summary("healed", "moved");
    Ok(0)
}

/// Moves comment `id` from page `from` to page `to` (with its healed anchor, if any). When an
/// interrupted earlier move left it on both pages, the copy on `to` is kept and the one on
/// `from` removed, if the two differ only in `page`, `updatedAt` and the healed anchor.
fn rekey(
    store: &crate::base::store::Store,
    copies: &[&crate::base::store::Record],
    id: &str,
    from: &str,
    to: &str,
    anchor: Option<&Value>,
    ts: &str,
) -> Result<()> {
    let old: Vec<&&crate::base::store::Record> = copies
        .iter()
        .filter(|r| r.comment.page() == Some(from))
        .collect();
    let new = copies.iter().find(|r| r.comment.page() == Some(to));
    let [old] = old.as_slice() else {
        bail!(
            "comment {id:?} is stored {} time(s) on {from}; run `notabene comments verify`",
            old.len()
        );
    };
    if let Some(new) = new {
        // The interrupted move may also have healed the anchor.
        let strip = |r: &crate::base::store::Record| {
            let mut m = r.comment.as_map().clone();
            m.shift_remove("page");
            m.shift_remove("updatedAt");
            m.shift_remove("anchor");
            m
        };
        if strip(new) != strip(old) {
            bail!(
                "comment {id:?} is stored on {from} and on {to} with different contents; nothing moved ({})",
                new.file
            );
        }
        store.delete_record(old)?;
        return Ok(());
    }
    let mut comment = old.comment.clone();
    comment.set("page", to.into());
    if let Some(a) = anchor {
        comment.set("anchor", a.clone());
    }
    comment.set("updatedAt", ts.into());
    store.rekey(old, comment)?;
    Ok(())
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
