//! Every page of book-example as a new user meets it: in the default `review = "auto"` and in
//! `review = "approve"` (the example book's own), served by `mdbook-notabene serve` and built
//! as static files. Each page loads with no uncaught exception and no `console.error` (the
//! harness fails any test on those), shows the header items its data calls for, and on a
//! chapter the panel opens and closes from the header toggle — on every page in turn, in one
//! browser context, so a panel closed on one page (a remembered choice) is reopened on the next.

use crate::harness::serving::book_example_with;
use crate::harness::{Page, chromium, file_url};
use crate::support::common::{
    book_example, build, copy_book, files_under, git_commit_all, install, tempdir,
};
use std::path::{Path, PathBuf};
use std::time::Duration;

macro_rules! page {
    ($w:expr, $h:expr) => {
        match chromium() {
            Some(exe) => Page::new(&exe, $w, $h),
            None => return,
        }
    };
}

const SECS: Duration = Duration::from_secs(10);

/// Sets `review = "<mode>"` in the book's `book.toml` (book-example says "approve").
pub fn set_review(book: &Path, mode: &str) {
    let path = book.join("book.toml");
    let toml = std::fs::read_to_string(&path).unwrap();
    assert!(toml.contains("review = \"approve\""), "{toml}");
    std::fs::write(
        &path,
        toml.replace("review = \"approve\"", &format!("review = \"{mode}\"")),
    )
    .unwrap();
}

/// Marks every comment of the book's store that waits for approval (`addressed`) as approved
/// (`resolved`): a book where nothing waits, as a new user's is.
pub fn approve_all(book: &Path) {
    let mut n = 0;
    for f in files_under(&book.join(".notabene")) {
        let text = std::fs::read_to_string(&f).unwrap();
        if f.extension().is_some_and(|e| e == "json") && text.contains("\"status\": \"addressed\"")
        {
            n += 1;
            std::fs::write(
                &f,
                text.replace("\"status\": \"addressed\"", "\"status\": \"resolved\""),
            )
            .unwrap();
        }
    }
    assert!(n > 0, "book-example has comments waiting for approval");
}

/// book-example as a scenario has it: `review = "<mode>"`, and nothing waiting for approval
/// when `nothing_waits`.
fn prepare(book: &Path, mode: &str, nothing_waits: bool) {
    set_review(book, mode);
    if nothing_waits {
        approve_all(book);
    }
}

/// book-example prepared as above, built with the current client into `<tmp>/out`.
fn built_example(tmp: &Path, mode: &str, nothing_waits: bool) -> PathBuf {
    let book = tmp.join("book-example");
    copy_book(&book_example(), &book);
    prepare(&book, mode, nothing_waits);
    install(&book);
    git_commit_all(tmp, "book");
    let out = tmp.join("out");
    build(&book, Some(&out), &[]);
    out
}

/// The pages of a build (every `.html` but mdBook's no-script `toc.html`), relative, sorted.
fn pages_of(out: &Path) -> Vec<String> {
    let pages: Vec<String> = files_under(out)
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "html"))
        .map(|p| p.strip_prefix(out).unwrap().to_string_lossy().into_owned())
        .filter(|p| p != "toc.html")
        .collect();
    assert!(
        pages.len() >= 10,
        "book-example has its chapters and views: {pages:?}"
    );
    pages
}

/// JS: what the page's data calls for in the header, `[toggle, reviewLink, reviewCount]`: a
/// chapter page (a data island) has the panel toggle; the review link is there when something
/// waits for approval (its count), or always in `review = "approve"` on a chapter and on /review.
const EXPECTED_HEADER: &str = r#"(() => {
  const island = document.querySelector('script.nb-data');
  const view = document.querySelector('.nb-app[data-nb-view]');
  const approve = MODE === 'approve';
  if (island) {
    const summary = JSON.parse(document.querySelector('script.nb-summary').textContent);
    if (summary.review !== MODE) throw new Error(`the summary says review = ${summary.review}`);
    return [true, approve || summary.addressed > 0, String(summary.addressed)];
  }
  if (view?.dataset.nbView === 'review') {
    const cards = JSON.parse(document.querySelector('script.nb-view-data').textContent).cards || [];
    return [false, approve || cards.length > 0, String(cards.length)];
  }
  if (view?.dataset.nbView === 'comments') {
    const data = JSON.parse(document.querySelector('script.nb-view-data').textContent);
    const n = (data.comments || []).filter(c => c.status === 'addressed').length;
    return [false, n > 0, String(n)];
  }
  return [false, false, '0'];
})()"#;

/// JS: what the header shows, in the shape of `EXPECTED_HEADER`.
const SHOWN_HEADER: &str = r#"(() => {
  const toggle = document.querySelector('.menu-bar .right-buttons .nb-header #nb-panel-toggle');
  const link = document.querySelector('.menu-bar .right-buttons .nb-header .nb-review-link');
  return [!!toggle, !!link, link ? link.querySelector('.nb-count').textContent : '0'];
})()"#;

/// Walks every page at `base` + page: loaded clean, its header as its data calls for, and on a
/// chapter the panel opened and closed from the toggle.
fn walk(p: &mut Page, base: &str, pages: &[String], mode: &str, how: &str) {
    let mut chapters = 0;
    for rel in pages {
        p.goto(&format!("{base}{rel}"));
        let expected = p.eval(&EXPECTED_HEADER.replace("MODE", &format!("{mode:?}")));
        let shown = p.eval(SHOWN_HEADER);
        assert_eq!(
            shown, expected,
            "{how}, review = {mode:?}: the header of {rel}"
        );
        if expected[0] == true {
            chapters += 1;
            // The panel as it starts (open when the page has live comments and the reader has
            // not closed it); then closed and opened again from the header.
            for _ in 0..2 {
                toggle_panel(p, &format!("{how}, review = {mode:?}, {rel}"));
            }
        }
        p.assert_no_errors();
    }
    // index, installing, configuration, sensors, cli, troubleshooting and print.html.
    assert_eq!(chapters, 7, "{how}, review = {mode:?}: chapter pages");
}

/// Clicks the panel toggle as a reader does (at the top of the page, where the header is) and
/// waits for the panel to have turned. A live reload in between (a rebuild of the served book
/// swapped in: the page starts again, its panel as a fresh page has it) is told apart from a
/// toggle that did not turn the panel, by a mark the reload clears, and the click is made again
/// on the new page; so is a click the page did not see within 10 s; a toggle that three clicks
/// do not turn fails.
fn toggle_panel(p: &mut Page, what: &str) {
    let mut last = String::from("the page reloaded at every click");
    for _ in 0..3 {
        p.wait_for(
            "document.getElementById('nb-panel') && document.getElementById('nb-panel-toggle')",
            SECS,
        );
        let open = p.eval_bool("!document.getElementById('nb-panel').hidden");
        // The header as a reader reaches it: at the top of the page (mdBook slides the menu
        // bar away while a page scrolls down, as a restored scroll position does).
        p.eval("window.scrollTo(0, 0); window.__nbWalk = true");
        p.wait_for(
            "(() => { const b = document.getElementById('nb-panel-toggle').getBoundingClientRect();
               const at = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
               return !!at && document.getElementById('nb-panel-toggle').contains(at); })()",
            SECS,
        );
        p.click("#nb-panel-toggle");
        let want = !open;
        let turned = format!(
            "!!(document.getElementById('nb-panel').hidden === {} && document.getElementById('nb-panel-toggle').getAttribute('aria-expanded') === '{want}')",
            !want
        );
        let deadline = std::time::Instant::now() + SECS;
        loop {
            if p.try_eval(&turned) == Ok(serde_json::Value::Bool(true)) {
                return;
            }
            if p.try_eval("window.__nbWalk === true") == Ok(serde_json::Value::Bool(false)) {
                last = "the page reloaded at every click".into();
                break; // reloaded: click again on the new page
            }
            if std::time::Instant::now() >= deadline {
                // A click the page never saw (dispatched while it was busy): once more, as a
                // reader would click again; three clicks that all fail are a failure.
                last = format!(
                    "the panel toggle did not turn the panel (open before: {open}; scrollY {})",
                    p.eval("window.scrollY")
                );
                break;
            }
            std::thread::sleep(Duration::from_millis(40));
        }
    }
    panic!("{what}: three clicks of the panel toggle: {last}");
}

/// Walks the built book, then the same book served.
fn smoke(mode: &str, nothing_waits: bool) {
    let mut p = page!(1280, 900);
    let tmp = tempdir();
    let out = built_example(tmp.path(), mode, nothing_waits);
    let pages = pages_of(&out);
    walk(
        &mut p,
        &format!("{}/", file_url(&out)),
        &pages,
        mode,
        "built",
    );
    let server = book_example_with(|book| prepare(book, mode, nothing_waits));
    // Walked once the server is quiet: a rebuild swapped in mid-walk would reload a page
    // between a click on its toggle and the look at its panel.
    crate::harness::serving::settle(server.port, 0, Duration::from_millis(1500));
    let base = format!("http://127.0.0.1:{}/", server.port);
    walk(&mut p, &base, &pages, mode, "served");
}

#[test]
fn every_page_in_review_auto_built_and_served_loads_clean_and_its_panel_opens_and_closes() {
    smoke("auto", false);
}

/// A new user's book: the default `review = "auto"` and nothing waiting for approval (no
/// review link; the panel toggle all the same).
#[test]
fn every_page_in_review_auto_with_nothing_to_approve_built_and_served_loads_clean_and_its_panel_opens_and_closes()
 {
    smoke("auto", true);
}

#[test]
fn every_page_in_review_approve_built_and_served_loads_clean_and_its_panel_opens_and_closes() {
    smoke("approve", false);
}
