//! `notabene mcp` on raw stdio: every line a client sends gets an answer. A line that is not
//! JSON gets a JSON-RPC parse error (`-32700`, id `null`), a line over the cap an error
//! (`-32600`, id `null`), and the server serves on: the next request is answered.

use crate::support::common;

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long an answer may take (a loaded two-core machine).
const WAIT: Duration = Duration::from_secs(20);

/// A running `notabene mcp` on the round-trip fixture store, its stdout read line by line.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    _tmp: tempfile::TempDir,
}

impl Server {
    fn start() -> Server {
        let (tmp, _store) = common::fixture_store("roundtrip/store");
        let mut child = Command::new(common::bin())
            .args(["--store", "store", "mcp"])
            .current_dir(tmp.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("NOTABENE_STORE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("run notabene mcp");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        Server {
            child,
            stdin,
            lines,
            _tmp: tmp,
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn send_json(&mut self, v: &Value) {
        self.send(format!("{v}\n").as_bytes());
    }

    /// The next line the server writes, as JSON.
    #[track_caller]
    fn answer(&self, after: &str) -> Value {
        let line = self
            .lines
            .recv_timeout(WAIT)
            .unwrap_or_else(|_| panic!("no answer within {WAIT:?} after {after}"));
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Closes stdin; the server must end, successfully.
    fn finish(mut self) {
        drop(self.stdin.take());
        for _ in 0..200 {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "notabene mcp ended with {status}");
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        panic!("notabene mcp did not end when its stdin closed");
    }
}

fn initialize() -> Value {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": { "name": "raw", "version": "0" }
        }
    })
}

#[track_caller]
fn assert_error(v: &Value, code: i64, message_has: &str) {
    assert_eq!(v["jsonrpc"], "2.0", "{v}");
    assert_eq!(v["id"], Value::Null, "{v}");
    assert_eq!(v["error"]["code"], code, "{v}");
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(message_has), "{v}");
}

#[test]
fn a_line_that_is_not_json_gets_a_parse_error_and_the_server_serves_on() {
    let mut s = Server::start();
    s.send(b"this is not json\n");
    assert_error(
        &s.answer("a line that is not JSON"),
        -32700,
        "notabene: the message is not JSON: expected ident at line 1 column 2 (stdin)",
    );
    s.send_json(&initialize());
    let init = s.answer("initialize");
    assert_eq!(init["id"], 1, "{init}");
    assert_eq!(init["result"]["serverInfo"]["name"], "notabene", "{init}");
    s.send_json(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    s.send(b"{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": \n");
    assert_error(&s.answer("a cut message"), -32700, "EOF while parsing");
    s.send_json(&json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/list" }));
    let tools = s.answer("tools/list");
    assert_eq!(tools["id"], 3, "{tools}");
    assert!(
        tools["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{tools}"
    );
    s.finish();
}

#[test]
fn a_line_over_the_cap_gets_an_error_is_skipped_and_the_server_serves_on() {
    let mut s = Server::start();
    s.send_json(&initialize());
    assert_eq!(s.answer("initialize")["id"], 1);
    s.send_json(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    // Over rmcp's own 16 MiB line cap too, a request all the same.
    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"params\":{{\"pad\":\"{}\"}}}}\n",
        "x".repeat((16 << 20) + 16)
    );
    s.send(big.as_bytes());
    drop(big);
    assert_error(
        &s.answer("a line over the cap"),
        -32600,
        "notabene: the message is over 8 MiB; it was skipped (stdin)",
    );
    s.send_json(&json!({ "jsonrpc": "2.0", "id": 3, "method": "ping" }));
    let pong = s.answer("ping");
    assert_eq!(
        (pong["id"].clone(), pong["result"].clone()),
        (json!(3), json!({})),
        "{pong}"
    );
    s.finish();
}
