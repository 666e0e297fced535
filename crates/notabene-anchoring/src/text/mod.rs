//! The text model: from a chapter's Markdown (as mdBook hands it to the HTML renderer) to the plain
//! text a reader's browser has in the chapter's `<main>` — the concatenated text nodes of the
//! HTML mdBook 0.5 renders — with a map from every text offset back to Markdown bytes, the
//! chapter's headings, its commentable blocks and its code blocks.
//!
//! The model follows `mdbook-html`'s tree builder and serializer event by event: block elements are
//! separated by newlines, table cells are not, hard breaks (`<br>`) add no text, footnote
//! definitions move to the end, Rust playground blocks gain their hidden `fn main` wrapper and lose
//! the `# ` of hidden lines, raw HTML is tokenised with html5ever exactly as mdBook does. Images
//! and ```` ```mermaid ```` diagrams contribute no text: they are blocks.

pub mod blocks;
mod builder;
mod code;
pub mod light;
pub mod normalize;
mod raw_html;

use blocks::BlockKind;
use std::collections::BTreeMap;
use std::ops::Range;

/// The HTML renderer settings that change a chapter's text (`[output.html]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextOptions {
    /// `smart-punctuation` (default true).
    pub smart_punctuation: bool,
    /// `definition-lists` (default true).
    pub definition_lists: bool,
    /// `admonitions` (default true).
    pub admonitions: bool,
    /// `playground.runnable` (default true): Rust blocks without `fn main` get a hidden wrapper.
    pub playground_runnable: bool,
    /// `playground.editable` (default false).
    pub playground_editable: bool,
    /// `code.hidelines`: language → hidden-line prefix.
    pub hidelines: BTreeMap<String, String>,
}

impl Default for TextOptions {
    fn default() -> Self {
        TextOptions {
            smart_punctuation: true,
            definition_lists: true,
            admonitions: true,
            playground_runnable: true,
            playground_editable: false,
            hidelines: BTreeMap::new(),
        }
    }
}

impl TextOptions {
    /// The parser options mdBook 0.5's HTML renderer uses for these settings
    /// (`mdbook_markdown::new_cmark_parser`; a test of the `mdbook-notabene` package holds the
    /// two to the same events).
    pub fn parser_options(&self) -> pulldown_cmark::Options {
        use pulldown_cmark::Options;
        let mut opts = Options::ENABLE_TABLES
            | Options::ENABLE_FOOTNOTES
            | Options::ENABLE_STRIKETHROUGH
            | Options::ENABLE_TASKLISTS
            | Options::ENABLE_HEADING_ATTRIBUTES;
        if self.smart_punctuation {
            opts.insert(Options::ENABLE_SMART_PUNCTUATION);
        }
        if self.definition_lists {
            opts.insert(Options::ENABLE_DEFINITION_LIST);
        }
        if self.admonitions {
            opts.insert(Options::ENABLE_GFM);
        }
        opts
    }
}

/// A Markdown parser as mdBook 0.5's HTML renderer makes it for these settings.
pub fn parser<'a>(markdown: &'a str, options: &TextOptions) -> pulldown_cmark::Parser<'a> {
    pulldown_cmark::Parser::new_ext(markdown, options.parser_options())
}

/// How a piece of text relates to its Markdown source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegKind {
    /// The text equals its source slice: offsets map character by character.
    Plain,
    /// Text that differs from its source (entity, escape, smart punctuation): maps as a unit.
    Atomic,
    /// An inline code span: maps as a unit and is wrapped whole, never entered.
    CodeSpan,
    /// Text of code block `n` (see [`PageText::code_blocks`]): never injected into.
    CodeBlock(u32),
    /// Text with no injectable source: raw HTML, block separators, footnote numbers,
    /// admonition titles, the hidden `fn main` wrapper.
    Raw,
}

impl SegKind {
    /// Whether the text equals its source slice, so offsets map character by character.
    pub fn maps_exactly(self) -> bool {
        matches!(self, SegKind::Plain | SegKind::CodeBlock(_))
    }
}

/// A run of page text and the Markdown bytes it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// Byte range in [`PageText::text`].
    pub text: Range<usize>,
    /// Byte range in the Markdown source.
    pub src: Range<usize>,
    /// Mapping kind.
    pub kind: SegKind,
    /// The innermost block element holding this text (an index into [`PageText::block_elements`]).
    pub block: u32,
    /// The innermost inline element (an index into [`PageText::inlines`]), or [`NO_INLINE`].
    pub inline: u32,
}

/// [`Segment::inline`] of text directly inside its block.
pub const NO_INLINE: u32 = u32::MAX;

/// An inline element (emphasis, strong, strikethrough, link, …) with its full source range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlineElement {
    /// The enclosing inline element, or [`NO_INLINE`].
    pub parent: u32,
    /// Source bytes of the whole construct, markup included.
    pub src: Range<usize>,
}

/// A heading of the chapter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    /// 1–6.
    pub level: u8,
    /// The heading's text content, trimmed.
    pub text: String,
    /// Byte offset in [`PageText::text`] where the heading starts.
    pub offset: usize,
}

/// A commentable block (image or diagram).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// Image or mermaid.
    pub kind: BlockKind,
    /// `image:<src>` or `mermaid:<hash>`.
    pub key: String,
    /// Label as the original client derives it.
    pub label: String,
    /// Text of the nearest preceding h1–h4, if any.
    pub section: Option<String>,
    /// 0-based position among the chapter's blocks.
    pub index: usize,
    /// Source bytes of the image or fence.
    pub src: Range<usize>,
    /// Whether the block came from raw HTML (`<img>`), where nothing can be injected.
    pub raw_html: bool,
    /// For diagrams: the fence source.
    pub source: Option<String>,
}

/// A fenced or indented code block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeBlock {
    /// Source bytes of the whole block, fences included.
    pub src: Range<usize>,
    /// Its text in [`PageText::text`].
    pub text: Range<usize>,
}

/// A chapter's rendered text and everything needed to map it back to Markdown.
#[derive(Debug, Clone, Default)]
pub struct PageText {
    /// The text content of the rendered `<main>`, before normalisation.
    pub text: String,
    /// Contiguous, ordered segments covering `text`.
    pub segments: Vec<Segment>,
    /// Headings in document order.
    pub headings: Vec<Heading>,
    /// Images and diagrams in document order (`index` = position).
    pub blocks: Vec<Block>,
    /// Code blocks in document order.
    pub code_blocks: Vec<CodeBlock>,
    /// Inline elements referenced by segments.
    pub inlines: Vec<InlineElement>,
    /// Source range of each block element referenced by segments.
    pub block_elements: Vec<Range<usize>>,
    /// A light model ([`light`]): text, headings, blocks and code blocks only, as the build's
    /// memo keeps them; `segments`, `inlines` and `block_elements` are empty, so nothing may
    /// map its text to Markdown (derive the whole model with [`page_text`] first).
    pub light: bool,
}

impl PageText {
    /// The text each inline element holds (over every segment inside it, nested ones
    /// included), by its index in [`PageText::inlines`]; None for one that holds no text.
    pub fn inline_text_ranges(&self) -> Vec<Option<std::ops::Range<usize>>> {
        let mut out: Vec<Option<std::ops::Range<usize>>> = vec![None; self.inlines.len()];
        for s in &self.segments {
            let mut i = s.inline;
            while i != NO_INLINE {
                let r = out[i as usize].get_or_insert(s.text.clone());
                r.start = r.start.min(s.text.start);
                r.end = r.end.max(s.text.end);
                i = self.inlines[i as usize].parent;
            }
        }
        out
    }

    /// The index of the code block whose text holds all of `range` (text bytes), if any.
    pub fn code_block_holding(&self, range: &std::ops::Range<usize>) -> Option<usize> {
        self.code_blocks
            .iter()
            .position(|cb| cb.text.start <= range.start && range.end <= cb.text.end)
    }

    /// The index of the segment holding text byte `pos` (the last one when `pos` is the end).
    pub fn segment_at(&self, pos: usize) -> Option<usize> {
        if self.segments.is_empty() {
            return None;
        }
        let i = self.segments.partition_point(|s| s.text.end <= pos);
        Some(i.min(self.segments.len() - 1))
    }

    /// The Markdown byte range of the text byte range `[a, b)`: exact inside plain text,
    /// widened to whole segments where text and source differ.
    pub fn source_range(&self, a: usize, b: usize) -> Range<usize> {
        debug_assert!(!self.light, "a light text model maps no text to Markdown");
        let (Some(sa), Some(sb)) = (
            self.segment_at(a),
            self.segment_at(b.saturating_sub(1).max(a)),
        ) else {
            return 0..0;
        };
        let s = &self.segments[sa];
        let start = if s.kind.maps_exactly() {
            s.src.start + (a - s.text.start)
        } else {
            s.src.start
        };
        let e = &self.segments[sb];
        let end = if e.kind.maps_exactly() {
            e.src.start + (b.max(e.text.start) - e.text.start).min(e.src.len())
        } else {
            e.src.end
        };
        start..end.max(start)
    }

    /// The text of the nearest h1–h4 at or before text offset `pos`.
    pub fn section_at(&self, pos: usize) -> Option<&str> {
        self.headings
            .iter()
            .take_while(|h| h.offset <= pos)
            .filter(|h| h.level <= 4)
            .last()
            .map(|h| h.text.as_str())
    }
}

/// Builds the text model of a chapter.
pub fn page_text(markdown: &str, options: &TextOptions) -> PageText {
    let parser = parser(markdown, options);
    let mut b = builder::Builder::new(markdown, options);
    let mut events = parser.into_offset_iter();
    while let Some((event, range)) = events.next() {
        b.event(event, range, &mut events);
    }
    b.finish()
}
