//! The reader client (`theme/notabene.js`, `theme/notabene.css`), embedded in the binary and
//! written into a book by `install` with a version stamp; the preprocessor refuses to build a
//! book whose installed copy is missing or older than the binary.

use crate::config::Book;
use crate::{Error, Result, bail};

/// The client script.
pub const JS: &str = include_str!("../theme/notabene.js");
/// The client styles.
pub const CSS: &str = include_str!("../theme/notabene.css");
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

/// Checks that both client files are listed in `[output.html]` and are at least as new as
/// this binary.
pub fn check_installed(book: &Book) -> Result<()> {
    let ours = semver::Version::parse(env!("CARGO_PKG_VERSION")).expect("crate version is semver");
    for (key, name) in [
        ("additional-js", "notabene.js"),
        ("additional-css", "notabene.css"),
    ] {
        let list = book
            .mdbook
            .get::<Vec<String>>(&format!("output.html.{key}"))
            .ok()
            .flatten()
            .unwrap_or_default();
        let Some(entry) = list.iter().find(|e| {
            std::path::Path::new(e)
                .file_name()
                .is_some_and(|f| f == name)
        }) else {
            bail!(
                "the notabene reader client is not installed: {name} is not in [output.html] {key} — run `mdbook-notabene install` (book.toml)"
            );
        };
        let path = book.root.join(entry);
        let text = std::fs::read_to_string(&path)
            .map_err(|_| Error::new(format!("the notabene reader client is missing ({entry}) — run `mdbook-notabene install` ({})", path.display())))?;
        match installed_version(&text) {
            Some(v) if v >= ours => {
                if v > ours {
                    eprintln!(
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
