//! Lines from the host to the server. Everything passes, byte for byte, except:
//! - `initialize` and every request with a 2026-07-28 `_meta` protocol version get the
//!   capabilities the proxy answers for ([`super::capabilities`]);
//! - a host's retry of a request whose sampling/elicitation entries the person answered gets
//!   those answers merged into its `inputResponses`;
//! - a host response to a server request the proxy intercepted is dropped (the server must
//!   never get two responses for one id).
//!
//! Requests are remembered until their response, so the server's answers can be judged.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use serde_json::Value;
use serde_json::value::RawValue;

use super::Context;
use super::capabilities::{forward_capabilities, rewrite_initialize};
use super::state::{HELD_FOR, HostRequest, lock};
use super::tool_gate::{self, Gate};
use crate::protocol::binding;
use crate::protocol::envelope::{Envelope, Judged};
use crate::protocol::jsonrpc::codes;
use crate::protocol::members::Members;
use crate::protocol::mrtr::{self, INPUT_REQUIRED_METHODS};

/// Handles one line from the host; returns the bytes to send to the server (the line itself,
/// borrowed, when it passes unchanged), or `None` to drop it.
pub(super) fn from_host<'a>(ctx: &Context, line: &'a [u8]) -> Option<Cow<'a, [u8]>> {
    let Judged::Message(msg) = Envelope::parse(line) else {
        // Not a message the proxy reads (not JSON, a batch): the server judges it.
        lock(&ctx.shared).host_unrecorded = true;
        return Some(Cow::Borrowed(line));
    };
    let Some(id_key) = msg.id_key() else {
        if msg.method() == Some("notifications/cancelled") && host_cancelled(ctx, &msg) {
            // The call was held for the person: the server never got it, so nothing to cancel.
            return None;
        }
        return Some(Cow::Borrowed(line));
    };
    let Some(method) = msg.method().map(str::to_owned) else {
        // A host response may only answer a server request the host was given: never one the
        // proxy answers itself, nor an id a server might read as such (`"900"` for `900`).
        if msg.is_response() && !lock(&ctx.shared).forwarded.remove(&id_key) {
            tracing::warn!("dropped a host response to a request it was not given");
            return None;
        }
        return Some(Cow::Borrowed(line));
    };

    let head = request_head(&method, msg.params);
    let meta = msg.params.and_then(mrtr::meta_of);
    // Valid JSON already (the envelope was read), so this only copies the id's text.
    let id = msg
        .id
        .and_then(|raw| RawValue::from_string(raw.to_owned()).ok())
        .unwrap_or_else(|| RawValue::NULL.to_owned());
    let mut out = Cow::Borrowed(line);
    let mut meta_version = None;
    let mut capabilities = Value::Null;
    if method == "initialize" {
        if let Some((rewritten, version, caps)) = rewrite_initialize(&out) {
            let mut s = lock(&ctx.shared);
            s.initialize_id = Some(id_key.clone());
            s.requested_version = Some(version);
            s.capabilities = caps;
            out = Cow::Owned(rewritten);
        }
    } else if let Some((version, declared)) = meta {
        // 2026-07-28: capabilities travel in every request (G16).
        let caps = forward_capabilities(&version, &declared);
        if let Ok(rewritten) = mrtr::with_meta_capabilities(&out, &caps) {
            out = Cow::Owned(rewritten);
            let mut s = lock(&ctx.shared);
            s.meta_version = Some(version.clone());
            s.capabilities = caps.clone();
            meta_version = Some(version);
            capabilities = caps;
        }
    }
    if capabilities.is_null() {
        capabilities = lock(&ctx.shared).capabilities.clone();
    }
    // What a retry carries (`inputResponses`, `requestState`) reaches the server only as the
    // proxy handed it: bound to the round it answers, or not at all.
    if INPUT_REQUIRED_METHODS.contains(&method.as_str()) && head.carries_retry {
        match bound_retry(ctx, &method, out, &id) {
            Ok(bound) => out = bound,
            Err(refusal) => {
                answer_host(ctx, refusal);
                return None;
            }
        }
    }

    let is_call = method == TOOLS_CALL;
    {
        // A request under the id of one still in flight gets an error of its own: it must
        // never be taken for the other (nor get its consent).
        let s = lock(&ctx.shared);
        if let Some(other) = s.host_requests.get(&id_key)
            && (is_call || other.awaiting_person)
        {
            drop(s);
            let error = mrtr::error_object(codes::INVALID_REQUEST, ID_IN_FLIGHT);
            answer_host(ctx, mrtr::error_line(&id, &error));
            return None;
        }
    }
    let gate = if is_call {
        let complete =
            meta_version.is_some() || lock(&ctx.shared).session_version().as_str() >= MRTR_ERA;
        let gate = tool_gate::judge(ctx, &id, head.tool.as_deref(), head.arguments, complete);
        (gate, complete)
    } else {
        (Gate::Pass, false)
    };
    if let (Gate::Refused(line), _) = gate {
        answer_host(ctx, line);
        return None;
    }

    let keep_line = INPUT_REQUIRED_METHODS.contains(&method.as_str());
    let asked_tool = matches!(gate.0, Gate::Ask)
        .then(|| head.tool.clone())
        .flatten();
    let request = HostRequest {
        id,
        method,
        tool: head.tool,
        awaiting_person: asked_tool.is_some(),
        line: keep_line.then(|| Arc::new(out.to_vec())),
        progress_token: head.progress_token,
        meta_version,
        capabilities,
        asks: Vec::new(),
        retry_id: None,
        cancelled: false,
        progress: Arc::new(AtomicU64::new(0)),
        resolving: false,
    };
    lock(&ctx.shared)
        .host_requests
        .insert(id_key.clone(), request);
    if let Some(tool) = asked_tool {
        tool_gate::spawn_ask(ctx, id_key, tool, out.into_owned(), gate.1);
        return None;
    }
    Some(out)
}

/// `tools/call`.
const TOOLS_CALL: &str = "tools/call";
/// The first revision whose results carry `resultType`.
const MRTR_ERA: &str = "2026-07-28";
/// The host's error for a request whose id is that of a request still in flight.
const ID_IN_FLIGHT: &str = "mcp-consent refused this request: its id is the id of a request still in flight (MCP request ids must not be reused)";

/// Gives the host a line the proxy wrote (its channel is bounded; the send waits its turn).
fn answer_host(ctx: &Context, line: Vec<u8>) {
    let to_host = ctx.to_host.clone();
    tokio::spawn(async move {
        let _ = to_host.send(line).await;
    });
}

/// What the proxy reads of a host request's params, in one pass that copies nothing (tool
/// arguments can be large).
struct RequestHead<'a> {
    /// `params.name` of a `tools/call`.
    tool: Option<String>,
    /// `params._meta.progressToken`.
    progress_token: Option<Value>,
    /// The params carry `inputResponses` or `requestState` (or cannot be read by exact names,
    /// so might).
    carries_retry: bool,
    /// `params.arguments` as raw text.
    arguments: Option<&'a str>,
}

/// Reads a host request's [`RequestHead`]. A member that cannot be read by exact names is
/// absent, except that such params count as carrying a retry (which then gets the strict path).
fn request_head<'a>(method: &str, params: Option<&'a str>) -> RequestHead<'a> {
    let Some(params) = params else {
        return RequestHead {
            tool: None,
            progress_token: None,
            carries_retry: false,
            arguments: None,
        };
    };
    let Ok(head) = Members::read(
        params,
        &[
            "name",
            "_meta",
            "inputResponses",
            "requestState",
            "arguments",
        ],
    ) else {
        return RequestHead {
            tool: None,
            progress_token: None,
            carries_retry: true,
            arguments: None,
        };
    };
    let tool = head
        .get(0)
        .filter(|_| method == "tools/call")
        .and_then(|n| serde_json::from_str::<String>(n).ok());
    let progress_token = head
        .get(1)
        .and_then(|m| Members::read(m, &["progressToken"]).ok())
        .and_then(|m| m.get(0))
        .and_then(|t| serde_json::from_str::<Value>(t).ok());
    RequestHead {
        tool,
        progress_token,
        carries_retry: head.get(2).is_some()
            || head.get(3).is_some()
            || head.is_null(2)
            || head.is_null(3),
        arguments: head.get(4),
    }
}

/// A host request carrying `inputResponses` or `requestState`. When its `requestState` is a
/// token the proxy handed the host for a round whose answers it holds, and the request is that
/// round's very request (same method, same [`binding::request_digest`]), the person's answers
/// are added to the host's own (only for the entries the host was handed), the server's
/// `requestState` is restored, and the answers are used up. A token that is unknown, used or
/// expired, or a request that differs, is refused with an error for the host (the answers are
/// dropped). Anything the proxy did not hand the host (responses and a state of the host's own
/// invention) is removed: no answer the person never gave reaches the server as if it came
/// through a question.
fn bound_retry<'a>(
    ctx: &Context,
    method: &str,
    line: Cow<'a, [u8]>,
    id: &RawValue,
) -> Result<Cow<'a, [u8]>, Vec<u8>> {
    let refuse =
        |message: &str| mrtr::error_line(id, &mrtr::error_object(codes::INTERNAL_ERROR, message));
    let id_value: Value = serde_json::from_str(id.get()).unwrap_or(Value::Null);
    let token = mrtr::request_state(&line).and_then(|s| binding::own_state(&s));
    let Some(token) = token else {
        let (responses, state) = (mrtr::input_responses(&line), mrtr::request_state(&line));
        if responses.is_empty() && state.is_none() {
            return Ok(line);
        }
        tracing::warn!(
            "removed inputResponses/requestState from a host request: mcp-consent handed the host none for it"
        );
        return binding::without_retry_members(&line)
            .map(Cow::Owned)
            .map_err(|_| refuse(NOT_HANDED));
    };
    let held = lock(&ctx.shared).held.remove(&token);
    let Some(held) = held.filter(|h| h.since.elapsed() < HELD_FOR) else {
        return Err(refuse(NO_LONGER_HELD));
    };
    if held.method != method || binding::request_digest(&line).as_deref() != Some(&held.digest) {
        tracing::warn!("refused a host retry that differs from the request the person answered");
        return Err(refuse(NOT_THE_SAME_REQUEST));
    }
    let mut responses = mrtr::input_responses(&line);
    responses.retain(|key, _| held.foreign.contains(key));
    for (key, answer) in held.answers {
        responses.insert(key, answer);
    }
    mrtr::retry(&line, &id_value, &responses, held.server_state.as_deref())
        .map(Cow::Owned)
        .map_err(|_| refuse(NOT_HANDED))
}

/// The host's error when its retry names a round whose answers are gone.
const NO_LONGER_HELD: &str = "mcp-consent no longer holds the person's answers for this retry (they were used or expired); send the request again without requestState";
/// The host's error when its retry is not the request the person answered for.
const NOT_THE_SAME_REQUEST: &str = "mcp-consent refused this retry: it is not the request the person answered for, so their answers were dropped; send the request again";
/// The host's error when a retry cannot be rewritten.
const NOT_HANDED: &str = "mcp-consent could not read this request's inputResponses";

/// The host cancelled one of its requests: withdraw the questions opened for it and, when a
/// proxy retry of it is in flight, tell the server about that one too. True when the request
/// is a tool call still held for the person (the server never received it).
fn host_cancelled(ctx: &Context, msg: &Envelope<'_>) -> bool {
    let Some(request_id) = msg
        .params
        .and_then(|p| serde_json::from_str::<Value>(p).ok())
        .and_then(|p| p.get("requestId").cloned())
    else {
        return false;
    };
    let key = request_id.to_string();
    let (retry, held) = {
        let mut s = lock(&ctx.shared);
        let Some(request) = s.host_requests.get_mut(&key) else {
            return false;
        };
        request.cancelled = true;
        for ask in &request.asks {
            ask.cancel();
        }
        (request.retry_id.clone(), request.awaiting_person)
    };
    if let Some(retry) = retry {
        let note = serde_json::json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": serde_json::from_str::<Value>(&retry).unwrap_or(Value::Null), "reason": "cancelled by the host"},
        });
        let mut line = note.to_string().into_bytes();
        line.push(b'\n');
        if let Some(to_server) = ctx.to_server.upgrade() {
            tokio::spawn(async move {
                let _ = to_server.send(line).await;
            });
        }
    }
    held
}
