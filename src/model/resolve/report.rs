//! The build report: one summary line, a warning per fuzzy or orphaned anchor and per page that is
//! not in the book, written to stderr at once (each line escaped for the terminal: quotes, ids and
//! pages are stored text); then `fail-on` applied.

use super::{BookAnchors, is_live};
use crate::model::book::{Book, FailOn, PageIds};
use crate::{Error, Result};
use notabene_anchoring as anchor;
use std::collections::BTreeMap;

fn head(s: &str) -> String {
    let t: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if t.chars().count() > 50 {
        format!("{}…", t.chars().take(50).collect::<String>())
    } else {
        t
    }
}

/// Fuzzy anchors named one per line; the rest are counted (a long-lived store drifts in many
/// places, and a build log is not where they are read).
const MAX_FUZZY_LINES: usize = 20;

/// How many anchors `fail_on` fails the build for, of the book's live comments.
fn failing(counts: super::Counts, fail_on: FailOn) -> usize {
    match fail_on {
        FailOn::Never => 0,
        FailOn::Orphan => counts.orphan,
        FailOn::Fuzzy => counts.orphan + counts.fuzzy,
    }
}

/// Whether [`report`] will fail the build (`fail-on`): known before the report is written, so
/// that a failing build stops before doing the rest of its work.
pub fn fails(anchors: &BookAnchors, cfg: &Book) -> bool {
    failing(anchors.counts(is_live), cfg.config.fail_on) > 0
}

/// Prints the build report (stderr, written at once) and applies `fail-on`.
pub fn report(anchors: &BookAnchors, ids: &PageIds, cfg: &Book) -> Result<()> {
    // One write for the whole report: a book with many drifted anchors prints hundreds of
    // lines, and stderr is unbuffered. Each line is escaped for the terminal when written.
    let mut out: Vec<String> = Vec::new();
    let counts = anchors.counts(is_live);
    out.push(summary_line(anchors, counts));
    let missing = anchor_lines(anchors, ids, &mut out);
    if let Some(m) = &anchors.mismatch {
        out.push(format!("notabene: warning: {}", m.message(ids)));
    }
    followed_lines(anchors, &mut out);
    ambiguous_lines(anchors, &mut out);
    for (page, list) in missing {
        out.push(format!(
            "notabene: warning: {} comment(s) on page {page:?}, which is not in this book ({})",
            list.len(),
            list.join(", ")
        ));
    }
    languages_line(anchors, &mut out);
    notabene_core::term::err_lines(&out);
    check_fail_on(counts, cfg.config.fail_on)
}

/// The summary line: live comments, the pages holding them, and how each was anchored.
fn summary_line(anchors: &BookAnchors, counts: super::Counts) -> String {
    let total = counts.exact + counts.fuzzy + counts.orphan + counts.page;
    let pages: std::collections::BTreeSet<usize> = anchors
        .located
        .iter()
        .enumerate()
        .filter(|(ci, l)| l.chapter.is_some() && is_live(&anchors.comments[*ci]))
        .filter_map(|(_, l)| l.chapter)
        .collect();
    let page_part = if counts.page > 0 {
        format!(", {} page-level", counts.page)
    } else {
        String::new()
    };
    format!(
        "notabene: {total} comments on {} pages — {} exact, {} fuzzy, {} orphaned{page_part}",
        pages.len(),
        counts.exact,
        counts.fuzzy,
        counts.orphan
    )
}

/// A warning per fuzzy (up to [`MAX_FUZZY_LINES`], then a count) and orphaned live anchor;
/// returns the live comments of this language whose page is not in the book, by page.
fn anchor_lines<'a>(
    anchors: &'a BookAnchors,
    ids: &'a PageIds,
    out: &mut Vec<String>,
) -> BTreeMap<&'a str, Vec<&'a str>> {
    let mut missing: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let (mut fuzzy_lines, mut fuzzy_more) = (0, 0);
    for (ci, l) in anchors.located.iter().enumerate() {
        let c = &anchors.comments[ci];
        if !is_live(c) {
            continue;
        }
        let id = c.id().unwrap_or_default();
        let page = c.page().unwrap_or_default();
        let Some(ch) = l.chapter else {
            if ids.owns(page) && ids.locale_of(page) == ids.language {
                missing.entry(page).or_default().push(id);
            }
            continue;
        };
        let Some(r) = &l.resolution else { continue };
        let quote = c
            .anchor()
            .and_then(|a| a.get("quote").or(a.get("label")))
            .and_then(|v| v.as_str())
            .unwrap_or("");
        match r.status {
            anchor::AnchorStatus::Fuzzy if fuzzy_lines >= MAX_FUZZY_LINES => fuzzy_more += 1,
            anchor::AnchorStatus::Fuzzy => {
                fuzzy_lines += 1;
                out.push(format!(
                    "notabene: warning: fuzzy anchor {id} on {page} ({:.2}): «{}»",
                    r.confidence,
                    head(quote)
                ));
            }
            anchor::AnchorStatus::Orphan => out.push(orphan_line(anchors, ch, r, id, page, quote)),
            anchor::AnchorStatus::Exact => {}
        }
    }
    if fuzzy_more > 0 {
        out.push(format!(
                        "notabene: warning: … and {fuzzy_more} more fuzzy anchors (`notabene anchors` lists them all)"
        ));
    }
    missing
}

/// The warning for an orphaned anchor, naming the closest text of chapter `ch` when known.
fn orphan_line(
    anchors: &BookAnchors,
    ch: usize,
    r: &anchor::Resolution,
    id: &str,
    page: &str,
    quote: &str,
) -> String {
    let suggestion = r
        .suggestion
        .as_ref()
        .map(|p| {
            format!(
                " — closest: «{}» ({:.2})",
                head(&anchors.texts[ch].text[p.text.clone()]),
                r.confidence
            )
        })
        .unwrap_or_default();
    format!(
        "notabene: warning: orphaned anchor {id} on {page}: «{}»{suggestion}",
        head(quote)
    )
}

/// Followed comments, counted by stored page, new page and evidence.
fn followed_lines(anchors: &BookAnchors, out: &mut Vec<String>) {
    let mut followed: BTreeMap<(&str, &str, &str), usize> = BTreeMap::new();
    for (ci, l) in anchors.located.iter().enumerate() {
        if let (Some(f), Some(ch)) = (&l.followed, l.chapter)
            && is_live(&anchors.comments[ci])
        {
            *followed
                .entry((
                    f.from.as_str(),
                    anchors.chapters[ch].page.as_str(),
                    f.by.as_str(),
                ))
                .or_default() += 1;
        }
    }
    for ((from, to, by), n) in followed {
        let noun = if n == 1 { "comment" } else { "comments" };
        out.push(format!(
            "notabene: {n} {noun} followed {from} → {to} ({by})"
        ));
    }
}

/// A warning per comment that matched several pages equally well.
fn ambiguous_lines(anchors: &BookAnchors, out: &mut Vec<String>) {
    for (ci, chapters) in &anchors.ambiguous {
        let c = &anchors.comments[*ci];
        let pages: Vec<&str> = chapters
            .iter()
            .map(|&ch| anchors.chapters[ch].page.as_str())
            .collect();
        out.push(format!(
            "notabene: warning: comment {} on {} matches {} equally well; not followed",
            c.id().unwrap_or_default(),
            c.page().unwrap_or_default(),
            pages.join(" and ")
        ));
    }
}

/// Comments of other languages' builds: counted, never orphaned here.
fn languages_line(anchors: &BookAnchors, out: &mut Vec<String>) {
    let languages = anchors.other_languages();
    if !languages.is_empty() {
        let n: usize = languages.values().sum();
        let each: Vec<String> = languages.iter().map(|(l, n)| format!("{l}: {n}")).collect();
        let noun = if n == 1 { "comment" } else { "comments" };
        out.push(format!(
            "notabene: {n} {noun} of other languages ({}), shown in their own builds",
            each.join(", ")
        ));
    }
}

/// mdBook's environment override of `fail-on`.
const FAIL_ON_ENV: &str = "MDBOOK_PREPROCESSOR__NOTABENE__FAIL_ON";

/// The `fail-on` error, when any anchor fails the build.
fn check_fail_on(counts: super::Counts, fail_on: FailOn) -> Result<()> {
    let failing = failing(counts, fail_on);
    if failing > 0 {
        let what = if fail_on == FailOn::Orphan {
            "orphaned"
        } else {
            "fuzzy or orphaned"
        };
        let key = if fail_on == FailOn::Orphan {
            "orphan"
        } else {
            "fuzzy"
        };
        // Where the setting came from: mdBook's environment override wins over book.toml.
        let from = if std::env::var_os(FAIL_ON_ENV).is_some() {
            FAIL_ON_ENV
        } else {
            "book.toml [preprocessor.notabene] fail-on"
        };
        return Err(Error::new(format!(
            "{failing} {what} anchor(s) and fail-on = \"{key}\" ({from})"
        )));
    }
    Ok(())
}
