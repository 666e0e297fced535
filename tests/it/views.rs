//! The generated /review data: the journal inverted into one card per `addressed` comment
//! (a cascade across pages, the three ways a link can be missing), and the diff source
//! chosen for each case from real git (a committed `ref`, the working tree, an untracked new
//! file, an unchanged file, an unknown ref, a page without a file, no repository).

use crate::support::common::{self, git, git_commit_all};

use mdbook_notabene::base::anchor::DEFAULT_THRESHOLD;
use mdbook_notabene::base::store::{Fresh, Scope, new_comment};
use mdbook_notabene::base::text::TextOptions;
use mdbook_notabene::model::book::Book;
use mdbook_notabene::model::book::PageIds;
use mdbook_notabene::model::book::Repo;
use mdbook_notabene::model::resolve::{Chapter, anchor_book};
use mdbook_notabene::output::views::ViewInput;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn addressed(id: &str, page: &str, link: Option<&str>) -> mdbook_notabene::base::store::Comment {
    let mut c = new_comment(&Fresh {
        id,
        space: "book",
        page,
        scope: Scope::Page,
        anchor: Value::Null,
        author: "Rae <rae@example.com>",
        body: &format!("Fix {id}"),
        ts: "2026-07-28T09:00:00.000Z",
    });
    c.set("status", "addressed".into());
    let mut res = serde_json::Map::new();
    res.insert("note".into(), format!("done {id}").into());
    if let Some(l) = link {
        res.insert("journalEntryId".into(), l.into());
    }
    c.set("resolution", Value::Object(res));
    c
}

/// Per card: (id, problem, [(page, file, diff source, diff ref, diff reason, has text, also ids)]).
fn project(review: &Value) -> Value {
    let cards = review["cards"].as_array().unwrap();
    Value::Array(
        cards
            .iter()
            .map(|c| {
                json!({
                    "id": c["comment"]["id"],
                    "problem": c["problem"],
                    "changes": c["changes"].as_array().unwrap().iter().map(|ch| json!({
                        "page": ch["page"], "file": ch["file"], "source": ch["diff"]["source"], "ref": ch["diff"]["ref"],
                        "reason": ch["diff"]["reason"], "hasText": !ch["diff"]["text"].as_str().unwrap().is_empty(),
                        "also": ch["also"].as_array().unwrap().iter().map(|a| a["id"].clone()).collect::<Vec<_>>(),
                    })).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}

#[test]
fn review_inverts_the_journal_and_picks_each_diff_source() {
    let tmp = common::tempdir();
    let root = tmp.path();
    let book = root.join("docs");
    common::write(
        &book.join("book.toml"),
        "[book]\ntitle = \"T\"\n\n[preprocessor.notabene]\nreview = \"approve\"\n",
    );
    common::write(
        &book.join("src/SUMMARY.md"),
        "- [A](a.md)\n- [B](b.md)\n- [C](c.md)\n- [D](d.md)\n",
    );
    for (f, text) in [
        ("a", "Alpha text.\n"),
        ("b", "Beta text.\n"),
        ("c", "Gamma text.\n"),
    ] {
        common::write(&book.join(format!("src/{f}.md")), text);
    }
    git_commit_all(root, "before");
    // The agent's committed change to b.md, then an uncommitted edit of a.md and a new d.md.
    common::write(&book.join("src/b.md"), "Beta text, clarified.\n");
    git(root, &["commit", "-qam", "agent: clarify beta"]);
    let sha = git(root, &["rev-parse", "HEAD"]).trim().to_string();
    common::write(
        &book.join("src/a.md"),
        "Alpha text, edited in the working tree.\n",
    );
    common::write(&book.join("src/d.md"), "A brand new page.\n");

    let cfg = Book::load(&book).unwrap();
    let ids = PageIds::new(&cfg);
    assert_eq!(ids.prefix, "docs/src");
    let p = |f: &str| format!("docs/src/{f}");
    let comments = vec![
        addressed("c_cascade", &p("a"), Some("j-1")),
        addressed("c_sibling", &p("a"), Some("j-1")),
        addressed("c_nolink", &p("c"), None),
        addressed("c_unknown", &p("c"), Some("j-missing")),
        addressed("c_notlisted", &p("c"), Some("j-2")),
        addressed("c_cases", &p("c"), Some("j-2")),
    ];
    let journal = vec![
        json!({ "id": "j-1", "date": "2026-07-28", "title": "Cascade", "summary": "s", "changes": [
            { "page": p("a"), "commentIds": ["c_cascade", "c_sibling"], "what": "edited a", "why": "asked" },
            { "page": p("b"), "commentIds": ["c_cascade"], "what": "clarified b", "why": "follow-up", "ref": sha },
        ]}),
        json!({ "id": "j-2", "date": "2026-07-29", "title": "Cases", "summary": "s", "changes": [
            { "page": p("c"), "commentIds": ["c_cases"], "what": "unchanged file", "why": "w" },
            { "page": p("d"), "commentIds": ["c_cases"], "what": "new file", "why": "w" },
            { "page": p("gone"), "commentIds": ["c_cases"], "what": "page removed", "why": "w" },
            { "page": p("c"), "commentIds": ["c_cases"], "what": "bad ref", "why": "w", "ref": "0000000000000000000000000000000000000000" },
        ]}),
    ];
    let chapters = ["a", "b", "c"]
        .iter()
        .map(|f| Chapter {
            page: p(f),
            name: f.to_uppercase(),
            url: format!("{f}.html"),
            source: format!("docs/src/{f}.md"),
            content: common::read(&book.join(format!("src/{f}.md"))),
            disk: None,
        })
        .collect();
    let anchors = anchor_book(
        chapters,
        comments,
        &TextOptions::default(),
        DEFAULT_THRESHOLD,
        1,
        mdbook_notabene::model::resolve::Which::All,
    );
    let repo = Repo::discover(&book);
    let input = ViewInput {
        anchors: &anchors,
        journal: &journal,
        book: &cfg,
        ids: &ids,
        repo: &repo,
    };
    let review = crate::support::preprocess::inline_diffs(&input.review());
    assert_eq!(review["mode"], "approve");
    let file = |f: &str| Value::from(format!("docs/src/{f}.md"));
    assert_eq!(
        project(&review),
        json!([
            { "id": "c_cascade", "problem": null, "changes": [
                { "page": p("a"), "file": file("a"), "source": "worktree", "ref": null, "reason": null, "hasText": true, "also": ["c_sibling"] },
                { "page": p("b"), "file": file("b"), "source": "commit", "ref": sha, "reason": null, "hasText": true, "also": [] },
            ]},
            { "id": "c_sibling", "problem": null, "changes": [
                { "page": p("a"), "file": file("a"), "source": "worktree", "ref": null, "reason": null, "hasText": true, "also": ["c_cascade"] },
            ]},
            { "id": "c_cases", "problem": null, "changes": [
                { "page": p("c"), "file": file("c"), "source": "worktree", "ref": null, "reason": "unchanged", "hasText": false, "also": [] },
                { "page": p("d"), "file": file("d"), "source": "untracked", "ref": null, "reason": null, "hasText": true, "also": [] },
                { "page": p("gone"), "file": null, "source": "none", "ref": null, "reason": "page-not-found", "hasText": false, "also": [] },
                { "page": p("c"), "file": file("c"), "source": "commit", "ref": "0000000000000000000000000000000000000000", "reason": "unknown-ref", "hasText": false, "also": [] },
            ]},
            { "id": "c_nolink", "problem": "no-journal-link", "changes": [] },
            { "id": "c_notlisted", "problem": "not-in-journal-changes", "changes": [] },
            { "id": "c_unknown", "problem": "unknown-journal-entry", "changes": [] },
        ])
    );
    // The diffs are git's own: the committed change and the working-tree edit.
    let cards = review["cards"].as_array().unwrap();
    let commit_diff = cards[0]["changes"][1]["diff"]["text"].as_str().unwrap();
    assert!(
        commit_diff.contains("-Beta text.\n+Beta text, clarified.\n"),
        "{commit_diff}"
    );
    let work_diff = cards[0]["changes"][0]["diff"]["text"].as_str().unwrap();
    assert!(
        work_diff.contains("-Alpha text.\n+Alpha text, edited in the working tree.\n"),
        "{work_diff}"
    );
    assert!(
        cards[2]["changes"][1]["diff"]["text"]
            .as_str()
            .unwrap()
            .contains("+A brand new page.\n")
    );
    assert_eq!(cards[0]["note"], "done c_cascade");
    assert_eq!(cards[0]["entry"]["title"], "Cascade");
    assert_eq!(cards[0]["changes"][0]["chapter"], "A");
}

#[test]
fn without_git_every_diff_says_so() {
    let tmp = common::tempdir();
    let book = tmp.path().join("book");
    common::write(&book.join("src/a.md"), "Alpha.\n");
    let repo = Repo::discover(&book);
    let d = repo.diff(Some(&book.join("src/a.md")), None);
    assert_eq!(
        serde_json::to_value(&d).unwrap(),
        json!({ "source": "none", "ref": null, "text": "", "reason": "no-git" })
    );
    let d = repo.diff(Some(&book.join("src/a.md")), Some("abc123"));
    assert_eq!(d.reason, Some("no-git"));
}
