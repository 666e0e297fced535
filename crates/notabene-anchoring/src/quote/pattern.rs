//! Stage 0 of the pipeline: the stored anchor normalised as the page is ([`Pattern`]).
//!
//! Owns what is known of an anchor before the page is looked at: its quote, prefix and suffix
//! as matcher symbols, the word edges of the quote, the normalised section, and whether the
//! quote is specific enough to be placed by itself. Calls only the normaliser
//! ([`crate::text::normalize`]); every later stage reads a [`Pattern`], none changes it.

use super::TextAnchor;
use crate::text::normalize::{normalize, normalize_fragment};

/// Context kept on each side (characters) for scoring: more than the 40 characters the
/// client captures, so a captured side is always kept whole, and a bound on what an anchor
/// written by hand makes the matcher align.
const CONTEXT_CAP: usize = 64;
/// Context on each side of the quote in the fuzzy search window of stage 2: with a quote of up
/// to 64 characters the window stays within two 64-bit blocks, the matcher's fast loop
/// ([`crate::myers`]). Its effect on placement shows in `cargo bench --bench anchoring_quality`.
pub(super) const WINDOW_CONTEXT: usize = 32;
/// A quote of at least this many words found once on the page is placed even when both
/// sides of its context changed: one or two words (a name, a keyword) recur too often to be
/// placed without their context (`cargo bench --bench anchoring_quality`).
const SPECIFIC_WORDS: usize = 3;
/// The same, in characters, for scripts written without spaces between words, where words
/// cannot be counted: twelve characters stand for about three words.
const SPECIFIC_CHARS: usize = 12;

/// The stored anchor, normalised as the page is.
pub(super) struct Pattern {
    /// The stored prefix (at most [`CONTEXT_CAP`] symbols, its outer whitespace dropped), with
    /// the whitespace the quote started with.
    pub(super) prefix: Vec<u32>,
    /// The normalised quote.
    pub(super) quote: Vec<u32>,
    /// The stored suffix (at most [`CONTEXT_CAP`] symbols, its outer whitespace dropped),
    /// after the whitespace the quote ended with.
    pub(super) suffix: Vec<u32>,
    /// The quote starts a word: a word char after a non-word char or the page start.
    pub(super) word_start: bool,
    /// The quote ends a word: a word char before a non-word char or the page end.
    pub(super) word_end: bool,
    /// The normalised quote as a string (for substring search).
    pub(super) quote_text: String,
    /// The normalised stored section, if any and not empty.
    pub(super) section: Option<String>,
    /// The stored prefix was only whitespace: no evidence, and not the page's edge.
    pub(super) prefix_blank: bool,
    /// The stored suffix was only whitespace: no evidence, and not the page's edge.
    pub(super) suffix_blank: bool,
    /// The quote is specific enough to be placed by itself when found once: at least
    /// [`SPECIFIC_WORDS`] words, or [`SPECIFIC_CHARS`] characters of a script written
    /// without spaces.
    pub(super) specific: bool,
}

impl Pattern {
    /// Normalises a stored anchor.
    pub(super) fn new(anchor: &TextAnchor) -> Pattern {
        // Whitespace at the quote's edges belongs to the context: the page text is trimmed at
        // word edges by normalisation, and so is the quote.
        let lead = &anchor.quote[..anchor.quote.len() - anchor.quote.trim_start().len()];
        let trail = &anchor.quote[anchor.quote.trim_end().len()..];
        let quote = normalize(anchor.quote).chars;
        let mut prefix = normalize_fragment(&format!("{}{lead}", anchor.prefix));
        let mut suffix = normalize_fragment(&format!("{trail}{}", anchor.suffix));
        if quote.is_empty() {
            prefix.clear();
            suffix.clear();
        }
        // The outer ends of the context carry no information (and the page text is trimmed).
        while prefix.first() == Some(&' ') {
            prefix.remove(0);
        }
        while suffix.last() == Some(&' ') {
            suffix.pop();
        }
        // A side that was only whitespace says nothing about where the quote is (but it was not
        // the page's edge either).
        let prefix_blank = prefix.is_empty() && !anchor.prefix.is_empty();
        let suffix_blank = suffix.is_empty() && !anchor.suffix.is_empty();
        if prefix.len() > CONTEXT_CAP {
            prefix.drain(..prefix.len() - CONTEXT_CAP);
        }
        suffix.truncate(CONTEXT_CAP);
        let section = anchor
            .section
            .map(|s| normalize(s).as_string())
            .filter(|s| !s.is_empty());
        let word_start = quote.first().is_some_and(|&c| c.is_alphanumeric())
            && prefix.last().is_none_or(|&c| !c.is_alphanumeric());
        let word_end = quote.last().is_some_and(|&c| c.is_alphanumeric())
            && suffix.first().is_none_or(|&c| !c.is_alphanumeric());
        Pattern {
            prefix_blank,
            suffix_blank,
            specific: specific(&quote),
            word_start,
            word_end,
            quote_text: quote.iter().collect(),
            prefix: symbols(&prefix),
            quote: symbols(&quote),
            suffix: symbols(&suffix),
            section,
        }
    }

    /// The context searched for around the quote in stage 2: the end of the prefix and the
    /// start of the suffix, [`WINDOW_CONTEXT`] symbols at most each.
    pub(super) fn window_context(&self) -> (&[u32], &[u32]) {
        let prefix_end = &self.prefix[self.prefix.len().saturating_sub(WINDOW_CONTEXT)..];
        let suffix_start = &self.suffix[..self.suffix.len().min(WINDOW_CONTEXT)];
        (prefix_end, suffix_start)
    }

    /// The anchor has no context at all (written from the command line): there is none to
    /// contradict a place.
    pub(super) fn has_no_context(&self) -> bool {
        self.prefix.is_empty() && self.suffix.is_empty()
    }
}

/// Whether `c` belongs to a script written without spaces between words (Han, kana,
/// Thai, Lao, Khmer, Myanmar, Tibetan).
fn spaceless(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF // Thai, Lao
        | 0x0F00..=0x0FFF // Tibetan
        | 0x1000..=0x109F // Myanmar
        | 0x1780..=0x17FF // Khmer
        | 0x3040..=0x30FF // Hiragana, Katakana
        | 0x3400..=0x4DBF // CJK extension A
        | 0x4E00..=0x9FFF // CJK unified ideographs
        | 0xF900..=0xFAFF // CJK compatibility ideographs
        | 0x20000..=0x2FFFF) // CJK extensions
}

/// See [`Pattern::specific`].
fn specific(quote: &[char]) -> bool {
    let text: String = quote.iter().collect();
    let words = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .count();
    let spaceless_chars = quote.iter().filter(|&&c| spaceless(c)).count();
    words >= SPECIFIC_WORDS || spaceless_chars >= SPECIFIC_CHARS
}

/// Chars as matcher symbols (their code points).
fn symbols(chars: &[char]) -> Vec<u32> {
    chars.iter().map(|&c| c as u32).collect()
}
