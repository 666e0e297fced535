//! Accessibility: axe-core on the pages the plugin changes — a chapter (panel closed, panel
//! open, a thread open), /review and /comments — in each of mdBook's five themes (light, rust,
//! coal, navy, ayu). mdBook's own page has violations of its own; the test fails only on those
//! the plugin adds, with no exception: each page is checked first in a copy of the build with
//! the plugin's assets (`notabene.js`, `notabene.css`) emptied, then as built, and any violation
//! (rule id + target) found only with them fails.
//!
//! axe-core is the npm package pinned in `.ci/axe` (`.ci/run` installs it with `npm ci`);
//! without `.ci/axe/node_modules/axe-core/axe.min.js` these tests print a note and pass, unless
//! `CI` is set: then they fail.

use crate::harness::{Page, chromium, file_url, site};
use crate::support::common::{copy_dir, files_under, repo_root};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

const SECS: Duration = Duration::from_secs(10);

/// The text of `axe.min.js`, or `None` (with a note) when it is not installed outside CI.
fn axe_source() -> Option<&'static str> {
    static AXE: OnceLock<Option<String>> = OnceLock::new();
    AXE.get_or_init(|| {
        let path = repo_root().join(".ci/axe/node_modules/axe-core/axe.min.js");
        match std::fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(e) if std::env::var_os("CI").is_some() => panic!(
                "CI is set but {} is missing ({e}): install it with `cd .ci/axe && npm ci`",
                path.display()
            ),
            Err(_) => {
                use std::io::Write;
                let _ = writeln!(
                    std::io::stderr(),
                    "note: axe-core tests skipped: {} not found (`cd .ci/axe && npm ci`; with CI set this fails)",
                    path.display()
                );
                None
            }
        }
    })
    .as_deref()
}

/// The violations axe-core finds on the page as it is now: (rule id, target) → what is wrong.
fn violations(p: &mut Page, axe: &str) -> BTreeMap<(String, String), String> {
    if !p.eval_bool("typeof axe === 'object'") {
        let r = p.call(
            "Runtime.evaluate",
            json!({ "expression": axe, "returnByValue": true }),
        );
        assert!(r.get("exceptionDetails").is_none(), "axe.min.js: {r}");
    }
    // `label-content-name-mismatch` (WCAG 2.5.3) is experimental in axe-core: asked for by
    // name. A `region` violation inside mdBook's menu bar (which mdBook leaves outside any
    // landmark) is mdBook's, wherever in the bar axe puts it: one key for the bar.
    let found = p.eval(
        "axe.run(document, { resultTypes: ['violations'], rules: { 'label-content-name-mismatch': { enabled: true } } })
           .then(r => r.violations.flatMap(v => v.nodes.map(n => {
             const el = document.querySelector(n.target.join(' '));
             const bar = v.id === 'region' && el && el.closest('#mdbook-menu-bar, .menu-bar');
             // Positions, comment ids and dates out: one key per kind of element.
             const target = n.target.join(' ').replace(/:nth-child\\(\\d+\\)/g, '')
               .replace(/\\[(data-nb-id|datetime)=\"[^\"]*\"\\]/g, '').replace(/\\?nb=[\\w-]+/g, '');
             return [v.id, bar ? \"mdBook's menu bar\" : target,
               `${v.impact}: ${v.help}\\n    ${n.html}\\n    ${n.failureSummary}`];
           })))",
    );
    found
        .as_array()
        .expect("axe results")
        .iter()
        .map(|v| {
            let s = |i: usize| v[i].as_str().unwrap_or_default().to_string();
            ((s(0), s(1)), s(2))
        })
        .collect()
}

/// Loads `url` in mdBook's theme `theme` (a reload after setting it, as mdBook keeps it).
fn load(p: &mut Page, url: &str, theme: &str) {
    p.goto(url);
    p.eval(&format!("localStorage.setItem('mdbook-theme', '{theme}')"));
    p.reload();
    assert_eq!(
        p.eval_str("document.documentElement.className.split(' ').find(c => ['light', 'rust', 'coal', 'navy', 'ayu'].includes(c))"),
        theme
    );
}

/// The example site's build with the plugin's assets removed (`theme/notabene*.js` and
/// `.css` emptied): mdBook's page as it is without the client, made once per process.
fn bare_site() -> &'static Path {
    static BARE: OnceLock<PathBuf> = OnceLock::new();
    BARE.get_or_init(|| {
        let out = &site().out;
        let bare = out.with_file_name("out-bare");
        let _ = std::fs::remove_dir_all(&bare);
        copy_dir(out, &bare);
        let mut emptied = 0;
        for f in files_under(&bare.join("theme")) {
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with("notabene") && (name.ends_with(".js") || name.ends_with(".css")) {
                std::fs::write(&f, "").unwrap();
                emptied += 1;
            }
        }
        assert_eq!(emptied, 2, "the build's notabene.js and notabene.css");
        bare
    })
}

/// The violations of `state` that the page without the plugin does not have.
fn added(
    theme: &str,
    baseline: &BTreeMap<(String, String), String>,
    now: BTreeMap<(String, String), String>,
    state: &str,
) -> Vec<String> {
    now.into_iter()
        .filter(|(k, _)| !baseline.contains_key(k))
        .map(|((id, target), what)| format!("{theme} | {state} | {id} | {target} — {what}"))
        .collect()
}

fn check_theme(theme: &str) {
    let Some(exe) = chromium() else { return };
    let Some(axe) = axe_source() else { return };
    let mut p = Page::new(&exe, 1280, 900);
    let site = site();
    let mut problems = Vec::new();
    for page in ["guide/configuration.html", "review.html", "comments.html"] {
        load(&mut p, &file_url(&bare_site().join(page)), theme);
        assert!(
            !p.eval_bool("document.documentElement.classList.contains('nb-on')"),
            "the plugin is blocked"
        );
        let baseline = violations(&mut p, axe);
        load(&mut p, &site.url(page), theme);
        assert!(p.eval_bool("document.documentElement.classList.contains('nb-on')"));
        if page.starts_with("guide/") {
            // Panel closed, panel open, a thread open.
            if p.eval_bool("!document.getElementById('nb-panel').hidden") {
                p.click("#nb-panel-toggle");
            }
            p.wait_for("document.getElementById('nb-panel').hidden", SECS);
            let v = violations(&mut p, axe);
            problems.extend(added(theme, &baseline, v, &format!("{page}, panel closed")));
            p.click("#nb-panel-toggle");
            p.wait_for("!document.getElementById('nb-panel').hidden", SECS);
            p.wait_animations_done();
            let v = violations(&mut p, axe);
            problems.extend(added(theme, &baseline, v, &format!("{page}, panel open")));
            p.click("mark.nb-mark[data-nb-id]");
            p.wait_for(
                "document.querySelector('.nb-pop:not([hidden]) .nb-thread')",
                SECS,
            );
            p.wait_animations_done();
            let v = violations(&mut p, axe);
            problems.extend(added(
                theme,
                &baseline,
                v,
                &format!("{page}, a thread open"),
            ));
        } else {
            let v = violations(&mut p, axe);
            problems.extend(added(theme, &baseline, v, page));
        }
    }
    assert!(
        problems.is_empty(),
        "theme {theme}: the plugin adds {} accessibility violation(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
    // axe's own run leaves no error on the page (the harness checks on drop).
    let _: Value = p.eval("0");
}

#[test]
fn the_plugin_adds_no_accessibility_violation_in_the_light_theme() {
    check_theme("light");
}

#[test]
fn the_plugin_adds_no_accessibility_violation_in_the_navy_theme() {
    check_theme("navy");
}

#[test]
fn the_plugin_adds_no_accessibility_violation_in_the_coal_theme() {
    check_theme("coal");
}

#[test]
fn the_plugin_adds_no_accessibility_violation_in_the_ayu_theme() {
    check_theme("ayu");
}

#[test]
fn the_plugin_adds_no_accessibility_violation_in_the_rust_theme() {
    check_theme("rust");
}
