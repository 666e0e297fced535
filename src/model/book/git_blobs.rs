//! Many files of many commits read in one git process (`git cat-file --batch`): what a build
//! asks of git's history for many comments at once costs one process, not one per file.
//!
//! Reads only, without optional locks, as every git call of the build. Owns the batch
//! protocol. Calls: `git`.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// The contents of each `(commit, path)` of `wanted` (a path relative to the top of the work
/// tree at `root`), in order: `None` for a file that commit does not hold, that is not text, or
/// whose name git's batch protocol cannot carry (a line break); all `None` when git cannot run.
pub fn read_files(root: &Path, wanted: &[(&str, &str)]) -> Vec<Option<String>> {
    let carried = |s: &str| !s.contains(['\n', '\r']) && !s.is_empty();
    let asked: Vec<String> = wanted
        .iter()
        .filter(|(commit, path)| carried(commit) && carried(path))
        .map(|(commit, path)| format!("{commit}:{path}\n"))
        .collect();
    let mut answers = if asked.is_empty() {
        Vec::new()
    } else {
        batch(root, &asked.concat()).unwrap_or_default()
    }
    .into_iter();
    wanted
        .iter()
        .map(|(commit, path)| {
            if !(carried(commit) && carried(path)) {
                return None;
            }
            answers.next().flatten()
        })
        .collect()
}

/// Runs `git cat-file --batch` on `input` (one object name a line) and parses its answers.
fn batch(root: &Path, input: &str) -> Option<Vec<Option<String>>> {
    let mut child = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["cat-file", "--batch"])
        .env("LC_ALL", "C")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let input = input.to_string();
    // Written on a thread of its own: git answers while it reads, and a full pipe either way
    // would stop both.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().ok()?;
    let _ = writer.join();
    out.status.success().then(|| answers(&out.stdout))
}

/// The objects of `git cat-file --batch` output, in order: `<oid> <type> <size>`, the
/// contents and a line break; or `<name> missing` (and the other one-line answers).
fn answers(mut out: &[u8]) -> Vec<Option<String>> {
    let mut found = Vec::new();
    while let Some(eol) = out.iter().position(|b| *b == b'\n') {
        let header = String::from_utf8_lossy(&out[..eol]).into_owned();
        out = &out[eol + 1..];
        let mut fields = header.split(' ');
        let (kind, size) = (fields.nth(1), fields.next().and_then(|s| s.parse().ok()));
        let Some(size) = size.filter(|_| fields.next().is_none()) else {
            found.push(None);
            continue;
        };
        let Some(body) = out.get(..size) else {
            found.push(None);
            break;
        };
        out = out.get(size + 1..).unwrap_or(&[]);
        found.push(
            (kind == Some("blob"))
                .then(|| String::from_utf8(body.to_vec()).ok())
                .flatten(),
        );
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_of_a_real_repository_in_one_process() {
        let tmp = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let ok = Command::new("git")
                .arg("-C")
                .arg(tmp.path())
                .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
                .args(args)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .output()
                .unwrap();
            assert!(ok.status.success(), "git {args:?}");
            String::from_utf8(ok.stdout).unwrap()
        };
        git(&["init", "-q"]);
        std::fs::create_dir(tmp.path().join("src")).unwrap();
        std::fs::write(tmp.path().join("src/a b.md"), "first\n").unwrap();
        git(&["add", "-A"]);
        git(&["commit", "-qm", "one"]);
        let one = git(&["rev-parse", "HEAD"]).trim().to_string();
        std::fs::write(tmp.path().join("src/a b.md"), "second\n").unwrap();
        git(&["commit", "-qam", "two"]);
        let two = git(&["rev-parse", "HEAD"]).trim().to_string();
        assert_eq!(
            read_files(
                tmp.path(),
                &[
                    (&one, "src/a b.md"),
                    (&two, "src/nope.md"),
                    (&two, "src/a\nb.md"),
                    (&two, "src/a b.md"),
                    (&two, "src"),
                ]
            ),
            vec![
                Some("first\n".to_string()),
                None,
                None,
                Some("second\n".to_string()),
                None
            ]
        );
    }

    #[test]
    fn answers_in_order_with_missing_ones() {
        let out = b"aaa blob 5\nhello\nHEAD:nope.md missing\nbbb blob 0\n\nccc tree 3\nabc\n";
        assert_eq!(
            answers(out),
            vec![Some("hello".into()), None, Some(String::new()), None]
        );
    }
}
