//! Rebuilds that render only the pages whose output changed, for `serve`.
//!
//! mdBook's HTML renderer renders whole books: the `Renderer` trait is handed the whole book,
//! and every page, `print.html`, the search index and the table of contents are made in one
//! call. It allows no more than that; what it does allow is to be handed any book. So after a
//! change of the store, or of chapters' Markdown, that leaves the book's structure, its
//! configuration, its theme and every other file as they were, the same book is rendered with
//! the content of every chapter whose page did not change left empty — the sidebar, the
//! chapter numbers, the previous and next links and every resource stay what they were — into
//! a scratch directory, and the pages that changed are taken from there. A chapter whose only
//! change is the book-wide summary every chapter ends with (the counts of open comments) has
//! that element replaced in its page. Every other file of the new site is the last site's (a
//! hard link). `print.html` and the search index are the last build's: [`Rebuilt::Pages`]
//! says that a whole build is due, which `serve` runs next, behind it.
//!
//! What is compared is exact: the preprocessed book (every item but the chapters' content,
//! the chapter titles), the content of each chapter, and the scratch site's resources, which
//! must all be the last site's. Anything else is a whole build.
//!
//! Owns: the choice between a whole build and a build of pages, and the pages' assembly.
//! Calls: mdBook's engine (`mdbook-driver`, `mdbook-html`), the preprocessor through it.

use crate::output::reuse::{Kept, Rendered};
use crate::util::memo::{Digest, Key};
use crate::{Error, Result};
use mdbook_driver::MDBook;
use mdbook_preprocessor::book::{Book as MdBook, BookItem};
use mdbook_renderer::Renderer as _;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// How a rebuild went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rebuilt {
    /// The whole book was rendered.
    Whole,
    /// Only these pages were: `print.html` and the search index are the last build's, and a
    /// whole build is due.
    Pages {
        /// Chapters rendered.
        rendered: usize,
        /// Chapters whose summary element was replaced.
        patched: usize,
    },
}

/// What a rebuild is told of the change it follows.
pub struct RebuildChange<'a> {
    /// The files that changed (`None`: not known, a whole build).
    pub files: Option<&'a BTreeSet<PathBuf>>,
    /// The pages (HTML files, relative to the site) that were changed in place since the last
    /// build (`serve` patches islands): rendered again.
    pub touched: &'a BTreeSet<String>,
}

/// Whether `md` renders only HTML (the renderer this module knows how to render pages of).
fn only_html(md: &MDBook) -> bool {
    md.config
        .outputs::<serde_json::Value>()
        .is_ok_and(|o| o.keys().all(|k| k == "html"))
}

/// The chapters of `book` the HTML renderer makes pages of (those with a path), in order.
fn chapters(book: &MdBook) -> Vec<&mdbook_preprocessor::book::Chapter> {
    book.iter()
        .filter_map(|i| match i {
            BookItem::Chapter(ch) if ch.path.is_some() => Some(ch),
            _ => None,
        })
        .collect()
}

/// The digest of `book` without its chapters' content: two books with the same skeleton
/// differ in their chapters' content only.
fn skeleton(book: &MdBook) -> Digest {
    fn feed(k: &mut Key, items: &[BookItem]) {
        k.u64(items.len() as u64);
        for item in items {
            match item {
                BookItem::Chapter(ch) => {
                    k.u64(0)
                        .str(&ch.name)
                        .debug(&ch.number)
                        .debug(&ch.path)
                        .debug(&ch.source_path)
                        .debug(&ch.parent_names);
                    feed(k, &ch.sub_items);
                }
                BookItem::Separator => {
                    k.u64(1);
                }
                BookItem::PartTitle(title) => {
                    k.u64(2).str(title);
                }
            }
        }
    }
    let mut k = Key::new("book skeleton");
    feed(&mut k, &book.items);
    k.finish()
}

/// Renders `book` into `dest` with mdBook's HTML renderer, as `mdbook build` does.
fn render(md: &MDBook, book: MdBook, titles: HashMap<PathBuf, String>, dest: &Path) -> Result<()> {
    let mut ctx =
        mdbook_renderer::RenderContext::new(md.root.clone(), book, md.config.clone(), dest);
    ctx.chapter_titles = titles;
    mdbook_html::HtmlHandlebars::new()
        .render(&ctx)
        .map_err(|e| Error::new(format!("build failed: Rendering failed: {e:#}")))
}

/// Builds the book `md` (loaded with the preprocessor that keeps `kept.reuse`) into `dest`,
/// whole, and keeps the book it rendered when HTML is its only output.
pub(crate) fn whole(md: &MDBook, dest: &Path, kept: &Kept) -> Result<()> {
    if !only_html(md) {
        *lock(&kept.rendered) = None;
        md.build()
            .map_err(|e| Error::new(format!("build failed: {e:#}")))?;
        return html_at(md, dest);
    }
    let html = mdbook_html::HtmlHandlebars::new();
    let (book, ctx) = md
        .preprocess_book(&html)
        .map_err(|e| Error::new(format!("build failed: {e:#}")))?;
    let titles = ctx.chapter_titles.borrow().clone();
    let last = Rendered {
        skeleton: skeleton(&book),
        book: book.clone(),
        titles: titles.clone(),
    };
    render(md, book, titles, dest)?;
    *lock(&kept.rendered) = Some(last);
    Ok(())
}

/// With more than one output, mdBook writes each into its own directory (`dest/html`,
/// `dest/linkcheck`): the HTML output is moved to `dest` itself, the site served at `/` as
/// `mdbook serve` serves it, and the other outputs are dropped (nothing serves them).
fn html_at(md: &MDBook, dest: &Path) -> Result<()> {
    let html = md.build_dir_for("html");
    if html == dest || !html.starts_with(dest) {
        return Ok(());
    }
    let moved = |e: std::io::Error| {
        Error::new(format!(
            "cannot move the HTML output: {e} ({})",
            html.display()
        ))
    };
    let all = dest.with_extension("outputs");
    let _ = std::fs::remove_dir_all(&all);
    std::fs::rename(dest, &all).map_err(moved)?;
    let inner = all.join(html.strip_prefix(dest).unwrap_or(&html));
    std::fs::rename(&inner, dest).map_err(moved)?;
    let _ = std::fs::remove_dir_all(&all);
    Ok(())
}

/// Rebuilds the book `md` into `dest`, rendering only the pages that changed since the last
/// build (the site at `current`, built with `kept`) when `change` allows it, else whole.
/// `scratch` is a directory of its own the pages are rendered into first.
pub(crate) fn rebuild(
    md: &MDBook,
    current: &Path,
    dest: &Path,
    scratch: &Path,
    kept: &Kept,
    change: &RebuildChange,
) -> Result<Rebuilt> {
    kept.reuse
        .expect_store_changes(change.files.and_then(|files| store_names(md, files)));
    if let Some(files) = change.files
        && only_html(md)
        && let Some(done) = pages(md, current, dest, scratch, kept, files, change.touched)?
    {
        return Ok(done);
    }
    let _ = std::fs::remove_dir_all(dest);
    whole(md, dest, kept)?;
    Ok(Rebuilt::Whole)
}

/// The build of pages ([`rebuild`]); `None` when it cannot be one (and nothing was written
/// into `dest`).
fn pages(
    md: &MDBook,
    current: &Path,
    dest: &Path,
    scratch: &Path,
    kept: &Kept,
    files: &BTreeSet<PathBuf>,
    touched: &BTreeSet<String>,
) -> Result<Option<Rebuilt>> {
    let mut last_slot = lock(&kept.rendered);
    let Some(last) = last_slot.as_ref() else {
        return Ok(None);
    };
    // Only the store and chapters' own Markdown files may have changed: anything else (the
    // theme, book.toml, an image, a file a chapter includes, SUMMARY.md) is a whole build.
    let cfg = crate::model::book::Book::from_mdbook(&md.root, md.config.clone())?;
    let store =
        std::fs::canonicalize(cfg.store().root()).unwrap_or(cfg.store().root().to_path_buf());
    let src = std::fs::canonicalize(md.source_dir()).unwrap_or(md.source_dir());
    let sources: BTreeSet<PathBuf> = chapters(&last.book)
        .iter()
        .filter_map(|ch| ch.source_path.as_ref().map(|p| src.join(p)))
        .collect();
    let allowed = |f: &PathBuf| {
        let f = std::fs::canonicalize(f).unwrap_or(f.clone());
        f.starts_with(&store) || sources.contains(&f)
    };
    if !files.iter().all(allowed) {
        return Ok(None);
    }
    let t0 = std::time::Instant::now();
    let html = mdbook_html::HtmlHandlebars::new();
    let (book, ctx) = md
        .preprocess_book(&html)
        .map_err(|e| Error::new(format!("build failed: {e:#}")))?;
    let titles = ctx.chapter_titles.borrow().clone();
    let t1 = std::time::Instant::now();
    let shape = skeleton(&book);
    if shape != last.skeleton || titles != last.titles {
        return Ok(None);
    }
    let (new, old) = (chapters(&book), chapters(&last.book));
    // Each chapter's page(s): its own, and the site's index.html for the first.
    let files_of = |i: usize, ch: &mdbook_preprocessor::book::Chapter| -> Vec<String> {
        let own = notabene_core::slash_path(
            &ch.path
                .as_ref()
                .expect("a chapter with a page")
                .with_extension("html"),
        );
        if i == 0 && own != "index.html" {
            vec![own, "index.html".into()]
        } else {
            vec![own]
        }
    };
    let mut render_set: BTreeSet<usize> = BTreeSet::new();
    let mut patches: Vec<(usize, String, String)> = Vec::new();
    for (i, (n, o)) in new.iter().zip(&old).enumerate() {
        if files_of(i, n).iter().any(|f| touched.contains(f)) {
            render_set.insert(i);
            continue;
        }
        if n.content == o.content {
            continue;
        }
        match (split_summary(&n.content), split_summary(&o.content)) {
            (Some((nb, ns)), Some((ob, os))) if nb == ob => {
                // The page must hold the old element exactly once to be patched.
                let ok = files_of(i, n).iter().all(|f| {
                    std::fs::read_to_string(current.join(f))
                        .is_ok_and(|page| page.matches(os).count() == 1)
                });
                if ok {
                    patches.push((i, os.to_string(), ns.to_string()));
                } else {
                    render_set.insert(i);
                }
            }
            _ => {
                render_set.insert(i);
            }
        }
    }
    // The book to render: the chapters rendered, with their content; their previous and next
    // chapters, empty; and every other chapter a draft (no page: the table of contents then
    // differs, and pages name the current one) — or, when a theme's own page templates may
    // show the table of contents (they name `toc` or `chapters`), every other chapter, empty. (Chapters are named by their path: mdBook visits sub-chapters before
    // their parent here, not in book order.)
    let own_templates = ["index.hbs", "head.hbs", "header.hbs"].iter().any(|t| {
        std::fs::read_to_string(theme_dir(md).join(t))
            .is_ok_and(|text| text.contains("toc") || text.contains("chapters"))
    });
    let rendered: BTreeSet<&Path> = render_set
        .iter()
        .filter_map(|&i| new[i].path.as_deref())
        .collect();
    let neighbours: BTreeSet<&Path> = render_set
        .iter()
        .flat_map(|&i| [i.checked_sub(1), Some(i + 1)])
        .flatten()
        .filter_map(|i| new.get(i).and_then(|ch| ch.path.as_deref()))
        .collect();
    let mut trimmed = book.clone();
    trimmed.for_each_chapter_mut(|ch| {
        let Some(path) = ch.path.as_deref() else {
            return;
        };
        if rendered.contains(path) {
            return;
        }
        ch.content.clear();
        if !own_templates && !neighbours.contains(path) {
            ch.path = None;
        }
    });
    let t2 = std::time::Instant::now();
    render(md, trimmed, titles.clone(), scratch)?;
    let t3 = std::time::Instant::now();
    // Every resource the scratch site has must be the current site's: the same names (hashed
    // when `hash-files` is on) and sizes. The search index and the table of contents are the
    // exceptions (the one is made of the rendered chapters' text, the other of the chapters
    // given pages): the pages name the current site's.
    let page_files: BTreeSet<String> = new
        .iter()
        .enumerate()
        .flat_map(|(i, ch)| files_of(i, ch))
        .collect();
    // (The newest of them: a site swapped in quietly also keeps the search index its
    // predecessor's open pages name.)
    let named = |dir: &Path, stem: &str| -> Option<String> {
        std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let rest = name.strip_prefix(stem)?;
                let ours = rest.ends_with(".js") && (rest == ".js" || rest.starts_with('-'));
                ours.then(|| (e.metadata().and_then(|m| m.modified()).ok(), name))
            })
            .max()
            .map(|(_, name)| name)
    };
    let renamed: Vec<(String, String)> = ["searchindex", "toc"]
        .iter()
        .filter_map(|stem| Some((named(scratch, stem)?, named(current, stem)?)))
        .collect();
    for f in files_under(scratch) {
        let rel = notabene_core::slash_path(f.strip_prefix(scratch).unwrap_or(&f));
        let skip = page_files.contains(&rel)
            || rel == "print.html"
            || rel == "toc.html"
            || renamed.iter().any(|(s, _)| *s == rel);
        if skip {
            continue;
        }
        let same = match (std::fs::metadata(&f), std::fs::metadata(current.join(&rel))) {
            (Ok(a), Ok(b)) => a.len() == b.len(),
            _ => false,
        };
        if !same {
            return Ok(None);
        }
    }
    // The new site: the current one linked but for the pages written anew (a page is written
    // as a new file where no link was made: never into a linked file, which is the current
    // site's too; and not renamed into place, which makes some file systems write the data
    // out at once), the summaries replaced.
    let written: BTreeSet<String> = render_set
        .iter()
        .chain(patches.iter().map(|(i, _, _)| i))
        .flat_map(|&i| files_of(i, new[i]))
        .collect();
    let write = |rel: &str, text: &str| -> Result<()> {
        let path = dest.join(rel);
        std::fs::write(&path, text).map_err(|e| Error::io("cannot write a page", &path, e))
    };
    let jobs: Vec<(String, &str, &str)> = patches
        .iter()
        .flat_map(|(i, old, new_summary)| {
            files_of(*i, new[*i])
                .into_iter()
                .map(move |rel| (rel, old.as_str(), new_summary.as_str()))
        })
        .collect();
    link_tree(current, dest, "", &written)?;
    // The summaries, replaced in parallel on every available thread (a big book has hundreds of pages).
    let threads = notabene_core::par::default_threads();
    for done in notabene_core::par::par_map(&jobs, threads, |(rel, old, new_summary)| {
        let path = current.join(rel);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Error::io("cannot read a page", &path, e))?;
        write(rel, &text.replacen(old, new_summary, 1))
    }) {
        done?;
    }
    // The rendered pages, naming the current site's search index and table of contents.
    for &i in &render_set {
        for rel in files_of(i, new[i]) {
            let path = scratch.join(&rel);
            let mut text = std::fs::read_to_string(&path)
                .map_err(|e| Error::io("cannot read a rendered page", &path, e))?;
            for (s, c) in &renamed {
                if s != c {
                    text = text.replace(s.as_str(), c);
                }
            }
            write(&rel, &text)?;
        }
    }
    *last_slot = Some(Rendered {
        book,
        skeleton: shape,
        titles,
    });
    if std::env::var_os("NOTABENE_TIMINGS").is_some() {
        let ms = |a: std::time::Instant, b: std::time::Instant| (b - a).as_secs_f64() * 1e3;
        notabene_core::say_err!(
            "notabene: timings (ms): pages: preprocessed {:.1}, compared {:.1}, rendered {:.1}, checked and written {:.1}",
            ms(t0, t1),
            ms(t1, t2),
            ms(t2, t3),
            ms(t3, std::time::Instant::now())
        );
    }
    Ok(Some(Rebuilt::Pages {
        rendered: render_set.len(),
        patched: patches.len(),
    }))
}

/// The store-relative names of those of `files` that are in the store of the book `md`
/// (`None` when its store cannot be found). Paths are compared as the file system resolves
/// them (a removed file by its directory).
fn store_names(
    md: &MDBook,
    files: &BTreeSet<PathBuf>,
) -> Option<std::collections::HashSet<String>> {
    let cfg = crate::model::book::Book::from_mdbook(&md.root, md.config.clone()).ok()?;
    let store = std::fs::canonicalize(cfg.store().root()).ok()?;
    let resolved = |f: &PathBuf| -> PathBuf {
        std::fs::canonicalize(f)
            .ok()
            .or_else(|| {
                let dir = std::fs::canonicalize(f.parent()?).ok()?;
                Some(dir.join(f.file_name()?))
            })
            .unwrap_or_else(|| f.clone())
    };
    Some(
        files
            .iter()
            .filter_map(|f| {
                let f = resolved(f);
                let rel = f.strip_prefix(&store).ok()?;
                Some(notabene_core::slash_path(rel))
            })
            .collect(),
    )
}

/// The lock's value, also after a panic in another build (what it holds is whole: it is only
/// ever replaced).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Every file under `dir`, in no particular order.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => dirs.push(e.path()),
                Ok(t) if t.is_file() => out.push(e.path()),
                _ => {}
            }
        }
    }
    out
}

/// The theme directory of `md` (`output.html.theme`, else `theme/`), as mdBook's renderer
/// finds it.
fn theme_dir(md: &MDBook) -> PathBuf {
    md.config
        .html_config()
        .and_then(|h| h.theme)
        .map_or_else(|| md.root.join("theme"), |t| md.root.join(t))
}

/// A chapter's preprocessed content split into what comes before the book-wide summary
/// element every chapter ends with, and that element; `None` when it does not end with one.
fn split_summary(content: &str) -> Option<(&str, &str)> {
    let body = content.strip_suffix('\n')?;
    let start = body.rfind(SUMMARY_OPEN)?;
    let element = &body[start..];
    (element.ends_with("</script>") && element.matches("</script>").count() == 1)
        .then(|| (&content[..start], element))
}

/// How the summary element starts ([`crate::output::inject::island::summary_script`]).
const SUMMARY_OPEN: &str = "<script type=\"application/json\" class=\"nb-summary\">";

/// Makes `dest` a copy of the tree at `from` made of hard links (a copy where a link cannot be
/// made), but for the files named in `skipped` (relative to the tree; `rel` is where `from`
/// is in it): those are written afterwards, as new files.
fn link_tree(from: &Path, dest: &Path, rel: &str, skipped: &BTreeSet<String>) -> Result<()> {
    std::fs::create_dir_all(dest).map_err(|e| Error::io("cannot create", dest, e))?;
    let rd = std::fs::read_dir(from).map_err(|e| Error::io("cannot read", from, e))?;
    for entry in rd.flatten() {
        let (src, to) = (entry.path(), dest.join(entry.file_name()));
        let ft = entry
            .file_type()
            .map_err(|e| Error::io("cannot read", &src, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let child = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        if ft.is_dir() {
            link_tree(&src, &to, &child, skipped)?;
        } else if skipped.contains(&child) {
            continue;
        } else if std::fs::hard_link(&src, &to).is_err() {
            std::fs::copy(&src, &to).map_err(|e| Error::io("cannot copy", &src, e))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_is_split_off_the_end_of_a_chapter() {
        let summary = format!("{SUMMARY_OPEN}{{\"open\":1}}</script>");
        let content = format!("# Title\n\nText.\n{summary}\n");
        assert_eq!(
            split_summary(&content),
            Some(("# Title\n\nText.\n", summary.as_str()))
        );
        assert_eq!(split_summary("# Title\n"), None);
        assert_eq!(
            split_summary(&format!("{summary}<script></script>\n")),
            None
        );
        assert_eq!(split_summary(&summary), None);
    }
}
