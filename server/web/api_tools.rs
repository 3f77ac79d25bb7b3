//! The API of tool-call consent: `GET /api/v1/tools/policy` (the `[tools]` rules and the
//! grants in force, which every proxy caches and judges the host's `tools/call`s by) and
//! `POST /api/v1/tools/decisions` (the calls a proxy allowed or denied alone, for the audit and
//! `mcp_consent_tool_calls_total`). Tool-call questions themselves go through `/requests` and
//! `/questions` like every other question; they are the person's (hidden from the token's
//! lists, refused over it).

use actix_web::{HttpResponse, web};

use super::AppState;
use super::auth::Caller;
use super::error::ApiError;
use crate::tools::report::{MAX_DECISIONS_PER_REPORT, ToolDecisionReport};
use crate::wire::Empty;

/// Registers the routes (before the `/api/v1` scope, which would otherwise take them).
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/api/v1/tools/policy", web::get().to(policy))
        .route("/api/v1/tools/decisions", web::post().to(decisions));
}

/// `GET /api/v1/tools/policy`: `{"tools":{"default","rules":[…]},"grants":[{"id","server",
/// "tool","expiresAt"}]}`.
async fn policy(state: web::Data<AppState>, _caller: Caller) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(state.broker.tool_policy().await?))
}

/// `POST /api/v1/tools/decisions` `{"server","allowed","denied","decisions":[{"tool",
/// "decision","rule","argumentsDigest","at"}],"unaudited"}`: audited (digests only) and
/// counted. Token only; at most [`MAX_DECISIONS_PER_REPORT`] decisions per report; 429 with
/// `Retry-After` (nothing taken) when the decisions would take the caller's door over
/// `max_stored_bytes_per_door`.
async fn decisions(
    state: web::Data<AppState>,
    caller: Caller,
    body: web::Json<ToolDecisionReport>,
) -> Result<HttpResponse, ApiError> {
    caller.require_token()?;
    let report = body.into_inner();
    if report.decisions.len() > MAX_DECISIONS_PER_REPORT {
        return Err(ApiError::BadRequest(format!(
            "at most {MAX_DECISIONS_PER_REPORT} decisions per report"
        )));
    }
    let report = report
        .checked(state.broker.now())
        .map_err(ApiError::BadRequest)?;
    state
        .broker
        .record_tool_decisions(report, caller.via())
        .await?;
    Ok(HttpResponse::Ok().json(Empty {}))
}
