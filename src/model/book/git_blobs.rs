//! Many files of many commits read in one git process (`git cat-file --batch`): what a build
//! asks of git's history for many comments at once, or the hub's branch list of a branch's
//! store, costs one process, not one per file.
//!
//! Files are handed over one at a time as git answers, each at most a size the caller gives:
//! what a branch carries (a chapter of 200 MB that compresses to nothing, a thousand commits)
//! never sits in memory at once. Reads only, without optional locks, as every git call of the
//! build. Owns the batch protocol. Calls: `git`.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

/// Hands each `(commit, path)` of `wanted` (a path relative to the top of the work tree at
/// `root`) to `each` with its index and contents, once: `None` for a file that commit does not
/// hold, that is not text, that is over `max_bytes`, or whose name git's batch protocol cannot
/// carry (a line break); every one `None` when git cannot run. In `wanted`'s order, those git
/// did not answer last. False when git could not be run.
pub fn each_file(
    root: &Path,
    wanted: &[(&str, &str)],
    max_bytes: usize,
    mut each: impl FnMut(usize, Option<String>),
) -> bool {
    let carried = |s: &str| !s.contains(['\n', '\r']) && !s.is_empty();
    let asked: Vec<usize> = (0..wanted.len())
        .filter(|&i| carried(wanted[i].0) && carried(wanted[i].1))
        .collect();
    let input: String = asked
        .iter()
        .map(|&i| format!("{}:{}\n", wanted[i].0, wanted[i].1))
        .collect();
    let mut answered = 0;
    let ran = asked.is_empty()
        || batch(root, input, max_bytes, |answer| {
            if let Some(&i) = asked.get(answered) {
                answered += 1;
                each(i, answer);
            }
        })
        .is_some();
    // Whatever git did not answer (a name it could not carry, git not run, output cut short).
    let given: std::collections::BTreeSet<usize> = asked[..answered].iter().copied().collect();
    for i in (0..wanted.len()).filter(|i| !given.contains(i)) {
        each(i, None);
    }
    ran
}

/// Runs `git cat-file --batch` on `input` (one object name a line), handing each answer to
/// `each` as it is read: a blob of `max_bytes` or less as text, anything else `None`.
fn batch(
    root: &Path,
    input: String,
    max_bytes: usize,
    mut each: impl FnMut(Option<String>),
) -> Option<()> {
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
    // Written on a thread of its own: git answers while it reads, and a full pipe either way
    // would stop both.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let mut out = BufReader::new(child.stdout.take()?);
    let mut header = String::new();
    loop {
        header.clear();
        match out.read_line(&mut header) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let Some((kind, size)) = parse_header(header.trim_end_matches('\n')) else {
            each(None);
            continue;
        };
        let body = if kind == "blob" && size <= max_bytes {
            let mut body = vec![0; size];
            if out.read_exact(&mut body).is_err() {
                break;
            }
            String::from_utf8(body).ok()
        } else {
            let skipped = std::io::copy(&mut (&mut out).take(size as u64), &mut std::io::sink());
            if skipped.ok() != Some(size as u64) {
                break;
            }
            None
        };
        // The line break after the contents.
        let mut end = [0u8; 1];
        if out.read_exact(&mut end).is_err() {
            break;
        }
        each(body);
    }
    let _ = child.wait();
    let _ = writer.join();
    Some(())
}

/// An object's header, `<oid> <type> <size>`: its type and size. `None` for the one-line
/// answers (`<name> missing`, `<name> ambiguous`).
fn parse_header(header: &str) -> Option<(&str, usize)> {
    let mut fields = header.split(' ');
    let (kind, size) = (fields.nth(1)?, fields.next()?.parse().ok()?);
    fields.next().is_none().then_some((kind, size))
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
        let big = "x".repeat(100);
        std::fs::write(tmp.path().join("src/big.md"), &big).unwrap();
        git(&["add", "-A"]);
        git(&["commit", "-qm", "three"]);
        let wanted = [
            (one.as_str(), "src/a b.md"),
            (two.as_str(), "src/nope.md"),
            (two.as_str(), "src/a\nb.md"),
            (two.as_str(), "src/a b.md"),
            (two.as_str(), "src"),
            ("HEAD", "src/big.md"),
            ("HEAD", "src/a b.md"),
        ];
        let mut got = Vec::new();
        each_file(tmp.path(), &wanted, 99, |i, text| got.push((i, text)));
        let some = |s: &str| Some(s.to_string());
        assert_eq!(
            got,
            vec![
                (0, some("first\n")),
                (1, None),
                (3, some("second\n")),
                (4, None),
                (5, None),
                (6, some("second\n")),
                (2, None),
            ]
        );
    }

    #[test]
    fn headers_and_one_line_answers() {
        assert_eq!(parse_header("abc blob 5"), Some(("blob", 5)));
        assert_eq!(parse_header("abc tree 12"), Some(("tree", 12)));
        assert_eq!(parse_header("HEAD:a b.md missing"), None);
        assert_eq!(parse_header("HEAD:x blob 5 missing"), None);
        assert_eq!(parse_header("HEAD:x ambiguous"), None);
    }
}
