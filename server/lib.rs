//! mcp-consent: the human trust boundary for what MCP servers ask of a person.
//!
//! MCP servers may ask the client for an LLM completion (`sampling/createMessage`) or for
//! input from the user (`elicitation/create`). This crate holds each such request as a
//! question in an owner-only SQLite store, lets the person review and answer it in a browser
//! (or a script over the JSON API), validates both directions against the MCP specification,
//! and hands the server one honest response.
//!
//! The dependency arrow points one way: `cli` → `app`, `web`, `proxy`, `client` →
//! `broker`, `review`, `auth`, `jobs` → `protocol`, `domain`, `clock`, `wire`, `db`. `protocol`
//! imports nothing of ours; `wire` names one type above it, the route receipt of `sampling`
//! (pure data), so the review in a question's detail is typed end to end. `broker` owns the
//! [`broker::SamplingHooks`] trait that `review`
//! implements, and imports neither `review` nor the config file's types.
//!
//! # Errors
//!
//! Every module has its own `thiserror` enum naming what failed (`DbError`, `BrokerError`,
//! `AuthError`, `ClientError`, `StartupError`, ...), with the cause kept as its `source`.
//! Errors are mapped to what a user sees exactly once, at the edge: HTTP statuses and bodies
//! in `web::error`, JSON-RPC errors for the server in `protocol::jsonrpc`, and one report on
//! stderr in `main`. Library code never panics on bad input or a failed store (`unwrap` and
//! `expect` are for tests), and never hides a real failure behind a default value: a default
//! stands only where absence is a normal answer (an empty list, an optional field).

pub mod access_files;
pub mod app;
pub mod auth;
pub mod broker;
pub mod cli;
pub mod client;
pub mod clock;
pub mod config;
pub mod db;
pub mod domain;
pub mod hosts;
pub mod i18n;
pub mod jobs;
pub mod metrics;
pub mod notify;
pub mod paths;
pub mod protocol;
pub mod proxy;
pub mod public_url;
pub mod reload;
pub mod review;
pub mod sampling;
pub mod stores;
pub mod tools;
pub mod web;
pub mod wire;
