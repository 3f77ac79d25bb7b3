//! Authentication over HTTP: the bearer token and the session cookie (`HttpOnly;
//! SameSite=Strict`) as extractors ([`Caller`], [`WebSession`]), the CSRF check of forms, and
//! the Host/Origin check against DNS rebinding. The tokens and sessions themselves are
//! `crate::auth`.

use std::future::Future;
use std::pin::Pin;

use super::AppState;
use super::error::{ApiError, PageError};
use crate::auth::{AuthError, Lifetime, Session};
use crate::domain::Via;
use actix_web::body::BoxBody;
use actix_web::cookie::{Cookie, SameSite, time::Duration as CookieDuration};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{AUTHORIZATION, ORIGIN};
use actix_web::middleware::Next;
use actix_web::{FromRequest, HttpRequest, HttpResponse, web};

/// Name of the session cookie.
pub const SESSION_COOKIE: &str = "mcp_consent_session";

/// A logged-in browser session, as a request extractor (the login page redirects without one).
#[derive(Debug, Clone)]
pub struct WebSession(pub Session);

impl std::ops::Deref for WebSession {
    type Target = Session;

    fn deref(&self) -> &Session {
        &self.0
    }
}

impl WebSession {
    /// Checks a submitted CSRF token, in constant time.
    ///
    /// # Errors
    /// [`PageError::Refused`] ([`super::error::Refusal::Csrf`]) when it does not match.
    pub fn check_csrf(&self, submitted: Option<&str>) -> Result<(), PageError> {
        if self.csrf_matches(submitted) {
            Ok(())
        } else {
            Err(PageError::Refused(super::error::Refusal::Csrf))
        }
    }
}

/// The session cookie for `secret`, kept by the browser for `lifetime` (the store ends the
/// session at the same time).
pub fn session_cookie(secret: &str, lifetime: Lifetime) -> Cookie<'static> {
    Cookie::build(SESSION_COOKIE, secret.to_owned())
        .path("/")
        .http_only(true)
        .same_site(SameSite::Strict)
        .max_age(CookieDuration::seconds(lifetime.seconds()))
        .finish()
}

async fn session_from_request(
    state: &AppState,
    req: &HttpRequest,
) -> Result<Option<WebSession>, AuthError> {
    let Some(cookie) = req.cookie(SESSION_COOKIE) else {
        return Ok(None);
    };
    Ok(state.auth.session(cookie.value()).await?.map(WebSession))
}

fn bearer(req: &HttpRequest) -> Option<&str> {
    req.headers()
        .get(AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
        .map(str::trim)
}

fn app_state(req: &HttpRequest) -> Option<web::Data<AppState>> {
    req.app_data::<web::Data<AppState>>().cloned()
}

impl FromRequest for WebSession {
    type Error = PageError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            let state =
                app_state(&req).ok_or_else(|| PageError::Internal("app state missing".into()))?;
            let ended = if req.cookie(SESSION_COOKIE).is_some() {
                PageError::SessionEnded
            } else {
                PageError::LoginRequired
            };
            session_from_request(&state, &req).await?.ok_or(ended)
        })
    }
}

/// Who is calling the JSON API.
#[derive(Debug, Clone)]
pub enum Caller {
    /// A local client holding the API token (proxy, CLI, scripts): answers as an agent,
    /// through the CLI's door ([`Via::Cli`], the owner-only socket) or over TCP
    /// ([`Via::Token`]).
    Token(Via),
    /// The logged-in person's browser: answers as a human; state changes need the CSRF token
    /// in `X-CSRF-Token`.
    Session(WebSession),
}

impl FromRequest for Caller {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            let state =
                app_state(&req).ok_or_else(|| ApiError::Internal("app state missing".into()))?;
            if let Some(token) = bearer(&req) {
                return if state.tokens.verify(token) {
                    Ok(Caller::Token(if via_socket(&req) {
                        Via::Cli
                    } else {
                        Via::Token
                    }))
                } else {
                    Err(ApiError::Unauthorized)
                };
            }
            let session = session_from_request(&state, &req)
                .await?
                .ok_or(ApiError::Unauthorized)?;
            if req.method() != actix_web::http::Method::GET {
                let sent = req
                    .headers()
                    .get("X-CSRF-Token")
                    .and_then(|v| v.to_str().ok());
                session
                    .check_csrf(sent)
                    .map_err(|_| ApiError::Forbidden("missing or wrong X-CSRF-Token".into()))?;
            }
            Ok(Caller::Session(session))
        })
    }
}

impl Caller {
    /// The door the call came through (who acts follows from it: [`Via::actor`]).
    pub fn via(&self) -> Via {
        match self {
            Caller::Token(via) => *via,
            Caller::Session(_) => Via::Browser,
        }
    }

    /// The caller must hold the API token and have come through the owner-only socket: a
    /// client that can only show the token (over TCP: a script, a CI runner, a `--broker`
    /// client on another machine) must not become the person.
    ///
    /// # Errors
    /// [`ApiError::Forbidden`] for a browser session or a token caller over TCP.
    pub fn require_socket(&self) -> Result<(), ApiError> {
        match self {
            Caller::Token(Via::Cli) => Ok(()),
            Caller::Token(_) => Err(ApiError::Forbidden(
                "this is made only over the service's own socket: run `mcp-consent login` on the machine the service runs on (from another device, log in with a passphrase: passphrase_hash_file)".into(),
            )),
            Caller::Session(_) => self.require_token(),
        }
    }

    /// The caller must hold the API token (local clients only).
    ///
    /// # Errors
    /// [`ApiError::Forbidden`] for a browser session.
    pub fn require_token(&self) -> Result<(), ApiError> {
        match self {
            Caller::Token(_) => Ok(()),
            Caller::Session(_) => Err(ApiError::Forbidden(
                "this endpoint needs the API token".into(),
            )),
        }
    }
}

/// Marks a connection accepted on the owner-only Unix socket (set by the server's `on_connect`).
#[derive(Debug, Clone, Copy)]
pub struct LocalSocket;

/// The local address a TCP connection was accepted on (set by the server's `on_connect`): the
/// exact address the client connected to, which the service's proof names. On a wildcard
/// listener (`0.0.0.0`, `[::]`) this is the concrete address of this connection, never the
/// wildcard, so a listener on another address or family cannot relay the proof.
#[derive(Debug, Clone, Copy)]
pub struct AcceptedOn(pub std::net::SocketAddr);

/// The server's `on_connect` hook: marks connections that came over the Unix socket, and
/// records the local address of each TCP connection.
pub fn mark_socket_connections(io: &dyn std::any::Any, ext: &mut actix_web::dev::Extensions) {
    if io.downcast_ref::<tokio::net::UnixStream>().is_some() {
        ext.insert(LocalSocket);
    } else if let Some(tcp) = io.downcast_ref::<tokio::net::TcpStream>()
        && let Ok(local) = tcp.local_addr()
    {
        // An IPv4 client of a dual-stack `[::]` listener is seen as `[::ffff:a.b.c.d]`; the
        // client knows it as `a.b.c.d`.
        ext.insert(AcceptedOn(std::net::SocketAddr::new(
            local.ip().to_canonical(),
            local.port(),
        )));
    }
}

/// True when `req` came over the owner-only Unix socket.
pub fn via_socket(req: &HttpRequest) -> bool {
    req.conn_data::<LocalSocket>().is_some()
}

/// `429 Too Many Requests` with `Retry-After`: a login attempt refused before it was checked.
pub fn too_many_attempts(wait: std::time::Duration) -> HttpResponse {
    let secs = wait.as_secs().max(1);
    HttpResponse::TooManyRequests()
        .insert_header(("Retry-After", secs.to_string()))
        .content_type("text/plain; charset=utf-8")
        .body(format!(
            "Too many login attempts; try again in {secs} s, or run `mcp-consent login` for a link."
        ))
}

/// How long a request body may take to arrive in full.
pub const BODY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Ends a request body that has not arrived in full within [`BODY_TIMEOUT`] (a slow body must
/// not hold a connection slot; the header timeout is the server's `client_request_timeout`).
pub async fn body_deadline(
    mut req: ServiceRequest,
    next: Next<BoxBody>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    use actix_web::HttpMessage;
    use futures_util::StreamExt;
    let deadline = tokio::time::Instant::now() + BODY_TIMEOUT;
    let payload = req.take_payload();
    let timed = futures_util::stream::unfold(Some(payload), move |payload| async move {
        let mut payload = payload?;
        match tokio::time::timeout_at(deadline, payload.next()).await {
            Ok(Some(chunk)) => Some((chunk, Some(payload))),
            Ok(None) => None,
            Err(_) => Some((
                Err(actix_web::error::PayloadError::Incomplete(Some(
                    std::io::Error::new(std::io::ErrorKind::TimedOut, "request body too slow"),
                ))),
                None,
            )),
        }
    });
    req.set_payload(actix_web::dev::Payload::Stream {
        payload: Box::pin(timed),
    });
    next.call(req).await
}

/// Rejects requests whose `Host` is not the service's own address (or `public_url`'s), and
/// cross-origin requests whose `Origin` is not (DNS rebinding and cross-site form posts).
pub async fn check_host_and_origin(
    req: ServiceRequest,
    next: Next<BoxBody>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    // The socket is reachable by the owner only, and no browser can address it.
    if req.request().conn_data::<LocalSocket>().is_some() {
        return next.call(req).await;
    }
    let mut allowed = req
        .app_data::<web::Data<AppState>>()
        .map(|s| s.allowed_hosts.clone())
        .unwrap_or_default();
    // On a wildcard bind, the concrete address this connection was accepted on is the
    // service's own too. A page rebinding a name of its own to it still sends that name, so
    // naming the address itself proves nothing but that the client dialled it.
    if let Some(on) = req.conn_data::<AcceptedOn>() {
        allowed.extend(super::allowed_hosts(on.0));
    }
    let public = req
        .app_data::<web::Data<AppState>>()
        .and_then(|s| s.public_url.clone());
    let host_ok = super::public::named_hosts(req.request())
        .iter()
        .all(|host| {
            allowed.iter().any(|a| a.eq_ignore_ascii_case(host))
                || public.as_ref().is_some_and(|p| p.is_host(host))
        });
    let origin_ok = match req
        .headers()
        .get(ORIGIN)
        .map(|o| o.to_str().unwrap_or_default())
    {
        None => true,
        Some(origin) => {
            allowed
                .iter()
                .any(|a| origin.eq_ignore_ascii_case(&format!("http://{a}")))
                || public
                    .as_ref()
                    .is_some_and(|p| origin.eq_ignore_ascii_case(&p.origin()))
        }
    };
    if !host_ok || !origin_ok {
        let what = if host_ok { "Origin" } else { "Host" };
        tracing::warn!(check = what, "refused a request for another host or origin");
        let res = HttpResponse::Forbidden()
            .content_type("text/plain; charset=utf-8")
            .body(format!(
                "{what} not allowed: mcp-consent only answers requests for its own address"
            ));
        return Ok(req.into_response(res));
    }
    next.call(req).await
}
