//! The one map from a chapter's rendered Markdown back to its files: a range of the Markdown
//! mdBook hands the renderer (`{{#include}}` expanded) traced to the file it comes from — the
//! chapter's own, or the file an include brought in — with its byte range and text there. Each
//! step is checked against the bytes it claims; an unsure trace is an error saying why, never a
//! guess. Used by `anchors --json` and the MCP tools (a comment's source place) and by `apply`
//! (where a suggestion is written).
//!
//! May call: the book's configuration (`model::book`).

use super::Chapter;
use crate::model::book::Book;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// Where a book's files are: what [`trace`] needs of a book.
#[derive(Debug, Clone)]
pub struct Sources {
    /// The book root.
    pub root: PathBuf,
    /// Its `src` directory.
    pub src_dir: PathBuf,
    /// The page-id prefix chapters' `source` starts with (`book-example/src`).
    pub prefix: String,
}

impl Sources {
    /// The files of `book`.
    pub fn of(book: &Book) -> Sources {
        Sources {
            root: book.root.clone(),
            src_dir: book.src_dir(),
            prefix: crate::model::book::PageIds::new(book).prefix,
        }
    }

    /// The Markdown file of `chapter`.
    pub fn file_of(&self, chapter: &Chapter) -> PathBuf {
        let prefix = format!("{}/", self.prefix);
        self.src_dir.join(
            chapter
                .source
                .strip_prefix(&prefix)
                .unwrap_or(&chapter.source),
        )
    }

    /// The page-relative name of `path` (canonical), a file an include of `chapter` brought in:
    /// as chapters' `source` names theirs, the prefix then the path from the `src` directory
    /// (`book-example/src/../examples/a.rs` as `book-example/examples/a.rs`); `None` when it is
    /// the chapter's own file or not inside the book.
    pub fn included(&self, chapter: &Chapter, path: &Path) -> Option<String> {
        let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        if canon(&self.file_of(chapter)) == path {
            return None;
        }
        let root = canon(&self.root);
        let in_root = path.strip_prefix(&root).ok()?;
        // The path from the src directory (`../examples/a.rs` for a file beside it)...
        let src_in_root = canon(&self.src_dir)
            .strip_prefix(&root)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let names = |p: &Path| -> Vec<String> {
            p.components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect()
        };
        let (src, file) = (names(&src_in_root), names(in_root));
        let common = src.iter().zip(&file).take_while(|(a, b)| a == b).count();
        let mut from_src: Vec<String> = vec!["..".to_string(); src.len() - common];
        from_src.extend(file[common..].iter().cloned());
        // ...after the prefix that names the src directory, `..` taken back lexically.
        let mut parts: Vec<String> = Vec::new();
        for part in self
            .prefix
            .split('/')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .chain(from_src)
        {
            if part == ".." && parts.last().is_some_and(|p| p != "..") {
                parts.pop();
            } else {
                parts.push(part);
            }
        }
        Some(parts.join("/"))
    }

    /// The source place (`{path, start, end, line, column}`, as `anchors --json` gives it) of
    /// `range` of `chapter`'s rendered Markdown: in the chapter's own file, or in the file an
    /// include brought it from — traced as `apply` traces a suggestion ([`trace`]), so the two
    /// never disagree. `None` when it cannot be traced to one place.
    pub fn place(&self, chapter: &Chapter, range: Range<usize>) -> Option<serde_json::Value> {
        let t = trace(self, chapter, range).ok()?;
        let path = self
            .included(chapter, &t.path)
            .unwrap_or_else(|| chapter.source.clone());
        let pos = t.range.start.min(t.text.len());
        let line_start = t.text[..pos].rfind('\n').map_or(0, |i| i + 1);
        let line = t.text[..pos].matches('\n').count() + 1;
        let column = t.text[line_start..pos].chars().count() + 1;
        Some(
            serde_json::json!({ "path": path, "start": t.range.start, "end": t.range.end, "line": line, "column": column }),
        )
    }

    /// The files `chapter` is read from: its own, then each file its `{{#include}}` directives
    /// name (one level: the includes of an included file are not followed), as paths that may
    /// not exist.
    pub fn files_of(&self, chapter: &Chapter) -> Vec<PathBuf> {
        let own = self.file_of(chapter);
        let mut files = vec![own.clone()];
        let Some(disk) = chapter.disk() else {
            return files;
        };
        let dir = own.parent().unwrap_or(&self.src_dir).to_path_buf();
        for d in directives(disk).directives {
            if let Some((target, _)) = include_target(&disk[d]) {
                let path = dir.join(target);
                if !files.contains(&path) {
                    files.push(path);
                }
            }
        }
        files
    }

    /// `path` for a message: relative to the book root when below it.
    pub fn display(&self, path: &Path) -> String {
        let canon = self
            .root
            .canonicalize()
            .unwrap_or_else(|_| self.root.clone());
        path.strip_prefix(&canon)
            .or_else(|_| path.strip_prefix(&self.root))
            .map(notabene_core::slash_path)
            .unwrap_or_else(|_| path.display().to_string())
    }
}

/// A range traced to its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Traced {
    /// The file, canonical.
    pub path: PathBuf,
    /// The byte range in it.
    pub range: Range<usize>,
    /// The file's text.
    pub text: String,
}

/// Why a range of a chapter's Markdown cannot be traced to one place in one file of the book:
/// a clause to put after "the quote of …".
#[derive(Debug)]
pub enum Untraceable {
    /// The chapter file does not hold the range's bytes where the expansion puts them.
    NotInFile,
    /// The chapter file's literal pieces are not where the expansion puts them.
    PiecesMoved,
    /// The range is in an expansion other than a whole or line-range file include.
    NotAnInclude,
    /// The file the range comes from cannot be read (or canonicalized).
    Unreadable {
        /// The file, as named.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The included file holds the expansion nowhere, or more than once (the file, shown).
    NotOnePlace(String),
    /// The range spans the boundary of an include.
    AcrossInclude,
    /// The file is reached through a symlink (the file, shown).
    Symlink(String),
    /// The file is outside the book.
    Outside(PathBuf),
}

impl std::fmt::Display for Untraceable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Untraceable::NotInFile => {
                f.write_str("cannot be traced back from the expanded chapter to its file")
            }
            Untraceable::PiecesMoved => {
                f.write_str("cannot be traced back from the expanded chapter to its files")
            }
            Untraceable::NotAnInclude => f.write_str(
                "comes from a `{{#…}}` expansion other than a file include, or an include with an anchor",
            ),
            Untraceable::Unreadable { path, error } => write!(
                f,
                "comes from {} which cannot be read: {error}",
                path.display()
            ),
            Untraceable::NotOnePlace(file) => write!(
                f,
                "cannot be traced to one place in the included file {file}"
            ),
            Untraceable::AcrossInclude => f.write_str("spans the boundary of an included file"),
            Untraceable::Symlink(file) => write!(
                f,
                "comes from {file}, which is reached through a symlink; apply the suggestion by hand"
            ),
            Untraceable::Outside(path) => {
                write!(f, "comes from {}, outside the book", path.display())
            }
        }
    }
}

/// The file (canonical path), byte range and text on disk of the chapter's Markdown range
/// `range`: the chapter file itself, or the file an `{{#include}}` brought in. Each step is
/// checked against the bytes it claims (an unsure trace is a refusal, never a guess), and the
/// file must be inside the book.
pub fn trace(
    book: &Sources,
    chapter: &Chapter,
    range: Range<usize>,
) -> Result<Traced, Untraceable> {
    let file = book.file_of(chapter);
    let content = &chapter.content;
    let slice = &content[range.clone()];
    let inside = |path: &Path| inside_book(book, path);
    let done = |(path, range, text): (PathBuf, Range<usize>, String)| Traced { path, range, text };
    let Some(disk) = chapter.disk() else {
        return Ok(done((inside(&file)?, range, content.clone())));
    };
    // The disk text is literal pieces and `{{#…}}` directives; the pieces are in the content
    // in order, each directive's expansion between them.
    let pieces = directives(disk);
    // No directive: the file is the chapter, byte for byte where the quote is (bytes past it
    // may have been appended since mdBook read it; the write checks them again).
    if pieces.directives.is_empty() {
        if disk.get(range.clone()) != Some(slice) {
            return Err(Untraceable::NotInFile);
        }
        return Ok(done((inside(&file)?, range, disk.to_string())));
    }
    let placed = place_literals(disk, content, &pieces)?;
    // In a literal piece: the chapter file.
    for (d, c) in &placed {
        if c.start <= range.start && range.end <= c.end {
            let off = d.start + (range.start - c.start);
            if disk.get(off..off + range.len()) != Some(slice) {
                return Err(Untraceable::NotInFile);
            }
            return Ok(done((
                inside(&file)?,
                off..off + range.len(),
                disk.to_string(),
            )));
        }
    }
    // In the expansion of directive k (between literal k and k + 1).
    for (k, directive) in pieces.directives.iter().enumerate() {
        let (Some(before), Some(after)) = (placed.get(k), placed.get(k + 1)) else {
            continue;
        };
        let gap = before.1.end..after.1.start;
        if !(gap.start <= range.start && range.end <= gap.end) {
            continue;
        }
        let Some((target, whole)) = include_target(&disk[directive.clone()]) else {
            return Err(Untraceable::NotAnInclude);
        };
        let included = inside(&file.parent().unwrap_or(Path::new(".")).join(target))?;
        let text = std::fs::read_to_string(&included).map_err(|error| Untraceable::Unreadable {
            path: included.clone(),
            error,
        })?;
        let expansion = &content[gap.clone()];
        // A whole-file include is the file (mdBook drops its last newline); a line range is
        // a run of its lines, found once.
        let base = if whole {
            (text == expansion || text.strip_suffix('\n') == Some(expansion)).then_some(0)
        } else {
            text.find(expansion)
                .filter(|&i| text.rfind(expansion) == Some(i))
                .filter(|&i| i == 0 || text[..i].ends_with('\n'))
        };
        let Some(base) = base else {
            return Err(Untraceable::NotOnePlace(book.display(&included)));
        };
        let start = base + (range.start - gap.start);
        if text.get(start..start + range.len()) != Some(slice) {
            return Err(Untraceable::NotOnePlace(book.display(&included)));
        }
        return Ok(done((included, start..start + range.len(), text)));
    }
    Err(Untraceable::AcrossInclude)
}

/// `path` canonical, when it is inside the book and reached through no symlink from the book
/// root (the file a symlink names may be anywhere, and an edit there is not the book's).
fn inside_book(book: &Sources, path: &Path) -> Result<PathBuf, Untraceable> {
    // A symlink on the way from the book root is refused, not followed: the file it
    // names may be anywhere, and an edit there is not the book's.
    if let Ok(rel) = path.strip_prefix(&book.root) {
        let mut cur = book.root.clone();
        for c in rel.components() {
            match c {
                std::path::Component::ParentDir => {
                    cur.pop();
                }
                std::path::Component::Normal(name) => {
                    cur.push(name);
                    if std::fs::symlink_metadata(&cur).is_ok_and(|m| m.file_type().is_symlink()) {
                        return Err(Untraceable::Symlink(book.display(path)));
                    }
                }
                _ => {}
            }
        }
    }
    let canon = path
        .canonicalize()
        .map_err(|error| Untraceable::Unreadable {
            path: path.to_path_buf(),
            error,
        })?;
    let root = book
        .root
        .canonicalize()
        .unwrap_or_else(|_| book.root.clone());
    if !canon.starts_with(&root) {
        return Err(Untraceable::Outside(path.to_path_buf()));
    }
    Ok(canon)
}

/// A literal piece of a chapter file: its range on disk, and in the expanded chapter.
type Placed = (Range<usize>, Range<usize>);

/// Where each literal piece of the chapter file is in the expanded `content`, in order, as
/// (disk range, content range); an error when one is not found where it must be.
fn place_literals(disk: &str, content: &str, pieces: &Pieces) -> Result<Vec<Placed>, Untraceable> {
    let mut at = 0usize;
    let mut placed: Vec<Placed> = Vec::new();
    for (k, piece) in pieces.literals.iter().enumerate() {
        let lit = &disk[piece.clone()];
        let found = if k == 0 {
            content.starts_with(lit).then_some(0)
        } else if k + 1 == pieces.literals.len() {
            content
                .ends_with(lit)
                .then(|| content.len() - lit.len())
                .filter(|&i| i >= at)
        } else if lit.is_empty() {
            Some(at)
        } else {
            content[at..].find(lit).map(|i| at + i)
        };
        let Some(start) = found else {
            return Err(Untraceable::PiecesMoved);
        };
        placed.push((piece.clone(), start..start + lit.len()));
        at = start + lit.len();
    }
    Ok(placed)
}

/// The literal pieces of a chapter file and the `{{#…}}` directives between them (pieces:
/// one more than directives).
pub(crate) struct Pieces {
    literals: Vec<Range<usize>>,
    /// The directives, each `{{#…}}` whole.
    pub(crate) directives: Vec<Range<usize>>,
}

pub(crate) fn directives(disk: &str) -> Pieces {
    let mut literals = Vec::new();
    let mut directives = Vec::new();
    let mut start = 0;
    let mut from = 0;
    while let Some(i) = disk[from..].find("{{").map(|i| from + i) {
        let rest = &disk[i + 2..];
        let is_directive = rest.trim_start().starts_with('#') && !disk[..i].ends_with('\\');
        match (is_directive, rest.find("}}")) {
            (true, Some(end)) => {
                literals.push(start..i);
                directives.push(i..i + 2 + end + 2);
                start = i + 2 + end + 2;
                from = start;
            }
            _ => from = i + 2,
        }
    }
    literals.push(start..disk.len());
    Pieces {
        literals,
        directives,
    }
}

/// The file of an `{{#include path[:lines]}}` directive and whether it is the whole file.
/// An anchor (`:name`) or `rustdoc_include` (hidden lines) makes an expansion that is not a
/// run of the file's bytes: `None`, like any other directive.
pub(crate) fn include_target(directive: &str) -> Option<(&str, bool)> {
    let inner = directive.strip_prefix("{{")?.strip_suffix("}}")?.trim();
    let rest = inner.strip_prefix("#include")?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let arg = rest.trim();
    let (path, spec) = match arg.split_once(':') {
        Some((p, spec)) => (p.trim(), Some(spec.trim())),
        None => (arg, None),
    };
    if path.is_empty() {
        return None;
    }
    match spec {
        None => Some((path, true)),
        // Line ranges: `2`, `2:5`, `:5`, `2:`.
        Some(sp) if sp.chars().all(|c| c.is_ascii_digit() || c == ':') => Some((path, false)),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{directives, include_target};

    #[test]
    fn directives_split_a_chapter_into_pieces() {
        let p = directives("a {{#include x.md}} b {{ #title T }} c \\{{#include y}} d");
        assert_eq!(p.directives.len(), 2);
        assert_eq!(p.literals.len(), 3);
        assert_eq!(include_target("{{#include x.md}}"), Some(("x.md", true)));
        assert_eq!(
            include_target("{{#include x.md:2:5}}"),
            Some(("x.md", false))
        );
        assert_eq!(include_target("{{#include x.md:anchor}}"), None);
        assert_eq!(include_target("{{#rustdoc_include src/a.rs:2}}"), None);
        assert_eq!(include_target("{{#title T}}"), None);
        assert_eq!(include_target("{{#includes x}}"), None);
    }
}

#[cfg(test)]
mod included_tests {
    use super::{Chapter, Sources};

    #[test]
    fn an_included_file_is_named_from_the_prefix() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        for dir in ["src/inc", "examples"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        for file in ["src/a.md", "src/inc/x.md", "examples/e.rs"] {
            std::fs::write(root.join(file), "x").unwrap();
        }
        let chapter = |source: &str| Chapter {
            page: String::new(),
            name: String::new(),
            url: String::new(),
            source: source.into(),
            content: String::new(),
            disk: None,
        };
        for (prefix, source, file, want) in [
            ("src", "src/a.md", "src/inc/x.md", Some("src/inc/x.md")),
            ("src", "src/a.md", "examples/e.rs", Some("examples/e.rs")),
            (
                "guide",
                "guide/a.md",
                "src/inc/x.md",
                Some("guide/inc/x.md"),
            ),
            (
                "book/src",
                "book/src/a.md",
                "examples/e.rs",
                Some("book/examples/e.rs"),
            ),
            ("src", "src/a.md", "src/a.md", None),
        ] {
            let sources = Sources {
                root: root.clone(),
                src_dir: root.join("src"),
                prefix: prefix.into(),
            };
            assert_eq!(
                sources
                    .included(&chapter(source), &root.join(file))
                    .as_deref(),
                want,
                "{prefix} {file}"
            );
        }
    }
}
