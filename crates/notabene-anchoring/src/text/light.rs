//! A chapter's *light* text model, in bytes, for the build's memo: the text, headings,
//! commentable blocks and code blocks of a [`PageText`] — what reading a chapter's anchoring
//! needs — without the map from text to Markdown (segments, inline and block elements), which
//! only finding an anchor and injecting markers need ([`PageText::light`] says which a model
//! is; [`super::page_text`] derives the whole one again).
//!
//! Owns: the byte form of a light model. Calls: `notabene_core::codec` for the bytes.

use super::blocks::BlockKind;
use super::{Block, CodeBlock, Heading, PageText};
use notabene_core::codec::{Reader, Writer};

/// `page` without its map to Markdown, in bytes ([`decode`] reads them back as a light model).
pub fn encode(page: &PageText) -> Vec<u8> {
    let mut w = Writer(Vec::with_capacity(
        page.text.len() + 64 * page.blocks.len() + 64,
    ));
    w.str(&page.text);
    w.size(page.headings.len());
    for h in &page.headings {
        w.byte(h.level).str(&h.text).size(h.offset);
    }
    w.size(page.blocks.len());
    for b in &page.blocks {
        w.byte(match b.kind {
            BlockKind::Image => 0,
            BlockKind::Mermaid => 1,
        })
        .str(&b.key)
        .str(&b.label)
        .opt_str(b.section.as_deref())
        .size(b.index)
        .range(&b.src)
        .byte(u8::from(b.raw_html))
        .opt_str(b.source.as_deref());
    }
    w.size(page.code_blocks.len());
    for c in &page.code_blocks {
        w.range(&c.src).range(&c.text);
    }
    w.0
}

/// The light model [`encode`] wrote into `bytes`; `None` when they are not that, whole.
pub fn decode(bytes: &[u8]) -> Option<PageText> {
    let mut r = Reader(bytes);
    let text = r.string()?;
    let mut headings = Vec::new();
    for _ in 0..r.count()? {
        headings.push(Heading {
            level: r.byte()?,
            text: r.string()?,
            offset: r.size()?,
        });
    }
    let mut blocks = Vec::new();
    for _ in 0..r.count()? {
        blocks.push(Block {
            kind: match r.tag(2)? {
                0 => BlockKind::Image,
                _ => BlockKind::Mermaid,
            },
            key: r.string()?,
            label: r.string()?,
            section: r.opt_string()?,
            index: r.size()?,
            src: r.range()?,
            raw_html: r.flag()?,
            source: r.opt_string()?,
        });
    }
    let mut code_blocks = Vec::new();
    for _ in 0..r.count()? {
        code_blocks.push(CodeBlock {
            src: r.range()?,
            text: r.range()?,
        });
    }
    r.done().then_some(PageText {
        text,
        headings,
        blocks,
        code_blocks,
        light: true,
        ..PageText::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{TextOptions, page_text};

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
