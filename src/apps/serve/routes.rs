//! `serve`'s routes, on axum's `Router`:
//!
//! * `/__notabene/ws`: the live-reload socket (the build generation, pushed);
//! * `/__notabene/api/status` (`?since=N` long-polls, the socket's fallback), `comments`
//!   (`GET ?page=…` or `?all`, `POST`, `PATCH`, `DELETE`), `journal`, `diff?page=…` and
//!   `apply`, and the in-page editor's `page` (`GET`, `PUT`), `preview` and `asset`: the API
//!   of [`super::api`] and [`super::page_api`], run off the async workers (store writes lock
//!   and fsync); another method is a 405, another API path a 404, both in JSON;
//! * anything else: a file of the current build.
//!
//! Every route sits behind [`edge::checks`] (head size, the guard). A write that succeeds names its
//! page and comment to the watcher, which patches that chapter's island at once.

use super::answer::{Answer, ApiError};
use super::bodies::{ApplyBody, CommentBody, CreateBody, PatchBody, UndoBody};
use super::edge::{self, JsonBody, Query, error, json};
use super::http::Slot;
use super::islands::FileChange;
use super::page_routes;
use super::{Access, Context, Reviewer, api, lock};
use axum::Router;
use axum::body::Body;
use axum::extract::ws::{Message, WebSocketUpgrade};
use axum::extract::{DefaultBodyLimit, Extension, Request, State};
use axum::http::{Response, StatusCode};
use axum::response::IntoResponse;
use axum::routing::{MethodRouter, any, get, post};
use serde::Deserialize;
use serde_json::{Value, json as value};
use std::sync::Arc;
use std::time::Duration;

/// Largest message the live-reload socket reads (the page sends none but pings and close).
const WS_MAX_MESSAGE: usize = 16 * 1024;
/// How long a `status?since=` long poll waits for a build.
const LONG_POLL: Duration = Duration::from_secs(25);

/// The router of `serve`, every route behind [`edge::checks`].
pub(super) fn router(ctx: Arc<Context>) -> Router {
    let api = |path: &str| format!("{}{path}", edge::API);
    let only = |methods: MethodRouter<Arc<Context>>| {
        methods.fallback(|| async { error(StatusCode::METHOD_NOT_ALLOWED, "method not allowed") })
    };
    Router::new()
        .route(edge::SOCKET, any(live_reload))
        .route(&api("status"), only(get(status)))
        .route(
            &api("comments"),
            only(get(list).post(create).patch(patch).delete(delete)),
        )
        .route(&api("journal"), only(get(journal)))
        .route(&api("diff"), only(get(diff)))
        .route(&api("apply"), only(post(apply)))
        .route(&api("undo"), only(post(undo)))
        .route(
            &api("page"),
            only(get(page_routes::page).put(page_routes::put_page)),
        )
        .route(&api("preview"), only(post(page_routes::preview)))
        .route(
            &api("asset"),
            only(post(page_routes::asset)).layer(DefaultBodyLimit::max(page_routes::ASSET_REQUEST)),
        )
        .route(&api(""), any(not_found))
        .route(&api("{*rest}"), any(not_found))
        .fallback(static_file)
        .layer(DefaultBodyLimit::max(api::MAX_REQUEST))
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&ctx),
            edge::checks,
        ))
        .with_state(ctx)
}

async fn not_found() -> Response<Body> {
    ApiError::not_found().into_response()
}

/// `{"generation": N}`, with `"patched": [pages]` when generation N only patched those
/// chapters' islands (a page showing none of them need not reload).
fn generation_message(ctx: &Context, g: u64) -> Value {
    let mut msg = value!({ "generation": g });
    if let Some((pg, pages)) = &*lock::lock(&ctx.site.last_patch)
        && *pg == g
    {
        msg["patched"] = value!(pages);
    }
    msg
}

/// The live-reload socket: sends `{"generation": N}` now and after every build. It keeps its
/// connection's `slot` until it closes, and small buffers (it sends a few bytes per build and
/// reads nothing).
async fn live_reload(
    State(ctx): State<Arc<Context>>,
    Extension(slot): Extension<Slot>,
    ws: WebSocketUpgrade,
) -> Response<Body> {
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

/// `GET status?since=N`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StatusQuery {
    /// Waits (at most [`LONG_POLL`]) for a generation past this one.
    #[serde(default)]
    since: u64,
}

/// `GET status`: the build generation and counters; with `since`, once the generation has
/// moved past it (or the long poll ran out).
async fn status(
    State(ctx): State<Arc<Context>>,
    who: Option<Extension<Reviewer>>,
    Query(q): Query<StatusQuery>,
) -> Response<Body> {
    let mut rx = ctx.site.generation.subscribe();
    if q.since > 0 {
        let _ = tokio::time::timeout(LONG_POLL, rx.wait_for(|g| *g > q.since)).await;
    }
    let g = *rx.borrow();
    let (builds, built) = *lock::lock(&ctx.site.builds);
    // `generation` moves with every change a page shows (a patched island too), `built`
    // is the generation of the last full build.
    let mut answer = generation_message(&ctx, g);
    answer["api"] = 1.into();
    answer["builds"] = builds.into();
    answer["built"] = built.into();
    answer["writable"] = true.into();
    if let Access::Hub(gate) = &ctx.access {
        // Under the hub: who the sign-in says writes, and whether this branch takes writes.
        if let Some(Extension(who)) = &who {
            answer["identity"] = who.author().into();
            answer["maintainer"] = (who.role == super::Role::Maintainer).into();
        }
        answer["writable"] = (who.is_some() && gate.read_only().is_none()).into();
        if let Some(why) = gate.read_only() {
            answer["readOnly"] = why.into();
        }
        // What the branch's book.toml asked to run that the hub never runs.
        answer["skipped"] = value!(*lock::lock(&ctx.site.kept.skipped));
    }
    let (last, rebuilt) = *lock::lock(&ctx.site.last_build);
    // Chapters of the last full build: anchored and injected anew, or kept from the one
    // before (their Markdown and comments unchanged); and what it rendered: the whole book,
    // or only the pages that changed (`print.html` and the search index follow).
    let rendered = match rebuilt {
        crate::output::engine::Rebuilt::Whole => value!({ "whole": true }),
        crate::output::engine::Rebuilt::Pages { rendered, patched } => {
            value!({ "whole": false, "pages": rendered, "summaries": patched })
        }
    };
    answer["lastBuild"] = value!({
        "anchored": last.anchored,
        "anchoringReused": last.anchoring_reused,
        "injected": last.injected,
        "injectionReused": last.injection_reused,
        "rendered": rendered,
    });
    json(StatusCode::OK, &answer)
}

/// Runs `op` on the API off the async workers (store writes lock and fsync) and answers
/// with its reply.
async fn blocking<R: IntoResponse + Send + 'static>(
    ctx: Arc<Context>,
    op: impl FnOnce(&Context, &api::Api) -> R + Send + 'static,
) -> Response<Body> {
    blocking_as(ctx, None, op).await
}

/// [`blocking`], the API's writes made by `who` (the hub's signed-in reviewer) when given.
pub(super) async fn blocking_as<R: IntoResponse + Send + 'static>(
    ctx: Arc<Context>,
    who: Option<Reviewer>,
    op: impl FnOnce(&Context, &api::Api) -> R + Send + 'static,
) -> Response<Body> {
    let answer = tokio::task::spawn_blocking(move || {
        let pages = lock::read(&ctx.site.pages).clone();
        let api = api::Api {
            store: &ctx.store,
            pages: &pages,
            texts: &ctx.site.kept.reuse,
            ids: &ctx.ids,
            repo: &ctx.repo,
            space: &ctx.space,
            default_author: &ctx.author,
            book_root: &ctx.root,
            patches: &ctx.patches,
            undos: &ctx.undos,
            signed_in: who.as_ref(),
        };
        op(&ctx, &api)
    })
    .await;
    match answer {
        Ok(reply) => reply.into_response(),
        Err(_) => ApiError::internal("internal error").into_response(),
    }
}

/// The comment a write request names (its `page` and `id`, when they are strings).
pub(super) struct Named {
    page: Option<String>,
    id: Option<String>,
}

impl Named {
    pub(super) fn of(page: Option<&str>, id: Option<&str>) -> Named {
        Named {
            page: page.map(str::to_string),
            id: id.map(str::to_string),
        }
    }
}

/// The write `op`; when it succeeds, its comment (named by the answer, or else by the
/// request, `named`) is patched into its served chapter's island at once, as a change of
/// `kind`.
///
/// Under the hub, the write is made by the signed-in reviewer `who` (none: a 401) through the
/// book's gate, which answers only once it is pushed; `action` names it there.
pub(super) async fn write(
    ctx: Arc<Context>,
    (who, action): (Option<Extension<Reviewer>>, &'static str),
    kind: FileChange,
    named: Named,
    op: impl FnOnce(&api::Api) -> Result<Answer, ApiError> + Send + 'static,
) -> Response<Body> {
    let who = who.map(|Extension(w)| w);
    blocking_as(ctx, who.clone(), move |ctx, api| {
        let answer = match (&ctx.access, &who) {
            (Access::Local { .. }, _) => op(api),
            (Access::Hub(_), None) => Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "sign in to write (identity)",
            )),
            (Access::Hub(gate), Some(who)) => {
                let mut op = Some(op);
                let describe = |a: &Answer| describe(action, &named, a);
                gate.write(who, &describe, &mut || match op.take() {
                    Some(op) => op(api),
                    None => Err(ApiError::internal("internal error")),
                })
            }
        };
        if let Ok(a) = &answer
            && a.status.is_success()
        {
            let field = |k: &str, asked: &Option<String>| match a.body.get(k) {
                Some(v) => v.as_str().map(str::to_string),
                None => asked.clone(),
            };
            if let Some(page) = field("page", &named.page) {
                let key =
                    field("id", &named.id).map(|id| (notabene_store::ids::sanitize_id(&id), kind));
                let _ = lock::lock(&ctx.wake).send((page, key));
            }
        }
        answer
    })
    .await
}

/// One line naming a write (a commit's message): what it did, to which comment, on which page
/// (as its answer names them, else as the request did).
fn describe(action: &str, named: &Named, answer: &Answer) -> String {
    let field = |k: &str, asked: &Option<String>| {
        answer
            .body
            .get(k)
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| asked.clone())
    };
    let id = field("id", &named.id).unwrap_or_default();
    let line = match field("page", &named.page) {
        Some(page) if id.is_empty() => format!("notabene: {action} {page}"),
        Some(page) => format!("notabene: {action} {id} on {page}"),
        None => format!("notabene: {action} {id}"),
    };
    // One line whatever a request held.
    line.chars().filter(|c| !c.is_control()).collect()
}

/// `GET comments?page=…` or `?all`.
#[derive(Deserialize)]
struct ListQuery {
    page: Option<String>,
    /// Present (any value): every comment.
    all: Option<String>,
}

async fn list(State(ctx): State<Arc<Context>>, Query(q): Query<ListQuery>) -> Response<Body> {
    blocking(ctx, move |_, api| {
        api.list(q.page.as_deref(), q.all.is_some())
    })
    .await
}

async fn create(
    State(ctx): State<Arc<Context>>,
    who: Option<Extension<Reviewer>>,
    JsonBody(o): JsonBody<CreateBody>,
) -> Response<Body> {
    let named = Named::of(o.page.as_str(), None);
    let by = (who, "new comment");
    write(ctx, by, FileChange::Created, named, move |api| {
        api.create(&o)
    })
    .await
}

async fn patch(
    State(ctx): State<Arc<Context>>,
    who: Option<Extension<Reviewer>>,
    JsonBody(o): JsonBody<PatchBody>,
) -> Response<Body> {
    let named = Named::of(o.page.as_str(), o.id.as_str());
    let action = match (o.reply.value().is_some(), o.edit.value().is_some()) {
        (true, _) => "reply to",
        (false, true) => "edit",
        (false, false) => "update",
    };
    write(ctx, (who, action), FileChange::Changed, named, move |api| {
        api.patch(&o)
    })
    .await
}

async fn delete(
    State(ctx): State<Arc<Context>>,
    who: Option<Extension<Reviewer>>,
    JsonBody(o): JsonBody<CommentBody>,
) -> Response<Body> {
    let named = Named::of(o.page.as_str(), o.id.as_str());
    let by = (who, "delete");
    write(ctx, by, FileChange::Removed, named, move |api| {
        api.delete(&o)
    })
    .await
}

/// `POST apply {id, author?}`.
async fn apply(
    State(ctx): State<Arc<Context>>,
    who: Option<Extension<Reviewer>>,
    JsonBody(r): JsonBody<ApplyBody>,
) -> Response<Body> {
    let named = Named::of(None, Some(&r.id));
    let by = (who, "apply the suggestion of");
    write(ctx, by, FileChange::Changed, named, move |api| {
        api.apply(&r)
    })
    .await
}

/// `POST undo`: a deletion taken back puts the comment back into its island; a change, its
/// entry as it was.
async fn undo(
    State(ctx): State<Arc<Context>>,
    who: Option<Extension<Reviewer>>,
    JsonBody(o): JsonBody<UndoBody>,
) -> Response<Body> {
    let kind = if o.updated_at.as_str().is_some() {
        FileChange::Changed
    } else {
        FileChange::Created
    };
    let named = Named::of(o.page.as_str(), o.id.as_str());
    write(ctx, (who, "undo a change to"), kind, named, move |api| {
        api.undo(&o)
    })
    .await
}

async fn journal(State(ctx): State<Arc<Context>>) -> Response<Body> {
    blocking(ctx, |_, api| api.journal()).await
}

/// `GET diff?page=…&page=…`: every `page`, in order (other keys are ignored, as the original
/// notabene's API does).
async fn diff(
    State(ctx): State<Arc<Context>>,
    Query(q): Query<Vec<(String, String)>>,
) -> Response<Body> {
    let pages = q
        .into_iter()
        .filter(|(k, _)| k == "page")
        .map(|(_, v)| v)
        .collect();
    blocking(ctx, move |_, api| api.diff(pages)).await
}

/// A file of the current build (`index.html` for a directory, `review.html`, `comments.html`
/// and `journal.html` for `/review`, `/comments` and `/journal`, the book's `404.html` with a
/// 404 for anything missing).
///
/// Every response names the build it came from in a `Server-Timing` entry (`nb-generation`,
/// its `dur` the generation), which the page reads from its navigation timing: a page served
/// just before a build finished, whose first status already says the next generation, still
/// knows it is stale. The generation is read before the site directory, and a build swaps the
/// directory before it counts, so a page is never older than the generation it names.
async fn static_file(State(ctx): State<Arc<Context>>, mut req: Request) -> Response<Body> {
    let generation = *ctx.site.generation.borrow();
    let dir = lock::read(&ctx.site.dir).clone();
    // The review views answer under their short names too (`/review` is `review.html`).
    let short = ["/review", "/comments", "/journal"]
        .into_iter()
        .find(|p| req.uri().path() == *p);
    if let Some(p) = short
        && dir.join(format!("{}.html", &p[1..])).is_file()
        && let Ok(uri) = format!("{p}.html").parse()
    {
        *req.uri_mut() = uri;
    }
    let mut files = tower_http::services::ServeDir::new(&dir)
        .not_found_service(tower_http::services::ServeFile::new(dir.join("404.html")));
    let mut response = match files.try_call(req).await {
        Ok(r) => r.map(Body::new),
        Err(_) => error(StatusCode::INTERNAL_SERVER_ERROR, "cannot read the site"),
    };
    if let Ok(v) = format!("nb-generation;dur={generation}").parse() {
        response.headers_mut().insert("server-timing", v);
    }
    match &ctx.access {
        // A branch's content may carry scripts: only the theme's run.
        Access::Hub(_) => super::csp::apply(response).await,
        Access::Local { .. } => super::csp::svg_inert(response),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::book::{Book, PageIds};
    use hyper::service::Service;
    use pretty_assertions::assert_eq;
    use std::collections::BTreeMap;
    use std::sync::{Mutex, RwLock};

    const PORT: u16 = 3005;

    /// The router over book-example (read only) and a site of one page, with every lock a
    /// request takes poisoned by a thread that panicked while it held it.
    fn poisoned_server(site_dir: &std::path::Path) -> Router {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("book-example");
        let book = Book::load(&root).unwrap();
        let page = "book-example/src/guide/sensors".to_string();
        let site = Arc::new(crate::apps::serve::Site {
            dir: RwLock::new(site_dir.to_path_buf()),
            pages: RwLock::new(BTreeMap::from([(page, vec!["guide/sensors.html".into()])])),
            generation: tokio::sync::watch::Sender::new(1),
            builds: Mutex::new((1, 1)),
            last_patch: Mutex::new(None),
            last_build: Mutex::new((Default::default(), crate::output::engine::Rebuilt::Whole)),
            kept: Default::default(),
            stopped: Mutex::new(false),
        });
        let s = &site;
        std::thread::scope(|scope| {
            let holders: [Box<dyn Fn() + Send + Sync>; 5] = [
                Box::new(|| drop(s.builds.lock().map(|_g| panic!("builds (expected)")))),
                Box::new(|| drop(s.last_build.lock().map(|_g| panic!("counts (expected)")))),
                Box::new(|| drop(s.last_patch.lock().map(|_g| panic!("patch (expected)")))),
                Box::new(|| drop(s.dir.write().map(|_g| panic!("dir (expected)")))),
                Box::new(|| drop(s.pages.write().map(|_g| panic!("pages (expected)")))),
            ];
            for holder in holders {
                assert!(scope.spawn(holder).join().is_err());
            }
        });
        assert!(site.builds.is_poisoned() && site.dir.is_poisoned() && site.pages.is_poisoned());
        let (wake, _) = std::sync::mpsc::channel();
        let ctx = Context {
            site,
            store: book.store(),
            ids: PageIds::new(&book),
            repo: book.repo().clone(),
            access: Access::Local {
                token: None,
                host_mode: false,
                port: PORT,
                allowed_hosts: Vec::new(),
            },
            author: "Sam Server".into(),
            space: book.config.space.clone(),
            root,
            patches: api::PatchQueue::default(),
            undos: api::Undos::default(),
            wake: Mutex::new(wake),
        };
        // A poisoned sender too (the hint after a write).
        std::thread::scope(|scope| {
            let held = scope.spawn(|| drop(ctx.wake.lock().map(|_g| panic!("wake (expected)"))));
            assert!(held.join().is_err());
        });
        router(Arc::new(ctx))
    }

    /// `(status, body)` of `method path` with `body`, through the router.
    async fn call(app: &Router, method: &str, path: &str, body: &str) -> (u16, String) {
        let req = axum::http::Request::builder()
            .method(method)
            .uri(path)
            .header("host", format!("127.0.0.1:{PORT}"))
            .body(Body::from(body.to_string()))
            .unwrap();
        let svc = hyper_util::service::TowerToHyperService::new(app.clone());
        let r = svc.call(req).await.unwrap();
        let code = r.status().as_u16();
        let bytes = axum::body::to_bytes(r.into_body(), usize::MAX)
            .await
            .unwrap();
        (code, String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Locks a panicking request or rebuild left poisoned do not fail the requests after it.
    #[test]
    fn a_poisoned_lock_does_not_fail_the_next_requests() {
        let site = tempfile::tempdir().unwrap();
        std::fs::write(site.path().join("index.html"), "<html>the site</html>").unwrap();
        let app = poisoned_server(site.path());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let (code, status) = call(&app, "GET", "/__notabene/api/status", "").await;
            let status: Value = serde_json::from_str(&status).unwrap();
            assert_eq!(
                (code, &status["generation"], &status["builds"]),
                (200, &value!(1), &value!(1))
            );
            assert_eq!(
                call(&app, "GET", "/index.html", "").await,
                (200, "<html>the site</html>".to_string())
            );
            // Reads the page map (poisoned) off the async workers.
            let (code, journal) = call(&app, "GET", "/__notabene/api/journal", "").await;
            assert_eq!((code, journal.starts_with('[')), (200, true), "{journal}");
            // A write refused by validation reads the page map and answers as usual.
            let refused =
                r#"{"page":"book-example/src/nope","space":"book","scope":"page","body":"x"}"#;
            assert_eq!(
                call(&app, "POST", "/__notabene/api/comments", refused).await,
                (
                    404,
                    r#"{"error":"page \"book-example/src/nope\" is not in this book (page)"}"#
                        .to_string()
                )
            );
        });
    }
}
