//! Book discovery and configuration: finds `book.toml`, reads `[book]` (src, language, title) and
//! the `[preprocessor.notabene]` table (kebab-case keys), deserialized with serde into a typed
//! table and then [`Config`] with its defaults. A malformed value is an error naming the key;
//! mdBook's own preprocessor keys are accepted; unknown keys are warned about.

use super::git::Repo;
use crate::{Error, Result, bail};
use mdbook_preprocessor::config::Config as MdConfig;
use notabene_core::say_err;
use notabene_core::slash_path;
use notabene_store::Store;
use serde::Deserialize;
use serde::de::{self, Deserializer, value::MapDeserializer};
use serde_json::Value;
use std::cell::Cell;
use std::fmt::Display;
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
    pub fn done_status(self) -> notabene_store::Status {
        match self {
            Review::Auto => notabene_store::Status::Resolved,
            Review::Approve => notabene_store::Status::Addressed,
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
    /// `print-comments` (default false): print.html carries every comment as a numbered
    /// note beside its text (the client draws them; see `docs/src/guide/reader.md`, "Printing with comments").
    pub print_comments: bool,
    /// `public` (default false): a published build — pages carry the comments but show no
    /// counts, badges or marks until the reader opens the comments panel.
    pub public: bool,
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
            print_comments: false,
            public: false,
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
    /// The git repository holding the root (looked up once, when first asked).
    repo: Repo,
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
        let mut book = Book {
            repo: Repo::discover(&root),
            root,
            src: config.book.src.to_string_lossy().into_owned(),
            language: config.book.language.clone(),
            default_language,
            title: config.book.title.clone(),
            config: cfg,
            warnings,
            mdbook: config,
        };
        let store = book.store();
        book.repo = std::mem::take(&mut book.repo).with_store(store.root(), &book.src_dir());
        Ok(book)
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

    /// The git repository the book lives in (found once, when first asked).
    pub fn repo(&self) -> &Repo {
        &self.repo
    }

    /// The book with `repo` as its repository: one already looked up from its root.
    pub fn with_repo(self, repo: Repo) -> Book {
        Book { repo, ..self }
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
        if let Some(git_root) = self.repo.root()
            && let Ok(rel) = canonical(&src).strip_prefix(git_root)
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

/// The `[preprocessor.notabene]` table as written. Each key is read by the function its
/// `deserialize_with` names, whose error is the rest of a message that begins with the key
/// (` must be true or false`, `: invalid page id …`; see [`parse_table`]). A key of no field
/// (mdBook's own, or unknown) lands in `other`.
#[derive(Default, Deserialize)]
#[serde(rename_all = "kebab-case", default)]
struct Table {
    #[serde(deserialize_with = "store_dir")]
    store: Option<String>,
    #[serde(deserialize_with = "space_name")]
    space: Option<String>,
    #[serde(deserialize_with = "page_prefix")]
    page_prefix: Option<String>,
    #[serde(deserialize_with = "language")]
    default_language: Option<String>,
    #[serde(deserialize_with = "choice")]
    locale_strategy: Option<LocaleStrategy>,
    #[serde(deserialize_with = "threshold")]
    threshold: Option<f64>,
    #[serde(deserialize_with = "choice")]
    fail_on: Option<FailOn>,
    #[serde(deserialize_with = "choice")]
    review: Option<Review>,
    #[serde(deserialize_with = "flag")]
    enable: Option<bool>,
    #[serde(deserialize_with = "flag")]
    generated_pages: Option<bool>,
    #[serde(deserialize_with = "flag")]
    print_comments: Option<bool>,
    #[serde(deserialize_with = "flag")]
    public: Option<bool>,
    #[serde(deserialize_with = "languages")]
    languages: Option<Vec<String>>,
    #[serde(deserialize_with = "bytes")]
    compress_above: Option<usize>,
    #[serde(flatten)]
    other: serde_json::Map<String, Value>,
}

impl Table {
    /// The configuration, with the default of each key not written, and a warning for each
    /// key that is neither ours nor mdBook's.
    fn into_config(self) -> (Config, Vec<String>) {
        let d = Config::default();
        let config = Config {
            store: self.store,
            space: self.space.unwrap_or(d.space),
            page_prefix: self.page_prefix,
            default_language: self.default_language,
            locale_strategy: self.locale_strategy.unwrap_or(d.locale_strategy),
            threshold: self.threshold,
            fail_on: self.fail_on.unwrap_or(d.fail_on),
            review: self.review.unwrap_or(d.review),
            enable: self.enable.unwrap_or(d.enable),
            generated_pages: self.generated_pages.unwrap_or(d.generated_pages),
            print_comments: self.print_comments.unwrap_or(d.print_comments),
            public: self.public.unwrap_or(d.public),
            languages: self.languages.unwrap_or(d.languages),
            compress_above: self.compress_above.unwrap_or(d.compress_above),
        };
        let warnings = self
            .other
            .keys()
            .filter(|k| !MDBOOK_KEYS.contains(&k.as_str()))
            .map(|k| format!("unknown key {k:?} ignored (book.toml [preprocessor.notabene])"))
            .collect();
        (config, warnings)
    }
}

/// Parses the `[preprocessor.notabene]` table (absent → defaults). Returns the config and
/// warnings for unknown keys. A refused value fails with `<key> must … (book.toml
/// [preprocessor.notabene] <key>)` (or `<key>: <reason> (…)`), for the first such key in
/// the table's order.
pub fn parse_table(table: Option<&Value>) -> Result<(Config, Vec<String>)> {
    let Some(table) = table else {
        return Ok((Config::default(), Vec::new()));
    };
    let Some(table) = table.as_object() else {
        bail!("must be a table (book.toml [preprocessor.notabene])");
    };
    // The key whose value is being read: serde reads each value right after its key, so
    // when a value is refused this is the key to name.
    let key = Cell::new(String::new());
    let entries = table.iter().map(|(k, v)| {
        key.set(k.clone());
        (k.clone(), v.clone())
    });
    let read: Result<Table, serde_json::Error> = Table::deserialize(MapDeserializer::new(entries));
    let table = read.map_err(|rest| {
        let key = key.take();
        Error::new(format!(
            "{key}{rest} (book.toml [preprocessor.notabene] {key})"
        ))
    })?;
    Ok(table.into_config())
}

/// A setting spelled as one of a few strings.
trait Choice: Copy + 'static {
    /// Each spelling and its value, in the order the error lists them.
    const CHOICES: &'static [(&'static str, Self)];
}

impl Choice for LocaleStrategy {
    const CHOICES: &'static [(&'static str, Self)] = &[
        ("suffix", LocaleStrategy::Suffix),
        ("directory", LocaleStrategy::Directory),
    ];
}

impl Choice for FailOn {
    const CHOICES: &'static [(&'static str, Self)] = &[
        ("never", FailOn::Never),
        ("orphan", FailOn::Orphan),
        ("fuzzy", FailOn::Fuzzy),
    ];
}

impl Choice for Review {
    const CHOICES: &'static [(&'static str, Self)] =
        &[("auto", Review::Auto), ("approve", Review::Approve)];
}

// The readers of [`Table`]'s values. Each error is the rest of the message after the key.

/// ` must <what>`.
fn must<E: de::Error>(what: impl Display) -> E {
    E::custom(format_args!(" must {what}"))
}

fn string<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    String::deserialize(d).map_err(|_| must("be a string"))
}

fn choice<'de, D: Deserializer<'de>, T: Choice>(d: D) -> Result<Option<T>, D::Error> {
    let s = string(d)?;
    if let Some((_, value)) = T::CHOICES.iter().find(|(name, _)| *name == s) {
        return Ok(Some(*value));
    }
    let list = T::CHOICES
        .iter()
        .map(|(name, _)| format!("\"{name}\""))
        .collect::<Vec<_>>()
        .join(" or ");
    Err(must(format_args!("be {list}, got {s:?}")))
}

fn store_dir<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let s = string(d)?;
    if s.trim().is_empty() {
        return Err(must("not be empty"));
    }
    Ok(Some(s))
}

fn space_name<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let s = string(d)?;
    if s.is_empty() || s.contains(['/', '\\']) || s.chars().any(char::is_control) {
        return Err(must(format_args!(
            "be a non-empty name without slashes, got {s:?}"
        )));
    }
    Ok(Some(s))
}

/// Surrounding slashes are dropped; what is left, unless empty, must be a valid page id.
fn page_prefix<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let s = string(d)?;
    let trimmed = s.trim_matches('/');
    if !trimmed.is_empty()
        && let Some(problem) = notabene_store::page_id::page_id_problem(trimmed)
    {
        return Err(de::Error::custom(format_args!(": {problem}")));
    }
    Ok(Some(trimmed.to_string()))
}

fn language<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let s = string(d)?;
    if !is_language_code(&s) {
        return Err(must(format_args!(
            "be a language code like \"en\", got {s:?}"
        )));
    }
    Ok(Some(s))
}

fn languages<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    Vec::<String>::deserialize(d)
        .ok()
        .filter(|list| list.iter().all(|s| is_language_code(s)))
        .map(Some)
        .ok_or_else(|| must("be an array of language codes like [\"en\", \"fr\"]"))
}

/// Also refuses NaN and infinities, which reach us as null.
fn threshold<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    f64::deserialize(d)
        .ok()
        .filter(|t| *t > 0.0 && *t <= 1.0)
        .map(Some)
        .ok_or_else(|| must("be a number in (0, 1]"))
}

fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    bool::deserialize(d)
        .map(Some)
        .map_err(|_| must("be true or false"))
}

fn bytes<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    u64::deserialize(d)
        .map(|n| Some(usize::try_from(n).unwrap_or(usize::MAX)))
        .map_err(|_| must("be a number of bytes, 0 or more"))
}

/// Whether `s` looks like a language code (`en`, `pt-BR`, `zh_CN`).
pub fn is_language_code(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 16
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests;
