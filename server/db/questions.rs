//! The `questions` table's rows: [`Question`], the one question type of the service (the
//! broker decides what it means and gives it its views), and [`Listed`], a list entry. A leaf:
//! the queries (`models`) and the fixed statements (`sql`) both read it.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde_json::Value;

use super::columns::{Json, MaybeJson, MaybeMillis, Millis};
use super::schema::questions;
use crate::domain::{Audience, Kind, Phase, QuestionId, State, Via};
use crate::protocol::era::Era;
use crate::tools::ToolInfo;

/// A question: a stored request awaiting (or past) its answer. See `migrations/` for the
/// columns; times are stored as Unix milliseconds, JSON as its text.
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = questions, check_for_backend(diesel::sqlite::Sqlite, diesel::pg::Pg))]
pub struct Question {
    /// UUIDv7.
    pub id: QuestionId,
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
    #[diesel(deserialize_as = Json<Value>)]
    pub client_capabilities: Value,
    /// The JSON-RPC id of the request.
    #[diesel(deserialize_as = Json<Value>)]
    pub rpc_id: Value,
    /// The request params as sent.
    #[diesel(deserialize_as = Json<Value>)]
    pub request: Value,
    /// The JSON-RPC response, once decided.
    #[diesel(deserialize_as = MaybeJson<Value>)]
    pub response: Option<Value>,
    /// URL mode's `elicitationId`.
    pub elicitation_id: Option<String>,
    /// Opened at.
    #[diesel(deserialize_as = Millis)]
    pub created_at: DateTime<Utc>,
    /// Deadline.
    #[diesel(deserialize_as = Millis)]
    pub expires_at: DateTime<Utc>,
    /// Decided at.
    #[diesel(deserialize_as = MaybeMillis)]
    pub decided_at: Option<DateTime<Utc>>,
    /// When the person opened a URL question's link (their consent).
    #[diesel(deserialize_as = MaybeMillis)]
    pub opened_at: Option<DateTime<Utc>>,
    /// Sampling: the current revision of the request (1 = as the server sent it).
    pub revision: i32,
    /// Sampling: the conversation (tool loop) this round belongs to.
    pub conversation: Option<String>,
    /// A tool call: what the server claimed about the tool, when the proxy saw it.
    #[diesel(deserialize_as = MaybeJson<ToolInfo>)]
    pub tool_info: Option<ToolInfo>,
    /// The door it was opened through: [`Via::Cli`] (the owner-only socket) or [`Via::Token`]
    /// (the API token over TCP); `None` for questions stored before it was recorded.
    pub opened_via: Option<Via>,
}

/// A list entry: what a list shows of a question (a list reads no request or response text).
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = questions, check_for_backend(diesel::sqlite::Sqlite, diesel::pg::Pg))]
pub struct Listed {
    /// UUIDv7.
    pub id: QuestionId,
    /// What it asks for.
    pub kind: Kind,
    /// The asking server.
    pub server: String,
    /// The host's tool call, when known.
    pub tool: Option<String>,
    /// Who may answer.
    pub audience: Audience,
    /// Current state.
    pub state: State,
    /// Opened at.
    #[diesel(deserialize_as = Millis)]
    pub created_at: DateTime<Utc>,
    /// Deadline.
    #[diesel(deserialize_as = Millis)]
    pub expires_at: DateTime<Utc>,
}
