//! The agent CLI, shared by the `notabene` and `mdbook-notabene` binaries: argument parsing,
//! store/book discovery, and dispatch to the command modules. Errors are one line on stderr,
//! `notabene: <what> (<where>)`, with exit code 1 (2 for `comments verify` without a store).
//! Human-readable output is written line by line through `say!` / `say_err!`, which escape control
//! and bidi characters (`notabene_core::term`); `--json` output is written raw.

mod build;
mod comments;
mod format;
mod gate;
mod hub;
mod install;
mod journal;
mod mcp_config;
mod merge;
mod setup;

use crate::model::book::Book;
use crate::{Error, Result};
use clap::{Args, Parser, Subcommand};
use notabene_store::Store;
use std::io::Write;
use std::path::{Path, PathBuf};

// Every human-readable line goes through these: one line each, escaped for the terminal
// (stored text is untrusted), a closed pipe ignored (`notabene comments ls | head`).
pub(crate) use notabene_core::{say, say_err};

#[derive(Parser, Debug)]
#[command(
    name = "notabene",
    version,
    about = "Review comments for mdBook books: the .notabene store and the agent CLI",
    disable_help_subcommand = true
)]
struct Cli {
    /// The book root (directory holding book.toml); default: nearest ancestor of the working directory.
    #[arg(long, global = true, value_name = "DIR", alias = "root")]
    book: Option<PathBuf>,
    /// The store directory; default: NOTABENE_STORE, else [preprocessor.notabene] store, else <book>/.notabene.
    #[arg(long, global = true, value_name = "DIR")]
    store: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

// Parsed once per process: the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
enum Command {
    /// Create the store, meta.json, protocol.md, the AGENTS.md block and .mcp.json's MCP server.
    Init(setup::InitArgs),
    /// Print the agent protocol (or its path, or refresh <store>/protocol.md).
    Protocol(setup::ProtocolArgs),
    /// Report the state of the book, config, store, protocol, AGENTS.md and .mcp.json.
    Doctor(JsonFlag),
    /// List, show, add, answer and close comments; audit the store.
    #[command(subcommand)]
    Comments(comments::CommentsCmd),
    /// Append to and list the journal.
    #[command(subcommand)]
    Journal(journal::JournalCmd),
    /// Remove the temp files of interrupted writes (under the store lock).
    Clean(merge::CleanArgs),
    /// git's merge driver for store files: `notabene merge-driver %O %A %B %P` (set up by `init`).
    MergeDriver(merge::MergeDriverArgs),
    /// Convert legacy v1 array files to one file per comment.
    Migrate(MigrateArgs),
    /// Set a book up: preprocessor table, client files, watched store, init.
    Install {
        /// The book root (default: --book, else the nearest book.toml).
        dir: Option<PathBuf>,
    },
    /// Build the book with the embedded mdBook engine and the notabene preprocessor.
    Build(build::BuildArgs),
    /// Build, serve on loopback, rebuild on change, and accept comments from the browser.
    Serve {
        /// The book root (default: --book, else the nearest book.toml).
        dir: Option<PathBuf>,
        /// Port (default: the first free one from 3000).
        #[arg(long)]
        port: Option<u16>,
        /// Listen on every interface; the API, and pages under a name not loopback nor --allowed-host, then need a token (NOTABENE_TOKEN, or one printed in the URL).
        #[arg(long)]
        host: bool,
        /// With --host: a name pages are served under without the token, besides loopback (repeatable).
        #[arg(long = "allowed-host", value_name = "NAME", requires = "host")]
        allowed_host: Vec<String>,
        /// Open a browser.
        #[arg(long)]
        open: bool,
    },
    /// The team's review server: every branch's book, comments as commits pushed to the branch.
    Hub(hub::HubArgs),
    /// Where every anchor lands in the current text, without a build; `anchors heal`; `anchors --check`.
    Anchors(build::AnchorsArgs),
    /// The review state of the pages a change touches, for CI: text, JSON, GitHub, GitLab, SARIF, JUnit or Markdown; exit 1 on --fail-on.
    Gate(gate::GateArgs),
    /// Serve the review loop to an agent over MCP (stdio): tools, the protocol, a prompt.
    Mcp,
    /// mdBook protocol: exit 0 if the preprocessor supports RENDERER.
    #[command(hide = true)]
    Supports {
        /// Renderer name.
        renderer: String,
    },
    /// mdBook protocol: render comments.json from a RenderContext on stdin.
    #[command(hide = true)]
    Render,
}

/// `--json`.
#[derive(Args, Debug)]
struct JsonFlag {
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct MigrateArgs {
    /// Report what would change without writing anything.
    #[arg(long)]
    dry_run: bool,
}

/// Refuses a `--store` directory that does not exist for the commands that read or change
/// comments and the journal (`comments verify` and `migrate` report a missing store
/// themselves): a mistyped path would read as an empty store, or start a new one.
fn require_store(flag: &Path, command: &Command) -> Result<()> {
    let reads = match command {
        Command::Comments(c) => !matches!(c, comments::CommentsCmd::Verify { .. }),
        Command::Journal(_) | Command::Clean(_) => true,
        _ => false,
    };
    if reads && !flag.is_dir() {
        return Err(Error::new(format!(
            "no store at {}; check the path, or run `notabene init` to start one (--store)",
            flag.display()
        )));
    }
    Ok(())
}

/// Where the command runs: the book (if any) and the store.
pub(crate) struct Ctx {
    pub book: Option<Book>,
    pub store: Store,
    cwd: PathBuf,
}

impl Ctx {
    fn resolve(book_flag: Option<&Path>, store_flag: Option<&Path>) -> Result<Ctx> {
        let cwd = std::env::current_dir()
            .map_err(|e| Error::new(format!("cannot read the working directory: {e}")))?;
        let book = Book::discover(book_flag)?;
        if let Some(b) = &book {
            crate::model::book::warn_config(b);
        }
        let store = crate::model::book::config::locate_store(store_flag, book.as_ref())
            .ok_or_else(|| {
                Error::new(format!(
                    "no book.toml in {} or any parent directory (pass --book DIR or --store DIR)",
                    cwd.display()
                ))
            })?;
        Ok(Ctx { book, store, cwd })
    }

    /// `path` relative to the working directory when below it (`.` for the directory itself),
    /// else absolute.
    pub(crate) fn show(&self, path: &Path) -> String {
        match path.strip_prefix(&self.cwd) {
            Ok(p) if p.as_os_str().is_empty() => ".".into(),
            Ok(p) => p.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }

    /// The review mode of the book's config.
    pub(crate) fn review(&self) -> crate::model::book::Review {
        self.book
            .as_ref()
            .map(|b| b.config.review)
            .unwrap_or(crate::model::book::Review::Auto)
    }

    /// The directory git and author lookups run in.
    pub(crate) fn work_dir(&self) -> &Path {
        self.book
            .as_ref()
            .map(|b| b.root.as_path())
            .unwrap_or(&self.cwd)
    }
}

/// Runs the CLI with `args` (including the program name) and returns the exit code.
pub fn run<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    // Run by git as the merge strategy `git-merge-notabene <base>… -- <head> <remote>…`.
    if args.first().is_some_and(|a| {
        Path::new(a).file_name() == Some(std::ffi::OsStr::new(merge::STRATEGY_PROGRAM))
    }) {
        return merge::strategy(&args[1..]);
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => return clap_exit(e),
    };
    let Some(command) = cli.command else {
        let mut cmd = <Cli as clap::CommandFactory>::command();
        let _ = writeln!(std::io::stdout(), "{}", cmd.render_help());
        return 0;
    };
    match dispatch(command, cli.book.as_deref(), cli.store.as_deref()) {
        Ok(code) => code,
        Err(e) => {
            say_err!("notabene: {e}");
            1
        }
    }
}

fn dispatch(command: Command, book: Option<&Path>, store: Option<&Path>) -> Result<i32> {
    match &command {
        Command::Supports { renderer } => return Ok(build::supports(renderer)),
        // git runs the driver at the top of the work tree, which need not hold a book.
        Command::MergeDriver(a) => return merge::merge_driver(a),
        Command::Render => return build::render(),
        Command::Serve {
            dir,
            port,
            host,
            allowed_host,
            open,
        } => {
            let root = match (dir, book) {
                (Some(d), _) => d.clone(),
                (None, Some(b)) => b.to_path_buf(),
                (None, None) => Ctx::resolve(None, store)?
                    .book
                    .map(|b| b.root)
                    .ok_or_else(|| Error::new("no book.toml found (pass the book directory)"))?,
            };
            let opts = crate::apps::serve::ServeOptions {
                port: *port,
                host: *host,
                allowed_hosts: allowed_host
                    .iter()
                    .map(|a| crate::apps::serve::guard::allowed_host(a))
                    .collect::<Result<_>>()?,
                open: *open,
            };
            crate::apps::serve::serve(&root, &opts, &|url| {
                say!("notabene: serving {} at {url}", root.display());
            })?;
            return Ok(0);
        }
        Command::Hub(a) => {
            crate::apps::hub::hub(a.options()?, &|url| {
                say!("notabene: hub serving at {url}");
            })?;
            return Ok(0);
        }
        Command::Install { dir: Some(d) } if book.is_none() => {
            let ctx = Ctx::resolve(Some(d), store)?;
            return install::install(&ctx, Some(d));
        }
        Command::Mcp => {
            crate::apps::mcp::serve_stdio(book, store)?;
            return Ok(0);
        }
        Command::Build(a) if book.is_none() && a.dir.is_some() => {
            let ctx = Ctx::resolve(a.dir.as_deref(), store)?;
            return build::build(&ctx, a);
        }
        _ => {}
    }
    let ctx = Ctx::resolve(book, store)?;
    if let Some(flag) = store {
        require_store(flag, &command)?;
    }
    match command {
        Command::Init(a) => setup::init(&ctx, &a),
        Command::Protocol(a) => setup::protocol(&ctx, &a),
        Command::Doctor(a) => setup::doctor(&ctx, a.json),
        Command::Comments(c) => comments::run(&ctx, c),
        Command::Journal(c) => journal::run(&ctx, c),
        Command::Build(a) => build::build(&ctx, &a),
        Command::Install { dir } => install::install(&ctx, dir.as_deref()),
        Command::Anchors(a) => build::anchors(&ctx, &a),
        Command::Gate(a) => gate::gate(&ctx, &a),
        Command::Clean(a) => merge::clean(&ctx, &a),
        Command::Supports { .. }
        | Command::Render
        | Command::Serve { .. }
        | Command::Hub(_)
        | Command::Mcp
        | Command::MergeDriver(_) => {
            unreachable!("handled before the context")
        }
        Command::Migrate(a) => {
            let report = notabene_store::migrate::migrate(&ctx.store, a.dry_run)?;
            for (file, why) in &report.kept {
                say_err!("notabene: kept {why} ({file})");
            }
            let verb = if a.dry_run {
                "would migrate"
            } else {
                "migrated"
            };
            say!(
                "notabene: {verb} {} page file(s) → {} comment file(s) (store schemaVersion {}).",
                report.pages,
                report.moved,
                notabene_store::SCHEMA_VERSION
            );
            Ok(0)
        }
    }
}

/// Turns a clap error into the CLI convention: help and version on stdout with exit 0,
/// anything else one line on stderr with exit 1.
fn clap_exit(e: clap::Error) -> i32 {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = write!(std::io::stdout(), "{e}");
            0
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            say_err!("notabene: a subcommand is required (see --help)");
            1
        }
        _ => {
            // The message is the first paragraph: its continuation lines name the missing
            // arguments or the possible values, so they are folded into the one line.
            let rendered = e.render().to_string();
            let head: Vec<&str> = rendered
                .lines()
                .map(str::trim)
                .take_while(|l| !l.is_empty())
                .collect();
            let head = if head.is_empty() {
                "invalid arguments".to_string()
            } else {
                head.join(" ")
            };
            let msg = head.strip_prefix("error: ").unwrap_or(&head);
            say_err!("notabene: {msg} (see --help)");
            1
        }
    }
}
