//! The project's MCP configuration, `.mcp.json` at the top of the repository (the file Claude
//! Code, Cursor, VS Code and others read): `init` adds the `notabene` server to it, merging into
//! a file that exists (its other servers and its formatting kept byte for byte, the new member
//! written at the top of `mcpServers`) and never replacing one it finds; `doctor` reports it.
//! Pure text in, text out, plus the one atomic write.

use crate::Result;
use notabene_store::fsx;
use serde_json::Value;
use std::path::Path;

/// The configuration file's name.
pub(crate) const FILE: &str = ".mcp.json";

/// The server's name in `mcpServers`.
pub(crate) const SERVER: &str = "notabene";

/// Whether `text` (a `.mcp.json`) registers the notabene server.
pub(crate) fn has_server(text: &str) -> bool {
    serde_json::from_str::<Value>(text)
        .ok()
        .is_some_and(|v| v["mcpServers"][SERVER].is_object())
}

/// Why a `.mcp.json` is left as it is.
#[derive(Debug)]
pub(crate) enum Unmergeable {
    /// It does not parse.
    NotJson(serde_json::Error),
    /// It is not an object.
    NotAnObject,
    /// Its `mcpServers` is not an object.
    ServersNotAnObject,
    /// Its `mcpServers.notabene` is not an object.
    ServerNotAnObject,
}

impl std::fmt::Display for Unmergeable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unmergeable::NotJson(e) => write!(f, "not valid JSON: {e}"),
            Unmergeable::NotAnObject => f.write_str("not a JSON object"),
            Unmergeable::ServersNotAnObject => f.write_str("its mcpServers is not an object"),
            Unmergeable::ServerNotAnObject => {
                write!(f, "its mcpServers.{SERVER} is not a server object")
            }
        }
    }
}

/// `text` with the notabene server added (`command`, `args`), or `None` when it already has
/// one. An error when `text` is not a JSON object (or its `mcpServers` is not one).
pub(crate) fn with_server(
    text: &str,
    command: &str,
    args: &[String],
) -> std::result::Result<Option<String>, Unmergeable> {
    let v: Value = serde_json::from_str(text).map_err(Unmergeable::NotJson)?;
    let Some(top) = v.as_object() else {
        return Err(Unmergeable::NotAnObject);
    };
    match top.get("mcpServers") {
        Some(servers) if !servers.is_object() => {
            return Err(Unmergeable::ServersNotAnObject);
        }
        Some(servers) => match servers.get(SERVER) {
            Some(s) if s.is_object() => return Ok(None),
            // Another value under the name: writing a second member would not replace it.
            Some(_) => return Err(Unmergeable::ServerNotAnObject),
            None => {}
        },
        None => {}
    }
    let open = text.find('{').ok_or(Unmergeable::NotAnObject)?;
    let server = |inner: &str, unit: &str| {
        let list: Vec<String> = args
            .iter()
            .map(|a| serde_json::to_string(a).unwrap_or_default())
            .collect();
        format!(
            "{{\n{inner}{unit}\"command\": {},\n{inner}{unit}\"args\": [{}]\n{inner}}}",
            serde_json::to_string(command).unwrap_or_default(),
            list.join(", ")
        )
    };
    Ok(Some(match member_object(text, open, "mcpServers") {
        Some(at) => insert_member(text, at, SERVER, &server),
        None => insert_member(text, open, "mcpServers", &|inner: &str, unit: &str| {
            let deeper = format!("{inner}{unit}");
            format!(
                "{{\n{deeper}\"{SERVER}\": {}\n{inner}}}",
                server(&deeper, unit)
            )
        }),
    }))
}

/// Inserts `"key": value` as the first member of the object whose `{` is at `open`, indented
/// as that object's members are (two spaces deeper than its line when it has none).
fn insert_member(
    text: &str,
    open: usize,
    key: &str,
    value: &dyn Fn(&str, &str) -> String,
) -> String {
    let line_start = text[..open].rfind('\n').map_or(0, |i| i + 1);
    let base: String = text[line_start..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    let after = &text[open + 1..];
    let next = after.trim_start();
    let empty = next.starts_with('}');
    let gap = &after[..after.len() - next.len()];
    let inner = match gap.rfind('\n') {
        Some(i) if !empty => gap[i + 1..].to_string(),
        _ => format!("{base}  "),
    };
    let unit = inner
        .strip_prefix(base.as_str())
        .filter(|u| !u.is_empty())
        .unwrap_or("  ")
        .to_string();
    let member = format!("\"{key}\": {}", value(&inner, &unit));
    let rest = if empty {
        format!("\n{base}{}", next)
    } else {
        format!(",{after}")
    };
    format!("{}{{\n{inner}{member}{rest}", &text[..open])
}

/// The byte index of the `{` opening the value of top-level member `key` of the object whose
/// `{` is at `open`, when that value is an object.
fn member_object(text: &str, open: usize, key: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = open + 1;
    let mut depth = 1usize;
    let mut last_string: Option<(usize, usize)> = None;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let start = i;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                last_string = Some((start, i + 1));
            }
            b':' if depth == 1 => {
                if let Some((s, e)) = last_string
                    && serde_json::from_str::<String>(&text[s..e]).ok().as_deref() == Some(key)
                {
                    let rest = &text[i + 1..];
                    let value = i + 1 + (rest.len() - rest.trim_start().len());
                    return (b.get(value) == Some(&b'{')).then_some(value);
                }
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return None;
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Adds the notabene server to `dir/.mcp.json` (created when missing); one line saying what
/// was done. A file that cannot be merged is left as it is, and the line says why.
pub(crate) fn register(dir: &Path, shown: &str, command: &str, args: &[String]) -> Result<String> {
    let path = dir.join(FILE);
    let existing = match std::fs::read(&path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(_) => {
                return Ok(format!(
                    "notabene: warning: {shown} is left as it is (not UTF-8 text): add the notabene server by hand"
                ));
            }
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => "{}\n".to_string(),
        Err(e) => return Err(crate::Error::io("cannot read .mcp.json", &path, e)),
    };
    match with_server(&existing, command, args) {
        Ok(None) => Ok(format!(
            "notabene: {shown} already registers the notabene MCP server."
        )),
        Ok(Some(new)) => {
            fsx::write_atomic(dir, Path::new(FILE), new.as_bytes())?;
            Ok(format!(
                "notabene: registered the notabene MCP server in {shown}."
            ))
        }
        Err(why) => Ok(format!(
            "notabene: warning: {shown} is left as it is ({why}): add the notabene server by hand"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn add(text: &str) -> String {
        with_server(
            text,
            "notabene",
            &["mcp".into(), "--book".into(), "docs".into()],
        )
        .unwrap()
        .unwrap()
    }

    #[test]
    fn a_new_file() {
        assert_eq!(
            add("{}\n"),
            "{\n  \"mcpServers\": {\n    \"notabene\": {\n      \"command\": \"notabene\",\n      \"args\": [\"mcp\", \"--book\", \"docs\"]\n    }\n  }\n}\n"
        );
    }

    #[test]
    fn other_servers_are_kept_byte_for_byte() {
        let text = "{\n    \"mcpServers\": {\n        \"other\": { \"command\": \"x\",\n  \"args\": [ ] }\n    },\n    \"z\": 1\n}";
        let out = add(text);
        assert_eq!(
            out,
            "{\n    \"mcpServers\": {\n        \"notabene\": {\n            \"command\": \"notabene\",\n            \"args\": [\"mcp\", \"--book\", \"docs\"]\n        },\n        \"other\": { \"command\": \"x\",\n  \"args\": [ ] }\n    },\n    \"z\": 1\n}"
        );
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["mcpServers"]["other"]["command"], "x");
        // Already there: nothing to do.
        assert_eq!(with_server(&out, "notabene", &[]).unwrap(), None);
    }

    #[test]
    fn a_file_without_servers_and_a_broken_one() {
        let out = add("{\"$schema\": \"s\"}");
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["$schema"], "s");
        assert_eq!(v["mcpServers"]["notabene"]["args"][2], "docs");
        assert!(
            with_server("{ nope", "notabene", &[])
                .unwrap_err()
                .to_string()
                .starts_with("not valid JSON")
        );
        assert_eq!(
            with_server("[]", "notabene", &[]).unwrap_err().to_string(),
            "not a JSON object"
        );
        assert_eq!(
            with_server("{\"mcpServers\": {\"notabene\": null}}", "notabene", &[])
                .unwrap_err()
                .to_string(),
            "its mcpServers.notabene is not a server object"
        );
    }
}
