//! The injection's lookups of earlier builds: a chapter's injected Markdown (markers placed
//! and checked, its island deflated) is taken from the process's last build, else from the
//! memo, when its Markdown, marks and island, text options and `compress-above` have the digest
//! they had. The book-wide summary is not part of a chapter's island (`script.nb-summary`), so a
//! new comment on one chapter leaves the others as they were.
//!
//! Owns: the key of a chapter's injection and its encoding in the memo. Calls: `util::memo`,
//! `output::inject` (its types).

use super::Reuse;
use super::last_build::{self, Items, Keep, Left};
use crate::output::inject::{InjectOutcome, Injection};
use crate::util::memo::{Digest, Key, Memo};
use notabene_anchoring::text::TextOptions;

/// A chapter's injection as a build computed it: the injected Markdown (without the summary)
/// and what happened.
#[derive(Debug, Clone)]
pub struct InjectedChapter {
    /// The injected Markdown.
    pub out: String,
    /// What happened while injecting.
    pub outcome: InjectOutcome,
}

/// One chapter as the injection looks it up: everything its injected Markdown is computed from.
pub struct InjectionInput<'a> {
    /// Its page id.
    pub page: &'a str,
    /// Its source file (the name the last build keeps it under).
    pub source: &'a str,
    /// The SHA-256 of its Markdown.
    pub content: &'a Digest,
    /// What is injected, without the island element.
    pub injection: &'a Injection,
    /// The island's JSON.
    pub island: &'a str,
}

/// One build's lookups of chapters' injected Markdown, and what it leaves for the next build.
pub struct InjectingAfter<'a> {
    /// The process's last build, and what it kept (taken out for this build).
    last: Option<(&'a Reuse, Items<InjectedChapter>)>,
    /// The memo (when it is on).
    memo: Option<&'a Memo>,
    options: &'a TextOptions,
    compress_above: usize,
    /// What each chapter (by source file) leaves for the next build.
    left: Left<InjectedChapter>,
}

impl<'a> InjectingAfter<'a> {
    pub(super) fn new(
        session: Option<&'a Reuse>,
        memo: &'a Memo,
        options: &'a TextOptions,
        compress_above: usize,
    ) -> InjectingAfter<'a> {
        InjectingAfter {
            last: session.map(|s| (s, s.injected.take())),
            memo: memo.is_on().then_some(memo),
            options,
            compress_above,
            left: Left::default(),
        }
    }

    /// The key of a chapter's injection: everything it is computed from.
    fn key(&self, input: &InjectionInput<'_>) -> Digest {
        let mut k = Key::new("inject");
        k.debug(self.options)
            .u64(self.compress_above as u64)
            .str(input.page)
            .digest(input.content)
            .debug(input.injection)
            .str(input.island);
        k.finish()
    }

    /// The injected chapter `input` names: an earlier build's, else what `inject` computes
    /// (kept for later builds).
    pub fn chapter(
        &self,
        input: &InjectionInput<'_>,
        inject: impl FnOnce() -> InjectedChapter,
    ) -> InjectedChapter {
        if self.last.is_none() && self.memo.is_none() {
            return inject();
        }
        let key = self.key(input);
        if let Some((_, taken)) = &self.last
            && let Some(found) = last_build::get(taken, input.source, &key)
        {
            self.leave(input.source, Keep::Reused);
            return found.clone();
        }
        if let Some(found) = self.memo.and_then(|m| m.get(&key)).and_then(decode) {
            self.leave(input.source, Keep::Nothing);
            return found;
        }
        let injected = inject();
        if let Some(m) = self.memo {
            m.put(key, encode(&injected));
        }
        self.leave(input.source, Keep::New(key, injected.clone()));
        injected
    }

    fn leave(&self, source: &str, keep: Keep<InjectedChapter>) {
        if self.last.is_some() {
            self.left.push(source, keep);
        }
    }

    /// Keeps this build's injected chapters for the next build of the process.
    pub fn keep(self) {
        if let Some((session, taken)) = self.last {
            session.injected.keep(taken, self.left.into_items());
        }
    }
}

/// A chapter's injected Markdown and outcome in bytes, for the memo: one flag byte, then the
/// Markdown.
fn encode(injected: &InjectedChapter) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(injected.out.len() + 1);
    bytes.push(u8::from(injected.outcome.marks_dropped));
    bytes.extend_from_slice(injected.out.as_bytes());
    bytes
}

/// What [`encode`] wrote into `bytes`, when it is that.
fn decode(bytes: &[u8]) -> Option<InjectedChapter> {
    let (&flag, text) = bytes.split_first()?;
    let marks_dropped = match flag {
        0 => false,
        1 => true,
        _ => return None,
    };
    let out = String::from_utf8(text.to_vec()).ok()?;
    Some(InjectedChapter {
        out,
        outcome: InjectOutcome { marks_dropped },
    })
}
