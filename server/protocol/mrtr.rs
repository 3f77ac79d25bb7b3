//! 2026-07-28 multi round-trip requests (MRTR) and the 2025-11-25 URL-elicitation-required
//! error, as pure rewrites of message text.
//!
//! Under 2026-07-28 a server asks for sampling or elicitation by answering a host's
//! `tools/call`, `prompts/get` or `resources/read` with an `InputRequiredResult`
//! (`resultType: "input_required"`, an `inputRequests` map, an optional opaque
//! `requestState`); the client re-sends the original request under a new id with
//! `inputResponses` and the `requestState` echoed exactly (docs/protocol.md G16, G17, SA20, EU8,
//! TV-S22, TV-E24). Every capability travels in each request's `_meta`.
//!
//! The rewrites here keep every member they do not change as its exact original text
//! (numbers, escapes, key order), so what the host or the server wrote is what the other side
//! reads; only the whitespace between top-level members may change.

use indexmap::IndexMap;

use super::members::{self, MembersError};
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// `_meta` key of a 2026-07-28 request's protocol version (docs/protocol.md G16).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of a 2026-07-28 request's client capabilities (docs/protocol.md G16).
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `resultType` of an `InputRequiredResult`.
pub const INPUT_REQUIRED: &str = "input_required";
/// The methods whose result may be an `InputRequiredResult` (docs/protocol.md G17).
pub const INPUT_REQUIRED_METHODS: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];
/// `URLElicitationRequiredError` (2025-11-25 only; docs/protocol.md EU7, G7).
pub const URL_ELICITATION_REQUIRED: i64 = -32042;
/// The methods whose input requests the proxy answers through a question.
pub const ASKED_METHODS: [&str; 2] = ["sampling/createMessage", "elicitation/create"];

/// Members of a JSON object, each kept as its original text.
pub type Members = IndexMap<String, Box<RawValue>>;

/// A rewrite could not be made because the message does not have the expected shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MrtrError {
    /// The text is not a JSON object.
    #[error("{0} is not a JSON object")]
    NotAnObject(&'static str),
    /// An `InputRequiredResult` member is malformed.
    #[error("malformed InputRequiredResult: {0}")]
    Malformed(String),
}

/// One entry of `inputRequests`.
#[derive(Debug, Clone, PartialEq)]
pub struct InputRequest {
    /// The entry's key, echoed in `inputResponses`.
    pub key: String,
    /// `method` (e.g. `sampling/createMessage`, `elicitation/create`, `roots/list`).
    pub method: String,
    /// `params` as a value (`null` when absent).
    pub params: Value,
}

impl InputRequest {
    /// Whether mcp-consent asks the person about this entry (sampling or elicitation).
    pub fn is_asked(&self) -> bool {
        ASKED_METHODS.contains(&self.method.as_str())
    }
}

/// A parsed `InputRequiredResult`.
#[derive(Debug, Clone)]
pub struct InputRequired {
    /// The entries in the order the server listed them.
    pub requests: Vec<InputRequest>,
    /// `requestState`, exactly as sent (echoed back byte for byte, never inspected).
    pub request_state: Option<Box<RawValue>>,
}

fn members(text: &str, what: &'static str) -> Result<Members, MrtrError> {
    serde_json::from_str(text).map_err(|_| MrtrError::NotAnObject(what))
}

fn raw(value: &impl serde::Serialize) -> Box<RawValue> {
    // Serialising a `Value` or a map of raw values cannot fail.
    serde_json::value::to_raw_value(value).unwrap_or_else(|_| RawValue::NULL.to_owned())
}

/// Whether a `result` (raw text) asks for input: `resultType` is `input_required`, or it carries
/// `inputRequests` or `requestState` at all, or a member whose name folds to one of those (see
/// [`crate::protocol::members::has_folded_member`]). Deliberately broader than the schema: a
/// host could act on any of them whatever the `resultType` says (the Python SDK 2.3 retries on
/// a bare `requestState`).
pub fn is_input_required(result: &str) -> bool {
    head_asks_for_input(
        members::Members::read(result, &RESULT_MEMBERS)
            .as_ref()
            .map_err(|e| *e),
    )
}

/// [`is_input_required`] on a result's head already read by [`RESULT_MEMBERS`] (the envelope
/// reads it in the same pass as the line): `Ok` with the head's members, or why the head could
/// not be read by exact names (a duplicated or folded member asks; not an object does not).
/// MRTR, docs/protocol.md G17 (d:2026-07-28/basic/patterns/mrtr.mdx).
pub fn head_asks_for_input(head: Result<&members::Members<'_, 3>, MembersError>) -> bool {
    match head {
        Ok(head) => {
            // A `resultType` that is not a string cannot be read unambiguously: asking.
            head.get(0).is_some_and(|t| {
                serde_json::from_str::<String>(t).map_or(true, |t| t == INPUT_REQUIRED)
            }) || head.get(1).is_some()
                || head.get(2).is_some()
        }
        // A result that is not an object says nothing; one whose head cannot be read by exact
        // names (a duplicated or folded member) is treated as asking: the caller then refuses
        // to hand it over as it is.
        Err(MembersError::NotAnObject) => false,
        Err(MembersError::Duplicated | MembersError::FoldedTwin) => true,
    }
}

/// The members of an `InputRequiredResult` a host acts on, in this order (indexes 0–2 of a
/// head read with them): docs/protocol.md G17 (d:2026-07-28/basic/patterns/mrtr.mdx).
pub const RESULT_MEMBERS: [&str; 3] = ["resultType", "inputRequests", "requestState"];

/// Parses an `InputRequiredResult` (docs/protocol.md G17), as strictly as the proxy reads
/// envelopes: a result, `inputRequests` map, entry or entry `params` whose member names some
/// decoder would read differently (a duplicated name; in an entry or its params also a name
/// that folds to another, `Method` beside `method`) is refused, since a first-wins or
/// case-folding host could read a sampling request where the proxy read something else.
///
/// # Errors
/// [`MrtrError`] when `inputRequests` is missing, not a map of `{method, params}` objects, or
/// read ambiguously.
pub fn parse_input_required(result: &RawValue) -> Result<InputRequired, MrtrError> {
    let ambiguous = |what: String| MrtrError::Malformed(format!("{what} names a member twice"));
    if members::Members::read(result.get(), &RESULT_MEMBERS).is_err() {
        return Err(ambiguous("the result".into()));
    }
    let top = members(result.get(), "the result")?;
    let requests_raw = top
        .get("inputRequests")
        .ok_or_else(|| MrtrError::Malformed("inputRequests is missing".into()))?;
    if members::has_twin_names(requests_raw.get(), false) {
        return Err(ambiguous("inputRequests".into()));
    }
    let entries: Members = serde_json::from_str(requests_raw.get())
        .map_err(|_| MrtrError::Malformed("inputRequests must be an object".into()))?;
    if entries.is_empty() {
        return Err(MrtrError::Malformed("inputRequests is empty".into()));
    }
    let mut requests = Vec::with_capacity(entries.len());
    for (key, entry) in entries {
        let head =
            members::Members::read(entry.get(), &["method", "params"]).map_err(|e| match e {
                MembersError::NotAnObject => {
                    MrtrError::Malformed(format!("inputRequests.{key} is not an object"))
                }
                MembersError::Duplicated | MembersError::FoldedTwin => {
                    ambiguous(format!("inputRequests.{key}"))
                }
            })?;
        let method = head
            .get(0)
            .and_then(|m| serde_json::from_str::<String>(m).ok())
            .ok_or_else(|| MrtrError::Malformed(format!("inputRequests.{key} has no method")))?;
        let params = match head.get(1) {
            Some(p) if members::has_twin_names(p, true) => {
                return Err(ambiguous(format!("inputRequests.{key}.params")));
            }
            Some(p) => serde_json::from_str(p).map_err(|_| {
                MrtrError::Malformed(format!("inputRequests.{key}.params cannot be read"))
            })?,
            None => Value::Null,
        };
        requests.push(InputRequest {
            key,
            method,
            params,
        });
    }
    Ok(InputRequired {
        requests,
        request_state: top.get("requestState").cloned(),
    })
}

/// The `InputRequiredResult` to hand the host when some entries are for it (e.g. `roots/list`):
/// only the entries named in `keep` remain; every other member is kept as it was.
///
/// # Errors
/// [`MrtrError::NotAnObject`] when the result or its `inputRequests` is not an object.
pub fn keep_only(result: &RawValue, keep: &[&str]) -> Result<Box<RawValue>, MrtrError> {
    let mut top = members(result.get(), "the result")?;
    let requests = top
        .get("inputRequests")
        .ok_or(MrtrError::NotAnObject("inputRequests"))?;
    let mut entries = members(requests.get(), "inputRequests")?;
    entries.retain(|k, _| keep.contains(&k.as_str()));
    top.insert("inputRequests".into(), raw(&entries));
    Ok(raw(&top))
}

/// `params.inputResponses` of a request line, as raw members (empty when absent).
pub fn input_responses(line: &[u8]) -> Members {
    let Ok(top) = serde_json::from_slice::<Members>(line) else {
        return Members::new();
    };
    top.get("params")
        .and_then(|p| serde_json::from_str::<Members>(p.get()).ok())
        .and_then(|p| p.get("inputResponses").cloned())
        .and_then(|r| serde_json::from_str::<Members>(r.get()).ok())
        .unwrap_or_default()
}

/// `params` of a request line, as its exact text.
pub fn params_of(line: &[u8]) -> Option<String> {
    let top = serde_json::from_slice::<Members>(line).ok()?;
    top.get("params").map(|p| p.get().to_owned())
}

/// `params.requestState` of a request line, as its exact text.
pub fn request_state(line: &[u8]) -> Option<String> {
    let top = serde_json::from_slice::<Members>(line).ok()?;
    let params = serde_json::from_str::<Members>(top.get("params")?.get()).ok()?;
    params.get("requestState").map(|r| r.get().to_owned())
}

/// The retry of `original` (a host's request line): under `id`, with `inputResponses` set to
/// `responses` and `requestState` set to `request_state` exactly (removed when `None`); every
/// other member keeps its text (docs/protocol.md G17: "echo back the exact value", "the
/// JSON-RPC id MUST be different"). Returns one line ending in `\n`.
///
/// # Errors
/// [`MrtrError::NotAnObject`] when `original` or its `params` is not an object.
pub fn retry(
    original: &[u8],
    id: &Value,
    responses: &Members,
    request_state: Option<&RawValue>,
) -> Result<Vec<u8>, MrtrError> {
    let mut top: Members =
        serde_json::from_slice(original).map_err(|_| MrtrError::NotAnObject("the request"))?;
    let mut params = match top.get("params") {
        Some(p) => members(p.get(), "params")?,
        None => Members::new(),
    };
    params.insert("inputResponses".into(), raw(responses));
    match request_state {
        Some(state) => {
            params.insert("requestState".into(), state.to_owned());
        }
        None => {
            params.shift_remove("requestState");
        }
    }
    top.insert("id".into(), raw(id));
    top.insert("params".into(), raw(&params));
    let mut line = serde_json::to_vec(&top).map_err(|_| MrtrError::NotAnObject("the request"))?;
    line.push(b'\n');
    Ok(line)
}

/// A message line with its `id` replaced by `id` (raw text); every other member keeps its text.
/// Returns one line ending in `\n`.
///
/// # Errors
/// [`MrtrError::NotAnObject`] when the line is not an object.
pub fn with_id(line: &[u8], id: &RawValue) -> Result<Vec<u8>, MrtrError> {
    let mut top: Members =
        serde_json::from_slice(line).map_err(|_| MrtrError::NotAnObject("the message"))?;
    top.insert("id".into(), id.to_owned());
    let mut out = serde_json::to_vec(&top).map_err(|_| MrtrError::NotAnObject("the message"))?;
    out.push(b'\n');
    Ok(out)
}

/// A response line `{"jsonrpc":"2.0","id":…,"result":…}` with the id as raw text.
pub fn result_line(id: &RawValue, result: &RawValue) -> Vec<u8> {
    let mut top = Members::new();
    top.insert("jsonrpc".into(), raw(&"2.0"));
    top.insert("id".into(), id.to_owned());
    top.insert("result".into(), result.to_owned());
    let mut out = serde_json::to_vec(&top).unwrap_or_default();
    out.push(b'\n');
    out
}

/// A response line `{"jsonrpc":"2.0","id":…,"error":…}` with the id as raw text.
pub fn error_line(id: &RawValue, error: &Value) -> Vec<u8> {
    let mut top = Members::new();
    top.insert("jsonrpc".into(), raw(&"2.0"));
    top.insert("id".into(), id.to_owned());
    top.insert("error".into(), raw(error));
    let mut out = serde_json::to_vec(&top).unwrap_or_default();
    out.push(b'\n');
    out
}

/// The error object of a JSON-RPC error (`{"code", "message"}`).
pub fn error_object(code: i64, message: &str) -> Value {
    json!({"code": code, "message": message})
}

/// Whether an error object (raw text) may be read by some host as `-32042`: its `code` is
/// numerically -32042 however it is written (`-32042`, `-32042.0`, `-3.2042e4`, `"-32042"`),
/// or the code cannot be read unambiguously (duplicated, or a member whose name folds to
/// `code`). Fails closed: such an error is never handed to a host with its URLs.
pub fn is_url_elicitation_required(error: &str) -> bool {
    let code = match members::Members::read(error, &["code", "message", "data"]) {
        Ok(head) => head.get(0),
        Err(MembersError::NotAnObject) => return false,
        Err(MembersError::Duplicated | MembersError::FoldedTwin) => return true,
    };
    let Some(code) = code else { return false };
    let number = match serde_json::from_str::<Value>(code) {
        Ok(Value::Number(n)) => n.as_f64(),
        Ok(Value::String(s)) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    number == Some(URL_ELICITATION_REQUIRED as f64)
}

/// The URL elicitations a `-32042` error lists (`error.data.elicitations`; docs/protocol.md
/// EU7), as `elicitation/create` params. Empty when the list is absent or not an array.
pub fn required_url_elicitations(error: &RawValue) -> Vec<Value> {
    serde_json::from_str::<Value>(error.get())
        .ok()
        .and_then(|e| e.pointer("/data/elicitations").cloned())
        .and_then(|l| match l {
            Value::Array(items) => Some(items),
            _ => None,
        })
        .unwrap_or_default()
}

/// A `-32042` error without the URLs: `data.elicitations` removed, so the host has nothing to
/// show on its own; `code` and `message` kept.
pub fn without_elicitations(error: &str) -> Value {
    let fallback = || error_object(URL_ELICITATION_REQUIRED, "URL elicitation required");
    let Ok(mut error) = serde_json::from_str::<Value>(error) else {
        return fallback();
    };
    let Some(object) = error.as_object_mut() else {
        return fallback();
    };
    // Only the spec's members, with numbers and text the host can read.
    object.retain(|k, _| ["code", "message", "data"].contains(&k.as_str()));
    object.insert("code".into(), json!(URL_ELICITATION_REQUIRED));
    if !object.get("message").is_some_and(Value::is_string) {
        object.insert("message".into(), json!("URL elicitation required"));
    }
    if let Some(data) = object.get_mut("data").and_then(Value::as_object_mut) {
        data.remove("elicitations");
    } else {
        object.remove("data");
    }
    error
}

/// `params._meta` protocol version and client capabilities of a 2026-07-28 request line, or
/// `None` when the request carries no `_meta` protocol version.
pub fn meta_of(params: &str) -> Option<(String, Value)> {
    // One pass that copies nothing (tool arguments can be large); a params object that exact
    // names cannot read (a duplicated or case-folded `_meta`) is read as serde would, last
    // copy winning, which is what the rewrite of it sends on.
    let meta: Members = match members::Members::read(params, &["_meta"]) {
        Ok(head) => serde_json::from_str(head.get(0)?).ok()?,
        Err(_) => serde_json::from_str(
            serde_json::from_str::<Members>(params)
                .ok()?
                .swap_remove("_meta")?
                .get(),
        )
        .ok()?,
    };
    let version: String = serde_json::from_str(meta.get(META_PROTOCOL_VERSION)?.get()).ok()?;
    let caps = meta
        .get(META_CLIENT_CAPABILITIES)
        .and_then(|c| serde_json::from_str(c.get()).ok())
        .unwrap_or(Value::Null);
    Some((version, caps))
}

/// A request line with `params._meta[clientCapabilities]` replaced by `capabilities`; every
/// other member keeps its text. Returns one line ending in `\n`.
///
/// # Errors
/// [`MrtrError::NotAnObject`] when the line, its params or its `_meta` is not an object.
pub fn with_meta_capabilities(line: &[u8], capabilities: &Value) -> Result<Vec<u8>, MrtrError> {
    let mut top: Members =
        serde_json::from_slice(line).map_err(|_| MrtrError::NotAnObject("the request"))?;
    let mut params = members(
        top.get("params")
            .ok_or(MrtrError::NotAnObject("params"))?
            .get(),
        "params",
    )?;
    let mut meta = members(
        params
            .get("_meta")
            .ok_or(MrtrError::NotAnObject("_meta"))?
            .get(),
        "_meta",
    )?;
    meta.insert(META_CLIENT_CAPABILITIES.into(), raw(capabilities));
    params.insert("_meta".into(), raw(&meta));
    top.insert("params".into(), raw(&params));
    let mut out = serde_json::to_vec(&top).map_err(|_| MrtrError::NotAnObject("the request"))?;
    out.push(b'\n');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rv(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    /// TV-S22: the retry carries a new id, the person's answer, and `requestState` exactly.
    #[test]
    fn tv_s22_retry_echoes_request_state_byte_for_byte() {
        let result = rv(
            r#"{"resultType":"input_required","inputRequests":{"q1":{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"2+2?"}}],"maxTokens":10}}},"requestState":"opaque-abc"}"#,
        );
        assert!(is_input_required(result.get()));
        let parsed = parse_input_required(&result).unwrap();
        assert_eq!(parsed.requests.len(), 1);
        assert!(parsed.requests[0].is_asked());
        let original = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","arguments":{"n":1.50}}}"#;
        let mut responses = Members::new();
        responses.insert(
            "q1".into(),
            rv(r#"{"role":"assistant","content":{"type":"text","text":"4"},"model":"m"}"#),
        );
        let line = retry(
            original,
            &json!("mcp-consent-1"),
            &responses,
            parsed.request_state.as_deref(),
        )
        .unwrap();
        let text = String::from_utf8(line).unwrap();
        assert!(text.contains(r#""id":"mcp-consent-1""#), "{text}");
        assert!(text.contains(r#""requestState":"opaque-abc""#), "{text}");
        assert!(
            text.contains(r#""arguments":{"n":1.50}"#),
            "number text kept: {text}"
        );
        assert!(text.contains(
            r#""inputResponses":{"q1":{"role":"assistant","content":{"type":"text","text":"4"},"model":"m"}}"#
        ));
    }

    /// Entries some host would read differently from the proxy are refused whole.
    #[test]
    fn entries_are_read_as_strictly_as_envelopes() {
        for text in [
            r#"{"inputRequests":{"a":{"method":"roots/list","Method":"sampling/createMessage"}}}"#,
            r#"{"inputRequests":{"a":{"method":"roots/list","method":"sampling/createMessage"}}}"#,
            r#"{"inputRequests":{"a":{"method":"roots/list"},"a":{"method":"sampling/createMessage"}}}"#,
            r#"{"inputRequests":{"a":{"method":"elicitation/create","params":{"mode":"form","Mode":"url"}}}}"#,
            r#"{"inputRequests":{"a":{"METHOD":"sampling/createMessage"}}}"#,
            r#"{"inputRequests":{},"inputRequests":{"a":{"method":"roots/list"}}}"#,
        ] {
            let result = rv(text);
            assert!(
                matches!(parse_input_required(&result), Err(MrtrError::Malformed(_))),
                "{text}"
            );
        }
        let fine =
            rv(r#"{"inputRequests":{"a":{"method":"roots/list"},"A":{"method":"roots/list"}}}"#);
        assert_eq!(parse_input_required(&fine).unwrap().requests.len(), 2);
    }

    #[test]
    fn a_result_with_input_requests_is_treated_as_asking_whatever_its_type() {
        assert!(is_input_required(r#"{"inputRequests":{}}"#));
        assert!(!is_input_required(
            r#"{"content":[],"resultType":"complete"}"#
        ));
        assert!(is_input_required(r#"{"resultType":"input_required"}"#));
    }

    #[test]
    fn foreign_entries_are_kept_for_the_host() {
        let result = rv(
            r#"{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"},"b":{"method":"elicitation/create","params":{}}},"requestState":"s"}"#,
        );
        let kept = keep_only(&result, &["a"]).unwrap();
        assert_eq!(
            kept.get(),
            r#"{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"}},"requestState":"s"}"#
        );
    }

    #[test]
    fn the_32042_error_loses_its_urls() {
        let error = rv(
            r#"{"code":-32042,"message":"m","data":{"elicitations":[{"mode":"url","elicitationId":"e","url":"https://x.example/","message":"go"}]}}"#,
        );
        assert!(is_url_elicitation_required(error.get()));
        assert_eq!(required_url_elicitations(&error).len(), 1);
        assert_eq!(
            without_elicitations(error.get()),
            json!({"code": -32042, "message": "m", "data": {}})
        );
    }

    /// Every spelling a host parser reads as -32042 counts, and an unreadable code fails closed.
    #[test]
    fn the_url_required_code_is_read_like_hosts_read_it() {
        for code in [
            r#"{"code":-32042}"#,
            r#"{"code":-32042.0}"#,
            r#"{"code":-3.2042e4}"#,
            r#"{"code":"-32042"}"#,
            r#"{"code":1,"code":-32042}"#,
            r#"{"code":1,"Code":-32042}"#,
        ] {
            assert!(is_url_elicitation_required(code), "{code}");
        }
        assert!(!is_url_elicitation_required(
            r#"{"code":-32603,"message":"x"}"#
        ));
        assert_eq!(
            without_elicitations(r#"{"code":-32042.0,"message":"m","data":{"x":"\ud800"}}"#),
            json!({"code": -32042, "message": "URL elicitation required"})
        );
    }

    #[test]
    fn a_bare_request_state_or_folded_members_count_as_asking() {
        assert!(is_input_required(r#"{"requestState":"s"}"#));
        assert!(is_input_required(
            r#"{"resulttype":"input_required","inputrequests":{}}"#
        ));
    }

    #[test]
    fn meta_capabilities_are_replaced_and_the_rest_kept() {
        let line = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","x":1.0}}}"#;
        let params = rv(r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#);
        assert_eq!(
            meta_of(params.get()),
            Some(("2026-07-28".to_owned(), Value::Null))
        );
        let out = with_meta_capabilities(line, &json!({"sampling": {}})).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains(r#""x":1.0"#));
        assert!(text.contains(r#""io.modelcontextprotocol/clientCapabilities":{"sampling":{}}"#));
    }
}
