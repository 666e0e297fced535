//! The lean forms and the condensed comments of a build: what they keep and write.

use super::*;
use pretty_assertions::assert_eq;
use serde_json::json;

fn resolved() -> Comment {
    Comment::from_value(json!({
        "id": "c_1", "space": "docs", "page": "guide/setup", "scope": "selection",
        "anchor": { "quote": "the \"quick\"\tfox", "prefix": "see ", "suffix": " run", "hint": 3 },
        "suggestion": { "quote": "quick", "text": "slow", "applied": { "at": "t" } },
        "thread": [
            { "author": "ana", "body": "line one\nline two", "ts": "2026-01-01T00:00:00.000Z" },
            { "author": "bo", "body": "done", "ts": "2026-01-02T00:00:00.000Z" }
        ],
        "status": "resolved", "hold": false, "resolution": { "by": "bo" },
        "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-02T00:00:00.000Z",
        "x-custom": [1, 2.5, null]
    }))
}

#[test]
fn a_condensed_comment_keeps_what_a_build_reads_and_its_fields_prewritten() {
    let c = resolved();
    let t = condensed(&c, "docs").unwrap();
    assert_eq!(
        serde_json::to_value(t.as_map()).unwrap(),
        json!({
            "id": "c_1", "space": "docs", "page": "guide/setup", "scope": "selection",
            "status": "resolved",
            "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-02T00:00:00.000Z"
        })
    );
    let p = t.prerendered().unwrap();
    assert_eq!(p.naming(), "the \"quick\"\tfox");
    assert_eq!(
        p.island(),
        r#"{"id":"c_1","scope":"selection","anchor":{"quote":"the \"quick\"\tfox","hint":3},"suggestion":{"quote":"quick","text":"slow","applied":{"at":"t"}},"thread":[{"author":"ana","body":"line one\nline two","ts":"2026-01-01T00:00:00.000Z"},{"author":"bo","body":"done","ts":"2026-01-02T00:00:00.000Z"}],"status":"resolved","resolution":{"by":"bo"},"createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-02T00:00:00.000Z","x-custom":[1,2.5,null]"#
    );
    assert_eq!(
        p.list(),
        r#"{"id":"c_1","page":"guide/setup","scope":"selection","anchor":{"quote":"the \"quick\"\tfox","hint":3},"suggestion":{"quote":"quick","text":"slow","applied":{"at":"t"}},"thread":[{"author":"ana","body":"line one\nline two","ts":"2026-01-01T00:00:00.000Z"}],"replies":1,"status":"resolved","resolution":{"by":"bo"},"createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-02T00:00:00.000Z","x-custom":[1,2.5,null]"#
    );
    // Another book's space is written out.
    assert!(
        condensed(&c, "other")
            .unwrap()
            .prerendered()
            .unwrap()
            .island()
            .starts_with(r#"{"id":"c_1","space":"docs","#)
    );
}

#[test]
fn only_resolved_comments_with_an_id_off_a_whole_page_are_condensed() {
    let with = |k: &str, v: Value| {
        let mut c = resolved();
        c.set(k, v);
        c
    };
    assert!(condensed(&resolved(), "docs").is_some());
    assert!(condensed(&with("status", json!("open")), "docs").is_none());
    assert!(condensed(&with("status", json!("addressed")), "docs").is_none());
    assert!(condensed(&with("status", json!("Resolved")), "docs").is_none());
    assert!(condensed(&with("scope", json!("page")), "docs").is_none());
    assert!(condensed(&with("id", json!("")), "docs").is_none());
    assert!(condensed(&with("id", json!(7)), "docs").is_none());
    assert!(condensed(&with("scope", json!("element")), "docs").is_some());
}

#[test]
fn the_cache_text_gives_the_same_forms_back() {
    let t = condensed(&resolved(), "docs").unwrap();
    let p = t.prerendered().unwrap();
    let text = p.to_text();
    assert!(!text.contains('\n'));
    assert_eq!(text.matches('\t').count(), 2);
    assert_eq!(
        Prerendered::from_text(SharedText::new(text.clone()), Arc::from("docs")).as_ref(),
        Some(p)
    );
    let back = BookForms::new("docs")
        .restore(SharedText::new(text.clone()))
        .unwrap();
    let back: &dyn std::any::Any = &*back;
    assert_eq!(back.downcast_ref::<Prerendered>(), Some(p));
    // Fewer parts is no record (the cache's checksum catches the rest of a corruption).
    let head: Vec<&str> = text.splitn(3, '\t').collect();
    assert_eq!(
        Prerendered::from_text(SharedText::new(head[..2].join("\t")), Arc::from("docs")),
        None
    );
    // The naming text of a comment with no quote is its first message.
    let mut c = resolved();
    c.set("anchor", json!({ "kind": "image" }));
    assert_eq!(
        condensed(&c, "docs")
            .unwrap()
            .prerendered()
            .unwrap()
            .naming(),
        "line one\nline two"
    );
    assert_eq!(resolved().prerendered(), None);
    // A naming text without escapes is read where it is; with them, unescaped: the same.
    for quote in ["plain words", "é \u{1d11e}", "a \\ b", "x\u{1}y"] {
        let mut c = resolved();
        c.set("anchor", json!({ "quote": quote }));
        let made = condensed(&c, "docs").unwrap();
        let made = made.prerendered().unwrap();
        assert_eq!(made.naming(), quote);
        let back =
            Prerendered::from_text(SharedText::new(made.to_text()), Arc::from("docs")).unwrap();
        assert_eq!((back.naming(), &back), (quote, made));
    }
}

#[test]
fn the_cache_text_written_from_a_comment_is_the_one_of_its_condensed_comment() {
    use notabene_store::condense::{from_cache_text, to_cache_text};
    let forms = BookForms::new("docs");
    let mut comments = vec![resolved()];
    // Kept fields out of their usual order, escapes in them, a space of another book, a
    // naming text with escapes, a map holding none of the kept fields but the id.
    let mut c = Comment::from_value(json!({
        "updatedAt": "2026-01-02T00:00:00.000Z", "status": "resolved", "id": "c_\"2\"",
        "page": "a/b\u{7f}\u{2028}", "space": "other",
        "anchor": { "quote": "x\\y</script>" }, "createdAt": "2026-01-01T00:00:00.000Z"
    }));
    comments.push(c.clone());
    c.set("scope", json!("element"));
    comments.push(c);
    comments.push(Comment::from_value(
        json!({ "id": "c_3", "status": "resolved" }),
    ));
    for c in &comments {
        let whole = to_cache_text(&condensed(c, "docs").unwrap(), "docs").unwrap();
        let written = forms.cache_text(c).unwrap();
        assert_eq!(written.as_str(), whole.as_str());
        // And read back, it is the condensed comment.
        assert_eq!(from_cache_text(&written, &forms), condensed(c, "docs"));
    }
    // A comment kept whole has none.
    let mut open = resolved();
    open.set("status", json!("open"));
    assert_eq!(forms.cache_text(&open), None);
    let mut page = resolved();
    page.set("scope", json!("page"));
    assert_eq!(forms.cache_text(&page), None);
}
