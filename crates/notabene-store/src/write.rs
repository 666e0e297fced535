//! Writing the store: creating, rewriting, moving and deleting one comment (its own file or
//! its member of a legacy array), and building a new comment object. Every write is atomic and
//! made with the store lock held by the caller.
//!
//! Owns: [`Fresh`], [`new_comment`], the write side of [`Store`].
//! Calls: `fsx` (atomic writes, removals), `json` (the contract's pretty form), `ids`, `read`
//! (a legacy array as it is now).

use crate::{
    Comment, Location, Record, Scope, Status, Store, comment, fsx, ids, json, validate_page_id,
};
use notabene_core::{Result, bail};
use serde_json::{Map, Value};
use std::path::Path;

impl Store {
    /// Writes a record back where it came from. Call with the lock held.
    pub fn write_record(&self, rec: &Record) -> Result<()> {
        self.write_record_deferred(rec).map(fsx::DirSync::finish)
    }

    /// [`Store::write_record`], the directory's fsync left to the caller (to do once the
    /// lock is released).
    pub fn write_record_deferred(&self, rec: &Record) -> Result<fsx::DirSync> {
        let rel = Path::new(&rec.file);
        match rec.location {
            Location::File => fsx::write_atomic_deferred(
                &self.root,
                rel,
                json::to_js_pretty(rec.comment.as_map()).as_bytes(),
            ),
            Location::Legacy { index } => {
                let mut arr = self.read_array(rel)?;
                let slot = arr
                    .get_mut(index)
                    .filter(|v| v.get("id").and_then(Value::as_str) == rec.comment.id());
                let Some(slot) = slot else {
                    bail!(
                        "legacy file changed under us; nothing written ({})",
                        rec.file
                    );
                };
                *slot = Value::Object(rec.comment.as_map().clone());
                fsx::write_atomic_deferred(&self.root, rel, json::to_js_pretty(&arr).as_bytes())
            }
        }
    }

    /// Moves a record to `page`: `comment` (the record's comment with `page` and `updatedAt`
    /// already set by the caller) is written as `<page>/<id>.json`, complete and fsynced,
    /// before the old file (or legacy array member) is removed. A crash in between leaves the
    /// comment twice — `verify` reports the duplicate id — never nowhere. Call with the lock
    /// held. Returns the new record.
    ///
    /// The failpoint `rekey-after-write` (feature `failpoints`) aborts the process between the two steps (for
    /// the crash-safety test).
    pub fn rekey(&self, rec: &Record, comment: Comment) -> Result<Record> {
        let page = comment.page().unwrap_or_default().to_string();
        validate_page_id(&page)?;
        let id = comment.id().unwrap_or_default().to_string();
        let moved = Record {
            file: format!("{page}/{}.json", ids::sanitize_id(&id)),
            location: Location::File,
            comment,
        };
        if moved.file == rec.file {
            self.write_record(&moved)?;
            return Ok(moved);
        }
        if self.root.join(&moved.file).exists() {
            bail!(
                "cannot move comment {id:?}: another file is already there; nothing moved ({})",
                moved.file
            );
        }
        self.write_record(&moved)?;
        notabene_core::failpoint::hit("rekey-after-write");
        self.delete_record(rec)?;
        Ok(moved)
    }

    /// Deletes a record: its file, or its member of a legacy array (the array file goes when
    /// it empties). Empty page directories are removed. Call with the lock held.
    pub fn delete_record(&self, rec: &Record) -> Result<()> {
        let rel = Path::new(&rec.file);
        match rec.location {
            Location::File => fsx::remove_file(&self.root, rel)?,
            Location::Legacy { index } => {
                let mut arr = self.read_array(rel)?;
                if arr
                    .get(index)
                    .and_then(|v| v.get("id"))
                    .and_then(Value::as_str)
                    != rec.comment.id()
                {
                    bail!(
                        "legacy file changed under us; nothing deleted ({})",
                        rec.file
                    );
                }
                arr.remove(index);
                if arr.is_empty() {
                    fsx::remove_file(&self.root, rel)?;
                } else {
                    fsx::write_atomic(&self.root, rel, json::to_js_pretty(&arr).as_bytes())?;
                }
            }
        }
        if let Some(parent) = rel.parent() {
            fsx::remove_empty_dirs(&self.root, parent);
        }
        Ok(())
    }

    /// The file of a new comment: `<page>/<sanitised id>.json`.
    fn new_comment_file(comment: &Comment) -> Result<String> {
        let (Some(id), Some(page)) = (comment.id(), comment.page()) else {
            bail!("a comment needs an id and a page (id, page)");
        };
        validate_page_id(page)?;
        let name = ids::sanitize_id(id);
        if name.is_empty() {
            bail!("comment id {id:?} has no file-name characters (id)");
        }
        Ok(format!("{page}/{name}.json"))
    }

    /// Creates a new comment file at `<page>/<sanitised id>.json`; refuses to overwrite.
    /// Call with the lock held.
    pub fn create(&self, comment: &Comment) -> Result<String> {
        let file = Self::new_comment_file(comment)?;
        if self.root.join(&file).exists() {
            bail!("a comment file already exists ({file})");
        }
        fsx::write_atomic(
            &self.root,
            Path::new(&file),
            json::to_js_pretty(comment.as_map()).as_bytes(),
        )?;
        Ok(file)
    }

    /// The slow half of [`Store::create`], to run before taking the store lock: the new
    /// comment file written and fsynced under a temporary name. Put it in place with
    /// [`fsx::Prepared::create`] while holding the lock.
    pub fn prepare_create(&self, comment: &Comment) -> Result<fsx::Prepared> {
        fsx::prepare(
            &self.root,
            Path::new(&Self::new_comment_file(comment)?),
            json::to_js_pretty(comment.as_map()).as_bytes(),
        )
    }

    fn read_array(&self, rel: &Path) -> Result<Vec<Value>> {
        let name = rel.to_string_lossy();
        let read = self.read(&name).map_err(|e| e.to_error(&name))?;
        match serde_json::from_slice(&read.bytes) {
            Ok(Value::Array(a)) => Ok(a),
            _ => bail!(
                "legacy file is no longer a JSON array; nothing written ({})",
                rel.display()
            ),
        }
    }
}

/// The fields of a comment being created, for [`new_comment`].
#[derive(Debug, Clone)]
pub struct Fresh<'a> {
    /// Its id ([`ids::comment_id`]).
    pub id: &'a str,
    /// Its space.
    pub space: &'a str,
    /// Its page id.
    pub page: &'a str,
    /// Its scope.
    pub scope: Scope,
    /// Its anchor (`null` for a page comment).
    pub anchor: Value,
    /// The author of its first message.
    pub author: &'a str,
    /// The text of its first message.
    pub body: &'a str,
    /// Its creation instant ([`ids::iso`]).
    pub ts: &'a str,
}

/// Builds a new comment object with the contract's key order: open, not held, one message.
pub fn new_comment(f: &Fresh) -> Comment {
    let mut m = Map::new();
    m.insert("id".into(), f.id.into());
    m.insert("space".into(), f.space.into());
    m.insert("page".into(), f.page.into());
    m.insert("scope".into(), f.scope.into());
    m.insert("anchor".into(), f.anchor.clone());
    m.insert(
        "thread".into(),
        Value::Array(vec![comment::message(f.author, f.body, f.ts)]),
    );
    m.insert("status".into(), Status::Open.into());
    m.insert("hold".into(), false.into());
    m.insert("resolution".into(), Value::Null);
    m.insert("createdAt".into(), f.ts.into());
    m.insert("updatedAt".into(), f.ts.into());
    Comment::from_map(m)
}
