//! The line layer between `notabene mcp`'s stdin/stdout and rmcp's transport, so that every
//! line a client sends gets an answer: rmcp drops a line that does not parse as JSON, and one
//! over its own cap (16 MiB), without a word, and the client waits forever.
//!
//! A reading task frames stdin into lines of at most [`MAX_MCP_MESSAGE`] bytes (never buffering
//! more) and passes each line that parses as JSON to rmcp, through an in-memory pipe; a line
//! that does not parse is answered with a JSON-RPC parse error (`-32700`, id `null`), a line
//! over the cap with an invalid-request error (`-32600`, id `null`), and both are skipped; blank
//! lines are skipped, as rmcp skips them. What rmcp writes is cut into whole lines and queued,
//! with those errors, for one writing task, the only writer of stdout: lines never interleave.
//!
//! Owns: the framing of stdin, the cap on a message, the errors for lines rmcp would drop, the
//! one writer of stdout.
//! Calls: tokio (tasks, pipe, channel); `ops::limits` for the cap.

use crate::apps::ops::limits::MAX_MCP_MESSAGE;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// JSON-RPC's code for a message that is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's code for a message that is not a valid request (here: over the cap).
pub const INVALID_REQUEST: i64 = -32600;

/// The transport rmcp serves on, and the writing task to wait for once it has stopped.
pub struct Lines {
    /// What rmcp reads: the lines of stdin that parse as JSON.
    pub read: DuplexStream,
    /// What rmcp writes: queued, line by line, for the writing task.
    pub write: LineSink,
    /// The writing task: done when everything queued is written (after rmcp and the reading
    /// task have dropped their ends).
    pub writer: JoinHandle<()>,
}

/// Starts the reading and writing tasks on `input` and `output` (stdin and stdout), lines
/// capped at `max` bytes. Call inside a tokio runtime.
pub fn start<R, W>(input: R, output: W, max: usize) -> Lines
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    tokio::spawn(read_lines(input, ours, tx.clone(), max));
    let writer = tokio::spawn(write_lines(output, rx));
    Lines {
        read: theirs,
        write: LineSink {
            tx,
            partial: Vec::new(),
        },
        writer,
    }
}

/// [`start`] on the process's stdin and stdout, at [`MAX_MCP_MESSAGE`].
pub fn stdio() -> Lines {
    start(tokio::io::stdin(), tokio::io::stdout(), MAX_MCP_MESSAGE)
}

/// The one writer of the output: each queued chunk (whole lines) written, flushed when the
/// queue is empty. Ends when every sender is gone, or the output is closed.
async fn write_lines<W: AsyncWrite + Unpin>(mut out: W, mut rx: mpsc::UnboundedReceiver<Vec<u8>>) {
    while let Some(chunk) = rx.recv().await {
        if out.write_all(&chunk).await.is_err() {
            return;
        }
        if rx.is_empty() && out.flush().await.is_err() {
            return;
        }
    }
    let _ = out.flush().await;
}

/// What reading one line gave.
enum Line {
    /// A whole line (its newline removed) in the buffer.
    Whole,
    /// A line over the cap, skipped to its end.
    Over,
    /// The end of the input (a last line without a newline is dropped, as rmcp drops it).
    End,
}

/// Reads one line into `buf` (cleared first), never holding more than `max` bytes of it.
async fn next_line<R: AsyncRead + Unpin>(
    input: &mut BufReader<R>,
    buf: &mut Vec<u8>,
    max: usize,
) -> Line {
    buf.clear();
    let mut over = false;
    loop {
        let (used, done) = {
            let Ok(available) = input.fill_buf().await else {
                return Line::End;
            };
            if available.is_empty() {
                return Line::End;
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let body = newline.map_or(take, |i| i);
            if !over && buf.len() + body <= max {
                buf.extend_from_slice(&available[..body]);
            } else {
                over = true;
                buf.clear();
            }
            (take, newline.is_some())
        };
        input.consume(used);
        if done {
            return if over { Line::Over } else { Line::Whole };
        }
    }
}

/// The reading task: frames `input` into lines, passes those that parse to rmcp (`to_rmcp`),
/// answers the others on `out`. Ends at the end of the input, or when rmcp stops reading;
/// dropping `to_rmcp` then tells rmcp the input is over.
async fn read_lines<R: AsyncRead + Unpin>(
    input: R,
    mut to_rmcp: DuplexStream,
    out: mpsc::UnboundedSender<Vec<u8>>,
    max: usize,
) {
    let mut input = BufReader::with_capacity(64 * 1024, input);
    let mut buf = Vec::new();
    loop {
        match next_line(&mut input, &mut buf, max).await {
            Line::End => return,
            Line::Over => {
                let _ = out.send(error_line(
                    INVALID_REQUEST,
                    &format!(
                        "notabene: the message is over {}; it was skipped (stdin)",
                        size_words(max)
                    ),
                ));
            }
            Line::Whole => {
                let line = buf.strip_suffix(b"\r").unwrap_or(&buf);
                let json = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
                if json.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(json) {
                    let _ = out.send(error_line(
                        PARSE_ERROR,
                        &format!("notabene: the message is not JSON: {e} (stdin)"),
                    ));
                    continue;
                }
                let mut whole = Vec::with_capacity(line.len() + 1);
                whole.extend_from_slice(line);
                whole.push(b'\n');
                if to_rmcp.write_all(&whole).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// `8 MiB`, or bytes.
fn size_words(n: usize) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else {
        format!("{n} bytes")
    }
}

/// A JSON-RPC error response without an id, as one line.
fn error_line(code: i64, message: &str) -> Vec<u8> {
    let v = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": code, "message": message },
    });
    let mut line = v.to_string().into_bytes();
    line.push(b'\n');
    line
}

/// What rmcp writes to: its bytes cut into whole lines, each queued for the writing task as
/// soon as its newline is written (rmcp writes one JSON message per line).
pub struct LineSink {
    tx: mpsc::UnboundedSender<Vec<u8>>,
    partial: Vec<u8>,
}

impl AsyncWrite for LineSink {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = &mut *self;
        this.partial.extend_from_slice(data);
        if let Some(last) = this.partial.iter().rposition(|&b| b == b'\n') {
            let rest = this.partial.split_off(last + 1);
            let lines = std::mem::replace(&mut this.partial, rest);
            if this.tx.send(lines).is_err() {
                return Poll::Ready(Err(std::io::ErrorKind::BrokenPipe.into()));
            }
        }
        Poll::Ready(Ok(data.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let rest = std::mem::take(&mut self.partial);
        if !rest.is_empty() {
            let _ = self.tx.send(rest);
        }
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    /// Feeds `input` through the layer with an echo in rmcp's place (each line it gets, written
    /// back); returns everything written out.
    async fn through(input: &'static [u8], max: usize) -> String {
        let (mut client, server_in) = tokio::io::duplex(1 << 20);
        let (server_out, mut client_out) = tokio::io::duplex(1 << 20);
        let Lines {
            mut read,
            mut write,
            writer,
        } = start(server_in, server_out, max);
        client.write_all(input).await.unwrap();
        drop(client);
        let mut got = Vec::new();
        read.read_to_end(&mut got).await.unwrap();
        // Written back in two pieces, as a framed writer may.
        let (a, b) = got.split_at(got.len() / 2);
        write.write_all(a).await.unwrap();
        write.write_all(b).await.unwrap();
        drop(write);
        writer.await.unwrap();
        let mut out = String::new();
        client_out.read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn bad_and_oversized_lines_are_answered_and_the_rest_passes_through() {
        let out = through(
            b"{\"a\":1}\r\n\n  \nnot json\n\xEF\xBB\xBF[2]\n{\"big\":\"xxxxxxxxxxxxxxxxxxxxxxxx\"}\n{\"b\":3}\n{\"cut\":",
            24,
        )
        .await;
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines,
            [
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"notabene: the message is not JSON: expected ident at line 1 column 2 (stdin)"}}"#,
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"notabene: the message is over 24 bytes; it was skipped (stdin)"}}"#,
                r#"{"a":1}"#,
                "\u{feff}[2]",
                r#"{"b":3}"#,
            ]
        );
    }
}
