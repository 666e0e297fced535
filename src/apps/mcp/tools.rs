//! The MCP server's tools: one typed request per tool (its input schema is generated from the
//! type), each a thin adaptor over [`crate::apps::ops`] with the CLI's rules and messages. An
//! error is the CLI's one line (`notabene: … (--flag)`), so an agent reads the same words
//! whichever way it came. Calls `ops`, `output::engine` and `output::render` (anchoring), the
//! store; never the CLI.

use crate::apps::ops::{self, Actor, Change, ResolutionNote, limits};
use crate::model::book::Book;
use crate::{Error, Result};
use notabene_store::{Record, Status, Store, ids};
use rmcp::schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// Where the server works: the book (if any) and the store, found once at start as the CLI
/// finds them (`--book`, `--store`, `NOTABENE_STORE`, the nearest `book.toml`).
pub struct Session {
    /// The book.
    pub book: Option<Book>,
    /// The store.
    pub store: Store,
    /// The working directory paths are shown relative to.
    pub cwd: PathBuf,
    /// The MCP client's name, from its `initialize` (`clientInfo`: its title, else its name).
    pub client: std::sync::Mutex<Option<String>>,
}

impl Session {
    /// Who a write through MCP is by: the `author` the call names, else the MCP client's name,
    /// else `NOTABENE_AUTHOR` or git's identity — always marked as an agent's
    /// ([`ids::agent_author`]), so a thread never shows an agent's words under a person's name.
    pub fn author(&self, given: Option<&str>) -> String {
        let client = self
            .client
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let name = match (given.map(str::trim).filter(|a| !a.is_empty()), client) {
            (Some(a), _) => a.to_string(),
            (None, Some(c)) => c,
            (None, None) => ids::resolve_author(None, self.work_dir()),
        };
        ids::agent_author(&name)
    }

    fn work_dir(&self) -> &Path {
        self.book
            .as_ref()
            .map_or(self.cwd.as_path(), |b| b.root.as_path())
    }

    fn book(&self, tool: &str) -> Result<&Book> {
        self.book.as_ref().ok_or_else(|| {
            Error::new(format!(
                "{tool} needs a book: no book.toml found (pass --book DIR)"
            ))
        })
    }

    fn review(&self) -> crate::model::book::Review {
        self.book
            .as_ref()
            .map_or(crate::model::book::Review::Auto, |b| b.config.review)
    }

    fn show(&self, path: &Path) -> String {
        path.strip_prefix(&self.cwd)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| path.display().to_string())
    }

    /// Every comment of the store with its `anchoring` (as `anchors --json` gives it), in
    /// store order; without a book, the comments alone.
    fn anchored(&self) -> Result<Vec<Value>> {
        match &self.book {
            Some(book) => {
                let (anchors, ids) = crate::output::engine::anchor_current(book, &self.store)?;
                let mut doc = crate::output::render::document(&anchors, book, &ids.prefix);
                Ok(match doc.get_mut("comments").map(Value::take) {
                    Some(Value::Array(list)) => list,
                    _ => Vec::new(),
                })
            }
            None => {
                let snap = self.store.load()?;
                Ok(snap
                    .comments()
                    .map(|r| Value::Object(r.comment.as_map().clone()))
                    .collect())
            }
        }
    }
}

/// `list_comments`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct ListRequest {
    /// Only the comments an agent should act on: open and not on hold (the default when no
    /// `status` is given). `false`: every comment, filtered by `status` if given.
    pub open: Option<bool>,
    /// Only this page (a page id, e.g. `docs/src/guide/setup`).
    pub page: Option<String>,
    /// Only this status: open, addressed or resolved.
    pub status: Option<String>,
}

fn yes() -> bool {
    true
}

/// `show_comment`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct ShowRequest {
    /// Comment id.
    pub id: String,
}

/// `reply`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct ReplyRequest {
    /// Comment id.
    pub id: String,
    /// The reply's text.
    pub body: String,
    /// Its author (default: the MCP client's name), marked as an agent's.
    pub author: Option<String>,
}

/// `done`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct DoneRequest {
    /// The comments handled.
    pub ids: Vec<String>,
    /// What was done (the resolution note).
    pub note: Option<String>,
    /// The journal entry that records the change (add it first with `journal_add`).
    pub journal: Option<String>,
    /// addressed or resolved; default: the book's `review` (auto → resolved, approve → addressed).
    pub status: Option<String>,
    /// Close held comments too (a reviewer's hold says: leave it alone).
    #[serde(default)]
    pub force: bool,
}

/// `reopen`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct ReopenRequest {
    /// The comments to open again (the resolution is cleared).
    pub ids: Vec<String>,
    /// A reply saying why.
    pub reply: Option<String>,
    /// The reply's author (default: the MCP client's name), marked as an agent's.
    pub author: Option<String>,
}

/// `hold`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct HoldRequest {
    /// The comments.
    pub ids: Vec<String>,
    /// `true` puts them on hold (agents skip them), `false` takes them off.
    #[serde(default = "yes")]
    pub hold: bool,
}

/// One change of a journal entry (other keys are kept, as `journal add` keeps them).
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct JournalChange {
    /// The page changed (a page id).
    pub page: String,
    /// What changed.
    pub what: Option<String>,
    /// Why.
    pub why: Option<String>,
    /// The comments this change answers.
    #[serde(rename = "commentIds")]
    pub comment_ids: Option<Vec<String>>,
    /// The commit holding the change, when it is committed.
    #[serde(rename = "ref")]
    pub git_ref: Option<String>,
}

/// `journal_add`: one entry, validated as `journal add` validates it (other keys are kept).
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct JournalRequest {
    /// The entry id (default: `j-YYYY-MM-DD-xxxxxx`); the same id again is not written twice.
    pub id: Option<String>,
    /// Its date, YYYY-MM-DD (default: today).
    pub date: Option<String>,
    /// A title.
    pub title: Option<String>,
    /// What the pass did, in a few sentences.
    pub summary: Option<String>,
    /// One change per page touched.
    pub changes: Vec<JournalChange>,
}

/// `apply_suggestion`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct ApplySuggestionRequest {
    /// Comments carrying a suggested edit.
    pub ids: Vec<String>,
    /// The journal entry recording it (default: one is written, as the browser does).
    pub journal: Option<String>,
    /// The resolution note (default: says what was replaced).
    pub note: Option<String>,
    /// Apply held comments' suggestions too.
    #[serde(default)]
    pub force: bool,
    /// Who applied it (default: the MCP client's name), marked as an agent's.
    pub author: Option<String>,
}

/// `anchors`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct AnchorsRequest {
    /// Only this page.
    pub page: Option<String>,
}

/// `check_edit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct CheckRequest {
    /// The git revision to compare the working tree with (default: HEAD).
    pub since: Option<String>,
}

/// `gate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GateRequest {
    /// Compare with the merge base of HEAD and this revision (default: the pull request's base
    /// branch in CI, else origin/HEAD).
    pub base: Option<String>,
    /// Every page of the book, not only the pages the change touches.
    #[serde(default)]
    pub all: bool,
    /// The kinds that fail the gate: open, addressed, orphan, fuzzy, recheck (default: open,
    /// orphan; an empty list: none).
    pub fail_on: Option<Vec<String>>,
}

/// `verify` takes nothing.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
pub struct VerifyRequest {}

/// What a tool answers: its JSON, and lines to say beside it (warnings the CLI prints on
/// stderr, the summary line it prints on stdout).
pub struct ToolAnswer {
    /// The result (an object).
    pub value: Value,
    /// One-line notes, in order.
    pub notes: Vec<String>,
}

fn answer(value: Value) -> ToolAnswer {
    ToolAnswer {
        value,
        notes: Vec::new(),
    }
}

fn comments_of(records: &[Record]) -> Value {
    Value::Array(
        records
            .iter()
            .map(|r| Value::Object(r.comment.as_map().clone()))
            .collect(),
    )
}

fn flagged<T>(r: Result<T>) -> Result<T> {
    r.map_err(ops::agent_error)
}

/// `list_comments`: the roster, each comment with its anchoring and source place.
pub fn list(s: &Session, r: ListRequest) -> Result<ToolAnswer> {
    let status = match &r.status {
        Some(st) => Some(flagged(ops::status_filter(st))?),
        None => None,
    };
    let status_of = |c: &Value| c["status"].as_str().and_then(Status::parse);
    let page = r.page.as_deref();
    let only_open = r.open.unwrap_or(r.status.is_none());
    let list: Vec<Value> = s
        .anchored()?
        .into_iter()
        .filter(|c| {
            let open = status_of(c) == Some(Status::Open) && c["hold"] != true;
            (!only_open || open)
                && page.is_none_or(|p| c["page"] == p)
                && status.is_none_or(|st| status_of(c) == Some(st))
        })
        .collect();
    let n = list.len();
    Ok(ToolAnswer {
        value: json!({ "comments": list }),
        notes: vec![format!("notabene: {n} comment(s).")],
    })
}

/// `show_comment`.
pub fn show(s: &Session, r: ShowRequest) -> Result<ToolAnswer> {
    let snap = s.store.load()?;
    s.store.find(&snap, std::slice::from_ref(&r.id))?;
    let c = s
        .anchored()?
        .into_iter()
        .find(|c| c["id"] == r.id.as_str())
        .unwrap_or(Value::Null);
    Ok(answer(json!({ "comment": c })))
}

/// `reply`.
pub fn reply(s: &Session, r: ReplyRequest) -> Result<ToolAnswer> {
    let body = flagged(limits::text(&r.body, "body"))?;
    let author = s.author(r.author.as_deref());
    let change = Change::Reply {
        author: author.clone(),
        body: body.to_string(),
    };
    let out = flagged(ops::change(
        &s.store,
        &[r.id],
        &[change],
        Actor::Agent,
        false,
    ))?
    .records;
    Ok(ToolAnswer {
        notes: vec![format!(
            "notabene: replied to {} (by {author}).",
            out[0].comment.id().unwrap_or_default()
        )],
        value: json!({ "comment": out[0].comment.as_map() }),
    })
}

/// `done`: closes the comments with the status `review` gives, a note and a journal entry.
pub fn done(s: &Session, r: DoneRequest) -> Result<ToolAnswer> {
    let review = s.review();
    let status = flagged(ops::done_status(review, r.status.as_deref()))?;
    let note = match &r.note {
        Some(n) => flagged(limits::short(n, limits::MAX_BODY, "note"))?,
        None => "",
    };
    let change = Change::Close {
        status,
        resolution: Some(ResolutionNote {
            note: note.to_string(),
            journal: r.journal.clone(),
            by: None,
        }),
        by: String::new(),
    };
    let out = flagged(ops::change(
        &s.store,
        &r.ids,
        &[change],
        Actor::Agent,
        r.force,
    ))?;
    let mut notes: Vec<String> = out
        .replaced_notes
        .iter()
        .map(|id| {
            format!(
                "notabene: warning: comment {id:?} was already addressed; its earlier note is replaced."
            )
        })
        .collect();
    if let Some(nudge) = ops::journal_nudge(&s.store, r.journal.as_deref(), &r.ids) {
        notes.push(format!("notabene: {nudge}"));
    }
    notes.push(format!(
        "notabene: {} comment(s) → {status} (review: {}).",
        out.records.len(),
        review.as_str()
    ));
    Ok(ToolAnswer {
        value: json!({ "comments": comments_of(&out.records) }),
        notes,
    })
}

/// `reopen`.
pub fn reopen(s: &Session, r: ReopenRequest) -> Result<ToolAnswer> {
    let reply = flagged(
        r.reply
            .as_deref()
            .map(|t| limits::text(t, "reply"))
            .transpose(),
    )?;
    let author = s.author(r.author.as_deref());
    let mut changes = vec![Change::Reopen];
    if let Some(t) = reply {
        changes.push(Change::Reply {
            author: author.clone(),
            body: t.to_string(),
        });
    }
    let out = flagged(ops::change(&s.store, &r.ids, &changes, Actor::Agent, false))?.records;
    let line = match reply {
        Some(_) => format!(
            "notabene: {} comment(s) → open (reply by {author}).",
            out.len()
        ),
        None => format!("notabene: {} comment(s) → open.", out.len()),
    };
    Ok(ToolAnswer {
        value: json!({ "comments": comments_of(&out) }),
        notes: vec![line],
    })
}

/// `hold`.
pub fn hold(s: &Session, r: HoldRequest) -> Result<ToolAnswer> {
    let out = flagged(ops::change(
        &s.store,
        &r.ids,
        &[Change::Hold(r.hold)],
        Actor::Agent,
        false,
    ))?
    .records;
    let line = format!(
        "notabene: {} comment(s) → {}.",
        out.len(),
        if r.hold { "on hold" } else { "off hold" }
    );
    Ok(ToolAnswer {
        value: json!({ "comments": comments_of(&out) }),
        notes: vec![line],
    })
}

/// `journal_add`: the entry (`value`, already read as a [`JournalRequest`]) validated and
/// appended as `journal add` does (idempotent), its keys in the order the agent wrote them.
pub fn journal_add(s: &Session, value: Value) -> Result<ToolAnswer> {
    let added = ops::journal_add(&s.store, value)?;
    Ok(ToolAnswer {
        value: json!({ "id": added.id }),
        notes: vec![added.line],
    })
}

/// `apply_suggestion`: writes each suggested edit into the Markdown and closes its comment.
pub fn apply(s: &Session, r: ApplySuggestionRequest) -> Result<ToolAnswer> {
    let book = s.book("comments apply")?;
    let req = ops::ApplyRequest {
        ids: r.ids,
        author: s.author(r.author.as_deref()),
        actor: Actor::Agent,
        journal: r.journal.clone(),
        note: r.note,
        force: r.force,
    };
    let done = flagged(ops::apply_suggestions(book, &s.store, &req))?;
    let mut notes = ops::applied_lines(&done, r.journal.is_some());
    if let Some(j) = r.journal.as_deref()
        && let Some(nudge) = ops::journal_nudge(&s.store, Some(j), &req.ids)
    {
        notes.push(format!("notabene: {nudge}"));
    }
    let list: Vec<&Map<String, Value>> = done.iter().map(|d| d.comment.as_map()).collect();
    Ok(ToolAnswer {
        value: json!({ "comments": list }),
        notes,
    })
}

/// `verify`: the store audit, as `comments verify --json` reports it.
pub fn verify(s: &Session, _: VerifyRequest) -> Result<ToolAnswer> {
    let Some(a) = ops::audit::audit(&s.store, s.book.as_ref())? else {
        return Err(Error::new(format!(
            "no store at {}. Run `notabene init` first.",
            s.store.root().display()
        )));
    };
    let line = format!(
        "notabene verify: {} comment(s), {} journal entr(ies) — {} error(s), {} warning(s).",
        a.comments, a.journal, a.errors, a.warnings
    );
    Ok(ToolAnswer {
        value: a.to_json(&s.show(s.store.root())),
        notes: vec![line],
    })
}

/// `anchors`: where every comment lands in the current text (the `anchors --json` document).
pub fn anchors(s: &Session, r: AnchorsRequest) -> Result<ToolAnswer> {
    let book = s.book("anchors")?;
    let (anchors, ids) = crate::output::engine::anchor_current(book, &s.store)?;
    let mut doc = crate::output::render::document(&anchors, book, &ids.prefix);
    if let Some(page) = &r.page
        && let Some(list) = doc.get_mut("comments").and_then(Value::as_array_mut)
    {
        list.retain(|c| c["page"] == page.as_str());
    }
    Ok(answer(doc))
}

/// `check_edit`: the comments open at `since` whose anchoring the working tree made worse,
/// each a bystander or one this change closed.
pub fn check(s: &Session, r: CheckRequest) -> Result<ToolAnswer> {
    let book = s.book("anchors --check")?;
    let since = r.since.as_deref().unwrap_or("HEAD");
    let report = ops::check::check(book, &s.store, since)?;
    let line = if report.bystanders > 0 {
        format!(
            "notabene: {} comment(s) still open anchor worse than at {since}: fix the edit before closing the pass.",
            report.bystanders
        )
    } else {
        format!("notabene: no open comment anchors worse than at {since}.")
    };
    Ok(ToolAnswer {
        value: ops::check::to_json(&report),
        notes: vec![line],
    })
}

/// `gate`: the review state of the pages a change touches, as `notabene gate --format json`.
pub fn gate(s: &Session, r: GateRequest) -> Result<ToolAnswer> {
    use ops::gate::{Base, GateOptions, Kind};
    let book = s.book("gate")?;
    let fail_on = match r.fail_on {
        None => [Kind::Open, Kind::Orphan].into_iter().collect(),
        Some(list) => list
            .iter()
            .map(|k| {
                Kind::parse(k).ok_or_else(|| {
                    crate::Error::new(format!(
                        "unknown kind {k:?}: expected open, addressed, orphan, fuzzy or recheck (failOn)"
                    ))
                })
            })
            .collect::<Result<_>>()?,
    };
    let base = match (r.base, r.all) {
        (_, true) => Base::All,
        (Some(rev), false) => Base::Rev(rev),
        (None, false) => Base::Default,
    };
    let opts = GateOptions {
        base,
        links: None,
        fail_on,
        inert: false,
    };
    let report = ops::gate::gate(book, &s.store, &opts)?;
    let totals = report.totals();
    let line = format!(
        "notabene: gate: {} page(s) touched; {}; {}",
        report.pages.len(),
        ops::gate::counts_in_words(&totals),
        if report.failed { "fails" } else { "passes" }
    );
    let mut notes = report.notes.clone();
    notes.push(line);
    Ok(ToolAnswer {
        value: serde_json::to_value(&report).unwrap_or(Value::Null),
        notes,
    })
}
