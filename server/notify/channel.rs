//! Notice channels beyond the desktop: what `[[notifications.channels]]` says ([`ChannelConfig`]),
//! the channel built from it with its secrets read ([`Channel`]), and one notice as every channel
//! sends it ([`Outbound`]). Each channel's own format is in its file (`webhook`, `ntfy`, `slack`,
//! `email`).
//!
//! A channel is named in errors and logs by its kind and 1-based position ("channel 2 (ntfy)"),
//! never by its URL (a Slack webhook URL is a secret). A send is bounded in time ([`SEND_TIMEOUT`])
//! and in what is read back ([`MAX_REPLY_BYTES`]).

use std::fmt;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize};

use super::{email, ntfy, slack, webhook};

/// Longest a channel may take to take one notice (connect, send, answer).
pub const SEND_TIMEOUT: Duration = Duration::from_secs(10);
/// Most bytes of a channel's answer read back (what `notify test` shows); the rest is dropped.
pub const MAX_REPLY_BYTES: usize = 4096;
/// Most characters of an answer shown by `notify test` and in logs.
const SHOWN_REPLY_CHARS: usize = 200;

/// One `[[notifications.channels]]` table, by its `kind`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ChannelConfig {
    /// `kind = "webhook"`: a signed JSON `POST`.
    Webhook(webhook::WebhookConfig),
    /// `kind = "ntfy"`: a message published to an ntfy topic.
    Ntfy(ntfy::NtfyConfig),
    /// `kind = "slack"`: a message through a Slack incoming webhook.
    Slack(slack::SlackConfig),
    /// `kind = "email"`: a plain-text mail over SMTP.
    Email(email::EmailConfig),
}

impl ChannelConfig {
    /// The secret files this channel names (checked with the config's other access files).
    pub fn secret_files(&self) -> Vec<&std::path::Path> {
        match self {
            ChannelConfig::Webhook(c) => vec![c.secret_file.as_path()],
            ChannelConfig::Ntfy(c) => c.token_file.iter().map(|p| p.as_path()).collect(),
            ChannelConfig::Slack(c) => vec![c.url_file.as_path()],
            ChannelConfig::Email(c) => c.password_file.iter().map(|p| p.as_path()).collect(),
        }
    }

    /// The `kind` (also the `channel` label of `mcp_consent_notifications_failed_total`).
    pub fn kind(&self) -> &'static str {
        match self {
            ChannelConfig::Webhook(_) => "webhook",
            ChannelConfig::Ntfy(_) => "ntfy",
            ChannelConfig::Slack(_) => "slack",
            ChannelConfig::Email(_) => "email",
        }
    }
}

/// `[[notifications.channels]]` in order; each table is read on its own so an error names the
/// channel by kind and position.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChannelConfigs(pub Vec<ChannelConfig>);

impl<'de> Deserialize<'de> for ChannelConfigs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let tables = Vec::<toml::Value>::deserialize(d)?;
        tables
            .into_iter()
            .enumerate()
            .map(|(i, table)| {
                let kind = table
                    .get("kind")
                    .and_then(toml::Value::as_str)
                    .unwrap_or("no kind")
                    .to_owned();
                ChannelConfig::deserialize(table).map_err(|e| {
                    serde::de::Error::custom(format!(
                        "{}: {e}",
                        ChannelName {
                            position: i + 1,
                            kind: kind.clone()
                        }
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(ChannelConfigs)
    }
}

/// How a channel is named to the person: its 1-based position and kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelName {
    /// 1-based, in the order of the config file.
    pub position: usize,
    /// The `kind` as written.
    pub kind: String,
}

impl fmt::Display for ChannelName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "channel {} ({})", self.position, self.kind)
    }
}

/// A channel that cannot be set up (a secret file unusable, a value refused).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{name}: {message}")]
pub struct ChannelError {
    /// Which channel.
    pub name: ChannelName,
    /// What is wrong, naming the file when it is one.
    pub message: String,
}

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

/// A channel ready to send: its config with its secrets read.
#[derive(Clone)]
pub struct Channel {
    /// Its name in errors and logs.
    pub name: ChannelName,
    kind: &'static str,
    sender: Sender,
}

impl fmt::Debug for Channel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Channel")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

#[derive(Clone)]
enum Sender {
    Webhook(webhook::Webhook),
    Ntfy(ntfy::Ntfy),
    Slack(slack::Slack),
    Email(email::Email),
}

impl Channel {
    /// Builds every configured channel, reading their secret files.
    ///
    /// # Errors
    /// [`ChannelError`] for the first channel that cannot be set up.
    pub fn build_all(configs: &[ChannelConfig]) -> Result<Vec<Channel>, ChannelError> {
        configs
            .iter()
            .enumerate()
            .map(|(i, c)| Channel::build(i + 1, c))
            .collect()
    }

    /// Builds the channel at `position` (1-based) from `config`.
    ///
    /// # Errors
    /// [`ChannelError`] naming the channel.
    pub fn build(position: usize, config: &ChannelConfig) -> Result<Channel, ChannelError> {
        let name = ChannelName {
            position,
            kind: config.kind().to_owned(),
        };
        let fail = |message: String| ChannelError {
            name: name.clone(),
            message,
        };
        let sender = match config {
            ChannelConfig::Webhook(c) => Sender::Webhook(webhook::Webhook::new(c).map_err(fail)?),
            ChannelConfig::Ntfy(c) => Sender::Ntfy(ntfy::Ntfy::new(c).map_err(fail)?),
            ChannelConfig::Slack(c) => Sender::Slack(slack::Slack::new(c).map_err(fail)?),
            ChannelConfig::Email(c) => Sender::Email(email::Email::new(c).map_err(fail)?),
        };
        Ok(Channel {
            name,
            kind: config.kind(),
            sender,
        })
    }

    /// The kind (the `channel` label of the failure counter).
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// Whether this channel is `selector`: its kind or its 1-based position.
    pub fn is(&self, selector: &str) -> bool {
        selector == self.kind || selector.parse::<usize>().ok() == Some(self.name.position)
    }

    /// Sends `notice`, within [`SEND_TIMEOUT`]; returns what the receiver answered (short).
    ///
    /// # Errors
    /// [`SendError`].
    pub async fn send(&self, notice: &Outbound) -> Result<String, SendError> {
        let sending = async {
            match &self.sender {
                Sender::Webhook(w) => w.send(notice).await,
                Sender::Ntfy(n) => n.send(notice).await,
                Sender::Slack(s) => s.send(notice).await,
                Sender::Email(e) => e.send(notice).await,
            }
        };
        tokio::time::timeout(SEND_TIMEOUT, sending)
            .await
            .map_err(|_| SendError::Timeout)?
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct File {
        #[serde(default)]
        channels: ChannelConfigs,
    }

    fn parse(text: &str) -> Result<Vec<ChannelConfig>, String> {
        toml::from_str::<File>(text)
            .map(|f| f.channels.0)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn errors_name_the_channel_by_position_and_kind() {
        let text = r#"
            [[channels]]
            kind = "ntfy"
            url = "https://ntfy.sh/topic"

            [[channels]]
            kind = "webhook"
            url = "https://example.com/hook"
        "#;
        let e = parse(text).unwrap_err();
        assert!(e.contains("channel 2 (webhook)"), "{e}");
        assert!(e.contains("secret_file"), "{e}");
        let e = parse("[[channels]]\nkind = \"pager\"").unwrap_err();
        assert!(e.contains("channel 1 (pager)"), "{e}");
        let e = parse("[[channels]]\nkind = \"ntfy\"\nurl = \"ftp://x/y\"").unwrap_err();
        assert!(e.contains("channel 1 (ntfy)") && e.contains("http"), "{e}");
        let e = parse("[[channels]]\nkind = \"slack\"\nurl_file = \"/x\"\nurl = \"https://a/b\"")
            .unwrap_err();
        assert!(e.contains("channel 1 (slack)") && e.contains("url"), "{e}");
        let ok = parse(&text.replace(
            "url = \"https://example.com/hook\"",
            "url = \"https://example.com/hook\"\nsecret_file = \"/s\"",
        ))
        .unwrap();
        assert_eq!(
            ok.iter().map(ChannelConfig::kind).collect::<Vec<_>>(),
            ["ntfy", "webhook"]
        );
    }
}
