//! The two API routes about the service's own doors: `GET /api/v1/service-proof?nonce=HEX`
//! (no credentials: a TCP client checks it before sending the token, see `auth::proof`) and
//! `POST /api/v1/token/rotate` and `POST /api/v1/retention/run` (only over the owner-only Unix
//! socket).

use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;

use super::AppState;
use super::auth::{AcceptedOn, via_socket};
use super::error::ApiError;
use crate::auth::proof::{self, ServiceProof};

/// Registers the routes (before the `/api/v1` scope, which would otherwise take them).
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/api/v1/service-proof", web::get().to(service_proof))
        .route("/api/v1/token/rotate", web::post().to(rotate_token))
        .route("/api/v1/retention/run", web::post().to(run_retention));
}

#[derive(Deserialize)]
struct NonceQuery {
    nonce: String,
}

/// `GET /api/v1/service-proof?nonce=HEX`: `{"addr","proofs"}`, one HMAC per valid token over
/// the nonce and the exact local address of this connection (not the bound address, which may
/// be a wildcard that would match any listener).
async fn service_proof(
    req: HttpRequest,
    state: web::Data<AppState>,
    query: web::Query<NonceQuery>,
) -> Result<HttpResponse, ApiError> {
    if !proof::valid_nonce(&query.nonce) {
        return Err(ApiError::BadRequest(
            "nonce must be 32 to 128 hex characters".into(),
        ));
    }
    let addr = req
        .conn_data::<AcceptedOn>()
        .map_or(state.listen_addr, |on| on.0)
        .to_string();
    let proofs = state.tokens.proofs(&query.nonce, &addr);
    Ok(HttpResponse::Ok().json(ServiceProof { addr, proofs }))
}

/// `POST /api/v1/token/rotate`: a new token in `<state>/api-token`, the old one refused from
/// now on. Only over the Unix socket, which only the owner can reach; the body is
/// `{"rotated":true}` (the token itself is never sent).
async fn rotate_token(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    if !via_socket(&req) {
        return Err(ApiError::Forbidden(
            "rotate the token with `mcp-consent token rotate` (over the local socket)".into(),
        ));
    }
    state
        .auth
        .rotate_api_token(&state.state_dir, &state.tokens)
        .await
        .map_err(|e| ApiError::Internal(Box::new(e)))?;
    tracing::info!("API token rotated; the old token is refused from now on");
    Ok(HttpResponse::Ok().json(serde_json::json!({"rotated": true})))
}

/// `POST /api/v1/retention/run` with the `[retention]` bounds to use (snake_case keys, as in the
/// config): one run now, in the service's own batches on its writer, so a request waits for one
/// batch at most (`mcp-consent prune` sends it). Only over the Unix socket; the body is what the
/// run removed, or `{"heldElsewhere":true,…}` when another instance's run holds the shared
/// database's lock.
async fn run_retention(
    req: HttpRequest,
    state: web::Data<AppState>,
    policy: web::Json<crate::config::Retention>,
) -> Result<HttpResponse, ApiError> {
    if !via_socket(&req) {
        return Err(ApiError::Forbidden(
            "run retention with `mcp-consent prune` (over the local socket)".into(),
        ));
    }
    let report = state
        .retention
        .run(&policy)
        .await
        .map_err(|e| ApiError::from(crate::broker::BrokerError::Store(e)))?;
    Ok(HttpResponse::Ok().json(report))
}
