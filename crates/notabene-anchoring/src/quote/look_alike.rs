//! After the pipeline: whether a place found for an anchor is a look-alike that stood on the
//! page, apart from the anchor's own spot, when the comment was written.
//!
//! The stored anchor (quote, 40 characters of context each side, heading) is all a resolver has
//! on today's page. Where the commented passage was deleted or rewritten while a near copy of
//! it stands elsewhere on the page (the same `fn main` twice, two `impl Iterator` blocks, a
//! sentence repeated in a later section), that copy resembles the anchor as well as an edit of
//! the original would, and today's page cannot tell them apart. The page as it was when the
//! comment was written can: if the place's own text — its quote with its context on one side,
//! as it reads now — stood on that page already, only apart from where the stored anchor
//! stood, and is not on today's page more often than it was then, the place is another
//! passage, not where the commented one went.
//!
//! Owns that comparison ([`stood_apart`]). Calls the pattern ([`super::pattern`]) and the page
//! index; the caller brings the earlier page (git's, in a build).

use super::TextAnchor;
use super::pattern::Pattern;
use crate::{PageIndex, Place};
use std::ops::Range;

/// A side of the place's context counts only with at least this many chars: fewer (a page's
/// edge, a one-word cell) are found anywhere.
const SIDE_MIN: usize = 8;
/// A text found more often than this on a page tells no passage from another.
const OCCURRENCES_MAX: usize = 32;

/// Whether `at`, a place found for `anchor` on page `now`, is a look-alike of it that stood on
/// page `then` (the page when the comment was written) apart from the anchor's own spot: the
/// stored quote and context stood on `then`, and the place's quote with its context on one
/// side, as `now` reads, stood there too, only apart from the stored spot, and is on `now` no
/// more often than on `then` — while neither side's text stood only at the stored spot.
///
/// False whenever `then` cannot say: the stored anchor is not on it (the comment was written
/// on another version, or a preprocessor changed the text), or the place's text on both sides
/// is new. A place whose context is the stored one on a side is never a look-alike by that
/// side.
pub fn stood_apart(now: &PageIndex, at: &Place, anchor: &TextAnchor, then: &PageIndex) -> bool {
    let pattern = Pattern::new(anchor);
    if pattern.quote.is_empty() || then.is_empty() {
        return false;
    }
    let text = |s: &[u32]| -> String { s.iter().filter_map(|&c| char::from_u32(c)).collect() };
    let stored = text(&[&pattern.prefix[..], &pattern.quote, &pattern.suffix].concat());
    let Some(spots) = occurrences(&then.string, &stored).filter(|s| !s.is_empty()) else {
        return false;
    };
    let starts = &now.norm.start;
    let a = starts.partition_point(|&s| s < at.text.start);
    let b = starts.partition_point(|&s| s < at.text.end).max(a);
    let chars = &now.symbols;
    let (prefix_len, suffix_len) = (pattern.prefix.len(), pattern.suffix.len());
    let (start, end) = (
        a.saturating_sub(prefix_len),
        (b + suffix_len).min(chars.len()),
    );
    // Each side with the quote, and how much context it holds.
    let sides = [(start..b, a - start), (a..end, end - b)];
    let apart = |f: &Range<usize>| spots.iter().all(|s| f.end <= s.start || s.end <= f.start);
    // Each side long enough to say something: where its text stood then, and how many times
    // it stands now.
    let said: Vec<(Vec<Range<usize>>, usize)> = sides
        .into_iter()
        .filter(|(_, context)| *context >= SIDE_MIN)
        .filter_map(|(range, _)| {
            let side = text(&chars[range]);
            let stood = occurrences(&then.string, &side)?;
            let count = occurrences(&now.string, &side).map_or(usize::MAX, |n| n.len());
            Some((stood, count))
        })
        .collect();
    // A side whose text stood only at the stored spot makes the place the commented passage
    // (edited on its other side, or moved with it). Otherwise a side that stood on the page
    // then, only apart from it, and is not on the page more often now (an edit that made the
    // commented passage read like another one adds a copy), makes it another passage. A side
    // that stood both at the spot and apart from it says nothing.
    let passage = |stood: &[Range<usize>]| !stood.is_empty() && stood.iter().all(|f| !apart(f));
    let another = |stood: &[Range<usize>], count: usize| {
        !stood.is_empty() && stood.iter().all(apart) && count <= stood.len()
    };
    !said.iter().any(|(stood, _)| passage(stood))
        && said.iter().any(|(stood, count)| another(stood, *count))
}

/// Every occurrence of `needle` in `haystack` (byte ranges, overlapping ones included); `None`
/// past [`OCCURRENCES_MAX`] (text that common says nothing, and a page of one repeated char
/// must not cost a square of its length).
fn occurrences(haystack: &str, needle: &str) -> Option<Vec<Range<usize>>> {
    if needle.is_empty() {
        return Some(Vec::new());
    }
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(i) = haystack[from..].find(needle) {
        if found.len() == OCCURRENCES_MAX {
            return None;
        }
        let start = from + i;
        found.push(start..start + needle.len());
        // The next char boundary after this start: occurrences may overlap.
        from = start + haystack[start..].chars().next().map_or(1, char::len_utf8);
    }
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{TextOptions, page_text};

    const ALPHA: &str = "Alpha says one two three four five six seven eight nine.";
    const BETA: &str = "Beta says one two three four five six seven eight ten.";
    const FILLER: &str = "Something else stands between the two sentences here.";

    /// The anchor on "one two three four" of the sentence starting `Beta`.
    fn on_beta() -> TextAnchor<'static> {
        TextAnchor {
            quote: "one two three four",
            prefix: "between the two sentences here.\n\nBeta says ",
            suffix: " five six seven eight ten.",
            section: None,
        }
    }

    /// Whether the last `quote` on `now_md` is a look-alike that stood apart on `then_md`.
    fn check(now_md: &str, quote: &str, then_md: &str) -> bool {
        let (now, then) = (
            page_text(now_md, &TextOptions::default()),
            page_text(then_md, &TextOptions::default()),
        );
        let (now, then) = (PageIndex::new(&now), PageIndex::new(&then));
        let b = now.string.rfind(quote).expect("the quote now");
        let (a, z) = (now.char_index(b), now.char_index(b + quote.len()));
        stood_apart(&now, &now.place(a, z), &on_beta(), &then)
    }

    #[test]
    fn the_copy_that_stood_beside_a_deleted_passage_is_a_look_alike() {
        let then = format!("{ALPHA}\n\n{FILLER}\n\n{BETA}\n");
        let now = format!("{ALPHA}\n\n{FILLER}\n");
        assert!(check(&now, "one two three four", &then));
    }

    #[test]
    fn the_passage_edited_is_new_text() {
        let then = format!("{ALPHA}\n\n{FILLER}\n\n{BETA}\n");
        let now = format!(
            "{ALPHA}\n\n{FILLER}\n\nBeta says one two three fours five six seven eight ten.\n"
        );
        assert!(!check(&now, "one two three fours", &then));
        // Its context rewritten on one side: the other side with the quote stood at the spot.
        let now = format!("{ALPHA}\n\n{FILLER}\n\nBeta says one two three four and more.\n");
        assert!(!check(&now, "one two three four", &then));
        // Unchanged: the place is the stored spot.
        assert!(!check(&then, "one two three four", &then));
    }

    #[test]
    fn a_passage_moved_carries_the_text_that_stood_only_where_it_was() {
        // Beta moved to a new neighbour: its left side is new, its right side stood only at
        // the stored spot — the place is the commented passage.
        let then = format!("{ALPHA}\n\n{FILLER}\n\n{BETA}\n");
        let now = format!("{ALPHA}\n\nMoved up, next to other words: {BETA}\n\n{FILLER}\n");
        assert!(!check(&now, "one two three four", &then));
    }

    #[test]
    fn a_page_of_one_repeated_char_says_nothing_and_costs_little() {
        // Every window of the page is every other: without a bound on the occurrences compared,
        // this is a square of the page's length (85 s in a debug build), not milliseconds.
        let page = "x".repeat(200_000);
        let text = page_text(&page, &TextOptions::default());
        let index = PageIndex::new(&text);
        assert_eq!(index.len(), 200_000);
        let anchor = TextAnchor {
            quote: "xxx",
            prefix: &page[..40],
            suffix: &page[..40],
            section: None,
        };
        let at = index.place(100_000, 100_003);
        assert_eq!(occurrences(&index.string, "xxxx"), None);
        assert!(!stood_apart(&index, &at, &anchor, &index));
    }

    #[test]
    fn a_page_without_the_stored_anchor_cannot_say() {
        let then = format!("{ALPHA}\n\n{FILLER}\n");
        assert!(!check(&then, "one two three four", &then));
    }
}
