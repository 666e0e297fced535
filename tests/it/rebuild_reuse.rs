//! Builds of one process that reuse what did not change (`serve`'s rebuilds): a chapter whose
//! Markdown and comments are unchanged since the last build is neither anchored nor injected
//! again, and every rebuild gives exactly the bytes a fresh build of the same sources gives;
//! after a change of the store or of chapters' Markdown, a rebuild renders only the pages that
//! changed, and gives every file a fresh build gives but `print.html` and the search index,
//! which the whole build after it gives. The books are built by the embedded mdBook
//! (`engine::build_into` and `engine::rebuild_into`, the way `serve` builds).

use crate::support::common;
use crate::support::common::{book_example, stage};
use crate::support::preprocess::files;
use mdbook_notabene::output::engine::{self, Kept, RebuildChange, Rebuilt, ReuseCounts};
use pretty_assertions::assert_eq;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Builds `root` into `out/<name>` with `kept`; returns what the build reused.
fn build(root: &Path, out: &Path, name: &str, kept: &Kept) -> ReuseCounts {
    engine::build_into(root, &out.join(name), kept).unwrap();
    kept.reuse.counts()
}

/// Asserts the site built as `name` is byte for byte the site a build that keeps nothing
/// (`mdbook-notabene build`'s) gives now.
fn same_as_fresh(root: &Path, out: &Path, name: &str) {
    let fresh = format!("{name}-fresh");
    engine::build(root, Some(&out.join(&fresh))).unwrap();
    let (a, b) = (files(&out.join(name)), files(&out.join(&fresh)));
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (path, bytes) in &a {
        assert!(
            *bytes == b[path],
            "{path}: the rebuild differs from a fresh build"
        );
    }
}

#[test]
fn a_rebuild_anchors_and_injects_only_the_chapters_that_changed() {
    let tmp = common::tempdir();
    let root = stage(&book_example(), tmp.path(), "book-example");
    let out = tmp.path().join("out");
    let reuse = Kept::default();

    let first = build(&root, &out, "1", &reuse);
    let n = first.anchored;
    assert!(n >= 6, "{first:?}");
    assert_eq!(
        first,
        ReuseCounts {
            anchoring_reused: 0,
            anchored: n,
            injection_reused: 0,
            injected: n
        }
    );

    // Nothing changed: nothing is done again, and the site is the same.
    assert_eq!(
        build(&root, &out, "2", &reuse),
        ReuseCounts {
            anchoring_reused: n,
            anchored: 0,
            injection_reused: n,
            injected: 0
        }
    );
    assert!(files(&out.join("1")) == files(&out.join("2")));

    // A reply: the anchors looked for are the same everywhere (nothing is anchored again);
    // the chapter's island changed, so that chapter alone is injected again.
    let store = root.join(".notabene/book-example/src");
    let held = store.join("guide/installing/c_mwrmz21ih8pc.json");
    let text = common::read(&held).replace(
        "\n  ],\n  \"status\"",
        ",\n    {\n      \"author\": \"Sam <sam@example.com>\",\n      \"body\": \"Pi 4: nine minutes.\",\n      \"ts\": \"2026-11-23T10:00:00.000Z\"\n    }\n  ],\n  \"status\"",
    );
    assert!(text.contains("nine minutes"));
    common::write(&held, &text);
    assert_eq!(
        build(&root, &out, "3", &reuse),
        ReuseCounts {
            anchoring_reused: n,
            anchored: 0,
            injection_reused: n - 1,
            injected: 1
        }
    );
    same_as_fresh(&root, &out, "3");

    // A new comment: its chapter is anchored and injected again, the others keep theirs (and
    // every chapter shows the new book-wide count, in its own summary element).
    let model = common::read(&store.join("guide/configuration/c_mworge1zx4rb.json"));
    common::write(
        &store.join("guide/configuration/c_mwzz00000001.json"),
        &model.replace("c_mworge1zx4rb", "c_mwzz00000001"),
    );
    assert_eq!(
        build(&root, &out, "4", &reuse),
        ReuseCounts {
            anchoring_reused: n - 1,
            anchored: 1,
            injection_reused: n - 1,
            injected: 1
        }
    );
    same_as_fresh(&root, &out, "4");
    let open = |site: &str| {
        let html = common::read(&out.join(site).join("guide/sensors.html"));
        let tag = "class=\"nb-summary\">";
        let start = html.find(tag).unwrap() + tag.len();
        let end = start + html[start..].find("</script>").unwrap();
        let v: serde_json::Value = serde_json::from_str(&html[start..end]).unwrap();
        v["open"].as_u64().unwrap()
    };
    assert_eq!(open("4"), open("3") + 1);

    // A chapter's Markdown edited: that chapter alone.
    let sensors = root.join("src/guide/sensors.md");
    common::write(
        &sensors,
        &(common::read(&sensors) + "\nOne more paragraph, at the end.\n"),
    );
    assert_eq!(
        build(&root, &out, "5", &reuse),
        ReuseCounts {
            anchoring_reused: n - 1,
            anchored: 1,
            injection_reused: n - 1,
            injected: 1
        }
    );
    same_as_fresh(&root, &out, "5");

    // What every chapter was computed with changed: a threshold anchors everything again (the
    // islands come out the same, so nothing is injected again), `compress-above` injects
    // everything again.
    let toml = root.join("book.toml");
    let config = common::read(&toml);
    assert!(config.contains("[preprocessor.notabene]\n"));
    common::write(
        &toml,
        &config.replace(
            "[preprocessor.notabene]\n",
            "[preprocessor.notabene]\nthreshold = 0.8\n",
        ),
    );
    assert_eq!(
        build(&root, &out, "6", &reuse),
        ReuseCounts {
            anchoring_reused: 0,
            anchored: n,
            injection_reused: n,
            injected: 0
        }
    );
    same_as_fresh(&root, &out, "6");
    common::write(
        &toml,
        &config.replace(
            "[preprocessor.notabene]\n",
            "[preprocessor.notabene]\nthreshold = 0.8\ncompress-above = 0\n",
        ),
    );
    assert_eq!(
        build(&root, &out, "7", &reuse),
        ReuseCounts {
            anchoring_reused: n,
            anchored: 0,
            injection_reused: 0,
            injected: n
        }
    );
    same_as_fresh(&root, &out, "7");
    assert!(common::read(&out.join("7/guide/sensors.html")).contains("data-nb-encoding"));
}

/// Rebuilds `root` into `out/<name>` from the site `out/<from>` after `files` changed, the
/// pages in `touched` changed in place; returns how.
fn rebuild(
    root: &Path,
    out: &Path,
    (from, name): (&str, &str),
    kept: &Kept,
    files: Option<&[PathBuf]>,
    touched: &[&str],
) -> Rebuilt {
    let files: Option<BTreeSet<PathBuf>> = files.map(|f| f.iter().cloned().collect());
    let touched: BTreeSet<String> = touched.iter().map(|s| s.to_string()).collect();
    let (_, rebuilt) = engine::rebuild_into(
        root,
        (&out.join(from), &out.join(name), &out.join("scratch")),
        kept,
        &RebuildChange {
            files: files.as_ref(),
            touched: &touched,
        },
    )
    .unwrap();
    rebuilt
}

/// The files of the site at `dir` a reader's pages show: all but `print.html` and the search
/// index, with the search index's hashed name taken out of the pages and the search script
/// that name it.
pub(crate) fn pages(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    files(dir)
        .into_iter()
        .filter(|(p, _)| p != "print.html" && !p.starts_with("searchindex"))
        .map(|(p, bytes)| {
            if !(p.ends_with(".html") || p.starts_with("searcher")) {
                return (p, bytes);
            }
            let mut text = String::from_utf8(bytes).unwrap();
            let mut from = 0;
            while let Some(at) = text[from..].find("searchindex-").map(|i| from + i) {
                let end = at + text[at..].find(".js").unwrap();
                text.replace_range(at..end, "searchindex");
                from = at + "searchindex".len();
            }
            (p, text.into_bytes())
        })
        .collect()
}

/// Asserts that two maps of files are the same, naming the files that differ.
#[track_caller]
pub(crate) fn assert_same(
    a: &BTreeMap<String, Vec<u8>>,
    b: &BTreeMap<String, Vec<u8>>,
    what: &str,
) {
    let keys = |m: &BTreeMap<String, Vec<u8>>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(a), keys(b), "{what}: the same files");
    let differ: Vec<&String> = a.keys().filter(|k| a[*k] != b[*k]).collect();
    if let Some(first) = differ.first() {
        // Where the first of them differs, for the message.
        let (x, y) = (&a[*first], &b[*first]);
        let at = x.iter().zip(y.iter()).take_while(|(p, q)| p == q).count();
        let around = |v: &[u8]| {
            String::from_utf8_lossy(&v[at.saturating_sub(80)..(at + 80).min(v.len())]).into_owned()
        };
        panic!(
            "{what}: these files differ: {differ:?}; {first} at byte {at}:\n{}\n---\n{}",
            around(x),
            around(y)
        );
    }
}

#[test]
fn after_a_comment_or_an_edit_a_rebuild_renders_only_the_pages_that_changed() {
    let tmp = common::tempdir();
    let root = stage(&book_example(), tmp.path(), "book-example");
    // The store's files an hour old, as a checkout's are once a build has read them: the
    // builds keep what they read of them (a file modified just now is never kept).
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    set_modified(&common::files_under(&root.join(".notabene")), hour_ago);
    let out = tmp.path().join("out");
    let kept = Kept::default();
    engine::build_into(&root, &out.join("0"), &kept).unwrap();
    let fresh = |name: &str| {
        let dir = out.join(format!("{name}-fresh"));
        engine::build(&root, Some(&dir)).unwrap();
        dir
    };

    // A new comment: its chapter and the generated pages are rendered, every other chapter
    // gets the new count in its summary element, and the site is a fresh build's but for
    // print.html.
    let store = root.join(".notabene/book-example/src");
    let model = common::read(&store.join("guide/configuration/c_mworge1zx4rb.json"));
    let new = store.join("guide/configuration/c_mwzz00000002.json");
    common::write(&new, &model.replace("c_mworge1zx4rb", "c_mwzz00000002"));
    let rebuilt = rebuild(
        &root,
        &out,
        ("0", "1"),
        &kept,
        Some(std::slice::from_ref(&new)),
        &[],
    );
    let Rebuilt::Pages { rendered, patched } = rebuilt else {
        panic!("a new comment renders pages: {rebuilt:?}");
    };
    assert!(rendered >= 2 && patched >= 3, "{rebuilt:?}");
    let f1 = fresh("1");
    assert_same(&pages(&out.join("1")), &pages(&f1), "after a new comment");
    assert_ne!(
        common::read(&out.join("1/print.html")),
        common::read(&f1.join("print.html")),
        "print.html is the last build's until the whole build"
    );
    // The whole build that follows gives every byte.
    assert_eq!(
        rebuild(&root, &out, ("1", "2"), &kept, None, &[]),
        Rebuilt::Whole
    );
    assert!(
        files(&out.join("2")) == files(&f1),
        "the whole build after it"
    );

    // An author's edit of a chapter's Markdown: that page (and the summaries, unchanged here:
    // no page is patched) — with the search index the last build's.
    let sensors = root.join("src/guide/sensors.md");
    let md = common::read(&sensors);
    assert!(md.contains("## "), "a section to edit");
    common::write(&sensors, &md.replacen("## ", "## Edited: ", 1));
    let rebuilt = rebuild(
        &root,
        &out,
        ("2", "3"),
        &kept,
        Some(std::slice::from_ref(&sensors)),
        &[],
    );
    assert!(
        matches!(
            rebuilt,
            Rebuilt::Pages {
                rendered: 1..,
                patched: 0
            }
        ),
        "{rebuilt:?}"
    );
    assert_same(&pages(&out.join("3")), &pages(&fresh("3")), "after an edit");

    // A page changed in place (serve patches islands) is rendered again, though nothing else
    // changed.
    common::write(&out.join("3/guide/installing.html"), "patched in place");
    let rebuilt = rebuild(
        &root,
        &out,
        ("3", "4"),
        &kept,
        Some(&[]),
        &["guide/installing.html"],
    );
    assert_eq!(
        rebuilt,
        Rebuilt::Pages {
            rendered: 1,
            patched: 0
        }
    );
    assert_same(
        &pages(&out.join("4")),
        &pages(&fresh("4")),
        "a touched page",
    );

    // What a build of pages cannot know: the whole book. A chapter's title in SUMMARY.md, an
    // image, an unknown change.
    let summary = root.join("src/SUMMARY.md");
    let toc = common::read(&summary);
    common::write(&summary, &toc.replace("[Sensors]", "[Sensor setup]"));
    assert_eq!(
        rebuild(
            &root,
            &out,
            ("4", "5"),
            &kept,
            Some(std::slice::from_ref(&summary)),
            &[]
        ),
        Rebuilt::Whole
    );
    assert!(
        files(&out.join("5")) == files(&fresh("5")),
        "after SUMMARY.md"
    );
    let image = root.join("src/images/wiring.svg");
    common::write(&image, &(common::read(&image) + "\n"));
    assert_eq!(
        rebuild(
            &root,
            &out,
            ("5", "6"),
            &kept,
            Some(std::slice::from_ref(&image)),
            &[]
        ),
        Rebuilt::Whole
    );
    assert!(
        files(&out.join("6")) == files(&fresh("6")),
        "after an image"
    );
    // Nothing changed and nothing known: whole.
    assert_eq!(
        rebuild(&root, &out, ("6", "7"), &kept, None, &[]),
        Rebuilt::Whole
    );
    // An agent rewords the sentence a comment quotes: a page's change, the comment fuzzy in
    // it.
    let installing = root.join("src/guide/installing.md");
    let md = common::read(&installing);
    let quote = "takes roughly twenty minutes to compile";
    assert!(md.contains(quote));
    common::write(
        &installing,
        &md.replace(quote, "takes about twenty minutes to compile"),
    );
    let rebuilt = rebuild(
        &root,
        &out,
        ("7", "8"),
        &kept,
        Some(std::slice::from_ref(&installing)),
        &[],
    );
    assert!(matches!(rebuilt, Rebuilt::Pages { .. }), "{rebuilt:?}");
    assert_same(
        &pages(&out.join("8")),
        &pages(&fresh("8")),
        "an agent's edit",
    );

    // A comment file another program rewrites (its body reworded), its modification time put
    // back: named as changed, it is read again, while every file not named is taken from the
    // last read without a `stat`.
    let reworded = store.join("guide/configuration/c_mworge1zx4rb.json");
    let mut comment: serde_json::Value = serde_json::from_str(&common::read(&reworded)).unwrap();
    comment["body"] = "Reworded by another program.".into();
    common::write(&reworded, &serde_json::to_string_pretty(&comment).unwrap());
    set_modified(std::slice::from_ref(&reworded), hour_ago);
    let rebuilt = rebuild(
        &root,
        &out,
        ("8", "9"),
        &kept,
        Some(std::slice::from_ref(&reworded)),
        &[],
    );
    assert!(matches!(rebuilt, Rebuilt::Pages { .. }), "{rebuilt:?}");
    assert!(
        common::read(&out.join("9/guide/configuration.html"))
            .contains("Reworded by another program.")
    );
    assert_same(
        &pages(&out.join("9")),
        &pages(&fresh("9")),
        "a comment file rewritten",
    );

    // Rewritten again while book.toml is broken: the build that fails forgets nothing, and
    // the one after it (told only of book.toml) reads the comment file again.
    comment["body"] = "Reworded while the book was broken.".into();
    common::write(&reworded, &serde_json::to_string_pretty(&comment).unwrap());
    set_modified(std::slice::from_ref(&reworded), hour_ago);
    let toml = root.join("book.toml");
    let good = common::read(&toml);
    common::write(&toml, &format!("{good}\n[broken"));
    let named: BTreeSet<PathBuf> = [reworded.clone(), toml.clone()].into();
    assert!(
        engine::rebuild_into(
            &root,
            (&out.join("9"), &out.join("10"), &out.join("scratch")),
            &kept,
            &RebuildChange {
                files: Some(&named),
                touched: &BTreeSet::new(),
            },
        )
        .is_err(),
        "a broken book.toml fails the build"
    );
    common::write(&toml, &good);
    rebuild(
        &root,
        &out,
        ("9", "11"),
        &kept,
        Some(std::slice::from_ref(&toml)),
        &[],
    );
    assert!(
        common::read(&out.join("11/guide/configuration.html"))
            .contains("Reworded while the book was broken."),
        "the comment rewritten during the failed build"
    );
}

/// Sets the modification time of `files` to `when`.
fn set_modified(files: &[PathBuf], when: std::time::SystemTime) {
    for f in files {
        std::fs::File::options()
            .write(true)
            .open(f)
            .and_then(|file| file.set_modified(when))
            .unwrap();
    }
}
