//! Joins the reader client's files into `$OUT_DIR/notabene.js` and `$OUT_DIR/notabene.css`, in the
//! order `theme/manifest.txt` lists them (src/output/assets.rs embeds the two). The manifest is
//! the one list of the client's files; `.ci/eslint/eslint.config.mjs` reads it too.

use std::fmt::Write as _;
use std::path::Path;
use std::{env, fs};

/// What the scripts after the header are wrapped in: one strict-mode function scope that runs
/// once per page (a page that loads the client twice runs it once).
const OPEN: &str = "(function () {\n'use strict';\n\nif (window.__notabene) return;\nwindow.__notabene = { version: 1 };\n\n";
const CLOSE: &str = "})();\n";

fn main() {
    let theme = Path::new("theme");
    let manifest = theme.join("manifest.txt");
    println!("cargo:rerun-if-changed={}", manifest.display());
    let text =
        fs::read_to_string(&manifest).unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));

    let (mut header, mut scripts, mut styles) = (String::new(), Vec::new(), Vec::new());
    let mut listed = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split('|').map(str::trim).collect();
        let file = fields[0];
        let path = theme.join(file);
        println!("cargo:rerun-if-changed={}", path.display());
        let body = fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!("{}:{}: {}: {e}", manifest.display(), n + 1, path.display())
        });
        match (file.split_once('/'), fields.get(1)) {
            (Some(("js", _)), Some(&"-")) if fields.len() == 4 => header.push_str(&body),
            (Some(("js", _)), Some(_)) if fields.len() == 4 => scripts.push(body),
            (Some(("css", _)), None) => styles.push(body),
            _ => panic!(
                "{}:{}: not a script or stylesheet line: {line}",
                manifest.display(),
                n + 1
            ),
        }
        listed.push(file.to_string());
    }

    // Every file of theme/js and theme/css is listed (a new one is not silently left out).
    for dir in ["js", "css"] {
        println!("cargo:rerun-if-changed={}", theme.join(dir).display());
        for entry in fs::read_dir(theme.join(dir)).expect("theme/js, theme/css") {
            let name = entry.expect("a directory entry").file_name();
            let file = format!("{dir}/{}", name.to_string_lossy());
            if file.ends_with(&format!(".{dir}")) && !listed.contains(&file) {
                panic!("{}: theme/{file} is not listed", manifest.display());
            }
        }
    }

    let mut js = header;
    let _ = write!(js, "{OPEN}{}{CLOSE}", scripts.join("\n"));
    let out = env::var_os("OUT_DIR").expect("OUT_DIR");
    let out = Path::new(&out);
    fs::write(out.join("notabene.js"), js).expect("write notabene.js");
    fs::write(out.join("notabene.css"), styles.join("\n")).expect("write notabene.css");
}
