//! The integration tests, as one test binary: one link of the crate and its dependencies
//! instead of one per file (on two cores this is most of a test build's time). Each module is
//! one area of behaviour; their helpers are the shared `support` module (`tests/support/`,
//! which the browser tests and the benches mount too). The
//! headless-Chromium tests are the second binary, `tests/browser/`: they wait on real time,
//! so they run on their own rather than beside the heavy book builds here.
//!
//! Run one area with `cargo test --test it <module>::` (e.g. `cargo test --test it anchoring::`).

// Tests and benches are not a library: their shared modules are `pub` for each other, and
// need no rustdoc.
#![allow(unreachable_pub, missing_docs)]

#[path = "../support/mod.rs"]
mod support;

mod anchor_edits;
mod anchoring;
mod anchoring_property;
mod anchors_check;
mod anchors_heal;
mod apply;
mod apply_safety;
mod bad_input;
mod cli_setup;
mod comments_json;
mod concurrency;
mod config_warnings;
mod following;
mod gate;
mod gettext;
mod git_merge;
mod hostile_store;
mod hub;
mod install;
mod journal_rules;
mod layers;
mod look_alikes;
mod many_books;
mod marks;
mod marks_corpus;
mod mcp;
mod mcp_stdio;
mod mdbook_serve;
mod migrate;
mod ops_rules;
mod page_edit;
mod planted_record;

mod apply_edges;
mod preprocessor_cli;
mod preprocessor_e2e;
mod preprocessor_invariants;
mod rebuild_reuse;
mod replay;
mod serve_api;
mod serve_edge;
mod serve_hostile;
mod serve_http;
mod serve_islands;
mod serve_load;
mod serve_outputs;
mod store_cache;
mod store_roundtrip;
mod terminal_escape;
mod text_model;
mod undo_race;
mod verify_codes;
mod views;
