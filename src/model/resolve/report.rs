//! The build report: one summary line, a warning per fuzzy or orphaned anchor and per page that is
//! not in the book, written to stderr at once (each line escaped for the terminal: quotes, ids and
//! pages are stored text); then `fail-on` applied.

use super::{BookAnchors, is_live};
use crate::base::anchor;
use crate::base::store::Comment;
use crate::model::book::{Book, FailOn, PageIds};
use crate::{Error, Result};
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
    let live = |c: &Comment| is_live(c);
    let counts = anchors.counts(live);
    let total = counts.exact + counts.fuzzy + counts.orphan + counts.page;
    let pages: std::collections::BTreeSet<usize> = anchors
        .located
        .iter()
        .enumerate()
        .filter(|(ci, l)| l.chapter.is_some() && live(&anchors.comments[*ci]))
        .filter_map(|(_, l)| l.chapter)
        .collect();
    let page_part = if counts.page > 0 {
        format!(", {} page-level", counts.page)
    } else {
        String::new()
    };
    out.push(format!(
        "notabene: {total} comments on {} pages — {} exact, {} fuzzy, {} orphaned{page_part}",
        pages.len(),
        counts.exact,
        counts.fuzzy,
        counts.orphan
    ));
    let mut missing: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let (mut fuzzy_lines, mut fuzzy_more) = (0, 0);
    for (ci, l) in anchors.located.iter().enumerate() {
        let c = &anchors.comments[ci];
        if !live(c) {
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
            anchor::Status::Fuzzy if fuzzy_lines >= MAX_FUZZY_LINES => fuzzy_more += 1,
            anchor::Status::Fuzzy => {
                fuzzy_lines += 1;
                out.push(format!(
                    "notabene: warning: fuzzy anchor {id} on {page} ({:.2}): «{}»",
                    r.confidence,
                    head(quote)
                ));
            }
            anchor::Status::Orphan => {
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
                out.push(format!(
                    "notabene: warning: orphaned anchor {id} on {page}: «{}»{suggestion}",
                    head(quote)
                ));
            }
            anchor::Status::Exact => {}
        }
    }
    if fuzzy_more > 0 {
        out.push(format!(
                        "notabene: warning: … and {fuzzy_more} more fuzzy anchors (`notabene anchors` lists them all)"
        ));
    }
    if let Some(m) = &anchors.mismatch {
        out.push(format!("notabene: warning: {}", m.message(ids)));
    }
    // Followed comments, by stored page, new page and evidence.
    let mut followed: BTreeMap<(&str, &str, &str), usize> = BTreeMap::new();
    for (ci, l) in anchors.located.iter().enumerate() {
        if let (Some(f), Some(ch)) = (&l.followed, l.chapter)
            && live(&anchors.comments[ci])
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
    for (page, list) in missing {
        out.push(format!(
            "notabene: warning: {} comment(s) on page {page:?}, which is not in this book ({})",
            list.len(),
            list.join(", ")
        ));
    }
    // Comments of other languages' builds: counted, never orphaned here.
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
    crate::base::util::term::err_lines(&out);
    let failing = failing(counts, cfg.config.fail_on);
    if failing > 0 {
        let what = if cfg.config.fail_on == FailOn::Orphan {
            "orphaned"
        } else {
            "fuzzy or orphaned"
        };
        let key = if cfg.config.fail_on == FailOn::Orphan {
            "orphan"
        } else {
            "fuzzy"
        };
        return Err(Error::new(format!(
            "{failing} {what} anchor(s) and fail-on = \"{key}\" (book.toml [preprocessor.notabene] fail-on)"
        )));
    }
    Ok(())
}
