//! The reader client (`theme/notabene.{js,css}`) in a real headless Chromium, on `book-example`
//! built by the binary under test (plus extra comments: an orphan, a code-block quote, a resolved
//! comment and XSS payloads) and on hand-made fixture pages for the review view's edge cases.
//!
//! Needs `/usr/bin/chromium` (Debian package `chromium`). Without it the tests print a note and
//! pass, unless `CI` is set: then they fail. Screenshots go to `target/browser-screenshots/`.

use crate::harness;

use crate::support::common::{book_example, build, copy_book, git, git_commit_all};
use harness::{Page, XSS_IMG, XSS_SCRIPT, base64_decode, chromium, fixture_url, site};
use std::time::Duration;

/// A page `w`×`h`, or return (skip) when Chromium is absent outside CI.
macro_rules! page {
    ($w:expr, $h:expr) => {
        match chromium() {
            Some(exe) => Page::new(&exe, $w, $h),
            None => return,
        }
    };
}

const SECS: Duration = Duration::from_secs(5);

/// JS: the island of the current page, parsed.
const ISLAND: &str = "JSON.parse(document.querySelector('script.nb-data').textContent)";

/// JS: a function computing the WCAG contrast of an element's text over its own background
/// composited on the page background.
const CONTRAST_FN: &str = r#"
(el) => {
  const parse = (s) => {
    const m = s.match(/[\d.]+/g).map(Number);
    const k = s.startsWith('color(') ? 255 : 1; // color(srgb r g b / a) has 0..1 channels
    return { r: m[0] * k, g: m[1] * k, b: m[2] * k, a: m.length > 3 ? m[3] : 1 };
  };
  const page = parse(getComputedStyle(document.querySelector('.page-wrapper') || document.body).backgroundColor);
  const bg = parse(getComputedStyle(el).backgroundColor);
  const fg = parse(getComputedStyle(el).color);
  const mix = (c, under) => ({ r: c.r * c.a + under.r * (1 - c.a), g: c.g * c.a + under.g * (1 - c.a), b: c.b * c.a + under.b * (1 - c.a) });
  const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }; return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
  const back = mix(bg, page);
  const L1 = lum(mix(fg, back)), L2 = lum(back);
  return [(Math.max(L1, L2) + 0.05) / (Math.min(L1, L2) + 0.05),
          getComputedStyle(el).color + ' on ' + getComputedStyle(el).backgroundColor + ' over ' + getComputedStyle(document.querySelector('.page-wrapper')).backgroundColor];
}"#;

/// Asserts that no payload ran or became markup.
fn assert_no_xss(p: &mut Page) {
    // A payload that became an `<img src=x onerror>` has fired by the time an image of the
    // same broken URL, requested after it, has failed.
    p.eval(
        "new Promise(done => { const img = new Image(); img.onload = img.onerror = () => setTimeout(done, 0); img.src = 'x'; })",
    );
    assert_eq!(
        p.eval_str("typeof window.__pwned"),
        "undefined",
        "a payload ran"
    );
    assert_eq!(
        p.eval_i64("document.querySelectorAll('img[onerror], img[src=\"x\"], [onerror]').length"),
        0,
        "a payload became an element"
    );
    assert_eq!(
        p.eval_i64(
            "[...document.scripts].filter(s => !/json/.test(s.type) && s.textContent.includes('__pwned')).length"
        ),
        0,
        "a payload became a script"
    );
    assert_eq!(
        p.eval_i64("document.querySelectorAll('a[href^=\"javascript:\" i]').length"),
        0,
        "a javascript: link was created"
    );
}

#[test]
fn marks_are_visible_and_open_their_thread() {
    let mut p = page!(1280, 900);
    let site = site();
    p.goto(&site.url("guide/configuration.html"));

    let sel = "mark.nb-mark[data-nb-id=c_mworge1zx4rb]";
    assert_eq!(
        p.eval_str(&format!("document.querySelector('{sel}').textContent")),
        "the retry policy"
    );
    let (mark_bg, page_bg) = {
        let v = p.eval(&format!(
            "[getComputedStyle(document.querySelector('{sel}')).backgroundColor,
              getComputedStyle(document.querySelector('.page-wrapper')).backgroundColor]"
        ));
        (
            v[0].as_str().unwrap().to_string(),
            v[1].as_str().unwrap().to_string(),
        )
    };
    assert_ne!(mark_bg, page_bg, "the mark must stand out from the page");
    assert_ne!(mark_bg, "rgba(0, 0, 0, 0)");
    // Open and addressed marks look different.
    assert_ne!(
        mark_bg,
        p.eval_str("getComputedStyle(document.querySelector('mark.nb-mark[data-nb-status=addressed]')).backgroundColor")
    );
    // Keyboard access.
    assert!(p.eval_bool(&format!(
        "(() => {{ const m = document.querySelector('{sel}');
           return m.getAttribute('tabindex') === '0' && m.getAttribute('role') === 'button'
             && !m.hasAttribute('aria-label')
             && (m.getAttribute('aria-description') || '').includes('Alex Martin'); }})()"
    )));
    p.screenshot("chapter-marks-light");

    p.click(sel);
    p.wait_for("document.querySelector('.nb-pop[role=dialog]')", SECS);
    let text = p.eval_str("document.querySelector('.nb-pop').textContent");
    assert!(text.contains("Does this cover HTTP 429?"), "{text}");
    assert!(
        text.contains("Alex Martin") && text.contains("Camille Roux"),
        "{text}"
    );
    assert!(
        !text.contains("alex@example.com"),
        "display names only: {text}"
    );
    assert!(text.contains("2026"), "localised timestamps: {text}");
    assert!(p.eval_bool(
        "getComputedStyle(document.querySelector('.nb-pop .nb-body')).whiteSpace === 'pre-wrap'"
    ));
    // A popover next to the mark on a wide screen, not a sheet.
    assert!(p.eval_bool(&format!(
        "(() => {{ const pop = document.querySelector('.nb-pop').getBoundingClientRect();
           const m = document.querySelector('{sel}').getBoundingClientRect();
           return !document.querySelector('.nb-pop').classList.contains('nb-sheet')
             && pop.top >= m.bottom - 1 && pop.top - m.bottom < 40; }})()"
    )));
    p.screenshot("thread-popover");

    // Escape closes and gives the focus back to the mark; Enter reopens it.
    p.key("Escape");
    p.wait_for("!document.querySelector('.nb-pop')", SECS);
    assert!(p.eval_bool(&format!(
        "document.activeElement === document.querySelector('{sel}')"
    )));
    p.key("Enter");
    p.wait_for("document.querySelector('.nb-pop')", SECS);
    assert!(
        p.eval_str("document.querySelector('.nb-pop').textContent")
            .contains("Retry-After wins")
    );
    p.key("Escape");
    p.wait_for("!document.querySelector('.nb-pop')", SECS);
    p.assert_offline_and_clean();
}

/// Where every character of the marked paragraphs is drawn, before and after the marks are
/// taken out of the DOM: the same, character for character (each on its line, at most half a
/// pixel apart).
const CHAR_POSITIONS: &str = r#"(() => {
  const blocks = [...document.querySelectorAll('main p, main li')].filter(e => e.querySelector('mark.nb-mark'));
  const at = () => blocks.map(el => {
    const out = [];
    const w = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    let n;
    while ((n = w.nextNode())) {
      for (let i = 0; i < n.data.length; i++) {
        if (/\s/.test(n.data[i])) continue;
        const r = document.createRange();
        r.setStart(n, i); r.setEnd(n, i + 1);
        const b = r.getClientRects()[0];
        if (b) out.push(n.data[i] + Math.round(b.left * 100) / 100 + ',' + Math.round(b.top * 2) / 2);
      }
    }
    return out.join(' ');
  });
  const before = at();
  document.querySelectorAll('mark.nb-mark').forEach(m => m.replaceWith(...m.childNodes));
  blocks.forEach(b => b.normalize());
  const after = at();
  // The same character on the same line, at most half a pixel apart (a mark's edge may break
  // the font's shaping run and move a glyph by a fraction of a pixel; never a word, never a line).
  const near = (c, d) => { const [a, b] = [c, d].map(v => /^(.)(-?[\d.]+),(-?[\d.]+)$/su.exec(v)); return !!a && !!b && a[1] === b[1] && a[3] === b[3] && Math.abs(a[2] - b[2]) <= 0.5; };
  const first = before.map((b, i) => { const x = b.split(' '), y = after[i].split(' '); const k = x.length !== y.length ? 0 : x.findIndex((c, j) => !near(c, y[j])); return k < 0 ? '' : x.slice(Math.max(0, k - 3), k + 3).join(' ') + ' | ' + y.slice(Math.max(0, k - 3), k + 3).join(' '); });
  return JSON.stringify({ blocks: blocks.length, same: first.map(f => f === ''), moved: first.filter(Boolean) });
})()"#;

#[test]
fn marks_leave_every_character_where_it_was_in_every_theme_and_in_print() {
    let mut p = page!(1400, 1000);
    let site = site();
    for media in ["screen", "print"] {
        p.call(
            "Emulation.setEmulatedMedia",
            serde_json::json!({ "media": media }),
        );
        for theme in ["light", "rust", "coal", "navy", "ayu"] {
            p.goto(&site.url("guide/configuration.html"));
            p.eval(&format!(
                "(() => {{ const h = document.documentElement; ['light', 'rust', 'coal', 'navy', 'ayu'].forEach(c => h.classList.remove(c)); h.classList.add('{theme}'); }})()"
            ));
            let v: serde_json::Value = serde_json::from_str(&p.eval_str(CHAR_POSITIONS)).unwrap();
            assert!(v["blocks"].as_i64().unwrap() >= 2, "{media} {theme}: {v}");
            assert!(
                v["same"].as_array().unwrap().iter().all(|b| b == true),
                "{media} {theme}: a mark moved the text: {v}"
            );
        }
    }
    p.call(
        "Emulation.setEmulatedMedia",
        serde_json::json!({ "media": "" }),
    );
}

/// JS: every overlap on the page between mdBook's chapter arrows, our panel, our badges and
/// block tools, and the chapter's text (the line boxes of its paragraphs, items, headings,
/// cells and code: every text node), plus every badge outside the content column or over the image or diagram
/// it belongs to. '' when there is none.
const OVERLAPS: &str = r#"(() => {
  const shown = e => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden' && getComputedStyle(e).display !== 'none';
  const box = e => e.getBoundingClientRect();
  const cut = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  const name = e => e.localName + '.' + [...e.classList].join('.');
  const main = document.querySelector('main');
  const column = box(main);
  const lines = [];
  const walk = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
  for (let t = walk.nextNode(); t; t = walk.nextNode()) {
    const el = t.parentElement;
    if (!t.nodeValue.trim() || el.closest('[data-nb-ui], .nb-ui, pre.mermaid, script, style')) continue;
    const r = document.createRange(); r.selectNodeContents(t);
    [...r.getClientRects()].forEach(q => { if (q.width > 0.5 && q.height > 0.5) lines.push([el, q]); });
  }
  const panel = document.getElementById('nb-panel');
  const panelBox = panel && shown(panel) ? box(panel) : null;
  const arrows = [...document.querySelectorAll('.nav-chapters')].filter(shown);
  const badges = [...document.querySelectorAll('main .nb-badge, main .nb-block-tools')].filter(shown);
  const out = [];
  arrows.forEach(a => {
    if (cut(box(a), column)) out.push(name(a) + ' over the text column');
    if (panelBox && cut(box(a), panelBox)) out.push(name(a) + ' over the panel');
  });
  badges.forEach(b => {
    const r = box(b);
    if (r.left < column.left - 0.5 || r.right > column.right + 0.5) out.push(name(b) + ' outside the column ' + JSON.stringify([r.left, r.right, column.left, column.right]));
    if (panelBox && cut(r, panelBox)) out.push(name(b) + ' under the panel');
    arrows.forEach(a => { if (cut(r, box(a))) out.push(name(b) + ' under an arrow'); });
    const host = b.closest('.nb-block, .nb-block-wrap, .nb-block-auto, pre');
    if (host) host.querySelectorAll('img, svg, pre.mermaid').forEach(m => { if (!b.contains(m) && cut(r, box(m))) out.push(name(b) + ' over its ' + m.localName); });
    lines.forEach(([el, q]) => { if (cut(r, q)) out.push(name(b) + ' over the text of ' + name(el)); });
  });
  return out.slice(0, 6).join('; ');
})()"#;

#[test]
fn nothing_covers_the_text_the_panel_or_the_badges() {
    let mut p = page!(1400, 1000);
    let site = site();
    for panel in ["open", "closed"] {
        for width in [1024, 1280, 1366, 1400, 1440, 1536, 1600, 1720, 1920, 2560] {
            p.set_viewport(width, 1000);
            for page in [
                "index.html",
                "guide/sensors.html",
                "guide/configuration.html",
            ] {
                p.goto(&site.url(page));
                p.eval(&format!(
                    "localStorage.setItem('notabene:panel', '{panel}')"
                ));
                p.goto(&site.url(page));
                p.wait_for(
                    &format!("document.getElementById('nb-panel') && document.getElementById('nb-panel').hidden === {}", panel == "closed"),
                    SECS,
                );
                assert_eq!(
                    p.eval_str(OVERLAPS),
                    "",
                    "{page} at {width} px, panel {panel}"
                );
                // A click in the text near its left edge stays on the page.
                let here = p.eval_str("location.pathname");
                let hit = p.eval_str(
                    "(() => { const m = document.querySelector('main p').getBoundingClientRect();
                              const e = document.elementFromPoint(m.left + 4, m.top + 4);
                              return e && e.closest('a.nav-chapters') ? 'arrow' : 'text'; })()",
                );
                assert_eq!(hit, "text", "{page} at {width} px, panel {panel}");
                assert_eq!(p.eval_str("location.pathname"), here);
            }
        }
    }
    p.eval("localStorage.removeItem('notabene:panel')");
}

/// JS: the print notes of the page checked against its marks: `{anchored, beside, numbered,
/// rest, bad}` — `anchored` the comments with a place on screen (marks and code badges),
/// `beside` the notes next to their text, `bad` every note or mark whose number disagrees.
const PRINT_NOTES: &str = r#"(() => {
  const ids = new Set([...document.querySelectorAll('mark.nb-mark[data-nb-id]')].map(m => m.dataset.nbId));
  document.querySelectorAll('pre > .nb-badge[data-nb-ids]').forEach(b => b.dataset.nbIds.split(' ').forEach(id => ids.add(id)));
  const beside = [...document.querySelectorAll('ol.nb-print-notes:not(.nb-print-rest) > li.nb-print-note')];
  const bad = [];
  beside.forEach(li => {
    const n = li.querySelector('.nb-print-n').textContent;
    document.querySelectorAll('mark.nb-mark[data-nb-id="' + li.dataset.nbId + '"]').forEach(m => { if (m.dataset.nbNote !== n) bad.push(li.dataset.nbId + ' mark ' + m.dataset.nbNote + ' != ' + n); });
  });
  // Per chapter (island), the notes are numbered 1, 2, 3 … in the order of the page.
  const lists = [...document.querySelectorAll('ol.nb-print-notes > li.nb-print-note .nb-print-n')].map(e => +e.textContent);
  let expect = 1;
  lists.forEach(n => { if (n === 1) expect = 1; if (n !== expect) bad.push('number ' + n + ' where ' + expect); expect = n + 1; });
  return JSON.stringify({ anchored: ids.size, beside: beside.length, besideIds: new Set(beside.map(l => l.dataset.nbId)).size,
    rest: document.querySelectorAll('.nb-print-rest > li').length, bad });
})()"#;

#[test]
fn a_public_build_keeps_the_comments_out_of_sight_until_the_panel_is_opened() {
    let mut p = page!(1400, 1000);
    let site = site();
    // What a reader sees: (public class, panel hidden, header counts shown, block and code
    // badges shown, marks untinted, marks in the Tab order); null where the page has
    // none of them.
    const LOOK: &str = "(() => { const shown = e => getComputedStyle(e).display !== 'none'; const marks = [...document.querySelectorAll('mark.nb-mark[data-nb-status=open]')]; const badges = [...document.querySelectorAll('.nb-badge')]; return [document.documentElement.classList.contains('nb-public'), document.getElementById('nb-panel').hidden, [...document.querySelectorAll('.nb-header .nb-count')].some(shown), badges.length ? badges.some(shown) : null, marks.length ? marks.every(m => getComputedStyle(m).backgroundColor === 'rgba(0, 0, 0, 0)') : null, marks.length ? marks.every(m => m.tabIndex === 0) : null]; })()";
    let look = |p: &mut Page, url: &str| {
        p.goto(url);
        p.eval("localStorage.removeItem('notabene:panel')");
        p.reload();
        p.wait_animations_done();
        p.eval(LOOK)
    };
    // The usual build: counts, badges and tinted marks, the panel open (so that the checks
    // below can fail).
    use serde_json::json;
    assert_eq!(
        look(&mut p, &site.url("index.html")),
        json!([false, false, true, true, null, null])
    );
    assert_eq!(
        look(&mut p, &site.url("guide/configuration.html")),
        json!([false, false, true, true, false, true])
    );
    // Published: none of it until the reader opens the panel; the marks stay in the page and
    // in the Tab order.
    assert_eq!(
        look(&mut p, &site.public_url("index.html")),
        json!([true, true, false, false, null, null])
    );
    assert_eq!(
        look(&mut p, &site.public_url("guide/configuration.html")),
        json!([true, true, false, false, true, true])
    );
    p.screenshot("public-closed");
    // Opening the panel shows the comments and the marks' tint (still no counts).
    p.click("#nb-panel-toggle");
    p.wait_for("!document.getElementById('nb-panel').hidden", SECS);
    p.wait_animations_done();
    assert_eq!(p.eval(LOOK), json!([true, false, false, true, false, true]));
    assert!(p.eval_i64("document.querySelectorAll('#nb-panel .nb-entry').length") >= 2);
    // The reader's choice is remembered: the next page opens with the panel, and shows the
    // diagram's and the image's badges.
    p.goto(&site.public_url("index.html"));
    p.wait_animations_done();
    assert_eq!(p.eval(LOOK), json!([true, false, false, true, null, null]));
    p.assert_offline_and_clean();
}

#[test]
fn print_comments_gives_numbered_notes_beside_their_text_and_a_pdf_with_them() {
    let mut p = page!(1400, 1000);
    let site = site();
    // mdBook's print.html opens the print dialog as it loads: not here, the test prints.
    p.call(
        "Page.addScriptToEvaluateOnNewDocument",
        serde_json::json!({ "source": "window.print = () => {};" }),
    );
    // Without `print-comments`, print.html carries no notes.
    p.goto(&site.url("print.html"));
    p.wait_for("document.documentElement.classList.contains('nb-on')", SECS);
    assert_eq!(
        p.eval_i64("document.querySelectorAll('.nb-print-note, mark[data-nb-note]').length"),
        0
    );

    p.goto(&site.print_url("print.html"));
    p.wait_for(
        "document.documentElement.classList.contains('nb-print-comments')",
        SECS,
    );
    let v: serde_json::Value = serde_json::from_str(&p.eval_str(PRINT_NOTES)).unwrap();
    assert!(v["anchored"].as_i64().unwrap() >= 5, "{v}");
    assert_eq!(
        v["beside"], v["anchored"],
        "one note per anchored comment: {v}"
    );
    assert_eq!(v["besideIds"], v["anchored"], "{v}");
    assert!(
        v["rest"].as_i64().unwrap() >= 3,
        "page, resolved and detached comments at the chapter's end: {v}"
    );
    assert_eq!(v["bad"], serde_json::json!([]), "{v}");
    // A note holds its thread as text (a payload stays text).
    assert!(p.eval_bool("[...document.querySelectorAll('.nb-print-body')].some(e => e.textContent === 'Eight attempts feels like a lot for a cellular link.')"));
    assert_no_xss(&mut p);
    p.call(
        "Emulation.setEmulatedMedia",
        serde_json::json!({ "media": "print" }),
    );
    assert!(p.eval_bool("[...document.querySelectorAll('.nb-print-notes')].every(e => e.getClientRects().length > 0)"), "notes are printed");
    p.screenshot("print-comments");
    p.call(
        "Emulation.setEmulatedMedia",
        serde_json::json!({ "media": "" }),
    );

    // Chromium's "Save as PDF" has the notes' text.
    let pdf = p.call(
        "Page.printToPDF",
        serde_json::json!({ "printBackground": false }),
    );
    let bytes = base64_decode(pdf["data"].as_str().expect("pdf data"));
    assert!(bytes.starts_with(b"%PDF"), "a PDF");
    let dir = harness::screenshot_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("print-comments.pdf");
    std::fs::write(&file, &bytes).unwrap();
    match std::process::Command::new("pdftotext")
        .arg(&file)
        .arg("-")
        .output()
    {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            for want in [
                "Eight attempts feels like a lot for a cellular link.",
                "Where did this sentence go?",
            ] {
                assert!(text.contains(want), "the PDF has {want:?}");
            }
        }
        _ => assert!(
            std::env::var_os("CI").is_none(),
            "pdftotext (poppler-utils) is needed under CI"
        ),
    }

    // A chapter's "Print with comments": the notes for the print, gone after it.
    p.goto(&site.url("guide/configuration.html"));
    p.wait_for("!!document.querySelector('.nb-print-btn')", SECS);
    p.eval("window.print = () => { window.__printed = document.querySelectorAll('.nb-print-note').length; }");
    p.eval("document.getElementById('nb-panel').hidden = false");
    p.click(".nb-print-btn");
    assert!(p.eval_i64("window.__printed") >= 3);
    p.eval("window.dispatchEvent(new Event('afterprint'))");
    assert_eq!(
        p.eval_i64("document.querySelectorAll('.nb-print-note, mark[data-nb-note]').length"),
        0
    );
}

/// A quote that starts inside inline code, runs through plain text and ends inside a link is
/// marked in three pieces, exactly its text; the reader meets one comment: one Tab stop (named
/// by the whole quote), every piece lit on hover or focus and opening the thread, one number
/// in print.
#[test]
fn a_mark_in_pieces_is_one_comment() {
    let mut p = page!(1280, 900);
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path();
    let book = repo.join("book-example");
    copy_book(&book_example(), &book);
    let id = "c_pieces00001";
    let quote = "export command described in the command-line";
    let store = book.join(".notabene/book-example/src/reference/troubleshooting");
    std::fs::create_dir_all(&store).unwrap();
    let comment = serde_json::json!({
        "id": id, "space": "book", "page": "book-example/src/reference/troubleshooting",
        "scope": "selection",
        "anchor": { "quote": quote, "prefix": "The skylark ", "suffix": " reference can help you",
                    "section": "The archive is growing too fast" },
        "thread": [{ "author": "Alex Martin <alex@example.com>", "body": "Name the flag that finds duplicates.",
                     "ts": "2026-11-23T10:00:00.000Z" }],
        "status": "open", "hold": false, "resolution": null,
        "createdAt": "2026-11-23T10:00:00.000Z", "updatedAt": "2026-11-23T10:00:00.000Z"
    });
    std::fs::write(
        store.join(format!("{id}.json")),
        serde_json::to_string_pretty(&comment).unwrap() + "\n",
    )
    .unwrap();
    git_commit_all(repo, "book");
    let out = repo.join("out");
    build(&book, Some(&out), &[]);
    let sel = format!("mark.nb-mark[data-nb-id={id}]");
    p.goto(&harness::file_url(
        &out.join("reference/troubleshooting.html"),
    ));
    p.wait_for("document.documentElement.classList.contains('nb-on')", SECS);

    // Three pieces: in the code span, in the text, in the link; together the quote.
    let pieces = format!("[...document.querySelectorAll('{sel}')]");
    assert_eq!(
        p.eval(&format!(
            "{pieces}.map(m => [m.parentElement.localName, m.textContent])"
        )),
        serde_json::json!([
            ["code", "export"],
            ["p", " command described in the "],
            ["a", "command-line"]
        ])
    );
    assert_eq!(
        p.eval_str(&format!("{pieces}.map(m => m.textContent).join('')")),
        quote
    );
    // One Tab stop, named by the whole quote.
    assert_eq!(
        p.eval(&format!(
            "{pieces}.map(m => [m.tabIndex, m.getAttribute('role'), m.getAttribute('aria-label')])"
        )),
        serde_json::json!([[0, "button", quote], [-1, null, null], [-1, null, null]])
    );
    p.eval("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)");
    let mut stops = Vec::new();
    // Once round the page: until an element is focused a second time.
    for _ in 0..400 {
        p.key("Tab");
        let at = p.eval_str(
            "(() => { const a = document.activeElement; if (!a || a === document.body) return '-';
               if (a.__nbSeen) return 'again'; a.__nbSeen = true; return a.getAttribute('data-nb-id') || '-'; })()",
        );
        match at.as_str() {
            "again" => break,
            "-" => {}
            _ => stops.push(at),
        }
    }
    assert_eq!(
        stops.iter().filter(|s| *s == id).count(),
        1,
        "one focus stop for the comment in a walk through the page: {stops:?}"
    );
    // Focus lights every piece; Enter opens the one thread.
    p.eval(&format!("document.querySelector('{sel}').focus()"));
    assert!(p.eval_bool(&format!(
        "{pieces}.every(m => m.classList.contains('nb-hover'))"
    )));
    p.key("Enter");
    p.wait_for("document.querySelector('.nb-pop[role=dialog]')", SECS);
    assert!(
        p.eval_str("document.querySelector('.nb-pop').textContent")
            .contains("Name the flag that finds duplicates.")
    );
    p.key("Escape");
    p.wait_for("!document.querySelector('.nb-pop')", SECS);
    // Hovering the last piece (in the link, which a click follows) lights them all; a click
    // on the middle one opens the same thread.
    p.eval("document.activeElement.blur()");
    let (x, y) = p.center_of(&format!("a {sel}"));
    p.call(
        "Input.dispatchMouseEvent",
        serde_json::json!({ "type": "mouseMoved", "x": x, "y": y }),
    );
    assert!(p.eval_bool(&format!(
        "{pieces}.every(m => m.classList.contains('nb-hover'))"
    )));
    p.click(&format!("p > {sel}"));
    p.wait_for("document.querySelector('.nb-pop[role=dialog]')", SECS);
    assert!(
        p.eval_str("document.querySelector('.nb-pop').textContent")
            .contains("Name the flag that finds duplicates.")
    );
    p.key("Escape");

    // In print (print.html): one number, after the last piece, and one note.
    let print = repo.join("out-print");
    build(
        &book,
        Some(&print),
        &[("MDBOOK_PREPROCESSOR__NOTABENE__PRINT_COMMENTS", "true")],
    );
    p.call(
        "Page.addScriptToEvaluateOnNewDocument",
        serde_json::json!({ "source": "window.print = () => {};" }),
    );
    p.goto(&harness::file_url(&print.join("print.html")));
    p.wait_for(
        "document.documentElement.classList.contains('nb-print-comments')",
        SECS,
    );
    let numbers = p.eval(&format!(
        "{pieces}.map(m => m.getAttribute('data-nb-note'))"
    ));
    let n = numbers[2]
        .as_str()
        .expect("the last piece is numbered")
        .to_string();
    assert_eq!(numbers, serde_json::json!([null, null, n]));
    assert_eq!(
        p.eval_i64(
            "[...document.querySelectorAll('.nb-print-note')].filter(e => e.textContent.includes('Name the flag that finds duplicates.')).length"
        ),
        1
    );
    p.screenshot("mark-in-pieces-print");
}

#[test]
fn no_page_of_the_example_scrolls_sideways() {
    let mut p = page!(1400, 1000);
    let site = site();
    let pages = [
        "index.html",
        "guide/installing.html",
        "guide/configuration.html",
        "guide/sensors.html",
        "review.html",
        "comments.html",
        "journal.html",
        "print.html",
    ];
    for width in [390, 1400] {
        p.set_viewport(width, 1000);
        for page in pages {
            p.goto(&site.url(page));
            p.wait_for("document.documentElement.classList.contains('nb-on')", SECS);
            let wide = p.eval_str(
                "(() => { const d = document.documentElement;
                   if (d.scrollWidth <= d.clientWidth) return '';
                   const w = d.clientWidth;
                   return d.scrollWidth + ' > ' + w + ': ' + [...document.querySelectorAll('body *')]
                     .filter(e => e.getBoundingClientRect().right > w + 0.5 && getComputedStyle(e).position !== 'fixed')
                     .slice(0, 4).map(e => e.localName + '.' + e.className).join(', '); })()",
            );
            assert_eq!(wide, "", "{page} at {width} px scrolls sideways");
        }
    }
}

/// The panel's filters are disjoint: on every chapter of the example, each comment of the
/// panel is listed under exactly one of open, to validate, resolved and detached, and their
/// counts add up to All.
#[test]
fn the_filters_are_disjoint_and_add_up_to_all_on_every_chapter() {
    let mut p = page!(1400, 1000);
    let site = site();
    let mut total = 0;
    for page in [
        "index.html",
        "guide/installing.html",
        "guide/configuration.html",
        "guide/sensors.html",
        "reference/cli.html",
        "reference/troubleshooting.html",
    ] {
        p.goto(&site.url(page));
        p.wait_for("!!document.querySelector('#nb-panel .nb-filter')", SECS);
        let v: serde_json::Value = serde_json::from_str(&p.eval_str(
            "(() => {
               const panel = document.getElementById('nb-panel');
               const listed = {};
               const counts = {};
               for (const b of panel.querySelectorAll('.nb-filter')) {
                 b.click();
                 const f = b.dataset.filter;
                 counts[f] = +b.querySelector('.nb-filter-count').textContent;
                 listed[f] = [...panel.querySelectorAll('.nb-list > .nb-entry')].map(e => e.dataset.nbId);
               }
               return JSON.stringify({ counts, listed });
             })()",
        ))
        .unwrap();
        let parts = ["open", "addressed", "resolved", "detached"];
        let sum: i64 = parts.iter().map(|f| v["counts"][f].as_i64().unwrap()).sum();
        assert_eq!(sum, v["counts"]["all"].as_i64().unwrap(), "{page}: {v}");
        let mut seen: Vec<String> = parts
            .iter()
            .flat_map(|f| {
                v["listed"][f]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|i| i.as_str().unwrap().to_string())
            })
            .collect();
        seen.sort();
        let mut all: Vec<String> = v["listed"]["all"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i.as_str().unwrap().to_string())
            .collect();
        all.sort();
        assert_eq!(seen, all, "{page}: each comment under exactly one filter");
        for f in parts {
            assert_eq!(
                v["counts"][f].as_i64().unwrap() as usize,
                v["listed"][f].as_array().unwrap().len(),
                "{page} {f}"
            );
        }
        total += all.len();
    }
    assert!(total >= 8, "the example has comments to filter: {total}");
}

#[test]
fn panel_filters_orphans_and_header() {
    let mut p = page!(1280, 900);
    let site = site();
    p.goto(&site.url("guide/configuration.html"));

    assert!(
        p.eval_bool("!document.getElementById('nb-panel').hidden"),
        "panel open by default on wide screens"
    );
    let want = p.eval(&format!(
        "(() => {{ const rail = {ISLAND}.comments.filter(c => c.scope !== 'page');
           const live = rail.filter(c => c.status !== 'resolved');
           const gone = c => (c.anchoring || {{}}).status === 'orphan';
           return {{ open: live.filter(c => c.status === 'open' && !gone(c)).length, all: rail.length,
                    addressed: live.filter(c => c.status === 'addressed' && !gone(c)).length,
                    detached: live.filter(gone).length,
                    resolved: rail.filter(c => c.status === 'resolved').length }}; }})()"
    ));
    let listed = "document.querySelectorAll('#nb-panel .nb-list > .nb-entry').length";
    assert_eq!(p.eval(listed), want["open"], "default filter: open only");
    p.click("#nb-panel .nb-filter[data-filter=all]");
    assert_eq!(p.eval(listed), want["all"]);
    p.click("#nb-panel .nb-filter[data-filter=resolved]");
    assert_eq!(p.eval(listed), want["resolved"]);
    p.click("#nb-panel .nb-filter[data-filter=addressed]");
    assert_eq!(p.eval(listed), want["addressed"]);
    p.click("#nb-panel .nb-filter[data-filter=detached]");
    assert_eq!(p.eval(listed), want["detached"]);
    assert!(want["detached"].as_i64().unwrap() >= 1);
    // The filters do not overlap: each comment is under exactly one of them (and All).
    assert_eq!(
        want["open"].as_i64().unwrap()
            + want["addressed"].as_i64().unwrap()
            + want["resolved"].as_i64().unwrap()
            + want["detached"].as_i64().unwrap(),
        want["all"].as_i64().unwrap()
    );
    assert_ne!(want["open"], want["all"]);
    assert!(want["resolved"].as_i64().unwrap() >= 1);
    p.click("#nb-panel .nb-filter[data-filter=all]");

    // The orphan: listed with ⚠ and its stored quote.
    let orphan = p.eval_str(
        "(() => { const e = document.querySelector('#nb-panel .nb-entry.nb-orphan[data-nb-id=c_orphan00001]');
                  return e ? e.textContent : ''; })()",
    );
    assert!(
        orphan.contains('⚠') && orphan.contains("a sentence that was never written here"),
        "{orphan:?}"
    );
    p.screenshot("panel-filters");

    // An entry scrolls to and flashes its mark, and shows the thread.
    p.click("#nb-panel .nb-entry[data-nb-id=c_mworge1zx4rb] .nb-entry-main");
    p.wait_for(
        "document.querySelector('mark[data-nb-id=c_mworge1zx4rb]').classList.contains('nb-flash')",
        SECS,
    );
    assert!(p
        .eval_str("document.querySelector('#nb-panel .nb-entry[data-nb-id=c_mworge1zx4rb] .nb-entry-thread').textContent")
        .contains("Does this cover HTTP 429?"));

    // Header: book-wide open count, review link with the addressed count.
    let summary = p.eval("JSON.parse(document.querySelector('script.nb-summary').textContent)");
    assert!(summary["open"].as_i64().unwrap() > 0, "{summary}");
    assert_eq!(
        p.eval_str("document.querySelector('.nb-header .nb-toggle .nb-count').textContent"),
        summary["open"].to_string()
    );
    if summary["addressed"].as_i64().unwrap_or(0) > 0 {
        assert_eq!(
            p.eval_str(
                "document.querySelector('.nb-header .nb-review-link .nb-count').textContent"
            ),
            summary["addressed"].to_string()
        );
    }
    assert!(p.eval_bool(
        "document.querySelector('.nb-header .nb-review-link').getAttribute('href') === path_to_root + 'review.html'"
    ));
    // The header button toggles the panel.
    p.click("#nb-panel-toggle");
    assert!(p.eval_bool(
        "document.getElementById('nb-panel').hidden && document.getElementById('nb-panel-toggle').getAttribute('aria-expanded') === 'false'"
    ));
    p.click("#nb-panel-toggle");
    assert!(p.eval_bool("!document.getElementById('nb-panel').hidden"));
    // Printing hides all the notabene chrome and the marks' colours.
    p.call(
        "Emulation.setEmulatedMedia",
        serde_json::json!({ "media": "print" }),
    );
    p.wait_animations_done(); // the marks' colour transition
    assert!(p.eval_bool(
        "['#nb-panel', '.nb-header', '.nb-discussion', '.nb-badge'].every(s => !document.querySelector(s) || getComputedStyle(document.querySelector(s)).display === 'none')
         && getComputedStyle(document.querySelector('mark.nb-mark')).backgroundColor === 'rgba(0, 0, 0, 0)'"
    ));
    p.call(
        "Emulation.setEmulatedMedia",
        serde_json::json!({ "media": "" }),
    );
    p.assert_offline_and_clean();
}

#[test]
fn code_block_quote_is_painted_with_the_highlight_api() {
    let mut p = page!(1280, 900);
    let site = site();
    p.goto(&site.url("guide/configuration.html"));
    let ranges = "(() => { const h = CSS.highlights.get('nb-code'); return h ? [...h].map(r => r.toString()) : []; })()";
    assert!(
        p.eval_bool("document.querySelector('pre > code.hljs') !== null"),
        "highlight.js ran"
    );
    let painted = p.eval(ranges);
    assert!(
        painted
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r == "max_attempts = 8"),
        "{painted}"
    );
    // The paragraph that only holds the code anchor is hidden.
    assert!(p.eval_bool(
        "[...document.querySelectorAll('.nb-code-anchor')].every(a => { const p = a.closest('p'); return !p || getComputedStyle(p).display === 'none'; })"
    ));
    // Clicking the painted text opens the thread.
    let xy = p.eval(
        "(() => { const h = CSS.highlights.get('nb-code'); const r = [...h].find(r => r.toString() === 'max_attempts = 8');
                  r.startContainer.parentElement.scrollIntoView({block: 'center'});
                  const b = r.getClientRects()[0]; return [b.left + b.width / 2, b.top + b.height / 2]; })()",
    );
    p.click_at(xy[0].as_f64().unwrap(), xy[1].as_f64().unwrap());
    p.wait_for("document.querySelector('.nb-pop')", SECS);
    assert!(
        p.eval_str("document.querySelector('.nb-pop').textContent")
            .contains("Eight attempts")
    );
    p.key("Escape");
    // Rebuilding the code's nodes (as a late highlighter would) repaints the range.
    p.eval("(() => { const c = document.querySelector('pre > code'); c.textContent = c.textContent; })()");
    p.wait_for(
        "(() => { const h = CSS.highlights.get('nb-code'); return h && [...h].some(r => r.toString() === 'max_attempts = 8'); })()",
        SECS,
    );
    p.assert_offline_and_clean();
}

#[test]
fn deep_links_open_the_comment() {
    let mut p = page!(1280, 900);
    let site = site();

    p.goto(&site.url("guide/configuration.html?nb=c_mworge1zx4rb"));
    p.wait_for("document.querySelector('.nb-pop')", SECS);
    assert!(
        p.eval_str("document.querySelector('.nb-pop').textContent")
            .contains("Does this cover HTTP 429?")
    );
    assert!(p.eval_bool(
        "document.querySelector('mark[data-nb-id=c_mworge1zx4rb]').classList.contains('nb-flash')"
    ));
    assert!(p.eval_bool(
        "(() => { const r = document.querySelector('mark[data-nb-id=c_mworge1zx4rb]').getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })()"
    ));

    // notabene's ?c= works too; a page comment goes to the discussion section.
    p.goto(&site.url("index.html?c=c_mwrlggv2m0ta"));
    p.wait_for(
        "document.querySelector('.nb-discussion-item[data-nb-id=c_mwrlggv2m0ta].nb-flash')",
        SECS,
    );
    assert!(p.eval_bool("document.querySelector('main .nb-discussion') !== null"));
    assert!(
        p.eval_str("document.querySelector('.nb-discussion').textContent")
            .contains("which platforms are supported")
    );
    p.screenshot("page-discussion");

    // A block comment: its thread opens.
    p.goto(&site.url("index.html?nb=c_mwoto81iq7k2"));
    p.wait_for("document.querySelector('.nb-pop')", SECS);
    assert!(
        p.eval_str("document.querySelector('.nb-pop').textContent")
            .contains("pull-up resistors")
    );

    // An orphan: its panel entry is expanded and flashed.
    p.goto(&site.url("guide/configuration.html?nb=c_orphan00001"));
    p.wait_for(
        "(() => { const e = document.querySelector('#nb-panel .nb-entry[data-nb-id=c_orphan00001]');
                  return e && e.classList.contains('nb-flash') && !e.querySelector('.nb-entry-thread').hidden; })()",
        SECS,
    );
    p.assert_offline_and_clean();
}

#[test]
fn images_and_diagrams_get_one_badge_per_block() {
    let mut p = page!(1280, 900);
    let site = site();
    p.goto(&site.url("index.html"));
    // mdBook duplicates each image for its zoom: still one block, one badge.
    assert_eq!(
        p.eval_i64("document.querySelectorAll('span.nb-block').length"),
        1
    );
    assert_eq!(
        p.eval_i64("document.querySelectorAll('span.nb-block img').length"),
        2
    );
    assert_eq!(
        p.eval_i64("document.querySelectorAll('span.nb-block .nb-badge').length"),
        1
    );
    assert!(p.eval_bool(
        "document.querySelector('pre.mermaid[data-nb-block]').parentElement.matches('.nb-block-wrap.nb-block-has')"
    ));
    assert_eq!(
        p.eval_i64("document.querySelectorAll('.nb-block-wrap > .nb-badge').length"),
        1
    );
    // The example's vendored mermaid draws the diagram: an SVG with its nodes, no source
    // shown, the block key kept; the badge under the drawing, not over it.
    assert_eq!(
        p.eval("(() => { const pre = document.querySelector('pre.mermaid[data-nb-block]'); const svg = pre.querySelector(':scope > svg'); return [!!svg && svg.getBoundingClientRect().height > 100, pre.dataset.nbKey.startsWith('mermaid:'), pre.textContent.includes('graph TD'), [...pre.querySelectorAll('svg .nodeLabel')].map(n => n.textContent.trim())]; })()"),
        serde_json::json!([true, true, false, ["Sensor bus", "Skylark daemon", "Local archive", "Upload queue"]])
    );
    assert!(p.eval_bool(
        "document.querySelector('.nb-block-wrap > .nb-badge').getBoundingClientRect().top >= document.querySelector('pre.mermaid > svg').getBoundingClientRect().bottom"
    ));
    // Badges add no text to the chapter: their label is CSS-generated.
    assert!(p.eval_bool(
        "[...document.querySelectorAll('.nb-badge')].every(b => b.textContent === '' && getComputedStyle(b, '::before').content.includes('💬') && b.getBoundingClientRect().width > 10)"
    ));
    p.click("span.nb-block .nb-badge");
    p.wait_for("document.querySelector('.nb-pop')", SECS);
    let text = p.eval_str("document.querySelector('.nb-pop').textContent");
    assert!(
        text.contains("pull-up resistors") && text.contains("🖼"),
        "{text}"
    );
    assert!(
        p.eval_bool("!document.querySelector('input.checkbox-img').checked"),
        "the badge does not zoom the image"
    );
    p.key("Escape");
    p.click(".nb-block-wrap > .nb-badge");
    p.wait_for("document.querySelector('.nb-pop')", SECS);
    assert!(
        p.eval_str("document.querySelector('.nb-pop').textContent")
            .contains("dead-letter folder")
    );
    p.screenshot("blocks-badges");
    p.assert_offline_and_clean();
}

#[test]
fn themes_keep_marks_readable_coal_screenshot() {
    let mut p = page!(1280, 900);
    let site = site();
    p.goto(&site.url("guide/configuration.html"));
    // Every mdBook theme: marks differ from the page and their text stays readable.
    for theme in ["light", "rust", "coal", "navy", "ayu"] {
        p.eval(&format!(
            "(() => {{ const h = document.documentElement; ['light','rust','coal','navy','ayu'].forEach(t => h.classList.remove(t)); h.classList.add('{theme}'); }})()"
        ));
        p.wait_animations_done(); // the marks' colour transition
        for status in ["open", "addressed"] {
            let contrast = p.eval(&format!(
                "({CONTRAST_FN})(document.querySelector('mark.nb-mark[data-nb-status={status}]:not(.nb-held)'))"
            ));
            let c = contrast[0].as_f64().unwrap();
            eprintln!("{theme} {status}: contrast {c:.2} ({})", contrast[1]);
            assert!(
                c >= 4.5,
                "{theme}: {status} mark contrast {c:.2}: {}",
                contrast[1]
            );
        }
    }
    p.eval("localStorage.setItem('mdbook-theme', 'coal')");
    p.reload();
    assert!(p.eval_bool("document.documentElement.classList.contains('coal')"));
    let v = p.eval(
        "[getComputedStyle(document.querySelector('mark.nb-mark')).backgroundColor, getComputedStyle(document.querySelector('.page-wrapper')).backgroundColor]",
    );
    assert_ne!(v[0], v[1]);
    p.click("mark.nb-mark[data-nb-id=c_mworge1zx4rb]");
    p.wait_for("document.querySelector('.nb-pop')", SECS);
    // The popover uses the theme's colours.
    assert!(p.eval_bool(
        "getComputedStyle(document.querySelector('.nb-pop')).backgroundColor === getComputedStyle(document.querySelector('.page-wrapper')).backgroundColor"
    ));
    p.screenshot("coal-theme");
    p.assert_offline_and_clean();
}

#[test]
fn narrow_screen_uses_a_bottom_sheet() {
    let mut p = page!(800, 900);
    let site = site();
    p.goto(&site.url("guide/configuration.html"));
    assert!(
        p.eval_bool("document.getElementById('nb-panel').hidden"),
        "panel closed by default below 1024px"
    );
    p.click("mark.nb-mark[data-nb-id=c_mworge1zx4rb]");
    p.wait_for("document.querySelector('.nb-pop.nb-sheet')", SECS);
    // (after its short slide-in animation)
    p.wait_for(
        "(() => { const s = document.querySelector('.nb-pop'); const r = s.getBoundingClientRect();
                  return getComputedStyle(s).position === 'fixed' && Math.abs(r.bottom - innerHeight) <= 1
                    && r.width >= document.documentElement.clientWidth - 1; })()",
        SECS,
    );
    // The commented text stays visible above the sheet.
    assert!(p.eval_bool(
        "document.querySelector('mark[data-nb-id=c_mworge1zx4rb]').getBoundingClientRect().bottom <= document.querySelector('.nb-pop').getBoundingClientRect().top"
    ));
    assert!(
        p.eval_str("document.querySelector('.nb-pop').textContent")
            .contains("Does this cover HTTP 429?")
    );
    p.screenshot("narrow-800-bottom-sheet");
    p.key("Escape");
    p.wait_for("!document.querySelector('.nb-pop')", SECS);
    // The panel opens as an overlay and Escape closes it.
    p.click("#nb-panel-toggle");
    assert!(p.eval_bool("!document.getElementById('nb-panel').hidden"));
    p.screenshot("narrow-800-panel");
    p.key("Escape");
    assert!(p.eval_bool("document.getElementById('nb-panel').hidden"));
    p.assert_offline_and_clean();
}

/// /review word by word: in each changed line pair the changed words are `<del>`/`<ins
/// class="nb-word">`, unchanged lines have none; "As rendered" shows the change in the page's
/// text (no Markdown syntax), word-level too.
#[test]
fn review_marks_changed_words_and_shows_the_change_as_rendered() {
    let mut p = page!(1280, 1000);
    let site = site();
    p.goto(&site.url("review.html"));
    p.eval("localStorage.removeItem('notabene:diffMode')");
    p.reload();
    let card = |id: &str| format!("document.querySelector('.nb-card[data-nb-id={id}]')");
    fn p_words(sel: &str, tag: &str) -> String {
        format!(
            "JSON.stringify([...{sel}.querySelectorAll('{tag}.nb-word')].map(e => e.textContent))"
        )
    }
    // Configuration: one sentence added to a 50-word paragraph.
    let conf = card("c_mworonpyb6ns");
    assert_eq!(
        p.eval_str(&p_words(&conf, "ins")),
        r#"[" Set `compress = false` if your collector cannot accept gzip request bodies."]"#
    );
    assert_eq!(p.eval_str(&p_words(&conf, "del")), "[]");
    // The marked words sit in the changed line pair; context and lone added lines have none.
    assert_eq!(
        p.eval_i64(&format!(
            "[...{conf}.querySelectorAll('tr.nb-d-ctx .nb-word, tr.nb-d-hunk .nb-word')].length"
        )),
        0
    );
    assert_eq!(
        p.eval_str(&format!(
            "{conf}.querySelector('ins.nb-word').closest('tr').className"
        )),
        "nb-d-add"
    );
    let line = p.eval_str(&format!(
        "{conf}.querySelector('ins.nb-word').closest('td').textContent"
    ));
    assert!(
        line.starts_with("The `[upload]` section controls"),
        "{line}"
    );
    // Sensors: the same in side by side, on both sides of the pair.
    p.click(".nb-diff-mode[data-mode=split]");
    let sens = card("c_mwp2po2nk5ji");
    p.wait_for(
        &format!("{sens}.querySelector('table.nb-diff-split') !== null"),
        SECS,
    );
    assert_eq!(
        p.eval_str(&p_words(&sens, "ins")),
        r#"[" In other words, the stored value is always `raw * calibration + offset`."]"#
    );
    assert_eq!(
        p.eval_i64(&format!(
            "[...{sens}.querySelectorAll('tr.nb-d-pair')].filter(r => r.querySelector('td.nb-d-del') && r.querySelector('td.nb-d-add')).length"
        )),
        1
    );
    p.screenshot("review-words-split");

    // As rendered: the page's text, syntax gone, the added words marked.
    p.click(".nb-diff-mode[data-mode=rendered]");
    p.wait_for(
        &format!("{conf}.querySelector('.nb-rendered') !== null"),
        SECS,
    );
    assert_eq!(
        p.eval_str("localStorage.getItem('notabene:diffMode')"),
        "rendered"
    );
    let changes = p.eval(&format!(
        "[...{conf}.querySelectorAll('.nb-r-change')].map(c => [c.querySelector('.nb-r-section') ? c.querySelector('.nb-r-section').textContent : null, JSON.stringify([...c.querySelectorAll('.nb-word')].map(w => w.localName + ':' + w.textContent))])"
    ));
    assert_eq!(
        changes,
        serde_json::json!([
            [
                "§ Uploading",
                r#"["ins: Set compress = false if your collector cannot accept gzip request bodies."]"#
            ],
            [
                "§ Upload settings",
                r#"["ins:compress · true · Gzip each batch before sending it"]"#
            ],
            [
                "§ Upload settings",
                r#"["ins:Restart the daemon after editing the file: Skylark reads it only at startup."]"#
            ]
        ])
    );
    let text = p.eval_str(&format!("{conf}.querySelector('.nb-rendered').textContent"));
    assert!(!text.contains('`') && !text.contains("[upload]("), "{text}");
    assert!(
        text.contains("The [upload] section controls how samples leave the station."),
        "{text}"
    );
    p.eval(&format!("{conf}.scrollIntoView({{block: 'start'}})"));
    p.screenshot("review-rendered");
    p.eval("localStorage.removeItem('notabene:diffMode')");
}

#[test]
fn review_page_shows_cards_with_real_diffs() {
    let mut p = page!(1280, 1000);
    let site = site();
    p.goto(&site.url("review.html"));
    let data = p.eval("JSON.parse(document.querySelector('script.nb-view-data').textContent)");
    let cards = data["cards"].as_array().expect("cards");
    assert!(!cards.is_empty());
    assert_eq!(
        p.eval_i64("document.querySelectorAll('.nb-card:not(.nb-suggestion-card)').length")
            as usize,
        cards.len()
    );

    let card = "document.querySelector('.nb-card[data-nb-id=c_mworonpyb6ns]')";
    assert!(p.eval_bool(&format!("{card} !== null")));
    let text = p.eval_str(&format!("{card}.textContent"));
    assert!(
        text.contains("Is compression configurable?"),
        "whole thread: {text}"
    );
    assert!(text.contains("Proposed by the agent"), "{text}");
    assert!(text.contains("compressed with gzip"), "anchor head: {text}");
    // The working-tree edit made by the harness is in the diff, as an added line.
    let added = p.eval_str(&format!(
        "[...{card}.querySelectorAll('.nb-diff tr.nb-d-add')].map(r => r.textContent).join('\\n')"
    ));
    assert!(
        added.contains("Restart the daemon after editing the file"),
        "{added}"
    );
    let table = p.eval_str(&format!("{card}.querySelector('.nb-diff').textContent"));
    assert!(
        !table.contains("diff --git") && !table.contains("+++ b/") && !table.contains("index "),
        "headers dropped"
    );
    p.eval(&format!("{card}.scrollIntoView({{block: 'start'}})"));
    p.screenshot("review-card");

    // Side by side, persisted.
    p.click(".nb-diff-mode[data-mode=split]");
    assert!(p.eval_bool(&format!(
        "{card}.querySelector('table.nb-diff-split') !== null"
    )));
    assert_eq!(
        p.eval_str("localStorage.getItem('notabene:diffMode')"),
        "split"
    );
    p.reload();
    assert!(p.eval_bool(&format!(
        "{card}.querySelector('table.nb-diff-split') !== null"
    )));
    p.eval(&format!("{card}.scrollIntoView({{block: 'start'}})"));
    p.screenshot("review-card-split");

    // Approve reveals the CLI command.
    let expected = data["commands"]["approve"]
        .as_str()
        .unwrap_or("notabene comments done {id} --status resolved")
        .replace("{id}", "c_mworonpyb6ns");
    p.click(".nb-card[data-nb-id=c_mworonpyb6ns] .nb-approve");
    assert_eq!(
        p.eval_str(&format!("{card}.querySelector('.nb-cmd-text').textContent")),
        expected
    );
    // Reject asks for a reason and quotes it for a POSIX shell.
    p.click(".nb-card[data-nb-id=c_mworonpyb6ns] .nb-reject");
    assert!(p.eval_bool(&format!(
        "!{card}.querySelector('textarea.nb-reason').hidden"
    )));
    let reason = r#"it's "wrong": $HOME `id` \n!"#;
    p.eval(&format!(
        "{card}.querySelector('textarea.nb-reason').focus()"
    ));
    p.call("Input.insertText", serde_json::json!({ "text": reason }));
    let cmd = p.eval_str(&format!("{card}.querySelector('.nb-cmd-text').textContent"));
    assert!(
        cmd.starts_with("notabene comments reopen c_mworonpyb6ns --reply "),
        "{cmd}"
    );
    let arg = cmd.trim_start_matches("notabene comments reopen c_mworonpyb6ns --reply ");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("printf %s {arg}"))
        .output()
        .expect("sh");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        reason,
        "the shell sees the reason verbatim"
    );
    p.click(".nb-card[data-nb-id=c_mworonpyb6ns] .nb-copy");
    p.wait_for(
        "document.querySelector('.nb-card[data-nb-id=c_mworonpyb6ns] .nb-copy').textContent !== 'Copy'",
        SECS,
    );
    p.assert_offline_and_clean();
}

/// The word diff itself: Unicode words (accents, apostrophes), punctuation apart, CJK one
/// character at a time, a space between two changed words joining them into one change.
#[test]
fn word_diffs_segment_unicode_words_and_cjk_by_character() {
    let mut p = page!(800, 600);
    p.goto(&fixture_url("review.html"));
    let diff = |p: &mut Page, a: &str, b: &str| {
        p.eval(&format!(
            "window.__notabene.wordDiff({}, {}).map(o => o.t + ':' + o.s)",
            serde_json::to_string(a).unwrap(),
            serde_json::to_string(b).unwrap()
        ))
    };
    assert_eq!(
        diff(
            &mut p,
            "The café’s door is red.",
            "The café’s window is blue."
        ),
        serde_json::json!([
            "eq:The café’s ",
            "del:door",
            "ins:window",
            "eq: is ",
            "del:red",
            "ins:blue",
            "eq:."
        ])
    );
    assert_eq!(
        diff(&mut p, "the quick brown fox", "the slow red fox"),
        serde_json::json!(["eq:the ", "del:quick brown", "ins:slow red", "eq: fox"])
    );
    assert_eq!(
        diff(&mut p, "我喜欢猫和狗", "我喜欢鸟和狗"),
        serde_json::json!(["eq:我喜欢", "del:猫", "ins:鸟", "eq:和狗"])
    );
    assert_eq!(
        diff(&mut p, "同じ文です。", "同じ文でした。"),
        serde_json::json!(["eq:同じ文で", "del:す", "ins:した", "eq:。"])
    );
    assert_eq!(diff(&mut p, "same", "same"), serde_json::json!(["eq:same"]));
    assert_eq!(
        diff(&mut p, "", "new words"),
        serde_json::json!(["ins:new words"])
    );
}

#[test]
fn review_fixture_edge_cases() {
    let mut p = page!(1280, 1000);
    p.goto(&fixture_url("review.html"));
    let msg = |p: &mut Page, reason: &str| {
        p.eval_str(&format!(
            "(() => {{ const e = document.querySelector('.nb-diff-empty[data-reason=\"{reason}\"]'); return e ? e.textContent : ''; }})()"
        ))
    };
    assert_eq!(msg(&mut p, "no-git"), "No git repository");
    assert_eq!(
        msg(&mut p, "unchanged"),
        "Unchanged since the last commit (already committed?)"
    );
    assert_eq!(msg(&mut p, "page-not-found"), "Page not found");
    assert_eq!(msg(&mut p, "unknown-ref"), "Unknown commit");
    assert!(
        p.eval_str("document.querySelector('.nb-diff-note').textContent")
            .contains("New file")
    );
    assert_eq!(p.eval_i64("document.querySelectorAll('.nb-card')[0].querySelectorAll('.nb-diff')[1].querySelectorAll('tr.nb-d-add').length"), 3);
    assert_eq!(
        p.eval_i64("document.querySelectorAll('.nb-problem').length"),
        3
    );
    assert!(
        p.eval_str("document.querySelector('.nb-problem').textContent")
            .contains("No recorded changes")
    );
    assert!(
        p.eval_str("document.querySelector('.nb-also').textContent")
            .contains("This page also carries: “the retry policy”")
    );
    // Hunk bodies are kept even when they look like headers; real headers are dropped.
    let first = "document.querySelector('.nb-card .nb-diff')";
    let dels = p.eval_str(&format!(
        "[...{first}.querySelectorAll('tr.nb-d-del')].map(r => r.textContent).join('\\n')"
    ));
    assert!(
        dels.contains("-- a line that starts with three dashes"),
        "{dels}"
    );
    let adds = p.eval_str(&format!(
        "[...{first}.querySelectorAll('tr.nb-d-add')].map(r => r.textContent).join('\\n')"
    ));
    assert!(adds.contains("++ and so is this one"), "{adds}");
    let all = p.eval_str(&format!("{first}.textContent"));
    assert!(
        !all.contains("diff --git") && !all.contains("index 3b18e51"),
        "{all}"
    );
    // Block and page anchor heads.
    assert!(
        p.eval_str(
            "document.querySelector('.nb-card[data-nb-id=c_fix_reasons] .nb-card-head').textContent"
        )
        .contains("📊 graph: A[Sensor bus]")
    );
    assert!(p.eval_bool(
        "document.querySelector('.nb-card[data-nb-id=c_fix_problem] .nb-tag-page') !== null"
    ));
    // Side by side pairs a deletion with the following addition.
    p.click(".nb-diff-mode[data-mode=split]");
    assert!(p.eval_bool(&format!(
        "[...{first}.querySelectorAll('tr.nb-d-pair')].some(r => r.querySelector('td.nb-d-del') && r.querySelector('td.nb-d-add'))"
    )));
    // XSS payloads everywhere in the card data stay text.
    assert!(
        p.eval_str("document.querySelector('.nb-card[data-nb-id=c_fix_xss]').textContent")
            .contains(XSS_IMG)
    );
    assert_no_xss(&mut p);
    p.assert_offline_and_clean();

    // Below 640px there is no side by side: unified (or as rendered).
    p.set_viewport(600, 900);
    p.reload();
    assert!(p.eval_bool(&format!(
        "{first}.querySelector('table.nb-diff-unified') !== null"
    )));
    assert_eq!(
        p.eval_str("JSON.stringify([...document.querySelectorAll('.nb-diff-mode')].map(b => [b.dataset.mode, b.disabled]))"),
        r#"[["unified",false],["split",true],["rendered",false]]"#
    );

    // French catalogue, empty review.
    p.set_viewport(1280, 900);
    p.goto(&fixture_url("review-empty-fr.html"));
    assert_eq!(
        p.eval_str("document.querySelector('.nb-nothing').textContent"),
        "Rien à valider ✓"
    );
    p.assert_offline_and_clean();
}

#[test]
fn xss_payloads_stay_text() {
    let mut p = page!(1280, 900);
    let site = site();
    p.goto(&site.url("guide/configuration.html"));
    // The page comment (payload in author and body) is shown in the discussion, as text.
    let disc = p.eval_str(
        "document.querySelector('.nb-discussion-item[data-nb-id=c_xsspage0001]').textContent",
    );
    assert!(
        disc.contains(XSS_IMG) && disc.contains(XSS_SCRIPT),
        "{disc}"
    );
    // The orphan whose quote is a payload: listed under Detached with its quote, thread expanded.
    p.click("#nb-panel .nb-filter[data-filter=detached]");
    p.click("#nb-panel .nb-entry[data-nb-id=c_xssquote001] .nb-entry-main");
    let entry = p.eval_str(
        "document.querySelector('#nb-panel .nb-entry[data-nb-id=c_xssquote001]').textContent",
    );
    assert!(
        entry.contains(XSS_IMG) && entry.contains(XSS_SCRIPT),
        "{entry}"
    );
    assert_no_xss(&mut p);

    for page in [
        "comments.html",
        "review.html",
        "journal.html",
        "guide/configuration.html?nb=c_xssquote001",
    ] {
        p.goto(&site.url(page));
        assert_no_xss(&mut p);
    }
    p.goto(&site.url("comments.html"));
    p.eval("(() => { const s = document.querySelector('.nb-f-status'); s.value = 'all'; s.dispatchEvent(new Event('change')); })()");
    assert!(
        p.eval_str("document.querySelector('.nb-rows').textContent")
            .contains(XSS_IMG)
    );
    assert_no_xss(&mut p);
    p.assert_offline_and_clean();
}

#[test]
fn comments_and_journal_views() {
    let mut p = page!(1280, 900);
    let site = site();
    p.goto(&site.url("comments.html"));
    let data = p.eval("JSON.parse(document.querySelector('script.nb-view-data').textContent)");
    let all = data["comments"].as_array().unwrap();
    let total = all.len();
    let active = all.iter().filter(|c| c["status"] != "resolved").count();
    let held = all.iter().filter(|c| c["hold"] == true).count();
    assert_eq!(
        p.eval_str("document.querySelector('.nb-shown').textContent"),
        format!("{active} / {total}")
    );
    assert_eq!(
        p.eval_i64("document.querySelectorAll('.nb-rows > .nb-row').length") as usize,
        active
    );
    let set = |p: &mut Page, sel: &str, val: &str| {
        p.eval(&format!(
            "(() => {{ const s = document.querySelector('{sel}'); s.value = {v}; s.dispatchEvent(new Event(s.tagName === 'INPUT' ? 'input' : 'change')); }})()",
            v = serde_json::to_string(val).unwrap()
        ));
    };
    set(&mut p, ".nb-f-status", "all");
    assert_eq!(
        p.eval_str("document.querySelector('.nb-shown').textContent"),
        format!("{total} / {total}")
    );
    set(&mut p, ".nb-f-hold", "held");
    assert_eq!(
        p.eval_i64("document.querySelectorAll('.nb-rows > .nb-row').length") as usize,
        held
    );
    assert!(p.eval_bool("[...document.querySelectorAll('.nb-rows > .nb-row')].every(r => r.textContent.includes('⏸'))"));
    set(&mut p, ".nb-f-hold", "all");
    set(&mut p, ".nb-search", "retry-after");
    let shown = p.eval_i64("document.querySelectorAll('.nb-rows > .nb-row').length");
    assert!(shown >= 1 && (shown as usize) < total);
    set(&mut p, ".nb-search", "");
    // Rows: status dot and page; the page links (comments whose page is in the book) carry ?nb=.
    assert!(p.eval_bool(
        "[...document.querySelectorAll('.nb-rows > .nb-row')].every(r => r.querySelector('.nb-dot') && r.querySelector('.nb-row-page'))"
    ));
    assert!(p.eval_i64("document.querySelectorAll('.nb-rows a.nb-row-page').length") >= 1);
    assert!(p.eval_bool(
        "[...document.querySelectorAll('.nb-rows a.nb-row-page')].every(a => a.getAttribute('href').includes('?nb=' + a.closest('.nb-row').dataset.nbId))"
    ));
    p.screenshot("comments-view");
    p.assert_offline_and_clean();

    p.goto(&site.url("journal.html"));
    let data = p.eval("JSON.parse(document.querySelector('script.nb-view-data').textContent)");
    let entries = data["entries"].as_array().unwrap();
    assert_eq!(
        p.eval_i64("document.querySelectorAll('.nb-j-entry').length") as usize,
        entries.len()
    );
    let first_title = entries[0]["title"].as_str().unwrap();
    assert_eq!(
        p.eval_str("document.querySelector('.nb-j-title').textContent"),
        first_title
    );
    assert!(p.eval_bool(
        "[...document.querySelectorAll('.nb-j-ids a')].length > 0 && [...document.querySelectorAll('.nb-j-ids a')].every(a => /\\?nb=c_/.test(a.getAttribute('href')))"
    ));
    // Each change is named by its chapter's title, the page id beside it as a detail; a page
    // the book no longer has keeps its id.
    let changes: Vec<(String, String)> = entries
        .iter()
        .flat_map(|e| e["changes"].as_array().cloned().unwrap_or_default())
        .map(|ch| {
            let page = ch["page"].as_str().unwrap_or_default().to_string();
            let title = ch["chapter"].as_str().map_or(page.clone(), str::to_string);
            (title, page)
        })
        .collect();
    assert!(
        changes
            .iter()
            .any(|(t, p)| t == "Sensors" && p.ends_with("guide/sensors")),
        "{changes:?}"
    );
    let shown = p.eval("[...document.querySelectorAll('.nb-j-change')].map(li => [li.firstElementChild.textContent, (li.querySelector(':scope > .nb-page-id') || li.firstElementChild).textContent])");
    let want: Vec<serde_json::Value> = changes
        .iter()
        .map(|(t, p)| serde_json::json!([t, if t == p { t } else { p }]))
        .collect();
    assert_eq!(shown, serde_json::Value::Array(want));
    p.assert_offline_and_clean();

    // /review's cards and changes, and /comments' rows, are named by chapter title too.
    p.goto(&site.url("review.html"));
    assert!(p.eval_bool(
        "[...document.querySelectorAll('.nb-change-head')].some(h => h.firstElementChild.textContent === 'Sensors' && /guide\\/sensors$/.test(h.querySelector('.nb-page-id').textContent))"
    ));
    assert!(p.eval_bool(
        "[...document.querySelectorAll('.nb-card-head .nb-card-page')].every(a => !a.textContent.includes('/'))"
    ));
    p.goto(&site.url("comments.html"));
    assert!(p.eval_bool(
        "[...document.querySelectorAll('.nb-row-head')].some(r => r.querySelector('.nb-row-page').textContent === 'Sensors' && /guide\\/sensors$/.test(r.querySelector('.nb-page-id').textContent))"
    ));
}

#[test]
fn odd_data_does_not_break_the_client() {
    let mut p = page!(1280, 900);
    p.goto(&fixture_url("odd-data.html"));
    // Whatever it could make sense of is there; nothing threw.
    assert!(p.eval_bool("document.documentElement.classList.contains('nb-on') && document.querySelector('.nb-header') !== null"));
    assert!(p.eval_bool(
        "document.querySelector('mark[data-nb-id=c_missing]').getAttribute('tabindex') === null"
    ));
    assert!(p.eval_bool(
        "document.querySelector('mark[data-nb-id=c_j6]').classList.contains('nb-held')"
    ));
    assert_eq!(
        p.eval_str("document.querySelector('span.nb-block .nb-badge').dataset.nbCount"),
        "1"
    );
    // One comment is "the comment", not "1 comment(s)".
    let label =
        p.eval_str("document.querySelector('span.nb-block .nb-badge').getAttribute('aria-label')");
    assert!(
        label.starts_with("Read the comment on this ") && !label.contains("(s)"),
        "{label}"
    );
    assert!(p.eval_bool("(() => { const h = CSS.highlights.get('nb-code'); return !!h && [...h].some(r => r.toString() === 'echo'); })()"));
    assert!(p.eval_bool("getComputedStyle(document.querySelector('.nb-code-anchor').parentElement).display === 'none'"));
    assert_eq!(
        p.eval_i64("document.querySelectorAll('.nb-app[data-nb-view=comments] .nb-row').length"),
        2
    );
    assert!(p.eval_bool(
        "document.querySelector('.nb-app[data-nb-view=nonsense]').children.length === 0"
    ));
    p.click("mark[data-nb-id=c_j6]");
    p.wait_for("document.querySelector('.nb-pop')", SECS);
    p.click("span.nb-block .nb-badge");
    p.wait_for(
        "document.querySelector('.nb-pop .nb-thread[data-nb-id=c_j3]')",
        SECS,
    );
    p.click("#nb-panel .nb-filter[data-filter=all]");
    for i in 0..p.eval_i64("document.querySelectorAll('#nb-panel .nb-entry-main').length") {
        p.eval(&format!(
            "document.querySelectorAll('#nb-panel .nb-entry-main')[{i}].click()"
        ));
    }
    assert_no_xss(&mut p);
    p.assert_offline_and_clean();
}

#[test]
fn pages_without_data_are_left_alone() {
    let mut p = page!(1280, 900);
    let site = site();
    // mdBook's page structure with the client but no data island: nothing is added.
    p.goto(&fixture_url("no-data.html"));
    assert!(
        p.eval_bool("window.__notabene !== undefined"),
        "the client is loaded"
    );
    assert!(p.eval_bool(
        "!document.querySelector('.nb-header, .nb-panel, .nb-pop, .nb-discussion, .nb-badge') && !document.documentElement.classList.contains('nb-on')"
    ));
    assert_eq!(
        p.eval_i64("document.querySelectorAll('mark[tabindex]').length"),
        0
    );
    p.assert_offline_and_clean();
    p.goto(&site.url("404.html"));
    p.assert_offline_and_clean();
    // The print page carries every chapter's island: all marks work, code anchors per chapter.
    p.goto(&site.url("print.html"));
    assert!(p.eval_i64("document.querySelectorAll('script.nb-data').length") > 1);
    assert!(p.eval_bool("document.querySelector('mark.nb-mark[data-nb-id=c_mworge1zx4rb]').getAttribute('role') === 'button'"));
    assert!(p.eval_bool("(() => { const h = CSS.highlights.get('nb-code'); return !!h && [...h].some(r => r.toString() === 'max_attempts = 8'); })()"));
    p.assert_offline_and_clean();
    // A chapter with an island but nothing to show keeps working (no exceptions).
    p.goto(&site.url("reference/troubleshooting.html"));
    assert!(p.eval_bool("document.querySelector('.nb-header') !== null"));
    p.assert_offline_and_clean();
}

/// A chapter renamed with `git mv`: its comments are marked on the new page, and a thread says
/// where the comment is stored and how it was found.
#[test]
fn a_followed_comment_says_where_it_came_from() {
    let mut p = page!(1280, 900);
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path();
    let book = repo.join("book-example");
    copy_book(&book_example(), &book);
    git_commit_all(repo, "book");
    git(
        repo,
        &[
            "mv",
            "book-example/src/guide/configuration.md",
            "book-example/src/guide/config.md",
        ],
    );
    let summary = book.join("src/SUMMARY.md");
    let text = std::fs::read_to_string(&summary).unwrap();
    std::fs::write(
        &summary,
        text.replace("guide/configuration.md", "guide/config.md"),
    )
    .unwrap();
    let out = repo.join("out");
    let stderr = build(&book, Some(&out), &[]);
    assert!(
        stderr.contains("notabene: 3 comments followed book-example/src/guide/configuration → book-example/src/guide/config (git rename)\n"),
        "{stderr}"
    );
    p.goto(&harness::file_url(&out.join("guide/config.html")));
    let sel = "mark.nb-mark[data-nb-id=c_mworge1zx4rb]";
    p.wait_for(&format!("document.querySelector('{sel}')"), SECS);
    p.click(sel);
    p.wait_for(
        "document.querySelector('.nb-pop[role=dialog] .nb-followed')",
        SECS,
    );
    assert_eq!(
        p.eval_str("document.querySelector('.nb-pop .nb-followed').textContent"),
        "Found here: stored on book-example/src/guide/configuration (git rename)."
    );
    p.screenshot("followed-comment");
}

/// A big book's islands and views are deflated (`compress-above`): the client inflates them
/// with the browser's own DecompressionStream, from `file://` with no network request, and
/// shows exactly what it shows for plain JSON — marks, badges, panels, threads and the
/// generated pages.
#[test]
fn deflated_islands_and_views_show_the_same_book() {
    let mut p = page!(1280, 900);
    let site = site();
    const SHOWN: &str = r#"JSON.stringify({
        text: document.body.innerText,
        marks: [...document.querySelectorAll('mark.nb-mark')].map(m => [m.dataset.nbId, m.className, m.textContent]),
        deflated: document.querySelectorAll('script[data-nb-encoding="deflate-raw+base64"]').length,
        plain: document.querySelectorAll('script.nb-data[type="application/json"], script.nb-view-data[type="application/json"]').length,
        requests: performance.getEntriesByType('resource').filter(e => !e.name.startsWith('file:')).length
    })"#;
    let pages = [
        "guide/configuration.html",
        "guide/installing.html",
        "comments.html",
        "review.html",
        "journal.html",
        // Every chapter's island and the three views on one page.
        "print.html",
    ];
    for page in pages {
        let mut shown = Vec::new();
        for url in [site.url(page), site.deflated_url(page)] {
            p.goto(&url);
            p.wait_for(
                "document.documentElement.classList.contains('nb-on') && document.querySelector('.nb-app, mark.nb-mark, .nb-header')",
                SECS,
            );
            p.eval("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))");
            let v: serde_json::Value = serde_json::from_str(&p.eval_str(SHOWN)).unwrap();
            shown.push(v);
        }
        let (plain, deflated) = (&shown[0], &shown[1]);
        assert_eq!(
            (plain["deflated"].as_u64(), deflated["plain"].as_u64()),
            (Some(0), Some(0)),
            "{page}: one form in each build"
        );
        assert!(deflated["deflated"].as_u64() > Some(0), "{page}");
        assert_eq!(deflated["requests"], 0, "{page}: no network");
        assert!(
            plain["text"].as_str().unwrap().len() > 200,
            "{page}: {plain}"
        );
        assert_eq!(
            plain["text"], deflated["text"],
            "{page}: the same text shown"
        );
        assert_eq!(plain["marks"], deflated["marks"], "{page}: the same marks");
    }
    // A mark opens the same thread.
    let mut threads = Vec::new();
    for url in [
        site.url("guide/configuration.html"),
        site.deflated_url("guide/configuration.html"),
    ] {
        p.goto(&url);
        p.wait_for("document.querySelector('mark.nb-mark')", SECS);
        p.click("mark.nb-mark");
        p.wait_for("document.querySelector('.nb-pop .nb-thread')", SECS);
        threads.push(p.eval_str("document.querySelector('.nb-pop').innerText"));
    }
    assert!(threads[0].len() > 20, "{threads:?}");
    assert_eq!(threads[0], threads[1]);

    // A browser that cannot inflate says so, rather than showing the book without comments;
    // plain data still works there.
    let mut q = page!(1280, 900);
    q.call(
        "Page.addScriptToEvaluateOnNewDocument",
        serde_json::json!({ "source": "delete window.DecompressionStream;" }),
    );
    q.goto(&site.deflated_url("guide/configuration.html"));
    q.wait_for("document.querySelector('.nb-toast:not([hidden])')", SECS);
    assert_eq!(
        q.eval_str("document.querySelector('.nb-toast-text').textContent"),
        "The comments of this page cannot be shown: this browser cannot read their compressed data."
    );
    q.goto(&site.url("guide/configuration.html"));
    q.wait_for("document.documentElement.classList.contains('nb-on')", SECS);
    assert!(q.eval_bool(
        "typeof DecompressionStream === 'undefined' && !document.querySelector('.nb-toast')"
    ));
    q.click("mark.nb-mark");
    q.wait_for("document.querySelector('.nb-pop .nb-thread')", SECS);
}

/// A comment whose quote changed since it was written (it says «five seconds»; the page now
/// says «ten seconds»): its thread, its panel entry and its /comments row say what changed,
/// word by word, in words — not with a colour alone.
#[test]
fn a_changed_quote_shows_the_old_and_new_words() {
    let mut p = page!(1280, 900);
    let site = site();
    p.goto(&site.url("guide/configuration.html"));
    let id = "c_mwm6a3iye2uy";
    let mark = format!("mark.nb-mark[data-nb-id={id}]");
    assert_eq!(
        p.eval_str(&format!("document.querySelector('{mark}').textContent")),
        "Intervals shorter than ten seconds are accepted"
    );
    let note = "The text changed since this comment: «five» → «ten»";
    // The words themselves, old struck and new inserted.
    let words = |p: &mut Page, scope: &str| {
        p.eval(&format!(
            "(() => {{ const n = document.querySelector('{scope} .nb-changed');
               return [n.textContent, [...n.querySelectorAll('del.nb-word')].map(e => e.textContent),
                       [...n.querySelectorAll('ins.nb-word')].map(e => e.textContent)]; }})()"
        ))
    };
    let want = serde_json::json!([note, ["five"], ["ten"]]);

    p.click(&mark);
    p.wait_for(
        "document.querySelector('.nb-pop[role=dialog] .nb-changed')",
        SECS,
    );
    assert_eq!(words(&mut p, ".nb-pop"), want, "the thread");
    p.screenshot("changed-quote-thread");
    p.key("Escape");

    let entry = format!("#nb-panel .nb-entry[data-nb-id={id}]");
    p.click(&format!("{entry} .nb-entry-main"));
    p.wait_for(
        &format!("document.querySelector('{entry} .nb-entry-thread .nb-changed')"),
        SECS,
    );
    assert_eq!(
        words(&mut p, &format!("{entry} .nb-entry-thread")),
        want,
        "the panel"
    );
    // A comment placed exactly, its context intact, has no such note.
    assert_eq!(
        p.eval_i64(
            "document.querySelectorAll('#nb-panel .nb-entry[data-nb-id=c_mworge1zx4rb] .nb-changed').length"
        ),
        0
    );
    p.assert_offline_and_clean();

    p.goto(&site.url("comments.html"));
    p.wait_for(
        &format!("document.querySelector('.nb-row[data-nb-id={id}] .nb-changed')"),
        SECS,
    );
    assert_eq!(
        words(&mut p, &format!(".nb-row[data-nb-id={id}]")),
        want,
        "/comments"
    );
    assert_eq!(
        p.eval_i64("document.querySelectorAll('.nb-rows .nb-changed').length"),
        1,
        "only the changed comment"
    );
    p.assert_offline_and_clean();
}

/// A detached comment whose text stands in another chapter, which held it all along (git
/// does not show it arriving there after the comment was written): it stays detached on its
/// own page, and the panel's detached list and its thread say where the same text is (a
/// suggestion, not a move).
#[test]
fn a_detached_comment_says_where_the_same_text_is() {
    let mut p = page!(1280, 900);
    let tmp = tempfile::tempdir().unwrap();
    let book = tmp.path().join("book-example");
    copy_book(&book_example(), &book);
    let sentence = " Skylark sends samples in batches of `batch_size` readings, compressed with gzip, to the collector URL over HTTPS.";
    let edit = |rel: &str, f: &dyn Fn(String) -> String| {
        let path = book.join(rel);
        let text = std::fs::read_to_string(&path).unwrap();
        let new = f(text.clone());
        assert_ne!(new, text, "{rel} edited");
        std::fs::write(&path, new).unwrap();
    };
    edit("src/guide/installing.md", &|t| {
        format!("{t}\n{}\n", sentence.trim_start())
    });
    // In a repository (page ids are repository-relative) where the other chapter held the
    // sentence all along; then the sentence is deleted from the comment's chapter.
    git_commit_all(tmp.path(), "book");
    edit("src/guide/configuration.md", &|t| {
        t.replacen(sentence, "", 1)
    });
    let out = tmp.path().join("out");
    build(&book, Some(&out), &[]);
    p.goto(&harness::file_url(&out.join("guide/configuration.html")));
    let entry = "#nb-panel .nb-entry.nb-orphan[data-nb-id=c_mworonpyb6ns]";
    // It is addressed but its text is gone: under Detached, neither Open nor To validate.
    p.wait_for(
        "document.querySelector('#nb-panel .nb-filter[data-filter=detached]')",
        SECS,
    );
    p.click("#nb-panel .nb-filter[data-filter=addressed]");
    assert!(!p.eval_bool(&format!("!!document.querySelector('{entry}')")));
    p.click("#nb-panel .nb-filter[data-filter=detached]");
    p.wait_for(&format!("document.querySelector('{entry}')"), SECS);
    assert_eq!(
        p.eval_str(&format!(
            "document.querySelector('{entry} .nb-entry-same').textContent"
        )),
        "The same text is on Installing Skylark."
    );
    assert_eq!(
        p.eval_i64("document.querySelectorAll('mark.nb-mark[data-nb-id=c_mworonpyb6ns]').length"),
        0,
        "not marked here"
    );
    p.click(&format!("{entry} .nb-entry-main"));
    p.wait_for(
        &format!("document.querySelector('{entry} .nb-entry-thread .nb-same-text a')"),
        SECS,
    );
    let link = p.eval(&format!(
        "(() => {{ const n = document.querySelector('{entry} .nb-same-text');
           return [n.textContent, n.querySelector('a').getAttribute('href')]; }})()"
    ));
    assert_eq!(
        link,
        serde_json::json!([
            "The same text is on Installing Skylark.",
            "../guide/installing.html"
        ])
    );
    p.screenshot("same-text-suggestion");
    p.assert_offline_and_clean();
}

/// The README's screenshots, `docs/img/{reader,review,print}-{1400,390}.png`: a chapter with a
/// thread open, /review, and print.html of a `print-comments` build as printed, at a desktop
/// and a phone width. Each page is checked before it is taken; the README must show all six
/// and each must be committed. They are written to `target/browser-screenshots/docs-*.png`,
/// and into `docs/img/` with `NOTABENE_UPDATE_SCREENSHOTS=1`.
#[test]
fn the_readme_screenshots_of_the_reader_review_and_print() {
    let site = site();
    let root = crate::support::common::repo_root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let update = std::env::var_os("NOTABENE_UPDATE_SCREENSHOTS").is_some();
    for (width, height) in [(1400, 1000), (390, 844)] {
        let mut p = page!(width, height);
        let shot = |p: &mut Page, name: &str| {
            let file = format!("{name}-{width}.png");
            let taken = p.screenshot(&format!("docs-{name}-{width}"));
            if update {
                std::fs::copy(&taken, root.join("docs/img").join(&file)).unwrap();
            }
            assert!(
                readme.contains(&format!("(docs/img/{file})")),
                "README shows {file}"
            );
            assert!(
                root.join("docs/img").join(&file).is_file(),
                "docs/img/{file} is committed"
            );
        };
        // A chapter, its thread open on a mark (a popover, or a bottom sheet on a phone).
        p.goto(&site.url("guide/configuration.html"));
        p.click("mark.nb-mark[data-nb-status=open]");
        p.wait_for(
            "!!document.querySelector('.nb-pop .nb-thread .nb-msg')",
            SECS,
        );
        p.wait_animations_done();
        shot(&mut p, "reader");
        // /review: its cards, each with the diff of its change.
        p.goto(&site.url("review.html"));
        p.wait_for(
            "document.querySelectorAll('.nb-card .nb-diff').length > 0",
            SECS,
        );
        shot(&mut p, "review");
        // print.html as printed: a chapter's numbered notes beside their text.
        p.goto(&site.print_url("print.html"));
        p.call(
            "Emulation.setEmulatedMedia",
            serde_json::json!({ "media": "print" }),
        );
        p.wait_for(
            "document.querySelectorAll('ol.nb-print-notes > li.nb-print-note').length > 0",
            SECS,
        );
        p.eval("document.querySelector('mark[data-nb-note]').closest('li, p').scrollIntoView({ block: 'start' })");
        p.eval("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))");
        shot(&mut p, "print");
        p.assert_offline_and_clean();
    }
}
