//! Page-id validation: the store's `page` key names a directory under the store, so an id must not
//! escape it or confuse tools.

use crate::{Result, bail};

/// Refuses page ids that could escape the store or confuse tools: empty ids, absolute paths,
/// backslashes, empty, `.` or `..` segments, `.git` segments (any case: git's own directory,
/// hooks included, on every file system), NUL and other control characters.
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
    } else if page.split('/').any(|s| s.eq_ignore_ascii_case(".git")) {
        Some("it contains a '.git' segment")
    } else if page.split('/').any(|s| s.is_empty() || s == ".") {
        Some("it contains an empty or '.' segment")
    } else {
        None
    };
    reason.map(|r| format!("invalid page id {page:?}: {r}"))
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
        ] {
            let e = validate_page_id(bad).unwrap_err();
            assert_eq!(
                e.message(),
                format!("invalid page id {bad:?}: {why} (page)")
            );
        }
    }
}
