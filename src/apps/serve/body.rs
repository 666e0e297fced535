//! Reading a request body (the API's, through [`super::edge::JsonBody`]): whole within
//! [`http::BODY_DEADLINE`], at most a cap. It owns what happens to a body that breaks either
//! rule:
//!
//! * one that does not arrive in time is a 408;
//! * one over the cap is a 413, sent once the body is read to its end and thrown away (up to
//!   [`http::DRAIN_MAX`] bytes, within the same deadline): closing a socket with bytes unread
//!   resets it, and a client still sending would see the reset instead of the answer. One that
//!   says it is longer than that (`Content-Length`), or turns out to be, or is still coming at
//!   the deadline, gets its 413 at once;
//! * one that breaks off is a 400.
//!
//! Each of these answers carries `Connection: close`: hyper closes the connection once it is
//! written, and reads nothing more from it.

use super::edge::error;
use super::http;
use axum::body::{Body, Bytes, HttpBody};
use axum::http::{HeaderValue, Response, StatusCode, header};
use std::pin::Pin;

/// `error(status, message)` with `Connection: close`.
fn closing(status: StatusCode, message: &str) -> Response<Body> {
    let mut r = error(status, message);
    r.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    r
}

/// The whole of `body` when it is at most `cap` bytes and arrives within
/// [`http::BODY_DEADLINE`]; else the answer to send (see the module's rules).
pub(super) async fn read(mut body: Body, cap: usize) -> Result<Bytes, Response<Body>> {
    let too_large = || closing(StatusCode::PAYLOAD_TOO_LARGE, "payload too large");
    let declared = body.size_hint().lower();
    if declared > http::DRAIN_MAX.max(cap) as u64 {
        return Err(too_large());
    }
    let deadline = tokio::time::Instant::now() + http::BODY_DEADLINE;
    // What the head says, never more than the cap (the head may lie).
    let mut kept = Vec::with_capacity(usize::try_from(declared).unwrap_or(cap).min(cap));
    let mut seen = 0usize;
    loop {
        let frame = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx));
        let data = match tokio::time::timeout_at(deadline, frame).await {
            Err(_) if seen > cap => return Err(too_large()),
            Err(_) => {
                return Err(closing(
                    StatusCode::REQUEST_TIMEOUT,
                    "request body not received in time",
                ));
            }
            Ok(None) => break,
            Ok(Some(Err(_))) => {
                return Err(closing(
                    StatusCode::BAD_REQUEST,
                    "cannot read the request body",
                ));
            }
            Ok(Some(Ok(frame))) => match frame.into_data() {
                Ok(data) => data,
                // Trailers.
                Err(_) => continue,
            },
        };
        seen = seen.saturating_add(data.len());
        if seen > http::DRAIN_MAX.max(cap) {
            return Err(too_large());
        }
        if seen <= cap {
            kept.extend_from_slice(&data);
        }
    }
    if seen > cap {
        return Err(too_large());
    }
    Ok(kept.into())
}
