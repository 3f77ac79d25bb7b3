//! How a local client reaches the service: HTTP/1.1 over the owner-only Unix socket
//! `<state>/broker/api.sock` by default, or over TCP to an explicit `--broker URL` after the
//! service has proved it holds the token's key (`GET /api/v1/service-proof`), on the same
//! connection the call then uses. One connection per call, no connection pool, and no
//! environment proxy: `http_proxy`/`ALL_PROXY` and friends are never read (hyper has no proxy
//! support), so the token and request content go to the service and nowhere else.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HOST};
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::auth::proof::ServiceProof;
use crate::auth::{digest, proof};

/// The longest call (the long-poll waits at most 60 s).
const CALL_TIMEOUT: Duration = Duration::from_secs(90);
/// The longest body read from a service not yet verified, in bytes.
const PROOF_BODY_LIMIT: usize = 4096;
/// The longest response body accepted, in bytes.
const BODY_LIMIT: usize = 64 * 1024 * 1024;

/// Where the service is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// The owner-only Unix socket (the default).
    Socket(PathBuf),
    /// TCP, from `--broker URL` / `MCP_CONSENT_BROKER`: `host:port` as written in the URL.
    Tcp {
        /// `host:port`, also sent as `Host`.
        authority: String,
    },
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::Socket(path) => write!(f, "unix:{}", path.display()),
            Endpoint::Tcp { authority } => write!(f, "http://{authority}"),
        }
    }
}

/// Why a call did not get an answer from the service.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// `--broker` is not an `http://host[:port]` URL.
    #[error("not an http://HOST:PORT service URL: {0}")]
    BadUrl(String),
    /// Connecting failed.
    #[error("cannot connect: {0}")]
    Connect(#[source] std::io::Error),
    /// The HTTP exchange failed.
    #[error("HTTP exchange failed: {0}")]
    Http(String),
    /// The call took longer than its limit.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The listener at a TCP address did not prove it is this user's service; nothing secret
    /// was sent to it.
    #[error(
        "the listener did not prove it is this user's mcp-consent service ({0}); the API token was not sent"
    )]
    Unverified(String),
}

impl Endpoint {
    /// The endpoint of an explicit service URL (`http://HOST[:PORT][/]`).
    ///
    /// # Errors
    /// [`TransportError::BadUrl`].
    pub fn from_url(raw: &str) -> Result<Endpoint, TransportError> {
        let bad = || TransportError::BadUrl(raw.to_owned());
        let url = url::Url::parse(raw).map_err(|_| bad())?;
        if url.scheme() != "http" || !matches!(url.path(), "" | "/") || url.query().is_some() {
            return Err(bad());
        }
        let host = url.host_str().ok_or_else(bad)?;
        let port = url.port_or_known_default().ok_or_else(bad)?;
        Ok(Endpoint::Tcp {
            authority: format!("{host}:{port}"),
        })
    }
}

/// One answered call.
#[derive(Debug)]
pub struct Reply {
    /// HTTP status.
    pub status: StatusCode,
    /// Body text.
    pub body: String,
    /// `Retry-After` in whole seconds, when the reply has one.
    pub retry_after: Option<std::time::Duration>,
}

/// Sends `method path` with the bearer `token` and an optional JSON `body` to the service at
/// `endpoint` (over TCP only after the service's proof checked out).
///
/// # Errors
/// [`TransportError`].
pub async fn call(
    endpoint: &Endpoint,
    method: Method,
    path: &str,
    token: &str,
    body: Option<Vec<u8>>,
) -> Result<Reply, TransportError> {
    let exchange = async {
        match endpoint {
            Endpoint::Socket(path_to_socket) => {
                let stream = tokio::net::UnixStream::connect(path_to_socket)
                    .await
                    .map_err(TransportError::Connect)?;
                let mut sender = handshake(stream).await?;
                send(
                    &mut sender,
                    "localhost",
                    method,
                    path,
                    Some(token),
                    body,
                    BODY_LIMIT,
                )
                .await
            }
            Endpoint::Tcp { authority } => {
                let stream = tokio::net::TcpStream::connect(authority.as_str())
                    .await
                    .map_err(TransportError::Connect)?;
                let peer = stream.peer_addr().map_err(TransportError::Connect)?;
                let mut sender = handshake(stream).await?;
                verify(&mut sender, authority, peer, token).await?;
                send(
                    &mut sender,
                    authority,
                    method,
                    path,
                    Some(token),
                    body,
                    BODY_LIMIT,
                )
                .await
            }
        }
    };
    tokio::time::timeout(CALL_TIMEOUT, exchange)
        .await
        .map_err(|_| TransportError::Timeout(CALL_TIMEOUT))?
}

async fn handshake<S>(stream: S) -> Result<SendRequest<Full<Bytes>>, TransportError>
where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| TransportError::Http(e.to_string()))?;
    // The connection task ends when `sender` is dropped or the peer closes.
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(sender)
}

async fn send(
    sender: &mut SendRequest<Full<Bytes>>,
    host: &str,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Option<Vec<u8>>,
    limit: usize,
) -> Result<Reply, TransportError> {
    let http = |e: &dyn std::fmt::Display| TransportError::Http(e.to_string());
    let mut request = Request::builder()
        .method(method)
        .uri(path)
        .header(HOST, host);
    if let Some(token) = token {
        request = request.header(AUTHORIZATION, format!("Bearer {token}"));
    }
    let request = match body {
        Some(body) => request
            .header(CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(body))),
        None => request.body(Full::new(Bytes::new())),
    }
    .map_err(|e| http(&e))?;
    sender.ready().await.map_err(|e| http(&e))?;
    let response = sender.send_request(request).await.map_err(|e| http(&e))?;
    let status = response.status();
    let retry_after = response
        .headers()
        .get(hyper::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(std::time::Duration::from_secs);
    let bytes = Limited::new(response.into_body(), limit)
        .collect()
        .await
        .map_err(|e| http(&e))?
        .to_bytes();
    Ok(Reply {
        status,
        body: String::from_utf8_lossy(&bytes).into_owned(),
        retry_after,
    })
}

/// Asks the listener for its proof over a fresh nonce and checks it: the address it names (the
/// local address of the connection it accepted) must be exactly the peer we are connected to, and one proof must be the HMAC of our token's
/// key over the nonce and that address.
async fn verify(
    sender: &mut SendRequest<Full<Bytes>>,
    authority: &str,
    peer: SocketAddr,
    token: &str,
) -> Result<(), TransportError> {
    let nonce = crate::auth::random_token()
        .map_err(|e| TransportError::Unverified(format!("no random nonce: {e}")))?;
    let path = format!("/api/v1/service-proof?nonce={nonce}");
    let reply = send(
        sender,
        authority,
        Method::GET,
        &path,
        None,
        None,
        PROOF_BODY_LIMIT,
    )
    .await?;
    if reply.status != StatusCode::OK {
        return Err(TransportError::Unverified(format!(
            "it answered {} to the proof request",
            reply.status
        )));
    }
    let answer: ServiceProof = serde_json::from_str(&reply.body)
        .map_err(|_| TransportError::Unverified("its proof is not readable".into()))?;
    let bound: SocketAddr = answer
        .addr
        .parse()
        .map_err(|_| TransportError::Unverified("its address is not readable".into()))?;
    // The proof must name this very connection: a wildcard or any other address (another
    // listener, another family) never passes, whatever the service is bound to.
    let peer = SocketAddr::new(peer.ip().to_canonical(), peer.port());
    if bound != peer {
        return Err(TransportError::Unverified(format!(
            "it answered for {bound}, but this connection is to {peer}"
        )));
    }
    let key = digest::digest(token);
    if !answer
        .proofs
        .iter()
        .any(|p| proof::check(&key, &nonce, &answer.addr, p))
    {
        return Err(TransportError::Unverified(
            "its proof does not match the API token".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broker_urls_are_plain_http_origins() {
        assert_eq!(
            Endpoint::from_url("http://127.0.0.1:7777/").unwrap(),
            Endpoint::Tcp {
                authority: "127.0.0.1:7777".into()
            }
        );
        assert_eq!(
            Endpoint::from_url("http://localhost").unwrap(),
            Endpoint::Tcp {
                authority: "localhost:80".into()
            }
        );
        for bad in [
            "https://127.0.0.1:7777",
            "http://h/x",
            "unix:/tmp/s",
            "junk",
        ] {
            assert!(Endpoint::from_url(bad).is_err(), "{bad}");
        }
    }
}
