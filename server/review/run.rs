//! The model run: started under an approval (the model chosen, checked against the route,
//! its receipt), the model called, its outcome stored, and runs a restart interrupted marked
//! failed.

use std::sync::Arc;

use serde_json::Value;

use crate::db::{DbError, spend};
use crate::domain::Via;

use super::{
    Applied, ApprovalRow, AuditAction, BrokerError, Decider, Decision, DecisionKind, NewAudit,
    Phase, Question, Receipt, Review, Reviewer, RunRow, RunState, SamplingEngine, Stale, Step,
    StepRefusal, approval_id_of, approvals, invalid, outdated, request_digest, sampling,
};

impl Reviewer {
    pub(super) async fn start_run(
        &self,
        q: &Question,
        engine: &Arc<SamplingEngine>,
        review: &Review,
        decision: &Decision,
        actor: &Decider,
        now: i64,
    ) -> Result<Applied, BrokerError> {
        // A run stores the model's whole reply: a door already past its budget starts none (the
        // reply is counted against it once it came). A rule's run is the door's that opened the
        // question, so a script cannot have the person's rules run models for free.
        let via = actor.via.unwrap_or_else(|| q.door());
        let slot = self.broker.start_run(via)?;
        let model_id = chosen_model_id(review, decision)?;
        let Some(model) = engine.catalog.get(&model_id).cloned() else {
            return Err(invalid(StepRefusal::UnknownModel { model: model_id }));
        };
        // Running over the cost cap is the person's call, confirmed in the browser having seen
        // the cost and the cap: a script's confirmation is not one.
        let person_confirmed = decision.over_cap_confirmed && actor.via == Some(Via::Browser);
        let over_cap = check_not_excluded(review, &model_id, person_confirmed)?;
        let run = new_run(q, &model_id, &run_receipt(review, &model_id, over_cap), now);
        let approval = approval_row(q, decision, actor, &model_id, now)?;
        let audit = approval_audit(q, review, decision, actor, &model_id, now);
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
                .execute_run(question, engine, model, params, run, via)
                .await;
            drop(slot);
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
        via: Via,
    ) {
        // The provider bounds the call by the model's `timeout_secs`.
        let outcome = engine.providers.complete(&model, &params).await;
        run.finished_at = Some(self.broker.now().timestamp_millis());
        let phase = record_outcome(&mut run, &q, &params, outcome);
        let stored =
            run.result.as_ref().map_or(0, String::len) + run.error.as_ref().map_or(0, String::len);
        self.broker
            .count_stored(via, u64::try_from(stored).unwrap_or(u64::MAX));
        if let Err(e) = self.store_finished_run(run, phase).await {
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

    /// Stores a finished run, the question's next phase and the run's spend, in one write.
    async fn store_finished_run(&self, stored: RunRow, phase: Phase) -> Result<(), DbError> {
        self.db
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

/// The model to run: the one the decision names, else the route's choice.
fn chosen_model_id(review: &Review, decision: &Decision) -> Result<String, BrokerError> {
    match (&decision.model, &review.route.chosen) {
        (Some(m), _) => Ok(m.clone()),
        (None, Some(c)) => Ok(c.id.clone()),
        (None, None) => Err(BrokerError::Refused(StepRefusal::NoRoute {
            why: review.route.receipt.why.clone(),
        })),
    }
}

/// Refuses a model the route excluded (missing a capability, not allowed for this server),
/// even when a form posts it anyway; one excluded only for its estimate over the cost cap runs
/// when `person_confirmed` (the person, in the browser, having seen the cost and the cap).
/// Returns whether it runs over the cap.
fn check_not_excluded(
    review: &Review,
    model_id: &str,
    person_confirmed: bool,
) -> Result<bool, BrokerError> {
    let excluded = review
        .route
        .receipt
        .exclusions
        .iter()
        .find(|e| e.model == model_id);
    let over_cap = excluded.is_some_and(|e| e.only_over_budget());
    if let Some(excluded) = excluded
        && !(over_cap && person_confirmed)
    {
        return Err(invalid(StepRefusal::ModelExcluded {
            model: model_id.to_owned(),
            reasons: excluded.reasons_text(),
        }));
    }
    Ok(over_cap)
}

/// The route's receipt, saying when the reviewer chose another model or ran it over the cap.
fn run_receipt(review: &Review, model_id: &str, over_cap: bool) -> Receipt {
    let mut receipt: Receipt = review.route.receipt.clone();
    if review.route.chosen.as_ref().map(|c| c.id.as_str()) != Some(model_id) {
        receipt.why = format!("{} The reviewer chose {model_id} instead.", receipt.why);
    }
    if over_cap {
        receipt.why = format!(
            "{} The reviewer confirmed running it over the cost cap.",
            receipt.why
        );
    }
    receipt
}

/// A run of `model_id` on the question's current revision, started `now`.
fn new_run(q: &Question, model_id: &str, receipt: &Receipt, now: i64) -> RunRow {
    RunRow {
        id: uuid::Uuid::now_v7().to_string(),
        question_id: q.id.clone(),
        revision: q.revision,
        model_id: model_id.to_owned(),
        receipt: serde_json::to_string(receipt).unwrap_or_default(),
        state: RunState::Running,
        result: None,
        error: None,
        input_tokens: None,
        output_tokens: None,
        cost_usd: None,
        started_at: now,
        finished_at: None,
    }
}

/// The approval a run is started under.
fn approval_row(
    q: &Question,
    decision: &Decision,
    actor: &Decider,
    model_id: &str,
    now: i64,
) -> Result<ApprovalRow, BrokerError> {
    let approval_id = approval_id_of(q, &decision.approval_id)?;
    Ok(ApprovalRow {
        approval_id: decision.approval_id.clone(),
        question_id: q.id.clone(),
        phase: approval_id.step(),
        revision: q.revision,
        run_id: approval_id.run().map(str::to_owned),
        decision: decision.decision,
        model_id: Some(model_id.to_owned()),
        actor: actor.actor.clone(),
        created_at: now,
    })
}

/// The audit entry of an approval or a regeneration.
fn approval_audit(
    q: &Question,
    review: &Review,
    decision: &Decision,
    actor: &Decider,
    model_id: &str,
    now: i64,
) -> NewAudit {
    let action = match (decision.decision, actor.actor.is_rule()) {
        (DecisionKind::Regenerate, _) => AuditAction::Regenerated,
        (_, true) => AuditAction::AutoApproved,
        _ => AuditAction::Approved,
    };
    let mut audit =
        NewAudit::new(now, actor.actor.clone(), action, &q.id, &q.server).through(actor.via);
    audit.model_id = Some(model_id.to_owned());
    audit.request_digest = Some(request_digest(&review.params));
    audit
}

/// Records a model call's outcome on its run and returns the question's next phase: response
/// review (tool-use review when the answer holds `tool_use`) for a valid answer, request review
/// for a failure or an answer that is not a valid `CreateMessageResult`.
fn record_outcome(
    run: &mut RunRow,
    q: &Question,
    params: &Value,
    outcome: Result<crate::sampling::Completion, crate::sampling::ProviderError>,
) -> Phase {
    let done = match outcome {
        Ok(done) => done,
        Err(e) => {
            run.state = RunState::Failed;
            run.error = Some(e.stored());
            return Phase::RequestReview;
        }
    };
    // Tokens were spent even when the answer is refused below: keep them.
    run.input_tokens = i64::try_from(done.input_tokens).ok();
    run.output_tokens = i64::try_from(done.output_tokens).ok();
    run.cost_usd = Some(done.cost_usd);
    match sampling::validate_result(q.era, params, &done.result) {
        Ok(()) => {
            run.state = RunState::Done;
            run.result = Some(done.result.to_string());
            if has_tool_use(&done.result) {
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

/// Whether a `CreateMessageResult`'s content holds a `tool_use` block.
fn has_tool_use(result: &Value) -> bool {
    match result.get("content") {
        Some(Value::Array(items)) => items.iter().any(|b| b["type"] == "tool_use"),
        Some(b) => b["type"] == "tool_use",
        None => false,
    }
}
