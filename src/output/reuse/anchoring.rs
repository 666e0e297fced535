//! The anchoring's lookups of earlier builds ([`crate::model::resolve::Earlier`]): in a
//! long-lived process, the last build's anchoring of a chapter whose Markdown, anchors looked
//! for, text options and threshold have the digest they had (its text model whole, shared);
//! otherwise the memo's, under the same key, with the text model light. A rebuild after a store
//! change re-anchors only the chapters whose Markdown or anchors looked for changed (a new
//! comment, one resolved or reopened, an anchor healed — not a reply or a hold). (mdBook
//! refuses a file listed twice in `SUMMARY.md`, so a source file names one chapter.)
//!
//! Owns: the memo's encoding of a chapter's anchoring. Calls: `model::resolve` (its keys), the
//! anchoring crate's encodings.

use super::Reuse;
use super::last_build::{self, Items, Keep, Left};
use crate::model::resolve::{ChapterAnchoring, ChapterInput, Earlier, anchoring_key};
use crate::util::memo::{Digest, Key, Memo};
use notabene_anchoring::text::light;
use std::sync::Arc;

/// One build's lookups of chapters' anchoring, and what it leaves for the next build.
pub struct AnchoringAfter<'a> {
    /// The process's last build, and what it kept (taken out for this build).
    last: Option<(&'a Reuse, Items<ChapterAnchoring>)>,
    /// The memo, looked in when there is no last build to take from.
    lookup_memo: Option<&'a Memo>,
    /// The memo following takes its decisions from (when it is on).
    following: Option<&'a Memo>,
    /// What each chapter (by source file) leaves for the next build.
    left: Left<ChapterAnchoring>,
}

impl<'a> AnchoringAfter<'a> {
    pub(super) fn new(session: Option<&'a Reuse>, memo: &'a Memo) -> AnchoringAfter<'a> {
        AnchoringAfter {
            last: session.map(|s| (s, s.anchoring.take())),
            // The memo gives chapters their anchoring only where the process keeps none.
            lookup_memo: (session.is_none() && memo.is_on()).then_some(memo),
            following: memo.is_on().then_some(memo),
            left: Left::default(),
        }
    }

    fn leave(&self, source: &str, keep: Keep<ChapterAnchoring>) {
        if self.last.is_some() {
            self.left.push(source, keep);
        }
    }

    /// Keeps this build's anchoring for the next build of the process.
    pub fn keep(self) {
        if let Some((session, taken)) = self.last {
            session.anchoring.keep(taken, self.left.into_items());
        }
    }
}

/// The memo's address of a chapter's light text model: the Markdown and the text options.
fn light_text_key(input: &ChapterInput<'_>) -> Digest {
    let mut k = Key::new("light page_text");
    k.debug(input.options).digest(input.content_digest());
    k.finish()
}

impl Earlier for AnchoringAfter<'_> {
    fn anchoring(&self, input: &ChapterInput<'_>) -> Option<ChapterAnchoring> {
        if let Some((_, taken)) = &self.last {
            let found = last_build::get(taken, &input.chapter.source, &anchoring_key(input))?;
            self.leave(&input.chapter.source, Keep::Reused);
            return Some(found.clone());
        }
        let memo = self.lookup_memo?;
        let resolutions = memo
            .get(&anchoring_key(input))
            .and_then(notabene_anchoring::decode_resolutions)
            .filter(|res| res.len() == input.anchors.len())?;
        let text = memo.get(&light_text_key(input)).and_then(light::decode)?;
        Some(ChapterAnchoring {
            text: Arc::new(text),
            resolutions,
        })
    }

    fn computed(&self, input: &ChapterInput<'_>, anchoring: &ChapterAnchoring) {
        if self.last.is_some() {
            let keep = Keep::New(anchoring_key(input), anchoring.clone());
            self.leave(&input.chapter.source, keep);
        } else if let Some(memo) = self.lookup_memo {
            memo.put(light_text_key(input), light::encode(&anchoring.text));
            memo.put(
                anchoring_key(input),
                notabene_anchoring::encode_resolutions(&anchoring.resolutions),
            );
        }
    }

    fn memo(&self) -> Option<&Memo> {
        self.following
    }
}
