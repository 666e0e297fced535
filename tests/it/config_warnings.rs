//! A typo'd key in `[preprocessor.notabene]` is warned about where the build runs: by the
//! preprocessor under the real `mdbook build` (once, though mdBook asks the binary twice:
//! `supports`, then the book), and by `serve` once, not again on each rebuild.

use crate::support::common;
use crate::support::serve::{self, Server};
use crate::support::wait;
use std::process::Command;
use std::time::Duration;

/// The warning for the key `reveiw`.
const WARNING: &str =
    "notabene: warning: unknown key \"reveiw\" ignored (book.toml [preprocessor.notabene])";

/// `book.toml` with `reveiw` (for `review`) in the notabene table appended to `text`.
fn with_typo(book: &std::path::Path) {
    let toml = book.join("book.toml");
    let text = common::read(&toml).replace(
        "[preprocessor.notabene]\n",
        "[preprocessor.notabene]\nreveiw = \"approve\"\n",
    );
    assert!(text.contains("reveiw"), "{text}");
    common::write(&toml, &text);
}

#[test]
fn real_mdbook_build_warns_once_about_an_unknown_key() {
    let Some(mdbook) = common::find_tool("mdbook") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "the real mdbook binary is not installed (cargo install mdbook --version 0.5.4 --locked)"
        );
        eprintln!("note: skipping: no `mdbook` on PATH or in ~/.cargo/bin");
        return;
    };
    let tmp = common::git_book(&[
        (
            "book.toml",
            &format!(
                "[book]\ntitle = \"T\"\n\n[preprocessor.notabene]\ncommand = \"{}\"\n",
                common::plugin_bin()
            ),
        ),
        ("src/SUMMARY.md", "# Summary\n\n- [One](one.md)\n"),
        ("src/one.md", "# One\n\nSome text.\n"),
    ]);
    common::install(tmp.path());
    common::refresh_client(tmp.path());
    with_typo(tmp.path());
    let out = Command::new(&mdbook)
        .arg("build")
        .current_dir(tmp.path())
        .env_remove("NOTABENE_STORE")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "mdbook build failed: {stderr}");
    let said: Vec<&str> = stderr.lines().filter(|l| l.contains("reveiw")).collect();
    assert_eq!(said, [WARNING], "mdbook build's stderr: {stderr}");
}

#[test]
fn serve_warns_once_about_an_unknown_key_not_on_each_rebuild() {
    let tmp = common::tempdir();
    let log = tmp.path().join("serve.log");
    let server = Server::start_logging(&log, with_typo);
    let g = server.generation();
    let chapter = server.book.join("src/guide/sensors.md");
    let text = common::read(&chapter);
    common::write(&chapter, &format!("{text}\nOne more line.\n"));
    let g = server.wait_rebuild(g);
    common::write(&chapter, &text);
    server.wait_rebuild(g);
    let (code, _) = serve::request(server.port, "GET", "/", &[], b"");
    assert_eq!(code, 200);
    let said = wait::until(Duration::from_secs(5), "the server's log", || {
        let text = std::fs::read_to_string(&log).ok()?;
        text.contains("reveiw").then_some(text)
    });
    let lines: Vec<&str> = said.lines().filter(|l| l.contains("reveiw")).collect();
    assert_eq!(
        lines,
        [WARNING],
        "serve's stderr after two rebuilds: {said}"
    );
}

/// The real `mdbook build` of a book with an orphaned comment and `fail-on = "orphan"` prints
/// the failure line the CI guide tells people to search for, and blames the environment
/// variable when that is what set `fail-on`.
#[test]
fn real_mdbook_build_prints_the_fail_on_line_the_ci_guide_names() {
    let Some(mdbook) = common::find_tool("mdbook") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "the real mdbook binary is not installed (cargo install mdbook --version 0.5.4 --locked)"
        );
        return;
    };
    let tmp = common::git_book(&[
        (
            "book.toml",
            &format!(
                "[book]\ntitle = \"T\"\n\n[preprocessor.notabene]\ncommand = \"{}\"\n",
                common::plugin_bin()
            ),
        ),
        ("src/SUMMARY.md", "# Summary\n\n- [One](one.md)\n"),
        ("src/one.md", "# One\n\nSome words to quote here.\n"),
    ]);
    common::install(tmp.path());
    common::refresh_client(tmp.path());
    common::run(
        tmp.path(),
        &[
            "comments",
            "add",
            "--page",
            "src/one",
            "--quote",
            "words to quote",
            "--body",
            "Hm.",
        ],
    )
    .ok();
    common::write(&tmp.path().join("src/one.md"), "# One\n\nAll rewritten.\n");
    let build = |env: &[(&str, &str)]| {
        let out = Command::new(&mdbook)
            .arg("build")
            .current_dir(tmp.path())
            .env_remove("NOTABENE_STORE")
            .env_remove("MDBOOK_PREPROCESSOR__NOTABENE__FAIL_ON")
            .envs(env.iter().copied())
            .output()
            .unwrap();
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        stderr
            .lines()
            .filter(|l| l.contains("fail-on"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        build(&[("MDBOOK_PREPROCESSOR__NOTABENE__FAIL_ON", "orphan")]),
        [
            "notabene: build failed: 1 orphaned anchor(s) and fail-on = \"orphan\" (MDBOOK_PREPROCESSOR__NOTABENE__FAIL_ON)"
        ]
    );
    let toml = tmp.path().join("book.toml");
    let text = common::read(&toml).replace(
        "[preprocessor.notabene]\n",
        "[preprocessor.notabene]\nfail-on = \"orphan\"\n",
    );
    common::write(&toml, &text);
    assert_eq!(
        build(&[]),
        [
            "notabene: build failed: 1 orphaned anchor(s) and fail-on = \"orphan\" (book.toml [preprocessor.notabene] fail-on)"
        ]
    );
}
