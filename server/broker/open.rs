//! Opening a question: validate the request (a malformed one never opens a question), admit
//! it (one per pending JSON-RPC id, a per-server limit, the sampling hooks' budgets) and store
//! it.

use chrono::{DateTime, SubsecRound, Utc};
use serde_json::Value;

use super::door_budget::OverBudget;
use super::hooks::Round;
use super::{Broker, BrokerError, BrokerSettings, Question, ServerControl, audience};
use crate::db::{DbError, lock_for_transaction};
use crate::domain::{Audience, Kind, Phase, QuestionId, State, Via};
use crate::metrics::RejectReason;
use crate::metrics::ToolCallDecision;
use crate::protocol::elicitation;
use crate::protocol::era::Era;
use crate::protocol::jsonrpc::{RpcError, Violation, error_response, is_valid_id};
use crate::protocol::sampling;
use crate::tools::ToolCall;
use crate::wire::OpenRequest;

/// The method of a host's tool call.
const TOOLS_CALL: &str = "tools/call";

/// The outcome of opening (the API answers it as a `wire::Opened`).
#[derive(Debug, Clone)]
pub enum OpenOutcome {
    /// A new question.
    New(Question),
    /// The same request (server, session, JSON-RPC id) was already pending: that question.
    Existing(Question),
    /// Refused before opening: the JSON-RPC error response for the server.
    Refused(Value),
}

/// What opening found in the store.
enum Admission {
    New(Question),
    Existing(Question),
    /// Nothing was opened, for this reason.
    Refused(Refused),
}

/// Why [`Broker::admit`] opened nothing.
enum Refused {
    /// Another pending request of the session has this id.
    IdInUse,
    /// The server is at `max_pending_per_server`.
    TooMany,
    /// The server's questions of the last hour already hold `max_stored_bytes_per_server`.
    TooMuchStored,
    /// The door's last hour already holds `max_stored_bytes_per_door`.
    DoorFull(OverBudget),
}

/// A request that passed the protocol checks: what opening it needs.
struct Checked {
    rpc_id: Value,
    /// The kind as the rejection metrics count it (`unknown` before the method is known).
    counted_kind: &'static str,
    era: Era,
    params: Value,
    kind: Kind,
    audience: Audience,
    elicitation_id: Option<String>,
    phase: Option<Phase>,
}

impl Broker {
    /// Validates a request and opens a question for it.
    ///
    /// A request whose id is not a string or integer is refused with `-32600` (MCP G1); an
    /// unknown method with `-32601`; a request breaking the era's rules with `-32602`
    /// (`protocol::sampling`, `protocol::elicitation`). Re-posting a request that is still
    /// pending returns the open question.
    ///
    /// # Errors
    /// `via` is the door the request came through, whose hourly budget it is counted against.
    ///
    /// # Errors
    /// [`BrokerError::Store`] only; protocol problems are [`OpenOutcome::Refused`].
    pub async fn open(&self, req: OpenRequest, via: Via) -> Result<OpenOutcome, BrokerError> {
        let settings = self.settings();
        let checked = match self.check(&req, &settings) {
            Ok(checked) => checked,
            Err(refusal) => return Ok(OpenOutcome::Refused(refusal)),
        };
        // The person's pause or block refuses before anything is stored or budgeted.
        let control = self.control(&req.server).await?;
        if let Some(e) = control_refusal(&control) {
            self.metrics
                .reject(checked.counted_kind, RejectReason::ServerPaused);
            return Ok(OpenOutcome::Refused(error_response(
                Some(&checked.rpc_id),
                &e,
            )));
        }

        let new_id = QuestionId::new();
        let hooks = self
            .sampling_hooks()
            .filter(|_| checked.kind == Kind::Sampling);
        let conversation = if let Some(hooks) = &hooks {
            match hooks.admit(&req.server, &checked.params, via).await? {
                Round::Continue(c) => Some(c),
                Round::New => Some(new_id.to_string()),
                Round::Refuse(e) => {
                    self.metrics
                        .reject(checked.counted_kind, RejectReason::Budget);
                    return Ok(OpenOutcome::Refused(error_response(
                        Some(&checked.rpc_id),
                        &e,
                    )));
                }
            }
        } else {
            None
        };
        let (rpc_id, counted_kind) = (checked.rpc_id.clone(), checked.counted_kind);
        let question = self.new_question(new_id, req, checked, conversation, via, &settings);
        let stored = stored_bytes(&question);
        let admission =
            match self
                .doors
                .charge(via, stored, settings.max_stored_bytes_per_door, self.now())
            {
                Ok(charge) => {
                    let admission = self.admit(question, stored, &settings).await;
                    // Only a new question stores anything: give the rest their room back.
                    if let Some(charge) = charge
                        && !matches!(admission, Ok(Admission::New(_)))
                    {
                        self.doors.refund(charge);
                    }
                    admission?
                }
                Err(over) => Admission::Refused(Refused::DoorFull(over)),
            };
        match admission {
            Admission::New(question) => {
                tracing::info!(id = %question.id, kind = question.kind.as_str(), server = %question.server, "question opened");
                self.metrics
                    .opened
                    .with_label_values(&[question.kind.as_str()])
                    .inc();
                if question.kind == Kind::ToolCall {
                    self.metrics.tool_call(ToolCallDecision::Asked);
                }
                self.opened(&question, &control);
                if let Some(hooks) = &hooks {
                    hooks.opened(&question).await?;
                }
                Ok(OpenOutcome::New(question))
            }
            Admission::Existing(question) => Ok(OpenOutcome::Existing(question)),
            Admission::Refused(refused) => {
                let (reason, e) = admission_refusal(&refused, &settings);
                self.metrics.reject(counted_kind, reason);
                Ok(OpenOutcome::Refused(error_response(Some(&rpc_id), &e)))
            }
        }
    }

    /// The protocol checks of a request, before anything is stored: the id, the envelope, the
    /// era and the method's own rules. A refusal is the JSON-RPC error response to send back
    /// (and is counted).
    fn check(&self, req: &OpenRequest, settings: &BrokerSettings) -> Result<Checked, Value> {
        let rpc_id = match req.request.get("id") {
            Some(id) if is_valid_id(id) && id.to_string().len() > MAX_NAME_BYTES => {
                let e = RpcError::invalid_request(format!(
                    "request id is longer than {MAX_NAME_BYTES} bytes"
                ));
                self.metrics.reject("unknown", RejectReason::InvalidRequest);
                return Err(error_response(None, &e));
            }
            Some(id) if is_valid_id(id) => id.clone(),
            _ => {
                let e = RpcError::invalid_request("request id must be a string or an integer");
                self.metrics.reject("unknown", RejectReason::InvalidRequest);
                return Err(error_response(None, &e));
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
            TOOLS_CALL => Kind::ToolCall.as_str(),
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
            Err(error_response(Some(&rpc_id), &e))
        };
        if let Some(what) = oversized(req) {
            return refuse(RpcError::invalid_params(what));
        }
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
        let (kind, audience, elicitation_id, phase) =
            match classify(method, era, &req.client_capabilities, &params, settings) {
                Ok(classified) => classified,
                Err(e) => return refuse(e),
            };
        Ok(Checked {
            rpc_id,
            counted_kind,
            era,
            params,
            kind,
            audience,
            elicitation_id,
            phase,
        })
    }

    /// A new pending question, expiring after `question_timeout_secs`.
    fn new_question(
        &self,
        id: QuestionId,
        req: OpenRequest,
        checked: Checked,
        conversation: Option<String>,
        via: Via,
        settings: &BrokerSettings,
    ) -> Question {
        // The store keeps milliseconds: the question is what reading it back gives.
        let now = self.now().trunc_subsecs(3);
        let timeout =
            chrono::Duration::from_std(settings.question_timeout).unwrap_or(chrono::Duration::MAX);
        let expires_at = now
            .checked_add_signed(timeout)
            .unwrap_or(DateTime::<Utc>::MAX_UTC)
            .trunc_subsecs(3);
        let kind = checked.kind;
        Question {
            id,
            kind,
            server: req.server,
            session: req.session,
            tool: req.tool,
            audience: checked.audience,
            state: State::Pending,
            phase: checked.phase,
            protocol_version: req.protocol_version,
            era: checked.era,
            client_capabilities: req.client_capabilities,
            rpc_id: checked.rpc_id,
            request: checked.params,
            response: None,
            elicitation_id: checked.elicitation_id,
            created_at: now,
            expires_at,
            decided_at: None,
            opened_at: None,
            revision: 1,
            conversation,
            tool_info: req.tool_info.filter(|_| kind == Kind::ToolCall),
            opened_via: Some(via),
        }
    }

    /// Stores `row` unless the same request is already pending (that one is returned), its id
    /// is pending with another request, or the server is at `max_pending_per_server`: one
    /// transaction, so parallel opens cannot pass the limit together.
    async fn admit(
        &self,
        row: Question,
        stored_bytes: u64,
        settings: &BrokerSettings,
    ) -> Result<Admission, BrokerError> {
        let limit = i64::try_from(settings.max_pending_per_server).unwrap_or(i64::MAX);
        let stored_limit = i64::try_from(settings.max_stored_bytes_per_server).unwrap_or(i64::MAX);
        let since = self.now() - STORED_WINDOW;
        let admission = self
            .db
            .write(move |conn| {
                conn.immediate_transaction(|conn| {
                    // Instances sharing a database check and insert one at a time per server,
                    // so the per-server limit counts the shared queue.
                    lock_for_transaction(conn, &row.server)?;
                    if let Some(existing) = Question::find_pending_request(
                        conn,
                        &row.server,
                        &row.session,
                        &row.rpc_id.to_string(),
                    )? {
                        return Ok(if same_stored_text(&existing.request, &row.request) {
                            Admission::Existing(existing)
                        } else {
                            Admission::Refused(Refused::IdInUse)
                        });
                    }
                    // Counted per door: a token holder's questions under a server's name never
                    // crowd out the ones the server's own proxy asks through the socket.
                    let via = row.opened_via.unwrap_or(Via::Cli);
                    if Question::count_pending_for_server(conn, &row.server, via)? >= limit {
                        return Ok(Admission::Refused(Refused::TooMany));
                    }
                    // Withdrawn or answered at once, a question still holds its request until
                    // retention: what one server stored in the last hour is bounded too.
                    let stored =
                        Question::stored_request_chars_since(conn, &row.server, via, since)?;
                    let adding = i64::try_from(stored_bytes).unwrap_or(i64::MAX);
                    if stored.saturating_add(adding) > stored_limit {
                        return Ok(Admission::Refused(Refused::TooMuchStored));
                    }
                    Question::insert(conn, &row)?;
                    Ok::<_, DbError>(Admission::New(row))
                })
            })
            .await?;
        Ok(admission)
    }
}

/// Why an admission that opened nothing was refused: the metric's reason and the error for
/// the server.
fn admission_refusal(refused: &Refused, settings: &BrokerSettings) -> (RejectReason, RpcError) {
    match refused {
        // MCP G1: "The request ID MUST NOT have been previously used by the requestor within
        // the same session." A different request under a pending id is not merged into it.
        Refused::IdInUse => (
            RejectReason::InvalidRequest,
            RpcError::invalid_request("this request id is already used by another pending request"),
        ),
        Refused::TooMuchStored => (
            RejectReason::Budget,
            RpcError::internal(format!(
                "this server's questions of the last hour hold too much (limit {} bytes, max_stored_bytes_per_server); try again later",
                settings.max_stored_bytes_per_server
            )),
        ),
        Refused::DoorFull(over) => (
            RejectReason::Budget,
            RpcError::internal(format!(
                "the questions and reports sent through this door in the last hour hold too much (limit {} bytes, max_stored_bytes_per_door); try again in {} s",
                settings.max_stored_bytes_per_door,
                over.retry_after.as_secs()
            )),
        ),
        Refused::TooMany => (
            RejectReason::Budget,
            RpcError::internal(format!(
                "too many open questions from this server (limit {}); answer or decline some first",
                settings.max_pending_per_server
            )),
        ),
    }
}

/// The longest `server`, `session`, `tool` or `protocolVersion` a request may name.
const MAX_NAME_BYTES: usize = 256;
/// The longest `clientCapabilities` (as text) a request may carry; real ones are a few
/// hundred bytes.
const MAX_CAPABILITIES_BYTES: usize = 64 * 1024;

/// What of a request's own fields (besides the JSON-RPC request) is too long to store, as a
/// sentence; the request is refused before anything is stored or counted.
fn oversized(req: &OpenRequest) -> Option<String> {
    let names = [
        ("server", req.server.len()),
        ("session", req.session.len()),
        ("tool", req.tool.as_deref().map_or(0, str::len)),
        ("protocolVersion", req.protocol_version.len()),
    ];
    if let Some((field, _)) = names.iter().find(|(_, len)| *len > MAX_NAME_BYTES) {
        return Some(format!("{field} is longer than {MAX_NAME_BYTES} bytes"));
    }
    (req.client_capabilities.to_string().len() > MAX_CAPABILITIES_BYTES)
        .then(|| format!("clientCapabilities is longer than {MAX_CAPABILITIES_BYTES} bytes"))
}

/// What a question adds to the store, as both budgets count it: the request's text, the
/// tool listing and the client capabilities stored with it.
fn stored_bytes(row: &Question) -> u64 {
    let listing = row
        .tool_info
        .as_ref()
        .and_then(|t| serde_json::to_string(t).ok())
        .map_or(0, |t| t.len());
    let capabilities = row.client_capabilities.to_string().len();
    u64::try_from(row.request.to_string().len() + listing + capabilities).unwrap_or(u64::MAX)
}

/// How far back [`Refused::TooMuchStored`] counts a server's stored requests.
const STORED_WINDOW: chrono::TimeDelta = chrono::TimeDelta::hours(1);

/// Whether two requests are stored as the same text. As JSON values, objects whose keys come
/// in another order would compare equal; the same request is the same text.
#[allow(clippy::cmp_owned)]
fn same_stored_text(a: &Value, b: &Value) -> bool {
    a.to_string() == b.to_string()
}

/// The person's pause or block of the server, as the refusal to send; `None` when it may ask.
fn control_refusal(control: &ServerControl) -> Option<RpcError> {
    if !control.refuses() {
        return None;
    }
    Some(match control.paused_until {
        Some(until) if !control.blocked => RpcError::internal(format!(
            "the person paused requests from this server until {}",
            super::rfc3339(until)
        )),
        _ => RpcError::internal("the person blocked requests from this server"),
    })
}

/// What a request of `method` opens, by the method's own rules: its kind, who may answer it,
/// its URL-mode elicitation id and its first phase.
fn classify(
    method: &str,
    era: Era,
    caps: &Value,
    params: &Value,
    settings: &BrokerSettings,
) -> Result<(Kind, Audience, Option<String>, Option<Phase>), RpcError> {
    Ok(match method {
        "sampling/createMessage" => {
            sampling::validate_request(era, caps, params)?;
            (
                Kind::Sampling,
                Audience::Agent,
                None,
                Some(Phase::RequestReview),
            )
        }
        "elicitation/create" => match elicitation::validate_request(era, caps, params)? {
            elicitation::Request::Form { message, schema } => {
                let person_only = settings.forms_person_only || audience::asks_for_a_person(params);
                let audience = audience::of_form(&message, &schema, person_only);
                (Kind::Form, audience, None, None)
            }
            elicitation::Request::Url { elicitation_id, .. } => {
                (Kind::Url, Audience::Human, elicitation_id, None)
            }
        },
        // A host's tool call the person's rules ask about: always the person's to answer
        // (an agent must not approve its own calls).
        TOOLS_CALL => match ToolCall::from_params(params) {
            Ok(_) => (Kind::ToolCall, Audience::Human, None, None),
            Err(e) => return Err(RpcError::invalid_params(e.to_string())),
        },
        other => return Err(RpcError::method_not_found(other)),
    })
}
