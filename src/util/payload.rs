//! Data scripts: the `<script>` elements that carry JSON to the reader client (a chapter's data
//! island, a generated page's view data), written and read back in one of two forms.
//!
//! * **Plain**: `<script type="application/json" class="…" …>JSON</script>`, the JSON escaped
//!   for a script element ([`escape_script_json`]).
//! * **Deflated**, for payloads longer than a book's `compress-above` bytes: `<script
//!   type="application/octet-stream" class="…" … data-nb-encoding="deflate-raw+base64">`
//!   holding the JSON compressed with raw DEFLATE, in standard base64. The client inflates it
//!   with the browser's own `DecompressionStream("deflate-raw")`: no network, and it works
//!   from `file://`. A store of thousands of comments compresses several times over, and
//!   mdBook parses and renders what is left twice (the chapters and `print.html`).
//!
//! The same JSON and threshold always give the same bytes.

use base64::Engine as _;
use notabene_core::escape::escape_script_json;
use std::io::Write as _;

/// The `data-nb-encoding` value of a deflated data script.
pub const ENCODING: &str = "deflate-raw+base64";

/// The default `compress-above`: payloads longer than this many bytes of JSON are deflated.
/// A small book's islands and pages stay plain JSON, readable in the page source.
pub const DEFAULT_COMPRESS_ABOVE: usize = 16 * 1024;

/// The `<script>` element carrying `json` (a JSON text, not yet escaped): plain when it is at
/// most `compress_above` bytes long, else deflated. `attrs` are further attributes, each with
/// its leading space (`data-nb-page="…"`, already escaped).
pub fn data_script(class: &str, attrs: &str, json: &str, compress_above: usize) -> String {
    if json.len() <= compress_above {
        return format!(
            "<script type=\"application/json\" class=\"{class}\"{attrs}>{}</script>",
            escape_script_json(json)
        );
    }
    deflated_script(class, attrs, &[json.as_bytes()])
}

/// The deflated `<script>` element ([`data_script`]'s second form) of the JSON text that
/// `pieces` make joined in order (without joining them: a big store's /comments list is
/// megabytes written in pieces on every thread).
pub fn deflated_script(class: &str, attrs: &str, pieces: &[&[u8]]) -> String {
    format!(
        "<script type=\"application/octet-stream\" class=\"{class}\"{attrs} data-nb-encoding=\"{ENCODING}\">{}</script>",
        deflate_pieces_base64(pieces)
    )
}

/// Payloads longer than this are deflated in pieces of this many bytes, on every thread.
const PIECE: usize = 1 << 20;

/// `bytes` deflated (raw DEFLATE, level 1: several times smaller for comment JSON, at a
/// fraction of the default level's cost), in standard base64.
///
/// A payload longer than a MiB (a big store's /comments list: megabytes) is deflated in
/// pieces of that length on every thread, each ending on a sync flush and the last finishing
/// the stream: still one raw DEFLATE stream, which any inflater reads whole. The pieces are cut
/// by length alone, so the same bytes give the same text whatever the threads.
pub fn deflate_base64(bytes: &[u8]) -> String {
    deflate_pieces_base64(&[bytes])
}

/// [`deflate_base64`] of the bytes `parts` make joined in order, without joining them.
fn deflate_pieces_base64(parts: &[&[u8]]) -> String {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    let z = if len <= PIECE {
        let mut enc = flate2::write::DeflateEncoder::new(
            Vec::with_capacity(len / 4),
            flate2::Compression::fast(),
        );
        // Writing to a Vec cannot fail. (One part, an island's JSON, is not copied.)
        enc.write_all(&bytes_at(parts, 0..len))
            .expect("deflate into memory");
        enc.finish().expect("deflate into memory")
    } else {
        let pieces: Vec<(usize, usize)> =
            (0..len.div_ceil(PIECE)).map(|i| (i, i * PIECE)).collect();
        let last = pieces.len() - 1;
        let threads = notabene_core::par::default_threads();
        notabene_core::par::par_map(&pieces, threads, |&(i, start)| {
            let piece = bytes_at(parts, start..(start + PIECE).min(len));
            deflate_piece(&piece, i == last)
        })
        .concat()
    };
    base64::engine::general_purpose::STANDARD.encode(z)
}

/// The bytes at `at` of what `parts` make joined in order: borrowed when they lie in one part.
fn bytes_at<'a>(parts: &[&'a [u8]], at: std::ops::Range<usize>) -> std::borrow::Cow<'a, [u8]> {
    let mut within: Vec<&'a [u8]> = Vec::new();
    let mut start = 0;
    for part in parts {
        let end = start + part.len();
        if end > at.start && start < at.end {
            within.push(&part[at.start.max(start) - start..at.end.min(end) - start]);
        }
        start = end;
    }
    match within.as_slice() {
        [one] => std::borrow::Cow::Borrowed(*one),
        _ => std::borrow::Cow::Owned(within.concat()),
    }
}

/// One piece of a payload deflated at level 1 on its own: the stream's end when it is the
/// `last`, else ending on a sync flush (byte-aligned, the stream going on).
fn deflate_piece(piece: &[u8], last: bool) -> Vec<u8> {
    use flate2::{Compress, FlushCompress, Status};
    let mut c = Compress::new(flate2::Compression::fast(), false);
    let flush = if last {
        FlushCompress::Finish
    } else {
        FlushCompress::Sync
    };
    let mut out = Vec::with_capacity(piece.len() / 4 + 64);
    loop {
        if out.capacity() - out.len() < 64 {
            out.reserve(out.capacity());
        }
        let read = usize::try_from(c.total_in()).unwrap_or(piece.len());
        // Compressing into a Vec with room cannot fail.
        let status = c
            .compress_vec(&piece[read.min(piece.len())..], &mut out, flush)
            .expect("deflate into memory");
        let all_read = usize::try_from(c.total_in()).is_ok_and(|n| n == piece.len());
        // A flush is complete when it leaves room in the output.
        let flushed = !last && all_read && out.len() < out.capacity();
        if status == Status::StreamEnd || flushed {
            return out;
        }
    }
}

/// The JSON text of a deflated payload; `None` when it is not valid base64, DEFLATE or UTF-8.
pub fn inflate_base64(text: &str) -> Option<String> {
    let z = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .ok()?;
    let mut out = Vec::with_capacity(z.len() * 4);
    let mut dec = flate2::write::DeflateDecoder::new(&mut out);
    dec.write_all(&z).ok()?;
    dec.finish().ok()?;
    String::from_utf8(out).ok()
}

/// A data script found in a page: where the whole element lies, its form, and its JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Byte range of the element, `<script` to `</script>` included.
    pub element: std::ops::Range<usize>,
    /// Whether it is in the deflated form.
    pub deflated: bool,
    /// Its JSON text (unescaped for a deflated one; as written, escapes and all, for a plain
    /// one — the same JSON value).
    pub json: String,
}

/// The first data script of `class` whose attributes after `class` are exactly `attrs` in
/// `html`, in either form, as [`data_script`] writes them; `None` when there is none or a
/// deflated one does not decode.
pub fn find_data_script(html: &str, class: &str, attrs: &str) -> Option<Found> {
    let plain = format!("<script type=\"application/json\" class=\"{class}\"{attrs}>");
    let packed = format!(
        "<script type=\"application/octet-stream\" class=\"{class}\"{attrs} data-nb-encoding=\"{ENCODING}\">"
    );
    let (at, open, deflated) = match (html.find(&plain), html.find(&packed)) {
        (Some(a), Some(b)) if b < a => (b, &packed, true),
        (Some(a), _) => (a, &plain, false),
        (None, Some(b)) => (b, &packed, true),
        (None, None) => return None,
    };
    let start = at + open.len();
    let end = start + html[start..].find("</script>")?;
    let body = &html[start..end];
    let json = if deflated {
        inflate_base64(body)?
    } else {
        body.to_string()
    };
    Some(Found {
        element: at..end + "</script>".len(),
        deflated,
        json,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn small_payloads_stay_plain_json() {
        assert_eq!(
            data_script("nb-data", " data-nb-page=\"p\"", "{\"a\":\"</b>\"}", 100),
            "<script type=\"application/json\" class=\"nb-data\" data-nb-page=\"p\">{\"a\":\"\\u003c/b\\u003e\"}</script>"
        );
    }

    #[test]
    fn big_payloads_are_deflated_and_read_back() {
        let json = format!(
            "{{\"comments\":[{}]}}",
            vec!["{\"body\":\"</script> & more\"}"; 200].join(",")
        );
        let html = format!(
            "<p>x</p>{}<p>y</p>",
            data_script("nb-data", " data-nb-page=\"p\"", &json, 64)
        );
        assert!(
            html.contains("data-nb-encoding=\"deflate-raw+base64\">"),
            "{html}"
        );
        let body = &html[html.find("\">").unwrap() + 2..html.find("</script>").unwrap()];
        assert!(
            body.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b)),
            "{body}"
        );
        assert!(
            html.len() < json.len() / 4,
            "{} vs {}",
            html.len(),
            json.len()
        );
        let found = find_data_script(&html, "nb-data", " data-nb-page=\"p\"").unwrap();
        assert_eq!(found.json, json);
        assert!(found.deflated);
        assert_eq!(&html[found.element.clone()], &html[8..html.len() - 8]);
        // The same input, the same bytes.
        assert_eq!(
            data_script("nb-data", "", &json, 64),
            data_script("nb-data", "", &json, 64)
        );
    }

    /// A payload of several pieces is one stream, read back whole, and its bytes are those of
    /// its pieces deflated one by one: the same whatever the threads.
    #[test]
    fn a_payload_of_several_pieces_is_one_stream() {
        let json: String = (0..3 * PIECE / 40)
            .map(|i| format!("{{\"id\":\"c_{i:07}\",\"n\":{}}},", i * 7919 % 1000))
            .collect();
        assert!(json.len() > 2 * PIECE + 1, "three pieces");
        let text = deflate_base64(json.as_bytes());
        assert_eq!(inflate_base64(&text).as_deref(), Some(json.as_str()));
        let pieces: Vec<&[u8]> = json.as_bytes().chunks(PIECE).collect();
        let one_by_one: Vec<u8> = (pieces.iter().enumerate())
            .flat_map(|(i, p)| deflate_piece(p, i == pieces.len() - 1))
            .collect();
        assert_eq!(
            text,
            base64::engine::general_purpose::STANDARD.encode(one_by_one)
        );
        // Given in parts cut anywhere, the same text.
        let b = json.as_bytes();
        let parts = [
            &b[..10],
            &b[10..PIECE + 3],
            &b[PIECE + 3..PIECE + 3],
            &b[PIECE + 3..],
        ];
        assert_eq!(deflate_pieces_base64(&parts), text);
        assert_eq!(
            deflated_script("c", "", &parts),
            data_script("c", "", &json, 0)
        );
        // A piece that does not end the stream ends on a sync flush's empty stored block.
        assert!(deflate_piece(pieces[0], false).ends_with(&[0, 0, 0xff, 0xff]));
        // Up to a piece, the stream is the one-piece form of before.
        let small = &json[..PIECE];
        let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(small.as_bytes()).unwrap();
        let whole = base64::engine::general_purpose::STANDARD.encode(enc.finish().unwrap());
        assert_eq!(deflate_base64(small.as_bytes()), whole);
    }

    /// The deflated bytes are part of the build's output: pinned, so that a change of the
    /// compressor (a flate2 backend, a level) shows here rather than as a rebuild that differs.
    #[test]
    fn the_deflated_form_is_pinned() {
        let json = format!(
            "{{\"comments\":[{}]}}",
            vec!["{\"id\":\"c_a\",\"body\":\"Which Pi? A 3 or a 4?\"}"; 20].join(",")
        );
        let el = data_script("nb-data", "", &json, 0);
        assert_eq!(
            find_data_script(&el, "nb-data", "").map(|f| f.json),
            Some(json.clone())
        );
        assert_eq!(
            el,
            "<script type=\"application/octet-stream\" class=\"nb-data\" data-nb-encoding=\"deflate-raw+base64\">7ZMxCoAwEAS/cmydTqs0wR/YWYhIvAi5Ih6ojYT8Xf9ge+XCVsNMBWsp+3Ff8HOFJHjwGuGwaXq+MWXhTKMEGqgjPSlSH9CcfY2D+fCri6W9</script>"
        );
    }

    /// Page ids that share a prefix: each finds its own island, in either form.
    #[test]
    fn a_page_id_finds_its_own_island_only() {
        let ab = data_script("nb-data", " data-nb-page=\"ab\"", "{\"page\":\"ab\"}", 0);
        let a = data_script(
            "nb-data",
            " data-nb-page=\"a\"",
            "{\"page\":\"a\"}",
            usize::MAX,
        );
        let html = format!("{ab}{a}");
        let found = find_data_script(&html, "nb-data", " data-nb-page=\"a\"").unwrap();
        assert_eq!(
            (found.json.as_str(), found.deflated),
            ("{\"page\":\"a\"}", false)
        );
        let found = find_data_script(&html, "nb-data", " data-nb-page=\"ab\"").unwrap();
        assert_eq!(
            (found.json.as_str(), found.deflated),
            ("{\"page\":\"ab\"}", true)
        );
        assert_eq!(
            find_data_script(&html, "nb-data", " data-nb-page=\"b\""),
            None
        );
    }

    #[test]
    fn a_damaged_payload_is_not_read() {
        let html = "<script type=\"application/octet-stream\" class=\"nb-data\" data-nb-encoding=\"deflate-raw+base64\">bm90IGRlZmxhdGU=</script>";
        assert_eq!(find_data_script(html, "nb-data", ""), None);
        assert_eq!(inflate_base64("***"), None);
    }
}
