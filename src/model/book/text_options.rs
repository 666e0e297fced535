//! The text model's settings read from a book's `[output.html]` table.
//!
//! Owns nothing but the reading: the settings themselves are the anchoring crate's
//! ([`TextOptions`]). Calls mdBook's own `HtmlConfig`, so defaults and aliases (`playpen`) are
//! exactly mdBook's.

use crate::{Error, Result};
use mdbook_preprocessor::config::{Config, HtmlConfig};
use notabene_anchoring::text::TextOptions;

/// The text model's settings of a book: its `[output.html]` as mdBook reads it.
pub fn text_options(config: &Config) -> Result<TextOptions> {
    let html = config
        .get::<HtmlConfig>("output.html")
        .map_err(|e| Error::new(format!("{e:#} (book.toml [output.html])")))?
        .unwrap_or_default();
    Ok(TextOptions {
        smart_punctuation: html.smart_punctuation,
        definition_lists: html.definition_lists,
        admonitions: html.admonitions,
        playground_runnable: html.playground.runnable,
        playground_editable: html.playground.editable,
        hidelines: html.code.hidelines.into_iter().collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mdbook_markdown::{MarkdownOptions, new_cmark_parser};

    /// The anchoring crate parses Markdown without mdBook: its parser must give the events
    /// mdBook's renderer gets, for every combination of the settings that change parsing.
    #[test]
    fn the_text_models_parser_is_mdbooks() {
        let samples = [
            "# Title {#id .class}\n\n\"Smart\" -- quotes... and ~~struck~~ text[^1].\n\n[^1]: A note.\n",
            "| a | b |\n|---|---|\n| 1 | 2 |\n\n- [x] done\n- [ ] open\n",
            "Term\n: Definition\n\n> [!NOTE]\n> An admonition.\n",
        ];
        for bits in 0..8u8 {
            let options = TextOptions {
                smart_punctuation: bits & 1 != 0,
                definition_lists: bits & 2 != 0,
                admonitions: bits & 4 != 0,
                ..TextOptions::default()
            };
            let mut theirs = MarkdownOptions::default();
            theirs.smart_punctuation = options.smart_punctuation;
            theirs.definition_lists = options.definition_lists;
            theirs.admonitions = options.admonitions;
            for md in samples {
                let ours: Vec<_> = notabene_anchoring::text::parser(md, &options)
                    .into_offset_iter()
                    .collect();
                let mdbook: Vec<_> = new_cmark_parser(md, &theirs).into_offset_iter().collect();
                assert_eq!(
                    format!("{ours:?}"),
                    format!("{mdbook:?}"),
                    "{bits:03b} {md:?}"
                );
            }
        }
    }
}
