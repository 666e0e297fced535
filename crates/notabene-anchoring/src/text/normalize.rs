//! Anchoring normalisation: the canonical text model used on both sides of anchoring (the rules
//! below; see `docs/src/design/anchoring.md`), with a map from every normalised char back to a byte
//! range of the source string.
//!
//! This module owns the fold table (whitespace, invisible characters, quotes, dashes, ellipsis),
//! the whitespace collapse and trim rules, and the offset map. It knows nothing about Markdown or
//! HTML: callers hand it plain text and get back the normalised chars plus, for each, the
//! grapheme-aligned source bytes that produced it.
//!
//! Rules, applied grapheme cluster by grapheme cluster (extended clusters):
//! 1. NFC-normalise the cluster.
//! 2. Fold each char: any `char::is_whitespace` (NBSP, U+2000–U+200A, U+202F, U+205F, U+3000,
//!    tab, CR, LF, VT, FF, U+0085, U+2028, U+2029, …) is whitespace; U+00AD, U+200B, U+2060 and
//!    U+FEFF are removed; `‘ ’ ‚ ‛ ′` become `'`; `“ ” „ ‟ ″` become `"` (guillemets `« »` are
//!    kept); `‒ – — ― −` become `-`; `…` becomes `...`.
//! 3. Collapse every whitespace run (removed chars inside a run do not break it) to one U+0020
//!    whose range covers the whole run.
//! 4. [`normalize`] trims leading and trailing whitespace completely; `normalize_fragment` (the
//!    matcher's, for the stored prefix and suffix) keeps a leading/trailing run as one space.
//!
//! Case is kept.

use std::ops::Range;

use unicode_normalization::UnicodeNormalization;
use unicode_segmentation::UnicodeSegmentation;

/// Text normalised for matching, with a map back to the source string.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Normalized {
    /// The normalised characters.
    pub chars: Vec<char>,
    /// For each normalised char `i`: the first source byte of the range `[start[i], end[i])`
    /// that produced it.
    ///
    /// Ranges are always on grapheme-cluster boundaries of the source and never empty. Several
    /// chars may share a range (e.g. `"…"` → `"..."` gives three chars with the same range); a
    /// collapsed whitespace run maps to the whole run. Both `start` and `end` are non-decreasing.
    pub start: Vec<usize>,
    /// For each normalised char `i`: the source byte just past the range that produced it
    /// (see [`Normalized::start`]).
    pub end: Vec<usize>,
}

impl Normalized {
    /// The normalised text as a `String`.
    pub fn as_string(&self) -> String {
        self.chars.iter().collect()
    }

    /// Number of normalised chars.
    pub fn len(&self) -> usize {
        self.chars.len()
    }

    /// Whether the normalised text is empty.
    pub fn is_empty(&self) -> bool {
        self.chars.is_empty()
    }

    /// Source byte range of the normalised char range `[a, b)`.
    ///
    /// For `a < b` this is `start[a]..end[b - 1]`. For `a >= b` it is an empty range at
    /// `start[a]`, or at `src_len` when `a` is at (or past) the end of the normalised text.
    /// Indices past the end are clamped to the end; this never panics. `src_len` should be the
    /// byte length of the string that was normalised.
    pub fn source_range(&self, a: usize, b: usize, src_len: usize) -> Range<usize> {
        let n = self.chars.len();
        let a = a.min(n);
        let b = b.min(n);
        if a < b {
            let s = self.start[a];
            let e = self.end[b - 1].max(s);
            s..e
        } else {
            let p = if a < n { self.start[a] } else { src_len };
            p..p
        }
    }
}

/// Normalises `src` for anchoring (see the module docs for the rules), trimming leading and
/// trailing whitespace completely, and records for each normalised char the source byte range
/// that produced it.
pub fn normalize(src: &str) -> Normalized {
    run(src, true)
}

/// Normalises a short stored string (quote, prefix, suffix, section) exactly as [`normalize`]
/// does, but without trimming: a leading or trailing whitespace run becomes ONE space (so that
/// `"foo "` + `"bar"` context alignment works). Returns the chars only.
pub(crate) fn normalize_fragment(s: &str) -> Vec<char> {
    run(s, false).chars
}

/// What one source char becomes after folding.
enum Fold {
    /// Part of a whitespace run.
    Space,
    /// Removed: produces no char.
    Drop,
    /// Exactly one char.
    One(char),
    /// `...` (from U+2026).
    Ellipsis,
}

/// The fold table (rule 2 of the module docs).
fn fold(c: char) -> Fold {
    match c {
        '\u{00AD}' | '\u{200B}' | '\u{2060}' | '\u{FEFF}' => Fold::Drop,
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => Fold::One('\''),
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => Fold::One('"'),
        '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}' | '\u{2212}' => Fold::One('-'),
        '\u{2026}' => Fold::Ellipsis,
        c if c.is_whitespace() => Fold::Space,
        c => Fold::One(c),
    }
}

/// Accumulates normalised chars and their source ranges, collapsing whitespace runs.
struct Builder {
    out: Normalized,
    trim: bool,
}

impl Builder {
    fn push(&mut self, c: char, s: usize, e: usize) {
        self.out.chars.push(c);
        self.out.start.push(s);
        self.out.end.push(e);
    }

    fn push_space(&mut self, s: usize, e: usize) {
        // Every ' ' in the output comes from a whitespace run, so a trailing ' ' means the run
        // is still open: extend it.
        if self.out.chars.last() == Some(&' ') {
            if let Some(last) = self.out.end.last_mut() {
                *last = e;
            }
        } else if !(self.trim && self.out.chars.is_empty()) {
            self.push(' ', s, e);
        }
    }

    fn fold_char(&mut self, c: char, s: usize, e: usize) {
        match fold(c) {
            Fold::Space => self.push_space(s, e),
            Fold::Drop => {}
            Fold::One(c) => self.push(c, s, e),
            Fold::Ellipsis => {
                for _ in 0..3 {
                    self.push('.', s, e);
                }
            }
        }
    }

    fn finish(mut self) -> Normalized {
        if self.trim && self.out.chars.last() == Some(&' ') {
            self.out.chars.pop();
            self.out.start.pop();
            self.out.end.pop();
        }
        self.out
    }
}

/// Shared implementation of [`normalize`] and [`normalize_fragment`].
fn run(src: &str, trim: bool) -> Normalized {
    let mut b = Builder {
        out: Normalized {
            chars: Vec::with_capacity(src.len()),
            start: Vec::with_capacity(src.len()),
            end: Vec::with_capacity(src.len()),
        },
        trim,
    };
    // Runs of ASCII are their own grapheme clusters and already NFC: they skip segmentation.
    // A cluster boundary is certain between two ASCII bytes (other than CR LF, whose halves
    // are both whitespace and fold into one run anyway), so the slow path covers each
    // non-ASCII stretch plus its ASCII neighbours up to such a boundary.
    let bytes = src.as_bytes();
    let len = bytes.len();
    let mut i = 0;
    while i < len {
        let mut j = i;
        while j < len && bytes[j] < 0x80 {
            j += 1;
        }
        // Keep the ASCII char just before non-ASCII text for the slow path (it may start a
        // cluster with a following combining mark).
        let fast_end = if j < len {
            j.saturating_sub(1).max(i)
        } else {
            j
        };
        for (k, &byte) in bytes.iter().enumerate().take(fast_end).skip(i) {
            b.fold_char(char::from(byte), k, k + 1);
        }
        if fast_end >= len {
            break;
        }
        let mut p = j.max(fast_end + 1);
        while p < len && !(bytes[p - 1] < 0x80 && bytes[p] < 0x80) {
            p += 1;
        }
        for (s, cluster) in src[fast_end..p].grapheme_indices(true) {
            let (s, e) = (fast_end + s, fast_end + s + cluster.len());
            if cluster.len() == 1 {
                b.fold_char(char::from(cluster.as_bytes()[0]), s, e);
            } else {
                for c in cluster.nfc() {
                    b.fold_char(c, s, e);
                }
            }
        }
        i = p;
    }
    b.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(n: &Normalized) -> String {
        n.as_string()
    }

    fn ranges(n: &Normalized) -> Vec<(usize, usize)> {
        n.start.iter().copied().zip(n.end.iter().copied()).collect()
    }

    #[test]
    fn identity_on_plain_ascii() {
        let src = "Hello, World! 42 (x) 'a' \"b\" -";
        let n = normalize(src);
        assert_eq!(s(&n), src);
        for (i, (a, b)) in ranges(&n).into_iter().enumerate() {
            assert_eq!((a, b), (i, i + 1));
        }
        assert_eq!(n.len(), src.len());
        assert!(!n.is_empty());
    }

    #[test]
    fn whitespace_run_collapses_to_one_space_covering_the_run() {
        let src = "a \n\t b";
        let n = normalize(src);
        assert_eq!(s(&n), "a b");
        assert_eq!(ranges(&n), vec![(0, 1), (1, 5), (5, 6)]);
        assert_eq!(&src[n.start[1]..n.end[1]], " \n\t ");
    }

    #[test]
    fn crlf_and_unicode_line_breaks_are_whitespace() {
        let n = normalize("a\r\nb\u{2028}c\u{0085}d\u{000B}\u{000C}e");
        assert_eq!(s(&n), "a b c d e");
    }

    #[test]
    fn leading_and_trailing_whitespace_trimmed() {
        let src = " \u{A0}\t hi there \n ";
        let n = normalize(src);
        assert_eq!(s(&n), "hi there");
        assert_eq!(n.start[0], 5);
        assert_eq!(&src[n.source_range(0, n.len(), src.len())], "hi there");
        assert!(normalize("  \n\t \u{3000}").is_empty());
    }

    #[test]
    fn fragment_keeps_one_space_at_the_ends() {
        assert_eq!(
            normalize_fragment("  foo \n"),
            vec![' ', 'f', 'o', 'o', ' ']
        );
        assert_eq!(normalize_fragment("foo "), vec!['f', 'o', 'o', ' ']);
        assert_eq!(normalize_fragment("\u{A0}"), vec![' ']);
        assert_eq!(normalize_fragment(""), Vec::<char>::new());
        let f: String = normalize_fragment(" \u{2018}x\u{2019} … ")
            .into_iter()
            .collect();
        assert_eq!(f, " 'x' ... ");
    }

    #[test]
    fn nbsp_and_other_spaces() {
        let src = "a\u{A0}b\u{2009}c\u{202F}d\u{205F}e\u{3000}f\u{2000}\u{200A}g";
        let n = normalize(src);
        assert_eq!(s(&n), "a b c d e f g");
        // NBSP is two bytes in UTF-8.
        assert_eq!((n.start[1], n.end[1]), (1, 3));
    }

    #[test]
    fn curly_quotes_fold_but_guillemets_stay() {
        let n = normalize(
            "\u{2018}a\u{2019} \u{201A}b\u{201B} \u{201C}c\u{201D} \u{201E}d\u{201F} 5\u{2032} 6\u{2033} «e»",
        );
        assert_eq!(s(&n), "'a' 'b' \"c\" \"d\" 5' 6\" «e»");
    }

    #[test]
    fn dashes_fold_to_hyphen() {
        let src = "a\u{2014}b \u{2013} c\u{2012}\u{2015}\u{2212}d";
        let n = normalize(src);
        assert_eq!(s(&n), "a-b - c---d");
        // Em dash is 3 bytes.
        assert_eq!((n.start[1], n.end[1]), (1, 4));
    }

    #[test]
    fn ellipsis_expands_with_shared_range() {
        let src = "wait… what";
        let n = normalize(src);
        assert_eq!(s(&n), "wait... what");
        for i in 4..7 {
            assert_eq!((n.start[i], n.end[i]), (4, 7));
        }
        assert_eq!((n.start[7], n.end[7]), (7, 8));
    }

    #[test]
    fn nfd_composes_and_maps_to_the_whole_cluster() {
        let src = "caf\u{65}\u{301}!";
        let n = normalize(src);
        assert_eq!(s(&n), "café!");
        assert_eq!(n.chars[3], '\u{E9}');
        assert_eq!((n.start[3], n.end[3]), (3, 6));
        assert_eq!((n.start[4], n.end[4]), (6, 7));
    }

    #[test]
    fn zwj_emoji_sequence_is_one_grapheme() {
        let family = "\u{1F469}\u{200D}\u{1F469}\u{200D}\u{1F467}";
        let src = format!("a{family}b");
        let n = normalize(&src);
        assert_eq!(s(&n), src);
        // Five chars, all mapped to the one cluster.
        for i in 1..6 {
            assert_eq!((n.start[i], n.end[i]), (1, 1 + family.len()));
        }
        assert_eq!(n.source_range(1, 6, src.len()), 1..1 + family.len());
    }

    #[test]
    fn invisible_chars_removed() {
        let src = "co\u{AD}op\u{200B}er\u{2060}at\u{FEFF}e";
        let n = normalize(src);
        assert_eq!(s(&n), "cooperate");
        // 'o' after the soft hyphen starts after its two bytes.
        assert_eq!((n.start[2], n.end[2]), (4, 5));
        // A soft hyphen inside a whitespace run does not split it.
        let n = normalize("a \u{AD} b");
        assert_eq!(s(&n), "a b");
        assert_eq!((n.start[1], n.end[1]), (1, 5));
        assert!(normalize("\u{AD}\u{FEFF}").is_empty());
    }

    #[test]
    fn source_range_at_start_end_and_inside_ellipsis() {
        let src = "\u{201C}Hi\u{201D}… ok  ";
        let n = normalize(src);
        assert_eq!(s(&n), "\"Hi\"... ok");
        let len = src.len();
        // Start.
        assert_eq!(&src[n.source_range(0, 3, len)], "\u{201C}Hi");
        // End.
        assert_eq!(&src[n.source_range(8, 10, len)], "ok");
        // Inside the ellipsis: one '.' maps to the whole "…".
        assert_eq!(&src[n.source_range(5, 6, len)], "…");
        assert_eq!(&src[n.source_range(4, 7, len)], "…");
        // Empty ranges.
        assert_eq!(n.source_range(3, 3, len), 5..5);
        assert_eq!(n.source_range(10, 10, len), len..len);
        assert_eq!(n.source_range(999, 5, len), len..len);
        assert_eq!(n.source_range(2, 999, len), n.start[2]..n.end[9]);
    }

    #[test]
    fn empty_input() {
        let n = normalize("");
        assert!(n.is_empty());
        assert!(n.start.is_empty() && n.end.is_empty());
        assert_eq!(n.as_string(), "");
        assert_eq!(n.source_range(0, 0, 0), 0..0);
        assert_eq!(n.source_range(0, 5, 0), 0..0);
    }

    #[test]
    fn combining_mark_on_a_space_keeps_ranges_monotone() {
        let src = "a \u{301}b";
        let n = normalize(src);
        assert_eq!(n.chars, vec!['a', ' ', '\u{301}', 'b']);
        assert_eq!(ranges(&n), vec![(0, 1), (1, 4), (1, 4), (4, 5)]);
    }

    /// Grapheme-cluster boundaries of `s`, including 0 and `s.len()`.
    fn boundaries(s: &str) -> Vec<bool> {
        let mut v = vec![false; s.len() + 1];
        for (i, _) in s.grapheme_indices(true) {
            v[i] = true;
        }
        v[s.len()] = true;
        v
    }

    const PIECES: &[&str] = &[
        "a",
        "b",
        "x",
        "A",
        " ",
        " ",
        "\n",
        "\t",
        "\r\n",
        "\r",
        "\u{A0}",
        "\u{2009}",
        "\u{3000}",
        "\u{2028}",
        "\u{AD}",
        "\u{200B}",
        "\u{2060}",
        "\u{FEFF}",
        "\u{2018}",
        "\u{2019}",
        "\u{201C}",
        "\u{201D}",
        "\u{201E}",
        "«",
        "»",
        "\u{2013}",
        "\u{2014}",
        "\u{2212}",
        "…",
        "e\u{301}",
        "\u{301}",
        "\u{E9}",
        "\u{200D}",
        "\u{1F469}",
        "\u{1F469}\u{200D}\u{1F469}\u{200D}\u{1F467}",
        "\u{1F1EB}",
        "\u{1F1F7}",
        "\u{1100}\u{1161}",
        "\u{AC00}",
        "\u{11A8}",
        "ﬁ",
        // Prepend (binds to what follows, even a space) and an Indic conjunct.
        "\u{0600}",
        "\u{0915}\u{094D}",
        "\u{0937}",
    ];

    fn random_source(rng: &mut fastrand::Rng) -> String {
        let len = rng.usize(0..40);
        (0..len)
            .map(|_| PIECES[rng.usize(0..PIECES.len())])
            .collect()
    }

    fn check_map(src: &str, n: &Normalized) {
        let bounds = boundaries(src);
        assert_eq!(n.chars.len(), n.start.len(), "{src:?}");
        assert_eq!(n.chars.len(), n.end.len(), "{src:?}");
        for i in 0..n.chars.len() {
            let (a, b) = (n.start[i], n.end[i]);
            assert!(a < b && b <= src.len(), "{src:?} {i}");
            assert!(
                src.is_char_boundary(a) && src.is_char_boundary(b),
                "{src:?}"
            );
            assert!(
                bounds[a] && bounds[b],
                "not on a grapheme boundary: {src:?} {i}"
            );
            if i > 0 {
                assert!(n.start[i - 1] <= a && n.end[i - 1] <= b, "{src:?} {i}");
            }
        }
    }

    #[test]
    fn property_offset_map_round_trips() {
        let mut rng = fastrand::Rng::with_seed(0x5eed_0001);
        let mut checked = 0usize;
        for _ in 0..1500 {
            let src = random_source(&mut rng);
            let n = normalize(&src);
            check_map(&src, &n);
            let frag = normalize_fragment(&src);
            let trimmed: Vec<char> = {
                let mut f = frag.clone();
                if f.last() == Some(&' ') {
                    f.pop();
                }
                if f.first() == Some(&' ') {
                    f.remove(0);
                }
                f
            };
            assert_eq!(trimmed, n.chars, "{src:?}");
            assert!(!n.chars.windows(2).any(|w| w == [' ', ' ']));
            assert_ne!(n.chars.first(), Some(&' '));
            assert_ne!(n.chars.last(), Some(&' '));

            let len = n.len();
            for a in 0..len {
                // Substrings must begin and end on whole source-range boundaries and not on a
                // space (a trimmed space cannot come back).
                if n.chars[a] == ' ' || (a > 0 && n.end[a - 1] > n.start[a]) {
                    continue;
                }
                for b in a + 1..=len {
                    if n.chars[b - 1] == ' ' || (b < len && n.end[b - 1] > n.start[b]) {
                        continue;
                    }
                    let r = n.source_range(a, b, src.len());
                    let again = normalize(&src[r.clone()]);
                    assert_eq!(again.chars, &n.chars[a..b], "{src:?} [{a},{b}) -> {r:?}");
                    // The offsets translate by the range start.
                    let shifted: Vec<usize> = again.start.iter().map(|x| x + r.start).collect();
                    assert_eq!(shifted, &n.start[a..b], "{src:?} [{a},{b})");
                    checked += 1;
                }
            }
        }
        assert!(checked > 10_000, "only {checked} substrings checked");
    }
}

#[cfg(test)]
mod fast_path_tests {
    use super::*;
    use unicode_normalization::UnicodeNormalization;
    use unicode_segmentation::UnicodeSegmentation;

    /// The plain definition: every grapheme cluster, NFC, folded.
    fn reference(src: &str, trim: bool) -> Normalized {
        let mut b = Builder {
            out: Normalized::default(),
            trim,
        };
        for (s, cluster) in src.grapheme_indices(true) {
            for c in cluster.nfc() {
                b.fold_char(c, s, s + cluster.len());
            }
        }
        b.finish()
    }

    #[test]
    fn ascii_fast_path_equals_the_grapheme_definition() {
        let pieces = [
            "a",
            "b",
            " ",
            "\n",
            "\r\n",
            "\t",
            "e\u{301}",
            "\u{301}",
            "é",
            "…",
            "—",
            "\u{a0}",
            "\u{ad}",
            "😀",
            "👩\u{200d}👩",
            "🇫🇷",
            "\u{600}1",
            "x\u{308}y",
            "ﬁ",
            "“",
            "'",
            "ab",
            "  ",
            "\u{200b}",
            "가",
            "\u{1100}\u{1161}",
            "z",
        ];
        let mut rng = fastrand::Rng::with_seed(0xfa57);
        for _ in 0..5000 {
            let s: String = (0..rng.usize(0..24))
                .map(|_| pieces[rng.usize(0..pieces.len())])
                .collect();
            for trim in [true, false] {
                assert_eq!(run(&s, trim), reference(&s, trim), "{s:?} trim={trim}");
            }
        }
    }
}
