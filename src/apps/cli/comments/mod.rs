//! `comments …`: list, show, add, reply, done, reopen, apply, hold, unhold, rm, verify: the CLI's
//! adaptor over [`crate::apps::ops`], which holds every rule. This file parses the subcommands into
//! the operations' typed requests and prints what comes back; `add` does so for a new comment;
//! `verify` audits the store.

mod add;
mod verify;

use super::{Ctx, format, say, say_err};
use crate::apps::ops::{self, Actor, Change, ResolutionNote, limits};
use crate::{Error, Result, bail};
use add::AddArgs;
use clap::{Args, Subcommand};
use notabene_store::{Comment, Record, ids, json};
use serde_json::{Map, Value};

/// An operation's error as the CLI says it: the request field named as its flag.
pub(crate) fn flagged(e: Error) -> Error {
    ops::agent_error(e)
}

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
    /// The journal entry recording the change (default: one is written, as the browser does).
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
            let body = limits::text(&body, "body").map_err(flagged)?;
            let author = ids::resolve_author(author.as_deref(), ctx.work_dir());
            let change = Change::Reply {
                author: author.clone(),
                body: body.to_string(),
            };
            let out = ops::change(&ctx.store, &[id], &[change], Actor::Agent, false)
                .map_err(flagged)?
                .records;
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
                .map(|r| limits::text(r, "reply"))
                .transpose()
                .map_err(flagged)?;
            let author = ids::resolve_author(author.as_deref(), ctx.work_dir());
            let mut changes = vec![Change::Reopen];
            if let Some(r) = reply {
                changes.push(Change::Reply {
                    author: author.clone(),
                    body: r.to_string(),
                });
            }
            let out = ops::change(&ctx.store, &list, &changes, Actor::Agent, false)
                .map_err(flagged)?
                .records;
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
            let rec = ops::delete(&ctx.store, &id).map_err(flagged)?;
            say!("notabene: deleted comment {id} ({}).", rec.file);
            Ok(0)
        }
        CommentsCmd::Verify { json } => verify::verify_cmd(ctx, json),
    }
}

fn ls(ctx: &Ctx, a: &LsArgs) -> Result<i32> {
    if let Some(s) = &a.status {
        ops::status_filter(s).map_err(flagged)?;
    }
    let snap = ctx.store.load()?;
    snap.warn_unreadable();
    let list: Vec<&Comment> = snap
        .comments()
        .map(|r| &r.comment)
        .filter(|c| !a.open || c.is_actionable())
        .filter(|c| a.page.as_deref().is_none_or(|p| c.page() == Some(p)))
        .filter(|c| {
            a.status
                .as_deref()
                .is_none_or(|s| c.status_str() == Some(s))
        })
        .collect();
    if a.json {
        let arr: Vec<&Map<String, Value>> = list.iter().map(|c| c.as_map()).collect();
        print!("{}", json::to_js_pretty(&arr));
    } else if list.is_empty() {
        say!("notabene: no comments.");
    } else {
        notabene_core::term::out_lines(list.iter().flat_map(|c| format::comment_block(c)));
    }
    Ok(0)
}

fn show(ctx: &Ctx, id: &str, as_json: bool) -> Result<i32> {
    let snap = ctx.store.load()?;
    let rec = ctx.store.find(&snap, &[id.to_string()])?[0];
    if as_json {
        print!("{}", json::to_js_pretty(rec.comment.as_map()));
    } else {
        notabene_core::term::out_lines(format::comment_detail(rec));
    }
    Ok(0)
}

fn done(ctx: &Ctx, a: &DoneArgs) -> Result<i32> {
    let review = ctx.review();
    let status = ops::done_status(review, a.status.as_deref()).map_err(flagged)?;
    let note = match &a.note {
        Some(n) => limits::short(n, limits::MAX_BODY, "note").map_err(flagged)?,
        None => "",
    };
    let change = Change::Close {
        status,
        resolution: Some(ResolutionNote {
            note: note.to_string(),
            journal: a.journal.clone(),
            by: None,
        }),
        by: String::new(),
    };
    let out = ops::change(&ctx.store, &a.ids, &[change], Actor::Agent, a.force).map_err(flagged)?;
    for id in &out.replaced_notes {
        say_err!(
            "notabene: warning: comment {id:?} was already addressed; its earlier note is replaced."
        );
    }
    if let Some(nudge) = ops::journal_nudge(&ctx.store, a.journal.as_deref(), &a.ids) {
        say_err!("notabene: {nudge}");
    }
    let records = out.records;
    print_result(&records, a.json, || {
        format!(
            "notabene: {} comment(s) → {status} (review: {}).",
            records.len(),
            review.as_str()
        )
    });
    Ok(0)
}

fn apply(ctx: &Ctx, a: &ApplyArgs) -> Result<i32> {
    let Some(book) = &ctx.book else {
        bail!("comments apply needs a book: no book.toml found (pass --book DIR)");
    };
    let req = ops::ApplyRequest {
        ids: a.ids.clone(),
        author: ids::resolve_author(a.author.as_deref(), ctx.work_dir()),
        actor: Actor::Agent,
        journal: a.journal.clone(),
        note: a.note.clone(),
        force: a.force,
    };
    let done = ops::apply_suggestions(book, &ctx.store, &req).map_err(flagged)?;
    if let Some(j) = a.journal.as_deref()
        && let Some(nudge) = ops::journal_nudge(&ctx.store, Some(j), &a.ids)
    {
        say_err!("notabene: {nudge}");
    }
    if a.json {
        let arr: Vec<&Map<String, Value>> = done.iter().map(|d| d.comment.as_map()).collect();
        print!("{}", json::to_js_pretty(&arr));
    } else {
        for line in ops::applied_lines(&done, a.journal.is_some()) {
            say!("{line}");
        }
    }
    Ok(0)
}

fn set_hold(ctx: &Ctx, a: &IdsArgs, hold: bool) -> Result<i32> {
    let out = ops::change(
        &ctx.store,
        &a.ids,
        &[Change::Hold(hold)],
        Actor::Agent,
        false,
    )
    .map_err(flagged)?
    .records;
    print_result(&out, a.json, || {
        format!(
            "notabene: {} comment(s) → {}.",
            out.len(),
            if hold { "on hold" } else { "off hold" }
        )
    });
    Ok(0)
}

fn print_result(out: &[Record], as_json: bool, human: impl FnOnce() -> String) {
    if as_json {
        let arr: Vec<&Map<String, Value>> = out.iter().map(|r| r.comment.as_map()).collect();
        print!("{}", json::to_js_pretty(&arr));
    } else {
        say!("{}", human());
    }
}
