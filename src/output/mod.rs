//! The output tier: what a build writes. The forms a comment is written in ([`forms`]), markers
//! and data islands in a chapter's Markdown ([`inject`]), the generated /review /comments
//! /journal pages ([`views`]), the embedded reader client ([`assets`]), what a build reuses of
//! earlier builds of its book ([`reuse`]), the annotation of a whole book that the preprocessor
//! runs, as a pipeline of stages ([`annotate`]), the `comments.json` renderer ([`render`]), and
//! the embedded mdBook ([`engine`]).

pub mod annotate;
pub mod assets;
pub mod engine;
pub mod forms;
pub mod inject;
pub mod render;
pub mod reuse;
pub mod views;
