//! Island patching: a change of comment files alone reaches the served chapters at once, without
//! waiting for a rebuild. The chapter's data island in the built HTML is rewritten from the store
//! — kept entries take the comment's new fields and keep their anchoring, new comments come in as
//! `anchoring.status: "pending"` with their whole anchor (the client finds and marks their quote),
//! removed ones go — and the file is replaced atomically. The full rebuild that follows anchors
//! them properly.

use crate::Result;
use crate::util::payload;
use notabene_core::escape::escape_html;
use notabene_core::say_err;
use notabene_store::json::{ObjectWriter, write_js_compact};
use notabene_store::{Comment, Store};
use notabene_store::{Scope, Status};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// The pages whose comment files differ between `before` and `after` (paths under the store,
/// each with what tells its versions apart),
/// or `None` when anything else changed too (a chapter, the journal, `meta.json`, the
/// book's config): then only a rebuild will do.
pub(super) fn changed_pages<V: PartialEq>(
    before: &BTreeMap<PathBuf, V>,
    after: &BTreeMap<PathBuf, V>,
    store: &Path,
) -> Option<Changes> {
    let mut pages = Changes::new();
    let differs = before
        .iter()
        .filter(|(p, v)| after.get(*p) != Some(*v))
        .map(|(p, _)| p)
        .chain(after.keys().filter(|p| !before.contains_key(*p)));
    for path in differs {
        let rel = path.strip_prefix(store).ok()?;
        let rel = notabene_core::slash_path(rel);
        let (dir, name) = rel.rsplit_once('/')?;
        // `<page>/<id>.json` only: the journal, `meta.json` and legacy arrays rebuild.
        if !name.ends_with(".json") || dir.is_empty() {
            return None;
        }
        let stem = name.trim_end_matches(".json").to_string();
        let kind = match (before.contains_key(path), after.contains_key(path)) {
            (false, _) => FileChange::Created,
            (true, false) => FileChange::Removed,
            (true, true) => FileChange::Changed,
        };
        if let Some(keys) = pages
            .entry(dir.to_string())
            .or_insert_with(|| Some(BTreeMap::new()))
        {
            keys.insert(stem, kind);
        }
    }
    Some(pages)
}

/// What to refresh in a page's island: every comment (read from the page's files), or only
/// the comments whose files are `<page>/<key>.json` (key: the id as its file is named — what
/// the API wrote, or the files a poll saw change).
pub(super) type Changes = BTreeMap<String, Option<BTreeMap<String, FileChange>>>;

/// What happened to a comment file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FileChange {
    /// A new comment: it joins the island.
    Created,
    /// An existing one changed: its entry is updated (never added: a comment missing from
    /// this island is shown on another page, where it was followed).
    Changed,
    /// It was deleted: its entry goes.
    Removed,
}

/// Rewrites the island of each page in `changes` that the site at `site` has a chapter for.
/// Returns how many chapters were patched.
pub(super) fn patch_islands(
    site: &Path,
    chapters: &BTreeMap<String, Vec<String>>,
    store: &Store,
    space: &str,
    changes: &Changes,
) -> Result<usize> {
    let mut patched = 0;
    for (page, keys) in changes {
        let Some(files) = chapters.get(page) else {
            continue;
        };
        // A page with a legacy array file is read whole (its members share one file), and
        // so is one whose changed file does not hold the comment its name says.
        let legacy = store.root().join(format!("{page}.json")).is_file();
        let some = keys.as_ref().filter(|_| !legacy).map(|keys| {
            keys.iter()
                .map(|(k, kind)| (k.clone(), *kind, store.read_file_of(page, k)))
                .collect::<Vec<_>>()
        });
        let sure = some.as_ref().is_some_and(|v| {
            v.iter().all(|(k, kind, c)| match c {
                Some(c) => notabene_store::ids::sanitize_id(c.id().unwrap_or_default()) == *k,
                None => *kind == FileChange::Removed,
            })
        });
        let update = match some {
            Some(v) if sure => Update::Some(v),
            _ => match store.load_page(page) {
                Ok(all) => Update::All(all),
                Err(e) => {
                    say_err!("notabene: {e}");
                    continue;
                }
            },
        };
        for html in files {
            let path = site.join(html);
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let Some(new) = patch_html(&text, page, space, &update).filter(|n| *n != text) else {
                continue;
            };
            let tmp = path.with_extension("html.nb-patch");
            match std::fs::write(&tmp, new).and_then(|()| std::fs::rename(&tmp, &path)) {
                Ok(()) => patched += 1,
                Err(e) => {
                    let _ = std::fs::remove_file(&tmp);
                    say_err!("notabene: cannot patch: {e} ({})", path.display());
                }
            }
        }
    }
    Ok(patched)
}

/// The comments an island is patched with.
enum Update {
    /// All the page's comments, in store order.
    All(Vec<Comment>),
    /// These file keys only: what happened, and the comment its file holds now (`None`:
    /// gone).
    Some(Vec<(String, FileChange, Option<Comment>)>),
}

/// `html` with the island of `page` brought up to `update`; `None` when the page has no
/// island or it does not parse.
fn patch_html(html: &str, page: &str, space: &str, update: &Update) -> Option<String> {
    let attrs = format!(" data-nb-page=\"{}\"", escape_html(page));
    let found = payload::find_data_script(html, "nb-data", &attrs)?;
    let mut island: serde_json::Map<String, Value> = serde_json::from_str(&found.json).ok()?;
    let old: Vec<Value> = island
        .get("comments")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let id_of = |c: &Value| c.get("id").and_then(Value::as_str).map(str::to_string);
    let anchoring_of = |c: &Comment, kept: Option<&Value>| {
        let fresh = || {
            let status = if c.scope() == Some(Scope::Page) {
                "page"
            } else {
                "pending"
            };
            serde_json::json!({ "status": status })
        };
        match kept.and_then(|e| e.get("anchoring")) {
            // A resolved comment the build did not look for, live again (reopened).
            Some(a)
                if a.get("status").and_then(Value::as_str) == Some("not-anchored")
                    && c.status() != Some(Status::Resolved) =>
            {
                fresh()
            }
            Some(a) => a.clone(),
            None => fresh(),
        }
    };
    let mut list: Vec<u8> = vec![b'['];
    let mut first = true;
    let mut push = |v: &[u8]| {
        if !std::mem::take(&mut first) {
            list.push(b',');
        }
        list.extend_from_slice(v);
    };
    match update {
        Update::All(comments) => {
            let by_id: HashMap<String, &Value> =
                old.iter().filter_map(|c| Some((id_of(c)?, c))).collect();
            let stored: BTreeSet<&str> = comments.iter().filter_map(Comment::id).collect();
            // Comments followed here from another page keep the entry the build wrote.
            for c in &old {
                if c.get("page").is_some()
                    && id_of(c).is_some_and(|id| !stored.contains(id.as_str()))
                {
                    push(&serde_json::to_vec(c).ok()?);
                }
            }
            for c in comments {
                let kept = by_id.get(c.id().unwrap_or_default()).copied();
                push(&lean(c, space, &anchoring_of(c, kept)));
            }
        }
        Update::Some(fresh) => {
            let by_key: HashMap<&str, &Option<Comment>> =
                fresh.iter().map(|(k, _, c)| (k.as_str(), c)).collect();
            let mut seen: BTreeSet<String> = BTreeSet::new();
            for e in &old {
                let key = notabene_store::ids::sanitize_id(&id_of(e).unwrap_or_default());
                match by_key.get(key.as_str()) {
                    // Followed here from another page: not what the API wrote on this one.
                    _ if e.get("page").is_some() => push(&serde_json::to_vec(e).ok()?),
                    Some(Some(c)) => push(&lean(c, space, &anchoring_of(c, Some(e)))),
                    Some(None) => {}
                    None => push(&serde_json::to_vec(e).ok()?),
                }
                seen.insert(key);
            }
            for (key, kind, c) in fresh {
                if let Some(c) = c
                    && *kind == FileChange::Created
                    && !seen.contains(key)
                {
                    push(&lean(c, space, &anchoring_of(c, None)));
                }
            }
        }
    }
    list.push(b']');
    island.insert("comments".into(), serde_json::from_slice(&list).ok()?);
    let mut json = Vec::with_capacity(list.len() + 256);
    write_js_compact(&island, &mut json);
    let json = String::from_utf8(json).ok()?;
    // The island keeps the form the build gave it, plain or deflated.
    let limit = if found.deflated { 0 } else { usize::MAX };
    Some(format!(
        "{}{}{}",
        &html[..found.element.start],
        payload::data_script("nb-data", &attrs, &json, limit),
        &html[found.element.end..]
    ))
}

/// A comment in the island's lean form (as `resolve::Lean::Island` writes it: no `page`, no
/// default fields); a pending one keeps its whole anchor, which the client searches with.
fn lean(c: &Comment, space: &str, anchoring: &Value) -> Vec<u8> {
    let m = c.as_map();
    let pending = anchoring.get("status").and_then(Value::as_str) == Some("pending");
    let mut out = Vec::with_capacity(256);
    let mut w = ObjectWriter::new(&mut out);
    for (k, v) in m {
        if crate::model::resolve::lean_skips(m, k, v, space, true) {
            continue;
        }
        match (k.as_str(), v) {
            ("anchor", Value::Object(a)) if !pending => {
                let mut aw = ObjectWriter::new(w.key(k));
                for (ak, av) in a {
                    if ak != "prefix" && ak != "suffix" {
                        aw.member(ak, av);
                    }
                }
                aw.end();
            }
            _ => write_js_compact(v, w.key(k)),
        }
    }
    w.member("anchoring", anchoring);
    w.end();
    out
}

#[cfg(test)]
mod tests {
    use crate::apps::serve::islands::{FileChange, Update, patch_html};
    use crate::util::payload;
    use notabene_store::Comment;
    use serde_json::json;

    #[test]
    fn an_island_takes_new_changed_and_removed_comments() {
        let island = json!({ "version": 1, "page": "p", "comments": [
            { "id": "c_a", "scope": "page", "anchor": null, "thread": [], "status": "open", "anchoring": { "status": "page" } },
            { "id": "c_gone", "scope": "page", "anchor": null, "thread": [], "status": "open", "anchoring": { "status": "page" } }
        ]});
        let html = format!(
            "<p>x</p><script type=\"application/json\" class=\"nb-data\" data-nb-page=\"p\">{island}</script><p>y</p>"
        );
        let a = Comment::from_value(
            json!({ "id": "c_a", "space": "book", "page": "p", "scope": "page", "anchor": null, "thread": [{"body": "x"}], "status": "resolved", "hold": false, "resolution": {"note": ""} }),
        );
        let b = Comment::from_value(
            json!({ "id": "c_b", "space": "book", "page": "p", "scope": "selection", "anchor": {"quote": "q", "prefix": "a ", "suffix": " b", "section": null}, "thread": [], "status": "open", "hold": false, "resolution": null }),
        );
        let out = patch_html(&html, "p", "book", &Update::All(vec![a.clone(), b.clone()])).unwrap();
        assert!(out.starts_with("<p>x</p><script") && out.ends_with("</script><p>y</p>"));
        let start = out.find("\">").unwrap() + 2;
        let end = out.find("</script>").unwrap();
        let got: serde_json::Value = serde_json::from_str(&out[start..end]).unwrap();
        assert_eq!(
            got["comments"],
            json!([
                { "id": "c_a", "scope": "page", "anchor": null, "thread": [{"body": "x"}], "status": "resolved", "resolution": {"note": ""}, "anchoring": { "status": "page" } },
                { "id": "c_b", "scope": "selection", "anchor": {"quote": "q", "prefix": "a ", "suffix": " b", "section": null}, "thread": [], "status": "open", "anchoring": { "status": "pending" } }
            ])
        );
        assert_eq!(got["page"], "p");
        // The same by ids: c_gone removed, c_a changed, c_b added.
        let by_ids = Update::Some(vec![
            ("c_gone".into(), FileChange::Removed, None),
            ("c_a".into(), FileChange::Changed, Some(a)),
            ("c_b".into(), FileChange::Created, Some(b.clone())),
        ]);
        assert_eq!(patch_html(&html, "p", "book", &by_ids).unwrap(), out);
        // A changed comment this island does not show (followed elsewhere) is not added.
        let other = Update::Some(vec![("c_b".into(), FileChange::Changed, Some(b))]);
        assert!(
            !patch_html(&html, "p", "book", &other)
                .unwrap()
                .contains("c_b")
        );
        // A deflated island (a big book's) is patched the same, and stays deflated.
        let packed = format!(
            "<p>x</p>{}<p>y</p>",
            payload::data_script("nb-data", " data-nb-page=\"p\"", &island.to_string(), 0)
        );
        let out = patch_html(&packed, "p", "book", &by_ids).unwrap();
        let found = payload::find_data_script(&out, "nb-data", " data-nb-page=\"p\"").unwrap();
        assert!(found.deflated);
        assert!(out.starts_with("<p>x</p><script") && out.ends_with("</script><p>y</p>"));
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&found.json).unwrap(),
            got
        );
    }
}
