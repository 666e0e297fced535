//! `notabene gate`: the review state of the pages a change touches ([`ops::gate`]), written in
//! the format a CI reads — plain text, JSON, GitHub workflow commands (and the job summary),
//! a GitLab Code Quality report, SARIF 2.1.0, JUnit XML, or a pull-request comment in
//! Markdown — and exit 1 when a finding of a `--fail-on` kind exists.
//!
//! Every format says the same findings in the same order; comment text is untrusted and each
//! format escapes it its own way (workflow-command escapes, JSON, XML, Markdown code spans,
//! the terminal's). Owns: the arguments and the formats. Calls: `ops::gate`.

mod github;
mod junit;
mod markdown;
mod sarif;
mod text;

use super::{Ctx, say_err};
use crate::apps::ops::gate::{self, Base, GateOptions, GateReport, Kind, Links};
use crate::{Error, Result, bail};
use clap::{Args, ValueEnum};
use std::collections::BTreeSet;

#[derive(Args, Debug)]
pub(crate) struct GateArgs {
    /// Compare with the merge base of HEAD and REV (default: origin/$GITHUB_BASE_REF in a
    /// GitHub pull request, $CI_MERGE_REQUEST_DIFF_BASE_SHA in a GitLab merge request, else
    /// origin/HEAD).
    #[arg(long, value_name = "REV", conflicts_with = "all")]
    base: Option<String>,
    /// Every page of the book, not only the pages the change touches.
    #[arg(long)]
    all: bool,
    /// Exit 1 when a finding of these kinds exists: a comma-separated list of open, addressed,
    /// orphan, fuzzy, recheck; or none.
    #[arg(long, value_name = "LIST", default_value = "open,orphan")]
    fail_on: String,
    /// The report's format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Link each finding to the comment in the book published at URL.
    #[arg(long, value_name = "URL", conflicts_with = "hub_url")]
    site_url: Option<String>,
    /// Link each finding to the comment on the review server at URL (`mdbook-notabene hub`),
    /// in the book of --branch.
    #[arg(long, value_name = "URL")]
    hub_url: Option<String>,
    /// The branch --hub-url serves (default: $GITHUB_HEAD_REF,
    /// $CI_MERGE_REQUEST_SOURCE_BRANCH_NAME, $CI_COMMIT_REF_NAME, else the checked-out branch).
    #[arg(long, value_name = "NAME", requires = "hub_url")]
    branch: Option<String>,
    /// Anchor the book without running its preprocessor commands or reading outside the
    /// repository, as the review server builds a branch: for a branch you do not trust.
    #[arg(long)]
    inert: bool,
}

/// The report's formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Lines for a person (the default).
    Text,
    /// The report as JSON (what the MCP `gate` tool answers).
    Json,
    /// GitHub workflow commands (annotations), and the Markdown summary appended to
    /// $GITHUB_STEP_SUMMARY when it is set.
    Github,
    /// A GitLab Code Quality report.
    Gitlab,
    /// SARIF 2.1.0, for code scanning.
    Sarif,
    /// JUnit XML: one test case per finding.
    Junit,
    /// A pull-request comment body: a table per page, the same for the same state.
    Markdown,
}

/// The kinds a `--fail-on` list names.
pub(crate) fn parse_fail_on(list: &str) -> Result<BTreeSet<Kind>> {
    let mut kinds = BTreeSet::new();
    for name in list.split(',').map(str::trim) {
        match name {
            "none" => {}
            _ => match Kind::parse(name) {
                Some(k) => {
                    kinds.insert(k);
                }
                None => bail!(
                    "unknown kind {name:?}: expected open, addressed, orphan, fuzzy, recheck or none (--fail-on)"
                ),
            },
        }
    }
    if list.split(',').any(|n| n.trim() == "none") && !kinds.is_empty() {
        bail!("none cannot be combined with other kinds (--fail-on)");
    }
    Ok(kinds)
}

/// `url` when it is an absolute http(s) URL without spaces or control characters.
fn checked_url(url: &str, flag: &str) -> Result<String> {
    let ok = (url.starts_with("https://") || url.starts_with("http://"))
        && url.len() > "https://".len()
        && !url.chars().any(|c| c.is_whitespace() || c.is_control());
    if !ok {
        return Err(Error::new(format!(
            "{url:?} is not an http(s) URL ({flag})"
        )));
    }
    Ok(url.to_string())
}

/// The branch the hub serves this change as.
fn branch(ctx: &Ctx, given: Option<&str>) -> Result<String> {
    if let Some(b) = given {
        return Ok(b.to_string());
    }
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    if let Some(b) = [
        "GITHUB_HEAD_REF",
        "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME",
        "CI_COMMIT_REF_NAME",
    ]
    .iter()
    .find_map(|k| env(k))
    {
        return Ok(b);
    }
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(ctx.work_dir())
        .args(["symbolic-ref", "--quiet", "--short", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|b| !b.is_empty());
    out.ok_or_else(|| {
        Error::new("no branch checked out to link the hub's book of; pass --branch NAME (--branch)")
    })
}

/// The options `a` asks for.
fn options(ctx: &Ctx, a: &GateArgs) -> Result<GateOptions> {
    let links = match (&a.site_url, &a.hub_url) {
        (Some(u), _) => Some(Links::Site(checked_url(u, "--site-url")?)),
        (None, Some(u)) => Some(Links::Hub {
            url: checked_url(u, "--hub-url")?,
            branch: branch(ctx, a.branch.as_deref())?,
        }),
        (None, None) => None,
    };
    Ok(GateOptions {
        base: match (&a.base, a.all) {
            (_, true) => Base::All,
            (Some(rev), false) => Base::Rev(rev.clone()),
            (None, false) => Base::Default,
        },
        links,
        fail_on: parse_fail_on(&a.fail_on)?,
        inert: a.inert,
    })
}

pub(crate) fn gate(ctx: &Ctx, a: &GateArgs) -> Result<i32> {
    let opts = options(ctx, a)?;
    let Some(book) = &ctx.book else {
        bail!("the gate needs a book: no book.toml found (pass --book DIR)");
    };
    let report = gate::gate(book, &ctx.store, &opts)?;
    for note in &report.notes {
        say_err!("{note}");
    }
    let out = match a.format {
        Format::Text => {
            text::print(&report);
            None
        }
        Format::Json => Some(json(&report)),
        Format::Github => {
            append_step_summary(&markdown::render(&report))?;
            Some(github::render(&report))
        }
        Format::Gitlab => Some(gitlab(&report)),
        Format::Sarif => Some(sarif::render(&report)),
        Format::Junit => Some(junit::render(&report)),
        Format::Markdown => Some(markdown::render(&report)),
    };
    if let Some(out) = out {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        // A closed pipe is not an error of the gate's.
        let _ = stdout
            .write_all(out.as_bytes())
            .and_then(|()| stdout.flush());
        if report.failed {
            say_err!("{}", text::verdict(&report));
        }
    }
    Ok(i32::from(report.failed))
}

/// The report as JSON: what the MCP `gate` tool answers.
pub(crate) fn json(report: &GateReport) -> String {
    let mut s = notabene_store::json::to_js_pretty(
        &serde_json::to_value(report).unwrap_or(serde_json::Value::Null),
    );
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

/// A GitLab Code Quality report: a JSON array, one object per finding, with the fields GitLab
/// reads (`description`, `check_name`, `fingerprint`, `severity`, `location.path`,
/// `location.lines.begin`).
fn gitlab(report: &GateReport) -> String {
    let list: Vec<serde_json::Value> = report
        .findings
        .iter()
        .map(|f| {
            serde_json::json!({
                "description": format!("{} ({}): {}: {}", f.kind.title(), f.id, f.author_name(), one_line(&f.message, 300)),
                "check_name": format!("notabene/{}", f.kind.as_str()),
                "fingerprint": f.fingerprint,
                "severity": if f.fails { "major" } else { "minor" },
                "location": { "path": f.file, "lines": { "begin": f.line, "end": f.end_line } },
            })
        })
        .collect();
    let mut s = notabene_store::json::to_js_pretty(&serde_json::Value::Array(list));
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

/// `text` on one line (runs of whitespace, newlines included, as one space), cut to `max`
/// characters with an ellipsis.
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let mut cut: String = flat.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// Appends `markdown` to the file `$GITHUB_STEP_SUMMARY` names, when it is set.
fn append_step_summary(markdown: &str) -> Result<()> {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) else {
        return Ok(());
    };
    use std::io::Write;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(markdown.as_bytes()))
        .map_err(|e| {
            Error::new(format!(
                "cannot append the summary to {}: {e} (GITHUB_STEP_SUMMARY)",
                std::path::Path::new(&path).display()
            ))
        })
}
