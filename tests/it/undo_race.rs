//! The browser's Undo takes back one action and nothing else, whatever was committed with it:
//! PATCHes that arrive together are committed as one group, and an Undo of one of them keeps
//! every other confirmed write (20 trials each of ten concurrent replies then an Undo of one,
//! and of a reply racing a resolve then the resolve's Undo).

use crate::support::serve::Server;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const PAGE: &str = "book-example/src/guide/sensors";
const TRIALS: usize = 20;

/// A new page comment on [`PAGE`]; its id.
fn comment(server: &Server) -> String {
    let (code, c) = server.json(
        "POST",
        "/__notabene/api/comments",
        &json!({ "page": PAGE, "space": "book", "scope": "page", "body": "A question." }),
    );
    assert_eq!(code, 201, "{c}");
    c["id"].as_str().unwrap().to_string()
}

fn patch(server: &Server, fields: Value) -> Value {
    let (code, c) = server.json("PATCH", "/__notabene/api/comments", &fields);
    assert_eq!(code, 200, "{fields}: {c}");
    c
}

/// The comment as the store holds it.
fn stored(server: &Server, id: &str) -> Value {
    let (code, list) = server.json(
        "GET",
        &format!("/__notabene/api/comments?page={PAGE}"),
        &Value::Null,
    );
    assert_eq!(code, 200);
    list.as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .cloned()
        .unwrap()
}

fn bodies(c: &Value) -> Vec<String> {
    c["thread"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["body"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn an_undo_of_one_reply_among_ten_concurrent_ones_keeps_the_nine() {
    let server = Server::start(&[], |_| {});
    let id = comment(&server);
    let mut kept = vec!["A question.".to_string()];
    for trial in 0..TRIALS {
        let answers: Vec<(String, Value)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..10)
                .map(|k| {
                    let (server, id) = (&server, &id);
                    s.spawn(move || {
                        let body = format!("reply {trial}.{k}");
                        let c = patch(
                            server,
                            json!({ "page": PAGE, "id": id, "reply": { "body": body } }),
                        );
                        (body, c)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let (undone, answer) = &answers[trial % 10];
        let (code, c) = server.json(
            "POST",
            "/__notabene/api/undo",
            &json!({ "page": PAGE, "id": id, "updatedAt": answer["updatedAt"] }),
        );
        assert_eq!(code, 200, "trial {trial}: {c}");
        // Every reply confirmed is there once, but the one taken back.
        let mut want: Vec<String> = kept.clone();
        want.extend(
            answers
                .iter()
                .map(|(b, _)| b.clone())
                .filter(|b| b != undone),
        );
        let mut have = bodies(&stored(&server, &id));
        let (mut want_sorted, first) = (want.clone(), have.remove(0));
        assert_eq!(first, "A question.");
        want_sorted.remove(0);
        want_sorted.sort();
        have.sort();
        assert_eq!(have, want_sorted, "trial {trial}");
        kept = want;
    }
}

#[test]
fn an_undo_of_a_resolve_that_raced_a_reply_keeps_the_reply() {
    let server = Server::start(&[], |_| {});
    let id = comment(&server);
    for trial in 0..TRIALS {
        let body = format!("a reply in trial {trial}");
        let (_, resolved) = std::thread::scope(|s| {
            let (server, id, body) = (&server, &id, &body);
            let reply = s.spawn(move || {
                patch(
                    server,
                    json!({ "page": PAGE, "id": id, "reply": { "body": body } }),
                )
            });
            let resolve = s.spawn(move || {
                patch(
                    server,
                    json!({ "page": PAGE, "id": id, "status": "resolved", "resolution": { "note": "Done." } }),
                )
            });
            (reply.join().unwrap(), resolve.join().unwrap())
        });
        let (code, c) = server.json(
            "POST",
            "/__notabene/api/undo",
            &json!({ "page": PAGE, "id": id, "updatedAt": resolved["updatedAt"] }),
        );
        assert_eq!(code, 200, "trial {trial}: {c}");
        let now = stored(&server, &id);
        assert_eq!(now["status"], "open", "trial {trial}: {now}");
        assert!(
            bodies(&now).contains(&body),
            "trial {trial}: the reply was lost: {now}"
        );
        assert_eq!(bodies(&now).len(), trial + 2, "trial {trial}: {now}");
    }
}
