//! JSON text exactly as the original notabene writes it: `JSON.stringify(value, null, 2) + "\n"`.
//!
//! serde_json's pretty printer already matches JavaScript for strings, objects, arrays and
//! integers; only floating-point numbers differ (`1.0` vs `1`, `1e21` vs `1e+21`), so a formatter
//! wraps the pretty one and prints numbers the way `Number.prototype.toString` does.

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};
use std::io;

/// Serialises `value` as 2-space indented JSON followed by a newline, byte-compatible with
/// JavaScript's `JSON.stringify(value, null, 2) + "\n"`.
pub fn to_js_pretty<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::with_capacity(256);
    let mut ser = serde_json::Serializer::with_formatter(
        &mut out,
        JsFormatter {
            inner: PrettyFormatter::new(),
        },
    );
    value
        .serialize(&mut ser)
        .expect("serialising a JSON value to memory cannot fail");
    out.push(b'\n');
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// Serialises `value` on one line, numbers written as JavaScript writes them (`JSON.stringify(value)`).
pub fn to_js_compact<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::with_capacity(256);
    write_js_compact(value, &mut out);
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// Appends `value` to `out` as [`to_js_compact`] writes it.
pub fn write_js_compact<T: Serialize + ?Sized>(value: &T, out: &mut Vec<u8>) {
    let mut ser = serde_json::Serializer::with_formatter(
        out,
        JsFormatter {
            inner: CompactFormatter,
        },
    );
    value
        .serialize(&mut ser)
        .expect("serialising a JSON value to memory cannot fail");
}

/// Writes a JSON object member by member (compact, numbers as JavaScript writes them).
pub struct ObjectWriter<'a> {
    out: &'a mut Vec<u8>,
    empty: bool,
}

impl<'a> ObjectWriter<'a> {
    /// Opens an object at the end of `out`.
    pub fn new(out: &'a mut Vec<u8>) -> Self {
        out.push(b'{');
        ObjectWriter { out, empty: true }
    }

    /// Goes on writing an object already opened at the end of `out` (members written:
    /// `!empty`), as a caller's condensed text of a comment may leave it
    /// ([`crate::condense`]).
    pub fn resume(out: &'a mut Vec<u8>, empty: bool) -> Self {
        ObjectWriter { out, empty }
    }

    /// Writes `"key":` and returns the buffer for the value, which the caller must write.
    pub fn key(&mut self, key: &str) -> &mut Vec<u8> {
        if !self.empty {
            self.out.push(b',');
        }
        self.empty = false;
        write_js_compact(key, self.out);
        self.out.push(b':');
        self.out
    }

    /// Writes one member.
    pub fn member<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) {
        let out = self.key(key);
        write_js_compact(value, out);
    }

    /// Closes the object.
    pub fn end(self) {
        self.out.push(b'}');
    }
}

/// Formats a finite `f64` as JavaScript's `Number.prototype.toString` does.
pub(crate) fn js_number(v: f64) -> String {
    if !v.is_finite() {
        // JSON.stringify writes non-finite numbers as null.
        return "null".to_string();
    }
    if v == 0.0 {
        return "0".to_string();
    }
    let abs = v.abs();
    if (1e-6..1e21).contains(&abs) {
        // Rust's Display prints the shortest round-trip decimal without exponent, as JS does
        // in this range ("1", "0.1", "123.456").
        return format!("{v}");
    }
    // Exponent form: Rust gives "1e21" / "1.5e-7", JS gives "1e+21" / "1.5e-7".
    let s = format!("{v:e}");
    match s.split_once('e') {
        Some((mantissa, exp)) if !exp.starts_with('-') => format!("{mantissa}e+{exp}"),
        _ => s,
    }
}

struct JsFormatter<F> {
    inner: F,
}

impl<F: Formatter> Formatter for JsFormatter<F> {
    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        writer.write_all(js_number(value).as_bytes())
    }
    fn write_f32<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f32) -> io::Result<()> {
        self.write_f64(writer, f64::from(value))
    }
    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.begin_array(w)
    }
    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.end_array(w)
    }
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.inner.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.end_array_value(w)
    }
    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.begin_object(w)
    }
    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.end_object(w)
    }
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.inner.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.end_object_value(w)
    }
}

/// The value of `text`, a JSON string: its inside as it is when it holds no escape, else parsed.
pub fn parse_str(text: &str) -> Option<String> {
    let inside = text.strip_prefix('"')?.strip_suffix('"')?;
    if inside.contains(['\\', '"']) {
        serde_json::from_str(text).ok()
    } else {
        Some(inside.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn matches_json_stringify() {
        let v = json!({"a": [], "b": {}, "c": [1, {"d": "é\u{2028}\"\n"}], "e": null, "f": 1.0, "g": 0.5});
        let expected = "{\n  \"a\": [],\n  \"b\": {},\n  \"c\": [\n    1,\n    {\n      \"d\": \"é\u{2028}\\\"\\n\"\n    }\n  ],\n  \"e\": null,\n  \"f\": 1,\n  \"g\": 0.5\n}\n";
        assert_eq!(to_js_pretty(&v), expected);
    }

    #[test]
    fn numbers_like_javascript() {
        assert_eq!(js_number(1.0), "1");
        assert_eq!(js_number(-0.0), "0");
        assert_eq!(js_number(0.1), "0.1");
        assert_eq!(js_number(1e21), "1e+21");
        assert_eq!(js_number(1.5e-7), "1.5e-7");
        assert_eq!(js_number(123456.789), "123456.789");
    }
}
