//! The apps tier: what acts for a user. Every comment operation, once, with its rules
//! ([`ops`]); the `serve` loopback server and its guarded write API ([`serve`]); the agent CLI
//! both binaries run ([`cli`]); the team's review server over a git remote ([`hub`]); the MCP
//! server agents reach the review loop through ([`mcp`]).

pub mod cli;
pub mod hub;
pub mod mcp;
pub mod ops;
pub mod serve;
