//! Images pasted or dropped into the in-page editor: written next to their chapter under a
//! name made from their content, so a second paste of the same bytes reuses the file. Only
//! PNG, JPEG, GIF, WebP, AVIF and SVG are taken, recognised by their bytes (a file's name or
//! extension says nothing: an HTML file named `.png` is refused), at most [`MAX_ASSET`] bytes.
//!
//! May call: the book (its page ids), the store's file helpers (`fsx`).

use crate::model::book::Book;
use crate::model::book::pages::PageIds;
use crate::{Error, Result};
use notabene_core::error::ErrorKind;
use std::io::Write;

/// The largest image written (the original's cap on `POST /api/asset`).
pub const MAX_ASSET: usize = 8 << 20;

/// An image written (or found already there).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asset {
    /// Its file name, next to the chapter.
    pub name: String,
    /// The Markdown that shows it from the chapter.
    pub markdown: String,
    /// The file was there already (the same bytes pasted before).
    pub reused: bool,
}

/// The image type of `bytes` by their signature, as its file extension.
pub fn image_type(bytes: &[u8]) -> Option<&'static str> {
    let starts = |sig: &[u8]| bytes.starts_with(sig);
    if starts(b"\x89PNG\r\n\x1a\n") {
        return Some("png");
    }
    if starts(&[0xFF, 0xD8, 0xFF]) {
        return Some("jpg");
    }
    if starts(b"GIF87a") || starts(b"GIF89a") {
        return Some("gif");
    }
    if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        return Some("webp");
    }
    if bytes.len() >= 12 && &bytes[4..8] == b"ftyp" && matches!(&bytes[8..12], b"avif" | b"avis") {
        return Some("avif");
    }
    if is_svg(bytes) {
        return Some("svg");
    }
    None
}

/// An SVG document: UTF-8 text whose first element (after an XML declaration, comments and a
/// doctype) is `<svg`.
fn is_svg(bytes: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return false;
    };
    let mut rest = text.trim_start_matches('\u{feff}').trim_start();
    loop {
        if let Some(r) = rest.strip_prefix("<?") {
            let Some(end) = r.find("?>") else {
                return false;
            };
            rest = r[end + 2..].trim_start();
        } else if let Some(r) = rest.strip_prefix("<!--") {
            let Some(end) = r.find("-->") else {
                return false;
            };
            rest = r[end + 3..].trim_start();
        } else if rest.len() >= 9 && rest[..9].eq_ignore_ascii_case("<!doctype") {
            let Some(end) = rest.find('>') else {
                return false;
            };
            rest = rest[end + 1..].trim_start();
        } else {
            return rest.starts_with("<svg")
                && rest[4..].starts_with(|c: char| c.is_whitespace() || c == '>');
        }
    }
}

/// Writes `bytes` next to the chapter of `page` as `image-<hash>.<type>` (the first 16 hex
/// digits of their SHA-256), atomically; reuses the file when it holds them already.
pub fn write_asset(book: &Book, page: &str, bytes: &[u8]) -> Result<Asset> {
    if bytes.len() > MAX_ASSET {
        return Err(Error::of(
            ErrorKind::TooLarge,
            format!("the image is over {MAX_ASSET} bytes"),
            "data",
        ));
    }
    let Some(ext) = image_type(bytes) else {
        return Err(Error::of(
            ErrorKind::Invalid,
            "not a PNG, JPEG, GIF, WebP, AVIF or SVG image",
            "data",
        ));
    };
    let chapter = PageIds::new(book).source_file(page).ok_or_else(|| {
        Error::of(
            ErrorKind::NotFound,
            format!("page {page:?} is not in this book"),
            "page",
        )
    })?;
    let dir = chapter
        .parent()
        .ok_or_else(|| Error::new("the chapter has no directory (page)"))?;
    let rel = dir.strip_prefix(&book.root).unwrap_or(dir);
    notabene_store::fsx::check_no_symlink(&book.root, rel)
        .map_err(|_| Error::new("the chapter's directory is reached through a symlink (page)"))?;
    let hash = {
        use sha2::{Digest, Sha256};
        let d = Sha256::digest(bytes);
        d.iter()
            .take(8)
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let name = format!("image-{hash}.{ext}");
    let path = dir.join(&name);
    let markdown = format!("![](./{name})");
    match std::fs::symlink_metadata(&path) {
        Ok(m) if m.is_file() && std::fs::read(&path).is_ok_and(|b| b == bytes) => {
            return Ok(Asset {
                name,
                markdown,
                reused: true,
            });
        }
        Ok(_) => {
            return Err(Error::of(
                ErrorKind::Conflict,
                format!("{name} exists and holds other bytes; nothing written"),
                "data",
            ));
        }
        Err(_) => {}
    }
    let mut tmp =
        tempfile::NamedTempFile::new_in(dir).map_err(|e| Error::io("cannot write", dir, e))?;
    tmp.write_all(bytes)
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(|e| Error::io("cannot write", &path, e))?;
    tmp.persist_noclobber(&path)
        .map_err(|e| Error::io("cannot write", &path, e.error))?;
    Ok(Asset {
        name,
        markdown,
        reused: false,
    })
}
