//! Book discovery and configuration: finds `book.toml`, reads `[book]` (src, language, title)
//! and the `[preprocessor.notabene]` table (kebab-case keys). A malformed value is an error
//! naming the key; mdBook's own preprocessor keys are accepted; unknown keys are warned about.
//! Part of the book layer; may call the store (page-id validation) and the shared helpers.

use super::git::git_toplevel;
use crate::store::Store;
use crate::util::slash_path;
use crate::util::term::say_err;
use crate::{Error, Result, bail};
use mdbook_preprocessor::config::Config as MdConfig;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::str::FromStr;

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
    pub fn done_status(self) -> crate::store::Status {
        match self {
            Review::Auto => crate::store::Status::Resolved,
            Review::Approve => crate::store::Status::Addressed,
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
    /// `generated-pages` (default true): add the /review, /comments and /journal chapters.
    pub generated_pages: bool,
    /// `languages`: the languages page ids may carry (besides the default and `po/*.po`).
    pub languages: Vec<String>,
    /// `compress-above` (bytes, default 16 KiB): data islands and generated-page payloads
    /// whose JSON is longer are written deflated (see [`crate::util::payload`]); 0 deflates
    /// every one.
    pub compress_above: usize,
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
            generated_pages: true,
            languages: Vec::new(),
            compress_above: crate::util::payload::DEFAULT_COMPRESS_ABOVE,
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
    /// `[book] language` (after `MDBOOK_*` environment overrides).
    pub language: Option<String>,
    /// The language whose page ids carry no locale: `default-language`, else `[book] language`
    /// as written in book.toml (before environment overrides), else `en`.
    pub default_language: String,
    /// `[book] title`.
    pub title: Option<String>,
    /// The notabene table.
    pub config: Config,
    /// Non-fatal remarks found while reading (unknown keys).
    pub warnings: Vec<String>,
    /// The whole configuration as mdBook reads it (for `[output.html]`).
    pub mdbook: MdConfig,
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
        let cwd = std::env::current_dir()
            .map_err(|e| Error::new(format!("cannot read the working directory: {e}")))?;
        for anc in cwd.ancestors() {
            if anc.join("book.toml").is_file() {
                return Book::load(anc).map(Some);
            }
        }
        Ok(None)
    }

    /// Loads the book whose `book.toml` is in `root`, with `MDBOOK_*` environment overrides
    /// applied as mdBook applies them.
    pub fn load(root: &Path) -> Result<Book> {
        let path = root.join("book.toml");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Error::io("cannot read book.toml", &path, e))?;
        let file_config = MdConfig::from_str(&text)
            .map_err(|e| Error::new(format!("book.toml is invalid: {e:#} (book.toml)")))?;
        let file_language = file_config.book.language.clone();
        let mut config = file_config;
        config.update_from_env().map_err(|e| {
            Error::new(format!(
                "invalid MDBOOK_* environment override: {e:#} (environment)"
            ))
        })?;
        Book::from_config(root, config, file_language)
    }

    /// A book from an already-loaded mdBook configuration (the preprocessor's input).
    /// `file_language` is `[book] language` as written in book.toml.
    pub fn from_config(
        root: &Path,
        config: MdConfig,
        file_language: Option<String>,
    ) -> Result<Book> {
        let (cfg, warnings) = parse_table(
            config
                .get::<Value>("preprocessor.notabene")
                .ok()
                .flatten()
                .as_ref(),
        )?;
        let default_language = cfg
            .default_language
            .clone()
            .or(file_language)
            .unwrap_or_else(|| "en".into());
        let root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
        Ok(Book {
            root,
            src: config.book.src.to_string_lossy().into_owned(),
            language: config.book.language.clone(),
            default_language,
            title: config.book.title.clone(),
            config: cfg,
            warnings,
            mdbook: config,
        })
    }

    /// A book from the configuration mdBook hands a plugin, with `[book] language` as written
    /// in `root/book.toml` (before environment overrides) as the default language when none
    /// is configured.
    pub fn from_mdbook(root: &Path, config: MdConfig) -> Result<Book> {
        let file_language = std::fs::read_to_string(root.join("book.toml"))
            .ok()
            .and_then(|t| t.parse::<MdConfig>().ok())
            .and_then(|c| c.book.language);
        Book::from_config(root, config, file_language)
    }

    /// The store of this book: `NOTABENE_STORE`, else `[preprocessor.notabene] store`, else
    /// `<root>/.notabene`.
    pub fn store(&self) -> Store {
        locate_store(None, Some(self)).unwrap_or_else(|| Store::new(self.root.join(".notabene")))
    }

    /// The language of this build (`[book] language`, else the default language).
    pub fn build_language(&self) -> &str {
        self.language.as_deref().unwrap_or(&self.default_language)
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

/// Where the store is: `flag` (the CLI's `--store`), else `NOTABENE_STORE`, else the book's
/// `[preprocessor.notabene] store` (default `.notabene`) under its root; `None` with neither a
/// flag, the variable nor a book. Relative paths are taken from the working directory.
pub fn locate_store(flag: Option<&Path>, book: Option<&Book>) -> Option<Store> {
    let env = std::env::var_os("NOTABENE_STORE")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from);
    let dir = match (flag, env, book) {
        (Some(s), _, _) => s.to_path_buf(),
        (None, Some(s), _) => s,
        (None, None, Some(b)) => b
            .root
            .join(b.config.store.as_deref().unwrap_or(".notabene")),
        (None, None, None) => return None,
    };
    Some(Store::new(std::path::absolute(&dir).unwrap_or(dir)))
}

/// The mdBook versions whose wire format this build understands.
pub const SUPPORTED_MDBOOK: &str = ">=0.5.0, <0.6.0";

/// Warns when the calling mdBook is outside the supported range.
pub fn check_mdbook_version(version: &str) {
    let req = semver::VersionReq::parse(SUPPORTED_MDBOOK).expect("valid requirement");
    match semver::Version::parse(version) {
        Ok(v) if req.matches(&v) => {}
        _ => say_err!(
            "notabene: warning: called by mdBook {version}; mdbook-notabene {} supports mdBook {SUPPORTED_MDBOOK}",
            env!("CARGO_PKG_VERSION")
        ),
    }
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

/// Parses the `[preprocessor.notabene]` table (absent → defaults). Returns the config and
/// warnings for unknown keys.
pub fn parse_table(table: Option<&Value>) -> Result<(Config, Vec<String>)> {
    let mut cfg = Config::default();
    let mut warnings = Vec::new();
    let Some(table) = table else {
        return Ok((cfg, warnings));
    };
    let Some(table) = table.as_object() else {
        bail!("must be a table (book.toml [preprocessor.notabene])");
    };
    for (key, value) in table {
        let at = || format!("book.toml [preprocessor.notabene] {key}");
        let string = |v: &Value| -> Result<String> {
            match v.as_str() {
                Some(s) => Ok(s.to_string()),
                None => bail!("{key} must be a string ({})", at()),
            }
        };
        let choice = |v: &Value, allowed: &[&str]| -> Result<String> {
            let s = string(v)?;
            if allowed.contains(&s.as_str()) {
                Ok(s)
            } else {
                let list = allowed
                    .iter()
                    .map(|a| format!("\"{a}\""))
                    .collect::<Vec<_>>()
                    .join(" or ");
                bail!("{key} must be {list}, got {s:?} ({})", at())
            }
        };
        match key.as_str() {
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
                    bail!(
                        "space must be a non-empty name without slashes, got {s:?} ({})",
                        at()
                    );
                }
                cfg.space = s;
            }
            "page-prefix" => {
                let s = string(value)?;
                let trimmed = s.trim_matches('/');
                if !trimmed.is_empty() {
                    crate::store::validate_page_id(trimmed).map_err(|e| {
                        Error::new(format!(
                            "page-prefix: {} ({})",
                            e.message().trim_end_matches(" (page)"),
                            at()
                        ))
                    })?;
                }
                cfg.page_prefix = Some(trimmed.to_string());
            }
            "default-language" => {
                let s = string(value)?;
                if !is_language_code(&s) {
                    bail!(
                        "default-language must be a language code like \"en\", got {s:?} ({})",
                        at()
                    );
                }
                cfg.default_language = Some(s);
            }
            "locale-strategy" => {
                cfg.locale_strategy = match choice(value, &["suffix", "directory"])?.as_str() {
                    "suffix" => LocaleStrategy::Suffix,
                    _ => LocaleStrategy::Directory,
                }
            }
            "threshold" => match value.as_f64() {
                Some(t) if t > 0.0 && t <= 1.0 => cfg.threshold = Some(t),
                _ => bail!("threshold must be a number in (0, 1] ({})", at()),
            },
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
            "enable" => match value.as_bool() {
                Some(b) => cfg.enable = b,
                None => bail!("enable must be true or false ({})", at()),
            },
            "languages" => {
                let list = value
                    .as_array()
                    .filter(|a| a.iter().all(|v| v.as_str().is_some_and(is_language_code)));
                let Some(list) = list else {
                    bail!(
                        "languages must be an array of language codes like [\"en\", \"fr\"] ({})",
                        at()
                    );
                };
                cfg.languages = list
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect();
            }
            "generated-pages" => match value.as_bool() {
                Some(b) => cfg.generated_pages = b,
                None => bail!("generated-pages must be true or false ({})", at()),
            },
            "compress-above" => match value.as_u64() {
                Some(n) => cfg.compress_above = usize::try_from(n).unwrap_or(usize::MAX),
                None => bail!(
                    "compress-above must be a number of bytes, 0 or more ({})",
                    at()
                ),
            },
            k if MDBOOK_KEYS.contains(&k) => {}
            other => warnings.push(format!(
                "unknown key {other:?} ignored (book.toml [preprocessor.notabene])"
            )),
        }
    }
    Ok((cfg, warnings))
}

/// Whether `s` looks like a language code (`en`, `pt-BR`, `zh_CN`).
pub fn is_language_code(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 16
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(toml: &str) -> Result<Config> {
        let config = MdConfig::from_str(toml).unwrap();
        parse_table(
            config
                .get::<Value>("preprocessor.notabene")
                .unwrap()
                .as_ref(),
        )
        .map(|p| p.0)
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
        assert_eq!(
            e.message(),
            "review must be \"auto\" or \"approve\", got \"sometimes\" (book.toml [preprocessor.notabene] review)"
        );
        let e = cfg("[preprocessor.notabene]\nthreshold = 2\n").unwrap_err();
        assert_eq!(
            e.message(),
            "threshold must be a number in (0, 1] (book.toml [preprocessor.notabene] threshold)"
        );
        let e = cfg("[preprocessor.notabene]\nenable = \"yes\"\n").unwrap_err();
        assert_eq!(
            e.message(),
            "enable must be true or false (book.toml [preprocessor.notabene] enable)"
        );
        let e = cfg("[preprocessor.notabene]\npage-prefix = \"../x\"\n").unwrap_err();
        assert_eq!(
            e.message(),
            "page-prefix: invalid page id \"../x\": it contains a '..' segment (book.toml [preprocessor.notabene] page-prefix)"
        );
        let config = MdConfig::from_str("[preprocessor.notabene]\nstroe = \"x\"\n").unwrap();
        let (_, w) = parse_table(
            config
                .get::<Value>("preprocessor.notabene")
                .unwrap()
                .as_ref(),
        )
        .unwrap();
        assert_eq!(
            w,
            vec!["unknown key \"stroe\" ignored (book.toml [preprocessor.notabene])".to_string()]
        );
    }
}
