//! The `/api/v1` request and response bodies, shared by the API handlers (`web::api`), the
//! client of the local commands (`client`) and, through it, the proxy. Field names are the
//! wire's (camelCase); times are RFC 3339 UTC with milliseconds.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::domain::{
    Action, Actor, ApprovalId, Audience, AuditAction, DecisionKind, Kind, Phase, QuestionId,
    RuleId, RuleScope, RunState, State, Via,
};
use crate::sampling::Receipt;

/// `POST /api/v1/requests` body: a request as the server sent it, with what it is judged by.
#[derive(Debug, Clone, Deserialize, Serialize)]
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
    /// The JSON-RPC request exactly as the server sent it (for a `tool_call`, the host's
    /// `tools/call` as it would go to the server).
    pub request: Value,
    /// For a host's `tools/call`: what the server claimed about the tool in `tools/list`
    /// (description, `inputSchema`, annotations), shown as claims; absent when the proxy has
    /// not seen it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_info: Option<crate::tools::ToolInfo>,
}

/// What `POST /api/v1/requests` gave: 201/200 `{"id","state","expiresAt"}` for a question
/// (new or already pending), 200 `{"response"}` when the request was refused before opening.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "OpenedBody", into = "OpenedBody")]
pub enum Opened {
    /// A question is pending: its id and deadline (RFC 3339).
    Question {
        /// Question id.
        id: QuestionId,
        /// Deadline, if the service reported one (an unreadable one counts as none).
        expires_at: Option<DateTime<Utc>>,
    },
    /// Refused before opening: the JSON-RPC response to give the server.
    Response(Value),
}

/// The JSON shape of [`Opened`] (a question is always `pending` when opened).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
enum OpenedBody {
    Refused {
        response: Value,
    },
    Question {
        id: QuestionId,
        #[serde(default)]
        state: Option<State>,
        #[serde(rename = "expiresAt", default)]
        expires_at: Option<String>,
    },
}

impl From<OpenedBody> for Opened {
    fn from(body: OpenedBody) -> Opened {
        match body {
            OpenedBody::Refused { response } => Opened::Response(response),
            OpenedBody::Question { id, expires_at, .. } => Opened::Question {
                id,
                expires_at: expires_at
                    .and_then(|t| DateTime::parse_from_rfc3339(&t).ok())
                    .map(|t| t.with_timezone(&Utc)),
            },
        }
    }
}

impl From<Opened> for OpenedBody {
    fn from(opened: Opened) -> OpenedBody {
        match opened {
            Opened::Response(response) => OpenedBody::Refused { response },
            Opened::Question { id, expires_at } => OpenedBody::Question {
                id,
                state: Some(State::Pending),
                expires_at: expires_at.map(|t| t.to_rfc3339_opts(SecondsFormat::Millis, true)),
            },
        }
    }
}

/// `GET /api/v1/requests/{id}/response` body: 200 `{"response"}` once decided, 202
/// `{"state":"pending"}` while not, 200 `{"state":"withdrawn"}` when there is nothing to send.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResponseBody {
    /// The JSON-RPC response for the server.
    Response {
        /// The response.
        response: Value,
    },
    /// No response (yet).
    State {
        /// `pending`, or the state it closed in.
        state: State,
    },
}

/// `POST /api/v1/questions/{id}/answer` and `/preview` body.
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
    /// Tool-call accept: the arguments to send instead of the host's (validated against the
    /// tool's `inputSchema` when the proxy saw one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// Tool-call accept: also allow this tool on this server from now on, for `hour`, `day`
    /// or `always` (a grant, revocable on the rules page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<GrantSpan>,
}

/// How long a grant made with an answer lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GrantSpan {
    /// One hour.
    Hour,
    /// One day.
    Day,
    /// Until revoked.
    Always,
}

impl GrantSpan {
    /// The form's and the wire's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            GrantSpan::Hour => "hour",
            GrantSpan::Day => "day",
            GrantSpan::Always => "always",
        }
    }

    /// How long it lasts; `None`: until revoked.
    pub fn duration(self) -> Option<chrono::Duration> {
        match self {
            GrantSpan::Hour => Some(chrono::Duration::hours(1)),
            GrantSpan::Day => Some(chrono::Duration::days(1)),
            GrantSpan::Always => None,
        }
    }
}

/// `POST /api/v1/questions/{id}/answer` result: the new state.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Answered {
    /// The state the answer moved the question to.
    pub state: State,
}

/// `POST /api/v1/questions/{id}/preview` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Preview {
    /// The JSON-RPC response the answer would send.
    pub response: Value,
}

/// The list entry of a question (API `summary`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Question id.
    pub id: QuestionId,
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

/// `GET /api/v1/questions` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct QuestionList {
    /// Summaries, oldest first.
    pub questions: Vec<Summary>,
}

/// `GET /api/v1/questions/{id}` result: the summary fields plus what the question asks and,
/// once decided, what the server got.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionDetail {
    /// The list entry's fields.
    #[serde(flatten)]
    pub summary: Summary,
    /// Negotiated `protocolVersion`.
    pub protocol_version: String,
    /// Sampling phase while pending.
    pub phase: Option<Phase>,
    /// The request params as sent.
    pub request: Value,
    /// The JSON-RPC response, once decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Value>,
    /// The current revision of a model-reviewed sampling request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<i32>,
    /// The model review (params, route, runs, approval ids), when models are configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<ReviewDetail>,
    /// A tool call: what the server claimed about the tool in `tools/list` (description,
    /// `inputSchema`, annotations), when the proxy saw it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_info: Option<crate::tools::ToolInfo>,
    /// The door the question was opened through: `cli` (the owner-only socket, which is how
    /// a proxy on this computer asks) or `token` (the API token over TCP: a proxy given
    /// `--broker URL`, or anyone holding the token); absent for questions stored before it
    /// was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opened_via: Option<crate::domain::Via>,
}

/// The model review of a sampling question, in its detail (`review`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewDetail {
    /// The params of the current revision.
    pub params: Value,
    /// The route receipt of the current revision (why this model, or why none).
    pub route: Receipt,
    /// Runs, newest first.
    pub runs: Vec<RunDetail>,
    /// The id a decision on the current request review takes.
    pub request_approval_id: ApprovalId,
    /// The id a decision on the newest run's response takes, once that run is done.
    pub response_approval_id: Option<ApprovalId>,
}

/// One model run of a review.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunDetail {
    /// Run id.
    pub id: String,
    /// The revision it ran.
    pub revision: i32,
    /// The model id from the catalog.
    pub model: String,
    /// Where the run is.
    pub state: RunState,
    /// The `CreateMessageResult` it produced, once done (null if the stored text is no JSON).
    pub result: Option<Value>,
    /// Why it failed.
    pub error: Option<String>,
    /// Tokens in, as the provider reported.
    pub input_tokens: Option<i64>,
    /// Tokens out, as the provider reported.
    pub output_tokens: Option<i64>,
    /// Cost in USD by the catalog's prices.
    pub cost_usd: Option<f64>,
    /// The receipt stored with the run, as stored (null if it is no JSON).
    pub receipt: Option<Value>,
}

/// A decision posted for an approval id (`POST /api/v1/questions/{id}/approvals`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Decision {
    /// `<question>:request:<revision>` or `<question>:response:<run>` (kept as text: a
    /// malformed id is refused by the review with 422, not by the JSON parser).
    pub approval_id: String,
    /// What to do.
    pub decision: DecisionKind,
    /// For `approve` and `regenerate`: another catalog model than the routed one.
    #[serde(default)]
    pub model: Option<String>,
    /// For `approve` of a request approval only: an edit of the request (the revisions
    /// endpoint's body), applied first as a new revision (audited `edited`); the approval then
    /// applies to that revision. A malformed edit is refused (422) and changes nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit: Option<Edit>,
    /// For `approve` and `regenerate` of a `model` the route excluded only for its estimate
    /// over the cost cap: the person confirmed running it anyway, having been shown the cost
    /// and the cap. Without it such a model is refused (422).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub over_cap_confirmed: bool,
}

/// What a decision did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Applied {
    /// The decision took effect.
    Done,
    /// The same decision was already recorded: nothing changed.
    Replayed,
}

/// `POST /api/v1/questions/{id}/approvals` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Decided {
    /// What the decision did.
    pub applied: Applied,
    /// The question's state after it.
    pub state: State,
    /// Its phase after it.
    pub phase: Option<Phase>,
}

/// An edit of the request (`POST /api/v1/questions/{id}/revisions`): replaces the system prompt
/// and/or text blocks of the current revision, making a new one.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Edit {
    /// The revision the edit was made on; an older one is refused.
    pub base_revision: i32,
    /// New system prompt (empty removes it).
    #[serde(default)]
    pub system_prompt: Option<String>,
    /// New texts of text blocks.
    #[serde(default)]
    pub texts: Vec<TextEdit>,
}

/// One edited text block: `messages[message].content` (block `block` of an array).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TextEdit {
    /// Message index.
    pub message: usize,
    /// Block index within the message (0 for single-block content).
    pub block: usize,
    /// The new text.
    pub text: String,
}

/// `POST /api/v1/questions/{id}/revisions` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Revised {
    /// The new revision number.
    pub revision: i32,
}

/// `POST /api/v1/rules` body (the scope is checked by the review, so a wrong one is a 422).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NewRule {
    /// The server the rule covers.
    pub server: String,
    /// `request` or `both`.
    pub scope: String,
    /// Why the person trusts it.
    pub reason: String,
    /// Lifetime in days (default 7, 1 to 365).
    pub days: Option<i64>,
    /// Lifetime in hours (1 to 8760), in place of `days`: the shortest rule lasts an hour.
    pub hours: Option<i64>,
}

/// An auto-approve rule as the API shows it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    /// Rule id.
    pub id: RuleId,
    /// The server it covers.
    pub server: String,
    /// What it covers.
    pub scope: RuleScope,
    /// Who made it.
    pub author: Actor,
    /// Why.
    pub reason: String,
    /// Made at.
    pub created_at: Option<String>,
    /// Expires at.
    pub expires_at: Option<String>,
    /// Revoked at, if revoked.
    pub revoked_at: Option<String>,
}

/// `GET /api/v1/rules` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RuleList {
    /// Every rule, newest first.
    pub rules: Vec<Rule>,
}

/// One audit-log entry as the API shows it (digests, never text).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    /// Order of writing.
    pub seq: i32,
    /// When.
    pub at: Option<String>,
    /// Who.
    pub actor: Actor,
    /// What.
    pub action: AuditAction,
    /// The question; `null` for an entry about a rule, a tool call a rule decided and a grant
    /// revoked.
    pub question_id: Option<QuestionId>,
    /// The kind of the question (`null` for an entry about a rule).
    pub kind: Option<Kind>,
    /// The rule created or revoked (`rule_created`, `rule_revoked`); `null` otherwise.
    pub rule_id: Option<RuleId>,
    /// Its server.
    pub server: String,
    /// The tool, for tool-call decisions and grants.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The model, when one ran.
    pub model: Option<String>,
    /// Input tokens of the run.
    pub input_tokens: Option<i64>,
    /// Output tokens of the run.
    pub output_tokens: Option<i64>,
    /// Cost of the run in USD.
    pub cost_usd: Option<f64>,
    /// SHA-256 of the request as run.
    pub request_digest: Option<String>,
    /// SHA-256 of the delivered result.
    pub response_digest: Option<String>,
    /// The door the decision came through: `browser`, `cli` (the API token over the
    /// owner-only socket) or `token` (the API token over TCP); `null` for rules, expiry,
    /// withdrawal and entries written before doors were recorded.
    #[serde(default)]
    pub via: Option<Via>,
}

/// `GET /api/v1/audit` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AuditList {
    /// Entries, newest first.
    pub entries: Vec<AuditEntry>,
}

/// `POST /api/v1/login-links` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoginLink {
    /// The one-time login URL (under `public_url` when it is set).
    pub url: String,
    /// With `public_url` set: the same one-time link at the loopback address, for a browser on
    /// this machine (either works, once).
    #[serde(default, rename = "localUrl", skip_serializing_if = "Option::is_none")]
    pub local_url: Option<String>,
}

/// Error body of every status but 422: `{"error"}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorBody {
    /// What went wrong.
    pub error: String,
}

/// 422 body: `{"errors":[{"field","message"}]}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Invalid {
    /// Every problem found.
    pub errors: Vec<Problem>,
}

/// One problem of a 422 (the client's view of `protocol::FieldError`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Problem {
    /// The field concerned; empty for the whole answer.
    #[serde(default)]
    pub field: String,
    /// What is wrong.
    #[serde(default)]
    pub message: String,
}

/// Why the proxy dropped a line from a server instead of passing it to the host (the `reason`
/// label of `mcp_consent_proxy_dropped_lines_total`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DroppedLine {
    /// serde_json refused it, or it is not a JSON object or array.
    Unparseable,
    /// Longer than the proxy's line limit.
    TooLong,
    /// Readable, but not safe to pass (a notification with a request method, a member name
    /// that folds to an envelope member, a response to no request in flight, …).
    Ambiguous,
}

impl DroppedLine {
    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            DroppedLine::Unparseable => "unparseable",
            DroppedLine::TooLong => "too_long",
            DroppedLine::Ambiguous => "ambiguous",
        }
    }
}

/// `POST /api/v1/proxy/dropped`: lines a proxy dropped since its last report (no content).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DropReport {
    /// Why they were dropped.
    pub reason: DroppedLine,
    /// How many, at least 1.
    pub count: u64,
}

/// An empty object, the body of calls that only succeed (`{}`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Empty {}
