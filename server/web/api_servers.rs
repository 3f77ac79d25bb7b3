//! The API of the person's per-server controls, the queue's "pause / block / mute notices":
//! `GET /api/v1/servers/controls` (every server with a control in force) and
//! `POST /api/v1/servers/control` `{"server","change"}`. Each change is audited (who, through
//! which door, when, what) as the page's buttons are.

use actix_web::{HttpResponse, web};
use serde::{Deserialize, Serialize};

use super::AppState;
use super::auth::Caller;
use super::error::ApiError;
use crate::broker::controls::{ControlChange, ServerControl};
use crate::broker::rfc3339;

/// Registers the routes (before the `/api/v1` scope, which would otherwise take them).
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/api/v1/servers/controls", web::get().to(list))
        .route("/api/v1/servers/control", web::post().to(change));
}

/// One server's controls as the API shows them.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerControls {
    /// The server's name.
    pub server: String,
    /// New requests are refused until then (RFC 3339); `null` when not paused.
    pub paused_until: Option<String>,
    /// New requests are refused until the block is lifted.
    pub blocked: bool,
    /// No notice is sent for its questions.
    pub muted: bool,
    /// The door that last put a control in force: `browser` (the person), `cli` (the API
    /// token over the owner-only socket) or `token` (the API token over TCP); `null` for
    /// controls from before it was recorded.
    pub set_via: Option<crate::domain::Via>,
}

impl From<ServerControl> for ServerControls {
    fn from(c: ServerControl) -> ServerControls {
        ServerControls {
            paused_until: c.paused_until.map(rfc3339),
            blocked: c.blocked,
            muted: c.muted,
            set_via: c.set_via,
            server: c.server,
        }
    }
}

/// `GET /api/v1/servers/controls` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ControlList {
    /// Every server with a control in force, by name.
    pub servers: Vec<ServerControls>,
}

/// `POST /api/v1/servers/control` body.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ChangeBody {
    server: String,
    /// `pause`, `resume`, `block`, `unblock`, `mute` or `unmute`.
    change: String,
}

/// `GET /api/v1/servers/controls`:
/// `{"servers":[{"server","pausedUntil","blocked","muted","setVia"}]}`.
async fn list(state: web::Data<AppState>, _caller: Caller) -> Result<HttpResponse, ApiError> {
    let servers = state
        .broker
        .controls()
        .await?
        .into_iter()
        .map(ServerControls::from)
        .collect();
    Ok(HttpResponse::Ok().json(ControlList { servers }))
}

/// What one stored row costs beyond its server name (its other columns, its index entry),
/// in bytes, as a control and its audit entry are charged to the door.
const CONTROL_ROW_BYTES: u64 = 128;

/// The longest server name a control may name (as a question's `server`).
const MAX_SERVER_NAME_BYTES: usize = 256;

/// `POST /api/v1/servers/control` `{"server","change"}`: 200 with the server's controls as
/// they now stand. 400 for an unknown change or an empty server; 403 when the API token asks
/// to lift a pause or block or to mute notices ([`ControlChange::tightens`]).
async fn change(
    state: web::Data<AppState>,
    caller: Caller,
    body: web::Json<ChangeBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let change: ControlChange = body
        .change
        .parse()
        .map_err(|e: crate::domain::UnknownName| ApiError::BadRequest(e.to_string()))?;
    let server = body.server.trim();
    if server.is_empty() || server.len() > MAX_SERVER_NAME_BYTES {
        return Err(ApiError::BadRequest(format!(
            "server must be 1 to {MAX_SERVER_NAME_BYTES} bytes"
        )));
    }
    // A control is a row of its own and an audit entry, each holding the name: both count
    // against the door, whatever the name's length.
    state.broker.charge_door(
        caller.via(),
        2 * (CONTROL_ROW_BYTES + u64::try_from(server.len()).unwrap_or(u64::MAX)),
    )?;
    let via = caller.via();
    if via.is_agent() && !change.tightens() {
        return Err(ApiError::Forbidden(
            "lifting a pause or block and muting notices are made by a person in the browser"
                .into(),
        ));
    }
    let now = state.broker.set_control(server, change, via).await?;
    Ok(HttpResponse::Ok().json(ServerControls::from(now)))
}
