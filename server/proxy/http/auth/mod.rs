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
mod exchange;
pub mod guard;
pub mod register;
mod signin;
mod transport;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use oauth2::{AuthorizationCode, RedirectUrl, RefreshToken, TokenResponse};
use serde::{Deserialize, Serialize};
use url::Url;

use crate::client::ServiceClient;
use discover::Challenge;
use exchange::{
    authorization_request, check_issuer, oauth_client, sendable, sendable_token, token_error,
};
use register::{ClientConfig, Identity, TokenAuth};
use transport::AuthHttp;

/// Why the proxy could not get a token (the text goes to the host; it never holds a secret).
/// `Clone` so that one failed authorization answers every request that waited for it.
#[derive(Debug, Clone, thiserror::Error)]
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
    /// The authorization server issued an access token that cannot be sent in an HTTP header
    /// (RFC 6750 §2.1 allows visible ASCII only); it is not kept.
    #[error("token request failed: the access token cannot be sent in an Authorization header")]
    Unsendable,
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

/// What one request was sent with ([`Auth::sent`]); no `Debug`, it holds the token.
pub struct Sent {
    token: Option<String>,
    finished: u64,
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
    /// The withdrawal of a sign-in question whose request was given up, still under way.
    withdrawing: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// One authorization at a time, with the failure of the last one that finished.
    flight: tokio::sync::Mutex<Option<AuthError>>,
    /// How many authorizations have finished: a request that waited while one ran takes its
    /// outcome rather than asking the person again.
    finished: AtomicU64,
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
            withdrawing: Mutex::new(None),
            flight: tokio::sync::Mutex::new(None),
            finished: AtomicU64::new(0),
        })
    }

    /// Withdraws the sign-in question still open (the host left; nobody can use a sign-in any
    /// more), bounded to two seconds.
    pub async fn withdraw(&self) {
        let open = lock(&self.asking).take();
        if let Some(question) = open {
            withdraw_question(&self.service, &self.name, &question).await;
        }
        let under_way = lock(&self.withdrawing).take();
        if let Some(task) = under_way {
            let _ = task.await;
        }
    }

    /// The access token to send, if any: none when the stored one cannot be sent as a header
    /// (a file from before such tokens were refused), so the next refusal refreshes it.
    pub fn bearer(&self) -> Option<String> {
        lock(&self.current)
            .as_ref()
            .map(|s| s.access_token.clone())
            .filter(|t| sendable(t))
    }

    /// What a request is sent with, taken before it goes: the access token and how many
    /// authorizations had finished.
    pub fn sent(&self) -> Sent {
        Sent {
            token: self.bearer(),
            finished: self.finished.load(Ordering::Acquire),
        }
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
        sent: &Sent,
        peer: Option<std::net::SocketAddr>,
    ) -> Result<(), AuthError> {
        let mut flight = self.flight.lock().await;
        if self.bearer() != sent.token {
            return Ok(()); // another request already got a new token
        }
        // One that finished since this request was sent failed: the person was asked once, and
        // that answer stands for every request refused meanwhile.
        if self.finished.load(Ordering::Acquire) != sent.finished
            && let Some(failed) = flight.as_ref()
        {
            return Err(failed.clone());
        }
        let outcome = self.authorize_now(resource, www_authenticate, peer).await;
        *flight = outcome.as_ref().err().cloned();
        self.finished.fetch_add(1, Ordering::AcqRel);
        outcome
    }

    /// One authorization: refresh, else sign in (see [`Auth::authorize`]).
    async fn authorize_now(
        &self,
        resource: &Url,
        www_authenticate: Option<&str>,
        peer: Option<std::net::SocketAddr>,
    ) -> Result<(), AuthError> {
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
        stored.access_token = sendable_token(token.access_token())?;
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
        // Dropped with this future when the host gives up the request: the question goes too.
        let _open = OpenQuestion(self);
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
        stored.access_token = sendable_token(token.access_token())?;
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

/// Withdraws the open sign-in question of an authorization whose request was given up: its
/// future is dropped, on the host's cancel, while the person is being asked. Answered or
/// failed questions are cleared before, so this withdraws only one still open.
struct OpenQuestion<'a>(&'a Auth);

impl Drop for OpenQuestion<'_> {
    fn drop(&mut self) {
        let Some(question) = lock(&self.0.asking).take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (service, name) = (self.0.service.clone(), self.0.name.clone());
        let task =
            runtime.spawn(async move { withdraw_question(&service, &name, &question).await });
        *lock(&self.0.withdrawing) = Some(task);
    }
}

/// Cancels the question `id`, bounded to two seconds; a failure is logged.
async fn withdraw_question(service: &ServiceClient, name: &str, id: &str) {
    let cancel = service.cancel(id);
    if !matches!(
        tokio::time::timeout(std::time::Duration::from_secs(2), cancel).await,
        Ok(Ok(()))
    ) {
        tracing::warn!(server = %name, "could not withdraw the sign-in question");
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
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
