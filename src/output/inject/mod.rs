//! Injection: writes the markers of placed anchors into a chapter's Markdown as raw inline HTML,
//! without changing what a reader sees.
//!
//! * Text anchors become `<mark class="nb-mark" data-nb-id data-nb-status>` elements in pieces,
//!   one per run of text at one element level, so every tag opens and closes inside the same
//!   Markdown block, inline element and raw HTML element, and the pieces cover exactly the
//!   quote (the reader client treats them as one mark). Boundaries are snapped outward to word
//!   boundaries (to whitespace when a word boundary would change how the Markdown parses); an
//!   element the quote covers whole is wrapped whole; a code span the quote starts or ends in
//!   is written as a raw `<code>` element first, so a piece can go inside it. Overlapping
//!   anchors are split into properly nested elements.
//! * Text inside code blocks is never touched: an empty `<span class="nb-code-anchor">` goes on
//!   the line before a fenced block, and the data island carries the exact text and offset.
//! * Images are wrapped in `<span class="nb-block" data-nb-block="IDS">`; every ```` ```mermaid ````
//!   fence becomes a one-line `<pre class="mermaid">` holding its escaped source.
//! * One data island per chapter: `<script type="application/json" class="nb-data">`, deflated
//!   when it is big (`compress-above`, see [`crate::util::payload`]).
//!
//! The result is checked by re-deriving the text model: if the visible text changed, the text
//! markers are dropped for that chapter (and reported), never the reader's text.

mod code_spans;
pub mod island;
mod raw_tags;
mod runs;
mod splice;

use notabene_anchoring::text::PageText;
use notabene_anchoring::text::blocks::BlockKind;
use notabene_core::escape::escape_html;
use raw_tags::RawTags;
use runs::Snap;
use splice::{Insert, Order, apply, line_prefix, mark_inserts};
use std::collections::BTreeMap;
use std::ops::Range;

/// A placed text anchor to mark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextMark {
    /// Comment id.
    pub id: String,
    /// Comment status (`open`, `addressed`).
    pub status: String,
    /// Raw text byte range in the page text.
    pub text: Range<usize>,
}

/// Everything to inject into one chapter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Injection {
    /// Text anchors.
    pub marks: Vec<TextMark>,
    /// Block index → comment ids anchored on it.
    pub blocks: BTreeMap<usize, Vec<String>>,
    /// Code block index → comment ids with a match inside it.
    pub code: BTreeMap<usize, Vec<String>>,
    /// The data island: its whole `<script>` element (plain or deflated JSON), or None.
    pub island: Option<String>,
}

/// What happened while injecting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InjectOutcome {
    /// Text markers were dropped because they would have changed the visible text.
    pub marks_dropped: bool,
}

/// Builds the chapter's new Markdown. Mermaid fences are converted whether or not they carry
/// comments, so diagrams render with the usual mermaid script.
pub fn inject(
    md: &str,
    page: &PageText,
    inj: &Injection,
    options: &notabene_anchoring::text::TextOptions,
) -> (String, InjectOutcome) {
    // Markers are placed through the map from text to Markdown, which a light model (read
    // from the build's memo) does not carry.
    let whole;
    let page = if page.light {
        whole = notabene_anchoring::text::page_text(md, options);
        &whole
    } else {
        page
    };
    let island = inj
        .island
        .as_ref()
        .map(|el| format!("\n\n{el}\n"))
        .unwrap_or_default();
    // A mark that starts or ends inside a code span goes inside it once the span is written
    // as a raw `<code>` element; the chapter as it is otherwise.
    let entered = code_spans::open_entered(md, page, &inj.marks, options);
    let entered = entered.as_ref().map(|(md, page)| (md.as_str(), page));
    for (md, page) in entered.into_iter().chain([(md, page)]) {
        if let Some(full) = with_marks(md, page, inj, options) {
            return (full + &island, InjectOutcome::default());
        }
    }
    let (mut structural, mut replaces) = block_edits(md, page, inj);
    structural.extend(code_anchors(md, page, inj));
    replaces.sort_by_key(|r| r.0.start);
    let without = apply(md, structural, &replaces) + &island;
    (
        without,
        InjectOutcome {
            marks_dropped: true,
        },
    )
}

/// The chapter with every marker, if its marks leave the text as it was: snapped to word
/// boundaries first; if a mark next to punctuation (a smart quote, an emphasis delimiter)
/// would change how the Markdown parses, widened to whitespace.
fn with_marks(
    md: &str,
    page: &PageText,
    inj: &Injection,
    options: &notabene_anchoring::text::TextOptions,
) -> Option<String> {
    let (mut structural, mut replaces) = block_edits(md, page, inj);
    structural.extend(code_anchors(md, page, inj));
    replaces.sort_by_key(|r| r.0.start);
    if inj.marks.is_empty() {
        return Some(apply(md, structural, &replaces));
    }
    // Markers add no text: the re-derived text must have the same words (whitespace between
    // blocks may differ where a fence became raw HTML).
    let same_text = |candidate: &str| {
        notabene_anchoring::text::page_text(candidate, options)
            .text
            .split_whitespace()
            .eq(page.text.split_whitespace())
    };
    let tags = RawTags::new(md, options);
    for mode in [Snap::Word, Snap::Space] {
        let mut with_marks = structural.clone();
        mark_inserts(md, page, &tags, &inj.marks, mode, &mut with_marks);
        // (The island goes after the check: a script is no text, and it can be large.)
        let full = apply(md, with_marks, &replaces);
        if same_text(&full) {
            return Some(full);
        }
    }
    None
}

/// The edits of the page's blocks: every mermaid fence replaced by a `<pre class="mermaid">`
/// (with its comment ids), and a `<span class="nb-block">` around each commented image.
fn block_edits(
    md: &str,
    page: &PageText,
    inj: &Injection,
) -> (Vec<Insert>, Vec<(Range<usize>, String)>) {
    let mut structural: Vec<Insert> = Vec::new();
    let mut replaces: Vec<(Range<usize>, String)> = Vec::new();
    for (i, b) in page.blocks.iter().enumerate() {
        let ids = inj.blocks.get(&i).map(|v| v.join(" ")).unwrap_or_default();
        match b.kind {
            BlockKind::Mermaid => {
                let source = b.source.as_deref().unwrap_or("");
                let escaped = escape_html(source)
                    .replace("\r\n", "&#10;")
                    .replace(['\n', '\r'], "&#10;");
                let attrs = if ids.is_empty() {
                    String::new()
                } else {
                    format!(" data-nb-block=\"{}\"", escape_html(&ids))
                };
                let nl = if md[b.src.clone()].ends_with('\n') {
                    "\n"
                } else {
                    ""
                };
                replaces.push((
                    b.src.clone(),
                    format!(
                        "<pre class=\"mermaid\" data-nb-key=\"{}\"{attrs}>{escaped}</pre>{nl}",
                        escape_html(&b.key)
                    ),
                ));
            }
            BlockKind::Image if !ids.is_empty() && !b.raw_html => {
                structural.push(Insert {
                    at: b.src.start,
                    order: Order::Open,
                    seq: 0,
                    text: format!(
                        "<span class=\"nb-block\" data-nb-block=\"{}\">",
                        escape_html(&ids)
                    ),
                });
                structural.push(Insert {
                    at: b.src.end,
                    order: Order::Close,
                    seq: usize::MAX,
                    text: "</span>".into(),
                });
            }
            BlockKind::Image => {}
        }
    }
    (structural, replaces)
}

/// An empty `<span class="nb-code-anchor">` per comment before each commented fenced code
/// block, on the fence's own line prefix (inside a list or a quote).
fn code_anchors(md: &str, page: &PageText, inj: &Injection) -> Vec<Insert> {
    let mut structural: Vec<Insert> = Vec::new();
    for (&n, ids) in &inj.code {
        let Some(cb) = page.code_blocks.get(n) else {
            continue;
        };
        let fenced = md[cb.src.clone()].trim_start().starts_with("```")
            || md[cb.src.clone()].trim_start().starts_with("~~~");
        if let Some(prefix) = line_prefix(md, cb.src.start).filter(|_| fenced) {
            let spans: String = ids
                .iter()
                .map(|id| {
                    format!(
                        "<span class=\"nb-code-anchor\" data-nb-id=\"{}\"></span>",
                        escape_html(id)
                    )
                })
                .collect();
            structural.push(Insert {
                at: cb.src.start,
                order: Order::Close,
                seq: n,
                text: format!("{spans}\n{prefix}"),
            });
        }
    }
    structural
}
