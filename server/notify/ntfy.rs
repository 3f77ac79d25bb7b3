//! The ntfy channel: a message published to a topic URL (ntfy.sh or a self-hosted server) in
//! ntfy's publish format: the text as the body, `Title`, and `Click` with the link, so tapping the
//! phone's notification opens the question. An optional `token_file` gives an access token
//! (`Authorization: Bearer`).

use std::path::PathBuf;

use serde::Deserialize;

use super::send::{HttpUrl, Outbound, SendError, http_answer, http_client, read_secret};

/// `kind = "ntfy"`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NtfyConfig {
    /// The topic URL, e.g. `https://ntfy.sh/my-secret-topic`.
    pub url: HttpUrl,
    /// The owner-only file holding an access token, for a topic that needs one.
    pub token_file: Option<PathBuf>,
}

/// An ntfy topic ready to publish to.
#[derive(Clone)]
pub struct Ntfy {
    url: url::Url,
    token: Option<String>,
    client: reqwest::Client,
}

impl Ntfy {
    /// Reads the token, when there is one.
    ///
    /// # Errors
    /// What is wrong with the token file.
    pub fn new(config: &NtfyConfig) -> Result<Ntfy, String> {
        let token = match &config.token_file {
            Some(path) => Some(read_secret(path).map_err(|e| format!("token_file {e}"))?),
            None => None,
        };
        Ok(Ntfy {
            url: config.url.0.clone(),
            token,
            client: http_client()?,
        })
    }

    /// Publishes `notice`.
    ///
    /// # Errors
    /// [`SendError`].
    pub async fn send(&self, notice: &Outbound) -> Result<String, SendError> {
        let mut request = self
            .client
            .post(self.url.clone())
            .header("Title", &notice.title)
            .header("Click", &notice.url)
            .header("Tags", "bell")
            .body(notice.text.clone());
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        http_answer(request.send().await).await
    }
}
