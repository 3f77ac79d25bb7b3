//! The one connection type the queries run on: an SQLite or a PostgreSQL connection behind
//! diesel's `MultiConnection`, so the queries are written once for both engines. The few
//! statements the engines spell differently match on [`Conn`] where they are written.
//!
//! Also here: the `Text` conversions of the vocabulary, the ids and the era for the combined
//! backend (each is spelled by its own type; a new word needs nothing here), and
//! [`Conn::immediate_transaction`], the transaction every multi-statement write runs in.

use diesel::backend::Backend;
use diesel::connection::{AnsiTransactionManager, TransactionManager};
use diesel::deserialize::{self, FromSql};
use diesel::serialize::{self, IsNull, Output, ToSql};
use diesel::sql_types::Text;
use diesel::{PgConnection, QueryResult, SqliteConnection};

use crate::domain::{
    Action, Actor, Audience, AuditAction, DecisionKind, GrantId, IncludeContext, Kind, Phase,
    QuestionId, RuleId, RuleScope, RunState, State, Step, StopReason, Via,
};
use crate::protocol::era::Era;

/// A store connection: the embedded SQLite file, or a PostgreSQL server.
#[derive(diesel::MultiConnection)]
pub enum Conn {
    /// The embedded store (`<state>/broker/broker.db`).
    Sqlite(SqliteConnection),
    /// A shared store (`database_url`).
    Pg(PgConnection),
}

/// The engine behind a connection or a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// SQLite.
    Sqlite,
    /// PostgreSQL.
    Postgres,
}

impl Conn {
    /// Which engine this connection talks to.
    pub fn engine(&self) -> Engine {
        match self {
            Conn::Sqlite(_) => Engine::Sqlite,
            Conn::Pg(_) => Engine::Postgres,
        }
    }
}

/// Implements `Text` conversions for the combined backend, through each engine's own.
macro_rules! text_words {
    ($($name:ty),+ $(,)?) => {$(
        impl ToSql<Text, MultiBackend> for $name {
            fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, MultiBackend>) -> serialize::Result {
                out.set_value((Text, self));
                Ok(IsNull::No)
            }
        }

        impl FromSql<Text, MultiBackend> for $name {
            fn from_sql(bytes: <MultiBackend as Backend>::RawValue<'_>) -> deserialize::Result<Self> {
                bytes.from_sql::<$name, Text>()
            }
        }
    )+};
}

text_words!(
    Kind,
    State,
    Phase,
    RunState,
    Audience,
    Action,
    RuleScope,
    Step,
    DecisionKind,
    IncludeContext,
    StopReason,
    AuditAction,
    Actor,
    Via,
    QuestionId,
    RuleId,
    GrantId,
    Era,
);

impl Conn {
    /// Runs `job` in one transaction that takes the write lock at its start: `BEGIN IMMEDIATE`
    /// on SQLite (as `SqliteConnection::immediate_transaction`: the store's single writer never
    /// waits behind a reader's upgrade), `BEGIN` on PostgreSQL (its statements lock the rows
    /// they change, and a conditional update re-checks its `WHERE` after waiting, so only one
    /// of several racing instances moves a row). Commits when `job` returns `Ok`, rolls back
    /// otherwise.
    ///
    /// # Errors
    /// Whatever `job` returns, or the error of beginning or ending the transaction.
    pub fn immediate_transaction<T, E, F>(&mut self, job: F) -> Result<T, E>
    where
        F: FnOnce(&mut Conn) -> Result<T, E>,
        E: From<diesel::result::Error>,
    {
        match self {
            Conn::Sqlite(c) => {
                AnsiTransactionManager::begin_transaction_sql(c, "BEGIN IMMEDIATE")?;
            }
            Conn::Pg(c) => AnsiTransactionManager::begin_transaction(c)?,
        }
        match job(self) {
            Ok(value) => {
                end(self, true)?;
                Ok(value)
            }
            Err(e) => {
                // The job's error is the one worth reporting; a failed rollback leaves the
                // connection broken, which the pool notices.
                let _ = end(self, false);
                Err(e)
            }
        }
    }
}

/// Commits (`commit`) or rolls back the transaction [`Conn::immediate_transaction`] began.
fn end(conn: &mut Conn, commit: bool) -> QueryResult<()> {
    match (conn, commit) {
        (Conn::Sqlite(c), true) => AnsiTransactionManager::commit_transaction(c),
        (Conn::Sqlite(c), false) => AnsiTransactionManager::rollback_transaction(c),
        (Conn::Pg(c), true) => AnsiTransactionManager::commit_transaction(c),
        (Conn::Pg(c), false) => AnsiTransactionManager::rollback_transaction(c),
    }
}

/// On PostgreSQL, takes a lock on `key` until the current transaction ends, so instances that
/// check and then insert under the same key (a server's pending count, a request's id) do it
/// one after another. SQLite needs none: its one writer runs write jobs one at a time.
///
/// # Errors
/// Any query error.
pub fn lock_for_transaction(conn: &mut Conn, key: &str) -> QueryResult<()> {
    use diesel::RunQueryDsl;
    if let Conn::Pg(c) = conn {
        diesel::sql_query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
            .bind::<Text, _>(key)
            .execute(c)?;
    }
    Ok(())
}

/// `sql`, written with SQLite's bind markers (`?` in order, or `?N`), in the markers of
/// `conn`'s engine: unchanged on SQLite, `$1, $2, …` on PostgreSQL. For the few statements
/// written as text (the rest are built by diesel, which writes each engine's markers).
pub fn markers(conn: &Conn, sql: &str) -> String {
    match conn.engine() {
        Engine::Sqlite => sql.to_owned(),
        Engine::Postgres => numbered(sql),
    }
}

/// `sql` with `?` numbered `$1, $2, …` in order and `?N` written `$N`.
fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut next = 0;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '?' {
            out.push(c);
            continue;
        }
        let mut digits = String::new();
        while let Some(d) = chars.next_if(char::is_ascii_digit) {
            digits.push(d);
        }
        if digits.is_empty() {
            next += 1;
            digits = next.to_string();
        }
        out.push('$');
        out.push_str(&digits);
    }
    out
}

#[cfg(test)]
mod tests {
    use diesel::Connection;

    use super::*;

    #[test]
    fn markers_are_numbered_for_postgres_only() {
        let sqlite = Conn::Sqlite(SqliteConnection::establish(":memory:").unwrap());
        assert_eq!(markers(&sqlite, "a = ? AND b = ?"), "a = ? AND b = ?");
        assert_eq!(
            numbered("a = ? AND b = ? LIMIT ?"),
            "a = $1 AND b = $2 LIMIT $3"
        );
        assert_eq!(
            numbered("x = ?1 OR y = ?1 AND z = ?2"),
            "x = $1 OR y = $1 AND z = $2"
        );
    }
}
