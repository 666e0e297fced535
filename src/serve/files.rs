//! The built site as static files: content types, `index.html` for directories, the book's
//! `404.html` for anything missing, and no path outside the site. Part of the serve layer.

use super::http;
use std::path::Path;

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "woff2" => "font/woff2",
        "woff" => "font/woff",
        "ttf" => "font/ttf",
        "ico" => "image/x-icon",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

pub(super) fn static_file(dir: &Path, path: &str) -> http::Response {
    let rel: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let bad = rel
        .iter()
        .any(|s| *s == ".." || s.contains('\\') || s.starts_with('.'));
    let mut file = dir.join(rel.join("/"));
    if file.is_dir() {
        file = file.join("index.html");
    }
    let (code, file) = if !bad && file.is_file() {
        (200, file)
    } else {
        (404, dir.join("404.html"))
    };
    let bytes = std::fs::read(&file).unwrap_or_else(|_| b"not found".to_vec());
    http::Response::from_data(bytes)
        .with_status_code(code)
        .with_header("Content-Type", content_type(&file))
        .with_header("Cache-Control", "no-cache")
}
