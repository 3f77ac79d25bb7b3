//! One message from the host (or the proxy) to a Streamable HTTP server: POSTed with both media
//! types accepted, the reply taken as a JSON body or an event stream, the stream resumed with
//! `Last-Event-ID` after the server's `retry` (at most [`super::events::MAX_RETRY`]) when it
//! ends before the answer. A host request that cannot be answered gets a JSON-RPC error naming
//! the cause, so it never waits forever.

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::HeaderMap;
use reqwest::{Method, Response, StatusCode};
use serde_json::Value;
use serde_json::value::RawValue;

use super::super::tool_table::Page;
use super::events::{Cursor, Events};
use super::mirror;
use super::net::{BodyError, media_type, read_body};
use super::remote::{ACCEPT_SSE, LAST_EVENT_ID, Remote};
use super::sink::Sink;
use crate::protocol::method::Method as McpMethod;
use crate::protocol::request_key::RequestKey;

/// The `_meta` key carrying a 2026-07-28 request's protocol version.
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// How often a POST stream that ends before its answer is resumed.
const RESUME_ATTEMPTS: u32 = 5;
/// How often one message may trigger an authorization (sign-in or refresh).
const MAX_AUTHORIZATIONS: u32 = 2;
/// Reconnection time when the server sent no `retry`.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);

/// A message on its way to the server, with what the transport needs to know of it.
pub(super) struct Outgoing {
    /// The bytes as the host sent them (without the line break).
    pub body: Vec<u8>,
    /// The request id (raw JSON) when it is a request.
    pub id: Option<Box<RawValue>>,
    /// The method, for requests and notifications.
    pub method: Option<String>,
    /// `params._meta["io.modelcontextprotocol/protocolVersion"]`, when present.
    pub meta_version: Option<String>,
    /// `params`, for the headers mirrored from it.
    pub params: Option<Value>,
}

impl Outgoing {
    /// The request a `notifications/cancelled` names (`params.requestId`), when it is one.
    pub(super) fn cancelled_request(&self) -> Option<RequestKey> {
        if self.method.as_deref().map(McpMethod::named) != Some(McpMethod::Cancelled) {
            return None;
        }
        self.params
            .as_ref()
            .and_then(|p| p.get("requestId"))
            .and_then(|id| RequestKey::of_value(id).ok())
    }

    /// Reads what the transport needs from one line (anything unparseable is still sent).
    pub(super) fn parse(mut line: Vec<u8>) -> Outgoing {
        while matches!(line.last(), Some(b'\n' | b'\r')) {
            line.pop();
        }
        #[derive(serde::Deserialize)]
        struct Envelope<'a> {
            #[serde(borrow)]
            id: Option<&'a RawValue>,
            method: Option<String>,
            params: Option<Value>,
        }
        let (id, method, meta_version, params) = match serde_json::from_slice::<Envelope<'_>>(&line)
        {
            Ok(e) => {
                let meta_version = e
                    .params
                    .as_ref()
                    .and_then(|p| p.get("_meta"))
                    .and_then(|m| m.get(META_VERSION))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                let id =
                    e.id.filter(|_| e.method.is_some())
                        .filter(|id| id.get() != "null")
                        .map(ToOwned::to_owned);
                (id, e.method, meta_version, e.params)
            }
            Err(_) => (None, None, None, None),
        };
        Outgoing {
            body: line,
            id,
            method,
            meta_version,
            params,
        }
    }

    /// Whether this is the host's `initialize`.
    pub(super) fn is_initialize(&self) -> bool {
        self.id.is_some()
            && self.method.as_deref().map(McpMethod::named) == Some(McpMethod::Initialize)
    }

    /// Whether the message names 2026-07-28 or later in its `_meta`.
    fn is_modern(&self) -> bool {
        mirror::is_modern(self.meta_version.as_deref())
    }

    /// The request metadata headers of this message (SEP-2243): the standard ones for every
    /// request and notification, `Mcp-Param-*` on a 2026-07-28 `tools/call`.
    ///
    /// # Errors
    /// A call to a tool excluded for an invalid `x-mcp-header`: it is not sent.
    fn metadata(&self, remote: &Remote) -> Result<HeaderMap, mirror::RejectedTool> {
        let Some(method) = self.method.as_deref() else {
            return Ok(HeaderMap::new());
        };
        let mut headers = mirror::standard(method, self.params.as_ref());
        if McpMethod::named(method) == McpMethod::ToolsCall && self.is_modern() {
            headers.extend(remote.tools.params(self.params.as_ref())?);
        }
        Ok(headers)
    }
}

/// What became of a POST, for the caller deciding on a fallback.
pub(super) enum Posted {
    /// Handled (answered, failed honestly, or accepted).
    Done,
    /// The server answered the initialize POST with this 4xx: it may speak the old transport.
    NotStreamable(StatusCode),
}

/// POSTs `msg` and routes the reply into `sink`.
pub(super) async fn send(remote: &Arc<Remote>, sink: &Sink, msg: &Outgoing) -> Posted {
    let metadata = match msg.metadata(remote) {
        Ok(headers) => headers,
        Err(refused) => {
            fail(sink, msg, &refused.to_string()).await;
            return Posted::Done;
        }
    };
    let mut authorizations = 0;
    let response = loop {
        let sent = remote.auth.as_ref().map(|a| a.sent());
        let rb = remote
            .post(&remote.url, msg.body.clone(), msg.meta_version.as_deref())
            .headers(metadata.clone());
        let response = match remote.send(rb).await {
            Ok(r) => r,
            Err(why) => {
                fail(sink, msg, &why).await;
                return Posted::Done;
            }
        };
        let Some((auth, sent)) = remote
            .auth
            .as_ref()
            .zip(sent)
            .filter(|_| needs_authorization(&response))
        else {
            break response;
        };
        // At most two authorizations per message: a server that keeps refusing fresh tokens
        // (or asks for ever more scope) gets its refusal passed on, not an endless loop.
        if authorizations >= MAX_AUTHORIZATIONS {
            break response;
        }
        authorizations += 1;
        let challenge = response
            .headers()
            .get(reqwest::header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if let Err(e) = auth
            .authorize(
                &remote.url,
                challenge.as_deref(),
                &sent,
                response.remote_addr(),
            )
            .await
        {
            fail(sink, msg, &e.to_string()).await;
            return Posted::Done;
        }
    };
    if msg.is_initialize() {
        remote.note_session(&response);
    }
    let status = response.status();
    if msg.is_initialize()
        && status.is_client_error()
        && status != StatusCode::UNAUTHORIZED
        && !remote.has_session()
    {
        return Posted::NotStreamable(status);
    }
    reply(remote, sink, msg, response).await;
    Posted::Done
}

/// Whether the server asks for (new) authorization: 401, or 403 `insufficient_scope`
/// (authorization spec §Scope challenge handling).
fn needs_authorization(response: &Response) -> bool {
    let status = response.status();
    status == StatusCode::UNAUTHORIZED
        || (status == StatusCode::FORBIDDEN
            && response
                .headers()
                .get(reqwest::header::WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.contains("insufficient_scope")))
}

/// Routes the server's reply to one POST.
async fn reply(remote: &Arc<Remote>, sink: &Sink, msg: &Outgoing, response: Response) {
    let status = response.status();
    if status == StatusCode::ACCEPTED {
        if msg.id.is_some() {
            fail(
                sink,
                msg,
                "accepted a request without answering it (HTTP 202)",
            )
            .await;
        }
        return;
    }
    if status == StatusCode::NOT_FOUND && remote.has_session() {
        fail(
            sink,
            msg,
            "ended the session (HTTP 404); restart the host's connection",
        )
        .await;
        return;
    }
    if status == StatusCode::UNAUTHORIZED {
        fail(sink, msg, "requires authorization (HTTP 401)").await;
        return;
    }
    let kind = media_type(&response);
    if status.is_success() && kind == ACCEPT_SSE {
        read_stream(remote, sink, msg, Events::new(response, remote.limit)).await;
        return;
    }
    let body = match read_body(response, remote.limit).await {
        Ok(body) => body,
        Err(BodyError::TooLarge { limit }) => {
            let why = format!("sent a body over the line limit ({limit} bytes)");
            fail(sink, msg, &why).await;
            return;
        }
        Err(BodyError::Transfer(why)) => {
            fail(sink, msg, &why).await;
            return;
        }
    };
    let Some(id) = msg.id.as_deref() else {
        if !status.is_success() {
            tracing::warn!(%status, "remote server refused a message");
        }
        return;
    };
    // A JSON-RPC error for this request, whatever the HTTP status, is the answer.
    if is_answer(&body, id) {
        deliver(remote, sink, msg, &body).await;
    } else if !status.is_success() {
        fail(sink, msg, &format!("answered HTTP {status}")).await;
    } else if kind != "application/json" {
        fail(sink, msg, &format!("answered with the media type {kind:?}")).await;
    } else {
        fail(
            sink,
            msg,
            "answered with a body that is not a JSON-RPC response to the request",
        )
        .await;
    }
}

/// Reads an event stream answering `msg`, resuming it with `Last-Event-ID` when it ends before
/// the answer (SEP-1699: a server may close it early and the client polls).
async fn read_stream(remote: &Arc<Remote>, sink: &Sink, msg: &Outgoing, mut events: Events) {
    let mut cursor = Cursor::default();
    let mut attempts = 0;
    loop {
        let mut broke = None;
        while let Some(item) = events.next(&mut cursor).await {
            match item {
                Ok(event) => {
                    let answered = msg
                        .id
                        .as_deref()
                        .is_some_and(|id| is_answer(event.data.as_bytes(), id));
                    if answered {
                        deliver(remote, sink, msg, event.data.as_bytes()).await;
                        return;
                    }
                    sink.message(event.data.as_bytes()).await;
                }
                Err(why) => {
                    broke = Some(why);
                    break;
                }
            }
        }
        if msg.id.is_none() {
            return;
        }
        // 2026-07-28 streams are not resumable (§Receiving Messages): no GET for them.
        let resumable = !msg.is_modern()
            && cursor.last_id.is_some()
            && attempts < RESUME_ATTEMPTS
            && broke.as_deref().is_none_or(|w| !w.contains("line limit"));
        if !resumable {
            let why = broke.unwrap_or_else(|| "closed the event stream before answering".into());
            fail(sink, msg, &why).await;
            return;
        }
        attempts += 1;
        tokio::time::sleep(cursor.retry.unwrap_or(DEFAULT_RETRY)).await;
        match resume(remote, &cursor, msg.meta_version.as_deref()).await {
            Ok(more) => events = more,
            Err(refused) => {
                fail(sink, msg, &refused.why).await;
                return;
            }
        }
    }
}

/// Why a GET stream could not be opened.
pub(super) struct Refused {
    /// The HTTP status, when the server answered.
    pub status: Option<StatusCode>,
    /// The cause, as text for the host.
    pub why: String,
}

/// Re-opens a stream with GET and `Last-Event-ID` (or opens the GET stream, without one).
///
/// # Errors
/// [`Refused`] naming why the server would not open it.
pub(super) async fn resume(
    remote: &Remote,
    cursor: &Cursor,
    version: Option<&str>,
) -> Result<Events, Refused> {
    let refused = |status, why: String| Refused { status, why };
    let mut rb = remote
        .request(Method::GET, &remote.url, version)
        .header(reqwest::header::ACCEPT, ACCEPT_SSE);
    if let Some(id) = &cursor.last_id {
        rb = rb.header(LAST_EVENT_ID, &**id);
    }
    let response = remote.send(rb).await.map_err(|why| refused(None, why))?;
    let status = response.status();
    if !status.is_success() {
        return Err(refused(
            Some(status),
            format!("would not resume its event stream (HTTP {status})"),
        ));
    }
    if media_type(&response) != ACCEPT_SSE {
        return Err(refused(
            Some(status),
            "resumed with something other than an event stream".into(),
        ));
    }
    Ok(Events::new(response, remote.limit))
}

/// Whether `data` is a JSON-RPC response (result or error) to the request `id` (compared by
/// key, as the proxy compares every id).
fn is_answer(data: &[u8], id: &RawValue) -> bool {
    #[derive(serde::Deserialize)]
    struct Response<'a> {
        #[serde(borrow)]
        id: Option<&'a RawValue>,
        method: Option<serde::de::IgnoredAny>,
        result: Option<serde::de::IgnoredAny>,
        error: Option<serde::de::IgnoredAny>,
    }
    let Ok(key) = RequestKey::of_raw(id.get()) else {
        return false;
    };
    serde_json::from_slice::<Response<'_>>(data).is_ok_and(|r| {
        r.method.is_none()
            && (r.result.is_some() || r.error.is_some())
            && r.id.and_then(|i| RequestKey::of_raw(i.get()).ok()) == Some(key)
    })
}

/// Hands the answer to `msg` to the proxy: the negotiated version is taken from an initialize
/// result, and the `x-mcp-header` designations from a 2026-07-28 `tools/list` result (without
/// the tools they make invalid).
async fn deliver(remote: &Remote, sink: &Sink, msg: &Outgoing, data: &[u8]) {
    note_version(remote, msg, data);
    if msg.method.as_deref().map(McpMethod::named) == Some(McpMethod::ToolsList)
        && msg.is_modern()
        && let Some(listed) = remote
            .tools
            .learn(data, Page::of_params(msg.params.as_ref()))
    {
        sink.message(&listed).await;
        return;
    }
    sink.message(data).await;
}

/// Takes the negotiated version from an initialize result.
fn note_version(remote: &Remote, msg: &Outgoing, data: &[u8]) {
    if !msg.is_initialize() {
        return;
    }
    if let Some(v) = serde_json::from_slice::<Value>(data)
        .ok()
        .as_ref()
        .and_then(|v| v.pointer("/result/protocolVersion"))
        .and_then(Value::as_str)
    {
        remote.set_version(v);
    }
}

/// Gives the host request an error, or logs the failure of anything else.
async fn fail(sink: &Sink, msg: &Outgoing, why: &str) {
    match msg.id.as_deref() {
        Some(id) => sink.fail(id, why).await,
        None => tracing::warn!(
            method = msg.method.as_deref().unwrap_or("-"),
            "remote server: {why}"
        ),
    }
}
