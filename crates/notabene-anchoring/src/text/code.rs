//! Code blocks as mdBook shows them: fenced and indented code, Rust playground blocks with
//! their hidden `fn main` wrapper and hidden `# ` lines, `code.hidelines` prefixes, and
//! ```` ```mermaid ```` diagrams (a block, not text).

use super::builder::Builder;
use super::{CodeBlock, SegKind};
use std::ops::Range;

impl Builder<'_> {
    pub(super) fn end_code_block(&mut self, range: Range<usize>) {
        let Some(code) = self.code.take() else { return };
        let info = code.info.unwrap_or_default();
        let mut words = info.split([' ', '\t', ',']).filter(|s| !s.is_empty());
        let lang = words.next().unwrap_or("").to_string();
        let classes: Vec<String> = words.map(str::to_string).collect();
        let src = code.src_start..range.end;
        if lang == "mermaid" {
            self.push_mermaid(code.text, src.clone(), false);
            self.close_block(&src);
            return;
        }
        let (mut text, mut map) = (code.text, code.map);
        let has = |c: &str| classes.iter().any(|x| x == c);
        let playground = lang == "rust"
            && ((!has("ignore")
                && !has("noplayground")
                && !has("noplaypen")
                && self.options.playground_runnable)
                || has("mdbook-runnable"));
        if playground && !(self.options.playground_editable && has("editable")) && !text.is_empty()
        {
            (text, map) = wrap_rust_main(&text, &map);
        }
        if !text.is_empty() {
            if lang == "rust" {
                (text, map) = hide_lines_rust(&text, &map);
            } else {
                let prefix = classes
                    .iter()
                    .find_map(|c| c.strip_prefix("hidelines=").map(str::to_string))
                    .or_else(|| self.options.hidelines.get(&lang).cloned());
                if let Some(prefix) = prefix {
                    (text, map) = hide_lines_prefix(&text, &map, &prefix);
                }
            }
        }
        let index = self.code_blocks.len() as u32;
        let start = self.flow().text.len();
        // Group bytes into runs of consecutive source offsets (plain) or unmapped text (raw).
        let mut i = 0;
        while i < text.len() {
            let mut j = i + 1;
            match map[i] {
                Some(s) => {
                    while j < text.len() && map[j] == Some(s + (j - i)) {
                        j += 1;
                    }
                    while !text.is_char_boundary(j) {
                        j += 1;
                    }
                    let piece = &text[i..j];
                    let plain = self.src.get(s..s + (j - i)) == Some(piece);
                    let kind = if plain {
                        SegKind::CodeBlock(index)
                    } else {
                        SegKind::Raw
                    };
                    let end = if plain { s + (j - i) } else { s };
                    self.emit(piece, s..end, kind);
                }
                None => {
                    while j < text.len() && (map[j].is_none() || !text.is_char_boundary(j)) {
                        j += 1;
                    }
                    let at = map[..i].iter().rev().find_map(|m| *m).unwrap_or(src.start);
                    self.emit(&text[i..j], at..at, SegKind::Raw);
                }
            }
            i = j;
        }
        let end = self.flow().text.len();
        self.code_blocks.push(CodeBlock {
            src: src.clone(),
            text: start..end,
        });
        self.close_block(&src);
    }
}

type Mapped = (String, Vec<Option<usize>>);

/// `mdbook-html`'s `wrap_rust_main`: code without `fn main` gets a hidden wrapper.
fn wrap_rust_main(text: &str, map: &[Option<usize>]) -> Mapped {
    if text.contains("fn main") || text.contains("quick_main!") {
        return (text.to_string(), map.to_vec());
    }
    let split = rust_attrs_len(text);
    let (attrs, code) = text.split_at(split);
    let newline = if code.is_empty() || code.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    let mut out = String::new();
    let mut m = Vec::new();
    let synth = |s: &str, out: &mut String, m: &mut Vec<Option<usize>>| {
        out.push_str(s);
        m.extend(std::iter::repeat_n(None, s.len()));
    };
    synth("# #![allow(unused)]\n", &mut out, &mut m);
    out.push_str(attrs);
    m.extend_from_slice(&map[..split]);
    synth("# fn main() {\n", &mut out, &mut m);
    out.push_str(code);
    m.extend_from_slice(&map[split..]);
    synth(&format!("{newline}# }}"), &mut out, &mut m);
    (out, m)
}

/// Length of the leading inner attributes (`#![…]` lines and blank lines) of Rust code, as
/// `mdbook-html`'s `partition_rust_source` computes it.
fn rust_attrs_len(s: &str) -> usize {
    let mut pos = 0;
    let mut last_attr_end = 0;
    let mut saw_attr = false;
    while pos < s.len() {
        let line_end = s[pos..].find('\n').map(|i| pos + i + 1).unwrap_or(s.len());
        let line = s[pos..line_end].trim_end_matches(['\n', '\r']);
        let t = line.trim_start_matches([' ', '\t']);
        if t.starts_with("#![") {
            saw_attr = true;
            last_attr_end = line_end;
        } else if line.trim().is_empty() {
            last_attr_end = line_end;
        } else {
            break;
        }
        pos = line_end;
    }
    if saw_attr && !s[..last_attr_end].trim().is_empty() {
        last_attr_end
    } else {
        0
    }
}

/// Splits `text` into lines as `str::lines` does, with each line's byte range.
fn line_ranges(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < text.len() {
        let nl = text[pos..].find('\n').map(|i| pos + i);
        let (end, next) = match nl {
            Some(i) => (i, i + 1),
            None => (text.len(), text.len()),
        };
        let end = if end > pos && text.as_bytes()[end - 1] == b'\r' && nl.is_some() {
            end - 1
        } else {
            end
        };
        out.push(pos..end);
        pos = next;
    }
    out
}

/// `mdbook-html`'s `hide_lines_rust`, keeping the byte map.
fn hide_lines_rust(text: &str, map: &[Option<usize>]) -> Mapped {
    let lines = line_ranges(text);
    let mut out = String::new();
    let mut m = Vec::new();
    let n = lines.len();
    for (i, r) in lines.into_iter().enumerate() {
        let line = &text[r.clone()];
        let ws_len = line.len() - line.trim_start().len();
        let mut keep: Range<usize> = r.clone();
        let mut skip: Option<Range<usize>> = None;
        if line[ws_len..].starts_with('#') {
            let after = r.start + ws_len + 1;
            let next = text[after..r.end].chars().next();
            match next {
                Some('#') => skip = Some(after - 1..after),
                None => skip = Some(after - 1..after),
                Some(' ') => skip = Some(after - 1..after + 1),
                _ => {}
            }
        }
        if let Some(s) = skip {
            out.push_str(&text[keep.start..s.start]);
            m.extend_from_slice(&map[keep.start..s.start]);
            keep = s.end..keep.end;
        }
        out.push_str(&text[keep.clone()]);
        m.extend_from_slice(&map[keep]);
        if i + 1 < n {
            out.push('\n');
            m.push(map.get(r.end).copied().flatten());
        }
    }
    (out, m)
}

/// `mdbook-html`'s `hide_lines_with_prefix`, keeping the byte map.
fn hide_lines_prefix(text: &str, map: &[Option<usize>], prefix: &str) -> Mapped {
    let mut out = String::new();
    let mut m = Vec::new();
    for r in line_ranges(text) {
        let line = &text[r.clone()];
        if line.trim_start().starts_with(prefix)
            && let Some(pos) = line.find(prefix)
        {
            out.push_str(&line[..pos]);
            m.extend_from_slice(&map[r.start..r.start + pos]);
            let rest = r.start + pos + prefix.len();
            out.push_str(&text[rest..r.end]);
            m.extend_from_slice(&map[rest..r.end]);
        } else {
            out.push_str(line);
            m.extend_from_slice(&map[r.clone()]);
        }
        out.push('\n');
        m.push(map.get(r.end).copied().flatten());
    }
    (out, m)
}
