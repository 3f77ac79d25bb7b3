//! The Slack channel: a message through an incoming webhook, with the link and no buttons (a
//! button in a channel would make the channel's members the approval list; the decision stays on
//! the page behind the person's login). The webhook URL is a secret, so it is read from
//! `url_file`.

use std::path::PathBuf;

use serde::Deserialize;

use super::send::{Outbound, SendError, http_answer, http_client, read_secret};

/// `kind = "slack"`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlackConfig {
    /// The owner-only file holding the incoming-webhook URL.
    pub url_file: PathBuf,
}

/// A Slack webhook ready to post to.
#[derive(Clone)]
pub struct Slack {
    url: url::Url,
    client: reqwest::Client,
}

impl Slack {
    /// Reads the webhook URL.
    ///
    /// # Errors
    /// What is wrong with the file or the URL in it (the URL itself is never shown).
    pub fn new(config: &SlackConfig) -> Result<Slack, String> {
        let text = read_secret(&config.url_file).map_err(|e| format!("url_file {e}"))?;
        let url = url::Url::parse(text.trim())
            .ok()
            .filter(|u| matches!(u.scheme(), "https" | "http") && u.host_str().is_some())
            .ok_or_else(|| {
                format!(
                    "url_file {} does not hold an http(s) URL",
                    config.url_file.display()
                )
            })?;
        Ok(Slack {
            url,
            client: http_client()?,
        })
    }

    /// Posts `notice` as `{"text": …}`.
    ///
    /// # Errors
    /// [`SendError`].
    pub async fn send(&self, notice: &Outbound) -> Result<String, SendError> {
        let body = serde_json::json!({ "text": text(notice) });
        http_answer(self.client.post(self.url.clone()).json(&body).send().await).await
    }
}

/// The message: the text, escaped for Slack's markup, and the link.
pub fn text(notice: &Outbound) -> String {
    let escape = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    format!(
        "{}: {} <{}|Open in mcp-consent>",
        escape(&notice.title),
        escape(&notice.text),
        notice.url
    )
}
