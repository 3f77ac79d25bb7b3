//! Edits of a request under review: the system prompt and text blocks of the current revision
//! become a new revision, which must still be a valid request; older approvals no longer apply.

use serde_json::{Value, json};

use super::*;

impl Reviewer {
    /// A decision that may carry an edit ([`Decision::edit`]): without one it is
    /// [`Reviewer::decide_sampling`]. With one (only `approve` of the current revision's request
    /// approval), the edit is checked and recorded first as a new revision (audited `edited`),
    /// and the approval is then decided for that revision, so what runs is the edited prompt.
    /// A refused edit leaves the question as it was. An edit that changes nothing approves the
    /// current revision.
    ///
    /// # Errors
    /// Those of [`Reviewer::edit_sampling`] and [`Reviewer::decide_sampling`];
    /// [`BrokerError::InvalidAnswer`] for an edit with another decision than `approve` or with
    /// a response approval id.
    pub async fn decide(
        &self,
        id: &QuestionId,
        decision: &Decision,
        actor: &Decider,
    ) -> Result<Applied, BrokerError> {
        let Some(edit) = &decision.edit else {
            return self.decide_sampling(id, decision, actor).await;
        };
        if decision.decision != DecisionKind::Approve {
            return Err(invalid(StepRefusal::EditWithDecision {
                decision: decision.decision,
            }));
        }
        // A repeated post of an approval already decided (a double click, an unchanged
        // prompt) is a replay, as without an edit.
        let aid = decision.approval_id.clone();
        if self
            .db
            .run(move |c| Ok(approvals::approval(c, &aid)?))
            .await?
            .is_some()
        {
            return self.decide_sampling(id, decision, actor).await;
        }
        let q = self.broker.get(id).await?;
        let ApprovalId::Request {
            question,
            revision,
            after_run,
        } = approval_id_of(&q, &decision.approval_id)?
        else {
            return Err(invalid(StepRefusal::EditNeedsRequestApproval));
        };
        if revision != edit.base_revision {
            return Err(invalid(StepRefusal::EditBaseRevision {
                base: edit.base_revision,
                revision,
            }));
        }
        let new_revision = self.edit_sampling(id, edit, actor).await?;
        let decision = Decision {
            approval_id: ApprovalId::Request {
                question,
                revision: new_revision,
                after_run,
            }
            .to_string(),
            decision: decision.decision,
            model: decision.model.clone(),
            edit: None,
            over_cap_confirmed: decision.over_cap_confirmed,
        };
        self.decide_sampling(id, &decision, actor).await
    }

    /// Edits the current revision into a new one (system prompt and text blocks only); the
    /// result must still be a valid request. Approvals of older revisions no longer apply.
    /// An edit that changes nothing makes no revision and returns the current one.
    ///
    /// # Errors
    /// [`BrokerError::InvalidAnswer`] for an outdated base revision or an edit that breaks the
    /// request; [`BrokerError::NotFound`], [`BrokerError::AlreadyDecided`].
    pub async fn edit_sampling(
        &self,
        id: &QuestionId,
        edit: &Edit,
        actor: &Decider,
    ) -> Result<i32, BrokerError> {
        let q = self.broker.get(id).await?;
        if q.state != State::Pending {
            return Err(BrokerError::AlreadyDecided(q.state));
        }
        let review = self.review(&q).await?;
        if edit.base_revision != q.revision || q.phase != Some(Phase::RequestReview) {
            return Err(outdated(Stale::EditRevision));
        }
        let params = edited_params(&review.params, edit)?;
        if params == review.params {
            // Nothing changed (the one-form review posts the prompt with every approval).
            return Ok(q.revision);
        }
        sampling::validate_request(q.era, &q.client_capabilities, &params)
            .map_err(|e| invalid(StepRefusal::EditInvalid { detail: e.message }))?;
        let new_revision = self.add_revision(&q, actor, &params).await?;
        self.broker.changed(&self.broker.get(id).await?);
        Ok(new_revision)
    }

    /// Records `params` as the revision after the question's current one, audited `edited`.
    async fn add_revision(
        &self,
        q: &Question,
        actor: &Decider,
        params: &Value,
    ) -> Result<i32, BrokerError> {
        let now = self.broker.now().timestamp_millis();
        let new_revision = q.revision + 1;
        let row = RevisionRow {
            question_id: q.id.clone(),
            revision: new_revision,
            params: params.to_string(),
            author: actor.actor.clone(),
            created_at: now,
        };
        let base = q.revision;
        if !self
            .db
            .write(move |c| Ok(approvals::add_revision(c, base, &row)?))
            .await?
        {
            return Err(outdated(Stale::EditRevision));
        }
        self.audit(
            q,
            actor,
            AuditAction::Edited,
            None,
            None,
            Some(request_digest(params)),
            None,
        )
        .await?;
        Ok(new_revision)
    }
}

/// The params with the edit's system prompt (an empty one removes it) and text blocks applied.
fn edited_params(params: &Value, edit: &Edit) -> Result<Value, BrokerError> {
    let mut params = params.clone();
    if let Some(prompt) = &edit.system_prompt
        && let Some(obj) = params.as_object_mut()
    {
        if prompt.is_empty() {
            obj.remove("systemPrompt");
        } else {
            obj.insert("systemPrompt".into(), json!(prompt));
        }
    }
    for t in &edit.texts {
        let content = params
            .pointer_mut(&format!("/messages/{}/content", t.message))
            .ok_or_else(|| invalid(StepRefusal::NoMessage { message: t.message }))?;
        let block = match content {
            Value::Array(items) => items.get_mut(t.block),
            single if t.block == 0 => Some(single),
            _ => None,
        }
        .ok_or_else(|| {
            invalid(StepRefusal::NoBlock {
                message: t.message,
                block: t.block,
            })
        })?;
        if block.get("type").and_then(Value::as_str) != Some("text") {
            return Err(invalid(StepRefusal::BlockNotText {
                message: t.message,
                block: t.block,
            }));
        }
        block["text"] = json!(t.text);
    }
    Ok(params)
}
