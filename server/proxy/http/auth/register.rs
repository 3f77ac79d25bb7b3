//! How the proxy identifies itself to an authorization server (2025-11-25 `basic/authorization`
//! §Client Registration Approaches), in the spec's order of preference: a pre-registered client
//! (`--client-id`, its secret from the environment), a client ID metadata document
//! (`--client-metadata-url`, when the server advertises support), then dynamic client
//! registration (RFC 7591). None of them available is an error that says what to pass.
//! [`identify`] picks one without contacting anything; [`dynamic`] registers, and is called
//! only once the person agreed to it (the sign-in's consent question).

use super::transport::AuthHttp;
use serde::Deserialize;
use url::Url;

use super::AuthError;
use super::discover::ServerMetadata;
use crate::proxy::http::net::describe;

/// The proxy's client options for MCP authorization (flattened into `mcp-consent proxy`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ClientArgs {
    /// A client pre-registered with the remote server's authorization server: its client id.
    /// Used instead of dynamic client registration.
    #[arg(long, requires = "url")]
    pub client_id: Option<String>,
    /// The environment variable holding the pre-registered client's secret (so it stays out
    /// of the host's config). Without it the client is public (PKCE only).
    #[arg(long, requires = "client_id", value_name = "ENVVAR")]
    pub client_secret_env: Option<String>,
    /// An https URL serving this client's metadata document (client ID metadata document),
    /// used as the client id when the authorization server supports it.
    #[arg(long, requires = "url", value_name = "URL")]
    pub client_metadata_url: Option<String>,
}

/// Why the client options are unusable (checked before anything is sent).
#[derive(Debug, thiserror::Error)]
pub enum ClientArgsError {
    /// `--client-secret-env` names an unset or non-UTF-8 variable.
    #[error("--client-secret-env: the environment variable {0} is not set")]
    SecretUnset(String),
    /// `--client-metadata-url` is not an https URL with a path.
    #[error("--client-metadata-url must be an https URL with a path")]
    MetadataUrl,
}

/// The client options, checked: the secret read, the metadata URL parsed.
#[derive(Clone, Default)]
pub struct ClientConfig {
    pre_registered: Option<(String, Option<String>)>,
    metadata_url: Option<Url>,
}

impl ClientConfig {
    /// Checks `args`, reading the secret through `env`.
    ///
    /// # Errors
    /// [`ClientArgsError`]; its text never holds the secret.
    pub fn from_args(
        args: &ClientArgs,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ClientConfig, ClientArgsError> {
        let secret = match &args.client_secret_env {
            Some(var) => Some(env(var).ok_or_else(|| ClientArgsError::SecretUnset(var.clone()))?),
            None => None,
        };
        let metadata_url = match &args.client_metadata_url {
            Some(u) => {
                let url = Url::parse(u).map_err(|_| ClientArgsError::MetadataUrl)?;
                // The spec requires https and a path component for a URL-formatted client id.
                if url.scheme() != "https" || url.path().trim_matches('/').is_empty() {
                    return Err(ClientArgsError::MetadataUrl);
                }
                Some(url)
            }
            None => None,
        };
        Ok(ClientConfig {
            pre_registered: args.client_id.clone().map(|id| (id, secret)),
            metadata_url,
        })
    }

    /// The configured pre-registered client id, if any.
    pub fn client_id(&self) -> Option<&str> {
        self.pre_registered.as_ref().map(|(id, _)| id.as_str())
    }
}

/// How the proxy authenticates at the token endpoint (RFC 7591 §2 names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenAuth {
    /// HTTP Basic with the client id and secret.
    ClientSecretBasic,
    /// The client id and secret in the form body.
    ClientSecretPost,
    /// A public client: the client id in the body, no secret.
    #[serde(rename = "none")]
    Public,
}

/// The client the proxy signs in as.
pub struct Registered {
    /// `client_id` (for a metadata document, its URL).
    pub client_id: String,
    /// The client secret, for a confidential client.
    pub client_secret: Option<String>,
    /// How the token endpoint is authenticated.
    pub auth: TokenAuth,
}

/// How the proxy will identify itself, as [`identify`] finds it (nothing sent yet).
pub enum Identity {
    /// A pre-registered client or a client ID metadata document: nothing to register.
    Ready(Registered),
    /// Dynamic client registration at this endpoint ([`dynamic`]), once the person agreed.
    Dynamic(Url),
}

/// Picks the way the proxy identifies itself to the authorization server `meta`, without
/// contacting anything.
///
/// # Errors
/// [`AuthError::Registration`] when none is possible (no registration endpoint, or one that is
/// not a URL).
pub fn identify(config: &ClientConfig, meta: &ServerMetadata) -> Result<Identity, AuthError> {
    if let Some((client_id, secret)) = &config.pre_registered {
        let auth = match secret {
            None => TokenAuth::Public,
            Some(_) => secret_method(meta),
        };
        return Ok(Identity::Ready(Registered {
            client_id: client_id.clone(),
            client_secret: secret.clone(),
            auth,
        }));
    }
    if let Some(url) = &config.metadata_url
        && meta.client_id_metadata_document_supported == Some(true)
    {
        return Ok(Identity::Ready(Registered {
            client_id: url.to_string(),
            client_secret: None,
            auth: TokenAuth::Public,
        }));
    }
    let Some(endpoint) = &meta.registration_endpoint else {
        let why = if meta.client_id_metadata_document_supported == Some(true) {
            "it offers no dynamic client registration; pass --client-metadata-url (a client ID metadata document) or --client-id"
        } else {
            "it offers no dynamic client registration; pass a pre-registered client with --client-id"
        };
        return Err(AuthError::Registration(why.into()));
    };
    let endpoint = Url::parse(endpoint)
        .map_err(|_| AuthError::Registration("the registration endpoint is not a URL".into()))?;
    Ok(Identity::Dynamic(endpoint))
}

/// The secret method the server supports: `client_secret_basic` unless it lists only
/// `client_secret_post` (RFC 8414 §2: basic is the default when the list is absent).
fn secret_method(meta: &ServerMetadata) -> TokenAuth {
    match &meta.token_endpoint_auth_methods_supported {
        Some(methods)
            if !methods.iter().any(|m| m == "client_secret_basic")
                && methods.iter().any(|m| m == "client_secret_post") =>
        {
            TokenAuth::ClientSecretPost
        }
        _ => TokenAuth::ClientSecretBasic,
    }
}

/// Dynamic client registration (RFC 7591 §3) at `endpoint`, with `redirect` as the only
/// redirect URI: one POST of public client metadata.
///
/// # Errors
/// [`AuthError::Registration`] when the request fails or the reply is not a registration.
pub async fn dynamic(
    http: &AuthHttp,
    endpoint: &Url,
    name: &str,
    redirect: &Url,
) -> Result<Registered, AuthError> {
    #[derive(Deserialize)]
    struct Reply {
        client_id: String,
        client_secret: Option<String>,
        token_endpoint_auth_method: Option<String>,
    }
    let response = http
        .to(endpoint)
        .await
        .map_err(|e| AuthError::Registration(e.to_string()))?
        .post(endpoint.clone())
        .json(&serde_json::json!({
            "client_name": format!("mcp-consent ({name})"),
            "redirect_uris": [redirect.as_str()],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            // A local program with a loopback redirect (2026-07-28 client-registration
            // §Application Type: MUST be given; OIDC would default to "web").
            "application_type": "native",
        }))
        .send()
        .await
        .map_err(|e| AuthError::Registration(describe(&e)))?;
    if !response.status().is_success() {
        return Err(AuthError::Registration(format!(
            "HTTP {}",
            response.status()
        )));
    }
    // Bounded in size (and, by the client, in time): a reply that never ends is an error, not
    // a growing buffer.
    let body = super::transport::read_reply(response)
        .await
        .map_err(AuthError::Registration)?;
    let reply: Reply = serde_json::from_slice(&body)
        .map_err(|_| AuthError::Registration("the reply is not a registration".into()))?;
    // A method this proxy does not speak (e.g. `private_key_jwt`) falls back on what the reply
    // holds: a secret means Basic (RFC 7591 §2's default), none means a public client.
    let auth = match reply.token_endpoint_auth_method.as_deref() {
        Some("client_secret_post") => TokenAuth::ClientSecretPost,
        Some("none") => TokenAuth::Public,
        _ if reply.client_secret.is_some() => TokenAuth::ClientSecretBasic,
        _ => TokenAuth::Public,
    };
    Ok(Registered {
        client_id: reply.client_id,
        client_secret: reply.client_secret,
        auth,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(id: Option<&str>, secret: Option<&str>, url: Option<&str>) -> ClientArgs {
        ClientArgs {
            client_id: id.map(str::to_owned),
            client_secret_env: secret.map(str::to_owned),
            client_metadata_url: url.map(str::to_owned),
        }
    }

    #[test]
    fn the_secret_comes_from_the_environment_and_an_unset_one_is_named() {
        let env = |k: &str| (k == "SET").then(|| "s3cret".to_owned());
        let ok = ClientConfig::from_args(&args(Some("c"), Some("SET"), None), &env).unwrap();
        assert_eq!(
            ok.pre_registered,
            Some(("c".to_owned(), Some("s3cret".to_owned())))
        );
        let err = ClientConfig::from_args(&args(Some("c"), Some("UNSET"), None), &env)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("UNSET"), "{err}");
    }

    #[test]
    fn a_metadata_document_url_must_be_https_with_a_path() {
        let env = |_: &str| None;
        for bad in [
            "http://example.com/client.json",
            "https://example.com/",
            "nope",
        ] {
            assert!(
                ClientConfig::from_args(&args(None, None, Some(bad)), &env).is_err(),
                "{bad}"
            );
        }
        assert!(
            ClientConfig::from_args(
                &args(None, None, Some("https://example.com/client.json")),
                &env
            )
            .is_ok()
        );
    }
}
