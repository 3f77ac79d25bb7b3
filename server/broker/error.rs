//! The broker's errors, mapped to HTTP once, in `web`.

use crate::db::DbError;
use crate::domain::State;
use crate::protocol::FieldError;

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
    /// A decision or edit names a revision or run that is no longer current; the question
    /// stays open for a decision on what it shows now.
    #[error("{0}")]
    Outdated(String),
    /// The approval id was already used for another decision.
    #[error("{0}")]
    Conflict(String),
    /// No configured model may serve the request and none was picked.
    #[error("{0}")]
    NoRoute(String),
    /// A stored row could not be read back.
    #[error("stored question {0} is unreadable: {1}")]
    Corrupt(String, String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] DbError),
}

impl BrokerError {
    /// The problems to show next to the question when it stays open (an invalid answer, an
    /// outdated or conflicting decision, no route): `None` for every other error.
    pub fn field_errors(&self) -> Option<Vec<FieldError>> {
        match self {
            BrokerError::InvalidAnswer(errors) => Some(errors.clone()),
            BrokerError::Outdated(m) | BrokerError::Conflict(m) | BrokerError::NoRoute(m) => {
                Some(vec![FieldError::whole(m.clone())])
            }
            _ => None,
        }
    }
}
