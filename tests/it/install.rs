//! `mdbook-notabene install`: golden book.toml before/after (a fresh book, a book with other
//! plugins — formatting and comments kept), a second run that changes nothing, and a build
//! right after install.

use crate::support::common::{self, Out, repo_root, run_plugin};

use pretty_assertions::assert_eq;
use std::path::Path;

/// A book in a temp dir with the fixture's book.toml and one chapter.
fn book(fixture: &str) -> tempfile::TempDir {
    let tmp = common::tempdir();
    let dir = tmp.path();
    std::fs::copy(
        common::fixture(&format!("install/{fixture}/book.toml")),
        dir.join("book.toml"),
    )
    .unwrap();
    common::write(&dir.join("src/SUMMARY.md"), "- [Intro](intro.md)\n");
    common::write(&dir.join("src/intro.md"), "# Intro\n\nHello, reader.\n");
    tmp
}

/// `mdbook-notabene install <dir>` run from the repository root (it names paths relative to
/// where it runs): (exit code, stdout, stderr).
fn install(dir: &Path) -> (i32, String, String) {
    let out = run_plugin(&repo_root(), &["install", dir.to_str().unwrap()], None, &[]);
    (out.code, out.stdout, out.stderr)
}

/// `mdbook-notabene build <dir>`, run from the repository root.
fn build(dir: &Path) -> Out {
    run_plugin(&repo_root(), &["build", dir.to_str().unwrap()], None, &[])
}

#[test]
fn fresh_book_golden() {
    let tmp = book("fresh");
    let (code, stdout, stderr) = install(tmp.path());
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert_eq!(
        common::read(&tmp.path().join("book.toml")),
        common::read(&common::fixture("install/fresh/expected.toml"))
    );
    let d = tmp.path().display();
    assert_eq!(
        stdout,
        format!(
            "notabene: book.toml: [preprocessor.notabene] after += \"links\"\n\
             notabene: book.toml: [output.html] additional-js += \"theme/notabene.js\"\n\
             notabene: book.toml: [output.html] additional-css += \"theme/notabene.css\"\n\
             notabene: book.toml: [build] extra-watch-dirs += \".notabene\"\n\
             notabene: wrote theme/notabene.js (mdbook-notabene {v})\n\
             notabene: wrote theme/notabene.css (mdbook-notabene {v})\n\
             notabene: wrote {d}/.notabene/protocol.md.\n\
             notabene: store ready at {d}/.notabene/\n\
             notabene: wrote {d}/.notabene/.gitattributes (store files merge with the notabene driver).\n\
             notabene: wrote {d}/.notabene/.gitignore (temp files stay out of git).\n\
             notabene: not a git repository — no merge driver configured (run `notabene init` again in a clone).\n\
             notabene: wrote the notabene block in {d}/AGENTS.md.\n\
             notabene: registered the notabene MCP server in {d}/.mcp.json.\n",
            v = env!("CARGO_PKG_VERSION")
        )
    );
    // Outside a git repository, .mcp.json sits beside book.toml and names the book as `.`.
    assert_eq!(
        common::read(&tmp.path().join(".mcp.json")),
        "{\n  \"mcpServers\": {\n    \"notabene\": {\n      \"command\": \"notabene\",\n      \"args\": [\"mcp\", \"--book\", \".\"]\n    }\n  }\n}\n"
    );
    // The client files carry the version stamp and the embedded client.
    let js = common::read(&tmp.path().join("theme/notabene.js"));
    assert!(js.starts_with(&format!(
        "/* mdbook-notabene {} — managed by `mdbook-notabene install`; do not edit */\n",
        env!("CARGO_PKG_VERSION")
    )));
    assert!(js.ends_with(mdbook_notabene::output::assets::JS));
    assert_eq!(
        common::read(&tmp.path().join(".notabene/meta.json")),
        "{\n  \"schemaVersion\": 3\n}\n"
    );
}

#[test]
fn book_with_other_plugins_keeps_its_formatting() {
    let tmp = book("plugins");
    let (code, _, stderr) = install(tmp.path());
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert_eq!(
        common::read(&tmp.path().join("book.toml")),
        common::read(&common::fixture("install/plugins/expected.toml"))
    );
}

#[test]
fn second_run_changes_nothing() {
    for fixture in ["fresh", "plugins"] {
        let tmp = book(fixture);
        assert_eq!(install(tmp.path()).0, 0);
        let before = common::tree(tmp.path());
        let (code, stdout, stderr) = install(tmp.path());
        assert_eq!((code, stderr.as_str()), (0, ""));
        assert_eq!(
            stdout,
            format!(
                "notabene: {} is already set up — nothing changed.\n",
                tmp.path().display()
            )
        );
        assert!(
            common::tree(tmp.path()) == before,
            "{fixture}: the second install changed files"
        );
    }
}

#[test]
fn build_right_after_install_succeeds_and_refuses_without_it() {
    let tmp = book("fresh");
    // Before install the preprocessor is not configured; with the table but no client files
    // the build names `install`.
    std::fs::write(
        tmp.path().join("book.toml"),
        "[book]\ntitle = \"Fresh book\"\n\n[preprocessor.notabene]\n",
    )
    .unwrap();
    let out = build(tmp.path());
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("run `mdbook-notabene install`"),
        "{}",
        out.stderr
    );

    assert_eq!(install(tmp.path()).0, 0);
    let out = build(tmp.path());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let html = common::read(&tmp.path().join("book/intro.html"));
    assert!(
        html.contains("class=\"nb-data\""),
        "the chapter carries its data island"
    );
    assert!(
        html.contains("theme/notabene"),
        "the client files are linked"
    );
    // An installed client older than the binary is refused.
    let js = tmp.path().join("theme/notabene.js");
    let text = common::read(&js).replacen(env!("CARGO_PKG_VERSION"), "0.0.1", 1);
    std::fs::write(&js, text).unwrap();
    let out = build(tmp.path());
    assert_ne!(out.code, 0);
    assert!(
        out.stderr
            .contains("is from mdbook-notabene 0.0.1, older than this binary")
    );
}
