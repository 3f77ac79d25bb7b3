//! The host's `tools/call`, judged before it reaches the server (docs/design.md §proxy,
//! "Host → server tools/call"):
//!
//! - `allow` (a rule, the default or a grant): passes byte for byte; the decision is queued
//!   for the service's audit ([`super::tool_report`]), with no round trip per call;
//! - `deny`: never reaches the server; the host gets a `CallToolResult` with `isError: true`
//!   saying the person's rules refused it, under its own id;
//! - `ask`: held back; a `tool_call` question is opened, and the server receives the call only
//!   once the person accepts, and then exactly the call accepted (the service's `callDigest`
//!   must match what goes out), under the host's id, once. A decline, an expiry, the host
//!   cancelling or leaving, or a service that cannot be reached: nothing is forwarded, and the
//!   host gets an `isError` result saying why (none when it cancelled).

use std::sync::Arc;

use serde_json::Value;
use serde_json::value::RawValue;

use super::ask::{Progress, Question};
use super::context::Context;
use super::refusal::{CallFailure, EXPIRED, OPEN_FAILED, ProxyRefusal};
use super::session::command::Command;
use super::session::{AskHandle, RequestRef, Session};
use super::tool_report::Decided;
use crate::protocol::exact;
use crate::protocol::mrtr;
use crate::tools::report::LocalDecision;
use crate::tools::{Refusal, ToolAction, ToolCall};

/// What happens to one host `tools/call`.
pub(super) enum Gate {
    /// Forward it now.
    Pass,
    /// Answered here with this line for the host; never forwarded.
    Refused(Vec<u8>),
    /// Held for the person's answer.
    Ask,
}

/// Judges a `tools/call` whose tool is `tool` (`None`: its name cannot be read unambiguously,
/// so it is refused: the server might read another). `arguments` is the raw text of
/// `params.arguments`; `complete` whether the session speaks 2026-07-28.
pub(super) fn judge(
    ctx: &Context,
    s: &Session,
    id: &RawValue,
    tool: Option<&str>,
    arguments: Option<&str>,
    complete: bool,
) -> Gate {
    let Some(tool) = tool else {
        let refusal = CallFailure::UnreadableName.refusal();
        return Gate::Refused(result_line(id, &refusal.result(&ctx.server, "", complete)));
    };
    // Read when the tool was listed: a call never reads its entry again.
    let hints = s.tools.get(tool).map(|t| t.hints).unwrap_or_default();
    let judgement = ctx
        .policy
        .borrow()
        .judge(&ctx.server, tool, hints, chrono::Utc::now());
    let rule = judgement.by.name();
    let record = |decision| {
        ctx.tool_report.record(Decided {
            tool: tool.to_owned(),
            decision,
            rule: rule.clone(),
            arguments: arguments.map(Box::from),
            at: chrono::Utc::now(),
        });
    };
    match judgement.action {
        ToolAction::Allow => {
            record(LocalDecision::Allowed);
            Gate::Pass
        }
        ToolAction::Deny => {
            record(LocalDecision::Denied);
            let refusal = Refusal::Denied(rule.clone());
            Gate::Refused(result_line(
                id,
                &refusal.result(&ctx.server, tool, complete),
            ))
        }
        ToolAction::Ask => Gate::Ask,
    }
}

/// A JSON-RPC result line under the host's id.
pub(super) fn result_line(id: &RawValue, result: &Value) -> Vec<u8> {
    let raw = serde_json::value::to_raw_value(result).unwrap_or_else(|_| RawValue::NULL.to_owned());
    mrtr::result_line(id, &raw)
}

/// What the person's answer to a `tool_call` question says.
enum Answered {
    /// Forward the call with these arguments; the service's digest of the call accepted.
    Accept { arguments: Value, digest: String },
    /// Never forward it; tell the host why.
    Refuse(Refusal),
}

fn read_answer(response: &Value) -> Answered {
    if let Some(error) = response.get("error") {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default();
        return Answered::Refuse(if message.starts_with(EXPIRED) {
            Refusal::Expired
        } else if message.starts_with(OPEN_FAILED) {
            Refusal::Unreachable(message.to_owned())
        } else {
            Refusal::Failed(message.to_owned())
        });
    }
    let result = response.get("result").cloned().unwrap_or(Value::Null);
    match (
        result.get("action").and_then(Value::as_str),
        result.get("arguments"),
        result.get("callDigest").and_then(Value::as_str),
    ) {
        (Some("accept"), Some(arguments), Some(digest)) => Answered::Accept {
            arguments: arguments.clone(),
            digest: digest.to_owned(),
        },
        (Some("decline" | "cancel"), _, _) => Answered::Refuse(Refusal::Declined),
        _ => Answered::Refuse(CallFailure::UnreadableAnswer.refusal()),
    }
}

/// Asks the person about the held call `line` (the host request `key`), then forwards it or
/// answers the host.
pub(super) fn spawn_ask(
    ctx: &Context,
    key: RequestRef,
    tool: String,
    line: Vec<u8>,
    complete: bool,
) {
    let ctx = ctx.clone();
    tokio::spawn(async move { ask_call(&ctx, &key, &tool, line, complete).await });
}

async fn ask_call(ctx: &Context, key: &RequestRef, tool: &str, line: Vec<u8>, complete: bool) {
    let handle = Arc::new(AskHandle::default());
    let request = serde_json::from_slice::<Value>(&line)
        .ok()
        .filter(|_| exact::shown_exactly(&line));
    let Some(request) = request else {
        // Readable by names but not as a whole (a number out of range, or one the page would
        // show rounded while the server got it as written, or a duplicated member, whose
        // other copy a server may read): it cannot be shown as it is, so it is refused rather
        // than asked about.
        let refusal = CallFailure::UnreadableCall.refusal();
        refuse(ctx, key, tool, refusal, complete).await;
        return;
    };
    let Some((question, progress)) = question_for(ctx, key, tool, request, &handle).await else {
        forget(ctx, key).await;
        return;
    };
    let response = ctx.ask(&question, &handle, progress.as_ref()).await;
    let Some(response) = response else {
        // Withdrawn: the host cancelled or left, or the proxy is closing. Nothing is sent.
        forget(ctx, key).await;
        return;
    };
    match read_answer(&response) {
        Answered::Accept { arguments, digest } => {
            match forwarded_call(&line, &arguments, &digest) {
                Some(out) => forward(ctx, key, out).await,
                None => {
                    let refusal = CallFailure::NotTheCallSeen.refusal();
                    refuse(ctx, key, tool, refusal, complete).await;
                }
            }
        }
        Answered::Refuse(refusal) => refuse(ctx, key, tool, refusal, complete).await,
    }
}

/// The question for a held call, registered with its host request so a cancellation or the
/// proxy's exit withdraws it; `None` when the request is gone or withdrawn, or the proxy is
/// closing.
async fn question_for(
    ctx: &Context,
    key: &RequestRef,
    tool: &str,
    request: Value,
    handle: &Arc<AskHandle>,
) -> Option<(Question, Option<Progress>)> {
    let asking = ctx.session.asking(key, vec![handle.clone()]).await?;
    let question = Question {
        server: ctx.server.clone(),
        session: ctx.session_id.clone(),
        tool: Some(tool.to_owned()),
        protocol_version: asking.protocol_version,
        client_capabilities: asking.capabilities,
        request,
        tool_info: asking.tool_info,
    };
    let progress = asking.progress.map(|(token, counter)| Progress {
        to: ctx.to_host.clone(),
        token,
        counter,
    });
    Some((question, progress))
}

/// The line to forward: the held one when the person accepted it as it was, else the held one
/// with `params.arguments` replaced; `None` when what would go out is not the call whose
/// digest the service gave (the answer is then never used).
fn forwarded_call(line: &[u8], arguments: &Value, digest: &str) -> Option<Vec<u8>> {
    let mut request: Value = serde_json::from_slice(line).ok()?;
    let held = ToolCall::from_params(request.get("params")?).ok()?;
    if held.digest() == digest {
        return Some(line.to_vec());
    }
    let params = request.get_mut("params")?.as_object_mut()?;
    params.insert("arguments".into(), arguments.clone());
    let edited = ToolCall::from_params(request.get("params")?).ok()?;
    if edited.digest() != digest {
        return None;
    }
    let mut out = serde_json::to_vec(&request).ok()?;
    out.push(b'\n');
    Some(out)
}

/// Sends the accepted call to the server, once, unless the host cancelled meanwhile; the
/// server's response then reaches the host as any response does.
async fn forward(ctx: &Context, key: &RequestRef, out: Vec<u8>) {
    let out = Arc::new(out);
    let (host, line) = (key.clone(), out.clone());
    let forwarded = ctx
        .session
        .ask(|reply| Command::Forward { host, line, reply })
        .await
        .unwrap_or(false);
    if !forwarded {
        return;
    }
    let Some(to_server) = ctx.to_server.upgrade() else {
        return;
    };
    if to_server.send(out.to_vec().into()).await.is_err()
        && let Some(id) = ctx.session.finish(key).await
    {
        let _ = ctx
            .to_host
            .send(ProxyRefusal::ServerGone.line(&id).into())
            .await;
    }
}

async fn refuse(ctx: &Context, key: &RequestRef, tool: &str, refusal: Refusal, complete: bool) {
    let Some(id) = ctx.session.finish(key).await else {
        return;
    };
    let line = result_line(&id, &refusal.result(&ctx.server, tool, complete));
    let _ = ctx.to_host.send(line.into()).await;
}

/// Forgets the request without an answer.
async fn forget(ctx: &Context, key: &RequestRef) {
    let _ = ctx.session.finish(key).await;
}
