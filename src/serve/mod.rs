//! `serve`: builds the book in process (html renderer plus our preprocessor, the same output
//! as `mdbook build`), serves it on loopback, rebuilds when sources, theme, book.toml, the
//! store or `po/` change (polled, debounced; output never lands in a watched directory, so it
//! never loops on its own writes), lets open pages live-reload, and exposes the guarded write
//! API under `/__notabene/api/`.
//!
//! Files: this one starts the server and routes requests ([`Context`] is everything a handler
//! needs); [`api`] is the write API, [`guard`] the origin/host/token checks, [`http`] the
//! transport, `watch` the polled rebuilds and `files` the static site.
//!
//! Layer 9. May call: `engine` (builds), the book layer, `store` and the shared helpers.

pub mod api;
mod files;
pub mod guard;
pub mod http;
mod watch;

use crate::book::{Book, PageIds, Repo};
use crate::store::Store;
use crate::{Error, Result};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::{Duration, Instant};

/// Options of `serve`.
#[derive(Debug, Clone)]
pub struct Options {
    /// Port; `None`: the first free port from 3000.
    pub port: Option<u16>,
    /// Bind every interface instead of 127.0.0.1.
    pub host: bool,
    /// Open a browser once serving.
    pub open: bool,
}

/// Everything a request handler needs: the site being served, the store and the book's page
/// ids, the repository (diffs), the guard's settings and the defaults of new comments.
struct Context {
    site: Arc<Site>,
    store: Store,
    ids: PageIds,
    repo: Repo,
    /// `NOTABENE_TOKEN`, when set.
    token: Option<String>,
    /// `--host`: every interface is bound.
    host_mode: bool,
    /// Author of a write that names none.
    author: String,
    /// The book's `space`, for new comments.
    space: String,
}

impl Context {
    fn policy(&self) -> guard::Policy<'_> {
        guard::Policy {
            host_mode: self.host_mode,
            token: self.token.as_deref(),
        }
    }
}

/// The site being served and the build counter pages wait on.
struct Site {
    dir: RwLock<PathBuf>,
    pages: RwLock<BTreeSet<String>>,
    generation: Mutex<u64>,
    changed: Condvar,
    builds: Mutex<u64>,
}

/// Runs the server until the process is interrupted.
pub fn serve(root: &Path, options: &Options, announce: &dyn Fn(&str)) -> Result<()> {
    // Before the first snapshot: writing the client must not look like an edit.
    crate::engine::refresh_client(root)?;
    let book = Book::load(root)?;
    let ids = PageIds::new(&book);
    let store = book.store();
    let repo = Repo::discover(root);
    let work = tempfile::Builder::new()
        .prefix("notabene-serve-")
        .tempdir()
        .map_err(|e| Error::new(format!("cannot create a build directory: {e}")))?;
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
    // Taken before the first build: a change made during it, or by a request served before
    // the watcher thread starts, still triggers a rebuild.
    let initial = watch::snapshot(&watched);
    let first = work.path().join("site-0");
    let pages = crate::engine::build_into(root, &first)?;
    let site = Arc::new(Site {
        dir: RwLock::new(first),
        pages: RwLock::new(pages),
        generation: Mutex::new(1),
        changed: Condvar::new(),
        builds: Mutex::new(1),
    });

    let bind_host = if options.host { "0.0.0.0" } else { "127.0.0.1" };
    let server = match options.port {
        Some(p) => http::Server::http((bind_host, p))
            .map_err(|e| Error::new(format!("cannot listen on {bind_host}:{p}: {e} (--port)")))?,
        None => (3000..3100)
            .find_map(|p| http::Server::http((bind_host, p)).ok())
            .ok_or_else(|| Error::new("no free port between 3000 and 3099 (--port)"))?,
    };
    let port = server.port();
    if options.host {
        eprintln!(
            "notabene: WARNING: --host binds every interface: anyone on this network can read and write the review comments. Use it only on a trusted network (set NOTABENE_TOKEN to require a token for writes)."
        );
    }
    let url = format!("http://127.0.0.1:{port}/");
    announce(&url);
    if options.open {
        let _ = std::process::Command::new("xdg-open").arg(&url).spawn();
    }

    watch::spawn(Arc::clone(&site), root, work.path(), watched, initial);

    let token = std::env::var("NOTABENE_TOKEN")
        .ok()
        .filter(|t| !t.is_empty());
    let ctx = Arc::new(Context {
        site,
        store,
        ids,
        repo,
        token,
        host_mode: options.host,
        author: crate::store::ids::resolve_author(None, root),
        space: book.config.space.clone(),
    });
    for stream in server.incoming() {
        let ctx = Arc::clone(&ctx);
        std::thread::spawn(move || {
            let Some(request) = http::Request::read(stream) else {
                return;
            };
            handle(request, &ctx);
        });
    }
    drop(work);
    Ok(())
}

fn header<'r>(req: &'r http::Request, name: &str) -> Option<&'r str> {
    req.header(name)
}

fn json_response(code: u16, body: &serde_json::Value) -> http::Response {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    http::Response::from_data(bytes)
        .with_status_code(code)
        .with_header("Content-Type", "application/json; charset=utf-8")
        .with_header("Cache-Control", "no-store")
        .with_header("X-Content-Type-Options", "nosniff")
}

fn handle(mut req: http::Request, ctx: &Context) {
    let site = &ctx.site;
    let policy = ctx.policy();
    let url = req.url().to_string();
    let (path, query) = url.split_once('?').unwrap_or((url.as_str(), ""));
    let method = req.method().to_string();
    let g = guard::Request {
        origin: header(&req, "Origin"),
        host: header(&req, "Host"),
        token: header(&req, "x-notabene-token"),
    };
    if let Some(rest) = path.strip_prefix("/__notabene/api/") {
        let writing = method != "GET" && method != "HEAD";
        let verdict = if writing {
            guard::check_write(&g, &policy)
        } else {
            guard::check_read(&g, &policy)
        };
        if let Err(reason) = verdict {
            let _ = req.respond(json_response(403, &serde_json::json!({ "error": reason })));
            return;
        }
        if rest == "status" {
            let since: u64 = query
                .split('&')
                .find_map(|kv| kv.strip_prefix("since="))
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            let mut g = site.generation.lock().expect("generation lock");
            let deadline = Instant::now() + Duration::from_secs(25);
            while *g <= since && since > 0 {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                g = site
                    .changed
                    .wait_timeout(g, left)
                    .expect("generation lock")
                    .0;
            }
            let builds = *site.builds.lock().expect("builds lock");
            let body = serde_json::json!({ "api": 1, "generation": *g, "builds": builds, "writable": true });
            drop(g);
            let _ = req.respond(json_response(200, &body));
            return;
        }
        if req.body_length().is_some_and(|n| n > api::MAX_REQUEST) {
            let _ = req.respond(json_response(
                413,
                &serde_json::json!({ "error": "payload too large" }),
            ));
            return;
        }
        let mut body = Vec::new();
        let limited = std::io::Read::read_to_end(
            &mut std::io::Read::take(req.as_reader(), (api::MAX_REQUEST + 1) as u64),
            &mut body,
        );
        if limited.is_err() {
            let _ = req.respond(json_response(
                400,
                &serde_json::json!({ "error": "cannot read the request body" }),
            ));
            return;
        }
        let pages = site.pages.read().expect("pages lock").clone();
        let api = api::Api {
            store: &ctx.store,
            pages: &pages,
            ids: &ctx.ids,
            repo: &ctx.repo,
            space: &ctx.space,
            default_author: &ctx.author,
        };
        let (code, value) = api.handle(&method, rest, query, &body);
        let _ = req.respond(json_response(code, &value));
        return;
    }
    if let Err(reason) = guard::check_read(&g, &policy) {
        let _ = req.respond(json_response(403, &serde_json::json!({ "error": reason })));
        return;
    }
    let dir = site.dir.read().expect("site lock").clone();
    let _ = req.respond(files::static_file(&dir, &api::percent_decode(path)));
}
