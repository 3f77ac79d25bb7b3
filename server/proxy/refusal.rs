//! Every error the proxy itself writes to the host or to the server, with its JSON-RPC code and
//! its text, in one place: the modules that send one name the case, never the sentence.

use serde_json::Value;
use serde_json::value::RawValue;

use crate::protocol::jsonrpc::{RpcError, codes};
use crate::protocol::mrtr;
use crate::protocol::request_key::UnsafeId;
use crate::tools::Refusal;

/// An error the proxy answers a request with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum ProxyRefusal {
    /// A host message over the line limit.
    #[error("mcp-consent refused a message longer than its line limit ({limit} bytes)")]
    Overlong {
        /// The limit, in bytes.
        limit: usize,
    },
    /// A host line the proxy cannot read by exact names: never passed to the server.
    #[error(
        "mcp-consent refused this message: it cannot be read unambiguously (invalid JSON or UTF-8, a duplicate or case-variant member name, or a non-finite number), so it was not passed to the server"
    )]
    UnreadableHostMessage,
    /// A JSON-RPC batch from the host: never passed to the server.
    #[error(
        "mcp-consent does not pass JSON-RPC batches (MCP removed them in 2025-06-18); send each message on its own line"
    )]
    Batch,
    /// A host request under the id of a request still in flight.
    #[error(
        "mcp-consent refused this request: its id is the id of a request still in flight (MCP request ids must not be reused)"
    )]
    IdInFlight,
    /// A request under an id some server may read as another id (to the host for its request,
    /// to the server for its own): never passed on.
    #[error(
        "mcp-consent refused this request: its id is {0}. MCP request ids are strings or integers, and mcp-consent passes only ids every server reads as the same one (an integer from -(2^53 - 1) to 2^53 - 1 written without fraction or exponent, or a string of valid Unicode), so it was not passed on"
    )]
    UnsafeId(UnsafeId),
    /// A host retry naming a round whose answers are used or expired.
    #[error(
        "mcp-consent no longer holds the person's answers for this retry (they were used or expired); send the request again without requestState"
    )]
    NoLongerHeld,
    /// A host retry that is not the request the person answered for.
    #[error(
        "mcp-consent refused this retry: it is not the request the person answered for, so their answers were dropped; send the request again"
    )]
    NotTheSameRequest,
    /// A host retry whose `inputResponses` cannot be rewritten.
    #[error("mcp-consent could not read this request's inputResponses")]
    UnreadableRetry,
    /// The server's response to a host request could not be judged and was dropped.
    #[error("mcp-consent dropped the server's response: it could not be read safely")]
    DroppedResponse,
    /// A server message that could not be judged (to the server, for its request).
    #[error("mcp-consent could not read this message, so it was not passed to the client")]
    UnreadableMessage,
    /// A server request readable as an envelope but not as a whole.
    #[error("mcp-consent could not read this request (nested too deeply)")]
    NestedTooDeeply,
    /// The server kept asking for input.
    #[error(
        "the server asked for input {0} times for one request; mcp-consent stopped asking the person"
    )]
    TooManyRounds(u32),
    /// An `InputRequiredResult` that breaks the rules.
    #[error("mcp-consent refused the server's request for input: {0}")]
    BadInputRequest(String),
    /// An `InputRequiredResult` with more entries than a person is asked about.
    #[error(
        "the server asked for {asked} inputs at once; mcp-consent asks the person about at most {most}"
    )]
    TooManyEntries {
        /// How many entries it asked.
        asked: usize,
        /// The most asked at once.
        most: usize,
    },
    /// The answered request could not be re-sent.
    #[error("mcp-consent could not retry the request: {0}")]
    CannotRetry(String),
    /// The entries for the host could not be handed over.
    #[error("mcp-consent could not pass on the server's request for input")]
    CannotHandOver,
    /// The request holds a value that does not read exactly (a lone surrogate escape, a
    /// number out of range), so its retry could never be bound to the person's answers.
    #[error(
        "mcp-consent cannot hand this request's round to the host: the request holds a value that does not read exactly (a lone surrogate escape such as \\ud83d, or a number out of range), so its retry could never be matched to the person's answers; send it without such a value"
    )]
    UnbindableRound,
    /// The server's final response could not be put under the host's id.
    #[error("mcp-consent could not read the server's response")]
    UnreadableResponse,
    /// An accepted tool call could not reach the server.
    #[error("mcp-consent: the server is gone")]
    ServerGone,
}

impl ProxyRefusal {
    /// The JSON-RPC error code.
    pub(super) fn code(&self) -> i64 {
        match self {
            ProxyRefusal::Overlong { .. }
            | ProxyRefusal::IdInFlight
            | ProxyRefusal::UnsafeId(_)
            | ProxyRefusal::UnreadableHostMessage
            | ProxyRefusal::Batch
            | ProxyRefusal::UnreadableMessage => codes::INVALID_REQUEST,
            ProxyRefusal::NestedTooDeeply => codes::INVALID_PARAMS,
            ProxyRefusal::NoLongerHeld
            | ProxyRefusal::NotTheSameRequest
            | ProxyRefusal::UnreadableRetry
            | ProxyRefusal::DroppedResponse
            | ProxyRefusal::TooManyRounds(_)
            | ProxyRefusal::BadInputRequest(_)
            | ProxyRefusal::TooManyEntries { .. }
            | ProxyRefusal::CannotRetry(_)
            | ProxyRefusal::CannotHandOver
            | ProxyRefusal::UnbindableRound
            | ProxyRefusal::UnreadableResponse
            | ProxyRefusal::ServerGone => codes::INTERNAL_ERROR,
        }
    }

    /// The JSON-RPC error object.
    pub(super) fn error(&self) -> Value {
        mrtr::error_object(self.code(), &self.to_string())
    }

    /// The error response line under `id`.
    pub(super) fn line(&self, id: &RawValue) -> Vec<u8> {
        mrtr::error_line(id, &self.error())
    }
}

/// The start of the error message when a question cannot be opened (the service unreachable,
/// or refusing): callers that must tell this apart from an answer read it.
pub(super) const OPEN_FAILED: &str = "mcp-consent could not open a question for this request";
/// The start of the error message of a question that expired (the service's own expiry
/// writes the same words).
pub(super) const EXPIRED: &str = "Request expired";

/// Why a question ended without the person's answer; the asker gets it as a JSON-RPC error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum AskFailure {
    /// The service could not be asked, or refused.
    #[error("{}: {}", OPEN_FAILED, .0)]
    CannotOpen(String),
    /// The request is larger than the service takes.
    #[error("request too large")]
    TooLarge,
    /// The question is gone from the service.
    #[error("question {0} vanished from the mcp-consent service")]
    Vanished(String),
    /// The deadline passed while the service could not be reached.
    #[error(
        "{}: no answer before the deadline, and the mcp-consent service is unreachable ({})",
        EXPIRED,
        .0
    )]
    Unreachable(String),
}

impl AskFailure {
    /// The JSON-RPC error.
    pub(super) fn error(&self) -> RpcError {
        match self {
            AskFailure::TooLarge => RpcError::invalid_params(self.to_string()),
            _ => RpcError::internal(self.to_string()),
        }
    }
}

/// Why the proxy fails a host's `tools/call` itself (the host gets an `isError` result).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(super) enum CallFailure {
    /// The tool's name cannot be read unambiguously, so the server might read another.
    #[error("its tool name cannot be read unambiguously")]
    UnreadableName,
    /// The call is readable by its names but not as one exact JSON value (a number out of
    /// range or too long, a duplicated member), so it cannot be shown to the person as it is.
    #[error(
        "its arguments cannot be read as one exact value to show (a number out of range or too long to hold exactly, or a member given twice)"
    )]
    UnreadableCall,
    /// The person's answer is for another call than the one held.
    #[error("the answer does not match the call the person saw")]
    NotTheCallSeen,
    /// The service's answer cannot be read.
    #[error("the consent service gave an answer mcp-consent cannot read")]
    UnreadableAnswer,
}

impl CallFailure {
    /// The refusal the host is told.
    pub(super) fn refusal(self) -> Refusal {
        Refusal::Failed(self.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_line_carries_its_code_and_text() {
        let id = RawValue::from_string("7".to_owned()).unwrap();
        let line: Value = serde_json::from_slice(&ProxyRefusal::IdInFlight.line(&id)).unwrap();
        assert_eq!(line["id"], 7);
        assert_eq!(line["error"]["code"], codes::INVALID_REQUEST);
        assert!(
            line["error"]["message"]
                .as_str()
                .unwrap()
                .contains("request ids must not be reused")
        );
    }
}
