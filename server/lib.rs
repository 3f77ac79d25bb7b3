//! mcp-consent: the human trust boundary for what MCP servers ask of a person.
//!
//! MCP servers may ask the client for an LLM completion (`sampling/createMessage`) or for
//! input from the user (`elicitation/create`). This crate holds each such request as a
//! question in an owner-only SQLite store, lets the person review and answer it in a browser
//! (or a script over the JSON API), validates both directions against the MCP specification,
//! and hands the server one honest response.
//!
//! The dependency arrow points one way: `web`, `proxy` → `broker` → `protocol`, `db`.
//! `protocol` imports nothing of ours.

pub mod app;
pub mod auth;
pub mod broker;
pub mod cli_token;
pub mod client;
pub mod config;
pub mod db;
pub mod domain;
pub mod jobs;
pub mod metrics;
pub mod paths;
pub mod protocol;
pub mod proxy;
pub mod questions;
pub mod review;
pub mod sampling;
pub mod service;
pub mod web;
pub mod wire;
