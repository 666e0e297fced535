//! Stored text never drives the terminal: on comments, journal entries and store file names
//! holding ESC, BEL, CR, an OSC 52 clipboard write, an OSC 0 window title, a CSI 2J screen
//! clear and a bidi override, every human-readable output of the real binary — `comments ls`,
//! `comments show`, `journal ls`, `anchors` and its warnings, the build report — shows them as
//! `\u{…}` escapes, byte for byte; `--json` output keeps them exactly (as JSON escapes).

use crate::support::common;

use common::{Out, run, run_with, write};
use pretty_assertions::assert_eq;
use serde_json::Value;
use std::path::Path;

/// Every terminal attack of the issue in one string: OSC 52 (writes the clipboard), CSI 2J
/// (clears the screen), a CR (overwrites the line), a right-to-left override, OSC 0 (sets the
/// window title) ended by BEL.
const HOSTILE: &str = "A\u{1b}]52;c;cHduZWQ=\u{7}B\u{1b}[2J\rC\u{202e}D\u{1b}]0;title\u{7}";
/// [`HOSTILE`] as the terminal must show it.
const SHOWN: &str = "A\\u{1b}]52;c;cHduZWQ=\\u{7}B\\u{1b}[2J\\u{d}C\\u{202e}D\\u{1b}]0;title\\u{7}";

/// Characters that must not reach a terminal raw (newline aside, which ends the lines).
fn raw_controls(s: &str) -> Vec<char> {
    s.chars()
        .filter(|&c| {
            c != '\n'
                && (c.is_control()
                    || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
                    || matches!(c, '\u{200e}' | '\u{200f}' | '\u{61c}'))
        })
        .collect()
}

/// Asserts that neither stream of `out` holds a raw control or bidi character.
#[track_caller]
fn assert_clean(out: &Out) {
    assert_eq!(
        (raw_controls(&out.stdout), raw_controls(&out.stderr)),
        (vec![], vec![]),
        "{out:?}"
    );
}

/// A set-up book (two chapters, a git repository) with two comments whose text is hostile: one
/// exactly anchored on `src/intro` (section, author and a two-line body), one orphaned on
/// `src/other` (its quote and suffix). Returns the temp dir and the two ids.
fn book() -> (tempfile::TempDir, String, String) {
    let tmp = common::git_book(&[
        ("book.toml", "[book]\ntitle = \"Escapes\"\n"),
        (
            "src/SUMMARY.md",
            "# Summary\n\n- [Intro](intro.md)\n- [Other](other.md)\n",
        ),
        ("src/intro.md", "# Intro\n\nThe quick brown fox jumps.\n"),
        ("src/other.md", "# Other\n\nNothing to see.\n"),
    ]);
    let d = tmp.path();
    run(d, &["install"]).ok();
    let add = |args: &[&str]| -> String {
        let mut full = vec!["comments", "add", "--json", "--force"];
        full.extend_from_slice(args);
        let c: Value = serde_json::from_str(run(d, &full).ok()).unwrap();
        c["id"].as_str().unwrap().to_string()
    };
    let section = format!("Intro {HOSTILE}");
    let author = format!("Eve {HOSTILE} <eve@example.com>");
    let body = format!("first {HOSTILE}\nsecond\tline");
    let exact = add(&[
        "--page",
        "src/intro",
        "--quote",
        "quick brown fox",
        "--prefix",
        "The ",
        "--section",
        &section,
        "--author",
        &author,
        "--body",
        &body,
    ]);
    let quote = format!("gone {HOSTILE}");
    let suffix = format!(" then {HOSTILE}");
    let orphan = add(&[
        "--page",
        "src/other",
        "--quote",
        &quote,
        "--suffix",
        &suffix,
        "--body",
        "where?",
    ]);
    (tmp, exact, orphan)
}

#[test]
fn comments_ls_and_show_escape_stored_text() {
    let (tmp, exact, orphan) = book();
    let d = tmp.path();
    let out = run(d, &["comments", "ls", "--page", "src/intro"]);
    assert_clean(&out);
    let block = format!(
        "\
[{exact}] open selection page=src/intro
  §Intro {SHOWN}: «quick brown fox»
  • Eve {SHOWN} <eve@example.com>: first {SHOWN}
    second\\u{{9}}line
"
    );
    assert_eq!(out.ok(), block);

    let out = run(d, &["comments", "show", &exact]);
    assert_clean(&out);
    assert_eq!(
        out.ok(),
        format!(
            "\
{block}  quote:  \"quick brown fox\"
  prefix: \"The \"
  suffix: \"\"
  by Eve {SHOWN} · created {now} · updated {now}
  file: src/intro/{exact}.json
",
            now = common::NOW
        )
    );

    // The anchor's quote and suffix; in the context lines as Rust quotes a string, which
    // writes CR as `\r`.
    let out = run(d, &["comments", "show", &orphan]);
    assert_clean(&out);
    assert_eq!(
        out.ok(),
        format!(
            "\
[{orphan}] open selection page=src/other
  §: «gone {SHOWN}»
  • {author}: where?
  quote:  \"gone {quoted}\"
  prefix: \"\"
  suffix: \" then {quoted}\"
  by Ada Agent · created {now} · updated {now}
  file: src/other/{orphan}.json
",
            author = common::AUTHOR,
            quoted = SHOWN.replace("\\u{d}", "\\r"),
            now = common::NOW
        )
    );
}

#[test]
fn json_output_keeps_the_characters() {
    let (tmp, exact, _) = book();
    let d = tmp.path();
    // serde_json's escapes of the raw text: ESC, BEL and CR escaped as JSON, U+202E as it is.
    let json_text = serde_json::to_string(HOSTILE).unwrap();
    assert_eq!(
        json_text,
        "\"A\\u001b]52;c;cHduZWQ=\\u0007B\\u001b[2J\\rC\u{202e}D\\u001b]0;title\\u0007\""
    );
    let json_inner = &json_text[1..json_text.len() - 1];
    for args in [
        &["comments", "ls", "--page", "src/intro", "--json"][..],
        &["comments", "show", &exact, "--json"][..],
    ] {
        let out = run(d, args);
        let text = out.ok();
        assert!(
            text.contains(&format!("\"body\": \"first {json_inner}\\nsecond\\tline\"")),
            "{args:?}: {text}"
        );
        let v: Value = serde_json::from_str(text).unwrap();
        let c = if v.is_array() { &v[0] } else { &v };
        assert_eq!(
            (
                c["anchor"]["section"].as_str().unwrap(),
                c["thread"][0]["author"].as_str().unwrap(),
                c["thread"][0]["body"].as_str().unwrap(),
            ),
            (
                format!("Intro {HOSTILE}").as_str(),
                format!("Eve {HOSTILE} <eve@example.com>").as_str(),
                format!("first {HOSTILE}\nsecond\tline").as_str(),
            ),
            "{args:?}"
        );
    }
}

#[test]
fn journal_ls_escapes_stored_text() {
    let (tmp, exact, _) = book();
    let d = tmp.path();
    let entry = serde_json::json!({
        "id": "j-1\u{202e}",
        "date": "2026-07-28",
        "title": format!("T {HOSTILE}"),
        "summary": "s",
        "changes": [{
            "page": "src/intro",
            "commentIds": [exact],
            "what": format!("W {HOSTILE}\nsecond line"),
            "why": "y"
        }]
    });
    // The id, with its bidi override, comes back as JSON: exactly, not escaped.
    let out = run_with(
        d,
        &["journal", "add", "--json"],
        Some(&entry.to_string()),
        &[],
    );
    assert_eq!(out.ok(), "{\"id\":\"j-1\u{202e}\"}\n");
    let out = run(d, &["journal", "ls"]);
    assert_clean(&out);
    assert_eq!(
        out.ok(),
        format!(
            "2026-07-28  j-1\\u{{202e}}  T {SHOWN}\n  src/intro — W {SHOWN}\\u{{a}}second line  [{exact}]\n"
        )
    );
    let out = run(d, &["journal", "ls", "--json"]);
    let v: Value = serde_json::from_str(out.ok()).unwrap();
    assert_eq!(v[0]["title"], format!("T {HOSTILE}"));
    assert_eq!(v[0]["id"], "j-1\u{202e}");
}

#[test]
fn anchors_and_the_build_report_escape_stored_text() {
    let (tmp, exact, orphan) = book();
    let d = tmp.path();
    // A store file that does not parse, its name hostile: readers warn about it by name.
    let name = "c_x\u{1b}[2J\r\u{202e}\u{7}.json";
    write(&d.join(".notabene/src/other").join(name), "{ nope\n");
    let warning = "notabene: skipping unreadable comment file: key must be a string at line 1 column 3 (src/other/c_x\\u{1b}[2J\\u{d}\\u{202e}\\u{7}.json)\n";

    let out = run(d, &["anchors"]);
    assert_clean(&out);
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (
            0,
            format!(
                "[{exact}] exact 0.99 src/intro src/intro.md:3:5 «quick brown fox»\n[{orphan}] orphan 0.00 src/other\n"
            )
            .as_str(),
            warning
        )
    );

    let out = run(d, &["build"]);
    assert_clean(&out);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            0,
            format!(
                "{warning}notabene: 2 comments on 2 pages — 1 exact, 0 fuzzy, 1 orphaned\nnotabene: warning: orphaned anchor {orphan} on src/other: «gone A\\u{{1b}}]52;c;cHduZWQ=\\u{{7}}B\\u{{1b}}[2J C\\u{{202e}}D\\u{{1b}}]0;title\\u{{7}}»\n"
            )
            .as_str()
        ),
        "{out:?}"
    );
    assert!(Path::new(&d.join("book/index.html")).is_file());
}
