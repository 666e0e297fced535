//! A chapter's *light* text model, in bytes, for the build's memo: the text, headings,
//! commentable blocks and code blocks of a [`PageText`] — what reading a chapter's anchoring
//! needs — without the map from text to Markdown (segments, inline and block elements), which
//! only finding an anchor and injecting markers need ([`PageText::light`] says which a model
//! is; [`super::page_text`] derives the whole one again).
//!
//! Owns: the byte form of a light model. Calls: nothing but this module's parent's types.

use super::blocks::BlockKind;
use super::{Block, CodeBlock, Heading, PageText};
use std::ops::Range;

/// `page` without its map to Markdown, in bytes ([`decode`] reads them back as a light model).
pub fn encode(page: &PageText) -> Vec<u8> {
    let mut w = Writer(Vec::with_capacity(
        page.text.len() + 64 * page.blocks.len() + 64,
    ));
    w.str(&page.text);
    w.size(page.headings.len());
    for h in &page.headings {
        w.0.push(h.level);
        w.str(&h.text);
        w.size(h.offset);
    }
    w.size(page.blocks.len());
    for b in &page.blocks {
        w.0.push(match b.kind {
            BlockKind::Image => 0,
            BlockKind::Mermaid => 1,
        });
        w.str(&b.key);
        w.str(&b.label);
        w.opt(b.section.as_deref());
        w.size(b.index);
        w.range(&b.src);
        w.0.push(u8::from(b.raw_html));
        w.opt(b.source.as_deref());
    }
    w.size(page.code_blocks.len());
    for c in &page.code_blocks {
        w.range(&c.src);
        w.range(&c.text);
    }
    w.0
}

/// The light model [`encode`] wrote into `bytes`; `None` when they are not that, whole.
pub fn decode(bytes: &[u8]) -> Option<PageText> {
    let mut r = Reader(bytes);
    let text = r.string()?;
    let mut headings = Vec::new();
    for _ in 0..r.count()? {
        let level = r.byte()?;
        let htext = r.string()?;
        let offset = r.size()?;
        headings.push(Heading {
            level,
            text: htext,
            offset,
        });
    }
    let mut blocks = Vec::new();
    for _ in 0..r.count()? {
        let kind = match r.byte()? {
            0 => BlockKind::Image,
            1 => BlockKind::Mermaid,
            _ => return None,
        };
        let key = r.string()?;
        let label = r.string()?;
        let section = r.opt()?;
        let index = r.size()?;
        let src = r.range()?;
        let raw_html = match r.byte()? {
            0 => false,
            1 => true,
            _ => return None,
        };
        let source = r.opt()?;
        blocks.push(Block {
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
    let mut code_blocks = Vec::new();
    for _ in 0..r.count()? {
        let src = r.range()?;
        let text = r.range()?;
        code_blocks.push(CodeBlock { src, text });
    }
    r.0.is_empty().then_some(PageText {
        text,
        headings,
        blocks,
        code_blocks,
        light: true,
        ..PageText::default()
    })
}

struct Writer(Vec<u8>);

impl Writer {
    fn size(&mut self, n: usize) {
        self.0.extend_from_slice(&(n as u64).to_le_bytes());
    }
    fn str(&mut self, s: &str) {
        self.size(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }
    fn opt(&mut self, s: Option<&str>) {
        match s {
            None => self.0.push(0),
            Some(s) => {
                self.0.push(1);
                self.str(s);
            }
        }
    }
    fn range(&mut self, r: &Range<usize>) {
        self.size(r.start);
        self.size(r.end);
    }
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }
    fn size(&mut self) -> Option<usize> {
        let (w, rest) = self.0.split_first_chunk::<8>()?;
        self.0 = rest;
        usize::try_from(u64::from_le_bytes(*w)).ok()
    }
    /// A count of items, each at least one byte long: never more than the bytes left.
    fn count(&mut self) -> Option<usize> {
        self.size().filter(|&n| n <= self.0.len())
    }
    fn string(&mut self) -> Option<String> {
        let n = self.size()?;
        if n > self.0.len() {
            return None;
        }
        let (s, rest) = self.0.split_at(n);
        self.0 = rest;
        String::from_utf8(s.to_vec()).ok()
    }
    fn opt(&mut self) -> Option<Option<String>> {
        match self.byte()? {
            0 => Some(None),
            1 => Some(Some(self.string()?)),
            _ => None,
        }
    }
    fn range(&mut self) -> Option<Range<usize>> {
        Some(self.size()?..self.size()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::text::{TextOptions, page_text};

    #[test]
    fn a_light_model_keeps_all_but_the_map_to_markdown() {
        let md = "# Title ✓\n\nSome *text* here.\n\n![An image](a.png)\n\n## Code\n\n```rust\nfn x() {}\n```\n\n```mermaid\ngraph TD; A-->B\n```\n";
        let full = page_text(md, &TextOptions::default());
        assert!(!full.segments.is_empty() && !full.light);
        assert_eq!(full.blocks.len(), 2);
        assert_eq!(full.code_blocks.len(), 1);
        let light = decode(&encode(&full)).unwrap();
        assert!(light.light);
        assert!(light.segments.is_empty() && light.inlines.is_empty());
        assert!(light.block_elements.is_empty());
        assert_eq!(light.text, full.text);
        assert_eq!(light.headings, full.headings);
        assert_eq!(light.blocks, full.blocks);
        assert_eq!(light.code_blocks, full.code_blocks);
        let bytes = encode(&full);
        assert!(decode(&bytes[..bytes.len() - 1]).is_none());
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode(&longer).is_none());
        assert!(decode(&[0xff; 8]).is_none());
    }
}
