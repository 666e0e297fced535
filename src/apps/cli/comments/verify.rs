//! `comments verify`: the store audit of [`crate::apps::ops::audit`] in human or JSON form, with
//! its exit codes (0 clean or warnings, 1 errors, 2 no store).

use crate::Result;
use crate::apps::cli::{Ctx, say, say_err};
use crate::apps::ops::audit;
use notabene_store::{json, verify};

pub(super) fn verify_cmd(ctx: &Ctx, as_json: bool) -> Result<i32> {
    let store = &ctx.store;
    let Some(a) = audit::audit(store, ctx.book.as_ref())? else {
        say_err!(
            "notabene: no store at {}. Run `notabene init` first.",
            store.root().display()
        );
        return Ok(2);
    };
    if as_json {
        print!(
            "{}",
            json::to_js_pretty(&a.to_json(&ctx.show(store.root())))
        );
    } else {
        for f in &a.findings {
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
            "notabene verify: {} comment(s), {} journal entr(ies) — {} error(s), {} warning(s).",
            a.comments,
            a.journal,
            a.errors,
            a.warnings
        );
    }
    Ok(a.exit_code())
}
