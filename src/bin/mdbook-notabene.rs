//! `mdbook-notabene`: the mdBook plugin binary. With no arguments it speaks mdBook's preprocessor
//! (or renderer) protocol on stdin/stdout; with a subcommand it is the agent CLI.
//!
//! The protocol dispatch lives here; the work on a book is the library's (`output::annotate::run_with`,
//! `output::render::render_input`). Its error lines go through `notabene_core::term` (escaped for the terminal); the
//! book on stdout is raw JSON.

use mdbook_notabene::model::book::config::{SUPPORTED_MDBOOK, check_mdbook_version};
use mdbook_notabene::model::book::git::DiffStateKept;
use mdbook_notabene::output::reuse::replay::{
    self, DigestingReader, InputDigest, RecordHead, Recorded,
};
use mdbook_notabene::util::memo::Digest;
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

/// The run's context alone, parsed from the start of a preprocessor's input (`[context,
/// book]`) without the book.
fn context_of(input: &[u8]) -> Option<PreprocessorContext> {
    use serde::Deserialize;
    let start = input.iter().position(|&b| b == b'[')? + 1;
    let mut de = serde_json::Deserializer::from_slice(&input[start..]);
    PreprocessorContext::deserialize(&mut de).ok()
}

/// The preprocessor (or renderer) protocol on stdin/stdout. Returns the exit code.
fn protocol() -> i32 {
    if std::io::stdin().is_terminal() {
        return mdbook_notabene::apps::cli::run(["mdbook-notabene", "--help"]);
    }
    // What this run prints is kept with its output, for a later run to replay.
    notabene_core::term::record_stderr();
    // mdBook runs a preprocessor in the book's root and writes the book to it slowly (in
    // many small writes): the store is read meanwhile, and once it is listed the read-ahead
    // tells whether the last build read what this one would (its record, if so).
    let start = std::time::Instant::now();
    let (tell, heard) = std::sync::mpsc::channel();
    let (send_input, input_digest) = std::sync::mpsc::channel();
    let ahead = std::thread::Builder::new()
        .name("notabene-prefetch".into())
        .spawn(move || {
            let read = std::env::current_dir().ok().and_then(|dir| {
                mdbook_notabene::output::annotate::prefetch(&dir, input_digest, move |recorded| {
                    let _ = tell.send(recorded);
                })
            });
            (read, std::time::Instant::now())
        })
        .ok();
    // mdBook writes the input in one small write per JSON token: read in gathered batches.
    // A renderer gets one object (the RenderContext), a preprocessor a `[context, book]`
    // array: the first byte tells them apart without parsing the book twice. A book is read
    // whole, unless the read-ahead is done first with no record to replay: the rest is then
    // parsed as it arrives, on a core that would otherwise wait.
    let mut stdin = mdbook_notabene::util::pipe::stdin_reader();
    let mut input = Vec::new();
    let mut digest = InputDigest::default();
    let mut chunk = vec![0u8; mdbook_notabene::util::pipe::READ_SIZE];
    let mut streamed = None;
    // What the read-ahead told (`None`: not yet).
    let mut told: Option<Option<Recorded>> = None;
    loop {
        match stdin.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                input.extend_from_slice(&chunk[..n]);
                digest.update(&chunk[..n]);
            }
            Err(e) => {
                err_line(&format!("notabene: cannot read stdin: {e} (stdin)"));
                return 1;
            }
        }
        if first_byte(&input) == Some(b'[') && ahead.as_ref().is_none_or(|h| h.is_finished()) {
            // The read-ahead is over: what it had to tell is told.
            if told
                .get_or_insert_with(|| heard.try_recv().ok().flatten())
                .is_none()
            {
                streamed = Some(stdin);
                break;
            }
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
    // The digest of the whole input, once it is in hand.
    let mut whole = None;
    if streamed.is_none() {
        // The whole input in hand: the last build's output is written again when it was the
        // build of these bytes and nothing else it read has changed. (A run that does not read
        // the store does not wait for the read-ahead to tell.)
        let input_digest = std::mem::take(&mut digest).finish();
        let _ = send_input.send(input_digest);
        let recorded = match told {
            Some(told) => told,
            None if context_of(&input)
                .is_some_and(|ctx| mdbook_notabene::output::annotate::reads_store(&ctx)) =>
            {
                heard.recv().ok().flatten()
            }
            None => None,
        };
        if let Some(recorded) = recorded
            && recorded.answers(&input_digest)
        {
            return match recorded.replay(&mut std::io::stdout().lock()) {
                Ok(()) => 0,
                Err(_) => {
                    err_line("notabene: cannot write the book to stdout (stdout)");
                    1
                }
            };
        }
        whole = Some(input_digest);
    }
    drop(send_input);
    // What `mdbook_preprocessor::parse_input` reads, parsed from the bytes in hand (its
    // reader-based parse takes a few times as long on a big book) or as they arrive, and
    // refused in its words.
    let parsed: serde_json::Result<(PreprocessorContext, MdBook)> = match streamed {
        Some(rest) => serde_json::from_reader(std::io::BufReader::with_capacity(
            1 << 16,
            std::io::Cursor::new(input).chain(DigestingReader {
                inner: rest,
                digest: &mut digest,
            }),
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
    let mut prefetched = if mdbook_notabene::output::annotate::reads_store(&ctx) {
        let parsed = std::time::Instant::now();
        let (read, done) = ahead.and_then(|h| h.join().ok()).unzip();
        if std::env::var_os("NOTABENE_TIMINGS").is_some()
            && let Some(done) = done
        {
            // How much of the store read the handover hid: what is waited for after the
            // book is parsed is not hidden.
            let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
            notabene_core::term::err_line_unrecorded(&format!(
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
    // The record is kept under the read-ahead's fingerprint, when it was this run's, with
    // the state of git's diffs if the build asks for any.
    let keep_as = prefetched.as_ref().and_then(|p| {
        let fingerprint = mdbook_notabene::output::annotate::fingerprint_of(p, &ctx)?;
        Some((p.root.clone(), fingerprint, p.repo.kept_diff_state()))
    });
    let input = whole.unwrap_or_else(|| digest.finish());
    // The store's cache, brought up to date by the read, is written while the build runs.
    let cache_update = prefetched.as_mut().and_then(|p| p.cache_update.take());
    std::thread::scope(|scope| {
        if let Some(update) = cache_update {
            scope.spawn(|| update.write());
        }
        build_and_answer(&ctx, book, prefetched, keep_as, &input)
    })
}

/// The build of the book of `ctx`, its book written to stdout (and kept, under `keep_as`,
/// with what the run printed, for a later run to replay). Returns the exit code.
fn build_and_answer(
    ctx: &PreprocessorContext,
    book: MdBook,
    prefetched: Option<mdbook_notabene::output::annotate::Prefetched>,
    keep_as: Option<(std::path::PathBuf, Digest, Option<DiffStateKept>)>,
    input: &Digest,
) -> i32 {
    match mdbook_notabene::output::annotate::run_with(ctx, book, prefetched) {
        Ok(book) => {
            let Ok(bytes) = book_json(&book) else {
                err_line("notabene: cannot write the book to stdout (stdout)");
                return 1;
            };
            let stderr = notabene_core::term::take_stderr_record();
            // The record is written while mdBook reads the book.
            std::thread::scope(|scope| {
                if let (Some((root, base, kept)), Some(stderr)) = (&keep_as, &stderr) {
                    let diffs = kept.as_ref().and_then(DiffStateKept::get);
                    let head = RecordHead {
                        fingerprint: replay::complete(*base, diffs),
                        input: *input,
                        diffs: diffs.is_some(),
                    };
                    let bytes = &bytes;
                    scope.spawn(move || Recorded::keep(root, &head, stderr, bytes));
                }
                let mut out = std::io::stdout().lock();
                if out.write_all(&bytes).and_then(|()| out.flush()).is_err() {
                    err_line("notabene: cannot write the book to stdout (stdout)");
                    return 1;
                }
                0
            })
        }
        // The same line the embedded engine's build prints (`notabene: build failed: …`),
        // the one a CI log is searched for.
        Err(e) => {
            err_line(&format!("notabene: build failed: {e}"));
            1
        }
    }
}

/// `book` as JSON, as `serde_json::to_vec` writes it, its top-level items written on every
/// thread (a big book's chapters carry megabytes of markers and data, and mdBook waits).
fn book_json(book: &MdBook) -> serde_json::Result<Vec<u8>> {
    // The book's other fields, if it ever has any, as serde writes them around its items.
    let shell = serde_json::to_vec(&MdBook::new())?;
    let empty = b"\"items\":[]";
    let Some(at) = (shell.windows(empty.len())).position(|w| w == empty) else {
        return serde_json::to_vec(book);
    };
    let threads = notabene_core::par::default_threads();
    let items = notabene_core::par::par_map(&book.items, threads, serde_json::to_vec);
    let (open, close) = shell.split_at(at + empty.len() - 1);
    let mut out = Vec::with_capacity(
        shell.len() + items.iter().flatten().map(Vec::len).sum::<usize>() + items.len(),
    );
    out.extend_from_slice(open);
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(&item?);
    }
    out.extend_from_slice(close);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mdbook_preprocessor::book::{BookItem, Chapter};

    /// Written item by item, the book's JSON is serde's own.
    #[test]
    fn the_book_is_written_as_serde_writes_it() {
        let chapter = |n: usize| {
            let mut ch = Chapter::new(
                &format!("C{n} \"é\""),
                format!("# {n}\n<b>\u{2028}"),
                format!("c{n}.md"),
                vec![],
            );
            ch.sub_items = vec![BookItem::Separator];
            BookItem::Chapter(ch)
        };
        for n in [0, 1, 2, 7] {
            let book = MdBook::new_with_items((0..n).map(chapter).collect());
            assert_eq!(
                book_json(&book).unwrap(),
                serde_json::to_vec(&book).unwrap(),
                "{n}"
            );
        }
    }
}
