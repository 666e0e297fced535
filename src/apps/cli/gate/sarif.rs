//! The gate's report as SARIF 2.1.0, built with the typed `serde-sarif` model: one run of the
//! tool `mdbook-notabene`, a rule per kind (`notabene/open` …), a result per finding with its
//! region and a `partialFingerprints.primaryLocationLineHash` that depends only on the kind and
//! the comment (code scanning keeps one alert per finding across runs and moved lines).

use super::one_line;
use crate::apps::ops::gate::{GateReport, Kind};
use serde_sarif::sarif;
use std::collections::BTreeMap;

/// The rule of `kind`.
fn rule(kind: Kind) -> sarif::ReportingDescriptor {
    sarif::ReportingDescriptor::builder()
        .id(format!("notabene/{}", kind.as_str()))
        .name(kind.title().replace(['\'', ','], "").replace(' ', ""))
        .short_description(
            sarif::MultiformatMessageString::builder()
                .text(kind.title())
                .build(),
        )
        .full_description(
            sarif::MultiformatMessageString::builder()
                .text(kind.help())
                .build(),
        )
        .help(
            sarif::MultiformatMessageString::builder()
                .text(kind.help())
                .build(),
        )
        .build()
}

/// The report as a SARIF log.
pub(super) fn render(report: &GateReport) -> String {
    let results: Vec<sarif::Result> = report
        .findings
        .iter()
        .map(|f| {
            let mut text = format!(
                "{} ({}) — {}: {} [{}]",
                f.kind.title(),
                f.id,
                f.author_name(),
                one_line(&f.message, 500),
                f.detail
            );
            if let Some(link) = &f.link {
                text.push_str(&format!(" {link}"));
            }
            let region = sarif::Region::builder()
                .start_line(f.line as i64)
                .end_line(f.end_line as i64)
                .build();
            let location = sarif::Location::builder()
                .physical_location(
                    sarif::PhysicalLocation::builder()
                        .artifact_location(
                            sarif::ArtifactLocation::builder()
                                .uri(f.file.clone())
                                .build(),
                        )
                        .region(region)
                        .build(),
                )
                .build();
            let mut fingerprints = BTreeMap::new();
            fingerprints.insert(
                "primaryLocationLineHash".to_string(),
                format!("{}:1", f.fingerprint),
            );
            let level = if f.fails {
                sarif::ResultLevel::Error
            } else {
                sarif::ResultLevel::Warning
            };
            let result = sarif::Result::builder()
                .rule_id(format!("notabene/{}", f.kind.as_str()))
                .rule_index(f.kind as i64)
                .level(level)
                .message(sarif::Message::builder().text(text).build())
                .locations(vec![location])
                .partial_fingerprints(fingerprints);
            match &f.link {
                Some(link) => result.hosted_viewer_uri(link.clone()).build(),
                None => result.build(),
            }
        })
        .collect();
    let driver = sarif::ToolComponent::builder()
        .name("mdbook-notabene")
        .information_uri(env!("CARGO_PKG_REPOSITORY"))
        .version(env!("CARGO_PKG_VERSION"))
        .rules(Kind::ALL.map(rule).to_vec())
        .build();
    let run = sarif::Run::builder()
        .tool(sarif::Tool::builder().driver(driver).build())
        .results(results)
        .build();
    let log = sarif::Sarif::builder()
        .schema("https://json.schemastore.org/sarif-2.1.0.json")
        .version(serde_json::json!("2.1.0"))
        .runs(vec![run])
        .build();
    let value = serde_json::to_value(&log).unwrap_or(serde_json::Value::Null);
    let mut s = notabene_store::json::to_js_pretty(&value);
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s
}
