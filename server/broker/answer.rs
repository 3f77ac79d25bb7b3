//! Answering: validate an answer against the question (a bad answer leaves it open), then move
//! it from `pending` in one conditional UPDATE, so a question gets exactly one response however
//! many answers race for it. Also the server's own moves: withdraw and URL completion.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::error::invalid;
use super::{Answerer, Broker, BrokerError, Question};
use diesel::QueryResult;
use sha2::{Digest, Sha256};

use crate::db::approvals::{self, NewAudit};
use crate::domain::{Action, Actor, Audience, AuditAction, Kind, QuestionId, State, Via};
use crate::metrics::RejectReason;
use crate::protocol::jsonrpc::{RpcError, error_response, result_response};
use crate::protocol::{elicitation, sampling, url_safety};
use crate::sampling::request_digest;
use crate::wire::Answer;

impl Broker {
    /// The JSON-RPC response `answer` would produce, without deciding anything (the confirm
    /// page shows exactly this).
    ///
    /// # Errors
    /// [`BrokerError::InvalidAnswer`] with every problem; [`BrokerError::AlreadyDecided`],
    /// [`BrokerError::HumanOnly`], [`BrokerError::NotFound`].
    pub async fn preview(
        &self,
        id: &QuestionId,
        answer: &Answer,
        by: Answerer,
    ) -> Result<Value, BrokerError> {
        let question = self.get(id).await?;
        check_may_answer(&question, by)?;
        Ok(self.counted_response_for(&question, answer)?.1)
    }

    /// Validates `answer` and, if valid, decides the question and stores its response.
    ///
    /// # Errors
    /// [`BrokerError::InvalidAnswer`] (the question stays pending),
    /// [`BrokerError::AlreadyDecided`] (409: another answer won), [`BrokerError::HumanOnly`],
    /// [`BrokerError::NotFound`], [`BrokerError::Store`].
    pub async fn answer(
        &self,
        id: &QuestionId,
        answer: &Answer,
        by: Answerer,
    ) -> Result<State, BrokerError> {
        let question = self.get(id).await?;
        check_may_answer(&question, by)?;
        let (state, response) = self.counted_response_for(&question, answer)?;
        let audit = match question.kind {
            Kind::ToolCall => self.tool_audit(&question, state, &response, by),
            Kind::Sampling | Kind::Form | Kind::Url => {
                self.hand_audit(&question, state, &response, by)
            }
        };
        self.decide_audited(&question, state, Some(response), Some(audit))
            .await?;
        if let (Kind::ToolCall, State::Accepted, Some(span)) = (question.kind, state, answer.grant)
        {
            self.grant_from(&question, span).await?;
        }
        Ok(state)
    }

    /// The audit entry of a question answered, declined or cancelled by hand (every decision
    /// is audited, of every kind, not only those of the sampling model review): digests only
    /// (the model name a sampling answer reports is covered by the response digest, and not
    /// kept as text).
    fn hand_audit(
        &self,
        question: &Question,
        state: State,
        response: &Value,
        by: Answerer,
    ) -> NewAudit {
        let action = match state {
            State::Accepted => AuditAction::Answered,
            State::Cancelled => AuditAction::Cancelled,
            _ => AuditAction::Declined,
        };
        let mut entry = NewAudit::question(
            self.now().timestamp_millis(),
            by.actor(),
            action,
            question.kind,
            &question.id,
            &question.server,
        )
        .through(Some(by));
        entry.request_digest = Some(request_digest(&question.request));
        if let Some(result) = response.get("result") {
            // The `model` a hand-written answer names is the answerer's text, of any length: it
            // outlives the question in the audit, so only the response digest (which covers
            // it) is kept, never the string.
            entry.response_digest = Some(hex::encode(Sha256::digest(result.to_string())));
        }
        entry
    }

    /// The server cancelled the request: the question is withdrawn and no response is sent.
    /// Unknown or already decided ids are a no-op (MCP G10: such cancellations MAY be ignored),
    /// and so is a question opened through another door than `via` (only its opener may
    /// withdraw it).
    ///
    /// # Errors
    /// [`BrokerError::Store`].
    pub async fn withdraw(&self, id: &QuestionId, via: Via) -> Result<(), BrokerError> {
        match self.get(id).await {
            Ok(q) if q.state == State::Pending && q.opened_through(via) => {
                match self.decide(&q, State::Withdrawn, None).await {
                    Ok(()) | Err(BrokerError::AlreadyDecided(_)) => Ok(()),
                    Err(e) => Err(e),
                }
            }
            Ok(_) | Err(BrokerError::NotFound) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The person clicked "Open" on a URL question: records their consent, accepts the
    /// question (the server gets `{"action":"accept"}`, no content) and returns the URL to
    /// redirect to. A question already accepted or completed can be opened again.
    ///
    /// # Errors
    /// [`BrokerError::NotFound`] (also for a question that is not a URL question),
    /// [`BrokerError::AlreadyDecided`] when it was declined, cancelled, expired or withdrawn.
    pub async fn open_url(&self, id: &QuestionId) -> Result<String, BrokerError> {
        let question = self.get(id).await?;
        if question.kind != Kind::Url {
            return Err(BrokerError::NotFound);
        }
        let raw = question
            .request
            .get("url")
            .and_then(Value::as_str)
            .ok_or_else(|| BrokerError::Corrupt(question.id.clone(), "url".into()))?;
        // Checked again before consent is recorded: a URL that cannot be redirected to safely
        // (an older version may have stored one) is never accepted.
        let url = url_safety::review(raw)
            .map_err(|e| BrokerError::Corrupt(question.id.clone(), e.to_string()))?
            .normalized;
        let qid = question.id.clone();
        let now = self.now();
        self.db
            .write(move |conn| Ok(Question::mark_opened(conn, &qid, now)?))
            .await?;
        match question.state {
            State::Pending => {
                let response = result_response(&question.rpc_id, json!({"action": "accept"}));
                let mut audit = NewAudit::question(
                    now.timestamp_millis(),
                    Actor::Human,
                    AuditAction::Opened,
                    Kind::Url,
                    &question.id,
                    &question.server,
                )
                .through(Some(Answerer::Browser));
                audit.request_digest = Some(request_digest(&question.request));
                match self
                    .decide_audited(&question, State::Accepted, Some(response), Some(audit))
                    .await
                {
                    Ok(())
                    | Err(BrokerError::AlreadyDecided(State::Accepted | State::Completed)) => {
                        Ok(url)
                    }
                    Err(e) => Err(e),
                }
            }
            State::Accepted | State::Completed => Ok(url),
            other => Err(BrokerError::AlreadyDecided(other)),
        }
    }

    /// The server reported a URL elicitation complete: an accepted URL question with this
    /// `elicitationId`, opened through the door `via` the report came through, becomes
    /// `completed`. Unknown or other ids are ignored (MCP 2025-11-25 `client/elicitation.mdx`
    /// §Completion Notifications, EU6: "MUST ignore").
    ///
    /// # Errors
    /// [`BrokerError::Store`].
    pub async fn complete(&self, elicitation_id: &str, via: Via) -> Result<(), BrokerError> {
        let eid = elicitation_id.to_owned();
        let now = self.now();
        let completed = self
            .db
            .write(move |conn| Ok(Question::complete_url(conn, &eid, via, now)?))
            .await?;
        for question in completed {
            self.metrics
                .closed
                .with_label_values(&[question.kind.as_str(), State::Completed.as_str()])
                .inc();
            self.changed(&question);
        }
        Ok(())
    }

    fn counted_response_for(
        &self,
        question: &Question,
        answer: &Answer,
    ) -> Result<(State, Value), BrokerError> {
        let r = response_for(question, answer);
        if let Err(BrokerError::InvalidAnswer(_)) = &r {
            self.metrics
                .reject(question.kind.as_str(), RejectReason::InvalidAnswer);
        }
        r
    }

    /// Counts a decision into the metrics (closed, rejections, time to decision). Whoever
    /// decides a question outside this file calls it once the decision is committed.
    pub fn count_decision(&self, question: &Question, state: State, at: DateTime<Utc>) {
        let kind = question.kind.as_str();
        self.metrics
            .closed
            .with_label_values(&[kind, state.as_str()])
            .inc();
        match state {
            State::Declined => self.metrics.reject(kind, RejectReason::UserDeclined),
            State::Cancelled => self.metrics.reject(kind, RejectReason::UserCancelled),
            _ => {}
        }
        if matches!(state, State::Accepted | State::Declined | State::Cancelled) {
            let secs = (at - question.created_at).num_milliseconds().max(0) as f64 / 1000.0;
            self.metrics.decision(kind).observe(secs);
        }
    }

    pub(super) async fn decide(
        &self,
        question: &Question,
        state: State,
        response: Option<Value>,
    ) -> Result<(), BrokerError> {
        self.decide_audited(question, state, response, None).await
    }

    /// [`Broker::decide`], writing `audit` in the same transaction when the question moves.
    pub(super) async fn decide_audited(
        &self,
        question: &Question,
        state: State,
        response: Option<Value>,
        audit: Option<NewAudit>,
    ) -> Result<(), BrokerError> {
        let id = question.id.clone();
        let text = response.as_ref().map(Value::to_string);
        let now = self.now();
        let moved = self
            .db
            .write(move |conn| {
                Ok(conn.immediate_transaction(|conn| {
                    let moved = Question::decide(conn, &id, state, text.as_deref(), now)?;
                    if let (true, Some(entry)) = (moved, &audit) {
                        approvals::append_audit(conn, entry)?;
                    }
                    QueryResult::Ok(moved)
                })?)
            })
            .await?;
        if !moved {
            let current = Box::pin(self.get(&question.id)).await?;
            return Err(BrokerError::AlreadyDecided(current.state));
        }
        let mut decided = question.clone();
        decided.state = state;
        decided.phase = None;
        decided.response = response;
        decided.decided_at = Some(now);
        tracing::info!(id = %decided.id, state = state.as_str(), "question decided");
        self.count_decision(question, state, now);
        self.changed(&decided);
        Ok(())
    }
}

/// Whether `by` may answer: the person's questions first (a script is told no before anything
/// of their state, which would tell it what the person decided), then only a pending one.
fn check_may_answer(question: &Question, by: Answerer) -> Result<(), BrokerError> {
    if question.audience == Audience::Human && by.is_agent() {
        return Err(BrokerError::HumanOnly);
    }
    if question.state != State::Pending {
        return Err(BrokerError::AlreadyDecided(question.state));
    }
    Ok(())
}

/// The state and JSON-RPC response an answer produces, after validating it.
fn response_for(q: &Question, answer: &Answer) -> Result<(State, Value), BrokerError> {
    let state = match answer.action {
        Action::Accept => State::Accepted,
        Action::Decline => State::Declined,
        Action::Cancel => State::Cancelled,
    };
    let id = &q.rpc_id;
    if q.kind == Kind::ToolCall {
        return super::tool_calls::response_for(q, answer, state);
    }
    if answer.arguments.is_some() || answer.grant.is_some() {
        return Err(invalid(
            "only a tool call's answer carries arguments or a grant",
        ));
    }
    match (q.kind, answer.action) {
        (Kind::Sampling, Action::Accept) => {
            if answer.content.is_some() {
                return Err(invalid("a sampling answer carries a result, not content"));
            }
            let result = answer
                .result
                .as_ref()
                .ok_or_else(|| invalid("result is required to accept"))?;
            sampling::validate_result(q.era, &q.request, result)
                .map_err(BrokerError::InvalidAnswer)?;
            Ok((state, result_response(id, result.clone())))
        }
        (Kind::Sampling, action) => Ok((
            state,
            error_response(Some(id), &RpcError::user_rejected(action.as_str())),
        )),
        (Kind::Form, Action::Accept) => {
            if answer.result.is_some() {
                return Err(invalid("a form answer carries content, not a result"));
            }
            let content = answer
                .content
                .as_ref()
                .ok_or_else(|| invalid("content is required to accept"))?;
            let schema = q.form_schema()?;
            let result =
                elicitation::accept_form(&schema, content).map_err(BrokerError::InvalidAnswer)?;
            Ok((state, result_response(id, result)))
        }
        // Consent is the person's click on the service's own /questions/{id}/open
        // (`Broker::open_url`), never an answer posted on its own (2025-11-25 ES7: MUST NOT open
        // the URL without explicit consent).
        (Kind::Url, Action::Accept) => Err(invalid(
            "a URL question is accepted by opening its link from the review page",
        )),
        (Kind::ToolCall, _) => super::tool_calls::response_for(q, answer, state),
        (Kind::Form | Kind::Url, action) => {
            if answer.content.is_some() || answer.result.is_some() {
                return Err(invalid("decline and cancel carry no content"));
            }
            Ok((
                state,
                result_response(id, elicitation::refusal(action.as_str())),
            ))
        }
    }
}
