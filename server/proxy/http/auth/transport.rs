//! HTTP for authorization: metadata, registration and token requests. None follows a redirect
//! (RFC 6749 §3.2: a token endpoint that redirects could forward the code elsewhere), each is
//! held to public addresses by the [`Guard`] unless the MCP server itself is local, each must
//! finish within [`REQUEST_TIME`] and no reply is read past [`REPLY_LIMIT`]; like the MCP
//! requests, a loopback URL never goes through the environment's proxy.

use std::future::Future;
use std::pin::Pin;

use reqwest::Client;
use url::Url;

use super::guard::Guard;
use crate::proxy::http::net::{describe, is_loopback, read_body};

/// The largest metadata, token or registration reply read, in bytes.
pub const REPLY_LIMIT: usize = 256 * 1024;
/// The longest an authorization request may take, connecting and reading its whole reply.
pub const REQUEST_TIME: std::time::Duration = std::time::Duration::from_secs(30);

/// A transport failure of the OAuth client (no URL in the text).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Transport(String);

/// The two clients: direct for loopback, through the environment's proxy otherwise.
#[derive(Clone)]
pub struct AuthHttp {
    direct: Client,
    proxied: Client,
    /// Holds every request to public addresses unless the MCP server is local.
    pub guard: Guard,
}

/// What [`AuthHttp::exchanger`] returns for each request.
type Exchange = Pin<Box<dyn Future<Output = Result<oauth2::HttpResponse, Transport>> + Send>>;

impl AuthHttp {
    /// Both clients, no redirects, resolving through the guard.
    ///
    /// # Errors
    /// When the TLS backend cannot start.
    pub fn new() -> Result<AuthHttp, reqwest::Error> {
        let guard = Guard::new();
        let builder = || {
            Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .connect_timeout(REQUEST_TIME)
                .timeout(REQUEST_TIME)
                .dns_resolver(guard.resolver())
                .user_agent(concat!("mcp-consent/", env!("CARGO_PKG_VERSION")))
        };
        Ok(AuthHttp {
            direct: builder().no_proxy().build()?,
            proxied: builder().build()?,
            guard,
        })
    }

    /// The client for `url`, once the guard allows it.
    ///
    /// # Errors
    /// [`Transport`] naming the refused host.
    pub async fn to(&self, url: &Url) -> Result<&Client, Transport> {
        self.guard
            .check(url)
            .await
            .map_err(|e| Transport(e.to_string()))?;
        Ok(if is_loopback(url) {
            &self.direct
        } else {
            &self.proxied
        })
    }

    /// The HTTP function the `oauth2` crate calls for token requests.
    pub fn exchanger(&self) -> impl Fn(oauth2::HttpRequest) -> Exchange + use<> {
        let http = self.clone();
        move |request: oauth2::HttpRequest| {
            let http = http.clone();
            Box::pin(async move {
                let request =
                    reqwest::Request::try_from(request).map_err(|e| Transport(describe(&e)))?;
                let client = http.to(request.url()).await?.clone();
                let response = client
                    .execute(request)
                    .await
                    .map_err(|e| Transport(describe(&e)))?;
                let mut builder = http::Response::builder().status(response.status());
                for (k, v) in response.headers() {
                    builder = builder.header(k, v);
                }
                let body = read_reply(response).await.map_err(Transport)?;
                builder.body(body).map_err(|e| Transport(e.to_string()))
            }) as Exchange
        }
    }
}

/// Reads a whole authorization reply, at most [`REPLY_LIMIT`] bytes (the client's
/// [`REQUEST_TIME`] bounds how long).
///
/// # Errors
/// Text naming the cause: over the limit, too slow, or a broken transfer.
pub async fn read_reply(response: reqwest::Response) -> Result<Vec<u8>, String> {
    read_body(response, REPLY_LIMIT)
        .await
        .map_err(|e| e.to_string())
}
