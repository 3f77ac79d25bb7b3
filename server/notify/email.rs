//! The email channel: a plain-text mail whose subject names the server and the kind and whose
//! body holds the link, over SMTP through `lettre`. `smtp://HOST[:PORT]` (default port 25) is
//! plain SMTP upgraded with STARTTLS when the server offers it; `smtps://HOST[:PORT]` (default
//! 465) is TLS from the first byte. Both verify the server against the system's roots
//! (`SSL_CERT_FILE` too, through `rustls-native-certs`). `username` and `password_file` log in.

use std::path::PathBuf;

use lettre::message::header::ContentType;
use lettre::message::{Mailbox, Message};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};
use serde::{Deserialize, Deserializer};

use super::send::{Outbound, SEND_TIMEOUT, SendError, chain, read_secret};

/// `kind = "email"`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmailConfig {
    /// `smtp://HOST[:PORT]` or `smtps://HOST[:PORT]`.
    pub smtp_url: SmtpUrl,
    /// The login name, when the server needs one.
    pub username: Option<String>,
    /// The owner-only file holding the password (needs `username`).
    pub password_file: Option<PathBuf>,
    /// The sender, `me@example.com` or `mcp-consent <me@example.com>`.
    #[serde(deserialize_with = "mailbox")]
    pub from: Mailbox,
    /// One address or a list of them.
    #[serde(deserialize_with = "mailboxes")]
    pub to: Vec<Mailbox>,
}

/// Where and how the mail is sent.
#[derive(Debug, Clone, PartialEq)]
pub struct SmtpUrl {
    /// The server's host name or address.
    pub host: String,
    /// The port.
    pub port: u16,
    /// `smtps`: TLS from the first byte; else STARTTLS when offered.
    pub implicit_tls: bool,
}

impl<'de> Deserialize<'de> for SmtpUrl {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        let url = url::Url::parse(&text)
            .map_err(|e| serde::de::Error::custom(format!("smtp_url is not a URL: {e}")))?;
        let implicit_tls = match url.scheme() {
            "smtp" => false,
            "smtps" => true,
            _ => {
                return Err(serde::de::Error::custom(
                    "smtp_url must start with smtp:// (STARTTLS when offered) or smtps:// (TLS)",
                ));
            }
        };
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| serde::de::Error::custom("smtp_url has no host"))?;
        if !url.username().is_empty() || url.password().is_some() {
            return Err(serde::de::Error::custom(
                "smtp_url must not hold a login; use username and password_file",
            ));
        }
        Ok(SmtpUrl {
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned(),
            port: url.port().unwrap_or(if implicit_tls { 465 } else { 25 }),
            implicit_tls,
        })
    }
}

fn parse_mailbox<E: serde::de::Error>(key: &str, text: &str) -> Result<Mailbox, E> {
    text.parse::<Mailbox>()
        .map_err(|e| E::custom(format!("{key}: {text:?} is not a mail address: {e}")))
}

fn mailbox<'de, D: Deserializer<'de>>(d: D) -> Result<Mailbox, D::Error> {
    parse_mailbox("from", &String::deserialize(d)?)
}

fn mailboxes<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Mailbox>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    let list = match OneOrMany::deserialize(d)? {
        OneOrMany::One(one) => vec![one],
        OneOrMany::Many(many) => many,
    };
    if list.is_empty() {
        return Err(serde::de::Error::custom("to names no address"));
    }
    list.iter().map(|t| parse_mailbox("to", t)).collect()
}

/// A mail channel ready to send.
#[derive(Clone)]
pub struct Email {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    to: Vec<Mailbox>,
}

impl Email {
    /// Reads the password and sets up the transport.
    ///
    /// # Errors
    /// What is wrong with the password file or the TLS setup.
    pub fn new(config: &EmailConfig) -> Result<Email, String> {
        let url = &config.smtp_url;
        let params = TlsParameters::new(url.host.clone()).map_err(|e| format!("TLS setup: {e}"))?;
        let tls = if url.implicit_tls {
            Tls::Wrapper(params)
        } else {
            Tls::Opportunistic(params)
        };
        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&url.host)
            .port(url.port)
            .tls(tls)
            .timeout(Some(SEND_TIMEOUT));
        match (&config.username, &config.password_file) {
            (Some(user), password_file) => {
                let password = match password_file {
                    Some(path) => read_secret(path).map_err(|e| format!("password_file {e}"))?,
                    None => String::new(),
                };
                builder = builder.credentials(Credentials::new(user.clone(), password));
            }
            (None, Some(_)) => return Err("password_file needs username".to_owned()),
            (None, None) => {}
        }
        Ok(Email {
            transport: builder.build(),
            from: config.from.clone(),
            to: config.to.clone(),
        })
    }

    /// Mails `notice`.
    ///
    /// # Errors
    /// [`SendError`].
    pub async fn send(&self, notice: &Outbound) -> Result<String, SendError> {
        let mut message = Message::builder()
            .from(self.from.clone())
            .subject(format!("{}: {}", notice.title, notice.text))
            .header(ContentType::TEXT_PLAIN);
        for to in &self.to {
            message = message.to(to.clone());
        }
        let mail = message
            .body(body(notice))
            .map_err(|e| SendError::Transport(e.to_string()))?;
        match self.transport.send(mail).await {
            Ok(response) => {
                let text = response.message().collect::<Vec<_>>().join(" ");
                Ok(format!("SMTP {}: {text}", response.code()))
            }
            Err(e) if e.is_timeout() => Err(SendError::Timeout),
            Err(e) if e.is_permanent() || e.is_transient() => Err(SendError::Refused(chain(&e))),
            Err(e) => Err(SendError::Transport(chain(&e))),
        }
    }
}

/// The mail's text: what waits, the tool when known, and the link.
pub fn body(notice: &Outbound) -> String {
    let mut text = format!("{}\n\n", notice.text);
    if let Some(tool) = &notice.tool {
        text.push_str(&format!("Tool: {tool}\n"));
    }
    text.push_str(&format!(
        "Questions waiting: {}\n\nOpen it: {}\n",
        notice.waiting, notice.url
    ));
    text
}
