//! The HTTP/1.1 transport of `serve`: one thread and one request per connection
//! (`Connection: close`), on `std::net` only.
//!
//! It replaces tiny_http 0.12, whose connection pool can leave a connection unserved: a
//! keep-alive connection holds a pool thread until the browser closes it, and the pool counts
//! its idle threads before the ones it just woke update that count, so when a page load opens
//! a burst of connections (a browser opens up to six at once) one of them can wait in the
//! queue, unread, until some keep-alive connection closes — minutes later; the page never
//! finishes loading.
//!
//! Part of the serve layer (9); standard library only.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::time::Duration;

/// Largest accepted request head (request line and headers).
const MAX_HEAD: usize = 64 * 1024;

/// A listening socket.
pub struct Server {
    listener: TcpListener,
}

impl Server {
    /// Binds `(host, port)` (port 0: any free port).
    pub fn http(addr: (&str, u16)) -> io::Result<Server> {
        Ok(Server {
            listener: TcpListener::bind(addr)?,
        })
    }

    /// The bound port.
    pub fn port(&self) -> u16 {
        self.listener.local_addr().map(|a| a.port()).unwrap_or(0)
    }

    /// Accepted connections, forever.
    pub fn incoming(&self) -> impl Iterator<Item = TcpStream> + '_ {
        self.listener.incoming().filter_map(Result::ok)
    }
}

/// One request: its head, and its body still on the socket.
pub struct Request {
    method: String,
    url: String,
    headers: Vec<(String, String)>,
    body_length: Option<usize>,
    expect_continue: bool,
    body: io::Take<BufReader<TcpStream>>,
    out: TcpStream,
}

fn reason(code: u16) -> &'static str {
    match code {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        304 => "Not Modified",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        411 => "Length Required",
        413 => "Payload Too Large",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        _ => "",
    }
}

impl Request {
    /// Reads the head of the request on a new connection. Malformed requests are answered
    /// here (400, 411, 431, 501) and give `None`, as does a connection closed before a request.
    pub fn read(stream: TcpStream) -> Option<Request> {
        let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
        let _ = stream.set_write_timeout(Some(Duration::from_secs(30)));
        let _ = stream.set_nodelay(true);
        let out = stream.try_clone().ok()?;
        let mut reader = BufReader::new(stream);
        let mut lines: Vec<String> = Vec::new();
        let mut size = 0usize;
        loop {
            let mut line = Vec::new();
            let limit = (MAX_HEAD + 1 - size.min(MAX_HEAD)) as u64;
            let n = (&mut reader)
                .take(limit)
                .read_until(b'\n', &mut line)
                .ok()?;
            if n == 0 {
                return None;
            }
            size += n;
            if size > MAX_HEAD {
                let _ = Response::from_data(b"request head too large".to_vec())
                    .with_status_code(431)
                    .write_to(&out, false);
                return None;
            }
            let text = String::from_utf8_lossy(&line)
                .trim_end_matches(['\r', '\n'])
                .to_string();
            if text.is_empty() {
                if lines.is_empty() {
                    continue; // blank lines before the request line are tolerated
                }
                break;
            }
            lines.push(text);
        }
        let bad = |code: u16, msg: &str| {
            let _ = Response::from_data(msg.as_bytes().to_vec())
                .with_status_code(code)
                .write_to(&out, false);
        };
        let mut first = lines[0].split(' ').filter(|s| !s.is_empty());
        let (Some(method), Some(url), Some(version)) = (first.next(), first.next(), first.next())
        else {
            bad(400, "bad request line");
            return None;
        };
        if !version.starts_with("HTTP/1.") {
            bad(400, "only HTTP/1.x is supported");
            return None;
        }
        let mut headers = Vec::new();
        for l in &lines[1..] {
            let Some((k, v)) = l.split_once(':') else {
                bad(400, "bad header line");
                return None;
            };
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
        let find = |name: &str| {
            headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
        };
        if find("Transfer-Encoding").is_some_and(|v| !v.eq_ignore_ascii_case("identity")) {
            bad(
                411,
                "send a Content-Length (chunked bodies are not supported)",
            );
            return None;
        }
        let body_length = match find("Content-Length") {
            None => None,
            Some(v) => match v.parse::<usize>() {
                Ok(n) => Some(n),
                Err(_) => {
                    bad(400, "bad Content-Length");
                    return None;
                }
            },
        };
        let expect_continue =
            find("Expect").is_some_and(|v| v.eq_ignore_ascii_case("100-continue"));
        let method = method.to_string();
        let url = url.to_string();
        Some(Request {
            method,
            url,
            body: reader.take(body_length.unwrap_or(0) as u64),
            headers,
            body_length,
            expect_continue,
            out,
        })
    }

    /// The method (`GET`, `POST`, …).
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The request target as sent (path and query).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A header's value (case-insensitive name); the first one when repeated.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The declared body length.
    pub fn body_length(&self) -> Option<usize> {
        self.body_length
    }

    /// The body (at most `Content-Length` bytes).
    pub fn as_reader(&mut self) -> &mut dyn Read {
        if self.expect_continue {
            self.expect_continue = false;
            let _ = (&self.out).write_all(b"HTTP/1.1 100 Continue\r\n\r\n");
        }
        &mut self.body
    }

    /// Sends the response and closes the connection.
    pub fn respond(mut self, response: Response) -> io::Result<()> {
        let head_only = self.method.eq_ignore_ascii_case("HEAD");
        let result = response.write_to(&self.out, head_only);
        let _ = self.out.shutdown(Shutdown::Write);
        // Read what the client still sends (an unread body), so that closing does not reset
        // the connection before the client has read the response.
        if !self.expect_continue {
            let _ = self
                .body
                .get_ref()
                .get_ref()
                .set_read_timeout(Some(Duration::from_millis(500)));
            let _ = io::copy(&mut (&mut self.body).take(8 * 1024 * 1024), &mut io::sink());
        }
        result
    }
}

/// A response with its whole body in memory.
pub struct Response {
    code: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Response {
    /// A 200 response with this body.
    pub fn from_data(body: Vec<u8>) -> Response {
        Response {
            code: 200,
            headers: Vec::new(),
            body,
        }
    }

    /// Sets the status code.
    pub fn with_status_code(mut self, code: u16) -> Response {
        self.code = code;
        self
    }

    /// Adds a header (`Content-Length` and `Connection` are set by the transport).
    pub fn with_header(mut self, name: &str, value: &str) -> Response {
        if !name.eq_ignore_ascii_case("Content-Length") && !name.eq_ignore_ascii_case("Connection")
        {
            self.headers.push((name.to_string(), value.to_string()));
        }
        self
    }

    fn write_to(&self, mut out: &TcpStream, head_only: bool) -> io::Result<()> {
        let mut head = format!("HTTP/1.1 {} {}\r\n", self.code, reason(self.code));
        for (k, v) in &self.headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str(&format!(
            "Content-Length: {}\r\nConnection: close\r\n\r\n",
            self.body.len()
        ));
        let mut bytes = head.into_bytes();
        if !head_only {
            bytes.extend_from_slice(&self.body);
        }
        out.write_all(&bytes)?;
        out.flush()
    }
}
