//! The gate of one branch's book: every write a commit by its reviewer, pushed before it is
//! answered, and writes that arrive while a push is under way grouped into the next push (one
//! commit each: never one commit of several people).
//!
//! One lock guards the clone's work tree and the counters: a write changes the store and commits
//! under it; the push runs outside it (other writes commit meanwhile: a push names its commit, so
//! later ones wait for the next); a push the remote rejects because the branch moved is followed,
//! under the lock, by a fetch and a rebase of every commit not yet pushed, then tried again for
//! [`PUSH_PATIENCE`]. When it gives up, the clone goes back to the remote's tip and every
//! write not yet pushed is answered 503: nothing is claimed that the remote does not hold.
//!
//! Owns: the write, commit and push of a branch, and their order. Calls: `hub::git`.

use super::git::{Clone, Pushed, Rebased};
use crate::apps::serve::{Answer, ApiError, Gate, Reviewer};
use axum::http::StatusCode;
use notabene_core::say_err;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// How long a group's push is tried again (each time after a fetch and rebase) while the
/// branch keeps moving, before it gives up.
pub(crate) const PUSH_PATIENCE: std::time::Duration = std::time::Duration::from_secs(30);
/// The longest pause between two tries (random, growing from 10 ms): hubs that keep racing
/// each other to the branch take turns.
const PUSH_PAUSE_MAX_MS: u64 = 400;

/// The counters of a branch's writes (sequence numbers of commits made by the hub).
#[derive(Default)]
struct Progress {
    /// Commits made so far.
    committed: u64,
    /// Commits the remote holds (every commit up to this one).
    pushed: u64,
    /// Commits given up on (every commit up to this one that was not pushed).
    dropped: u64,
    /// A push is under way.
    pushing: bool,
    /// Why the branch takes no writes (a push refused outright).
    read_only: Option<String>,
    /// What differed from the last commit, in the paths writes commit, before any write (the
    /// reader client the hub wrote): known after the first write, forgotten when the work tree
    /// moves to the remote's tip.
    dirty_before: Option<std::collections::BTreeSet<String>>,
}

/// The gate of a branch's book.
pub(crate) struct Publisher {
    /// The branch's clone.
    pub(crate) clone: Clone,
    /// The store and the book's sources, relative to the clone: what a write may commit.
    paths: Vec<String>,
    state: Mutex<Progress>,
    changed: Condvar,
}

impl Publisher {
    /// The gate of `clone`, committing what changes under `paths`.
    pub(crate) fn new(clone: Clone, paths: Vec<String>) -> Publisher {
        Publisher {
            clone,
            paths,
            state: Mutex::new(Progress::default()),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Progress> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'a>(&self, guard: MutexGuard<'a, Progress>) -> MutexGuard<'a, Progress> {
        self.changed
            .wait(guard)
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Moves the clone to the remote's tip when it changed and the hub has nothing of its own
    /// to push (else the push under way will bring it), then runs `after` (the reader client
    /// written again), under the lock: no write sees the tree between the two. `Ok(true)` when
    /// it moved.
    pub(crate) fn follow(&self, after: &dyn Fn() -> crate::Result<()>) -> crate::Result<bool> {
        let mut state = self.lock();
        if state.pushing || state.committed > state.pushed.max(state.dropped) {
            return Ok(false);
        }
        let tip = self.clone.fetch()?;
        if self.clone.head()? == tip {
            return Ok(false);
        }
        self.clone.reset()?;
        state.dirty_before = None;
        after()?;
        drop(state);
        Ok(true)
    }

    /// Pushes every commit made so far (this thread leads the group), rebasing on the branch
    /// when it moved; returns with the lock held and the counters updated.
    fn push_group<'a>(&'a self, mut state: MutexGuard<'a, Progress>) -> MutexGuard<'a, Progress> {
        state.pushing = true;
        let mut outcome = Err("the branch kept moving".to_string());
        let start = std::time::Instant::now();
        let mut pause_ms = 10;
        while start.elapsed() < PUSH_PATIENCE {
            let (upto, head) = (state.committed, self.clone.head());
            let Ok(head) = head else { break };
            drop(state);
            let pushed = self.clone.push(&head);
            state = self.lock();
            match pushed {
                Ok(Pushed::Done) => {
                    state.pushed = upto;
                    outcome = Ok(());
                    break;
                }
                Ok(Pushed::Moved) => match self.clone.rebase() {
                    Ok(Rebased::Done) => {
                        // Another writer won the race: a random pause, then again.
                        let pause = fastrand::u64(0..=pause_ms);
                        pause_ms = (pause_ms * 2).min(PUSH_PAUSE_MAX_MS);
                        drop(state);
                        std::thread::sleep(std::time::Duration::from_millis(pause));
                        state = self.lock();
                        continue;
                    }
                    Ok(Rebased::Conflict(why)) => {
                        outcome = Err(format!(
                            "the writes could not be merged with the branch: {why}"
                        ));
                        break;
                    }
                    Err(e) => {
                        outcome = Err(e.to_string());
                        break;
                    }
                },
                Ok(Pushed::Refused(why)) => {
                    state.read_only = Some(format!("this branch cannot be pushed to: {why}"));
                    outcome = Err(why);
                    break;
                }
                Err(e) => {
                    outcome = Err(e.to_string());
                    break;
                }
            }
        }
        if let Err(why) = outcome {
            say_err!(
                "notabene: cannot push to {}: {why} (push)",
                self.clone.branch
            );
            // Nothing claimed: the clone back at the remote's tip, every write not pushed dropped.
            let _ = self.clone.fetch();
            if let Err(e) = self.clone.reset() {
                say_err!("notabene: {e}");
            }
            state.dirty_before = None;
            state.dropped = state.committed;
        } else {
            // The remote-tracking ref follows, so that the next poll sees no change.
            let _ = self.clone.fetch();
        }
        state.pushing = false;
        self.changed.notify_all();
        state
    }
}

impl Gate for Publisher {
    fn write(
        &self,
        who: &Reviewer,
        describe: &dyn Fn(&Answer) -> String,
        write: &mut dyn FnMut() -> Result<Answer, ApiError>,
    ) -> Result<Answer, ApiError> {
        let mut state = self.lock();
        if let Some(why) = &state.read_only {
            return Err(ApiError::new(StatusCode::FORBIDDEN, why.clone()));
        }
        // A rebase or a reset may be rewriting the work tree only while a push leader holds
        // the lock, never while this write holds it. The commit holds what this write changed
        // alone: not what was already changed before it (the reader client the hub wrote).
        let paths: Vec<&str> = self.paths.iter().map(String::as_str).collect();
        let known = state.dirty_before.take().map(Ok);
        let before = match known.unwrap_or_else(|| self.clone.dirty(&paths)) {
            Ok(before) => before,
            Err(e) => {
                say_err!("notabene: {e}");
                return Err(ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "not saved: the branch's work tree cannot be read; try again",
                ));
            }
        };
        state.dirty_before = Some(before.clone());
        let answer = write()?;
        if !answer.status.is_success() {
            return Ok(answer);
        }
        let committed = self.clone.dirty(&paths).and_then(|after| {
            let changed: Vec<String> = after.difference(&before).cloned().collect();
            self.clone
                .commit(&changed, &who.author(), &describe(&answer))
        });
        match committed {
            Ok(true) => {}
            Ok(false) => return Ok(answer),
            Err(e) => {
                say_err!("notabene: {e}");
                // The write is in the work tree but not in a commit: put its files back.
                let _ = self.clone.reset_paths(&paths);
                return Err(ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "not saved: the write could not be committed; try again",
                ));
            }
        }
        state.committed += 1;
        let mine = state.committed;
        loop {
            if state.pushed >= mine {
                return Ok(answer);
            }
            if state.dropped >= mine {
                return Err(ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "not saved: the branch could not be pushed; try again",
                ));
            }
            state = match state.pushing {
                true => self.wait(state),
                false => self.push_group(state),
            };
        }
    }

    fn read_only(&self) -> Option<String> {
        self.lock().read_only.clone()
    }
}
