//! `serve`: builds the book in process (html renderer plus our preprocessor, the same output
//! as `mdbook build`), serves it on loopback, rebuilds when sources, theme, book.toml, the
//! store or `po/` change (polled, debounced; output never lands in a watched directory, so it
//! never loops on its own writes), lets open pages live-reload, and exposes the guarded write
//! API under `/__notabene/api/`.

pub mod api;
pub mod guard;
pub mod http;

use crate::config::Book;
use crate::pages::PageIds;
use crate::{Error, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime};

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

/// The site being served and the build counter pages wait on.
struct Site {
    dir: RwLock<PathBuf>,
    pages: RwLock<BTreeSet<String>>,
    generation: Mutex<u64>,
    changed: Condvar,
    builds: Mutex<u64>,
}

/// Files whose changes trigger a rebuild: (path, modified, length), sorted.
fn snapshot(paths: &[PathBuf]) -> BTreeMap<PathBuf, (Option<SystemTime>, u64)> {
    let mut out = BTreeMap::new();
    fn walk(p: &Path, out: &mut BTreeMap<PathBuf, (Option<SystemTime>, u64)>) {
        let Ok(meta) = std::fs::symlink_metadata(p) else {
            return;
        };
        if meta.is_dir() {
            if let Ok(rd) = std::fs::read_dir(p) {
                for e in rd.flatten() {
                    walk(&e.path(), out);
                }
            }
        } else if meta.is_file() {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            // Temp files of atomic writes come and go; only their result matters.
            if !name.ends_with(".tmp") {
                out.insert(p.to_path_buf(), (meta.modified().ok(), meta.len()));
            }
        }
    }
    for p in paths {
        walk(p, &mut out);
    }
    out
}

fn build_into(root: &Path, dest: &Path) -> Result<BTreeSet<String>> {
    let mut md = crate::cli::load_book_engine(root)?;
    md.config.build.build_dir = dest.to_path_buf();
    // Live reload is ours (long-poll), not mdBook's websocket.
    md.build()
        .map_err(|e| Error::new(format!("build failed: {e:#}")))?;
    let book = Book::load(root)?;
    let ids = PageIds::new(&book);
    let pages = md
        .iter()
        .filter_map(|item| match item {
            mdbook_driver::book::BookItem::Chapter(ch) => {
                ch.source_path.as_ref().map(|sp| ids.for_chapter(sp))
            }
            _ => None,
        })
        .collect();
    Ok(pages)
}

/// Runs the server until the process is interrupted.
pub fn serve(root: &Path, options: &Options, announce: &dyn Fn(&str)) -> Result<()> {
    let book = Book::load(root)?;
    let ids = PageIds::new(&book);
    let store = crate::preprocess::store_for(&book);
    let repo = crate::git::Repo::discover(root);
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
    let initial = snapshot(&watched);
    let first = work.path().join("site-0");
    let pages = build_into(root, &first)?;
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

    // Watcher: poll, debounce, rebuild into a fresh directory, swap, wake waiting pages.
    {
        let site = Arc::clone(&site);
        let root = root.to_path_buf();
        let work_dir = work.path().to_path_buf();
        std::thread::spawn(move || {
            let mut last = initial;
            let mut n = 1u64;
            loop {
                std::thread::sleep(Duration::from_millis(200));
                let now = snapshot(&watched);
                if now == last {
                    continue;
                }
                // Debounce: wait until the tree is quiet for 300 ms.
                let mut settled = now;
                let start = Instant::now();
                loop {
                    std::thread::sleep(Duration::from_millis(300));
                    let again = snapshot(&watched);
                    if again == settled || start.elapsed() > Duration::from_secs(5) {
                        break;
                    }
                    settled = again;
                }
                last = settled;
                let dest = work_dir.join(format!("site-{n}"));
                n += 1;
                match build_into(&root, &dest) {
                    Ok(pages) => {
                        let old =
                            std::mem::replace(&mut *site.dir.write().expect("site lock"), dest);
                        *site.pages.write().expect("pages lock") = pages;
                        *site.builds.lock().expect("builds lock") += 1;
                        let mut g = site.generation.lock().expect("generation lock");
                        *g += 1;
                        site.changed.notify_all();
                        drop(g);
                        let _ = std::fs::remove_dir_all(old);
                    }
                    Err(e) => eprintln!("notabene: {e}"),
                }
            }
        });
    }

    let token = std::env::var("NOTABENE_TOKEN")
        .ok()
        .filter(|t| !t.is_empty());
    let author = crate::store::ids::resolve_author(None, root);
    let space = book.config.space.clone();
    let shared = Arc::new((store, ids, repo, token, author, space, options.host));
    for stream in server.incoming() {
        let site = Arc::clone(&site);
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || {
            let Some(request) = http::Request::read(stream) else {
                return;
            };
            let (store, ids, repo, token, author, space, host_mode) = &*shared;
            let policy = guard::Policy {
                host_mode: *host_mode,
                token: token.as_deref(),
            };
            handle(request, &site, store, ids, repo, &policy, author, space);
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

#[allow(clippy::too_many_arguments)]
fn handle(
    mut req: http::Request,
    site: &Site,
    store: &crate::store::Store,
    ids: &PageIds,
    repo: &crate::git::Repo,
    policy: &guard::Policy,
    author: &str,
    space: &str,
) {
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
            guard::check_write(&g, policy)
        } else {
            guard::check_read(&g, policy)
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
        let limited = std::io::Read::take(req.as_reader(), (api::MAX_REQUEST + 1) as u64)
            .read_to_end(&mut body);
        if limited.is_err() {
            let _ = req.respond(json_response(
                400,
                &serde_json::json!({ "error": "cannot read the request body" }),
            ));
            return;
        }
        let pages = site.pages.read().expect("pages lock").clone();
        let api = api::Api {
            store,
            pages: &pages,
            ids,
            repo,
            space,
            default_author: author,
        };
        let (code, value) = api.handle(&method, rest, query, &body);
        let _ = req.respond(json_response(code, &value));
        return;
    }
    if let Err(reason) = guard::check_read(&g, policy) {
        let _ = req.respond(json_response(403, &serde_json::json!({ "error": reason })));
        return;
    }
    let dir = site.dir.read().expect("site lock").clone();
    let _ = req.respond(static_file(&dir, &api::percent_decode(path)));
}

use std::io::Read as _;

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "woff2" => "font/woff2",
        "woff" => "font/woff",
        "ttf" => "font/ttf",
        "ico" => "image/x-icon",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

fn static_file(dir: &Path, path: &str) -> http::Response {
    let rel: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let bad = rel
        .iter()
        .any(|s| *s == ".." || s.contains('\\') || s.starts_with('.'));
    let mut file = dir.join(rel.join("/"));
    if file.is_dir() {
        file = file.join("index.html");
    }
    let (code, file) = if !bad && file.is_file() {
        (200, file)
    } else {
        (404, dir.join("404.html"))
    };
    let bytes = std::fs::read(&file).unwrap_or_else(|_| b"not found".to_vec());
    http::Response::from_data(bytes)
        .with_status_code(code)
        .with_header("Content-Type", content_type(&file))
        .with_header("Cache-Control", "no-cache")
}
