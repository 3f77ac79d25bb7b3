//! A question as the broker sees it, its list and API views, and the reads of the store.

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::Value;

use super::events::Event;
use super::{Broker, BrokerError};
use crate::db::models::QuestionRow;
use crate::domain::{Audience, Kind, Phase, QuestionId, State};
use crate::protocol::elicitation::FormSchema;
use crate::protocol::era::Era;
use crate::tools::ToolInfo;
use crate::wire::{QuestionDetail, Summary};

/// Who is answering, by the door the answer comes through: a person in the browser (may
/// answer every question) or a script or agent with the API token, over the CLI's socket or
/// TCP (may answer `agent` questions only).
pub use crate::domain::Via as Answerer;

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

/// A question as the broker sees it.
#[derive(Debug, Clone)]
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
    /// A tool call: what the server claimed about the tool, when the proxy saw it.
    pub tool_info: Option<ToolInfo>,
}

/// RFC 3339 UTC with milliseconds, the wire format of every time.
pub fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

impl Question {
    pub(super) fn from_row(row: QuestionRow) -> Result<Question, BrokerError> {
        let corrupt = |what: &str| BrokerError::Corrupt(row.id.clone(), what.to_owned());
        let id: QuestionId = row.id.parse().map_err(|_| corrupt("id"))?;
        let json =
            |text: &str, what: &str| serde_json::from_str::<Value>(text).map_err(|_| corrupt(what));
        // A stored time outside chrono's range is a damaged row, not the epoch.
        let time =
            |ms: i64, what: &str| DateTime::from_timestamp_millis(ms).ok_or_else(|| corrupt(what));
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
            created_at: time(row.created_at, "created_at")?,
            expires_at: time(row.expires_at, "expires_at")?,
            decided_at: row
                .decided_at
                .map(|ms| time(ms, "decided_at"))
                .transpose()?,
            opened_at: row.opened_at.map(|ms| time(ms, "opened_at")).transpose()?,
            revision: row.revision,
            tool_info: row
                .tool_info
                .as_deref()
                .map(|t| serde_json::from_str::<ToolInfo>(t).map_err(|_| corrupt("tool_info")))
                .transpose()?,
            id,
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
    pub fn detail(&self) -> QuestionDetail {
        QuestionDetail {
            summary: self.summary(),
            protocol_version: self.protocol_version.clone(),
            phase: self.phase,
            request: self.request.clone(),
            response: self.response.clone(),
            revision: None,
            review: None,
            tool_info: self.tool_info.clone(),
        }
    }

    /// The summary-only event for this question's current state, stamped `at`.
    pub fn event(&self, at: DateTime<Utc>) -> Event {
        Event {
            id: self.id.clone(),
            kind: self.kind,
            server: self.server.clone(),
            tool: self.tool.clone(),
            audience: self.audience,
            state: self.state,
            phase: self.phase,
            expires_at: rfc3339(self.expires_at),
            at: rfc3339(at),
        }
    }

    /// The parsed `requestedSchema` of a form question.
    ///
    /// # Errors
    /// [`BrokerError::Corrupt`] when the stored schema no longer parses.
    pub fn form_schema(&self) -> Result<FormSchema, BrokerError> {
        let schema = self.request.get("requestedSchema").unwrap_or(&Value::Null);
        FormSchema::parse(self.era, schema)
            .map_err(|e| BrokerError::Corrupt(self.id.to_string(), e))
    }
}

impl Broker {
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
        if question.state == State::Pending && question.expires_at <= self.now() {
            // Only this question, and only when its deadline passed: a read does not sweep
            // (the sweep is the timer's, `expire_due`).
            match self.expire(&question).await {
                Ok(()) | Err(BrokerError::AlreadyDecided(_)) => {}
                Err(e) => return Err(e),
            }
            return Box::pin(self.get(id)).await;
        }
        Ok(question)
    }

    /// Summaries of questions oldest first, filtered by state and audience, at most `limit`
    /// (pending ones past their deadline are expired first).
    ///
    /// # Errors
    /// [`BrokerError::Store`], [`BrokerError::Corrupt`].
    pub async fn list(
        &self,
        state: Option<State>,
        audience: Option<Audience>,
        limit: i64,
    ) -> Result<Vec<Summary>, BrokerError> {
        // Cheap when nothing is due: the due questions are a range of `questions_state_expiry`.
        self.expire_due().await?;
        let rows = self
            .db
            .run(move |conn| Ok(QuestionRow::list(conn, state, audience, limit)?))
            .await?;
        rows.into_iter()
            .map(
                |(id, kind, server, tool, audience, state, created_at, expires_at)| {
                    // The same checks as a whole row (see `Question::from_row`).
                    let corrupt = |what: &str| BrokerError::Corrupt(id.clone(), what.to_owned());
                    let time = |ms: i64, what: &str| {
                        DateTime::from_timestamp_millis(ms).ok_or_else(|| corrupt(what))
                    };
                    Ok(Summary {
                        id: id.parse().map_err(|_| corrupt("id"))?,
                        kind,
                        server,
                        tool,
                        audience,
                        state,
                        created_at: rfc3339(time(created_at, "created_at")?),
                        expires_at: rfc3339(time(expires_at, "expires_at")?),
                    })
                },
            )
            .collect()
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

    /// The oldest `limit` pending questions, whole (the queue page shows what each asks).
    ///
    /// # Errors
    /// [`BrokerError::Store`], [`BrokerError::Corrupt`].
    pub async fn pending(&self, limit: i64) -> Result<Vec<Question>, BrokerError> {
        let rows = self
            .db
            .run(move |conn| Ok(QuestionRow::oldest_pending(conn, limit)?))
            .await?;
        rows.into_iter().map(Question::from_row).collect()
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
}
