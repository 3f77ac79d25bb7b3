//! Integration tests: one binary (see docs/design.md §Conventions), each module one area.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod api;
mod approvals;
mod boundary;
mod cli;
mod doors;
mod events;
mod hardening;
mod helpers;
mod lifecycle;
mod metrics;
mod nix_module;
mod pages;
mod pages_forms;
mod pages_text;
mod providers;
mod proxy;
mod remote;
mod retention;
mod routing;
mod sampling_props;
mod sampling_vectors;
mod service;
mod upgrade;
mod url;
