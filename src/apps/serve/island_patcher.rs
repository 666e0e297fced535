//! Island patching for `serve`, on a thread of its own: the pages the API names after its writes
//! are patched into the served chapters' islands at once, a burst of writes at a time
//! ([`BURST_GAP`], [`BURST_MAX`]), whatever the watcher is doing. A rebuild under way does not
//! hold a patch up: the pages patched while it builds are patched again into its site just before
//! that site is served ([`IslandPatcher::swap_in`]), so a write a reader has seen never goes
//! missing from the page a reload gets. The watcher patches the comment files other processes
//! change through the same [`IslandPatcher`].
//!
//! May call: `islands` (the patch itself), `lock`.

use super::islands::{Changes, FileChange};
use super::{Hint, Site, lock};
use notabene_core::say_err;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Writes the API names are gathered until this long passes without one…
pub(super) const BURST_GAP: Duration = Duration::from_millis(100);
/// …or this long at most: a lone write is patched in soon, a storm of them (writes still
/// coming after this long) once it calms.
pub(super) const BURST_MAX: Duration = Duration::from_millis(400);
/// A storm's pages are patched once this long passes without a write.
const CALM: Duration = Duration::from_millis(200);

/// What the patcher and the watcher share, under one lock.
#[derive(Debug, Default)]
struct Shared {
    /// Pages the API named since the watcher's last snapshot: patched (or deferred) here, so
    /// the snapshot's own diff leaves them alone.
    hinted: BTreeSet<String>,
    /// The HTML files patched in place since the last build began: a build of pages renders
    /// them again.
    touched: BTreeSet<String>,
    /// While a build runs, the pages patched since it began: its site gets them too.
    during_build: Option<BTreeSet<String>>,
}

/// Island patching of one served book: the store, the book's space, the site being served.
pub(super) struct IslandPatcher {
    site: Arc<Site>,
    store: notabene_store::Store,
    space: String,
    shared: Mutex<Shared>,
    /// Set once the server stops: nothing is patched after it.
    closing: AtomicBool,
}

impl IslandPatcher {
    /// Patching for the site `site` of the book whose store is `store`, in space `space`.
    pub(super) fn new(
        site: Arc<Site>,
        store: notabene_store::Store,
        space: String,
    ) -> IslandPatcher {
        IslandPatcher {
            site,
            store,
            space,
            shared: Mutex::new(Shared::default()),
            closing: AtomicBool::new(false),
        }
    }

    /// The store whose comment files are patched in.
    pub(super) fn store(&self) -> &notabene_store::Store {
        &self.store
    }

    /// Starts the patcher thread on the API's writes (`wake`); it ends when the API is gone.
    pub(super) fn spawn(self: &Arc<Self>, wake: Receiver<Hint>) {
        let patcher = Arc::clone(self);
        std::thread::spawn(move || patcher.run(&wake));
    }

    /// Stops patching: waits for a patch under way; nothing is written after this returns.
    pub(super) fn close(&self) {
        self.closing.store(true, Ordering::SeqCst);
        drop(lock::lock(&self.shared));
    }

    /// The pages the API named since the last call (the watcher's snapshot leaves them alone).
    pub(super) fn take_hinted(&self) -> BTreeSet<String> {
        std::mem::take(&mut lock::lock(&self.shared).hinted)
    }

    /// A build begins: the HTML files patched in place since the last one (to render again),
    /// and from now on the pages patched are remembered for its site.
    pub(super) fn begin_build(&self) -> BTreeSet<String> {
        let mut shared = lock::lock(&self.shared);
        shared.during_build = Some(BTreeSet::new());
        std::mem::take(&mut shared.touched)
    }

    /// The build failed: what it was to render is still to render.
    pub(super) fn build_failed(&self, touched: BTreeSet<String>) {
        let mut shared = lock::lock(&self.shared);
        shared.during_build = None;
        shared.touched.extend(touched);
    }

    /// The build's site at `dest` (its page → HTML files `pages`) is about to be served: the
    /// pages patched while it was built are patched into it too, then `swap` serves it — with
    /// no patch in between, so none lands in the site being replaced.
    pub(super) fn swap_in(
        &self,
        dest: &Path,
        pages: &BTreeMap<String, Vec<String>>,
        swap: impl FnOnce(),
    ) {
        let mut shared = lock::lock(&self.shared);
        let during = shared.during_build.take().unwrap_or_default();
        if !during.is_empty() {
            // Read whole: the build may have seen some of these writes, and not others.
            let again: Changes = during.into_iter().map(|page| (page, None)).collect();
            let files: Vec<String> = html_files(pages, &again).collect();
            shared.touched.extend(files);
            if let Err(e) =
                super::islands::patch_islands(dest, pages, &self.store, &self.space, &again)
            {
                say_err!("notabene: {e}");
            }
        }
        swap();
    }

    /// Patches `pages` into the served chapters' islands and, when one changed, moves the
    /// generation (naming the pages patched). `hinted`: the API named them.
    pub(super) fn patch(&self, pages: &Changes, hinted: bool) {
        if pages.is_empty() {
            return;
        }
        let mut shared = lock::lock(&self.shared);
        if self.closing.load(Ordering::SeqCst) {
            return;
        }
        if hinted {
            shared.hinted.extend(pages.keys().cloned());
        }
        if let Some(during) = shared.during_build.as_mut() {
            during.extend(pages.keys().cloned());
        }
        let site = &self.site;
        let dir = lock::read(&site.dir).clone();
        let chapters = lock::read(&site.pages).clone();
        // The pages of these chapters change in place: the next build renders them.
        let files: Vec<String> = html_files(&chapters, pages).collect();
        shared.touched.extend(files);
        match super::islands::patch_islands(&dir, &chapters, &self.store, &self.space, pages) {
            Ok(0) => {}
            Ok(_) => site.generation.send_modify(|g| {
                *g += 1;
                *lock::lock(&site.last_patch) = Some((*g, pages.keys().cloned().collect()));
            }),
            Err(e) => say_err!("notabene: {e}"),
        }
    }

    /// The patcher thread: each burst of writes patched once it is calm; a storm's pages once
    /// [`CALM`] passes without a write.
    fn run(&self, wake: &Receiver<Hint>) {
        let mut deferred = Changes::new();
        loop {
            let first = if deferred.is_empty() {
                match wake.recv() {
                    Ok(first) => first,
                    Err(_) => return,
                }
            } else {
                match wake.recv_timeout(CALM) {
                    Ok(first) => first,
                    Err(RecvTimeoutError::Timeout) => {
                        self.patch(&std::mem::take(&mut deferred), true);
                        continue;
                    }
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            };
            let (hints, calm) = burst(wake, first);
            let pages = merge(std::mem::take(&mut deferred), hints);
            if calm {
                self.patch(&pages, true);
            } else {
                lock::lock(&self.shared)
                    .hinted
                    .extend(pages.keys().cloned());
                deferred = pages;
            }
        }
    }
}

/// The HTML files of `pages` in the site whose page → files map is `chapters`.
fn html_files<'a>(
    chapters: &'a BTreeMap<String, Vec<String>>,
    pages: &'a Changes,
) -> impl Iterator<Item = String> + 'a {
    pages
        .keys()
        .filter_map(|page| chapters.get(page))
        .flatten()
        .cloned()
}

/// The writes named after `first` until [`BURST_GAP`] passes without one (`true`: calm) or
/// [`BURST_MAX`] is over (`false`: a storm). (Slept, then drained: the thread wakes a few times
/// per burst, not once per write.)
fn burst(wake: &Receiver<Hint>, first: Hint) -> (Vec<Hint>, bool) {
    let mut hints = vec![first];
    let until = Instant::now() + BURST_MAX;
    loop {
        std::thread::sleep(BURST_GAP.min(until.saturating_duration_since(Instant::now())));
        let before = hints.len();
        hints.extend(wake.try_iter());
        if hints.len() == before {
            return (hints, true);
        }
        if Instant::now() >= until {
            return (hints, false);
        }
    }
}

/// `hints` merged into `pages`: a hint with a key adds that comment's change to its page, one
/// without makes the page read whole.
fn merge(mut pages: Changes, hints: Vec<Hint>) -> Changes {
    for (page, key) in hints {
        let slot = pages.entry(page).or_insert_with(|| Some(BTreeMap::new()));
        match (slot, key) {
            (Some(keys), Some((key, kind))) => {
                // A comment created then changed in one burst is still new.
                let k = keys.entry(key).or_insert(kind);
                if *k != FileChange::Created || kind == FileChange::Removed {
                    *k = kind;
                }
            }
            (slot, _) => *slot = None,
        }
    }
    pages
}
