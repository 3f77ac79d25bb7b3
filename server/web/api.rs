//! The JSON API (`/api/v1`) of DESIGN.md: open a question, long-poll its response, withdraw
//! it, list/show/answer questions, login links, and the summary-only event stream.

use std::time::Duration;

use actix_web::web::{self, Bytes};
use actix_web::{HttpResponse, http::StatusCode};
use futures_util::stream;
use serde::Deserialize;
use serde_json::json;

use super::auth::{self, Caller};
use super::error::ApiError;
use super::{AppState, MAX_BODY_BYTES, read_body};
use crate::broker::audience::Audience;
use crate::broker::{Answer, Answerer, OpenRequest, Opened, State, Waited, rfc3339};
use crate::metrics::RejectReason;

/// Longest long-poll, in seconds.
pub const MAX_WAIT_SECS: u64 = 60;

/// Registers the `/api/v1` routes.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/api/v1")
            .route("/requests", web::post().to(open_request))
            .route("/requests/{id}/response", web::get().to(request_response))
            .route("/requests/{id}/cancel", web::post().to(cancel_request))
            .route(
                "/elicitations/{elicitation_id}/complete",
                web::post().to(complete_elicitation),
            )
            .route("/questions", web::get().to(list_questions))
            .route("/questions/{id}", web::get().to(show_question))
            .route("/questions/{id}/answer", web::post().to(answer_question))
            .route("/questions/{id}/preview", web::post().to(preview_answer))
            .route("/login-links", web::post().to(create_login_link))
            .route("/events", web::get().to(events)),
    );
}

async fn json_body<T: serde::de::DeserializeOwned>(
    payload: web::Payload,
    limit: usize,
) -> Result<T, ApiError> {
    let body = read_body(payload, limit).await.map_err(|e| match e {
        Some(limit) => ApiError::TooLarge(limit),
        None => ApiError::BadRequest("the request body could not be read".into()),
    })?;
    serde_json::from_slice(&body)
        .map_err(|e| ApiError::BadRequest(format!("invalid JSON body: {e}")))
}

/// `POST /api/v1/requests`: 201 `{"id","state","expiresAt"}` when opened, 200 the same for a
/// request already pending, 200 `{"response"}` when refused before opening.
async fn open_request(
    state: web::Data<AppState>,
    caller: Caller,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    caller.require_token()?;
    let request: OpenRequest = match json_body(payload, state.max_request_bytes).await {
        Ok(r) => r,
        Err(e @ ApiError::TooLarge(_)) => {
            state
                .broker
                .metrics()
                .reject("unknown", RejectReason::TooLarge);
            return Err(e);
        }
        Err(e) => return Err(e),
    };
    Ok(match state.broker.open(request).await? {
        Opened::New(q) => HttpResponse::Created()
            .json(json!({"id": q.id, "state": q.state, "expiresAt": rfc3339(q.expires_at)})),
        Opened::Existing(q) => HttpResponse::Ok()
            .json(json!({"id": q.id, "state": q.state, "expiresAt": rfc3339(q.expires_at)})),
        Opened::Refused(response) => HttpResponse::Ok().json(json!({ "response": response })),
    })
}

#[derive(Deserialize)]
struct WaitQuery {
    wait: Option<u64>,
}

/// `GET /api/v1/requests/{id}/response?wait=SECONDS`: 200 `{"response"}` once decided, 202
/// `{"state":"pending"}` while not, 200 `{"state":"withdrawn"}` when there is nothing to send.
async fn request_response(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<String>,
    query: web::Query<WaitQuery>,
) -> Result<HttpResponse, ApiError> {
    caller.require_token()?;
    let wait = Duration::from_secs(query.wait.unwrap_or(0).min(MAX_WAIT_SECS));
    Ok(match state.broker.wait_response(&id, wait).await? {
        Waited::Response(response) => HttpResponse::Ok().json(json!({ "response": response })),
        Waited::Pending => HttpResponse::Accepted().json(json!({ "state": State::Pending })),
        Waited::Closed(s) => HttpResponse::Ok().json(json!({ "state": s })),
    })
}

/// `POST /api/v1/requests/{id}/cancel`: the server withdrew the request. 200 always (unknown
/// or decided ids are a no-op).
async fn cancel_request(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    caller.require_token()?;
    state.broker.withdraw(&id).await?;
    Ok(HttpResponse::Ok().json(json!({})))
}

/// `POST /api/v1/elicitations/{elicitationId}/complete`: the server reported a URL
/// elicitation complete. 200 always (unknown ids are ignored, MCP 2025-11-25 EU6).
async fn complete_elicitation(
    state: web::Data<AppState>,
    caller: Caller,
    elicitation_id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    caller.require_token()?;
    state.broker.complete(&elicitation_id).await?;
    Ok(HttpResponse::Ok().json(json!({})))
}

#[derive(Deserialize)]
struct ListQuery {
    state: Option<String>,
    audience: Option<String>,
}

/// `GET /api/v1/questions?state=&audience=`: summaries, oldest first. Token callers (agents)
/// never see `human` questions.
async fn list_questions(
    state: web::Data<AppState>,
    caller: Caller,
    query: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    let wanted_state = match query.state.as_deref() {
        None => None,
        Some(s) => Some(
            State::parse(s).ok_or_else(|| ApiError::BadRequest(format!("unknown state {s:?}")))?,
        ),
    };
    let mut audience = match query.audience.as_deref() {
        None => None,
        Some(a) => Some(
            Audience::parse(a)
                .ok_or_else(|| ApiError::BadRequest(format!("unknown audience {a:?}")))?,
        ),
    };
    if matches!(caller, Caller::Token) {
        if audience == Some(Audience::Human) {
            return Ok(HttpResponse::Ok().json(json!({ "questions": [] })));
        }
        audience = Some(Audience::Agent);
    }
    let questions = state.broker.list(wanted_state, audience, 1000).await?;
    let summaries: Vec<_> = questions.iter().map(|q| q.summary()).collect();
    Ok(HttpResponse::Ok().json(json!({ "questions": summaries })))
}

fn answerer(caller: &Caller) -> Answerer {
    match caller {
        Caller::Token => Answerer::Agent,
        Caller::Session(_) => Answerer::Human,
    }
}

/// `GET /api/v1/questions/{id}`: the full view; 403 for an agent asking about a `human`
/// question.
async fn show_question(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let q = state.broker.get(&id).await?;
    if q.audience == Audience::Human && answerer(&caller) == Answerer::Agent {
        return Err(ApiError::Forbidden(
            "this question is for a person in the browser".into(),
        ));
    }
    Ok(HttpResponse::Ok().json(q.detail()))
}

/// `POST /api/v1/questions/{id}/answer`: 200 `{"state"}`, 422 with field errors (the question
/// stays open), 409 when already decided, 403 for a `human` question answered with the token.
async fn answer_question(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<String>,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let answer: Answer = json_body(payload, MAX_BODY_BYTES).await?;
    let new_state = state.broker.answer(&id, &answer, answerer(&caller)).await?;
    Ok(HttpResponse::Ok().json(json!({ "state": new_state })))
}

/// `POST /api/v1/questions/{id}/preview`: the JSON-RPC response this answer would send, `200
/// {"response"}`, without deciding anything; 422 with field errors like `answer`.
async fn preview_answer(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<String>,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let answer: Answer = json_body(payload, MAX_BODY_BYTES).await?;
    let response = state
        .broker
        .preview(&id, &answer, answerer(&caller))
        .await?;
    Ok(HttpResponse::Ok().json(json!({ "response": response })))
}

/// `POST /api/v1/login-links`: a one-time browser login URL, `{"url"}` (token callers only).
async fn create_login_link(
    state: web::Data<AppState>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    caller.require_token()?;
    let token = auth::create_login_link(&state.db).await?;
    Ok(HttpResponse::build(StatusCode::CREATED)
        .json(json!({ "url": format!("{}/login?token={token}", state.base_url) })))
}

/// Keeps `mcp_consent_event_subscribers` right: counted while the stream lives.
struct Subscriber(prometheus::IntGauge);

impl Subscriber {
    fn new(gauge: &prometheus::IntGauge) -> Subscriber {
        gauge.inc();
        Subscriber(gauge.clone())
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// `GET /api/v1/events`: server-sent events, `event: question`, data = one summary event. The
/// stream ends when the service shuts down (clients reconnect to the next instance).
async fn events(state: web::Data<AppState>, _caller: Caller) -> HttpResponse {
    let rx = state.broker.events().subscribe();
    let guard = Subscriber::new(&state.broker.metrics().event_subscribers);
    let broker = state.broker.clone();
    let hello =
        stream::once(async { Ok::<_, actix_web::Error>(Bytes::from_static(b": connected\n\n")) });
    let updates = stream::unfold((rx, guard, broker), |(mut rx, guard, broker)| async move {
        loop {
            let received = tokio::select! {
                r = rx.recv() => r,
                () = broker.stopping() => return None,
            };
            match received {
                Ok(event) => {
                    let data = serde_json::to_string(&event).unwrap_or_default();
                    let frame = Bytes::from(format!("event: question\ndata: {data}\n\n"));
                    return Some((Ok(frame), (rx, guard, broker)));
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
            }
        }
    });
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("Cache-Control", "no-cache"))
        .streaming(futures_util::StreamExt::chain(hello, updates))
}
