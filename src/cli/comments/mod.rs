//! `comments …`: list, show, add, reply, done, reopen, apply, hold, unhold, rm, verify.
//! Every mutation: lock the store, read it, validate every id, then write only the comment
//! files concerned.
//!
//! Files: this one parses the subcommands and runs the thread mutations (reply, done, reopen,
//! hold, rm); `add` creates comments; `verify` audits the store.
//!
//! Part of the CLI (layer 11); may call every layer below it.

mod add;
mod verify;

use super::{Ctx, format, say, say_err};
use crate::store::comment::STATUSES;
use crate::store::{Comment, Record, Store, ids, journal, json};
use crate::{Result, bail};
use add::AddArgs;
use clap::{Args, Subcommand};
use serde_json::{Map, Value};

/// Largest accepted comment body.
pub const MAX_BODY: usize = 64 * 1024;
/// Largest accepted quote (and prefix, suffix, section).
pub const MAX_QUOTE: usize = 8 * 1024;

#[derive(Subcommand, Debug)]
pub(crate) enum CommentsCmd {
    /// List comments (the agent roster with --open --json).
    Ls(LsArgs),
    /// Show one comment.
    Show {
        /// Comment id.
        id: String,
        /// Print the stored object.
        #[arg(long)]
        json: bool,
    },
    /// Add a comment on a text selection, a block (image/diagram) or a whole page.
    Add(AddArgs),
    /// Append a reply to a comment's thread.
    Reply {
        /// Comment id.
        id: String,
        /// Reply text.
        #[arg(long)]
        body: String,
        /// Author (default: git identity).
        #[arg(long)]
        author: Option<String>,
        /// Print the updated comment.
        #[arg(long)]
        json: bool,
    },
    /// Mark comments handled (status from `review`: auto → resolved, approve → addressed).
    Done(DoneArgs),
    /// Reopen comments (clears the resolution).
    Reopen {
        /// Comment ids.
        #[arg(required = true)]
        ids: Vec<String>,
        /// Reply explaining why (e.g. a rejection reason).
        #[arg(long)]
        reply: Option<String>,
        /// Author of the reply (default: git identity).
        #[arg(long)]
        author: Option<String>,
        /// Print the updated comments.
        #[arg(long)]
        json: bool,
    },
    /// Apply suggested edits: replace each quote in the chapter's Markdown, then close the comment as `done` does.
    Apply(ApplyArgs),
    /// Put comments on hold (agents skip them).
    Hold(IdsArgs),
    /// Take comments off hold.
    Unhold(IdsArgs),
    /// Delete one comment (there is no bulk delete).
    Rm {
        /// Comment id.
        id: String,
    },
    /// Audit the store (exit 0 ok, 1 errors, 2 no store).
    Verify {
        /// Machine-readable report.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args, Debug)]
pub(crate) struct LsArgs {
    /// Only comments an agent should act on (open and not on hold).
    #[arg(long)]
    open: bool,
    /// Full comment objects as a JSON array.
    #[arg(long)]
    json: bool,
    /// Only this page (exact match).
    #[arg(long)]
    page: Option<String>,
    /// Only this status (open, addressed, resolved).
    #[arg(long)]
    status: Option<String>,
}

#[derive(Args, Debug)]
pub(crate) struct DoneArgs {
    /// Comment ids.
    #[arg(required = true)]
    ids: Vec<String>,
    /// What was done.
    #[arg(long)]
    note: Option<String>,
    /// The journal entry recording the change.
    #[arg(long)]
    journal: Option<String>,
    /// Override the status (addressed or resolved).
    #[arg(long)]
    status: Option<String>,
    /// Close comments even when on hold.
    #[arg(long)]
    force: bool,
    /// Print the updated comments.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
pub(crate) struct ApplyArgs {
    /// Comment ids (each must carry a suggestion).
    #[arg(required = true)]
    ids: Vec<String>,
    /// The journal entry recording the change.
    #[arg(long)]
    journal: Option<String>,
    /// What was done (default: says what was replaced).
    #[arg(long)]
    note: Option<String>,
    /// Apply held comments' suggestions too.
    #[arg(long)]
    force: bool,
    /// Author recorded as the one who applied it (default: git identity).
    #[arg(long)]
    author: Option<String>,
    /// Print the updated comments.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
pub(crate) struct IdsArgs {
    /// Comment ids.
    #[arg(required = true)]
    ids: Vec<String>,
    /// Print the updated comments.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(ctx: &Ctx, cmd: CommentsCmd) -> Result<i32> {
    match cmd {
        CommentsCmd::Ls(a) => ls(ctx, &a),
        CommentsCmd::Show { id, json } => show(ctx, &id, json),
        CommentsCmd::Add(a) => add::add(ctx, &a),
        CommentsCmd::Reply {
            id,
            body,
            author,
            json,
        } => {
            let body = check_body(&body, "--body")?;
            let author = ids::resolve_author(author.as_deref(), ctx.work_dir());
            let out = mutate(
                &ctx.store,
                &[id],
                |_| Ok(()),
                |c, ts| {
                    c.push_message(&author, body, ts);
                    Ok(())
                },
            )?;
            if json {
                print!("{}", json::to_js_pretty(out[0].comment.as_map()));
            } else {
                say!(
                    "notabene: replied to {} (by {author}).",
                    out[0].comment.id().unwrap_or_default()
                );
            }
            Ok(0)
        }
        CommentsCmd::Done(a) => done(ctx, &a),
        CommentsCmd::Reopen {
            ids: list,
            reply,
            author,
            json,
        } => {
            let reply = reply
                .as_deref()
                .map(|r| check_body(r, "--reply"))
                .transpose()?
                .filter(|r| !r.is_empty());
            let author = ids::resolve_author(author.as_deref(), ctx.work_dir());
            let out = mutate(
                &ctx.store,
                &list,
                |_| Ok(()),
                |c, ts| {
                    c.set("status", "open".into());
                    c.set("resolution", Value::Null);
                    if let Some(r) = reply {
                        c.push_message(&author, r, ts);
                    }
                    Ok(())
                },
            )?;
            print_result(&out, json, || match reply {
                Some(_) => format!(
                    "notabene: {} comment(s) → open (reply by {author}).",
                    out.len()
                ),
                None => format!("notabene: {} comment(s) → open.", out.len()),
            });
            Ok(0)
        }
        CommentsCmd::Apply(a) => apply(ctx, &a),
        CommentsCmd::Hold(a) => set_hold(ctx, &a, true),
        CommentsCmd::Unhold(a) => set_hold(ctx, &a, false),
        CommentsCmd::Rm { id } => {
            let store = &ctx.store;
            let _lock = store.lock()?;
            let snap = store.load()?;
            let rec = store.find(&snap, std::slice::from_ref(&id))?[0].clone();
            store.delete_record(&rec)?;
            say!("notabene: deleted comment {id} ({}).", rec.file);
            Ok(0)
        }
        CommentsCmd::Verify { json } => verify::verify_cmd(ctx, json),
    }
}

fn check_body<'a>(body: &'a str, flag: &str) -> Result<&'a str> {
    let t = body.trim();
    if t.is_empty() {
        bail!("the text must not be empty ({flag})");
    }
    if t.len() > MAX_BODY {
        bail!(
            "the text is {} bytes; the limit is {MAX_BODY} ({flag})",
            t.len()
        );
    }
    Ok(t)
}

fn check_status_filter(s: &str) -> Result<()> {
    if !STATUSES.contains(&s) {
        bail!("unknown status {s:?} (expected: open, addressed, resolved) (--status)");
    }
    Ok(())
}

fn ls(ctx: &Ctx, a: &LsArgs) -> Result<i32> {
    if let Some(s) = &a.status {
        check_status_filter(s)?;
    }
    let snap = ctx.store.load()?;
    snap.warn_unreadable();
    let list: Vec<&Comment> = snap
        .comments()
        .map(|r| &r.comment)
        .filter(|c| !a.open || c.is_actionable())
        .filter(|c| a.page.as_deref().is_none_or(|p| c.page() == Some(p)))
        .filter(|c| a.status.as_deref().is_none_or(|s| c.status() == Some(s)))
        .collect();
    if a.json {
        let arr: Vec<&Map<String, Value>> = list.iter().map(|c| c.as_map()).collect();
        print!("{}", json::to_js_pretty(&arr));
    } else if list.is_empty() {
        say!("notabene: no comments.");
    } else {
        crate::util::term::out_lines(list.iter().flat_map(|c| format::comment_block(c)));
    }
    Ok(0)
}

fn show(ctx: &Ctx, id: &str, as_json: bool) -> Result<i32> {
    let snap = ctx.store.load()?;
    let rec = ctx.store.find(&snap, &[id.to_string()])?[0];
    if as_json {
        print!("{}", json::to_js_pretty(rec.comment.as_map()));
    } else {
        crate::util::term::out_lines(format::comment_detail(rec));
    }
    Ok(0)
}

fn done(ctx: &Ctx, a: &DoneArgs) -> Result<i32> {
    let review = ctx.review();
    let status = match a.status.as_deref() {
        None => review.done_status(),
        Some("open") => {
            bail!("--status open does not close a comment — use `comments reopen` (--status)")
        }
        Some(s) if STATUSES.contains(&s) => s,
        Some(s) => bail!("unknown status {s:?} (expected: open, addressed, resolved) (--status)"),
    };
    let force = a.force;
    let note = a.note.clone().unwrap_or_default();
    let out = mutate(
        &ctx.store,
        &a.ids,
        |r| {
            if r.comment.held() && !force {
                bail!(
                    "comment {:?} is on hold — a reviewer is still working on it; pass --force to close it anyway",
                    r.comment.id().unwrap_or_default()
                );
            }
            Ok(())
        },
        |c, _| {
            let mut res = Map::new();
            res.insert("note".into(), note.clone().into());
            if let Some(j) = &a.journal {
                res.insert("journalEntryId".into(), j.clone().into());
            }
            c.set("status", status.into());
            c.set("resolution", Value::Object(res));
            Ok(())
        },
    )?;
    match &a.journal {
        None => say_err!(
            "notabene: no --journal <entryId> — the protocol links every resolution to a journal entry."
        ),
        Some(j) => {
            let journal = journal::read(&ctx.store);
            if !journal
                .entries()
                .iter()
                .any(|e| e.get("id").and_then(Value::as_str) == Some(j.as_str()))
            {
                say_err!(
                    "notabene: journal entry {j:?} doesn't exist (yet) — append it with `journal add`."
                );
            }
        }
    }
    print_result(&out, a.json, || {
        format!(
            "notabene: {} comment(s) → {status} (review: {}).",
            out.len(),
            review.as_str()
        )
    });
    Ok(0)
}

fn apply(ctx: &Ctx, a: &ApplyArgs) -> Result<i32> {
    let Some(book) = &ctx.book else {
        bail!("comments apply needs a book: no book.toml found (pass --book DIR)");
    };
    let opts = crate::apply::Options {
        journal: a.journal.clone(),
        note: a.note.clone(),
        force: a.force,
        author: ids::resolve_author(a.author.as_deref(), ctx.work_dir()),
    };
    let done = crate::apply::apply(book, &ctx.store, &a.ids, &opts)?;
    if a.journal.is_none() {
        say_err!(
            "notabene: no --journal <entryId> — the protocol links every resolution to a journal entry."
        );
    }
    if a.json {
        let arr: Vec<&Map<String, Value>> = done.iter().map(|d| d.comment.as_map()).collect();
        print!("{}", json::to_js_pretty(&arr));
    } else {
        for d in &done {
            say!(
                "notabene: applied the suggestion of {} in {}:{} → {}.",
                d.comment.id().unwrap_or_default(),
                d.file,
                d.line,
                d.comment.status().unwrap_or_default()
            );
        }
    }
    Ok(0)
}

fn set_hold(ctx: &Ctx, a: &IdsArgs, hold: bool) -> Result<i32> {
    let out = mutate(
        &ctx.store,
        &a.ids,
        |_| Ok(()),
        |c, _| {
            c.set("hold", hold.into());
            Ok(())
        },
    )?;
    print_result(&out, a.json, || {
        format!(
            "notabene: {} comment(s) → {}.",
            out.len(),
            if hold { "on hold" } else { "off hold" }
        )
    });
    Ok(0)
}

/// Finds every id, locks the store (all validated by `check` before anything is written),
/// applies `change` to each with `updatedAt` bumped, writes them, and returns the records.
fn mutate(
    store: &Store,
    id_list: &[String],
    check: impl Fn(&Record) -> Result<()>,
    mut change: impl FnMut(&mut Comment, &str) -> Result<()>,
) -> Result<Vec<Record>> {
    let mut unique: Vec<String> = Vec::new();
    for id in id_list {
        if !unique.contains(id) {
            unique.push(id.clone());
        }
    }
    // The whole store is read to find the files before the lock is taken; under it only
    // those files are read again (a concurrent move sends us back to a full read, locked).
    let snap = store.load()?;
    snap.warn_unreadable();
    let located: Vec<Record> = store.find(&snap, &unique)?.into_iter().cloned().collect();
    let _lock = store.lock()?;
    let mut found: Vec<Record> = Vec::with_capacity(located.len());
    for r in &located {
        match store.reread(r)? {
            Some(fresh) => found.push(fresh),
            None => {
                let snap = store.load()?;
                found = store.find(&snap, &unique)?.into_iter().cloned().collect();
                break;
            }
        }
    }
    for r in &found {
        check(r)?;
    }
    let ts = ids::iso(ids::now()?);
    let mut out = Vec::with_capacity(found.len());
    for mut rec in found {
        change(&mut rec.comment, &ts)?;
        rec.comment.set("updatedAt", ts.clone().into());
        out.push(rec);
    }
    store.ensure_meta()?;
    for rec in &out {
        store.write_record(rec)?;
    }
    Ok(out)
}

fn print_result(out: &[Record], as_json: bool, human: impl FnOnce() -> String) {
    if as_json {
        let arr: Vec<&Map<String, Value>> = out.iter().map(|r| r.comment.as_map()).collect();
        print!("{}", json::to_js_pretty(&arr));
    } else {
        say!("{}", human());
    }
}
