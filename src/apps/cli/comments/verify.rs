//! `comments verify`: the store audit (contract findings, levels, exit codes) in human or JSON
//! form.

use crate::Result;
use crate::apps::cli::{Ctx, say, say_err};
use crate::base::store::{journal, json, verify};
use crate::model::book::pages;
use serde_json::json;

pub(super) fn verify_cmd(ctx: &Ctx, as_json: bool) -> Result<i32> {
    let store = &ctx.store;
    if !store.exists() {
        say_err!(
            "notabene: no store at {}. Run `notabene init` first.",
            store.root().display()
        );
        return Ok(2);
    }
    // verify reads even a newer store: reporting store-schema-newer is its job.
    let snap = store.load_unchecked()?;
    let journal = journal::read(store);
    let meta = store.meta();
    let checker = ctx.book.as_ref().map(pages::PageIds::new);
    let exists = |page: &str| -> bool {
        match &checker {
            Some(ids) => !ids.owns(page) || ids.source_file(page).is_some(),
            None => true,
        }
    };
    let mut findings = verify::verify(
        &snap,
        &journal,
        &meta,
        checker.as_ref().map(|_| &exists as &dyn Fn(&str) -> bool),
    );
    findings.extend(crate::apps::ops::suggestions::interrupted(
        store,
        ctx.book.as_ref(),
    ));
    let errors = findings
        .iter()
        .filter(|f| f.level == verify::Level::Error)
        .count();
    let warnings = findings.len() - errors;
    let skipped = snap.not_utf8.iter().filter(|n| !n.dir).count();
    let checked_comments = snap.records.len() + snap.unreadable.len() + skipped;
    let checked_journal = journal.entries().len();
    if as_json {
        let report = json!({
            "version": 1,
            "store": ctx.show(store.root()),
            "checked": { "comments": checked_comments, "journal": checked_journal },
            "errors": errors,
            "warnings": warnings,
            "findings": findings,
        });
        print!("{}", json::to_js_pretty(&report));
    } else {
        for f in &findings {
            let mark = if f.level == verify::Level::Error {
                "✗"
            } else {
                "!"
            };
            match &f.file {
                Some(file) => say!("{mark} {file}: {}  [{}]", f.message, f.code),
                None => say!("{mark} {}  [{}]", f.message, f.code),
            }
        }
        say!(
            "notabene verify: {checked_comments} comment(s), {checked_journal} journal entr(ies) — {errors} error(s), {warnings} warning(s)."
        );
    }
    Ok(verify::exit_code(&findings))
}
