//! What model runs spent: tokens and cost per server and UTC day, read from the runs
//! themselves (every run counts, also one regenerated away, rejected, or whose answer was
//! refused — the provider was paid for it), and the audit entries that started each run.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Double, Text};

use super::conn::{Conn, Engine, markers};
use super::schema::audit_log;
use crate::domain::{AuditAction, DecisionKind, QuestionId};

/// One server's runs on one UTC day.
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct DaySpend {
    /// The UTC day, `YYYY-MM-DD`.
    #[diesel(sql_type = Text)]
    pub day: String,
    /// The asking server.
    #[diesel(sql_type = Text)]
    pub server: String,
    /// Runs started that day.
    #[diesel(sql_type = BigInt)]
    pub runs: i64,
    /// Runs among them whose answer was delivered.
    #[diesel(sql_type = BigInt)]
    pub delivered: i64,
    /// Runs that reported no usage (failed before an answer, or still running).
    #[diesel(sql_type = BigInt)]
    pub unpriced: i64,
    /// Input + output tokens reported.
    #[diesel(sql_type = BigInt)]
    pub tokens: i64,
    /// Cost in USD from the reported usage.
    #[diesel(sql_type = Double)]
    pub cost: f64,
}

/// Spend per server and UTC day of the runs started at or after `since` (Unix ms), newest day
/// first, servers by name.
pub fn by_server_and_day(conn: &mut Conn, since: i64) -> QueryResult<Vec<DaySpend>> {
    // The engines spell the UTC day of a time differently; the rest is one statement (the sums
    // are cast, as PostgreSQL sums BIGINTs as NUMERIC, and count with CASE, as it sums no
    // booleans).
    let day = match conn.engine() {
        Engine::Sqlite => "strftime('%Y-%m-%d', r.started_at / 1000, 'unixepoch')",
        Engine::Postgres => {
            "to_char(to_timestamp(r.started_at / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD')"
        }
    };
    let sql = markers(
        conn,
        &format!(
            "SELECT {day} AS day,
                q.server AS server,
                COUNT(*) AS runs,
                CAST(COALESCE(SUM(CASE WHEN EXISTS (SELECT 1 FROM approvals a
                                     WHERE a.run_id = r.id AND a.decision = ?1)
                                  THEN 1 ELSE 0 END), 0) AS BIGINT) AS delivered,
                CAST(COALESCE(SUM(CASE WHEN r.cost_usd IS NULL THEN 1 ELSE 0 END), 0) AS BIGINT) AS unpriced,
                CAST(COALESCE(SUM(COALESCE(r.input_tokens, 0) + COALESCE(r.output_tokens, 0)), 0) AS BIGINT) AS tokens,
                COALESCE(SUM(COALESCE(r.cost_usd, 0.0)), 0.0) AS cost
         FROM sampling_runs r JOIN questions q ON q.id = r.question_id
         WHERE r.started_at >= ?2
         GROUP BY day, q.server
         ORDER BY day DESC, q.server"
        ),
    );
    diesel::sql_query(sql)
        .bind::<Text, _>(DecisionKind::Send)
        .bind::<BigInt, _>(since)
        .load(conn)
}

/// Copies a finished run's usage onto the audit entry that started it (`approved`,
/// `auto_approved` or `regenerated`, written with the run's start time and model, with no
/// usage yet), so the audit shows what every run cost — also one regenerated away. Returns
/// whether an entry was found.
pub fn record_run_usage(
    conn: &mut Conn,
    question: &QuestionId,
    model: &str,
    started_at: i64,
    usage: (Option<i64>, Option<i64>, Option<f64>),
) -> QueryResult<bool> {
    let (input, output, cost) = usage;
    diesel::update(
        audit_log::table
            .filter(audit_log::question_id.eq(question))
            .filter(audit_log::at.eq(started_at))
            .filter(audit_log::model_id.eq(model))
            .filter(audit_log::action.eq_any([
                AuditAction::Approved,
                AuditAction::AutoApproved,
                AuditAction::Regenerated,
            ]))
            .filter(audit_log::cost_usd.is_null()),
    )
    .set((
        audit_log::input_tokens.eq(input),
        audit_log::output_tokens.eq(output),
        audit_log::cost_usd.eq(cost),
    ))
    .execute(conn)
    .map(|n| n > 0)
}
