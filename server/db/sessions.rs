//! The `web_sessions` table: one row per logged-in browser, keyed by the SHA-256 of its cookie
//! secret (the secret itself is never stored).

use diesel::prelude::*;

use super::conn::Conn;

use super::schema::web_sessions;

/// How often a session's `last_used_at` is written, in milliseconds: a page load within this
/// time of the last recorded use writes nothing (the sessions page shows minutes, not
/// seconds).
pub const TOUCH_EVERY_MS: i64 = 60_000;

/// A browser session: digest of its cookie secret, its CSRF token, its times (ms since the
/// Unix epoch) and a short non-secret label (browser and system family).
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = web_sessions, check_for_backend(diesel::sqlite::Sqlite, diesel::pg::Pg))]
pub struct WebSessionRow {
    pub id_sha256: String,
    pub csrf_token: String,
    pub created_at: i64,
    pub expires_at: i64,
    pub last_used_at: i64,
    pub label: String,
}

impl WebSessionRow {
    /// Inserts a session.
    pub fn insert(conn: &mut Conn, row: &WebSessionRow) -> QueryResult<()> {
        diesel::insert_into(web_sessions::table)
            .values(row)
            .execute(conn)
            .map(|_| ())
    }

    /// The unexpired session with this digest.
    pub fn find_valid(
        conn: &mut Conn,
        sha256: &str,
        now: i64,
    ) -> QueryResult<Option<WebSessionRow>> {
        web_sessions::table
            .find(sha256)
            .filter(web_sessions::expires_at.gt(now))
            .select(WebSessionRow::as_select())
            .first(conn)
            .optional()
    }

    /// Whether this session's use at `now` is worth writing down (see [`TOUCH_EVERY_MS`]).
    pub fn stale_use(&self, now: i64) -> bool {
        now - self.last_used_at >= TOUCH_EVERY_MS
    }

    /// Records a use of the session with this digest at `now`.
    pub fn touch(conn: &mut Conn, sha256: &str, now: i64) -> QueryResult<()> {
        diesel::update(web_sessions::table.find(sha256))
            .set(web_sessions::last_used_at.eq(now))
            .execute(conn)
            .map(|_| ())
    }

    /// The unexpired sessions, most recently used first.
    pub fn list_valid(conn: &mut Conn, now: i64) -> QueryResult<Vec<WebSessionRow>> {
        web_sessions::table
            .filter(web_sessions::expires_at.gt(now))
            .order((
                web_sessions::last_used_at.desc(),
                web_sessions::created_at.desc(),
            ))
            .select(WebSessionRow::as_select())
            .load(conn)
    }

    /// Sets the expiry of the session with this digest.
    pub fn set_expiry(conn: &mut Conn, sha256: &str, at: i64) -> QueryResult<()> {
        diesel::update(web_sessions::table.find(sha256))
            .set(web_sessions::expires_at.eq(at))
            .execute(conn)
            .map(|_| ())
    }

    /// Deletes the session with this digest.
    pub fn delete(conn: &mut Conn, sha256: &str) -> QueryResult<()> {
        diesel::delete(web_sessions::table.find(sha256))
            .execute(conn)
            .map(|_| ())
    }

    /// Deletes every session but the one with this digest; returns how many went.
    pub fn delete_others(conn: &mut Conn, keep: &str) -> QueryResult<usize> {
        diesel::delete(web_sessions::table.filter(web_sessions::id_sha256.ne(keep))).execute(conn)
    }
}
