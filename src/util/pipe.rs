//! Reading a whole input that arrives through a pipe in many small writes. mdBook writes the
//! book to a preprocessor's (or renderer's) stdin unbuffered, one `write` per JSON token:
//! hundreds of thousands of writes for a big book. A reader blocked in `read` is woken by every
//! one of them, and that ping-pong, not the copying, is most of what the handover costs. So
//! the pipe is widened (Linux `F_SETPIPE_SZ`, 1 MiB: mdBook never waits for room) and, after a
//! short read, the reader pauses a millisecond while the writes gather, instead of waiting in
//! `read` for the next one.
//!
//! Layer 0. May call: the standard library and `libc`.

use std::io::{ErrorKind, Read};
use std::time::Duration;

/// A read that returns less than this is followed by a pause.
const FULL_READ: usize = 256 * 1024;
/// How long the writes gather after a short read.
const PAUSE: Duration = Duration::from_millis(1);
/// The pipe size asked for (Linux's default ceiling for unprivileged processes).
const PIPE_SIZE: libc::c_int = 1 << 20;
/// Bytes read at a time.
const CHUNK: usize = 1 << 20;

/// Reads all of stdin ([`read_gathered`]), first widening it when it is a pipe (Linux).
pub fn read_stdin() -> std::io::Result<Vec<u8>> {
    #[cfg(target_os = "linux")]
    // SAFETY: fcntl on fd 0 with an integer argument has no memory effects; on anything but a
    // pipe it fails with EBADF or EINVAL, which is ignored (the read works the same).
    unsafe {
        libc::fcntl(0, libc::F_SETPIPE_SZ, PIPE_SIZE);
    }
    read_gathered(&mut std::io::stdin().lock())
}

/// Reads `r` to its end, pausing [`PAUSE`] after every read shorter than [`FULL_READ`] so that
/// a writer making many small writes is not met by a waiting reader at each of them. The bytes
/// are those of `read_to_end`; only the timing of the reads differs.
pub fn read_gathered(r: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let mut out: Vec<u8> = Vec::new();
    loop {
        let len = out.len();
        out.resize(len + CHUNK, 0);
        let read = r.read(&mut out[len..]);
        out.truncate(len + *read.as_ref().unwrap_or(&0));
        match read {
            Ok(0) => return Ok(out),
            Ok(n) if n < FULL_READ => std::thread::sleep(PAUSE),
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        assert_eq!(read_gathered(&mut r).unwrap(), data);
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
        let got = read_gathered(&mut reader).unwrap();
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
        let e = read_gathered(&mut Broken).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BrokenPipe);
    }
}
