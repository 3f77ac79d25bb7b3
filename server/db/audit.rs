//! The audit log: one row per decision, of every kind of question, rule and grant — digests
//! and values the service owns, never a request's or an answer's text. Entries outlive the
//! questions they describe (`retention.audit_max_age_days`).

use diesel::prelude::*;

use super::conn::Conn;
use super::schema::audit_log;
use crate::domain::{Actor, AuditAction, Kind, QuestionId, RuleId, Via};

/// One audit entry (digests only, never text).
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = audit_log, check_for_backend(diesel::sqlite::Sqlite, diesel::pg::Pg))]
pub struct AuditRow {
    pub seq: i32,
    pub at: i64,
    pub actor: Actor,
    pub action: AuditAction,
    /// The question decided; `None` for an entry about a rule.
    pub question_id: Option<QuestionId>,
    pub server: String,
    pub model_id: Option<String>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub cost_usd: Option<f64>,
    pub request_digest: Option<String>,
    pub response_digest: Option<String>,
    /// The kind of the question (kept after the question is pruned).
    pub kind: Option<Kind>,
    /// The rule created or revoked (entries about a rule only).
    pub rule_id: Option<RuleId>,
    pub tool: Option<String>,
    /// The door the decision came through (`None` for rules, expiry, withdrawal).
    pub via: Option<Via>,
}

/// A new audit entry.
#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = audit_log, check_for_backend(diesel::sqlite::Sqlite, diesel::pg::Pg))]
pub struct NewAudit {
    pub at: i64,
    pub actor: Actor,
    pub action: AuditAction,
    pub question_id: Option<QuestionId>,
    pub server: String,
    pub model_id: Option<String>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub cost_usd: Option<f64>,
    pub request_digest: Option<String>,
    pub response_digest: Option<String>,
    pub kind: Option<Kind>,
    pub rule_id: Option<RuleId>,
    /// The tool of a tool-call decision or grant.
    pub tool: Option<String>,
    /// The door the decision came through ([`NewAudit::through`]).
    pub via: Option<Via>,
}

impl NewAudit {
    /// An entry of a sampling question's review with no model, usage or digests (set the
    /// fields that apply).
    pub fn new(
        at: i64,
        actor: Actor,
        action: AuditAction,
        question_id: &QuestionId,
        server: &str,
    ) -> NewAudit {
        NewAudit::question(at, actor, action, Kind::Sampling, question_id, server)
    }

    /// An entry of a question of any kind, with no model, usage or digests.
    pub fn question(
        at: i64,
        actor: Actor,
        action: AuditAction,
        kind: Kind,
        question_id: &QuestionId,
        server: &str,
    ) -> NewAudit {
        NewAudit {
            question_id: Some(question_id.clone()),
            kind: Some(kind),
            ..NewAudit::bare(at, actor, action, server)
        }
    }

    /// An entry about a rule (created or revoked): no question.
    pub fn rule(
        at: i64,
        actor: Actor,
        action: AuditAction,
        rule_id: &RuleId,
        server: &str,
    ) -> NewAudit {
        NewAudit {
            rule_id: Some(rule_id.clone()),
            ..NewAudit::bare(at, actor, action, server)
        }
    }

    /// An entry about a host's tool call of `tool` (the question's, or `None` when a rule or
    /// grant decided without one) or about a grant.
    pub fn tool_call(
        at: i64,
        actor: Actor,
        action: AuditAction,
        question_id: Option<&QuestionId>,
        server: &str,
        tool: &str,
    ) -> NewAudit {
        NewAudit {
            question_id: question_id.cloned(),
            kind: Some(Kind::ToolCall),
            tool: Some(tool.to_owned()),
            ..NewAudit::bare(at, actor, action, server)
        }
    }

    /// An entry about a server's controls (paused, blocked, muted, or lifted): only the
    /// server.
    pub fn server_control(at: i64, actor: Actor, action: AuditAction, server: &str) -> NewAudit {
        NewAudit::bare(at, actor, action, server)
    }

    /// The same entry, made through `via` (`None`: no door, e.g. a rule decided).
    pub fn through(self, via: Option<Via>) -> NewAudit {
        NewAudit { via, ..self }
    }

    fn bare(at: i64, actor: Actor, action: AuditAction, server: &str) -> NewAudit {
        NewAudit {
            at,
            actor,
            action,
            question_id: None,
            server: bounded_server_name(server),
            model_id: None,
            input_tokens: None,
            output_tokens: None,
            cost_usd: None,
            request_digest: None,
            response_digest: None,
            kind: None,
            rule_id: None,
            tool: None,
            via: None,
        }
    }
}

/// The longest server name an audit entry keeps, in characters.
pub const AUDIT_SERVER_CHARS: usize = 128;

/// `server` cut to [`AUDIT_SERVER_CHARS`] (the audit outlives the question; a name longer than
/// any label the person gave is not kept whole).
fn bounded_server_name(server: &str) -> String {
    server.chars().take(AUDIT_SERVER_CHARS).collect()
}

/// Appends an audit entry.
pub fn append_audit(conn: &mut Conn, entry: &NewAudit) -> QueryResult<()> {
    diesel::insert_into(audit_log::table)
        .values(entry)
        .execute(conn)
        .map(|_| ())
}

/// What the audit list is filtered by (every part optional).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AuditFilter {
    /// Entries of this server.
    pub server: Option<String>,
    /// Entries with this action.
    pub action: Option<AuditAction>,
    /// Entries of questions of this kind.
    pub kind: Option<Kind>,
    /// Entries about rules only (created, revoked, or a step a rule took).
    pub rules_only: bool,
    /// Leave out the entries about a person's question (`audience` `human`) opened through
    /// another door than the API token over TCP: a script there must not learn how the person
    /// decided what it cannot read.
    pub over_tcp: bool,
}

/// Audit entries newest first, filtered by `filter`.
pub fn audit(conn: &mut Conn, filter: &AuditFilter, limit: i64) -> QueryResult<Vec<AuditRow>> {
    let mut query = audit_log::table.select(AuditRow::as_select()).into_boxed();
    if let Some(server) = &filter.server {
        query = query.filter(audit_log::server.eq(server.clone()));
    }
    if let Some(action) = filter.action {
        query = query.filter(audit_log::action.eq(action));
    }
    if let Some(kind) = filter.kind {
        query = query.filter(audit_log::kind.eq(kind));
    }
    if filter.rules_only {
        query = query.filter(
            audit_log::rule_id
                .is_not_null()
                .or(audit_log::actor.like("rule:%")),
        );
    }
    if filter.over_tcp {
        use super::schema::questions;
        let readable = questions::table
            .filter(
                questions::audience
                    .eq(crate::domain::Audience::Agent)
                    .or(questions::opened_via.eq(Via::Token)),
            )
            .select(questions::id.nullable());
        query = query.filter(
            audit_log::question_id
                .is_null()
                .or(audit_log::question_id.eq_any(readable)),
        );
    }
    query.order(audit_log::seq.desc()).limit(limit).load(conn)
}

/// The newest audit entry of each of `questions` (the decision history shows by whom and
/// how each was decided).
pub fn last_entries(conn: &mut Conn, questions: &[QuestionId]) -> QueryResult<Vec<AuditRow>> {
    let mut rows: Vec<AuditRow> = audit_log::table
        .filter(audit_log::question_id.eq_any(questions))
        .select(AuditRow::as_select())
        .order(audit_log::seq.desc())
        .load(conn)?;
    let mut seen = std::collections::HashSet::new();
    rows.retain(|r| seen.insert(r.question_id.clone()));
    Ok(rows)
}
