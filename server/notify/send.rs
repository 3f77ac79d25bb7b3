//! What every channel's send stands on: one notice as the channels send it ([`Outbound`]),
//! why a send failed ([`SendError`]), and the shared plumbing — secret files, the HTTP client,
//! `http`/`https` URLs from the config, the bounded read of an answer. A leaf: the channels use
//! it, and [`super::channel`] builds them, without an arrow back.
//!
//! A send is bounded in time ([`SEND_TIMEOUT`]) and in what is read back ([`MAX_REPLY_BYTES`]).

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize};

/// Longest a channel may take to take one notice (connect, send, answer).
pub const SEND_TIMEOUT: Duration = Duration::from_secs(10);
/// Most bytes of a channel's answer read back (what `notify test` shows); the rest is dropped.
pub const MAX_REPLY_BYTES: usize = 4096;
/// Most characters of an answer shown by `notify test` and in logs.
const SHOWN_REPLY_CHARS: usize = 200;

/// Why one send failed. Messages carry no secret (no URL, token or password).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SendError {
    /// Not done within [`SEND_TIMEOUT`].
    #[error("no answer within {} s", SEND_TIMEOUT.as_secs())]
    Timeout,
    /// Could not connect or the connection failed.
    #[error("cannot reach it: {0}")]
    Transport(String),
    /// The receiver answered with an error.
    #[error("it answered {0}")]
    Refused(String),
}

/// One notice as the channels send it: the question's summary and the link to it, nothing of
/// the request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outbound {
    /// The question's id (the last one's, for a summary of several; `test` for a test notice).
    pub id: String,
    /// The asking server's name.
    pub server: String,
    /// `sampling`, `form` or `url` (`test` for a test notice).
    pub kind: String,
    /// The host's tool call the question came from, when known.
    pub tool: Option<String>,
    /// How many questions are waiting now.
    pub waiting: u64,
    /// The page to open: the question's, or the queue's for a summary.
    pub url: String,
    /// When the notice was made, RFC 3339 UTC.
    pub at: String,
    /// The title (`mcp-consent`).
    #[serde(skip)]
    pub title: String,
    /// The one-line text in the person's language ("weather asks for input").
    #[serde(skip)]
    pub text: String,
}

/// Reads a secret file through the owner checks of [`crate::access_files`] (the owner's, not
/// reached through another user's link, not readable or writable by others), dropping the
/// trailing newline; an empty secret is refused.
///
/// # Errors
/// What is wrong, naming the file.
pub fn read_secret(path: &Path) -> Result<String, String> {
    let text = crate::access_files::read(path, crate::access_files::Holds::Secret)
        .map_err(|e| e.to_string())?;
    let secret = text.trim_end_matches(['\n', '\r']);
    if secret.is_empty() {
        return Err(format!("{} is empty", path.display()));
    }
    Ok(secret.to_owned())
}

/// The HTTP client every HTTP channel uses: bounded in time, never following a redirect (the
/// notice goes where the config says, and a redirect could carry a secret URL elsewhere).
///
/// # Errors
/// What failed (TLS setup).
pub fn http_client() -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .timeout(SEND_TIMEOUT)
        .connect_timeout(SEND_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("mcp-consent/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| e.to_string())
}

/// An `http`/`https` URL from the config.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpUrl(pub url::Url);

impl<'de> Deserialize<'de> for HttpUrl {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        let url = url::Url::parse(&text)
            .map_err(|e| serde::de::Error::custom(format!("url is not a URL: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            return Err(serde::de::Error::custom(
                "url must be an http:// or https:// URL with a host",
            ));
        }
        Ok(HttpUrl(url))
    }
}

/// Finishes an HTTP send: a success status gives its first bytes as the answer; any other
/// status is [`SendError::Refused`] with them. Reads at most [`MAX_REPLY_BYTES`].
///
/// # Errors
/// [`SendError`].
pub async fn http_answer(
    sent: Result<reqwest::Response, reqwest::Error>,
) -> Result<String, SendError> {
    let mut response = sent.map_err(transport)?;
    let status = response.status();
    let mut body = Vec::new();
    while body.len() < MAX_REPLY_BYTES {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) => break,
            Err(e) => return Err(transport(e)),
        }
    }
    body.truncate(MAX_REPLY_BYTES);
    let text: String = String::from_utf8_lossy(&body)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(SHOWN_REPLY_CHARS)
        .collect();
    let answer = if text.is_empty() {
        format!("HTTP {status}")
    } else {
        format!("HTTP {status}: {text}")
    };
    if status.is_success() {
        Ok(answer)
    } else {
        Err(SendError::Refused(answer))
    }
}

/// A transport error without its URL (which may be a secret).
fn transport(e: reqwest::Error) -> SendError {
    if e.is_timeout() {
        return SendError::Timeout;
    }
    SendError::Transport(chain(&e.without_url()))
}

/// `e` and its causes, joined with ": ".
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}
