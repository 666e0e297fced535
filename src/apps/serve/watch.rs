//! Rebuilds for `serve`: the OS's file events ([`super::watched::Events`], through `notify`) say that a watched
//! file changed — where no native watcher can be set up, every [`POLL`] is taken as one — and a
//! snapshot of the watched files, brought up to date for the paths the events name (whole
//! only when polling or when an event names none), then says what changed; a debounce
//! ([`QUIET`], at most [`SETTLE_MAX`]), a build into a fresh directory through the engine, the
//! swap, and a wake-up for pages waiting on the build generation. With nothing happening the
//! thread only wakes to look at what the events gathered: `serve` idles at no measurable CPU
//! however many files it watches. The pages the API names after its writes are patched by the
//! patcher's thread (`island_patcher`), not this one: a rebuild does not hold them up. The build itself
//! parses only the comment files that changed (the store's cache, `notabene_store::cache`).
//! Nothing is written into the build directory once the server stops (`Site::stopped`).
//! The snapshots and the events are `watched`'s.
//!
//! May call: the engine (`output::engine`), `islands`, `island_patcher`, `watched`, `lock`.

use super::island_patcher::IslandPatcher;
#[cfg(test)]
use super::watched::{Changed, snapshot};
use super::watched::{Events, FileStamps, refreshed};
use super::{Site, lock};
use notabene_core::say_err;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the watcher looks for a change: the events' flag, or, polling, the files.
pub(super) const POLL: Duration = Duration::from_millis(200);
/// The debounce: a rebuild starts once the watched files stay unchanged this long.
pub(super) const QUIET: Duration = Duration::from_millis(300);
/// The longest debounce: files still changing after this long are built as they are.
pub(super) const SETTLE_MAX: Duration = Duration::from_secs(5);

/// The watcher thread's state: poll, debounce, rebuild into `work/site-N`, swap, wake waiting
/// pages.
///
/// A comment file changed by another process is patched into the served chapter's island
/// within a poll, before the debounce ([`IslandPatcher::patch`]); the API's own writes are the
/// patcher thread's.
pub(super) struct Watcher {
    site: Arc<Site>,
    root: PathBuf,
    work: PathBuf,
    watched: Vec<PathBuf>,
    events: Events,
    patches: Arc<IslandPatcher>,
    /// The state the last build saw.
    last: FileStamps,
    /// The number of the next build directory.
    next: u64,
    /// The last build rendered only the pages that changed: a whole build (`print.html`, the
    /// search index) is due once the tree is quiet.
    whole_due: bool,
}

impl Watcher {
    /// A watcher of `watched` (told of changes by `events`) for the book at `root`, building
    /// into `work`; `initial` is the state the first build saw.
    pub(super) fn new(
        site: Arc<Site>,
        root: &Path,
        work: &Path,
        (watched, events): (Vec<PathBuf>, Events),
        initial: FileStamps,
        patches: Arc<IslandPatcher>,
    ) -> Watcher {
        Watcher {
            events,
            site,
            root: root.to_path_buf(),
            work: work.to_path_buf(),
            watched,
            patches,
            last: initial,
            next: 1,
            whole_due: false,
        }
    }

    /// Starts the watcher thread, at a lower priority than the server's.
    pub(super) fn spawn(mut self) {
        std::thread::spawn(move || {
            // The rebuilds' threads start from this one: on a busy machine the server answers
            // requests first and the rebuild takes what is left.
            crate::util::background::lower_this_thread(crate::util::background::REBUILD);
            while self.cycle() {}
        });
    }

    /// One poll: when the watched files changed, the comment files others changed are
    /// patched in, the tree is let settle, and the book is rebuilt. `false` once the server
    /// has stopped.
    fn cycle(&mut self) -> bool {
        std::thread::sleep(POLL);
        if *lock::lock(&self.site.stopped) {
            return false;
        }
        // (Nothing heard is the idle case: nothing of the snapshot is copied or compared.)
        let now = self
            .events
            .changed(&self.watched)
            .map(|changed| refreshed(&self.last, changed, &self.watched));
        let Some(now) = now.filter(|now| *now != self.last) else {
            // Quiet: the whole build a build of pages left due is made now.
            return !self.whole_due || self.rebuild(None);
        };
        let last = std::mem::take(&mut self.last);
        self.quick(&last, &now);
        self.last = self.settle(now);
        let files = changed_files(&last, &self.last);
        self.rebuild(Some(files))
    }

    /// The debounce: waits until the tree is quiet for [`QUIET`] (or [`SETTLE_MAX`] passed),
    /// patching in comment files as they change; returns the tree as it settled.
    fn settle(&mut self, mut settled: FileStamps) -> FileStamps {
        let start = Instant::now();
        loop {
            std::thread::sleep(QUIET);
            let again = match self.events.changed(&self.watched) {
                None => return settled,
                Some(changed) => refreshed(&settled, changed, &self.watched),
            };
            if again == settled {
                return settled;
            }
            if start.elapsed() > SETTLE_MAX {
                // Still changing: built as it is now (the events heard are in `again` only).
                return again;
            }
            self.quick(&settled, &again);
            settled = again;
        }
    }

    /// Builds the book into a fresh directory and swaps it in; `false` (and nothing built)
    /// once the server has stopped. After a change of `files`, only the pages that changed are
    /// rendered when that is all that changed ([`crate::output::engine::rebuild_into`]), and a
    /// whole build is then due; with no `files`, the whole book is built, and when its pages
    /// are those already served (a whole build after a build of pages: only `print.html` and
    /// the search index are new) it is swapped in without a reload.
    fn rebuild(&mut self, files: Option<BTreeSet<PathBuf>>) -> bool {
        let site = &self.site;
        let stopped = lock::lock(&site.stopped);
        if *stopped {
            return false;
        }
        let dest = self.work.join(format!("site-{}", self.next));
        self.next += 1;
        let current = lock::read(&site.dir).clone();
        let touched = self.patches.begin_build();
        let change = crate::output::engine::RebuildChange {
            files: files.as_ref(),
            touched: &touched,
        };
        let catching_up = files.is_none();
        let scratch = self.work.join("scratch");
        match crate::output::engine::rebuild_into(
            &self.root,
            (&current, &dest, &scratch),
            &site.kept,
            &change,
        ) {
            Ok((pages, rebuilt)) => {
                self.whole_due = rebuilt != crate::output::engine::Rebuilt::Whole;
                let quiet = catching_up && shows_the_same(&current, &dest);
                // (Tests widen the window in which the API writes while a build runs.)
                notabene_core::failpoint::widen("serve-before-swap");
                // The status names this build once its site is the one served.
                let mut old = PathBuf::new();
                self.patches.swap_in(&dest, &pages, || {
                    old = std::mem::replace(&mut *lock::write(&site.dir), dest.clone());
                    *lock::write(&site.pages) = pages.clone();
                    *lock::lock(&site.last_build) = (site.kept.reuse.counts(), rebuilt);
                    if quiet {
                        let g = *site.generation.borrow();
                        let mut b = lock::lock(&site.builds);
                        *b = (b.0 + 1, g.max(b.1));
                    } else {
                        site.generation.send_modify(|g| {
                            *g += 1;
                            let mut b = lock::lock(&site.builds);
                            *b = (b.0 + 1, *g);
                        });
                    }
                });
                let _ = std::fs::remove_dir_all(old);
            }
            Err(e) => {
                // The pages patched in place are still to render; a whole build that failed
                // is not tried again until the next change.
                self.patches.build_failed(touched);
                self.whole_due = false;
                let _ = std::fs::remove_dir_all(&dest);
                say_err!("notabene: {e}");
            }
        }
        drop(stopped);
        true
    }

    /// IslandPatcher in the comment files changed by others (an agent's CLI) between `before` and
    /// `after`, except on the pages the API already named.
    fn quick(&mut self, before: &FileStamps, after: &FileStamps) {
        let done = self.patches.take_hinted();
        if let Some(mut pages) =
            super::islands::changed_pages(before, after, self.patches.store().root())
        {
            pages.retain(|page, _| !done.contains(page));
            self.patches.patch(&pages, false);
        }
    }
}

/// The files whose state differs between `before` and `after` (changed, new or gone).
fn changed_files(before: &FileStamps, after: &FileStamps) -> BTreeSet<PathBuf> {
    let mut out: BTreeSet<PathBuf> = after
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(v))
        .map(|(k, _)| k.clone())
        .collect();
    out.extend(before.keys().filter(|k| !after.contains_key(*k)).cloned());
    out
}

/// Whether the site at `new` shows what the site at `old` shows: every file but `print.html`
/// and the search index byte for byte, once the new search index's name, where pages name it,
/// is read as the old one's. When it does, the old search index is linked into `new` under its
/// name (`new`'s pages name their own), so that the pages open before the swap keep searching.
fn shows_the_same(old: &Path, new: &Path) -> bool {
    fn files(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, u64>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let Ok(meta) = e.metadata() else { continue };
            if meta.is_dir() {
                files(root, &e.path(), out);
            } else if let Ok(rel) = e.path().strip_prefix(root) {
                out.insert(rel.to_path_buf(), meta.len());
            }
        }
    }
    let index = |p: &Path| {
        p.parent() == Some(Path::new(""))
            && p.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                n.starts_with("searchindex") && n.ends_with(".js")
            })
    };
    let (mut a, mut b) = (BTreeMap::new(), BTreeMap::new());
    files(old, old, &mut a);
    files(new, new, &mut b);
    let name = |m: &BTreeMap<PathBuf, u64>| m.keys().find(|p| index(p)).cloned();
    let (old_index, new_index) = (name(&a), name(&b));
    a.retain(|p, _| p != Path::new("print.html") && !index(p));
    b.retain(|p, _| p != Path::new("print.html") && !index(p));
    // Sizes first (a search index's names are of one length, so they do not differ for it).
    if a != b {
        return false;
    }
    let rename = match (&old_index, &new_index) {
        (Some(o), Some(n)) if o != n => Some((
            n.to_string_lossy().into_owned(),
            o.to_string_lossy().into_owned(),
        )),
        _ => None,
    };
    let same = a.keys().all(|p| {
        let (Ok(x), Ok(y)) = (std::fs::read(old.join(p)), std::fs::read(new.join(p))) else {
            return false;
        };
        match &rename {
            Some((n, o)) if x != y => String::from_utf8(y)
                .is_ok_and(|y| y.replace(n.as_str(), o) == *String::from_utf8_lossy(&x)),
            _ => x == y,
        }
    });
    if same
        && let Some(o) = &old_index
        && rename.is_some()
    {
        let _ = std::fs::hard_link(old.join(o), new.join(o))
            .or_else(|_| std::fs::copy(old.join(o), new.join(o)).map(drop));
    }
    same
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paths_the_events_name_bring_the_snapshot_up_to_date() {
        let dir = tempfile::tempdir().unwrap();
        let (src, store) = (dir.path().join("src"), dir.path().join(".notabene"));
        std::fs::create_dir_all(src.join("guide")).unwrap();
        std::fs::create_dir_all(store.join("guide")).unwrap();
        std::fs::write(src.join("guide/a.md"), "a").unwrap();
        std::fs::write(store.join("guide/c.json"), "{}").unwrap();
        let toml = dir.path().join("book.toml");
        std::fs::write(&toml, "").unwrap();
        let watched = vec![src.clone(), store.clone(), toml.clone()];
        let last = snapshot(&watched);
        // A chapter edited, a comment file removed, a new page directory with a comment, a
        // sibling of book.toml (not watched) created.
        std::fs::write(src.join("guide/a.md"), "a longer").unwrap();
        std::fs::remove_file(store.join("guide/c.json")).unwrap();
        std::fs::create_dir_all(store.join("new")).unwrap();
        std::fs::write(store.join("new/d.json"), "{}").unwrap();
        std::fs::write(dir.path().join("other.txt"), "x").unwrap();
        let named: BTreeSet<PathBuf> = [
            src.join("guide/a.md"),
            store.join("guide/c.json"),
            store.join("new"),
            dir.path().join("other.txt"),
        ]
        .into();
        let now = refreshed(&last, Changed::Paths(named), &watched);
        assert_eq!(now, snapshot(&watched));
        assert_ne!(now, last);
        // Nothing named: nothing changes, even where the files did.
        std::fs::write(src.join("guide/a.md"), "unseen").unwrap();
        assert_eq!(
            refreshed(&now, Changed::Paths(BTreeSet::new()), &watched),
            now
        );
        assert_eq!(refreshed(&now, Changed::All, &watched), snapshot(&watched));
    }

    #[test]
    fn a_rewrite_that_keeps_the_modification_time_and_length_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("c.json");
        std::fs::write(&file, "aaaa").unwrap();
        let when = std::fs::metadata(&file).unwrap().modified().unwrap();
        let watched = vec![dir.path().to_path_buf()];
        let before = snapshot(&watched);
        // As `cp -p` or `rsync -t` writes it.
        std::fs::write(&file, "bbbb").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(when)
            .unwrap();
        let after = snapshot(&watched);
        assert_eq!(before[&file].modified, after[&file].modified);
        assert_eq!(before[&file].len, after[&file].len);
        assert_eq!(changed_files(&before, &after), [file].into());
    }

    #[test]
    fn a_whole_build_shows_the_same_when_only_print_and_the_search_index_differ() {
        let dir = tempfile::tempdir().unwrap();
        let site = |name: &str, index: &str, page: &str, print: &str| {
            let root = dir.path().join(name);
            std::fs::create_dir_all(root.join("guide")).unwrap();
            std::fs::write(
                root.join("guide/a.html"),
                format!("<script src=\"../{index}\"></script>{page}"),
            )
            .unwrap();
            std::fs::write(root.join(index), format!("index of {name}")).unwrap();
            std::fs::write(root.join("print.html"), print).unwrap();
            root
        };
        // The pages served name the old index; the whole build's name its own, of one length.
        let old = site("old", "searchindex-aaaa.js", "<p>edited</p>", "old print");
        let new = site("new", "searchindex-bbbb.js", "<p>edited</p>", "new print");
        assert!(shows_the_same(&old, &new));
        // The old index is linked into the new site, for the pages open before the swap.
        assert_eq!(
            std::fs::read_to_string(new.join("searchindex-aaaa.js")).unwrap(),
            "index of old"
        );
        // A page that reads otherwise is not the same (nor is the old index linked then).
        let other = site(
            "other",
            "searchindex-cccc.js",
            "<p>edited!</p>",
            "new print",
        );
        assert!(!shows_the_same(&old, &other));
        assert!(!other.join("searchindex-aaaa.js").exists());
        // Nor is a site with a page more.
        let more = site("more", "searchindex-dddd.js", "<p>edited</p>", "new print");
        std::fs::write(more.join("b.html"), "b").unwrap();
        assert!(!shows_the_same(&old, &more));
    }
}
