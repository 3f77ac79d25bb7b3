//! SQL written so its prepared statement is reused: the word `'pending'` as a literal, and the
//! two writes of every question's life (insert, decide) as fixed statements.
//!
//! The partial index `questions_pending_request` says `WHERE state = 'pending'`. A query
//! comparing `state` with a bound parameter can use it only for that parameter's value, so
//! SQLite marks the statement to be compiled again whenever the parameter is bound — every
//! execution. With the literal the plan is fixed and the prepared statement is reused.
//!
//! diesel never caches an `UPDATE`, nor an `INSERT` of a row with optional columns on SQLite
//! (the SQL depends on which are set), so [`InsertQuestion`] and [`DecideQuestion`] spell
//! theirs out once: a type with a static query id is cached by its type.
//!
//! Each is written for SQLite and for the combined backend of [`Conn`] (SQLite or PostgreSQL):
//! the SQL is the same, and the bind markers are the engine's (`?` or `$n`).

use diesel::expression::{AppearsOnTable, Expression, SelectableExpression, ValidGrouping};
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::query_dsl::RunQueryDsl;
use diesel::sql_types::{BigInt, Integer, Nullable, Text};
use diesel::sqlite::{Sqlite, SqliteConnection};

use super::conn::{Conn, MultiBackend};
use super::questions::Question;
use crate::domain::{QuestionId, State};

/// The SQL literal `'pending'`, a `Text` expression (compare `questions::state` with it).
#[derive(Debug, Clone, Copy, QueryId, ValidGrouping)]
pub struct Pending;

impl Expression for Pending {
    type SqlType = Text;
}

impl<DB: diesel::backend::Backend> QueryFragment<DB> for Pending {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> diesel::QueryResult<()> {
        out.push_sql("'");
        out.push_sql(State::Pending.as_str());
        out.push_sql("'");
        Ok(())
    }
}

/// Writes `QueryFragment` for each backend in the list with the same body, and runs the
/// statement on the matching connections.
macro_rules! on_backends {
    ($ty:ident; $($backend:ty => $conn:ty),+; |$self:ident, $out:ident| $body:block) => {$(
        impl QueryFragment<$backend> for $ty<'_> {
            fn walk_ast<'b>(&'b $self, mut $out: AstPass<'_, 'b, $backend>) -> diesel::QueryResult<()> $body
        }

        impl RunQueryDsl<$conn> for $ty<'_> {}
    )+};
}

impl<QS> AppearsOnTable<QS> for Pending {}

impl<QS> SelectableExpression<QS> for Pending {}

/// Binds each value with its SQL type, comma-separated.
macro_rules! bind_list {
    ($out:ident; $first_ty:ty => $first:expr $(, $ty:ty => $value:expr)* $(,)?) => {
        $out.push_bind_param::<$first_ty, _>($first)?;
        $(
            $out.push_sql(", ");
            $out.push_bind_param::<$ty, _>($value)?;
        )*
    };
}

/// `INSERT` of a whole question row, every column bound: the JSON columns as their text and
/// the times as Unix milliseconds, spelled by [`InsertQuestion::new`].
#[derive(Debug, Clone)]
pub struct InsertQuestion<'a> {
    row: &'a Question,
    client_capabilities: String,
    rpc_id: String,
    request: String,
    response: Option<String>,
    tool_info: Option<String>,
    created_at: i64,
    expires_at: i64,
    decided_at: Option<i64>,
    opened_at: Option<i64>,
}

impl<'a> InsertQuestion<'a> {
    /// The statement storing `row`.
    ///
    /// # Errors
    /// A serialization error when the tool information does not serialize.
    pub fn new(row: &'a Question) -> diesel::QueryResult<InsertQuestion<'a>> {
        let tool_info = row
            .tool_info
            .as_ref()
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| diesel::result::Error::SerializationError(Box::new(e)))?;
        Ok(InsertQuestion {
            row,
            client_capabilities: row.client_capabilities.to_string(),
            rpc_id: row.rpc_id.to_string(),
            request: row.request.to_string(),
            response: row.response.as_ref().map(ToString::to_string),
            tool_info,
            created_at: row.created_at.timestamp_millis(),
            expires_at: row.expires_at.timestamp_millis(),
            decided_at: row.decided_at.map(|t| t.timestamp_millis()),
            opened_at: row.opened_at.map(|t| t.timestamp_millis()),
        })
    }
}

impl QueryId for InsertQuestion<'_> {
    type QueryId = InsertQuestion<'static>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

on_backends!(InsertQuestion; Sqlite => SqliteConnection, MultiBackend => Conn; |self, out| {
        let r = self.row;
        out.push_sql(
            "INSERT INTO questions (id, kind, server, session, tool, audience, state, phase, \
             protocol_version, era, client_capabilities, rpc_id, request, response, \
             elicitation_id, created_at, expires_at, decided_at, opened_at, revision, \
             conversation, tool_info, opened_via) VALUES (",
        );
        bind_list!(out;
            Text => &r.id,
            Text => &r.kind,
            Text => &r.server,
            Text => &r.session,
            Nullable<Text> => &r.tool,
            Text => &r.audience,
            Text => &r.state,
            Nullable<Text> => &r.phase,
            Text => &r.protocol_version,
            Text => &r.era,
            Text => &self.client_capabilities,
            Text => &self.rpc_id,
            Text => &self.request,
            Nullable<Text> => &self.response,
            Nullable<Text> => &r.elicitation_id,
            BigInt => &self.created_at,
            BigInt => &self.expires_at,
            Nullable<BigInt> => &self.decided_at,
            Nullable<BigInt> => &self.opened_at,
            Integer => &r.revision,
            Nullable<Text> => &r.conversation,
            Nullable<Text> => &self.tool_info,
            Nullable<Text> => &r.opened_via,
        );
        out.push_sql(")");
        Ok(())
});

/// `UPDATE` moving question `id` from `pending` to `state` with its response and decision
/// time (Unix ms); the sampling phase is cleared.
#[derive(Debug, Clone, Copy)]
pub struct DecideQuestion<'a> {
    pub id: &'a QuestionId,
    pub state: State,
    pub response: Option<&'a str>,
    pub now: i64,
}

impl QueryId for DecideQuestion<'_> {
    type QueryId = DecideQuestion<'static>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

on_backends!(DecideQuestion; Sqlite => SqliteConnection, MultiBackend => Conn; |self, out| {
        out.push_sql("UPDATE questions SET state = ");
        out.push_bind_param::<Text, _>(&self.state)?;
        out.push_sql(", phase = NULL, response = ");
        out.push_bind_param::<Nullable<Text>, _>(&self.response)?;
        out.push_sql(", decided_at = ");
        out.push_bind_param::<BigInt, _>(&self.now)?;
        out.push_sql(" WHERE id = ");
        out.push_bind_param::<Text, _>(&self.id)?;
        out.push_sql(" AND state = ");
        Pending.walk_ast(out.reborrow())
});

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use diesel::connection::{Instrumentation, InstrumentationEvent};
    use diesel::debug_query;
    use diesel::prelude::*;
    use diesel_migrations::MigrationHarness;

    use super::*;
    use crate::db::MIGRATIONS;
    use crate::db::schema::questions;
    use crate::domain::{Audience, Kind};
    use crate::protocol::era::Era;

    fn row(id: &QuestionId, rpc_id: i64) -> Question {
        let time = |ms| chrono::DateTime::from_timestamp_millis(ms).unwrap();
        Question {
            id: id.clone(),
            kind: Kind::Form,
            server: "s".into(),
            session: "1".into(),
            tool: None,
            audience: Audience::Agent,
            state: State::Pending,
            phase: None,
            protocol_version: "2025-11-25".into(),
            era: Era::V2025_11_25,
            client_capabilities: serde_json::json!({}),
            rpc_id: rpc_id.into(),
            request: serde_json::json!({}),
            response: None,
            elicitation_id: None,
            created_at: time(1),
            expires_at: time(2),
            decided_at: None,
            opened_at: None,
            revision: 1,
            conversation: None,
            tool_info: None,
            opened_via: None,
        }
    }

    /// The statements prepared into diesel's cache.
    #[derive(Clone, Default)]
    struct Cached(Arc<Mutex<Vec<String>>>);

    impl Instrumentation for Cached {
        fn on_connection_event(&mut self, event: InstrumentationEvent<'_>) {
            if let InstrumentationEvent::CacheQuery { sql, .. } = event {
                self.0.lock().unwrap().push(sql.to_owned());
            }
        }
    }

    /// Inserting and deciding questions prepares each statement once, and they do what they
    /// say: the decision moves a pending question once, never a decided one.
    #[test]
    fn the_life_writes_are_prepared_once() {
        let mut conn = SqliteConnection::establish(":memory:").unwrap();
        conn.run_pending_migrations(MIGRATIONS).unwrap();
        let cached = Cached::default();
        conn.set_instrumentation(cached.clone());
        for i in 0..3 {
            let id = QuestionId::new();
            InsertQuestion::new(&row(&id, i))
                .unwrap()
                .execute(&mut conn)
                .unwrap();
            let decide = DecideQuestion {
                id: &id,
                state: State::Accepted,
                response: Some("{}"),
                now: 5,
            };
            assert_eq!(decide.execute(&mut conn).unwrap(), 1);
            assert_eq!(decide.execute(&mut conn).unwrap(), 0, "already decided");
        }
        let stored: Vec<(State, Option<i64>)> = questions::table
            .select((questions::state, questions::decided_at))
            .load(&mut conn)
            .unwrap();
        assert_eq!(stored, vec![(State::Accepted, Some(5)); 3]);
        let cached = cached.0.lock().unwrap().clone();
        let count = |prefix: &str| cached.iter().filter(|s| s.starts_with(prefix)).count();
        assert_eq!(count("INSERT INTO questions"), 1, "{cached:?}");
        assert_eq!(count("UPDATE questions"), 1, "{cached:?}");
    }

    /// The literal is spelled into the SQL (no bind), so it matches the partial indexes.
    #[test]
    fn pending_is_spelled_into_the_sql() {
        let query = questions::table
            .filter(questions::state.eq(Pending))
            .select(questions::id);
        let sql = debug_query::<Sqlite, _>(&query).to_string();
        assert!(sql.contains("`questions`.`state` = 'pending'"), "{sql}");
        assert!(sql.ends_with("-- binds: []"), "{sql}");
    }
}
