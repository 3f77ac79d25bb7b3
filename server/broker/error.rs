//! The broker's errors, mapped to HTTP once, in `web`.

use crate::db::DbError;
use crate::domain::{QuestionId, State};
use crate::protocol::FieldError;

use super::refusal::StepRefusal;

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
    /// A review step (decision, edit, rule) was refused; the question stays open.
    #[error("{0}")]
    Refused(StepRefusal),
    /// What a stored question holds no longer passes the checks it passed when stored (its
    /// URL, form schema, tool call, revision or run result); a row that does not read back at
    /// all is a [`BrokerError::Store`] error.
    #[error("stored question {0} is unreadable: {1}")]
    Corrupt(QuestionId, String),
    /// The door's last hour already holds `max_stored_bytes_per_door`; nothing was taken.
    #[error("this door's writes of the last hour hold too much (max_stored_bytes_per_door); retry after {} s", .0.retry_after.as_secs())]
    DoorFull(super::door_budget::OverBudget),
    /// The store failed.
    /// The API token over TCP already has this many servers under a pause or block it set;
    /// a person must lift some first.
    #[error(
        "the API token over TCP already has {0} servers paused or blocked; a person must lift some in the browser first"
    )]
    TooManyControls(i64),
    /// This door already has this many model runs under way; retry once one finished.
    #[error("this door already has {0} model runs under way; retry when one has finished")]
    RunsUnderWay(usize),
    #[error(transparent)]
    Store(#[from] DbError),
}

/// An answer refused as a whole (not one field): `message` for the person or the API.
pub(super) fn invalid(message: &str) -> BrokerError {
    BrokerError::InvalidAnswer(vec![FieldError::rule("", message)])
}
