//! The store in real git: `notabene init` sets up the merge driver (and the octopus strategy),
//! then branches that append journal entries, reply to the same comments and close some merge
//! through `git merge` — one by one and as one octopus — without a conflict; real conflicts
//! stay conflicts with both versions kept; a clone without `init` merges the old way and
//! `doctor` says why; writers killed mid-write leave temp files that `verify` lists, git
//! ignores and `clean` removes; a merge driver killed before its rename leaves nothing in the
//! work tree (its temp file is in the store); a close on one side survives a reply and a hold
//! on the other, a close changed on both sides differently is a conflict.

use crate::support::common::{self, NOW, Out, run_with};
use notabene_store::json::to_js_pretty;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// PATH with the built binaries' directory first, where `init` links the octopus strategy.
fn path_env() -> String {
    let dir = Path::new(common::bin()).parent().unwrap();
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// `git args…` in `dir`: no user or system config, a fixed identity, PATH as `path_env`.
fn git(dir: &Path, args: &[&str]) -> Out {
    git_env(dir, args, &[])
}

/// [`git`] with `env` added (git passes it on to the merge driver).
fn git_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Out {
    let path = path_env();
    let mut all = vec![("PATH", path.as_str()), ("LC_ALL", "C")];
    all.extend_from_slice(env);
    common::git_output(dir, args, &all)
}

#[track_caller]
fn git_ok(dir: &Path, args: &[&str]) -> String {
    let out = git(dir, args);
    assert_eq!(out.code, 0, "git {args:?}: {}{}", out.stdout, out.stderr);
    out.stdout
}

/// `notabene args…` in `dir` at the instant `now`.
fn nb(dir: &Path, args: &[&str], stdin: Option<&str>, now: &str) -> Out {
    let path = path_env();
    run_with(
        dir,
        args,
        stdin,
        &[("PATH", path.as_str()), ("NOTABENE_NOW", now)],
    )
}

#[track_caller]
fn nb_ok(dir: &Path, args: &[&str], stdin: Option<&str>, now: &str) -> String {
    let out = nb(dir, args, stdin, now);
    assert_eq!(out.code, 0, "notabene {args:?}: {}", out.stderr);
    out.stdout
}

/// A git repository holding a one-chapter book, its store set up by `init`, with `comments`
/// comments on the chapter, committed. Returns the comment ids.
fn repo_with_comments(dir: &Path, comments: usize) -> Vec<String> {
    common::git_init(dir);
    common::write(&dir.join("book.toml"), "[book]\ntitle = \"Merges\"\n");
    common::write(&dir.join("src/SUMMARY.md"), "# Summary\n\n- [A](a.md)\n");
    let words: Vec<String> = (0..comments).map(|i| format!("word{i}")).collect();
    common::write(
        &dir.join("src/a.md"),
        &format!("# A\n\nSome {} here.\n", words.join(" ")),
    );
    nb_ok(dir, &["init"], None, NOW);
    let ids = words
        .iter()
        .map(|w| {
            let out = nb_ok(
                dir,
                &[
                    "comments", "add", "--page", "src/a", "--quote", w, "--body", w, "--json",
                ],
                None,
                NOW,
            );
            let v: Value = serde_json::from_str(&out).unwrap();
            v["id"].as_str().unwrap().to_string()
        })
        .collect();
    git_ok(dir, &["add", "-A"]);
    git_ok(dir, &["commit", "-qm", "base"]);
    ids
}

/// The instant of step `s` on branch `k`.
fn at(k: usize, s: usize) -> String {
    format!("2026-07-28T{:02}:{:02}:{:02}.000Z", 10 + k, s / 60, s % 60)
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&common::read(path)).unwrap()
}

/// Every `*.json` in the store is the contract's canonical bytes.
#[track_caller]
fn assert_canonical(store: &Path) {
    for rel in common::files_matching(store, |p| p.ends_with(".json")) {
        let text = common::read(&store.join(&rel));
        let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert_eq!(text, to_js_pretty(&v), "{rel} is not canonical");
    }
}

const BRANCHES: usize = 8;
const ENTRIES: usize = 20;
/// Branch k < RESOLVERS resolves comment k.
const RESOLVERS: usize = 3;

/// Branch `k`: 20 journal entries, a reply to each comment, and (for the first few) a close.
fn branch_work(dir: &Path, ids: &[String], k: usize) {
    git_ok(dir, &["checkout", "-q", "-b", &format!("b{k}"), "main"]);
    let mut step = 0;
    for i in 0..ENTRIES {
        let listed: Vec<&String> = if i == 0 && k < RESOLVERS {
            vec![&ids[k]]
        } else {
            vec![]
        };
        let entry = json!({
            "id": format!("j-b{k}-{i:02}"),
            "date": "2026-07-28",
            "title": format!("branch {k}, entry {i}"),
            "changes": [{ "page": "src/a", "what": "edit", "commentIds": listed }],
        });
        step += 1;
        nb_ok(
            dir,
            &["journal", "add"],
            Some(&entry.to_string()),
            &at(k, step),
        );
    }
    for id in ids {
        step += 1;
        nb_ok(
            dir,
            &[
                "comments",
                "reply",
                id,
                "--body",
                &format!("reply from branch {k}"),
                "--author",
                &format!("Reviewer {k}"),
            ],
            None,
            &at(k, step),
        );
    }
    if k < RESOLVERS {
        step += 1;
        nb_ok(
            dir,
            &[
                "comments",
                "done",
                &ids[k],
                "--journal",
                &format!("j-b{k}-00"),
                "--note",
                &format!("fixed on branch {k}"),
            ],
            None,
            &at(k, step),
        );
    }
    git_ok(dir, &["add", "-A"]);
    git_ok(dir, &["commit", "-qm", &format!("branch {k}")]);
}

/// The merged store holds every entry and reply exactly once, the closes, and passes verify.
#[track_caller]
fn assert_merged(dir: &Path, ids: &[String]) {
    let store = dir.join(".notabene");
    let journal = read_json(&store.join("journal.json"));
    let got: Vec<&str> = journal
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    let want: Vec<String> = (0..BRANCHES)
        .flat_map(|k| (0..ENTRIES).map(move |i| format!("j-b{k}-{i:02}")))
        .collect();
    assert_eq!(got, want);
    for (n, id) in ids.iter().enumerate() {
        // The last branch's reply to it is the latest change.
        let last = at(BRANCHES - 1, ENTRIES + n + 1);
        let c = read_json(&store.join(format!("src/a/{id}.json")));
        let thread: Vec<(&str, &str)> = c["thread"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (m["author"].as_str().unwrap(), m["body"].as_str().unwrap()))
            .collect();
        let mut want = vec![(
            "Ada Agent <ada@example.com>".to_string(),
            format!("word{n}"),
        )];
        want.extend(
            (0..BRANCHES).map(|k| (format!("Reviewer {k}"), format!("reply from branch {k}"))),
        );
        let want: Vec<(&str, &str)> = want.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        assert_eq!(thread, want, "thread of {id}");
        if n < RESOLVERS {
            assert_eq!(c["status"], "resolved", "{id}");
            assert_eq!(
                c["resolution"],
                json!({"note": format!("fixed on branch {n}"), "journalEntryId": format!("j-b{n}-00")})
            );
        } else {
            assert_eq!(
                (&c["status"], &c["resolution"]),
                (&json!("open"), &Value::Null)
            );
        }
        assert_eq!(c["updatedAt"], json!(last), "{id}");
    }
    assert_canonical(&store);
    let verify = nb(dir, &["comments", "verify"], None, NOW);
    assert_eq!(
        (verify.code, verify.stdout.trim()),
        (
            0,
            format!(
                "notabene verify: {} comment(s), {} journal entr(ies) — 0 error(s), 0 warning(s).",
                ids.len(),
                BRANCHES * ENTRIES
            )
            .as_str()
        )
    );
}

#[test]
fn eight_branches_merge_one_by_one_and_as_an_octopus() {
    let tmp = common::tempdir();
    let dir = tmp.path();
    let ids = repo_with_comments(dir, 5);
    git_ok(dir, &["branch", "-M", "main"]);
    for k in 0..BRANCHES {
        branch_work(dir, &ids, k);
    }

    git_ok(dir, &["checkout", "-q", "-b", "one-by-one", "main"]);
    for k in 0..BRANCHES {
        let out = git(dir, &["merge", "--no-edit", &format!("b{k}")]);
        assert_eq!(out.code, 0, "merge b{k}: {}{}", out.stdout, out.stderr);
        assert!(!out.stdout.contains("CONFLICT"), "{}", out.stdout);
    }
    assert_merged(dir, &ids);
    assert_eq!(git_ok(dir, &["status", "--porcelain"]), "");

    git_ok(dir, &["checkout", "-q", "-b", "octopus", "main"]);
    let heads: Vec<String> = (0..BRANCHES).map(|k| format!("b{k}")).collect();
    let mut args = vec!["merge", "--no-edit"];
    args.extend(heads.iter().map(String::as_str));
    let out = git(dir, &args);
    assert_eq!(out.code, 0, "octopus: {}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("Merge made by the 'notabene' strategy."),
        "{}",
        out.stdout
    );
    // One commit whose parents are the eight branches (main is their ancestor).
    let parents = git_ok(dir, &["log", "-1", "--format=%P"]);
    assert_eq!(parents.split_whitespace().count(), BRANCHES);
    assert_merged(dir, &ids);
    // Both ways give the same store.
    assert_eq!(
        git_ok(dir, &["rev-parse", "octopus:.notabene"]),
        git_ok(dir, &["rev-parse", "one-by-one:.notabene"])
    );
}

/// Commits `edit` on a new branch `name` from main.
fn on_branch(dir: &Path, name: &str, edit: impl FnOnce()) {
    git_ok(dir, &["checkout", "-q", "-b", name, "main"]);
    edit();
    git_ok(dir, &["add", "-A"]);
    git_ok(dir, &["commit", "-qm", name]);
}

/// Stage `n` (2 ours, 3 theirs) of a conflicted path.
fn stage(dir: &Path, n: u8, path: &str) -> String {
    git_ok(dir, &["show", &format!(":{n}:{path}")])
}

#[test]
fn real_conflicts_stay_conflicts_and_keep_both_versions() {
    let tmp = common::tempdir();
    let dir = tmp.path();
    let ids = repo_with_comments(dir, 2);
    git_ok(dir, &["branch", "-M", "main"]);
    let entry = |title: &str| {
        json!({"id": "j-same", "date": "2026-07-28", "title": title, "changes": [{"page": "src/a"}]})
            .to_string()
    };

    // The same journal id with different content.
    on_branch(dir, "x", || {
        nb_ok(dir, &["journal", "add"], Some(&entry("ours")), &at(0, 1));
    });
    on_branch(dir, "y", || {
        nb_ok(dir, &["journal", "add"], Some(&entry("theirs")), &at(1, 1));
    });
    git_ok(dir, &["checkout", "-q", "x"]);
    let out = git(dir, &["merge", "--no-edit", "y"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("CONFLICT (add/add): Merge conflict in .notabene/journal.json"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr.contains("notabene: merge conflict, both versions kept for a person: journal entry j-same has different content on the two sides (.notabene/journal.json)"),
        "{}",
        out.stderr
    );
    let path = ".notabene/journal.json";
    let (ours, theirs) = (stage(dir, 2, path), stage(dir, 3, path));
    assert!(ours.contains("\"ours\"") && theirs.contains("\"theirs\""));
    assert_eq!(
        common::read(&dir.join(path)),
        format!(
            "<<<<<<< ours (notabene: journal entry j-same has different content on the two sides)\n{ours}=======\n{theirs}>>>>>>> theirs\n"
        )
    );
    // verify refuses the conflicted journal instead of reading past it.
    assert_eq!(nb(dir, &["comments", "verify"], None, NOW).code, 1);
    git_ok(dir, &["merge", "--abort"]);

    // A comment deleted on one side and changed on the other: git's own modify/delete conflict.
    let file = format!(".notabene/src/a/{}.json", ids[0]);
    on_branch(dir, "del", || {
        nb_ok(dir, &["comments", "rm", &ids[0]], None, &at(2, 1));
    });
    on_branch(dir, "mod", || {
        nb_ok(
            dir,
            &["comments", "reply", &ids[0], "--body", "still here"],
            None,
            &at(3, 1),
        );
    });
    let changed = git_ok(dir, &["show", &format!("mod:{file}")]);
    git_ok(dir, &["checkout", "-q", "del"]);
    let out = git(dir, &["merge", "--no-edit", "mod"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(&format!(
            "CONFLICT (modify/delete): {file} deleted in HEAD and modified in mod."
        )),
        "{}",
        out.stdout
    );
    assert_eq!(common::read(&dir.join(&file)), changed);
    assert_eq!(stage(dir, 3, &file), changed);
    git_ok(dir, &["merge", "--abort"]);

    // An unparseable side (a hand edit gone wrong): a conflict, never a guess.
    let file = format!(".notabene/src/a/{}.json", ids[1]);
    on_branch(dir, "broken", || {
        let p = dir.join(&file);
        let text = common::read(&p).replacen("\"status\": \"open\"", "\"status\": open", 1);
        common::write(&p, &text);
    });
    on_branch(dir, "fine", || {
        nb_ok(
            dir,
            &["comments", "reply", &ids[1], "--body", "a reply"],
            None,
            &at(4, 1),
        );
    });
    git_ok(dir, &["checkout", "-q", "broken"]);
    let out = git(dir, &["merge", "--no-edit", "fine"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains(
            "notabene: merge conflict, both versions kept for a person: our side is not valid JSON"
        ),
        "{}",
        out.stderr
    );
    let (ours, theirs) = (stage(dir, 2, &file), stage(dir, 3, &file));
    let left = common::read(&dir.join(&file));
    assert!(left.contains(&ours) && left.contains(&theirs), "{left}");
    assert!(theirs.contains("a reply") && ours.contains("\"status\": open"));
}

#[test]
fn a_clone_without_init_merges_the_old_way_and_doctor_says_why() {
    let tmp = common::tempdir();
    let origin = tmp.path().join("origin");
    std::fs::create_dir(&origin).unwrap();
    repo_with_comments(&origin, 1);
    git_ok(&origin, &["branch", "-M", "main"]);
    let clone = tmp.path().join("clone");
    git_ok(tmp.path(), &["clone", "-q", "origin", "clone"]);

    let journal = |dir: &Path, id: &str, now: &str| {
        let e =
            json!({"id": id, "date": "2026-07-28", "title": id, "changes": [{"page": "src/a"}]});
        nb_ok(dir, &["journal", "add"], Some(&e.to_string()), now);
    };
    journal(&clone, "j-base", &at(0, 1));
    git_ok(&clone, &["add", "-A"]);
    git_ok(&clone, &["commit", "-qm", "journal"]);
    on_branch(&clone, "x", || journal(&clone, "j-x", &at(1, 1)));
    on_branch(&clone, "y", || journal(&clone, "j-y", &at(2, 1)));

    let doctor = nb_ok(&clone, &["doctor"], None, NOW);
    assert!(
        doctor.contains("merge     not configured in this clone: run `notabene init` (until then git merges the store as text, and journal appends on two branches conflict)"),
        "{doctor}"
    );
    let report: Value =
        serde_json::from_str(&nb_ok(&clone, &["doctor", "--json"], None, NOW)).unwrap();
    assert_eq!(
        (
            &report["merge"]["attribute"],
            &report["merge"]["driver"],
            &report["merge"]["configured"]
        ),
        (&json!("notabene"), &Value::Null, &json!(false))
    );

    // The attribute names a driver this clone does not define: git's own text merge.
    git_ok(&clone, &["checkout", "-q", "x"]);
    let out = git(&clone, &["merge", "--no-edit", "y"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("CONFLICT (content): Merge conflict in .notabene/journal.json"),
        "{}",
        out.stdout
    );
    assert!(!out.stderr.contains("notabene"), "{}", out.stderr);
    git_ok(&clone, &["merge", "--abort"]);

    // After `init`, the same merge is clean.
    let said = nb_ok(&clone, &["init"], None, NOW);
    assert!(
        said.contains("configured the git merge driver in this clone"),
        "{said}"
    );
    let out = git(&clone, &["merge", "--no-edit", "y"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let ids: Vec<Value> = read_json(&clone.join(".notabene/journal.json"))
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].clone())
        .collect();
    assert_eq!(ids, vec![json!("j-base"), json!("j-x"), json!("j-y")]);
}

#[test]
fn init_sets_git_up_once_and_says_so() {
    let tmp = common::tempdir();
    let dir = tmp.path();
    repo_with_comments(dir, 0);
    let store = dir.join(".notabene");
    assert_eq!(
        common::read(&store.join(".gitattributes")).lines().last(),
        Some("*.json merge=notabene")
    );
    assert_eq!(
        common::read(&store.join(".gitignore")).lines().last(),
        Some("*.tmp")
    );
    let driver = git_ok(
        dir,
        &["config", "--local", "--get", "merge.notabene.driver"],
    );
    assert_eq!(
        driver.trim(),
        format!("'{}' merge-driver %O %A %B %P", common::bin())
    );
    assert_eq!(
        git_ok(dir, &["config", "--local", "--get", "pull.octopus"]).trim(),
        "notabene"
    );
    let again = nb_ok(dir, &["init"], None, NOW);
    let git_lines: Vec<&str> = again
        .lines()
        .filter(|l| l.contains("git") || l.contains("octopus"))
        .collect();
    assert_eq!(
        git_lines,
        vec![
            "notabene: .notabene/.gitattributes is current.",
            "notabene: .notabene/.gitignore is current.",
            "notabene: the git merge driver is configured in this clone (merge.notabene.driver).",
            "notabene: octopus merges use the notabene strategy (pull.octopus).",
        ]
    );
    // A .gitignore of the team's own keeps its lines; init adds its one.
    common::write(&store.join(".gitignore"), "drafts/");
    nb_ok(dir, &["init"], None, NOW);
    assert_eq!(common::read(&store.join(".gitignore")), "drafts/\n*.tmp\n");
}

/// Spawns `comments reply` on `id` with body `body`.
fn spawn_reply(dir: &Path, id: &str, body: &str, failpoint: bool) -> std::process::Child {
    let mut cmd = Command::new(common::bin());
    cmd.args(["comments", "reply", id, "--body", body])
        .current_dir(dir)
        .env("NOTABENE_AUTHOR", "Killer")
        .env("NOTABENE_AUTHOR_EMAIL", "k@example.com")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("NOTABENE_NOW")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if failpoint {
        cmd.env("NOTABENE_FAILPOINT", "before-rename");
    }
    cmd.spawn().expect("spawn notabene")
}

#[test]
fn killed_writers_leave_temp_files_that_verify_lists_git_ignores_and_clean_removes() {
    let tmp = common::tempdir();
    let dir = tmp.path();
    let ids = repo_with_comments(dir, 3);
    let store = dir.join(".notabene");
    let mut rng = fastrand::Rng::with_seed(7);
    let mut done: Vec<(String, String)> = Vec::new();
    for wave in 0..8 {
        let mut children = Vec::new();
        for n in 0..12 {
            let id = ids[rng.usize(..ids.len())].clone();
            let body = format!("reply {wave}-{n}");
            // One writer per wave dies between its temp file and the rename, as a kill
            // there would; the others are killed at random moments or finish.
            let child = spawn_reply(dir, &id, &body, n == 0);
            children.push((id, body, child, n != 0 && rng.bool()));
        }
        std::thread::sleep(std::time::Duration::from_millis(rng.u64(2..25)));
        for (_, _, child, kill) in &mut children {
            if *kill {
                let _ = child.kill();
            }
        }
        for (id, body, mut child, _) in children {
            if child.wait().unwrap().success() {
                done.push((id, body));
            }
        }
    }
    // Every comment file parses; every reply reported done is there.
    for id in &ids {
        let c = read_json(&store.join(format!("src/a/{id}.json")));
        let bodies: BTreeSet<&str> = c["thread"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["body"].as_str().unwrap())
            .collect();
        for (_, body) in done.iter().filter(|(i, _)| i == id) {
            assert!(bodies.contains(body.as_str()), "{body} lost from {id}");
        }
    }
    let leftovers: BTreeSet<String> = common::files_matching(&store, |p| p.ends_with(".tmp"))
        .into_iter()
        .collect();
    assert!(leftovers.len() >= 8, "{leftovers:?}");

    // verify lists each one (a warning: exit 0).
    let out = nb(dir, &["comments", "verify", "--json"], None, NOW);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let listed: BTreeSet<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "store-temp-file")
        .map(|f| {
            assert_eq!(f["level"], "warning");
            f["file"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(listed, leftovers);

    // git does not see them.
    let status = git_ok(dir, &["status", "--porcelain", "--untracked-files=all"]);
    assert!(!status.contains(".tmp"), "{status}");
    assert!(!status.is_empty(), "the replies are changes git sees");

    // clean removes them, each named, and nothing else.
    let before: BTreeSet<String> = common::files_matching(&store, |p| !p.ends_with(".tmp"))
        .into_iter()
        .collect();
    let out = nb_ok(dir, &["clean"], None, NOW);
    let removed: BTreeSet<String> = out
        .lines()
        .filter_map(|l| l.strip_prefix("notabene: removed .notabene/"))
        .map(str::to_string)
        .collect();
    assert_eq!(removed, leftovers);
    assert_eq!(
        out.lines().last(),
        Some(
            format!(
                "notabene: removed {} temp file(s), kept 0.",
                leftovers.len()
            )
            .as_str()
        )
    );
    let after: BTreeSet<String> = common::files_matching(&store, |_| true)
        .into_iter()
        .collect();
    assert_eq!(after, before);
}

#[test]
fn clean_keeps_a_temp_file_a_live_writer_holds_and_a_recent_foreign_one() {
    let tmp = common::tempdir();
    let dir = tmp.path();
    repo_with_comments(dir, 0);
    let store = dir.join(".notabene");
    let page = store.join("src/a");
    std::fs::create_dir_all(&page).unwrap();
    // Ours, held the way a writer holds it until its rename.
    let held = page.join(".c_x.json.AbC123.tmp");
    let file = std::fs::File::create(&held).unwrap();
    file.lock_shared().unwrap();
    // Another tool's (the original's naming), just written; and an old one.
    let recent = page.join("c_y.json.4242.1.tmp");
    let old: PathBuf = page.join("c_z.json.4243.1.tmp");
    common::write(&recent, "{");
    common::write(&old, "{");
    let two_minutes_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(120);
    std::fs::File::options()
        .write(true)
        .open(&old)
        .unwrap()
        .set_modified(two_minutes_ago)
        .unwrap();
    let out = nb_ok(dir, &["clean"], None, NOW);
    assert_eq!(
        out,
        "notabene: kept .notabene/src/a/.c_x.json.AbC123.tmp (a running write holds it)\n\
         notabene: kept .notabene/src/a/c_y.json.4242.1.tmp (another tool's, younger than a minute)\n\
         notabene: removed .notabene/src/a/c_z.json.4243.1.tmp\n\
         notabene: removed 1 temp file(s), kept 2.\n"
    );
    assert!(held.exists() && recent.exists() && !old.exists());
    drop(file);
    let out = nb_ok(dir, &["clean"], None, NOW);
    assert!(
        out.contains("removed .notabene/src/a/.c_x.json.AbC123.tmp"),
        "{out}"
    );
    assert!(!held.exists());
}

/// Branch `name` from main closes `id` through journal entry `entry` with `note` at `now`.
fn close_on_branch(dir: &Path, name: &str, id: &str, entry: &str, note: &str, k: usize) {
    on_branch(dir, name, || {
        let e = json!({
            "id": entry, "date": "2026-07-28", "title": note,
            "changes": [{ "page": "src/a", "what": "edit", "commentIds": [id] }],
        });
        nb_ok(dir, &["journal", "add"], Some(&e.to_string()), &at(k, 1));
        nb_ok(
            dir,
            &["comments", "done", id, "--journal", entry, "--note", note],
            None,
            &at(k, 2),
        );
    });
}

#[test]
fn a_close_on_one_branch_and_a_reply_and_hold_on_the_other_both_survive() {
    let tmp = common::tempdir();
    let dir = tmp.path();
    let ids = repo_with_comments(dir, 1);
    git_ok(dir, &["branch", "-M", "main"]);
    let id = &ids[0];
    let file = format!(".notabene/src/a/{id}.json");
    close_on_branch(dir, "close", id, "j-close", "fixed", 0);
    on_branch(dir, "hold", || {
        nb_ok(
            dir,
            &[
                "comments", "reply", id, "--body", "not yet", "--author", "Reviewer",
            ],
            None,
            &at(1, 1),
        );
        nb_ok(dir, &["comments", "hold", id], None, &at(1, 2));
    });

    // The close from one side, the reply and the hold from the other, the later update.
    let mut want: Value =
        serde_json::from_str(&git_ok(dir, &["show", &format!("main:{file}")])).unwrap();
    want["thread"]
        .as_array_mut()
        .unwrap()
        .push(json!({"author": "Reviewer", "body": "not yet", "ts": at(1, 1)}));
    want["status"] = json!("resolved");
    want["hold"] = json!(true);
    want["resolution"] = json!({"note": "fixed", "journalEntryId": "j-close"});
    want["updatedAt"] = json!(at(1, 2));
    let want = to_js_pretty(&want);
    // Either way round.
    for (head, other) in [("close", "hold"), ("hold", "close")] {
        git_ok(dir, &["checkout", "-q", "-b", &format!("{head}-m"), head]);
        let out = git(dir, &["merge", "--no-edit", other]);
        assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
        assert!(!out.stdout.contains("CONFLICT"), "{}", out.stdout);
        assert_eq!(
            common::read(&dir.join(&file)),
            want,
            "{head} merging {other}"
        );
        assert_eq!(git_ok(dir, &["status", "--porcelain"]), "");
        let verify = nb(dir, &["comments", "verify"], None, NOW);
        assert_eq!(
            (verify.code, verify.stdout.trim()),
            (
                0,
                "notabene verify: 1 comment(s), 1 journal entr(ies) — 0 error(s), 0 warning(s)."
            )
        );
    }

    // Both sides close it, differently: a conflict, both versions kept.
    close_on_branch(dir, "close-other", id, "j-other", "fixed otherwise", 2);
    git_ok(dir, &["checkout", "-q", "close"]);
    let out = git(dir, &["merge", "--no-edit", "close-other"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains(&format!("CONFLICT (content): Merge conflict in {file}")),
        "{}",
        out.stdout
    );
    let why = format!("comment {id}: status and resolution changed differently on the two sides");
    assert!(
        out.stderr.contains(&format!(
            "notabene: merge conflict, both versions kept for a person: {why} ({file})"
        )),
        "{}",
        out.stderr
    );
    let (ours, theirs) = (stage(dir, 2, &file), stage(dir, 3, &file));
    assert_eq!(
        common::read(&dir.join(&file)),
        format!("<<<<<<< ours (notabene: {why})\n{ours}=======\n{theirs}>>>>>>> theirs\n")
    );
    // The journal merged: only the comment needs a person.
    let unmerged = git_ok(dir, &["diff", "--name-only", "--diff-filter=U"]);
    assert_eq!(unmerged, format!("{file}\n"));
}

#[test]
fn a_merge_driver_killed_before_its_rename_leaves_nothing_in_the_work_tree() {
    let tmp = common::tempdir();
    let dir = tmp.path();
    let ids = repo_with_comments(dir, 1);
    git_ok(dir, &["branch", "-M", "main"]);
    let id = &ids[0];
    for (k, name) in ["x", "y"].into_iter().enumerate() {
        on_branch(dir, name, || {
            nb_ok(
                dir,
                &["comments", "reply", id, "--body", name],
                None,
                &at(k, 1),
            );
        });
    }
    git_ok(dir, &["checkout", "-q", "x"]);
    let head = git_ok(dir, &["rev-parse", "HEAD"]);
    let out = git_env(
        dir,
        &["merge", "--no-edit", "y"],
        &[("NOTABENE_FAILPOINT", "before-rename")],
    );
    // The driver died by a signal: git gives the merge up.
    assert_ne!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(git_ok(dir, &["rev-parse", "HEAD"]), head);
    // Nothing new in the work tree, not even an untracked file.
    assert_eq!(
        git_ok(dir, &["status", "--porcelain", "--untracked-files=all"]),
        ""
    );
    // Its temp file is in the store, which git ignores, and `clean` removes it.
    let ignored = git_ok(
        dir,
        &[
            "status",
            "--porcelain",
            "--untracked-files=all",
            "--ignored",
        ],
    );
    let prefix = format!("!! .notabene/src/a/.{id}.json.");
    let leftover = ignored
        .strip_prefix(&prefix)
        .and_then(|rest| rest.strip_suffix(".tmp\n"))
        .unwrap_or_else(|| panic!("{ignored}"));
    assert!(!leftover.contains('\n'), "{ignored}");
    let file = format!(".notabene/src/a/.{id}.json.{leftover}.tmp");
    assert_eq!(
        nb_ok(dir, &["clean", "--dry-run"], None, NOW),
        format!("notabene: would remove {file}\nnotabene: 1 temp file(s) would be removed.\n")
    );
    assert_eq!(
        nb_ok(dir, &["clean"], None, NOW),
        format!("notabene: removed {file}\nnotabene: removed 1 temp file(s), kept 0.\n")
    );
    assert_clean_tree(dir);
    // Run again, alive, the same merge goes through.
    let out = git(dir, &["merge", "--no-edit", "y"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let c = read_json(&dir.join(format!(".notabene/src/a/{id}.json")));
    let bodies = thread_bodies(&c);
    assert_eq!(bodies, ["word0", "x", "y"]);
    assert_clean_tree(dir);
}

#[test]
fn a_page_the_work_tree_lacks_merges_in_place_in_an_octopus() {
    let tmp = common::tempdir();
    let dir = tmp.path();
    repo_with_comments(dir, 0);
    git_ok(dir, &["branch", "-M", "main"]);
    // Branch z adds a page with a comment; b1 and b2 reply to it; main never has the page.
    common::write(
        &dir.join("src/SUMMARY.md"),
        "# Summary\n\n- [A](a.md)\n- [B](b.md)\n",
    );
    common::write(&dir.join("src/b.md"), "# B\n\nSome words.\n");
    git_ok(dir, &["stash", "-q", "-u"]);
    let mut id = String::new();
    on_branch(dir, "z", || {
        git_ok(dir, &["stash", "pop", "-q"]);
        let out = nb_ok(
            dir,
            &[
                "comments", "add", "--page", "src/b", "--quote", "words", "--body", "b", "--json",
            ],
            None,
            NOW,
        );
        id = serde_json::from_str::<Value>(&out).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string();
    });
    for (k, name) in ["b1", "b2"].into_iter().enumerate() {
        git_ok(dir, &["checkout", "-q", "-b", name, "z"]);
        nb_ok(
            dir,
            &["comments", "reply", &id, "--body", name],
            None,
            &at(k, 1),
        );
        git_ok(dir, &["commit", "-qam", name]);
    }
    git_ok(dir, &["checkout", "-q", "main"]);
    // The second step merges the page's file where the work tree has no directory for it: the
    // driver writes in place, so the failpoint before a rename never fires.
    let out = git_env(
        dir,
        &["merge", "--no-edit", "b1", "b2"],
        &[("NOTABENE_FAILPOINT", "before-rename")],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let c = read_json(&dir.join(format!(".notabene/src/b/{id}.json")));
    let bodies = thread_bodies(&c);
    assert_eq!(bodies, ["b", "b1", "b2"]);
    assert_clean_tree(dir);
}

/// The bodies of comment `c`'s thread, in order.
fn thread_bodies(c: &Value) -> Vec<&str> {
    c["thread"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["body"].as_str().unwrap())
        .collect()
}

/// The work tree holds nothing git does not track: no untracked file, not even an ignored one.
#[track_caller]
fn assert_clean_tree(dir: &Path) {
    assert_eq!(
        git_ok(
            dir,
            &[
                "status",
                "--porcelain",
                "--untracked-files=all",
                "--ignored"
            ]
        ),
        ""
    );
}
