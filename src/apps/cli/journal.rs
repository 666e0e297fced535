//! `journal add` (one entry on stdin, validated, appended atomically and idempotently) and `journal
//! ls`.

use super::{Ctx, say};
use crate::base::store::journal;
use crate::base::store::json;
use crate::{Error, Result};
use clap::Subcommand;
use serde_json::Value;
use std::io::Read;

#[derive(Subcommand, Debug)]
pub(crate) enum JournalCmd {
    /// Append one entry read as JSON from stdin.
    Add {
        /// Print `{"id": …}`.
        #[arg(long)]
        json: bool,
    },
    /// List entries, newest first.
    Ls {
        /// The journal array as stored.
        #[arg(long)]
        json: bool,
    },
}

pub(crate) fn run(ctx: &Ctx, cmd: JournalCmd) -> Result<i32> {
    match cmd {
        JournalCmd::Add { json: as_json } => {
            let mut input = String::new();
            std::io::stdin()
                .read_to_string(&mut input)
                .map_err(|e| Error::new(format!("journal add: cannot read stdin: {e} (stdin)")))?;
            let value: Value = serde_json::from_str(&input).map_err(|e| {
                Error::new(format!(
                    "journal add: expected a JSON entry on stdin: {e} (stdin)"
                ))
            })?;
            let added = crate::apps::ops::journal_add(&ctx.store, value)?;
            if as_json {
                // JSON is written as it is, not escaped for the terminal.
                let line = format!("{}\n", serde_json::json!({ "id": added.id }));
                let mut out = std::io::stdout().lock();
                let _ = std::io::Write::write_all(&mut out, line.as_bytes());
            } else {
                say!("{}", added.line);
            }
            Ok(0)
        }
        JournalCmd::Ls { json: as_json } => {
            ctx.store.check_compatible()?;
            let journal = journal::read(&ctx.store);
            let entries = journal.require_entries()?;
            if as_json {
                print!("{}", json::to_js_pretty(entries));
                return Ok(0);
            }
            if entries.is_empty() {
                say!("notabene: the journal is empty.");
            }
            let s = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
            for e in entries.iter().rev() {
                say!(
                    "{}  {}  {}",
                    s(e.get("date")),
                    s(e.get("id")),
                    s(e.get("title"))
                );
                for c in e
                    .get("changes")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let ids: Vec<String> = c
                        .get("commentIds")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect();
                    say!(
                        "  {} — {}  [{}]",
                        s(c.get("page")),
                        s(c.get("what")),
                        ids.join(", ")
                    );
                }
            }
            Ok(0)
        }
    }
}
