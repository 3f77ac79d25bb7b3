//! Decisions of the two reviews: approve (run the model), send (deliver), regenerate, reject;
//! the model run itself; and the audit entries they write. Each decision is one transaction
//! keyed by its approval id, so replaying it changes nothing.

use std::sync::Arc;

use serde_json::Value;

use crate::db::spend;

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
        let aid = decision.approval_id.clone();
        if let Some(previous) = self
            .db
            .run(move |c| Ok(approvals::approval(c, &aid)?))
            .await?
        {
            return if previous.decision == decision.decision {
                Ok(Applied::Replayed)
            } else {
                Err(BrokerError::Refused(StepRefusal::AlreadyDecidedAs {
                    approval: decision.approval_id.clone(),
                    decision: previous.decision,
                }))
            };
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
                let newest = review.runs.first().map(|r| r.id.as_str());
                if revision != q.revision
                    || q.phase != Some(Phase::RequestReview)
                    || after_run.as_deref() != newest
                {
                    return Err(outdated(Stale::RequestApproval));
                }
                if kind == DecisionKind::Reject {
                    return self
                        .reject(&q, decision, actor, &[Phase::RequestReview], now, None)
                        .await;
                }
                self.start_run(&q, &engine, &review, decision, actor, now)
                    .await
            }
            (ApprovalId::Response { run: key, .. }, kind) => {
                let run = review
                    .runs
                    .first()
                    .filter(|r| r.id == key && r.state == RunState::Done);
                let Some(run) = run else {
                    return Err(outdated(Stale::ResponseApproval));
                };
                let from = [Phase::ResponseReview, Phase::ToolUseReview];
                if !q.phase.is_some_and(Phase::reviews_response) {
                    return Err(outdated(Stale::ResponseApproval));
                }
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

    pub(super) async fn start_run(
        &self,
        q: &Question,
        engine: &Arc<SamplingEngine>,
        review: &Review,
        decision: &Decision,
        actor: &Decider,
        now: i64,
    ) -> Result<Applied, BrokerError> {
        let model_id = match &decision.model {
            Some(m) => m.clone(),
            None => match &review.route.chosen {
                Some(c) => c.id.clone(),
                None => {
                    return Err(BrokerError::Refused(StepRefusal::NoRoute {
                        why: review.route.receipt.why.clone(),
                    }));
                }
            },
        };
        let Some(model) = engine.catalog.get(&model_id).cloned() else {
            return Err(invalid(StepRefusal::UnknownModel { model: model_id }));
        };
        // A model the route excluded (missing a capability, not allowed for this server) is
        // never run, even when a form posts it anyway; one excluded only for its estimate over
        // the cost cap runs when the person confirmed it, having seen the cost and the cap.
        let excluded = review
            .route
            .receipt
            .exclusions
            .iter()
            .find(|e| e.model == model_id);
        let over_cap = excluded.is_some_and(|e| e.only_over_budget());
        if let Some(excluded) = excluded
            && !(over_cap && decision.over_cap_confirmed)
        {
            return Err(invalid(StepRefusal::ModelExcluded {
                model: model_id,
                reasons: excluded.reasons_text(),
            }));
        }
        let mut receipt: Receipt = review.route.receipt.clone();
        if review.route.chosen.as_ref().map(|c| c.id.as_str()) != Some(model_id.as_str()) {
            receipt.why = format!("{} The reviewer chose {model_id} instead.", receipt.why);
        }
        if over_cap {
            receipt.why = format!(
                "{} The reviewer confirmed running it over the cost cap.",
                receipt.why
            );
        }
        let run = RunRow {
            id: uuid::Uuid::now_v7().to_string(),
            question_id: q.id.clone(),
            revision: q.revision,
            model_id: model_id.clone(),
            receipt: serde_json::to_string(&receipt).unwrap_or_default(),
            state: RunState::Running,
            result: None,
            error: None,
            input_tokens: None,
            output_tokens: None,
            cost_usd: None,
            started_at: now,
            finished_at: None,
        };
        let approval_id = approval_id_of(q, &decision.approval_id)?;
        let approval = ApprovalRow {
            approval_id: decision.approval_id.clone(),
            question_id: q.id.clone(),
            phase: approval_id.step(),
            revision: q.revision,
            run_id: approval_id.run().map(str::to_owned),
            decision: decision.decision,
            model_id: Some(model_id.clone()),
            actor: actor.actor.clone(),
            created_at: now,
        };
        let action = match (decision.decision, actor.actor.is_rule()) {
            (DecisionKind::Regenerate, _) => AuditAction::Regenerated,
            (_, true) => AuditAction::AutoApproved,
            _ => AuditAction::Approved,
        };
        let mut audit =
            NewAudit::new(now, actor.actor.clone(), action, &q.id, &q.server).through(actor.via);
        audit.model_id = Some(model_id.clone());
        audit.request_digest = Some(request_digest(&review.params));
        let run_for_db = run.clone();
        let started = self
            .db
            .write(move |c| {
                Ok(approvals::approve_and_start(
                    c,
                    &approval,
                    &run_for_db,
                    &audit,
                )?)
            })
            .await?;
        if !started {
            return Err(outdated(Stale::Approval));
        }
        self.broker.changed(&self.broker.get(&q.id).await?);
        let broker = self.clone();
        let engine = engine.clone();
        let params = review.params.clone();
        let question = q.clone();
        tokio::spawn(async move {
            broker
                .execute_run(question, engine, model, params, run)
                .await;
        });
        Ok(Applied::Done)
    }

    /// Calls the model and stores the outcome; the question moves to response review (tool-use
    /// review when the response holds `tool_use`), or back to request review on failure.
    pub(super) async fn execute_run(
        &self,
        q: Question,
        engine: Arc<SamplingEngine>,
        model: crate::sampling::ModelConfig,
        params: Value,
        mut run: RunRow,
    ) {
        // The provider bounds the call by the model's `timeout_secs`.
        let outcome = engine.providers.complete(&model, &params).await;
        let now = self.broker.now().timestamp_millis();
        run.finished_at = Some(now);
        let phase = match outcome {
            Ok(done) => {
                // Tokens were spent even when the answer is refused below: keep them.
                run.input_tokens = i64::try_from(done.input_tokens).ok();
                run.output_tokens = i64::try_from(done.output_tokens).ok();
                run.cost_usd = Some(done.cost_usd);
                match sampling::validate_result(q.era, &params, &done.result) {
                    Ok(()) => {
                        run.state = RunState::Done;
                        run.result = Some(done.result.to_string());
                        let has_tool_use = match done.result.get("content") {
                            Some(Value::Array(items)) => {
                                items.iter().any(|b| b["type"] == "tool_use")
                            }
                            Some(b) => b["type"] == "tool_use",
                            None => false,
                        };
                        if has_tool_use {
                            Phase::ToolUseReview
                        } else {
                            Phase::ResponseReview
                        }
                    }
                    Err(errors) => {
                        run.state = RunState::Failed;
                        let why: Vec<String> = errors
                            .iter()
                            .map(|e| format!("{} {}", e.field, e.message))
                            .collect();
                        run.error = Some(format!(
                            "the model's answer is not a valid CreateMessageResult: {}",
                            why.join("; ")
                        ));
                        Phase::RequestReview
                    }
                }
            }
            Err(e) => {
                run.state = RunState::Failed;
                run.error = Some(e.stored());
                Phase::RequestReview
            }
        };
        let stored = run.clone();
        if let Err(e) = self
            .db
            .write(move |c| {
                // finish_run is its own transaction (SQLite's cannot nest); the one writer runs
                // this closure whole, so no other write comes between the two.
                approvals::finish_run(c, &stored, phase)?;
                if stored.cost_usd.is_some() {
                    spend::record_run_usage(
                        c,
                        &stored.question_id,
                        &stored.model_id,
                        stored.started_at,
                        (stored.input_tokens, stored.output_tokens, stored.cost_usd),
                    )?;
                }
                Ok(())
            })
            .await
        {
            tracing::error!(error = %e, "cannot store a finished model run");
            return;
        }
        if let Ok(current) = self.broker.get(&q.id).await {
            self.broker.changed(&current);
            if phase != Phase::RequestReview
                && let Err(e) = self.apply_rule(&current, Step::Response).await
            {
                tracing::warn!(error = %e, "auto-approve of a response failed");
            }
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

    /// Marks runs interrupted by a restart as failed (their questions return to request
    /// review). Called once at start.
    ///
    /// # Errors
    /// [`BrokerError::Store`].
    pub async fn recover_runs(&self) -> Result<usize, BrokerError> {
        let now = self.broker.now().timestamp_millis();
        Ok(self
            .db
            .write(move |c| Ok(approvals::fail_interrupted_runs(c, now)?))
            .await?
            .len())
    }
}
