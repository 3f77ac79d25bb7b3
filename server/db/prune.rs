//! The SQL of retention: where the "newest `max_terminal`" bound falls, and deleting decided
//! questions and old audit entries a bounded batch at a time.
//!
//! Every statement here walks an index from its start: decided questions by
//! `questions_decided (decided_at, id)`, audit entries by `audit_log_at (at)`. A batch is the
//! first rows of that index below the bound, so finding it costs the batch, not the table
//! (a filter the index cannot answer, or an `ORDER BY` it does not provide, would make every
//! batch scan and sort everything left: quadratic over a large prune). Deleted rows leave the
//! index, so the next batch starts where the last one ended without carrying a position.
//! And the end of a run: truncating the WAL without making the writer wait for readers
//! (SQLite), or vacuuming the tables rows were deleted from (PostgreSQL).
//!
//! On the shared database one run at a time holds [`RETENTION_LOCK`], a session advisory
//! lock: instances (and `mcp-consent prune`) that find it held skip their run.

use diesel::connection::SimpleConnection;
use diesel::sql_types::Bool;
use diesel::sql_types::{BigInt, Integer, Text};
use diesel::{QueryResult, QueryableByName, RunQueryDsl};

use super::conn::{Conn, markers};

use crate::domain::State;

/// A decided question's place in decision order: its decision time (Unix ms), then its id.
#[derive(Debug, Clone, PartialEq, Eq, QueryableByName)]
pub struct DecidedKey {
    /// When it was decided, Unix milliseconds.
    #[diesel(sql_type = BigInt)]
    pub decided_at: i64,
    /// Its id (orders ties).
    #[diesel(sql_type = Text)]
    pub id: String,
}

/// The newest terminal question beyond the newest `keep` (by decision time, ties by id): it
/// and every terminal question before it in that order are over the count bound. `None` when
/// there are at most `keep`. Reads `keep + 1` index entries (and their rows, for the state).
pub fn newest_beyond(conn: &mut Conn, keep: i64) -> QueryResult<Option<DecidedKey>> {
    let sql = format!(
        "SELECT decided_at, id FROM questions \
         WHERE decided_at IS NOT NULL AND state != '{}' \
         ORDER BY decided_at DESC, id DESC LIMIT 1 OFFSET ?",
        State::Pending.as_str()
    );
    diesel::sql_query(markers(conn, &sql))
        .bind::<BigInt, _>(keep)
        .get_result(conn)
        .map(Some)
        .or_else(|e| match e {
            diesel::result::Error::NotFound => Ok(None),
            e => Err(e),
        })
}

/// The oldest questions to delete in one batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Below {
    /// Decided before this time (Unix ms): the age bound.
    Time(i64),
    /// At or before this key in decision order: the count bound.
    Key(DecidedKey),
}

/// Deletes up to `limit` terminal questions below `bound`, oldest first (their revisions,
/// runs and approvals go with them: `ON DELETE CASCADE`); returns how many went. Pending
/// questions are never deleted, whatever the bound.
pub fn delete_decided(conn: &mut Conn, bound: &Below, limit: i64) -> QueryResult<usize> {
    let filter = match bound {
        Below::Time(_) => "decided_at < ?",
        Below::Key(_) => "(decided_at, id) <= (?, ?)",
    };
    // SQLite's rowid is its table's own key; PostgreSQL has none, and the primary key serves.
    let key = match conn {
        Conn::Sqlite(_) => "rowid",
        Conn::Pg(_) => "id",
    };
    let sql = format!(
        "DELETE FROM questions WHERE {key} IN (SELECT {key} FROM questions \
         WHERE decided_at IS NOT NULL AND {filter} AND state != '{}' \
         ORDER BY decided_at, id LIMIT ?)",
        State::Pending.as_str()
    );
    let query = diesel::sql_query(markers(conn, &sql));
    match bound {
        Below::Time(t) => query
            .bind::<BigInt, _>(*t)
            .bind::<BigInt, _>(limit)
            .execute(conn),
        Below::Key(k) => query
            .bind::<BigInt, _>(k.decided_at)
            .bind::<Text, _>(&k.id)
            .bind::<BigInt, _>(limit)
            .execute(conn),
    }
}

/// Deletes up to `limit` audit entries older than `cutoff` (Unix ms), oldest first; returns
/// how many went.
pub fn delete_audit(conn: &mut Conn, cutoff: i64, limit: i64) -> QueryResult<usize> {
    let sql = markers(
        conn,
        "DELETE FROM audit_log WHERE seq IN \
         (SELECT seq FROM audit_log WHERE at < ? ORDER BY at LIMIT ?)",
    );
    diesel::sql_query(sql)
        .bind::<BigInt, _>(cutoff)
        .bind::<BigInt, _>(limit)
        .execute(conn)
}

/// What `PRAGMA wal_checkpoint` reports: whether it was blocked (another checkpoint running,
/// or for a truncating one a reader on an older snapshot), the WAL's frames, and how many of
/// them are in the database file now.
#[derive(Debug, Clone, Copy, QueryableByName)]
pub struct Checkpoint {
    /// 1 when the checkpoint could not do all it was asked to.
    #[diesel(sql_type = Integer)]
    pub busy: i32,
    /// Frames in the WAL (-1 when the database is not in WAL mode).
    #[diesel(sql_type = Integer)]
    pub log: i32,
    /// Frames of it copied into the database file.
    #[diesel(sql_type = Integer)]
    pub checkpointed: i32,
}

impl Checkpoint {
    /// Frames of the WAL not yet copied into the database file.
    pub fn left(&self) -> i32 {
        self.log.saturating_sub(self.checkpointed).max(0)
    }
}

/// A passive checkpoint: copies what no reader still needs from the WAL into the database
/// file, without waiting for (or blocking) anyone; safe on a `query_only` reader.
///
/// # Errors
/// Any SQLite error.
pub fn passive_checkpoint(conn: &mut Conn) -> QueryResult<Checkpoint> {
    diesel::sql_query("PRAGMA wal_checkpoint(PASSIVE)").get_result::<Checkpoint>(conn)
}

/// What `PRAGMA busy_timeout` reports: the connection's timeout, in milliseconds.
#[derive(Debug, Clone, Copy, QueryableByName)]
struct BusyTimeout {
    #[diesel(sql_type = Integer)]
    timeout: i32,
}

/// One attempt at copying the whole WAL into the database file and truncating it to nothing,
/// without waiting: the connection's `busy_timeout` is 0 for the attempt (and restored after),
/// so when a reader still uses an older snapshot, or a checkpoint on a reader is running, it
/// returns `false` at once instead of holding the writer, and every write queued behind it, in
/// SQLite's busy handler. Returns `true` when the WAL was emptied.
///
/// # Errors
/// Any SQLite error other than being blocked.
pub fn try_truncate_wal(conn: &mut Conn) -> QueryResult<bool> {
    let before = diesel::sql_query("PRAGMA busy_timeout").get_result::<BusyTimeout>(conn)?;
    conn.batch_execute("PRAGMA busy_timeout = 0;")?;
    let attempt =
        diesel::sql_query("PRAGMA wal_checkpoint(TRUNCATE)").get_result::<Checkpoint>(conn);
    conn.batch_execute(&format!("PRAGMA busy_timeout = {};", before.timeout))?;
    Ok(attempt?.busy == 0)
}

/// Advisory lock key of a retention run on the shared database.
pub const RETENTION_LOCK: i64 = 0x6d63_705f_7072_756e; // "mcp_prun"

#[derive(QueryableByName)]
struct Locked {
    #[diesel(sql_type = Bool)]
    locked: bool,
}

/// Takes [`RETENTION_LOCK`] for this connection's session if nobody holds it; returns whether
/// it did. A session lock: it goes with the connection, so a run whose instance dies releases
/// it, and the next run finishes the work (batches delete what is left).
///
/// # Errors
/// Any query error.
pub fn try_lock_retention(conn: &mut Conn) -> QueryResult<bool> {
    let sql = format!("SELECT pg_try_advisory_lock({RETENTION_LOCK}) AS locked");
    Ok(diesel::sql_query(sql).get_result::<Locked>(conn)?.locked)
}

/// Releases [`RETENTION_LOCK`] taken by [`try_lock_retention`] on this connection.
///
/// # Errors
/// Any query error.
pub fn unlock_retention(conn: &mut Conn) -> QueryResult<()> {
    let sql = format!("SELECT pg_advisory_unlock({RETENTION_LOCK}) AS locked");
    diesel::sql_query(sql)
        .get_result::<Locked>(conn)
        .map(|_| ())
}

/// The tables retention deletes from on the shared database, vacuumed after a run.
const PRUNED_TABLES: &str = "questions, sampling_revisions, sampling_runs, approvals, audit_log";

/// `VACUUM` of the pruned tables (PostgreSQL): marks the deleted rows' space free for reuse
/// and drops them from the indexes. It does not overwrite the freed bytes; they go when the
/// space is reused (or at once by `VACUUM FULL`, which rewrites a table under an exclusive
/// lock and so is left to the operator).
///
/// # Errors
/// Any query error.
pub fn vacuum(conn: &mut Conn) -> QueryResult<()> {
    use diesel::connection::SimpleConnection;
    conn.batch_execute(&format!("VACUUM {PRUNED_TABLES}"))
}
