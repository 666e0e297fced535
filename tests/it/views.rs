//! The generated /review data: the journal inverted into one card per `addressed` comment
//! (a cascade across pages, the three ways a link can be missing), and the diff source
//! chosen for each case from real git (a committed `ref`, the working tree, an untracked new
//! file, an unchanged file, an unknown ref, a page without a file, no repository).

use crate::support::common::{self, git, git_commit_all};

use mdbook_notabene::model::book::Book;
use mdbook_notabene::model::book::PageIds;
use mdbook_notabene::model::book::Repo;
use mdbook_notabene::model::resolve::{Chapter, anchor_book};
use mdbook_notabene::output::views::ViewInput;
use notabene_anchoring::DEFAULT_THRESHOLD;
use notabene_anchoring::text::TextOptions;
use notabene_store::{Fresh, Scope, new_comment};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn addressed(id: &str, page: &str, link: Option<&str>) -> notabene_store::Comment {
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

/// The chapters `names` of the book at `book` (`src/<name>.md`, titled by their name in
/// capitals, at `<name>.html`).
fn chapters_of(book: &std::path::Path, ids: &PageIds, names: &[&str]) -> Vec<Chapter> {
    names
        .iter()
        .map(|f| Chapter {
            page: format!("{}/{f}", ids.prefix),
            name: f.to_uppercase(),
            url: format!("{f}.html"),
            source: format!("docs/src/{f}.md"),
            content: common::read(&book.join(format!("src/{f}.md"))),
            disk: None,
        })
        .collect()
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
    let chapters = chapters_of(&book, &ids, &["a", "b", "c"]);
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
        memo: &mdbook_notabene::util::memo::Memo::off(),
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

/// A comment `id` on `page` with `status`, anchored to `quote` (or the whole page), its
/// thread `messages` long.
fn stored(id: &str, page: &str, status: &str, quote: Option<&str>, messages: usize) -> Value {
    let thread: Vec<Value> = (0..messages)
        .map(|n| json!({ "author": "Rae", "body": format!("message {n} on {id}\nsecond line"), "ts": format!("2026-07-2{n}T09:00:00.000Z") }))
        .collect();
    let (scope, anchor) = match quote {
        Some(q) => (
            "selection",
            json!({ "quote": q, "prefix": "the ", "suffix": " here", "hint": 1 }),
        ),
        None => ("page", Value::Null),
    };
    json!({
        "id": id, "space": "book", "page": page, "scope": scope, "anchor": anchor,
        "thread": thread, "status": status, "hold": false, "resolution": null,
        "createdAt": "2026-07-20T09:00:00.000Z", "updatedAt": "2026-07-21T09:00:00.000Z",
    })
}

/// A build reads resolved comments thin (a few fields, their lean forms written when the file
/// was read): every island, the /comments list and the /review cards are what reading them
/// whole gives, whatever the comment holds (another space, a hold, defaults, unknown fields,
/// replies, a page off the book, no quote).
#[test]
fn resolved_comments_read_condensed_give_the_pages_reading_them_whole_gives() {
    use mdbook_notabene::model::book::condensed::{self, PrerenderedOf};
    use mdbook_notabene::model::resolve::Which;
    use mdbook_notabene::output::inject::island;
    use notabene_store::Comment;
    let tmp = common::tempdir();
    let book = tmp.path().join("docs");
    common::write(
        &book.join("book.toml"),
        "[book]\ntitle = \"T\"\n\n[preprocessor.notabene]\nreview = \"approve\"\n",
    );
    common::write(&book.join("src/SUMMARY.md"), "- [A](a.md)\n- [B](b.md)\n");
    common::write(
        &book.join("src/a.md"),
        "# A\n\nAlpha text with a quote here.\n",
    );
    common::write(
        &book.join("src/b.md"),
        "# B\n\nBeta text, and more text here.\n",
    );
    let cfg = Book::load(&book).unwrap();
    let ids = PageIds::new(&cfg);
    let p = |f: &str| format!("{}/{f}", ids.prefix);
    let mut values = vec![
        stored("c_res_replies", &p("a"), "resolved", Some("quote"), 3),
        stored("c_res_one", &p("b"), "resolved", Some("more text"), 1),
        stored("c_res_page", &p("a"), "resolved", None, 2),
        stored("c_res_gone", &p("gone"), "resolved", Some("quote"), 2),
        stored("c_open", &p("a"), "open", Some("Alpha"), 2),
    ];
    // Another space, a hold, no defaults left out, an unknown field, no thread.
    values[1]["space"] = "elsewhere".into();
    values[1]["hold"] = true.into();
    values[1]["updatedAt"] = values[1]["createdAt"].clone();
    values[1]["x-extra"] = json!({ "kept": [1, 2.5, null] });
    let mut bare = stored("c_res_bare", &p("b"), "resolved", Some("Beta"), 0);
    bare["anchor"] = json!({ "label": "figure 1" });
    bare.as_object_mut().unwrap().remove("thread");
    values.push(bare);
    let mut addressed_one = addressed("c_addr", &p("a"), Some("j-1"));
    addressed_one.set("page", p("a").into());
    let whole: Vec<Comment> = values
        .into_iter()
        .map(Comment::from_value)
        .chain([addressed_one])
        .collect();
    let thin: Vec<Comment> = whole
        .iter()
        .map(|c| condensed::condensed(c, &cfg.config.space).unwrap_or_else(|| c.clone()))
        .collect();
    let thin_ids: Vec<&str> = thin
        .iter()
        .filter(|c| c.prerendered().is_some())
        .filter_map(Comment::id)
        .collect();
    assert_eq!(
        thin_ids,
        ["c_res_replies", "c_res_one", "c_res_gone", "c_res_bare"]
    );
    let journal = vec![
        json!({ "id": "j-1", "date": "2026-07-28", "title": "t", "summary": "s", "changes": [
            { "page": p("a"), "commentIds": ["c_addr", "c_res_replies", "c_res_bare", "c_res_page"], "what": "w", "why": "y" },
        ]}),
    ];
    let chapters = chapters_of(&book, &ids, &["a", "b"]);
    let repo = Repo::discover(&book);
    let pages = |comments: Vec<Comment>| {
        let anchors = anchor_book(
            chapters.clone(),
            comments,
            &TextOptions::default(),
            DEFAULT_THRESHOLD,
            1,
            Which::Live,
        );
        let input = ViewInput {
            anchors: &anchors,
            journal: &journal,
            book: &cfg,
            ids: &ids,
            repo: &repo,
            memo: &mdbook_notabene::util::memo::Memo::off(),
        };
        let islands: Vec<String> = (0..anchors.chapters.len())
            .map(|ch| island::injection_for(&anchors, ch, &cfg.config).1)
            .collect();
        (islands, input.comments(), input.review().to_string())
    };
    let (whole_islands, whole_list, whole_review) = pages(whole);
    let (thin_islands, thin_list, thin_review) = pages(thin);
    assert_eq!(thin_islands, whole_islands);
    assert_eq!(thin_list, whole_list);
    assert_eq!(thin_review, whole_review);
    // What the comparison covers: replies in the island, the first message in the list, the
    // snippets of the resolved comments the journal names.
    assert!(whole_islands[0].contains("message 2 on c_res_replies"));
    assert!(whole_list.contains(r#""replies":2"#));
    assert!(whole_review.contains("figure 1") && whole_review.contains("quote"));
}
