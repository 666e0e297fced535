//! Anchoring: re-finds every stored anchor of a page in the page's current text model.
//!
//! * [`text`] — the text model: a chapter's Markdown as the text a reader's browser has, with a
//!   map back to the Markdown bytes.
//! * [`quote`] — text-quote anchors `{quote, prefix, suffix, section}`: exact occurrences scored
//!   by their context, then a fuzzy search of the context window and of the quote alone, one
//!   score formula, one threshold, deterministic tie-breaks.
//! * [`block`] — image and diagram anchors `{kind, key, label, section, index}`.
//! * [`myers`] — the bit-parallel approximate matcher both rely on.
//!
//! A page is prepared once ([`PageIndex`]) and shared by all of its anchors. This crate knows
//! nothing of the store or of mdBook: it parses Markdown with the parser and options mdBook 0.5's
//! HTML renderer uses ([`text::parser`]).
//!
//! This root owns what the kinds of anchor share — the outcome of a resolution ([`Resolution`],
//! [`AnchorStatus`], [`Flags`], [`Place`]) and its bytes for the build's memo, the prepared page
//! ([`PageIndex`]), the stored anchor read from a comment ([`StoredAnchor`]) — and
//! [`resolve_page`], which hands each anchor of a page to [`quote`] or [`block`]. It calls the
//! text model, the normaliser and `notabene-core`'s byte codec.

pub mod block;
pub mod myers;
pub mod quote;
pub mod text;

// The README's usage example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

use crate::text::PageText;
use crate::text::normalize::{Normalized, normalize};
use notabene_core::codec::{Reader, Writer};
use serde::Serialize;
use std::ops::Range;

/// Default acceptance threshold `τ` for the score `S`, chosen from the sweep
/// `cargo bench --bench anchoring_quality` prints: a higher threshold misplaces fewer anchors
/// but orphans more of those whose neighbouring text was edited
/// (`docs/src/design/anchoring.md`, "Choosing τ").
pub const DEFAULT_THRESHOLD: f64 = 0.85;

/// Sections are the headings h1–h4: the nearest one before an anchor is its stored section.
const SECTION_MAX_LEVEL: u8 = 4;
/// Bytes of [`encode_resolutions`]'s count, and of a typical resolution: the capacity it
/// reserves, so that a page's resolutions are written without reallocating.
const ENCODED_COUNT_BYTES: usize = 8;
/// See [`ENCODED_COUNT_BYTES`].
const ENCODED_RESOLUTION_BYTES: usize = 48;

/// How an anchor was re-found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum AnchorStatus {
    /// Found unchanged, with its context.
    Exact = 0,
    /// Found with changes (quote or context edited, block moved or changed).
    Fuzzy = 1,
    /// Not found: no candidate reached the threshold.
    Orphan = 2,
}

impl AnchorStatus {
    /// `exact`, `fuzzy` or `orphan`.
    pub fn as_str(self) -> &'static str {
        match self {
            AnchorStatus::Exact => "exact",
            AnchorStatus::Fuzzy => "fuzzy",
            AnchorStatus::Orphan => "orphan",
        }
    }
}

/// What changed around a placed anchor.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Flags {
    /// The text found differs from the stored quote (after normalisation); for a block,
    /// the block's content changed.
    pub quote_changed: bool,
    /// The stored prefix or the stored suffix is not the text next to the place found
    /// (after normalisation).
    pub context_changed: bool,
    /// The nearest h1–h4 before the place found is not the stored section.
    pub section_changed: bool,
    /// Another, non-overlapping place scored within 0.02.
    pub ambiguous: bool,
}

/// A place in the page: a raw-text byte range and the Markdown bytes it maps to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// Byte range in [`PageText::text`].
    pub text: Range<usize>,
    /// Byte range in the chapter's Markdown.
    pub source: Range<usize>,
}

/// The outcome of resolving one anchor.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolution {
    /// exact, fuzzy or orphan.
    pub status: AnchorStatus,
    /// The score `S` of the chosen (or, for an orphan, best rejected) candidate, in [0, 1].
    pub confidence: f64,
    /// Where it is (None for an orphan).
    pub place: Option<Place>,
    /// Flags (all false for an orphan).
    pub flags: Flags,
    /// For an orphan: the best rejected candidate.
    pub suggestion: Option<Place>,
    /// For a block anchor: the index of the matched block in [`PageText::blocks`].
    pub block: Option<usize>,
}

impl Resolution {
    /// An orphan with no suggestion.
    pub fn orphan() -> Resolution {
        Resolution {
            status: AnchorStatus::Orphan,
            confidence: 0.0,
            place: None,
            flags: Flags::default(),
            suggestion: None,
            block: None,
        }
    }
}

/// A page's resolutions in bytes, for the build's memo: exactly what [`decode_resolutions`]
/// reads back (the confidence bit for bit).
pub fn encode_resolutions(all: &[Option<Resolution>]) -> Vec<u8> {
    fn place(w: &mut Writer, p: &Option<Place>) {
        match p {
            None => {
                w.byte(0);
            }
            Some(p) => {
                w.byte(1).range(&p.text).range(&p.source);
            }
        }
    }
    let mut w = Writer(Vec::with_capacity(
        ENCODED_COUNT_BYTES + all.len() * ENCODED_RESOLUTION_BYTES,
    ));
    w.size(all.len());
    for r in all {
        let Some(r) = r else {
            w.byte(0);
            continue;
        };
        w.byte(1).byte(r.status as u8).word(r.confidence.to_bits());
        place(&mut w, &r.place);
        let f = r.flags;
        w.byte(
            u8::from(f.quote_changed)
                | u8::from(f.context_changed) << 1
                | u8::from(f.section_changed) << 2
                | u8::from(f.ambiguous) << 3,
        );
        place(&mut w, &r.suggestion);
        match r.block {
            None => w.byte(0),
            Some(b) => w.byte(1).size(b),
        };
    }
    w.0
}

/// The resolutions [`encode_resolutions`] wrote into `bytes`; `None` when they are not such
/// bytes, whole.
pub fn decode_resolutions(bytes: &[u8]) -> Option<Vec<Option<Resolution>>> {
    fn place(r: &mut Reader) -> Option<Option<Place>> {
        Some(match r.tag(2)? {
            0 => None,
            _ => Some(Place {
                text: r.range()?,
                source: r.range()?,
            }),
        })
    }
    let mut r = Reader(bytes);
    let n = r.count()?;
    let mut all = Vec::with_capacity(n);
    for _ in 0..n {
        if !r.flag()? {
            all.push(None);
            continue;
        }
        let status = match r.tag(3)? {
            0 => AnchorStatus::Exact,
            1 => AnchorStatus::Fuzzy,
            _ => AnchorStatus::Orphan,
        };
        let confidence = f64::from_bits(r.word()?);
        let place_found = place(&mut r)?;
        let f = r.byte()?;
        let flags = Flags {
            quote_changed: f & 1 != 0,
            context_changed: f & 2 != 0,
            section_changed: f & 4 != 0,
            ambiguous: f & 8 != 0,
        };
        let suggestion = place(&mut r)?;
        let block = match r.flag()? {
            false => None,
            true => Some(r.size()?),
        };
        all.push(Some(Resolution {
            status,
            confidence,
            place: place_found,
            flags,
            suggestion,
            block,
        }));
    }
    r.done().then_some(all)
}

/// A page prepared for anchoring: its text model and the normalised text with its map.
pub struct PageIndex<'a> {
    /// The text model (a whole one: anchors found are mapped to Markdown through it).
    pub page: std::borrow::Cow<'a, PageText>,
    /// Normalised text and its map to raw text bytes.
    pub(crate) norm: Normalized,
    /// The normalised text as a string (for substring search).
    pub string: String,
    /// Byte offset in `string` of each normalised char (plus the end).
    pub(crate) char_starts: Vec<usize>,
    /// Normalised chars as symbols for the matcher.
    pub symbols: Vec<u32>,
    /// The page's headings, normalised.
    pub(crate) headings: Vec<NormalizedHeading>,
}

/// A [`PageIndex`] without its page ([`PageIndex::into_parts`]): to be put back with the page
/// it was made of only.
pub struct IndexParts {
    /// The length of the page's text, checked when the parts are put back.
    text_len: usize,
    norm: Normalized,
    string: String,
    char_starts: Vec<usize>,
    symbols: Vec<u32>,
    headings: Vec<NormalizedHeading>,
}

/// A heading of a [`PageIndex`], normalised.
pub(crate) struct NormalizedHeading {
    /// Normalised char offset where the heading starts.
    pub(crate) at: usize,
    /// Its level (1 for h1).
    pub(crate) level: u8,
    /// Its normalised text.
    pub(crate) text: String,
}

impl<'a> PageIndex<'a> {
    /// Normalises `page` once for all of its anchors.
    pub fn new(page: &'a PageText) -> PageIndex<'a> {
        PageIndex::of(std::borrow::Cow::Borrowed(page))
    }

    /// [`PageIndex::new`] of a text model it owns.
    pub fn owned(page: PageText) -> PageIndex<'static> {
        PageIndex::of(std::borrow::Cow::Owned(page))
    }

    fn of(page: std::borrow::Cow<'a, PageText>) -> PageIndex<'a> {
        debug_assert!(!page.light, "anchors are found in whole text models");
        let norm = normalize(&page.text);
        let mut string = String::with_capacity(norm.chars.len());
        let mut char_starts = Vec::with_capacity(norm.chars.len() + 1);
        for &c in &norm.chars {
            char_starts.push(string.len());
            string.push(c);
        }
        char_starts.push(string.len());
        let symbols = norm.chars.iter().map(|&c| c as u32).collect();
        let headings = page
            .headings
            .iter()
            .map(|h| NormalizedHeading {
                at: norm.start.partition_point(|&s| s < h.offset),
                level: h.level,
                text: normalize(&h.text).as_string(),
            })
            .collect();
        PageIndex {
            page,
            norm,
            string,
            char_starts,
            symbols,
            headings,
        }
    }

    /// What the index holds besides its page, apart from it: kept where the page is kept, and
    /// put back with it ([`PageIndex::with_parts`]) without normalising the page again.
    pub fn into_parts(self) -> IndexParts {
        IndexParts {
            text_len: self.page.text.len(),
            norm: self.norm,
            string: self.string,
            char_starts: self.char_starts,
            symbols: self.symbols,
            headings: self.headings,
        }
    }

    /// The index of `page` from the parts [`PageIndex::into_parts`] took of its index: `None`
    /// when they were not taken of a page of its length (another page's parts).
    pub fn with_parts(page: &'a PageText, parts: IndexParts) -> Option<PageIndex<'a>> {
        if parts.text_len != page.text.len() || page.light {
            return None;
        }
        Some(PageIndex {
            page: std::borrow::Cow::Borrowed(page),
            norm: parts.norm,
            string: parts.string,
            char_starts: parts.char_starts,
            symbols: parts.symbols,
            headings: parts.headings,
        })
    }

    /// Number of normalised chars.
    pub fn len(&self) -> usize {
        self.norm.chars.len()
    }

    /// Whether the page has no text.
    pub fn is_empty(&self) -> bool {
        self.norm.chars.is_empty()
    }

    /// The normalised char index of byte `b` of `string`.
    pub fn char_index(&self, b: usize) -> usize {
        self.char_starts.partition_point(|&s| s < b)
    }

    /// The place of normalised chars `[a, b)`.
    pub fn place(&self, a: usize, b: usize) -> Place {
        let text = self.norm.source_range(a, b, self.page.text.len());
        let source = self.page.source_range(text.start, text.end);
        Place { text, source }
    }

    /// The normalised text of the nearest h1–h4 at or before normalised char `pos`.
    pub fn section_at(&self, pos: usize) -> Option<&str> {
        self.headings
            .iter()
            .take_while(|h| h.at <= pos)
            .filter(|h| h.level <= SECTION_MAX_LEVEL)
            .last()
            .map(|h| h.text.as_str())
    }

    /// Whether any heading exists (for the section term).
    pub fn has_headings(&self) -> bool {
        self.headings.iter().any(|h| h.level <= SECTION_MAX_LEVEL)
    }
}

/// A stored anchor, borrowed from a comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoredAnchor<'a> {
    /// `scope: "selection"`.
    Text(quote::TextAnchor<'a>),
    /// `scope: "block"`.
    Block(block::BlockAnchor<'a>),
    /// `scope: "page"` (or a selection without a usable anchor, which resolves as orphan).
    Page,
}

impl<'a> StoredAnchor<'a> {
    /// Reads the anchor of a stored comment object (`scope` + `anchor`). Returns `None` when
    /// the shape is unusable (reported as an orphan by callers).
    pub fn from_comment(
        comment: &'a serde_json::Map<String, serde_json::Value>,
    ) -> Option<StoredAnchor<'a>> {
        let scope = comment.get("scope").and_then(|v| v.as_str())?;
        let anchor = comment.get("anchor").and_then(|v| v.as_object());
        let s = |key: &str| anchor.and_then(|a| a.get(key)).and_then(|v| v.as_str());
        match scope {
            "page" => Some(StoredAnchor::Page),
            "selection" => Some(StoredAnchor::Text(quote::TextAnchor {
                quote: s("quote")?,
                prefix: s("prefix").unwrap_or(""),
                suffix: s("suffix").unwrap_or(""),
                section: s("section"),
            })),
            "block" => Some(StoredAnchor::Block(block::BlockAnchor {
                kind: s("kind")?,
                key: s("key")?,
                section: s("section"),
                index: anchor
                    .and_then(|a| a.get("index"))
                    .and_then(|v| v.as_u64())
                    .unwrap_or(0) as usize,
            })),
            _ => None,
        }
    }
}

/// Resolves every anchor of one page in one pass over its text (`None` for page-scope
/// comments, which have nothing to find).
pub fn resolve_page(
    page: &PageText,
    anchors: &[Option<StoredAnchor>],
    threshold: f64,
) -> Vec<Option<Resolution>> {
    resolve_page_indexed(page, anchors, threshold).0
}

/// [`resolve_page`], with the page's index when one was made (a text anchor needed it), for
/// a caller that looks for more on the page afterwards.
pub fn resolve_page_indexed<'a>(
    page: &'a PageText,
    anchors: &[Option<StoredAnchor>],
    threshold: f64,
) -> (Vec<Option<Resolution>>, Option<PageIndex<'a>>) {
    let needs_text = anchors
        .iter()
        .any(|a| matches!(a, Some(StoredAnchor::Text(_))));
    let idx = needs_text.then(|| PageIndex::new(page));
    // The text anchors together (their exact quotes are found in one pass over the page).
    let texts: Vec<&quote::TextAnchor> = anchors
        .iter()
        .filter_map(|a| match a {
            Some(StoredAnchor::Text(t)) => Some(t),
            _ => None,
        })
        .collect();
    let mut resolved = match &idx {
        Some(idx) => quote::resolve_all(idx, &texts, threshold),
        None => Vec::new(),
    }
    .into_iter();
    let resolutions = anchors
        .iter()
        .map(|a| match a {
            Some(StoredAnchor::Page) => None,
            Some(StoredAnchor::Text(_)) => resolved.next(),
            Some(StoredAnchor::Block(b)) => Some(block::resolve(page, b)),
            None => Some(Resolution::orphan()),
        })
        .collect();
    (resolutions, idx)
}

#[cfg(test)]
mod tests {
    use crate::*;

    #[test]
    fn resolutions_round_trip_through_their_bytes() {
        let place = |a: usize, b: usize| Place {
            text: a..b,
            source: a + 100..b + 103,
        };
        let all = vec![
            None,
            Some(Resolution::orphan()),
            Some(Resolution {
                status: AnchorStatus::Fuzzy,
                confidence: 0.912_345_678_901_234_5,
                place: Some(place(3, 9)),
                flags: Flags {
                    quote_changed: true,
                    context_changed: false,
                    section_changed: true,
                    ambiguous: true,
                },
                suggestion: None,
                block: None,
            }),
            Some(Resolution {
                status: AnchorStatus::Orphan,
                confidence: 0.5,
                place: None,
                flags: Flags::default(),
                suggestion: Some(place(usize::MAX - 500, usize::MAX - 200)),
                block: Some(7),
            }),
            Some(Resolution {
                status: AnchorStatus::Exact,
                confidence: 1.0,
                place: Some(place(0, 0)),
                flags: Flags::default(),
                suggestion: None,
                block: Some(0),
            }),
        ];
        let bytes = encode_resolutions(&all);
        assert_eq!(decode_resolutions(&bytes), Some(all.clone()));
        assert_eq!(decode_resolutions(&encode_resolutions(&[])), Some(vec![]));
        // Cut, lengthened or garbled bytes are not resolutions.
        assert_eq!(decode_resolutions(&bytes[..bytes.len() - 1]), None);
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(decode_resolutions(&longer), None);
        let mut bad = bytes.clone();
        bad[9] = 7;
        assert_eq!(decode_resolutions(&bad), None);
    }
}
