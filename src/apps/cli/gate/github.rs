//! GitHub workflow commands: one annotation per finding, `::error` for a kind that fails the
//! gate and `::warning` for the others, on the finding's file and lines. The runner reads a
//! command per line: the message is escaped as its data (`%`, CR, LF) and every property as a
//! property (those, and `:` and `,`), so no comment text can end a command or add a property.
//! (GitHub shows 10 annotations of each level per step; the summary lists every finding.)

use super::one_line;
use crate::apps::ops::gate::GateReport;

/// A workflow command's data escaped as the runner unescapes it.
pub(super) fn data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value escaped as the runner unescapes it.
pub(super) fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

/// The annotations, one line each.
pub(super) fn render(report: &GateReport) -> String {
    let mut out = String::new();
    for f in &report.findings {
        let level = if f.fails { "error" } else { "warning" };
        let title = format!("{} ({})", f.kind.title(), f.id);
        out.push_str(&format!(
            "::{level} file={},line={},endLine={},title={}::{}\n",
            property(&f.file),
            f.line,
            f.end_line,
            property(&one_line(&title, 200)),
            data(&f.body())
        ));
    }
    out
}
