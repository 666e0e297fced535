//! The transport of `serve`, on the stack mdBook's own `serve` uses: hyper's HTTP/1.1 on tokio,
//! axum's WebSocket for live reload, tower-http's `ServeDir` for the built site.
//!
//! Limits: a request head of at most [`MAX_HEAD`] bytes (else 431), read within [`HEAD_DEADLINE`]
//! (else the connection is closed), at most [`MAX_CONNECTIONS`] connections at once, a live-reload
//! WebSocket included: it holds its connection's slot until it closes. A connection past the cap is
//! closed as soon as it is accepted rather than queued, so sockets a page keeps open cannot pile up
//! in the server's memory. An API body is at most [`super::api::MAX_REQUEST`] bytes (else 413), read
//! within [`BODY_DEADLINE`] (else 408); one over the cap is read on and discarded, up to
//! [`DRAIN_MAX`] bytes, so that its client can read the 413 (`body`). hyper answers malformed framing — two different `Content-Length`s, an invalid one, bad chunking —
//! with a 400 before any handler runs, so nothing is written. Static paths are percent-decoded by
//! `ServeDir` (`+` stays a plus), which refuses traversal.
//!
//! When `accept` fails for want of resources (`EMFILE`, `ENFILE`: out of file descriptors), the
//! accept loop sleeps before it tries again, [`ACCEPT_PAUSE`] doubling up to [`ACCEPT_PAUSE_MAX`]
//! (the pending connection stays queued, so an immediate retry would spin). [`Stop`] is the signals
//! (SIGINT, SIGTERM) that end `run`; `serve` then removes its build directory.
//!
//! Each connection is served by the `routes` router (the guard in front of it); the connection's
//! `Slot` rides along in each request's extensions, for a WebSocket to keep, and so does its
//! [`Peer`] address.

use axum::Router;
use hyper::service::Service;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

/// Largest accepted request head (request line and headers).
pub const MAX_HEAD: usize = 64 * 1024;
/// Time a client has to send a whole request head.
pub const HEAD_DEADLINE: Duration = Duration::from_secs(10);
/// Time a client has to send a whole request body (the API's; no other route reads one), from
/// the moment it is read, just after the head. Of the head's order, for the same reason: a
/// client that trickles its body must not hold a connection slot for longer. The largest body
/// taken, [`super::api::MAX_REQUEST`] (1 MiB), needs under 10 s at 1 Mbit/s; the reader
/// client's are a few KiB.
pub const BODY_DEADLINE: Duration = Duration::from_secs(10);
/// How many bytes of a body over the cap are read and discarded, within [`BODY_DEADLINE`],
/// before its 413: a socket closed with bytes still unread sends a reset, and a client still
/// sending would see that instead of the answer. A body that says it is longer gets its 413 at
/// once.
pub const DRAIN_MAX: usize = 4 * super::api::MAX_REQUEST;
/// Connections served at once (a live-reload socket is one until it closes).
pub const MAX_CONNECTIONS: usize = 1024;
/// The first pause of the accept loop after an `accept` that failed for want of resources.
pub const ACCEPT_PAUSE: Duration = Duration::from_millis(10);
/// The longest pause of the accept loop (the pause doubles after each such failure).
pub const ACCEPT_PAUSE_MAX: Duration = Duration::from_secs(1);

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
pub(crate) async fn run(listeners: Vec<TcpListener>, router: Router, stop: Stop) {
    let limit = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let mut tasks = tokio::task::JoinSet::new();
    for l in listeners {
        tasks.spawn(accept(l, router.clone(), Arc::clone(&limit)));
    }
    stop.wait().await;
    tasks.shutdown().await;
}

/// The address a connection came from (the TCP peer, never a header), in each request's
/// extensions: the hub believes identity headers only from its trusted proxies.
#[derive(Debug, Clone, Copy)]
pub struct Peer(pub std::net::SocketAddr);

/// A connection's place under the cap: held by the connection, and by its WebSocket once
/// upgraded; freed when the last of them ends.
pub(super) type Slot = Arc<tokio::sync::OwnedSemaphorePermit>;

/// Whether an `accept` error concerns only the connection it was accepting (then the next
/// one is taken at once); any other, `EMFILE` and `ENFILE` first, calls for a pause.
fn connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    matches!(
        e.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    )
}

async fn accept(listener: TcpListener, router: Router, limit: Arc<tokio::sync::Semaphore>) {
    let mut pause = ACCEPT_PAUSE;
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok((stream, peer)) => {
                pause = ACCEPT_PAUSE;
                (stream, Peer(peer))
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
        let app = hyper_util::service::TowerToHyperService::new(router.clone());
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |mut req: hyper::Request<_>| {
                req.extensions_mut().insert(Arc::clone(&slot));
                req.extensions_mut().insert(peer);
                app.call(req)
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
