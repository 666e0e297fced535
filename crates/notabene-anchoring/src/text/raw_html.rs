//! Raw HTML in a chapter: tokenised with html5ever as mdBook's renderer does; its text is the
//! page's text, its block tags separate, `<img>` is an image block, `<script>`/`<style>` are not
//! text and `<pre class="mermaid">` is a diagram.

use super::SegKind;
use super::builder::Builder;
use std::ops::Range;

impl Builder<'_> {
    /// Raw HTML (inline or a whole block): its text as html5ever tokenises it, block tags as
    /// separators, `<img>` as image blocks. Nothing in it is injectable.
    pub(super) fn html(&mut self, html: &str, range: Range<usize>) {
        use html5ever::tokenizer::{TagKind, Token};
        for token in tokenize_html(html) {
            match token {
                Token::TagToken(tag) => {
                    let name = tag.name.to_string();
                    match tag.kind {
                        TagKind::StartTag => {
                            self.in_raw = matches!(name.as_str(), "script" | "style");
                            let class_has_mermaid = tag.attrs.iter().any(|a| {
                                &*a.name.local == "class"
                                    && a.value.split_whitespace().any(|c| c == "mermaid")
                            });
                            if name == "pre" && class_has_mermaid {
                                self.separator(range.start);
                                self.raw_mermaid = Some(String::new());
                                continue;
                            }
                            if is_pretty_block(&name) {
                                self.separator(range.start);
                            }
                            if name == "img" {
                                let attr = |n: &str| {
                                    tag.attrs
                                        .iter()
                                        .find(|a| &*a.name.local == n)
                                        .map(|a| a.value.to_string())
                                };
                                let src = attr("src").unwrap_or_default();
                                let alt = attr("alt").unwrap_or_default();
                                self.push_image(&src, &alt, range.clone(), true);
                            }
                        }
                        TagKind::EndTag => {
                            self.in_raw = false;
                            if name == "pre"
                                && let Some(source) = self.raw_mermaid.take()
                            {
                                self.push_mermaid(source, range.clone(), true);
                                self.emit("\n", range.clone(), SegKind::Raw);
                                continue;
                            }
                            if is_pretty_block(&name) {
                                self.emit("\n", range.clone(), SegKind::Raw);
                            }
                        }
                    }
                }
                // A raw `<pre class="mermaid">` is a diagram: its text is the diagram source.
                Token::CharacterTokens(chars) if self.raw_mermaid.is_some() => {
                    if let Some(source) = &mut self.raw_mermaid {
                        source.push_str(&chars);
                    }
                }
                Token::CharacterTokens(chars) if !self.in_raw => {
                    self.emit(&chars, range.clone(), SegKind::Raw)
                }
                _ => {}
            }
        }
    }
}

/// Whether an inline HTML event is a `<mark …>` or `</mark>` tag (the markers' own tag).
/// CommonMark makes an inline HTML event one whole, well-formed tag, so html5ever would read
/// it as that one tag, whose only effect here is to end a `<script>`/`<style>` run: a page
/// with thousands of markers — re-derived to check that they add no text — skips the
/// tokenizer for them.
pub(super) fn is_mark_tag(html: &str) -> bool {
    let rest = html
        .strip_prefix("</mark")
        .or_else(|| html.strip_prefix("<mark"));
    rest.is_some_and(|r| {
        r.ends_with('>') && r.starts_with(|c: char| c.is_ascii_whitespace() || c == '>' || c == '/')
    })
}

fn is_pretty_block(name: &str) -> bool {
    matches!(
        name,
        "blockquote"
            | "dd"
            | "div"
            | "dl"
            | "dt"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "hr"
            | "li"
            | "ol"
            | "p"
            | "pre"
            | "table"
            | "tbody"
            | "thead"
            | "tr"
            | "ul"
    )
}

pub(super) fn tokenize_html(html: &str) -> Vec<html5ever::tokenizer::Token> {
    use html5ever::tendril::ByteTendril;
    use html5ever::tokenizer::states::RawKind;
    use html5ever::tokenizer::{
        BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
    };
    use std::cell::RefCell;

    #[derive(Default)]
    struct Sink(RefCell<Vec<Token>>);
    impl TokenSink for Sink {
        type Handle = ();
        fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
            let raw = match &token {
                Token::TagToken(t) if t.kind == TagKind::StartTag && &*t.name == "script" => {
                    Some(RawKind::ScriptData)
                }
                Token::TagToken(t) if t.kind == TagKind::StartTag && &*t.name == "style" => {
                    Some(RawKind::Rawtext)
                }
                _ => None,
            };
            self.0.borrow_mut().push(token);
            match raw {
                Some(kind) => TokenSinkResult::RawData(kind),
                None => TokenSinkResult::Continue,
            }
        }
    }
    let tendril: ByteTendril = html.as_bytes().into();
    let queue = BufferQueue::default();
    match tendril.try_reinterpret() {
        Ok(t) => queue.push_back(t),
        Err(_) => return Vec::new(),
    }
    let tok = Tokenizer::new(Sink::default(), TokenizerOpts::default());
    let _ = tok.feed(&queue);
    tok.end();
    tok.sink.0.take()
}

#[cfg(test)]
mod tests {
    use super::*;
    use html5ever::tokenizer::{TagKind, Token};

    /// What the fast path assumes: each string it takes is one `mark` tag to html5ever, so
    /// skipping the tokenizer changes nothing; anything else goes to the tokenizer.
    #[test]
    fn mark_tags_are_one_mark_tag_to_the_tokenizer() {
        for (html, kind) in [
            (
                "<mark class=\"nb-mark\" data-nb-id=\"c_1,c_2\" data-nb-status=\"open\">",
                TagKind::StartTag,
            ),
            ("<mark>", TagKind::StartTag),
            ("<mark\ntitle='a > b'>", TagKind::StartTag),
            ("<mark/>", TagKind::StartTag),
            ("</mark>", TagKind::EndTag),
            ("</mark \n>", TagKind::EndTag),
        ] {
            assert!(is_mark_tag(html), "{html}");
            // (The end-of-input token does nothing in `html`.)
            let tokens: Vec<Token> = tokenize_html(html)
                .into_iter()
                .filter(|t| !matches!(t, Token::EOFToken))
                .collect();
            assert!(
                matches!(&tokens[..], [Token::TagToken(t)] if &*t.name == "mark" && t.kind == kind),
                "{html}: {tokens:?}"
            );
        }
        for html in [
            "<marker>",
            "<mark-x>",
            "<MARK>",
            "<mark",
            "<b>",
            "<!-- <mark> -->",
            "x<mark>",
        ] {
            assert!(!is_mark_tag(html), "{html}");
        }
    }
}
