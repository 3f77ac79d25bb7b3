//! Reads over decided and earlier questions: the searchable history, a server's earlier
//! questions ("why am I being asked"), a host session's questions, and the servers seen.

use diesel::prelude::*;

use super::conn::{Conn, Engine};
use super::questions::Question;
use super::schema::{audit_log, questions};
use crate::domain::{Kind, QuestionId, State};

/// What the history is searched by (every part optional).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistoryFilter {
    /// Questions of this server.
    pub server: Option<String>,
    /// Questions of this kind.
    pub kind: Option<Kind>,
    /// Questions that ended in this state.
    pub state: Option<State>,
    /// Decided at or after this time (Unix ms).
    pub since: Option<i64>,
    /// Decided before this time (Unix ms).
    pub until: Option<i64>,
    /// Text the request holds (its message or prompt), matched without regard to ASCII case.
    pub text: Option<String>,
}

diesel::define_sql_function! {
    /// SQL `lower()`.
    fn lower(text: diesel::sql_types::Text) -> diesel::sql_types::Text;
}

/// `text` as a LIKE pattern matching it anywhere, its own `%`, `_` and `\` taken literally.
fn like_pattern(text: &str) -> String {
    let mut p = String::from("%");
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('%');
    p
}

/// Decided questions matching `f`, most recently decided first, at most `limit`.
pub fn decided(conn: &mut Conn, f: &HistoryFilter, limit: i64) -> QueryResult<Vec<Question>> {
    let mut query = questions::table
        .filter(questions::state.ne(State::Pending))
        .select(Question::as_select())
        .into_boxed();
    if let Some(server) = &f.server {
        query = query.filter(questions::server.eq(server.clone()));
    }
    if let Some(kind) = f.kind {
        query = query.filter(questions::kind.eq(kind));
    }
    if let Some(state) = f.state {
        query = query.filter(questions::state.eq(state));
    }
    if let Some(since) = f.since {
        query = query.filter(questions::decided_at.ge(since));
    }
    if let Some(until) = f.until {
        query = query.filter(questions::decided_at.lt(until));
    }
    if let Some(text) = &f.text {
        let pattern = like_pattern(text);
        query = match conn.engine() {
            Engine::Sqlite => query.filter(questions::request.like(pattern).escape('\\')),
            // PostgreSQL's LIKE heeds case: both sides are lowered by the engine.
            Engine::Postgres => {
                query.filter(lower(questions::request).like(lower(pattern)).escape('\\'))
            }
        };
    }
    query
        .order((questions::decided_at.desc(), questions::id.desc()))
        .limit(limit)
        .load(conn)
}

/// The questions `server` asked before `id` (newest first, at most `limit`) and how many there
/// are in all.
pub fn earlier_of_server(
    conn: &mut Conn,
    server: &str,
    id: &QuestionId,
    limit: i64,
) -> QueryResult<(Vec<Question>, i64)> {
    let before = questions::table
        .filter(questions::server.eq(server))
        .filter(questions::id.lt(id));
    let total = before.count().get_result(conn)?;
    let rows = before
        .select(Question::as_select())
        .order(questions::id.desc())
        .limit(limit)
        .load(conn)?;
    Ok((rows, total))
}

/// How many questions the host session `session` of `server` opened, and when its first one
/// opened (Unix ms).
pub fn session_questions(
    conn: &mut Conn,
    server: &str,
    session: &str,
) -> QueryResult<(i64, Option<i64>)> {
    questions::table
        .filter(questions::server.eq(server))
        .filter(questions::session.eq(session))
        .select((
            diesel::dsl::count_star(),
            diesel::dsl::min(questions::created_at),
        ))
        .first(conn)
}

/// The server names that asked something most recently (their questions, and the audit of
/// questions since pruned), at most `limit` of each, sorted by name. A rule's server alone
/// does not count: a misspelt rule is no server.
pub fn servers_seen(conn: &mut Conn, limit: i64) -> QueryResult<Vec<String>> {
    let mut names: Vec<String> = questions::table
        .group_by(questions::server)
        .select(questions::server)
        .order(diesel::dsl::max(questions::created_at).desc())
        .limit(limit)
        .load(conn)?;
    names.extend(
        audit_log::table
            .filter(audit_log::question_id.is_not_null())
            .group_by(audit_log::server)
            .select(audit_log::server)
            .order(diesel::dsl::max(audit_log::seq).desc())
            .limit(limit)
            .load::<String>(conn)?,
    );
    names.sort();
    names.dedup();
    Ok(names)
}

/// Whether `server` ever asked something (a question on record, or the audit of one).
pub fn server_seen(conn: &mut Conn, server: &str) -> QueryResult<bool> {
    use diesel::dsl::exists;
    let asked = diesel::select(exists(
        questions::table.filter(questions::server.eq(server)),
    ))
    .get_result(conn)?;
    Ok(asked
        || diesel::select(exists(
            audit_log::table
                .filter(audit_log::server.eq(server))
                .filter(audit_log::question_id.is_not_null()),
        ))
        .get_result(conn)?)
}
