//! The decisions of following kept in the build's memo: their key (everything the decisions are
//! made from, git's answers through the repository's state) and their bytes.
//!
//! Owns: the key and the encoding of the decisions. Calls: `util::memo`, `notabene_core::codec`.

use super::{BookAnchors, Decision, FollowedBy};
use crate::model::book::PageIds;
use crate::model::book::git::MoveKind;
use crate::util::memo::{Digest, Key};
use notabene_anchoring::Resolution;
use notabene_anchoring::text::TextOptions;
use notabene_core::codec::{Reader, Writer};

/// The memo's address of the decisions on `candidates`: everything [`decide`] reads, git's
/// answers through the repository's state (`git_state`, [`crate::model::book::Repo::state`]).
pub(super) fn memo_key(
    anchors: &BookAnchors,
    ids: &PageIds,
    (options, threshold): (&TextOptions, f64),
    candidates: &[usize],
    git_state: Option<&str>,
) -> Digest {
    let mut k = Key::new("follow");
    k.debug(&git_state)
        .debug(options)
        .u64(threshold.to_bits())
        .debug(&anchors.which)
        .debug(ids)
        .debug(&anchors.mismatch);
    k.u64(anchors.chapters.len() as u64);
    for (ch, c) in anchors.chapters.iter().enumerate() {
        k.str(&c.page)
            .str(&c.source)
            .str(&c.name)
            .str(&c.url)
            .digest(&anchors.content_digest(ch));
    }
    k.u64(candidates.len() as u64);
    for &ci in candidates {
        k.debug(anchors.comments[ci].as_map())
            .debug(&anchors.located[ci]);
    }
    k.finish()
}

/// `decisions` in bytes, for the memo ([`decode_decisions`] reads them back): each comment by
/// its place in `candidates` (sorted).
pub(super) fn encode_decisions(decisions: &[(usize, Decision)], candidates: &[usize]) -> Vec<u8> {
    let res = |w: &mut Writer, r: Option<&Resolution>| {
        w.bytes(&notabene_anchoring::encode_resolutions(&[r.cloned()]));
    };
    let mut w = Writer::default();
    w.size(decisions.len());
    for (ci, d) in decisions {
        w.size(candidates.binary_search(ci).unwrap_or(usize::MAX));
        match d {
            Decision::Follow { to, resolution, by } => {
                w.byte(0).size(*to);
                res(&mut w, resolution.as_ref());
                w.byte(match by {
                    FollowedBy::Quote => 0,
                    FollowedBy::Git(MoveKind::Rename) => 1,
                    FollowedBy::Git(MoveKind::Copy) => 2,
                    FollowedBy::Git(MoveKind::Merge) => 3,
                });
            }
            Decision::Ambiguous(pages) => {
                w.byte(1).size(pages.len());
                for &p in pages {
                    w.size(p);
                }
            }
            Decision::Nowhere(None) => {
                w.byte(2);
            }
            Decision::Nowhere(Some((ch, r))) => {
                w.byte(3).size(*ch);
                res(&mut w, Some(r));
            }
            Decision::Suggest(ch, r) => {
                w.byte(4).size(*ch);
                res(&mut w, Some(r));
            }
            Decision::LookAlike(r) => {
                w.byte(5);
                res(&mut w, Some(r));
            }
        }
    }
    w.0
}

/// The decisions [`encode_decisions`] wrote into `bytes` for `candidates`; `None` when they
/// are not that, whole.
pub(super) fn decode_decisions(
    bytes: &[u8],
    candidates: &[usize],
) -> Option<Vec<(usize, Decision)>> {
    let res = |r: &mut Reader| -> Option<Option<Resolution>> {
        let mut one = notabene_anchoring::decode_resolutions(r.bytes()?)?;
        (one.len() == 1).then(|| one.pop().flatten())
    };
    let mut r = Reader(bytes);
    let n = r.count()?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let ci = *candidates.get(r.size()?)?;
        let d = match r.tag(6)? {
            0 => {
                let to = r.size()?;
                let resolution = res(&mut r)?;
                let by = match r.tag(4)? {
                    0 => FollowedBy::Quote,
                    1 => FollowedBy::Git(MoveKind::Rename),
                    2 => FollowedBy::Git(MoveKind::Copy),
                    _ => FollowedBy::Git(MoveKind::Merge),
                };
                Decision::Follow { to, resolution, by }
            }
            1 => {
                let k = r.count()?;
                let mut pages = Vec::with_capacity(k);
                for _ in 0..k {
                    pages.push(r.size()?);
                }
                Decision::Ambiguous(pages)
            }
            2 => Decision::Nowhere(None),
            3 => {
                let ch = r.size()?;
                Decision::Nowhere(Some((ch, res(&mut r)??)))
            }
            4 => {
                let ch = r.size()?;
                Decision::Suggest(ch, res(&mut r)??)
            }
            _ => Decision::LookAlike(res(&mut r)??),
        };
        out.push((ci, d));
    }
    r.done().then_some(out)
}
