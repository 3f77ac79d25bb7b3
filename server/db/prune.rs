//! The SQL of retention: where the "newest `max_terminal`" bound falls, and deleting decided
//! questions and old audit entries a bounded batch at a time.
//!
//! Every statement here walks an index from its start: decided questions by
//! `questions_decided (decided_at, id)`, audit entries by `audit_log_at (at)`. A batch is the
//! first rows of that index below the bound, so finding it costs the batch, not the table
//! (a filter the index cannot answer, or an `ORDER BY` it does not provide, would make every
//! batch scan and sort everything left: quadratic over a large prune). Deleted rows leave the
//! index, so the next batch starts where the last one ended without carrying a position.
//! And the end of a run: truncating the WAL without making the writer wait for readers.

use diesel::connection::SimpleConnection;
use diesel::sql_types::{BigInt, Integer, Text};
use diesel::{QueryResult, QueryableByName, RunQueryDsl, SqliteConnection};

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
pub fn newest_beyond(conn: &mut SqliteConnection, keep: i64) -> QueryResult<Option<DecidedKey>> {
    let sql = format!(
        "SELECT decided_at, id FROM questions \
         WHERE decided_at IS NOT NULL AND state != '{}' \
         ORDER BY decided_at DESC, id DESC LIMIT 1 OFFSET ?",
        State::Pending.as_str()
    );
    diesel::sql_query(sql)
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
pub fn delete_decided(
    conn: &mut SqliteConnection,
    bound: &Below,
    limit: i64,
) -> QueryResult<usize> {
    let filter = match bound {
        Below::Time(_) => "decided_at < ?",
        Below::Key(_) => "(decided_at, id) <= (?, ?)",
    };
    let sql = format!(
        "DELETE FROM questions WHERE rowid IN (SELECT rowid FROM questions \
         WHERE decided_at IS NOT NULL AND {filter} AND state != '{}' \
         ORDER BY decided_at, id LIMIT ?)",
        State::Pending.as_str()
    );
    let query = diesel::sql_query(sql);
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
pub fn delete_audit(conn: &mut SqliteConnection, cutoff: i64, limit: i64) -> QueryResult<usize> {
    diesel::sql_query(
        "DELETE FROM audit_log WHERE seq IN \
         (SELECT seq FROM audit_log WHERE at < ? ORDER BY at LIMIT ?)",
    )
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
pub fn passive_checkpoint(conn: &mut SqliteConnection) -> QueryResult<Checkpoint> {
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
pub fn try_truncate_wal(conn: &mut SqliteConnection) -> QueryResult<bool> {
    let before = diesel::sql_query("PRAGMA busy_timeout").get_result::<BusyTimeout>(conn)?;
    conn.batch_execute("PRAGMA busy_timeout = 0;")?;
    let attempt =
        diesel::sql_query("PRAGMA wal_checkpoint(TRUNCATE)").get_result::<Checkpoint>(conn);
    conn.batch_execute(&format!("PRAGMA busy_timeout = {};", before.timeout))?;
    Ok(attempt?.busy == 0)
}
