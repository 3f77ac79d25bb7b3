//! How the store spells what is not a word of the vocabulary, for the rows that read it: the
//! era as its revision string, times as Unix milliseconds (`BigInt`) and JSON as its text
//! (`Text`). The vocabulary's words and the ids convert themselves (`crate::domain`).
//!
//! [`Millis`] and [`Json`] (and their nullable forms) are what a row's time and JSON fields
//! are read through (`#[diesel(deserialize_as = …)]`): a value that does not read back is an
//! unreadable row, never a default. Writes spell the same text and numbers where they bind
//! (`sql::InsertQuestion`).

use std::convert::Infallible;

use chrono::{DateTime, Utc};
use diesel::backend::Backend;
use diesel::deserialize::{self, FromSql, Queryable};
use diesel::sql_types::{BigInt, Nullable, Text};
use serde::de::DeserializeOwned;

use crate::protocol::era::Era;

crate::domain::text_sql!(Era);

/// A stored time read back: Unix milliseconds as a UTC time.
#[derive(Debug, Clone, Copy)]
pub struct Millis(DateTime<Utc>);

/// `ms` as a time; out of chrono's range only in a damaged row.
fn time(ms: i64) -> deserialize::Result<DateTime<Utc>> {
    DateTime::from_timestamp_millis(ms)
        .ok_or_else(|| format!("the stored time {ms} (Unix ms) is out of range").into())
}

impl<DB> Queryable<BigInt, DB> for Millis
where
    DB: Backend,
    i64: FromSql<BigInt, DB>,
{
    type Row = i64;

    fn build(ms: i64) -> deserialize::Result<Millis> {
        time(ms).map(Millis)
    }
}

impl From<Millis> for DateTime<Utc> {
    fn from(t: Millis) -> DateTime<Utc> {
        t.0
    }
}

/// A stored time that may be absent, read back.
#[derive(Debug, Clone, Copy)]
pub struct MaybeMillis(Option<DateTime<Utc>>);

impl<DB> Queryable<Nullable<BigInt>, DB> for MaybeMillis
where
    DB: Backend,
    Option<i64>: FromSql<Nullable<BigInt>, DB>,
{
    type Row = Option<i64>;

    fn build(ms: Option<i64>) -> deserialize::Result<MaybeMillis> {
        ms.map(time).transpose().map(MaybeMillis)
    }
}

impl From<MaybeMillis> for Option<DateTime<Utc>> {
    fn from(t: MaybeMillis) -> Option<DateTime<Utc>> {
        t.0
    }
}

/// Stored JSON text read back as a `T`.
#[derive(Debug, Clone)]
pub struct Json<T>(T);

impl<T> Json<T> {
    /// The value read. (diesel's `Queryable` derive calls `.try_into()` on what a
    /// `deserialize_as` type built; `T` is not ours, so no `From` can say it.)
    pub fn try_into(self) -> Result<T, Infallible> {
        Ok(self.0)
    }
}

impl<T, DB> Queryable<Text, DB> for Json<T>
where
    T: DeserializeOwned,
    DB: Backend,
    String: FromSql<Text, DB>,
{
    type Row = String;

    fn build(text: String) -> deserialize::Result<Json<T>> {
        Ok(Json(serde_json::from_str(&text)?))
    }
}

/// Stored JSON text that may be absent, read back as a `T`.
#[derive(Debug, Clone)]
pub struct MaybeJson<T>(Option<T>);

impl<T> MaybeJson<T> {
    /// The value read, if any (see [`Json::try_into`]).
    pub fn try_into(self) -> Result<Option<T>, Infallible> {
        Ok(self.0)
    }
}

impl<T, DB> Queryable<Nullable<Text>, DB> for MaybeJson<T>
where
    T: DeserializeOwned,
    DB: Backend,
    Option<String>: FromSql<Nullable<Text>, DB>,
{
    type Row = Option<String>;

    fn build(text: Option<String>) -> deserialize::Result<MaybeJson<T>> {
        Ok(MaybeJson(
            text.map(|t| serde_json::from_str(&t)).transpose()?,
        ))
    }
}

#[cfg(test)]
mod tests {
    use diesel::prelude::*;
    use diesel_migrations::MigrationHarness;
    use serde_json::json;

    use crate::db::MIGRATIONS;
    use crate::db::schema::questions;
    use crate::db::{Conn, Question};
    use crate::domain::{Audience, Kind, QuestionId, State};
    use crate::protocol::era::Era;
    use crate::tools::ToolInfo;

    fn store() -> Conn {
        let mut conn = SqliteConnection::establish(":memory:").unwrap();
        conn.run_pending_migrations(MIGRATIONS).unwrap();
        Conn::Sqlite(conn)
    }

    fn question() -> Question {
        let time = |ms| chrono::DateTime::from_timestamp_millis(ms).unwrap();
        Question {
            id: QuestionId::new(),
            kind: Kind::ToolCall,
            server: "files".into(),
            session: "1".into(),
            tool: Some("delete".into()),
            audience: Audience::Human,
            state: State::Pending,
            phase: None,
            protocol_version: "2025-11-25".into(),
            era: Era::V2025_11_25,
            client_capabilities: json!({"elicitation": {"form": {}}}),
            rpc_id: json!("call-7"),
            request: json!({"name": "delete", "arguments": {"path": "/tmp/x", "all": true}}),
            response: None,
            elicitation_id: None,
            created_at: time(1_764_633_600_123),
            expires_at: time(1_764_634_500_123),
            decided_at: None,
            opened_at: Some(time(1_764_633_601_000)),
            revision: 1,
            conversation: None,
            tool_info: Some(ToolInfo {
                description: Some("Deletes a file".into()),
                input_schema: None,
                annotations: Some(json!({"destructiveHint": true})),
            }),
            opened_via: Some(crate::domain::Via::Token),
        }
    }

    /// A question is stored in the columns' own spellings (JSON text, Unix milliseconds, the
    /// era's revision) and reads back as it was written.
    #[test]
    fn a_question_reads_back_as_written_in_the_stored_spellings() {
        let mut conn = store();
        let q = question();
        Question::insert(&mut conn, &q).unwrap();
        let stored: (String, String, String, i64, Option<i64>, Option<String>) = questions::table
            .select((
                questions::era,
                questions::rpc_id,
                questions::request,
                questions::created_at,
                questions::opened_at,
                questions::tool_info,
            ))
            .first(&mut conn)
            .unwrap();
        assert_eq!(
            stored,
            (
                "2025-11-25".to_owned(),
                "\"call-7\"".to_owned(),
                r#"{"name":"delete","arguments":{"path":"/tmp/x","all":true}}"#.to_owned(),
                1_764_633_600_123,
                Some(1_764_633_601_000),
                Some(
                    r#"{"description":"Deletes a file","annotations":{"destructiveHint":true}}"#
                        .to_owned()
                ),
            )
        );
        let door: Option<String> = questions::table
            .select(questions::opened_via)
            .first(&mut conn)
            .unwrap();
        assert_eq!(door.as_deref(), Some("token"));
        let read = Question::find(&mut conn, &q.id).unwrap().unwrap();
        assert_eq!(format!("{read:?}"), format!("{q:?}"));
    }

    /// A stored value that does not read back (a time out of range, JSON that is not JSON, an
    /// id that is no UUID, an era that is no revision) makes the row unreadable: an error, never
    /// a default.
    #[test]
    fn a_damaged_column_makes_the_row_unreadable() {
        let damages = [
            "UPDATE questions SET expires_at = 9223372036854775807",
            "UPDATE questions SET request = '{not json'",
            "UPDATE questions SET id = 'q1'",
            "UPDATE questions SET era = 'latest'",
            "UPDATE questions SET decided_at = -9223372036854775807",
        ];
        for damage in damages {
            let mut conn = store();
            Question::insert(&mut conn, &question()).unwrap();
            diesel::sql_query(damage).execute(&mut conn).unwrap();
            let read = Question::oldest_pending(&mut conn, 10);
            assert!(
                matches!(read, Err(diesel::result::Error::DeserializationError(_))),
                "{damage}: {read:?}"
            );
        }
    }
}
