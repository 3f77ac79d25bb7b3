//! The OAuth requests built from a registered client: the authorization request (code flow,
//! PKCE S256, the `resource` indicator), the token endpoint client, and the checks on what comes
//! back (the response's issuer, an access token a header can carry).

use oauth2::basic::BasicClient;
use oauth2::{
    AuthType, AuthUrl, ClientId, ClientSecret, CsrfToken, PkceCodeChallenge, PkceCodeVerifier,
    RedirectUrl, Scope, TokenUrl,
};
use url::Url;

use super::register::TokenAuth;
use super::{AuthError, Stored, discover};

/// The authorization response's `iss` against the issuer of the metadata the request was built
/// from (2026-07-28 §Authorization Response Validation): compared as plain strings when present,
/// required when the metadata says the server sends it.
pub(super) fn check_issuer(
    meta: &discover::ServerMetadata,
    iss: Option<&str>,
) -> Result<(), AuthError> {
    match iss {
        Some(iss) if iss == meta.issuer => Ok(()),
        Some(_) => Err(AuthError::Mismatch(
            "the authorization response names another issuer".into(),
        )),
        None if meta.authorization_response_iss_parameter_supported == Some(true) => {
            Err(AuthError::Mismatch(
                "the authorization response lacks the issuer its server promised".into(),
            ))
        }
        None => Ok(()),
    }
}

/// Whether `token` can go in an `Authorization: Bearer` header: not empty, visible ASCII only
/// (RFC 6750 §2.1's `b64token` is a subset).
pub(super) fn sendable(token: &str) -> bool {
    !token.is_empty() && token.bytes().all(|b| b.is_ascii_graphic())
}

/// The access token of a token response, refused when it cannot be sent.
pub(super) fn sendable_token(token: &oauth2::AccessToken) -> Result<String, AuthError> {
    let secret = token.secret();
    if sendable(secret) {
        Ok(secret.clone())
    } else {
        Err(AuthError::Unsendable)
    }
}

/// The authorization request the person is sent to (authorization code flow, PKCE S256, the
/// `resource` indicator, the scopes), with its `state` and the PKCE verifier.
pub(super) fn authorization_request(
    stored: &Stored,
    meta: &discover::ServerMetadata,
    redirect_uri: &Url,
) -> Result<(Url, CsrfToken, PkceCodeVerifier), AuthError> {
    let client = oauth_client(stored)?
        .set_auth_uri(
            AuthUrl::new(meta.authorization_endpoint.clone())
                .map_err(|e| AuthError::Discovery(e.to_string()))?,
        )
        .set_redirect_uri(RedirectUrl::from_url(redirect_uri.clone()));
    let (challenge_pkce, verifier) = PkceCodeChallenge::new_random_sha256();
    let mut request = client
        .authorize_url(CsrfToken::new_random)
        .set_pkce_challenge(challenge_pkce)
        .add_extra_param("resource", stored.indicator().to_owned());
    if let Some(scope) = &stored.scope {
        request = request.add_scopes(scope.split(' ').map(|s| Scope::new(s.to_owned())));
    }
    let (authorize, state) = request.url();
    Ok((authorize, state, verifier))
}

pub(super) type Configured = oauth2::Client<
    oauth2::basic::BasicErrorResponse,
    oauth2::basic::BasicTokenResponse,
    oauth2::basic::BasicTokenIntrospectionResponse,
    oauth2::StandardRevocableToken,
    oauth2::basic::BasicRevocationErrorResponse,
    oauth2::EndpointNotSet,
    oauth2::EndpointNotSet,
    oauth2::EndpointNotSet,
    oauth2::EndpointNotSet,
    oauth2::EndpointSet,
>;

/// An `oauth2` client for the token endpoint with the registered credentials.
pub(super) fn oauth_client(stored: &Stored) -> Result<Configured, AuthError> {
    let mut client = BasicClient::new(ClientId::new(stored.client_id.clone())).set_token_uri(
        TokenUrl::new(stored.token_endpoint.clone())
            .map_err(|e| AuthError::Token(e.to_string()))?,
    );
    if let Some(secret) = &stored.client_secret
        && stored.auth_method != TokenAuth::Public
    {
        client = client.set_client_secret(ClientSecret::new(secret.clone()));
    }
    let auth_type = if stored.auth_method == TokenAuth::ClientSecretBasic {
        AuthType::BasicAuth
    } else {
        AuthType::RequestBody
    };
    Ok(client.set_auth_type(auth_type))
}

pub(super) fn token_error<E: std::error::Error>(e: E) -> AuthError {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    AuthError::Token(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(iss_supported: Option<bool>) -> discover::ServerMetadata {
        serde_json::from_value(serde_json::json!({
            "issuer": "http://localhost:9",
            "authorization_endpoint": "http://localhost:9/authorize",
            "token_endpoint": "http://localhost:9/token",
            "authorization_response_iss_parameter_supported": iss_supported,
        }))
        .unwrap()
    }

    #[test]
    fn the_response_issuer_is_compared_as_a_plain_string_and_required_when_promised() {
        let promised = metadata(Some(true));
        let silent = metadata(None);
        assert!(check_issuer(&promised, Some("http://localhost:9")).is_ok());
        assert!(check_issuer(&promised, Some("http://localhost:9/")).is_err());
        assert!(check_issuer(&promised, Some("https://evil.example.com")).is_err());
        assert!(check_issuer(&promised, None).is_err());
        assert!(check_issuer(&silent, None).is_ok());
        assert!(check_issuer(&silent, Some("https://evil.example.com")).is_err());
        assert!(check_issuer(&silent, Some("http://localhost:9")).is_ok());
    }

    #[test]
    fn only_a_token_of_visible_ascii_is_sent() {
        assert!(sendable("eyJhbGciOi.J9-_~+/=="));
        for bad in [
            "",
            "a b",
            "at\nbad",
            "at\r\nX-Injected: 1",
            "caf\u{e9}",
            "tab\there",
        ] {
            assert!(!sendable(bad), "{bad:?}");
        }
        let refused = sendable_token(&oauth2::AccessToken::new("a\nb".into()));
        assert!(matches!(refused, Err(AuthError::Unsendable)));
    }
}
