//! The person's per-server controls (`server_controls`): pause, block, mute notices.

use diesel::prelude::*;

use super::conn::Conn;
use super::schema::server_controls;
use crate::domain::Via;

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
    /// The door that last set something in force (a pause, a block, muted notices); `None`
    /// for rows from before it was recorded, counted as the person's.
    pub set_via: Option<Via>,
}

impl ControlRow {
    /// Whether anything is in force at `now` (Unix ms): a block, muted notices, or a pause
    /// still ahead.
    pub fn in_force(&self, now: i64) -> bool {
        self.blocked != 0 || self.muted != 0 || self.paused_until.is_some_and(|t| t > now)
    }
}

/// The controls of `server`, if it has any.
pub fn find(conn: &mut Conn, server: &str) -> QueryResult<Option<ControlRow>> {
    server_controls::table
        .find(server)
        .select(ControlRow::as_select())
        .first(conn)
        .optional()
}

/// Every server with controls in force at `now` (Unix ms), by name.
pub fn in_force(conn: &mut Conn, now: i64) -> QueryResult<Vec<ControlRow>> {
    use server_controls::{blocked, muted, paused_until};
    server_controls::table
        .filter(blocked.ne(0).or(muted.ne(0)).or(paused_until.gt(now)))
        .order(server_controls::server.asc())
        .select(ControlRow::as_select())
        .load(conn)
}

/// How many servers have controls in force at `now` last set through `via`.
pub fn in_force_through(conn: &mut Conn, via: Via, now: i64) -> QueryResult<i64> {
    use server_controls::{blocked, muted, paused_until, set_via};
    server_controls::table
        .filter(set_via.eq(via))
        .filter(blocked.ne(0).or(muted.ne(0)).or(paused_until.gt(now)))
        .count()
        .get_result(conn)
}

/// Stores `row` (a row with nothing set is deleted: the server is back to normal).
pub fn put(conn: &mut Conn, row: &ControlRow, now: i64) -> QueryResult<()> {
    // Rows with nothing left in force (a pause that ran out) go, so the table holds only what
    // is in force however many pauses came and went.
    {
        use server_controls::{blocked, muted, paused_until};
        diesel::delete(
            server_controls::table
                .filter(blocked.eq(0).and(muted.eq(0)))
                .filter(paused_until.is_null().or(paused_until.le(now))),
        )
        .execute(conn)?;
    }
    if !row.in_force(now) {
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
