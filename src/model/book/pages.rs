//! Page ids — the store's `page` key — and their mapping back to Markdown source files.
//!
//! A page id is `<page-prefix>/<chapter path relative to src, without extension>`, `/` separated
//! and case-preserving, so an agent finds the file by appending `.md`.

use super::config::{Book, LocaleStrategy};
use notabene_store::validate_page_id;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// How a book's chapters are named in the store: the page-id prefix, the build's language
/// and how a non-default language is encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageIds {
    /// `page-prefix` (may be empty).
    pub prefix: String,
    /// The language of this build.
    pub language: String,
    /// The language whose pages carry no locale.
    pub default_language: String,
    /// Suffix or directory.
    pub strategy: LocaleStrategy,
    /// Every locale a page id may carry: the default and build languages, `languages`, and
    /// `po/<lang>.po`.
    pub locales: BTreeSet<String>,
    /// The book's src directory.
    pub src_dir: PathBuf,
}

impl PageIds {
    /// The page-id scheme of `book` for its configured (or overridden) language.
    pub fn new(book: &Book) -> PageIds {
        let mut locales = BTreeSet::new();
        locales.insert(book.default_language.clone());
        locales.insert(book.build_language().to_string());
        locales.extend(book.config.languages.iter().cloned());
        if let Ok(rd) = std::fs::read_dir(book.root.join("po")) {
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if let Some(lang) = name.strip_suffix(".po")
                    && super::config::is_language_code(lang)
                {
                    locales.insert(lang.to_string());
                }
            }
        }
        PageIds {
            prefix: book.page_prefix(),
            language: book.build_language().to_string(),
            default_language: book.default_language.clone(),
            strategy: book.config.locale_strategy,
            locales,
            src_dir: book.src_dir(),
        }
    }

    fn join(&self, rel: &str) -> String {
        if self.prefix.is_empty() {
            rel.to_string()
        } else {
            format!("{}/{rel}", self.prefix)
        }
    }

    /// The locale carried by a chapter path (without extension), if any.
    fn carried_locale<'a>(&self, rel: &'a str) -> Option<&'a str> {
        match self.strategy {
            LocaleStrategy::Directory => rel
                .split('/')
                .next()
                .filter(|first| self.locales.contains(*first) && rel.contains('/')),
            LocaleStrategy::Suffix => {
                let last = rel.rsplit('/').next().unwrap_or(rel);
                last.rsplit_once('.')
                    .map(|(_, loc)| loc)
                    .filter(|loc| self.locales.contains(*loc))
            }
        }
    }

    /// The page id of a chapter whose source file is `source_path` (relative to src):
    /// `<prefix>/<path without extension>`, with this build's locale encoded when it is not
    /// the default language and the path does not already carry one.
    pub fn for_chapter(&self, source_path: &Path) -> String {
        let rel = notabene_core::slash_path(&source_path.with_extension(""));
        if self.language == self.default_language || self.carried_locale(&rel).is_some() {
            return self.join(&rel);
        }
        match self.strategy {
            LocaleStrategy::Suffix => self.join(&format!("{rel}.{}", self.language)),
            LocaleStrategy::Directory => self.join(&format!("{}/{rel}", self.language)),
        }
    }

    /// The locale a page id belongs to (the default language when it carries none).
    pub fn locale_of<'a>(&'a self, page: &'a str) -> &'a str {
        let rest = self.strip_prefix(page).unwrap_or(page);
        self.carried_locale(rest).unwrap_or(&self.default_language)
    }

    fn strip_prefix<'a>(&self, page: &'a str) -> Option<&'a str> {
        if self.prefix.is_empty() {
            Some(page)
        } else {
            page.strip_prefix(&self.prefix)?.strip_prefix('/')
        }
    }

    /// The Markdown file of `page`: `<src>/<rest>.md`, else (for a locale-carrying id whose
    /// text lives in the default-language file, as with gettext) the file without the locale.
    pub fn source_file(&self, page: &str) -> Option<PathBuf> {
        let rest = self.strip_prefix(page)?;
        if validate_page_id(rest).is_err() {
            return None;
        }
        let file = self.src_dir.join(format!("{rest}.md"));
        if file.is_file() {
            return Some(file);
        }
        let loc = self.carried_locale(rest)?;
        let base = match self.strategy {
            LocaleStrategy::Suffix => rest.strip_suffix(&format!(".{loc}"))?.to_string(),
            LocaleStrategy::Directory => rest.strip_prefix(&format!("{loc}/"))?.to_string(),
        };
        let file = self.src_dir.join(format!("{base}.md"));
        file.is_file().then_some(file)
    }

    /// `page` without the locale it carries, if any (`src/guide/setup.fr` → `src/guide/setup`
    /// with the suffix strategy, `src/fr/guide/setup` → `src/guide/setup` with directories).
    pub fn without_locale(&self, page: &str) -> String {
        let (head, rest) = match self.strip_prefix(page) {
            Some(rest) => (&page[..page.len() - rest.len()], rest),
            None => ("", page),
        };
        let Some(loc) = self.carried_locale(rest) else {
            return page.to_string();
        };
        let bare = match self.strategy {
            LocaleStrategy::Suffix => rest.strip_suffix(&format!(".{loc}")),
            LocaleStrategy::Directory => rest.strip_prefix(&format!("{loc}/")),
        };
        format!("{head}{}", bare.unwrap_or(rest))
    }

    /// Whether `page` is under the prefix (belongs to this book).
    pub fn owns(&self, page: &str) -> bool {
        self.strip_prefix(page).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(prefix: &str, lang: &str, strategy: LocaleStrategy) -> PageIds {
        PageIds {
            prefix: prefix.into(),
            language: lang.into(),
            default_language: "en".into(),
            strategy,
            locales: ["en", "fr", "ja"].iter().map(|s| s.to_string()).collect(),
            src_dir: PathBuf::from("/nonexistent"),
        }
    }

    #[test]
    fn chapter_page_ids() {
        use LocaleStrategy::{Directory, Suffix};
        let cases: &[(&str, &str, LocaleStrategy, &str, &str)] = &[
            // prefix, language, strategy, source path, page id
            ("src", "en", Suffix, "README.md", "src/README"),
            ("src", "en", Suffix, "guide/Setup.md", "src/guide/Setup"),
            (
                "docs/src",
                "en",
                Suffix,
                "guide/index.md",
                "docs/src/guide/index",
            ),
            ("src", "en", Suffix, "notes.v2.md", "src/notes.v2"),
            ("", "en", Suffix, "a/b.md", "a/b"),
            ("src", "fr", Suffix, "guide/setup.md", "src/guide/setup.fr"),
            ("src", "fr", Suffix, "README.md", "src/README.fr"),
            ("src", "fr", Suffix, "notes.v2.md", "src/notes.v2.fr"),
            (
                "src",
                "fr",
                Suffix,
                "guide/setup.fr.md",
                "src/guide/setup.fr",
            ),
            (
                "src",
                "fr",
                Directory,
                "guide/setup.md",
                "src/fr/guide/setup",
            ),
            (
                "src",
                "fr",
                Directory,
                "fr/guide/setup.md",
                "src/fr/guide/setup",
            ),
            ("src", "ja", Directory, "README.md", "src/ja/README"),
        ];
        for (prefix, lang, strategy, path, want) in cases {
            assert_eq!(
                ids(prefix, lang, *strategy).for_chapter(Path::new(path)),
                *want,
                "{path} in {lang}"
            );
        }
        let s = ids("src", "en", Suffix);
        assert_eq!(s.locale_of("src/guide/setup.fr"), "fr");
        assert_eq!(s.locale_of("src/notes.v2"), "en");
        assert_eq!(ids("src", "en", Directory).locale_of("src/ja/README"), "ja");
    }
}
