//! `serve` of a book with more than one output (`[output.html]` and `[output.linkcheck]`, as
//! rust-lang's books have): the HTML output is served at `/`, as `mdbook serve` serves it, and
//! mdBook's own messages about the other backend reach stderr.

use crate::support::serve::{self, Server};
use crate::support::wait;
use std::time::Duration;

/// A second output whose backend is not installed, marked optional: the URL printed (`/`)
/// answers with the first chapter, and mdBook's note that the backend was skipped is shown.
#[test]
fn a_second_output_serves_the_html_at_the_root_and_keeps_mdbooks_hint() {
    let tmp = crate::support::common::tempdir();
    let log = tmp.path().join("serve.log");
    let server = Server::start_logging(&log, |book| {
        let toml = book.join("book.toml");
        let text = std::fs::read_to_string(&toml).unwrap();
        std::fs::write(
            &toml,
            format!(
                "{text}\n[output.linkcheck]\ncommand = \"mdbook-notabene-no-such-backend\"\noptional = true\n"
            ),
        )
        .unwrap();
    });
    let (code, body) = serve::request(server.port, "GET", "/", &[], b"");
    assert_eq!(code, 200, "GET / of a book with two outputs: {body:.200}");
    assert!(
        body.contains("Skylark is a small command-line data logger"),
        "not the first chapter: {body:.300}"
    );
    let (code, _) = serve::request(server.port, "GET", "/guide/sensors.html", &[], b"");
    assert_eq!(code, 200, "a chapter at its mdbook serve path");
    let said = wait::until(Duration::from_secs(10), "mdBook's note on stderr", || {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        text.contains("marked as optional").then_some(text)
    });
    assert!(
        said.lines()
            .any(|l| l.contains("mdbook-notabene-no-such-backend")
                && l.contains("was not found, but is marked as optional")),
        "mdBook's note about the missing backend: {said}"
    );
}

/// `/review`, `/comments` and `/journal` answer as their `.html` pages, as the README says to
/// open them.
#[test]
fn the_review_views_answer_under_their_short_names() {
    let server = Server::start(&[], |_| {});
    for name in ["review", "comments", "journal"] {
        let (code, long) = serve::request(server.port, "GET", &format!("/{name}.html"), &[], b"");
        assert_eq!(code, 200, "/{name}.html");
        let (code, short) = serve::request(server.port, "GET", &format!("/{name}"), &[], b"");
        assert_eq!(code, 200, "/{name}: {short:.200}");
        assert_eq!(short, long, "/{name} is {name}.html");
    }
}
