//! The review gate (`notabene gate`, the MCP `gate` tool): the review state of the pages a
//! change touches, as findings a CI job reports on the pull request — open comments, addressed
//! ones waiting for validation, lost and fuzzy anchors, and resolved comments whose text
//! changed after they were resolved (re-check, the `recheck` module).
//!
//! A page is touched when a file it is read from (its chapter, or a file it includes) or the
//! store file of one of its comments differs between the base and the work tree; `--all` takes
//! every page. Each finding carries its source file and lines, the comment's first message and
//! author, a link to the comment on the site, and a fingerprint that depends only on the kind
//! and the comment (stable across runs, commits and moved lines). Reads the book, the store and
//! git; writes nothing. The report's formats are the CLI's (`apps::cli::gate`).
//!
//! Calls: `output::engine` (anchoring the book as it is), `model::book::history` (git),
//! `model::resolve::source_map` (source places).

mod locate;
mod recheck;

use crate::Result;
use crate::model::book::Book;
use crate::model::book::git::BRANCH_SEGMENT;
use crate::model::book::history::History;
use crate::model::resolve::BookAnchors;
use notabene_core::Error;
use notabene_store::{Status, Store};
use serde::Serialize;
use sha2::Digest as _;
use std::collections::BTreeSet;

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A comment still open (and not held by its reviewer).
    Open,
    /// A comment addressed, waiting for a reviewer to validate it.
    Addressed,
    /// A comment still open or addressed whose quoted text is no longer found.
    Orphan,
    /// A comment still open or addressed whose quoted text is found changed.
    Fuzzy,
    /// A resolved comment whose text changed after the commit that resolved it.
    Recheck,
}

impl Kind {
    /// Every kind, in report order.
    pub const ALL: [Kind; 5] = [
        Kind::Open,
        Kind::Addressed,
        Kind::Orphan,
        Kind::Fuzzy,
        Kind::Recheck,
    ];

    /// Its name on the command line and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Open => "open",
            Kind::Addressed => "addressed",
            Kind::Orphan => "orphan",
            Kind::Fuzzy => "fuzzy",
            Kind::Recheck => "recheck",
        }
    }

    /// The kind named `s`.
    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// A title, for annotations and rules.
    pub fn title(self) -> &'static str {
        match self {
            Kind::Open => "Open review comment",
            Kind::Addressed => "Addressed, waiting for validation",
            Kind::Orphan => "Review comment lost its text",
            Kind::Fuzzy => "Review comment's text changed",
            Kind::Recheck => "Resolved comment's text changed since",
        }
    }

    /// What it means and what to do, one paragraph.
    pub fn help(self) -> &'static str {
        match self {
            Kind::Open => {
                "A review comment on this page is still open: answer it, or hold it to say a reviewer is still on it."
            }
            Kind::Addressed => {
                "The change answers this comment and waits for a reviewer to validate it: approve it on the review page, or reopen it."
            }
            Kind::Orphan => {
                "The text this open comment quotes is no longer on its page: restore the text, or close or re-anchor the comment (`notabene anchors`)."
            }
            Kind::Fuzzy => {
                "The text this open comment quotes changed: check the comment still applies where it is marked."
            }
            Kind::Recheck => {
                "This comment was resolved, and the text it is about changed in a later commit: a reviewer should check the resolution still holds, and resolve it again or reopen it."
            }
        }
    }
}

/// The revision the change is compared with.
#[derive(Debug, Clone)]
pub enum Base {
    /// The merge base of `HEAD` and this revision.
    Rev(String),
    /// The merge base with the base branch CI names, else the remote's default branch.
    Default,
    /// No base: every page of the book.
    All,
}

/// Where a finding's link points.
#[derive(Debug, Clone)]
pub enum Links {
    /// The published book at this URL.
    Site(String),
    /// The review server at this URL, the book of this branch.
    Hub {
        /// The hub's URL.
        url: String,
        /// The branch.
        branch: String,
    },
}

impl Links {
    /// The URL of `page_url` (a site-relative page URL with its query, `guide.html?nb=c_1`),
    /// what a URL cannot hold in it percent-encoded (spaces, quotes, `<`, `>`, `%`, non-ASCII).
    pub fn to(&self, page_url: &str) -> String {
        let slash = |u: &str| format!("{}/", u.trim_end_matches('/'));
        let page_url = percent_encoding::utf8_percent_encode(page_url, PAGE_URL).to_string();
        match self {
            Links::Site(url) => format!("{}{page_url}", slash(url)),
            Links::Hub { url, branch } => format!(
                "{}b/{}/{page_url}",
                slash(url),
                percent_encoding::utf8_percent_encode(branch, BRANCH_SEGMENT)
            ),
        }
    }
}

/// What a page URL has percent-encoded (its `/`, `?`, `=` and `&` are its own).
const PAGE_URL: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'\\')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}')
    .add(b'#');

/// What the gate is asked.
#[derive(Debug, Clone)]
pub struct GateOptions {
    /// What the change is compared with.
    pub base: Base,
    /// Where links point (`None`: findings carry no link).
    pub links: Option<Links>,
    /// The kinds that fail the gate.
    pub fail_on: BTreeSet<Kind>,
    /// Anchor the book inert: none of its preprocessor commands run, nothing outside the
    /// repository is read (a branch not trusted).
    pub inert: bool,
}

/// One finding.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// What it is about.
    pub kind: Kind,
    /// Whether its kind fails the gate.
    pub fails: bool,
    /// The comment's id.
    pub id: String,
    /// The comment's page.
    pub page: String,
    /// The chapter's title (the page id when the page is not in the book).
    pub chapter: String,
    /// The file, relative to the top of the repository (`/`-separated).
    pub file: String,
    /// The first line of the anchored text (1 when the comment has no place in the text).
    pub line: usize,
    /// Its last line.
    pub end_line: usize,
    /// The comment's first message.
    pub message: String,
    /// Its author, as written (`Name <email>`).
    pub author: String,
    /// What the gate saw, in words (the anchoring, the commits of a re-check).
    pub detail: String,
    /// A link to the comment on the site or the review server.
    pub link: Option<String>,
    /// Stable across runs and commits: a digest of the kind and the comment's id.
    pub fingerprint: String,
}

impl Finding {
    /// The finding in words, on lines: the author's name and the first message, what the gate
    /// saw, the link.
    pub fn body(&self) -> String {
        let mut body = format!("{}: {}\n{}", self.author_name(), self.message, self.detail);
        if let Some(link) = &self.link {
            body.push('\n');
            body.push_str(link);
        }
        body
    }

    /// The author's name, without the address (`Name` of `Name <email>`).
    pub fn author_name(&self) -> &str {
        match self.author.split_once('<') {
            Some((name, _)) if !name.trim().is_empty() => name.trim(),
            _ => self.author.trim(),
        }
    }
}

/// A page the change touches, with its counts by kind.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PageState {
    /// The page id.
    pub page: String,
    /// Its chapter's title (the page id when the page is not in the book).
    pub chapter: String,
    /// Its file, relative to the top of the repository.
    pub file: String,
    /// A link to the page.
    pub link: Option<String>,
    /// Findings by kind, in [`Kind::ALL`]'s order.
    pub counts: [usize; 5],
}

/// The base a report compared with.
#[derive(Debug, Clone, Serialize)]
pub struct BaseUsed {
    /// The revision, as given or found.
    pub rev: String,
    /// What named it (`--base`, `GITHUB_BASE_REF`, `origin/HEAD`).
    pub from: String,
    /// The merge base, a commit.
    pub commit: String,
}

/// What the gate found.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GateReport {
    /// What the change was compared with (`None`: every page).
    pub base: Option<BaseUsed>,
    /// The pages the change touches, in book order (the pages not in the book after them).
    pub pages: Vec<PageState>,
    /// The findings, page by page, each page's by line.
    pub findings: Vec<Finding>,
    /// The kinds that fail the gate.
    pub fail_on: Vec<Kind>,
    /// Whether a finding of those kinds exists.
    pub failed: bool,
    /// Warnings: what the gate could not look at, and why.
    pub notes: Vec<String>,
}

impl GateReport {
    /// Findings by kind over every page, in [`Kind::ALL`]'s order.
    pub fn totals(&self) -> [usize; 5] {
        let mut t = [0; 5];
        for f in &self.findings {
            t[f.kind as usize] += 1;
        }
        t
    }
}

/// "2 open, 0 addressed, …": `counts` (in [`Kind::ALL`]'s order) in words.
pub fn counts_in_words(counts: &[usize; 5]) -> String {
    Kind::ALL
        .iter()
        .map(|k| format!("{} {}", counts[*k as usize], k.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The review state of the pages the change touches.
pub fn gate(book: &Book, store: &Store, opts: &GateOptions) -> Result<GateReport> {
    let history = History::discover(&book.root);
    let mut notes = Vec::new();
    let base = match (&opts.base, &history) {
        (Base::All, _) => None,
        (_, None) => {
            return Err(Error::new(format!(
                "the gate compares with git history, and {} is not in a git repository; pass --all for every page (--base)",
                book.root.display()
            )));
        }
        (Base::Rev(rev), Some(h)) => Some(BaseUsed {
            commit: h.merge_base(rev).ok_or_else(|| match h.commit(rev) {
                None => Error::new(format!(
                    "no merge base of HEAD and {rev:?}: not a revision of this repository (--base)"
                )),
                Some(_) => Error::new(format!(
                    "no merge base of HEAD and {rev:?}: fetch the history (a shallow clone has none) (--base)"
                )),
            })?,
            rev: rev.clone(),
            from: "--base".into(),
        }),
        (Base::Default, Some(h)) => {
            let found = h.default_base().ok_or_else(|| {
                Error::new(
                    "no base branch to compare with: neither GITHUB_BASE_REF, CI_MERGE_REQUEST_DIFF_BASE_SHA nor origin/HEAD names a commit; pass --base REV, or --all for every page (--base)",
                )
            })?;
            Some(BaseUsed {
                commit: h.merge_base(&found.rev).ok_or_else(|| {
                    Error::new(format!(
                        "no merge base of HEAD and {} (from {}): fetch the history (a shallow clone has none), or pass --base REV (--base)",
                        found.rev, found.from
                    ))
                })?,
                rev: found.rev,
                from: found.from.into(),
            })
        }
    };
    if history.is_none() {
        notes.push(format!(
            "notabene: warning: {} is not in a git repository: resolved comments are not re-checked",
            book.root.display()
        ));
    }
    let snap = store.load()?;
    snap.warn_unreadable();
    let records: Vec<_> = snap.comments().collect();
    let comments = records.iter().map(|r| r.comment.clone()).collect();
    let trust = match (&history, opts.inert) {
        (Some(h), true) => crate::model::book::Trust::Inert {
            checkout: h.top().to_path_buf(),
        },
        (None, true) => crate::model::book::Trust::Inert {
            checkout: book.root.clone(),
        },
        (_, false) => crate::model::book::Trust::Full,
    };
    let (anchors, _) = crate::output::engine::anchor_comments_trusting(book, comments, &trust)?;
    let places = locate::Places::new(&anchors, history.as_ref(), book, store);
    let changed = match (&base, &history) {
        (Some(b), Some(h)) => Some(h.changed_since(&b.commit)),
        _ => None,
    };
    let store_file = |ci: usize| places.store_file(&records[ci].file);
    // The pages the change touches: book order, then the pages no longer in the book.
    let touched_chapter = |ch: usize| match &changed {
        None => true,
        Some(changed) => {
            places
                .files_of_chapter(ch)
                .iter()
                .any(|f| changed.contains(f))
                || (0..anchors.comments.len()).any(|ci| {
                    anchors.located[ci].chapter == Some(ch) && changed.contains(&store_file(ci))
                })
        }
    };
    let mut pages: Vec<PageState> = Vec::new();
    let mut findings = Vec::new();
    for (ch, chapter) in anchors.chapters.iter().enumerate() {
        if !touched_chapter(ch) {
            continue;
        }
        let mut page = PageState {
            page: chapter.page.clone(),
            chapter: chapter.name.clone(),
            file: places.chapter_file(ch),
            link: opts.links.as_ref().map(|l| l.to(&chapter.url)),
            counts: [0; 5],
        };
        let mut here: Vec<Finding> = (0..anchors.comments.len())
            .filter(|&ci| anchors.located[ci].chapter == Some(ch))
            .flat_map(|ci| findings_of(&anchors, ci, &places, &records[ci].file, opts))
            .collect();
        here.sort_by(|a, b| (a.line, a.kind, &a.id).cmp(&(b.line, b.kind, &b.id)));
        for f in &here {
            page.counts[f.kind as usize] += 1;
        }
        pages.push(page);
        findings.extend(here);
    }
    // Comments whose page is no longer in the book (a chapter deleted or renamed): lost, on
    // the page the change removed, or whose comment file it changed.
    let mut gone: Vec<(String, Finding)> = Vec::new();
    for (ci, (c, l)) in anchors.comments.iter().zip(&anchors.located).enumerate() {
        let live = matches!(c.status(), Some(Status::Open | Status::Addressed));
        if l.chapter.is_some() || l.other_language.is_some() || !live {
            continue;
        }
        let page = c.page().unwrap_or_default().to_string();
        let touched = changed.as_ref().is_none_or(|changed| {
            changed.contains(&store_file(ci)) || changed.contains(&format!("{page}.md"))
        });
        if touched {
            for f in findings_of(&anchors, ci, &places, &records[ci].file, opts) {
                gone.push((page.clone(), f));
            }
        }
    }
    gone.sort_by(|a, b| (&a.0, a.1.kind, &a.1.id).cmp(&(&b.0, b.1.kind, &b.1.id)));
    for (page, f) in gone {
        if pages.last().is_none_or(|p| p.page != page) {
            pages.push(PageState {
                chapter: page.clone(),
                page: page.clone(),
                file: f.file.clone(),
                link: None,
                counts: [0; 5],
            });
        }
        if let Some(p) = pages.last_mut() {
            p.counts[f.kind as usize] += 1;
        }
        findings.push(f);
    }
    let failed = findings.iter().any(|f| f.fails);
    Ok(GateReport {
        base,
        pages,
        findings,
        fail_on: opts.fail_on.iter().copied().collect(),
        failed,
        notes,
    })
}

/// The findings of comment `ci` (one per kind that applies), `file` its store file.
fn findings_of(
    anchors: &BookAnchors,
    ci: usize,
    places: &locate::Places,
    file: &str,
    opts: &GateOptions,
) -> Vec<Finding> {
    let c = &anchors.comments[ci];
    let Some(id) = c.id() else {
        return Vec::new();
    };
    let status = c.status();
    let anchoring = anchors.status(ci);
    let live = matches!(status, Some(Status::Open | Status::Addressed));
    let mut kinds: Vec<(Kind, String)> = Vec::new();
    if status == Some(Status::Open) && !c.held() {
        kinds.push((Kind::Open, "open".into()));
    }
    if status == Some(Status::Addressed) {
        kinds.push((Kind::Addressed, "addressed, waiting for validation".into()));
    }
    if live && anchoring == "orphan" {
        kinds.push((Kind::Orphan, "its quoted text is not found".into()));
    }
    if live && anchoring == "fuzzy" {
        let confidence = anchors.located[ci]
            .resolution
            .as_ref()
            .map_or(0.0, |r| r.confidence);
        kinds.push((Kind::Fuzzy, format!("found changed ({confidence:.2})")));
    }
    let place = places.of(ci, file);
    if status == Some(Status::Resolved)
        && let Some(why) = recheck::recheck(places, ci, &place, file)
    {
        kinds.push((Kind::Recheck, why));
    }
    let first = c.thread().first();
    let field = |k: &str| {
        first
            .and_then(|m| m.get(k))
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string()
    };
    let chapter = anchors.located[ci]
        .chapter
        .map(|ch| anchors.chapters[ch].name.clone())
        .unwrap_or_else(|| c.page().unwrap_or_default().to_string());
    let link = anchors
        .url(ci)
        .and_then(|u| opts.links.as_ref().map(|l| l.to(&u)));
    kinds
        .into_iter()
        .map(|(kind, detail)| Finding {
            kind,
            fails: opts.fail_on.contains(&kind),
            id: id.to_string(),
            page: c.page().unwrap_or_default().to_string(),
            chapter: chapter.clone(),
            file: place.file.clone(),
            line: place.line,
            end_line: place.end_line,
            message: field("body"),
            author: field("author"),
            detail,
            link: link.clone(),
            fingerprint: fingerprint(kind, id),
        })
        .collect()
}

/// A finding's fingerprint: the first 32 hex digits of SHA-256 over the kind and the id.
fn fingerprint(kind: Kind, id: &str) -> String {
    let digest = sha2::Sha256::digest(format!("notabene-gate\0{}\0{id}", kind.as_str()));
    digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
}
