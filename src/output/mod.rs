//! The output tier: what a build writes. The forms a comment is written in ([`forms`]), Markers and data islands in a chapter's Markdown
//! ([`inject`]), the generated /review /comments /journal pages ([`views`]), the embedded
//! reader client ([`assets`]), the annotation of a whole book that the preprocessor runs
//! ([`annotate`]), the `comments.json` renderer ([`render`]), and the embedded mdBook
//! ([`engine`]).

pub mod annotate;
pub mod assets;
pub mod engine;
pub mod forms;
pub mod inject;
pub mod render;
pub mod views;
