//! The model tier: a book as mdBook and git see it ([`book`]: `book.toml` and the notabene
//! table, page ids, the repository), and the store anchored in it, chapter by chapter, with
//! comments followed across renamed, split and merged chapters ([`resolve`]).

pub mod book;
pub mod resolve;
