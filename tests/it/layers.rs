//! The layering, held to the code. Between crates Cargo holds it: the store and anchoring crates
//! (and the helpers under them) cannot name this package or mdBook, which the last test here
//! checks in their dependency trees. Inside this package, every module under `src/` imports only
//! from layers below its own ([`mdbook_notabene::LAYERS`], written down once in `src/lib.rs`), or
//! from inside itself. A module is `tier::name`: `src/model/book/…` is `model::book`.
//!
//! Imports are read from the source text: `use crate::…` (with nested braces), paths
//! `crate::tier::x::…` anywhere in code, `$crate::` in macros, `super::` climbing out of a
//! module, and in the binaries `mdbook_notabene::…`. Comment lines are skipped.

use pretty_assertions::assert_eq;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Names the crate root re-exports from the crates below it (`crate::Error` is
/// `notabene_core`'s): every layer may use them.
const ROOT_ITEMS: &[&str] = &["Error", "ErrorKind", "Result", "bail"];

/// The layer of each module.
fn layer_of(layers: &[&[&str]]) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for (n, mods) in layers.iter().enumerate() {
        for m in *mods {
            out.insert(m.to_string(), n);
        }
    }
    out
}

/// What a file under `src/` is: `lib.rs` and a tier's `mod.rs` are the crate's and the tier's
/// lists of modules, `bin/…` is the binaries, anything else belongs to a module `tier::name`.
#[derive(Debug, PartialEq)]
enum FileOf {
    List,
    Module { name: String, depth: usize },
}

fn file_of(rel: &Path) -> FileOf {
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let is_mod = parts.last().is_some_and(|f| f == "mod.rs");
    match parts.as_slice() {
        [one] if one == "lib.rs" => FileOf::List,
        [bin, ..] if bin == "bin" => FileOf::Module {
            name: "bin".to_string(),
            depth: 0,
        },
        [_, m] if m == "mod.rs" => FileOf::List,
        [tier, module, ..] => FileOf::Module {
            name: format!("{tier}::{}", module.trim_end_matches(".rs")),
            // The depth below the module: `tier/a.rs` and `tier/a/mod.rs` are 0.
            depth: parts.len() - 2 - usize::from(is_mod),
        },
        _ => FileOf::Module {
            name: parts.join("/"),
            depth: 0,
        },
    }
}

/// Source text without comment lines and trailing `//` comments (strings holding `//` are rare
/// in this crate and only shorten what is read).
fn code_of(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .map(|l| match l.find("// ") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every path imported through `root` (`crate::`, `$crate::`, `mdbook_notabene::`), cut to
/// its first two segments (`base::store`), with braces expanded at each level.
fn imported_paths(code: &str, root: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find(root) {
        let before = rest[..i].chars().next_back();
        let after = &rest[i + root.len()..];
        rest = after;
        // `foo_crate::` is not `crate::`.
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') && root == "crate::" {
            continue;
        }
        paths(after, String::new(), 2, &mut out);
    }
    out
}

/// The paths of a path tail, `left` segments deep: `base::store::Store` → `base::store`;
/// `{Result, base::{store, text}}` → `Result`, `base::store`, `base::text`.
fn paths(tail: &str, prefix: String, left: usize, out: &mut Vec<String>) {
    let tail = tail.trim_start();
    if let Some(group) = tail.strip_prefix('{') {
        for item in group_items(group) {
            paths(item, prefix.clone(), left, out);
        }
        return;
    }
    let ident: String = tail
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    if ident.is_empty() || ident == "self" {
        if !prefix.is_empty() {
            out.push(prefix);
        }
        return;
    }
    let path = if prefix.is_empty() {
        ident.clone()
    } else {
        format!("{prefix}::{ident}")
    };
    let rest = &tail[ident.len()..];
    match rest.strip_prefix("::") {
        Some(more) if left > 1 => paths(more, path, left - 1, out),
        _ => out.push(path),
    }
}

/// The top-level items of a brace group (the text after its `{`), up to its closing brace.
fn group_items(group: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&group[start..i]);
                return items;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items
}

/// How far `super::` climbs in a file `depth` modules below its module.
fn climbs_out(code: &str, depth: usize) -> bool {
    let supers = "super::".repeat(depth + 1);
    code.contains(&supers)
}

/// Every import that breaks the layering, as `file: module (layer a) imports target (layer b)`.
fn violations(sources: &[(PathBuf, String)], layers: &[&[&str]]) -> Vec<String> {
    let layer = layer_of(layers);
    let mut out = Vec::new();
    for (rel, text) in sources {
        let shown = rel.display();
        let code = code_of(text);
        let FileOf::Module {
            name: module,
            depth,
        } = file_of(rel)
        else {
            // The lists of modules hold `pub mod` lines and re-exports of their own.
            if code.contains("use crate::") && !rel.ends_with("lib.rs") {
                out.push(format!("{shown}: a tier's list imports"));
            }
            continue;
        };
        let Some(&own) = layer.get(&module) else {
            out.push(format!("{shown}: module {module} is in no layer"));
            continue;
        };
        let targets = if module == "bin" {
            imported_paths(&code, "mdbook_notabene::")
        } else {
            let mut r = imported_paths(&code, "crate::");
            r.extend(imported_paths(&code, "$crate::"));
            r
        };
        for target in targets {
            let head = target.split("::").next().unwrap_or_default();
            if ROOT_ITEMS.contains(&head) {
                continue;
            }
            let target_module = target.clone();
            if target_module == module {
                continue;
            }
            let Some(&theirs) = layer.get(&target_module) else {
                out.push(format!(
                    "{shown}: crate::{target} is neither a module nor a known root item"
                ));
                continue;
            };
            if theirs >= own {
                out.push(format!(
                    "{shown}: {module} (layer {own}) imports {target_module} (layer {theirs})"
                ));
            }
        }
        // A file's test module (`mod tests { use super::*; }`) is one level below the file.
        let code_outside_tests = code.split("#[cfg(test)]").next().unwrap_or_default();
        if module != "bin" && climbs_out(code_outside_tests, depth) {
            out.push(format!("{shown}: `super::` climbs out of module {module}"));
        }
    }
    out.sort();
    out.dedup();
    out
}
fn rust_files(dir: &Path, base: &Path, out: &mut Vec<(PathBuf, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, base, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let rel = p.strip_prefix(base).unwrap().to_path_buf();
            out.push((rel, std::fs::read_to_string(&p).unwrap()));
        }
    }
}

fn crate_sources() -> Vec<(PathBuf, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    rust_files(&src, &src, &mut out);
    out
}

#[test]
fn every_module_imports_only_from_lower_layers() {
    let sources = crate_sources();
    assert!(sources.len() > 40, "read {} files", sources.len());
    assert_eq!(
        violations(&sources, mdbook_notabene::LAYERS),
        Vec::<String>::new()
    );
}

#[test]
fn every_module_is_in_exactly_one_layer() {
    let mut seen: Vec<String> = crate_sources()
        .iter()
        .filter_map(|(rel, _)| match file_of(rel) {
            FileOf::Module { name, .. } => Some(name),
            FileOf::List => None,
        })
        .collect();
    seen.sort();
    seen.dedup();
    let mut listed: Vec<String> = mdbook_notabene::LAYERS
        .iter()
        .flat_map(|l| l.iter().map(|m| m.to_string()))
        .collect();
    listed.sort();
    assert_eq!(listed, seen);
}

/// The tiers are the folders of `src/`, each one run of layers in the list, bottom up.
#[test]
fn the_tiers_are_contiguous_and_are_the_folders() {
    let mut order: Vec<&str> = Vec::new();
    for layer in mdbook_notabene::LAYERS {
        let tiers: Vec<&str> = layer
            .iter()
            .map(|m| m.split("::").next().unwrap())
            .collect();
        assert!(
            tiers.iter().all(|t| *t == tiers[0]),
            "a layer spans tiers: {layer:?}"
        );
        if order.last() != Some(&tiers[0]) {
            assert!(!order.contains(&tiers[0]), "tier {} split", tiers[0]);
            order.push(tiers[0]);
        }
    }
    assert_eq!(order, ["util", "model", "output", "apps", "bin"]);
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut folders: Vec<String> = std::fs::read_dir(&src)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    assert_eq!(folders, ["apps", "bin", "model", "output", "util"]);
}

/// The checker itself: a lower layer or tier made to import a higher one is caught, in each
/// form.
#[test]
fn an_upward_import_is_reported() {
    let layers: &[&[&str]] = &[
        &["base::util"],
        &["base::store"],
        &["base::text"],
        &["output::inject", "output::views"],
        &["apps::ops"],
        &["bin"],
    ];
    let file = |p: &str, t: &str| (PathBuf::from(p), t.to_string());
    let sources = vec![
        file(
            "lib.rs",
            "pub mod base;\npub use base::util::error::Error;\n",
        ),
        file("base/mod.rs", "pub mod util;\n"),
        file("base/util/mod.rs", "use crate::{Error, Result};\n"),
        file(
            "base/store/mod.rs",
            "use crate::base::{util::par, text::PageText};\n",
        ),
        file(
            "base/store/fsx.rs",
            "fn f() { let _ = crate::output::inject::inject; }\n",
        ),
        file(
            "base/store/ids.rs",
            "// use crate::output::views; (a comment)\nuse super::Store;\n",
        ),
        file(
            "base/store/json.rs",
            "use crate::{Result, apps::{ops::Actor}};\n",
        ),
        file(
            "base/text/mod.rs",
            "use crate::base::store::{self, Comment};\n",
        ),
        file("base/text/code.rs", "use super::super::store::Comment;\n"),
        file("output/inject/mod.rs", "use crate::output::views::View;\n"),
        file(
            "output/views.rs",
            "use crate::base::{store, text::{PageText, SegKind}};\n",
        ),
        file("output/mod.rs", "pub mod views;\nuse crate::apps::ops;\n"),
        file("apps/ops/mod.rs", "use crate::output;\n"),
        file("bin/main.rs", "use mdbook_notabene::output::views;\n"),
        file("output/engine.rs", "use crate::base::store;\n"),
    ];
    assert_eq!(
        violations(&sources, layers),
        vec![
            "apps/ops/mod.rs: crate::output is neither a module nor a known root item".to_string(),
            "base/store/fsx.rs: base::store (layer 1) imports output::inject (layer 3)".to_string(),
            "base/store/json.rs: base::store (layer 1) imports apps::ops (layer 4)".to_string(),
            "base/store/mod.rs: base::store (layer 1) imports base::text (layer 2)".to_string(),
            "base/text/code.rs: `super::` climbs out of module base::text".to_string(),
            "output/engine.rs: module output::engine is in no layer".to_string(),
            "output/inject/mod.rs: output::inject (layer 3) imports output::views (layer 3)"
                .to_string(),
            "output/mod.rs: a tier's list imports".to_string(),
        ]
    );
}

/// The crates below this package build without it and without mdBook: Cargo holds what the text
/// scan above holds inside the package.
#[test]
fn the_store_and_anchoring_crates_depend_on_no_mdbook_crate() {
    for krate in ["notabene-core", "notabene-store", "notabene-anchoring"] {
        let out = std::process::Command::new(env!("CARGO"))
            .args([
                "tree",
                "--offline",
                "-e",
                "normal",
                "--prefix",
                "none",
                "-p",
                krate,
            ])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let tree = String::from_utf8_lossy(&out.stdout);
        let names: Vec<&str> = tree.lines().filter_map(|l| l.split(' ').next()).collect();
        assert!(names.contains(&krate), "{tree}");
        let banned: Vec<&&str> = names
            .iter()
            .filter(|n| n.starts_with("mdbook") || **n == "notabene")
            .collect();
        assert_eq!(
            banned,
            Vec::<&&str>::new(),
            "{krate} depends on them:\n{tree}"
        );
    }
}
