//! Summary-only events published on every state change. The [`Event`] type has no field that
//! could hold a message, schema, URL or answer, so nothing sensitive can leak through it.

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

use crate::domain::{Audience, Kind, Phase, QuestionId, State};

/// One state change of one question (wire JSON is camelCase).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// Question id.
    pub id: QuestionId,
    /// What the question asks for.
    pub kind: Kind,
    /// The asking server's name.
    pub server: String,
    /// The host's tool call that led to it, when known.
    pub tool: Option<String>,
    /// Who may answer.
    pub audience: Audience,
    /// The new state.
    pub state: State,
    /// Sampling phase while pending.
    pub phase: Option<Phase>,
    /// Deadline, RFC 3339 UTC.
    pub expires_at: String,
    /// When the change happened, RFC 3339 UTC.
    pub at: String,
}

/// A broadcast bus of [`Event`]s; slow subscribers lose the oldest events, never block the
/// broker.
#[derive(Debug, Clone)]
pub struct EventBus {
    sender: broadcast::Sender<Event>,
}

impl Default for EventBus {
    fn default() -> Self {
        EventBus {
            sender: broadcast::channel(256).0,
        }
    }
}

impl EventBus {
    /// Publishes an event; having no subscriber is fine.
    pub fn publish(&self, event: Event) {
        let _ = self.sender.send(event);
    }

    /// A new subscription.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.sender.subscribe()
    }
}
