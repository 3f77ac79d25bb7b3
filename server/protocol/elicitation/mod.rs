//! `elicitation/create`: which requests may open a question (mode against capabilities, the
//! form subset of `requestedSchema`) and which `ElicitResult`s may be sent back (content valid
//! against `requestedSchema`, defaults applied to omitted fields). Pure functions, no I/O.
//!
//! Rules and sources: `docs/protocol.md` §3 (MCP 2025-06-18 and 2025-11-25
//! `client/elicitation.mdx`; `schema.ts` `ElicitRequest`, `PrimitiveSchemaDefinition`,
//! `ElicitResult`).

//!
//! Files: this one (requests and results), [`schema`] (parsing the form subset of
//! `requestedSchema`), [`field`] (its vocabulary), [`check`] (one value against its field).

mod check;
mod field;
mod schema;

use serde_json::{Map, Value, json};

pub(crate) use check::json_schema_errors;
pub use field::{Choice, Field, FieldKind, TextFormat};
pub use schema::FormSchema;

use super::era::Era;
use super::jsonrpc::{RpcError, Violation};
use super::{FieldError, Problem, capabilities, url_safety};

/// The longest `elicitationId` a URL elicitation may carry (the spec bounds none; an opaque
/// id is a few dozen bytes, and a longer one would be stored with the question and watched by
/// the proxy until it is reported complete).
pub const MAX_ELICITATION_ID_BYTES: usize = 1024;

/// The two elicitation modes (2025-11-25 §Elicitation Requests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// In-band form described by `requestedSchema`.
    Form,
    /// Out-of-band URL the person opens (2025-11-25 only as a JSON-RPC request).
    Url,
}

/// An `elicitation/create` request that passed validation.
#[derive(Debug, Clone)]
pub enum Request {
    /// Form mode with its parsed schema.
    Form {
        /// `message` shown to the person.
        message: String,
        /// The parsed `requestedSchema`.
        schema: FormSchema,
    },
    /// URL mode.
    Url {
        /// `message` shown to the person.
        message: String,
        /// `url` exactly as sent.
        url: String,
        /// `elicitationId` (2025-11-25: required; opaque).
        elicitation_id: Option<String>,
    },
}

impl Request {
    /// The mode of this request.
    pub fn mode(&self) -> Mode {
        match self {
            Request::Form { .. } => Mode::Form,
            Request::Url { .. } => Mode::Url,
        }
    }
}

/// Validates `elicitation/create` params against the era and the forwarded capabilities.
///
/// A missing `mode` means form (2025-11-25 EC7). A mode the client did not declare is refused
/// (EC5). Form mode needs `requestedSchema` within the form subset (§3.2); URL mode needs `url`
/// and, in 2025-11-25, `elicitationId` (EU1).
///
/// # Errors
/// A `-32602` [`RpcError`] naming the problem (for schemas, the property).
pub fn validate_request(
    era: Era,
    client_capabilities: &Value,
    params: &Value,
) -> Result<Request, RpcError> {
    let params = params
        .as_object()
        .ok_or_else(|| RpcError::invalid_params("params must be an object"))?;
    let message = match params.get("message") {
        Some(Value::String(m)) => m.clone(),
        Some(_) => return Err(RpcError::invalid_params("message must be a string")),
        None => return Err(RpcError::invalid_params("message is required")),
    };
    let mode = requested_mode(era, params)?;
    check_mode_declared(era, client_capabilities, mode)?;
    match mode {
        Mode::Form => form_request(era, params, message),
        Mode::Url => url_request(era, params, message),
    }
}

impl Mode {
    /// The mode as `mode` and the client's capabilities spell it.
    fn wire_name(self) -> &'static str {
        match self {
            Mode::Form => "form",
            Mode::Url => "url",
        }
    }
}

/// The request's `mode` (form when absent), as far as the era has it.
fn requested_mode(era: Era, params: &Map<String, Value>) -> Result<Mode, RpcError> {
    match params.get("mode") {
        None => Ok(Mode::Form),
        Some(Value::String(m)) if m == "form" => Ok(Mode::Form),
        Some(Value::String(m)) if m == "url" && era.has_elicitation_modes() => Ok(Mode::Url),
        Some(Value::String(m)) => Err(RpcError::invalid_params(format!(
            "elicitation mode {m:?} does not exist in {era}"
        ))),
        Some(_) => Err(RpcError::invalid_params("mode must be a string")),
    }
}

/// The client declared elicitation in this mode (before modes existed: elicitation at all).
fn check_mode_declared(era: Era, client_capabilities: &Value, mode: Mode) -> Result<(), RpcError> {
    let declared = if era.has_elicitation_modes() {
        capabilities::elicitation_mode(client_capabilities, mode.wire_name())
    } else {
        client_capabilities
            .get("elicitation")
            .is_some_and(Value::is_object)
    };
    if declared {
        return Ok(());
    }
    Err(RpcError::invalid_params(format!(
        "elicitation mode {} was not declared by the client",
        mode.wire_name()
    ))
    .because(Violation::Capability))
}

/// A form-mode request: its `requestedSchema` parsed.
fn form_request(
    era: Era,
    params: &Map<String, Value>,
    message: String,
) -> Result<Request, RpcError> {
    let schema = params
        .get("requestedSchema")
        .ok_or_else(|| RpcError::invalid_params("requestedSchema is required in form mode"))?;
    let schema = FormSchema::parse(era, schema).map_err(RpcError::invalid_params)?;
    Ok(Request::Form { message, schema })
}

/// A URL-mode request: a URL that may be offered, and the `elicitationId` its era asks for.
fn url_request(
    era: Era,
    params: &Map<String, Value>,
    message: String,
) -> Result<Request, RpcError> {
    let url = match params.get("url") {
        Some(Value::String(u)) => u.clone(),
        Some(_) => return Err(RpcError::invalid_params("url must be a string")),
        None => return Err(RpcError::invalid_params("url is required in url mode")),
    };
    // Only https/http URLs are ever offered to the person; anything else (javascript:,
    // file:, data:, …) is refused before a question opens.
    url_safety::review(&url).map_err(|e| {
        let violation = match e {
            url_safety::UrlError::SchemeNotAllowed(_) => Violation::Scheme,
            _ => Violation::Shape,
        };
        RpcError::invalid_params(e.to_string()).because(violation)
    })?;
    let elicitation_id = match params.get("elicitationId") {
        // 2026-07-28 removed `elicitationId` and the completion notification (EU8):
        // the outcome arrives by the retried request, so an id is not kept.
        Some(_) if era >= Era::V2026_07_28 => None,
        Some(Value::String(id)) if id.len() > MAX_ELICITATION_ID_BYTES => {
            return Err(RpcError::invalid_params(format!(
                "elicitationId is longer than {MAX_ELICITATION_ID_BYTES} bytes"
            )));
        }
        Some(Value::String(id)) => Some(id.clone()),
        Some(_) => return Err(RpcError::invalid_params("elicitationId must be a string")),
        None if era == Era::V2025_11_25 => {
            return Err(RpcError::invalid_params(
                "elicitationId is required in url mode",
            ));
        }
        None => None,
    };
    Ok(Request::Url {
        message,
        url,
        elicitation_id,
    })
}

/// Builds the `ElicitResult` for an accepted form: defaults applied, then validated.
///
/// # Errors
/// As [`FormSchema::validate_content`].
pub fn accept_form(schema: &FormSchema, content: &Value) -> Result<Value, Vec<FieldError>> {
    let mut content = content
        .as_object()
        .cloned()
        .ok_or_else(|| vec![FieldError::whole(Problem::NotAnObject)])?;
    schema.apply_defaults(&mut content);
    let content = Value::Object(content);
    schema.validate_content(&content)?;
    Ok(json!({ "action": "accept", "content": content }))
}

/// The `ElicitResult` for `decline` or `cancel`: no content (2025-11-25 §Response Actions).
pub fn refusal(action: &str) -> Value {
    json!({ "action": action })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tv_e02() -> Value {
        json!({"type":"object","properties":{"email":{"type":"string","format":"email","default":"a@b.co"},"age":{"type":"integer","minimum":18,"maximum":130,"default":30},"news":{"type":"boolean","default":false},"color":{"type":"string","oneOf":[{"const":"#FF0000","title":"Red"},{"const":"#0000FF","title":"Blue"}],"default":"#FF0000"},"tags":{"type":"array","minItems":1,"maxItems":2,"items":{"type":"string","enum":["a","b","c"]},"default":["a"]}},"required":["email"]})
    }

    #[test]
    fn every_primitive_type_parses_in_2025_11_25_but_not_2025_06_18() {
        let s = FormSchema::parse(Era::V2025_11_25, &tv_e02()).unwrap();
        assert_eq!(s.fields.len(), 5);
        assert!(s.field("email").unwrap().required);
        let err = FormSchema::parse(Era::V2025_06_18, &tv_e02()).unwrap_err();
        assert!(err.contains("color"), "{err}");
    }

    #[test]
    fn defaults_fill_omitted_fields() {
        let s = FormSchema::parse(Era::V2025_11_25, &tv_e02()).unwrap();
        let r = accept_form(&s, &json!({"age": 40})).unwrap();
        assert_eq!(r["content"]["email"], "a@b.co");
        assert_eq!(r["content"]["age"], 40);
        assert_eq!(r["content"]["tags"], json!(["a"]));
    }

    #[test]
    fn nested_object_is_refused_naming_the_property() {
        let e = FormSchema::parse(
            Era::V2025_11_25,
            &json!({"type":"object","properties":{"addr":{"type":"object","properties":{"city":{"type":"string"}}}}}),
        )
        .unwrap_err();
        assert!(e.contains("\"addr\""), "{e}");
    }
}
