//! Decisions of the two reviews: approve (run the model), send (deliver), regenerate, reject;
//! and the audit entries they write (the model run itself is in `run.rs`). Each decision is
//! one transaction keyed by its approval id, so replaying it changes nothing.

use serde_json::Value;

use super::*;

impl Reviewer {
    /// Applies a decision of either review.
    ///
    /// # Errors
    /// [`BrokerError::InvalidAnswer`] for an outdated or malformed approval id, a decision that
    /// does not fit the phase, an unknown model or "no permitted route"; [`BrokerError::Conflict`]
    /// (as `AlreadyDecided`) when the approval id was used for another decision.
    pub async fn decide_sampling(
        &self,
        id: &QuestionId,
        decision: &Decision,
        actor: &Decider,
    ) -> Result<Applied, BrokerError> {
        let q = self.broker.get(id).await?;
        let engine = self.engine_for(&q)?;
        if let Some(replayed) = self.replayed(decision).await? {
            return Ok(replayed);
        }
        if q.state != State::Pending {
            return Err(BrokerError::AlreadyDecided(q.state));
        }
        let approval_id = approval_id_of(&q, &decision.approval_id)?;
        let review = self.review(&q).await?;
        let now = self.broker.now().timestamp_millis();
        match (approval_id, decision.decision) {
            (
                ApprovalId::Request {
                    revision,
                    after_run,
                    ..
                },
                kind @ (DecisionKind::Approve | DecisionKind::Reject),
            ) => {
                check_request_current(&q, &review, revision, after_run.as_deref())?;
                if kind == DecisionKind::Reject {
                    return self
                        .reject(&q, decision, actor, &[Phase::RequestReview], now, None)
                        .await;
                }
                self.start_run(&q, &engine, &review, decision, actor, now)
                    .await
            }
            (ApprovalId::Response { run: key, .. }, kind) => {
                let run = current_response_run(&q, &review, &key)?;
                let from = [Phase::ResponseReview, Phase::ToolUseReview];
                match kind {
                    DecisionKind::Send => self.deliver(&q, decision, actor, run, now).await,
                    DecisionKind::Reject => {
                        self.reject(&q, decision, actor, &from, now, Some(run))
                            .await
                    }
                    DecisionKind::Regenerate => {
                        self.start_run(&q, &engine, &review, decision, actor, now)
                            .await
                    }
                    DecisionKind::Approve => Err(invalid(StepRefusal::ResponseDecision)),
                }
            }
            _ => Err(invalid(StepRefusal::DecisionDoesNotFit)),
        }
    }

    /// A decision whose approval id was already used: [`Applied::Replayed`] when it was this
    /// same decision, refused when it was another; `None` for a fresh approval id.
    async fn replayed(&self, decision: &Decision) -> Result<Option<Applied>, BrokerError> {
        let aid = decision.approval_id.clone();
        let Some(previous) = self
            .db
            .run(move |c| Ok(approvals::approval(c, &aid)?))
            .await?
        else {
            return Ok(None);
        };
        if previous.decision == decision.decision {
            Ok(Some(Applied::Replayed))
        } else {
            Err(BrokerError::Refused(StepRefusal::AlreadyDecidedAs {
                approval: decision.approval_id.clone(),
                decision: previous.decision,
            }))
        }
    }

    pub(super) async fn deliver(
        &self,
        q: &Question,
        decision: &Decision,
        actor: &Decider,
        run: &RunRow,
        now: i64,
    ) -> Result<Applied, BrokerError> {
        let result: Value = run
            .result
            .as_deref()
            .and_then(|r| serde_json::from_str(r).ok())
            .ok_or_else(|| BrokerError::Corrupt(q.id.clone(), "run result".into()))?;
        let response = result_response(&q.rpc_id, result.clone());
        let response_text = response.to_string();
        let approval = ApprovalRow {
            approval_id: decision.approval_id.clone(),
            question_id: q.id.clone(),
            phase: Step::Response,
            revision: q.revision,
            run_id: Some(run.id.clone()),
            decision: DecisionKind::Send,
            model_id: Some(run.model_id.clone()),
            actor: actor.actor.clone(),
            created_at: now,
        };
        let action = if actor.actor.is_rule() {
            AuditAction::AutoApproved
        } else {
            AuditAction::Delivered
        };
        let mut audit =
            NewAudit::new(now, actor.actor.clone(), action, &q.id, &q.server).through(actor.via);
        audit.model_id = Some(run.model_id.clone());
        audit.input_tokens = run.input_tokens;
        audit.output_tokens = run.output_tokens;
        audit.cost_usd = run.cost_usd;
        audit.request_digest = Some(request_digest(&q.request));
        audit.response_digest = Some(digest_text(&result.to_string()));
        let done = self
            .db
            .write(move |c| {
                Ok(approvals::decide_with_approval(
                    c,
                    &approval,
                    &[Phase::ResponseReview, Phase::ToolUseReview],
                    State::Accepted,
                    &response_text,
                    &audit,
                    now,
                )?)
            })
            .await?;
        if !done {
            return Err(outdated(Stale::ResponseApproval));
        }
        self.after_decision(q, State::Accepted, response, now).await;
        Ok(Applied::Done)
    }

    pub(super) async fn reject(
        &self,
        q: &Question,
        decision: &Decision,
        actor: &Decider,
        from: &[Phase],
        now: i64,
        run: Option<&RunRow>,
    ) -> Result<Applied, BrokerError> {
        let error = RpcError::user_rejected("decline");
        self.reject_with(q, decision, actor, from, now, run, error)
            .await
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) async fn reject_with(
        &self,
        q: &Question,
        decision: &Decision,
        actor: &Decider,
        from: &[Phase],
        now: i64,
        run: Option<&RunRow>,
        error: RpcError,
    ) -> Result<Applied, BrokerError> {
        let no_route = error.code == NO_ROUTE;
        let response = error_response(Some(&q.rpc_id), &error);
        let response_text = response.to_string();
        let (phase, run_id) = match run {
            Some(r) => (Step::Response, Some(r.id.clone())),
            None => (Step::Request, None),
        };
        let approval = ApprovalRow {
            approval_id: decision.approval_id.clone(),
            question_id: q.id.clone(),
            phase,
            revision: q.revision,
            run_id,
            decision: DecisionKind::Reject,
            model_id: run.map(|r| r.model_id.clone()),
            actor: actor.actor.clone(),
            created_at: now,
        };
        let mut audit = NewAudit::new(
            now,
            actor.actor.clone(),
            AuditAction::Rejected,
            &q.id,
            &q.server,
        )
        .through(actor.via);
        audit.model_id = run.map(|r| r.model_id.clone());
        audit.request_digest = Some(request_digest(&q.request));
        let from = from.to_vec();
        let done = self
            .db
            .write(move |c| {
                Ok(approvals::decide_with_approval(
                    c,
                    &approval,
                    &from,
                    State::Declined,
                    &response_text,
                    &audit,
                    now,
                )?)
            })
            .await?;
        if !done {
            return Err(outdated(Stale::Approval));
        }
        if no_route {
            // Closed as declined, but by a rule, not a person: not a user_declined rejection.
            self.broker
                .metrics()
                .reject(q.kind.as_str(), crate::metrics::RejectReason::NoRoute);
            self.broker
                .metrics()
                .closed
                .with_label_values(&[q.kind.as_str(), State::Declined.as_str()])
                .inc();
            let mut decided = q.clone();
            decided.state = State::Declined;
            decided.phase = None;
            decided.response = Some(response);
            decided.decided_at = chrono::DateTime::from_timestamp_millis(now);
            self.broker.changed(&decided);
        } else {
            self.after_decision(q, State::Declined, response, now).await;
        }
        Ok(Applied::Done)
    }

    pub(super) async fn after_decision(
        &self,
        q: &Question,
        state: State,
        response: Value,
        now: i64,
    ) {
        let mut decided = q.clone();
        decided.state = state;
        decided.phase = None;
        decided.response = Some(response);
        decided.decided_at = chrono::DateTime::from_timestamp_millis(now);
        self.broker
            .count_decision(q, state, decided.decided_at.unwrap_or_default());
        self.broker.changed(&decided);
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) async fn audit(
        &self,
        q: &Question,
        actor: &Decider,
        action: AuditAction,
        model: Option<String>,
        cost: Option<f64>,
        request_digest: Option<String>,
        response_digest: Option<String>,
    ) -> Result<(), DbError> {
        let mut entry = NewAudit::new(
            self.broker.now().timestamp_millis(),
            actor.actor.clone(),
            action,
            &q.id,
            &q.server,
        )
        .through(actor.via);
        entry.model_id = model;
        entry.cost_usd = cost;
        entry.request_digest = request_digest;
        entry.response_digest = response_digest;
        self.db
            .write(move |c| Ok(approvals::append_audit(c, &entry)?))
            .await
    }
}

/// The request review's approval id still names the current revision, its phase and its newest
/// run.
fn check_request_current(
    q: &Question,
    review: &Review,
    revision: i32,
    after_run: Option<&str>,
) -> Result<(), BrokerError> {
    let newest = review.runs.first().map(|r| r.id.as_str());
    if revision != q.revision || q.phase != Some(Phase::RequestReview) || after_run != newest {
        return Err(outdated(Stale::RequestApproval));
    }
    Ok(())
}

/// The run a response review's approval id names, when it is the newest, done, and under
/// review.
fn current_response_run<'r>(
    q: &Question,
    review: &'r Review,
    key: &str,
) -> Result<&'r RunRow, BrokerError> {
    let run = review
        .runs
        .first()
        .filter(|r| r.id == key && r.state == RunState::Done);
    let Some(run) = run else {
        return Err(outdated(Stale::ResponseApproval));
    };
    if !q.phase.is_some_and(Phase::reviews_response) {
        return Err(outdated(Stale::ResponseApproval));
    }
    Ok(run)
}
