//! The JSON API (`/api/v1`) of docs/design.md §JSON API: open a question, long-poll its
//! response, withdraw it, list/show/answer questions, login links, proxy drop reports, and the
//! summary-only event stream.

use std::time::Duration;

use actix_web::web::{self, Bytes};
use actix_web::{HttpResponse, http::StatusCode};
use futures_util::stream;
use serde::Deserialize;

use super::api_body::{body_bytes, json_body, parse_exact_json, stored_json_body};
use super::auth::Caller;
use super::error::ApiError;
use super::{AppState, MAX_BODY_BYTES};
use crate::broker::audience::Audience;
use crate::broker::person_only::PersonOnly;
use crate::broker::{BrokerError, OpenOutcome, Question, State, Waited, rfc3339};
use crate::domain::{AuditAction, Kind, QuestionId, RuleId, Via};
use crate::metrics::RejectReason;
use crate::review::{self as approval};
use crate::wire::{
    Answer, Answered, AuditEntry, AuditList, Decided, Decision, DropReport, Edit, Empty, LoginLink,
    NewRule, OpenRequest, Opened, Preview, QuestionList, ResponseBody, ReviewDetail, Revised, Rule,
    RuleList, RunDetail,
};

/// Most questions one list returns (the oldest first).
pub const MAX_LISTED: i64 = 1000;

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
            .route("/questions/{id}/approvals", web::post().to(decide_approval))
            .route("/questions/{id}/revisions", web::post().to(edit_request))
            .route("/rules", web::get().to(list_rules))
            .route("/rules", web::post().to(create_rule))
            .route("/rules/{rule}/revoke", web::post().to(revoke_rule))
            .route("/audit", web::get().to(audit_log))
            .route("/login-links", web::post().to(create_login_link))
            .route("/events", web::get().to(events))
            .route("/proxy/dropped", web::post().to(proxy_dropped)),
    );
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
    let opened = |q: crate::broker::Question| Opened::Question {
        id: q.id,
        expires_at: Some(q.expires_at),
    };
    Ok(match state.broker.open(request, caller.via()).await? {
        OpenOutcome::New(q) => HttpResponse::Created().json(opened(q)),
        OpenOutcome::Existing(q) => HttpResponse::Ok().json(opened(q)),
        OpenOutcome::Refused(response) => HttpResponse::Ok().json(Opened::Response(response)),
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
    id: web::Path<QuestionId>,
    query: web::Query<WaitQuery>,
) -> Result<HttpResponse, ApiError> {
    caller.require_token()?;
    let wait = Duration::from_secs(query.wait.unwrap_or(0).min(MAX_WAIT_SECS));
    Ok(
        match state.broker.wait_response(&id, wait, caller.via()).await? {
            Waited::Response(response) => {
                HttpResponse::Ok().json(ResponseBody::Response { response })
            }
            Waited::Pending => HttpResponse::Accepted().json(ResponseBody::State {
                state: State::Pending,
            }),
            Waited::Closed(state) => HttpResponse::Ok().json(ResponseBody::State { state }),
        },
    )
}

/// `POST /api/v1/requests/{id}/cancel`: the server withdrew the request. 200 always (unknown
/// or decided ids are a no-op).
async fn cancel_request(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<QuestionId>,
) -> Result<HttpResponse, ApiError> {
    caller.require_token()?;
    state.broker.withdraw(&id, caller.via()).await?;
    Ok(HttpResponse::Ok().json(Empty {}))
}

/// `POST /api/v1/proxy/dropped` `{"reason","count"}`: a proxy reports server lines it dropped
/// (fail closed), counted in `mcp_consent_proxy_dropped_lines_total{reason}`. Token only.
async fn proxy_dropped(
    state: web::Data<AppState>,
    caller: Caller,
    body: web::Json<DropReport>,
) -> Result<HttpResponse, ApiError> {
    caller.require_token()?;
    if body.count > crate::tools::report::MAX_COUNT_PER_REPORT {
        return Err(ApiError::BadRequest(format!(
            "count must be at most {}",
            crate::tools::report::MAX_COUNT_PER_REPORT
        )));
    }
    state
        .broker
        .metrics()
        .proxy_dropped
        .with_label_values(&[body.reason.as_str()])
        .inc_by(body.count);
    Ok(HttpResponse::Ok().json(Empty {}))
}

/// `POST /api/v1/elicitations/{elicitationId}/complete`: the server reported a URL
/// elicitation complete. 200 always (unknown ids are ignored, MCP 2025-11-25 EU6).
async fn complete_elicitation(
    state: web::Data<AppState>,
    caller: Caller,
    elicitation_id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    caller.require_token()?;
    state.broker.complete(&elicitation_id, caller.via()).await?;
    Ok(HttpResponse::Ok().json(Empty {}))
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
            s.parse::<State>()
                .map_err(|_| ApiError::BadRequest(format!("unknown state {s:?}")))?,
        ),
    };
    let mut audience = match query.audience.as_deref() {
        None => None,
        Some(a) => Some(
            a.parse::<Audience>()
                .map_err(|_| ApiError::BadRequest(format!("unknown audience {a:?}")))?,
        ),
    };
    if matches!(caller, Caller::Token(_)) {
        if audience == Some(Audience::Human) {
            return Ok(HttpResponse::Ok().json(QuestionList { questions: vec![] }));
        }
        audience = Some(Audience::Agent);
    }
    let questions = state
        .broker
        .list(wanted_state, audience, MAX_LISTED)
        .await?;
    Ok(HttpResponse::Ok().json(QuestionList { questions }))
}

/// `GET /api/v1/questions/{id}`: the full view; 403 for an agent asking about a `human`
/// question.
async fn show_question(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<QuestionId>,
) -> Result<HttpResponse, ApiError> {
    let q = state.broker.get(&id).await?;
    if q.audience == Audience::Human && caller.via().is_agent() {
        return Err(person_only(&q));
    }
    let mut detail = q.detail();
    if let Ok(review) = state.review.review(&q).await {
        detail.revision = Some(review.revision);
        detail.review = Some(review_detail(&q, &review));
    }
    Ok(HttpResponse::Ok().json(detail))
}

/// `POST /api/v1/questions/{id}/answer`: 200 `{"state"}`, 422 with field errors (the question
/// stays open), 409 when already decided, 403 for a `human` question answered with the token.
async fn answer_question(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<QuestionId>,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let answer: Answer = stored_json_body(&state, &caller, payload).await?;
    let new_state = match state.broker.answer(&id, &answer, caller.via()).await {
        Err(BrokerError::HumanOnly) => return Err(person_only(&state.broker.get(&id).await?)),
        decided => decided?,
    };
    Ok(HttpResponse::Ok().json(Answered { state: new_state }))
}

/// The 403 for a script reaching a person-only question, saying why it is person-only (for a
/// form: which words made it so, and where).
fn person_only(q: &Question) -> ApiError {
    let why = PersonOnly::of(q).map_or_else(String::new, |why| format!(": {}", why.describe()));
    ApiError::Forbidden(format!("this question is for a person in the browser{why}"))
}

/// `POST /api/v1/questions/{id}/preview`: the JSON-RPC response this answer would send, `200
/// {"response"}`, without deciding anything; 422 with field errors like `answer`.
async fn preview_answer(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<QuestionId>,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let answer: Answer = parse_exact_json(&body_bytes(payload, MAX_BODY_BYTES).await?)?;
    let response = match state.broker.preview(&id, &answer, caller.via()).await {
        Err(BrokerError::HumanOnly) => return Err(person_only(&state.broker.get(&id).await?)),
        previewed => previewed?,
    };
    Ok(HttpResponse::Ok().json(Preview { response }))
}

/// `POST /api/v1/login-links`: a one-time browser login URL, `{"url"}`. Only over the
/// owner-only socket with the token (403 over TCP): a login link makes its holder the person,
/// who may answer what the token may not.
async fn create_login_link(
    state: web::Data<AppState>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    caller.require_socket()?;
    let token = state.auth.create_login_link().await?;
    let local = format!("http://{}/login?token={token}", state.listen_addr);
    Ok(HttpResponse::build(StatusCode::CREATED).json(LoginLink {
        url: format!("{}/login?token={token}", state.base_url),
        local_url: state.public_url.is_some().then_some(local),
    }))
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

/// How often an idle event stream gets a keep-alive comment, so a closed client is noticed.
pub const EVENTS_KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(15);

/// `GET /api/v1/events`: server-sent events, `event: question`, data = one summary event. The
/// stream ends when the service shuts down (clients reconnect to the next instance).
async fn events(state: web::Data<AppState>, caller: Caller) -> HttpResponse {
    // The token's lists leave out the person's questions; so does its stream.
    let only_agents = caller.via().is_agent();
    let rx = state.broker.events().subscribe();
    let guard = Subscriber::new(&state.broker.metrics().event_subscribers);
    let broker = state.broker.clone();
    let hello =
        stream::once(async { Ok::<_, actix_web::Error>(Bytes::from_static(b": connected\n\n")) });
    let mut beat = tokio::time::interval_at(
        tokio::time::Instant::now() + EVENTS_KEEP_ALIVE,
        EVENTS_KEEP_ALIVE,
    );
    beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // A keep-alive comment every EVENTS_KEEP_ALIVE: writing to a closed client fails, actix
    // drops the stream, and the subscriber slot (guard) goes with it.
    let updates = stream::unfold(
        (rx, guard, broker, beat),
        move |(mut rx, guard, broker, mut beat)| async move {
            loop {
                let received = tokio::select! {
                    r = rx.recv() => r,
                    () = broker.stopping() => return None,
                    _ = beat.tick() => {
                        let frame = Bytes::from_static(b": keep-alive\n\n");
                        return Some((Ok(frame), (rx, guard, broker, beat)));
                    }
                };
                match received {
                    Ok(event) if only_agents && event.audience == Audience::Human => continue,
                    Ok(event) => {
                        let data = serde_json::to_string(&event).unwrap_or_default();
                        let frame = Bytes::from(format!("event: question\ndata: {data}\n\n"));
                        return Some((Ok(frame), (rx, guard, broker, beat)));
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
                }
            }
        },
    );
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("Cache-Control", "no-cache"))
        .streaming(futures_util::StreamExt::chain(hello, updates))
}

/// `POST /api/v1/questions/{id}/approvals` `{"approvalId","decision","model"?}`: a decision of
/// the request or response review of a model-run sampling question. 200 `{"applied":
/// "done"|"replayed","state","phase"}`; 422 for an outdated approval id or a decision that does
/// not fit; 404 when no models are configured.
async fn decide_approval(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<QuestionId>,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let decision: Decision = stored_json_body(&state, &caller, payload).await?;
    let q = state.broker.get(&id).await?;
    if q.audience == Audience::Human && caller.via().is_agent() {
        return Err(person_only(&q));
    }
    if decision.edit.is_some() {
        charge_revision(&state, &caller, &q).await?;
    }
    let applied = state
        .review
        .decide(&id, &decision, &caller.via().into())
        .await?;
    let q = state.broker.get(&id).await?;
    Ok(HttpResponse::Ok().json(Decided {
        applied,
        state: q.state,
        phase: q.phase,
    }))
}

/// `POST /api/v1/questions/{id}/revisions` `{"baseRevision","systemPrompt"?,"texts"?:[{"message",
/// "block","text"}]}`: edits the request under review into a new revision. 200 `{"revision"}`.
async fn edit_request(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<QuestionId>,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let edit: Edit = stored_json_body(&state, &caller, payload).await?;
    let q = state.broker.get(&id).await?;
    if q.audience == Audience::Human && caller.via().is_agent() {
        return Err(person_only(&q));
    }
    charge_revision(&state, &caller, &q).await?;
    let revision = state
        .review
        .edit_sampling(&id, &edit, &caller.via().into())
        .await?;
    Ok(HttpResponse::Ok().json(Revised { revision }))
}

/// A revision stores the whole edited request, not only the edit: the params of the revision
/// it is based on (the current one) are charged to the caller's door, beside the edit's body.
async fn charge_revision(state: &AppState, caller: &Caller, q: &Question) -> Result<(), ApiError> {
    let stored = match state.review.review(q).await {
        Ok(review) => review.params.to_string().len(),
        Err(_) => q.request.to_string().len(),
    };
    state
        .broker
        .charge_door(caller.via(), u64::try_from(stored).unwrap_or(u64::MAX))?;
    Ok(())
}

/// `GET /api/v1/rules`: every auto-approve rule, newest first.
async fn list_rules(state: web::Data<AppState>, _caller: Caller) -> Result<HttpResponse, ApiError> {
    let rules = state.review.rules().await?.iter().map(rule_json).collect();
    Ok(HttpResponse::Ok().json(RuleList { rules }))
}

/// A rule as the API shows it.
pub fn rule_json(r: &crate::review::RuleRow) -> Rule {
    let t = |ms: i64| chrono::DateTime::from_timestamp_millis(ms).map(rfc3339);
    Rule {
        id: r.id.clone(),
        server: r.server.clone(),
        scope: r.scope,
        author: r.author.clone(),
        reason: r.reason.clone(),
        created_at: t(r.created_at),
        expires_at: t(r.expires_at),
        revoked_at: r.revoked_at.and_then(t),
    }
}

/// `POST /api/v1/rules` `{"server","scope":"request"|"both","reason","days"?}` (browser session
/// only: a script may not approve for itself). 201 with the rule.
async fn create_rule(
    state: web::Data<AppState>,
    caller: Caller,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    if matches!(caller, Caller::Token(_)) {
        return Err(ApiError::Forbidden(
            "rules are made by a person in the browser".into(),
        ));
    }
    let rule: NewRule = json_body(payload, MAX_BODY_BYTES).await?;
    let row = state
        .review
        .create_rule(
            &rule.server,
            &rule.scope,
            Via::Browser,
            &rule.reason,
            rule.hours.or(rule.days.map(|d| d.saturating_mul(24))),
        )
        .await?;
    Ok(HttpResponse::Created().json(rule_json(&row)))
}

/// `POST /api/v1/rules/{rule}/revoke`: 200 always.
async fn revoke_rule(
    state: web::Data<AppState>,
    caller: Caller,
    rule: web::Path<RuleId>,
) -> Result<HttpResponse, ApiError> {
    state.review.revoke_rule(&rule, caller.via()).await?;
    Ok(HttpResponse::Ok().json(Empty {}))
}

#[derive(Deserialize)]
struct AuditQuery {
    server: Option<String>,
    action: Option<String>,
    kind: Option<String>,
}

/// `GET /api/v1/audit?server=&action=&kind=`: decisions of every kind and the rules' creation
/// and revocation, newest first (digests, never text).
async fn audit_log(
    state: web::Data<AppState>,
    caller: Caller,
    query: web::Query<AuditQuery>,
) -> Result<HttpResponse, ApiError> {
    // A digest of a short answer (a PIN, a one-time code, a choice) gives the answer back to
    // whoever tries every value: over TCP, where the token may be a script's or another
    // machine's, the digests are left out; the person's browser and the owner's socket get
    // them.
    let digests = caller.via() != Via::Token;
    let q = query.into_inner();
    // An action or kind that is no word of the vocabulary matches no entry.
    let (Ok(action), Ok(kind)) = (
        q.action
            .as_deref()
            .map(str::parse::<AuditAction>)
            .transpose(),
        q.kind.as_deref().map(str::parse::<Kind>).transpose(),
    ) else {
        return Ok(HttpResponse::Ok().json(AuditList { entries: vec![] }));
    };
    let filter = crate::review::AuditFilter {
        server: q.server,
        action,
        kind,
        rules_only: false,
        over_tcp: caller.via() == Via::Token,
    };
    let rows = state.review.audit_log(filter, 1000).await?;
    let entries = rows
        .into_iter()
        .map(|r| AuditEntry {
            seq: r.seq,
            at: chrono::DateTime::from_timestamp_millis(r.at).map(rfc3339),
            actor: r.actor,
            action: r.action,
            question_id: r.question_id,
            kind: r.kind,
            rule_id: r.rule_id,
            server: r.server,
            tool: r.tool,
            model: r.model_id,
            input_tokens: r.input_tokens,
            output_tokens: r.output_tokens,
            cost_usd: r.cost_usd,
            via: r.via,
            request_digest: r.request_digest.filter(|_| digests),
            response_digest: r.response_digest.filter(|_| digests),
        })
        .collect();
    Ok(HttpResponse::Ok().json(AuditList { entries }))
}

/// The model-review part of a question's detail: the current revision's params and route
/// receipt, the runs, and the approval ids the next decisions take.
pub fn review_detail(q: &crate::broker::Question, review: &approval::Review) -> ReviewDetail {
    // Stored JSON that does not parse is shown as null, as the pages do: the row is kept, and
    // the rest of the review stays readable.
    let stored = |t: &str| serde_json::from_str::<serde_json::Value>(t).ok();
    let runs = review
        .runs
        .iter()
        .map(|r| RunDetail {
            id: r.id.clone(),
            revision: r.revision,
            model: r.model_id.clone(),
            state: r.state,
            result: r.result.as_deref().and_then(stored),
            error: r
                .error
                .as_deref()
                .map(crate::sampling::ProviderError::stored_text),
            input_tokens: r.input_tokens,
            output_tokens: r.output_tokens,
            cost_usd: r.cost_usd,
            receipt: stored(&r.receipt),
        })
        .collect();
    ReviewDetail {
        params: review.params.clone(),
        route: review.route.receipt.clone(),
        runs,
        request_approval_id: review.request_approval_id(&q.id),
        response_approval_id: review.response_approval_id(&q.id),
    }
}
