//! `serve`: builds the book in process (html renderer plus our preprocessor, the same output as
//! `mdbook build`), serves it on loopback, rebuilds when sources, theme, book.toml, the store or
//! `po/` change (told by the OS's file events, polled where there are none, debounced; output
//! never lands in a watched directory, so it never loops on its own writes), live-reloads open
//! pages over a WebSocket, and exposes the guarded write API under `/__notabene/api/`. On SIGINT
//! or SIGTERM it stops accepting, lets the watcher finish what it is writing, and removes its
//! build directory (the system's temporary directory, `notabene-serve-*`).

mod answer;
pub mod api;
mod bodies;
mod body;
mod csp;
mod edge;
pub mod guard;
pub mod http;
mod island_patcher;
mod islands;
mod lock;
mod page_api;
mod page_routes;
mod patches;
mod queue;
mod routes;
mod signed_in;
mod undo;
mod watch;
mod watched;

use crate::model::book::{Book, PageIds, Repo};
use crate::{Error, Result};
use notabene_core::say_err;
use notabene_store::Store;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

pub(crate) use answer::{Answer, ApiError};
pub(crate) use signed_in::{Gate, Reviewer, Role};

/// Options of `serve`.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Port; `None`: the first free port from 3000.
    pub port: Option<u16>,
    /// Bind every interface instead of loopback (requires a token: `NOTABENE_TOKEN`, or one
    /// generated and printed in the URL to open).
    pub host: bool,
    /// `--allowed-host`: with `host`, the names besides loopback that pages are served under
    /// without the token (as [`guard::allowed_host`] makes them).
    pub allowed_hosts: Vec<String>,
    /// Open a browser once serving.
    pub open: bool,
}

/// Who may do what on the book being served.
pub(crate) enum Access {
    /// `serve`: a loopback (or `--host`) server and its guard ([`guard`]).
    Local {
        /// The token API requests must carry: `NOTABENE_TOKEN`, or the one `--host` generated.
        token: Option<String>,
        /// `--host`: every interface is bound.
        host_mode: bool,
        /// The bound port.
        port: u16,
        /// `--allowed-host`: names pages are served under with `--host` (besides loopback).
        allowed_hosts: Vec<String>,
    },
    /// The hub: every request carries its [`Reviewer`] (the hub's front checked the
    /// sign-in), and every write goes through the gate.
    Hub(Arc<dyn Gate>),
}

/// Everything a request handler needs: the site being served, the store and the book's page
/// ids, the repository (diffs), who may do what, and the defaults of new comments.
pub(crate) struct Context {
    site: Arc<Site>,
    store: Store,
    ids: PageIds,
    repo: Repo,
    /// Who may do what.
    access: Access,
    /// Author of a write that names none (under `serve`).
    author: String,
    /// The book's `space`, for new comments.
    space: String,
    /// The book root.
    root: PathBuf,
    /// PATCH requests committed in groups.
    patches: api::PatchQueue,
    /// What the recent writes replaced (`POST undo`).
    undos: api::Undos,
    /// Names the page of each API write to the watcher (its island is patched at once).
    wake: Mutex<std::sync::mpsc::Sender<Hint>>,
}

impl Context {
    /// The guard's policy under `serve` (none under the hub: its front checks the sign-in).
    fn policy(&self) -> Option<guard::Policy<'_>> {
        match &self.access {
            Access::Local {
                token,
                host_mode,
                port,
                allowed_hosts,
            } => Some(guard::Policy {
                host_mode: *host_mode,
                port: *port,
                token: token.as_deref(),
                allowed: allowed_hosts,
            }),
            Access::Hub(_) => None,
        }
    }
}

/// What the API tells the watcher after a write: the page, and the comment's file key with
/// what happened to it (no key: read the page whole).
type Hint = (String, Option<(String, islands::FileChange)>);

/// The site being served and the build counter pages wait on.
struct Site {
    dir: RwLock<PathBuf>,
    /// Page id → its HTML file in `dir`.
    pages: RwLock<BTreeMap<String, Vec<String>>>,
    /// The build generation; live-reload sockets and long polls watch it.
    generation: tokio::sync::watch::Sender<u64>,
    /// Full builds so far, and the generation the last one published.
    builds: Mutex<(u64, u64)>,
    /// The generation of the last island patch and the pages it patched.
    last_patch: Mutex<Option<(u64, Vec<String>)>>,
    /// What every build keeps for the next: unchanged chapters are not anchored or injected
    /// again, and a rebuild renders only the pages that changed when it can.
    kept: Arc<crate::output::engine::Kept>,
    /// What the last full build reused, and whether it rendered the whole book (`GET
    /// status`: `lastBuild`).
    last_build: Mutex<(
        crate::output::engine::ReuseCounts,
        crate::output::engine::Rebuilt,
    )>,
    /// Held while the watcher builds into the build directory and serves the build; `true`
    /// once the server stops, after which it writes nothing more (island patches stop first:
    /// `IslandPatcher::close`).
    stopped: Mutex<bool>,
}

/// A token for `--host` without `NOTABENE_TOKEN`: 128 bits from the operating system's
/// CSPRNG, in hex (32 characters).
fn generated_token() -> Result<String> {
    let mut bits = [0u8; 16];
    getrandom::fill(&mut bits)
        .map_err(|e| Error::new(format!("cannot generate a token: {e} (--host)")))?;
    Ok(bits.iter().map(|b| format!("{b:02x}")).collect())
}

/// The paths whose changes trigger a rebuild: the sources, the theme, book.toml, the store,
/// `po/` and the book's extra watch directories.
fn watched_paths(book: &Book, root: &Path, store: &Store) -> Vec<PathBuf> {
    let mut watched = vec![
        book.src_dir(),
        root.join("theme"),
        root.join("book.toml"),
        store.root().to_path_buf(),
        root.join("po"),
    ];
    watched.extend(
        book.mdbook
            .build
            .extra_watch_dirs
            .iter()
            .map(|d| root.join(d)),
    );
    watched
}

/// The token API requests must carry (`NOTABENE_TOKEN`, or one generated for `--host`) and
/// the URL to open (a generated token is printed once, inside it; the page keeps it).
fn token_and_url(host: bool, port: u16) -> Result<(Option<String>, String)> {
    let env_token = std::env::var("NOTABENE_TOKEN")
        .ok()
        .filter(|t| !t.is_empty());
    let token = match (&env_token, host) {
        (None, true) => Some(generated_token()?),
        _ => env_token.clone(),
    };
    let url = match (&token, &env_token) {
        (Some(t), None) => format!("http://127.0.0.1:{port}/?nb-token={t}"),
        _ => format!("http://127.0.0.1:{port}/"),
    };
    Ok((token, url))
}

/// A book being served: its build directory, its site (rebuilt by a watcher thread when its
/// files change), the island patcher and the request context. `serve` runs one; the hub one per
/// branch it serves.
pub(crate) struct Served {
    ctx: Arc<Context>,
    patcher: Arc<island_patcher::IslandPatcher>,
    work: tempfile::TempDir,
}

impl Served {
    /// Builds the book at `root` (after writing its reader client when missing or stale),
    /// following its configuration as far as `trust` says, and starts watching it; requests are
    /// answered by [`Served::router`] with `access`.
    pub(crate) fn start(
        root: &Path,
        access: Access,
        trust: crate::model::book::Trust,
    ) -> Result<Served> {
        // Before the first snapshot: writing the client must not look like an edit.
        crate::output::engine::refresh_client_trusting(root, &trust)?;
        let book = Book::load(root)?;
        crate::model::book::warn_config(&book);
        let ids = PageIds::new(&book);
        let store = book.store();
        let repo = book.repo().clone();
        let work = tempfile::Builder::new()
            .prefix("notabene-serve-")
            .tempdir()
            .map_err(|e| Error::new(format!("cannot create a build directory: {e}")))?;
        let watched = watched_paths(&book, root, &store);
        // The file events are on before the snapshot the first build is compared with, and
        // that snapshot is taken before the build: a change made during it, or by a request
        // served before the watcher thread starts, still triggers a rebuild.
        let events = watched::Events::watch(&watched);
        if let watched::Events::Polling { why } = &events {
            say_err!("notabene: watching by polling every 200 ms ({why})");
        }
        let initial = watched::snapshot(&watched);
        let first = work.path().join("site-0");
        let kept = Arc::new(crate::output::engine::Kept {
            trust,
            ..Default::default()
        });
        let pages = crate::output::engine::build_into(root, &first, &kept)?;
        let site = Arc::new(Site {
            dir: RwLock::new(first),
            pages: RwLock::new(pages),
            generation: tokio::sync::watch::Sender::new(1),
            builds: Mutex::new((1, 1)),
            last_patch: Mutex::new(None),
            last_build: Mutex::new((kept.reuse.counts(), crate::output::engine::Rebuilt::Whole)),
            kept,
            stopped: Mutex::new(false),
        });
        let (wake, woken) = std::sync::mpsc::channel();
        let patcher = Arc::new(island_patcher::IslandPatcher::new(
            Arc::clone(&site),
            store.clone(),
            book.config.space.clone(),
        ));
        patcher.spawn(woken);
        watch::Watcher::new(
            Arc::clone(&site),
            root,
            work.path(),
            (watched, events),
            initial,
            Arc::clone(&patcher),
        )
        .spawn();
        let ctx = Arc::new(Context {
            site,
            store,
            ids,
            repo,
            access,
            author: notabene_store::ids::resolve_author(None, root),
            space: book.config.space.clone(),
            root: root.to_path_buf(),
            patches: api::PatchQueue::default(),
            undos: api::Undos::default(),
            wake: Mutex::new(wake),
        });
        Ok(Served { ctx, patcher, work })
    }

    /// What the last build skipped of the book's configuration (an inert build's commands).
    pub(crate) fn skipped(&self) -> Vec<String> {
        lock::lock(&self.ctx.site.kept.skipped).clone()
    }

    /// The routes of this book (pages, live reload, the API), from its root.
    pub(crate) fn router(&self) -> axum::Router {
        routes::router(Arc::clone(&self.ctx))
    }

    /// Stops: waits for a patch, then a build, under way (nothing is written after this; the
    /// watcher thread ends), and removes the build directory.
    pub(crate) fn close(self) -> Result<()> {
        self.patcher.close();
        *lock::lock(&self.ctx.site.stopped) = true;
        let dir = self.work.path().display().to_string();
        self.work
            .close()
            .map_err(|e| Error::new(format!("cannot remove the build directory: {e} ({dir})")))
    }
}

/// Runs the server until SIGINT or SIGTERM, then removes its build directory.
pub fn serve(root: &Path, options: &ServeOptions, announce: &dyn Fn(&str)) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::new(format!("cannot start the server's runtime: {e}")))?;
    // Before the build directory exists: a signal from now on removes it.
    let stop = {
        let _in = runtime.enter();
        http::Stop::register()?
    };
    let listeners = runtime.block_on(http::bind(options.host, options.port))?;
    let port = listeners[0]
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| Error::new(format!("cannot read the bound port: {e}")))?;
    let (token, url) = token_and_url(options.host, port)?;
    let access = Access::Local {
        token,
        host_mode: options.host,
        port,
        allowed_hosts: options.allowed_hosts.clone(),
    };
    // Before the server is announced: the first build, and what git runs to find the
    // repository, are done by then.
    let served = Served::start(root, access, crate::model::book::Trust::Full)?;
    if options.host {
        say_err!(
            "notabene: WARNING: --host binds every interface: anyone on this network can read the book. The review API requires the token."
        );
    }
    announce(&url);
    if options.open {
        let _ = std::process::Command::new("xdg-open").arg(&url).spawn();
    }
    runtime.block_on(http::run(listeners, served.router(), stop));
    // Open connections are dropped; a write already under way finishes (they are atomic).
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    served.close()
}

#[cfg(test)]
mod tests {
    use crate::apps::serve::generated_token;

    /// The generated token is 128 bits or more, in hex, and new each time.
    #[test]
    fn generated_tokens_are_128_random_bits() {
        let (a, b) = (generated_token().unwrap(), generated_token().unwrap());
        for t in [&a, &b] {
            assert!(t.len() >= 32, "{t}");
            assert!(t.bytes().all(|c| c.is_ascii_hexdigit()), "{t}");
        }
        assert_ne!(a, b);
    }
}
