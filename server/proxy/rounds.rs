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

use super::Context;
use super::ask::{Progress, Question, ask};
use super::state::{AskHandle, HELD_FOR, Held, lock};
use crate::protocol::binding;
use crate::protocol::envelope::{Envelope, Judged};
use crate::protocol::jsonrpc::codes;
use crate::protocol::mrtr::{self, InputRequest, Members};

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
    /// Send this to the server under a new id and judge its response.
    Retry(Vec<u8>),
    /// The host's request is finished (answered, failed or withdrawn).
    Done,
}

/// Takes over the host request `host_key` whose response `response` asks for input, and sees
/// it through to the host's final answer.
pub(super) fn spawn(ctx: &Context, host_key: String, response: Vec<u8>) {
    let ctx = ctx.clone();
    tokio::spawn(async move { resolve(&ctx, &host_key, response).await });
}

async fn resolve(ctx: &Context, host_key: &str, mut response: Vec<u8>) {
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
                    fail(ctx, host_key, codes::INTERNAL_ERROR, &format!(
                        "the server asked for input {MAX_ROUNDS} times for one request; mcp-consent stopped asking the person"
                    )).await;
                    return;
                }
                input_round(ctx, host_key, &result).await
            }
            Reply::UrlRequired(error) => url_round(ctx, host_key, &error).await,
        };
        let Step::Retry(line) = step else { return };
        match send_retry(ctx, host_key, line).await {
            Some(next) => response = next,
            None => return,
        }
    }
}

/// One `InputRequiredResult`: ask the person, then either retry or hand the host its entries.
async fn input_round(ctx: &Context, host_key: &str, result: &RawValue) -> Step {
    let parsed = match mrtr::parse_input_required(result) {
        Ok(parsed) => parsed,
        Err(e) => {
            fail(
                ctx,
                host_key,
                codes::INTERNAL_ERROR,
                &format!("mcp-consent refused the server's request for input: {e}"),
            )
            .await;
            return Step::Done;
        }
    };
    let (asked, foreign): (Vec<InputRequest>, Vec<InputRequest>) = parsed
        .requests
        .into_iter()
        .partition(InputRequest::is_asked);
    if asked.len() > MAX_ASKED_ENTRIES {
        let message = format!(
            "the server asked for {} inputs at once; mcp-consent asks the person about at most {MAX_ASKED_ENTRIES}",
            asked.len()
        );
        fail(ctx, host_key, codes::INTERNAL_ERROR, &message).await;
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
            Answers::Withdrawn => return Step::Done,
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
    let Some(original) = original_line(ctx, host_key) else {
        return Step::Done;
    };
    let retry_id = json!(format!("mcp-consent-{}", uuid::Uuid::now_v7()));
    match mrtr::retry(
        &original,
        &retry_id,
        &answers,
        parsed.request_state.as_deref(),
    ) {
        Ok(line) => Step::Retry(line),
        Err(e) => {
            fail(
                ctx,
                host_key,
                codes::INTERNAL_ERROR,
                &format!("mcp-consent could not retry the request: {e}"),
            )
            .await;
            Step::Done
        }
    }
}

/// Hands the host the entries that are its to answer, under a `requestState` of the proxy's
/// own, and holds the person's `answers` for the retry of exactly this request.
async fn hand_to_host(
    ctx: &Context,
    host_key: &str,
    result: &RawValue,
    foreign: &[InputRequest],
    server_state: Option<Box<RawValue>>,
    answers: Members,
) {
    let keys: Vec<&str> = foreign.iter().map(|r| r.key.as_str()).collect();
    let token = binding::held_state(&uuid::Uuid::new_v4().simple().to_string());
    let handed = binding::handed_to_host(result, &keys, &token);
    let held = {
        let mut s = lock(&ctx.shared);
        let request = s.host_requests.get(host_key);
        let digest = request
            .and_then(|r| r.line.as_deref())
            .and_then(|line| binding::request_digest(line));
        match (request, digest) {
            (Some(request), Some(digest)) => {
                let id = request.id.clone();
                let held = Held {
                    method: request.method.clone(),
                    digest,
                    server_state,
                    foreign: keys.iter().map(|k| (*k).to_owned()).collect(),
                    answers,
                    since: std::time::Instant::now(),
                };
                s.held.retain(|_, h| h.since.elapsed() < HELD_FOR);
                s.held.insert(token.clone(), held);
                Some(id)
            }
            _ => None,
        }
    };
    match (held, handed) {
        (Some(id), Ok(handed)) => {
            finish_with(ctx, host_key, &mrtr::result_line(&id, &handed)).await;
        }
        (Some(_), Err(_)) => {
            lock(&ctx.shared).held.remove(&token);
            fail(
                ctx,
                host_key,
                codes::INTERNAL_ERROR,
                "mcp-consent could not pass on the server's request for input",
            )
            .await;
        }
        (None, _) => {}
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
async fn ask_all(ctx: &Context, host_key: &str, entries: &[InputRequest]) -> Answers {
    let Some((base, progress)) = question_base(ctx, host_key) else {
        return Answers::Withdrawn;
    };
    let handles: Vec<Arc<AskHandle>> = entries.iter().map(|_| Arc::default()).collect();
    {
        let mut s = lock(&ctx.shared);
        if s.closing {
            return Answers::Withdrawn;
        }
        let Some(request) = s.host_requests.get_mut(host_key) else {
            return Answers::Withdrawn;
        };
        if request.cancelled {
            return Answers::Withdrawn;
        }
        request.asks.extend(handles.iter().cloned());
    }
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
            let client = ctx.client.clone();
            let opens = ctx.opens.clone();
            let progress = progress.clone();
            let handle = handle.clone();
            let key = entry.key.clone();
            async move {
                let response = ask(&client, &opens, &question, &handle, progress.as_ref()).await;
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
    if let Some(request) = lock(&ctx.shared).host_requests.get_mut(host_key) {
        request
            .asks
            .retain(|a| !handles.iter().any(|h| Arc::ptr_eq(a, h)));
    }
    outcome.unwrap_or(Answers::All(answers))
}

/// The common part of the questions for one host request, and where progress goes.
fn question_base(ctx: &Context, host_key: &str) -> Option<(Question, Option<Progress>)> {
    let s = lock(&ctx.shared);
    let request = s.host_requests.get(host_key)?;
    let version = request
        .meta_version
        .clone()
        .unwrap_or_else(|| s.session_version());
    let question = Question {
        server: ctx.server.clone(),
        session: ctx.session.clone(),
        tool: request.tool.clone(),
        protocol_version: version,
        client_capabilities: request.capabilities.clone(),
        request: Value::Null,
        tool_info: None,
    };
    let progress = request.progress_token.clone().map(|token| Progress {
        to: ctx.to_host.clone(),
        token,
        counter: request.progress.clone(),
    });
    Some((question, progress))
}

/// A `-32042`: the URLs become questions; after consent and the server's completion notice the
/// request is retried, otherwise the host gets the error without the URLs.
async fn url_round(ctx: &Context, host_key: &str, error: &RawValue) -> Step {
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
    let waiters: Vec<Arc<Notify>> = {
        let mut s = lock(&ctx.shared);
        ids.iter()
            .map(|id| s.url_elicitations.entry(id.clone()).or_default().clone())
            .collect()
    };
    let entries: Vec<InputRequest> = elicitations
        .into_iter()
        .enumerate()
        .map(|(i, params)| InputRequest {
            key: i.to_string(),
            method: "elicitation/create".into(),
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
        Answers::Withdrawn => return Step::Done,
    };
    let completed = consented
        && tokio::time::timeout(
            URL_COMPLETION_WAIT,
            futures_util::future::join_all(waiters.iter().map(|w| w.notified())),
        )
        .await
        .is_ok();
    {
        let mut s = lock(&ctx.shared);
        for id in &ids {
            s.url_elicitations.remove(id);
        }
    }
    if !completed {
        finish_with_error(ctx, host_key, &stripped).await;
        return Step::Done;
    }
    let Some(original) = original_line(ctx, host_key) else {
        return Step::Done;
    };
    let retry_id = json!(format!("mcp-consent-{}", uuid::Uuid::now_v7()));
    let state = mrtr::request_state(&original).and_then(|s| RawValue::from_string(s).ok());
    match mrtr::retry(
        &original,
        &retry_id,
        &mrtr::input_responses(&original),
        state.as_deref(),
    ) {
        Ok(line) => Step::Retry(line),
        Err(_) => {
            finish_with_error(ctx, host_key, &stripped).await;
            Step::Done
        }
    }
}

/// Sends a proxy retry to the server and waits for its response; `None` when the server or
/// the host went away first.
async fn send_retry(ctx: &Context, host_key: &str, line: Vec<u8>) -> Option<Vec<u8>> {
    let key = match Envelope::parse(&line) {
        Judged::Message(m) => m.id_key()?,
        _ => return None,
    };
    let (tx, rx) = oneshot::channel();
    {
        let mut s = lock(&ctx.shared);
        let request = s.host_requests.get_mut(host_key)?;
        if request.cancelled {
            s.host_requests.remove(host_key);
            return None;
        }
        request.retry_id = Some(key.clone());
        s.retries.insert(key, tx);
    }
    ctx.to_server.upgrade()?.send(line).await.ok()?;
    let Ok(response) = rx.await else {
        // The server's answer could not be judged and was dropped, or the server left.
        fail(
            ctx,
            host_key,
            codes::INTERNAL_ERROR,
            "mcp-consent dropped the server's response: it could not be read safely",
        )
        .await;
        return None;
    };
    let cancelled = {
        let mut s = lock(&ctx.shared);
        match s.host_requests.get_mut(host_key) {
            Some(request) => {
                request.retry_id = None;
                request.cancelled
            }
            None => true,
        }
    };
    if cancelled {
        lock(&ctx.shared).host_requests.remove(host_key);
        return None;
    }
    Some(response)
}

fn original_line(ctx: &Context, host_key: &str) -> Option<Arc<Vec<u8>>> {
    lock(&ctx.shared)
        .host_requests
        .get(host_key)
        .and_then(|r| r.line.clone())
}

/// Gives the host `response` under its own id and forgets the request.
async fn finish_with(ctx: &Context, host_key: &str, response: &[u8]) {
    let Some(request) = lock(&ctx.shared).host_requests.remove(host_key) else {
        return;
    };
    if request.cancelled {
        return;
    }
    let line = mrtr::with_id(response, &request.id).unwrap_or_else(|_| {
        mrtr::error_line(
            &request.id,
            &mrtr::error_object(
                codes::INTERNAL_ERROR,
                "mcp-consent could not read the server's response",
            ),
        )
    });
    send_host(ctx, line).await;
}

async fn finish_with_error(ctx: &Context, host_key: &str, error: &Value) {
    let Some(request) = lock(&ctx.shared).host_requests.remove(host_key) else {
        return;
    };
    if request.cancelled {
        return;
    }
    send_host(ctx, mrtr::error_line(&request.id, error)).await;
}

async fn fail(ctx: &Context, host_key: &str, code: i64, message: &str) {
    finish_with_error(ctx, host_key, &mrtr::error_object(code, message)).await;
}

async fn send_host(ctx: &Context, line: Vec<u8>) {
    // The host may be gone; then nobody waits for this line.
    let _ = ctx.to_host.send(line).await;
}
