//! The reader client, embedded in the binary and written into a book by `install` with a version
//! stamp; the preprocessor refuses to build a book whose installed copy is missing or older than
//! the binary.
//!
//! The client's sources are modules by concern in `theme/js/` and `theme/css/`; a book gets one
//! `notabene.js` and one `notabene.css` assembled from them at compile time (`build.rs`, in the
//! order of `theme/manifest.txt`, the one list of the client's files). One file each because
//! mdBook lists theme files one by one (`additional-js`), a `file://` site cannot load ES modules,
//! and one stamped file keeps `install` and the version check simple. The JS modules share one
//! strict-mode function scope, in the manifest's order: each file is one namespace object and
//! uses only the namespaces before it (`.ci/eslint/eslint.config.mjs` checks that, file by file,
//! against the same manifest).

use crate::model::book::Book;
use crate::{Error, Result, bail};
use notabene_core::say_err;
use std::path::Path;

/// The client script: the scripts of `theme/js/` in one function scope that runs once per page,
/// joined by `build.rs` in the order of `theme/manifest.txt` (the one list of the client's files).
/// Each declares one namespace (`Locale`, `Dom`, `Words`, `TextModel`, `Paint`, `Print`, `Toolbar`,
/// `Live`, `Thread`, `Panel`, `Views`, `Compose`, `Actions`, `Start`) that owns its state, and
/// refers only to those before it;
/// `start.js` wires up the few calls that go the other way and starts the client.
pub const JS: &str = include_str!(concat!(env!("OUT_DIR"), "/notabene.js"));
/// The client styles: `theme/css/` in the order of `theme/manifest.txt`.
pub const CSS: &str = include_str!(concat!(env!("OUT_DIR"), "/notabene.css"));
/// Where `install` puts the script, relative to the book root.
pub const JS_PATH: &str = "theme/notabene.js";
/// Where `install` puts the styles, relative to the book root.
pub const CSS_PATH: &str = "theme/notabene.css";

const STAMP_PREFIX: &str = "/* mdbook-notabene ";

/// The first line of an installed asset: the version that wrote it.
pub fn stamp() -> String {
    format!(
        "{STAMP_PREFIX}{} — managed by `mdbook-notabene install`; do not edit */\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// The installed file contents for an asset body.
pub fn stamped(body: &str) -> String {
    format!("{}{body}", stamp())
}

/// The version in an installed asset's stamp.
pub fn installed_version(text: &str) -> Option<semver::Version> {
    let rest = text.lines().next()?.strip_prefix(STAMP_PREFIX)?;
    semver::Version::parse(rest.split_whitespace().next()?).ok()
}

/// Writes `body`, stamped, to `root/rel` atomically unless the file already holds exactly
/// that. Returns whether it wrote.
pub fn write_client_file(root: &Path, rel: &str, body: &str) -> Result<bool> {
    let contents = stamped(body);
    if std::fs::read_to_string(root.join(rel)).ok().as_deref() == Some(contents.as_str()) {
        return Ok(false);
    }
    notabene_store::fsx::write_atomic(root, Path::new(rel), contents.as_bytes())?;
    Ok(true)
}

/// The client files a book lists in `[output.html]`: (`additional-js` or `additional-css`,
/// the file name, the listed path, the embedded body), for the entries named `notabene.js` /
/// `notabene.css`.
fn listed(book: &Book) -> Vec<(&'static str, &'static str, Option<String>, &'static str)> {
    [
        ("additional-js", "notabene.js", JS),
        ("additional-css", "notabene.css", CSS),
    ]
    .into_iter()
    .map(|(key, name, body)| {
        let list = book
            .mdbook
            .get::<Vec<String>>(&format!("output.html.{key}"))
            .ok()
            .flatten()
            .unwrap_or_default();
        let entry = list
            .into_iter()
            .find(|e| Path::new(e).file_name().is_some_and(|f| f == name));
        (key, name, entry, body)
    })
    .collect()
}

/// The client files `book`'s `[output.html]` lists, where they are (what [`check_installed`]
/// reads).
pub(crate) fn client_files(book: &Book) -> Vec<std::path::PathBuf> {
    listed(book)
        .into_iter()
        .filter_map(|(_, _, entry, _)| entry.map(|e| book.root.join(e)))
        .collect()
}

/// Writes the client files of a set-up book on first use: every one its `[output.html]` lists
/// that is missing, or that this version wrote with other content (the files are generated,
/// stamped "do not edit": a checkout of this repository holds none). A copy from another
/// version, or without a stamp, is left for the check to report (`install` replaces it), and
/// `book.toml` is never edited. `build` and `serve` run this first. Returns the paths written.
pub fn refresh(book: &Book) -> Result<Vec<String>> {
    let ours = semver::Version::parse(env!("CARGO_PKG_VERSION")).expect("crate version is semver");
    let mut wrote = Vec::new();
    for (_, _, entry, body) in listed(book) {
        let Some(entry) = entry else { continue };
        if let Ok(existing) = std::fs::read_to_string(book.root.join(&entry))
            && installed_version(&existing).is_none_or(|v| v != ours)
        {
            continue;
        }
        if write_client_file(&book.root, &entry, body)? {
            wrote.push(entry);
        }
    }
    Ok(wrote)
}

/// Checks that both client files are listed in `[output.html]` and are at least as new as
/// this binary.
pub fn check_installed(book: &Book) -> Result<()> {
    let ours = semver::Version::parse(env!("CARGO_PKG_VERSION")).expect("crate version is semver");
    for (key, name, entry, _) in listed(book) {
        let Some(entry) = entry else {
            bail!(
                "the notabene reader client is not installed: {name} is not in [output.html] {key} — run `mdbook-notabene install` (book.toml)"
            );
        };
        let path = book.root.join(&entry);
        let text = std::fs::read_to_string(&path)
            .map_err(|_| Error::new(format!("the notabene reader client is missing ({entry}) — run `mdbook-notabene install` ({})", path.display())))?;
        match installed_version(&text) {
            Some(v) if v >= ours => {
                if v > ours {
                    say_err!(
                        "notabene: warning: {entry} comes from mdbook-notabene {v}, newer than this binary ({ours})"
                    );
                }
            }
            Some(v) => bail!(
                "the notabene reader client {entry} is from mdbook-notabene {v}, older than this binary ({ours}) — run `mdbook-notabene install` ({})",
                path.display()
            ),
            None => bail!(
                "{entry} has no mdbook-notabene version stamp — run `mdbook-notabene install` ({})",
                path.display()
            ),
        }
    }
    Ok(())
}
