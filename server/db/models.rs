//! The queries on questions, API tokens and login links. Functions take the connection
//! first and return `QueryResult`; the broker decides what the rows mean.

use chrono::{DateTime, Utc};
use diesel::prelude::*;

use super::conn::Conn;

use super::schema::{api_tokens, login_links, questions, web_sessions};
use super::sql::{DecideQuestion, InsertQuestion, Pending};
use crate::domain::{Audience, Kind, QuestionId, State, Via};

diesel::define_sql_function! {
    /// SQL `length()` of a text, in characters (both engines).
    fn length(text: diesel::sql_types::Text) -> diesel::sql_types::Integer;
}

pub use super::questions::{Listed, Question};

impl Question {
    /// Inserts a new question.
    pub fn insert(conn: &mut Conn, row: &Question) -> QueryResult<()> {
        InsertQuestion::new(row)?.execute(conn).map(|_| ())
    }

    /// The question with this id.
    pub fn find(conn: &mut Conn, id: &QuestionId) -> QueryResult<Option<Question>> {
        questions::table
            .find(id)
            .select(Question::as_select())
            .first(conn)
            .optional()
    }

    /// The pending question for the same server, session and JSON-RPC id, if any.
    pub fn find_pending_request(
        conn: &mut Conn,
        server: &str,
        session: &str,
        rpc_id: &str,
    ) -> QueryResult<Option<Question>> {
        questions::table
            .filter(questions::server.eq(server))
            .filter(questions::session.eq(session))
            .filter(questions::rpc_id.eq(rpc_id))
            .filter(questions::state.eq(Pending))
            .select(Question::as_select())
            .first(conn)
            .optional()
    }

    /// Questions oldest first, optionally filtered by state and audience, at most `limit`.
    /// Pending ones are read in order from the partial index `questions_pending_created`,
    /// so the query stops after `limit` rows however many are pending.
    pub fn list(
        conn: &mut Conn,
        state: Option<State>,
        audience: Option<Audience>,
        limit: i64,
    ) -> QueryResult<Vec<Listed>> {
        let mut query = questions::table.select(Listed::as_select()).into_boxed();
        match state {
            Some(State::Pending) => query = query.filter(questions::state.eq(Pending)),
            Some(state) => query = query.filter(questions::state.eq(state)),
            None => {}
        }
        if let Some(audience) = audience {
            query = query.filter(questions::audience.eq(audience));
        }
        query
            .order((questions::created_at.asc(), questions::id.asc()))
            .limit(limit)
            .load(conn)
    }

    /// Recently decided questions, newest first.
    pub fn recent_decided(conn: &mut Conn, limit: i64) -> QueryResult<Vec<Question>> {
        questions::table
            .filter(questions::state.ne(State::Pending))
            .select(Question::as_select())
            .order((questions::decided_at.desc(), questions::id.desc()))
            .limit(limit)
            .load(conn)
    }

    /// The oldest `limit` pending questions, whole rows, read in order from the
    /// `(state, created_at, id)` index.
    pub fn oldest_pending(conn: &mut Conn, limit: i64) -> QueryResult<Vec<Question>> {
        questions::table
            .filter(questions::state.eq(Pending))
            .select(Question::as_select())
            .order((questions::created_at.asc(), questions::id.asc()))
            .limit(limit)
            .load(conn)
    }

    /// How many characters of caller-sent text (the request, the tool's listing and the client
    /// capabilities) the questions `server` opened through door `via` at or after `since` hold,
    /// whatever their state (the store's text length: a bound, not an exact byte count).
    pub fn stored_request_chars_since(
        conn: &mut Conn,
        server: &str,
        via: Via,
        since: DateTime<Utc>,
    ) -> QueryResult<i64> {
        let mine = questions::table
            .filter(questions::server.eq(server))
            .filter(opened_through(via))
            .filter(questions::created_at.ge(since.timestamp_millis()));
        let requests: Option<i64> = mine
            .select(diesel::dsl::sum(length(questions::request)))
            .get_result(conn)?;
        let listings: Option<i64> = mine
            .filter(questions::tool_info.is_not_null())
            .select(diesel::dsl::sum(length(
                questions::tool_info.assume_not_null(),
            )))
            .get_result(conn)?;
        let capabilities: Option<i64> = mine
            .select(diesel::dsl::sum(length(questions::client_capabilities)))
            .get_result(conn)?;
        Ok(requests
            .unwrap_or(0)
            .saturating_add(listings.unwrap_or(0))
            .saturating_add(capabilities.unwrap_or(0)))
    }

    /// How many questions `server` has pending that were opened through door `via`.
    pub fn count_pending_for_server(conn: &mut Conn, server: &str, via: Via) -> QueryResult<i64> {
        questions::table
            .filter(questions::server.eq(server))
            .filter(opened_through(via))
            .filter(questions::state.eq(Pending))
            .count()
            .get_result(conn)
    }

    /// How many questions are pending in all.
    pub fn count_pending(conn: &mut Conn) -> QueryResult<i64> {
        questions::table
            .filter(questions::state.eq(Pending))
            .count()
            .get_result(conn)
    }

    /// Pending questions counted by kind and audience.
    pub fn pending_counts(conn: &mut Conn) -> QueryResult<Vec<(Kind, Audience, i64)>> {
        questions::table
            .filter(questions::state.eq(Pending))
            .group_by((questions::kind, questions::audience))
            .select((
                questions::kind,
                questions::audience,
                diesel::dsl::count_star(),
            ))
            .load(conn)
    }

    /// Pending questions whose deadline is at or before `now`.
    pub fn due(conn: &mut Conn, now: DateTime<Utc>) -> QueryResult<Vec<Question>> {
        questions::table
            .filter(questions::state.eq(Pending))
            .filter(questions::expires_at.le(now.timestamp_millis()))
            .select(Question::as_select())
            .load(conn)
    }

    /// Records that the person opened a URL question's link (first time only).
    pub fn mark_opened(conn: &mut Conn, id: &QuestionId, now: DateTime<Utc>) -> QueryResult<()> {
        diesel::update(
            questions::table
                .find(id)
                .filter(questions::opened_at.is_null()),
        )
        .set(questions::opened_at.eq(Some(now.timestamp_millis())))
        .execute(conn)
        .map(|_| ())
    }

    /// Moves a pending question to `state`, storing `response`. Returns false (and changes
    /// nothing) when it was no longer pending: this conditional update is what makes every
    /// question get exactly one response.
    pub fn decide(
        conn: &mut Conn,
        id: &QuestionId,
        state: State,
        response: Option<&str>,
        now: DateTime<Utc>,
    ) -> QueryResult<bool> {
        let changed = DecideQuestion {
            id,
            state,
            response,
            now: now.timestamp_millis(),
        }
        .execute(conn)?;
        Ok(changed == 1)
    }

    /// Marks accepted URL questions with this `elicitationId` completed; returns them.
    pub fn complete_url(
        conn: &mut Conn,
        elicitation_id: &str,
        via: Via,
        now: DateTime<Utc>,
    ) -> QueryResult<Vec<Question>> {
        let now = now.timestamp_millis();
        conn.immediate_transaction(|conn| {
            let target = questions::table
                .filter(questions::kind.eq(Kind::Url))
                .filter(questions::elicitation_id.eq(elicitation_id))
                .filter(opened_through(via))
                .filter(questions::state.eq(State::Accepted));
            diesel::update(target)
                .set((
                    questions::state.eq(State::Completed),
                    questions::decided_at.eq(Some(now)),
                ))
                .execute(conn)?;
            questions::table
                .filter(questions::kind.eq(Kind::Url))
                .filter(questions::elicitation_id.eq(elicitation_id))
                .filter(questions::state.eq(State::Completed))
                .filter(questions::decided_at.eq(Some(now)))
                .select(Question::as_select())
                .load(conn)
        })
    }
}

/// Stores the digest of an API token.
pub fn insert_api_token(conn: &mut Conn, sha256: &str, now: i64) -> QueryResult<()> {
    let row = (
        api_tokens::token_sha256.eq(sha256),
        api_tokens::created_at.eq(now),
    );
    match conn {
        Conn::Sqlite(c) => diesel::insert_or_ignore_into(api_tokens::table)
            .values(row)
            .execute(c),
        Conn::Pg(c) => diesel::insert_into(api_tokens::table)
            .values(row)
            .on_conflict_do_nothing()
            .execute(c),
    }
    .map(|_| ())
}

/// Makes `sha256` the only stored API token digest (rotation: every other token is revoked).
pub fn replace_api_tokens(conn: &mut Conn, sha256: &str, now: i64) -> QueryResult<()> {
    conn.immediate_transaction(|conn| {
        diesel::delete(api_tokens::table).execute(conn)?;
        insert_api_token(conn, sha256, now)
    })
}

/// Every stored API token digest.
pub fn api_token_digests(conn: &mut Conn) -> QueryResult<Vec<String>> {
    api_tokens::table
        .select(api_tokens::token_sha256)
        .load(conn)
}

/// Stores a login link digest valid until `expires_at`.
pub fn insert_login_link(conn: &mut Conn, sha256: &str, expires_at: i64) -> QueryResult<()> {
    diesel::insert_into(login_links::table)
        .values((
            login_links::token_sha256.eq(sha256),
            login_links::expires_at.eq(expires_at),
        ))
        .execute(conn)
        .map(|_| ())
}

/// Consumes a login link: deletes it and reports whether it existed and was still valid.
pub fn take_login_link(conn: &mut Conn, sha256: &str, now: i64) -> QueryResult<bool> {
    let deleted = diesel::delete(
        login_links::table
            .filter(login_links::token_sha256.eq(sha256))
            .filter(login_links::expires_at.gt(now)),
    )
    .execute(conn)?;
    diesel::delete(login_links::table.filter(login_links::expires_at.le(now))).execute(conn)?;
    Ok(deleted == 1)
}

/// Deletes expired browser sessions and login links; returns how many rows went.
pub fn delete_expired_auth(conn: &mut Conn, now: i64) -> QueryResult<usize> {
    let sessions = diesel::delete(web_sessions::table.filter(web_sessions::expires_at.le(now)))
        .execute(conn)?;
    let links =
        diesel::delete(login_links::table.filter(login_links::expires_at.le(now))).execute(conn)?;
    Ok(sessions + links)
}

/// Rows stored before doors were recorded, when the door asked about is the socket.
type BeforeDoors = diesel::dsl::And<
    diesel::dsl::IsNull<questions::opened_via>,
    diesel::dsl::AsExprOf<bool, diesel::sql_types::Bool>,
>;

/// The questions opened through door `via`; those stored before doors were recorded count as
/// the owner-only socket's (as [`Question::opened_through`] reads them).
pub(super) fn opened_through(
    via: Via,
) -> diesel::dsl::Or<diesel::dsl::Eq<questions::opened_via, Via>, BeforeDoors> {
    use diesel::IntoSql;
    questions::opened_via.eq(via).or(questions::opened_via
        .is_null()
        .and((via == Via::Cli).into_sql::<diesel::sql_types::Bool>()))
}
