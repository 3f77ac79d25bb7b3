//! Notice channels beyond the desktop: what `[[notifications.channels]]` says ([`ChannelConfig`]),
//! the channel built from it with its secrets read ([`Channel`]), and one notice as every channel
//! sends it ([`Outbound`], in [`super::send`]). Each channel's own format is in its file (`webhook`,
//! `ntfy`, `slack`, `email`).
//!
//! A channel is named in errors and logs by its kind and 1-based position ("channel 2 (ntfy)"),
//! never by its URL (a Slack webhook URL is a secret). A send is bounded in time and in what is
//! read back ([`super::send`]).

use std::fmt;

use serde::{Deserialize, Deserializer};

use super::send::{Outbound, SEND_TIMEOUT, SendError};
use super::{email, ntfy, slack, webhook};

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

/// Every [`ChannelConfig::kind`].
const KINDS: [&str; 4] = ["webhook", "ntfy", "slack", "email"];

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
                // Only a kind it knows names the channel: any other is a value the person
                // typed, which an error never repeats (it may be a pasted secret).
                let kind = match table.get("kind").and_then(toml::Value::as_str) {
                    Some(kind) if KINDS.contains(&kind) => kind,
                    Some(_) => "unknown kind",
                    None => "no kind",
                }
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
        // A kind it does not know is not repeated (it may be a pasted secret).
        let e = parse("[[channels]]\nkind = \"pager\"").unwrap_err();
        assert!(e.contains("channel 1 (unknown kind)"), "{e}");
        assert!(!e.contains("(pager)"), "{e}");
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
