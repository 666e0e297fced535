//! `hub`: the review server of a team. It serves, for a git remote, the book of every branch its
//! patterns match (`/b/<branch>/`, as `serve` serves a book), to reviewers its sign-in proxy
//! names; every write is a commit by its reviewer pushed to the branch before it is answered, and
//! the branches follow the remote (polling; the readers of a branch that moved are reloaded).
//! There is no database: the remote holds everything, and several hubs on one remote converge.
//!
//! Owns: the hub's options and its run. Calls: `hub::front` (routes), `hub::branches` (the
//! served branches), `hub::identity` (the sign-in), `hub::git`, `apps::serve` (transport).

mod branches;
mod front;
mod git;
mod hooks;
mod identity;
mod listing;
mod publisher;
mod reviewers;

pub use branches::{Source, matches, valid_branch};
pub use identity::{Cidr, SignIn, Vouched};
pub use reviewers::{Listed, read as read_reviewers};

use crate::{Error, Result};
use notabene_core::say_err;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Options of `hub`.
#[derive(Debug, Clone)]
pub struct HubOptions {
    /// What it serves; `patterns` empty: the remote's default branch.
    pub source: Source,
    /// Where it listens.
    pub listen: std::net::SocketAddr,
    /// How it knows reviewers.
    pub sign_in: SignIn,
    /// Seconds between fetches of the open branches (0: never).
    pub poll: u64,
    /// The secret push webhooks prove they know (`None`: no webhook).
    pub webhook_secret: Option<Vec<u8>>,
}

/// Runs the hub until SIGINT or SIGTERM; `announce` gets the URL once it listens.
pub fn hub(mut options: HubOptions, announce: &dyn Fn(&str)) -> Result<()> {
    let source = &mut options.source;
    std::fs::create_dir_all(&source.data_dir)
        .map_err(|e| Error::io("cannot create", &source.data_dir, e))?;
    source.data_dir = std::fs::canonicalize(&source.data_dir)
        .map_err(|e| Error::io("cannot read", &source.data_dir, e))?;
    if source.patterns.is_empty() {
        source.patterns = vec![git::default_branch(&source.repo)?];
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::new(format!("cannot start the hub's runtime: {e}")))?;
    let stop = {
        let _in = runtime.enter();
        crate::apps::serve::http::Stop::register()?
    };
    let listen = options.listen;
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind(listen))
        .map_err(|e| Error::new(format!("cannot listen on {listen}: {e} (--listen)")))?;
    let bound = listener
        .local_addr()
        .map_err(|e| Error::new(format!("cannot read the bound address: {e}")))?;
    let branches = Arc::new(branches::Branches::new(options.source.clone()));
    let hub = Arc::new(front::Hub {
        listing: listing::Listing::new(
            &options.source.repo,
            &options.source.book,
            &options.source.data_dir,
        ),
        branches: Arc::clone(&branches),
        sign_in: options.sign_in.clone(),
        webhook_secret: options.webhook_secret.clone(),
    });
    let stopped = Arc::new(AtomicBool::new(false));
    if options.poll > 0 {
        let (b, s, every) = (Arc::clone(&branches), Arc::clone(&stopped), options.poll);
        std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_secs(every));
                if !s.load(Ordering::Relaxed) {
                    b.refresh();
                }
            }
        });
    }
    announce(&format!("http://{bound}/"));
    runtime.block_on(crate::apps::serve::http::run(
        vec![listener],
        front::router(hub),
        stop,
    ));
    stopped.store(true, Ordering::Relaxed);
    runtime.shutdown_timeout(Duration::from_secs(5));
    branches.close();
    say_err!("notabene: hub stopped");
    Ok(())
}
