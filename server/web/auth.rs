//! Authentication: the local API bearer token (only its SHA-256 digest is stored, compared in
//! constant time), one-time login links, browser sessions (cookie `HttpOnly; SameSite=Strict`)
//! with a per-session CSRF token, and the Host/Origin check against DNS rebinding.

use std::future::Future;
use std::pin::Pin;

use actix_web::body::BoxBody;
use actix_web::cookie::{Cookie, SameSite, time::Duration as CookieDuration};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{AUTHORIZATION, HOST, ORIGIN};
use actix_web::middleware::Next;
use actix_web::{FromRequest, HttpRequest, HttpResponse, web};
use chrono::Utc;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::AppState;
use super::error::{ApiError, PageError};
use crate::db::models::{self, WebSessionRow};
use crate::db::{Db, DbError};

/// Name of the session cookie.
pub const SESSION_COOKIE: &str = "mcp_consent_session";
/// How long a browser session lasts, in hours.
pub const SESSION_HOURS: i64 = 12;
/// How long a login link stays valid, in minutes.
pub const LOGIN_LINK_MINUTES: i64 = 10;

/// 32 random bytes as 64 hex characters.
///
/// # Errors
/// The OS random source failed.
pub fn random_token() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(hex::encode(bytes))
}

/// SHA-256 of `text`, hex. Tokens are 256-bit random values, so a fast digest is enough (no
/// password hashing needed); only the digest is stored.
pub fn sha256_hex(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// The digests of the valid API tokens, loaded at start.
#[derive(Debug, Clone, Default)]
pub struct ApiTokens {
    digests: Vec<[u8; 32]>,
}

impl ApiTokens {
    /// From stored hex digests (malformed ones are skipped).
    pub fn from_hex(digests: &[String]) -> ApiTokens {
        ApiTokens {
            digests: digests
                .iter()
                .filter_map(|d| hex::decode(d).ok()?.try_into().ok())
                .collect(),
        }
    }

    /// True when `token` is one of the valid tokens; compares digests in constant time.
    pub fn verify(&self, token: &str) -> bool {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        self.digests
            .iter()
            .fold(subtle::Choice::from(0), |acc, d| acc | d.ct_eq(&digest))
            .into()
    }
}

/// A logged-in browser session.
#[derive(Debug, Clone)]
pub struct WebSession {
    /// Digest of the cookie secret (the row key).
    pub id_sha256: String,
    /// The CSRF token every form of this session carries.
    pub csrf: String,
}

impl WebSession {
    /// Checks a submitted CSRF token, in constant time.
    ///
    /// # Errors
    /// [`PageError::Forbidden`] when it does not match.
    pub fn check_csrf(&self, submitted: Option<&str>) -> Result<(), PageError> {
        let ok = submitted.is_some_and(|s| bool::from(s.as_bytes().ct_eq(self.csrf.as_bytes())));
        if ok {
            Ok(())
        } else {
            Err(PageError::Forbidden(
                "The form's security token is missing or out of date; reload the page and try again.".into(),
            ))
        }
    }
}

/// Creates a session; returns the cookie secret and the session.
///
/// # Errors
/// [`DbError`] when it cannot be stored, or the random source failed (as `Query`).
pub async fn create_session(db: &Db) -> Result<(String, WebSession), PageError> {
    let secret = random_token().map_err(|e| PageError::Internal(Box::new(e)))?;
    let csrf = random_token().map_err(|e| PageError::Internal(Box::new(e)))?;
    let now = Utc::now().timestamp_millis();
    let row = WebSessionRow {
        id_sha256: sha256_hex(&secret),
        csrf_token: csrf.clone(),
        created_at: now,
        expires_at: now + SESSION_HOURS * 3_600_000,
    };
    let session = WebSession {
        id_sha256: row.id_sha256.clone(),
        csrf,
    };
    db.run(move |conn| Ok(WebSessionRow::insert(conn, &row)?))
        .await?;
    Ok((secret, session))
}

/// The session cookie for `secret`.
pub fn session_cookie(secret: &str) -> Cookie<'static> {
    Cookie::build(SESSION_COOKIE, secret.to_owned())
        .path("/")
        .http_only(true)
        .same_site(SameSite::Strict)
        .max_age(CookieDuration::hours(SESSION_HOURS))
        .finish()
}

/// Consumes a login link token.
///
/// # Errors
/// [`DbError`].
pub async fn take_login_link(db: &Db, token: &str) -> Result<bool, DbError> {
    let digest = sha256_hex(token);
    let now = Utc::now().timestamp_millis();
    db.run(move |conn| Ok(models::take_login_link(conn, &digest, now)?))
        .await
}

/// Creates a one-time login token valid for [`LOGIN_LINK_MINUTES`].
///
/// # Errors
/// [`ApiError::Internal`].
pub async fn create_login_link(db: &Db) -> Result<String, ApiError> {
    let token = random_token().map_err(|e| ApiError::Internal(Box::new(e)))?;
    let digest = sha256_hex(&token);
    let expires = Utc::now().timestamp_millis() + LOGIN_LINK_MINUTES * 60_000;
    db.run(move |conn| Ok(models::insert_login_link(conn, &digest, expires)?))
        .await?;
    Ok(token)
}

async fn session_from_request(
    state: &AppState,
    req: &HttpRequest,
) -> Result<Option<WebSession>, DbError> {
    let Some(cookie) = req.cookie(SESSION_COOKIE) else {
        return Ok(None);
    };
    let digest = sha256_hex(cookie.value());
    let now = Utc::now().timestamp_millis();
    let row = state
        .db
        .run(move |conn| Ok(WebSessionRow::find_valid(conn, &digest, now)?))
        .await?;
    Ok(row.map(|r| WebSession {
        id_sha256: r.id_sha256,
        csrf: r.csrf_token,
    }))
}

fn bearer(req: &HttpRequest) -> Option<&str> {
    req.headers()
        .get(AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
        .map(str::trim)
}

fn app_state(req: &HttpRequest) -> Option<web::Data<AppState>> {
    req.app_data::<web::Data<AppState>>().cloned()
}

impl FromRequest for WebSession {
    type Error = PageError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            let state =
                app_state(&req).ok_or_else(|| PageError::Internal("app state missing".into()))?;
            session_from_request(&state, &req)
                .await?
                .ok_or(PageError::LoginRequired)
        })
    }
}

/// Who is calling the JSON API.
#[derive(Debug, Clone)]
pub enum Caller {
    /// A local client holding the API token (proxy, CLI, scripts): answers as an agent.
    Token,
    /// The logged-in person's browser: answers as a human; state changes need the CSRF token
    /// in `X-CSRF-Token`.
    Session(WebSession),
}

impl FromRequest for Caller {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            let state =
                app_state(&req).ok_or_else(|| ApiError::Internal("app state missing".into()))?;
            if let Some(token) = bearer(&req) {
                return if state.tokens.verify(token) {
                    Ok(Caller::Token)
                } else {
                    Err(ApiError::Unauthorized)
                };
            }
            let session = session_from_request(&state, &req)
                .await?
                .ok_or(ApiError::Unauthorized)?;
            if req.method() != actix_web::http::Method::GET {
                let sent = req
                    .headers()
                    .get("X-CSRF-Token")
                    .and_then(|v| v.to_str().ok());
                session
                    .check_csrf(sent)
                    .map_err(|_| ApiError::Forbidden("missing or wrong X-CSRF-Token".into()))?;
            }
            Ok(Caller::Session(session))
        })
    }
}

impl Caller {
    /// The caller must hold the API token (local clients only).
    ///
    /// # Errors
    /// [`ApiError::Forbidden`] for a browser session.
    pub fn require_token(&self) -> Result<(), ApiError> {
        match self {
            Caller::Token => Ok(()),
            Caller::Session(_) => Err(ApiError::Forbidden(
                "this endpoint needs the API token".into(),
            )),
        }
    }
}

/// Rejects requests whose `Host` is not the service's own address, and cross-origin requests
/// whose `Origin` is not (DNS rebinding and cross-site form posts).
pub async fn check_host_and_origin(
    req: ServiceRequest,
    next: Next<BoxBody>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let allowed = req
        .app_data::<web::Data<AppState>>()
        .map(|s| s.allowed_hosts.clone())
        .unwrap_or_default();
    let host = req
        .headers()
        .get(HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    let host_ok = allowed.iter().any(|a| a.eq_ignore_ascii_case(host));
    let origin_ok = match req
        .headers()
        .get(ORIGIN)
        .map(|o| o.to_str().unwrap_or_default())
    {
        None => true,
        Some(origin) => allowed
            .iter()
            .any(|a| origin.eq_ignore_ascii_case(&format!("http://{a}"))),
    };
    if !host_ok || !origin_ok {
        let what = if host_ok { "Origin" } else { "Host" };
        tracing::warn!(check = what, "refused a request for another host or origin");
        let res = HttpResponse::Forbidden()
            .content_type("text/plain; charset=utf-8")
            .body(format!(
                "{what} not allowed: mcp-consent only answers requests for its own address"
            ));
        return Ok(req.into_response(res));
    }
    next.call(req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_verification_accepts_only_stored_tokens() {
        let tokens = ApiTokens::from_hex(&[sha256_hex("right")]);
        assert!(tokens.verify("right"));
        assert!(!tokens.verify("wrong"));
        assert!(!ApiTokens::default().verify("right"));
    }
}
