//! The crate's layering, held to the code: every module under `src/` imports only from layers
//! below its own ([`mdbook_notabene::LAYERS`], written down once in `src/lib.rs`), or from
//! inside its own top-level module.
//!
//! Imports are read from the source text: `use crate::…` (with nested braces), paths
//! `crate::x::…` anywhere in code, `$crate::` in macros, `super::` climbing out of a top-level
//! module, and in the binaries `mdbook_notabene::…`. Comment lines are skipped.

use pretty_assertions::assert_eq;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Names the crate root re-exports from a lower layer: `crate::Error` is the shared helpers'.
const ROOT_ITEMS: &[(&str, &str)] = &[("Error", "util"), ("Result", "util"), ("bail", "util")];

/// The layer of each top-level module.
fn layer_of(layers: &[&[&str]]) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for (n, mods) in layers.iter().enumerate() {
        for m in *mods {
            out.insert(m.to_string(), n);
        }
    }
    out
}

/// The top-level module a file under `src/` belongs to (`None` for `lib.rs`).
fn module_of(rel: &Path) -> Option<String> {
    let first = rel.components().next()?.as_os_str().to_string_lossy();
    if first == "lib.rs" {
        return None;
    }
    Some(first.trim_end_matches(".rs").to_string())
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

/// The first path segment of every item imported through `root` (`crate::`, `$crate::`,
/// `mdbook_notabene::`), with braces expanded one level at a time.
fn imported_roots(code: &str, root: &str) -> Vec<String> {
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
        heads(after, &mut out);
    }
    out
}

/// The leading identifiers of a path tail: `store::Store` → `store`; `{a::b, c}` → `a`, `c`.
fn heads(tail: &str, out: &mut Vec<String>) {
    let tail = tail.trim_start();
    if let Some(group) = tail.strip_prefix('{') {
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    push_ident(&group[start..i], out);
                    return;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    push_ident(&group[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        return;
    }
    push_ident(tail, out);
}

fn push_ident(item: &str, out: &mut Vec<String>) {
    let item = item.trim_start();
    let ident: String = item
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    if !ident.is_empty() && ident != "self" {
        out.push(ident);
    }
}

/// How far `super::` climbs in a file `depth` modules below its top-level module.
fn climbs_out(code: &str, depth: usize) -> bool {
    let supers = "super::".repeat(depth + 1);
    code.contains(&supers)
}

/// Every import that breaks the layering, as `file: module (layer a) imports target (layer b)`.
fn violations(sources: &[(PathBuf, String)], layers: &[&[&str]]) -> Vec<String> {
    let layer = layer_of(layers);
    let root_items: BTreeMap<&str, &str> = ROOT_ITEMS.iter().copied().collect();
    let mut out = Vec::new();
    for (rel, text) in sources {
        let Some(module) = module_of(rel) else {
            continue;
        };
        let shown = rel.display();
        let Some(&own) = layer.get(&module) else {
            out.push(format!("{shown}: module {module} is in no layer"));
            continue;
        };
        let code = code_of(text);
        let roots = if module == "bin" {
            imported_roots(&code, "mdbook_notabene::")
        } else {
            let mut r = imported_roots(&code, "crate::");
            r.extend(imported_roots(&code, "$crate::"));
            r
        };
        for target in roots {
            let target_module = match root_items.get(target.as_str()) {
                Some(m) => m.to_string(),
                None => target.clone(),
            };
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
        // A file's depth below its top-level module: `src/a.rs` and `src/a/mod.rs` are 0.
        let parts = rel.components().count();
        let is_mod = rel.file_name().is_some_and(|f| f == "mod.rs");
        let depth = if parts == 1 {
            0
        } else {
            parts - 1 - usize::from(is_mod)
        };
        if module != "bin" && climbs_out(&code, depth) {
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
fn every_top_level_module_is_in_exactly_one_layer() {
    let mut seen: Vec<String> = crate_sources()
        .iter()
        .filter_map(|(rel, _)| module_of(rel))
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

/// The checker itself: a lower layer made to import a higher one is caught, in each form.
#[test]
fn an_upward_import_is_reported() {
    let layers: &[&[&str]] = &[
        &["util"],
        &["store"],
        &["text"],
        &["inject", "views"],
        &["bin"],
    ];
    let file = |p: &str, t: &str| (PathBuf::from(p), t.to_string());
    let sources = vec![
        file("util/mod.rs", "use crate::{Error, Result};\n"),
        file("store/mod.rs", "use crate::{util::par, text::PageText};\n"),
        file(
            "store/fsx.rs",
            "fn f() { let _ = crate::inject::inject; }\n",
        ),
        file(
            "store/ids.rs",
            "// use crate::views; (a comment)\nuse super::Store;\n",
        ),
        file("text/mod.rs", "use crate::store::{self, Comment};\n"),
        file("text/code.rs", "use super::super::store::Comment;\n"),
        file("inject/mod.rs", "use crate::views::View;\n"),
        file(
            "views.rs",
            "use crate::{store, text::{PageText, SegKind}};\n",
        ),
        file("bin/main.rs", "use mdbook_notabene::views;\n"),
        file("engine.rs", "use crate::store;\n"),
    ];
    assert_eq!(
        violations(&sources, layers),
        vec![
            "engine.rs: module engine is in no layer".to_string(),
            "inject/mod.rs: inject (layer 3) imports views (layer 3)".to_string(),
            "store/fsx.rs: store (layer 1) imports inject (layer 3)".to_string(),
            "store/mod.rs: store (layer 1) imports text (layer 2)".to_string(),
            "text/code.rs: `super::` climbs out of module text".to_string(),
        ]
    );
}
