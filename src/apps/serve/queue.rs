//! Group commit: store writes that wait for the store lock are committed in groups. The first
//! request to arrive leads: it takes every job queued so far, commits them as one group (under one
//! lock, each changed file written and fsynced once, however many jobs changed it), answers them,
//! and hands the lead to the first job that came in meanwhile, so no leader waits behind later
//! groups. Twenty reviewers answering the same comment cost a few fsyncs, not twenty. What a group
//! does is the caller's ([`GroupCommit::submit`]'s `commit`); this file owns only the queue, the
//! lead and the answers.

use std::sync::Mutex;
use std::sync::mpsc::{Sender, channel};

/// Jobs `J` waiting to be committed together, each answered with an `R`.
pub struct GroupCommit<J, R> {
    state: Mutex<State<J, R>>,
}

impl<J, R> Default for GroupCommit<J, R> {
    fn default() -> Self {
        GroupCommit {
            state: Mutex::new(State {
                pending: Vec::new(),
                leading: false,
            }),
        }
    }
}

struct State<J, R> {
    /// Jobs not yet taken by a leader, in arrival order, with where to answer them.
    pending: Vec<(J, Sender<Turn<R>>)>,
    /// Whether a request leads (is committing or about to).
    leading: bool,
}

/// What a waiting request is told: its answer, or that it leads the next group.
enum Turn<R> {
    Done(R),
    Lead,
}

impl<J, R> GroupCommit<J, R> {
    /// Queues `job` and waits for its answer, committing groups while this request leads.
    /// `commit` answers a group's jobs in order; a job it leaves unanswered (it panicked, or
    /// returned too few answers) is answered `failed()`.
    pub fn submit(&self, job: J, commit: &dyn Fn(&[J]) -> Vec<R>, failed: &dyn Fn() -> R) -> R {
        let (done, answer) = channel();
        let lead = {
            let mut state = super::lock::lock(&self.state);
            state.pending.push((job, done));
            !std::mem::replace(&mut state.leading, true)
        };
        if lead {
            self.lead_group(commit, failed);
        }
        loop {
            match answer.recv() {
                Ok(Turn::Done(result)) => return result,
                Ok(Turn::Lead) => self.lead_group(commit, failed),
                Err(_) => return failed(),
            }
        }
    }

    /// Commits every job queued so far as one group and answers them; then hands the lead to
    /// the first job that arrived meanwhile.
    fn lead_group(&self, commit: &dyn Fn(&[J]) -> Vec<R>, failed: &dyn Fn() -> R) {
        let (jobs, answers): (Vec<J>, Vec<Sender<Turn<R>>>) =
            std::mem::take(&mut super::lock::lock(&self.state).pending)
                .into_iter()
                .unzip();
        // A panic in a group answers its jobs with `failed()` and still hands the lead on.
        let results = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| commit(&jobs)))
            .unwrap_or_default();
        let mut results = results.into_iter();
        for done in answers {
            let result = results.next().unwrap_or_else(failed);
            let _ = done.send(Turn::Done(result));
        }
        let mut state = super::lock::lock(&self.state);
        match state.pending.first() {
            Some((_, next)) => {
                let _ = next.send(Turn::Lead);
            }
            None => state.leading = false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::sync::Arc;

    /// Jobs submitted while a group commits wait, and are committed together as the next
    /// group, each answered with its own result.
    #[test]
    fn jobs_that_queue_behind_a_group_are_committed_together_and_answered_each() {
        let queue = Arc::new(GroupCommit::<u32, u32>::default());
        let groups = Arc::new(Mutex::new(Vec::<Vec<u32>>::new()));
        let threads: Vec<_> = (0..16u32)
            .map(|i| {
                let (queue, groups) = (queue.clone(), groups.clone());
                std::thread::spawn(move || {
                    let commit = |jobs: &[u32]| {
                        // The first group commits once every other job is queued.
                        if groups.lock().unwrap().is_empty() {
                            while crate::apps::serve::lock::lock(&queue.state).pending.len()
                                < 16 - jobs.len()
                            {
                                std::thread::yield_now();
                            }
                        }
                        groups.lock().unwrap().push(jobs.to_vec());
                        jobs.iter().map(|j| j * 10).collect()
                    };
                    (i, queue.submit(i, &commit, &|| u32::MAX))
                })
            })
            .collect();
        let mut answers: Vec<(u32, u32)> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        answers.sort();
        assert_eq!(answers, (0..16).map(|i| (i, i * 10)).collect::<Vec<_>>());
        let groups = groups.lock().unwrap();
        let sizes: Vec<usize> = groups.iter().map(Vec::len).collect();
        // Two groups (one, if every job was queued before the first leader took them).
        assert!(sizes.len() <= 2, "{groups:?}");
        assert_eq!(sizes.iter().sum::<usize>(), 16, "{groups:?}");
    }

    /// A group whose commit panics answers its jobs `failed()`; the queue goes on.
    #[test]
    fn a_panicking_group_fails_its_jobs_and_the_next_one_commits() {
        let queue = GroupCommit::<u32, Result<u32, &str>>::default();
        let failed = || Err("failed");
        let boom = |_: &[u32]| -> Vec<Result<u32, &str>> {
            panic!("a panicking commit (expected in this test)")
        };
        assert_eq!(queue.submit(1, &boom, &failed), Err("failed"));
        let ok = |jobs: &[u32]| jobs.iter().map(|j| Ok(j + 1)).collect();
        assert_eq!(queue.submit(2, &ok, &failed), Ok(3));
    }
}
