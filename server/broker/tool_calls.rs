//! Tool-call questions (kind `tool_call`): the response an answer makes (the call accepted as
//! shown or with edited arguments, checked against the tool's `inputSchema`; or refused), the
//! audit entries of every decision (digests of the arguments, never the arguments), grants
//! made with an answer and applied at once to the waiting calls of that tool, and the proxies'
//! reports of the calls they decided alone.

use chrono::DateTime;
use serde_json::{Value, json};

use super::error::invalid;
use super::{Answerer, Broker, BrokerError, Question};
use crate::db::approvals::NewAudit;
use crate::db::grants::{self, GrantRow};
use crate::domain::{Action, Actor, AuditAction, GrantId, Kind, State, Via};
use crate::metrics::ToolCallDecision;
use crate::protocol::jsonrpc::result_response;
use crate::tools::call::check_arguments;
use crate::tools::report::{LocalDecision, ToolDecisionReport};
use crate::tools::{Grant, ToolCall};
use crate::wire::{Answer, GrantSpan};

/// The most tool-call questions one grant answers at once.
const WAITING_LIMIT: i64 = 1000;

/// The response an answer to a tool-call question makes: `{"action":"accept","arguments",
/// "callDigest"}` (the call to forward and its digest, which the proxy checks against what it
/// sends) or `{"action":"decline"|"cancel"}`.
pub(super) fn response_for(
    q: &Question,
    answer: &Answer,
    state: State,
) -> Result<(State, Value), BrokerError> {
    if answer.content.is_some() || answer.result.is_some() {
        return Err(invalid(
            "a tool call's answer carries arguments, not content or a result",
        ));
    }
    let shown = ToolCall::from_params(&q.request)
        .map_err(|e| BrokerError::Corrupt(q.id.clone(), e.to_string()))?;
    if answer.action != Action::Accept {
        if answer.arguments.is_some() || answer.grant.is_some() {
            return Err(invalid("decline and cancel carry no arguments or grant"));
        }
        return Ok((
            state,
            result_response(&q.rpc_id, json!({"action": answer.action.as_str()})),
        ));
    }
    let call = match &answer.arguments {
        Some(arguments) => {
            let schema = q.tool_info.as_ref().and_then(|i| i.input_schema.as_ref());
            check_arguments(schema, arguments).map_err(BrokerError::InvalidAnswer)?;
            ToolCall {
                name: shown.name,
                arguments: arguments.clone(),
            }
        }
        None => shown,
    };
    Ok((state, accepted(q, &call)))
}

fn accepted(q: &Question, call: &ToolCall) -> Value {
    result_response(
        &q.rpc_id,
        json!({"action": "accept", "arguments": call.arguments, "callDigest": call.digest()}),
    )
}

/// The digest of the arguments as shown.
fn shown_digest(q: &Question) -> Option<String> {
    ToolCall::from_params(&q.request)
        .ok()
        .map(|c| c.arguments_digest())
}

impl Broker {
    fn tool_entry(&self, actor: Actor, action: AuditAction, q: &Question) -> NewAudit {
        let mut entry = NewAudit::tool_call(
            self.now().timestamp_millis(),
            actor,
            action,
            Some(&q.id),
            &q.server,
            q.tool.as_deref().unwrap_or_default(),
        );
        entry.request_digest = shown_digest(q);
        entry
    }

    /// The audit entry of a tool call the person answered: accepted as shown, accepted with
    /// edited arguments (the response digest is then the sent arguments'), or declined.
    pub(super) fn tool_audit(
        &self,
        q: &Question,
        state: State,
        response: &Value,
        by: Answerer,
    ) -> NewAudit {
        let actor = by.actor();
        let sent = response
            .pointer("/result/arguments")
            .map(|a| crate::tools::call::arguments_text_digest(Some(&a.to_string())));
        let action = match (state, &sent) {
            (State::Accepted, Some(sent)) if Some(sent) != shown_digest(q).as_ref() => {
                AuditAction::ToolEdited
            }
            (State::Accepted, _) => AuditAction::ToolAccepted,
            _ => AuditAction::ToolDeclined,
        };
        let mut entry = self.tool_entry(actor, action, q).through(Some(by));
        entry.response_digest = sent.filter(|_| state == State::Accepted);
        entry
    }

    /// The audit entry of a tool call nobody answered in time.
    pub(super) fn tool_expiry_audit(&self, q: &Question) -> NewAudit {
        self.tool_entry(
            Actor::Rule("tools.expiry".into()),
            AuditAction::ToolExpired,
            q,
        )
    }

    /// Makes a grant for the server and tool of the accepted question `q`, audits it, and
    /// answers the calls of that tool on that server that are waiting (accepted as shown).
    pub(super) async fn grant_from(
        &self,
        q: &Question,
        span: GrantSpan,
    ) -> Result<(), BrokerError> {
        let Some(tool) = q.tool.clone() else {
            return Ok(());
        };
        let now = self.now();
        let row = GrantRow {
            id: GrantId::new(),
            server: q.server.clone(),
            tool: tool.clone(),
            created_at: now.timestamp_millis(),
            expires_at: span
                .duration()
                .and_then(|d| now.checked_add_signed(d))
                .map(|t| t.timestamp_millis()),
            revoked_at: None,
        };
        let mut made = self.tool_entry(Actor::Human, AuditAction::GrantMade, q);
        made.request_digest = None;
        let grant_id = row.id.clone();
        self.db
            .write(move |conn| {
                Ok(conn.immediate_transaction(|conn| {
                    grants::insert(conn, &row)?;
                    crate::db::approvals::append_audit(conn, &made)
                })?)
            })
            .await?;
        tracing::info!(server = %q.server, tool = %tool, span = span.as_str(), "grant made");
        let waiting = self.pending(WAITING_LIMIT).await?;
        for other in waiting.iter().filter(|w| {
            w.kind == Kind::ToolCall && w.server == q.server && w.tool.as_deref() == Some(&tool)
        }) {
            let Ok(call) = ToolCall::from_params(&other.request) else {
                continue;
            };
            let entry = self.tool_entry(
                Actor::Rule(format!("grant:{grant_id}")),
                AuditAction::ToolAllowed,
                other,
            );
            match self
                .decide_audited(
                    other,
                    State::Accepted,
                    Some(accepted(other, &call)),
                    Some(entry),
                )
                .await
            {
                Ok(()) | Err(BrokerError::AlreadyDecided(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Revokes a grant; `false` when it was not in force. Audited.
    ///
    /// # Errors
    /// [`BrokerError::Store`].
    pub async fn revoke_grant(&self, id: &GrantId) -> Result<bool, BrokerError> {
        let id = id.clone();
        let now = self.now().timestamp_millis();
        let revoked = self
            .db
            .write(move |conn| {
                Ok(conn.immediate_transaction(|conn| {
                    let revoked = grants::revoke(conn, &id, now)?;
                    if let Some(grant) = &revoked {
                        let entry = NewAudit::tool_call(
                            now,
                            Actor::Human,
                            AuditAction::GrantRevoked,
                            None,
                            &grant.server,
                            &grant.tool,
                        );
                        crate::db::approvals::append_audit(conn, &entry)?;
                    }
                    diesel::QueryResult::Ok(revoked)
                })?)
            })
            .await?;
        Ok(revoked.is_some())
    }

    /// The grants in force now, as the proxies judge by them.
    ///
    /// # Errors
    /// [`BrokerError::Store`].
    pub async fn grants_in_force(&self) -> Result<Vec<Grant>, BrokerError> {
        let now = self.now().timestamp_millis();
        let rows = self
            .db
            .run(move |conn| Ok(grants::active(conn, now)?))
            .await?;
        Ok(rows.into_iter().map(grant_of).collect())
    }

    /// The newest grants, in force or not (for the rules page), with their revocation time.
    ///
    /// # Errors
    /// [`BrokerError::Store`].
    pub async fn recent_grants(&self, limit: i64) -> Result<Vec<GrantRow>, BrokerError> {
        Ok(self
            .db
            .run(move |conn| Ok(grants::recent(conn, limit)?))
            .await?)
    }

    /// Audits and counts the calls a proxy decided alone, reported through `via`. Nothing is
    /// taken (not even the counts) when auditing the decisions would take the door over
    /// `max_stored_bytes_per_door`; a report without decisions is always taken.
    ///
    /// # Errors
    /// [`BrokerError::DoorFull`], [`BrokerError::Store`].
    pub async fn record_tool_decisions(
        &self,
        report: ToolDecisionReport,
        via: Via,
    ) -> Result<(), BrokerError> {
        let limit = self.settings().max_stored_bytes_per_door;
        let charge = match report.stored_bytes() {
            0 => None,
            bytes => self
                .doors
                .charge(via, bytes, limit, self.now())
                .map_err(|over| {
                    tracing::warn!(door = via.as_str(), decisions = report.decisions.len(), "a tool-decision report was refused: the door is over max_stored_bytes_per_door");
                    BrokerError::DoorFull(over)
                })?,
        };
        self.metrics
            .tool_calls(ToolCallDecision::Allowed, report.allowed);
        self.metrics
            .tool_calls(ToolCallDecision::Denied, report.denied);
        self.metrics
            .tool_decisions_unaudited
            .inc_by(report.unaudited);
        let entries: Vec<NewAudit> = report
            .decisions
            .into_iter()
            .map(|d| {
                let action = match d.decision {
                    LocalDecision::Allowed => AuditAction::ToolAllowed,
                    LocalDecision::Denied => AuditAction::ToolDenied,
                };
                let mut entry = NewAudit::tool_call(
                    d.at.timestamp_millis(),
                    Actor::Rule(d.rule),
                    action,
                    None,
                    &report.server,
                    &d.tool,
                );
                entry.request_digest = Some(d.arguments_digest);
                entry
            })
            .collect();
        if entries.is_empty() {
            return Ok(());
        }
        let written = self
            .db
            .write(move |conn| {
                Ok(conn.immediate_transaction(|conn| {
                    for entry in &entries {
                        crate::db::approvals::append_audit(conn, entry)?;
                    }
                    diesel::QueryResult::Ok(())
                })?)
            })
            .await;
        if let (Err(_), Some(charge)) = (&written, charge) {
            self.doors.refund(charge);
        }
        Ok(written?)
    }
}

fn grant_of(row: GrantRow) -> Grant {
    Grant {
        id: row.id.to_string(),
        server: row.server,
        tool: row.tool,
        expires_at: row.expires_at.and_then(DateTime::from_timestamp_millis),
    }
}
