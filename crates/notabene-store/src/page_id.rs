//! Page-id validation: the store's `page` key names a directory under the store, so an id must not
//! escape it or confuse tools.

use crate::{Result, bail};

/// Refuses page ids that could escape the store or confuse tools: empty ids, absolute paths,
/// backslashes, empty, `.` or `..` segments, `.git` segments (any case: git's own directory,
/// hooks included, on every file system), segments Windows reads as a device (see
/// [`windows_device`]), NUL and other control characters.
///
/// A segment is compared as Windows resolves it: trailing dots and spaces dropped, any case —
/// so `.git.`, `.git ` and `.GIT` are all `.git`.
pub fn validate_page_id(page: &str) -> Result<()> {
    match page_id_problem(page) {
        Some(problem) => bail!("{problem} (page)"),
        None => Ok(()),
    }
}

/// Why `page` is refused (`invalid page id "src/../x": it contains a '..' segment`), without
/// a location, for callers that name their own; `None` for a valid id.
pub fn page_id_problem(page: &str) -> Option<String> {
    let reason = if page.is_empty() {
        Some("it is empty")
    } else if page.chars().any(char::is_control) {
        Some("it contains a control character")
    } else if page.contains('\\') {
        Some("it contains a backslash")
    } else if page.starts_with('/') || (page.len() >= 2 && page.as_bytes()[1] == b':') {
        Some("it is an absolute path")
    } else if page.split('/').any(|s| s == "..") {
        Some("it contains a '..' segment")
    } else if page
        .split('/')
        .any(|s| as_windows_reads(s).eq_ignore_ascii_case(".git"))
    {
        Some("it contains a '.git' segment")
    } else if page.split('/').any(|s| s.is_empty() || s == ".") {
        Some("it contains an empty or '.' segment")
    } else if let Some(device) = page.split('/').find_map(windows_device) {
        return Some(format!(
            "invalid page id {page:?}: it contains a segment Windows reads as the device {device}"
        ));
    } else {
        None
    };
    reason.map(|r| format!("invalid page id {page:?}: {r}"))
}

/// A segment as Windows resolves it: its trailing dots and spaces dropped (`.git. ` is `.git`).
fn as_windows_reads(segment: &str) -> &str {
    segment.trim_end_matches(['.', ' '])
}

/// The reserved device names of Windows: a file or directory of that name, in any case and
/// with any extension (`nul.txt`, `Com1.md`), opens the device instead (Windows 10 and older;
/// a checkout there fails or writes to the device). `COM¹`–`COM³` and `LPT¹`–`LPT³` (superscript
/// digits) are devices too, and so are `CONIN$` and `CONOUT$`.
const DEVICES: &[&str] = &[
    "CON",
    "PRN",
    "AUX",
    "NUL",
    "CONIN$",
    "CONOUT$",
    "COM1",
    "COM2",
    "COM3",
    "COM4",
    "COM5",
    "COM6",
    "COM7",
    "COM8",
    "COM9",
    "COM\u{b9}",
    "COM\u{b2}",
    "COM\u{b3}",
    "LPT1",
    "LPT2",
    "LPT3",
    "LPT4",
    "LPT5",
    "LPT6",
    "LPT7",
    "LPT8",
    "LPT9",
    "LPT\u{b9}",
    "LPT\u{b2}",
    "LPT\u{b3}",
];

/// The Windows device (upper case) that `segment` names, if any:
/// its name before the first dot (the rest is an extension Windows ignores for a device), with
/// trailing spaces and dots dropped, compared in any case. `con`, `Com1.md`, `nul.tar.gz`,
/// `aux .txt` are devices; `console`, `com10`, `.con` are not.
pub fn windows_device(segment: &str) -> Option<&'static str> {
    let stem = segment.split('.').next().unwrap_or_default();
    let stem = as_windows_reads(stem);
    DEVICES
        .iter()
        .copied()
        .find(|d| d.eq_ignore_ascii_case(stem))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_id_validation() {
        for ok in [
            "src/README",
            "docs/src/guide/setup.fr",
            "src/a b/ü",
            "src/.github/x",
            "src/x.git",
            "src/console",
            "src/com10",
            "src/.con",
            "src/lpt",
            "src/git.",
        ] {
            validate_page_id(ok).unwrap();
        }
        for (bad, why) in [
            ("", "it is empty"),
            ("src/../etc", "it contains a '..' segment"),
            ("/etc/passwd", "it is an absolute path"),
            ("C:/x", "it is an absolute path"),
            ("src\\x", "it contains a backslash"),
            ("src/x\0y", "it contains a control character"),
            ("src//x", "it contains an empty or '.' segment"),
            ("src/./x", "it contains an empty or '.' segment"),
            (".git/hooks", "it contains a '.git' segment"),
            ("src/.GIT", "it contains a '.git' segment"),
            ("a/.Git/b", "it contains a '.git' segment"),
            ("src/.git.", "it contains a '.git' segment"),
            ("src/.git ", "it contains a '.git' segment"),
            (".git. ./x", "it contains a '.git' segment"),
            (
                "con",
                "it contains a segment Windows reads as the device CON",
            ),
            (
                "src/Com1.md",
                "it contains a segment Windows reads as the device COM1",
            ),
            (
                "src/nul.tar.gz",
                "it contains a segment Windows reads as the device NUL",
            ),
            (
                "src/aux .txt",
                "it contains a segment Windows reads as the device AUX",
            ),
            (
                "src/prn./x",
                "it contains a segment Windows reads as the device PRN",
            ),
            (
                "lpt9/x",
                "it contains a segment Windows reads as the device LPT9",
            ),
            (
                "src/com\u{b9}",
                "it contains a segment Windows reads as the device COM\u{b9}",
            ),
            (
                "src/conout$",
                "it contains a segment Windows reads as the device CONOUT$",
            ),
        ] {
            let e = validate_page_id(bad).unwrap_err();
            assert_eq!(
                e.message(),
                format!("invalid page id {bad:?}: {why} (page)")
            );
        }
    }
}
