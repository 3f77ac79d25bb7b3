//! The question lifecycle: open → answer → deliver, exactly once.
//!
//! A request is validated before anything is stored (a malformed request never opens a
//! question); an answer is validated before the question moves (a bad answer leaves it open);
//! the move from `pending` is one conditional UPDATE, so a question gets exactly one response
//! however many answers race for it. Every state change is published as a summary-only
//! [`events::Event`].

pub mod approval;
pub mod audience;
pub mod events;
pub mod retention;

use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::db::models::QuestionRow;
use crate::db::{Db, DbError};
pub use crate::domain::{Audience, Kind, Phase, State};
use crate::metrics::{Metrics, RejectReason};
use crate::protocol::elicitation::{self, FormSchema};
use crate::protocol::era::Era;
use crate::protocol::jsonrpc::{RpcError, Violation, error_response, is_valid_id, result_response};
use crate::protocol::{FieldError, sampling, url_safety};
use events::{Event, EventBus};

/// The person's or agent's choice (the spec's `ElicitResult.action`; for sampling, decline and
/// cancel both become error `-1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Send the content/result.
    Accept,
    /// Explicitly refuse.
    Decline,
    /// Dismiss without a choice.
    Cancel,
}

impl Action {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Accept => "accept",
            Action::Decline => "decline",
            Action::Cancel => "cancel",
        }
    }
}

/// `POST /api/v1/requests` body: a request as the server sent it, with what it is judged by.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OpenRequest {
    /// The asking server's name (the proxy's `--name`).
    pub server: String,
    /// One proxy run; scopes JSON-RPC ids.
    #[serde(default)]
    pub session: String,
    /// The host's `tools/call` that led to the request, when known.
    #[serde(default)]
    pub tool: Option<String>,
    /// The negotiated `protocolVersion`.
    pub protocol_version: String,
    /// Client capabilities as forwarded to the server.
    #[serde(default)]
    pub client_capabilities: Value,
    /// The JSON-RPC request exactly as the server sent it.
    pub request: Value,
}

/// `POST /api/v1/questions/{id}/answer` body.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Answer {
    /// accept, decline or cancel.
    pub action: Action,
    /// Form accept: the `ElicitResult.content`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Value>,
    /// Sampling accept: the `CreateMessageResult`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
}

/// Who is answering: a logged-in person or an API client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answerer {
    /// A person in the browser (may answer every question).
    Human,
    /// A script or agent over the API or CLI (may answer `agent` questions only).
    Agent,
}

/// The outcome of opening.
#[derive(Debug, Clone)]
pub enum Opened {
    /// A new question.
    New(Question),
    /// The same request (server, session, JSON-RPC id) was already pending: that question.
    Existing(Question),
    /// Refused before opening: the JSON-RPC error response for the server.
    Refused(Value),
}

/// The outcome of a long-poll.
#[derive(Debug, Clone)]
pub enum Waited {
    /// Decided: the JSON-RPC response for the server.
    Response(Value),
    /// Still pending when the wait ended.
    Pending,
    /// Closed without a response to send (withdrawn).
    Closed(State),
}

/// Broker errors; mapped to HTTP once, in `web`.
#[derive(Debug, thiserror::Error)]
pub enum BrokerError {
    /// No question has this id.
    #[error("no question with this id")]
    NotFound,
    /// The question was decided already.
    #[error("the question is already {0}")]
    AlreadyDecided(State),
    /// An agent tried to see or answer a `human` question.
    #[error("this question may only be answered by a person in the browser")]
    HumanOnly,
    /// The answer failed validation; the question stays open.
    #[error("the answer is not valid")]
    InvalidAnswer(Vec<FieldError>),
    /// A stored row could not be read back.
    #[error("stored question {0} is unreadable: {1}")]
    Corrupt(String, String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] DbError),
}

/// A question as the broker sees it.
#[derive(Debug, Clone)]
pub struct Question {
    /// UUIDv7.
    pub id: String,
    /// What it asks for.
    pub kind: Kind,
    /// The asking server.
    pub server: String,
    /// The proxy session.
    pub session: String,
    /// The host's tool call, when known.
    pub tool: Option<String>,
    /// Who may answer.
    pub audience: Audience,
    /// Current state.
    pub state: State,
    /// Sampling phase while pending.
    pub phase: Option<Phase>,
    /// Negotiated `protocolVersion`.
    pub protocol_version: String,
    /// The revision it is judged by.
    pub era: Era,
    /// Capabilities as forwarded to the server.
    pub client_capabilities: Value,
    /// The JSON-RPC id of the request.
    pub rpc_id: Value,
    /// The request params as sent.
    pub request: Value,
    /// The JSON-RPC response, once decided.
    pub response: Option<Value>,
    /// URL mode's `elicitationId`.
    pub elicitation_id: Option<String>,
    /// Opened at.
    pub created_at: DateTime<Utc>,
    /// Deadline.
    pub expires_at: DateTime<Utc>,
    /// Decided at.
    pub decided_at: Option<DateTime<Utc>>,
    /// When the person opened a URL question's link (their consent).
    pub opened_at: Option<DateTime<Utc>>,
    /// Sampling: the current revision of the request (1 = as the server sent it).
    pub revision: i32,
}

/// The list entry of a question (API `summary`, camelCase, RFC 3339 times).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Question id.
    pub id: String,
    /// Kind.
    pub kind: Kind,
    /// Asking server.
    pub server: String,
    /// Host tool call, when known.
    pub tool: Option<String>,
    /// Who may answer.
    pub audience: Audience,
    /// Current state.
    pub state: State,
    /// Opened at.
    pub created_at: String,
    /// Deadline.
    pub expires_at: String,
}

/// RFC 3339 UTC with milliseconds, the wire format of every time.
pub fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn from_millis(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

impl Question {
    fn from_row(row: QuestionRow) -> Result<Question, BrokerError> {
        let corrupt = |what: &str| BrokerError::Corrupt(row.id.clone(), what.to_owned());
        let json =
            |text: &str, what: &str| serde_json::from_str::<Value>(text).map_err(|_| corrupt(what));
        Ok(Question {
            kind: row.kind,
            audience: row.audience,
            state: row.state,
            era: Era::for_revision(&row.era).map_err(|_| corrupt("era"))?,
            client_capabilities: json(&row.client_capabilities, "client_capabilities")?,
            rpc_id: json(&row.rpc_id, "rpc_id")?,
            request: json(&row.request, "request")?,
            response: row
                .response
                .as_deref()
                .map(|r| json(r, "response"))
                .transpose()?,
            created_at: from_millis(row.created_at),
            expires_at: from_millis(row.expires_at),
            decided_at: row.decided_at.map(from_millis),
            opened_at: row.opened_at.map(from_millis),
            revision: row.revision,
            id: row.id,
            server: row.server,
            session: row.session,
            tool: row.tool,
            phase: row.phase,
            protocol_version: row.protocol_version,
            elicitation_id: row.elicitation_id,
        })
    }

    /// The list entry.
    pub fn summary(&self) -> Summary {
        Summary {
            id: self.id.clone(),
            kind: self.kind,
            server: self.server.clone(),
            tool: self.tool.clone(),
            audience: self.audience,
            state: self.state,
            created_at: rfc3339(self.created_at),
            expires_at: rfc3339(self.expires_at),
        }
    }

    /// The full API view: summary fields plus `protocolVersion`, `request` (params as sent) and
    /// `response` once decided.
    pub fn detail(&self) -> Value {
        let mut v = serde_json::to_value(self.summary()).unwrap_or_else(|_| json!({}));
        if let Some(obj) = v.as_object_mut() {
            obj.insert("protocolVersion".into(), json!(self.protocol_version));
            obj.insert("phase".into(), json!(self.phase));
            obj.insert("request".into(), self.request.clone());
            if let Some(r) = &self.response {
                obj.insert("response".into(), r.clone());
            }
        }
        v
    }

    /// The summary-only event for this question's current state.
    pub fn event(&self) -> Event {
        Event {
            id: self.id.clone(),
            kind: self.kind,
            server: self.server.clone(),
            tool: self.tool.clone(),
            audience: self.audience,
            state: self.state,
            phase: self.phase,
            expires_at: rfc3339(self.expires_at),
            at: rfc3339(Utc::now()),
        }
    }

    /// The parsed `requestedSchema` of a form question.
    ///
    /// # Errors
    /// [`BrokerError::Corrupt`] when the stored schema no longer parses.
    pub fn form_schema(&self) -> Result<FormSchema, BrokerError> {
        let schema = self.request.get("requestedSchema").unwrap_or(&Value::Null);
        FormSchema::parse(self.era, schema).map_err(|e| BrokerError::Corrupt(self.id.clone(), e))
    }
}

/// Broker settings taken from the config.
#[derive(Debug, Clone, Copy)]
pub struct BrokerSettings {
    /// How long a question waits for an answer.
    pub question_timeout: Duration,
    /// Most questions one server may have pending at once.
    pub max_pending_per_server: u64,
}

/// What opening found in the store.
enum Admission {
    New(QuestionRow),
    Existing(QuestionRow),
    IdInUse,
    TooMany,
}

/// The broker: the store, the change signal long-polls wait on, and the event bus.
#[derive(Clone)]
pub struct Broker {
    db: Db,
    settings: BrokerSettings,
    changes: watch::Sender<u64>,
    events: EventBus,
    metrics: Metrics,
    stopping: watch::Sender<bool>,
    engine: Option<std::sync::Arc<approval::SamplingEngine>>,
}

impl Broker {
    /// A broker over `db`, counting into `metrics`.
    pub fn new(db: Db, settings: BrokerSettings, metrics: Metrics) -> Broker {
        Broker {
            db,
            settings,
            changes: watch::channel(0).0,
            events: EventBus::default(),
            metrics,
            stopping: watch::channel(false).0,
            engine: None,
        }
    }

    /// Runs sampling questions on configured models, with two-step approval (see
    /// [`approval`]). Without an engine the person writes every sampling response.
    pub fn with_engine(mut self, engine: approval::SamplingEngine) -> Broker {
        self.engine = Some(std::sync::Arc::new(engine));
        self
    }

    /// The metrics this broker counts into.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The service is shutting down: long-polls and event streams end now so their clients
    /// reconnect to the next instance (questions stay pending in the store).
    pub fn begin_shutdown(&self) {
        self.stopping.send_replace(true);
    }

    /// Resolves when [`Broker::begin_shutdown`] is called.
    pub async fn stopping(&self) {
        let mut rx = self.stopping.subscribe();
        // An error means the sender is gone, which only happens with the broker itself.
        let _ = rx.wait_for(|stopping| *stopping).await;
    }

    /// Counts `pending` questions by kind and audience from the store into the gauge (at scrape
    /// time, so the gauge is right across restarts).
    ///
    /// # Errors
    /// [`BrokerError::Store`].
    pub async fn refresh_pending_gauge(&self) -> Result<(), BrokerError> {
        self.expire_due().await?;
        let counts = self
            .db
            .run(|conn| Ok(QuestionRow::pending_counts(conn)?))
            .await?;
        self.metrics.pending.reset();
        for kind in Kind::ALL {
            for audience in Audience::ALL {
                self.metrics
                    .pending
                    .with_label_values(&[kind.as_str(), audience.as_str()])
                    .set(0);
            }
        }
        for (kind, audience, n) in counts {
            self.metrics
                .pending
                .with_label_values(&[kind.as_str(), audience.as_str()])
                .set(n);
        }
        Ok(())
    }

    /// The event bus (for `/api/v1/events`).
    pub fn events(&self) -> &EventBus {
        &self.events
    }

    fn changed(&self, question: &Question) {
        self.events.publish(question.event());
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Validates a request and opens a question for it.
    ///
    /// A request whose id is not a string or integer is refused with `-32600` (MCP G1); an
    /// unknown method with `-32601`; a request breaking the era's rules with `-32602`
    /// (`protocol::sampling`, `protocol::elicitation`). Re-posting a request that is still
    /// pending returns the open question.
    ///
    /// # Errors
    /// [`BrokerError::Store`] only; protocol problems are [`Opened::Refused`].
    pub async fn open(&self, req: OpenRequest) -> Result<Opened, BrokerError> {
        let rpc_id = match req.request.get("id") {
            Some(id) if is_valid_id(id) => id.clone(),
            _ => {
                let e = RpcError::invalid_request("request id must be a string or an integer");
                self.metrics.reject("unknown", RejectReason::InvalidRequest);
                return Ok(Opened::Refused(error_response(None, &e)));
            }
        };
        let method = req
            .request
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let counted_kind = match method {
            "sampling/createMessage" => Kind::Sampling.as_str(),
            "elicitation/create"
                if req.request.pointer("/params/mode").and_then(Value::as_str) == Some("url") =>
            {
                Kind::Url.as_str()
            }
            "elicitation/create" => Kind::Form.as_str(),
            _ => "unknown",
        };
        let envelope_ok = req.request.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
            && req.request.get("result").is_none()
            && req.request.get("error").is_none();
        let refuse = |e: RpcError| {
            let reason = match e.violation {
                Violation::Shape => RejectReason::InvalidRequest,
                Violation::Capability => RejectReason::Capability,
                Violation::Scheme => RejectReason::SchemeNotAllowed,
            };
            self.metrics.reject(counted_kind, reason);
            Ok(Opened::Refused(error_response(Some(&rpc_id), &e)))
        };
        if !envelope_ok {
            return refuse(RpcError::invalid_request(
                "not a JSON-RPC 2.0 request (\"jsonrpc\" must be \"2.0\", and a request has no result or error)",
            ));
        }
        let era = match Era::for_revision(&req.protocol_version) {
            Ok(era) => era,
            Err(e) => return refuse(RpcError::invalid_params(e.to_string())),
        };
        let params = req.request.get("params").cloned().unwrap_or(Value::Null);
        let caps = &req.client_capabilities;
        let (kind, audience, elicitation_id, phase) = match method {
            "sampling/createMessage" => match sampling::validate_request(era, caps, &params) {
                Ok(_) => (
                    Kind::Sampling,
                    Audience::Agent,
                    None,
                    Some(Phase::RequestReview),
                ),
                Err(e) => return refuse(e),
            },
            "elicitation/create" => match elicitation::validate_request(era, caps, &params) {
                Ok(elicitation::Request::Form { schema, .. }) => {
                    let audience = if audience::form_asks_for_secret(&schema) {
                        Audience::Human
                    } else {
                        Audience::Agent
                    };
                    (Kind::Form, audience, None, None)
                }
                Ok(elicitation::Request::Url { elicitation_id, .. }) => {
                    (Kind::Url, Audience::Human, elicitation_id, None)
                }
                Err(e) => return refuse(e),
            },
            other => return refuse(RpcError::method_not_found(other)),
        };

        let new_id = uuid::Uuid::now_v7().to_string();
        let conversation = if kind == Kind::Sampling && self.engine.is_some() {
            match self.admit_round(&req.server, &params).await? {
                approval::Round::Continue(c) => Some(c),
                approval::Round::New => Some(new_id.clone()),
                approval::Round::Refuse(e) => {
                    self.metrics.reject(counted_kind, RejectReason::Budget);
                    return Ok(Opened::Refused(error_response(Some(&rpc_id), &e)));
                }
            }
        } else {
            None
        };
        let now = Utc::now();
        let timeout = chrono::Duration::from_std(self.settings.question_timeout)
            .unwrap_or(chrono::Duration::MAX);
        let expires_at = now
            .checked_add_signed(timeout)
            .unwrap_or(DateTime::<Utc>::MAX_UTC);
        let row = QuestionRow {
            id: new_id,
            kind,
            server: req.server,
            session: req.session,
            tool: req.tool,
            audience,
            state: State::Pending,
            phase,
            protocol_version: req.protocol_version,
            era: era.as_str().to_owned(),
            client_capabilities: req.client_capabilities.to_string(),
            rpc_id: rpc_id.to_string(),
            request: params.to_string(),
            response: None,
            elicitation_id,
            created_at: now.timestamp_millis(),
            expires_at: expires_at.timestamp_millis(),
            decided_at: None,
            opened_at: None,
            revision: 1,
            conversation,
        };
        let limit = i64::try_from(self.settings.max_pending_per_server).unwrap_or(i64::MAX);
        let admission = self
            .db
            .run(move |conn| {
                conn.immediate_transaction(|conn| {
                    if let Some(existing) = QuestionRow::find_pending_request(
                        conn,
                        &row.server,
                        &row.session,
                        &row.rpc_id,
                    )? {
                        return Ok(if existing.request == row.request {
                            Admission::Existing(existing)
                        } else {
                            Admission::IdInUse
                        });
                    }
                    if QuestionRow::count_pending_for_server(conn, &row.server)? >= limit {
                        return Ok(Admission::TooMany);
                    }
                    QuestionRow::insert(conn, &row)?;
                    Ok::<_, DbError>(Admission::New(row))
                })
            })
            .await?;
        match admission {
            Admission::New(row) => {
                let question = Question::from_row(row)?;
                tracing::info!(id = %question.id, kind = question.kind.as_str(), server = %question.server, "question opened");
                self.metrics
                    .opened
                    .with_label_values(&[question.kind.as_str()])
                    .inc();
                self.changed(&question);
                if question.kind == Kind::Sampling && self.engine.is_some() {
                    self.after_open_sampling(&question).await?;
                }
                Ok(Opened::New(question))
            }
            Admission::Existing(row) => Ok(Opened::Existing(Question::from_row(row)?)),
            // MCP G1: "The request ID MUST NOT have been previously used by the requestor within
            // the same session." A different request under a pending id is not merged into it.
            Admission::IdInUse => {
                self.metrics
                    .reject(counted_kind, RejectReason::InvalidRequest);
                let e = RpcError::invalid_request(
                    "this request id is already used by another pending request",
                );
                Ok(Opened::Refused(error_response(Some(&rpc_id), &e)))
            }
            Admission::TooMany => {
                self.metrics.reject(counted_kind, RejectReason::Budget);
                let e = RpcError::internal(format!(
                    "too many open questions from this server (limit {}); answer or decline some first",
                    self.settings.max_pending_per_server
                ));
                Ok(Opened::Refused(error_response(Some(&rpc_id), &e)))
            }
        }
    }

    /// The question with this id (expiring it first if its deadline passed).
    ///
    /// # Errors
    /// [`BrokerError::NotFound`], [`BrokerError::Store`].
    pub async fn get(&self, id: &str) -> Result<Question, BrokerError> {
        let id_owned = id.to_owned();
        let row = self
            .db
            .run(move |conn| Ok(QuestionRow::find(conn, &id_owned)?))
            .await?
            .ok_or(BrokerError::NotFound)?;
        let question = Question::from_row(row)?;
        if question.state == State::Pending && question.expires_at <= Utc::now() {
            self.expire_due().await?;
            return Box::pin(self.get(id)).await;
        }
        Ok(question)
    }

    /// Questions oldest first, filtered by state and audience, at most `limit`.
    ///
    /// # Errors
    /// [`BrokerError::Store`], [`BrokerError::Corrupt`].
    pub async fn list(
        &self,
        state: Option<State>,
        audience: Option<Audience>,
        limit: i64,
    ) -> Result<Vec<Question>, BrokerError> {
        self.expire_due().await?;
        let rows = self
            .db
            .run(move |conn| Ok(QuestionRow::list(conn, state, audience, limit)?))
            .await?;
        rows.into_iter().map(Question::from_row).collect()
    }

    /// How many questions are pending in all (the queue page says when it shows fewer).
    ///
    /// # Errors
    /// [`BrokerError::Store`].
    pub async fn count_pending(&self) -> Result<i64, BrokerError> {
        Ok(self
            .db
            .run(|conn| Ok(QuestionRow::count_pending(conn)?))
            .await?)
    }

    /// Recently decided questions, newest first.
    ///
    /// # Errors
    /// [`BrokerError::Store`], [`BrokerError::Corrupt`].
    pub async fn history(&self, limit: i64) -> Result<Vec<Question>, BrokerError> {
        let rows = self
            .db
            .run(move |conn| Ok(QuestionRow::recent_decided(conn, limit)?))
            .await?;
        rows.into_iter().map(Question::from_row).collect()
    }

    /// The JSON-RPC response `answer` would produce, without deciding anything (the confirm
    /// page shows exactly this).
    ///
    /// # Errors
    /// [`BrokerError::InvalidAnswer`] with every problem; [`BrokerError::AlreadyDecided`],
    /// [`BrokerError::HumanOnly`], [`BrokerError::NotFound`].
    pub async fn preview(
        &self,
        id: &str,
        answer: &Answer,
        by: Answerer,
    ) -> Result<Value, BrokerError> {
        let question = self.get(id).await?;
        check_may_answer(&question, by)?;
        Ok(self.counted_response_for(&question, answer)?.1)
    }

    /// Validates `answer` and, if valid, decides the question and stores its response.
    ///
    /// # Errors
    /// [`BrokerError::InvalidAnswer`] (the question stays pending),
    /// [`BrokerError::AlreadyDecided`] (409: another answer won), [`BrokerError::HumanOnly`],
    /// [`BrokerError::NotFound`], [`BrokerError::Store`].
    pub async fn answer(
        &self,
        id: &str,
        answer: &Answer,
        by: Answerer,
    ) -> Result<State, BrokerError> {
        let question = self.get(id).await?;
        check_may_answer(&question, by)?;
        let (state, response) = self.counted_response_for(&question, answer)?;
        self.decide(&question, state, Some(response)).await?;
        Ok(state)
    }

    /// The server cancelled the request: the question is withdrawn and no response is sent.
    /// Unknown or already decided ids are a no-op (MCP G10: such cancellations MAY be ignored).
    ///
    /// # Errors
    /// [`BrokerError::Store`].
    pub async fn withdraw(&self, id: &str) -> Result<(), BrokerError> {
        match self.get(id).await {
            Ok(q) if q.state == State::Pending => {
                match self.decide(&q, State::Withdrawn, None).await {
                    Ok(()) | Err(BrokerError::AlreadyDecided(_)) => Ok(()),
                    Err(e) => Err(e),
                }
            }
            Ok(_) | Err(BrokerError::NotFound) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The person clicked "Open" on a URL question: records their consent, accepts the
    /// question (the server gets `{"action":"accept"}`, no content) and returns the URL to
    /// redirect to. A question already accepted or completed can be opened again.
    ///
    /// # Errors
    /// [`BrokerError::NotFound`] (also for a question that is not a URL question),
    /// [`BrokerError::AlreadyDecided`] when it was declined, cancelled, expired or withdrawn.
    pub async fn open_url(&self, id: &str) -> Result<String, BrokerError> {
        let question = self.get(id).await?;
        if question.kind != Kind::Url {
            return Err(BrokerError::NotFound);
        }
        let raw = question
            .request
            .get("url")
            .and_then(Value::as_str)
            .ok_or_else(|| BrokerError::Corrupt(question.id.clone(), "url".into()))?;
        // Checked again before consent is recorded: a URL that cannot be redirected to safely
        // (an older version may have stored one) is never accepted.
        let url = url_safety::review(raw)
            .map_err(|e| BrokerError::Corrupt(question.id.clone(), e.to_string()))?
            .normalized;
        let qid = question.id.clone();
        let now = Utc::now().timestamp_millis();
        self.db
            .run(move |conn| Ok(QuestionRow::mark_opened(conn, &qid, now)?))
            .await?;
        match question.state {
            State::Pending => {
                let response = result_response(&question.rpc_id, json!({"action": "accept"}));
                match self
                    .decide(&question, State::Accepted, Some(response))
                    .await
                {
                    Ok(())
                    | Err(BrokerError::AlreadyDecided(State::Accepted | State::Completed)) => {
                        Ok(url)
                    }
                    Err(e) => Err(e),
                }
            }
            State::Accepted | State::Completed => Ok(url),
            other => Err(BrokerError::AlreadyDecided(other)),
        }
    }

    /// The server reported a URL elicitation complete: an accepted URL question with this
    /// `elicitationId` becomes `completed`. Unknown or other ids are ignored (MCP 2025-11-25
    /// `client/elicitation.mdx` §Completion Notifications, EU6: "MUST ignore").
    ///
    /// # Errors
    /// [`BrokerError::Store`].
    pub async fn complete(&self, elicitation_id: &str) -> Result<(), BrokerError> {
        let eid = elicitation_id.to_owned();
        let now = Utc::now().timestamp_millis();
        let rows = self
            .db
            .run(move |conn| Ok(QuestionRow::complete_url(conn, &eid, now)?))
            .await?;
        for row in rows {
            let question = Question::from_row(row)?;
            self.metrics
                .closed
                .with_label_values(&[question.kind.as_str(), State::Completed.as_str()])
                .inc();
            self.changed(&question);
        }
        Ok(())
    }

    fn counted_response_for(
        &self,
        question: &Question,
        answer: &Answer,
    ) -> Result<(State, Value), BrokerError> {
        let r = response_for(question, answer);
        if let Err(BrokerError::InvalidAnswer(_)) = &r {
            self.metrics
                .reject(question.kind.as_str(), RejectReason::InvalidAnswer);
        }
        r
    }

    fn count_decision(&self, question: &Question, state: State, at: DateTime<Utc>) {
        let kind = question.kind.as_str();
        self.metrics
            .closed
            .with_label_values(&[kind, state.as_str()])
            .inc();
        match state {
            State::Declined => self.metrics.reject(kind, RejectReason::UserDeclined),
            State::Cancelled => self.metrics.reject(kind, RejectReason::UserCancelled),
            _ => {}
        }
        if matches!(state, State::Accepted | State::Declined | State::Cancelled) {
            let secs = (at - question.created_at).num_milliseconds().max(0) as f64 / 1000.0;
            self.metrics.decision(kind).observe(secs);
        }
    }

    async fn decide(
        &self,
        question: &Question,
        state: State,
        response: Option<Value>,
    ) -> Result<(), BrokerError> {
        let id = question.id.clone();
        let text = response.as_ref().map(Value::to_string);
        let now = Utc::now();
        let ms = now.timestamp_millis();
        let moved = self
            .db
            .run(move |conn| Ok(QuestionRow::decide(conn, &id, state, text.as_deref(), ms)?))
            .await?;
        if !moved {
            let current = Box::pin(self.get(&question.id)).await?;
            return Err(BrokerError::AlreadyDecided(current.state));
        }
        let mut decided = question.clone();
        decided.state = state;
        decided.phase = None;
        decided.response = response;
        decided.decided_at = Some(now);
        tracing::info!(id = %decided.id, state = state.as_str(), "question decided");
        self.count_decision(question, state, now);
        self.changed(&decided);
        Ok(())
    }

    /// Expires every pending question whose deadline passed: the server gets `-32603` saying
    /// the request expired and after how long. Returns how many expired.
    ///
    /// # Errors
    /// [`BrokerError::Store`].
    pub async fn expire_due(&self) -> Result<usize, BrokerError> {
        let now = Utc::now().timestamp_millis();
        let due = self
            .db
            .run(move |conn| Ok(QuestionRow::due(conn, now)?))
            .await?;
        let mut expired = 0;
        for row in due {
            let question = Question::from_row(row)?;
            let waited = (question.expires_at - question.created_at)
                .num_seconds()
                .max(0);
            let error = RpcError::internal(format!(
                "Request expired: nobody answered within {} (question {})",
                human_duration(waited),
                question.id
            ));
            let response = error_response(Some(&question.rpc_id), &error);
            match self.decide(&question, State::Expired, Some(response)).await {
                Ok(()) => expired += 1,
                Err(BrokerError::AlreadyDecided(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(expired)
    }

    /// Waits up to `wait` for the question to be decided.
    ///
    /// # Errors
    /// [`BrokerError::NotFound`], [`BrokerError::Store`].
    pub async fn wait_response(&self, id: &str, wait: Duration) -> Result<Waited, BrokerError> {
        let deadline = tokio::time::Instant::now() + wait;
        let mut changes = self.changes.subscribe();
        loop {
            changes.borrow_and_update();
            let question = self.get(id).await?;
            match (question.state, question.response) {
                (State::Pending, _) => {}
                (_, Some(response)) => return Ok(Waited::Response(response)),
                (state, None) => return Ok(Waited::Closed(state)),
            }
            let until_expiry = (question.expires_at - Utc::now())
                .to_std()
                .unwrap_or_default();
            let wake =
                deadline.min(tokio::time::Instant::now() + until_expiry + Duration::from_millis(5));
            tokio::select! {
                r = changes.changed() => if r.is_err() { return Ok(Waited::Pending) },
                () = self.stopping() => return Ok(Waited::Pending),
                () = tokio::time::sleep_until(wake) => {
                    if tokio::time::Instant::now() >= deadline {
                        return Ok(Waited::Pending);
                    }
                }
            }
        }
    }
}

fn check_may_answer(question: &Question, by: Answerer) -> Result<(), BrokerError> {
    if question.state != State::Pending {
        return Err(BrokerError::AlreadyDecided(question.state));
    }
    if question.audience == Audience::Human && by == Answerer::Agent {
        return Err(BrokerError::HumanOnly);
    }
    Ok(())
}

fn invalid(message: &str) -> BrokerError {
    BrokerError::InvalidAnswer(vec![FieldError::whole(message)])
}

/// The state and JSON-RPC response an answer produces, after validating it.
fn response_for(q: &Question, answer: &Answer) -> Result<(State, Value), BrokerError> {
    let state = match answer.action {
        Action::Accept => State::Accepted,
        Action::Decline => State::Declined,
        Action::Cancel => State::Cancelled,
    };
    let id = &q.rpc_id;
    match (q.kind, answer.action) {
        (Kind::Sampling, Action::Accept) => {
            if answer.content.is_some() {
                return Err(invalid("a sampling answer carries a result, not content"));
            }
            let result = answer
                .result
                .as_ref()
                .ok_or_else(|| invalid("result is required to accept"))?;
            sampling::validate_result(q.era, &q.request, result)
                .map_err(BrokerError::InvalidAnswer)?;
            Ok((state, result_response(id, result.clone())))
        }
        (Kind::Sampling, action) => Ok((
            state,
            error_response(Some(id), &RpcError::user_rejected(action.as_str())),
        )),
        (Kind::Form, Action::Accept) => {
            if answer.result.is_some() {
                return Err(invalid("a form answer carries content, not a result"));
            }
            let content = answer
                .content
                .as_ref()
                .ok_or_else(|| invalid("content is required to accept"))?;
            let schema = q.form_schema()?;
            let result =
                elicitation::accept_form(&schema, content).map_err(BrokerError::InvalidAnswer)?;
            Ok((state, result_response(id, result)))
        }
        // Consent is the person's click on the service's own /questions/{id}/open
        // (`Broker::open_url`), never an answer posted on its own (2025-11-25 ES7: MUST NOT open
        // the URL without explicit consent).
        (Kind::Url, Action::Accept) => Err(invalid(
            "a URL question is accepted by opening its link from the review page",
        )),
        (Kind::Form | Kind::Url, action) => {
            if answer.content.is_some() || answer.result.is_some() {
                return Err(invalid("decline and cancel carry no content"));
            }
            Ok((
                state,
                result_response(id, elicitation::refusal(action.as_str())),
            ))
        }
    }
}

/// "15 minutes", "90 seconds", "2 hours".
pub fn human_duration(secs: i64) -> String {
    let plural = |n: i64, unit: &str| format!("{n} {unit}{}", if n == 1 { "" } else { "s" });
    if secs % 3600 == 0 && secs >= 3600 {
        plural(secs / 3600, "hour")
    } else if secs % 60 == 0 && secs >= 60 {
        plural(secs / 60, "minute")
    } else {
        plural(secs, "second")
    }
}
