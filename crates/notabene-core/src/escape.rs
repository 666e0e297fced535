//! Escaping for what the notabene crates write into HTML — text and attribute values, and JSON inside a
//! `<script>` element — and onto a terminal. Comment text is untrusted: everything that reaches
//! markup, and every human-readable line of stored text (through [`crate::term`]), goes through here.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Escapes text for an HTML attribute or element content.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Escapes JSON so it can sit inside `<script>`: `<`, `>`, `&`, U+2028 and U+2029 become
/// `\uXXXX` escapes (still the same JSON value).
pub fn escape_script_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + json.len() / 16);
    let mut last = 0;
    for (i, c) in json.char_indices() {
        let esc = match c {
            '<' => "\\u003c",
            '>' => "\\u003e",
            '&' => "\\u0026",
            '\u{2028}' => "\\u2028",
            '\u{2029}' => "\\u2029",
            _ => continue,
        };
        out.push_str(&json[last..i]);
        out.push_str(esc);
        last = i + c.len_utf8();
    }
    out.push_str(&json[last..]);
    out
}

/// Whether `c` must not reach a terminal as it is: a C0 control (tab, newline and CR
/// included), DEL, a C1 control, or a bidi control — the embeddings and overrides
/// U+202A–U+202E, the isolates U+2066–U+2069, and the marks U+200E, U+200F and U+061C.
fn is_terminal_control(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}'
        | '\u{200e}'
        | '\u{200f}'
        | '\u{61c}')
}

/// Escapes one line of text for a terminal: every character that could drive it (ESC starting
/// an OSC 52 clipboard write or a CSI screen clear, BEL, a CR overwriting the line, a newline
/// forging another line) or reorder what is shown (bidi controls) becomes `\u{…}`, its code
/// point in lowercase hex as Rust writes it (`\u{1b}`). The characters escaped are every C0
/// control (tab and newline included), DEL, every C1 control, U+202A–U+202E, U+2066–U+2069,
/// U+200E, U+200F and U+061C; everything else, `\` included, is kept. Borrowed when there is
/// nothing to escape.
pub fn escape_terminal(s: &str) -> Cow<'_, str> {
    let Some(first) = s.find(is_terminal_control) else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len() + 8);
    out.push_str(&s[..first]);
    for c in s[first..].chars() {
        if is_terminal_control(c) {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn terminal_escapes_every_c0_control_and_del() {
        let all: String = ('\u{0}'..='\u{1f}').chain(['\u{7f}']).collect();
        let expected: String = (0..=0x1f_u32)
            .chain([0x7f])
            .map(|n| format!("\\u{{{n:x}}}"))
            .collect();
        assert_eq!(escape_terminal(&all), expected);
        // The ones a terminal acts on, one by one.
        assert_eq!(escape_terminal("\u{1b}"), "\\u{1b}");
        assert_eq!(escape_terminal("\u{7}"), "\\u{7}");
        assert_eq!(escape_terminal("a\rb"), "a\\u{d}b");
        assert_eq!(escape_terminal("a\nb"), "a\\u{a}b");
        assert_eq!(escape_terminal("a\tb"), "a\\u{9}b");
        assert_eq!(escape_terminal("\u{0}"), "\\u{0}");
    }

    #[test]
    fn terminal_escapes_every_c1_control() {
        for n in 0x80..=0x9f_u32 {
            let c = char::from_u32(n).unwrap();
            assert_eq!(
                escape_terminal(&format!("x{c}y")),
                format!("x\\u{{{n:x}}}y")
            );
        }
        // Not the first characters after them.
        assert_eq!(escape_terminal("\u{a0}é"), "\u{a0}é");
    }

    #[test]
    fn terminal_escapes_bidi_controls() {
        let cases = [
            ('\u{202a}', "202a"),
            ('\u{202b}', "202b"),
            ('\u{202c}', "202c"),
            ('\u{202d}', "202d"),
            ('\u{202e}', "202e"),
            ('\u{2066}', "2066"),
            ('\u{2067}', "2067"),
            ('\u{2068}', "2068"),
            ('\u{2069}', "2069"),
            ('\u{200e}', "200e"),
            ('\u{200f}', "200f"),
            ('\u{61c}', "61c"),
        ];
        for (c, hex) in cases {
            assert_eq!(
                escape_terminal(&format!("a{c}b")),
                format!("a\\u{{{hex}}}b")
            );
        }
        // Their neighbours are ordinary text.
        for c in [
            '\u{2029}', '\u{202f}', '\u{2065}', '\u{206a}', '\u{200d}', '\u{61b}',
        ] {
            assert_eq!(escape_terminal(&c.to_string()), c.to_string());
        }
    }

    #[test]
    fn terminal_sequences_lose_their_escape() {
        // OSC 52 (clipboard), OSC 0 (window title), CSI 2J (clear screen).
        assert_eq!(
            escape_terminal("\u{1b}]52;c;aGk=\u{7}"),
            "\\u{1b}]52;c;aGk=\\u{7}"
        );
        assert_eq!(
            escape_terminal("\u{1b}]0;pwned\u{1b}\\"),
            "\\u{1b}]0;pwned\\u{1b}\\"
        );
        assert_eq!(escape_terminal("\u{1b}[2J"), "\\u{1b}[2J");
        assert_eq!(escape_terminal("\u{9b}2J"), "\\u{9b}2J");
    }

    #[test]
    fn terminal_keeps_ordinary_text_borrowed() {
        let s = "café — 日本語 🎉 « raw × k » \\u{1b} \u{2028}";
        assert!(matches!(escape_terminal(s), Cow::Borrowed(t) if t == s));
        assert!(matches!(escape_terminal(""), Cow::Borrowed("")));
    }
}
