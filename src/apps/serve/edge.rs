//! The edge of `serve`'s HTTP: what every request goes through before a handler, and the shapes
//! requests and answers take there.
//!
//! * [`checks`], the middleware in front of the router: a request head over
//!   [`super::http::MAX_HEAD`] bytes is a 431; then the guard ([`super::guard`]) — the API and
//!   the live-reload socket get [`guard::check_api`] (the WebSocket's token, which it cannot
//!   send as a header, comes from its query), any other path [`guard::check_page`] (with
//!   `--host`, the token of a page comes from `x-notabene-token`, the printed URL's `nb-token=`,
//!   or the cookie a page let in by that query is given) — and a refusal is a 403 with its
//!   reason. Nothing past it runs for a refused request. Under the hub, whose front checked the
//!   sign-in, the guard is a write's `Origin` only ([`same_origin_write`]).
//! * [`Query`]: the one query decoder (axum's, percent-decoding, `+` a space) into a typed
//!   struct; a query that does not fit is a 400 with the reason.
//! * [`JsonBody`]: a request body of at most [`api::MAX_REQUEST`] bytes, read within
//!   [`http::BODY_DEADLINE`] (else a 413 or a 408 that close the connection: [`super::body`]), a JSON object
//!   (else 400 "expected a JSON object"), decoded into a typed struct. Any `Content-Type` is
//!   taken, as the original notabene's API does.
//! * [`json`]: a JSON answer that is never cached or sniffed.

use super::answer::ApiError;
use super::{Context, api, body, guard, http};
use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{FromRequest, FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, Response, StatusCode, header};
use axum::middleware::Next;
use axum::response::IntoResponse;
use serde::de::DeserializeOwned;
use serde_json::{Value, json as value};
use std::sync::Arc;

/// The path of the live-reload socket.
pub(super) const SOCKET: &str = "/__notabene/ws";
/// The prefix of the API's paths.
pub(super) const API: &str = "/__notabene/api/";

/// A JSON answer with `status`, never cached or sniffed.
pub(super) fn json(status: StatusCode, body: &Value) -> Response<Body> {
    let mut r = Response::new(Body::from(serde_json::to_vec(body).unwrap_or_default()));
    *r.status_mut() = status;
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

/// `{"error": message}` with `status`.
pub(super) fn error(status: StatusCode, message: &str) -> Response<Body> {
    json(status, &value!({ "error": message }))
}

/// A header's value as text (one that is not text cannot match anything: a NUL stands in).
fn header_text<'r>(req: &'r Request, name: &str) -> Option<std::borrow::Cow<'r, str>> {
    req.headers().get(name).map(|v| match v.to_str() {
        Ok(t) => t.into(),
        Err(_) => "\u{0}".into(),
    })
}

/// The request line's target and the headers, as hyper read them, in bytes. (hyper bounds its
/// read buffer, not a head that arrives whole: measured here.)
fn head_size(req: &Request) -> usize {
    req.uri().to_string().len()
        + req
            .headers()
            .iter()
            .map(|(k, v)| k.as_str().len() + v.len() + 4)
            .sum::<usize>()
}

/// The query of the live-reload socket, for the guard: the token it cannot send as a header.
#[derive(serde::Deserialize)]
struct SocketQuery {
    token: Option<String>,
}

/// The query of a page, for the guard with `--host`: the token of the printed URL.
#[derive(serde::Deserialize)]
struct PageQuery {
    #[serde(rename = "nb-token")]
    token: Option<String>,
}

/// The name of the cookie that carries the token for pages with `--host` (the port in it
/// keeps two servers on one machine apart).
fn cookie_name(port: u16) -> String {
    format!("nb-token-{port}")
}

/// The value of the cookie `name` in the request's `Cookie` header.
fn cookie<'r>(req: &'r Request, name: &str) -> Option<&'r str> {
    let cookies = req.headers().get(header::COOKIE)?.to_str().ok()?;
    cookies
        .split(';')
        .filter_map(|c| c.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// The `Set-Cookie` that lets the page opened with `?nb-token=` load the rest of the site (its
/// styles and scripts, then the next page) under the same name: the browser keeps it for that
/// name alone, sends it to that site alone (`SameSite=Strict`), and no script reads it. None
/// for a token a cookie cannot hold as it is.
fn token_cookie(port: u16, token: &str) -> Option<HeaderValue> {
    let plain = token
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-_.~".contains(&b));
    let cookie = format!(
        "{}={token}; Path=/; HttpOnly; SameSite=Strict",
        cookie_name(port)
    );
    plain.then(|| HeaderValue::from_str(&cookie).ok()).flatten()
}

/// The guard's verdict on `req`: the API and the socket are checked as API requests, anything
/// else as a page. A page let through by the token of the printed URL (`--host`) gets the
/// cookie that carries it to the next requests.
fn guard_verdict(
    req: &Request,
    policy: &guard::Policy,
) -> Result<Option<HeaderValue>, guard::Refusal> {
    let path = req.uri().path();
    let host = header_text(req, "host");
    let token_header = header_text(req, "x-notabene-token");
    let is_socket = path == SOCKET;
    let Some(rest) = path.strip_prefix(API).or(is_socket.then_some("")) else {
        let query_token = match policy.host_mode {
            true => Query::<PageQuery>::decode(req.uri())
                .ok()
                .and_then(|q| q.token),
            false => None,
        };
        let by_query = guard::Request {
            host: host.as_deref(),
            token: query_token.as_deref(),
            ..guard::Request::default()
        };
        if policy.host_mode && guard::check_page(&by_query, policy).is_ok() {
            let cookie = guard::carries_token(&by_query, policy)
                .then(|| policy.token.and_then(|t| token_cookie(policy.port, t)))
                .flatten();
            return Ok(cookie);
        }
        let g = guard::Request {
            host: host.as_deref(),
            token: token_header
                .as_deref()
                .or_else(|| cookie(req, &cookie_name(policy.port))),
            ..guard::Request::default()
        };
        return guard::check_page(&g, policy).map(|()| None);
    };
    let origin = header_text(req, "origin");
    let socket_token = match is_socket && token_header.is_none() {
        true => Query::<SocketQuery>::decode(req.uri())
            .ok()
            .and_then(|q| q.token),
        false => None,
    };
    let g = guard::Request {
        origin: origin.as_deref(),
        host: host.as_deref(),
        token: token_header.as_deref().or(socket_token.as_deref()),
    };
    guard::check_api(&g, policy, api::access(req.method().as_str(), rest)).map(|()| None)
}

/// Under the hub (whose front checked the sign-in): a write's `Origin`, when it has one, must be
/// the site it is sent to (its host and port are the request's `Host`), so that another site's
/// page cannot write with the reviewer's sign-in cookie. A browser sends an `Origin` with every
/// write.
fn same_origin_write(req: &Request) -> Result<(), guard::Refusal> {
    if matches!(req.method().as_str(), "GET" | "HEAD") {
        return Ok(());
    }
    let Some(origin) = header_text(req, "origin") else {
        return Ok(());
    };
    let host = header_text(req, "host");
    let authority = origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"));
    match (authority, host) {
        (Some(a), Some(h)) if a.eq_ignore_ascii_case(&h) => Ok(()),
        _ => Err(guard::Refusal::CrossOrigin { writing: true }),
    }
}

/// The middleware in front of every route: the head's size, then the guard.
pub(super) async fn checks(
    State(ctx): State<Arc<Context>>,
    req: Request,
    next: Next,
) -> Response<Body> {
    if head_size(&req) > http::MAX_HEAD {
        return error(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "request head too large",
        );
    }
    let verdict = match ctx.policy() {
        Some(policy) => guard_verdict(&req, &policy),
        None => same_origin_write(&req).map(|()| None),
    };
    let cookie = match verdict {
        Ok(cookie) => cookie,
        Err(reason) => return error(StatusCode::FORBIDDEN, &reason.to_string()),
    };
    let mut response = next.run(req).await;
    if let Some(c) = cookie {
        response.headers_mut().append(header::SET_COOKIE, c);
    }
    response
}

/// A query decoded into `T` by axum's decoder; one that does not fit is a 400.
pub(super) struct Query<T>(pub T);

impl<T: DeserializeOwned> Query<T> {
    /// The query of `uri` as a `T`, or why it is not one.
    fn decode(uri: &axum::http::Uri) -> Result<T, QueryRejection> {
        axum::extract::Query::<T>::try_from_uri(uri).map(|q| q.0)
    }
}

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for Query<T> {
    type Rejection = Response<Body>;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Query::decode(&parts.uri)
            .map(Query)
            .map_err(|e| error(StatusCode::BAD_REQUEST, &e.body_text()))
    }
}

/// A JSON-object body decoded into `T` (a request struct of `bodies`), of at most
/// [`api::MAX_REQUEST`] bytes.
pub(super) struct JsonBody<T>(pub T);

/// A JSON-object body of at most `CAP` bytes (a pasted image's).
pub(super) struct LargeJsonBody<T, const CAP: usize>(pub T);

/// `bytes` as a JSON object decoded into `T`, or the 400 to answer.
fn decode_object<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let Ok(Value::Object(object)) = serde_json::from_slice::<Value>(bytes) else {
        return Err(ApiError::bad_request("expected a JSON object"));
    };
    serde_json::from_value::<T>(Value::Object(object))
        .map_err(|e| ApiError::bad_request(format!("invalid request: {e}")))
}

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonBody<T> {
    type Rejection = Response<Body>;

    async fn from_request(req: Request, _: &S) -> Result<Self, Self::Rejection> {
        let bytes = body::read(req.into_body(), api::MAX_REQUEST).await?;
        decode_object(&bytes)
            .map(JsonBody)
            .map_err(IntoResponse::into_response)
    }
}

impl<S: Send + Sync, T: DeserializeOwned, const CAP: usize> FromRequest<S>
    for LargeJsonBody<T, CAP>
{
    type Rejection = Response<Body>;

    async fn from_request(req: Request, _: &S) -> Result<Self, Self::Rejection> {
        let bytes = body::read(req.into_body(), CAP).await?;
        decode_object(&bytes)
            .map(LargeJsonBody)
            .map_err(IntoResponse::into_response)
    }
}
