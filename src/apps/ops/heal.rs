//! `anchors heal`: new anchors for confident, unambiguous fuzzy text anchors, and comments
//! followed to another page re-keyed to it. [`plan`] reads the anchoring only; [`write()`]
//! writes the plan into the store, locked, each file atomically (a move writes the new file
//! before it removes the old one).

use crate::model::resolve::BookAnchors;
use crate::{Result, bail};
use notabene_anchoring::AnchorStatus;
use notabene_store::{Record, Scope, Store, ids};
use serde_json::Value;

/// A comment followed to another page: moved from `from` to `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealMove {
    /// The comment.
    pub id: String,
    /// The page it is stored on.
    pub from: String,
    /// The page it was found on.
    pub to: String,
}

/// What a heal changes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Heal {
    /// New anchors (id, anchor object), in the anchoring's order.
    pub anchors: Vec<(String, Value)>,
    /// Re-keyed comments.
    pub moves: Vec<HealMove>,
}

impl Heal {
    /// Whether there is nothing to write.
    pub fn is_empty(&self) -> bool {
        self.anchors.is_empty() && self.moves.is_empty()
    }
}

/// What healing `anchors` would change, for fuzzy anchors at `min_confidence` or more.
pub fn plan(anchors: &BookAnchors, min_confidence: f64) -> Heal {
    // New anchors for confident, unambiguous fuzzy text anchors.
    let mut anchors_out: Vec<(String, Value)> = Vec::new();
    for (ci, l) in anchors.located.iter().enumerate() {
        let c = &anchors.comments[ci];
        let (Some(ch), Some(r)) = (l.chapter, &l.resolution) else {
            continue;
        };
        if r.status != AnchorStatus::Fuzzy
            || r.flags.ambiguous
            || r.block.is_some()
            || r.confidence < min_confidence
            || c.scope() != Some(Scope::Selection)
        {
            continue;
        }
        let Some(place) = &r.place else { continue };
        let text = &anchors.texts[ch];
        let mut anchor = c.anchor().cloned().unwrap_or_default();
        anchor.insert("quote".into(), text.text[place.text.clone()].into());
        anchor.insert(
            "prefix".into(),
            context_before(&text.text, place.text.start).into(),
        );
        anchor.insert(
            "suffix".into(),
            text.text[place.text.end..]
                .chars()
                .take(40)
                .collect::<String>()
                .into(),
        );
        anchor.insert(
            "section".into(),
            text.section_at(place.text.start)
                .map(Value::from)
                .unwrap_or(Value::Null),
        );
        anchors_out.push((
            c.id().unwrap_or_default().to_string(),
            Value::Object(anchor),
        ));
    }
    // Followed comments: re-keyed to the page they were found on.
    let moves: Vec<HealMove> = anchors
        .located
        .iter()
        .enumerate()
        .filter_map(|(ci, l)| {
            let (f, ch) = (l.followed.as_ref()?, l.chapter?);
            let id = anchors.comments[ci].id()?.to_string();
            Some(HealMove {
                id,
                from: f.from.clone(),
                to: anchors.chapters[ch].page.clone(),
            })
        })
        .collect();
    Heal {
        anchors: anchors_out,
        moves,
    }
}

/// Writes `heal` into `store` when it changes anything (nothing is locked or read otherwise).
pub fn write_unless_empty(store: &Store, heal: &Heal) -> Result<()> {
    if heal.is_empty() {
        return Ok(());
    }
    write(store, heal)
}

/// Writes `heal` into `store`, under its lock.
pub fn write(store: &Store, heal: &Heal) -> Result<()> {
    let _lock = store.lock()?;
    let snap = store.load()?;
    let ts = ids::iso(ids::now()?);
    let moved_ids: std::collections::BTreeSet<&str> =
        heal.moves.iter().map(|m| m.id.as_str()).collect();
    let ids_list: Vec<String> = heal
        .anchors
        .iter()
        .map(|(id, _)| id.clone())
        .filter(|id| !moved_ids.contains(id.as_str()))
        .collect();
    let healed: std::collections::BTreeMap<&str, &Value> = heal
        .anchors
        .iter()
        .map(|(id, a)| (id.as_str(), a))
        .collect();
    let found: Vec<_> = store.find(&snap, &ids_list)?.into_iter().cloned().collect();
    for (mut rec, id) in found.into_iter().zip(&ids_list) {
        rec.comment.set("anchor", healed[id.as_str()].clone());
        rec.comment.set("updatedAt", ts.clone().into());
        store.write_record(&rec)?;
    }
    // Every stored copy of each comment, found once.
    let mut copies: std::collections::BTreeMap<&str, Vec<&Record>> =
        std::collections::BTreeMap::new();
    for r in snap.comments() {
        if let Some(id) = r.comment.id() {
            copies.entry(id).or_default().push(r);
        }
    }
    // Members of one legacy array go from the last to the first, so the positions read in
    // `snap` stay right while the array shrinks.
    let position = |id: &str| {
        copies
            .get(id)
            .and_then(|c| c.first())
            .map(|r| match r.location {
                notabene_store::Location::Legacy { index } => (r.file.clone(), usize::MAX - index),
                notabene_store::Location::File => (r.file.clone(), 0),
            })
    };
    let mut ordered: Vec<&HealMove> = heal.moves.iter().collect();
    ordered.sort_by_cached_key(|m| position(&m.id));
    for HealMove { id, from, to } in ordered {
        let all = copies.get(id.as_str()).map(Vec::as_slice).unwrap_or(&[]);
        rekey(
            store,
            all,
            id,
            from,
            to,
            healed.get(id.as_str()).copied(),
            &ts,
        )?;
    }
    Ok(())
}

/// The 40 characters before `at`.
fn context_before(text: &str, at: usize) -> String {
    let v: Vec<char> = text[..at].chars().rev().take(40).collect();
    v.into_iter().rev().collect()
}

/// Moves comment `id` from page `from` to page `to` (with its healed anchor, if any). When an
/// interrupted earlier move left it on both pages, the copy on `to` is kept and the one on
/// `from` removed, if the two differ only in `page`, `updatedAt` and the healed anchor.
fn rekey(
    store: &Store,
    copies: &[&Record],
    id: &str,
    from: &str,
    to: &str,
    anchor: Option<&Value>,
    ts: &str,
) -> Result<()> {
    let old: Vec<&&Record> = copies
        .iter()
        .filter(|r| r.comment.page() == Some(from))
        .collect();
    let new = copies.iter().find(|r| r.comment.page() == Some(to));
    let [old] = old.as_slice() else {
        bail!(
            "comment {id:?} is stored {} time(s) on {from}; run `notabene comments verify`",
            old.len()
        );
    };
    if let Some(new) = new {
        // The interrupted move may also have healed the anchor.
        let strip = |r: &Record| {
            let mut m = r.comment.as_map().clone();
            m.shift_remove("page");
            m.shift_remove("updatedAt");
            m.shift_remove("anchor");
            m
        };
        if strip(new) != strip(old) {
            bail!(
                "comment {id:?} is stored on {from} and on {to} with different contents; nothing moved ({})",
                new.file
            );
        }
        store.delete_record(old)?;
        return Ok(());
    }
    let mut comment = old.comment.clone();
    comment.set("page", to.into());
    if let Some(a) = anchor {
        comment.set("anchor", a.clone());
    }
    comment.set("updatedAt", ts.into());
    store.rekey(old, comment)?;
    Ok(())
}
