//! The MCP wire model and the trust boundary: which requests may open a question and which
//! answers may become responses. Pure functions, no I/O, nothing else of ours imported.

pub mod elicitation;
pub mod envelope;
pub mod era;
pub mod jsonrpc;
pub mod members;
pub mod mrtr;
pub mod sampling;
pub mod url_safety;

use serde::Serialize;

/// One problem with a proposed answer, as the API's 422 body reports it
/// (`{"field": "…", "message": "…"}`; `field` is empty when it concerns the whole answer).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldError {
    /// The answer field concerned (a `requestedSchema` property, or `role`, `model`, …).
    pub field: String,
    /// What is wrong, in words for the person answering.
    pub message: String,
}

impl FieldError {
    /// A problem with one field.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }

    /// A problem with the answer as a whole.
    pub fn whole(message: impl Into<String>) -> Self {
        Self::new("", message)
    }
}

/// Reading `ClientCapabilities` as forwarded to the server (MCP 2025-11-25 `schema.ts`
/// `ClientCapabilities`).
pub mod capabilities {
    use serde_json::Value;

    /// `sampling.tools` was declared (2025-11-25 SA4).
    pub fn sampling_tools(caps: &Value) -> bool {
        caps.pointer("/sampling/tools")
            .is_some_and(Value::is_object)
    }

    /// `sampling.context` was declared (2025-11-25 SA6).
    pub fn sampling_context(caps: &Value) -> bool {
        caps.pointer("/sampling/context")
            .is_some_and(Value::is_object)
    }

    /// `sampling` was declared at all.
    pub fn sampling(caps: &Value) -> bool {
        caps.get("sampling").is_some_and(Value::is_object)
    }

    /// Whether elicitation in `mode` (`form` or `url`) was declared. An empty `elicitation`
    /// object means form only (2025-11-25 `client/elicitation.mdx` §Capabilities, EC2).
    pub fn elicitation_mode(caps: &Value, mode: &str) -> bool {
        let Some(elicitation) = caps.get("elicitation").and_then(Value::as_object) else {
            return false;
        };
        let declares_modes = elicitation.contains_key("form") || elicitation.contains_key("url");
        if declares_modes {
            elicitation.get(mode).is_some_and(Value::is_object)
        } else {
            mode == "form"
        }
    }
}
