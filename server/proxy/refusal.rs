//! Every error the proxy itself writes to the host or to the server, with its JSON-RPC code and
//! its text, in one place: the modules that send one name the case, never the sentence.

use serde_json::Value;
use serde_json::value::RawValue;

use crate::protocol::jsonrpc::codes;
use crate::protocol::mrtr;

/// An error the proxy answers a request with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum ProxyRefusal {
    /// A host message over the line limit.
    #[error("mcp-consent refused a message longer than its line limit ({limit} bytes)")]
    Overlong {
        /// The limit, in bytes.
        limit: usize,
    },
    /// A host request under the id of a request still in flight.
    #[error(
        "mcp-consent refused this request: its id is the id of a request still in flight (MCP request ids must not be reused)"
    )]
    IdInFlight,
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
