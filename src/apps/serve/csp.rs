//! The Content-Security-Policy of the hub's pages: a branch's Markdown (and anything it copies
//! into its site) may carry scripts, and they must not act as the reviewer reading the page.
//!
//! An inert build puts every chapter's content between two marks that hold a secret of the
//! process (`output::engine::content_marks`): what lies before the first and after the last is
//! the theme's (mdBook's default theme, and notabene's client). Each HTML page is served with a
//! fresh nonce (128 bits of the OS's randomness) on the `<script>` elements there, and a policy
//! that runs only scripts with that nonce (and what they load: `'strict-dynamic'`) — no inline
//! handler, no `javascript:` URL, no script of the content. A page without both marks (a file
//! the branch copied into its site, a page no chapter made) runs no script at all; any other
//! file is served with a policy that runs nothing (an SVG opened as a document).
//!
//! Under `serve`, only an SVG gets a policy ([`svg_inert`]): the author's pages run as they are.
//!
//! Owns: the policies and the nonce rewrite. Calls: `output::engine` (the marks).

use axum::body::Body;
use axum::http::{HeaderValue, Response, StatusCode, header};

/// The largest page rewritten (a bigger one is refused: 500).
const MAX_PAGE: usize = 64 * 1024 * 1024;

/// The policy of anything that is not an HTML page: nothing runs.
const STATIC_POLICY: &str =
    "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; sandbox";

/// Under `serve` (the author's own book): an SVG is served with the policy that runs nothing,
/// so one pasted into a chapter is an image only, even opened as a document.
pub(super) fn svg_inert(mut response: Response<Body>) -> Response<Body> {
    let svg = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("image/svg"));
    if svg {
        response.headers_mut().insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(STATIC_POLICY),
        );
    }
    response
}

/// The policy of a page whose scripts carry `nonce`.
fn page_policy(nonce: &str) -> String {
    format!(
        "default-src 'self'; script-src 'nonce-{nonce}' 'strict-dynamic'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )
}

/// Every place `needle` occurs in `hay`.
fn all(hay: &[u8], needle: &[u8]) -> Vec<usize> {
    hay.windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i)
        .collect()
}

/// `html` with ` nonce="<nonce>"` on every `<script` before the first `start` mark and after
/// the last `end` mark, and the marks taken out (the secret in them never leaves the hub). The
/// marks must come in pairs, each start before its end and after the end before it (one pair
/// per chapter the page shows): otherwise — a mark missing, or one the content hid (an unclosed
/// code block escapes what follows it) — no script of the page gets the nonce.
pub(super) fn nonce_scripts(html: &[u8], nonce: &str, (start, end): (&str, &str)) -> Vec<u8> {
    let (starts, ends) = (all(html, start.as_bytes()), all(html, end.as_bytes()));
    let paired = !starts.is_empty()
        && starts.len() == ends.len()
        && starts.iter().zip(&ends).all(|(s, e)| s < e)
        && ends.iter().zip(starts.iter().skip(1)).all(|(e, s)| e < s);
    let trusted = paired.then(|| (starts[0], ends[ends.len() - 1] + end.len()));
    let mut marks: Vec<(usize, usize)> = starts
        .iter()
        .map(|&i| (i, start.len()))
        .chain(ends.iter().map(|&i| (i, end.len())))
        .collect();
    marks.sort_unstable();
    let mut next_mark = marks.iter().peekable();
    let attr = format!(" nonce=\"{nonce}\"");
    let mut out = Vec::with_capacity(html.len() + 1024);
    let mut i = 0;
    while i < html.len() {
        if let Some(&&(at, len)) = next_mark.peek()
            && at == i
        {
            next_mark.next();
            i += len;
            continue;
        }
        let is_script = html.len() - i >= 8
            && html[i] == b'<'
            && html[i + 1..i + 7].eq_ignore_ascii_case(b"script")
            && matches!(html[i + 7], b' ' | b'>' | b'\t' | b'\n' | b'\r' | b'/');
        out.push(html[i]);
        if is_script && trusted.is_some_and(|(a, b)| i < a || i >= b) {
            out.extend_from_slice(&html[i + 1..i + 7]);
            out.extend_from_slice(attr.as_bytes());
            i += 7;
            continue;
        }
        i += 1;
    }
    out
}

/// `response` (a file of a branch's site) with its policy; an HTML page's trusted scripts
/// nonced, never cached (each answer has its own nonce).
pub(super) async fn apply(response: Response<Body>) -> Response<Body> {
    let html = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/html"));
    if !html || response.status() != StatusCode::OK && response.status() != StatusCode::NOT_FOUND {
        let mut r = response;
        r.headers_mut().insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(STATIC_POLICY),
        );
        return r;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_PAGE).await else {
        let mut r = Response::new(Body::from("notabene: page too large\n"));
        *r.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
        return r;
    };
    let mut bits = [0u8; 16];
    if getrandom::fill(&mut bits).is_err() {
        let mut r = Response::new(Body::from("notabene: no randomness for the page's nonce\n"));
        *r.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
        return r;
    }
    let nonce: String = bits.iter().map(|b| format!("{b:02x}")).collect();
    let (start, end) = crate::output::engine::content_marks();
    let page = nonce_scripts(&bytes, &nonce, (start, end));
    let h = &mut parts.headers;
    for gone in [header::CONTENT_LENGTH, header::ETAG, header::LAST_MODIFIED] {
        h.remove(gone);
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Ok(v) = HeaderValue::from_str(&page_policy(&nonce)) {
        h.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    Response::from_parts(parts, Body::from(page))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_scripts_outside_the_content_get_the_nonce_and_the_marks_go() {
        let marks = ("<!--s-->", "<!--e-->");
        let run = |page: &[u8]| String::from_utf8(nonce_scripts(page, "N", marks)).unwrap();
        let page = b"<head><script>a()</script><SCRIPT src=x.js></SCRIPT></head><main><!--s--><script>evil()</script><!--e--> <!--s--><scripty></scripty><!--e--></main><script src=b.js></script>";
        assert_eq!(
            run(page),
            "<head><script nonce=\"N\">a()</script><SCRIPT nonce=\"N\" src=x.js></SCRIPT></head><main><script>evil()</script> <scripty></scripty></main><script nonce=\"N\" src=b.js></script>"
        );
        // A mark missing (a page no chapter made, a copied file), marks out of order, or an end
        // the content hid while it wrote one of its own (had it learnt the secret): no script
        // runs, and no mark is left.
        for page in [
            &b"<script>a()</script><!--s--><script>b()</script>"[..],
            b"<!--e--><script>a()</script><!--s-->",
            b"<script>a()</script><!--s--><!--e--><script>b()</script><!--e--><script>c()</script>",
            b"<!--s--><!--s--><!--e--><!--e--><script>a()</script>",
        ] {
            let out = run(page);
            assert!(!out.contains("nonce") && !out.contains("<!--"), "{out}");
        }
    }
}
