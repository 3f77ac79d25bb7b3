//! The person's per-server controls (`server_controls`): pause, block, mute notices.

use diesel::prelude::*;

use super::conn::Conn;
use super::schema::server_controls;

/// One server's controls; a server without a row has none.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = server_controls, check_for_backend(diesel::sqlite::Sqlite, diesel::pg::Pg))]
#[diesel(treat_none_as_null = true)]
pub struct ControlRow {
    pub server: String,
    /// New requests are refused until this time (Unix ms).
    pub paused_until: Option<i64>,
    /// 1: new requests are refused until the person lifts the block.
    pub blocked: i32,
    /// 1: questions open as usual but no notice is sent.
    pub muted: i32,
    pub updated_at: i64,
}

/// The controls of `server`, if it has any.
pub fn find(conn: &mut Conn, server: &str) -> QueryResult<Option<ControlRow>> {
    server_controls::table
        .find(server)
        .select(ControlRow::as_select())
        .first(conn)
        .optional()
}

/// Every server with controls, by name.
pub fn all(conn: &mut Conn) -> QueryResult<Vec<ControlRow>> {
    server_controls::table
        .order(server_controls::server.asc())
        .select(ControlRow::as_select())
        .load(conn)
}

/// Stores `row` (a row with nothing set is deleted: the server is back to normal).
pub fn put(conn: &mut Conn, row: &ControlRow, now: i64) -> QueryResult<()> {
    let idle = row.blocked == 0 && row.muted == 0 && row.paused_until.is_none_or(|t| t <= now);
    if idle {
        diesel::delete(server_controls::table.find(&row.server)).execute(conn)?;
        return Ok(());
    }
    // An upsert, which each engine runs as its own statement (the combined backend has none).
    macro_rules! upsert {
        ($c:expr) => {
            diesel::insert_into(server_controls::table)
                .values(row)
                .on_conflict(server_controls::server)
                .do_update()
                .set(row)
                .execute($c)
        };
    }
    match conn {
        Conn::Sqlite(c) => upsert!(c),
        Conn::Pg(c) => upsert!(c),
    }
    .map(|_| ())
}
