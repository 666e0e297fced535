//! `journal add` (one entry on stdin, validated, appended atomically and idempotently) and `journal
//! ls`.

use super::{Ctx, say};
use crate::{Error, Result};
use clap::Subcommand;
use notabene_store::journal;
use notabene_store::json;
use serde_json::Value;
use std::io::Read;

/// What `journal add --help` says of the entry it reads.
const ADD_HELP: &str = "\
The entry is one JSON object on stdin:
  {\"id\": \"j-…\" (optional: generated when absent),
   \"date\": \"YYYY-MM-DD\" (optional: today),
   \"title\": \"what was done\", \"summary\": \"why\" (a title, a summary or both),
   \"changes\": [{\"page\": \"<page id>\", \"commentIds\": [\"c_…\"],
                \"what\": \"the change\", \"why\": \"the reason\",
                \"ref\": \"<commit>\" (optional)}]}
changes[] has one record per page touched (at least one); what, why and ref are strings;
other keys are kept as given. Adding the same entry again changes nothing; another entry
under an id the journal holds is refused. Close the comments it lists with `comments done ID… --journal <id>`.
Example:
  echo '{\"title\":\"Named the policy\",\"changes\":[{\"page\":\"src/intro\",\"commentIds\":[\"c_abc\"],\"what\":\"Named it\",\"why\":\"Asked\"}]}' | notabene journal add --json";

#[derive(Subcommand, Debug)]
pub(crate) enum JournalCmd {
    /// Append one entry read as JSON from stdin.
    #[command(after_help = ADD_HELP)]
    Add {
        /// Print `{"id": …}`.
        #[arg(long)]
        json: bool,
    },
    /// List entries, newest first.
    Ls {
        /// The entries as JSON, newest first (journal.json holds them oldest first).
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
                let newest_first: Vec<&Value> = entries.iter().rev().collect();
                print!("{}", json::to_js_pretty(&newest_first));
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
