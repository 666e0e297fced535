//! The event walker of the text model: follows pulldown-cmark's events for a chapter as
//! `mdbook-html`'s tree builder does, emitting text segments mapped to Markdown bytes, block
//! separators, headings, inline elements and footnotes. Raw HTML and code blocks are handed to
//! `raw_html` and `code` (further `impl Builder` blocks).

use super::blocks::{self, BlockKind};
use super::{
    Block, CodeBlock, Heading, InlineElement, NO_INLINE, PageText, SegKind, Segment, TextOptions,
};
use pulldown_cmark::{BlockQuoteKind, CodeBlockKind, Event, Tag, TagEnd};
use std::collections::HashMap;
use std::ops::Range;

/// Text being built, with its segments (the main flow, or one footnote definition).
#[derive(Default)]
pub(super) struct Flow {
    pub(super) text: String,
    pub(super) segments: Vec<Segment>,
    pub(super) headings: Vec<Heading>,
}

pub(super) struct Builder<'a> {
    pub(super) src: &'a str,
    pub(super) options: &'a TextOptions,
    pub(super) main: Flow,
    /// Footnote definitions (name → flow), moved to the end.
    pub(super) defs: HashMap<String, Flow>,
    pub(super) def_order: Vec<String>,
    /// The footnote definition being written, if any.
    pub(super) in_def: Option<String>,
    /// Footnote name → (number, reference count).
    pub(super) footnotes: HashMap<String, (usize, usize)>,
    pub(super) blocks: Vec<Block>,
    pub(super) code_blocks: Vec<CodeBlock>,
    pub(super) inlines: Vec<InlineElement>,
    pub(super) inline_stack: Vec<u32>,
    pub(super) block_elements: Vec<Range<usize>>,
    pub(super) block_stack: Vec<u32>,
    /// Open heading: (level, text start in the current flow).
    pub(super) heading: Option<(u8, usize)>,
    /// Open code block: (info string, start of the block's source, pieces).
    pub(super) code: Option<CodeState>,
    /// Inside raw HTML `<script>`/`<style>` (their content is not text).
    pub(super) in_raw: bool,
    /// Inside a raw `<pre class="mermaid">`: its source, collected (a diagram has no text).
    pub(super) raw_mermaid: Option<String>,
}

pub(super) struct CodeState {
    pub(super) info: Option<String>,
    pub(super) src_start: usize,
    /// Code text with, per byte, the source offset it came from (`None`: not from source).
    pub(super) text: String,
    pub(super) map: Vec<Option<usize>>,
}

impl<'a> Builder<'a> {
    pub(super) fn new(src: &'a str, options: &'a TextOptions) -> Self {
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

    pub(super) fn flow(&mut self) -> &mut Flow {
        match &self.in_def {
            Some(name) => self.defs.get_mut(name).expect("definition flow exists"),
            None => &mut self.main,
        }
    }

    pub(super) fn emit(&mut self, text: &str, src: Range<usize>, kind: SegKind) {
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
    pub(super) fn emit_source_text(&mut self, text: &str, range: Range<usize>) {
        let kind = if self.src.get(range.clone()) == Some(text) {
            SegKind::Plain
        } else {
            SegKind::Atomic
        };
        self.emit(text, range, kind);
    }

    /// The newline mdBook's serializer puts around block elements.
    pub(super) fn separator(&mut self, at: usize) {
        let flow = self.flow();
        if !flow.text.is_empty() && !flow.text.ends_with('\n') {
            self.emit("\n", at..at, SegKind::Raw);
        }
    }

    pub(super) fn open_block(&mut self, range: &Range<usize>) {
        self.separator(range.start);
        self.block_elements.push(range.clone());
        self.block_stack
            .push((self.block_elements.len() - 1) as u32);
    }

    pub(super) fn close_block(&mut self, range: &Range<usize>) {
        self.block_stack.pop();
        self.emit("\n", range.end..range.end, SegKind::Raw);
    }

    pub(super) fn current_section(&self) -> Option<String> {
        self.main
            .headings
            .iter()
            .rev()
            .find(|h| h.level <= 4)
            .map(|h| h.text.clone())
    }

    pub(super) fn event<'e>(
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
            Event::InlineHtml(h) if super::raw_html::is_mark_tag(&h) => self.in_raw = false,
            Event::Html(h) | Event::InlineHtml(h) => self.html(&h, range),
            Event::FootnoteReference(name) => self.footnote_reference(&name, range),
            Event::SoftBreak => self.emit("\n", range, SegKind::Atomic),
            Event::HardBreak => {}
            Event::Rule => self.separator(range.start),
            Event::TaskListMarker(_) => self.emit(" ", range, SegKind::Raw),
        }
    }

    pub(super) fn start<'e>(
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
                self.push_image(&dest_url, &alt, range, false);
            }
            Tag::MetadataBlock(_) => skip_to_end(rest, |_| {}),
        }
    }

    pub(super) fn end(&mut self, tag: TagEnd, range: Range<usize>) {
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

    /// Records an image at Markdown bytes `range`: `![alt](src)`, or `<img>` when `raw_html`.
    pub(super) fn push_image(&mut self, src: &str, alt: &str, range: Range<usize>, raw_html: bool) {
        let block = Block {
            kind: BlockKind::Image,
            key: blocks::image_key(src),
            label: blocks::image_label(alt, src),
            section: self.current_section(),
            index: self.blocks.len(),
            src: range,
            raw_html,
            source: None,
        };
        self.blocks.push(block);
    }

    /// Records a mermaid diagram of `source` at Markdown bytes `range`: a fence, or a
    /// `<pre class="mermaid">` when `raw_html`.
    pub(super) fn push_mermaid(&mut self, source: String, range: Range<usize>, raw_html: bool) {
        let block = Block {
            kind: BlockKind::Mermaid,
            key: blocks::mermaid_key(&source),
            label: blocks::mermaid_label(&source),
            section: self.current_section(),
            index: self.blocks.len(),
            src: range,
            raw_html,
            source: Some(source),
        };
        self.blocks.push(block);
    }

    pub(super) fn footnote_reference(&mut self, name: &str, range: Range<usize>) {
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

    pub(super) fn finish(mut self) -> PageText {
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
            light: false,
        }
    }
}

/// Consumes events up to the `End` matching an already consumed `Start`, showing each
/// inner event to `on`.
pub(super) fn skip_to_end<'e>(
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

pub(super) fn push_raw(flow: &mut Flow, text: &str, at: usize) {
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
