//! A remote MCP server over Streamable HTTP (`mcp-consent proxy --url`), as an [`Upstream`]:
//! the proxy writes the host's lines into its input and reads the server's messages, one line
//! each, from its output, so the judging (interception in every revision, fail closed, withdraw
//! on exit) is the same as for a stdio server. Transport spec: 2025-06-18, 2025-11-25 and
//! 2026-07-28 `basic/transports`, with the fallback to HTTP+SSE (2024-11-05).
//!
//! - [`headers`]: `--header` / `--env-header`, `${VAR}` expansion.
//! - `remote`: the server's URL, clients (no environment proxy for loopback, no redirect to
//!   another origin), session id, protocol version, access token.
//! - `post`: one message POSTed, its reply (JSON body or event stream) routed, resumed.
//! - `mirror`: the request metadata headers (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`).
//! - `listen`: the GET stream for server-initiated messages.
//! - `legacy`: the old HTTP+SSE transport.
//! - [`auth`]: MCP authorization (discovery, registration, sign-in through the queue, tokens).
//! - `pin`: where the server is, decided by the first connection (no DNS rebinding into
//!   this computer).
//! - `events`: bounded, linear SSE parsing; `sink`: the one-line-per-message output.

pub mod auth;
mod events;
pub mod headers;
mod legacy;
mod listen;
mod mirror;
mod net;
mod pin;
mod post;
pub mod remote;
mod sink;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::watch;
use tokio::task::{AbortHandle, JoinHandle};
use url::Url;

use super::upstream::{Ending, Server, Upstream};
use crate::protocol::method::Method;
use crate::protocol::request_key::RequestKey;
use post::{Outgoing, Posted};
use remote::{Mode, Remote};
use sink::Sink;

/// How long in-flight messages may still finish after the host closed its side.
const FINISH: Duration = Duration::from_secs(2);
/// How long a notification or response may hold up the next message.
const IN_ORDER: Duration = Duration::from_secs(10);

/// Errors setting up the remote transport (before any message).
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// `--url` is not an http(s) URL.
    #[error("--url must be an http:// or https:// URL: {0}")]
    Url(String),
    /// A `--header` / `--env-header` argument is unusable (the value is never named).
    #[error("header {name}: {why}")]
    Header {
        /// The header name as given.
        name: String,
        /// What is wrong with it.
        why: String,
    },
    /// The HTTP client could not be built.
    #[error("cannot set up the HTTP client")]
    Client(#[source] reqwest::Error),
    /// `--client-id` / `--client-secret-env` / `--client-metadata-url` are unusable.
    #[error(transparent)]
    ClientArgs(#[from] auth::register::ClientArgsError),
}

/// Settings of a remote server.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// The server's MCP endpoint.
    pub url: String,
    /// `--header 'Name: value'` arguments (`${VAR}` expanded).
    pub headers: Vec<String>,
    /// `--env-header 'Name=ENVVAR'` arguments.
    pub env_headers: Vec<String>,
    /// The longest message accepted from the server, in bytes.
    pub max_line_bytes: usize,
    /// Where a sign-in (MCP authorization) is asked and its tokens kept; `None`: a 401 is an
    /// error for the host.
    pub sign_in: Option<SignIn>,
}

/// What MCP authorization needs of the proxy.
#[derive(Debug, Clone)]
pub struct SignIn {
    /// `--name`: the question names it, the tokens are stored under it.
    pub name: String,
    /// The service that asks the person.
    pub service: crate::client::ServiceClient,
    /// The state directory (tokens at `<state>/oauth/<name>.json`).
    pub state_root: std::path::PathBuf,
    /// How the proxy identifies itself to the authorization server.
    pub client: auth::register::ClientArgs,
}

/// Connects the transport (lazily: the first POST is the host's first message).
///
/// # Errors
/// [`HttpError`] for a bad URL or header; nothing is sent before the host speaks.
pub fn connect(options: &HttpOptions) -> Result<Upstream, HttpError> {
    let url = Url::parse(&options.url).map_err(|e| HttpError::Url(e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(HttpError::Url(format!("scheme {:?}", url.scheme())));
    }
    let env = |name: &str| std::env::var(name).ok();
    let headers = headers::build(&options.headers, &options.env_headers, &env)?;
    let auth = match &options.sign_in {
        Some(s) => {
            let client = auth::register::ClientConfig::from_args(&s.client, &env)?;
            Some(Arc::new(
                auth::Auth::new(
                    &s.name,
                    s.service.clone(),
                    s.state_root.clone(),
                    &url,
                    client,
                )
                .map_err(HttpError::Client)?,
            ))
        }
        None => None,
    };
    let remote = Arc::new(Remote::new(url, headers, options.max_line_bytes, auth)?);
    let (proxy_in, our_in) = tokio::io::duplex(64 * 1024);
    let (our_out, proxy_out) = tokio::io::duplex(64 * 1024);
    let sink = Sink::new(our_out);
    let (stop, stopped) = watch::channel(false);
    let pump = tokio::spawn(pump(remote, sink, our_in, stopped));
    Ok(Upstream {
        input: Box::new(proxy_in),
        output: Box::new(proxy_out),
        server: Box::new(RemoteServer {
            pump: Some(pump),
            stop,
        }),
    })
}

/// Reads the proxy's lines and sends each; returns the exit code when the proxy closes its
/// side (0), is told to stop (0), or the server is gone (1).
async fn pump(
    remote: Arc<Remote>,
    sink: Sink,
    input: tokio::io::DuplexStream,
    mut stopped: watch::Receiver<bool>,
) -> i32 {
    let mut reader = BufReader::new(input);
    let mut inflight: Vec<JoinHandle<()>> = Vec::new();
    // The host's requests still being sent, by id: one the host cancels is stopped where it
    // is, so a request waiting for a sign-in is never sent once the host has given it up.
    let mut sending: HashMap<RequestKey, AbortHandle> = HashMap::new();
    let mut background: Vec<JoinHandle<()>> = Vec::new();
    let mut line = Vec::new();
    let code = loop {
        // The proxy judged and bounded these lines already; `read_until` keeps what it read of
        // a line in `line` if another branch wins, though every other branch ends the loop.
        let read = tokio::select! {
            read = reader.read_until(b'\n', &mut line) => read,
            _ = stopped.changed() => break 0,
            () = remote.gone.notified() => break 1,
        };
        let line = match read {
            Ok(n) if n > 0 => std::mem::take(&mut line),
            Ok(_) | Err(_) => {
                // The host left: what is in flight may still finish, briefly.
                inflight.retain(|h| !h.is_finished());
                let all = futures_util::future::join_all(inflight.iter_mut());
                let _ = tokio::time::timeout(FINISH, all).await;
                break 0;
            }
        };
        inflight.retain(|h| !h.is_finished());
        let msg = Outgoing::parse(line);
        if msg.is_initialize() {
            // In order: the session id and the transport are known before anything else goes.
            tokio::select! {
                () = initialize(&remote, &sink, &msg, &mut background) => {}
                _ = stopped.changed() => break 0,
            }
            continue;
        }
        let initialized = msg.method.as_deref().map(Method::named) == Some(Method::Initialized);
        if let Some(cancelled) = msg.cancelled_request()
            && let Some(request) = sending.remove(&cancelled)
        {
            request.abort();
        }
        // Only requests the proxy judged reach this point, so every id is one it keys.
        let key = msg
            .id
            .as_deref()
            .and_then(|id| RequestKey::of_raw(id.get()).ok());
        let is_request = msg.id.is_some();
        let (r, s) = (Arc::clone(&remote), sink.clone());
        let mut handle = tokio::spawn(async move {
            match r.mode() {
                Mode::Legacy(endpoint) => legacy::send(&r, &s, &endpoint, &msg).await,
                Mode::Streamable => {
                    post::send(&r, &s, &msg).await;
                }
            }
        });
        // Notifications and responses are accepted at once (202); waiting for that keeps them
        // in order with what follows (`notifications/initialized` before `tools/list`). A
        // request's answer may take as long as the tool does, so requests run side by side.
        if let Some(key) = key {
            sending.retain(|_, h| !h.is_finished());
            sending.insert(key, handle.abort_handle());
        }
        if is_request || tokio::time::timeout(IN_ORDER, &mut handle).await.is_err() {
            inflight.push(handle);
        }
        if initialized && remote.mode() == Mode::Streamable {
            let (tell, opened) = tokio::sync::oneshot::channel();
            background.push(tokio::spawn(listen::listen(
                Arc::clone(&remote),
                sink.clone(),
                tell,
            )));
            let _ = tokio::time::timeout(IN_ORDER, opened).await;
        }
    };
    for handle in inflight.iter().chain(background.iter()) {
        handle.abort();
    }
    if let Some(auth) = &remote.auth {
        auth.withdraw().await;
    }
    remote.delete_session().await;
    code
}

/// Sends the host's `initialize`; when the server refuses the POST with a 4xx, falls back to
/// the old HTTP+SSE transport and sends it there.
async fn initialize(
    remote: &Arc<Remote>,
    sink: &Sink,
    msg: &Outgoing,
    background: &mut Vec<JoinHandle<()>>,
) {
    if let Mode::Legacy(endpoint) = remote.mode() {
        legacy::send(remote, sink, &endpoint, msg).await;
        return;
    }
    let Posted::NotStreamable(status) = post::send(remote, sink, msg).await else {
        return;
    };
    tracing::info!(%status, "remote server refused the initialize POST; trying HTTP+SSE");
    match legacy::open(remote, sink).await {
        Ok(stream) => {
            background.push(stream);
            if let Mode::Legacy(endpoint) = remote.mode() {
                legacy::send(remote, sink, &endpoint, msg).await;
            }
        }
        Err(why) => {
            if let Some(id) = msg.id.as_deref() {
                sink.fail(id, &format!("refused initialize (HTTP {status}) and {why}"))
                    .await;
            }
        }
    }
}

/// The [`Server`] side of a remote: ending it ends the session.
struct RemoteServer {
    pump: Option<JoinHandle<i32>>,
    stop: watch::Sender<bool>,
}

impl Server for RemoteServer {
    fn wait(&mut self) -> Ending<'_> {
        Box::pin(async move {
            match self.pump.take() {
                Some(pump) => Ok(pump.await.unwrap_or(1)),
                None => Ok(0),
            }
        })
    }

    fn terminate(&mut self, grace: Duration) -> Ending<'_> {
        Box::pin(async move {
            let _ = self.stop.send(true);
            let Some(mut pump) = self.pump.take() else {
                return Ok(0);
            };
            match tokio::time::timeout(grace, &mut pump).await {
                Ok(code) => Ok(code.unwrap_or(1)),
                Err(_) => {
                    pump.abort();
                    Ok(1)
                }
            }
        })
    }
}
