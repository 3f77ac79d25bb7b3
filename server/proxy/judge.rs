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
//!   counted; when it carried the id of a host request at the server, the host gets an error
//!   for it (a request held for the person or owned by a round is left as it is: the line
//!   cannot be the server's answer to it), and when it carried another id, the server gets an
//!   error for it;
//! - a server request under an id a host may read as another ([`RequestKey::of_raw`]) never
//!   passes: the server gets an error for it;
//! - everything else passes byte for byte, in order.

use std::ops::Range;
use std::sync::Arc;

use serde_json::Value;
use serde_json::value::RawValue;

use super::ask::{Progress, Question};
use super::context::Context;
use super::refusal::ProxyRefusal;
use super::rounds;
use super::session::command::Command;
use super::session::{AskHandle, KnownTool, Phase, RequestRef, Session};
use super::tool_table::Page;
use crate::protocol::binding;
use crate::protocol::envelope::{Envelope, Judged, scan_id};
use crate::protocol::method::Method;
use crate::protocol::mrtr;
use crate::protocol::request_key::RequestKey;
use crate::tools::call::{listed_hints, listed_tools};
use crate::wire::DroppedLine;

/// What to do with one line from the server.
#[derive(Debug)]
pub(super) enum Verdict {
    /// Pass it to the host as it is.
    Forward,
    /// Pass it to the host as it is, then record the tools its result (these bytes of the
    /// line) lists ([`record_tools`]): a long list is read after it is on its way, before the
    /// owner judges anything else.
    ForwardListing(Range<usize>, Page),
    /// Pass these lines instead (the elements of a batch that passed, one per line).
    ForwardLines(Vec<Vec<u8>>),
    /// The proxy took care of it.
    Handled,
    /// It could not be judged and was dropped.
    Dropped,
}

/// Judges one line from the server.
pub(super) fn from_server(ctx: &Context, s: &mut Session, line: &[u8]) -> Verdict {
    match Envelope::parse(line) {
        Judged::Message(msg) => match message(ctx, s, &msg, line) {
            Pass::Yes => Verdict::Forward,
            Pass::Listing(result, page) => Verdict::ForwardListing(result, page),
            Pass::No => Verdict::Handled,
        },
        Judged::Batch(items) => {
            let mut pass = Vec::new();
            for item in items {
                let text = item.get().as_bytes();
                match Envelope::parse(text) {
                    Judged::Message(msg) => {
                        let verdict = message(ctx, s, &msg, text);
                        if let Pass::Listing(result, page) = &verdict {
                            record_tools(s, &text[result.clone()], *page);
                        }
                        if verdict != Pass::No {
                            let mut one = text.to_vec();
                            one.push(b'\n');
                            pass.push(one);
                        }
                    }
                    _ => dropped(
                        ctx,
                        s,
                        DroppedLine::Ambiguous,
                        scan_id(text).map(RequestKey::canonical),
                    ),
                }
            }
            Verdict::ForwardLines(pass)
        }
        Judged::Unjudgeable => {
            dropped(
                ctx,
                s,
                DroppedLine::Unparseable,
                scan_id(line).map(RequestKey::canonical),
            );
            Verdict::Dropped
        }
    }
}

/// Handles a line that could not be judged: logged without content, counted, and the request
/// it concerned (when its id is known) is failed on the side that waits for it.
pub(super) fn dropped(ctx: &Context, s: &mut Session, reason: DroppedLine, id: Option<RequestKey>) {
    let count = ctx.drops.add(reason);
    tracing::warn!(
        reason = reason.as_str(),
        dropped_so_far = count,
        "dropped a line from the server that mcp-consent could not judge"
    );
    let Some(key) = id else { return };
    // Only a request at the server can have been answered by this line: one held for the
    // person never reached it, and one a resolution owns is answered under the proxy's retry
    // id. Those stay as they are (the question asked for them, and its answer, stay theirs).
    if s.requests.get(&key).is_some_and(|r| r.phase.at_server())
        && let Some(request) = s.requests.remove(&key)
    {
        // Never queue without bound for a server that floods: an error that does not fit now
        // is dropped with the line it concerns.
        let _ = ctx
            .to_host
            .try_send(ProxyRefusal::DroppedResponse.line(&request.id).into());
    } else if let Some(waiter) = s.retries.remove(&key) {
        // Dropping the waiter ends the retry; its task fails the host request.
        drop(waiter);
    } else if let Some(id) = key.to_raw()
        && let Some(to_server) = ctx.to_server.upgrade()
    {
        let _ = to_server.try_send(ProxyRefusal::UnreadableMessage.line(&id).into());
    }
}

/// Whether a message passes to the host.
#[derive(Debug, PartialEq, Eq)]
enum Pass {
    Yes,
    No,
    /// Yes, and it is a `tools/list` result whose tools are to be recorded: the result's bytes
    /// in the line, and which page of the listing it is.
    Listing(Range<usize>, Page),
}

impl From<bool> for Pass {
    fn from(pass: bool) -> Pass {
        if pass { Pass::Yes } else { Pass::No }
    }
}

/// Records what the server claims about its tools in a `tools/list` result (raw text): shown
/// on tool-call questions, checked against edited arguments, matched by rules that name the
/// annotations. A first page replaces what was recorded, a later one adds to it (bounded:
/// [`super::tool_table`]); the hints are read here, once.
pub(super) fn record_tools(s: &mut Session, result: &[u8], page: Page) {
    let Ok(result) = std::str::from_utf8(result) else {
        return;
    };
    let tools = listed_tools(result).into_iter().map(|(name, listed)| {
        let size = listed.get().len();
        let hints = listed_hints(&listed);
        (name, KnownTool { listed, hints }, size)
    });
    s.tools.record(page, tools);
}

/// Judges one message; returns whether it passes to the host.
fn message(ctx: &Context, s: &mut Session, msg: &Envelope<'_>, line: &[u8]) -> Pass {
    let method = msg.method().map(Method::named);
    let pass = match (method, msg.key()) {
        (Some(_), Some(Err(why))) => {
            // A server request under an id a host may read as another (`-0` as `0`): were it
            // passed, the host's answer to it could reach the server as the answer to one the
            // person is asked about. Never passed, nor asked about; the server is told.
            tracing::warn!(%why, "refused a server request under an id hosts may read differently");
            if let Some(raw) = msg
                .id
                .and_then(|id| RawValue::from_string(id.to_owned()).ok())
            {
                ctx.tell_server(ProxyRefusal::UnsafeId(why).line(&raw));
            }
            false
        }
        (Some(m), Some(Ok(id))) if m.is_asked() => {
            intercept(ctx, s, id, line);
            false
        }
        (Some(m), None) if m.is_asked() => {
            dropped(ctx, s, DroppedLine::Ambiguous, None);
            false
        }
        (Some(Method::Cancelled), None) => server_cancelled(s, msg),
        (Some(Method::ElicitationComplete), None) => elicitation_complete(ctx, s, msg),
        (Some(Method::TaskStatus), None) if msg.params.is_some_and(binding::task_asks_input) => {
            dropped(ctx, s, DroppedLine::Ambiguous, None);
            false
        }
        (Some(_), id) => {
            if let Some(Ok(id)) = id {
                // A server request the host will answer: only such ids may be answered by it.
                s.forwarded.insert(id);
            }
            true
        }
        (None, Some(Ok(key))) if msg.is_response() => return response(ctx, s, msg, key, line),
        (None, key) => {
            dropped(ctx, s, DroppedLine::Ambiguous, key.and_then(Result::ok));
            false
        }
    };
    pass.into()
}

/// A response: to a proxy retry, to a host request, or to nobody the proxy knows.
fn response(
    ctx: &Context,
    s: &mut Session,
    msg: &Envelope<'_>,
    key: RequestKey,
    line: &[u8],
) -> Pass {
    if let Some(waiter) = s.retries.remove(&key) {
        let _ = waiter.send(line.to_vec());
        return Pass::No;
    }
    if s.initialize.as_ref() == Some(&key) {
        s.initialize = None;
        s.negotiated_version = msg
            .result
            .and_then(|r| serde_json::from_str::<Value>(r).ok())
            .and_then(|r| r.get("protocolVersion")?.as_str().map(str::to_owned));
    }
    let Some(request) = s.requests.get_mut(&key) else {
        // A response to no request in flight: a second response, a late one after a dropped
        // line was failed, or one under a retry id already answered. Every host request that
        // reached the server is recorded, so nothing waits for it.
        dropped(ctx, s, DroppedLine::Ambiguous, None);
        return false.into();
    };
    if !request.phase.at_server() {
        // Held for the person (the server never received it), or owned by a resolution (the
        // server must answer the proxy's retry, not the host's id): a response under the
        // host's id is not the server's answer to anything the host sent.
        dropped(ctx, s, DroppedLine::Ambiguous, None);
        return Pass::No;
    }
    let (method, page) = (request.method, request.page);
    if method.is_task_query() && msg.result.is_some_and(binding::task_asks_input) {
        // A task asking for input through the extension the proxy never offers: refused.
        dropped(ctx, s, DroppedLine::Ambiguous, Some(key));
        return Pass::No;
    }
    if rounds::needs_resolution(msg) {
        if matches!(request.phase, Phase::CancelledAtServer) {
            // The host no longer waits: nobody is asked for it (and its line is gone).
            s.requests.remove(&key);
            return Pass::No;
        }
        if request.line.is_some() {
            request.phase = Phase::Resolving {
                asks: Vec::new(),
                retry: None,
            };
            let owned = RequestRef {
                key,
                serial: request.serial,
            };
            rounds::spawn(ctx, owned, line.to_vec());
            return Pass::No;
        }
        if msg.result.is_some() {
            // An `InputRequiredResult` for a request that cannot carry one, or for no request
            // of the host's: never handed over as it is.
            dropped(ctx, s, DroppedLine::Ambiguous, Some(key));
            return Pass::No;
        }
        // A `-32042` on a request the proxy cannot retry: the host gets it without the URLs.
        if let (Some(request), Some(error)) = (s.requests.remove(&key), msg.error) {
            let line = mrtr::error_line(&request.id, &mrtr::without_elicitations(error));
            ctx.answer_host(line);
        }
        return Pass::No;
    }
    s.requests.remove(&key);
    match msg.result {
        Some(result) if method == Method::ToolsList => match within(line, result) {
            Some(range) => Pass::Listing(range, page),
            None => {
                record_tools(s, result.as_bytes(), page);
                Pass::Yes
            }
        },
        _ => Pass::Yes,
    }
}

/// Where `part` lies in `line`, when it is a slice of it (what the envelope reads borrows
/// from the line).
fn within(line: &[u8], part: &str) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(line.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    (end <= line.len()).then_some(start..end)
}

/// The server cancelled one of its requests: a question open for it is withdrawn (and the
/// host never hears of it). A cancellation naming an id no request may have (`-0`) names no
/// request the host was given either, and is dropped.
fn server_cancelled(s: &mut Session, msg: &Envelope<'_>) -> bool {
    let request_id = match msg.cancelled_request() {
        Some(Ok(key)) => key,
        Some(Err(_)) => return false,
        None => return true,
    };
    match s.server_asks.remove(&request_id) {
        Some(handle) => {
            handle.cancel();
            false
        }
        None => true,
    }
}

fn elicitation_complete(ctx: &Context, s: &mut Session, msg: &Envelope<'_>) -> bool {
    let Some(eid) = msg
        .params
        .and_then(|p| serde_json::from_str::<Value>(p).ok())
        .and_then(|p| p.get("elicitationId")?.as_str().map(str::to_owned))
    else {
        return true;
    };
    let Some(waiter) = s.url_elicitations.remove(&eid) else {
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
fn intercept(ctx: &Context, s: &mut Session, key: RequestKey, line: &[u8]) {
    let Some(to_server) = ctx.to_server.upgrade() else {
        return;
    };
    let request: Value = match serde_json::from_slice(line) {
        Ok(request) => request,
        Err(_) => {
            // Readable as an envelope but not as a whole (e.g. nested past serde_json's
            // limit): the server gets an honest error rather than a question nobody can read.
            let id = key.to_raw().unwrap_or_else(|| RawValue::NULL.to_owned());
            ctx.tell_server(ProxyRefusal::NestedTooDeeply.line(&id));
            return;
        }
    };
    if s.closing {
        return;
    }
    // A request id still in flight must not be reused (MCP G1). Answering the duplicate would
    // give the server two responses for one id, one of them to a request nobody reviewed, so
    // it is dropped.
    if s.server_asks.contains_key(&key) {
        tracing::warn!("the server reused the id of a pending request; the duplicate is ignored");
        return;
    }
    let handle = Arc::new(AskHandle::default());
    s.server_asks.insert(key.clone(), handle.clone());
    if let Some(eid) = request
        .pointer("/params/elicitationId")
        .and_then(Value::as_str)
    {
        s.url_elicitations.entry(eid.to_owned()).or_default();
    }
    let question = Question {
        server: ctx.server.clone(),
        session: ctx.session_id.clone(),
        tool: s.single_tool(),
        protocol_version: s.session_version(),
        client_capabilities: s.capabilities.clone(),
        request,
        tool_info: None,
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
    let ctx = ctx.clone();
    tokio::spawn(async move {
        let response = ctx.ask(&question, &handle, progress.as_ref()).await;
        ctx.session.send(Command::ServerAskDone { key }).await;
        if let Some(response) = response {
            let mut line = response.to_string().into_bytes();
            line.push(b'\n');
            let _ = to_server.send(line.into()).await;
        }
    });
}
