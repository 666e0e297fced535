//! JUnit XML: one test suite, one test case per finding (class: its file; name: its kind,
//! comment and line). A finding of a kind that fails the gate is a `<failure>`; the others are
//! test cases that pass, with what was found as their output. Comment text is escaped for
//! XML, and characters XML 1.0 cannot hold are dropped.

use crate::apps::ops::gate::GateReport;

/// `s` as XML character data or an attribute value: HTML's escapes (`&`, `<`, `>`, `"`, `'`),
/// which XML reads the same, tab, CR and LF as character references (an attribute keeps them),
/// and the characters XML 1.0 cannot hold left out.
pub(super) fn escape(s: &str) -> String {
    let allowed: String = s
        .chars()
        .filter(|&c| (c as u32) >= 0x20 || matches!(c, '\t' | '\n' | '\r'))
        .filter(|&c| c != '\u{FFFE}' && c != '\u{FFFF}')
        .collect();
    notabene_core::escape::escape_html(&allowed)
        .replace('\t', "&#9;")
        .replace('\n', "&#10;")
        .replace('\r', "&#13;")
}

/// The report as JUnit XML.
pub(super) fn render(report: &GateReport) -> String {
    let failures = report.findings.iter().filter(|f| f.fails).count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&format!(
        "<testsuites name=\"mdbook-notabene gate\" tests=\"{n}\" failures=\"{failures}\">\n  <testsuite name=\"mdbook-notabene gate\" tests=\"{n}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\">\n",
        n = report.findings.len()
    ));
    for f in &report.findings {
        let body = f.body();
        out.push_str(&format!(
            "    <testcase classname=\"{file}\" name=\"{kind} {id} (line {line})\" file=\"{file}\" line=\"{line}\">\n",
            file = escape(&f.file),
            kind = f.kind.as_str(),
            id = escape(&f.id),
            line = f.line
        ));
        if f.fails {
            out.push_str(&format!(
                "      <failure type=\"{}\" message=\"{}\">{}</failure>\n",
                f.kind.as_str(),
                escape(&format!(
                    "{}: {}",
                    f.kind.title(),
                    super::one_line(&f.message, 200)
                )),
                escape(&body)
            ));
        } else {
            out.push_str(&format!(
                "      <system-out>{}</system-out>\n",
                escape(&format!("{}\n{body}", f.kind.title()))
            ));
        }
        out.push_str("    </testcase>\n");
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}
