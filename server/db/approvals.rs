//! Rows and queries of two-step sampling approval: revisions, runs, approvals and auto-approve
//! rules (the audit log they write to is [`super::audit`], re-exported here). Multi-row changes that must happen together are single
//! transactions here.

use diesel::prelude::*;

use super::conn::{Conn, Engine, markers};

pub use super::audit::{
    AUDIT_SERVER_CHARS, AuditFilter, AuditRow, NewAudit, append_audit, audit, last_entries,
};
use super::schema::{
    approvals, audit_log, auto_approve_rules, questions, sampling_revisions, sampling_runs,
};
use super::sql::Pending;
use crate::domain::{
    Actor, DecisionKind, Kind, Phase, QuestionId, RuleId, RuleScope, RunState, State, Step, Via,
};

/// One revision of a sampling request.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = sampling_revisions, check_for_backend(diesel::sqlite::Sqlite, diesel::pg::Pg))]
pub struct RevisionRow {
    pub question_id: QuestionId,
    pub revision: i32,
    pub params: String,
    pub author: Actor,
    pub created_at: i64,
}

/// One model call.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = sampling_runs, check_for_backend(diesel::sqlite::Sqlite, diesel::pg::Pg))]
pub struct RunRow {
    pub id: String,
    pub question_id: QuestionId,
    pub revision: i32,
    pub model_id: String,
    pub receipt: String,
    pub state: RunState,
    pub result: Option<String>,
    pub error: Option<String>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub cost_usd: Option<f64>,
    pub started_at: i64,
    pub finished_at: Option<i64>,
}

/// One recorded decision.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = approvals, check_for_backend(diesel::sqlite::Sqlite, diesel::pg::Pg))]
pub struct ApprovalRow {
    pub approval_id: String,
    pub question_id: QuestionId,
    pub phase: Step,
    pub revision: i32,
    pub run_id: Option<String>,
    pub decision: DecisionKind,
    pub model_id: Option<String>,
    pub actor: Actor,
    pub created_at: i64,
}

/// An auto-approve rule.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = auto_approve_rules, check_for_backend(diesel::sqlite::Sqlite, diesel::pg::Pg))]
pub struct RuleRow {
    pub id: RuleId,
    pub server: String,
    pub scope: RuleScope,
    pub author: Actor,
    pub reason: String,
    pub created_at: i64,
    pub expires_at: i64,
    pub revoked_at: Option<i64>,
}

/// Inserts revision 1 (or any revision).
pub fn insert_revision(conn: &mut Conn, row: &RevisionRow) -> QueryResult<()> {
    diesel::insert_into(sampling_revisions::table)
        .values(row)
        .execute(conn)
        .map(|_| ())
}

/// The revision `revision` of a question.
pub fn revision(
    conn: &mut Conn,
    question: &QuestionId,
    revision: i32,
) -> QueryResult<Option<RevisionRow>> {
    sampling_revisions::table
        .find((question, revision))
        .select(RevisionRow::as_select())
        .first(conn)
        .optional()
}

/// Adds an edited revision if `base` is still the question's current one: bumps the question's
/// revision and puts it back in `request_review`. Returns false when `base` is outdated.
pub fn add_revision(conn: &mut Conn, base: i32, row: &RevisionRow) -> QueryResult<bool> {
    conn.immediate_transaction(|conn| {
        let moved = diesel::update(
            questions::table
                .find(&row.question_id)
                .filter(questions::revision.eq(base))
                .filter(questions::state.eq(Pending))
                .filter(questions::phase.eq(Phase::RequestReview)),
        )
        .set(questions::revision.eq(row.revision))
        .execute(conn)?;
        if moved == 0 {
            return Ok(false);
        }
        insert_revision(conn, row)?;
        Ok(true)
    })
}

/// The approval with this id, if recorded.
pub fn approval(conn: &mut Conn, id: &str) -> QueryResult<Option<ApprovalRow>> {
    approvals::table
        .find(id)
        .select(ApprovalRow::as_select())
        .first(conn)
        .optional()
}

/// Records a request approval and starts a run, moving the question from `request_review` at
/// `revision` to `running` — all or nothing. Returns false when the question is no longer
/// there (another decision won, or the revision changed).
pub fn approve_and_start(
    conn: &mut Conn,
    approval: &ApprovalRow,
    run: &RunRow,
    audit: &NewAudit,
) -> QueryResult<bool> {
    conn.immediate_transaction(|conn| {
        let moved = diesel::update(
            questions::table
                .find(&approval.question_id)
                .filter(questions::state.eq(Pending))
                .filter(questions::revision.eq(approval.revision))
                .filter(questions::phase.eq_any([
                    Phase::RequestReview,
                    Phase::ResponseReview,
                    Phase::ToolUseReview,
                ])),
        )
        .set(questions::phase.eq(Some(Phase::Running)))
        .execute(conn)?;
        if moved == 0 {
            return Ok(false);
        }
        diesel::insert_into(sampling_runs::table)
            .values(run)
            .execute(conn)?;
        record(conn, approval, audit)
    })
}

/// Inserts a decision and its audit entry (inside the caller's transaction); `Ok(true)`.
fn record(conn: &mut Conn, approval: &ApprovalRow, audit: &NewAudit) -> QueryResult<bool> {
    diesel::insert_into(approvals::table)
        .values(approval)
        .execute(conn)?;
    diesel::insert_into(audit_log::table)
        .values(audit)
        .execute(conn)?;
    Ok(true)
}

/// Records a decision that ends the question (delivery or rejection) together with the
/// response and its audit entry — one transaction, so a delivery record never exists without
/// its response or the other way round. Returns false when the question was no longer pending
/// in `from_phases`.
pub fn decide_with_approval(
    conn: &mut Conn,
    approval: &ApprovalRow,
    from_phases: &[Phase],
    state: State,
    response: &str,
    audit: &NewAudit,
    now: i64,
) -> QueryResult<bool> {
    conn.immediate_transaction(|conn| {
        let moved = diesel::update(
            questions::table
                .find(&approval.question_id)
                .filter(questions::state.eq(Pending))
                .filter(questions::phase.eq_any(from_phases)),
        )
        .set((
            questions::state.eq(state),
            questions::phase.eq(None::<Phase>),
            questions::response.eq(Some(response)),
            questions::decided_at.eq(Some(now)),
        ))
        .execute(conn)?;
        if moved == 0 {
            return Ok(false);
        }
        record(conn, approval, audit)
    })
}

/// Stores a finished run and moves its question from `running` to `phase`.
pub fn finish_run(conn: &mut Conn, run: &RunRow, phase: Phase) -> QueryResult<()> {
    conn.immediate_transaction(|conn| {
        diesel::update(sampling_runs::table.find(&run.id))
            .set((
                sampling_runs::state.eq(run.state),
                sampling_runs::result.eq(&run.result),
                sampling_runs::error.eq(&run.error),
                sampling_runs::input_tokens.eq(run.input_tokens),
                sampling_runs::output_tokens.eq(run.output_tokens),
                sampling_runs::cost_usd.eq(run.cost_usd),
                sampling_runs::finished_at.eq(run.finished_at),
            ))
            .execute(conn)?;
        diesel::update(
            questions::table
                .find(&run.question_id)
                .filter(questions::state.eq(Pending))
                .filter(questions::phase.eq(Phase::Running)),
        )
        .set(questions::phase.eq(Some(phase)))
        .execute(conn)?;
        Ok(())
    })
}

/// Runs of a question, newest first.
pub fn runs(conn: &mut Conn, question: &QuestionId) -> QueryResult<Vec<RunRow>> {
    sampling_runs::table
        .filter(sampling_runs::question_id.eq(question))
        .order((sampling_runs::started_at.desc(), sampling_runs::id.desc()))
        .select(RunRow::as_select())
        .load(conn)
}

/// One run.
pub fn run(conn: &mut Conn, id: &str) -> QueryResult<Option<RunRow>> {
    sampling_runs::table
        .find(id)
        .select(RunRow::as_select())
        .first(conn)
        .optional()
}

/// How long a run on the shared database may stay `running` before an instance starting up
/// takes it for interrupted: another instance may be running it right now (a model call is
/// bounded well below this), and failing it would make the person approve, and the model run,
/// twice.
pub const SHARED_RUN_LEASE_MS: i64 = 10 * 60 * 1000;

/// Runs left `running` by a stopped service: marked failed, their questions back to
/// `request_review` (the person approves again). Returns the question ids. On the shared
/// database only runs older than [`SHARED_RUN_LEASE_MS`] count as interrupted.
pub fn fail_interrupted_runs(conn: &mut Conn, now: i64) -> QueryResult<Vec<QuestionId>> {
    let started_before = match conn.engine() {
        Engine::Sqlite => i64::MAX,
        Engine::Postgres => now.saturating_sub(SHARED_RUN_LEASE_MS),
    };
    conn.immediate_transaction(|conn| {
        let interrupted = sampling_runs::state
            .eq(RunState::Running)
            .and(sampling_runs::started_at.lt(started_before));
        let ids: Vec<QuestionId> = sampling_runs::table
            .filter(interrupted)
            .select(sampling_runs::question_id)
            .load(conn)?;
        diesel::update(sampling_runs::table.filter(interrupted))
            .set((
                sampling_runs::state.eq(RunState::Failed),
                sampling_runs::error.eq(Some("the service stopped during the run")),
                sampling_runs::finished_at.eq(Some(now)),
            ))
            .execute(conn)?;
        diesel::update(
            questions::table
                .filter(questions::id.eq_any(&ids))
                .filter(questions::state.eq(Pending))
                .filter(questions::phase.eq(Phase::Running)),
        )
        .set(questions::phase.eq(Some(Phase::RequestReview)))
        .execute(conn)?;
        Ok(ids)
    })
}

/// Stores a rule.
pub fn insert_rule(conn: &mut Conn, rule: &RuleRow) -> QueryResult<()> {
    diesel::insert_into(auto_approve_rules::table)
        .values(rule)
        .execute(conn)
        .map(|_| ())
}

/// Every rule, newest first.
pub fn rules(conn: &mut Conn) -> QueryResult<Vec<RuleRow>> {
    auto_approve_rules::table
        .order(auto_approve_rules::created_at.desc())
        .select(RuleRow::as_select())
        .load(conn)
}

/// The active (unrevoked, unexpired) rule for `server` at `now`, widest scope first.
pub fn active_rule(conn: &mut Conn, server: &str, now: i64) -> QueryResult<Option<RuleRow>> {
    auto_approve_rules::table
        .filter(auto_approve_rules::server.eq(server))
        .filter(auto_approve_rules::revoked_at.is_null())
        .filter(auto_approve_rules::expires_at.gt(now))
        .order((
            auto_approve_rules::scope.asc(),
            auto_approve_rules::created_at.desc(),
        ))
        .select(RuleRow::as_select())
        .first(conn)
        .optional()
}

/// The rule `id`, if it exists.
pub fn rule(conn: &mut Conn, id: &RuleId) -> QueryResult<Option<RuleRow>> {
    auto_approve_rules::table
        .find(id)
        .select(RuleRow::as_select())
        .first(conn)
        .optional()
}

/// Revokes a rule; returns whether it existed unrevoked.
pub fn revoke_rule(conn: &mut Conn, id: &RuleId, now: i64) -> QueryResult<bool> {
    diesel::update(
        auto_approve_rules::table
            .find(id)
            .filter(auto_approve_rules::revoked_at.is_null()),
    )
    .set(auto_approve_rules::revoked_at.eq(Some(now)))
    .execute(conn)
    .map(|n| n == 1)
}

/// A delivered sampling question: its id, conversation and JSON-RPC response text.
pub type Delivered = (QuestionId, Option<String>, Option<String>);

/// Accepted sampling responses of `server`, newest first (to link a tool loop's next round).
pub fn delivered_sampling(
    conn: &mut Conn,
    server: &str,
    via: Via,
    limit: i64,
) -> QueryResult<Vec<Delivered>> {
    questions::table
        .filter(questions::server.eq(server))
        .filter(super::models::opened_through(via))
        .filter(questions::kind.eq(Kind::Sampling))
        .filter(questions::state.eq(State::Accepted))
        .order(questions::decided_at.desc())
        .select((questions::id, questions::conversation, questions::response))
        .limit(limit)
        .load(conn)
}

/// Tokens and cost of finished runs.
#[derive(Debug, Clone, Copy, Default, QueryableByName)]
pub struct Usage {
    /// Questions counted (rounds), where meaningful.
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub rounds: i64,
    /// Input + output tokens.
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub tokens: i64,
    /// Cost in USD.
    #[diesel(sql_type = diesel::sql_types::Double)]
    pub cost: f64,
}

/// Rounds (questions) of a conversation and the tokens and cost its runs used (every run
/// that reported usage, also one whose answer was refused: the tokens were spent).
pub fn conversation_usage(conn: &mut Conn, conversation: &str) -> QueryResult<Usage> {
    // PostgreSQL sums BIGINTs as NUMERIC: the casts keep both engines' columns BIGINT.
    let sql = markers(
        conn,
        "SELECT (SELECT COUNT(*) FROM questions WHERE conversation = ?1) AS rounds,
                CAST(COALESCE(SUM(COALESCE(r.input_tokens, 0) + COALESCE(r.output_tokens, 0)), 0) AS BIGINT) AS tokens,
                COALESCE(SUM(COALESCE(r.cost_usd, 0.0)), 0.0) AS cost
         FROM sampling_runs r JOIN questions q ON q.id = r.question_id
         WHERE q.conversation = ?1",
    );
    diesel::sql_query(sql)
        .bind::<diesel::sql_types::Text, _>(conversation)
        .get_result(conn)
}

/// Tokens and cost of the runs of `server`'s questions opened through door `via` (those from
/// before doors were recorded count as the socket's) started at or after `since` (Unix ms),
/// every run that reported usage.
pub fn server_usage_since(
    conn: &mut Conn,
    server: &str,
    via: Via,
    since: i64,
) -> QueryResult<Usage> {
    let sql = markers(
        conn,
        "SELECT CAST(0 AS BIGINT) AS rounds,
                CAST(COALESCE(SUM(COALESCE(r.input_tokens, 0) + COALESCE(r.output_tokens, 0)), 0) AS BIGINT) AS tokens,
                COALESCE(SUM(COALESCE(r.cost_usd, 0.0)), 0.0) AS cost
         FROM sampling_runs r JOIN questions q ON q.id = r.question_id
         WHERE q.server = ? AND COALESCE(q.opened_via, 'cli') = ? AND r.started_at >= ?",
    );
    diesel::sql_query(sql)
        .bind::<diesel::sql_types::Text, _>(server)
        .bind::<diesel::sql_types::Text, _>(via.as_str())
        .bind::<diesel::sql_types::BigInt, _>(since)
        .get_result(conn)
}
