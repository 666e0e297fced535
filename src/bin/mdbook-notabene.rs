//! `mdbook-notabene`: the mdBook plugin binary. With no arguments it speaks mdBook's preprocessor
//! (or renderer) protocol on stdin/stdout; with a subcommand it is the agent CLI.
//!
//! The protocol dispatch lives here; the work on a book is the library's (`output::annotate::run_with`,
//! `output::render::render_input`). Its error lines go through `notabene_core::term` (escaped for the terminal); the
//! book on stdout is raw JSON.

use mdbook_notabene::model::book::config::{SUPPORTED_MDBOOK, check_mdbook_version};
use mdbook_preprocessor::PreprocessorContext;
use mdbook_preprocessor::book::Book as MdBook;
use notabene_core::term::err_line;
use std::io::{IsTerminal, Read, Write};

/// mimalloc: builds make millions of short-lived allocations (see `Cargo.toml`).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    if std::env::args_os().len() == 1 {
        exit_without_teardown(protocol());
    }
    std::process::exit(mdbook_notabene::apps::cli::run(std::env::args_os()));
}

/// Ends a protocol run: stdout and stderr flushed, then the process ends at once. mdBook waits
/// for the process to end, and a big build's exit handlers (the allocator handing every page
/// back to the system) cost milliseconds; nothing of this run needs them: the book is written
/// and flushed, and every file a build writes is in place (renamed) before the book is.
fn exit_without_teardown(code: i32) -> ! {
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    #[cfg(unix)]
    // SAFETY: `_exit` takes no pointer and ends the process; what it skips (the exit handlers:
    // Rust's stdout buffer, flushed above, and the allocator's release of its memory) leaves no
    // file or output unfinished.
    unsafe {
        libc::_exit(code)
    }
    #[cfg(not(unix))]
    std::process::exit(code)
}

/// The first byte of `input` that is not whitespace: `{` for a renderer's context, `[` for a
/// preprocessor's `[context, book]`.
fn first_byte(input: &[u8]) -> Option<u8> {
    input.iter().copied().find(|b| !b.is_ascii_whitespace())
}

/// The preprocessor (or renderer) protocol on stdin/stdout. Returns the exit code.
fn protocol() -> i32 {
    if std::io::stdin().is_terminal() {
        return mdbook_notabene::apps::cli::run(["mdbook-notabene", "--help"]);
    }
    // mdBook runs a preprocessor in the book's root and writes the book to it slowly (in
    // many small writes): the store is read meanwhile.
    let start = std::time::Instant::now();
    let ahead = std::thread::Builder::new()
        .name("notabene-prefetch".into())
        .spawn(|| {
            let read = std::env::current_dir()
                .ok()
                .and_then(|dir| mdbook_notabene::output::annotate::prefetch(&dir));
            (read, std::time::Instant::now())
        })
        .ok();
    // mdBook writes the input in one small write per JSON token: read in gathered batches.
    // A renderer gets one object (the RenderContext), a preprocessor a `[context, book]`
    // array: the first byte tells them apart without parsing the book twice. A book is read
    // whole, unless the read-ahead is done first: the rest is then parsed as it arrives, on a
    // core that would otherwise wait.
    let mut stdin = mdbook_notabene::util::pipe::stdin_reader();
    let mut input = Vec::new();
    let mut chunk = vec![0u8; mdbook_notabene::util::pipe::READ_SIZE];
    let mut streamed = None;
    loop {
        match stdin.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => input.extend_from_slice(&chunk[..n]),
            Err(e) => {
                err_line(&format!("notabene: cannot read stdin: {e} (stdin)"));
                return 1;
            }
        }
        if first_byte(&input) == Some(b'[') && ahead.as_ref().is_none_or(|h| h.is_finished()) {
            streamed = Some(stdin);
            break;
        }
    }
    if streamed.is_none() && first_byte(&input) == Some(b'{') {
        return match mdbook_notabene::output::render::render_input(&input) {
            Ok(()) => 0,
            Err(e) => {
                err_line(&format!("notabene: {e}"));
                1
            }
        };
    }
    // What `mdbook_preprocessor::parse_input` reads, parsed from the bytes in hand (its
    // reader-based parse takes a few times as long on a big book) or as they arrive, and
    // refused in its words.
    let parsed: serde_json::Result<(PreprocessorContext, MdBook)> = match streamed {
        Some(rest) => serde_json::from_reader(std::io::BufReader::with_capacity(
            1 << 16,
            std::io::Cursor::new(input).chain(rest),
        )),
        None => serde_json::from_slice(&input),
    };
    let (ctx, book) = match parsed {
        Ok(x) => x,
        Err(e) => {
            err_line(&format!(
                "notabene: cannot read mdBook's input: Unable to parse the input: {e} — mdbook-notabene supports mdBook {SUPPORTED_MDBOOK} (stdin)"
            ));
            return 1;
        }
    };
    check_mdbook_version(&ctx.mdbook_version);
    // The read-ahead is waited for only when this run reads the store; otherwise the
    // process exits with it unfinished.
    let prefetched = if mdbook_notabene::output::annotate::reads_store(&ctx) {
        let parsed = std::time::Instant::now();
        let (read, done) = ahead.and_then(|h| h.join().ok()).unzip();
        if std::env::var_os("NOTABENE_TIMINGS").is_some()
            && let Some(done) = done
        {
            // How much of the store read the handover hid: what is waited for after the
            // book is parsed is not hidden.
            let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
            err_line(&format!(
                "notabene: timings (ms): the book read and parsed at {:.1}, the store read ahead at {:.1}, waited {:.1}",
                ms(parsed - start),
                ms(done - start),
                ms(done.saturating_duration_since(parsed))
            ));
        }
        read.flatten()
    } else {
        None
    };
    match mdbook_notabene::output::annotate::run_with(&ctx, book, prefetched) {
        Ok(book) => {
            // Stdout is line-buffered and JSON has no newlines: buffer the book ourselves.
            let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            if serde_json::to_writer(&mut out, &book)
                .and_then(|()| out.flush().map_err(serde_json::Error::io))
                .is_err()
            {
                err_line("notabene: cannot write the book to stdout (stdout)");
                return 1;
            }
            0
        }
        // The same line the embedded engine's build prints (`notabene: build failed: …`),
        // the one a CI log is searched for.
        Err(e) => {
            err_line(&format!("notabene: build failed: {e}"));
            1
        }
    }
}
