//! Escaping for what the crate writes into HTML: text and attribute values, and JSON inside a
//! `<script>` element. Comment text is untrusted: everything that reaches markup goes through
//! here. May call: the standard library only.

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
