//! `hub`'s command line: the flags, checked and turned into [`crate::apps::hub::HubOptions`].

use crate::apps::hub::{Cidr, HubOptions, SignIn, Source, Vouched};
use crate::{Error, Result};
use clap::Args;
use std::path::PathBuf;

/// `mdbook-notabene hub`.
#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("sign-in").required(true).args(["identity_header", "reviewers"])))]
pub(crate) struct HubArgs {
    /// The remote (any URL git can push to: https, ssh, file).
    #[arg(long, value_name = "URL")]
    repo: String,
    /// The book inside the repository.
    #[arg(long, value_name = "PATH", default_value = ".")]
    book: PathBuf,
    /// Branches to serve (repeatable; `*` matches anything; default: the remote's default branch).
    #[arg(long = "branch", value_name = "GLOB")]
    branches: Vec<String>,
    /// Where to listen.
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8080")]
    listen: std::net::SocketAddr,
    /// Where the hub keeps its clones.
    #[arg(long = "data-dir", value_name = "DIR")]
    data_dir: PathBuf,
    /// The header the sign-in proxy names the reviewer's email in (e.g. X-Forwarded-Email).
    #[arg(long = "identity-header", value_name = "NAME")]
    identity_header: Option<String>,
    /// The header it names their display name in (e.g. X-Forwarded-User).
    #[arg(
        long = "name-header",
        value_name = "NAME",
        requires = "identity_header"
    )]
    name_header: Option<String>,
    /// Without a sign-in proxy: a TOML list of reviewers (name, email, token-sha256, role);
    /// tokens come as `Authorization: Bearer` or from the /sign-in page.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["identity_header", "trusted_proxies", "maintainers"])]
    reviewers: Option<PathBuf>,
    /// Peers whose identity headers are believed (repeatable; default: loopback).
    #[arg(long = "trusted-proxy", value_name = "CIDR")]
    trusted_proxies: Vec<String>,
    /// A maintainer's email: they also resolve, approve and apply (repeatable).
    #[arg(long = "maintainer", value_name = "EMAIL")]
    maintainers: Vec<String>,
    /// Reads need no sign-in.
    #[arg(long = "public-read")]
    public_read: bool,
    /// Branches served at once (the least recently used stops first).
    #[arg(long = "max-branches", value_name = "N", default_value_t = 8)]
    max_branches: usize,
    /// Seconds between fetches of the served branches (0: never).
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    poll: u64,
    /// The environment variable holding the secret of push webhooks (`POST /hooks/push`:
    /// GitHub's X-Hub-Signature-256, GitLab's X-Gitlab-Token).
    #[arg(long = "webhook-secret-env", value_name = "VAR")]
    webhook_secret_env: Option<String>,
    /// Who commits the reviewers' writes.
    #[arg(
        long,
        value_name = "NAME <EMAIL>",
        default_value = "mdbook-notabene hub <hub@localhost>"
    )]
    committer: String,
}

impl HubArgs {
    /// The options, checked.
    pub(crate) fn options(&self) -> Result<HubOptions> {
        let header = |h: &str, flag: &str| {
            axum::http::HeaderName::from_bytes(h.as_bytes())
                .map(|n| n.as_str().to_string())
                .map_err(|_| Error::new(format!("not a header name: {h:?} ({flag})")))
        };
        for b in &self.branches {
            if b.is_empty() || b.chars().any(|c| c.is_control()) {
                return Err(Error::new(format!(
                    "not a branch pattern: {b:?} (--branch)"
                )));
            }
        }
        if self.book.is_absolute()
            || self
                .book
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            return Err(Error::new(
                "the book must be a path inside the repository (--book)",
            ));
        }
        let webhook_secret = match &self.webhook_secret_env {
            None => None,
            Some(var) => match std::env::var(var) {
                Ok(secret) if !secret.is_empty() => Some(secret.into_bytes()),
                _ => {
                    return Err(Error::new(format!(
                        "the environment variable {var} holds no webhook secret (--webhook-secret-env)"
                    )));
                }
            },
        };
        let trusted = match self.trusted_proxies.is_empty() {
            true => Cidr::loopback(),
            false => self
                .trusted_proxies
                .iter()
                .map(|c| Cidr::parse(c))
                .collect::<Result<_>>()?,
        };
        Ok(HubOptions {
            source: Source {
                repo: self.repo.clone(),
                book: self.book.clone(),
                patterns: self.branches.clone(),
                data_dir: self.data_dir.clone(),
                committer: self.committer.clone(),
                max_branches: self.max_branches,
            },
            listen: self.listen,
            sign_in: SignIn {
                by: match (&self.identity_header, &self.reviewers) {
                    (_, Some(file)) => Vouched::Tokens(crate::apps::hub::read_reviewers(file)?),
                    (Some(h), None) => Vouched::Proxy {
                        identity_header: header(h, "--identity-header")?,
                        name_header: self
                            .name_header
                            .as_deref()
                            .map(|h| header(h, "--name-header"))
                            .transpose()?,
                        trusted,
                        maintainers: self.maintainers.clone(),
                    },
                    (None, None) => {
                        return Err(Error::new(
                            "the hub needs a sign-in: --identity-header or --reviewers",
                        ));
                    }
                },
                public_read: self.public_read,
            },
            poll: self.poll,
            webhook_secret,
        })
    }
}
