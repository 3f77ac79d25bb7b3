//! Discovery for MCP authorization (2025-06-18 / 2025-11-25 `basic/authorization`): the
//! `WWW-Authenticate` challenge of a 401/403, the protected resource metadata (RFC 9728) and the
//! authorization server metadata (RFC 8414, then OpenID Connect discovery). Metadata that does
//! not match the origin it claims is refused, and so is an endpoint over plain http except on
//! loopback: a token must never travel in clear text or to a server the resource did not name.

use reqwest::StatusCode;

use super::transport::AuthHttp;
use serde::Deserialize;
use url::Url;

use super::AuthError;
use crate::proxy::http::net::{describe, is_loopback};

/// The parameters of a `Bearer` challenge (RFC 6750 §3, RFC 9728 §5.1).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Challenge {
    /// `resource_metadata`: where the protected resource metadata is.
    pub resource_metadata: Option<String>,
    /// `scope`: the scopes the request needs.
    pub scope: Option<String>,
    /// `error`, e.g. `insufficient_scope`.
    pub error: Option<String>,
}

impl Challenge {
    /// Parses a `WWW-Authenticate` value; only the `Bearer` challenge's parameters are kept.
    pub fn parse(header: &str) -> Challenge {
        let mut challenge = Challenge::default();
        let Some(start) = header.to_ascii_lowercase().find("bearer") else {
            return challenge;
        };
        let mut rest = &header[start + "bearer".len()..];
        loop {
            rest = rest.trim_start_matches([' ', ',', '\t']);
            let Some(eq) = rest.find('=') else { break };
            let key = rest[..eq].trim().to_ascii_lowercase();
            rest = &rest[eq + 1..];
            let value;
            if let Some(quoted) = rest.strip_prefix('"') {
                let end = quoted.find('"').unwrap_or(quoted.len());
                value = quoted[..end].to_owned();
                rest = quoted.get(end + 1..).unwrap_or("");
            } else {
                let end = rest.find([',', ' ']).unwrap_or(rest.len());
                value = rest[..end].to_owned();
                rest = &rest[end..];
            }
            match key.as_str() {
                "resource_metadata" => challenge.resource_metadata = Some(value),
                "scope" => challenge.scope = Some(value),
                "error" => challenge.error = Some(value),
                _ => {}
            }
        }
        challenge
    }
}

/// Protected resource metadata (RFC 9728 §2), the fields used.
#[derive(Debug, Clone, Deserialize)]
pub struct ResourceMetadata {
    /// The resource identifier.
    pub resource: String,
    /// Issuer URLs of the authorization servers.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// Scopes the resource knows.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
}

/// Authorization server metadata (RFC 8414 §2), the fields used.
#[derive(Debug, Clone, Deserialize)]
pub struct ServerMetadata {
    /// The issuer identifier; must equal the URL it was discovered from.
    pub issuer: String,
    /// Where the person signs in.
    pub authorization_endpoint: String,
    /// Where codes and refresh tokens are exchanged.
    pub token_endpoint: String,
    /// Dynamic client registration (RFC 7591), when offered.
    #[serde(default)]
    pub registration_endpoint: Option<String>,
    /// PKCE methods; `S256` must be among them.
    #[serde(default)]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Token endpoint authentication methods; absent means `client_secret_basic`.
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Whether the server accepts a client ID metadata document as `client_id`.
    #[serde(default)]
    pub client_id_metadata_document_supported: Option<bool>,
    /// Whether authorization responses carry `iss` (RFC 9207 §3).
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: Option<bool>,
}

/// Finds the protected resource metadata of the MCP server at `server`.
///
/// # Errors
/// [`AuthError::Discovery`] when none is found or it names another resource.
pub async fn resource_metadata(
    http: &AuthHttp,
    server: &Url,
    challenge: &Challenge,
) -> Result<ResourceMetadata, AuthError> {
    // Each candidate with the resource identifier its metadata must name (RFC 9728 §3.3): the
    // URL the request went to when the challenge named the metadata, else the identifier the
    // well-known string was inserted into.
    let mut candidates = Vec::new();
    if let Some(given) = &challenge.resource_metadata {
        let url = Url::parse(given)
            .map_err(|_| AuthError::Discovery("resource_metadata is not a URL".into()))?;
        candidates.push((url, vec![server.clone()]));
    } else {
        let path = server.path().trim_end_matches('/');
        if !path.is_empty() {
            candidates.push((
                well_known(server, "oauth-protected-resource", path),
                vec![server.clone()],
            ));
        }
        // The origin's own metadata: about the origin, or (as MCP servers publish it) about
        // this very server URL.
        let mut origin = server.clone();
        origin.set_path("/");
        origin.set_query(None);
        origin.set_fragment(None);
        candidates.push((
            well_known(server, "oauth-protected-resource", ""),
            vec![origin, server.clone()],
        ));
    }
    for (url, expected) in candidates {
        secure(&url, "the protected resource metadata")?;
        let Some(meta) = fetch::<ResourceMetadata>(http, &url).await? else {
            continue;
        };
        let resource = Url::parse(&meta.resource).map_err(|_| {
            AuthError::Discovery("the resource metadata's resource is not a URL".into())
        })?;
        // RFC 9728 §3.3 / §7.3: the metadata must be about this server, the whole URL.
        if !expected.iter().any(|e| same_resource(e, &resource)) {
            return Err(AuthError::Mismatch(
                "the protected resource metadata names another resource".into(),
            ));
        }
        return Ok(meta);
    }
    Err(AuthError::Discovery(
        "no protected resource metadata (RFC 9728) was found".into(),
    ))
}

/// Finds the metadata of the authorization server `issuer` (RFC 8414 §3 with path insertion,
/// then OpenID Connect discovery, in the order of the 2025-11-25 spec).
///
/// # Errors
/// [`AuthError::Discovery`] when none is found; [`AuthError::Mismatch`] when its `issuer`
/// differs; [`AuthError::Insecure`] for an endpoint over plain http off loopback.
pub async fn server_metadata(http: &AuthHttp, issuer: &str) -> Result<ServerMetadata, AuthError> {
    let issuer_url = Url::parse(issuer)
        .map_err(|_| AuthError::Discovery("the authorization server is not a URL".into()))?;
    secure(&issuer_url, "the authorization server")?;
    let path = issuer_url.path().trim_end_matches('/');
    let candidates = if path.is_empty() {
        vec![
            well_known(&issuer_url, "oauth-authorization-server", ""),
            well_known(&issuer_url, "openid-configuration", ""),
        ]
    } else {
        let mut appended = issuer_url.clone();
        appended.set_path(&format!("{path}/.well-known/openid-configuration"));
        vec![
            well_known(&issuer_url, "oauth-authorization-server", path),
            well_known(&issuer_url, "openid-configuration", path),
            appended,
        ]
    };
    for url in candidates {
        let Some(meta) = fetch::<ServerMetadata>(http, &url).await? else {
            continue;
        };
        if meta.issuer.trim_end_matches('/') != issuer.trim_end_matches('/') {
            return Err(AuthError::Mismatch(
                "the authorization server metadata names another issuer".into(),
            ));
        }
        for (what, endpoint) in [
            (
                "the authorization endpoint",
                Some(&meta.authorization_endpoint),
            ),
            ("the token endpoint", Some(&meta.token_endpoint)),
            (
                "the registration endpoint",
                meta.registration_endpoint.as_ref(),
            ),
        ] {
            if let Some(endpoint) = endpoint {
                let url = Url::parse(endpoint)
                    .map_err(|_| AuthError::Discovery(format!("{what} is not a URL")))?;
                secure(&url, what)?;
            }
        }
        // 2025-11-25 §Authorization Code Protection: PKCE support is only known from the
        // metadata, so a server that does not list S256 (or lists nothing) is refused.
        if !meta
            .code_challenge_methods_supported
            .as_ref()
            .is_some_and(|m| m.iter().any(|m| m == "S256"))
        {
            return Err(AuthError::NoPkce);
        }
        return Ok(meta);
    }
    Err(AuthError::Discovery(
        "no authorization server metadata (RFC 8414 / OpenID discovery) was found".into(),
    ))
}

/// Whether two resource identifiers are the same URL (RFC 9728 §3.3 "identical"): scheme, host,
/// port, path and query all equal, a trailing `/` aside; never a prefix.
fn same_resource(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host() == b.host()
        && a.port_or_known_default() == b.port_or_known_default()
        && a.path().trim_end_matches('/') == b.path().trim_end_matches('/')
        && a.query() == b.query()
}

/// `origin/.well-known/NAME` + `path` (RFC 8414 §3.1 / RFC 9728 §3.1 path insertion).
fn well_known(base: &Url, name: &str, path: &str) -> Url {
    let mut url = base.clone();
    url.set_path(&format!("/.well-known/{name}{path}"));
    url.set_query(None);
    url.set_fragment(None);
    url
}

/// Refuses plain http except on loopback.
///
/// # Errors
/// [`AuthError::Insecure`].
pub fn secure(url: &Url, what: &str) -> Result<(), AuthError> {
    match url.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(url) => Ok(()),
        _ => Err(AuthError::Insecure(what.to_owned())),
    }
}

/// GETs one metadata document; `None` when the server has none there (4xx).
async fn fetch<T: serde::de::DeserializeOwned>(
    http: &AuthHttp,
    url: &Url,
) -> Result<Option<T>, AuthError> {
    let response = http
        .to(url)
        .await
        .map_err(|e| AuthError::Discovery(e.to_string()))?
        .get(url.clone())
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| AuthError::Discovery(describe(&e)))?;
    let status = response.status();
    if status.is_client_error() || status == StatusCode::NOT_IMPLEMENTED {
        return Ok(None);
    }
    if !status.is_success() {
        return Err(AuthError::Discovery(format!(
            "metadata request answered HTTP {status}"
        )));
    }
    let body = super::transport::read_reply(response)
        .await
        .map_err(AuthError::Discovery)?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|_| AuthError::Discovery("metadata is not the expected JSON".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_challenge_parameters() {
        let c = Challenge::parse(
            r#"Bearer error="insufficient_scope", scope="a b", resource_metadata="https://x/.well-known/oauth-protected-resource""#,
        );
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(c.scope.as_deref(), Some("a b"));
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("https://x/.well-known/oauth-protected-resource")
        );
        assert_eq!(Challenge::parse("Basic realm=x"), Challenge::default());
    }

    #[test]
    fn plain_http_only_on_loopback() {
        assert!(secure(&Url::parse("http://127.0.0.1:9/token").unwrap(), "t").is_ok());
        assert!(secure(&Url::parse("https://as.example/token").unwrap(), "t").is_ok());
        assert!(secure(&Url::parse("http://as.example/token").unwrap(), "t").is_err());
    }

    #[test]
    fn a_resource_is_the_whole_url_never_a_prefix() {
        let u = |s: &str| Url::parse(s).unwrap();
        assert!(same_resource(&u("https://h/mcp"), &u("https://h/mcp")));
        assert!(same_resource(&u("https://h/mcp"), &u("https://H:443/mcp/")));
        assert!(!same_resource(&u("https://h/mcp"), &u("https://h/mc")));
        assert!(!same_resource(&u("https://h/mcp"), &u("https://h/")));
        assert!(!same_resource(
            &u("https://h/mcp"),
            &u("https://h/mcp/other")
        ));
        assert!(!same_resource(&u("https://h/mcp"), &u("https://h/mcp?x=1")));
        assert!(!same_resource(&u("https://h/mcp"), &u("http://h/mcp")));
    }
}
