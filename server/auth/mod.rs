//! Who may use the service, without HTTP: API tokens ([`tokens`]), one-time login links and
//! browser sessions ([`Auth`], over the store), and the login passphrase ([`passphrase`]).
//! `web::auth` turns these into cookies, extractors and middleware.

pub mod digest;
pub mod label;
pub mod passphrase;
pub mod proof;
pub mod rotate;
pub mod throttle;
pub mod tokens;

use std::sync::Arc;

use crate::clock::Clock;
use crate::db::models;
use crate::db::sessions::WebSessionRow;
use crate::db::{Db, DbError};
pub use digest::sha256_hex;
pub use tokens::{ApiTokens, random_token};

/// How long a browser session lasts, in hours.
pub const SESSION_HOURS: i64 = 12;
/// How long a session of a remembered browser ("Remember this browser") lasts, in days.
pub const REMEMBER_DAYS: i64 = 30;
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

/// How long a new session lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifetime {
    /// [`SESSION_HOURS`]: the default.
    Day,
    /// [`REMEMBER_DAYS`]: "Remember this browser" was checked.
    Remembered,
}

impl Lifetime {
    /// The lifetime in milliseconds.
    pub fn millis(self) -> i64 {
        match self {
            Lifetime::Day => SESSION_HOURS * 3_600_000,
            Lifetime::Remembered => REMEMBER_DAYS * 86_400_000,
        }
    }

    /// The lifetime in seconds (the cookie's `Max-Age`).
    pub fn seconds(self) -> i64 {
        self.millis() / 1000
    }
}

/// A logged-in browser session.
#[derive(Debug, Clone)]
pub struct Session {
    /// Digest of the cookie secret (the row key).
    pub id_sha256: String,
    /// The CSRF token every form of this session carries.
    pub csrf: String,
    /// When it ends, in ms since the Unix epoch.
    pub expires_at: i64,
}

/// A session as the sessions page lists it: nothing secret (the handle is a prefix of the
/// secret's digest, which names the row without letting anyone act as it).
#[derive(Debug, Clone)]
pub struct SessionInfo {
    /// Names the session in the revoke form.
    pub handle: String,
    /// "Browser / System" (see [`label`]).
    pub label: String,
    /// Times in ms since the Unix epoch.
    pub created_at: i64,
    /// Last page load (to the minute, see [`crate::db::sessions::TOUCH_EVERY_MS`]).
    pub last_used_at: i64,
    /// When it ends.
    pub expires_at: i64,
    /// The session of the browser asking.
    pub current: bool,
}

/// Hex digits of the digest that name a session on the sessions page.
const HANDLE_LEN: usize = 16;

impl Session {
    /// True when `submitted` is this session's CSRF token (constant time).
    pub fn csrf_matches(&self, submitted: Option<&str>) -> bool {
        submitted.is_some_and(|s| digest::same_secret(s, &self.csrf))
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

    /// Creates a session lasting `lifetime` for the browser `label`led (see [`label`]);
    /// returns the cookie secret and the session.
    ///
    /// # Errors
    /// [`AuthError`].
    pub async fn create_session(
        &self,
        lifetime: Lifetime,
        label: String,
    ) -> Result<(String, Session), AuthError> {
        let secret = random_token()?;
        let csrf = random_token()?;
        let now = self.clock.now_ms();
        let row = WebSessionRow {
            id_sha256: sha256_hex(&secret),
            csrf_token: csrf.clone(),
            created_at: now,
            expires_at: now + lifetime.millis(),
            last_used_at: now,
            label,
        };
        let session = Session {
            id_sha256: row.id_sha256.clone(),
            csrf,
            expires_at: row.expires_at,
        };
        self.db
            .write(move |conn| Ok(WebSessionRow::insert(conn, &row)?))
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
        if let Some(r) = row.as_ref().filter(|r| r.stale_use(now)) {
            let digest = r.id_sha256.clone();
            self.db
                .write(move |conn| Ok(WebSessionRow::touch(conn, &digest, now)?))
                .await?;
        }
        Ok(row.map(|r| Session {
            id_sha256: r.id_sha256,
            csrf: r.csrf_token,
            expires_at: r.expires_at,
        }))
    }

    /// The unexpired sessions, most recently used first, `current` marked.
    ///
    /// # Errors
    /// [`AuthError::Store`].
    pub async fn sessions(&self, current: &Session) -> Result<Vec<SessionInfo>, AuthError> {
        let now = self.clock.now_ms();
        let rows = self
            .db
            .run(move |conn| Ok(WebSessionRow::list_valid(conn, now)?))
            .await?;
        Ok(rows
            .into_iter()
            .map(|r| SessionInfo {
                handle: r.id_sha256[..HANDLE_LEN.min(r.id_sha256.len())].to_owned(),
                current: r.id_sha256 == current.id_sha256,
                label: r.label,
                created_at: r.created_at,
                last_used_at: r.last_used_at,
                expires_at: r.expires_at,
            })
            .collect())
    }

    /// Ends the session named `handle` (from [`Auth::sessions`]); its cookie stops working at
    /// once. Returns false when no session has that handle.
    ///
    /// # Errors
    /// [`AuthError::Store`].
    pub async fn revoke(&self, handle: &str) -> Result<bool, AuthError> {
        if handle.len() != HANDLE_LEN || !handle.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(false);
        }
        let handle = handle.to_ascii_lowercase();
        let now = self.clock.now_ms();
        Ok(self
            .db
            .write(move |conn| {
                let matching: Vec<String> = WebSessionRow::list_valid(conn, now)?
                    .into_iter()
                    .map(|r| r.id_sha256)
                    .filter(|id| id.starts_with(&handle))
                    .collect();
                for id in &matching {
                    WebSessionRow::delete(conn, id)?;
                }
                Ok(!matching.is_empty())
            })
            .await?)
    }

    /// Ends every session but `keep` ("Log out everywhere else"); returns how many ended.
    ///
    /// # Errors
    /// [`AuthError::Store`].
    pub async fn end_other_sessions(&self, keep: &Session) -> Result<usize, AuthError> {
        let keep = keep.id_sha256.clone();
        Ok(self
            .db
            .write(move |conn| Ok(WebSessionRow::delete_others(conn, &keep)?))
            .await?)
    }

    /// Makes `session` last [`REMEMBER_DAYS`] from now ("Remember this browser" on the
    /// sessions page); returns the new lifetime for the cookie.
    ///
    /// # Errors
    /// [`AuthError::Store`].
    pub async fn remember(&self, session: &Session) -> Result<Lifetime, AuthError> {
        let digest = session.id_sha256.clone();
        let at = self.clock.now_ms() + Lifetime::Remembered.millis();
        self.db
            .write(move |conn| Ok(WebSessionRow::set_expiry(conn, &digest, at)?))
            .await?;
        Ok(Lifetime::Remembered)
    }

    /// Ends `session` (logout).
    ///
    /// # Errors
    /// [`AuthError::Store`].
    pub async fn end_session(&self, session: &Session) -> Result<(), AuthError> {
        let digest = session.id_sha256.clone();
        self.db
            .write(move |conn| Ok(WebSessionRow::delete(conn, &digest)?))
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
            .write(move |conn| Ok(models::take_login_link(conn, &digest, now)?))
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
            .write(move |conn| Ok(models::insert_login_link(conn, &digest, expires)?))
            .await?;
        Ok(token)
    }
}
