//! JSON-RPC 2.0 envelope as MCP uses it: request ids, responses, and the error codes the
//! service emits. Source: MCP 2025-06-18 and 2025-11-25 `basic/index.mdx` §Requests,
//! §Responses; `schema.ts` error-code constants.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The error codes mcp-consent puts on the wire.
pub mod codes {
    /// The person declined or cancelled a sampling request (MCP 2025-06-18 and 2025-11-25
    /// `client/sampling.mdx` §Error Handling: "User rejected sampling request").
    pub const USER_REJECTED: i64 = -1;
    /// JSON-RPC Invalid Request: the envelope itself is wrong (e.g. a `null` id, MCP G1).
    pub const INVALID_REQUEST: i64 = -32600;
    /// JSON-RPC Method not found.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// JSON-RPC Invalid params: the request breaks an MCP rule; the message names the rule.
    pub const INVALID_PARAMS: i64 = -32602;
    /// JSON-RPC Internal error: the question expired, or it could not be opened at all.
    pub const INTERNAL_ERROR: i64 = -32603;
}

/// The message of the `-1` error, verbatim from the spec.
pub const USER_REJECTED_MESSAGE: &str = "User rejected sampling request";

/// Which rule a refused request broke, for counting (never on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Violation {
    /// The request's shape or content breaks the protocol.
    #[default]
    Shape,
    /// The request needs a capability the client did not declare.
    Capability,
    /// A URL whose scheme is not https/http.
    Scheme,
}

/// A JSON-RPC error object `{code, message, data?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RpcError {
    /// Integer code (MCP G2: "Error codes MUST be integers").
    pub code: i64,
    /// Human-readable message; for `-32602` it names the violated rule.
    pub message: String,
    /// Optional structured detail (e.g. `{"action":"decline"}` for `-1`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// Which rule was broken (internal; not serialized).
    #[serde(skip)]
    pub violation: Violation,
}

impl RpcError {
    /// Marks which rule was broken (for metrics).
    pub fn because(mut self, violation: Violation) -> Self {
        self.violation = violation;
        self
    }

    /// `-32602` with the given message.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self {
            code: codes::INVALID_PARAMS,
            message: message.into(),
            data: None,
            violation: Violation::Shape,
        }
    }

    /// `-32600` with the given message.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self {
            code: codes::INVALID_REQUEST,
            message: message.into(),
            data: None,
            violation: Violation::Shape,
        }
    }

    /// `-32601` for a method the service does not hold as a question.
    pub fn method_not_found(method: &str) -> Self {
        Self {
            code: codes::METHOD_NOT_FOUND,
            message: format!("Method not found: {method}"),
            data: None,
            violation: Violation::Shape,
        }
    }

    /// `-32603` with the given message.
    pub fn internal(message: impl Into<String>) -> Self {
        Self {
            code: codes::INTERNAL_ERROR,
            message: message.into(),
            data: None,
            violation: Violation::Shape,
        }
    }

    /// `-1` "User rejected sampling request", with the person's action (`decline` or `cancel`)
    /// in `data.action`.
    pub fn user_rejected(action: &str) -> Self {
        Self {
            code: codes::USER_REJECTED,
            message: USER_REJECTED_MESSAGE.to_owned(),
            data: Some(json!({ "action": action })),
            violation: Violation::Shape,
        }
    }
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

/// True when `id` is a legal MCP request id: a string or an integer, never `null`
/// (MCP 2025-06-18+ `basic/index.mdx` §Requests, rule G1).
pub fn is_valid_id(id: &Value) -> bool {
    match id {
        Value::String(_) => true,
        Value::Number(n) => n.is_i64() || n.is_u64(),
        _ => false,
    }
}

/// A success response `{"jsonrpc":"2.0","id":…,"result":…}`.
pub fn result_response(id: &Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// An error response `{"jsonrpc":"2.0","id":…,"error":…}`; `id` is omitted when it could not
/// be read (MCP 2025-11-25 §Responses).
pub fn error_response(id: Option<&Value>, error: &RpcError) -> Value {
    match id {
        Some(id) => json!({ "jsonrpc": "2.0", "id": id, "error": error }),
        None => json!({ "jsonrpc": "2.0", "error": error }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_must_be_string_or_integer() {
        assert!(is_valid_id(&json!(7)));
        assert!(is_valid_id(&json!("a")));
        assert!(!is_valid_id(&json!(null)));
        assert!(!is_valid_id(&json!(1.5)));
        assert!(!is_valid_id(&json!({})));
    }

    #[test]
    fn user_rejected_has_spec_code_and_message() {
        let e = error_response(Some(&json!(1)), &RpcError::user_rejected("decline"));
        assert_eq!(e["error"]["code"], -1);
        assert_eq!(e["error"]["message"], "User rejected sampling request");
        assert_eq!(e["error"]["data"]["action"], "decline");
    }
}
