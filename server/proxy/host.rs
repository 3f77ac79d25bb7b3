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
use super::state::{HostRequest, lock};
use crate::protocol::envelope::{Envelope, Judged};
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
        if msg.method() == Some("notifications/cancelled") {
            host_cancelled(ctx, &msg);
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

    let (tool, progress_token) = request_head(&method, msg.params);
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
    // Answers are held only between rounds of a 2026-07-28 request: without any, a request
    // passes as it is (no pass over it).
    if INPUT_REQUIRED_METHODS.contains(&method.as_str()) && !lock(&ctx.shared).held.is_empty() {
        out = with_held_answers(ctx, &method, out);
    }

    let keep_line = INPUT_REQUIRED_METHODS.contains(&method.as_str());
    let request = HostRequest {
        id,
        method,
        tool,
        line: keep_line.then(|| Arc::new(out.to_vec())),
        progress_token,
        meta_version,
        capabilities,
        asks: Vec::new(),
        retry_id: None,
        cancelled: false,
        progress: Arc::new(AtomicU64::new(0)),
        resolving: false,
    };
    lock(&ctx.shared).host_requests.insert(id_key, request);
    Some(out)
}

/// `params.name` of a `tools/call` and `params._meta.progressToken`, read without building the
/// params (tool arguments can be large). Either is `None` when absent or when the params
/// cannot be read by exact member names.
fn request_head(method: &str, params: Option<&str>) -> (Option<String>, Option<Value>) {
    let Some(head) = params.and_then(|p| Members::read(p, &["name", "_meta"]).ok()) else {
        return (None, None);
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
    (tool, progress_token)
}

/// A host retry (a request carrying `requestState`) of a round whose asked entries the person
/// already answered: those answers are merged into `inputResponses`, replacing anything the
/// host put under the same keys (the host never saw those entries).
fn with_held_answers<'a>(ctx: &Context, method: &str, line: Cow<'a, [u8]>) -> Cow<'a, [u8]> {
    let state = mrtr::request_state(&line);
    let held = {
        let mut s = lock(&ctx.shared);
        let found = s
            .held
            .iter()
            .position(|h| h.method == method && h.request_state == state);
        found.map(|i| s.held.swap_remove(i))
    };
    let Some(held) = held else {
        return without_asked_keys(ctx, line);
    };
    let mut responses = mrtr::input_responses(&line);
    for (key, answer) in held.answers {
        responses.insert(key, answer);
    }
    let id: Value = match Envelope::parse(&line) {
        Judged::Message(m) => {
            m.id.and_then(|raw| serde_json::from_str(raw).ok())
                .unwrap_or(Value::Null)
        }
        _ => Value::Null,
    };
    let state_raw = state.and_then(|s| serde_json::value::RawValue::from_string(s).ok());
    mrtr::retry(&line, &id, &responses, state_raw.as_deref()).map_or(line, Cow::Owned)
}

/// A host retry that matches no held answers may still name keys the person answers (a host
/// guessing them): those entries are removed, so only the person's answers ever fill them.
fn without_asked_keys<'a>(ctx: &Context, line: Cow<'a, [u8]>) -> Cow<'a, [u8]> {
    let asked: Vec<String> = lock(&ctx.shared)
        .held
        .iter()
        .flat_map(|h| h.answers.keys().cloned())
        .collect();
    let mut responses = mrtr::input_responses(&line);
    let before = responses.len();
    responses.retain(|k, _| !asked.contains(k));
    if responses.len() == before {
        return line;
    }
    let id: Value = match Envelope::parse(&line) {
        Judged::Message(m) => {
            m.id.and_then(|raw| serde_json::from_str(raw).ok())
                .unwrap_or(Value::Null)
        }
        _ => Value::Null,
    };
    let state =
        mrtr::request_state(&line).and_then(|s| serde_json::value::RawValue::from_string(s).ok());
    mrtr::retry(&line, &id, &responses, state.as_deref()).map_or(line, Cow::Owned)
}

/// The host cancelled one of its requests: withdraw the questions opened for it and, when a
/// proxy retry of it is in flight, tell the server about that one too.
fn host_cancelled(ctx: &Context, msg: &Envelope<'_>) {
    let Some(request_id) = msg
        .params
        .and_then(|p| serde_json::from_str::<Value>(p).ok())
        .and_then(|p| p.get("requestId").cloned())
    else {
        return;
    };
    let key = request_id.to_string();
    let retry = {
        let mut s = lock(&ctx.shared);
        let Some(request) = s.host_requests.get_mut(&key) else {
            return;
        };
        request.cancelled = true;
        for ask in &request.asks {
            ask.cancel();
        }
        request.retry_id.clone()
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
}
