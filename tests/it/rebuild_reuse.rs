//! Builds of one process that reuse what did not change (`serve`'s rebuilds): a chapter whose
//! Markdown and comments are unchanged since the last build is neither anchored nor injected
//! again, and every rebuild gives exactly the bytes a fresh build of the same sources gives.
//! The books are built by the embedded mdBook (`engine::build_into`, the way `serve` builds).

use crate::support::common;
use crate::support::common::{book_example, stage};
use crate::support::preprocess::files;
use mdbook_notabene::output::engine::{self, Reuse, ReuseCounts};
use pretty_assertions::assert_eq;
use std::path::Path;
use std::sync::Arc;

/// Builds `root` into `out/<name>` with `reuse`; returns what the build reused.
fn build(root: &Path, out: &Path, name: &str, reuse: &Arc<Reuse>) -> ReuseCounts {
    engine::build_into(root, &out.join(name), reuse).unwrap();
    reuse.counts()
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
    let reuse = Arc::new(Reuse::default());

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
