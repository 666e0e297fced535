//! Reading a whole input that arrives through a pipe in many small writes. mdBook writes the book
//! to a preprocessor's (or renderer's) stdin unbuffered, one `write` per JSON token: hundreds of
//! thousands of writes for a big book. A reader blocked in `read` is woken by every one of them. So
//! the pipe is widened (Linux `F_SETPIPE_SZ`, 1 MiB: mdBook rarely waits for room) and, after a
//! short read, the reader pauses a millisecond while the writes gather, instead of waiting in
//! `read` for the next one. Where the pipe cannot be widened (another system, a lower limit, stdin
//! not a pipe) stdin is read plainly, with no pause. The reader ([`stdin_reader`]) can be
//! handed to a parser, which then parses the input as it arrives.

use std::io::{ErrorKind, Read};
use std::time::Duration;

/// How long the writes gather after a short read.
const PAUSE: Duration = Duration::from_millis(1);
/// The pipe size asked for (Linux's default ceiling for unprivileged processes).
const PIPE_SIZE: usize = 1 << 20;
/// A good size for the reads of a [`stdin_reader`] (a widened pipe holds as much).
pub const READ_SIZE: usize = 1 << 20;

/// Stdin, read in gathered batches ([`Gathered`]) when it is a pipe that could be widened to
/// `PIPE_SIZE`, else plainly.
pub fn stdin_reader() -> Gathered<std::io::StdinLock<'static>> {
    let stdin = std::io::stdin().lock();
    // A read shorter than a quarter of the pipe is followed by a pause.
    let full_read = widen_stdin().map_or(0, |size| size / 4);
    Gathered {
        inner: stdin,
        full_read,
        pause: false,
    }
}

/// A reader that, after a read shorter than `full_read` bytes, pauses a millisecond before the
/// next one, so that a writer making many small writes is not met by a waiting reader at each
/// of them (`full_read` 0: no pause). The bytes are the inner reader's; only the timing of the
/// reads differs.
pub struct Gathered<R> {
    inner: R,
    full_read: usize,
    pause: bool,
}

impl<R: Read> Read for Gathered<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if std::mem::take(&mut self.pause) {
            std::thread::sleep(PAUSE);
        }
        loop {
            match self.inner.read(buf) {
                Ok(n) => {
                    // Short of what was asked for (or of `full_read`): the writer is behind.
                    self.pause = n > 0 && n < self.full_read.min(buf.len());
                    return Ok(n);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// Widens stdin's pipe; returns its size when it is at least [`PIPE_SIZE`].
#[cfg(target_os = "linux")]
fn widen_stdin() -> Option<usize> {
    // SAFETY: fcntl on fd 0 with an integer argument has no memory effects; on anything but a
    // pipe, or past the limit, it fails (-1) and stdin is read plainly.
    let size = unsafe { libc::fcntl(0, libc::F_SETPIPE_SZ, PIPE_SIZE as libc::c_int) };
    usize::try_from(size).ok().filter(|&s| s >= PIPE_SIZE)
}

/// Pipes are not widened here: stdin is read plainly.
#[cfg(not(target_os = "linux"))]
fn widen_stdin() -> Option<usize> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `r` to its end through a [`Gathered`] reader pausing after reads shorter than
    /// `full_read` bytes.
    fn read_gathered(r: &mut impl Read, full_read: usize) -> std::io::Result<Vec<u8>> {
        let mut r = Gathered {
            inner: r,
            full_read,
            pause: false,
        };
        let mut out = Vec::new();
        let mut buf = vec![0u8; READ_SIZE];
        loop {
            match r.read(&mut buf)? {
                0 => return Ok(out),
                n => out.extend_from_slice(&buf[..n]),
            }
        }
    }
    use std::io::Write;

    /// A reader handing out its bytes in uneven pieces, with interruptions between them.
    struct Uneven {
        data: Vec<u8>,
        at: usize,
        calls: usize,
    }

    impl Read for Uneven {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.calls += 1;
            if self.calls.is_multiple_of(3) {
                return Err(std::io::Error::new(ErrorKind::Interrupted, "signal"));
            }
            let piece = (self.calls * 7919) % 300_000 + 1;
            let n = piece.min(buf.len()).min(self.data.len() - self.at);
            buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    #[test]
    fn uneven_and_interrupted_reads_give_every_byte_in_order() {
        let data: Vec<u8> = (0..1_500_000u32).map(|i| (i * 31 % 251) as u8).collect();
        let mut r = Uneven {
            data: data.clone(),
            at: 0,
            calls: 0,
        };
        assert_eq!(read_gathered(&mut r, 1 << 18).unwrap(), data);
    }

    #[test]
    fn a_pipe_written_in_many_small_writes_is_read_whole() {
        let (mut reader, mut writer) = std::io::pipe().unwrap();
        let expected: Vec<u8> = (0..40_000u32)
            .flat_map(|i| format!("{{\"k\":{i}}},").into_bytes())
            .collect();
        let sent = expected.clone();
        let w = std::thread::spawn(move || {
            // Token-sized writes, as an unbuffered JSON writer makes them.
            for piece in sent.chunks(5) {
                writer.write_all(piece).unwrap();
            }
        });
        let got = read_gathered(&mut reader, 1 << 18).unwrap();
        w.join().unwrap();
        assert_eq!(got, expected);
    }

    #[test]
    fn an_error_is_returned_not_swallowed() {
        struct Broken;
        impl Read for Broken {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                Err(std::io::Error::new(ErrorKind::BrokenPipe, "gone"))
            }
        }
        let e = read_gathered(&mut Broken, 1 << 18).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BrokenPipe);
    }
}
