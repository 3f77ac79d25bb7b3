//! One remote server: its URL, the HTTP clients, the extra headers, and what the transport
//! learned on the way (`Mcp-Session-Id`, the negotiated protocol version, which transport the
//! server speaks). Every request to the server is built here, so every one carries the same
//! headers and follows the same rules: no environment HTTP proxy for loopback, no redirect to
//! another origin, no local address once the server was not local (`pin`), no URL (which may carry a secret) in error messages.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use reqwest::{Client, Method, RequestBuilder, Response};
use url::Url;

use super::HttpError;
use super::net::{describe, is_loopback};
use super::pin::{Pin, PinnedResolver, rebound_in};

/// `Accept` of every POST (transport spec: the client MUST list both).
pub(super) const ACCEPT_POST: &str = "application/json, text/event-stream";
/// `Accept` of a GET stream.
pub(super) const ACCEPT_SSE: &str = "text/event-stream";
/// The session header (transport spec §Session Management).
pub(super) const SESSION_ID: &str = "mcp-session-id";
/// The negotiated protocol version header (transport spec, 2025-06-18 and later).
pub(super) const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// The resumption header (transport spec §Resumability and Redelivery).
pub(super) const LAST_EVENT_ID: &str = "last-event-id";

/// Which transport the server turned out to speak.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Mode {
    /// Streamable HTTP (2025-03-26 and later); the default until a POST says otherwise.
    Streamable,
    /// The old HTTP+SSE transport (2024-11-05): messages are POSTed to this endpoint and every
    /// reply arrives on the GET stream.
    Legacy(Url),
}

/// The transport's view of one remote server.
pub(super) struct Remote {
    /// The server's MCP endpoint (`--url`).
    pub url: Url,
    /// The longest message accepted, in bytes (`--max-line-bytes`).
    pub limit: usize,
    direct: Client,
    proxied: Client,
    headers: HeaderMap,
    /// Where the server is, decided by the first connection that answered.
    pin: Pin,
    /// What the transport learnt; one lock, never held across an await.
    link: Mutex<Link>,
    /// Signalled when the server can no longer be talked to (the old transport's stream ended).
    pub gone: tokio::sync::Notify,
    /// MCP authorization, when the proxy can ask the person to sign in.
    pub auth: Option<std::sync::Arc<super::auth::Auth>>,
    /// The tools' `x-mcp-header` designations, learnt from `tools/list`.
    pub tools: super::mirror::Tools,
}

/// What the transport learnt about the server on the way. Concurrent POSTs read it, and the
/// `initialize` exchange (and a fall-back to the old transport) writes it.
#[derive(Debug)]
struct Link {
    /// `Mcp-Session-Id`, from the response to `initialize`.
    session: Option<HeaderValue>,
    /// The negotiated protocol version.
    version: Option<String>,
    /// Which transport the server speaks.
    mode: Mode,
}

impl Remote {
    fn link(&self) -> MutexGuard<'_, Link> {
        self.link.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// An HTTP client that follows redirects only within `origin`'s scheme, host and port and
/// resolves names through `resolver`.
///
/// # Errors
/// [`HttpError::Client`] when the TLS backend cannot start.
fn client(
    origin: &Url,
    use_env_proxy: bool,
    resolver: std::sync::Arc<PinnedResolver>,
) -> Result<Client, HttpError> {
    let origin = origin.origin();
    let policy = reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() >= 5 {
            attempt.error("too many redirects")
        } else if attempt.url().origin() != origin {
            attempt.error("refused a redirect to another origin")
        } else {
            attempt.follow()
        }
    });
    let mut builder = Client::builder()
        .redirect(policy)
        .connect_timeout(Duration::from_secs(30))
        .dns_resolver(resolver)
        .user_agent(concat!("mcp-consent/", env!("CARGO_PKG_VERSION")));
    if !use_env_proxy {
        builder = builder.no_proxy();
    }
    builder.build().map_err(HttpError::Client)
}

impl Remote {
    /// A remote at `url` with `headers` on every request.
    ///
    /// # Errors
    /// [`HttpError::Client`].
    pub fn new(
        url: Url,
        headers: HeaderMap,
        limit: usize,
        auth: Option<std::sync::Arc<super::auth::Auth>>,
    ) -> Result<Remote, HttpError> {
        let pin = Pin::new(&url);
        Ok(Remote {
            direct: client(&url, false, pin.resolver())?,
            proxied: client(&url, true, pin.resolver())?,
            pin,
            url,
            limit,
            headers,
            link: Mutex::new(Link {
                session: None,
                version: None,
                mode: Mode::Streamable,
            }),
            gone: tokio::sync::Notify::new(),
            auth,
            tools: super::mirror::Tools::default(),
        })
    }

    /// The client for `url`: never an environment proxy for loopback.
    fn client_for(&self, url: &Url) -> &Client {
        if is_loopback(url) {
            &self.direct
        } else {
            &self.proxied
        }
    }

    /// A request to `url` with the extra headers, the session, the protocol version
    /// (`version` when the message names its own, else the negotiated one).
    pub fn request(&self, method: Method, url: &Url, version: Option<&str>) -> RequestBuilder {
        let mut rb = self
            .client_for(url)
            .request(method, url.clone())
            .headers(self.headers.clone());
        let (session, negotiated) = {
            let link = self.link();
            (link.session.clone(), link.version.clone())
        };
        if let Some(id) = session {
            rb = rb.header(SESSION_ID, id);
        }
        if let Some(token) = self.auth.as_ref().and_then(|a| a.bearer()) {
            rb = rb.bearer_auth(token);
        }
        if let Some(v) = version.map(str::to_owned).or(negotiated) {
            rb = rb.header(PROTOCOL_VERSION, v);
        }
        rb
    }

    /// A POST of one JSON-RPC message to the MCP endpoint.
    pub fn post(&self, url: &Url, body: Vec<u8>, version: Option<&str>) -> RequestBuilder {
        self.request(Method::POST, url, version)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, ACCEPT_POST)
            .body(body)
    }

    /// Sends `rb` (built by [`Remote::request`]), never to a local address when the server
    /// was not local when first reached; the error names the cause without the URL.
    ///
    /// # Errors
    /// The cause, as text for the host.
    pub async fn send(&self, rb: RequestBuilder) -> Result<Response, String> {
        let fail = |e: reqwest::Error| match rebound_in(&e) {
            Some(rebound) => rebound.to_string(),
            None => describe(&e),
        };
        self.pin.check().await.map_err(|e| e.to_string())?;
        let response = rb.send().await.map_err(fail)?;
        self.pin
            .settle(&self.url, response.remote_addr())
            .await
            .map_err(|e| e.to_string())?;
        Ok(response)
    }

    /// Remembers the session id the server assigned on the response to `initialize` (the
    /// first one it sends; 2025-11-25 transports §Session Management).
    pub fn note_session(&self, response: &Response) {
        if let Some(id) = response.headers().get(SESSION_ID) {
            let mut link = self.link();
            if link.session.is_none() {
                link.session = Some(id.clone());
            }
        }
    }

    /// Whether a session id is in use.
    pub fn has_session(&self) -> bool {
        self.link().session.is_some()
    }

    /// Sets the negotiated protocol version (from the initialize result).
    pub fn set_version(&self, version: &str) {
        self.link().version = Some(version.to_owned());
    }

    /// The transport in use.
    pub fn mode(&self) -> Mode {
        self.link().mode.clone()
    }

    /// Switches to the old HTTP+SSE transport.
    pub fn set_mode(&self, mode: Mode) {
        self.link().mode = mode;
    }

    /// Ends the session (transport spec: the client SHOULD send DELETE with the session id when
    /// it no longer needs it); bounded to two seconds, 405 and errors ignored.
    pub async fn delete_session(&self) {
        if !self.has_session() || self.mode() != Mode::Streamable {
            return;
        }
        let rb = self
            .request(Method::DELETE, &self.url, None)
            .timeout(Duration::from_secs(2));
        let _ = self.send(rb).await;
    }
}
