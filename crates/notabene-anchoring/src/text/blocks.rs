//! Commentable blocks — images and ```` ```mermaid ```` diagrams — and their identity, exactly
//! as the original notabene defines it: one shared 0-based index in document order, a content key
//! (`image:<src as written>`, `mermaid:<djb2 of the trimmed source in base 36>`) and a label.

/// The kind of a commentable block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum BlockKind {
    /// `![alt](src)` or `<img>`.
    Image,
    /// A ```` ```mermaid ```` fence.
    Mermaid,
}

impl BlockKind {
    /// `image` or `mermaid`, as stored in `anchor.kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            BlockKind::Image => "image",
            BlockKind::Mermaid => "mermaid",
        }
    }
}

/// djb2 over UTF-16 code units, wrapped to 32 bits, rendered in base 36: the original's
/// `hash()` for diagram keys.
pub(crate) fn djb2_base36(s: &str) -> String {
    let mut h: u32 = 5381;
    for unit in s.encode_utf16() {
        h = h.wrapping_mul(33).wrapping_add(u32::from(unit));
    }
    notabene_core::base36(u64::from(h))
}

/// The key of a mermaid diagram: `mermaid:` + djb2 of the trimmed source.
pub(crate) fn mermaid_key(source: &str) -> String {
    format!("mermaid:{}", djb2_base36(source.trim()))
}

/// The key of an image: `image:` + its src exactly as written.
pub(crate) fn image_key(src: &str) -> String {
    format!("image:{src}")
}

/// How many characters of a block's label are kept (the image's alt text, the diagram's
/// line); the size limits of the comment operations use this one.
pub const LABEL_CHARS: usize = 80;

/// A block label as stored: its first [`LABEL_CHARS`] characters.
pub fn cap(s: &str) -> String {
    s.chars().take(LABEL_CHARS).collect()
}

/// A diagram's label: `<type>: <second line>` (type = first token of the first non-empty line).
pub(crate) fn mermaid_label(source: &str) -> String {
    let mut lines = source.lines().map(str::trim).filter(|l| !l.is_empty());
    let kind = lines
        .next()
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or("diagram");
    match lines.next() {
        Some(second) => cap(&format!("{kind}: {second}")),
        None => cap(kind),
    }
}

/// An image's label: its trimmed alt text, else the file name of its src (query and hash
/// stripped).
pub(crate) fn image_label(alt: &str, src: &str) -> String {
    let alt = alt.trim();
    if !alt.is_empty() {
        return cap(alt);
    }
    let path = src.split(['?', '#']).next().unwrap_or(src);
    cap(path.rsplit('/').next().unwrap_or(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_vectors() {
        // The original notabene's published vectors for its diagram keys (`mermaid:` + the djb2
        // hash of the trimmed source, in base 36), which stored block anchors carry.
        assert_eq!(mermaid_key("graph TD\n A-->B"), "mermaid:ademz8");
        assert_eq!(mermaid_key("a"), "mermaid:3t3a");
        assert_eq!(mermaid_key(""), "mermaid:45h");
        assert_eq!(mermaid_key("é"), "mermaid:3t72");
        assert_eq!(mermaid_key("😀"), "mermaid:4lyxu");
        assert_eq!(mermaid_key("\n  graph TD\n A-->B \n"), "mermaid:ademz8");
    }

    #[test]
    fn labels() {
        assert_eq!(
            mermaid_label("erDiagram\n CUSTOMER ||--o{ ORDER : places"),
            "erDiagram: CUSTOMER ||--o{ ORDER : places"
        );
        assert_eq!(mermaid_label("graph TD"), "graph");
        assert_eq!(mermaid_label("\n\n"), "diagram");
        assert_eq!(image_label("  Wiring ", "a/b.svg"), "Wiring");
        assert_eq!(image_label("", "images/wiring.svg?v=2#x"), "wiring.svg");
        assert_eq!(image_label(&"x".repeat(100), "a"), "x".repeat(80));
    }
}
