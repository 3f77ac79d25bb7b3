//! The stdio MCP proxy: host ⇄ proxy on stdin/stdout, proxy ⇄ server as a child process.
//!
//! - `initialize` from the host gets the capabilities the proxy answers for
//!   ([`forward_capabilities`]); the server's `InitializeResult.protocolVersion` sets the era.
//! - The server's `sampling/createMessage` and `elicitation/create` become questions on the
//!   service; the response goes back to the server under the same id; the host never sees
//!   them.
//! - `notifications/cancelled` for an intercepted id withdraws its question and is not
//!   forwarded; `notifications/elicitation/complete` for a URL elicitation the proxy opened marks
//!   it complete and is not forwarded.
//! - Every other line passes through byte for byte, in order, one line at a time (including
//!   lines that are not JSON and requests the proxy does not know).

use std::collections::{HashMap, HashSet};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use chrono::{DateTime, Utc};
use indexmap::IndexMap;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;
use tokio::sync::{Notify, mpsc};

use crate::client::{ClientError, Opened, ServiceClient, Waited};
use crate::protocol::jsonrpc::{RpcError, error_response};

/// How long one long-poll waits, in seconds; also the progress-notification period.
const WAIT_SECS: u64 = 10;
/// Slack after a question's deadline before the proxy gives up on an unreachable service.
const DEADLINE_GRACE: Duration = Duration::from_secs(30);

/// Errors that stop the proxy.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// No server command was given.
    #[error("no server command given (usage: mcp-consent proxy --name NAME -- COMMAND [ARGS...])")]
    NoCommand,
    /// The server could not be started.
    #[error("cannot start the server {command:?}")]
    Spawn {
        /// The command.
        command: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Reading or writing a stream failed.
    #[error("stdio failed")]
    Io(#[from] std::io::Error),
}

/// The capabilities to forward for a host's `initialize`: adds what the proxy answers for and
/// the host lacks. For 2025-11-25 and later, `sampling.tools` and `elicitation.form`/`url`;
/// before, plain `sampling`/`elicitation` (sub-capabilities do not exist there). Never
/// `sampling.context` (the proxy cannot include context, so a host's is removed), and never
/// `tasks.requests.sampling`/`elicitation` (the proxy answers without tasks). Source: MCP
/// 2025-11-25 `schema.ts` `ClientCapabilities`; DESIGN.md §proxy.
pub fn forward_capabilities(requested_version: &str, capabilities: &Value) -> Value {
    let mut caps = capabilities.as_object().cloned().unwrap_or_default();
    let modern = requested_version >= "2025-11-25";
    let object = |v: &mut Value| {
        if !v.is_object() {
            *v = json!({});
        }
    };
    let sampling = caps.entry("sampling").or_insert_with(|| json!({}));
    object(sampling);
    if let Some(s) = sampling.as_object_mut() {
        s.remove("context");
        if modern {
            s.entry("tools").or_insert_with(|| json!({}));
        }
    }
    let elicitation = caps.entry("elicitation").or_insert_with(|| json!({}));
    object(elicitation);
    if let Some(e) = elicitation.as_object_mut()
        && modern
    {
        e.entry("form").or_insert_with(|| json!({}));
        e.entry("url").or_insert_with(|| json!({}));
    }
    if let Some(requests) = caps
        .get_mut("tasks")
        .and_then(|t| t.get_mut("requests"))
        .and_then(Value::as_object_mut)
    {
        requests.remove("sampling");
        requests.remove("elicitation");
    }
    Value::Object(caps)
}

/// One intercepted server request still being answered.
struct Intercept {
    cancelled: Arc<AtomicBool>,
    wake: Arc<Notify>,
    /// The question id once the service opened it.
    question: Arc<OnceLock<String>>,
}

#[derive(Default)]
struct Shared {
    /// JSON text of the host's `initialize` id, until its result is seen.
    initialize_id: Option<String>,
    /// The version the host asked for in `initialize`.
    requested_version: Option<String>,
    /// The server's negotiated `protocolVersion`.
    negotiated_version: Option<String>,
    /// Capabilities as forwarded to the server.
    capabilities: Value,
    /// In-flight host `tools/call`s: id JSON → tool name.
    tool_calls: HashMap<String, String>,
    /// In-flight intercepted requests: id JSON → handle.
    intercepts: HashMap<String, Intercept>,
    /// `elicitationId`s of URL elicitations this proxy opened.
    url_elicitations: HashSet<String>,
}

type SharedState = Arc<Mutex<Shared>>;

fn lock(shared: &SharedState) -> MutexGuard<'_, Shared> {
    // A panic while holding this lock cannot leave it half-updated in a way that matters more
    // than losing the proxy, so a poisoned lock is used as is.
    shared
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn id_key(id: &Value) -> String {
    id.to_string()
}

/// Settings of one proxy run.
#[derive(Debug, Clone)]
pub struct ProxyOptions {
    /// The server's name shown to the person (`--name`).
    pub name: String,
    /// The server command and its arguments.
    pub command: Vec<String>,
}

/// Runs the proxy until either side closes; returns the server's exit code.
///
/// # Errors
/// [`ProxyError`] when the server cannot be started or stdio fails.
pub async fn run(options: ProxyOptions, client: ServiceClient) -> Result<i32, ProxyError> {
    let (program, args) = options.command.split_first().ok_or(ProxyError::NoCommand)?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|source| ProxyError::Spawn {
            command: options.command.join(" "),
            source,
        })?;
    let (Some(mut server_in), Some(server_out)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(ProxyError::Io(std::io::Error::other(
            "server stdio not piped",
        )));
    };

    let shared: SharedState = Arc::default();
    let session = uuid::Uuid::now_v7().to_string();
    let (to_server, mut to_server_rx) = mpsc::channel::<Vec<u8>>(64);

    // One writer to the server, so lines from the host and answers never interleave.
    let writer = tokio::spawn(async move {
        while let Some(line) = to_server_rx.recv().await {
            if server_in.write_all(&line).await.is_err() || server_in.flush().await.is_err() {
                break;
            }
        }
    });

    let host_shared = shared.clone();
    let host_tx = to_server.clone();
    tokio::spawn(async move {
        let mut reader = BufReader::new(tokio::io::stdin());
        let mut line = Vec::new();
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let out = from_host(&host_shared, &line);
                    if host_tx.send(out).await.is_err() {
                        break;
                    }
                }
            }
        }
        // Dropping the sender closes the server's stdin once queued lines are written.
    });

    let mut stdout = tokio::io::stdout();
    let mut reader = BufReader::new(server_out);
    let mut line = Vec::new();
    let ctx = Context {
        client,
        shared: shared.clone(),
        to_server: to_server.downgrade(),
        server: options.name,
        session,
    };
    drop(to_server);
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).await? == 0 {
            break;
        }
        if from_server(&ctx, &line) {
            stdout.write_all(&line).await?;
            stdout.flush().await?;
        }
    }
    // The server is gone: nobody can use an answer any more, so its open questions are
    // withdrawn rather than left for the person to answer in vain.
    withdraw_all(&ctx).await;
    drop(ctx);
    writer.abort();
    let status = child.wait().await?;
    Ok(status.code().unwrap_or(1))
}

/// Withdraws every question still open for this server (bounded to a few seconds).
async fn withdraw_all(ctx: &Context) {
    let questions: Vec<String> = {
        let mut s = lock(&ctx.shared);
        s.intercepts
            .drain()
            .filter_map(|(_, i)| {
                i.cancelled.store(true, Ordering::SeqCst);
                i.wake.notify_one();
                i.question.get().cloned()
            })
            .collect()
    };
    let cancels = questions.iter().map(|q| ctx.client.cancel(q));
    if tokio::time::timeout(
        Duration::from_secs(5),
        futures_util::future::join_all(cancels),
    )
    .await
    .is_err()
    {
        tracing::warn!("could not withdraw every open question before exiting");
    }
}

/// An `initialize` line with its `params.capabilities` replaced by [`forward_capabilities`];
/// every other member keeps its exact text (numbers, escapes), only the whitespace between
/// members may change. Returns the line, the requested version and the forwarded capabilities.
fn rewrite_initialize(line: &[u8]) -> Option<(Vec<u8>, String, Value)> {
    type Members = IndexMap<String, Box<RawValue>>;
    let mut top: Members = serde_json::from_slice(line).ok()?;
    let mut params: Members = serde_json::from_str(top.get("params")?.get()).ok()?;
    let version = params
        .get("protocolVersion")
        .and_then(|v| serde_json::from_str::<String>(v.get()).ok())
        .unwrap_or_else(|| "2025-06-18".to_owned());
    let declared: Value = match params.get("capabilities") {
        Some(raw) => serde_json::from_str(raw.get()).ok()?,
        None => Value::Null,
    };
    let caps = forward_capabilities(&version, &declared);
    params.insert(
        "capabilities".into(),
        RawValue::from_string(caps.to_string()).ok()?,
    );
    top.insert(
        "params".into(),
        RawValue::from_string(serde_json::to_string(&params).ok()?).ok()?,
    );
    let mut out = serde_json::to_vec(&top).ok()?;
    out.push(b'\n');
    Some((out, version, caps))
}

/// Handles one line from the host; returns the bytes to send to the server.
fn from_host(shared: &SharedState, line: &[u8]) -> Vec<u8> {
    let Ok(Value::Object(msg)) = serde_json::from_slice::<Value>(line) else {
        return line.to_vec();
    };
    let method = msg
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let id = msg.get("id").cloned();
    match (method.as_str(), id) {
        ("initialize", Some(id)) => match rewrite_initialize(line) {
            Some((out, version, caps)) => {
                let mut s = lock(shared);
                s.initialize_id = Some(id_key(&id));
                s.requested_version = Some(version);
                s.capabilities = caps;
                out
            }
            None => line.to_vec(),
        },
        ("tools/call", Some(id)) => {
            if let Some(name) = msg
                .get("params")
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
            {
                lock(shared).tool_calls.insert(id_key(&id), name.to_owned());
            }
            line.to_vec()
        }
        _ => line.to_vec(),
    }
}

struct Context {
    client: ServiceClient,
    shared: SharedState,
    /// Weak, so the server's stdin closes once the host has gone and no answer is pending.
    to_server: mpsc::WeakSender<Vec<u8>>,
    server: String,
    session: String,
}

/// Handles one line from the server; returns whether to pass it to the host.
fn from_server(ctx: &Context, line: &[u8]) -> bool {
    let Ok(Value::Object(msg)) = serde_json::from_slice::<Value>(line) else {
        return true;
    };
    let method = msg.get("method").and_then(Value::as_str);
    let id = msg.get("id");
    match (method, id) {
        (Some("sampling/createMessage" | "elicitation/create"), Some(id)) => {
            intercept(ctx, id.clone(), Value::Object(msg.clone()));
            false
        }
        (Some("notifications/cancelled"), None) => {
            let Some(request_id) = msg.get("params").and_then(|p| p.get("requestId")) else {
                return true;
            };
            match lock(&ctx.shared).intercepts.remove(&id_key(request_id)) {
                Some(intercept) => {
                    intercept.cancelled.store(true, Ordering::SeqCst);
                    intercept.wake.notify_one();
                    false
                }
                None => true,
            }
        }
        (Some("notifications/elicitation/complete"), None) => {
            let Some(eid) = msg
                .get("params")
                .and_then(|p| p.get("elicitationId"))
                .and_then(Value::as_str)
            else {
                return true;
            };
            if !lock(&ctx.shared).url_elicitations.remove(eid) {
                return true;
            }
            let client = ctx.client.clone();
            let eid = eid.to_owned();
            tokio::spawn(async move {
                if let Err(e) = client.complete(&eid).await {
                    tracing::warn!(error = %e, "could not mark a URL elicitation complete");
                }
            });
            false
        }
        (None, Some(id)) => {
            let key = id_key(id);
            let mut s = lock(&ctx.shared);
            if s.initialize_id.as_deref() == Some(key.as_str()) {
                s.initialize_id = None;
                s.negotiated_version = msg
                    .get("result")
                    .and_then(|r| r.get("protocolVersion"))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
            }
            s.tool_calls.remove(&key);
            true
        }
        _ => true,
    }
}

fn intercept(ctx: &Context, id: Value, request: Value) {
    let Some(to_server) = ctx.to_server.upgrade() else {
        return;
    };
    let intercept = Intercept {
        cancelled: Arc::new(AtomicBool::new(false)),
        wake: Arc::new(Notify::new()),
        question: Arc::new(OnceLock::new()),
    };
    let (cancelled, wake, question) = (
        intercept.cancelled.clone(),
        intercept.wake.clone(),
        intercept.question.clone(),
    );
    let body = {
        let mut s = lock(&ctx.shared);
        // A request id still in flight must not be reused (MCP G1). Answering the duplicate would
        // give the server two responses for one id, one of them to a request nobody reviewed,
        // so it is dropped.
        if s.intercepts.contains_key(&id_key(&id)) {
            tracing::warn!(
                "the server reused the id of a pending request; the duplicate is ignored"
            );
            return;
        }
        s.intercepts.insert(id_key(&id), intercept);
        if let Some(eid) = request
            .pointer("/params/elicitationId")
            .and_then(Value::as_str)
        {
            s.url_elicitations.insert(eid.to_owned());
        }
        // With a single tool call in flight, that call is the one that asked.
        let tool = if s.tool_calls.len() == 1 {
            s.tool_calls.values().next().cloned()
        } else {
            None
        };
        let version = s
            .negotiated_version
            .clone()
            .or_else(|| s.requested_version.clone())
            .unwrap_or_else(|| "2025-06-18".to_owned());
        json!({
            "server": ctx.server,
            "session": ctx.session,
            "tool": tool,
            "protocolVersion": version,
            "clientCapabilities": s.capabilities,
            "request": request,
        })
    };
    let client = ctx.client.clone();
    let shared = ctx.shared.clone();
    tokio::spawn(async move {
        let response = answer(
            &client, &to_server, &body, &id, &cancelled, &wake, &question,
        )
        .await;
        lock(&shared).intercepts.remove(&id_key(&id));
        if let Some(response) = response {
            let mut line = serde_json::to_vec(&response).unwrap_or_default();
            line.push(b'\n');
            let _ = to_server.send(line).await;
        }
    });
}

/// Opens the question and waits for its response; `None` when there is nothing to send (the
/// server withdrew the request).
async fn answer(
    client: &ServiceClient,
    to_server: &mpsc::Sender<Vec<u8>>,
    body: &Value,
    id: &Value,
    cancelled: &AtomicBool,
    wake: &Notify,
    opened: &OnceLock<String>,
) -> Option<Value> {
    let fail = |message: String| Some(error_response(Some(id), &RpcError::internal(message)));
    let (question, expires_at) = match client.open(body).await {
        Ok(Opened::Response(response)) => return Some(response),
        Ok(Opened::Question { id, expires_at }) => {
            let _ = opened.set(id.clone());
            (id, expires_at)
        }
        Err(ClientError::TooLarge) => {
            return Some(error_response(
                Some(id),
                &RpcError::invalid_params("request too large"),
            ));
        }
        Err(e) => {
            return fail(format!(
                "mcp-consent could not open a question for this request: {e}"
            ));
        }
    };
    let deadline = expires_at
        .and_then(|t| DateTime::parse_from_rfc3339(&t).ok())
        .map(|t| t.with_timezone(&Utc));
    let progress_token = body.pointer("/request/params/_meta/progressToken").cloned();
    let mut progress = 0u64;
    let mut backoff = Duration::from_millis(200);
    loop {
        if cancelled.load(Ordering::SeqCst) {
            if let Err(e) = client.cancel(&question).await {
                tracing::warn!(error = %e, "could not withdraw a cancelled question");
            }
            return None;
        }
        let waited = tokio::select! {
            r = client.wait(&question, WAIT_SECS) => r,
            () = wake.notified() => continue,
        };
        match waited {
            Ok(Waited::Response(response)) => return Some(response),
            Ok(Waited::Closed) => return None,
            Ok(Waited::Pending) => {
                backoff = Duration::from_millis(200);
                if let Some(token) = &progress_token {
                    progress += 1;
                    let note = json!({
                        "jsonrpc": "2.0",
                        "method": "notifications/progress",
                        "params": {"progressToken": token, "progress": progress, "message": "Awaiting user review"},
                    });
                    let mut line = serde_json::to_vec(&note).unwrap_or_default();
                    line.push(b'\n');
                    let _ = to_server.send(line).await;
                }
            }
            Err(ClientError::NotFound) => {
                return fail(format!(
                    "question {question} vanished from the mcp-consent service"
                ));
            }
            Err(e) => {
                // The service may be restarting; the question is stored, so keep waiting until
                // its deadline has clearly passed.
                if deadline.is_some_and(|d| Utc::now() > d + DEADLINE_GRACE) {
                    return fail(format!(
                        "Request expired: no answer before the deadline, and the mcp-consent service is unreachable ({e})"
                    ));
                }
                tracing::warn!(error = %e, "waiting for the service");
                tokio::select! {
                    () = tokio::time::sleep(backoff) => {}
                    () = wake.notified() => {}
                }
                backoff = (backoff * 2).min(Duration::from_secs(5));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modern_initialize_gets_sub_capabilities_and_loses_tasks_and_context() {
        let caps = json!({"roots": {}, "sampling": {"context": {}}, "tasks": {"requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}, "tools": {}}}});
        let out = forward_capabilities("2025-11-25", &caps);
        assert_eq!(out["sampling"], json!({"tools": {}}));
        assert_eq!(out["elicitation"], json!({"form": {}, "url": {}}));
        assert_eq!(out["tasks"]["requests"], json!({"tools": {}}));
        assert_eq!(out["roots"], json!({}));
    }

    #[test]
    fn older_initialize_gets_plain_capabilities() {
        let out = forward_capabilities("2025-06-18", &json!({}));
        assert_eq!(out, json!({"sampling": {}, "elicitation": {}}));
    }

    #[test]
    fn host_lines_that_are_not_json_pass_unchanged() {
        let shared = SharedState::default();
        assert_eq!(from_host(&shared, b"not json\n"), b"not json\n");
        let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}
"#;
        assert_eq!(from_host(&shared, ping), ping.to_vec());
    }
}
