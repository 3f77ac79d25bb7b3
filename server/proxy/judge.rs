//! Lines from the server to the host: only what the proxy has read and judged not to be a
//! request for sampling or elicitation passes (docs/design.md §proxy, "fail closed"):
//!
//! - `sampling/createMessage` and `elicitation/create` requests become questions; the response
//!   goes back to the server under the same id; the host never sees them;
//! - a response that asks for input (`InputRequiredResult`, `-32042`) goes through
//!   [`super::rounds`];
//! - `notifications/cancelled` for an intercepted id withdraws its question and
//!   `notifications/elicitation/complete` for a URL elicitation the proxy opened marks it
//!   complete; neither is forwarded;
//! - responses to the proxy's own retries go to the task that waits for them;
//! - a line the proxy cannot judge (not JSON serde_json accepts, over the size limit, not an
//!   object, a notification with a request's method) is dropped, logged without content and
//!   counted; when it carried the id of a host request, the host gets an error for it, and
//!   when it carried another id, the server gets an error for it;
//! - everything else passes byte for byte, in order.

use std::sync::Arc;

use serde_json::Value;
use serde_json::value::RawValue;

use super::Context;
use super::ask::{Progress, Question, ask};
use super::rounds;
use super::state::{AskHandle, lock};
use crate::protocol::binding;
use crate::protocol::envelope::{Envelope, Judged};
use crate::protocol::jsonrpc::codes;
use crate::protocol::mrtr::{self, ASKED_METHODS};
use crate::wire::DroppedLine;

/// `tools/list`, whose results the proxy reads for what the server claims about its tools.
const TOOLS_LIST: &str = "tools/list";
/// The tasks extension's status notification (SEP-2663), which can carry `inputRequests`.
const TASK_NOTIFICATION: &str = "notifications/tasks";
/// The tasks extension's requests whose results can carry `inputRequests` (SEP-2663).
const TASK_METHODS: [&str; 2] = ["tasks/get", "tasks/result"];

/// What to do with one line from the server.
#[derive(Debug)]
pub(super) enum Verdict {
    /// Pass it to the host as it is.
    Forward,
    /// Pass these lines instead (the elements of a batch that passed, one per line).
    ForwardLines(Vec<Vec<u8>>),
    /// The proxy took care of it.
    Handled,
    /// It could not be judged and was dropped.
    Dropped,
}

/// Judges one line from the server.
pub(super) fn from_server(ctx: &Context, line: &[u8]) -> Verdict {
    match Envelope::parse(line) {
        Judged::Message(msg) => {
            if message(ctx, &msg, line) {
                Verdict::Forward
            } else {
                Verdict::Handled
            }
        }
        Judged::Batch(items) => {
            let mut pass = Vec::new();
            for item in items {
                let text = item.get().as_bytes();
                match Envelope::parse(text) {
                    Judged::Message(msg) => {
                        if message(ctx, &msg, text) {
                            let mut one = text.to_vec();
                            one.push(b'\n');
                            pass.push(one);
                        }
                    }
                    _ => dropped(
                        ctx,
                        DroppedLine::Ambiguous,
                        crate::protocol::envelope::scan_id(text),
                    ),
                }
            }
            Verdict::ForwardLines(pass)
        }
        Judged::Unjudgeable => {
            dropped(
                ctx,
                DroppedLine::Unparseable,
                crate::protocol::envelope::scan_id(line),
            );
            Verdict::Dropped
        }
    }
}

/// Handles a line that could not be judged: logged without content, counted, and the request
/// it concerned (when its id is known) is failed on the side that waits for it.
pub(super) fn dropped(ctx: &Context, reason: DroppedLine, id: Option<String>) {
    let count = ctx.drops.add(reason);
    tracing::warn!(
        reason = reason.as_str(),
        dropped_so_far = count,
        "dropped a line from the server that mcp-consent could not judge"
    );
    let Some(key) = id else { return };
    let host = lock(&ctx.shared).host_requests.remove(&key);
    let message = "mcp-consent dropped the server's response: it could not be read safely";
    if let Some(request) = host {
        let line = mrtr::error_line(
            &request.id,
            &mrtr::error_object(codes::INTERNAL_ERROR, message),
        );
        // Never queue without bound for a server that floods: an error that does not fit now
        // is dropped with the line it concerns.
        let _ = ctx.to_host.try_send(line);
    } else if let Some(waiter) = lock(&ctx.shared).retries.remove(&key) {
        // Dropping the waiter ends the retry; the host request is failed below.
        drop(waiter);
    } else if key != "null"
        && let Ok(id) = RawValue::from_string(key)
        && let Some(to_server) = ctx.to_server.upgrade()
    {
        let line = mrtr::error_line(
            &id,
            &mrtr::error_object(
                codes::INVALID_REQUEST,
                "mcp-consent could not read this message, so it was not passed to the client",
            ),
        );
        let _ = to_server.try_send(line);
    }
}

fn send(to: tokio::sync::mpsc::Sender<Vec<u8>>, line: Vec<u8>) {
    tokio::spawn(async move {
        let _ = to.send(line).await;
    });
}

/// Judges one message; returns whether it passes to the host.
fn message(ctx: &Context, msg: &Envelope<'_>, line: &[u8]) -> bool {
    let method = msg.method();
    match (method, msg.id_key()) {
        (Some(m), Some(id)) if ASKED_METHODS.contains(&m) => {
            intercept(ctx, id, line);
            false
        }
        (Some(m), None) if ASKED_METHODS.contains(&m) => {
            dropped(ctx, DroppedLine::Ambiguous, None);
            false
        }
        (Some("notifications/cancelled"), None) => server_cancelled(ctx, msg),
        (Some("notifications/elicitation/complete"), None) => elicitation_complete(ctx, msg),
        (Some(TASK_NOTIFICATION), None) if msg.params.is_some_and(binding::task_asks_input) => {
            dropped(ctx, DroppedLine::Ambiguous, None);
            false
        }
        (Some(_), id) => {
            if let Some(id) = id {
                // A server request the host will answer: only such ids may be answered by it.
                lock(&ctx.shared).forwarded.insert(id);
            }
            true
        }
        (None, Some(key)) if msg.is_response() => response(ctx, msg, &key, line),
        (None, _) => {
            dropped(ctx, DroppedLine::Ambiguous, msg.id_key());
            false
        }
    }
}

/// A response: to a proxy retry, to a host request, or to nobody the proxy knows.
fn response(ctx: &Context, msg: &Envelope<'_>, key: &str, line: &[u8]) -> bool {
    // Read before taking the lock: on a large result this is the one pass over its head.
    let asks_input = rounds::needs_resolution(msg);
    let mut s = lock(&ctx.shared);
    if let Some(waiter) = s.retries.remove(key) {
        drop(s);
        let _ = waiter.send(line.to_vec());
        return false;
    }
    if s.initialize_id.as_deref() == Some(key) {
        s.initialize_id = None;
        s.negotiated_version = msg
            .result
            .and_then(|r| serde_json::from_str::<Value>(r).ok())
            .and_then(|r| r.get("protocolVersion")?.as_str().map(str::to_owned));
    }
    let Some(request) = s.host_requests.get_mut(key) else {
        // A response to no request in flight: a second response, a late one after a dropped
        // line was failed, or one under a retry id already answered. Forwarded only when the
        // host sent lines the proxy could not record (a batch), where it may be awaited.
        let pass = s.host_unrecorded && !key.starts_with("\"mcp-consent-");
        drop(s);
        if !pass {
            dropped(ctx, DroppedLine::Ambiguous, None);
        }
        return pass;
    };
    if request.awaiting_person {
        // The server never received this call (it waits for the person): a response to it
        // is not the server's answer to anything the host sent.
        drop(s);
        dropped(ctx, DroppedLine::Ambiguous, None);
        return false;
    }
    let listing = request.method == TOOLS_LIST;
    if TASK_METHODS.contains(&request.method.as_str())
        && msg.result.is_some_and(binding::task_asks_input)
    {
        // A task asking for input through the extension the proxy never offers: refused.
        drop(s);
        dropped(ctx, DroppedLine::Ambiguous, Some(key.to_owned()));
        return false;
    }
    if request.resolving {
        // A resolution owns this request (a retry is in flight under the proxy's id): the
        // server must answer that id, not the host's.
        drop(s);
        dropped(ctx, DroppedLine::Ambiguous, None);
        return false;
    }
    if asks_input {
        if request.line.is_some() {
            request.resolving = true;
            drop(s);
            rounds::spawn(ctx, key.to_owned(), line.to_vec());
            return false;
        }
        if msg.result.is_some() {
            // An `InputRequiredResult` for a request that cannot carry one, or for no request
            // of the host's: never handed over as it is.
            drop(s);
            dropped(ctx, DroppedLine::Ambiguous, Some(key.to_owned()));
            return false;
        }
        // A `-32042` on a request the proxy cannot retry: the host gets it without the URLs.
        let request = s.host_requests.remove(key);
        drop(s);
        if let (Some(request), Some(error)) = (request, msg.error) {
            let line = mrtr::error_line(&request.id, &mrtr::without_elicitations(error));
            send(ctx.to_host.clone(), line);
        }
        return false;
    }
    if listing && let Some(result) = msg.result {
        // What the server claims about its tools: shown on tool-call questions, checked
        // against edited arguments, matched by rules that name the annotations.
        s.tools.extend(crate::tools::call::tool_infos(result));
    }
    s.host_requests.remove(key);
    true
}

fn server_cancelled(ctx: &Context, msg: &Envelope<'_>) -> bool {
    let Some(request_id) = msg
        .params
        .and_then(|p| serde_json::from_str::<Value>(p).ok())
        .and_then(|p| p.get("requestId").cloned())
    else {
        return true;
    };
    match lock(&ctx.shared)
        .server_asks
        .remove(&request_id.to_string())
    {
        Some(handle) => {
            handle.cancel();
            false
        }
        None => true,
    }
}

fn elicitation_complete(ctx: &Context, msg: &Envelope<'_>) -> bool {
    let Some(eid) = msg
        .params
        .and_then(|p| serde_json::from_str::<Value>(p).ok())
        .and_then(|p| p.get("elicitationId")?.as_str().map(str::to_owned))
    else {
        return true;
    };
    let Some(waiter) = lock(&ctx.shared).url_elicitations.remove(&eid) else {
        return true;
    };
    waiter.notify_one();
    let client = ctx.client.clone();
    tokio::spawn(async move {
        if let Err(e) = client.complete(&eid).await {
            tracing::warn!(error = %e, "could not mark a URL elicitation complete");
        }
    });
    false
}

/// A server request for sampling or elicitation: becomes a question; the response goes back
/// to the server under the same id.
fn intercept(ctx: &Context, key: String, line: &[u8]) {
    let Some(to_server) = ctx.to_server.upgrade() else {
        return;
    };
    let request: Value = match serde_json::from_slice(line) {
        Ok(request) => request,
        Err(_) => {
            // Readable as an envelope but not as a whole (e.g. nested past serde_json's
            // limit): the server gets an honest error rather than a question nobody can read.
            let id = RawValue::from_string(key).unwrap_or_else(|_| RawValue::NULL.to_owned());
            let line = mrtr::error_line(
                &id,
                &mrtr::error_object(
                    codes::INVALID_PARAMS,
                    "mcp-consent could not read this request (nested too deeply)",
                ),
            );
            send(to_server, line);
            return;
        }
    };
    let handle = Arc::new(AskHandle::default());
    let question = {
        let mut s = lock(&ctx.shared);
        if s.closing {
            return;
        }
        // A request id still in flight must not be reused (MCP G1). Answering the duplicate
        // would give the server two responses for one id, one of them to a request nobody
        // reviewed, so it is dropped.
        if s.server_asks.contains_key(&key) {
            tracing::warn!(
                "the server reused the id of a pending request; the duplicate is ignored"
            );
            return;
        }
        s.server_asks.insert(key.clone(), handle.clone());
        s.intercepted.insert(key.clone());
        if let Some(eid) = request
            .pointer("/params/elicitationId")
            .and_then(Value::as_str)
        {
            s.url_elicitations.entry(eid.to_owned()).or_default();
        }
        Question {
            server: ctx.server.clone(),
            session: ctx.session.clone(),
            tool: s.single_tool(),
            protocol_version: s.session_version(),
            client_capabilities: s.capabilities.clone(),
            request,
            tool_info: None,
        }
    };
    let progress = question
        .request
        .pointer("/params/_meta/progressToken")
        .cloned()
        .map(|token| Progress {
            to: to_server.clone(),
            token,
            counter: Arc::default(),
        });
    let client = ctx.client.clone();
    let opens = ctx.opens.clone();
    let shared = ctx.shared.clone();
    tokio::spawn(async move {
        let response = ask(&client, &opens, &question, &handle, progress.as_ref()).await;
        lock(&shared).server_asks.remove(&key);
        if let Some(response) = response {
            let mut line = response.to_string().into_bytes();
            line.push(b'\n');
            let _ = to_server.send(line).await;
        }
    });
}
