//! The stored question row and its list form: the leaf both the queries (`models`) and the
//! fixed statements (`sql`) read, so neither imports the other's row.

use diesel::prelude::*;

use super::schema::questions;
use crate::domain::{Audience, Kind, Phase, State};

/// A stored question (see `migrations/` for the column meanings). Times are Unix milliseconds.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = questions, check_for_backend(diesel::sqlite::Sqlite, diesel::pg::Pg))]
pub struct QuestionRow {
    pub id: String,
    pub kind: Kind,
    pub server: String,
    pub session: String,
    pub tool: Option<String>,
    pub audience: Audience,
    pub state: State,
    pub phase: Option<Phase>,
    pub protocol_version: String,
    pub era: String,
    pub client_capabilities: String,
    pub rpc_id: String,
    pub request: String,
    pub response: Option<String>,
    pub elicitation_id: Option<String>,
    pub created_at: i64,
    pub expires_at: i64,
    pub decided_at: Option<i64>,
    pub opened_at: Option<i64>,
    pub revision: i32,
    pub conversation: Option<String>,
    /// A tool call's `toolInfo` (what the server claimed about the tool), as JSON.
    pub tool_info: Option<String>,
}

/// The columns of a list entry, in order: id, kind, server, tool, audience, state,
/// created_at, expires_at (a list reads no request or response text).
pub type SummaryRow = (
    String,
    Kind,
    String,
    Option<String>,
    Audience,
    State,
    i64,
    i64,
);
