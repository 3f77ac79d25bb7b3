//! The HTTP surface: the JSON API (`/api/v1`), the HTML pages, static assets, health. One
//! route table ([`configure`]) shared by the service and the tests.

pub mod api;
mod api_body;
pub mod api_local;
pub mod api_servers;
pub mod api_tools;
pub mod assets;
pub mod auth;
pub mod error;
pub mod lang;
pub mod metrics;
pub mod pages;
pub mod public;
pub mod views;

use actix_web::web::{self, Bytes};
use futures_util::StreamExt;

use crate::auth::{ApiTokens, Auth};
use crate::broker::Broker;
use crate::review::Reviewer;

/// Limit of every body except opening a question, in bytes (1 MiB).
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// Shared state of every handler.
pub struct AppState {
    /// The question lifecycle.
    pub broker: Broker,
    /// The two-step review of sampling questions, rules and the audit log.
    pub review: std::sync::Arc<Reviewer>,
    /// Sessions and login links.
    pub auth: Auth,
    /// Valid API token digests.
    pub tokens: ApiTokens,
    /// The address the TCP listener is bound to (covered by the service's proof).
    pub listen_addr: std::net::SocketAddr,
    /// The state directory (the token file rotation writes).
    pub state_dir: crate::paths::StateDir,
    /// Limits on passphrase login attempts.
    pub login_guard: crate::auth::throttle::LoginGuard,
    /// `Host` values this service answers to (`127.0.0.1:PORT`, `localhost:PORT`, …).
    pub allowed_hosts: Vec<String>,
    /// The base of the links the service hands out: `public_url` when set, else `http://ADDR`.
    pub base_url: String,
    /// `public_url`: where the pages are reached through a TLS reverse proxy, when set.
    pub public_url: Option<public::PublicUrl>,
    /// Limit of a body opening a question, in bytes.
    pub max_request_bytes: usize,
    /// Bearer token `/metrics` requires, when configured.
    pub metrics_token: Option<String>,
    /// argon2id PHC hash of the login passphrase, when configured.
    pub passphrase_hash: Option<String>,
    /// Retention runs `mcp-consent prune` asks for.
    pub retention: crate::jobs::retention::OnDemand,
}

/// Registers every route.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.configure(api_local::configure)
        .configure(api_tools::configure)
        .configure(api_servers::configure)
        .configure(api::configure)
        .configure(lang::configure)
        .configure(pages::configure)
        .configure(metrics::configure)
        .configure(assets::configure);
}

/// Reads a request body of at most `limit` bytes.
///
/// # Errors
/// `Err(Some(limit))` when the body is larger, `Err(None)` when the stream failed.
pub async fn read_body(mut payload: web::Payload, limit: usize) -> Result<Bytes, Option<usize>> {
    let mut body = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|_| None)?;
        if body.len() + chunk.len() > limit {
            return Err(Some(limit));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

/// The `Host` values a service bound to `addr` answers to.
pub fn allowed_hosts(addr: std::net::SocketAddr) -> Vec<String> {
    let port = addr.port();
    let mut hosts = vec![addr.to_string(), format!("localhost:{port}")];
    if addr.ip().is_loopback() {
        hosts.push(format!("127.0.0.1:{port}"));
        hosts.push(format!("[::1]:{port}"));
    }
    hosts.dedup();
    hosts
}
