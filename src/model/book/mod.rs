//! The book: `book.toml` and the `[preprocessor.notabene]` table ([`config`]), page ids and their
//! mapping to Markdown files ([`pages`]), and the git repository the book lives in ([`git`]: diffs
//! for /review, the work-tree root for the page prefix; [`history`]; [`git_config`]: the merge
//! driver's local config), and the text model's settings its
//! `[output.html]` gives ([`text_options`](mod@text_options)).
//!
//! Nothing here reads comments or anchors them, except what a build keeps of the comments it
//! will not anchor: their pre-written lean forms ([`condensed`]).

pub mod condensed;
pub mod config;
pub mod git;
pub mod git_blobs;
pub mod git_config;
pub mod history;
pub mod notices;
pub mod pages;
pub mod text_options;
pub mod trust;

pub use config::{Book, Config, FailOn, LocaleStrategy, Review};
pub use git::Repo;
pub use notices::warn_config;
pub use pages::PageIds;
pub use text_options::text_options;
pub use trust::Trust;
