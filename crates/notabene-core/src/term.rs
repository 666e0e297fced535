//! The human-readable output: every line of text meant for a person — listings, reports,
//! warnings, errors — reaches stdout or stderr through here, escaped with [`escape_terminal`], so
//! stored text (comment bodies, authors, sections, pages, journal titles, file names) cannot drive
//! the terminal. A line is one line: a newline inside it is escaped too, so whoever wants several
//! lines hands over several. JSON output and the mdBook protocol are written elsewhere, raw, byte
//! for byte.

use crate::escape::escape_terminal;
use std::io::Write;
use std::sync::Mutex;

/// A copy of what [`err_lines`] wrote since [`record_stderr`], when it was called.
static RECORDED: Mutex<Option<String>> = Mutex::new(None);

/// From now on, keep a copy of every line written to stderr through here: the plugin binary's
/// run records what it printed with the output it may replay (`output::reuse::replay`).
pub fn record_stderr() {
    *RECORDED.lock().unwrap_or_else(|e| e.into_inner()) = Some(String::new());
}

/// What was written to stderr since [`record_stderr`] (`None`: nothing was being recorded);
/// recording stops.
pub fn take_stderr_record() -> Option<String> {
    RECORDED.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// Writes text already rendered by [`render_lines`] to stderr, in one write, unrecorded: a
/// replayed run's lines.
pub fn err_rendered(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
}

/// Writes one line to stderr like [`err_line`], never recorded: a line about this run alone
/// (its timings), which a replay of its output does not repeat.
pub fn err_line_unrecorded(line: &str) {
    err_rendered(&render_lines([line]));
}

/// `lines`, each escaped and ended by a newline, as one string.
pub fn render_lines<S: AsRef<str>>(lines: impl IntoIterator<Item = S>) -> String {
    let mut out = String::new();
    for line in lines {
        out.push_str(&escape_terminal(line.as_ref()));
        out.push('\n');
    }
    out
}

/// Writes `lines` to stdout in one write, each escaped and ended by a newline; a closed pipe
/// (`notabene comments ls | head`) is ignored.
pub fn out_lines<S: AsRef<str>>(lines: impl IntoIterator<Item = S>) {
    let text = render_lines(lines);
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// Writes `lines` to stderr in one write, each escaped and ended by a newline.
pub fn err_lines<S: AsRef<str>>(lines: impl IntoIterator<Item = S>) {
    let text = render_lines(lines);
    err_rendered(&text);
    if let Some(kept) = RECORDED.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        kept.push_str(&text);
    }
}

/// Writes one line to stderr, escaped and ended by a newline (the binaries' errors).
pub fn err_line(line: &str) {
    err_lines([line]);
}

/// Prints one line on stdout, escaped for the terminal ([`out_lines`]).
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::term::out_lines([::std::format!($($arg)*)])
    };
}

/// Prints one line on stderr, escaped for the terminal ([`err_lines`]): warnings and errors.
#[macro_export]
macro_rules! say_err {
    ($($arg:tt)*) => {
        $crate::term::err_lines([::std::format!($($arg)*)])
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn every_line_is_escaped_and_ended() {
        assert_eq!(
            render_lines(["a\u{1b}[2J", "", "b\nc\r", "\u{202e}d"]),
            "a\\u{1b}[2J\n\nb\\u{a}c\\u{d}\n\\u{202e}d\n"
        );
        assert_eq!(render_lines(Vec::<String>::new()), "");
    }
}
