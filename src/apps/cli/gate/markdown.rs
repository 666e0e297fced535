//! The gate's report as a pull-request comment (and GitHub's job summary): a marker a bot
//! finds its comment by, the verdict, a table of the touched pages with their counts and links,
//! then a table of findings per page. The same state gives the same bytes (no time, no run
//! number), so a bot can update one comment in place.
//!
//! Comment text is untrusted and never becomes Markdown: every piece of it (a title, an
//! author, a message) is one code span, its fence longer than any run of backticks inside, on
//! one line, its pipes escaped for the table — no link, mention, image or HTML can come out of it.

use super::one_line;
use super::text::{compared, verdict};
use crate::apps::ops::gate::{GateReport, Kind};

/// What a bot looks for to update its comment.
pub(super) const MARKER: &str = "<!-- mdbook-notabene gate -->";

/// `s` as a Markdown code span that a table cell can hold.
pub(super) fn code(s: &str) -> String {
    let visible: String = s
        .chars()
        .filter(|c| !c.is_control() || c.is_whitespace())
        .collect();
    let flat = one_line(&visible, 160).replace('|', "\\|");
    if flat.is_empty() {
        return String::new();
    }
    let mut longest = 0;
    let mut run = 0;
    for c in flat.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    format!("{fence} {flat} {fence}")
}

/// A link whose destination cannot end early: `<`, `>`, spaces and the like percent-encoded.
fn link(label: &str, url: Option<&str>) -> String {
    match url {
        Some(u) => {
            let safe: String = u
                .chars()
                .flat_map(|c| match c {
                    '<' | '>' | ' ' | '(' | ')' | '|' | '"' | '\\' | '`' => {
                        format!("%{:02X}", c as u32).chars().collect::<Vec<_>>()
                    }
                    c if c.is_control() => Vec::new(),
                    c => vec![c],
                })
                .collect();
            format!("[{label}](<{safe}>)")
        }
        None => label.to_string(),
    }
}

/// The comment body.
pub(super) fn render(report: &GateReport) -> String {
    let mut out = format!("{MARKER}\n## Review gate\n\n");
    let v = verdict(report);
    let v = v.strip_prefix("notabene: the").unwrap_or(&v);
    out.push_str(&format!(
        "**The{}** — {} page(s) {}.\n\n",
        v.replace('*', "\\*"),
        report.pages.len(),
        compared(report)
    ));
    if report.pages.is_empty() {
        out.push_str("No page this change touches has a review comment to report.\n");
        return out;
    }
    out.push_str("| Page | File |");
    for k in Kind::ALL {
        out.push_str(&format!(" {} |", k.as_str()));
    }
    out.push_str("\n|---|---|");
    out.push_str(&"---:|".repeat(Kind::ALL.len()));
    out.push('\n');
    for p in &report.pages {
        out.push_str(&format!(
            "| {} | {} |",
            link(&code(&p.chapter), p.link.as_deref()),
            code(&p.file)
        ));
        for n in p.counts {
            out.push_str(&format!(" {n} |"));
        }
        out.push('\n');
    }
    for p in &report.pages {
        let here: Vec<_> = report
            .findings
            .iter()
            .filter(|f| f.page == p.page)
            .collect();
        if here.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "\n### {}\n\n| Finding | Comment | Line | Author | First message |\n|---|---|---:|---|---|\n",
            code(&p.chapter)
        ));
        for f in here {
            let mark = if f.fails { "✗" } else { "·" };
            out.push_str(&format!(
                "| {mark} {} | {} | {} | {} | {} |\n",
                f.kind.as_str(),
                link(&code(&f.id), f.link.as_deref()),
                f.line,
                code(f.author_name()),
                code(&f.message)
            ));
        }
    }
    out
}
