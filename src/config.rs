//! Book discovery and configuration: finds `book.toml`, reads `[book]` (src, language, title)
//! and the `[preprocessor.notabene]` table (kebab-case keys). A malformed value is an error
//! naming the key; mdBook's own preprocessor keys are accepted; unknown keys are warned about.

use crate::{Error, Result, bail};
use std::path::{Path, PathBuf};
use toml_edit::{DocumentMut, Item, Value};

/// How the locale of a non-default-language build is encoded in page ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocaleStrategy {
    /// `…/guide/setup.fr`
    Suffix,
    /// `<prefix>/fr/guide/setup`
    Directory,
}

/// Which anchoring outcome makes a build fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailOn {
    /// Never fail the build because of anchors.
    Never,
    /// Fail when any anchor is orphaned.
    Orphan,
    /// Fail when any anchor is fuzzy or orphaned.
    Fuzzy,
}

/// The review mode: who closes a comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Review {
    /// The agent closes comments as `resolved`.
    Auto,
    /// The agent proposes (`addressed`); a human approves at /review.
    Approve,
}

impl Review {
    /// The status `comments done` writes in this mode.
    pub fn done_status(self) -> &'static str {
        match self {
            Review::Auto => "resolved",
            Review::Approve => "addressed",
        }
    }
    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Review::Auto => "auto",
            Review::Approve => "approve",
        }
    }
}

/// `[preprocessor.notabene]`, with defaults applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Store directory, relative to the book root (`store`).
    pub store: Option<String>,
    /// The `space` of comments written for this book (`space`, default `book`).
    pub space: String,
    /// Explicit page-id prefix (`page-prefix`); by default derived from the src directory.
    pub page_prefix: Option<String>,
    /// The language whose page ids carry no locale (`default-language`).
    pub default_language: Option<String>,
    /// `locale-strategy`.
    pub locale_strategy: LocaleStrategy,
    /// Fuzzy acceptance threshold (`threshold`, 0 < t ≤ 1).
    pub threshold: Option<f64>,
    /// `fail-on`.
    pub fail_on: FailOn,
    /// `review`.
    pub review: Review,
    /// `enable` (default true).
    pub enable: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            store: None,
            space: "book".into(),
            page_prefix: None,
            default_language: None,
            locale_strategy: LocaleStrategy::Suffix,
            threshold: None,
            fail_on: FailOn::Never,
            review: Review::Auto,
            enable: true,
        }
    }
}

/// Keys mdBook itself reads from a preprocessor table.
const MDBOOK_KEYS: &[&str] = &["command", "renderers", "before", "after", "optional"];

/// A discovered book: its root, `book.toml` values and notabene config.
#[derive(Debug, Clone)]
pub struct Book {
    /// Directory holding `book.toml`.
    pub root: PathBuf,
    /// `[book] src`, relative to the root (default `src`).
    pub src: String,
    /// `[book] language`.
    pub language: Option<String>,
    /// `[book] title`.
    pub title: Option<String>,
    /// The notabene table.
    pub config: Config,
    /// Non-fatal remarks found while reading (unknown keys).
    pub warnings: Vec<String>,
}

impl Book {
    /// Finds the book: `dir` itself when given, else the nearest ancestor of the working
    /// directory holding `book.toml`. Returns `Ok(None)` when none is found and no `dir` was given.
    pub fn discover(dir: Option<&Path>) -> Result<Option<Book>> {
        if let Some(dir) = dir {
            let toml = dir.join("book.toml");
            if !toml.is_file() {
                bail!("no book.toml in {} (--book)", dir.display());
            }
            return Book::load(dir).map(Some);
        }
        let cwd = std::env::current_dir().map_err(|e| Error::new(format!("cannot read the working directory: {e}")))?;
        for anc in cwd.ancestors() {
            if anc.join("book.toml").is_file() {
                return Book::load(anc).map(Some);
            }
        }
        Ok(None)
    }

    /// Loads the book whose `book.toml` is in `root`.
    pub fn load(root: &Path) -> Result<Book> {
        let path = root.join("book.toml");
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io("cannot read book.toml", &path, e))?;
        let (src, language, title, config, warnings) = parse_book_toml(&text)?;
        let root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
        Ok(Book { root, src, language, title, config, warnings })
    }

    /// Absolute path of the src directory.
    pub fn src_dir(&self) -> PathBuf {
        self.root.join(&self.src)
    }

    /// The page-id prefix: `page-prefix` when set, else the src directory relative to the git
    /// repository root (`src`, `docs/src`), else relative to the book root.
    pub fn page_prefix(&self) -> String {
        if let Some(p) = &self.config.page_prefix {
            return p.trim_matches('/').to_string();
        }
        let src = self.src_dir();
        if let Some(git_root) = git_toplevel(&self.root)
            && let Ok(rel) = canonical(&src).strip_prefix(canonical(&git_root))
        {
            return slash_path(rel);
        }
        slash_path(Path::new(&self.src))
    }
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

/// `rel` with `/` separators and no `.` components.
pub fn slash_path(rel: &Path) -> String {
    rel.components()
        .filter_map(|c| match c {
            std::path::Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The git work tree root containing `dir`, if any.
pub fn git_toplevel(dir: &Path) -> Option<PathBuf> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "--show-toplevel"])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?;
    Some(PathBuf::from(s.trim()))
}

type Parsed = (String, Option<String>, Option<String>, Config, Vec<String>);

/// Parses the parts of `book.toml` notabene needs.
pub fn parse_book_toml(text: &str) -> Result<Parsed> {
    let doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| Error::new(format!("book.toml is not valid TOML: {} (book.toml)", e.message())))?;
    let book = doc.get("book");
    let book_str = |key: &str| -> Result<Option<String>> {
        match book.and_then(|b| b.get(key)) {
            None => Ok(None),
            Some(item) => match item.as_str() {
                Some(s) => Ok(Some(s.to_string())),
                None => bail!("{key} must be a string (book.toml [book] {key})"),
            },
        }
    };
    let src = book_str("src")?.unwrap_or_else(|| "src".into());
    let language = book_str("language")?;
    let title = book_str("title")?;
    let mut warnings = Vec::new();
    let config = match doc.get("preprocessor").and_then(|p| p.get("notabene")) {
        None => Config::default(),
        Some(item) => parse_table(item, &mut warnings)?,
    };
    Ok((src, language, title, config, warnings))
}

fn parse_table(item: &Item, warnings: &mut Vec<String>) -> Result<Config> {
    let Some(table) = item.as_table_like() else {
        bail!("must be a table (book.toml [preprocessor.notabene])");
    };
    let mut cfg = Config::default();
    for (key, item) in table.iter() {
        let at = || format!("book.toml [preprocessor.notabene] {key}");
        let value = item.as_value();
        let string = |v: Option<&Value>| -> Result<String> {
            match v.and_then(Value::as_str) {
                Some(s) => Ok(s.to_string()),
                None => bail!("{key} must be a string ({})", at()),
            }
        };
        let choice = |v: Option<&Value>, allowed: &[&str]| -> Result<String> {
            let s = string(v)?;
            if allowed.contains(&s.as_str()) {
                Ok(s)
            } else {
                let list = allowed.iter().map(|a| format!("\"{a}\"")).collect::<Vec<_>>().join(" or ");
                bail!("{key} must be {list}, got {s:?} ({})", at())
            }
        };
        match key {
            "store" => {
                let s = string(value)?;
                if s.trim().is_empty() {
                    bail!("store must not be empty ({})", at());
                }
                cfg.store = Some(s);
            }
            "space" => {
                let s = string(value)?;
                if s.is_empty() || s.contains(['/', '\\']) || s.chars().any(char::is_control) {
                    bail!("space must be a non-empty name without slashes, got {s:?} ({})", at());
                }
                cfg.space = s;
            }
            "page-prefix" => {
                let s = string(value)?;
                let trimmed = s.trim_matches('/');
                if !trimmed.is_empty() {
                    crate::pages::validate_page_id(trimmed).map_err(|e| Error::new(format!("page-prefix: {} ({})", e.message(), at())))?;
                }
                cfg.page_prefix = Some(trimmed.to_string());
            }
            "default-language" => {
                let s = string(value)?;
                if s.is_empty() || !s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
                    bail!("default-language must be a language code like \"en\", got {s:?} ({})", at());
                }
                cfg.default_language = Some(s);
            }
            "locale-strategy" => {
                cfg.locale_strategy = match choice(value, &["suffix", "directory"])?.as_str() {
                    "suffix" => LocaleStrategy::Suffix,
                    _ => LocaleStrategy::Directory,
                }
            }
            "threshold" => {
                let t = value.and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)));
                match t {
                    Some(t) if t > 0.0 && t <= 1.0 => cfg.threshold = Some(t),
                    _ => bail!("threshold must be a number in (0, 1] ({})", at()),
                }
            }
            "fail-on" => {
                cfg.fail_on = match choice(value, &["never", "orphan", "fuzzy"])?.as_str() {
                    "never" => FailOn::Never,
                    "orphan" => FailOn::Orphan,
                    _ => FailOn::Fuzzy,
                }
            }
            "review" => {
                cfg.review = match choice(value, &["auto", "approve"])?.as_str() {
                    "auto" => Review::Auto,
                    _ => Review::Approve,
                }
            }
            "enable" => match value.and_then(Value::as_bool) {
                Some(b) => cfg.enable = b,
                None => bail!("enable must be true or false ({})", at()),
            },
            k if MDBOOK_KEYS.contains(&k) => {}
            other => warnings.push(format!("unknown key {other:?} ignored (book.toml [preprocessor.notabene])")),
        }
    }
    Ok(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(toml: &str) -> Result<Config> {
        parse_book_toml(toml).map(|p| p.3)
    }

    #[test]
    fn defaults_and_values() {
        assert_eq!(cfg("[book]\ntitle = \"x\"\n").unwrap(), Config::default());
        let c = cfg("[preprocessor.notabene]\ncommand = \"x\"\nafter = [\"links\"]\nreview = \"approve\"\nstore = \"notes\"\nthreshold = 0.8\nfail-on = \"orphan\"\nenable = false\nlocale-strategy = \"directory\"\n").unwrap();
        assert_eq!(c.review, Review::Approve);
        assert_eq!(c.store.as_deref(), Some("notes"));
        assert_eq!(c.threshold, Some(0.8));
        assert_eq!(c.fail_on, FailOn::Orphan);
        assert!(!c.enable);
        assert_eq!(c.locale_strategy, LocaleStrategy::Directory);
    }

    #[test]
    fn bad_values_name_the_key() {
        let e = cfg("[preprocessor.notabene]\nreview = \"sometimes\"\n").unwrap_err();
        assert_eq!(e.message(), "review must be \"auto\" or \"approve\", got \"sometimes\" (book.toml [preprocessor.notabene] review)");
        let e = cfg("[preprocessor.notabene]\nthreshold = 2\n").unwrap_err();
        assert_eq!(e.message(), "threshold must be a number in (0, 1] (book.toml [preprocessor.notabene] threshold)");
        let e = cfg("[preprocessor.notabene]\nenable = \"yes\"\n").unwrap_err();
        assert_eq!(e.message(), "enable must be true or false (book.toml [preprocessor.notabene] enable)");
        let e = cfg("[preprocessor.notabene]\npage-prefix = \"../x\"\n").unwrap_err();
        assert!(e.message().starts_with("page-prefix: "), "{}", e.message());
        let (.., w) = parse_book_toml("[preprocessor.notabene]\nstroe = \"x\"\n").unwrap();
        assert_eq!(w, vec!["unknown key \"stroe\" ignored (book.toml [preprocessor.notabene])".to_string()]);
    }
}
