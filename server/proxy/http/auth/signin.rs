//! The person's part of signing in: a loopback listener for the redirect (RFC 8252 §7.3,
//! `http://127.0.0.1:PORT/callback`) and the sign-in question in the service's queue, a URL
//! question (`elicitation/create`, url mode) the person opens in the pages; the opening and
//! the waiting are shared with the consent question ([`super::consent`]).

use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use url::Url;

use super::AuthError;
use crate::client::{Opened, ServiceClient, Waited};
use crate::protocol::era::Era;
use crate::wire::OpenRequest;

/// How long the proxy waits for the person to sign in.
pub(super) const SIGN_IN_TIME: Duration = Duration::from_secs(600);
/// The largest callback request read, in bytes.
const CALLBACK_LIMIT: usize = 16 * 1024;
/// How long one connection to the callback may take to send its request.
const CONNECTION_TIME: Duration = Duration::from_secs(10);
/// Connections to the callback read at once.
const MAX_CONNECTIONS: usize = 64;
/// The page the browser shows after the redirect.
const DONE_PAGE: &str =
    "<!doctype html><title>Signed in</title><p>Signed in. You may close this page.</p>";

/// The loopback listener waiting for one redirect.
pub struct Callback {
    listener: TcpListener,
    /// The redirect URI to register and send.
    pub redirect_uri: Url,
}

impl Callback {
    /// Opens `127.0.0.1:0`.
    ///
    /// # Errors
    /// [`AuthError::Callback`] when no port can be opened.
    pub async fn open() -> Result<Callback, AuthError> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| AuthError::Callback(e.to_string()))?;
        let port = listener
            .local_addr()
            .map_err(|e| AuthError::Callback(e.to_string()))?
            .port();
        let redirect_uri = Url::parse(&format!("http://127.0.0.1:{port}/callback"))
            .map_err(|e| AuthError::Callback(e.to_string()))?;
        Ok(Callback {
            listener,
            redirect_uri,
        })
    }

    /// Waits for the redirect carrying `state`, and returns the authorization response it
    /// holds. Requests without the right `state` get a 400 and are ignored (a page elsewhere
    /// cannot inject a code). Each connection is read on its own task within
    /// [`CONNECTION_TIME`], so an idle or slow connection (another user's, say) never holds up
    /// the browser's redirect.
    pub async fn code(&self, state: &str) -> Redirect {
        let (found, mut arrived) = tokio::sync::mpsc::channel::<Redirect>(1);
        // Dropped (with every reader still running) when the code arrives.
        let mut readers = tokio::task::JoinSet::new();
        let mut order = std::collections::VecDeque::new();
        loop {
            tokio::select! {
                accepted = self.listener.accept() => {
                    let Ok((stream, _)) = accepted else { continue };
                    while readers.try_join_next().is_some() {}
                    order.retain(|h: &tokio::task::AbortHandle| !h.is_finished());
                    // Bounded: beyond this many at once, the oldest reader is ended.
                    if order.len() >= MAX_CONNECTIONS
                        && let Some(oldest) = order.pop_front()
                    {
                        oldest.abort();
                    }
                    let (found, state, base) =
                        (found.clone(), state.to_owned(), self.redirect_uri.clone());
                    let handle = readers.spawn(async move {
                        let read = tokio::time::timeout(
                            CONNECTION_TIME,
                            one_request(stream, &base, &state),
                        );
                        if let Ok(Some(outcome)) = read.await {
                            let _ = found.send(outcome).await;
                        }
                    });
                    order.push_back(handle);
                }
                Some(outcome) = arrived.recv() => return outcome,
            }
        }
    }
}

/// The authorization response of one redirect (RFC 6749 §4.1.2, RFC 9207 §2).
pub struct Redirect {
    /// The `code`, or the `error` the server redirected with.
    pub outcome: Result<String, String>,
    /// `iss`: the issuer that says it sent the response.
    pub iss: Option<String>,
}

/// Reads one request on `stream` and answers it: `Some` with the authorization response when
/// it is the redirect carrying `state`, `None` for anything else.
async fn one_request(
    mut stream: tokio::net::TcpStream,
    base: &Url,
    state: &str,
) -> Option<Redirect> {
    let mut buf = vec![0u8; CALLBACK_LIMIT];
    let mut len = 0;
    while len < buf.len() {
        match stream.read(&mut buf[len..]).await {
            Ok(0) | Err(_) => break,
            Ok(n) => len += n,
        }
        if buf[..len].windows(4).any(|w| w == b"\r\n\r\n") {
            break;
        }
    }
    let head = String::from_utf8_lossy(&buf[..len]);
    let target = head
        .lines()
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .unwrap_or("");
    let url = base.join(target).ok()?;
    let query: std::collections::HashMap<_, _> = url.query_pairs().into_owned().collect();
    let matches =
        url.path() == "/callback" && query.get("state").map(String::as_str) == Some(state);
    let (status, body) = if matches {
        ("200 OK", DONE_PAGE)
    } else {
        ("400 Bad Request", "not expected")
    };
    let reply = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\ncache-control: no-store\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(reply.as_bytes()).await;
    let _ = stream.shutdown().await;
    if !matches {
        return None;
    }
    let iss = query.get("iss").cloned();
    if let Some(error) = query.get("error") {
        return Some(Redirect {
            outcome: Err(error.clone()),
            iss,
        });
    }
    query.get("code").map(|code| Redirect {
        outcome: Ok(code.clone()),
        iss,
    })
}

/// Opens `params` as an `elicitation/create` of mcp-consent's own for the server `name`, and
/// tells `opened` the question's id as soon as it exists (so it can be withdrawn when the host
/// leaves mid-way). A request as 2025-11-25 defines it (the first revision with URL mode),
/// which every revision since judges the same way; the service shows it as any question of
/// its kind.
///
/// # Errors
/// [`AuthError::Question`] when the question cannot be opened or is refused at once.
pub(super) async fn open_own(
    service: &ServiceClient,
    name: &str,
    params: serde_json::Value,
    opened: impl FnOnce(&str),
) -> Result<String, AuthError> {
    let rpc_id = format!("sign-in-{}", uuid::Uuid::now_v7());
    let body = OpenRequest {
        server: name.to_owned(),
        session: rpc_id.clone(),
        tool: None,
        protocol_version: Era::V2025_11_25.as_str().to_owned(),
        client_capabilities: json!({"elicitation": {"form": {}, "url": {}}}),
        request: json!({
            "jsonrpc": "2.0",
            "id": rpc_id,
            "method": "elicitation/create",
            "params": params,
        }),
        tool_info: None,
    };
    match service.open_request(&body).await {
        Ok(Opened::Question { id, .. }) => {
            opened(&id);
            Ok(id.to_string())
        }
        Ok(Opened::Response(_)) => Err(AuthError::Question("the sign-in was declined".into())),
        Err(e) => Err(AuthError::Question(e.to_string())),
    }
}

/// Asks the person to sign in at `authorize` through the service's queue and waits for the
/// redirect on `callback`; `opened` is told the question's id as soon as it exists.
///
/// # Errors
/// [`AuthError::Question`] when the question cannot be opened or is answered without signing
/// in; [`AuthError::TimedOut`] after ten minutes.
pub async fn ask(
    service: &ServiceClient,
    name: &str,
    authorize: &Url,
    callback: &Callback,
    state: &str,
    opened: impl FnOnce(&str),
) -> Result<Redirect, AuthError> {
    let host = authorize.host_str().unwrap_or("the authorization server");
    let elicitation_id = uuid::Uuid::now_v7().to_string();
    let params = json!({
        "mode": "url",
        "message": format!("{name} asks you to sign in at {host}"),
        "url": authorize.as_str(),
        "elicitationId": elicitation_id,
    });
    let question = open_own(service, name, params, opened).await?;
    let code = tokio::time::timeout(SIGN_IN_TIME, async {
        tokio::select! {
            redirect = callback.code(state) => Ok(redirect),
            refused = refused(service, &question) => Err(refused),
        }
    })
    .await;
    // The question has done its work (or expired); completion lets the page say so.
    let _ = service.complete(&elicitation_id).await;
    if code.is_err() {
        let _ = service.cancel(&question).await;
    }
    code.map_err(|_| AuthError::TimedOut)?
}

/// Resolves when the person declines or cancels the sign-in question, nobody answers it in
/// time, or it is withdrawn; stays pending once they opened the link (the redirect then brings
/// the code).
async fn refused(service: &ServiceClient, question: &str) -> AuthError {
    match answered(service, question).await {
        Ok(()) => std::future::pending().await,
        Err(refused) => refused,
    }
}

/// Resolves once the question is decided: `Ok` when the person accepted it (for the sign-in,
/// opened the link); the honest error when they declined or cancelled it, nobody answered in
/// time, or it was withdrawn. Waits through a service restart.
///
/// # Errors
/// [`AuthError::Question`] naming what happened.
pub(super) async fn answered(service: &ServiceClient, question: &str) -> Result<(), AuthError> {
    loop {
        match service.wait(question, 30).await {
            Ok(Waited::Pending) => {}
            Ok(Waited::Response(response)) => {
                return match response["result"]["action"].as_str() {
                    Some("accept") => Ok(()),
                    Some(_) => Err(AuthError::Question(
                        "the person declined the sign-in".into(),
                    )),
                    None => Err(AuthError::Question(
                        "nobody answered the sign-in question in time".into(),
                    )),
                };
            }
            Ok(Waited::Closed) => {
                return Err(AuthError::Question(
                    "the sign-in question was withdrawn".into(),
                ));
            }
            // The service restarting: keep waiting, ask again shortly.
            Err(_) => tokio::time::sleep(Duration::from_secs(1)).await,
        }
    }
}
