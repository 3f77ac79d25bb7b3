//! The `tool_grants` table: standing "allow this tool on this server" made from a tool-call
//! question, each until it expires or is revoked. Times are Unix milliseconds.

use diesel::prelude::*;

use super::conn::Conn;
use super::schema::tool_grants;
use crate::domain::GrantId;

/// A grant as stored.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = tool_grants, check_for_backend(diesel::sqlite::Sqlite, diesel::pg::Pg))]
pub struct GrantRow {
    /// UUIDv7.
    pub id: GrantId,
    /// The server's name, exactly.
    pub server: String,
    /// The tool's name, exactly.
    pub tool: String,
    /// When it was made.
    pub created_at: i64,
    /// When it stops applying; `None`: until revoked.
    pub expires_at: Option<i64>,
    /// When it was revoked.
    pub revoked_at: Option<i64>,
}

/// Stores a new grant.
pub fn insert(conn: &mut Conn, row: &GrantRow) -> QueryResult<()> {
    diesel::insert_into(tool_grants::table)
        .values(row)
        .execute(conn)
        .map(|_| ())
}

/// The grants in force at `now`, oldest first.
pub fn active(conn: &mut Conn, now: i64) -> QueryResult<Vec<GrantRow>> {
    tool_grants::table
        .filter(tool_grants::revoked_at.is_null())
        .filter(
            tool_grants::expires_at
                .is_null()
                .or(tool_grants::expires_at.gt(now)),
        )
        .order((tool_grants::created_at, tool_grants::id))
        .select(GrantRow::as_select())
        .load(conn)
}

/// The newest grants, in force or not, for the rules page.
pub fn recent(conn: &mut Conn, limit: i64) -> QueryResult<Vec<GrantRow>> {
    tool_grants::table
        .order((tool_grants::created_at.desc(), tool_grants::id.desc()))
        .limit(limit)
        .select(GrantRow::as_select())
        .load(conn)
}

/// Revokes a grant still in force; returns it when it was.
pub fn revoke(conn: &mut Conn, id: &GrantId, now: i64) -> QueryResult<Option<GrantRow>> {
    // `RETURNING`, which each engine runs as its own statement (the combined backend has none).
    macro_rules! revoke {
        ($c:expr) => {
            diesel::update(
                tool_grants::table
                    .filter(tool_grants::id.eq(id))
                    .filter(tool_grants::revoked_at.is_null()),
            )
            .set(tool_grants::revoked_at.eq(now))
            .returning(GrantRow::as_returning())
            .get_result($c)
            .optional()
        };
    }
    match conn {
        Conn::Sqlite(c) => revoke!(c),
        Conn::Pg(c) => revoke!(c),
    }
}
