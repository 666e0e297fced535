//! The anchoring test vectors, one per case the resolution pipeline of `notabene_anchoring::quote` and
//! `notabene_anchoring::block` (`docs/src/design/anchoring.md`) must handle: for each, the chosen location
//! and the status (never exact score values).

use notabene_anchoring::block::{self, BlockAnchor};
use notabene_anchoring::quote::{TextAnchor, resolve};
use notabene_anchoring::text::{TextOptions, page_text};
use notabene_anchoring::{AnchorStatus, DEFAULT_THRESHOLD, PageIndex};
use pretty_assertions::assert_eq;

/// (status, matched raw text, matched Markdown source, suggestion's Markdown source)
fn run(
    md: &str,
    quote: &str,
    prefix: &str,
    suffix: &str,
    section: Option<&str>,
) -> (AnchorStatus, Option<String>, Option<String>, Option<String>) {
    let page = page_text(md, &TextOptions::default());
    let idx = PageIndex::new(&page);
    let r = resolve(
        &idx,
        &TextAnchor {
            quote,
            prefix,
            suffix,
            section,
        },
        DEFAULT_THRESHOLD,
    );
    let text = r
        .place
        .as_ref()
        .map(|p| page.text[p.text.clone()].to_string());
    let src = r.place.as_ref().map(|p| md[p.source.clone()].to_string());
    let sugg = r
        .suggestion
        .as_ref()
        .map(|p| md[p.source.clone()].to_string());
    (r.status, text, src, sugg)
}

fn offset_of(md: &str, needle: &str, nth: usize) -> usize {
    md.match_indices(needle).nth(nth).unwrap().0
}

#[test]
fn exact_with_context() {
    let md = "# Intro\n\nThe retry policy applies to uploads. Later the retry policy applies to downloads.\n";
    let (st, text, _, _) = run(
        md,
        "retry policy",
        "Later the ",
        " applies to downloads.",
        Some("Intro"),
    );
    assert_eq!(st, AnchorStatus::Exact);
    assert_eq!(text.as_deref(), Some("retry policy"));
}

#[test]
fn duplicated_quote_picked_by_context() {
    let md =
        "Alpha uses the cache first. Beta uses the cache last.\n\nGamma uses the cache never.\n";
    let page = page_text(md, &TextOptions::default());
    let idx = PageIndex::new(&page);
    let r = resolve(
        &idx,
        &TextAnchor {
            quote: "the cache",
            prefix: "Beta uses ",
            suffix: " last.",
            section: None,
        },
        DEFAULT_THRESHOLD,
    );
    assert_eq!(r.status, AnchorStatus::Exact);
    let src = r.place.unwrap().source;
    assert_eq!(src.start, offset_of(md, "the cache", 1));
    assert_eq!(&md[src], "the cache");
}

#[test]
fn robin_to_elisa_never_binds_to_the_other_name() {
    // Stored when the sentence said "Robin told Robin's sister"; the first Robin became Elisa.
    let md = "Later that day Elisa told Robin's sister about the plan and left.\n";
    let (st, text, _, _) = run(
        md,
        "Robin",
        "Later that day ",
        " told Robin's sister about the pl",
        None,
    );
    match st {
        AnchorStatus::Fuzzy => assert_eq!(text.as_deref(), Some("Elisa")),
        AnchorStatus::Orphan => {}
        AnchorStatus::Exact => panic!("bound exactly to the other Robin"),
    }
}

#[test]
fn deleted_paragraph_among_lookalikes_is_orphan_with_suggestion() {
    let stored = "Team Alpha owns the ingestion service and answers pages at night.";
    let md = "# Teams\n\nTeam Beta owns the reporting service and answers pages by day.\n\nTeam Gamma owns the billing service and answers tickets.\n";
    let (st, _, _, sugg) = run(
        md,
        "owns the ingestion service",
        "Team Alpha ",
        " and answers pages at night.",
        Some("Teams"),
    );
    let page = page_text(md, &TextOptions::default());
    let r = resolve(
        &PageIndex::new(&page),
        &TextAnchor {
            quote: "owns the ingestion service",
            prefix: "Team Alpha ",
            suffix: " and answers pages at night.",
            section: Some("Teams"),
        },
        DEFAULT_THRESHOLD,
    );
    assert_eq!(st, AnchorStatus::Orphan, "{stored} {r:?}");
    assert!(
        sugg.is_some(),
        "an orphan carries its best rejected candidate"
    );
}

#[test]
fn short_quote_without_context_is_orphan() {
    let (st, ..) = run(
        "All about machines.\n",
        "Linus",
        "written by ",
        " in 1991",
        None,
    );
    assert_eq!(st, AnchorStatus::Orphan);
}

#[test]
fn quote_across_emphasis_link_code_and_line_break() {
    let md =
        "Start of it. Call *the* [`run` command](cli.md) with\n`--fast` to finish quickly. End.\n";
    let (st, text, src, _) = run(
        md,
        "the run command with --fast to finish",
        "Start of it. Call ",
        " quickly. End.",
        None,
    );
    assert_eq!(st, AnchorStatus::Exact);
    assert_eq!(
        text.as_deref(),
        Some("the run command with\n--fast to finish")
    );
    assert_eq!(
        src.as_deref(),
        Some("the* [`run` command](cli.md) with\n`--fast` to finish")
    );
}

#[test]
fn entities_and_escapes_map_to_their_markdown_bytes() {
    let md = "Use a &amp; b and \\*not emphasis\\* here, then &copy; 2026.\n";
    let (st, text, src, _) = run(md, "a & b and *not emphasis*", "Use ", " here, then", None);
    assert_eq!(st, AnchorStatus::Exact);
    assert_eq!(text.as_deref(), Some("a & b and *not emphasis*"));
    // Escaped stars map with their backslash.
    assert_eq!(src.as_deref(), Some("a &amp; b and \\*not emphasis\\*"));
    let (_, _, src, _) = run(md, "© 2026", "here, then ", ".", None);
    assert_eq!(src.as_deref(), Some("&copy; 2026"));
}

#[test]
fn smart_punctuation_nbsp_curly_quotes_and_nfd() {
    // The page has straight quotes turned curly by smart punctuation; the stored quote came
    // from a browser with NBSP and a decomposed é.
    let md = "She said \"it's done\" -- then left the cafe\u{301} quickly.\n";
    let (st, _, src, _) = run(
        md,
        "\u{201c}it\u{2019}s done\u{201d}\u{a0}\u{2013} then left the caf\u{e9}",
        "She said ",
        " quickly.",
        None,
    );
    assert_eq!(st, AnchorStatus::Exact);
    assert_eq!(
        src.as_deref(),
        Some("\"it's done\" -- then left the cafe\u{301}")
    );
}

#[test]
fn whitespace_in_the_stored_quote_is_folded() {
    let md = "Keep   the\nwhitespace out of it.\n";
    let (st, text, _, _) = run(md, "Keep the  \n whitespace", "", " out of it.", None);
    assert_eq!(st, AnchorStatus::Exact);
    assert_eq!(text.as_deref(), Some("Keep   the\nwhitespace"));
}

#[test]
fn page_start_and_end() {
    let md = "# Title\n\nFirst words here and the last words.\n";
    let (st, text, _, _) = run(md, "Title", "", "\nFirst words here and the", Some("Title"));
    assert_eq!((st, text.as_deref()), (AnchorStatus::Exact, Some("Title")));
    let (st, text, _, _) = run(md, "last words.", "words here and the ", "", Some("Title"));
    assert_eq!(
        (st, text.as_deref()),
        (AnchorStatus::Exact, Some("last words."))
    );
}

#[test]
fn emoji_and_graphemes() {
    let md = "AnchorStatus 👩‍👩‍👧 family and 😀 smile.\n";
    let (st, text, _, _) = run(md, "👩‍👩‍👧 family and 😀", "AnchorStatus ", " smile.", None);
    assert_eq!(
        (st, text.as_deref()),
        (AnchorStatus::Exact, Some("👩‍👩‍👧 family and 😀"))
    );
    // A changed emoji costs one edit; the match never splits a grapheme cluster.
    let md2 = "AnchorStatus 👩‍👩‍👦 family and 😀 smile.\n";
    let (st, text, _, _) = run(md2, "👩‍👩‍👧 family and 😀", "AnchorStatus ", " smile.", None);
    assert_eq!(st, AnchorStatus::Fuzzy);
    assert_eq!(text.as_deref(), Some("👩‍👩‍👦 family and 😀"));
}

#[test]
fn long_quote_with_a_middle_sentence_edited() {
    let s1 = "The collector accepts batches of up to five hundred readings at a time.";
    let s2 = "Each batch is compressed before it leaves the station and retried on failure.";
    let s3 = "Operators can watch the queue length on the status page and pause uploads.";
    let s4 = "When the network returns, the backlog drains in the order it was recorded.";
    let stored = format!("{s1} {s2} {s3} {s4}");
    assert!(stored.chars().count() > 256);
    let edited = s2.replace(
        "compressed before it leaves the station",
        "compressed with gzip before upload",
    );
    let md = format!("# Uploads\n\nIntro text here. {s1} {edited} {s3} {s4} Closing text.\n");
    let (st, text, _, _) = run(
        &md,
        &stored,
        "Intro text here. ",
        " Closing text.",
        Some("Uploads"),
    );
    assert_eq!(st, AnchorStatus::Fuzzy);
    assert_eq!(text.unwrap(), format!("{s1} {edited} {s3} {s4}"));
}

#[test]
fn identical_duplicated_paragraphs_are_flagged_ambiguous() {
    let md = "Same words in a row.\n\nSame words in a row.\n";
    let page = page_text(md, &TextOptions::default());
    let idx = PageIndex::new(&page);
    let r = resolve(
        &idx,
        &TextAnchor {
            quote: "words in",
            prefix: "Same ",
            suffix: " a row.",
            section: None,
        },
        DEFAULT_THRESHOLD,
    );
    assert_eq!(r.status, AnchorStatus::Fuzzy);
    assert!(r.flags.ambiguous);
    assert_eq!(r.place.unwrap().source.start, offset_of(md, "words in", 0));
}

#[test]
fn code_block_token_disambiguated_by_context_and_section() {
    let md = "# One\n\n```rust\nfn a(&self) { self.x }\n```\n\n# Two\n\n```rust\nfn b(&self) { self.y }\n```\n";
    let (st, _, src, _) = run(md, "self", "fn b(&self) { ", ".y }", Some("Two"));
    assert_eq!(st, AnchorStatus::Exact);
    assert_eq!(src.as_deref(), Some("self"));
    let page = page_text(md, &TextOptions::default());
    let idx = PageIndex::new(&page);
    let r = resolve(
        &idx,
        &TextAnchor {
            quote: "self",
            prefix: "fn b(&self) { ",
            suffix: ".y }",
            section: Some("Two"),
        },
        DEFAULT_THRESHOLD,
    );
    assert_eq!(r.place.unwrap().source.start, offset_of(md, "self.y", 0));
}

#[test]
fn section_breaks_ties_between_identical_contexts() {
    let md = "# Install\n\nRun the command now.\n\n# Upgrade\n\nRun the command now.\n";
    let page = page_text(md, &TextOptions::default());
    let idx = PageIndex::new(&page);
    let r = resolve(
        &idx,
        &TextAnchor {
            quote: "the command",
            prefix: "Run ",
            suffix: " now.",
            section: Some("Upgrade"),
        },
        DEFAULT_THRESHOLD,
    );
    assert_eq!(
        r.place.unwrap().source.start,
        offset_of(md, "the command", 1)
    );
    // The section is the only difference, and it decides: not ambiguous.
    assert_eq!(r.status, AnchorStatus::Exact);
}

#[test]
fn moved_block_with_intact_context_beats_a_lookalike_in_the_stored_section() {
    // The anchored code moved under another heading; the stored section still holds a copy
    // whose comment lost its backticks. Intact context outweighs the section.
    let md = "# Before

```text
struct Vec<T> {
    data: *const T, // *const for variance!
}
```

# After

If you were to write:

```text
struct Vec<T> {
    data: *const T, // `*const` for variance!
}
```
";
    let (st, text, _, _) = run(
        md,
        "//",
        "struct Vec<T> {\n    data: *const T, ",
        " `*const` for variance!\n}",
        Some("Before"),
    );
    assert_eq!(text.as_deref(), Some("//"));
    let page = page_text(md, &TextOptions::default());
    let idx = PageIndex::new(&page);
    let r = resolve(
        &idx,
        &TextAnchor {
            quote: "//",
            prefix: "struct Vec<T> {\n    data: *const T, ",
            suffix: " `*const` for variance!\n}",
            section: Some("Before"),
        },
        DEFAULT_THRESHOLD,
    );
    assert_eq!(r.place.unwrap().source.start, offset_of(md, "//", 1));
    assert_eq!(st, AnchorStatus::Exact);
}

#[test]
fn edits_elsewhere_keep_the_anchor_exact() {
    let md = "# Guide\n\nA brand new opening paragraph was added here.\n\nThe daemon reads its configuration at start-up and never again.\n";
    let (st, text, _, _) = run(
        md,
        "reads its configuration",
        "The daemon ",
        " at start-up and never again.",
        Some("Guide"),
    );
    assert_eq!(
        (st, text.as_deref()),
        (AnchorStatus::Exact, Some("reads its configuration"))
    );
}

#[test]
fn typo_fixed_inside_the_quote_is_fuzzy_at_the_same_place() {
    let md = "The daemon reads its configuration at start-up.\n";
    let (st, text, _, _) = run(
        md,
        "reads its configuraton",
        "The daemon ",
        " at start-up.",
        None,
    );
    assert_eq!(
        (st, text.as_deref()),
        (AnchorStatus::Fuzzy, Some("reads its configuration"))
    );
}

#[test]
fn blocks_rematch_by_key_then_guarded_position() {
    let md = "# Wiring\n\n![Board](img/board.png)\n\n```mermaid\ngraph TD\n A-->B\n```\n\n![Board](img/board.png)\n";
    let page = page_text(md, &TextOptions::default());
    assert_eq!(page.blocks.len(), 3);
    assert_eq!(page.blocks[1].key, "mermaid:ademz8");
    // Same image twice: the stored index picks the second.
    let r = block::resolve(
        &page,
        &BlockAnchor {
            kind: "image",
            key: "image:img/board.png",
            section: Some("Wiring"),
            index: 2,
        },
    );
    assert_eq!((r.status, r.block), (AnchorStatus::Exact, Some(2)));
    // Moved: found by key at another index.
    let r = block::resolve(
        &page,
        &BlockAnchor {
            kind: "mermaid",
            key: "mermaid:ademz8",
            section: Some("Wiring"),
            index: 0,
        },
    );
    assert_eq!((r.status, r.block), (AnchorStatus::Exact, Some(1)));
    // Diagram edited in place: same index, same kind, same section → fuzzy.
    let r = block::resolve(
        &page,
        &BlockAnchor {
            kind: "mermaid",
            key: "mermaid:zzzzz",
            section: Some("Wiring"),
            index: 1,
        },
    );
    assert_eq!((r.status, r.block), (AnchorStatus::Fuzzy, Some(1)));
    // A diagram deleted and another inserted under another heading: never an ordinal-only match.
    let r = block::resolve(
        &page,
        &BlockAnchor {
            kind: "mermaid",
            key: "mermaid:zzzzz",
            section: Some("Overview"),
            index: 1,
        },
    );
    assert_eq!(r.status, AnchorStatus::Orphan);
}

/// A short quote found more than once, the word next to it rewritten on both sides: the spot
/// whose context still resembles the stored one on both sides is the place (fuzzy, context
/// changed); the other occurrences stand in another context.
#[test]
fn a_short_quote_keeps_its_place_when_the_words_on_both_sides_are_rewritten() {
    let md = "# Uploads\n\nA batch is kept until the collector confirms it. The queue drains slowly once the link is back, and the queue is checked every minute.\n";
    // Stored: "… until the collector accepts it. The queue drains slowly once the network is back …"
    let (st, text, src, _) = run(
        md,
        "queue drains",
        "il the collector accepts it. The ",
        " slowly once the network is back, and t",
        Some("Uploads"),
    );
    assert_eq!(st, AnchorStatus::Fuzzy);
    assert_eq!(text.as_deref(), Some("queue drains"));
    assert_eq!(src.as_deref(), Some("queue drains"));
    let page = page_text(md, &TextOptions::default());
    let r = resolve(
        &PageIndex::new(&page),
        &TextAnchor {
            quote: "queue drains",
            prefix: "il the collector accepts it. The ",
            suffix: " slowly once the network is back, and t",
            section: Some("Uploads"),
        },
        DEFAULT_THRESHOLD,
    );
    assert!(r.flags.context_changed && !r.flags.quote_changed, "{r:?}");
}

/// The same rewrite, but another occurrence stands in a context just as close (a sentence
/// built alike): nothing tells them apart, so no guess — an orphan with a suggestion. And a
/// quote of under three characters is never placed this way.
#[test]
fn a_short_quote_with_a_sibling_as_close_is_not_guessed() {
    let md = "# Rules\n\nEach night a station is idle until dawn.\n\nEach day a station is idle until dusk.\n";
    // Stored: "Each week a station is silent until noon." — which sentence was it?
    let (st, _, _, sugg) = run(
        md,
        "station is",
        "Each week a ",
        " silent until noon.",
        Some("Rules"),
    );
    assert_eq!((st, sugg.is_some()), (AnchorStatus::Orphan, true));
    let md = "# Table\n\n| a | b |\n|---|---|\n| x | - |\n| y | + |\n";
    let (st, ..) = run(md, "-", "a b\nw ", "\ny +", Some("Table"));
    assert_eq!(st, AnchorStatus::Orphan);
}

/// A fuzzy place the rules past the score would take with little confidence (the quote found
/// rewritten past recognition, far from its context) is suggested, not marked.
#[test]
fn a_quote_found_once_under_another_heading_with_no_context_is_not_placed() {
    let md = "# First\n\nThe daemon reads its configuration at startup.\n\n# Second\n\nUnrelated text about antennas and masts.\n";
    let (st, ..) = run(
        md,
        "reads its configuration at startup",
        "completely different words before: ",
        " and other words after it here.",
        Some("Second"),
    );
    assert_eq!(st, AnchorStatus::Orphan);
}

/// A typo in the quote where it stands, between its context verbatim, while the exact words
/// stand once elsewhere (the chapter's heading): the heading is not taken for it.
#[test]
fn an_exact_copy_elsewhere_does_not_beat_the_quote_edited_in_its_context() {
    let md = "# Foreign Function Interface\n\nRust provides a Foreign Functqon Interface (FFI) to C libraries.\n";
    let (st, text, _, sugg) = run(
        md,
        "Foreign Function Interface",
        "Rust provides a ",
        " (FFI) to C libraries.",
        Some("Foreign Function Interface"),
    );
    let at_the_edit = |s: &Option<String>| s.as_deref() == Some("Foreign Functqon Interface");
    assert!(
        (st == AnchorStatus::Fuzzy && at_the_edit(&text))
            || (st == AnchorStatus::Orphan && at_the_edit(&sugg)),
        "{st:?} {text:?} {sugg:?}"
    );
}
