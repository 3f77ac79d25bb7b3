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
mod host;
mod lifecycle;
mod metrics;
mod nix_module;
mod pages;
mod providers;
mod proxy;
mod remote;
mod remote_auth;
mod retention;
mod routing;
mod sampling_props;
mod sampling_vectors;
mod service;
mod upgrade;
mod url;
