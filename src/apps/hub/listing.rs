//! The branch list's counts: for every branch the hub serves, how many of its comments are open
//! and how many wait for a reviewer to validate them (addressed), read from the remote without a
//! checkout: a bare mirror of the remote's branches under the data directory, fetched at most
//! every [`FRESH`], and each branch's store files read from its tip in one `git cat-file`
//! (`model::book::git_blobs`). The store is where the branch's `book.toml` puts it (`store` of
//! `[preprocessor.notabene]`, inside the repository), else `.notabene` beside it.
//!
//! Owns: the mirror and the counts. Calls: `git`, `model::book::git_blobs`.

use crate::{Error, Result};
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a fetch of the mirror serves the list.
const FRESH: Duration = Duration::from_secs(10);
/// The most comment files read per branch for its counts.
const MAX_FILES: usize = 100_000;

/// A branch's counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Comments open.
    pub(crate) open: usize,
    /// Comments addressed, waiting for a reviewer to validate them.
    pub(crate) to_validate: usize,
}

/// When the mirror was last fetched, and each branch's counts with the tip they were counted at.
type Counted = (Option<Instant>, BTreeMap<String, (String, Counts)>);

/// The mirror and what was counted at which tip.
pub(crate) struct Listing {
    mirror: PathBuf,
    repo: String,
    book: PathBuf,
    state: Mutex<Counted>,
}

fn git(dir: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stderr(Stdio::null())
        .output()
        .map_err(|e| Error::new(format!("cannot run git: {e} (git)")))?;
    if !out.status.success() {
        return Err(Error::new(format!(
            "git {} failed (git)",
            args.first().unwrap_or(&"")
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

impl Listing {
    /// The listing of `repo`'s book at `book`, its mirror under `data_dir`.
    pub(crate) fn new(repo: &str, book: &Path, data_dir: &Path) -> Listing {
        Listing {
            mirror: data_dir.join("mirror.git"),
            repo: repo.to_string(),
            book: book.to_path_buf(),
            state: Mutex::new((None, BTreeMap::new())),
        }
    }

    /// The counts of every branch of `names` (a branch that cannot be read is left out).
    pub(crate) fn counts(&self, names: &[String]) -> BTreeMap<String, Counts> {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if state.0.is_none_or(|at| at.elapsed() > FRESH) && self.fetch().is_ok() {
            state.0 = Some(Instant::now());
        }
        let mut out = BTreeMap::new();
        for name in names {
            let Ok(tip) = git(
                &self.mirror,
                &[
                    "rev-parse",
                    "--verify",
                    &format!("refs/heads/{name}^{{commit}}"),
                ],
            ) else {
                continue;
            };
            let tip = tip.trim().to_string();
            if let Some((seen, counts)) = state.1.get(name)
                && *seen == tip
            {
                out.insert(name.clone(), *counts);
                continue;
            }
            if let Ok(counts) = self.count_at(&tip) {
                state.1.insert(name.clone(), (tip, counts));
                out.insert(name.clone(), counts);
            }
        }
        out
    }

    fn fetch(&self) -> Result<()> {
        if !self.mirror.join("HEAD").exists() {
            let out = Command::new("git")
                .args(["init", "--quiet", "--bare"])
                .arg(&self.mirror)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .output()
                .map_err(|e| Error::new(format!("cannot run git: {e} (git)")))?;
            if !out.status.success() {
                return Err(Error::new("cannot create the branch list's mirror (git)"));
            }
        }
        git(
            &self.mirror,
            &[
                "fetch",
                "--quiet",
                "--no-tags",
                "--prune",
                "--",
                &self.repo,
                "+refs/heads/*:refs/heads/*",
            ],
        )
        .map(|_| ())
    }

    /// The store of the book at commit `tip`, relative to the repository.
    fn store_at(&self, tip: &str) -> PathBuf {
        let toml_path = self.book.join("book.toml");
        let text = git(
            &self.mirror,
            &[
                "show",
                &format!("{tip}:{}", notabene_core::slash_path(&toml_path)),
            ],
        )
        .unwrap_or_default();
        let configured = toml::from_str::<toml::Table>(&text).ok().and_then(|t| {
            t.get("preprocessor")?
                .get("notabene")?
                .get("store")?
                .as_str()
                .map(PathBuf::from)
        });
        match configured {
            Some(p) if p.is_relative() && !p.components().any(|c| c == Component::ParentDir) => {
                self.book.join(p)
            }
            _ => self.book.join(".notabene"),
        }
    }

    fn count_at(&self, tip: &str) -> Result<Counts> {
        let store = notabene_core::slash_path(&self.store_at(tip));
        let store = store.trim_start_matches("./").to_string();
        let listed = git(
            &self.mirror,
            &["ls-tree", "-r", "--name-only", tip, "--", &store],
        )?;
        let files: Vec<&str> = listed
            .lines()
            // Comment files and legacy arrays live under page directories; the store's own
            // files (`meta.json`, `journal.json`) at its top.
            .filter(|f| f.ends_with(".json"))
            .filter(|f| {
                f.strip_prefix(store.as_str())
                    .map(|rest| rest.trim_start_matches('/'))
                    .is_some_and(|rest| rest.contains('/'))
            })
            .take(MAX_FILES)
            .collect();
        let wanted: Vec<(&str, &str)> = files.iter().map(|f| (tip, *f)).collect();
        let mut counts = Counts::default();
        let max = usize::try_from(notabene_store::fsx::MAX_COMMENT_FILE).unwrap_or(usize::MAX);
        let ran =
            crate::model::book::git_blobs::each_file(&self.mirror, &wanted, max, |_, text| {
                if let Some(text) = text {
                    count_file(&text, &mut counts);
                }
            });
        if !ran {
            return Err(Error::new("cannot run git cat-file (git)"));
        }
        Ok(counts)
    }
}

/// Adds the comments of one store file (one comment, or a legacy array of them) to `counts` by
/// status.
fn count_file(text: &str, counts: &mut Counts) {
    let value: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
    let items = match &value {
        serde_json::Value::Array(list) => list.iter().collect(),
        other => vec![other],
    };
    for c in items {
        match c.get("status").and_then(|s| s.as_str()) {
            Some("open") => counts.open += 1,
            Some("addressed") => counts.to_validate += 1,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_of_comment_files_is_counted_by_status() {
        let a = r#"{"id":"a","status":"open"}"#;
        let b = r#"[{"id":"b","status":"addressed"},{"id":"c","status":"resolved"},{"id":"d","status":"open"}]"#;
        let mut counts = Counts::default();
        for text in [a, b, "not json"] {
            count_file(text, &mut counts);
        }
        assert_eq!(
            counts,
            Counts {
                open: 2,
                to_validate: 1
            }
        );
    }
}
