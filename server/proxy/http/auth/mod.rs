//! MCP authorization for a remote server (2025-06-18 through 2026-07-28 `basic/authorization`):
//! on a 401 (or a 403 `insufficient_scope`), discover the authorization server ([`discover`]),
//! identify the client ([`register`]: pre-registered, client ID metadata document or RFC 7591
//! registration as a `native` application), have the person sign in through the service's
//! queue ([`signin`]) with the authorization code flow, PKCE S256 and the `resource` indicator
//! (RFC 8707) exactly as the protected resource metadata publishes it, check the response's
//! `iss` against the issuer (RFC 9207), and keep the tokens, refreshed when they expire,
//! owner-only at `<state>/oauth/<name>.json`, bound to the authorization server that issued
//! them. A step-up asks for the scopes asked before together with the challenged ones.
//! Tokens never reach logs, events or metrics: nothing here derives `Debug` over them and
//! errors never carry them.

mod consent;
pub mod discover;
pub mod guard;
pub mod register;
mod signin;
mod transport;

use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use oauth2::basic::BasicClient;
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, PkceCodeChallenge,
    PkceCodeVerifier, RedirectUrl, RefreshToken, Scope, TokenResponse, TokenUrl,
};
use serde::{Deserialize, Serialize};
use url::Url;

use crate::client::ServiceClient;
use discover::Challenge;
use register::{ClientConfig, Identity, TokenAuth};
use transport::AuthHttp;

/// Why the proxy could not get a token (the text goes to the host; it never holds a secret).
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// Metadata missing or unusable.
    #[error("authorization discovery failed: {0}")]
    Discovery(String),
    /// Metadata that claims another origin than it came from.
    #[error("authorization refused: {0}")]
    Mismatch(String),
    /// An authorization server whose metadata does not list PKCE S256.
    #[error("authorization refused: the authorization server does not support PKCE S256")]
    NoPkce,
    /// An endpoint over plain http off loopback.
    #[error("authorization refused: {0} is not https")]
    Insecure(String),
    /// No way to obtain a client id.
    #[error("cannot register with the authorization server: {0}")]
    Registration(String),
    /// The loopback listener could not open.
    #[error("cannot open the sign-in callback: {0}")]
    Callback(String),
    /// The sign-in question could not be asked or was declined.
    #[error("sign-in question: {0}")]
    Question(String),
    /// The authorization server redirected with an error.
    #[error("the authorization server refused the sign-in: {0}")]
    Denied(String),
    /// Nobody signed in in time.
    #[error("nobody signed in within ten minutes")]
    TimedOut,
    /// The code or refresh exchange failed.
    #[error("token request failed: {0}")]
    Token(String),
}

/// What is stored at `<state>/oauth/<name>.json` (0600).
#[derive(Clone, Serialize, Deserialize)]
struct Stored {
    /// The MCP server's URL (`--url`): which server these tokens are for.
    resource: String,
    /// The `resource` parameter sent (RFC 8707): the protected resource metadata's `resource`
    /// as published; absent in files written before it was kept (the server URL then).
    #[serde(default)]
    indicator: Option<String>,
    /// The authorization server (as the protected resource metadata names it) that registered
    /// the client and issued the tokens; a refresh goes only to the same one.
    #[serde(default)]
    authorization_server: Option<String>,
    /// The scopes last asked for, kept in a step-up.
    #[serde(default)]
    scope: Option<String>,
    client_id: String,
    client_secret: Option<String>,
    /// How the token endpoint is authenticated.
    auth_method: TokenAuth,
    token_endpoint: String,
    access_token: String,
    refresh_token: Option<String>,
}

/// The authorization state of one remote server.
pub struct Auth {
    name: String,
    service: ServiceClient,
    store: PathBuf,
    client: ClientConfig,
    http: AuthHttp,
    current: Mutex<Option<Stored>>,
    /// The sign-in question while it is open.
    asking: Mutex<Option<String>>,
    /// One authorization at a time; requests that failed meanwhile reuse its result.
    flight: tokio::sync::Mutex<()>,
}

impl Auth {
    /// Authorization for the server `name` as the client `client`, its tokens under
    /// `state_root/oauth/`. Stored tokens for another resource or another pre-registered
    /// client are not used.
    ///
    /// # Errors
    /// Text when the HTTP client cannot be built.
    pub fn new(
        name: &str,
        service: ServiceClient,
        state_root: PathBuf,
        resource: &Url,
        client: ClientConfig,
    ) -> Result<Auth, reqwest::Error> {
        // The name becomes one file name: `/` and anything unusual are percent-encoded.
        let file: String = url::form_urlencoded::byte_serialize(name.as_bytes()).collect();
        let store = state_root.join("oauth").join(format!("{file}.json"));
        let current = crate::paths::read_private(&store)
            .ok()
            .and_then(|t| serde_json::from_str::<Stored>(&t).ok())
            .filter(|s| s.resource == resource.as_str())
            .filter(|s| client.client_id().is_none_or(|id| id == s.client_id));
        Ok(Auth {
            name: name.to_owned(),
            service,
            store,
            client,
            http: AuthHttp::new()?,
            current: Mutex::new(current),
            asking: Mutex::new(None),
            flight: tokio::sync::Mutex::new(()),
        })
    }

    /// Withdraws the sign-in question still open (the host left; nobody can use a sign-in any
    /// more), bounded to two seconds.
    pub async fn withdraw(&self) {
        let open = lock(&self.asking).take();
        if let Some(question) = open {
            let cancel = self.service.cancel(&question);
            if !matches!(
                tokio::time::timeout(std::time::Duration::from_secs(2), cancel).await,
                Ok(Ok(()))
            ) {
                tracing::warn!(server = %self.name, "could not withdraw the sign-in question");
            }
        }
    }

    /// The access token to send, if any.
    pub fn bearer(&self) -> Option<String> {
        lock(&self.current).as_ref().map(|s| s.access_token.clone())
    }

    /// Gets a new token after the server refused `sent` with `www_authenticate` over a
    /// connection to `peer`: refresh when the refusal is not about scope, else (or when
    /// refreshing fails) sign in anew. `peer` decides whether the server is itself local
    /// ([`guard::Guard::settle`]).
    ///
    /// # Errors
    /// [`AuthError`].
    pub async fn authorize(
        &self,
        resource: &Url,
        www_authenticate: Option<&str>,
        sent: Option<&str>,
        peer: Option<std::net::SocketAddr>,
    ) -> Result<(), AuthError> {
        let _flight = self.flight.lock().await;
        if self.bearer().as_deref() != sent {
            return Ok(()); // another request already got a new token
        }
        self.http.guard.settle(resource, peer).await;
        let challenge = Challenge::parse(www_authenticate.unwrap_or(""));
        let prm = discover::resource_metadata(&self.http, resource, &challenge).await;
        let stored = lock(&self.current).clone();
        // Tokens are bound to the authorization server that issued them (2026-07-28
        // client-registration §Authorization Server Binding): once the resource names another
        // one, the refresh token and the client are not offered to it; the person signs in
        // there anew.
        let same_server = |s: &Stored| match (&s.authorization_server, &prm) {
            (Some(ours), Ok(prm)) => prm.authorization_servers.first() == Some(ours),
            _ => true,
        };
        if let Some(stored) =
            stored.filter(|_| challenge.error.as_deref() != Some("insufficient_scope"))
            && stored.refresh_token.is_some()
            && same_server(&stored)
        {
            match self.refresh(stored).await {
                Ok(()) => return Ok(()),
                Err(e) => tracing::info!(server = %self.name, "refresh failed, signing in: {e}"),
            }
        }
        self.sign_in(resource, &challenge, prm?).await
    }

    async fn refresh(&self, mut stored: Stored) -> Result<(), AuthError> {
        let Some(refresh) = stored.refresh_token.clone() else {
            return Err(AuthError::Token("no refresh token".into()));
        };
        let client = oauth_client(&stored)?;
        let http = self.http.exchanger();
        let token = client
            .exchange_refresh_token(&RefreshToken::new(refresh))
            .add_extra_param("resource", stored.indicator().to_owned())
            .request_async(&http)
            .await
            .map_err(token_error)?;
        stored.access_token = token.access_token().secret().clone();
        if let Some(r) = token.refresh_token() {
            stored.refresh_token = Some(r.secret().clone());
        }
        self.keep(stored);
        Ok(())
    }

    async fn sign_in(
        &self,
        resource: &Url,
        challenge: &Challenge,
        prm: discover::ResourceMetadata,
    ) -> Result<(), AuthError> {
        let issuer = prm.authorization_servers.first().ok_or_else(|| {
            AuthError::Discovery("the resource names no authorization server".into())
        })?;
        let meta = discover::server_metadata(&self.http, issuer).await?;
        let identity = register::identify(&self.client, &meta)?;
        let callback = signin::Callback::open().await?;
        let registered = match identity {
            Identity::Ready(registered) => registered,
            // Nothing beyond the metadata before the person agrees: the registration waits for
            // their consent.
            Identity::Dynamic(endpoint) => {
                let authorize = url::Url::parse(&meta.authorization_endpoint)
                    .map_err(|e| AuthError::Discovery(e.to_string()))?;
                let agreed = consent::ask(&self.service, &self.name, &authorize, &endpoint, |id| {
                    *lock(&self.asking) = Some(id.to_owned());
                })
                .await;
                *lock(&self.asking) = None;
                agreed?;
                register::dynamic(&self.http, &endpoint, &self.name, &callback.redirect_uri).await?
            }
        };
        let mut stored = self.new_stored(resource, challenge, &prm, issuer, &meta, registered);
        let (authorize, state, verifier) =
            authorization_request(&stored, &meta, &callback.redirect_uri)?;
        let redirect = signin::ask(
            &self.service,
            &self.name,
            &authorize,
            &callback,
            state.secret(),
            |id| *lock(&self.asking) = Some(id.to_owned()),
        )
        .await;
        *lock(&self.asking) = None;
        let redirect = redirect?;
        // RFC 9207 §2.4, before the code goes anywhere and before an error is believed.
        check_issuer(&meta, redirect.iss.as_deref())?;
        let code = redirect.outcome.map_err(AuthError::Denied)?;
        let http = self.http.exchanger();
        let token = oauth_client(&stored)?
            .set_redirect_uri(RedirectUrl::from_url(callback.redirect_uri.clone()))
            .exchange_code(AuthorizationCode::new(code))
            .set_pkce_verifier(verifier)
            .add_extra_param("resource", stored.indicator().to_owned())
            .request_async(&http)
            .await
            .map_err(token_error)?;
        stored.access_token = token.access_token().secret().clone();
        stored.refresh_token = token.refresh_token().map(|r| r.secret().clone());
        self.keep(stored);
        tracing::info!(server = %self.name, "signed in to the remote server");
        Ok(())
    }

    /// What a new sign-in will keep, before its tokens: the resource and its indicator, the
    /// authorization server, the scopes to ask for, the registered client.
    fn new_stored(
        &self,
        resource: &Url,
        challenge: &Challenge,
        prm: &discover::ResourceMetadata,
        issuer: &str,
        meta: &discover::ServerMetadata,
        registered: register::Registered,
    ) -> Stored {
        // A step-up keeps what was asked before (2026-07-28 §Step-Up Authorization Flow).
        let asked_before = lock(&self.current).as_ref().and_then(|s| s.scope.clone());
        let scope = challenge
            .scope
            .clone()
            .or_else(|| prm.scopes_supported.as_ref().map(|s| s.join(" ")));
        let scope = union(asked_before.as_deref(), scope.as_deref());
        Stored {
            resource: resource.to_string(),
            // Exactly as published: a parsed URL would gain a "/" on a pathless identifier.
            indicator: Some(prm.resource.clone()),
            authorization_server: Some(issuer.to_owned()),
            scope,
            client_id: registered.client_id,
            client_secret: registered.client_secret,
            auth_method: registered.auth,
            token_endpoint: meta.token_endpoint.clone(),
            access_token: String::new(),
            refresh_token: None,
        }
    }

    /// Keeps `stored` in memory and on disk (owner-only; a failure to write is logged).
    fn keep(&self, stored: Stored) {
        if let Some(dir) = self.store.parent() {
            use std::os::unix::fs::DirBuilderExt;
            let _ = std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir);
        }
        match serde_json::to_string(&stored) {
            Ok(text) => {
                if let Err(e) = crate::paths::write_private(&self.store, &text) {
                    tracing::warn!(server = %self.name, "cannot store the tokens: {e}");
                }
            }
            Err(e) => tracing::warn!(server = %self.name, "cannot store the tokens: {e}"),
        }
        *lock(&self.current) = Some(stored);
    }
}

impl Stored {
    /// The `resource` parameter to send.
    fn indicator(&self) -> &str {
        self.indicator.as_deref().unwrap_or(&self.resource)
    }
}

/// The scopes of `before` followed by those of `challenged` not among them; `None` when both
/// are empty (the `scope` parameter is then left out).
fn union(before: Option<&str>, challenged: Option<&str>) -> Option<String> {
    let mut scopes: Vec<&str> = Vec::new();
    for s in before
        .into_iter()
        .chain(challenged)
        .flat_map(str::split_ascii_whitespace)
    {
        if !scopes.contains(&s) {
            scopes.push(s);
        }
    }
    (!scopes.is_empty()).then(|| scopes.join(" "))
}

/// The authorization response's `iss` against the issuer of the metadata the request was built
/// from (2026-07-28 §Authorization Response Validation): compared as plain strings when present,
/// required when the metadata says the server sends it.
fn check_issuer(meta: &discover::ServerMetadata, iss: Option<&str>) -> Result<(), AuthError> {
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

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The authorization request the person is sent to (authorization code flow, PKCE S256, the
/// `resource` indicator, the scopes), with its `state` and the PKCE verifier.
fn authorization_request(
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

type Configured = oauth2::Client<
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
fn oauth_client(stored: &Stored) -> Result<Configured, AuthError> {
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

fn token_error<E: std::error::Error>(e: E) -> AuthError {
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
    use crate::paths::StateDir;

    #[test]
    fn a_step_up_asks_for_the_earlier_scopes_and_the_challenged_ones() {
        assert_eq!(
            union(Some("mcp:basic"), Some("mcp:write mcp:basic")).as_deref(),
            Some("mcp:basic mcp:write")
        );
        assert_eq!(union(None, Some("a b")).as_deref(), Some("a b"));
        assert_eq!(union(Some(""), None), None);
    }

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
    fn the_server_name_is_one_file_name_under_oauth() {
        let root = PathBuf::from("/state");
        let service = ServiceClient::new(StateDir::at(root.clone()), None);
        let resource = Url::parse("https://mcp.example.com/mcp").unwrap();
        let auth = Auth::new(
            "../../x/y",
            service,
            root.clone(),
            &resource,
            ClientConfig::default(),
        )
        .unwrap();
        assert_eq!(auth.store.parent(), Some(root.join("oauth").as_path()));
        assert_eq!(
            auth.store.file_name().and_then(|f| f.to_str()),
            Some("..%2F..%2Fx%2Fy.json")
        );
    }
}
