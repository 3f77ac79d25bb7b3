//! Consent bound to the exact request it was given for (docs/design.md §proxy, "Held
//! answers"; docs/protocol.md G17).
//!
//! When a 2026-07-28 server asks, in one `InputRequiredResult`, for something the person
//! answers (a form, a sampling request) and for something only the host can answer (e.g.
//! `roots/list`), the person's answers are held until the host retries. A held answer is
//! consent to one request: it may reach the server only inside the retry of that very request,
//! once. Two facts make that decidable:
//!
//! - the host is handed a `requestState` of the proxy's own (a fresh, unguessable token), in
//!   place of the server's (which is restored before the retry goes on): the spec has the
//!   client echo it exactly, so the retry names the round it answers even when the server gave
//!   no state at all, and two parallel calls of one tool never share one;
//! - the retry must be the same request: its [`request_digest`] (method and params, less the
//!   members a retry adds or a client may refresh) must equal the original's.
//!
//! Anything else (a token that is unknown or used, a retry whose content differs) fails the
//! host's request honestly; the held answers are dropped, never moved to another request.

use serde_json::Value;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

use super::mrtr::{Members, MrtrError};

/// The prefix of every `requestState` the proxy hands a host in place of the server's.
pub const HELD_STATE_PREFIX: &str = "mcp-consent-held-";

/// The members of a request's `params` that a retry may change without being another request:
/// what the retry adds (`inputResponses`, `requestState`, per G17) and `_meta` (progress
/// tokens, the per-request protocol version and capabilities, which a client may renew).
pub const RETRY_MEMBERS: [&str; 3] = ["inputResponses", "requestState", "_meta"];

/// A fresh `requestState` token for a round whose answers are held (UUIDv4-strength
/// randomness from the caller; see [`HELD_STATE_PREFIX`]).
pub fn held_state(random: &str) -> String {
    format!("{HELD_STATE_PREFIX}{random}")
}

/// Whether a `requestState` (its JSON text) is one of the proxy's own tokens; returns the
/// token. A state that is not a JSON string is never ours.
pub fn own_state(state_text: &str) -> Option<String> {
    serde_json::from_str::<String>(state_text)
        .ok()
        .filter(|s| s.starts_with(HELD_STATE_PREFIX))
}

/// The identity of a request's content: SHA-256 (hex) of the RFC 8785 canonical JSON of
/// `{"method", "params"}` with [`RETRY_MEMBERS`] removed from `params`, integers with all
/// their digits ([`super::exact::canonical`]). Numbers are compared by value, key order and
/// whitespace do not count. `None` when the line is not a request
/// object.
pub fn request_digest(line: &[u8]) -> Option<String> {
    let mut top: serde_json::Map<String, Value> = serde_json::from_slice(line).ok()?;
    let method = top.remove("method")?;
    let mut params = top.remove("params").unwrap_or(Value::Null);
    if let Some(p) = params.as_object_mut() {
        for member in RETRY_MEMBERS {
            p.remove(member);
        }
    }
    let canonical =
        super::exact::canonical(&serde_json::json!({"method": method, "params": params}));
    Some(hex::encode(Sha256::digest(canonical)))
}

/// The `InputRequiredResult` to hand the host: only the entries named in `keep`, and
/// `requestState` replaced by the proxy's `token`; every other member keeps its text.
///
/// # Errors
/// [`MrtrError::NotAnObject`] when the result or its `inputRequests` is not an object.
pub fn handed_to_host(
    result: &RawValue,
    keep: &[&str],
    token: &str,
) -> Result<Box<RawValue>, MrtrError> {
    let kept = super::mrtr::keep_only(result, keep)?;
    let mut top: Members =
        serde_json::from_str(kept.get()).map_err(|_| MrtrError::NotAnObject("the result"))?;
    top.insert("requestState".into(), raw(&token));
    Ok(raw(&top))
}

/// A request line without `params.inputResponses` and `params.requestState`; every other
/// member keeps its text. Returns one line ending in `\n`.
///
/// # Errors
/// [`MrtrError::NotAnObject`] when the line or its `params` is not an object.
pub fn without_retry_members(line: &[u8]) -> Result<Vec<u8>, MrtrError> {
    let mut top: Members =
        serde_json::from_slice(line).map_err(|_| MrtrError::NotAnObject("the request"))?;
    let params = top.get("params").ok_or(MrtrError::NotAnObject("params"))?;
    let mut params: Members =
        serde_json::from_str(params.get()).map_err(|_| MrtrError::NotAnObject("params"))?;
    // Spellings a case-folding decoder (Go's) would read as these go too.
    params.retain(|name, _| !is_retry_member(name));
    top.insert("params".into(), raw(&params));
    let mut out = serde_json::to_vec(&top).map_err(|_| MrtrError::NotAnObject("the request"))?;
    out.push(b'\n');
    Ok(out)
}

/// `retry` with its `params.arguments` replaced by those of `edited` (the held call as the
/// person edited and the proxy forwarded it); every other member keeps its text. Returns one
/// line ending in `\n`.
///
/// # Errors
/// [`MrtrError::NotAnObject`] when either line or its `params` is not an object, or `edited`
/// has no arguments.
pub fn with_arguments_of(retry: &[u8], edited: &[u8]) -> Result<Vec<u8>, MrtrError> {
    let params_of = |line: &[u8]| -> Result<Members, MrtrError> {
        let top: Members =
            serde_json::from_slice(line).map_err(|_| MrtrError::NotAnObject("the request"))?;
        let params = top.get("params").ok_or(MrtrError::NotAnObject("params"))?;
        serde_json::from_str(params.get()).map_err(|_| MrtrError::NotAnObject("params"))
    };
    let arguments = params_of(edited)?
        .shift_remove("arguments")
        .ok_or(MrtrError::NotAnObject("arguments"))?;
    let mut params = params_of(retry)?;
    params.insert("arguments".into(), arguments);
    let mut top: Members =
        serde_json::from_slice(retry).map_err(|_| MrtrError::NotAnObject("the request"))?;
    top.insert("params".into(), raw(&params));
    let mut out = serde_json::to_vec(&top).map_err(|_| MrtrError::NotAnObject("the request"))?;
    out.push(b'\n');
    Ok(out)
}

/// The retry members, as written or as a case-folding decoder would read them.
const RETRY_ONLY: [&str; 2] = ["inputResponses", "requestState"];

fn is_retry_member(name: &str) -> bool {
    RETRY_ONLY.contains(&name) || super::members::folds_to_known(name, &RETRY_ONLY)
}

/// Whether the params (an object's text) hold a member that a case-folding decoder (Go's)
/// would read as `inputResponses` or `requestState` although it is spelt otherwise
/// (`InputResponses`, `requeststate`).
pub fn has_folded_retry_member(params: &str) -> bool {
    serde_json::from_str::<indexmap::IndexMap<String, serde::de::IgnoredAny>>(params).is_ok_and(
        |members| {
            members
                .keys()
                .any(|k| super::members::folds_to_known(k, &RETRY_ONLY))
        },
    )
}

/// Whether a tasks-extension message (a `notifications/tasks` params, or a `tasks/get` /
/// `tasks/result` result: raw text) asks for input: it carries `inputRequests` itself or in its
/// `task`, or a member whose name a case-folding decoder would read as either. The proxy does
/// not answer that path, so such a message is never handed to a host (SEP-2663).
pub fn task_asks_input(text: &str) -> bool {
    use super::members::{Members as Head, MembersError};
    match Head::read(text, &["inputRequests", "task"]) {
        Ok(head) => {
            head.get(0).is_some()
                || head
                    .get(1)
                    .is_some_and(|task| match Head::read(task, &["inputRequests"]) {
                        Ok(task) => task.get(0).is_some(),
                        Err(MembersError::NotAnObject) => false,
                        Err(MembersError::Duplicated | MembersError::FoldedTwin) => true,
                    })
        }
        Err(MembersError::NotAnObject) => false,
        Err(MembersError::Duplicated | MembersError::FoldedTwin) => true,
    }
}

fn raw(value: &impl serde::Serialize) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).unwrap_or_else(|_| RawValue::NULL.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_ignores_what_a_retry_adds_and_nothing_else() {
        let original = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"delete_file","arguments":{"path":"/home/me/notes-a.txt"},"_meta":{"progressToken":1}}}"#;
        let retry = br#"{"id":"x","jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"path":"/home/me/notes-a.txt"},"name":"delete_file","inputResponses":{"roots":{}},"requestState":"s","_meta":{"progressToken":9}}}"#;
        let other = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"delete_file","arguments":{"path":"/home/me/everything"}}}"#;
        let prompt = br#"{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"delete_file","arguments":{"path":"/home/me/notes-a.txt"}}}"#;
        let d = request_digest(original).unwrap();
        assert_eq!(request_digest(retry).unwrap(), d);
        assert_ne!(request_digest(other).unwrap(), d);
        assert_ne!(request_digest(prompt).unwrap(), d);
        assert!(request_digest(b"[1]").is_none());
    }

    #[test]
    fn a_host_s_own_responses_and_state_are_removed_and_the_rest_kept() {
        let line = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","arguments":{"n":1.50},"inputResponses":{"confirm":{"action":"accept"}},"requestState":"s"}}"#;
        let out = String::from_utf8(without_retry_members(line).unwrap()).unwrap();
        assert_eq!(
            out,
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"t\",\"arguments\":{\"n\":1.50}}}\n"
        );
    }

    #[test]
    fn a_task_that_asks_for_input_is_seen_wherever_it_asks() {
        assert!(task_asks_input(
            r#"{"taskId":"t","status":"input_required","inputRequests":{}}"#
        ));
        assert!(task_asks_input(
            r#"{"task":{"taskId":"t","inputRequests":{"a":{}}}}"#
        ));
        assert!(task_asks_input(r#"{"taskId":"t","InputRequests":{}}"#));
        assert!(task_asks_input(r#"{"task":{"inputrequests":{}}}"#));
        assert!(!task_asks_input(r#"{"taskId":"t","status":"working"}"#));
        assert!(!task_asks_input(r#"{"task":{"taskId":"t"}}"#));
        assert!(!task_asks_input(r#"{"task":"t"}"#));
    }

    #[test]
    fn the_host_gets_the_proxy_s_state_and_only_its_entries() {
        let result = RawValue::from_string(
            r#"{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"},"b":{"method":"elicitation/create","params":{}}}}"#.to_owned(),
        )
        .unwrap();
        let token = held_state("t-1");
        let handed = handed_to_host(&result, &["a"], &token).unwrap();
        assert_eq!(
            handed.get(),
            r#"{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"}},"requestState":"mcp-consent-held-t-1"}"#
        );
        assert_eq!(own_state(r#""mcp-consent-held-t-1""#), Some(token));
        assert_eq!(own_state(r#""s-1""#), None);
        assert_eq!(own_state(r#"{"mcp-consent-held-":1}"#), None);
    }
}
