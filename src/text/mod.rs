//! The text model: from a chapter's Markdown (as mdBook hands it to the HTML renderer) to the
//! plain text a reader's browser has in the chapter's `<main>` — the concatenated text nodes of
//! the HTML mdBook 0.5 renders — with a map from every text offset back to Markdown bytes, the
//! chapter's headings, its commentable blocks and its code blocks.
//!
//! The model follows `mdbook-html`'s tree builder and serializer event by event: block
//! elements are separated by newlines, table cells are not, hard breaks (`<br>`) add no text,
//! footnote definitions move to the end, Rust playground blocks gain their hidden `fn main`
//! wrapper and lose the `# ` of hidden lines, raw HTML is tokenised with html5ever exactly as
//! mdBook does. Images and ```` ```mermaid ```` diagrams contribute no text: they are blocks.

pub mod blocks;
pub mod normalize;

use blocks::BlockKind;
use mdbook_markdown::pulldown_cmark::{BlockQuoteKind, CodeBlockKind, Event, Tag, TagEnd};
use std::collections::{BTreeMap, HashMap};
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
    /// Reads the options from a book's configuration (`[output.html]`), through mdBook's own
    /// `HtmlConfig` so defaults and aliases (`playpen`) are exactly mdBook's.
    pub fn from_config(config: &mdbook_preprocessor::config::Config) -> crate::Result<TextOptions> {
        let html = config
            .get::<mdbook_preprocessor::config::HtmlConfig>("output.html")
            .map_err(|e| crate::Error::new(format!("{e:#} (book.toml [output.html])")))?
            .unwrap_or_default();
        Ok(TextOptions {
            smart_punctuation: html.smart_punctuation,
            definition_lists: html.definition_lists,
            admonitions: html.admonitions,
            playground_runnable: html.playground.runnable,
            playground_editable: html.playground.editable,
            hidelines: html.code.hidelines.into_iter().collect(),
        })
    }

    fn markdown(&self) -> mdbook_markdown::MarkdownOptions {
        let mut m = mdbook_markdown::MarkdownOptions::default();
        m.smart_punctuation = self.smart_punctuation;
        m.definition_lists = self.definition_lists;
        m.admonitions = self.admonitions;
        m
    }
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
}

impl PageText {
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
    let parser = mdbook_markdown::new_cmark_parser(markdown, &options.markdown());
    let mut b = Builder::new(markdown, options);
    let mut events = parser.into_offset_iter();
    while let Some((event, range)) = events.next() {
        b.event(event, range, &mut events);
    }
    b.finish()
}

/// Text being built, with its segments (the main flow, or one footnote definition).
#[derive(Default)]
struct Flow {
    text: String,
    segments: Vec<Segment>,
    headings: Vec<Heading>,
}

struct Builder<'a> {
    src: &'a str,
    options: &'a TextOptions,
    main: Flow,
    /// Footnote definitions (name → flow), moved to the end.
    defs: HashMap<String, Flow>,
    def_order: Vec<String>,
    /// The footnote definition being written, if any.
    in_def: Option<String>,
    /// Footnote name → (number, reference count).
    footnotes: HashMap<String, (usize, usize)>,
    blocks: Vec<Block>,
    code_blocks: Vec<CodeBlock>,
    inlines: Vec<InlineElement>,
    inline_stack: Vec<u32>,
    block_elements: Vec<Range<usize>>,
    block_stack: Vec<u32>,
    /// Open heading: (level, text start in the current flow).
    heading: Option<(u8, usize)>,
    /// Open code block: (info string, start of the block's source, pieces).
    code: Option<CodeState>,
    /// Inside raw HTML `<script>`/`<style>` (their content is not text).
    in_raw: bool,
    /// Inside a raw `<pre class="mermaid">`: its source, collected (a diagram has no text).
    raw_mermaid: Option<String>,
}

struct CodeState {
    info: Option<String>,
    src_start: usize,
    /// Code text with, per byte, the source offset it came from (`None`: not from source).
    text: String,
    map: Vec<Option<usize>>,
}

impl<'a> Builder<'a> {
    fn new(src: &'a str, options: &'a TextOptions) -> Self {
        Builder {
            src,
            options,
            main: Flow::default(),
            defs: HashMap::new(),
            def_order: Vec::new(),
            in_def: None,
            footnotes: HashMap::new(),
            blocks: Vec::new(),
            code_blocks: Vec::new(),
            inlines: Vec::new(),
            inline_stack: Vec::new(),
            block_elements: std::iter::once(0..src.len()).collect(),
            block_stack: vec![0],
            heading: None,
            code: None,
            in_raw: false,
            raw_mermaid: None,
        }
    }

    fn flow(&mut self) -> &mut Flow {
        match &self.in_def {
            Some(name) => self.defs.get_mut(name).expect("definition flow exists"),
            None => &mut self.main,
        }
    }

    fn emit(&mut self, text: &str, src: Range<usize>, kind: SegKind) {
        if text.is_empty() {
            return;
        }
        let block = *self.block_stack.last().unwrap_or(&0);
        let inline = *self.inline_stack.last().unwrap_or(&NO_INLINE);
        let flow = self.flow();
        let start = flow.text.len();
        flow.text.push_str(text);
        flow.segments.push(Segment {
            text: start..flow.text.len(),
            src,
            kind,
            block,
            inline,
        });
    }

    /// Text whose source is `range`: plain when it equals the source slice, else atomic.
    fn emit_source_text(&mut self, text: &str, range: Range<usize>) {
        let kind = if self.src.get(range.clone()) == Some(text) {
            SegKind::Plain
        } else {
            SegKind::Atomic
        };
        self.emit(text, range, kind);
    }

    /// The newline mdBook's serializer puts around block elements.
    fn separator(&mut self, at: usize) {
        let flow = self.flow();
        if !flow.text.is_empty() && !flow.text.ends_with('\n') {
            self.emit("\n", at..at, SegKind::Raw);
        }
    }

    fn open_block(&mut self, range: &Range<usize>) {
        self.separator(range.start);
        self.block_elements.push(range.clone());
        self.block_stack
            .push((self.block_elements.len() - 1) as u32);
    }

    fn close_block(&mut self, range: &Range<usize>) {
        self.block_stack.pop();
        self.emit("\n", range.end..range.end, SegKind::Raw);
    }

    fn current_section(&self) -> Option<String> {
        self.main
            .headings
            .iter()
            .rev()
            .find(|h| h.level <= 4)
            .map(|h| h.text.clone())
    }

    fn event<'e>(
        &mut self,
        event: Event<'e>,
        range: Range<usize>,
        rest: &mut impl Iterator<Item = (Event<'e>, Range<usize>)>,
    ) {
        if let Some(code) = &mut self.code {
            match event {
                Event::Text(t) => {
                    let plain = self.src.get(range.clone()) == Some(&*t);
                    code.text.push_str(&t);
                    code.map.extend(
                        (0..t.len())
                            .map(|i| Some(if plain { range.start + i } else { range.start })),
                    );
                }
                Event::End(TagEnd::CodeBlock) => self.end_code_block(range),
                _ => {}
            }
            return;
        }
        match event {
            Event::Start(tag) => self.start(tag, range, rest),
            Event::End(tag) => self.end(tag, range),
            Event::Text(t) => self.emit_source_text(&t, range),
            Event::Code(t) => self.emit(&t, range, SegKind::CodeSpan),
            Event::InlineMath(t) | Event::DisplayMath(t) => self.emit(&t, range, SegKind::Atomic),
            Event::Html(h) | Event::InlineHtml(h) => self.html(&h, range),
            Event::FootnoteReference(name) => self.footnote_reference(&name, range),
            Event::SoftBreak => self.emit("\n", range, SegKind::Atomic),
            Event::HardBreak => {}
            Event::Rule => self.separator(range.start),
            Event::TaskListMarker(_) => self.emit(" ", range, SegKind::Raw),
        }
    }

    fn start<'e>(
        &mut self,
        tag: Tag<'e>,
        range: Range<usize>,
        rest: &mut impl Iterator<Item = (Event<'e>, Range<usize>)>,
    ) {
        match tag {
            Tag::Paragraph
            | Tag::List(_)
            | Tag::Item
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::TableRow => self.open_block(&range),
            Tag::Table(_) | Tag::TableHead => {
                // div + table, or thead + tr: two block elements.
                self.open_block(&range);
            }
            Tag::TableCell => {
                self.block_elements.push(range.clone());
                self.block_stack
                    .push((self.block_elements.len() - 1) as u32);
            }
            Tag::Heading { level, .. } => {
                self.open_block(&range);
                let start = self.flow().text.len();
                self.heading = Some((level as u8, start));
            }
            Tag::BlockQuote(kind) => {
                self.open_block(&range);
                if let Some(kind) = kind {
                    let title = match kind {
                        BlockQuoteKind::Note => "Note",
                        BlockQuoteKind::Tip => "Tip",
                        BlockQuoteKind::Important => "Important",
                        BlockQuoteKind::Warning => "Warning",
                        BlockQuoteKind::Caution => "Caution",
                    };
                    self.separator(range.start);
                    self.emit(title, range.start..range.start, SegKind::Raw);
                    self.emit("\n", range.start..range.start, SegKind::Raw);
                }
            }
            Tag::CodeBlock(kind) => {
                self.separator(range.start);
                let info = match kind {
                    CodeBlockKind::Fenced(info) => Some(info.to_string()),
                    CodeBlockKind::Indented => None,
                };
                self.code = Some(CodeState {
                    info,
                    src_start: range.start,
                    text: String::new(),
                    map: Vec::new(),
                });
            }
            Tag::HtmlBlock => {
                let mut html = String::new();
                let mut end = range.end;
                for (ev, r) in rest.by_ref() {
                    match ev {
                        Event::Html(t) | Event::Text(t) => {
                            html.push_str(&t);
                            end = end.max(r.end);
                        }
                        Event::End(TagEnd::HtmlBlock) => {
                            end = end.max(r.end);
                            break;
                        }
                        _ => {}
                    }
                }
                self.html(&html, range.start..end);
            }
            Tag::FootnoteDefinition(name) => {
                let name = name.to_string();
                if self.defs.contains_key(&name) {
                    // mdBook keeps the first definition and drops the rest.
                    skip_to_end(rest, |_| {});
                    return;
                }
                self.defs.insert(name.clone(), Flow::default());
                self.def_order.push(name.clone());
                self.in_def = Some(name);
                self.block_elements.push(range.clone());
                self.block_stack
                    .push((self.block_elements.len() - 1) as u32);
            }
            Tag::Emphasis
            | Tag::Strong
            | Tag::Strikethrough
            | Tag::Superscript
            | Tag::Subscript
            | Tag::Link { .. } => {
                let parent = *self.inline_stack.last().unwrap_or(&NO_INLINE);
                self.inlines.push(InlineElement { parent, src: range });
                self.inline_stack.push((self.inlines.len() - 1) as u32);
            }
            Tag::Image { dest_url, .. } => {
                // The alt text is an attribute, not text: collect it and move on.
                let mut alt = String::new();
                skip_to_end(rest, |ev| match ev {
                    Event::Text(t)
                    | Event::Code(t)
                    | Event::InlineHtml(t)
                    | Event::InlineMath(t)
                    | Event::DisplayMath(t) => alt.push_str(t),
                    Event::SoftBreak | Event::HardBreak | Event::Rule => alt.push(' '),
                    _ => {}
                });
                self.push_block(
                    BlockKind::Image,
                    blocks::image_key(&dest_url),
                    blocks::image_label(&alt, &dest_url),
                    range,
                    false,
                    None,
                );
            }
            Tag::MetadataBlock(_) => skip_to_end(rest, |_| {}),
        }
    }

    fn end(&mut self, tag: TagEnd, range: Range<usize>) {
        match tag {
            TagEnd::Paragraph
            | TagEnd::List(_)
            | TagEnd::Item
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::TableRow
            | TagEnd::Table
            | TagEnd::TableHead
            | TagEnd::BlockQuote(_) => self.close_block(&range),
            TagEnd::TableCell => {
                self.block_stack.pop();
            }
            TagEnd::Heading(level) => {
                if let Some((lvl, start)) = self.heading.take() {
                    let flow = self.flow();
                    let text = flow.text[start..].trim().to_string();
                    flow.headings.push(Heading {
                        level: lvl.max(level as u8),
                        text,
                        offset: start,
                    });
                }
                self.close_block(&range);
            }
            TagEnd::FootnoteDefinition => {
                self.block_stack.pop();
                self.in_def = None;
            }
            TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Superscript
            | TagEnd::Subscript
            | TagEnd::Link => {
                self.inline_stack.pop();
            }
            _ => {}
        }
    }

    fn push_block(
        &mut self,
        kind: BlockKind,
        key: String,
        label: String,
        src: Range<usize>,
        raw_html: bool,
        source: Option<String>,
    ) {
        let section = self.current_section();
        let index = self.blocks.len();
        self.blocks.push(Block {
            kind,
            key,
            label,
            section,
            index,
            src,
            raw_html,
            source,
        });
    }

    fn footnote_reference(&mut self, name: &str, range: Range<usize>) {
        let next = self.footnotes.len() + 1;
        let entry = self.footnotes.entry(name.to_string()).or_insert((next, 0));
        entry.1 += 1;
        let n = entry.0;
        // mdBook separates adjacent references with a space.
        let adjacent = self.flow().segments.last().is_some_and(|s| {
            s.src.end == range.start && s.kind == SegKind::Raw && !s.src.is_empty()
        });
        if adjacent {
            self.emit(" ", range.start..range.start, SegKind::Raw);
        }
        self.emit(&n.to_string(), range, SegKind::Raw);
    }

    /// Raw HTML (inline or a whole block): its text as html5ever tokenises it, block tags as
    /// separators, `<img>` as image blocks. Nothing in it is injectable.
    fn html(&mut self, html: &str, range: Range<usize>) {
        use html5ever::tokenizer::{TagKind, Token};
        for token in tokenize_html(html) {
            match token {
                Token::TagToken(tag) => {
                    let name = tag.name.to_string();
                    match tag.kind {
                        TagKind::StartTag => {
                            self.in_raw = matches!(name.as_str(), "script" | "style");
                            let class_has_mermaid = tag.attrs.iter().any(|a| {
                                &*a.name.local == "class"
                                    && a.value.split_whitespace().any(|c| c == "mermaid")
                            });
                            if name == "pre" && class_has_mermaid {
                                self.separator(range.start);
                                self.raw_mermaid = Some(String::new());
                                continue;
                            }
                            if is_pretty_block(&name) {
                                self.separator(range.start);
                            }
                            if name == "img" {
                                let attr = |n: &str| {
                                    tag.attrs
                                        .iter()
                                        .find(|a| &*a.name.local == n)
                                        .map(|a| a.value.to_string())
                                };
                                let src = attr("src").unwrap_or_default();
                                let label =
                                    blocks::image_label(&attr("alt").unwrap_or_default(), &src);
                                self.push_block(
                                    BlockKind::Image,
                                    blocks::image_key(&src),
                                    label,
                                    range.clone(),
                                    true,
                                    None,
                                );
                            }
                        }
                        TagKind::EndTag => {
                            self.in_raw = false;
                            if name == "pre"
                                && let Some(source) = self.raw_mermaid.take()
                            {
                                let (key, label) =
                                    (blocks::mermaid_key(&source), blocks::mermaid_label(&source));
                                self.push_block(
                                    BlockKind::Mermaid,
                                    key,
                                    label,
                                    range.clone(),
                                    true,
                                    Some(source),
                                );
                                self.emit("\n", range.clone(), SegKind::Raw);
                                continue;
                            }
                            if is_pretty_block(&name) {
                                self.emit("\n", range.clone(), SegKind::Raw);
                            }
                        }
                    }
                }
                // A raw `<pre class="mermaid">` is a diagram: its text is the diagram source.
                Token::CharacterTokens(chars) if self.raw_mermaid.is_some() => {
                    if let Some(source) = &mut self.raw_mermaid {
                        source.push_str(&chars);
                    }
                }
                Token::CharacterTokens(chars) if !self.in_raw => {
                    self.emit(&chars, range.clone(), SegKind::Raw)
                }
                _ => {}
            }
        }
    }

    fn end_code_block(&mut self, range: Range<usize>) {
        let Some(code) = self.code.take() else { return };
        let info = code.info.unwrap_or_default();
        let mut words = info.split([' ', '\t', ',']).filter(|s| !s.is_empty());
        let lang = words.next().unwrap_or("").to_string();
        let classes: Vec<String> = words.map(str::to_string).collect();
        let src = code.src_start..range.end;
        if lang == "mermaid" {
            let key = blocks::mermaid_key(&code.text);
            let label = blocks::mermaid_label(&code.text);
            self.push_block(
                BlockKind::Mermaid,
                key,
                label,
                src.clone(),
                false,
                Some(code.text),
            );
            self.close_block(&src);
            return;
        }
        let (mut text, mut map) = (code.text, code.map);
        let has = |c: &str| classes.iter().any(|x| x == c);
        let playground = lang == "rust"
            && ((!has("ignore")
                && !has("noplayground")
                && !has("noplaypen")
                && self.options.playground_runnable)
                || has("mdbook-runnable"));
        if playground && !(self.options.playground_editable && has("editable")) && !text.is_empty()
        {
            (text, map) = wrap_rust_main(&text, &map);
        }
        if !text.is_empty() {
            if lang == "rust" {
                (text, map) = hide_lines_rust(&text, &map);
            } else {
                let prefix = classes
                    .iter()
                    .find_map(|c| c.strip_prefix("hidelines=").map(str::to_string))
                    .or_else(|| self.options.hidelines.get(&lang).cloned());
                if let Some(prefix) = prefix {
                    (text, map) = hide_lines_prefix(&text, &map, &prefix);
                }
            }
        }
        let index = self.code_blocks.len() as u32;
        let start = self.flow().text.len();
        // Group bytes into runs of consecutive source offsets (plain) or unmapped text (raw).
        let mut i = 0;
        while i < text.len() {
            let mut j = i + 1;
            match map[i] {
                Some(s) => {
                    while j < text.len() && map[j] == Some(s + (j - i)) {
                        j += 1;
                    }
                    while !text.is_char_boundary(j) {
                        j += 1;
                    }
                    let piece = &text[i..j];
                    let plain = self.src.get(s..s + (j - i)) == Some(piece);
                    let kind = if plain {
                        SegKind::CodeBlock(index)
                    } else {
                        SegKind::Raw
                    };
                    let end = if plain { s + (j - i) } else { s };
                    self.emit(piece, s..end, kind);
                }
                None => {
                    while j < text.len() && (map[j].is_none() || !text.is_char_boundary(j)) {
                        j += 1;
                    }
                    let at = map[..i].iter().rev().find_map(|m| *m).unwrap_or(src.start);
                    self.emit(&text[i..j], at..at, SegKind::Raw);
                }
            }
            i = j;
        }
        let end = self.flow().text.len();
        self.code_blocks.push(CodeBlock {
            src: src.clone(),
            text: start..end,
        });
        self.close_block(&src);
    }

    fn finish(mut self) -> PageText {
        // Footnote definitions: referenced ones, in reference order, after an <hr> and <ol>.
        let mut defs: Vec<(usize, usize, Flow)> = self
            .def_order
            .iter()
            .filter_map(|name| {
                let (n, count) = *self.footnotes.get(name)?;
                Some((n, count, self.defs.remove(name)?))
            })
            .collect();
        defs.sort_by_key(|d| d.0);
        let mut main = std::mem::take(&mut self.main);
        if !self.def_order.is_empty() {
            let end = self.src.len();
            push_raw(&mut main, "\n", end);
            for (_, count, mut flow) in defs {
                // Backlinks: " ↩", " ↩2", … at the end of the definition.
                for usage in 1..=count {
                    let nth = if usage == 1 {
                        String::new()
                    } else {
                        usage.to_string()
                    };
                    if flow.text.ends_with('\n') {
                        flow.text.pop();
                        let last = flow.segments.last_mut().expect("text has a segment");
                        last.text.end -= 1;
                        if last.text.is_empty() {
                            flow.segments.pop();
                        }
                        push_raw(&mut flow, &format!(" ↩{nth}"), end);
                        push_raw(&mut flow, "\n", end);
                    } else {
                        push_raw(&mut flow, &format!(" ↩{nth}"), end);
                    }
                }
                push_raw(&mut main, "\n", end);
                let shift = main.text.len();
                main.text.push_str(&flow.text);
                main.segments.extend(flow.segments.into_iter().map(|mut s| {
                    s.text = s.text.start + shift..s.text.end + shift;
                    s
                }));
                push_raw(&mut main, "\n", end);
            }
        }
        PageText {
            text: main.text,
            segments: main.segments,
            headings: main.headings,
            blocks: self.blocks,
            code_blocks: self.code_blocks,
            inlines: self.inlines,
            block_elements: self.block_elements,
        }
    }
}

/// Consumes events up to the `End` matching an already consumed `Start`, showing each
/// inner event to `on`.
fn skip_to_end<'e>(
    rest: &mut impl Iterator<Item = (Event<'e>, Range<usize>)>,
    mut on: impl FnMut(&Event<'e>),
) {
    let mut nest = 0usize;
    for (ev, _) in rest.by_ref() {
        match ev {
            Event::Start(_) => nest += 1,
            Event::End(_) if nest == 0 => break,
            Event::End(_) => nest -= 1,
            _ => {}
        }
        on(&ev);
    }
}

fn push_raw(flow: &mut Flow, text: &str, at: usize) {
    let start = flow.text.len();
    flow.text.push_str(text);
    flow.segments.push(Segment {
        text: start..flow.text.len(),
        src: at..at,
        kind: SegKind::Raw,
        block: 0,
        inline: NO_INLINE,
    });
}

fn is_pretty_block(name: &str) -> bool {
    matches!(
        name,
        "blockquote"
            | "dd"
            | "div"
            | "dl"
            | "dt"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "hr"
            | "li"
            | "ol"
            | "p"
            | "pre"
            | "table"
            | "tbody"
            | "thead"
            | "tr"
            | "ul"
    )
}

fn tokenize_html(html: &str) -> Vec<html5ever::tokenizer::Token> {
    use html5ever::tendril::ByteTendril;
    use html5ever::tokenizer::states::RawKind;
    use html5ever::tokenizer::{
        BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
    };
    use std::cell::RefCell;

    #[derive(Default)]
    struct Sink(RefCell<Vec<Token>>);
    impl TokenSink for Sink {
        type Handle = ();
        fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
            let raw = match &token {
                Token::TagToken(t) if t.kind == TagKind::StartTag && &*t.name == "script" => {
                    Some(RawKind::ScriptData)
                }
                Token::TagToken(t) if t.kind == TagKind::StartTag && &*t.name == "style" => {
                    Some(RawKind::Rawtext)
                }
                _ => None,
            };
            self.0.borrow_mut().push(token);
            match raw {
                Some(kind) => TokenSinkResult::RawData(kind),
                None => TokenSinkResult::Continue,
            }
        }
    }
    let tendril: ByteTendril = html.as_bytes().into();
    let queue = BufferQueue::default();
    match tendril.try_reinterpret() {
        Ok(t) => queue.push_back(t),
        Err(_) => return Vec::new(),
    }
    let tok = Tokenizer::new(Sink::default(), TokenizerOpts::default());
    let _ = tok.feed(&queue);
    tok.end();
    tok.sink.0.take()
}

type Mapped = (String, Vec<Option<usize>>);

/// `mdbook-html`'s `wrap_rust_main`: code without `fn main` gets a hidden wrapper.
fn wrap_rust_main(text: &str, map: &[Option<usize>]) -> Mapped {
    if text.contains("fn main") || text.contains("quick_main!") {
        return (text.to_string(), map.to_vec());
    }
    let split = rust_attrs_len(text);
    let (attrs, code) = text.split_at(split);
    let newline = if code.is_empty() || code.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    let mut out = String::new();
    let mut m = Vec::new();
    let synth = |s: &str, out: &mut String, m: &mut Vec<Option<usize>>| {
        out.push_str(s);
        m.extend(std::iter::repeat_n(None, s.len()));
    };
    synth("# #![allow(unused)]\n", &mut out, &mut m);
    out.push_str(attrs);
    m.extend_from_slice(&map[..split]);
    synth("# fn main() {\n", &mut out, &mut m);
    out.push_str(code);
    m.extend_from_slice(&map[split..]);
    synth(&format!("{newline}# }}"), &mut out, &mut m);
    (out, m)
}

/// Length of the leading inner attributes (`#![…]` lines and blank lines) of Rust code, as
/// `mdbook-html`'s `partition_rust_source` computes it.
fn rust_attrs_len(s: &str) -> usize {
    let mut pos = 0;
    let mut last_attr_end = 0;
    let mut saw_attr = false;
    while pos < s.len() {
        let line_end = s[pos..].find('\n').map(|i| pos + i + 1).unwrap_or(s.len());
        let line = s[pos..line_end].trim_end_matches(['\n', '\r']);
        let t = line.trim_start_matches([' ', '\t']);
        if t.starts_with("#![") {
            saw_attr = true;
            last_attr_end = line_end;
        } else if line.trim().is_empty() {
            last_attr_end = line_end;
        } else {
            break;
        }
        pos = line_end;
    }
    if saw_attr && !s[..last_attr_end].trim().is_empty() {
        last_attr_end
    } else {
        0
    }
}

/// Splits `text` into lines as `str::lines` does, with each line's byte range.
fn line_ranges(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < text.len() {
        let nl = text[pos..].find('\n').map(|i| pos + i);
        let (end, next) = match nl {
            Some(i) => (i, i + 1),
            None => (text.len(), text.len()),
        };
        let end = if end > pos && text.as_bytes()[end - 1] == b'\r' && nl.is_some() {
            end - 1
        } else {
            end
        };
        out.push(pos..end);
        pos = next;
    }
    out
}

/// `mdbook-html`'s `hide_lines_rust`, keeping the byte map.
fn hide_lines_rust(text: &str, map: &[Option<usize>]) -> Mapped {
    let lines = line_ranges(text);
    let mut out = String::new();
    let mut m = Vec::new();
    let n = lines.len();
    for (i, r) in lines.into_iter().enumerate() {
        let line = &text[r.clone()];
        let ws_len = line.len() - line.trim_start().len();
        let mut keep: Range<usize> = r.clone();
        let mut skip: Option<Range<usize>> = None;
        if line[ws_len..].starts_with('#') {
            let after = r.start + ws_len + 1;
            let next = text[after..r.end].chars().next();
            match next {
                Some('#') => skip = Some(after - 1..after),
                None => skip = Some(after - 1..after),
                Some(' ') => skip = Some(after - 1..after + 1),
                _ => {}
            }
        }
        if let Some(s) = skip {
            out.push_str(&text[keep.start..s.start]);
            m.extend_from_slice(&map[keep.start..s.start]);
            keep = s.end..keep.end;
        }
        out.push_str(&text[keep.clone()]);
        m.extend_from_slice(&map[keep]);
        if i + 1 < n {
            out.push('\n');
            m.push(map.get(r.end).copied().flatten());
        }
    }
    (out, m)
}

/// `mdbook-html`'s `hide_lines_with_prefix`, keeping the byte map.
fn hide_lines_prefix(text: &str, map: &[Option<usize>], prefix: &str) -> Mapped {
    let mut out = String::new();
    let mut m = Vec::new();
    for r in line_ranges(text) {
        let line = &text[r.clone()];
        if line.trim_start().starts_with(prefix)
            && let Some(pos) = line.find(prefix)
        {
            out.push_str(&line[..pos]);
            m.extend_from_slice(&map[r.start..r.start + pos]);
            let rest = r.start + pos + prefix.len();
            out.push_str(&text[rest..r.end]);
            m.extend_from_slice(&map[rest..r.end]);
        } else {
            out.push_str(line);
            m.extend_from_slice(&map[r.clone()]);
        }
        out.push('\n');
        m.push(map.get(r.end).copied().flatten());
    }
    (out, m)
}
