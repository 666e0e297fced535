//! `install [BOOK]`: sets a book up for notabene, keeping book.toml's formatting (toml_edit): the
//! preprocessor table (`after = ["links"]`, plus `"gettext"` in gettext books), the client files
//! (written with a version stamp, listed in `additional-js`/`additional-css`), the store in
//! `build.extra-watch-dirs` so `mdbook serve` rebuilds when comments change, and `init` when there
//! is no store. Running it again changes nothing.

use super::{Ctx, say};
use crate::output::assets;
use crate::{Error, Result, bail};
use notabene_store::fsx;
use std::path::{Path, PathBuf};
use toml_edit::{Array, DocumentMut, Item, Table};

/// Ensures `doc[path...]` is a table (creating implicit parents) and returns it.
fn table<'a>(doc: &'a mut DocumentMut, path: &[&str]) -> Result<&'a mut Table> {
    let mut cur: &mut Table = doc.as_table_mut();
    for (i, key) in path.iter().enumerate() {
        if !cur.contains_key(key) {
            let mut t = Table::new();
            t.set_implicit(i + 1 < path.len());
            cur.insert(key, Item::Table(t));
        }
        cur = cur[*key].as_table_mut().ok_or_else(|| {
            Error::new(format!(
                "[{}] is not a table (book.toml)",
                path[..=i].join(".")
            ))
        })?;
    }
    Ok(cur)
}

/// Ensures `table[key]` is an array containing `value`; returns whether it changed.
fn ensure_in_array(table: &mut Table, key: &str, value: &str, at: &str) -> Result<bool> {
    if !table.contains_key(key) {
        let mut a = Array::new();
        a.push(value);
        table.insert(key, toml_edit::value(a));
        return Ok(true);
    }
    let Some(arr) = table[key].as_array_mut() else {
        bail!("{key} must be an array (book.toml [{at}] {key})");
    };
    if arr.iter().any(|v| v.as_str() == Some(value)) {
        return Ok(false);
    }
    arr.push(value);
    Ok(true)
}

/// Applies the install edits to a book.toml text; returns the new text and what changed.
pub(crate) fn edit_book_toml(text: &str, store_rel: &str) -> Result<(String, Vec<String>)> {
    let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        Error::new(format!(
            "book.toml is not valid TOML: {} (book.toml)",
            e.message().trim()
        ))
    })?;
    let mut changes = Vec::new();
    let gettext = doc
        .get("preprocessor")
        .and_then(|p| p.get("gettext"))
        .is_some();
    {
        let pre = table(&mut doc, &["preprocessor", "notabene"])?;
        let mut wanted = vec!["links"];
        if gettext {
            wanted.push("gettext");
        }
        for w in wanted {
            if ensure_in_array(pre, "after", w, "preprocessor.notabene")? {
                changes.push(format!(
                    "book.toml: [preprocessor.notabene] after += \"{w}\""
                ));
            }
        }
    }
    {
        let html = table(&mut doc, &["output", "html"])?;
        if ensure_in_array(html, "additional-js", assets::JS_PATH, "output.html")? {
            changes.push(format!(
                "book.toml: [output.html] additional-js += \"{}\"",
                assets::JS_PATH
            ));
        }
        if ensure_in_array(html, "additional-css", assets::CSS_PATH, "output.html")? {
            changes.push(format!(
                "book.toml: [output.html] additional-css += \"{}\"",
                assets::CSS_PATH
            ));
        }
    }
    {
        let build = table(&mut doc, &["build"])?;
        if ensure_in_array(build, "extra-watch-dirs", store_rel, "build")? {
            changes.push(format!(
                "book.toml: [build] extra-watch-dirs += \"{store_rel}\""
            ));
        }
    }
    Ok((doc.to_string(), changes))
}

pub(crate) fn install(ctx: &Ctx, dir: Option<&Path>) -> Result<i32> {
    let root: PathBuf = match (dir, &ctx.book) {
        (Some(d), _) => d.to_path_buf(),
        (None, Some(b)) => b.root.clone(),
        (None, None) => bail!("no book.toml found (pass the book directory)"),
    };
    let toml_path = root.join("book.toml");
    let text = std::fs::read_to_string(&toml_path)
        .map_err(|e| Error::io("cannot read book.toml", &toml_path, e))?;
    let book = crate::model::book::Book::load(&root)?;
    let store_rel = book
        .config
        .store
        .clone()
        .unwrap_or_else(|| ".notabene".into());
    let (new_text, mut changes) = edit_book_toml(&text, &store_rel)?;
    if new_text != text {
        fsx::write_atomic(&root, Path::new("book.toml"), new_text.as_bytes())?;
    }
    for (rel, body) in [
        (assets::JS_PATH, assets::JS),
        (assets::CSS_PATH, assets::CSS),
    ] {
        if assets::write_client_file(&root, rel, body)? {
            changes.push(format!(
                "wrote {rel} (mdbook-notabene {})",
                env!("CARGO_PKG_VERSION")
            ));
        }
    }
    for c in &changes {
        say!("notabene: {c}");
    }
    let store = root.join(&store_rel);
    if !store.is_dir() {
        let ctx = Ctx::resolve(Some(&root), None)?;
        super::setup::init(&ctx, &super::setup::InitArgs::default())?;
    } else if changes.is_empty() {
        say!(
            "notabene: {} is already set up — nothing changed.",
            ctx.show(&root)
        );
    }
    Ok(0)
}
