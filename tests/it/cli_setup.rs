//! `init`, `protocol`, `doctor`, `comments add` and `comments rm` against a real book in a
//! temp git repository: exact files written, idempotence, and what is left alone.

use crate::support::common;

use common::{AUTHOR, NOW, fixture, read, run, run_with, tree, write};
use pretty_assertions::assert_eq;
use std::path::{Path, PathBuf};

const PROTOCOL: &str = include_str!("../../src/protocol.md");
const AGENTS_TEMPLATE: &str = include_str!("../../src/agents_block.md");
const META: &str = "{\n  \"schemaVersion\": 3\n}\n";
const BEGIN: &str = "<!-- notabene:begin -->";
const END: &str = "<!-- notabene:end -->";

/// A git repository at `<tmp>` holding a book at `<tmp>/book` (book.toml, `src/intro.md`,
/// `src/guide/setup.md`). Its store is `<tmp>/book/.notabene`, its page prefix `book/src`.
fn book() -> tempfile::TempDir {
    common::git_book(&[
        (
            "book/book.toml",
            "[book]\ntitle = \"Field Guide\"\nsrc = \"src\"\n",
        ),
        ("book/src/SUMMARY.md", "- [Intro](intro.md)\n"),
        ("book/src/intro.md", "# Intro\n\nThe retry policy, q.\n"),
        ("book/src/guide/setup.md", "# Setup\n"),
    ])
}

/// `notabene --book book args…` run in `<tmp>`, with PATH only the directory holding `git`
/// (so what `init` says of the octopus strategy does not depend on the machine's PATH).
fn nb(tmp: &tempfile::TempDir, args: &[&str]) -> common::Out {
    let mut full = vec!["--book", "book"];
    full.extend_from_slice(args);
    run_with(tmp.path(), &full, None, &[("PATH", git_dir().as_str())])
}

/// The directory of the `git` on PATH.
fn git_dir() -> String {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .find(|d| d.join("git").is_file())
        .expect("git on PATH")
        .display()
        .to_string()
}

/// The store's `.gitattributes` and `.gitignore` as `init` writes them.
const GITATTRIBUTES: &str = "# Written by `notabene init`: git merges the review store's files with `notabene merge-driver`\n# (set up once per clone by `notabene init`; without it git merges them as text).\n*.json merge=notabene\n";
const GITIGNORE: &str = "# Written by `notabene init`: temp files of interrupted writes never reach git\n# (`notabene comments verify` lists them, `notabene clean` removes them).\n*.tmp\n";

/// What `init` says of its git set-up in `<tmp>` (the first time, or again).
fn git_setup(first: bool) -> String {
    let exe = Path::new(common::bin()).canonicalize().unwrap();
    let octopus = format!(
        "notabene: octopus merges keep git's own strategy (it conflicts on the store): put a link named git-merge-notabene to {} on PATH, then run `notabene init` again.\n",
        exe.display()
    );
    if first {
        format!(
            "notabene: wrote book/.notabene/.gitattributes (store files merge with the notabene driver).\n\
             notabene: wrote book/.notabene/.gitignore (temp files stay out of git).\n\
             notabene: configured the git merge driver in this clone (merge.notabene.driver in .git/config).\n{octopus}"
        )
    } else {
        format!(
            "notabene: book/.notabene/.gitattributes is current.\n\
             notabene: book/.notabene/.gitignore is current.\n\
             notabene: the git merge driver is configured in this clone (merge.notabene.driver).\n{octopus}"
        )
    }
}

/// `init`'s output around its git set-up: `before` (the protocol line, the store line), the
/// git lines, then `after` (the AGENTS.md line), then the `.mcp.json` line.
fn init_out(first: bool, before: &str, after: &str) -> String {
    let mcp = if first {
        "notabene: registered the notabene MCP server in .mcp.json.\n"
    } else {
        "notabene: .mcp.json already registers the notabene MCP server.\n"
    };
    format!("{before}{}{after}{mcp}", git_setup(first))
}

/// The `.mcp.json` `init` writes in a repository without one, for the book `book`.
const MCP_JSON: &str = "{\n  \"mcpServers\": {\n    \"notabene\": {\n      \"command\": \"notabene\",\n      \"args\": [\"mcp\", \"--book\", \"book\"]\n    }\n  }\n}\n";

fn store(tmp: &tempfile::TempDir) -> PathBuf {
    tmp.path().join("book/.notabene")
}

/// The tree of `<tmp>` without `.git`.
fn files(tmp: &tempfile::TempDir) -> common::Tree {
    tree(tmp.path())
        .into_iter()
        .filter(|(p, _)| p != ".git" && !p.starts_with(".git/"))
        .collect()
}

/// The AGENTS.md block for the store `book/.notabene`, with `eol` line endings.
fn block(eol: &str) -> String {
    let body = AGENTS_TEMPLATE
        .replace("{{store}}", "book/.notabene")
        .replace("{{protocol}}", "book/.notabene/protocol.md");
    format!("{BEGIN}\n{}\n{END}", body.trim_end()).replace('\n', eol)
}

#[test]
fn init_on_a_fresh_book_then_again() {
    let tmp = book();
    let before = files(&tmp);
    assert_eq!(
        nb(&tmp, &["init"]).ok(),
        init_out(
            true,
            "notabene: wrote book/.notabene/protocol.md.\nnotabene: store ready at book/.notabene/\n",
            "notabene: wrote the notabene block in AGENTS.md.\n"
        )
    );
    let store = store(&tmp);
    assert_eq!(read(&store.join("meta.json")), META);
    assert_eq!(read(&store.join("protocol.md")), PROTOCOL);
    assert!(PROTOCOL.starts_with("<!-- notabene agent protocol v3 "));
    let agents = read(&tmp.path().join("AGENTS.md"));
    assert_eq!(agents, format!("# Agent instructions\n\n{}\n", block("\n")));
    assert!(
        agents.contains("read the full agent protocol in `book/.notabene/protocol.md`"),
        "{agents}"
    );
    // Exactly six files were added (and the store directory).
    let mut expected = before;
    for (p, text) in [
        ("AGENTS.md", agents.as_str()),
        (".mcp.json", MCP_JSON),
        ("book/.notabene/.gitattributes", GITATTRIBUTES),
        ("book/.notabene/.gitignore", GITIGNORE),
        ("book/.notabene/meta.json", META),
        ("book/.notabene/protocol.md", PROTOCOL),
    ] {
        expected.insert(p.into(), common::Node::File(text.as_bytes().to_vec()));
    }
    expected.insert("book/.notabene".into(), common::Node::Dir);
    assert_eq!(files(&tmp), expected);

    // A second init changes nothing.
    assert_eq!(
        nb(&tmp, &["init"]).ok(),
        init_out(
            false,
            "notabene: book/.notabene/protocol.md is current.\nnotabene: store ready at book/.notabene/\n",
            "notabene: AGENTS.md block is current.\n"
        )
    );
    assert_eq!(files(&tmp), expected);
}

#[test]
fn init_leaves_a_protocol_without_banner_alone_and_refreshes_an_old_one() {
    let tmp = book();
    let store = store(&tmp);
    write(&store.join("protocol.md"), "# Our own protocol\n");
    let out = nb(&tmp, &["init", "--no-agents-md"]);
    assert_eq!(
        out.ok(),
        init_out(
            true,
            "notabene: book/.notabene/protocol.md was not generated by notabene (no banner) — leaving it.\nnotabene: store ready at book/.notabene/\n",
            ""
        )
    );
    assert_eq!(read(&store.join("protocol.md")), "# Our own protocol\n");
    assert_eq!(read(&store.join("meta.json")), META);

    write(
        &store.join("protocol.md"),
        "<!-- notabene agent protocol v2 · generated — do not edit -->\n\nOld.\n",
    );
    let out = nb(&tmp, &["init", "--no-agents-md"]);
    assert_eq!(
        out.ok(),
        init_out(
            false,
            "notabene: wrote book/.notabene/protocol.md.\nnotabene: store ready at book/.notabene/\n",
            ""
        )
    );
    assert_eq!(read(&store.join("protocol.md")), PROTOCOL);
}

#[test]
fn init_keeps_an_existing_meta() {
    let tmp = book();
    let store = store(&tmp);
    // An older (v1) meta is not touched by init; writes and migrate raise it.
    write(&store.join("meta.json"), "{ \"schemaVersion\": 1 }");
    nb(&tmp, &["init", "--no-agents-md", "--no-protocol"]).ok();
    assert_eq!(read(&store.join("meta.json")), "{ \"schemaVersion\": 1 }");
    // A newer store is refused.
    write(&store.join("meta.json"), "{ \"schemaVersion\": 9 }");
    let before = files(&tmp);
    nb(&tmp, &["init"]).fails_with(&format!(
        "notabene: store schemaVersion 9 is newer than this mdbook-notabene supports (3) — upgrade mdbook-notabene; refusing to read or write an unknown store shape ({})",
        store.join("meta.json").display()
    ));
    assert_eq!(files(&tmp), before);
}

#[test]
fn init_appends_the_block_to_a_crlf_agents_md_and_keeps_crlf() {
    let tmp = book();
    let original = "# Rules\r\n\r\nBe nice.\r\n";
    write(&tmp.path().join("AGENTS.md"), original);
    nb(&tmp, &["init", "--no-protocol"]).ok();
    let agents = read(&tmp.path().join("AGENTS.md"));
    assert_eq!(agents, format!("{original}\r\n{}\r\n", block("\r\n")));
    assert!(
        !agents.replace("\r\n", "").contains('\n'),
        "every line ends in CRLF"
    );
    // Again: unchanged.
    let out = nb(&tmp, &["init", "--no-protocol"]);
    assert_eq!(
        out.ok(),
        init_out(
            false,
            "notabene: store ready at book/.notabene/\n",
            "notabene: AGENTS.md block is current.\n"
        )
    );
    assert_eq!(read(&tmp.path().join("AGENTS.md")), agents);
}

#[test]
fn init_replaces_an_outdated_block_in_place() {
    let tmp = book();
    let original = format!("# Rules\n\nBefore.\n\n{BEGIN}\nold block\n{END}\n\nAfter.\n");
    write(&tmp.path().join("AGENTS.md"), &original);
    let out = nb(&tmp, &["init", "--no-protocol"]);
    assert_eq!(
        out.ok(),
        init_out(
            true,
            "notabene: store ready at book/.notabene/\n",
            "notabene: wrote the notabene block in AGENTS.md.\n"
        )
    );
    assert_eq!(
        read(&tmp.path().join("AGENTS.md")),
        format!("# Rules\n\nBefore.\n\n{}\n\nAfter.\n", block("\n"))
    );
}

#[test]
fn init_refuses_an_unterminated_block_and_leaves_agents_md_untouched() {
    let tmp = book();
    let original = format!("# Rules\n\n{BEGIN}\nhalf a block\n");
    write(&tmp.path().join("AGENTS.md"), &original);
    let out = nb(&tmp, &["init"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            1,
            "notabene: AGENTS.md has \"<!-- notabene:begin -->\" without a following \"<!-- notabene:end -->\"; fix the block by hand (AGENTS.md)\n"
        )
    );
    assert_eq!(read(&tmp.path().join("AGENTS.md")), original);
    // An end marker before the begin marker is no better.
    let original = format!("{END}\n{BEGIN}\n");
    write(&tmp.path().join("AGENTS.md"), &original);
    assert_eq!(nb(&tmp, &["init"]).code, 1);
    assert_eq!(read(&tmp.path().join("AGENTS.md")), original);
}

#[test]
fn init_without_protocol_and_agents_md() {
    let tmp = book();
    let before = files(&tmp);
    let out = nb(
        &tmp,
        &["init", "--no-protocol", "--no-agents-md", "--no-mcp"],
    );
    assert_eq!(
        out.ok(),
        init_out(true, "notabene: store ready at book/.notabene/\n", "").replace(
            "notabene: registered the notabene MCP server in .mcp.json.\n",
            ""
        )
    );
    let mut expected = before;
    expected.insert("book/.notabene".into(), common::Node::Dir);
    for (p, text) in [
        ("book/.notabene/.gitattributes", GITATTRIBUTES),
        ("book/.notabene/.gitignore", GITIGNORE),
        ("book/.notabene/meta.json", META),
    ] {
        expected.insert(p.into(), common::Node::File(text.as_bytes().to_vec()));
    }
    assert_eq!(files(&tmp), expected);
}

#[test]
fn protocol_command() {
    let tmp = book();
    assert_eq!(
        nb(&tmp, &["protocol", "--path"]).ok(),
        "book/.notabene/protocol.md\n"
    );
    assert_eq!(nb(&tmp, &["protocol"]).ok(), PROTOCOL);
    // --write needs a store.
    nb(&tmp, &["protocol", "--write"]).fails_with(&format!(
        "notabene: no store at {}. Run `notabene init` first.",
        store(&tmp).display()
    ));
    nb(&tmp, &["init", "--no-protocol", "--no-agents-md"]).ok();
    assert_eq!(
        nb(&tmp, &["protocol", "--write"]).ok(),
        "notabene: wrote book/.notabene/protocol.md.\n"
    );
    assert_eq!(
        nb(&tmp, &["protocol", "--write"]).ok(),
        "notabene: book/.notabene/protocol.md is current.\n"
    );
    assert_eq!(read(&store(&tmp).join("protocol.md")), PROTOCOL);
}

/// The keys of every object in `v`, recursively, as `path: [keys]` lines.
fn shape(v: &serde_json::Value, path: &str, out: &mut Vec<String>) {
    if let Some(map) = v.as_object() {
        out.push(format!(
            "{path}: {}",
            map.keys().cloned().collect::<Vec<_>>().join(",")
        ));
        for (k, child) in map {
            shape(child, &format!("{path}.{k}"), out);
        }
    }
}

#[test]
fn doctor_json_shape_and_values() {
    let tmp = book();
    let before = files(&tmp);
    let out = nb(&tmp, &["doctor", "--json"]);
    let report: serde_json::Value = serde_json::from_str(out.ok()).unwrap();
    assert_eq!(files(&tmp), before, "doctor is read-only");
    let mut keys = Vec::new();
    shape(&report, "", &mut keys);
    assert_eq!(
        keys,
        [
            ": version,git,book,config,store,protocol,agents,mcp,merge",
            ".git: isRepo,root",
            ".book: root,title,language,src,srcExists",
            ".config: path,table,space,pagePrefix,review,enable,warnings",
            ".store: path,exists,schemaVersion,comments,openComments,unreadable,mismatch",
            ".protocol: path,present,version,current",
            ".agents: path,present,block",
            ".mcp: path,present,server",
            ".merge: repository,attribute,driver,configured,octopus",
            ".merge.octopus: strategy,program",
        ]
    );
    let root = tmp.path().canonicalize().unwrap();
    assert_eq!(
        report,
        serde_json::json!({
            "version": 1,
            "git": { "isRepo": true, "root": root.display().to_string() },
            "book": { "root": "book", "title": "Field Guide", "language": "en", "src": "src", "srcExists": true },
            "config": {
                "path": "book/book.toml", "table": "[preprocessor.notabene]", "space": "book",
                "pagePrefix": "book/src", "review": "auto", "enable": true, "warnings": []
            },
            "store": { "path": "book/.notabene", "exists": false, "schemaVersion": null, "comments": 0, "openComments": 0, "unreadable": 0, "mismatch": null },
            "protocol": { "path": "book/.notabene/protocol.md", "present": false, "version": null, "current": false },
            "agents": { "path": "AGENTS.md", "present": false, "block": false },
            "mcp": { "path": ".mcp.json", "present": false, "server": false },
            "merge": {
                "repository": true, "attribute": "unspecified", "driver": null, "configured": false,
                "octopus": { "strategy": null, "program": null }
            }
        })
    );
    // After init, with one open comment, one held and one resolved.
    nb(&tmp, &["init"]).ok();
    for body in ["one", "two", "three"] {
        nb(
            &tmp,
            &[
                "comments",
                "add",
                "--page",
                "book/src/intro",
                "--body",
                body,
            ],
        )
        .ok();
    }
    let ids: Vec<String> =
        serde_json::from_str::<serde_json::Value>(nb(&tmp, &["comments", "ls", "--json"]).ok())
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap().to_string())
            .collect();
    nb(&tmp, &["comments", "hold", &ids[0]]).ok();
    let done = nb(&tmp, &["comments", "done", &ids[1]]);
    assert_eq!(done.code, 0);
    let report: serde_json::Value =
        serde_json::from_str(nb(&tmp, &["doctor", "--json"]).ok()).unwrap();
    assert_eq!(
        report["store"],
        serde_json::json!({ "path": "book/.notabene", "exists": true, "schemaVersion": 3, "comments": 3, "openComments": 1, "unreadable": 0, "mismatch": null })
    );
    assert_eq!(
        report["protocol"],
        serde_json::json!({ "path": "book/.notabene/protocol.md", "present": true, "version": 3, "current": true })
    );
    assert_eq!(
        report["agents"],
        serde_json::json!({ "path": "AGENTS.md", "present": true, "block": true })
    );
    assert_eq!(
        report["mcp"],
        serde_json::json!({ "path": ".mcp.json", "present": true, "server": true })
    );
    let exe = Path::new(common::bin()).canonicalize().unwrap();
    assert_eq!(
        report["merge"],
        serde_json::json!({
            "repository": true, "attribute": "notabene",
            "driver": format!("'{}' merge-driver %O %A %B %P", exe.display()), "configured": true,
            "octopus": { "strategy": null, "program": null }
        })
    );
}

/// `c_` + the pinned instant's milliseconds in base 36 + 4 base-36 characters.
#[track_caller]
fn assert_new_id(id: &str) {
    // 2026-07-28T09:00:00.000Z = 1785229200000 ms = "ms4fdeo0" in base 36.
    let rest = id
        .strip_prefix("c_ms4fdeo0")
        .unwrap_or_else(|| panic!("id {id:?} does not encode NOTABENE_NOW"));
    assert_eq!(rest.len(), 4, "{id}");
    assert!(
        id[2..]
            .bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase()),
        "^c_[0-9a-z]+$: {id}"
    );
}

/// The comment object `comments add` writes, with `id` put in.
fn expected_comment(id: &str, page: &str, scope: &str, anchor: &str, body: &str) -> String {
    format!(
        r#"{{
  "id": "{id}",
  "space": "book",
  "page": "{page}",
  "scope": "{scope}",
  "anchor": {anchor},
  "thread": [
    {{
      "author": "{AUTHOR}",
      "body": "{body}",
      "ts": "{NOW}"
    }}
  ],
  "status": "open",
  "hold": false,
  "resolution": null,
  "createdAt": "{NOW}",
  "updatedAt": "{NOW}"
}}
"#
    )
}

/// Runs `comments add … --json`, checks the id and that the file holds exactly what was
/// printed; returns (id, printed text).
fn add_json(tmp: &tempfile::TempDir, page: &str, extra: &[&str]) -> (String, String) {
    let mut args = vec!["comments", "add", "--page", page, "--json"];
    args.extend_from_slice(extra);
    let out = nb(tmp, &args);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""), "{}", out.stdout);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let id = v["id"].as_str().unwrap().to_string();
    assert_new_id(&id);
    assert_eq!(
        read(&store(tmp).join(page).join(format!("{id}.json"))),
        out.stdout
    );
    (id, out.stdout)
}

#[test]
fn comments_add_selection_block_and_page() {
    let tmp = book();
    nb(&tmp, &["init", "--no-protocol", "--no-agents-md"]).ok();

    let (id, printed) = add_json(
        &tmp,
        "book/src/intro",
        &[
            "--body",
            "Name the policy — « é » 🎉",
            "--quote",
            "retry policy",
            "--prefix",
            "the client applies a ",
            "--suffix",
            " before giving up",
            "--section",
            "Timeouts",
        ],
    );
    let anchor = "{\n    \"quote\": \"retry policy\",\n    \"prefix\": \"the client applies a \",\n    \"suffix\": \" before giving up\",\n    \"section\": \"Timeouts\"\n  }";
    assert_eq!(
        printed,
        expected_comment(
            &id,
            "book/src/intro",
            "selection",
            anchor,
            "Name the policy — « é » 🎉"
        )
    );

    let (id, printed) = add_json(
        &tmp,
        "book/src/guide/setup",
        &[
            "--body",
            "Label the bus.",
            "--block",
            "image:images/wiring.svg?v=2",
            "--kind",
            "image",
            "--index",
            "2",
        ],
    );
    let anchor = "{\n    \"kind\": \"image\",\n    \"key\": \"image:images/wiring.svg?v=2\",\n    \"label\": \"wiring.svg\",\n    \"section\": null,\n    \"index\": 2\n  }";
    assert_eq!(
        printed,
        expected_comment(
            &id,
            "book/src/guide/setup",
            "block",
            anchor,
            "Label the bus."
        )
    );

    let (id, printed) = add_json(&tmp, "book/src/intro", &["--body", "Supported platforms?"]);
    assert_eq!(
        printed,
        expected_comment(
            &id,
            "book/src/intro",
            "page",
            "null",
            "Supported platforms?"
        )
    );

    // Without a prefix/suffix a selection anchor still has them, empty; a quote with no
    // section gets a null section.
    let (_, printed) = add_json(&tmp, "book/src/intro", &["--body", "b", "--quote", "q"]);
    assert!(printed.contains("\"anchor\": {\n    \"quote\": \"q\",\n    \"prefix\": \"\",\n    \"suffix\": \"\",\n    \"section\": null\n  },"), "{printed}");

    // Human output names the file; an author from --author.
    let out = nb(
        &tmp,
        &[
            "comments",
            "add",
            "--page",
            "book/src/intro",
            "--body",
            "Hi",
            "--author",
            "Zoë <zoe@example.com>",
        ],
    );
    let line = out.ok();
    let id = line
        .strip_prefix("notabene: added comment ")
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .to_string();
    assert_new_id(&id);
    assert_eq!(
        line,
        format!("notabene: added comment {id} on book/src/intro (book/src/intro/{id}.json).\n")
    );
    let c: serde_json::Value = serde_json::from_str(&read(
        &store(&tmp).join(format!("book/src/intro/{id}.json")),
    ))
    .unwrap();
    assert_eq!(c["thread"][0]["author"], "Zoë <zoe@example.com>");

    // All five are there and open; verify is clean.
    let ls: serde_json::Value =
        serde_json::from_str(nb(&tmp, &["comments", "ls", "--open", "--json"]).ok()).unwrap();
    assert_eq!(ls.as_array().unwrap().len(), 5);
    let out = nb(&tmp, &["comments", "verify"]);
    assert_eq!(
        out.ok(),
        "notabene verify: 5 comment(s), 0 journal entr(ies) — 0 error(s), 0 warning(s).\n"
    );
}

#[test]
fn comments_add_refuses_a_page_without_source_unless_forced() {
    let tmp = book();
    nb(&tmp, &["init", "--no-protocol", "--no-agents-md"]).ok();
    let args = [
        "comments",
        "add",
        "--page",
        "book/src/nope",
        "--body",
        "Hi",
        "--json",
    ];
    nb(&tmp, &args).fails_with(
        "notabene: page \"book/src/nope\" is not in this book; --force adds the comment anyway (--page)",
    );
    assert!(!store(&tmp).join("book/src/nope").exists());
    let forced: Vec<&str> = args.iter().copied().chain(["--force"]).collect();
    let out = nb(&tmp, &forced);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    let id = serde_json::from_str::<serde_json::Value>(&out.stdout).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        store(&tmp)
            .join(format!("book/src/nope/{id}.json"))
            .is_file()
    );
}

#[test]
fn comments_add_needs_a_store_and_valid_anchors() {
    let tmp = book();
    let before = files(&tmp);
    nb(
        &tmp,
        &[
            "comments",
            "add",
            "--page",
            "book/src/intro",
            "--body",
            "Hi",
        ],
    )
    .fails_with(&format!(
        "notabene: no store at {}. Run `notabene init` first.",
        store(&tmp).display()
    ));
    assert_eq!(files(&tmp), before);
    nb(&tmp, &["init", "--no-protocol", "--no-agents-md"]).ok();
    let before = files(&tmp);
    for (args, line) in [
        (
            &["--block", "mermaid:abc", "--kind", "image"][..],
            "notabene: a image block key starts with \"image:\", got \"mermaid:abc\" (--block)",
        ),
        (
            &["--quote", ""],
            "notabene: the quote must not be empty (--quote)",
        ),
        (
            &["--section", "S"],
            "notabene: --section goes with --quote or --block (--section)",
        ),
    ] {
        let mut full = vec![
            "comments",
            "add",
            "--page",
            "book/src/intro",
            "--body",
            "Hi",
        ];
        full.extend_from_slice(args);
        nb(&tmp, &full).fails_with(line);
        assert_eq!(files(&tmp), before);
    }
}

#[test]
fn comments_add_raises_a_missing_meta() {
    let tmp = common::tempdir();
    std::fs::create_dir(tmp.path().join("store")).unwrap();
    let out = run_with(
        tmp.path(),
        &[
            "--store", "store", "comments", "add", "--page", "p", "--body", "b",
        ],
        None,
        &[],
    );
    assert_eq!(out.code, 0);
    assert_eq!(read(&tmp.path().join("store/meta.json")), META);
}

#[test]
fn comments_rm_deletes_one_file_and_empty_page_dirs() {
    let tmp = book();
    nb(&tmp, &["init", "--no-protocol", "--no-agents-md"]).ok();
    write(&tmp.path().join("book/src/guide.md"), "# Guide\n");
    let before = files(&tmp);
    let (id, _) = add_json(&tmp, "book/src/guide/setup", &["--body", "x"]);
    let out = nb(&tmp, &["comments", "rm", &id]);
    assert_eq!(
        out.ok(),
        format!("notabene: deleted comment {id} (book/src/guide/setup/{id}.json).\n")
    );
    // The emptied page directories are gone again.
    assert_eq!(files(&tmp), before);

    // A page directory that still holds a sub-page is kept.
    let (parent, _) = add_json(&tmp, "book/src/guide", &["--body", "x"]);
    let (_child, _) = add_json(&tmp, "book/src/guide/setup", &["--body", "y"]);
    nb(&tmp, &["comments", "rm", &parent]).ok();
    assert!(store(&tmp).join("book/src/guide/setup").is_dir());
    assert!(
        !store(&tmp)
            .join(format!("book/src/guide/{parent}.json"))
            .exists()
    );
}

#[test]
fn comments_rm_of_a_legacy_member_rewrites_its_array() {
    let (tmp, store) = common::fixture_store("roundtrip/store");
    let before = tree(&store);
    let out = run(
        tmp.path(),
        &["--store", "store", "comments", "rm", "c_legacy0001"],
    );
    assert_eq!(
        out.ok(),
        "notabene: deleted comment c_legacy0001 (src/legacy.json).\n"
    );
    assert_eq!(
        tree(&store),
        common::overlay(before.clone(), &fixture("roundtrip/expected/rm_legacy"))
    );
    // Removing the last member removes the array file.
    let out = run(
        tmp.path(),
        &["--store", "store", "comments", "rm", "c_legacy0002"],
    );
    assert_eq!(
        out.ok(),
        "notabene: deleted comment c_legacy0002 (src/legacy.json).\n"
    );
    let mut expected = before;
    expected.remove("src/legacy.json");
    assert_eq!(tree(&store), expected);
    assert!(Path::new(&store.join("src/guide/intro")).is_dir());
}

/// A repository's own `.mcp.json`: init adds the notabene server at the top of `mcpServers`
/// and keeps every other byte; a second init leaves it alone; doctor reports it.
#[test]
fn init_merges_the_mcp_server_into_an_existing_mcp_json() {
    let tmp = book();
    let theirs = "{\n\t\"mcpServers\": {\n\t\t\"docs-search\": {\"command\": \"npx\", \"args\": [\"-y\", \"@acme/docs-mcp\"],\n\t\t  \"env\": {\"TOKEN\": \"${TOKEN}\"}},\n\t\t\"db\": { \"url\": \"http://localhost:9000/mcp\" }\n\t},\n\t\"inputs\": []\n}\n";
    write(&tmp.path().join(".mcp.json"), theirs);
    nb(&tmp, &["init"]).ok();
    let ours = "\n\t\t\"notabene\": {\n\t\t\t\"command\": \"notabene\",\n\t\t\t\"args\": [\"mcp\", \"--book\", \"book\"]\n\t\t},";
    let merged = read(&tmp.path().join(".mcp.json"));
    let at = "{\n\t\"mcpServers\": {".len();
    assert_eq!(merged, format!("{}{ours}{}", &theirs[..at], &theirs[at..]));
    let v: serde_json::Value = serde_json::from_str(&merged).unwrap();
    assert_eq!(
        v["mcpServers"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["notabene", "docs-search", "db"]
    );
    // Again: nothing changes, and it says so.
    let again = nb(&tmp, &["init"]);
    assert!(
        again
            .ok()
            .ends_with("notabene: .mcp.json already registers the notabene MCP server.\n"),
        "{}",
        again.stdout
    );
    assert_eq!(read(&tmp.path().join(".mcp.json")), merged);
    assert!(
        nb(&tmp, &["doctor"])
            .ok()
            .contains("\nmcp       .mcp.json — notabene server registered\n")
    );
    // A file that is not JSON is left as it is, with a warning; init still succeeds.
    write(&tmp.path().join(".mcp.json"), "{ \"mcpServers\": ");
    let out = nb(&tmp, &["init"]);
    assert!(
        out.ok().contains("notabene: warning: .mcp.json is left as it is (not valid JSON: EOF while parsing a value at line 1 column 16): add the notabene server by hand\n"),
        "{}",
        out.stdout
    );
    assert_eq!(read(&tmp.path().join(".mcp.json")), "{ \"mcpServers\": ");
}

/// `doctor` does not say all is well when a comment file cannot be read (one `verify`
/// rejects): it says how many, points to `verify`, and exits 1.
#[test]
fn doctor_reports_a_truncated_comment_file() {
    let tmp = book();
    nb(&tmp, &["init", "--no-agents-md"]).ok();
    let dir = tmp.path().join("book/.notabene/book/src/intro");
    std::fs::create_dir_all(&dir).unwrap();
    common::write(
        &dir.join("c_truncated.json"),
        "{\n  \"id\": \"c_truncated\",\n  \"pa",
    );
    let out = nb(&tmp, &["doctor"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout.lines().any(|l| l
            == "          error: 1 store file(s) cannot be read as comments: run `notabene comments verify`"),
        "{}",
        out.stdout
    );
    let report: serde_json::Value =
        serde_json::from_str(&nb(&tmp, &["doctor", "--json"]).stdout).unwrap();
    assert_eq!(report["store"]["unreadable"], 1);
}
