//! The gate's report for a person: a summary line, then one line per finding (`file:line`, its
//! kind, the comment, its author and first message, what the gate saw, the link), through
//! `say!` (each line escaped for the terminal), and the verdict.

use super::one_line;
use crate::apps::cli::say;
use crate::apps::ops::gate::{GateReport, counts_in_words as counts};

/// Which pages, after "N page(s)": "changed since abc1234 (the merge base of HEAD and
/// origin/main, from GITHUB_BASE_REF)" or "in the book (--all)".
pub(super) fn compared(report: &GateReport) -> String {
    match &report.base {
        None => "in the book (--all)".to_string(),
        Some(b) => format!(
            "changed since {} (the merge base of HEAD and {}, from {})",
            &b.commit[..b.commit.len().min(12)],
            b.rev,
            b.from
        ),
    }
}

/// The last line: whether the gate fails, and on what.
pub(super) fn verdict(report: &GateReport) -> String {
    let fail_on = if report.fail_on.is_empty() {
        "none".to_string()
    } else {
        report
            .fail_on
            .iter()
            .map(|k| k.as_str())
            .collect::<Vec<_>>()
            .join(",")
    };
    let totals = report.totals();
    let failing: Vec<String> = report
        .fail_on
        .iter()
        .filter(|k| totals[**k as usize] > 0)
        .map(|k| format!("{} {}", totals[*k as usize], k.as_str()))
        .collect();
    if report.failed {
        format!(
            "notabene: the gate fails: {} (--fail-on {fail_on})",
            failing.join(", ")
        )
    } else {
        format!("notabene: the gate passes (--fail-on {fail_on})")
    }
}

/// Prints `report`.
pub(super) fn print(report: &GateReport) {
    say!(
        "notabene: gate: {} page(s) {}: {}",
        report.pages.len(),
        compared(report),
        counts(&report.totals())
    );
    for page in &report.pages {
        say!("{} ({}): {}", page.chapter, page.file, counts(&page.counts));
        for f in report.findings.iter().filter(|f| f.page == page.page) {
            say!(
                "  {}:{}: {} {} — {}: {} [{}]",
                f.file,
                f.line,
                f.kind.as_str(),
                f.id,
                f.author_name(),
                one_line(&f.message, 100),
                f.detail
            );
            if let Some(link) = &f.link {
                say!("    {link}");
            }
        }
    }
    say!("{}", verdict(report));
}
