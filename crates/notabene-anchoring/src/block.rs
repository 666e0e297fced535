//! Block anchors (images and diagrams): re-matching `{kind, key, section, index}` against the
//! page's blocks. Content wins over position; position alone is trusted only when the section is
//! unchanged.
//!
//! Owns [`BlockAnchor`] and its [`resolve`]; calls the text model's blocks and the normaliser.

use super::{AnchorStatus, Flags, Place, Resolution};
use crate::text::PageText;
use crate::text::normalize::normalize;

/// A stored block anchor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockAnchor<'a> {
    /// `image` or `mermaid`.
    pub kind: &'a str,
    /// `image:<src>` or `mermaid:<hash>`.
    pub key: &'a str,
    /// Stored section (nearest preceding heading text), if any.
    pub section: Option<&'a str>,
    /// Stored 0-based index among the page's blocks.
    pub index: usize,
}

/// The confidence of a block found by its key (its content): certain.
const FOUND_BY_KEY_CONFIDENCE: f64 = 1.0;
/// The confidence of a block found by its position only (same kind, same index, same section;
/// its content changed in place): lower than a match by content, since only the position and
/// the section vouch for it, and fixed, since there is no text to compare.
const FOUND_IN_PLACE_CONFIDENCE: f64 = 0.8;

/// Whether two stored sections are the same heading, normalised.
fn same_section(a: Option<&str>, b: Option<&str>) -> bool {
    let n = |s: Option<&str>| s.map(|s| normalize(s).as_string()).unwrap_or_default();
    n(a) == n(b)
}

/// Re-matches a block anchor: the same index with the same key (exact); else the first block
/// with the key (exact, moved); else a same-kind block at the same index whose section is
/// unchanged (fuzzy: the content changed in place); else orphan.
pub fn resolve(page: &PageText, anchor: &BlockAnchor) -> Resolution {
    let found = |i: usize, status: AnchorStatus, confidence: f64| {
        let b = &page.blocks[i];
        Resolution {
            status,
            confidence,
            place: Some(Place {
                text: 0..0,
                source: b.src.clone(),
            }),
            flags: Flags {
                quote_changed: status == AnchorStatus::Fuzzy,
                context_changed: i != anchor.index,
                section_changed: !same_section(b.section.as_deref(), anchor.section),
                ambiguous: false,
            },
            suggestion: None,
            block: Some(i),
        }
    };
    if let Some(b) = page.blocks.get(anchor.index)
        && b.key == anchor.key
    {
        return found(anchor.index, AnchorStatus::Exact, FOUND_BY_KEY_CONFIDENCE);
    }
    if let Some(i) = page.blocks.iter().position(|b| b.key == anchor.key) {
        return found(i, AnchorStatus::Exact, FOUND_BY_KEY_CONFIDENCE);
    }
    if let Some(b) = page.blocks.get(anchor.index)
        && b.kind.as_str() == anchor.kind
        && same_section(b.section.as_deref(), anchor.section)
    {
        return found(anchor.index, AnchorStatus::Fuzzy, FOUND_IN_PLACE_CONFIDENCE);
    }
    Resolution::orphan()
}
