//! The hub's routes: `/`, the branches it serves; `/b/<branch>/…`, that branch's book, served
//! by the branch's own router exactly as `serve` serves a book (pages, live reload, the API under
//! `/b/<branch>/__notabene/api/`), the branch name percent-encoded in one path segment.
//!
//! In front of every route, the sign-in ([`identity`](super::identity)): a request from a peer
//! that is not a trusted proxy is refused, and the reviewer the proxy names rides in the
//! request's extensions to the branch's router (the API writes as them, never as a request body
//! says).
//!
//! Owns: the routing by branch, the branch list page. Calls: `hub::branches`, `hub::identity`.

use super::branches::Branches;
use super::identity::{SignIn, Vouched};
use crate::apps::serve::http::Peer;
use crate::model::book::git::BRANCH_SEGMENT as SEGMENT;
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Response, StatusCode, header};
use axum::middleware::Next;
use notabene_core::escape::escape_html;
use std::sync::Arc;
use tower::ServiceExt;

/// What every route reads.
pub(crate) struct Hub {
    pub(crate) branches: Arc<Branches>,
    /// The branch list's counts.
    pub(crate) listing: super::listing::Listing,
    pub(crate) sign_in: SignIn,
    /// The webhook's secret (`None`: no webhook route).
    pub(crate) webhook_secret: Option<Vec<u8>>,
}

/// The hub's router.
pub(crate) fn router(hub: Arc<Hub>) -> Router {
    Router::new()
        .route("/", axum::routing::get(index))
        .fallback(branch)
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&hub),
            signed_in,
        ))
        // Forges send webhooks from their own servers, not through the sign-in: the secret
        // is the proof.
        .route("/hooks/push", axum::routing::post(hook))
        // Signing in with a token (`--reviewers`) is open to anyone, as a door is.
        .route("/sign-in", axum::routing::get(sign_in_page).post(sign_in))
        .route("/sign-out", axum::routing::post(sign_out))
        .with_state(hub)
}

fn text(status: StatusCode, message: &str) -> Response<Body> {
    let mut r = Response::new(Body::from(format!("{message}\n")));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// The sign-in in front of every route: the reviewer put into the request's extensions, or
/// the refusal.
async fn signed_in(State(hub): State<Arc<Hub>>, mut req: Request, next: Next) -> Response<Body> {
    let peer = req.extensions().get::<Peer>().map(|p| p.0.ip());
    let read = matches!(req.method().as_str(), "GET" | "HEAD");
    match hub.sign_in.reviewer(peer, req.headers(), read) {
        Ok(Some(who)) => {
            req.extensions_mut().insert(who);
        }
        Ok(None) => {}
        Err(refused) => {
            return text(refused.status, &format!("notabene: {}", refused.message));
        }
    }
    next.run(req).await
}

/// The sign-in page of `--reviewers` (a 404 behind a sign-in proxy).
async fn sign_in_page(State(hub): State<Arc<Hub>>) -> Response<Body> {
    if !matches!(hub.sign_in.by, Vouched::Tokens(_)) {
        return text(
            StatusCode::NOT_FOUND,
            "notabene: sign in through your single sign-on",
        );
    }
    html(StatusCode::OK, SIGN_IN_FORM)
}

const SIGN_IN_FORM: &str = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Sign in to review</title></head>\n<body><h1>Sign in to review</h1>\n<form method=\"post\" action=\"/sign-in\"><label>Your token <input type=\"password\" name=\"token\" autocomplete=\"current-password\" required></label> <button type=\"submit\">Sign in</button></form>\n</body></html>\n";

/// `POST /sign-in` (`token=…`, form-encoded): the token's reviewer gets the cookie that carries
/// it (`HttpOnly`, `SameSite=Strict`) and goes to the branch list; an unknown token, a 401.
async fn sign_in(State(hub): State<Arc<Hub>>, req: Request) -> Response<Body> {
    let Vouched::Tokens(listed) = &hub.sign_in.by else {
        return text(
            StatusCode::NOT_FOUND,
            "notabene: sign in through your single sign-on",
        );
    };
    let secure = req
        .headers()
        .get("x-forwarded-proto")
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"https"));
    let Ok(body) = axum::body::to_bytes(req.into_body(), 16 * 1024).await else {
        return text(StatusCode::PAYLOAD_TOO_LARGE, "notabene: sign-in too large");
    };
    let token = body
        .split(|b| *b == b'&')
        .filter_map(|pair| pair.strip_prefix(b"token="))
        .map(|v| {
            let v: Vec<u8> = v
                .iter()
                .map(|b| if *b == b'+' { b' ' } else { *b })
                .collect();
            percent_encoding::percent_decode(&v)
                .decode_utf8_lossy()
                .into_owned()
        })
        .next()
        .unwrap_or_default();
    if super::reviewers::by_token(listed, token.trim()).is_none() {
        return html(StatusCode::UNAUTHORIZED, SIGN_IN_FORM);
    }
    let cookie = format!(
        "{}={}; Path=/; HttpOnly; SameSite=Strict{}",
        super::reviewers::COOKIE,
        token.trim(),
        if secure { "; Secure" } else { "" }
    );
    let mut r = text(StatusCode::SEE_OTHER, "notabene: signed in");
    r.headers_mut()
        .insert(header::LOCATION, HeaderValue::from_static("/"));
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}

/// `POST /sign-out`: the cookie is dropped.
async fn sign_out() -> Response<Body> {
    let mut r = text(StatusCode::SEE_OTHER, "notabene: signed out");
    r.headers_mut()
        .insert(header::LOCATION, HeaderValue::from_static("/sign-in"));
    let gone = format!(
        "{}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0",
        super::reviewers::COOKIE
    );
    if let Ok(v) = HeaderValue::from_str(&gone) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}

/// One of the hub's own pages (no script; a form posts only to the hub).
fn html(status: StatusCode, page: &str) -> Response<Body> {
    let mut r = Response::new(Body::from(page.to_string()));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
        ),
    );
    r
}

/// `POST /hooks/push`: a forge's push event, proven by the secret; the branch it names is
/// fetched (202), anything else is answered and ignored (200), a request without the proof is
/// refused (401).
async fn hook(State(hub): State<Arc<Hub>>, req: Request) -> Response<Body> {
    let Some(secret) = hub.webhook_secret.clone() else {
        return text(
            StatusCode::NOT_FOUND,
            "notabene: no webhook here (--webhook-secret-env)",
        );
    };
    let (signature, token) = {
        let header = |name: &str| {
            req.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        (header("x-hub-signature-256"), header("x-gitlab-token"))
    };
    let Ok(body) = axum::body::to_bytes(req.into_body(), super::hooks::MAX_HOOK_BODY).await else {
        return text(
            StatusCode::PAYLOAD_TOO_LARGE,
            "notabene: webhook body too large",
        );
    };
    if !super::hooks::authentic(&secret, &body, signature.as_deref(), token.as_deref()) {
        return text(
            StatusCode::UNAUTHORIZED,
            "notabene: webhook refused: bad signature or token",
        );
    }
    let Some(branch) = super::hooks::pushed_branch(&body) else {
        return text(StatusCode::OK, "notabene: nothing to fetch");
    };
    let b = Arc::clone(&hub.branches);
    tokio::task::spawn_blocking(move || b.refresh_branch(&branch));
    text(StatusCode::ACCEPTED, "notabene: fetching")
}

/// `/`: the branches this hub serves (those of the remote its patterns match), each with its
/// open and to-validate counts, and what its last build skipped of its `book.toml`.
async fn index(State(hub): State<Arc<Hub>>) -> Response<Body> {
    let h = Arc::clone(&hub);
    let listed = tokio::task::spawn_blocking(move || {
        let names: Vec<String> = super::git::remote_branches(&h.branches.source().repo)?
            .into_iter()
            .filter(|n| h.branches.allowed(n))
            .collect();
        let counts = h.listing.counts(&names);
        let open: Vec<(String, Vec<String>)> = h
            .branches
            .opened()
            .iter()
            .map(|x| (x.name.clone(), x.skipped()))
            .collect();
        Ok::<_, crate::Error>(
            names
                .into_iter()
                .map(|n| {
                    let live = open.iter().find(|(o, _)| *o == n).map(|(_, s)| s.clone());
                    let c = counts.get(&n).copied();
                    (n, c, live)
                })
                .collect::<Vec<_>>(),
        )
    })
    .await;
    let list = match listed {
        Ok(Ok(list)) => list,
        Ok(Err(e)) => return text(StatusCode::BAD_GATEWAY, &format!("notabene: {e}")),
        Err(_) => {
            return text(
                StatusCode::INTERNAL_SERVER_ERROR,
                "notabene: internal error",
            );
        }
    };
    let mut items = String::new();
    for (name, counts, live) in &list {
        let href: String = percent_encoding::utf8_percent_encode(name, SEGMENT).to_string();
        let counted = match counts {
            Some(c) => format!(
                " <span class=\"nb-counts\">{} open, {} to validate</span>",
                c.open, c.to_validate
            ),
            None => String::new(),
        };
        let note = match live {
            None => String::new(),
            Some(skipped) if skipped.is_empty() => " <small>(built)</small>".into(),
            Some(skipped) => format!(
                " <small>(built; skipped from its book.toml, never run: {})</small>",
                escape_html(&skipped.join(", "))
            ),
        };
        items.push_str(&format!(
            "<li><a href=\"/b/{}/\">{}</a>{counted}{note}</li>\n",
            escape_html(&href),
            escape_html(name),
        ));
    }
    let page = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Review hub</title></head>\n<body><h1>Branches under review</h1>\n<ul class=\"nb-branches\">\n{items}</ul></body></html>\n"
    );
    html(StatusCode::OK, &page)
}

/// `/b/<branch>/rest`: the branch's router, asked for `/rest`.
async fn branch(State(hub): State<Arc<Hub>>, mut req: Request) -> Response<Body> {
    let path = req.uri().path().to_string();
    let Some(after) = path.strip_prefix("/b/") else {
        return text(StatusCode::NOT_FOUND, "notabene: not found");
    };
    let (segment, rest) = after.split_once('/').unwrap_or((after, ""));
    let Ok(name) = percent_encoding::percent_decode_str(segment).decode_utf8() else {
        return text(StatusCode::NOT_FOUND, "notabene: not a branch");
    };
    let name = name.into_owned();
    if !path[3..].contains('/') {
        // `/b/main`: the book's relative links need the trailing slash.
        let mut r = text(StatusCode::MOVED_PERMANENTLY, "");
        if let Ok(v) = HeaderValue::from_str(&format!("/b/{segment}/")) {
            r.headers_mut().insert(header::LOCATION, v);
        }
        return r;
    }
    let b = Arc::clone(&hub.branches);
    let found = tokio::task::spawn_blocking(move || b.get(&name)).await;
    let branch = match found {
        Ok(Ok(Some(branch))) => branch,
        Ok(Ok(None)) => {
            return text(
                StatusCode::NOT_FOUND,
                "notabene: this hub serves no such branch",
            );
        }
        Ok(Err(e)) => {
            notabene_core::say_err!("notabene: {e}");
            return text(
                StatusCode::BAD_GATEWAY,
                "notabene: the branch cannot be built (see the hub's log)",
            );
        }
        Err(_) => {
            return text(
                StatusCode::INTERNAL_SERVER_ERROR,
                "notabene: internal error",
            );
        }
    };
    let query = req
        .uri()
        .query()
        .map(|q| format!("?{q}"))
        .unwrap_or_default();
    let Ok(uri) = format!("/{rest}{query}").parse() else {
        return text(StatusCode::BAD_REQUEST, "notabene: bad path");
    };
    *req.uri_mut() = uri;
    match branch.router().oneshot(req).await {
        Ok(r) => r,
        Err(never) => match never {},
    }
}
