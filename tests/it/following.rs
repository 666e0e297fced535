//! Comments follow the book as it changes: one scenario per structural edit of a real book
//! (the nomicon) in a real git repository — rename committed, rename staged, a plain `mv` git
//! does not know, a move to another directory, a split at a heading, a merge (of a chapter with
//! text comments; of one with a page and a block comment; of two into a new file), a paragraph
//! moved to another chapter, the book's directory moved, a chapter deleted, and a control.
//!
//! For each: every comment lands on the right page at the right text and none on a wrong page
//! (`notabene anchors --json`); `anchors heal` re-keys the followed ones into the contract's
//! layout, `comments verify` then reports no error, a second heal changes nothing, and the
//! anchoring afterwards places every comment `exact` on its own page.

use crate::support::common::{self, git};
use crate::support::preprocess;
use notabene_anchoring::text::{TextOptions, page_text};
use notabene_store::{Fresh, Scope, Store, new_comment};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const TS: &str = "2026-07-28T09:00:00.000Z";

/// The comments of every scenario: (key, chapter file under src without `.md`, quote or
/// `None` for a page comment).
const COMMENTS: &[(&str, &str, Option<&str>)] = &[
    (
        "r1",
        "races",
        Some("Safe Rust guarantees an absence of data races"),
    ),
    (
        "r2",
        "races",
        Some("Interior mutability makes this more complicated"),
    ),
    ("rp", "races", None),
    (
        "l1",
        "leaking",
        Some("Ownership-based resource management is intended to simplify composition"),
    ),
    (
        "l2",
        "leaking",
        Some("Rc is an interesting case because at first glance"),
    ),
    ("lp", "leaking", None),
    (
        "c1",
        "coercions",
        Some("Types can implicitly be coerced to change in certain contexts."),
    ),
    (
        "p1",
        "poisoning",
        Some("anything that witnesses an exception"),
    ),
    (
        "e1",
        "exotic-sizes",
        Some("Most of the time, we expect types to have a statically known and positive size."),
    ),
    ("k1", "casts", Some("Casts are a superset of coercions")),
    // A block comment: the chapter's image; and a page comment on the same chapter.
    ("b1", "meet-safe-and-unsafe", Some(IMAGE)),
    ("mp", "meet-safe-and-unsafe", None),
];

/// In [`COMMENTS`], a block comment on the chapter's first image.
const IMAGE: &str = "!image";

/// Where a comment landed: (page, anchoring status, matched text, `followed.by`).
type Landed = (Option<String>, String, Option<String>, Option<String>);

/// A comment id for a key (`c_` + key, padded as the contract's ids are).
fn id(key: &str) -> String {
    format!("c_follow{key}")
}

/// A git repository at `<tmp>` holding the nomicon at `<tmp>/nomicon`, its store holding
/// [`COMMENTS`], all committed.
struct Scenario {
    _tmp: tempfile::TempDir,
    repo: PathBuf,
    book: PathBuf,
}

/// Commit dates of the same second as the comments ([`TS`]): what scripted commits, rebases
/// that keep dates and a reviewer's clock ahead of the server's give.
const SAME_SECOND: [(&str, &str); 2] = [("GIT_AUTHOR_DATE", TS), ("GIT_COMMITTER_DATE", TS)];

impl Scenario {
    fn new() -> Scenario {
        Scenario::build(&[], |_| {})
    }

    /// [`Scenario::new`], its commit dated the comments' second, `prepare` run on the book
    /// before it is committed.
    fn same_second(prepare: impl FnOnce(&Path)) -> Scenario {
        Scenario::build(&SAME_SECOND, prepare)
    }

    /// Everything in the work tree committed as `message`, dated the comments' second.
    fn commit_same_second(&self, message: &str) {
        git(&self.repo, &["add", "-A"]);
        let out = common::git_output(&self.repo, &["commit", "-qm", message], &SAME_SECOND);
        assert_eq!(out.code, 0, "{}", out.stderr);
    }

    fn build(dates: &[(&str, &str)], prepare: impl FnOnce(&Path)) -> Scenario {
        let tmp = common::tempdir();
        let repo = tmp.path().to_path_buf();
        let book = common::copy_into_repo(&common::corpus("nomicon"), &repo, "nomicon");
        std::fs::create_dir_all(book.join(".notabene")).unwrap();
        let store = Store::new(book.join(".notabene"));
        let _lock = store.lock().unwrap();
        store.ensure_meta().unwrap();
        for (key, chapter, quote) in COMMENTS {
            let page = format!("nomicon/src/{chapter}");
            let (scope, anchor) = match quote {
                Some(IMAGE) => {
                    let md = common::read(&book.join(format!("src/{chapter}.md")));
                    let pt = page_text(&md, &TextOptions::default());
                    let b = &pt.blocks[0];
                    (
                        "block",
                        json!({ "kind": b.kind.as_str(), "key": b.key, "label": b.label, "section": b.section, "index": b.index }),
                    )
                }
                Some(q) => {
                    let md = common::read(&book.join(format!("src/{chapter}.md")));
                    let pt = page_text(&md, &TextOptions::default());
                    let a = pt
                        .text
                        .find(q)
                        .unwrap_or_else(|| panic!("{q:?} in {chapter}"));
                    ("selection", preprocess::capture(&pt, a, a + q.len()))
                }
                None => ("page", Value::Null),
            };
            let c = new_comment(&Fresh {
                id: &id(key),
                space: "book",
                page: &page,
                scope: Scope::parse(scope).expect("a scope"),
                anchor,
                author: "Ann <a@example.com>",
                body: key,
                ts: TS,
            });
            store
                .write_record(&notabene_store::Record {
                    file: format!("{page}/{}.json", id(key)),
                    location: notabene_store::Location::File,
                    comment: c,
                })
                .unwrap();
        }
        drop(_lock);
        prepare(&book);
        git(&repo, &["add", "-A"]);
        let out = common::git_output(&repo, &["commit", "-qm", "the book and its review"], dates);
        assert_eq!(out.code, 0, "{}", out.stderr);
        Scenario {
            _tmp: tmp,
            repo,
            book,
        }
    }

    fn src(&self, rel: &str) -> PathBuf {
        self.book.join("src").join(rel)
    }

    /// Replaces `from` by `to` in SUMMARY.md (the chapter list).
    fn summary(&self, from: &str, to: &str) {
        let p = self.src("SUMMARY.md");
        let text = common::read(&p);
        assert!(text.contains(from), "SUMMARY.md holds {from:?}");
        common::write(&p, &text.replacen(from, to, 1));
    }

    /// `notabene <args>` in the book (its store by default).
    fn notabene(&self, book: &Path, args: &[&str]) -> common::Out {
        let mut all = vec!["--book", book.to_str().unwrap()];
        all.extend_from_slice(args);
        common::run_with(
            &self.repo,
            &all,
            None,
            &[("NOTABENE_NOW", "2026-12-01T10:00:00.000Z")],
        )
    }

    /// Where each comment landed: key → (page it landed on, status, matched text, followed.by).
    fn landed(&self, book: &Path) -> BTreeMap<String, Landed> {
        let out = self.notabene(book, &["anchors", "--json"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let doc: Value = serde_json::from_str(&out.stdout).unwrap();
        let mut m = BTreeMap::new();
        for c in doc["comments"].as_array().unwrap() {
            let key = c["id"]
                .as_str()
                .unwrap()
                .trim_start_matches("c_follow")
                .to_string();
            let a = &c["anchoring"];
            let page = if a["followed"].is_object() {
                a["followed"]["to"].as_str().map(str::to_string)
            } else if a["url"].is_string() {
                c["page"].as_str().map(str::to_string)
            } else {
                None
            };
            m.insert(
                key,
                (
                    page,
                    a["status"].as_str().unwrap().to_string(),
                    a["text"].as_str().map(str::to_string),
                    a["followed"]["by"].as_str().map(str::to_string),
                ),
            );
        }
        m
    }

    /// Checks every comment against `expected` (key → chapter it must land on, `None`: found
    /// nowhere), then heals and checks the store and a second heal.
    fn check(&self, book: &Path, prefix: &str, expected: &[(&str, Option<&str>)]) {
        let want: BTreeMap<&str, Option<&str>> = expected.iter().copied().collect();
        let landed = self.landed(book);
        for (key, chapter, quote) in COMMENTS {
            let target = want.get(key).copied().unwrap_or(Some(chapter));
            let (page, status, text, _) = &landed[*key];
            match target {
                None => assert_eq!(
                    (page.as_deref(), status.as_str()),
                    (None, "orphan"),
                    "{key}: a deleted chapter's comment is found nowhere"
                ),
                Some(t) => {
                    assert_eq!(
                        page.as_deref(),
                        Some(format!("{prefix}/{t}").as_str()),
                        "{key}: page"
                    );
                    if *quote == Some(IMAGE) {
                        assert_eq!(status, "exact", "{key}: the image");
                    } else if let Some(q) = quote {
                        assert!(status == "exact" || status == "fuzzy", "{key}: {status}");
                        assert_eq!(text.as_deref(), Some(*q), "{key}: text");
                    } else {
                        assert_eq!(status, "page", "{key}");
                    }
                }
            }
        }
        // Heal: the followed comments move to their pages.
        let out = self.notabene(book, &["anchors", "heal"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let store = Store::new(book.join(".notabene"));
        let snap = store.load().unwrap();
        for r in snap.comments() {
            let page = r.comment.page().unwrap();
            assert_eq!(
                r.file,
                format!("{page}/{}.json", r.comment.id().unwrap()),
                "layout"
            );
        }
        let verify = self.notabene(book, &["comments", "verify", "--json"]);
        let report: Value = serde_json::from_str(&verify.stdout).unwrap();
        assert_eq!(report["errors"], json!(0), "{}", verify.stdout);
        let before = common::tree(&book.join(".notabene"));
        let again = self.notabene(book, &["anchors", "heal"]);
        assert_eq!(again.code, 0, "{}", again.stderr);
        assert!(
            !again.stdout.contains("moved "),
            "a second heal moves nothing: {}",
            again.stdout
        );
        assert_eq!(
            common::tree(&book.join(".notabene")),
            before,
            "a second heal changes nothing"
        );
        // Anchored again: every comment exact on its own page, none followed.
        let after = self.landed(book);
        for (key, chapter, quote) in COMMENTS {
            let (page, status, _, by) = &after[*key];
            match want.get(key).copied().unwrap_or(Some(chapter)) {
                None => assert_eq!(status, "orphan", "{key}"),
                Some(t) => {
                    assert_eq!(
                        page.as_deref(),
                        Some(format!("{prefix}/{t}").as_str()),
                        "{key}"
                    );
                    assert_eq!(by, &None, "{key}: on its own page now");
                    let want_status = if quote.is_some() { "exact" } else { "page" };
                    assert_eq!(status, want_status, "{key}");
                }
            }
        }
    }
}

#[test]
fn control_nothing_moves() {
    let s = Scenario::new();
    let landed = s.landed(&s.book);
    assert!(landed.values().all(|l| l.3.is_none()), "{landed:?}");
    s.check(&s.book, "nomicon/src", &[]);
}

const RACES_RENAMED: &[(&str, Option<&str>)] = &[
    ("r1", Some("data-races")),
    ("r2", Some("data-races")),
    ("rp", Some("data-races")),
];

#[test]
fn rename_committed() {
    let s = Scenario::new();
    git(
        &s.repo,
        &["mv", "nomicon/src/races.md", "nomicon/src/data-races.md"],
    );
    s.summary("(races.md)", "(data-races.md)");
    git(&s.repo, &["commit", "-qam", "rename races"]);
    let landed = s.landed(&s.book);
    assert_eq!(landed["r1"].3.as_deref(), Some("git rename"));
    let listing = s.notabene(&s.book, &["anchors", "--page", "nomicon/src/races"]);
    assert!(
        listing.stdout.lines().any(|l| l
            == "[c_followr1] exact 1.00 nomicon/src/races → nomicon/src/data-races (git rename) nomicon/src/data-races.md:3:1 «Safe Rust guarantees an absence of data races»"),
        "{}",
        listing.stdout
    );
    // The build reports it in one line.
    common::refresh_client(&s.book);
    let out = s.notabene(&s.book, &["install", s.book.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let build = s.notabene(
        &s.book,
        &[
            "build",
            s.book.to_str().unwrap(),
            "-d",
            s.repo.join("out").to_str().unwrap(),
        ],
    );
    assert_eq!(build.code, 0, "{}", build.stderr);
    assert!(
        build
            .stderr
            .contains("notabene: 3 comments followed nomicon/src/races → nomicon/src/data-races (git rename)\n"),
        "{}",
        build.stderr
    );
    assert!(
        !build.stderr.contains("not in this book"),
        "{}",
        build.stderr
    );
    s.check(&s.book, "nomicon/src", RACES_RENAMED);
}

#[test]
fn a_block_comment_follows_its_page() {
    let s = Scenario::new();
    git(
        &s.repo,
        &[
            "mv",
            "nomicon/src/meet-safe-and-unsafe.md",
            "nomicon/src/safe-and-unsafe.md",
        ],
    );
    s.summary("(meet-safe-and-unsafe.md)", "(safe-and-unsafe.md)");
    git(&s.repo, &["commit", "-qam", "rename"]);
    let landed = s.landed(&s.book);
    assert_eq!(landed["b1"].3.as_deref(), Some("git rename"));
    assert_eq!(landed["mp"].3.as_deref(), Some("git rename"));
    s.check(
        &s.book,
        "nomicon/src",
        &[
            ("b1", Some("safe-and-unsafe")),
            ("mp", Some("safe-and-unsafe")),
        ],
    );
}

/// A paragraph found on two pages equally well is not followed: it stays an orphan on its
/// page, and the build says why.
#[test]
fn a_match_on_two_pages_is_not_followed() {
    let s = Scenario::new();
    let poisoning = common::read(&s.src("poisoning.md"));
    let start = poisoning.find("This is *usually* fine").unwrap();
    let end = start + poisoning[start..].find("\n\n").unwrap() + 2;
    let paragraph = poisoning[start..end].to_string();
    common::write(
        &s.src("poisoning.md"),
        &format!("{}{}", &poisoning[..start], &poisoning[end..]),
    );
    for ch in ["races.md", "leaking.md"] {
        let text = common::read(&s.src(ch));
        common::write(&s.src(ch), &format!("{text}\n{paragraph}"));
    }
    let landed = s.landed(&s.book);
    assert_eq!(
        landed["p1"],
        (
            Some("nomicon/src/poisoning".to_string()),
            "orphan".to_string(),
            None,
            None
        )
    );
    let book = s.book.to_str().unwrap();
    assert_eq!(s.notabene(&s.book, &["install", book]).code, 0);
    let out = s.notabene(
        &s.book,
        &["build", book, "-d", s.repo.join("out").to_str().unwrap()],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.lines().any(|l| l
            == "notabene: warning: comment c_followp1 on nomicon/src/poisoning matches nomicon/src/leaking and nomicon/src/races equally well; not followed"),
        "{}",
        out.stderr
    );
}

#[test]
fn rename_staged() {
    let s = Scenario::new();
    git(
        &s.repo,
        &["mv", "nomicon/src/races.md", "nomicon/src/data-races.md"],
    );
    s.summary("(races.md)", "(data-races.md)");
    assert_eq!(s.landed(&s.book)["rp"].3.as_deref(), Some("git rename"));
    s.check(&s.book, "nomicon/src", RACES_RENAMED);
}

#[test]
fn plain_mv_git_does_not_know() {
    let s = Scenario::new();
    std::fs::rename(s.src("races.md"), s.src("data-races.md")).unwrap();
    s.summary("(races.md)", "(data-races.md)");
    assert_eq!(s.landed(&s.book)["rp"].3.as_deref(), Some("git rename"));
    s.check(&s.book, "nomicon/src", RACES_RENAMED);
}

#[test]
fn move_to_another_directory() {
    let s = Scenario::new();
    std::fs::create_dir_all(s.src("concurrency")).unwrap();
    git(
        &s.repo,
        &[
            "mv",
            "nomicon/src/races.md",
            "nomicon/src/concurrency/races.md",
        ],
    );
    s.summary("(races.md)", "(concurrency/races.md)");
    git(&s.repo, &["commit", "-qam", "move races"]);
    let to = Some("concurrency/races");
    s.check(
        &s.book,
        "nomicon/src",
        &[("r1", to), ("r2", to), ("rp", to)],
    );
}

#[test]
fn split_at_a_heading_both_parts_renamed() {
    let s = Scenario::new();
    let text = common::read(&s.src("leaking.md"));
    let at = text.find("## Rc").unwrap();
    common::write(&s.src("leaking-basics.md"), &text[..at]);
    common::write(&s.src("leaking-rc.md"), &text[at..]);
    std::fs::remove_file(s.src("leaking.md")).unwrap();
    s.summary(
        "  * [Leaking](leaking.md)",
        "  * [Leaking](leaking-basics.md)\n  * [Rc](leaking-rc.md)",
    );
    // The page comment goes to the part that keeps the chapter's title.
    s.check(
        &s.book,
        "nomicon/src",
        &[
            ("l1", Some("leaking-basics")),
            ("l2", Some("leaking-rc")),
            ("lp", Some("leaking-basics")),
        ],
    );
}

#[test]
fn merge_of_two_chapters() {
    let s = Scenario::new();
    merge_coercions_into_casts(&s);
    let landed = s.landed(&s.book);
    assert_eq!(landed["c1"].0.as_deref(), Some("nomicon/src/casts"));
    s.check(&s.book, "nomicon/src", &[("c1", Some("casts"))]);
}

/// `meet-safe-and-unsafe.md` with its title one level down, as a section of another chapter.
fn as_section(s: &Scenario) -> String {
    common::read(&s.src("meet-safe-and-unsafe.md")).replacen(
        "# Meet Safe and Unsafe",
        "## Meet Safe and Unsafe",
        1,
    )
}

/// A chapter merged into another one takes its page and block comments along: git reports no
/// move (the other file existed before), but the merged file's lines arrived there since.
#[test]
fn a_merged_chapter_takes_its_page_and_block_comments_along() {
    let s = Scenario::new();
    let races = common::read(&s.src("races.md"));
    common::write(&s.src("races.md"), &format!("{races}\n{}", as_section(&s)));
    git(
        &s.repo,
        &["rm", "-q", "nomicon/src/meet-safe-and-unsafe.md"],
    );
    s.summary("* [Meet Safe and Unsafe](meet-safe-and-unsafe.md)\n", "");
    git(&s.repo, &["commit", "-qam", "merge"]);
    let landed = s.landed(&s.book);
    let races = Some("nomicon/src/races".to_string());
    assert_eq!(
        (&landed["mp"], &landed["b1"]),
        (
            &(races.clone(), "page".into(), None, Some("git merge".into())),
            &(
                races,
                "exact".into(),
                Some("safe and unsafe".into()),
                Some("git merge".into())
            ),
        )
    );
    s.check(
        &s.book,
        "nomicon/src",
        &[("mp", Some("races")), ("b1", Some("races"))],
    );
}

/// Two chapters merged into a new file in one change (both old files gone): every comment of
/// both follows to the new chapter.
#[test]
fn two_chapters_merged_under_a_new_name() {
    let s = Scenario::new();
    let races = common::read(&s.src("races.md"));
    common::write(
        &s.src("data-races.md"),
        &format!("{races}\n{}", as_section(&s)),
    );
    git(
        &s.repo,
        &[
            "rm",
            "-q",
            "nomicon/src/meet-safe-and-unsafe.md",
            "nomicon/src/races.md",
        ],
    );
    s.summary("* [Meet Safe and Unsafe](meet-safe-and-unsafe.md)\n", "");
    s.summary("(races.md)", "(data-races.md)");
    let landed = s.landed(&s.book);
    assert_eq!(landed["mp"].3.as_deref(), Some("git merge"));
    assert_eq!(landed["b1"].3.as_deref(), Some("git merge"));
    let moved: Vec<(&str, Option<&str>)> = ["r1", "r2", "rp", "mp", "b1"]
        .into_iter()
        .map(|k| (k, Some("data-races")))
        .collect();
    s.check(&s.book, "nomicon/src", &moved);
}

/// The paragraph of `p1` (poisoning) moved to the end of races.
fn move_paragraph_to_races(s: &Scenario) {
    let poisoning = common::read(&s.src("poisoning.md"));
    let start = poisoning.find("This is *usually* fine").unwrap();
    let end = start + poisoning[start..].find("\n\n").unwrap() + 2;
    let paragraph = &poisoning[start..end];
    common::write(
        &s.src("poisoning.md"),
        &format!("{}{}", &poisoning[..start], &poisoning[end..]),
    );
    let races = common::read(&s.src("races.md"));
    common::write(&s.src("races.md"), &format!("{races}\n{paragraph}"));
}

/// Coercions merged into casts as a section, its file removed from git and SUMMARY.md.
fn merge_coercions_into_casts(s: &Scenario) {
    let casts = common::read(&s.src("casts.md"));
    let coercions = common::read(&s.src("coercions.md"));
    common::write(
        &s.src("casts.md"),
        &format!(
            "{casts}\n{}",
            coercions.replacen("# Coercions", "## Coercions", 1)
        ),
    );
    git(&s.repo, &["rm", "-q", "nomicon/src/coercions.md"]);
    s.summary("  * [Coercions](coercions.md)\n", "");
}

#[test]
fn a_commented_paragraph_moved_to_another_chapter() {
    let s = Scenario::new();
    move_paragraph_to_races(&s);
    let landed = s.landed(&s.book);
    assert_eq!(landed["p1"].3.as_deref(), Some("quote"));
    s.check(&s.book, "nomicon/src", &[("p1", Some("races"))]);
}

#[test]
fn the_book_moved_in_its_repository() {
    let s = Scenario::new();
    std::fs::create_dir_all(s.repo.join("docs")).unwrap();
    git(&s.repo, &["mv", "nomicon", "docs/nomicon"]);
    git(&s.repo, &["commit", "-qm", "move the book"]);
    let book = s.repo.join("docs/nomicon");
    // The store says so in one line naming the fix …
    let out = s.notabene(&book, &["anchors"]);
    assert_eq!(
        out.stderr,
        "notabene: warning: 12 of the store's 12 comments for this language are on pages this book does not have; they are under \"nomicon/src\", this book's pages under \"docs/nomicon/src\" — set page-prefix = \"nomicon/src\" in [preprocessor.notabene] (book.toml)\n"
    );
    // … while every comment follows its file (git rename) until `heal` re-keys them.
    let everyone: Vec<(&str, Option<&str>)> =
        COMMENTS.iter().map(|(k, ch, _)| (*k, Some(*ch))).collect();
    s.check(&book, "docs/nomicon/src", &everyone);
}

#[test]
fn a_deleted_chapter_keeps_its_comments_nowhere() {
    let s = Scenario::new();
    git(&s.repo, &["rm", "-q", "nomicon/src/exotic-sizes.md"]);
    s.summary("  * [Exotically Sized Types](exotic-sizes.md)\n", "");
    // A sentence elsewhere that starts the same way: the closest rejected candidate.
    let casts = common::read(&s.src("casts.md"));
    common::write(
        &s.src("casts.md"),
        &format!(
            "{casts}\nCasts differ here. Most of the time, we expect types to have a statically known, positive size. Or not.\n"
        ),
    );
    git(&s.repo, &["commit", "-qam", "drop exotic sizes"]);
    let out = s.notabene(
        &s.book,
        &["anchors", "--json", "--page", "nomicon/src/exotic-sizes"],
    );
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let a = &doc["comments"][0]["anchoring"];
    assert_eq!(
        (&a["status"], &a["reason"]),
        (&json!("orphan"), &json!("page-not-in-book"))
    );
    assert_eq!(a["suggestion"]["page"], json!("nomicon/src/casts"), "{a}");
    assert!(
        a["suggestion"]["text"]
            .as_str()
            .unwrap()
            .contains("Most of the time, we expect types"),
        "{a}"
    );
    s.check(&s.book, "nomicon/src", &[("e1", None)]);
}

/// Re-keying is crash-safe: killed between writing the new file and removing the old one, the
/// comment is stored twice (`verify` says so), never lost, and the next `heal` finishes.
#[test]
fn a_crash_while_re_keying_loses_nothing() {
    let s = Scenario::new();
    git(
        &s.repo,
        &["mv", "nomicon/src/races.md", "nomicon/src/data-races.md"],
    );
    s.summary("(races.md)", "(data-races.md)");
    // r1's quote drifts a little: the interrupted move also heals its anchor.
    let text = common::read(&s.src("data-races.md"));
    common::write(
        &s.src("data-races.md"),
        &text.replacen("an absence of data races", "an absense of data races", 1),
    );
    let book = s.book.to_str().unwrap();
    let crashed = common::run_with(
        &s.repo,
        &["--book", book, "anchors", "heal"],
        None,
        &[("NOTABENE_FAILPOINT", "rekey-after-write")],
    );
    assert_ne!(crashed.code, 0, "the failpoint aborts the process");
    let ids = |s: &Scenario| -> Vec<(String, String)> {
        let snap = Store::new(s.book.join(".notabene")).load().unwrap();
        let mut v: Vec<(String, String)> = snap
            .comments()
            .map(|r| (r.comment.id().unwrap().to_string(), r.file.clone()))
            .collect();
        v.sort();
        v
    };
    let after_crash = ids(&s);
    // Every comment is still there; the first one moved is there twice.
    for (key, _, _) in COMMENTS {
        assert!(after_crash.iter().any(|(i, _)| *i == id(key)), "{key} lost");
    }
    let twice: Vec<&(String, String)> = after_crash
        .iter()
        .filter(|(i, _)| after_crash.iter().filter(|(j, _)| j == i).count() == 2)
        .collect();
    assert_eq!(twice.len(), 2, "{after_crash:?}");
    let dup = &twice[0].0;
    let verify = s.notabene(&s.book, &["comments", "verify"]);
    assert_eq!(verify.code, 1, "{}", verify.stdout);
    assert!(
        verify
            .stdout
            .contains(&format!("duplicate comment id \"{dup}\"")),
        "{}",
        verify.stdout
    );
    // The next heal finishes the move and the rest.
    let healed = s.notabene(&s.book, &["anchors", "heal"]);
    assert_eq!(healed.code, 0, "{}", healed.stderr);
    let after = ids(&s);
    assert_eq!(after.len(), COMMENTS.len(), "{after:?}");
    for (i, file) in &after {
        if ["c_followr1", "c_followr2", "c_followrp"].contains(&i.as_str()) {
            assert_eq!(file, &format!("nomicon/src/data-races/{i}.json"));
        }
    }
    let verify = s.notabene(&s.book, &["comments", "verify", "--json"]);
    let report: Value = serde_json::from_str(&verify.stdout).unwrap();
    assert_eq!(report["errors"], json!(0), "{}", verify.stdout);
}

/// `--dry-run` lists the moves and writes nothing; a legacy v1 array member is moved out of
/// its array.
#[test]
fn heal_dry_run_and_legacy_members() {
    let s = Scenario::new();
    // races' comments as one legacy array file.
    let store = s.book.join(".notabene");
    let dir = store.join("nomicon/src/races");
    let mut members = Vec::new();
    for key in ["r1", "r2", "rp"] {
        let f = dir.join(format!("{}.json", id(key)));
        members.push(serde_json::from_str::<Value>(&common::read(&f)).unwrap());
        std::fs::remove_file(f).unwrap();
    }
    std::fs::remove_dir(&dir).unwrap();
    let originals = members.clone();
    common::write(
        &store.join("nomicon/src/races.json"),
        &notabene_store::json::to_js_pretty(&Value::Array(members)),
    );
    git(&s.repo, &["add", "-A"]);
    git(&s.repo, &["commit", "-qm", "legacy"]);
    git(
        &s.repo,
        &["mv", "nomicon/src/races.md", "nomicon/src/data-races.md"],
    );
    s.summary("(races.md)", "(data-races.md)");
    let before = common::tree(&store);
    let dry = s.notabene(&s.book, &["anchors", "heal", "--dry-run"]);
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    assert_eq!(
        dry.stdout,
        "would move c_followr1: nomicon/src/races → nomicon/src/data-races\n\
         would move c_followr2: nomicon/src/races → nomicon/src/data-races\n\
         would move c_followrp: nomicon/src/races → nomicon/src/data-races\n\
         notabene: 0 anchor(s) would be healed.\n\
         notabene: 3 comment(s) would be moved to the page they were found on.\n"
    );
    assert_eq!(common::tree(&store), before, "a dry run writes nothing");
    let out = s.notabene(&s.book, &["anchors", "heal"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        !store.join("nomicon/src/races.json").exists(),
        "the emptied array is gone"
    );
    for (n, key) in ["r1", "r2", "rp"].iter().enumerate() {
        let text = common::read(&store.join(format!("nomicon/src/data-races/{}.json", id(key))));
        let moved: Value = serde_json::from_str(&text).unwrap();
        // Every other byte as it was.
        let mut want = originals[n].clone();
        want["page"] = json!("nomicon/src/data-races");
        want["updatedAt"] = json!("2026-12-01T10:00:00.000Z");
        assert_eq!(moved, want, "{key}");
        assert_eq!(
            text,
            notabene_store::json::to_js_pretty(&moved),
            "canonical bytes"
        );
    }
    s.check(&s.book, "nomicon/src", RACES_RENAMED);
}

/// A book copied out of its repository: its page ids lose the repository path, and every
/// build, `anchors` and `doctor` say in one line which `page-prefix` puts them back.
#[test]
fn a_book_copied_outside_its_repository_says_which_prefix_fixes_it() {
    let tmp = common::tempdir();
    let book = tmp.path().join("book-example");
    common::copy_book(&common::book_example(), &book);
    let line = "notabene: warning: 16 of the store's 16 comments for this language are on pages this book does not have; they are under \"book-example/src\", this book's pages under \"src\" — set page-prefix = \"book-example/src\" in [preprocessor.notabene] (book.toml)";
    let b = book.to_str().unwrap();
    let anchors = common::run(tmp.path(), &["--book", b, "anchors"]);
    assert_eq!(anchors.stderr, format!("{line}\n"));
    let build = common::run(
        tmp.path(),
        &["build", b, "-d", tmp.path().join("out").to_str().unwrap()],
    );
    assert_eq!(build.code, 0, "{}", build.stderr);
    assert!(build.stderr.lines().any(|l| l == line), "{}", build.stderr);
    assert!(
        !build
            .stderr
            .lines()
            .any(|l| l.starts_with("notabene: 0 comments")),
        "{}",
        build.stderr
    );
    let doctor = common::run(tmp.path(), &["--book", b, "doctor"]);
    assert!(
        doctor.stdout.contains(&line["notabene: ".len()..]),
        "{}",
        doctor.stdout
    );
    let json: Value =
        serde_json::from_str(&common::run(tmp.path(), &["--book", b, "doctor", "--json"]).stdout)
            .unwrap();
    assert_eq!(
        json["store"]["mismatch"],
        json!(&line["notabene: warning: ".len()..])
    );
    // With the prefix it names, the comments are back on their pages and the line is gone.
    let toml = common::read(&book.join("book.toml"));
    common::write(
        &book.join("book.toml"),
        &toml.replacen(
            "[preprocessor.notabene]",
            "[preprocessor.notabene]\npage-prefix = \"book-example/src\"",
            1,
        ),
    );
    let fixed = common::run(
        tmp.path(),
        &["build", b, "-d", tmp.path().join("out2").to_str().unwrap()],
    );
    assert_eq!(fixed.code, 0, "{}", fixed.stderr);
    assert!(
        fixed.stderr.starts_with(
            "notabene: 14 comments on 6 pages — 11 exact, 1 fuzzy, 1 orphaned, 1 page-level\n"
        ),
        "{}",
        fixed.stderr
    );
    assert!(!fixed.stderr.contains("page-prefix"), "{}", fixed.stderr);
}

/// Journal `changes[].page` is history: after a rename it still names the old page, and
/// /review still shows the diff of the file that page became.
#[test]
fn review_finds_the_diff_of_a_renamed_file() {
    let s = Scenario::new();
    git(
        &s.repo,
        &["mv", "nomicon/src/races.md", "nomicon/src/data-races.md"],
    );
    s.summary("(races.md)", "(data-races.md)");
    let races = common::read(&s.src("data-races.md"));
    common::write(
        &s.src("data-races.md"),
        &format!("{races}\nA sentence the agent added.\n"),
    );
    let book = s.book.to_str().unwrap();
    let entry = r#"{"id": "j-2026-12-01-rename", "date": "2026-12-01", "title": "Races", "summary": "Clarified.", "changes": [{"page": "nomicon/src/races", "commentIds": ["c_followr1"], "what": "Added a sentence", "why": "Asked for"}]}"#;
    let out = common::run_with(
        &s.repo,
        &["--book", book, "journal", "add", "--json"],
        Some(entry),
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = s.notabene(
        &s.book,
        &[
            "comments",
            "done",
            "c_followr1",
            "--note",
            "Added",
            "--journal",
            "j-2026-12-01-rename",
            "--status",
            "addressed",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(s.notabene(&s.book, &["install", book]).code, 0);
    let out_dir = s.repo.join("out");
    let build = s.notabene(&s.book, &["build", book, "-d", out_dir.to_str().unwrap()]);
    assert_eq!(build.code, 0, "{}", build.stderr);
    let doc = preprocess::html(&out_dir, "review.html");
    let data = preprocess::view_data(&doc);
    let data = preprocess::inline_diffs(&data);
    let card = data["cards"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["comment"]["id"] == "c_followr1")
        .expect("a card for the addressed comment");
    let change = &card["changes"][0];
    assert_eq!(
        change["page"],
        json!("nomicon/src/races"),
        "history as written"
    );
    assert_eq!(change["file"], json!("nomicon/src/data-races.md"));
    assert_eq!(change["url"], json!("data-races.html"));
    assert_eq!(change["diff"]["reason"], Value::Null, "{change}");
    assert!(
        change["diff"]["text"]
            .as_str()
            .unwrap()
            .contains("+A sentence the agent added."),
        "{change}"
    );
}

/// Re-keying never writes over another comment's file.
#[test]
fn re_keying_never_overwrites_another_file() {
    let s = Scenario::new();
    let store = s.book.join(".notabene");
    // A comment whose id names the same file as one already on the target page.
    let odd = store.join("nomicon/src/races/odd.json");
    let mut c: Value = serde_json::from_str(&common::read(
        &store.join("nomicon/src/races/c_followrp.json"),
    ))
    .unwrap();
    c["id"] = json!("c_follow.x");
    common::write(&odd, &notabene_store::json::to_js_pretty(&c));
    git(
        &s.repo,
        &["mv", "nomicon/src/races.md", "nomicon/src/data-races.md"],
    );
    s.summary("(races.md)", "(data-races.md)");
    let mut other = c.clone();
    other["id"] = json!("c_followx");
    other["page"] = json!("nomicon/src/data-races");
    let taken = store.join("nomicon/src/data-races/c_followx.json");
    let taken_text = notabene_store::json::to_js_pretty(&other);
    common::write(&taken, &taken_text);
    let out = s.notabene(&s.book, &["anchors", "heal"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stderr.contains("cannot move comment \"c_follow.x\": another file is already there; nothing moved (nomicon/src/data-races/c_followx.json)"),
        "{}",
        out.stderr
    );
    assert_eq!(
        common::read(&taken),
        taken_text,
        "the other comment is untouched"
    );
    assert!(
        odd.exists(),
        "the comment that could not move is where it was"
    );
}

/// Every commit dated the second the comments were written: git's history, not the clock, says
/// what came after them. A chapter split (its file kept for the first part), a paragraph moved
/// and two chapters merged, each committed in that second, are followed.
#[test]
fn commits_of_the_comments_own_second_are_news_split_moved_and_merged() {
    // Split: leaking.md keeps its first part, its `## Rc` part goes to a new chapter.
    let s = Scenario::same_second(|_| {});
    let text = common::read(&s.src("leaking.md"));
    let at = text.find("## Rc").unwrap();
    common::write(&s.src("leaking.md"), &text[..at]);
    common::write(&s.src("leaking-rc.md"), &text[at..]);
    s.summary(
        "  * [Leaking](leaking.md)",
        "  * [Leaking](leaking.md)\n  * [Rc](leaking-rc.md)",
    );
    s.commit_same_second("split leaking");
    let landed = s.landed(&s.book);
    assert_eq!(
        (landed["l2"].0.as_deref(), landed["l2"].3.as_deref()),
        (Some("nomicon/src/leaking-rc"), Some("quote")),
        "{landed:?}"
    );
    // A paragraph moved to another chapter.
    let s = Scenario::same_second(|_| {});
    move_paragraph_to_races(&s);
    s.commit_same_second("move a paragraph");
    let landed = s.landed(&s.book);
    assert_eq!(
        (landed["p1"].0.as_deref(), landed["p1"].3.as_deref()),
        (Some("nomicon/src/races"), Some("quote")),
        "{landed:?}"
    );
    // Two chapters merged: coercions into casts.
    let s = Scenario::same_second(|_| {});
    merge_coercions_into_casts(&s);
    s.commit_same_second("merge coercions into casts");
    s.check(&s.book, "nomicon/src", &[("c1", Some("casts"))]);
}

/// Against that: a sentence that stood in another chapter all along is not followed when it
/// leaves the comment's own chapter in a commit of the same second — it is a suggestion.
#[test]
fn a_sentence_that_stood_in_another_chapter_all_along_is_not_followed() {
    let paragraph = std::cell::RefCell::new(String::new());
    let s = Scenario::same_second(|book| {
        let src = book.join("src");
        let poisoning = common::read(&src.join("poisoning.md"));
        let start = poisoning.find("This is *usually* fine").unwrap();
        let end = start + poisoning[start..].find("\n\n").unwrap() + 2;
        *paragraph.borrow_mut() = poisoning[start..end].to_string();
        let races = common::read(&src.join("races.md"));
        common::write(
            &src.join("races.md"),
            &format!("{races}\n{}", paragraph.borrow()),
        );
    });
    let poisoning = common::read(&s.src("poisoning.md"));
    common::write(
        &s.src("poisoning.md"),
        &poisoning.replacen(paragraph.borrow().as_str(), "", 1),
    );
    s.commit_same_second("drop the paragraph from poisoning");
    let out = s.notabene(&s.book, &["anchors", "--json"]);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let p1 = doc["comments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id("p1"))
        .unwrap();
    assert_eq!(
        (
            &p1["anchoring"]["status"],
            &p1["anchoring"]["followed"],
            &p1["anchoring"]["sameText"]["page"]
        ),
        (&json!("orphan"), &Value::Null, &json!("nomicon/src/races")),
        "{}",
        p1["anchoring"]
    );
}

/// The comment store holds no chapter: what git is asked about the book's Markdown files (the
/// state a follow memo is keyed by, the moves found since a commit) leaves it out, whatever
/// files it holds (a big store is thousands for git to walk).
#[test]
fn the_comment_store_is_left_out_of_what_git_is_asked() {
    let chapter = "# A\n\nA paragraph long enough to be found again when it is copied.\n";
    let tmp = common::git_book(&[
        ("book.toml", "[book]\ntitle = \"T\"\n"),
        ("src/SUMMARY.md", "- [A](a.md)\n"),
        ("src/a.md", chapter),
        (".notabene/meta.json", "{\"version\":3}\n"),
    ]);
    let root = tmp.path();
    common::git_commit_all(root, "start");
    let head = git(root, &["rev-parse", "HEAD"]).trim().to_string();
    let book = mdbook_notabene::model::book::Book::load(root).unwrap();
    let repo = book.repo();
    let before = repo.state();
    assert!(before.is_some());
    // A copy of the chapter in the store is neither a change nor a copy.
    common::write(&root.join(".notabene/notes.md"), chapter);
    assert_eq!(repo.state(), before);
    assert_eq!(repo.moves_since(&head), Vec::new());
    // The same copy beside the chapter is both.
    common::write(&root.join("src/b.md"), chapter);
    assert_ne!(repo.state(), before);
    let moves: Vec<(String, String)> = (repo.moves_since(&head).into_iter())
        .map(|m| (m.from, m.to))
        .collect();
    assert_eq!(moves, [("src/a.md".to_string(), "src/b.md".to_string())]);
}

/// A store that holds the book's sources (configured at the root of a book that is a
/// directory of its repository) is not left out: the chapters would go with it. Nor is a store
/// inside a submodule, whose path git refuses as a pathspec of the work tree (git walks no
/// submodule's files anyway).
#[test]
fn a_store_holding_the_sources_or_in_a_submodule_leaves_the_chapters_to_git() {
    let chapter = "# A\n\nA paragraph long enough to be found again when it is copied.\n";
    let copied = |store: &str, setup: &dyn Fn(&Path)| {
        let toml = format!("[book]\ntitle = \"T\"\n[preprocessor.notabene]\nstore = \"{store}\"\n");
        let tmp = common::git_book(&[
            ("docs/book.toml", &toml),
            ("docs/src/SUMMARY.md", "- [A](a.md)\n"),
            ("docs/src/a.md", chapter),
        ]);
        let root = tmp.path();
        setup(root);
        common::git_commit_all(root, "start");
        let head = git(root, &["rev-parse", "HEAD"]).trim().to_string();
        common::write(&root.join("docs/src/b.md"), chapter);
        let book = mdbook_notabene::model::book::Book::load(&root.join("docs")).unwrap();
        (book.repo().moves_since(&head).into_iter())
            .map(|m| (m.from, m.to))
            .collect::<Vec<_>>()
    };
    let want = [("docs/src/a.md".to_string(), "docs/src/b.md".to_string())];
    assert_eq!(copied(".", &|_| {}), want);
    let sub = common::git_book(&[("README.md", "notes\n")]);
    common::git_commit_all(sub.path(), "notes");
    let add_submodule = |root: &Path| {
        let url = sub.path().to_str().unwrap();
        let args = [
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            url,
            "notes",
        ];
        let out = common::git_output(root, &args, &[]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        std::fs::create_dir_all(root.join("notes/store")).unwrap();
    };
    assert_eq!(copied("../notes/store", &add_submodule), want);
}
