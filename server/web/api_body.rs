//! Reading the JSON API's request bodies: bounded in size, charged to the caller's door when
//! what they carry is stored, and, for what the person decides with, refused when a number
//! would be decided rounded.

use actix_web::web::{self, Bytes};

use super::auth::Caller;
use super::error::ApiError;
use super::{AppState, MAX_BODY_BYTES, read_body};

/// [`json_body`] of a call that stores what it carries (an answer, a decision, a revision):
/// its size is charged to the caller's door first (`max_stored_bytes_per_door`; 429 beyond).
pub(super) async fn stored_json_body<T: serde::de::DeserializeOwned>(
    state: &AppState,
    caller: &Caller,
    payload: web::Payload,
) -> Result<T, ApiError> {
    let body = body_bytes(payload, MAX_BODY_BYTES).await?;
    state
        .broker
        .charge_door(caller.via(), u64::try_from(body.len()).unwrap_or(u64::MAX))?;
    parse_exact_json(&body)
}

/// [`parse_json`] of what the person decides with (an answer, a decision, a revision): a number
/// a JSON value cannot hold as written would be decided rounded, so such a body is refused
/// (400) and nothing is taken, as the page refuses such an edit.
pub(super) fn parse_exact_json<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    if crate::protocol::exact::has_inexact_number(body) {
        return Err(ApiError::BadRequest(
            "a number in the body cannot be held exactly as written (too many digits); write it as a string if the field takes one".into(),
        ));
    }
    parse_json(body)
}

/// The JSON body of a call, at most `limit` bytes (413 beyond, 400 when it is not the shape).
pub(super) async fn json_body<T: serde::de::DeserializeOwned>(
    payload: web::Payload,
    limit: usize,
) -> Result<T, ApiError> {
    parse_json(&body_bytes(payload, limit).await?)
}

/// The raw body of a call, at most `limit` bytes (413 beyond, 400 when it cannot be read).
pub(super) async fn body_bytes(payload: web::Payload, limit: usize) -> Result<Bytes, ApiError> {
    read_body(payload, limit).await.map_err(|e| match e {
        Some(limit) => ApiError::TooLarge(limit),
        None => ApiError::BadRequest("the request body could not be read".into()),
    })
}

/// `body` read as `T`; 400 `invalid JSON body: …` when it is not.
fn parse_json<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::BadRequest(format!("invalid JSON body: {e}")))
}
