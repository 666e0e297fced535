//! Where a suggestion goes: a comment's quote, found exact and unambiguous in its chapter as the
//! build renders it, mapped to one source range of one file ([`crate::model::resolve::source_map`])
//! without crossing inline markup, with the context (prose, inline code, fenced or indented code)
//! that decides how its text is written ([`super::safe_text`]); and the refusal, with its reason,
//! when it cannot go anywhere.
//!
//! May call: the book's anchoring (`model::resolve`), the text model (`notabene_anchoring::text`).

use super::safe_text::{self, TextContext, Unsafe};
use super::{Edit, display};
use crate::model::book::Book;
use crate::model::resolve::source_map::{self, directives};
use crate::model::resolve::{BookAnchors, Chapter};
use crate::{Error, Result, bail};
use notabene_anchoring::AnchorStatus;
use notabene_anchoring::text::{PageText, SegKind, TextOptions};
use notabene_store::Comment;
use serde_json::Value;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// Why a quote cannot be replaced where it stands: a clause to put after "the quote of …".
#[derive(Debug)]
pub(super) enum Unplaceable {
    /// The quote is empty.
    Empty,
    /// The quote is not in the page's text.
    NotInText,
    /// The quote spans more than one block.
    AcrossBlocks,
    /// The quote spans inline code.
    CodeSpan,
    /// The quote spans raw HTML or generated text.
    Raw,
    /// The quote spans inline markup (the markup, trimmed).
    Markup(String),
    /// The quote spans code and text.
    CodeAndText,
    /// The quote's range cannot be traced to its file.
    Untraceable(source_map::Untraceable),
    /// The file is included by another file too (both shown).
    IncludedElsewhere {
        /// The file the quote comes from.
        file: String,
        /// Another file that includes it.
        by: String,
    },
    /// The chapter includes the file more than once (the file shown, how many times).
    IncludedTimes {
        /// The file the quote comes from.
        file: String,
        /// How many times its chapter includes it.
        times: usize,
    },
}

impl std::fmt::Display for Unplaceable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unplaceable::Empty => f.write_str("is empty"),
            Unplaceable::NotInText => f.write_str("is not in the page's text"),
            Unplaceable::AcrossBlocks => f.write_str("spans more than one paragraph or block"),
            Unplaceable::CodeSpan => f.write_str("spans inline code the replacement would break"),
            Unplaceable::Raw => {
                f.write_str("spans raw HTML or generated text the replacement would break")
            }
            Unplaceable::Markup(gap) => write!(
                f,
                "spans inline markup (`{gap}`) the replacement would break"
            ),
            Unplaceable::CodeAndText => f.write_str("spans code and text"),
            Unplaceable::Untraceable(why) => why.fmt(f),
            Unplaceable::IncludedElsewhere { file, by } => write!(
                f,
                "comes from {file}, which {by} includes too (an edit checked on this page could render differently there); apply the suggestion by hand"
            ),
            Unplaceable::IncludedTimes { file, times } => write!(
                f,
                "comes from {file}, which its chapter includes {times} times; apply the suggestion by hand"
            ),
        }
    }
}

/// Where comment `c`'s suggestion goes, or why it cannot go anywhere.
pub(super) fn locate(
    book: &Book,
    anchors: &BookAnchors,
    c: &Comment,
    options: &TextOptions,
) -> Result<Edit> {
    let id = c.id().unwrap_or_default();
    let s = c.suggestion().expect("checked by precheck");
    let quote = c
        .anchor()
        .and_then(|a| a.get("quote"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    if quote != s.quote {
        bail!(
            "the anchor of {id:?} no longer quotes the text the suggestion was made on; nothing written (anchor.quote)"
        );
    }
    let ci = anchors
        .comments
        .iter()
        .position(|x| x.id() == Some(id))
        .ok_or_else(|| Error::new(format!("comment {id:?} is not in this build")))?;
    let l = &anchors.located[ci];
    let (Some(ch), Some(r)) = (l.chapter, &l.resolution) else {
        bail!("comment {id:?} is not on a page of this build; nothing written (page)");
    };
    if l.followed.is_some() {
        bail!(
            "comment {id:?} was found on another page than its own; run `notabene anchors heal` first; nothing written (page)"
        );
    }
    if r.flags.ambiguous {
        bail!(
            "the quote of {id:?} appears more than once with the same context; nothing written (anchor.quote)"
        );
    }
    let (AnchorStatus::Exact, Some(place)) = (r.status, &r.place) else {
        bail!(
            "the quote of {id:?} is no longer exact in its chapter ({}): the text changed since the suggestion; nothing written (anchor.quote)",
            match r.status {
                AnchorStatus::Fuzzy => "fuzzy",
                _ => "not found",
            }
        );
    };
    let chapter = &anchors.chapters[ch];
    let why = |why: Unplaceable| {
        Error::new(format!(
            "the quote of {id:?} {why}; nothing written (anchor.quote)"
        ))
    };
    let pt = &anchors.texts[ch];
    let (range, code) = plain_source(pt, &chapter.content, place.text.clone()).map_err(why)?;
    let expected = chapter.content[range.clone()].to_string();
    let content_range = range.clone();
    let (path, range, file_text) = on_disk(book, chapter, range).map_err(why)?;
    only_here(book, chapter, &path).map_err(why)?;
    let at_line_start = range.start == 0 || file_text[..range.start].ends_with('\n');
    // In code, a line's start is after the container's indentation or `>` markers.
    let line_start_in_code = file_text[..range.start]
        .rsplit('\n')
        .next()
        .is_some_and(|l| l.chars().all(|c| c == '>' || c.is_whitespace()));
    let ctx = match code {
        None => TextContext::Prose { at_line_start },
        Some((CodeKind::Indented, _)) => TextContext::Indented,
        Some((CodeKind::Fenced, n)) => fenced(pt, &chapter.content, n, options, line_start_in_code),
    };
    let newline = if file_text.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let refused = |why: Unsafe| {
        Error::new(format!(
            "the suggestion of {id:?} {why}; nothing written (suggestion.text)"
        ))
    };
    let text = safe_text::replacement(s.text, &ctx, newline).map_err(refused)?;
    // The chapter as the renderer would get it, edited: text changed, nothing else.
    let mut edited = chapter.content.clone();
    edited.replace_range(content_range, &text);
    safe_text::check_structure(&chapter.content, &edited, options).map_err(refused)?;
    Ok(Edit {
        path,
        range,
        expected,
        text,
    })
}

/// Refuses a file that renders elsewhere too: the chapter's own file included by another
/// file, or an included file that another file (or the chapter twice) includes as well. The
/// edit was checked against this chapter only; where else the same bytes land (inside code
/// here, in prose there) it could render as something else.
fn only_here(book: &Book, chapter: &Chapter, path: &Path) -> std::result::Result<(), Unplaceable> {
    let prefix = format!("{}/", crate::model::book::PageIds::new(book).prefix);
    let own_rel = chapter
        .source
        .strip_prefix(&prefix)
        .unwrap_or(&chapter.source);
    let own = book.src_dir().join(own_rel).canonicalize().ok();
    let from = includers(&book.src_dir(), path);
    let expected = if own.as_deref() == Some(path) { 0 } else { 1 };
    let others: Vec<&PathBuf> = from
        .iter()
        .filter(|f| Some(f.as_path()) != own.as_deref())
        .collect();
    if from.len() == expected && others.is_empty() {
        return Ok(());
    }
    let shown = display(book, path);
    Err(match others.first() {
        Some(by) => Unplaceable::IncludedElsewhere {
            file: shown,
            by: display(book, by),
        },
        None => Unplaceable::IncludedTimes {
            file: shown,
            times: from.len(),
        },
    })
}

/// Every file under `src` (canonical paths, one entry per directive) whose `{{#include}}`,
/// `{{#rustdoc_include}}` or `{{#playground}}` names the file `target` (canonical).
fn includers(src: &Path, target: &Path) -> Vec<PathBuf> {
    const MAX: u64 = 1 << 20;
    let mut out = Vec::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = entries.filter_map(|e| e.ok()).collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let Ok(ft) = e.file_type() else { continue };
            let p = e.path();
            if ft.is_dir() {
                dirs.push(p);
                continue;
            }
            if !ft.is_file() || e.metadata().map_or(true, |m| m.len() > MAX) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&p) else {
                continue;
            };
            if !text.contains("{{") {
                continue;
            }
            for d in directives(&text).directives {
                let inner = text[d].trim_start_matches('{').trim_end_matches('}').trim();
                let Some(rest) = inner.strip_prefix('#') else {
                    continue;
                };
                let mut words = rest.split_whitespace();
                let (Some(name), Some(arg)) = (words.next(), words.next()) else {
                    continue;
                };
                if !matches!(name, "include" | "rustdoc_include" | "playground") {
                    continue;
                }
                let file = arg.split(':').next().unwrap_or(arg);
                let named = p
                    .parent()
                    .unwrap_or(Path::new("."))
                    .join(file)
                    .canonicalize();
                if named.is_ok_and(|n| n == target) {
                    out.push(p.canonicalize().unwrap_or_else(|_| p.clone()));
                }
            }
        }
    }
    out
}

/// The context of a quote in fenced code block `n`: its fence, and what starts each of its
/// lines (the fence line's indentation and `>` markers, list markers as spaces).
fn fenced(
    pt: &PageText,
    content: &str,
    n: u32,
    options: &TextOptions,
    at_line_start: bool,
) -> TextContext {
    let src = pt
        .code_blocks
        .get(n as usize)
        .map_or(0..0, |cb| cb.src.clone());
    let line_start = content[..src.start].rfind('\n').map_or(0, |i| i + 1);
    let block = &content[src.start..src.end.max(src.start)];
    let fence = block.trim_start();
    let lead = &block[..block.len() - fence.len()];
    let fence_char = fence.chars().next().unwrap_or('`');
    let fence_len = fence.chars().take_while(|&c| c == fence_char).count();
    // The language's hidden-line marker: mdBook hides `# ` lines of Rust, and the prefix
    // `output.html.code.hidelines` gives for other languages.
    let info = fence[fence_char.len_utf8() * fence_len..]
        .lines()
        .next()
        .unwrap_or("");
    let lang = info
        .split(|c: char| c == ',' || c.is_whitespace())
        .find(|w| !w.is_empty())
        .unwrap_or("");
    let hidden = if lang == "rust" {
        Some(safe_text::Hidden::Rust)
    } else {
        options
            .hidelines
            .get(lang)
            .map(|p| safe_text::Hidden::Prefix(p.clone()))
    };
    let prefix = content[line_start..src.start]
        .chars()
        .chain(lead.chars())
        .map(|c| {
            if c == '>' || c.is_whitespace() {
                c
            } else {
                ' '
            }
        })
        .collect();
    TextContext::Fenced {
        fence_char,
        fence_len,
        prefix,
        hidden,
        at_line_start,
    }
}

/// The kind of code block a quote is in, and the block's index in the page's text.
type InCode = (CodeKind, u32);

/// What kind of code block a quote is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CodeKind {
    /// ```` ``` ```` or `~~~` fences.
    Fenced,
    /// Indented by four spaces.
    Indented,
}

/// The Markdown range of the text range `text`, when replacing it keeps every piece of
/// markup: all of it in one block, made of text that maps to its source (plain text,
/// entities, smart punctuation, soft breaks, code block lines), with nothing but whitespace
/// between its pieces in the source.
fn plain_source(
    pt: &PageText,
    content: &str,
    text: Range<usize>,
) -> std::result::Result<(Range<usize>, Option<InCode>), Unplaceable> {
    if text.is_empty() {
        return Err(Unplaceable::Empty);
    }
    let first = pt.segment_at(text.start).ok_or(Unplaceable::NotInText)?;
    let last = pt.segment_at(text.end - 1).ok_or(Unplaceable::NotInText)?;
    let segs = &pt.segments[first..=last];
    if segs.iter().any(|s| s.block != segs[0].block) {
        return Err(Unplaceable::AcrossBlocks);
    }
    for s in segs {
        match s.kind {
            SegKind::Plain | SegKind::Atomic | SegKind::CodeBlock(_) => {}
            SegKind::CodeSpan => return Err(Unplaceable::CodeSpan),
            SegKind::Raw => {
                return Err(Unplaceable::Raw);
            }
        }
    }
    let range = pt.source_range(text.start, text.end);
    // Source bytes of the range that no piece of the quote comes from: markup.
    let mut covered = range.start;
    for s in segs {
        let (a, b) = (s.src.start.max(range.start), s.src.end.min(range.end));
        if a > covered {
            markup_gap(&content[covered..a])?;
        }
        covered = covered.max(b);
    }
    if covered < range.end {
        markup_gap(&content[covered..range.end])?;
    }
    let code = match segs[0].kind {
        SegKind::CodeBlock(n) => {
            if segs.iter().any(|s| s.kind != segs[0].kind) {
                return Err(Unplaceable::CodeAndText);
            }
            let fence = pt
                .code_blocks
                .get(n as usize)
                .map(|cb| content[cb.src.clone()].trim_start())
                .is_some_and(|src| src.starts_with("```") || src.starts_with("~~~"));
            Some((
                if fence {
                    CodeKind::Fenced
                } else {
                    CodeKind::Indented
                },
                n,
            ))
        }
        _ if segs.iter().any(|s| matches!(s.kind, SegKind::CodeBlock(_))) => {
            return Err(Unplaceable::CodeAndText);
        }
        _ => None,
    };
    Ok((range, code))
}

fn markup_gap(gap: &str) -> std::result::Result<(), Unplaceable> {
    if gap.chars().all(char::is_whitespace) {
        Ok(())
    } else {
        Err(Unplaceable::Markup(gap.trim().to_string()))
    }
}

/// The file (canonical path), byte range and text on disk of the chapter's Markdown range
/// `range` ([`source_map::trace`]), with the book's paths in its messages.
fn on_disk(
    book: &Book,
    chapter: &Chapter,
    range: Range<usize>,
) -> std::result::Result<(PathBuf, Range<usize>, String), Unplaceable> {
    source_map::trace(&source_map::Sources::of(book), chapter, range)
        .map(|t| (t.path, t.range, t.text))
        .map_err(Unplaceable::Untraceable)
}
