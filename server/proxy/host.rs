//! Lines from the host to the server. Everything passes, byte for byte, except:
//! - `initialize` and every request with a 2026-07-28 `_meta` protocol version get the
//!   capabilities the proxy answers for ([`super::capabilities`]);
//! - a host's retry of a request whose sampling/elicitation entries the person answered gets
//!   those answers merged into its `inputResponses`;
//! - a host message with an id and no method is a response: it passes only when valid and
//!   answering a server request the host was given, so one under the id of a request the
//!   proxy intercepted is dropped (the server must never get two responses for one id);
//! - a line the proxy cannot read by exact names (not valid JSON, a duplicate or case-folded
//!   envelope member, a non-finite number), a batch, and a `tools/call` sent as a notification
//!   never pass: the server might read them as something the proxy never judged;
//! - a request under an id a server may read as another id (`-0`, `5.0`, a lone surrogate
//!   escape: [`RequestKey::of_raw`]) never passes: the host gets `-32600` under its id.
//!
//! Requests are remembered until their response, so the server's answers can be judged.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use serde_json::Value;
use serde_json::value::RawValue;

use super::capabilities::{forward_capabilities, rewrite_initialize};
use super::context::Context;
use super::refusal::ProxyRefusal;
use super::retry_gate;
use super::session::{HostRequest, Phase, RequestRef, Session};
use super::tool_gate::{self, Gate};
use super::tool_table::Page;
use crate::protocol::binding;
use crate::protocol::envelope::{Envelope, Judged, scan_id};
use crate::protocol::members::Members;
use crate::protocol::method::Method;
use crate::protocol::mrtr;
use crate::protocol::notifications;
use crate::protocol::request_key::RequestKey;

/// Handles one line from the host; returns the bytes to send to the server (the line itself,
/// borrowed, when it passes unchanged), or `None` to drop it.
pub(super) fn from_host<'a>(
    ctx: &Context,
    s: &mut Session,
    line: &'a [u8],
) -> Option<Cow<'a, [u8]>> {
    let msg = readable(ctx, s, line)?;
    let answers = msg.result.is_some() || msg.error.is_some();
    // A request that carries a result, or a result with no id (or `null`) to say which request
    // it answers: a server might take it for the answer to one of its own requests, the
    // person's included. It never passes.
    if answers && (msg.method.is_some() || msg.id.is_none()) {
        refuse_unread(
            ctx,
            s,
            msg.id.map(str::to_owned),
            ProxyRefusal::UnreadableHostMessage,
        );
        return None;
    }
    let Some(method) = msg.method().map(Method::named) else {
        return host_response(s, &msg).then_some(Cow::Borrowed(line));
    };
    let Some(raw_id) = msg.id else {
        return host_notification(ctx, s, &msg).then_some(Cow::Borrowed(line));
    };
    let key = RequestKey::of_raw(raw_id);
    let id_key = match key {
        Ok(key) => key,
        Err(why) => {
            // An id a server may read as another (`-0` as `0`, `5.0` as `5`): the proxy could
            // not keep the two apart, so the request never passes.
            tracing::warn!(%why, "refused a host request under an id servers may read differently");
            ctx.answer_host(ProxyRefusal::UnsafeId(why).line(&raw_id_value(raw_id)));
            return None;
        }
    };
    host_request(ctx, s, &msg, method, id_key, line)
}

/// The line's envelope, when the proxy can read it by exact names. A line it cannot read might
/// be read by the server as a call the rules hold back, or as an answer the person never gave:
/// it never passes (nor does a batch), and the host is told under the id it names.
fn readable<'a>(ctx: &Context, s: &Session, line: &'a [u8]) -> Option<Envelope<'a>> {
    match Envelope::parse(line) {
        Judged::Message(msg) => Some(msg),
        Judged::Unjudgeable => {
            refuse_unread(ctx, s, scan_id(line), ProxyRefusal::UnreadableHostMessage);
            None
        }
        Judged::Batch(items) => {
            for item in items {
                refuse_unread(ctx, s, scan_id(item.get().as_bytes()), ProxyRefusal::Batch);
            }
            None
        }
    }
}

/// A host message without a method: a response, whatever else it carries or lacks (a reader
/// that goes by which members are present takes `{"id":1}` or `"result":null` for one). It
/// passes only when it is a valid response ([`Envelope::is_valid_response`]) answering a
/// server request the host was given: never one the proxy answers itself (the person's
/// question stays the only way it is answered), nor an id a server might read as such
/// (`"900"` for `900`). An invalid one leaves the request open for a valid answer.
fn host_response(s: &mut Session, msg: &Envelope<'_>) -> bool {
    let key = msg.key().and_then(Result::ok);
    if !key.as_ref().is_some_and(|key| s.forwarded.contains(key)) {
        tracing::warn!("dropped a host response to a request it was not given");
        return false;
    }
    if !msg.is_valid_response() {
        tracing::warn!("dropped a host response without exactly one result or error");
        return false;
    }
    key.is_some_and(|key| s.forwarded.remove(&key))
}

/// A host notification; whether it passes.
fn host_notification(ctx: &Context, s: &mut Session, msg: &Envelope<'_>) -> bool {
    match msg.method().map(Method::named) {
        Some(Method::Cancelled) => match msg.cancelled_request() {
            // The call was held for the person: the server never got it, so nothing to cancel.
            Some(Ok(key)) => !host_cancelled(ctx, s, &key),
            // No request in flight has such an id, and a server might read it as one that is.
            Some(Err(why)) => {
                tracing::warn!(%why, "dropped a host cancellation naming an id servers may read differently");
                false
            }
            None => true,
        },
        Some(Method::ToolsCall) => {
            // A call without an id expects no answer, but a server might still run it: it is
            // never judged, so it never passes.
            tracing::warn!("dropped a tools/call the host sent as a notification");
            false
        }
        // Answers no round of the proxy's asked for, in a message no one answers: dropped.
        _ if request_head(Method::Other, msg.params).carries_retry => {
            tracing::warn!("dropped a host notification carrying inputResponses or requestState");
            false
        }
        _ => true,
    }
}

/// A host request: its capabilities rewritten, a retry bound to its round, a tool call judged;
/// recorded until its response. Returns what goes to the server now.
fn host_request<'a>(
    ctx: &Context,
    s: &mut Session,
    msg: &Envelope<'_>,
    method: Method,
    id_key: RequestKey,
    line: &'a [u8],
) -> Option<Cow<'a, [u8]>> {
    let head = request_head(method, msg.params);
    let id = msg
        .id
        .map_or_else(|| RawValue::NULL.to_owned(), raw_id_value);
    let is_call = method == Method::ToolsCall;
    // A request under the id of one still in flight, whatever either's method, gets an error
    // of its own: it must never be taken for the other (nor get its round or its consent), nor
    // replace one a task is seeing through. Checked first, so such a request changes nothing:
    // it uses up no held answers and declares no capabilities.
    if s.requests.contains_key(&id_key) {
        ctx.answer_host(ProxyRefusal::IdInFlight.line(&id));
        return None;
    }
    let (mut out, meta_version, capabilities) =
        with_capabilities(s, method, &id_key, msg.params, line);
    // What a retry carries (`inputResponses`, `requestState`) reaches the server only as the
    // proxy handed it: bound to the round it answers, or not at all. That holds for every
    // method: one that never requires input (`tasks/update` of the tasks extension, which the
    // proxy does not offer) has no round the proxy handed out, so what it carries is removed.
    // `Some(person_accepted)` for a bound retry.
    let mut continues = None;
    if head.carries_retry {
        match bound_retry(s, method, out, &id) {
            Ok(Retried::Unbound(line)) => out = line,
            Ok(Retried::Bound(line, person_accepted)) => {
                out = line;
                continues = Some(person_accepted);
            }
            Err(refusal) => {
                ctx.answer_host(refusal);
                return None;
            }
        }
    }

    let complete = is_call && (meta_version.is_some() || s.speaks_mrtr());
    // A bound retry continues a call that passed the rules (or the person) already: it is
    // judged by the rules of now, but an `ask` does not ask again about a call the person
    // accepted.
    if is_call && let Some(person_accepted) = continues {
        let verdict = retry_gate::judge(
            ctx,
            s,
            &id,
            head.tool.as_deref(),
            head.arguments,
            complete,
            person_accepted,
        );
        if let Err(line) = verdict {
            ctx.answer_host(line);
            return None;
        }
    }
    let asked_tool = if is_call && continues.is_none() {
        match tool_gate::judge(ctx, s, &id, head.tool.as_deref(), head.arguments, complete) {
            Gate::Refused(line) => {
                ctx.answer_host(line);
                return None;
            }
            Gate::Ask => head.tool.clone(),
            Gate::Pass => None,
        }
    } else {
        None
    };
    let serial = s.next_serial();
    let request = HostRequest {
        serial,
        id,
        method,
        tool: head.tool,
        // Only a listing has pages: no other request's params are read for a cursor.
        page: if method == Method::ToolsList {
            Page::of_params_text(msg.params)
        } else {
            Page::First
        },
        line: method.may_require_input().then(|| Arc::new(out.to_vec())),
        as_host_sent: None,
        progress_token: head.progress_token,
        meta_version,
        capabilities,
        progress: Arc::new(AtomicU64::new(0)),
        phase: if asked_tool.is_some() {
            Phase::AwaitingPerson { asks: Vec::new() }
        } else {
            Phase::AtServer
        },
        person_accepted: continues == Some(true),
    };
    s.requests.insert(id_key.clone(), request);
    if let Some(tool) = asked_tool {
        let held = RequestRef {
            key: id_key,
            serial,
        };
        tool_gate::spawn_ask(ctx, held, tool, out.into_owned(), complete);
        return None;
    }
    Some(out)
}

/// The id as the host wrote it, to answer under (valid JSON already: the envelope was read, so
/// this only copies its text).
fn raw_id_value(raw: &str) -> Box<RawValue> {
    RawValue::from_string(raw.to_owned()).unwrap_or_else(|_| RawValue::NULL.to_owned())
}

/// The request with the capabilities the proxy answers for: in `initialize`, or (2026-07-28)
/// in the `_meta` of every request. Returns the line to send, the `_meta` protocol version
/// when the request carried one, and the capabilities the request is judged by.
fn with_capabilities<'a>(
    s: &mut Session,
    method: Method,
    id_key: &RequestKey,
    params: Option<&str>,
    line: &'a [u8],
) -> (Cow<'a, [u8]>, Option<String>, Value) {
    let mut out = Cow::Borrowed(line);
    if method == Method::Initialize {
        if let Some((rewritten, version, caps)) = rewrite_initialize(&out) {
            s.initialize = Some(id_key.clone());
            s.requested_version = Some(version);
            s.capabilities = caps;
            out = Cow::Owned(rewritten);
        }
    } else if let Some((version, declared)) = params.and_then(mrtr::meta_of) {
        // 2026-07-28: capabilities travel in every request (G16).
        let caps = forward_capabilities(&version, &declared);
        if let Ok(rewritten) = mrtr::with_meta_capabilities(&out, &caps) {
            s.meta_version = Some(version.clone());
            s.capabilities = caps.clone();
            return (Cow::Owned(rewritten), Some(version), caps);
        }
    }
    (out, None, s.capabilities.clone())
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
fn request_head(method: Method, params: Option<&str>) -> RequestHead<'_> {
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
        .filter(|_| method == Method::ToolsCall)
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
            || head.is_null(3)
            || binding::has_folded_retry_member(params),
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
    s: &mut Session,
    method: Method,
    line: Cow<'a, [u8]>,
    id: &RawValue,
) -> Result<Retried<'a>, Vec<u8>> {
    let refuse = |refusal: ProxyRefusal| refusal.line(id);
    let id_value: Value = serde_json::from_str(id.get()).unwrap_or(Value::Null);
    let token = mrtr::request_state(&line).and_then(|s| binding::own_state(&s));
    let Some(token) = token else {
        let (responses, state) = (mrtr::input_responses(&line), mrtr::request_state(&line));
        let folded = mrtr::params_of(&line).is_some_and(|p| binding::has_folded_retry_member(&p));
        if responses.is_empty() && state.is_none() && !folded {
            return Ok(Retried::Unbound(line));
        }
        tracing::warn!(
            "removed inputResponses/requestState from a host request: mcp-consent handed the host none for it"
        );
        return binding::without_retry_members(&line)
            .map(|line| Retried::Unbound(Cow::Owned(line)))
            .map_err(|_| refuse(ProxyRefusal::UnreadableRetry));
    };
    let Some(held) = s.held.remove(&token).filter(|h| h.fresh()) else {
        return Err(refuse(ProxyRefusal::NoLongerHeld));
    };
    // The retry must read as written: a number the digest would round or a member given
    // twice could make another request look like the one the person answered.
    if !crate::protocol::exact::shown_exactly(&line) || !held.binding.matches(method, &line) {
        tracing::warn!("refused a host retry that differs from the request the person answered");
        return Err(refuse(ProxyRefusal::NotTheSameRequest));
    }
    // The person edited the call: the retry goes on with the arguments the person accepted.
    let line = match &held.edited {
        Some(edited) => Cow::Owned(
            binding::with_arguments_of(&line, edited)
                .map_err(|_| refuse(ProxyRefusal::UnreadableRetry))?,
        ),
        None => line,
    };
    let mut responses = mrtr::input_responses(&line);
    responses.retain(|key, _| held.foreign.contains(key));
    for (key, answer) in held.answers {
        responses.insert(key, answer);
    }
    mrtr::retry(&line, &id_value, &responses, held.server_state.as_deref())
        .map(|line| Retried::Bound(Cow::Owned(line), held.person_accepted))
        .map_err(|_| refuse(ProxyRefusal::UnreadableRetry))
}

/// What a host request carrying `inputResponses` or `requestState` became.
enum Retried<'a> {
    /// No round of the proxy's: the request as it is, less what the host invented.
    Unbound(Cow<'a, [u8]>),
    /// The retry of a round the proxy handed the host, with the person's answers: it
    /// continues a request that was judged (and, for a call, let through) already; `true`
    /// when the person accepted that call on its question.
    Bound(Cow<'a, [u8]>, bool),
}

/// Drops a host line that cannot be judged and, when it names one of the host's own requests
/// (an id that is not a server request the host was answering), tells the host why under that
/// id, so it does not wait for a response that never comes.
fn refuse_unread(ctx: &Context, s: &Session, id: Option<String>, refusal: ProxyRefusal) {
    tracing::warn!(reason = %refusal, "dropped a host line that mcp-consent could not judge");
    let Some(key) = id.map(RequestKey::canonical) else {
        return;
    };
    if s.forwarded.contains(&key) {
        return;
    }
    if let Some(raw) = key.to_raw() {
        ctx.answer_host(refusal.line(&raw));
    }
}

/// The host cancelled one of its requests: withdraw the questions opened for it and, when a
/// proxy retry of it is in flight, tell the server about that one too. True when the request
/// is a tool call still held for the person (the server never received it).
fn host_cancelled(ctx: &Context, s: &mut Session, key: &RequestKey) -> bool {
    let Some(request) = s.requests.get_mut(key) else {
        return false;
    };
    let held = matches!(request.phase, Phase::AwaitingPerson { .. });
    if let Some(retry) = request.cancel() {
        ctx.tell_server(notifications::cancelled_line(
            &retry.to_value(),
            CANCELLED_BY_HOST,
        ));
    }
    held
}

/// Why the server is told to stop working on the proxy's retry.
const CANCELLED_BY_HOST: &str = "cancelled by the host";
