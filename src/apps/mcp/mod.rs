//! `notabene mcp`: the review loop as a Model Context Protocol server over stdio, on the
//! official Rust SDK (`rmcp`). Its tools are those of [`tools`], each a thin adaptor over
//! [`crate::apps::ops`] whose errors are the CLI's one line; the agent protocol is the resource
//! `notabene://protocol.md`; the prompt `address-open-comments` walks an agent through a pass.
//!
//! A tool that fails answers a tool error (`isError: true`) whose text is the CLI's message —
//! an unknown tool and bad arguments included — and the server goes on serving; a line that is
//! not JSON, or is over the cap, gets a JSON-RPC error ([`lines`]). Nothing is written on stdout
//! but the protocol. Calls [`tools`], `ops`, `model::book`, `notabene_store`.

pub mod lines;
pub mod tools;

use crate::model::book::Book;
use crate::{Error, Result};
use notabene_store::Store;
use rmcp::ServiceExt;
use rmcp::handler::server::common::schema_for_type;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, Prompt, PromptMessage, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, Role, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::path::Path;
use tools::Session;

/// The URI of the agent protocol resource.
pub const PROTOCOL_URI: &str = "notabene://protocol.md";

/// The prompt that walks an agent through one review pass.
pub const PROMPT: &str = "address-open-comments";

/// The tools, in the order of the review loop: name, description, input schema.
fn tool_list() -> Vec<Tool> {
    use tools::*;
    vec![
        Tool::new(
            "list_comments",
            "The comments to act on (open and not on hold, unless a status is asked for; filter by \
             page). \
             Each comes with its anchoring: status (exact, fuzzy, orphan), the matched text, and \
             its source place (file relative to the repository root, line, column, byte range).",
            schema_for_type::<ListRequest>(),
        ),
        Tool::new(
            "show_comment",
            "One comment, its whole thread and its anchoring.",
            schema_for_type::<ShowRequest>(),
        ),
        Tool::new(
            "reply",
            "Append a reply to a comment's thread (to ask, or to answer without editing).",
            schema_for_type::<ReplyRequest>(),
        ),
        Tool::new(
            "journal_add",
            "Record what a pass changed and why: one entry, one change per page, listing the \
             comments each change answers. Add it before closing the comments with `done`.",
            schema_for_type::<JournalRequest>(),
        ),
        Tool::new(
            "done",
            "Close handled comments with a note and the journal entry: the status comes from the \
             book's review mode (auto → resolved, approve → addressed). Held comments are refused.",
            schema_for_type::<DoneRequest>(),
        ),
        Tool::new(
            "reopen",
            "Open comments again (clears the resolution), with an optional reply saying why.",
            schema_for_type::<ReopenRequest>(),
        ),
        Tool::new(
            "hold",
            "Put comments on hold (agents skip them) or take them off.",
            schema_for_type::<HoldRequest>(),
        ),
        Tool::new(
            "apply_suggestion",
            "Write a comment's suggested edit into the chapter's Markdown and close the comment as \
             `done` does; refused, with nothing written, when the quote is not found exactly once.",
            schema_for_type::<ApplySuggestionRequest>(),
        ),
        Tool::new(
            "verify",
            "Audit the store (the `comments verify --json` report): run it before offering a commit.",
            schema_for_type::<VerifyRequest>(),
        ),
        Tool::new(
            "anchors",
            "Where every comment lands in the current text (the `anchors --json` document).",
            schema_for_type::<AnchorsRequest>(),
        ),
        Tool::new(
            "check_edit",
            "The guard for your own edits: every comment open at a git revision (default HEAD) \
             whose anchoring the working tree made worse — exact to fuzzy, to orphan, followed, \
             now ambiguous — each marked closed (expected) or a bystander (fix your edit). Run it \
             before closing a pass; `bystanders > 0` means stop.",
            schema_for_type::<CheckRequest>(),
        ),
        Tool::new(
            "gate",
            "The review state of the pages a change touches, as CI reports it on the pull \
             request (`notabene gate --format json`): open comments, addressed ones waiting for \
             validation, lost and fuzzy anchors, and resolved comments whose text changed since \
             (recheck), each with its file, line and first message; `failed` says whether the \
             kinds of `failOn` (default open, orphan) were found. Not a guard for your edits: \
             that is check_edit.",
            schema_for_type::<GateRequest>(),
        ),
    ]
}

/// The MCP server: the session, and the tools' dispatch.
pub struct Server {
    session: Session,
}

impl Server {
    /// The server for the book and store the CLI would use with `--book` and `--store`.
    pub fn new(book: Option<&Path>, store: Option<&Path>) -> Result<Server> {
        let cwd = std::env::current_dir()
            .map_err(|e| Error::new(format!("cannot read the working directory: {e}")))?;
        let book = Book::discover(book)?;
        if let Some(b) = &book {
            crate::model::book::warn_config(b);
        }
        let store: Store = crate::model::book::config::locate_store(store, book.as_ref())
            .ok_or_else(|| {
                Error::new(format!(
                    "no book.toml in {} or any parent directory (pass --book DIR or --store DIR)",
                    cwd.display()
                ))
            })?;
        Ok(Server {
            session: Session {
                book,
                store,
                cwd,
                client: std::sync::Mutex::new(None),
            },
        })
    }

    /// Runs tool `name` on `args`: its answer, or the CLI's one-line error.
    pub fn call(
        &self,
        name: &str,
        args: Value,
    ) -> std::result::Result<tools::ToolAnswer, ToolFailure> {
        let s = &self.session;
        let run = |r: Result<tools::ToolAnswer>| r.map_err(ToolFailure::Refused);
        match name {
            "list_comments" => run(parse(name, args).and_then(|r| tools::list(s, r))),
            "show_comment" => run(parse(name, args).and_then(|r| tools::show(s, r))),
            "reply" => run(parse(name, args).and_then(|r| tools::reply(s, r))),
            // The entry is checked against its typed request, then stored as the agent wrote
            // it (key order included), as `journal add` stores its stdin.
            "journal_add" => run(parse::<tools::JournalRequest>(name, args.clone())
                .and_then(|_| tools::journal_add(s, args))),
            "done" => run(parse(name, args).and_then(|r| tools::done(s, r))),
            "reopen" => run(parse(name, args).and_then(|r| tools::reopen(s, r))),
            "hold" => run(parse(name, args).and_then(|r| tools::hold(s, r))),
            "apply_suggestion" => run(parse(name, args).and_then(|r| tools::apply(s, r))),
            "verify" => run(parse(name, args).and_then(|r| tools::verify(s, r))),
            "anchors" => run(parse(name, args).and_then(|r| tools::anchors(s, r))),
            "check_edit" => run(parse(name, args).and_then(|r| tools::check(s, r))),
            "gate" => run(parse(name, args).and_then(|r| tools::gate(s, r))),
            other => Err(ToolFailure::Unknown(other.to_string())),
        }
    }
}

/// Why a tool call has no answer; shown to the agent as the CLI's one-line error
/// (`notabene: …`).
#[derive(Debug)]
pub enum ToolFailure {
    /// The tool refused or failed.
    Refused(Error),
    /// No tool has this name.
    Unknown(String),
    /// The tool (named) panicked.
    Panicked(String),
}

impl std::fmt::Display for ToolFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolFailure::Refused(e) => write!(f, "notabene: {e}"),
            ToolFailure::Unknown(name) => write!(
                f,
                "notabene: unknown tool {name:?} (expected one of: {})",
                tool_list()
                    .iter()
                    .map(|t| t.name.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            ToolFailure::Panicked(tool) => write!(
                f,
                "notabene: internal error in {tool}; nothing more was done (tool)"
            ),
        }
    }
}

/// A tool's arguments as its typed request; a wrong shape is the one-line error naming it.
fn parse<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T> {
    serde_json::from_value(args)
        .map_err(|e| Error::new(format!("bad arguments for {tool}: {e} (arguments)")))
}

/// The prompt's text: the protocol's loop, in the tools' words.
fn prompt_text() -> String {
    "Address the open review comments of this book, following the notabene agent protocol \
     (resource notabene://protocol.md):\n\
     1. Call list_comments: the roster (open, not on hold). Take every comment on it; skip none \
        silently.\n\
     2. For each, open the file of its anchoring.source (path, line, byte range start..end): \
        that is the text it is about. Edit the Markdown to answer it, or reply to ask or to \
        explain why no edit is needed. A comment with a suggestion can be applied with \
        apply_suggestion.\n\
     3. Call check_edit: if bystanders > 0, your edit detached a comment you did not close; \
        fix the edit until it reports none.\n\
     4. Call journal_add with one entry: one change per page, what and why, with the ids of \
        the comments each change answers.\n\
     5. Call done with those ids, a note saying what you did, and the journal entry id.\n\
     6. Call verify, then list_comments again: every comment you took is closed or answered. \
        Offer the commit; never commit unasked."
        .to_string()
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_prompts()
                .build(),
        )
        .with_server_info(Implementation::new("notabene", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "Review comments of an mdBook book, anchored to its rendered text. Read \
             notabene://protocol.md, or use the prompt address-open-comments, before a pass.",
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tool_list()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        // Writes are by the client (an agent), under the name it gave: in this request's
        // `_meta` (the stateless lifecycle), else in `initialize`.
        let info = context
            .meta
            .client_info()
            .or_else(|| context.peer.peer_info().map(|p| p.client_info.clone()));
        if let Some(c) = info {
            let name = c.title.as_deref().unwrap_or(&c.name).trim();
            if !name.is_empty() {
                *self
                    .session
                    .client
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(name.to_string());
            }
        }
        // The tools read and write files and run git: off the runtime's async threads, and a
        // tool that panics answers an error instead of taking the server down.
        let answer = tokio::task::block_in_place(|| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.call(&request.name, args)
            }))
        })
        .unwrap_or_else(|_| Err(ToolFailure::Panicked(request.name.to_string())));
        let result = match answer {
            Ok(a) => {
                let mut text = notabene_store::json::to_js_pretty(&a.value);
                for n in &a.notes {
                    text.push_str(n);
                    text.push('\n');
                }
                let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
                r.structured_content = Some(a.value);
                r
            }
            Err(failure) => CallToolResult::error(vec![ContentBlock::text(failure.to_string())]),
        };
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new(PROTOCOL_URI, "protocol.md")
                .with_title("The notabene agent protocol")
                .with_description("How an agent addresses review comments: the rules of a pass.")
                .with_mime_type("text/markdown"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ReadResourceResponse, ErrorData> {
        if request.uri != PROTOCOL_URI {
            return Err(ErrorData::resource_not_found(
                format!(
                    "notabene: no resource {:?} (expected {PROTOCOL_URI})",
                    request.uri
                ),
                None,
            ));
        }
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(crate::apps::ops::PROTOCOL, PROTOCOL_URI)
                .with_mime_type("text/markdown"),
        ])
        .into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new(
            PROMPT,
            Some(
                "Walk through one review pass: list, edit or reply, check, journal, close, verify.",
            ),
            None,
        )]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<GetPromptResponse, ErrorData> {
        if request.name != PROMPT {
            return Err(ErrorData::invalid_params(
                format!("notabene: no prompt {:?} (expected {PROMPT})", request.name),
                None,
            ));
        }
        Ok(
            GetPromptResult::new(vec![PromptMessage::new_text(Role::User, prompt_text())])
                .with_description("One review pass over the open comments.")
                .into(),
        )
    }
}

/// Serves MCP on stdin/stdout until the client closes the connection.
pub fn serve_stdio(book: Option<&Path>, store: Option<&Path>) -> Result<()> {
    let server = Server::new(book, store)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::new(format!("cannot start the MCP server: {e}")))?;
    rt.block_on(async move {
        // Through the line layer: every line gets an answer, stdout has one writer.
        let lines::Lines {
            read,
            write,
            writer,
        } = lines::stdio();
        let running = server
            .serve((read, write))
            .await
            .map_err(|e| Error::new(format!("MCP initialisation failed: {e} (stdin)")))?;
        running
            .waiting()
            .await
            .map_err(|e| Error::new(format!("the MCP server stopped: {e}")))?;
        // Everything rmcp answered is written before the process ends.
        let _ = writer.await;
        Ok(())
    })
}
