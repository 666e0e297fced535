//! Identifiers, timestamps and authors in the exact formats of the store contract: comment ids
//! `c_<base36 ms><4 base36>`, journal ids `j-YYYY-MM-DD-<6 base36>`, timestamps
//! `2026-07-28T09:00:00.000Z`, authors `Name <email>`.

use crate::{Error, Result};
use chrono::{DateTime, SecondsFormat, Utc};
use notabene_core::base36;
use std::path::Path;
use std::process::Command;

/// Environment variable that pins "now" (an RFC 3339 instant) for reproducible runs, in the
/// spirit of `SOURCE_DATE_EPOCH`.
pub(crate) const NOW_ENV: &str = "NOTABENE_NOW";

/// The current instant, or the one pinned by `NOTABENE_NOW`.
pub fn now() -> Result<DateTime<Utc>> {
    match std::env::var(NOW_ENV) {
        Ok(v) if !v.trim().is_empty() => DateTime::parse_from_rfc3339(v.trim())
            .map(|d| d.with_timezone(&Utc))
            .map_err(|e| {
                Error::new(format!(
                    "{NOW_ENV} is not an RFC 3339 instant: {e} ({NOW_ENV})"
                ))
            }),
        _ => Ok(Utc::now()),
    }
}

/// `toISOString()` format: UTC, milliseconds, `Z`.
pub fn iso(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// The journal date format `YYYY-MM-DD` (UTC).
pub fn date(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d").to_string()
}

fn random_base36(len: usize) -> String {
    (0..len)
        .map(|_| char::from(b"0123456789abcdefghijklmnopqrstuvwxyz"[fastrand::usize(..36)]))
        .collect()
}

/// A new comment id: `c_` + milliseconds since the epoch in base 36 + 4 random base-36 chars.
pub fn comment_id(t: DateTime<Utc>) -> String {
    let ms = u64::try_from(t.timestamp_millis()).unwrap_or(0);
    format!("c_{}{}", base36(ms), random_base36(4))
}

/// A new journal entry id: `j-YYYY-MM-DD-` + 6 random base-36 chars.
pub fn journal_id(t: DateTime<Utc>) -> String {
    format!("j-{}-{}", date(t), random_base36(6))
}

/// The file name of a comment: its id with every character outside `[A-Za-z0-9_-]` removed.
pub fn sanitize_id(id: &str) -> String {
    id.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .collect()
}

/// Composes `Name <email>` (or `Name` without an email); an empty name yields `you`.
pub(crate) fn compose_author(name: &str, email: &str) -> String {
    let name = name.trim();
    let email = email.trim();
    let name = if name.is_empty() { "you" } else { name };
    if email.is_empty() {
        name.to_string()
    } else {
        format!("{name} <{email}>")
    }
}

/// The display name of an author string: the part before a trailing `<…>`, else the whole.
pub fn display_name(author: &str) -> &str {
    let t = author.trim_end();
    if t.ends_with('>')
        && let Some(open) = t.rfind('<')
    {
        let inner = &t[open + 1..t.len() - 1];
        if !inner.is_empty() && !inner.contains(['<', '>']) {
            return t[..open].trim_end();
        }
    }
    author
}

/// The mark an agent's name carries in a thread (`Claude Code (agent)`): the store contract's
/// author is a string, and this is how a reader tells an agent's message from a person's.
pub(crate) const AGENT_MARK: &str = " (agent)";

/// `author` (a name, or `Name <email>`) marked as an agent's: `Name (agent) <email>`; an author
/// that carries the mark already is returned as it is.
pub fn agent_author(author: &str) -> String {
    let author = author.trim();
    let (name, email) = match author.rsplit_once(" <") {
        Some((n, e)) if e.ends_with('>') => (n.trim(), Some(e)),
        _ => (author, None),
    };
    if name.ends_with(AGENT_MARK.trim_start()) {
        return author.to_string();
    }
    match email {
        Some(e) => format!("{name}{AGENT_MARK} <{e}"),
        None => format!("{name}{AGENT_MARK}"),
    }
}

/// The author of a CLI write: `--author`, else `NOTABENE_AUTHOR` (+ `NOTABENE_AUTHOR_EMAIL`),
/// else `git config user.name` / `user.email` run in `dir`, else `you`.
pub fn resolve_author(flag: Option<&str>, dir: &Path) -> String {
    if let Some(a) = flag.map(str::trim).filter(|a| !a.is_empty()) {
        return a.to_string();
    }
    if let Ok(name) = std::env::var("NOTABENE_AUTHOR")
        && !name.trim().is_empty()
    {
        let email = std::env::var("NOTABENE_AUTHOR_EMAIL").unwrap_or_default();
        return compose_author(&name, &email);
    }
    let git = |key: &str| -> String {
        Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["config", key])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default()
    };
    compose_author(&git("user.name"), &git("user.email"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        let t = DateTime::parse_from_rfc3339("2026-07-28T09:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(iso(t), "2026-07-28T09:00:00.000Z");
        assert_eq!(date(t), "2026-07-28");
        let id = comment_id(t);
        assert!(id.starts_with(&format!("c_{}", base36(t.timestamp_millis() as u64))));
        assert_eq!(id.len(), 2 + base36(t.timestamp_millis() as u64).len() + 4);
        let j = journal_id(t);
        assert!(j.starts_with("j-2026-07-28-") && j.len() == "j-2026-07-28-".len() + 6);
        assert_eq!(base36(35), "z");
        assert_eq!(base36(36), "10");
    }

    #[test]
    fn agents_are_marked_once() {
        assert_eq!(agent_author("Claude Code"), "Claude Code (agent)");
        assert_eq!(agent_author("Ada <a@x.org>"), "Ada (agent) <a@x.org>");
        assert_eq!(
            agent_author("Ada (agent) <a@x.org>"),
            "Ada (agent) <a@x.org>"
        );
        assert_eq!(agent_author("Claude Code (agent)"), "Claude Code (agent)");
    }

    #[test]
    fn authors() {
        assert_eq!(compose_author(" Alex ", " a@x.org "), "Alex <a@x.org>");
        assert_eq!(compose_author("Alex", ""), "Alex");
        assert_eq!(compose_author("", ""), "you");
        assert_eq!(
            display_name("Alex Martin <alex@example.com>"),
            "Alex Martin"
        );
        assert_eq!(display_name("agent"), "agent");
        assert_eq!(display_name("<>"), "<>");
        assert_eq!(sanitize_id("c_1.2/../x y"), "c_12xy");
    }
}
