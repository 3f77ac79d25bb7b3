//! HTTP for authorization: metadata, registration and token requests. None follows a redirect
//! (RFC 6749 §3.2: a token endpoint that redirects could forward the code elsewhere), and, like
//! the MCP requests, a loopback URL never goes through the environment's proxy.

use std::future::Future;
use std::pin::Pin;

use reqwest::Client;
use url::Url;

use crate::proxy::http::remote::{describe, is_loopback, read_body};

/// The largest token or registration reply read, in bytes.
const REPLY_LIMIT: usize = 256 * 1024;

/// A transport failure of the OAuth client (no URL in the text).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Transport(String);

/// The two clients: direct for loopback, through the environment's proxy otherwise.
#[derive(Clone)]
pub struct AuthHttp {
    direct: Client,
    proxied: Client,
}

/// What [`AuthHttp::exchanger`] returns for each request.
type Exchange = Pin<Box<dyn Future<Output = Result<oauth2::HttpResponse, Transport>> + Send>>;

impl AuthHttp {
    /// Both clients, no redirects.
    ///
    /// # Errors
    /// When the TLS backend cannot start.
    pub fn new() -> Result<AuthHttp, reqwest::Error> {
        let builder = || {
            Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .connect_timeout(std::time::Duration::from_secs(30))
                .user_agent(concat!("mcp-consent/", env!("CARGO_PKG_VERSION")))
        };
        Ok(AuthHttp {
            direct: builder().no_proxy().build()?,
            proxied: builder().build()?,
        })
    }

    /// The client for `url`.
    pub fn to(&self, url: &Url) -> &Client {
        if is_loopback(url) {
            &self.direct
        } else {
            &self.proxied
        }
    }

    /// The HTTP function the `oauth2` crate calls for token requests.
    pub fn exchanger(&self) -> impl Fn(oauth2::HttpRequest) -> Exchange + use<> {
        let http = self.clone();
        move |request: oauth2::HttpRequest| {
            let http = http.clone();
            Box::pin(async move {
                let request =
                    reqwest::Request::try_from(request).map_err(|e| Transport(describe(&e)))?;
                let client = http.to(request.url()).clone();
                let response = client
                    .execute(request)
                    .await
                    .map_err(|e| Transport(describe(&e)))?;
                let mut builder = http::Response::builder().status(response.status());
                for (k, v) in response.headers() {
                    builder = builder.header(k, v);
                }
                let body = read_body(response, REPLY_LIMIT).await.map_err(Transport)?;
                builder.body(body).map_err(|e| Transport(e.to_string()))
            }) as Exchange
        }
    }
}
