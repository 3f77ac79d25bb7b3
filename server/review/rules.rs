//! Opt-in, expiring auto-approve rules (applied when a question opens and when a run
//! finishes), and the audit log they and every decision write to.

use crate::metrics::RejectReason;
use serde_json::json;

use super::*;

impl Reviewer {
    /// Boxed (and `Send` by declaration) because it closes a cycle: a run that finishes applies a
    /// rule, which may approve, which starts a run.
    pub(super) fn apply_rule<'a>(
        &'a self,
        q: &'a Question,
        step: Step,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), BrokerError>> + Send + 'a>>
    {
        Box::pin(async move {
            let server = q.server.clone();
            let now = self.broker.now().timestamp_millis();
            let Some(rule) = self
                .db
                .run(move |c| Ok(approvals::active_rule(c, &server, now)?))
                .await?
            else {
                return Ok(());
            };
            if step == Step::Response && rule.scope != RuleScope::Both {
                return Ok(());
            }
            let actor = Decider::from(Actor::Rule(rule.id.to_string()));
            match step {
                Step::Request => self.rule_approves_request(q, &actor).await,
                Step::Response => self.rule_sends_response(q, &actor).await,
            }
        })
    }

    /// A rule approves the request with the route's model, or refuses it for the person when
    /// no model may serve it.
    async fn rule_approves_request(
        &self,
        q: &Question,
        actor: &Decider,
    ) -> Result<(), BrokerError> {
        let review = self.review(q).await?;
        let decision = Decision {
            approval_id: review.request_approval_id(&q.id).to_string(),
            decision: DecisionKind::Approve,
            model: None,
            edit: None,
            over_cap_confirmed: false,
        };
        if review.route.chosen.is_none() {
            return self.rule_refuses_without_route(q, decision, actor).await;
        }
        stays_for_person(self.decide_sampling(&q.id, &decision, actor).await)
    }

    /// A rule cannot pick a model for a request no model may serve: it refuses it for the
    /// person, with its own code (not -1: nobody rejected it).
    async fn rule_refuses_without_route(
        &self,
        q: &Question,
        approval: Decision,
        actor: &Decider,
    ) -> Result<(), BrokerError> {
        let decision = Decision {
            decision: DecisionKind::Reject,
            ..approval
        };
        let now = self.broker.now().timestamp_millis();
        let mut error =
            RpcError::internal("No permitted route: no configured model may serve this request");
        error.code = NO_ROUTE;
        error.data = Some(json!({"reason": RejectReason::NoRoute.as_str()}));
        self.reject_with(
            q,
            &decision,
            actor,
            &[Phase::RequestReview],
            now,
            None,
            error,
        )
        .await
        .map(|_| ())
    }

    /// A rule covering responses sends the newest run's answer.
    async fn rule_sends_response(&self, q: &Question, actor: &Decider) -> Result<(), BrokerError> {
        let runs = self.review(q).await?.runs;
        let Some(run) = runs.first() else {
            return Ok(());
        };
        let decision = Decision {
            approval_id: ApprovalId::Response {
                question: q.id.to_string(),
                run: run.id.clone(),
            }
            .to_string(),
            decision: DecisionKind::Send,
            model: None,
            edit: None,
            over_cap_confirmed: false,
        };
        stays_for_person(self.decide_sampling(&q.id, &decision, actor).await)
    }

    /// Creates an auto-approve rule for `server` covering `scope` (`request` or `both`),
    /// expiring after `hours` (default [`RULE_DAYS`] days; at least an hour, at most a year),
    /// and audits it as `rule_created` by `author`.
    ///
    /// # Errors
    /// [`BrokerError::InvalidAnswer`] for an unknown scope or empty reason.
    pub async fn create_rule(
        &self,
        server: &str,
        scope: &str,
        author: impl Into<Decider>,
        reason: &str,
        hours: Option<i64>,
    ) -> Result<approvals::RuleRow, BrokerError> {
        let Decider { actor: author, via } = author.into();
        let Ok(scope) = scope.parse::<RuleScope>() else {
            return Err(invalid(StepRefusal::RuleScope));
        };
        if reason.trim().is_empty() || server.trim().is_empty() {
            return Err(invalid(StepRefusal::RuleNeedsReason));
        }
        let hours = hours.unwrap_or(RULE_DAYS * 24).clamp(1, RULE_MAX_HOURS);
        let now = self.broker.now().timestamp_millis();
        let rule = approvals::RuleRow {
            id: RuleId::new(),
            server: server.to_owned(),
            scope,
            author,
            reason: reason.to_owned(),
            created_at: now,
            expires_at: now + hours * 3_600_000,
            revoked_at: None,
        };
        let row = rule.clone();
        self.db
            .write(move |c| {
                let entry = NewAudit::rule(
                    now,
                    row.author.clone(),
                    AuditAction::RuleCreated,
                    &row.id,
                    &row.server,
                )
                .through(via);
                Ok(c.immediate_transaction(|c| {
                    approvals::insert_rule(c, &row)?;
                    approvals::append_audit(c, &entry)
                })?)
            })
            .await?;
        Ok(rule)
    }

    /// Every rule, newest first.
    ///
    /// # Errors
    /// [`BrokerError::Store`].
    pub async fn rules(&self) -> Result<Vec<approvals::RuleRow>, BrokerError> {
        Ok(self.db.run(|c| Ok(approvals::rules(c)?)).await?)
    }

    /// Sampling questions of `server` waiting in request review (the oldest 1,000): what a
    /// rule made for that server while they waited can be applied to.
    ///
    /// # Errors
    /// [`BrokerError::Store`], [`BrokerError::Corrupt`].
    pub async fn waiting_requests(&self, server: &str) -> Result<Vec<Question>, BrokerError> {
        Ok(self
            .broker
            .pending(1000)
            .await?
            .into_iter()
            .filter(|q| {
                q.kind == Kind::Sampling
                    && q.server == server
                    && q.phase == Some(Phase::RequestReview)
            })
            .collect())
    }

    /// Applies the active rule `id` to the requests of its server already waiting in request
    /// review, as if each had just opened (each step it takes is audited as `auto_approved`
    /// by `rule:<id>`). Returns how many it decided or started.
    ///
    /// # Errors
    /// [`BrokerError::NotFound`] when `id` is not an active rule; [`BrokerError::Store`].
    pub async fn apply_rule_to_waiting(&self, id: &RuleId) -> Result<usize, BrokerError> {
        let now = self.broker.now().timestamp_millis();
        let Some(rule) = self
            .rules()
            .await?
            .into_iter()
            .find(|r| r.id == *id && r.revoked_at.is_none() && r.expires_at > now)
        else {
            return Err(BrokerError::NotFound);
        };
        let mut applied = 0;
        for q in self.waiting_requests(&rule.server).await? {
            let runs_before = self.review(&q).await?.runs.len();
            self.apply_rule(&q, Step::Request).await?;
            let after = self.broker.get(&q.id).await?;
            if after.state != State::Pending || self.review(&after).await?.runs.len() > runs_before
            {
                applied += 1;
            }
        }
        Ok(applied)
    }

    /// Revokes a rule (a no-op for unknown or revoked ids), audited as `rule_revoked` by `by`.
    ///
    /// # Errors
    /// [`BrokerError::Store`].
    pub async fn revoke_rule(
        &self,
        id: &RuleId,
        by: impl Into<Decider>,
    ) -> Result<bool, BrokerError> {
        let Decider { actor: by, via } = by.into();
        let id = id.clone();
        let now = self.broker.now().timestamp_millis();
        Ok(self
            .db
            .write(move |c| {
                Ok(c.immediate_transaction(|c| {
                    let Some(rule) = approvals::rule(c, &id)? else {
                        return diesel::QueryResult::Ok(false);
                    };
                    let revoked = approvals::revoke_rule(c, &id, now)?;
                    if revoked {
                        let entry =
                            NewAudit::rule(now, by, AuditAction::RuleRevoked, &id, &rule.server)
                                .through(via);
                        approvals::append_audit(c, &entry)?;
                    }
                    Ok(revoked)
                })?)
            })
            .await?)
    }

    /// Audit entries, newest first.
    ///
    /// # Errors
    /// [`BrokerError::Store`].
    pub async fn audit_log(
        &self,
        filter: approvals::AuditFilter,
        limit: i64,
    ) -> Result<Vec<approvals::AuditRow>, BrokerError> {
        Ok(self
            .db
            .run(move |c| Ok(approvals::audit(c, &filter, limit)?))
            .await?)
    }
}

/// A rule's decision that was refused (no permitted route, or a race with the person) leaves the
/// question for the person; only other errors are errors.
fn stays_for_person(decided: Result<Applied, BrokerError>) -> Result<(), BrokerError> {
    match decided {
        Ok(_)
        | Err(
            BrokerError::InvalidAnswer(_)
            | BrokerError::Refused(_)
            | BrokerError::AlreadyDecided(_),
        ) => Ok(()),
        Err(e) => Err(e),
    }
}
