//! `GET /metrics`: the Prometheus text exposition. Allowed without login from loopback (not
//! through the `public_url` reverse proxy); when
//! `metrics_token_file` is configured, the bearer token in that file is required from anyone.

use actix_web::http::header::AUTHORIZATION;
use actix_web::{HttpRequest, HttpResponse, web};
use subtle::ConstantTimeEq;

use super::AppState;

/// Registers `/metrics`.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/metrics", web::get().to(metrics));
}

fn allowed(state: &AppState, req: &HttpRequest) -> bool {
    match &state.metrics_token {
        Some(expected) => req
            .headers()
            .get(AUTHORIZATION)
            .and_then(|h| h.to_str().ok())
            .and_then(|h| h.strip_prefix("Bearer "))
            .is_some_and(|t| bool::from(t.trim().as_bytes().ct_eq(expected.as_bytes()))),
        None => super::public::is_local(req),
    }
}

async fn metrics(state: web::Data<AppState>, req: HttpRequest) -> HttpResponse {
    if !allowed(&state, &req) {
        return HttpResponse::Unauthorized()
            .insert_header(("WWW-Authenticate", "Bearer"))
            .content_type("text/plain; charset=utf-8")
            .body("metrics need the configured bearer token\n");
    }
    if let Err(e) = state.broker.refresh_pending_gauge().await {
        tracing::warn!(error = %e, "cannot count pending questions for /metrics");
    }
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(state.broker.metrics().render())
}
