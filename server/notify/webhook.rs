//! The webhook channel: a `POST` of the notice as JSON, `{"id","server","kind","tool","waiting",
//! "url","at"}`, signed with `X-Mcp-Consent-Signature: sha256=<hex HMAC-SHA256 of the body>`
//! keyed by the secret in `secret_file`, so the receiver can tell the notice is the service's.

use std::path::PathBuf;

use hmac::{Hmac, Mac};
use serde::Deserialize;
use sha2::Sha256;

use super::send::{HttpUrl, Outbound, SendError, http_answer, http_client, read_secret};

/// The signature header.
pub const SIGNATURE_HEADER: &str = "X-Mcp-Consent-Signature";

/// `kind = "webhook"`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookConfig {
    /// Where the notice is posted.
    pub url: HttpUrl,
    /// The owner-only file holding the HMAC key.
    pub secret_file: PathBuf,
}

/// A webhook ready to send.
#[derive(Clone)]
pub struct Webhook {
    url: url::Url,
    secret: String,
    client: reqwest::Client,
}

impl Webhook {
    /// Reads the secret.
    ///
    /// # Errors
    /// What is wrong with the secret file.
    pub fn new(config: &WebhookConfig) -> Result<Webhook, String> {
        Ok(Webhook {
            url: config.url.0.clone(),
            secret: read_secret(&config.secret_file).map_err(|e| format!("secret_file {e}"))?,
            client: http_client()?,
        })
    }

    /// Posts `notice`.
    ///
    /// # Errors
    /// [`SendError`].
    pub async fn send(&self, notice: &Outbound) -> Result<String, SendError> {
        let body = serde_json::to_vec(notice).map_err(|e| SendError::Transport(e.to_string()))?;
        let sent = self
            .client
            .post(self.url.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(SIGNATURE_HEADER, signature(&self.secret, &body))
            .body(body)
            .send()
            .await;
        http_answer(sent).await
    }
}

/// `sha256=<hex HMAC-SHA256 of body keyed by secret>`.
pub fn signature(secret: &str, body: &[u8]) -> String {
    // HMAC accepts keys of any length, so this cannot fail.
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.as_bytes()) else {
        return String::new();
    };
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_hmac_sha256_of_the_body() {
        // RFC 4231 test case 2.
        assert_eq!(
            signature("Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
