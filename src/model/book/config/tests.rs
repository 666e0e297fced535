//! Tests of the `[preprocessor.notabene]` table: its fields, defaults, checks and messages.

use super::*;
use pretty_assertions::assert_eq;

fn parse(toml: &str) -> Result<(Config, Vec<String>)> {
    let config = MdConfig::from_str(toml).unwrap();
    parse_table(
        config
            .get::<Value>("preprocessor.notabene")
            .unwrap()
            .as_ref(),
    )
}

fn cfg(toml: &str) -> Result<Config> {
    parse(toml).map(|p| p.0)
}

/// The message for a table holding only `lines`.
fn refused(lines: &str) -> String {
    match cfg(&format!("[preprocessor.notabene]\n{lines}\n")) {
        Ok(c) => panic!("{lines}: accepted as {c:?}"),
        Err(e) => e.message().to_string(),
    }
}

#[test]
fn defaults_and_values() {
    assert_eq!(cfg("[book]\ntitle = \"x\"\n").unwrap(), Config::default());
    assert_eq!(cfg("[preprocessor.notabene]\n").unwrap(), Config::default());
    let c = cfg("[preprocessor.notabene]\ncommand = \"x\"\nafter = [\"links\"]\nreview = \"approve\"\nstore = \"notes\"\nspace = \"docs\"\npage-prefix = \"/docs/src/\"\ndefault-language = \"pt-BR\"\nthreshold = 0.8\nfail-on = \"orphan\"\nenable = false\ngenerated-pages = false\nprint-comments = true\npublic = true\nlanguages = [\"fr\", \"zh_CN\"]\ncompress-above = 0\nlocale-strategy = \"directory\"\n").unwrap();
    assert_eq!(
        c,
        Config {
            store: Some("notes".into()),
            space: "docs".into(),
            page_prefix: Some("docs/src".into()),
            default_language: Some("pt-BR".into()),
            locale_strategy: LocaleStrategy::Directory,
            threshold: Some(0.8),
            fail_on: FailOn::Orphan,
            review: Review::Approve,
            enable: false,
            generated_pages: false,
            print_comments: true,
            public: true,
            languages: vec!["fr".into(), "zh_CN".into()],
            compress_above: 0,
        }
    );
    // The other spellings, an integer threshold, and a prefix of slashes only.
    let c = cfg("[preprocessor.notabene]\nreview = \"auto\"\nfail-on = \"fuzzy\"\nlocale-strategy = \"suffix\"\nthreshold = 1\npage-prefix = \"/\"\nenable = true\ncompress-above = 100\n").unwrap();
    assert_eq!(
        (c.review, c.fail_on, c.locale_strategy, c.threshold),
        (
            Review::Auto,
            FailOn::Fuzzy,
            LocaleStrategy::Suffix,
            Some(1.0)
        )
    );
    assert_eq!(
        (c.page_prefix.as_deref(), c.enable, c.compress_above),
        (Some(""), true, 100)
    );
    let c = cfg("[preprocessor.notabene]\nfail-on = \"never\"\n").unwrap();
    assert_eq!(c.fail_on, FailOn::Never);
}

/// Each `(lines, message)`: the table holding `lines` is refused with exactly `message`.
fn check(cases: &[(&str, &str)]) {
    for (lines, message) in cases {
        assert_eq!(refused(lines), *message, "{lines}");
    }
}

#[test]
fn bad_strings_name_the_key() {
    check(&[
        (
            "store = 1",
            "store must be a string (book.toml [preprocessor.notabene] store)",
        ),
        (
            "store = \" \"",
            "store must not be empty (book.toml [preprocessor.notabene] store)",
        ),
        (
            "space = true",
            "space must be a string (book.toml [preprocessor.notabene] space)",
        ),
        (
            "space = \"a/b\"",
            "space must be a non-empty name without slashes, got \"a/b\" (book.toml [preprocessor.notabene] space)",
        ),
        (
            "space = \"a\\\\b\"",
            "space must be a non-empty name without slashes, got \"a\\\\b\" (book.toml [preprocessor.notabene] space)",
        ),
        (
            "space = \"\"",
            "space must be a non-empty name without slashes, got \"\" (book.toml [preprocessor.notabene] space)",
        ),
        (
            "page-prefix = 3",
            "page-prefix must be a string (book.toml [preprocessor.notabene] page-prefix)",
        ),
        (
            "page-prefix = \"../x\"",
            "page-prefix: invalid page id \"../x\": it contains a '..' segment (book.toml [preprocessor.notabene] page-prefix)",
        ),
        (
            "page-prefix = \"/src/.git/\"",
            "page-prefix: invalid page id \"src/.git\": it contains a '.git' segment (book.toml [preprocessor.notabene] page-prefix)",
        ),
        (
            "default-language = []",
            "default-language must be a string (book.toml [preprocessor.notabene] default-language)",
        ),
        (
            "default-language = \"en us\"",
            "default-language must be a language code like \"en\", got \"en us\" (book.toml [preprocessor.notabene] default-language)",
        ),
    ]);
}

#[test]
fn bad_choices_name_the_key_and_list_the_spellings() {
    check(&[
        (
            "locale-strategy = 1",
            "locale-strategy must be a string (book.toml [preprocessor.notabene] locale-strategy)",
        ),
        (
            "locale-strategy = \"folder\"",
            "locale-strategy must be \"suffix\" or \"directory\", got \"folder\" (book.toml [preprocessor.notabene] locale-strategy)",
        ),
        (
            "fail-on = false",
            "fail-on must be a string (book.toml [preprocessor.notabene] fail-on)",
        ),
        (
            "fail-on = \"always\"",
            "fail-on must be \"never\" or \"orphan\" or \"fuzzy\", got \"always\" (book.toml [preprocessor.notabene] fail-on)",
        ),
        (
            "review = 2",
            "review must be a string (book.toml [preprocessor.notabene] review)",
        ),
        (
            "review = \"sometimes\"",
            "review must be \"auto\" or \"approve\", got \"sometimes\" (book.toml [preprocessor.notabene] review)",
        ),
        (
            "review = \"Auto\"",
            "review must be \"auto\" or \"approve\", got \"Auto\" (book.toml [preprocessor.notabene] review)",
        ),
    ]);
    // The spelling read is the one written back (setup, the reader's island).
    for (name, review) in Review::CHOICES {
        assert_eq!(review.as_str(), *name);
    }
}

#[test]
fn bad_numbers_flags_and_lists_name_the_key() {
    let threshold =
        "threshold must be a number in (0, 1] (book.toml [preprocessor.notabene] threshold)";
    let languages = "languages must be an array of language codes like [\"en\", \"fr\"] (book.toml [preprocessor.notabene] languages)";
    let bytes = "compress-above must be a number of bytes, 0 or more (book.toml [preprocessor.notabene] compress-above)";
    check(&[
        ("threshold = 2", threshold),
        ("threshold = 0", threshold),
        ("threshold = -0.5", threshold),
        ("threshold = \"0.5\"", threshold),
        // NaN and infinities reach the reader as null.
        ("threshold = nan", threshold),
        ("threshold = inf", threshold),
        (
            "enable = \"yes\"",
            "enable must be true or false (book.toml [preprocessor.notabene] enable)",
        ),
        (
            "enable = 1",
            "enable must be true or false (book.toml [preprocessor.notabene] enable)",
        ),
        (
            "generated-pages = \"no\"",
            "generated-pages must be true or false (book.toml [preprocessor.notabene] generated-pages)",
        ),
        ("languages = \"fr\"", languages),
        ("languages = [\"fr\", 1]", languages),
        ("languages = [\"f r\"]", languages),
        ("compress-above = -1", bytes),
        ("compress-above = 1.5", bytes),
        ("compress-above = \"16k\"", bytes),
        // Two refused values: the first in the order mdBook hands the table (by name,
        // not as written) is named.
        (
            "review = \"x\"\nenable = 1",
            "enable must be true or false (book.toml [preprocessor.notabene] enable)",
        ),
        (
            "enable = 1\nreview = \"x\"",
            "enable must be true or false (book.toml [preprocessor.notabene] enable)",
        ),
    ]);
}

#[test]
fn a_value_that_is_not_a_table_is_refused() {
    let e = parse_table(Some(&Value::from(3))).unwrap_err();
    assert_eq!(
        e.message(),
        "must be a table (book.toml [preprocessor.notabene])"
    );
}

#[test]
fn unknown_keys_are_warned_about_and_mdbook_keys_are_not() {
    let (c, w) = parse("[preprocessor.notabene]\ncommand = \"x\"\nstroe = \"x\"\nrenderers = [\"html\"]\nbefore = [\"index\"]\nafter = [\"links\"]\noptional = true\nreview = \"approve\"\nzz = { a = 1 }\n").unwrap();
    assert_eq!(c.review, Review::Approve);
    assert_eq!(
        w,
        vec![
            "unknown key \"stroe\" ignored (book.toml [preprocessor.notabene])".to_string(),
            "unknown key \"zz\" ignored (book.toml [preprocessor.notabene])".to_string(),
        ]
    );
    // A refused value still wins over an unknown key before it.
    let e = cfg("[preprocessor.notabene]\naaa = 1\nenable = 1\n").unwrap_err();
    assert_eq!(
        e.message(),
        "enable must be true or false (book.toml [preprocessor.notabene] enable)"
    );
}
