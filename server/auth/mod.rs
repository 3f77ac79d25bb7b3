//! Who may use the service, without HTTP: API tokens ([`tokens`]), one-time login links and
//! browser sessions ([`Auth`], over the store), and the login passphrase ([`passphrase`]).
//! `web::auth` turns these into cookies, extractors and middleware.

pub mod passphrase;
pub mod proof;
pub mod rotate;
pub mod throttle;
pub mod tokens;

use std::sync::Arc;

use crate::clock::Clock;
use crate::db::models::{self, WebSessionRow};
use crate::db::{Db, DbError};
pub use tokens::{ApiTokens, random_token, sha256_hex};

/// How long a browser session lasts, in hours.
pub const SESSION_HOURS: i64 = 12;
/// How long a login link stays valid, in minutes.
pub const LOGIN_LINK_MINUTES: i64 = 10;

/// Errors of sessions and login links.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// The OS random source failed.
    #[error("cannot make a random token")]
    Random(#[from] getrandom::Error),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] DbError),
}

/// A logged-in browser session.
#[derive(Debug, Clone)]
pub struct Session {
    /// Digest of the cookie secret (the row key).
    pub id_sha256: String,
    /// The CSRF token every form of this session carries.
    pub csrf: String,
}

impl Session {
    /// True when `submitted` is this session's CSRF token (constant time).
    pub fn csrf_matches(&self, submitted: Option<&str>) -> bool {
        submitted.is_some_and(|s| tokens::same_secret(s, &self.csrf))
    }
}

/// Sessions and login links in the store; cheap to clone.
#[derive(Clone)]
pub struct Auth {
    db: Db,
    /// Where "now" comes from for session and link lifetimes.
    clock: Arc<dyn Clock>,
}

impl Auth {
    /// Over the store `db`, reading the time from `clock`.
    pub fn new(db: Db, clock: Arc<dyn Clock>) -> Auth {
        Auth { db, clock }
    }

    /// Creates a session; returns the cookie secret and the session.
    ///
    /// # Errors
    /// [`AuthError`].
    pub async fn create_session(&self) -> Result<(String, Session), AuthError> {
        let secret = random_token()?;
        let csrf = random_token()?;
        let now = self.clock.now_ms();
        let row = WebSessionRow {
            id_sha256: sha256_hex(&secret),
            csrf_token: csrf.clone(),
            created_at: now,
            expires_at: now + SESSION_HOURS * 3_600_000,
        };
        let session = Session {
            id_sha256: row.id_sha256.clone(),
            csrf,
        };
        self.db
            .run(move |conn| Ok(WebSessionRow::insert(conn, &row)?))
            .await?;
        Ok((secret, session))
    }

    /// The unexpired session whose cookie secret is `secret`.
    ///
    /// # Errors
    /// [`AuthError::Store`].
    pub async fn session(&self, secret: &str) -> Result<Option<Session>, AuthError> {
        let digest = sha256_hex(secret);
        let now = self.clock.now_ms();
        let row = self
            .db
            .run(move |conn| Ok(WebSessionRow::find_valid(conn, &digest, now)?))
            .await?;
        Ok(row.map(|r| Session {
            id_sha256: r.id_sha256,
            csrf: r.csrf_token,
        }))
    }

    /// Ends `session` (logout).
    ///
    /// # Errors
    /// [`AuthError::Store`].
    pub async fn end_session(&self, session: &Session) -> Result<(), AuthError> {
        let digest = session.id_sha256.clone();
        self.db
            .run(move |conn| Ok(WebSessionRow::delete(conn, &digest)?))
            .await?;
        Ok(())
    }

    /// Consumes a login link token: true when it was valid (and now is not).
    ///
    /// # Errors
    /// [`AuthError::Store`].
    pub async fn take_login_link(&self, token: &str) -> Result<bool, AuthError> {
        let digest = sha256_hex(token);
        let now = self.clock.now_ms();
        Ok(self
            .db
            .run(move |conn| Ok(models::take_login_link(conn, &digest, now)?))
            .await?)
    }

    /// Replaces the API token (see [`rotate::rotate`]): `tokens` refuses the old one at once.
    ///
    /// # Errors
    /// [`rotate::TokenError`].
    pub async fn rotate_api_token(
        &self,
        state: &crate::paths::StateDir,
        tokens: &ApiTokens,
    ) -> Result<(), rotate::TokenError> {
        rotate::rotate(state, &self.db, tokens, self.clock.as_ref()).await
    }

    /// Creates a one-time login token valid for [`LOGIN_LINK_MINUTES`].
    ///
    /// # Errors
    /// [`AuthError`].
    pub async fn create_login_link(&self) -> Result<String, AuthError> {
        let token = random_token()?;
        let digest = sha256_hex(&token);
        let expires = self.clock.now_ms() + LOGIN_LINK_MINUTES * 60_000;
        self.db
            .run(move |conn| Ok(models::insert_login_link(conn, &digest, expires)?))
            .await?;
        Ok(token)
    }
}
