//! A question's list, API and event views, and the reads of the store.

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::Value;

use super::events::Event;
use super::{Broker, BrokerError};
use crate::db::models::Listed;
use crate::domain::{Audience, QuestionId, State, Via};
use crate::protocol::elicitation::FormSchema;
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

/// A question: the store's row, with the views and checks the broker gives it here.
pub use crate::db::Question;

/// RFC 3339 UTC with milliseconds, the wire format of every time.
pub fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

impl Question {
    /// Whether `via` is the door this question was opened through, the only one that may read
    /// its response or withdraw it. A question stored before doors were recorded counts as
    /// opened through the owner-only socket, where proxies on this computer ask.
    pub fn opened_through(&self, via: Via) -> bool {
        self.door() == via
    }

    /// The door this question was opened through ([`Question::opened_through`]): what it
    /// stores, a rule's model runs among it, is counted against that door.
    pub fn door(&self) -> Via {
        self.opened_via.unwrap_or(Via::Cli)
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
            opened_via: self.opened_via,
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
        FormSchema::parse(self.era, schema).map_err(|e| BrokerError::Corrupt(self.id.clone(), e))
    }
}

impl Listed {
    /// The list entry.
    pub fn summary(self) -> Summary {
        Summary {
            id: self.id,
            kind: self.kind,
            server: self.server,
            tool: self.tool,
            audience: self.audience,
            state: self.state,
            created_at: rfc3339(self.created_at),
            expires_at: rfc3339(self.expires_at),
        }
    }
}

impl Broker {
    /// The question with this id (expiring it first if its deadline passed).
    ///
    /// # Errors
    /// [`BrokerError::NotFound`], [`BrokerError::Store`].
    pub async fn get(&self, id: &QuestionId) -> Result<Question, BrokerError> {
        let id_owned = id.clone();
        let question = self
            .db
            .run(move |conn| Ok(Question::find(conn, &id_owned)?))
            .await?
            .ok_or(BrokerError::NotFound)?;
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
    /// [`BrokerError::Store`] (also when a stored row does not read back).
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
            .run(move |conn| Ok(Question::list(conn, state, audience, limit)?))
            .await?;
        Ok(rows.into_iter().map(Listed::summary).collect())
    }

    /// How many questions are pending in all (the queue page says when it shows fewer).
    ///
    /// # Errors
    /// [`BrokerError::Store`].
    pub async fn count_pending(&self) -> Result<i64, BrokerError> {
        Ok(self
            .db
            .run(|conn| Ok(Question::count_pending(conn)?))
            .await?)
    }

    /// The oldest `limit` pending questions, whole (the queue page shows what each asks).
    ///
    /// # Errors
    /// [`BrokerError::Store`] (also when a stored row does not read back).
    pub async fn pending(&self, limit: i64) -> Result<Vec<Question>, BrokerError> {
        Ok(self
            .db
            .run(move |conn| Ok(Question::oldest_pending(conn, limit)?))
            .await?)
    }

    /// Recently decided questions, newest first.
    ///
    /// # Errors
    /// [`BrokerError::Store`] (also when a stored row does not read back).
    pub async fn history(&self, limit: i64) -> Result<Vec<Question>, BrokerError> {
        Ok(self
            .db
            .run(move |conn| Ok(Question::recent_decided(conn, limit)?))
            .await?)
    }
}
