//! A generated page's view data: its JSON text in the pieces it was written in, and the data
//! element it becomes, kept in the build's memo.
//!
//! The /comments list of a big store is megabytes of JSON written on every thread. Each piece
//! is hashed where it was written, and the memo's key is made of those digests: a later build
//! whose list is unchanged finds the element without joining the pieces, copying them once
//! more or hashing them on one thread.
//!
//! Owns: [`ViewData`], its memo key and its element.
//! Calls: the memo (`util::memo`) and the data script writer (`util::payload`).

use crate::util::memo::{Digest, Key, Memo};
use crate::util::payload::{data_script, deflated_script};

/// A view's JSON text, as pieces that joined in order are the text, with each one's digest
/// when it was taken where the piece was written (a build without a memo takes none).
pub(crate) struct ViewData {
    pieces: Vec<(Vec<u8>, Option<Digest>)>,
}

impl ViewData {
    /// The text `json`, in one piece (hashed only if the memo needs it).
    pub(crate) fn whole(json: String) -> ViewData {
        ViewData::of(vec![(json.into_bytes(), None)])
    }

    /// The text made of `pieces` joined (each of them UTF-8), each given with its
    /// [`ViewData::digest`] when it was taken.
    pub(crate) fn of(pieces: Vec<(Vec<u8>, Option<Digest>)>) -> ViewData {
        ViewData { pieces }
    }

    /// The digest of one piece.
    pub(crate) fn digest(piece: &[u8]) -> Digest {
        let mut k = Key::new("view piece");
        k.bytes(piece);
        k.finish()
    }

    /// The length of the text.
    fn len(&self) -> usize {
        self.pieces.iter().map(|(p, _)| p.len()).sum()
    }

    /// The text.
    pub(crate) fn joined(self) -> String {
        let mut out = Vec::with_capacity(self.len());
        for (p, _) in self.pieces {
            out.extend_from_slice(&p);
        }
        // Every piece is a JSON writer's UTF-8, and pieces end on a character's end.
        String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into())
    }

    /// The view's data element ([`data_script`]), taken from `memo` when an earlier build
    /// wrote it for the same text and threshold (deflating a big store's list is most of a
    /// view's cost). The same text in other pieces is another key: only a miss.
    pub(crate) fn element(self, memo: &Memo, compress_above: usize) -> String {
        if self.len() <= compress_above {
            return data_script("nb-view-data", "", &self.joined(), compress_above);
        }
        if !memo.is_on() {
            return deflated_script("nb-view-data", "", &self.parts());
        }
        let mut k = Key::new("view data_script");
        k.u64(compress_above as u64).u64(self.pieces.len() as u64);
        for (p, d) in &self.pieces {
            k.digest(&d.unwrap_or_else(|| ViewData::digest(p)));
        }
        let digest = k.finish();
        if let Some(text) = memo.get(&digest).and_then(|b| std::str::from_utf8(b).ok()) {
            return text.to_string();
        }
        let element = deflated_script("nb-view-data", "", &self.parts());
        memo.put(digest, element.clone().into_bytes());
        element
    }

    /// The pieces' bytes, in order.
    fn parts(&self) -> Vec<&[u8]> {
        self.pieces.iter().map(|(p, _)| p.as_slice()).collect()
    }
}
