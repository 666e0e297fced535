//! Re-check: a resolved comment whose text changed after it was resolved. The point of
//! reference is the commit that last wrote the comment's file (through renames) — what git
//! records of the resolution, whatever the clocks said; a comment resolved in the work tree and
//! not committed yet is resolved now. Its anchored lines are then blamed: a line last changed by
//! a commit that is not that one or one of its ancestors (or by the work tree) changed after.
//! A resolved comment whose text is no longer found is re-checked when its chapter's file
//! changed after.
//!
//! Calls: `model::book::history`.

use super::locate::{Place, Places};
use crate::model::book::history::ChangedBy;

/// Why resolved comment `ci` needs a re-check, or `None`; `store_file` is its store file
/// (store-relative), `place` where it is.
pub(super) fn recheck(
    places: &Places,
    ci: usize,
    place: &Place,
    store_file: &str,
) -> Option<String> {
    let history = places.history?;
    let comment_file = places.store_file(store_file);
    if history.is_dirty(&comment_file) {
        return None;
    }
    let resolved = history.last_commit(&comment_file)?;
    let changed = if place.in_text {
        history.lines_changed_after(&resolved, &place.file, place.line, place.end_line)?
    } else if places.anchors.located[ci].chapter.is_some() {
        history.file_changed_after(&resolved, &place.file)?
    } else {
        return None;
    };
    let what = if place.in_text {
        if place.line == place.end_line {
            format!("line {}", place.line)
        } else {
            format!("lines {}-{}", place.line, place.end_line)
        }
    } else {
        "its file".to_string()
    };
    let by = match changed {
        ChangedBy::Commit(c) => format!("by {}", history.short(&c)),
        ChangedBy::WorkTree => "in the work tree".to_string(),
    };
    Some(format!(
        "resolved in {}; {what} changed since, {by}",
        history.short(&resolved)
    ))
}
