//! A host request the server answered by asking for input: the 2026-07-28
//! `InputRequiredResult` (MRTR) and the 2025-11-25 `-32042` URL-elicitation-required error.
//! Neither reaches the host as it is (docs/design.md §proxy; docs/protocol.md G17, SA20, EU7,
//! EU8, TV-S22, TV-E24):
//!
//! - each sampling/elicitation entry of `inputRequests` becomes a question; when all are
//!   answered the original request is re-sent under a new id of the proxy's own with
//!   `inputResponses` and `requestState` echoed exactly, again while the server asks again (at
//!   most [`MAX_ROUNDS`] times), and the final response goes to the host under its own id;
//! - entries the proxy does not answer (e.g. `roots/list`) still go to the host, and the host's
//!   retry is completed with the person's answers ([`super::host`]);
//! - a rejected sampling entry, an expired question or a malformed entry ends the host's
//!   request with an honest error;
//! - the URLs of a `-32042` become URL questions; once the server reports every elicitation
//!   complete the request is retried (the spec's MAY), otherwise the host gets the error
//!   without the URLs.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::{Notify, oneshot};

use super::ask::{Progress, Question};
use super::context::Context;
use super::refusal::ProxyRefusal;
use super::session::command::{Command, Holding, ToHold};
use super::session::{AskHandle, RequestRef};
use crate::protocol::binding;
use crate::protocol::envelope::{Envelope, Judged};
use crate::protocol::method::Method;
use crate::protocol::mrtr::{self, InputRequest, Members};
use crate::protocol::request_key::RequestKey;

/// How many times one host request may be asked for input before it fails (each round waits
/// for a person, so a server that keeps asking is a fault, not progress).
pub const MAX_ROUNDS: u32 = 16;
/// How long the proxy waits for a server to report a URL elicitation complete after the person
/// consented, before the host gets the `-32042` error without the URLs.
pub const URL_COMPLETION_WAIT: Duration = Duration::from_secs(600);
/// The most entries one `InputRequiredResult` may ask the person about; more is refused (each
/// is a question a person must read).
pub const MAX_ASKED_ENTRIES: usize = 32;

/// What a response to a host request (or to a proxy retry of it) asks of the proxy.
enum Reply {
    /// A result with `inputRequests`.
    InputRequired(Box<RawValue>),
    /// A `-32042` error.
    UrlRequired(Box<RawValue>),
    /// Anything else: the host's answer.
    Final,
}

fn classify(line: &[u8]) -> Reply {
    match Envelope::parse(line) {
        Judged::Message(msg) => classify_message(&msg),
        _ => Reply::Final,
    }
}

fn classify_message(msg: &Envelope<'_>) -> Reply {
    if let Some(result) = msg.result
        && result_asks_input(msg)
    {
        return Reply::InputRequired(owned(result));
    }
    if let Some(error) = msg.error
        && mrtr::is_url_elicitation_required(error)
    {
        return Reply::UrlRequired(owned(error));
    }
    Reply::Final
}

/// A member's text (valid JSON: the envelope was read) as an owned raw value. Were it not
/// valid, `null` goes on, which no round accepts: the request fails rather than pass.
fn owned(raw: &str) -> Box<RawValue> {
    RawValue::from_string(raw.to_owned()).unwrap_or_else(|_| RawValue::NULL.to_owned())
}

/// Whether a server response to a host request (its envelope, already judged) must go
/// through [`resolve`] instead of straight to the host. Reads only the head of the result or
/// error: nothing large is copied unless the answer is yes.
pub(super) fn needs_resolution(msg: &Envelope<'_>) -> bool {
    result_asks_input(msg) || msg.error.is_some_and(mrtr::is_url_elicitation_required)
}

/// Whether the envelope's `result` asks for input: by its head as read with the line, else
/// read now.
fn result_asks_input(msg: &Envelope<'_>) -> bool {
    match &msg.result_head {
        Some(head) => mrtr::head_asks_for_input(Ok(head)),
        None => msg.result.is_some_and(mrtr::is_input_required),
    }
}

/// How one round ended.
enum Step {
    /// Send this to the server under the proxy's id and judge its response.
    Retry(RequestKey, Vec<u8>),
    /// The host's request is finished (answered, failed or withdrawn).
    Done,
}

/// Takes over the host request `host_key` whose response `response` asks for input, and sees
/// it through to the host's final answer.
pub(super) fn spawn(ctx: &Context, host_key: RequestRef, response: Vec<u8>) {
    let ctx = ctx.clone();
    tokio::spawn(async move { resolve(&ctx, &host_key, response).await });
}

async fn resolve(ctx: &Context, host_key: &RequestRef, mut response: Vec<u8>) {
    let mut round = 0;
    loop {
        let step = match classify(&response) {
            Reply::Final => {
                finish_with(ctx, host_key, &response).await;
                return;
            }
            Reply::InputRequired(result) => {
                round += 1;
                if round > MAX_ROUNDS {
                    fail(ctx, host_key, ProxyRefusal::TooManyRounds(MAX_ROUNDS)).await;
                    return;
                }
                input_round(ctx, host_key, &result).await
            }
            Reply::UrlRequired(error) => url_round(ctx, host_key, &error).await,
        };
        let Step::Retry(retry, line) = step else {
            return;
        };
        match send_retry(ctx, host_key, retry, line).await {
            Some(next) => response = next,
            None => return,
        }
    }
}

/// One `InputRequiredResult`: ask the person, then either retry or hand the host its entries.
async fn input_round(ctx: &Context, host_key: &RequestRef, result: &RawValue) -> Step {
    let parsed = match mrtr::parse_input_required(result) {
        Ok(parsed) => parsed,
        Err(e) => {
            fail(ctx, host_key, ProxyRefusal::BadInputRequest(e.to_string())).await;
            return Step::Done;
        }
    };
    let (asked, foreign): (Vec<InputRequest>, Vec<InputRequest>) = parsed
        .requests
        .into_iter()
        .partition(InputRequest::is_asked);
    if asked.len() > MAX_ASKED_ENTRIES {
        let refusal = ProxyRefusal::TooManyEntries {
            asked: asked.len(),
            most: MAX_ASKED_ENTRIES,
        };
        fail(ctx, host_key, refusal).await;
        return Step::Done;
    }
    let answers = if asked.is_empty() {
        Members::new()
    } else {
        match ask_all(ctx, host_key, &asked).await {
            Answers::All(answers) => answers,
            Answers::Refused(error) => {
                finish_with_error(ctx, host_key, &error).await;
                return Step::Done;
            }
            Answers::Withdrawn => return withdrawn(ctx, host_key).await,
        }
    };
    if !foreign.is_empty() {
        // The host answers the rest; its retry of this very request gets the person's answers
        // added (bound by a state of the proxy's own and the request's digest).
        hand_to_host(
            ctx,
            host_key,
            result,
            &foreign,
            parsed.request_state,
            answers,
        )
        .await;
        return Step::Done;
    }
    let Some(original) = original_line(ctx, host_key).await else {
        return Step::Done;
    };
    let retry_id = RequestKey::proxy_own();
    match mrtr::retry(
        &original,
        &retry_id.to_value(),
        &answers,
        parsed.request_state.as_deref(),
    ) {
        Ok(line) => Step::Retry(retry_id, line),
        Err(e) => {
            fail(ctx, host_key, ProxyRefusal::CannotRetry(e.to_string())).await;
            Step::Done
        }
    }
}

/// Hands the host the entries that are its to answer, under a `requestState` of the proxy's
/// own, and holds the person's `answers` for the retry of exactly this request.
async fn hand_to_host(
    ctx: &Context,
    host_key: &RequestRef,
    result: &RawValue,
    foreign: &[InputRequest],
    server_state: Option<Box<RawValue>>,
    answers: Members,
) {
    let keys: Vec<&str> = foreign.iter().map(|r| r.key.as_str()).collect();
    let token = binding::held_state(&uuid::Uuid::new_v4().simple().to_string());
    let Ok(handed) = binding::handed_to_host(result, &keys, &token) else {
        fail(ctx, host_key, ProxyRefusal::CannotHandOver).await;
        return;
    };
    let hold = ToHold {
        token,
        server_state,
        foreign: keys.iter().map(|k| (*k).to_owned()).collect(),
        answers,
    };
    let host = host_key.clone();
    let holding = ctx
        .session
        .ask(|reply| Command::Hold { host, hold, reply })
        .await
        .flatten();
    match holding {
        Some(Holding::Held(id)) => send_host(ctx, mrtr::result_line(&id, &handed)).await,
        Some(Holding::Unbindable(id)) => {
            tracing::warn!("a round for the host could not be bound to its request");
            send_host(ctx, ProxyRefusal::UnbindableRound.line(&id)).await;
        }
        None => {}
    }
}

/// The outcome of asking every entry of one round.
enum Answers {
    /// Every entry answered: key → the `inputResponses` value.
    All(Members),
    /// One entry ended in an error (a rejected sampling request, expiry, a malformed entry):
    /// the JSON-RPC error object for the host.
    Refused(Value),
    /// The host cancelled, or the proxy is closing.
    Withdrawn,
}

/// Asks the person about each entry, all at once; the first refusal withdraws the rest.
async fn ask_all(ctx: &Context, host_key: &RequestRef, entries: &[InputRequest]) -> Answers {
    let handles: Vec<Arc<AskHandle>> = entries.iter().map(|_| Arc::default()).collect();
    let Some(asking) = ctx.session.asking(host_key, handles.clone()).await else {
        return Answers::Withdrawn;
    };
    let base = Question {
        server: ctx.server.clone(),
        session: ctx.session_id.clone(),
        tool: asking.tool,
        protocol_version: asking.protocol_version,
        client_capabilities: asking.capabilities,
        request: Value::Null,
        tool_info: None,
    };
    let progress = asking.progress.map(|(token, counter)| Progress {
        to: ctx.to_host.clone(),
        token,
        counter,
    });
    let mut pending: FuturesUnordered<_> = entries
        .iter()
        .zip(&handles)
        .map(|(entry, handle)| {
            let mut question = base.clone();
            question.request = json!({
                "jsonrpc": "2.0",
                "id": format!("mcp-consent-input-{}", uuid::Uuid::now_v7()),
                "method": entry.method,
                "params": entry.params,
            });
            let progress = &progress;
            let key = entry.key.clone();
            async move {
                let response = ctx.ask(&question, handle, progress.as_ref()).await;
                (key, response)
            }
        })
        .collect();
    let mut answers = Members::new();
    let mut outcome = None;
    while let Some((key, response)) = pending.next().await {
        match response {
            None => {
                outcome.get_or_insert(Answers::Withdrawn);
            }
            Some(mut response) => {
                if let Some(error) = response.get_mut("error").map(Value::take) {
                    outcome.get_or_insert(Answers::Refused(error));
                } else if let Some(result) = response.get("result") {
                    answers.insert(
                        key,
                        serde_json::value::to_raw_value(result)
                            .unwrap_or_else(|_| RawValue::NULL.to_owned()),
                    );
                }
            }
        }
        if outcome.is_some() {
            for handle in &handles {
                handle.cancel();
            }
        }
    }
    drop(pending);
    let host = host_key.clone();
    ctx.session
        .send(Command::AsksDone {
            host,
            asks: handles,
        })
        .await;
    outcome.unwrap_or(Answers::All(answers))
}

/// A `-32042`: the URLs become questions; after consent and the server's completion notice the
/// request is retried, otherwise the host gets the error without the URLs.
async fn url_round(ctx: &Context, host_key: &RequestRef, error: &RawValue) -> Step {
    let stripped = mrtr::without_elicitations(error.get());
    let elicitations = mrtr::required_url_elicitations(error);
    let ids: Option<Vec<String>> = elicitations
        .iter()
        .map(|e| e.get("elicitationId")?.as_str().map(str::to_owned))
        .collect();
    let Some(ids) = ids.filter(|ids| !ids.is_empty()) else {
        finish_with_error(ctx, host_key, &stripped).await;
        return Step::Done;
    };
    let watch = ids.clone();
    let waiters: Vec<Arc<Notify>> = ctx
        .session
        .ask(|reply| Command::WatchUrls { ids: watch, reply })
        .await
        .unwrap_or_default();
    let entries: Vec<InputRequest> = elicitations
        .into_iter()
        .enumerate()
        .map(|(i, params)| InputRequest {
            key: i.to_string(),
            method: Method::Elicit.name().unwrap_or_default().into(),
            params,
        })
        .collect();
    let consented = match ask_all(ctx, host_key, &entries).await {
        Answers::All(answers) => answers.values().all(|a| {
            serde_json::from_str::<Value>(a.get())
                .ok()
                .and_then(|v| {
                    v.get("action")
                        .and_then(Value::as_str)
                        .map(|s| s == "accept")
                })
                .unwrap_or(false)
        }),
        Answers::Refused(_) => false,
        Answers::Withdrawn => return withdrawn(ctx, host_key).await,
    };
    let completed = consented
        && !waiters.is_empty()
        && tokio::time::timeout(
            URL_COMPLETION_WAIT,
            futures_util::future::join_all(waiters.iter().map(|w| w.notified())),
        )
        .await
        .is_ok();
    ctx.session.send(Command::UnwatchUrls { ids }).await;
    if !completed {
        finish_with_error(ctx, host_key, &stripped).await;
        return Step::Done;
    }
    let Some(original) = original_line(ctx, host_key).await else {
        return Step::Done;
    };
    let retry_id = RequestKey::proxy_own();
    let state = mrtr::request_state(&original).and_then(|s| RawValue::from_string(s).ok());
    match mrtr::retry(
        &original,
        &retry_id.to_value(),
        &mrtr::input_responses(&original),
        state.as_deref(),
    ) {
        Ok(line) => Step::Retry(retry_id, line),
        Err(_) => {
            finish_with_error(ctx, host_key, &stripped).await;
            Step::Done
        }
    }
}

/// Sends the proxy's retry `retry` to the server and waits for its response; `None` when the
/// server or the host went away first.
async fn send_retry(
    ctx: &Context,
    host_key: &RequestRef,
    retry: RequestKey,
    line: Vec<u8>,
) -> Option<Vec<u8>> {
    let (waiter, response) = oneshot::channel();
    let host = host_key.clone();
    let sent = ctx
        .session
        .ask(|reply| Command::Retrying {
            host,
            retry,
            waiter,
            reply,
        })
        .await?;
    if !sent {
        return None;
    }
    ctx.to_server.upgrade()?.send(line.into()).await.ok()?;
    let Ok(response) = response.await else {
        // The server's answer could not be judged and was dropped, or the server left.
        fail(ctx, host_key, ProxyRefusal::DroppedResponse).await;
        return None;
    };
    let host = host_key.clone();
    let wanted = ctx
        .session
        .ask(|reply| Command::Retried { host, reply })
        .await?;
    wanted.then_some(response)
}

async fn original_line(ctx: &Context, host_key: &RequestRef) -> Option<Arc<Vec<u8>>> {
    let host = host_key.clone();
    ctx.session
        .ask(|reply| Command::Line { host, reply })
        .await
        .flatten()
}

/// The host request is over without an answer (withdrawn): it is forgotten.
async fn withdrawn(ctx: &Context, host_key: &RequestRef) -> Step {
    let _ = ctx.session.finish(host_key).await;
    Step::Done
}

/// Gives the host `response` under its own id and forgets the request.
async fn finish_with(ctx: &Context, host_key: &RequestRef, response: &[u8]) {
    let Some(id) = ctx.session.finish(host_key).await else {
        return;
    };
    let line =
        mrtr::with_id(response, &id).unwrap_or_else(|_| ProxyRefusal::UnreadableResponse.line(&id));
    send_host(ctx, line).await;
}

async fn finish_with_error(ctx: &Context, host_key: &RequestRef, error: &Value) {
    let Some(id) = ctx.session.finish(host_key).await else {
        return;
    };
    send_host(ctx, mrtr::error_line(&id, error)).await;
}

async fn fail(ctx: &Context, host_key: &RequestRef, refusal: ProxyRefusal) {
    finish_with_error(ctx, host_key, &refusal.error()).await;
}

async fn send_host(ctx: &Context, line: Vec<u8>) {
    // The host may be gone; then nobody waits for this line.
    let _ = ctx.to_host.send(line.into()).await;
}
