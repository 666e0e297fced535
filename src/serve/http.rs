//! The transport of `serve`, on the stack mdBook's own `serve` uses: hyper's HTTP/1.1 on tokio,
//! axum's WebSocket for live reload, tower-http's `ServeDir` for the built site.
//!
//! Limits: a request head of at most [`MAX_HEAD`] bytes (else 431), read within
//! [`HEAD_DEADLINE`] (else the connection is closed), at most [`MAX_CONNECTIONS`] connections
//! at once, a live-reload WebSocket included: it holds its connection's slot until it closes.
//! A connection past the cap is closed as soon as it is accepted rather than queued, so
//! sockets a page keeps open cannot pile up in the server's memory. An API body is at most [`api::MAX_REQUEST`] (413). hyper answers
//! malformed framing — two different `Content-Length`s, an invalid one, bad chunking — with a
//! 400 before any handler runs, so nothing is written. Static paths are percent-decoded by
//! `ServeDir` (`+` stays a plus), which refuses traversal.
//!
//! When `accept` fails for want of resources (`EMFILE`, `ENFILE`: out of file descriptors), the
//! accept loop sleeps before it tries again, [`ACCEPT_PAUSE`] doubling up to
//! [`ACCEPT_PAUSE_MAX`] (the pending connection stays queued, so an immediate retry would spin).
//! [`Stop`] is the signals (SIGINT, SIGTERM) that end `run`; `serve` then removes its build
//! directory.
//!
//! Routes: `/__notabene/ws` (live reload: the build generation, pushed), `/__notabene/api/…`
//! (the guarded API; `status?since=N` long-polls as a fallback), anything else the site.
//!
//! Part of the serve layer (10); calls `api` and `guard`.

use super::{Context, api, guard};
use axum::body::Body;
use axum::extract::FromRequest;
use axum::extract::ws::{Message, WebSocketUpgrade};
use axum::http::{HeaderValue, Request, Response, StatusCode, header};
use axum::response::IntoResponse;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

/// Largest accepted request head (request line and headers).
pub const MAX_HEAD: usize = 64 * 1024;
/// Time a client has to send a whole request head.
pub const HEAD_DEADLINE: Duration = Duration::from_secs(10);
/// Connections served at once (a live-reload socket is one until it closes).
pub const MAX_CONNECTIONS: usize = 1024;
/// The first pause of the accept loop after an `accept` that failed for want of resources.
pub const ACCEPT_PAUSE: Duration = Duration::from_millis(10);
/// The longest pause of the accept loop (the pause doubles after each such failure).
pub const ACCEPT_PAUSE_MAX: Duration = Duration::from_secs(1);
/// Largest message the live-reload socket reads (the page sends none but pings and close).
const WS_MAX_MESSAGE: usize = 16 * 1024;
/// How long a `status?since=` long poll waits for a build.
const LONG_POLL: Duration = Duration::from_secs(25);

/// Binds the server: loopback (`127.0.0.1`, and `[::1]` on the same port when the machine has
/// it) or, with `host`, every IPv4 interface; `port` or the first free one from 3000.
pub async fn bind(host: bool, port: Option<u16>) -> crate::Result<Vec<TcpListener>> {
    let v4 = if host { "0.0.0.0" } else { "127.0.0.1" };
    let first = match port {
        Some(p) => TcpListener::bind((v4, p))
            .await
            .map_err(|e| crate::Error::new(format!("cannot listen on {v4}:{p}: {e} (--port)")))?,
        None => {
            let mut found = None;
            for p in 3000..3100 {
                if let Ok(l) = TcpListener::bind((v4, p)).await {
                    found = Some(l);
                    break;
                }
            }
            found.ok_or_else(|| crate::Error::new("no free port between 3000 and 3099 (--port)"))?
        }
    };
    let port = first
        .local_addr()
        .map_err(|e| crate::Error::new(format!("cannot read the bound port: {e}")))?
        .port();
    let mut out = vec![first];
    if !host && let Ok(l) = TcpListener::bind(("::1", port)).await {
        out.push(l);
    }
    Ok(out)
}

/// The signals that stop the server: SIGINT (Ctrl-C) and SIGTERM. Registered by
/// [`Stop::register`] before anything is built, so one that comes at any point after is
/// caught (during the first build, the server stops once that build ends).
pub struct Stop {
    #[cfg(unix)]
    signals: (tokio::signal::unix::Signal, tokio::signal::unix::Signal),
}

impl Stop {
    /// Registers the handlers; call within the server's runtime.
    pub fn register() -> crate::Result<Stop> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let listen = |kind: SignalKind| {
                signal(kind).map_err(|e| {
                    crate::Error::new(format!("cannot listen for SIGINT and SIGTERM: {e}"))
                })
            };
            Ok(Stop {
                signals: (
                    listen(SignalKind::interrupt())?,
                    listen(SignalKind::terminate())?,
                ),
            })
        }
        #[cfg(not(unix))]
        Ok(Stop {})
    }

    /// Waits for one of the signals.
    pub async fn wait(self) {
        #[cfg(unix)]
        {
            let (mut int, mut term) = self.signals;
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
        }
        #[cfg(not(unix))]
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// Serves on `listeners`, at most [`MAX_CONNECTIONS`] connections at once, until `stop`
/// comes; the connections still open are left to the runtime's shutdown.
pub(super) async fn run(listeners: Vec<TcpListener>, ctx: Arc<Context>, stop: Stop) {
    let limit = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let mut tasks = tokio::task::JoinSet::new();
    for l in listeners {
        tasks.spawn(accept(l, Arc::clone(&ctx), Arc::clone(&limit)));
    }
    stop.wait().await;
    tasks.shutdown().await;
}

/// A connection's place under the cap: held by the connection, and by its WebSocket once
/// upgraded; freed when the last of them ends.
type Slot = Arc<tokio::sync::OwnedSemaphorePermit>;

/// Whether an `accept` error concerns only the connection it was accepting (then the next
/// one is taken at once); any other, `EMFILE` and `ENFILE` first, calls for a pause.
fn connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    matches!(
        e.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    )
}

async fn accept(listener: TcpListener, ctx: Arc<Context>, limit: Arc<tokio::sync::Semaphore>) {
    let mut pause = ACCEPT_PAUSE;
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => {
                pause = ACCEPT_PAUSE;
                stream
            }
            Err(e) if connection_error(&e) => continue,
            Err(_) => {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(ACCEPT_PAUSE_MAX);
                continue;
            }
        };
        // Past the cap: closed now (dropped), not queued.
        let Ok(permit) = Arc::clone(&limit).try_acquire_owned() else {
            continue;
        };
        let slot: Slot = Arc::new(permit);
        let ctx = Arc::clone(&ctx);
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let ctx = Arc::clone(&ctx);
                let slot = Arc::clone(&slot);
                async move { Ok::<_, Infallible>(route(req.map(Body::new), ctx, slot).await) }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEAD_DEADLINE)
                .max_buf_size(MAX_HEAD)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .with_upgrades();
            let _ = conn.await;
        });
    }
}

/// A JSON response that is never cached or sniffed.
fn json(code: u16, body: &serde_json::Value) -> Response<Body> {
    let mut r = Response::new(Body::from(serde_json::to_vec(body).unwrap_or_default()));
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=utf-8"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

fn refused(reason: String) -> Response<Body> {
    json(403, &serde_json::json!({ "error": reason }))
}

/// The value of `key` in a query string (not decoded: tokens and numbers need no decoding).
fn query_value<'q>(query: &'q str, key: &str) -> Option<&'q str> {
    query.split('&').find_map(|kv| {
        kv.split_once('=')
            .filter(|(k, _)| *k == key)
            .map(|(_, v)| v)
    })
}

/// A header's value as text (one that is not text cannot match anything: a NUL stands in).
fn header_text(req: &Request<Body>, name: &str) -> Option<String> {
    req.headers().get(name).map(|v| {
        v.to_str()
            .map(str::to_string)
            .unwrap_or_else(|_| "\u{0}".into())
    })
}

async fn route(req: Request<Body>, ctx: Arc<Context>, slot: Slot) -> Response<Body> {
    // hyper bounds the read buffer, not a head that arrives whole: measured here.
    let head: usize = req.uri().to_string().len()
        + req
            .headers()
            .iter()
            .map(|(k, v)| k.as_str().len() + v.len() + 4)
            .sum::<usize>();
    if head > MAX_HEAD {
        return json(
            431,
            &serde_json::json!({ "error": "request head too large" }),
        );
    }
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or("").to_string();
    let origin = header_text(&req, "origin");
    let host = header_text(&req, "host");
    let token_header = header_text(&req, "x-notabene-token");
    let policy = ctx.policy();
    let is_ws = path == "/__notabene/ws";
    let api_rest = path.strip_prefix("/__notabene/api/").map(str::to_string);
    if is_ws || api_rest.is_some() {
        let access = api::access(req.method().as_str(), api_rest.as_deref().unwrap_or(""));
        let g = guard::Request {
            origin: origin.as_deref(),
            host: host.as_deref(),
            // A WebSocket cannot carry a header: its token comes in the query.
            token: token_header
                .as_deref()
                .or_else(|| is_ws.then(|| query_value(&query, "token")).flatten()),
        };
        if let Err(reason) = guard::check_api(&g, &policy, access) {
            return refused(reason);
        }
    } else {
        let g = guard::Request {
            origin: None,
            host: host.as_deref(),
            token: None,
        };
        if let Err(reason) = guard::check_page(&g, &policy) {
            return refused(reason);
        }
    }
    if is_ws {
        return live_reload(req, ctx, slot).await;
    }
    if let Some(rest) = api_rest {
        return api_request(req, ctx, rest, query).await;
    }
    static_file(req, &ctx).await
}

/// `{"generation": N}`, with `"patched": [pages]` when generation N only patched those
/// chapters' islands (a page showing none of them need not reload).
fn generation_message(ctx: &Context, g: u64) -> serde_json::Value {
    let mut msg = serde_json::json!({ "generation": g });
    if let Some((pg, pages)) = &*ctx.site.last_patch.lock().expect("patch lock")
        && *pg == g
    {
        msg["patched"] = serde_json::json!(pages);
    }
    msg
}

/// The live-reload socket: sends `{"generation": N}` now and after every build. It keeps its
/// connection's `slot` until it closes, and small buffers (it sends a few bytes per build and
/// reads nothing).
async fn live_reload(req: Request<Body>, ctx: Arc<Context>, slot: Slot) -> Response<Body> {
    let ws = match WebSocketUpgrade::from_request(req, &()).await {
        Ok(ws) => ws,
        Err(rejection) => return rejection.into_response(),
    };
    let ws = ws
        .read_buffer_size(4096)
        .write_buffer_size(0)
        .max_write_buffer_size(WS_MAX_MESSAGE * 4)
        .max_message_size(WS_MAX_MESSAGE)
        .max_frame_size(WS_MAX_MESSAGE);
    ws.on_upgrade(move |mut socket| async move {
        let _slot = slot;
        let mut rx = ctx.site.generation.subscribe();
        loop {
            let g = *rx.borrow_and_update();
            let msg = generation_message(&ctx, g).to_string();
            if socket.send(Message::Text(msg.into())).await.is_err() {
                return;
            }
            tokio::select! {
                changed = rx.changed() => if changed.is_err() { return },
                incoming = socket.recv() => match incoming {
                    None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return,
                    Some(Ok(_)) => {}
                },
            }
        }
    })
}

async fn api_request(
    req: Request<Body>,
    ctx: Arc<Context>,
    rest: String,
    query: String,
) -> Response<Body> {
    if rest == "status" {
        let since: u64 = query_value(&query, "since")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let mut rx = ctx.site.generation.subscribe();
        if since > 0 {
            let _ = tokio::time::timeout(LONG_POLL, rx.wait_for(|g| *g > since)).await;
        }
        let g = *rx.borrow();
        let (builds, built) = *ctx.site.builds.lock().expect("builds lock");
        // `generation` moves with every change a page shows (a patched island too), `built`
        // is the generation of the last full build.
        let mut answer = generation_message(&ctx, g);
        answer["api"] = 1.into();
        answer["builds"] = builds.into();
        answer["built"] = built.into();
        answer["writable"] = true.into();
        let last = *ctx.site.last_build.lock().expect("build counts lock");
        // Chapters of the last full build: anchored and injected anew, or kept from the one
        // before (their Markdown and comments unchanged).
        answer["lastBuild"] = serde_json::json!({
            "anchored": last.anchored,
            "anchoringReused": last.anchoring_reused,
            "injected": last.injected,
            "injectionReused": last.injection_reused,
        });
        return json(200, &answer);
    }
    let too_long = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .is_some_and(|n| n > api::MAX_REQUEST);
    if too_long {
        return json(413, &serde_json::json!({ "error": "payload too large" }));
    }
    let method = req.method().as_str().to_string();
    let body = match axum::body::to_bytes(req.into_body(), api::MAX_REQUEST).await {
        Ok(b) => b,
        Err(e) if format!("{e:?}").contains("LengthLimit") => {
            return json(413, &serde_json::json!({ "error": "payload too large" }));
        }
        Err(_) => {
            return json(
                400,
                &serde_json::json!({ "error": "cannot read the request body" }),
            );
        }
    };
    // Store writes lock and fsync: off the async workers.
    let answer = tokio::task::spawn_blocking(move || {
        let pages = ctx.site.pages.read().expect("pages lock").clone();
        let api = api::Api {
            store: &ctx.store,
            pages: &pages,
            ids: &ctx.ids,
            repo: &ctx.repo,
            space: &ctx.space,
            default_author: &ctx.author,
            book_root: &ctx.root,
            patches: &ctx.patches,
        };
        let answer = api.handle(&method, &rest, &query, &body);
        // The comment a write changed: patched into its served chapter's island at once.
        if method != "GET" && answer.0 < 300 {
            let request = serde_json::from_slice::<serde_json::Value>(&body).ok();
            let field = |k: &str| {
                answer
                    .1
                    .get(k)
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
                    .or_else(|| request.as_ref()?.get(k)?.as_str().map(str::to_string))
            };
            let kind = match (method.as_str(), rest.as_str()) {
                ("POST", "comments") => super::patch::Kind::Created,
                ("DELETE", _) => super::patch::Kind::Removed,
                _ => super::patch::Kind::Changed,
            };
            if let (Some(page), Ok(w)) = (field("page"), ctx.wake.lock()) {
                let key = field("id").map(|id| (crate::store::ids::sanitize_id(&id), kind));
                let _ = w.send((page, key));
            }
        }
        answer
    })
    .await;
    match answer {
        Ok((code, value)) => json(code, &value),
        Err(_) => json(500, &serde_json::json!({ "error": "internal error" })),
    }
}

/// A file of the current build (`index.html` for a directory, the book's `404.html` with a
/// 404 for anything missing).
///
/// Every response names the build it came from in a `Server-Timing` entry (`nb-generation`,
/// its `dur` the generation), which the page reads from its navigation timing: a page served
/// just before a build finished, whose first status already says the next generation, still
/// knows it is stale. The generation is read before the site directory, and a build swaps the
/// directory before it counts, so a page is never older than the generation it names.
async fn static_file(req: Request<Body>, ctx: &Context) -> Response<Body> {
    let generation = *ctx.site.generation.borrow();
    let dir = ctx.site.dir.read().expect("site lock").clone();
    let mut files = tower_http::services::ServeDir::new(&dir)
        .not_found_service(tower_http::services::ServeFile::new(dir.join("404.html")));
    let mut response = match files.try_call(req).await {
        Ok(r) => r.map(Body::new),
        Err(_) => json(500, &serde_json::json!({ "error": "cannot read the site" })),
    };
    if let Ok(v) = format!("nb-generation;dur={generation}").parse() {
        response.headers_mut().insert("server-timing", v);
    }
    response
}
