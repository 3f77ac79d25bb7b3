//! Two-step approval of sampling questions run on a configured model: a stored state machine.
//!
//! ```text
//! pending/request_review ──approve(rev)──▶ pending/running ──model done──▶ pending/response_review
//!        │  ▲ edit → rev+1                      │ model failed                  (tool_use_review
//!        │  └──────────────────────────────────-┘ (back to request_review)       when it holds tool_use)
//!        │                                                                        │ send → accepted
//!        └──reject──▶ declined (-1)                 regenerate → running ◀────────┤ reject → declined (-1)
//! ```
//!
//! Every decision carries an approval id, `<question>:request:<revision>` or
//! `<question>:response:<run>`: replaying it changes nothing; a decision for an outdated revision
//! or run is refused; the model is only called under a request approval of the current
//! revision; delivery writes the approval, the response and the audit entry in one transaction.
//! (MCP 2025-06-18+ `client/sampling.mdx` §User Interaction Model, SA2/SA3: a human in the loop
//! reviews the request before sampling and the response before delivery.)

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Broker, BrokerError, Kind, Question, State};
use crate::config::Budgets;
use crate::db::DbError;
use crate::db::approvals::{self, ApprovalRow, NewAudit, RevisionRow, RunRow};
pub use crate::domain::DecisionKind;
use crate::domain::{Actor, ApprovalId, AuditAction, Phase, RuleScope, RunState, Step};
use crate::protocol::FieldError;
use crate::protocol::jsonrpc::{RpcError, error_response, result_response};
use crate::protocol::sampling;
use crate::sampling::{
    Catalog, Providers, Receipt, RouteOutcome, RoutingConfig, request_digest, route,
};

/// Longest a model call may take before the run fails.
const MODEL_TIMEOUT: Duration = Duration::from_secs(300);

/// The code a server gets when a rule refused its request because no configured model may
/// serve it: outside JSON-RPC's reserved range (as MCP 2026-07-28 `basic/index.mdx` §Error Codes
/// asks) and distinct from `-1`, which means a person rejected it. `data.reason` is `no_route`.
pub const NO_ROUTE: i64 = -2;

/// Default lifetime of an auto-approve rule, in days.
pub const RULE_DAYS: i64 = 7;

/// What runs sampling on models: the catalog, the route policy settings and the providers.
pub struct SamplingEngine {
    /// The configured models.
    pub catalog: Catalog,
    /// Route policy settings.
    pub routing: RoutingConfig,
    /// The provider clients.
    pub providers: Providers,
    /// Limits on tool loops and daily use.
    pub budgets: Budgets,
}

/// Whether a new sampling request may open, and in which conversation.
pub(super) enum Round {
    /// It continues the conversation with this id.
    Continue(String),
    /// It starts a conversation.
    New,
    /// A budget refuses it: the JSON-RPC error for the server.
    Refuse(RpcError),
}

fn budget_error(limit: &str, used: String, max: String) -> RpcError {
    let mut e = RpcError::internal(format!(
        "Budget exhausted: {limit} is {max} and {used} is already used; the request was not run"
    ));
    e.data = Some(json!({"reason": "budget", "limit": limit}));
    e
}

/// The refusal when `used` reaches a token or cost limit: `(token limit name, its value, cost
/// limit name, its value in USD)`.
fn over_budget(
    used: &approvals::Usage,
    limits: (&str, Option<u64>, &str, Option<f64>),
) -> Option<RpcError> {
    let (tokens_name, max_tokens, cost_name, max_cost) = limits;
    if let Some(max) = max_tokens
        && used.tokens >= i64::try_from(max).unwrap_or(i64::MAX)
    {
        return Some(budget_error(
            tokens_name,
            used.tokens.to_string(),
            max.to_string(),
        ));
    }
    match max_cost {
        Some(max) if used.cost >= max => Some(budget_error(
            cost_name,
            format!("${:.6}", used.cost),
            format!("${max}"),
        )),
        _ => None,
    }
}

/// Ids of `tool_use` blocks the request's `tool_result` blocks answer.
fn answered_tool_uses(params: &Value) -> Vec<String> {
    let mut ids = Vec::new();
    for message in params
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let blocks: Vec<&Value> = match message.get("content") {
            Some(Value::Array(items)) => items.iter().collect(),
            Some(b) => vec![b],
            None => Vec::new(),
        };
        for b in blocks {
            if b["type"] == "tool_result"
                && let Some(id) = b.get("toolUseId").and_then(Value::as_str)
            {
                ids.push(id.to_owned());
            }
        }
    }
    ids
}

/// True when a delivered response (JSON-RPC text) holds a `tool_use` with one of `ids`.
fn delivered_tool_use(response: &str, ids: &[String]) -> bool {
    let Ok(response) = serde_json::from_str::<Value>(response) else {
        return false;
    };
    let blocks: Vec<&Value> = match response.pointer("/result/content") {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(b) => vec![b],
        None => Vec::new(),
    };
    blocks.iter().any(|b| {
        b["type"] == "tool_use"
            && b.get("id")
                .and_then(Value::as_str)
                .is_some_and(|id| ids.iter().any(|i| i == id))
    })
}

/// A decision posted for an approval id (`POST /api/v1/questions/{id}/approvals`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Decision {
    /// `<question>:request:<revision>` or `<question>:response:<run>`.
    pub approval_id: String,
    /// What to do.
    pub decision: DecisionKind,
    /// For `approve` and `regenerate`: another catalog model than the routed one.
    #[serde(default)]
    pub model: Option<String>,
}

/// An edit of the request (`POST /api/v1/questions/{id}/revisions`): replaces the system prompt
/// and/or text blocks of the current revision, making a new one.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Edit {
    /// The revision the edit was made on; an older one is refused.
    pub base_revision: i32,
    /// New system prompt (empty removes it).
    #[serde(default)]
    pub system_prompt: Option<String>,
    /// New texts of text blocks.
    #[serde(default)]
    pub texts: Vec<TextEdit>,
}

/// One edited text block: `messages[message].content` (block `block` of an array).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TextEdit {
    /// Message index.
    pub message: usize,
    /// Block index within the message (0 for single-block content).
    pub block: usize,
    /// The new text.
    pub text: String,
}

/// What a decision did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// The decision took effect.
    Done,
    /// The same decision was already recorded: nothing changed.
    Replayed,
}

/// Everything the review pages and the API show about a model-run sampling question.
#[derive(Debug, Clone)]
pub struct Review {
    /// The current revision number.
    pub revision: i32,
    /// The params of the current revision.
    pub params: Value,
    /// The route of the current revision (deterministic: the same as when it ran).
    pub route: RouteOutcome,
    /// Runs, newest first.
    pub runs: Vec<RunRow>,
}

impl Review {
    /// The id a decision of the current revision's request review takes.
    pub fn request_approval_id(&self, question: &str) -> ApprovalId {
        ApprovalId::Request {
            question: question.to_owned(),
            revision: self.revision,
        }
    }

    /// The id a decision of the response review takes: offered only for the newest run, and
    /// only once it is done (the API and the pages both offer exactly this).
    pub fn response_approval_id(&self, question: &str) -> Option<ApprovalId> {
        self.runs
            .first()
            .filter(|r| r.state == RunState::Done)
            .map(|r| ApprovalId::Response {
                question: question.to_owned(),
                run: r.id.clone(),
            })
    }
}

/// Approval-engine errors beyond the broker's.
fn outdated(what: &str) -> BrokerError {
    BrokerError::InvalidAnswer(vec![FieldError::whole(format!(
        "{what} is outdated: the question moved on; reload and decide again"
    ))])
}

fn invalid(message: impl Into<String>) -> BrokerError {
    BrokerError::InvalidAnswer(vec![FieldError::whole(message)])
}

/// Parses a posted approval id for question `q`, refusing one of another question with the
/// same errors as before the id was typed: an id naming this question with a revision that is
/// not a number is outdated, one naming an unknown step does not fit.
fn approval_id_of(q: &Question, text: &str) -> Result<ApprovalId, BrokerError> {
    match text.parse::<ApprovalId>() {
        Ok(id) if id.question() == q.id => Ok(id),
        Ok(_) => Err(invalid("the approval id does not belong to this question")),
        Err(_) => match text.splitn(3, ':').collect::<Vec<_>>().as_slice() {
            [qid, step, _] if *qid == q.id => Err(if *step == Step::Request.as_str() {
                outdated("this request approval")
            } else {
                invalid("this decision does not fit the approval id")
            }),
            _ => Err(invalid("the approval id does not belong to this question")),
        },
    }
}

fn digest_text(text: &str) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(text.as_bytes()))
}

impl Broker {
    /// Links a new sampling request to the conversation whose delivered `tool_use` it answers,
    /// and checks the budgets: rounds, tokens and cost per conversation, tokens and cost per
    /// server per UTC day. Without an engine every request is a new round with no budget.
    pub(super) async fn admit_round(
        &self,
        server: &str,
        params: &Value,
    ) -> Result<Round, BrokerError> {
        let Some(engine) = &self.engine else {
            return Ok(Round::New);
        };
        let budgets = engine.budgets.clone();
        let answered = answered_tool_uses(params);
        let server = server.to_owned();
        let now = Utc::now();
        let day_start = now
            .date_naive()
            .and_hms_opt(0, 0, 0)
            .map(|t| t.and_utc().timestamp_millis())
            .unwrap_or_default();
        self.db
            .run(move |c| {
                let day = approvals::server_usage_since(c, &server, day_start)?;
                let per_day = (
                    "max_tokens_per_server_per_day",
                    budgets.max_tokens_per_server_per_day,
                    "max_cost_usd_per_server_per_day",
                    budgets.max_cost_usd_per_server_per_day,
                );
                if let Some(refusal) = over_budget(&day, per_day) {
                    return Ok(Round::Refuse(refusal));
                }
                if answered.is_empty() {
                    return Ok(Round::New);
                }
                let conversation = approvals::delivered_sampling(c, &server, 500)?
                    .into_iter()
                    .find(|(_, _, response)| {
                        response
                            .as_deref()
                            .is_some_and(|r| delivered_tool_use(r, &answered))
                    })
                    .map(|(id, conversation, _)| conversation.unwrap_or(id));
                let Some(conversation) = conversation else {
                    return Ok(Round::New);
                };
                let used = approvals::conversation_usage(c, &conversation)?;
                let max_rounds =
                    i64::try_from(budgets.max_rounds_per_conversation).unwrap_or(i64::MAX);
                if used.rounds >= max_rounds {
                    return Ok(Round::Refuse(budget_error(
                        "max_rounds_per_conversation",
                        format!("{} rounds", used.rounds),
                        max_rounds.to_string(),
                    )));
                }
                let per_conversation = (
                    "max_tokens_per_conversation",
                    budgets.max_tokens_per_conversation,
                    "max_cost_usd_per_conversation",
                    budgets.max_cost_usd_per_conversation,
                );
                if let Some(refusal) = over_budget(&used, per_conversation) {
                    return Ok(Round::Refuse(refusal));
                }
                Ok(Round::Continue(conversation))
            })
            .await
            .map_err(BrokerError::from)
    }

    /// The engine, when models are configured.
    pub fn engine(&self) -> Option<&Arc<SamplingEngine>> {
        self.engine.as_ref()
    }

    fn engine_for(&self, q: &Question) -> Result<Arc<SamplingEngine>, BrokerError> {
        match (&self.engine, q.kind) {
            (Some(e), Kind::Sampling) => Ok(e.clone()),
            _ => Err(BrokerError::NotFound),
        }
    }

    /// Records revision 1 of a new sampling question and applies an auto-approve rule, if an
    /// active one covers its server.
    pub(super) async fn after_open_sampling(&self, q: &Question) -> Result<(), BrokerError> {
        let row = RevisionRow {
            question_id: q.id.clone(),
            revision: 1,
            params: q.request.to_string(),
            author: Actor::Server,
            created_at: Utc::now().timestamp_millis(),
        };
        self.db
            .run(move |c| Ok(approvals::insert_revision(c, &row)?))
            .await?;
        self.apply_rule(q, Step::Request).await
    }

    /// Boxed (and `Send` by declaration) because it closes a cycle: a run that finishes applies a
    /// rule, which may approve, which starts a run.
    fn apply_rule<'a>(
        &'a self,
        q: &'a Question,
        step: Step,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), BrokerError>> + Send + 'a>>
    {
        Box::pin(async move {
            let server = q.server.clone();
            let now = Utc::now().timestamp_millis();
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
            let actor = Actor::Rule(rule.id);
            let result = match step {
                Step::Request => {
                    let decision = Decision {
                        approval_id: ApprovalId::Request {
                            question: q.id.clone(),
                            revision: q.revision,
                        }
                        .to_string(),
                        decision: DecisionKind::Approve,
                        model: None,
                    };
                    // A rule cannot pick a model for a request no model may serve: it refuses
                    // it for the person, with its own code (not -1: nobody rejected it).
                    if self.review(q).await?.route.chosen.is_none() {
                        let decision = Decision {
                            decision: DecisionKind::Reject,
                            ..decision
                        };
                        let now = Utc::now().timestamp_millis();
                        let mut error = RpcError::internal(
                            "No permitted route: no configured model may serve this request",
                        );
                        error.code = NO_ROUTE;
                        error.data = Some(json!({"reason": "no_route"}));
                        return self
                            .reject_with(
                                q,
                                &decision,
                                &actor,
                                &[Phase::RequestReview],
                                now,
                                None,
                                error,
                            )
                            .await
                            .map(|_| ());
                    }
                    self.decide_sampling(&q.id, &decision, &actor).await
                }
                Step::Response => {
                    let runs = self.review(q).await?.runs;
                    let Some(run) = runs.first() else {
                        return Ok(());
                    };
                    let decision = Decision {
                        approval_id: ApprovalId::Response {
                            question: q.id.clone(),
                            run: run.id.clone(),
                        }
                        .to_string(),
                        decision: DecisionKind::Send,
                        model: None,
                    };
                    self.decide_sampling(&q.id, &decision, &actor).await
                }
            };
            match result {
                // No permitted route, or a race with the person: the question stays for them.
                Ok(_) | Err(BrokerError::InvalidAnswer(_) | BrokerError::AlreadyDecided(_)) => {
                    Ok(())
                }
                Err(e) => Err(e),
            }
        })
    }

    /// The review of a model-run sampling question.
    ///
    /// # Errors
    /// [`BrokerError::NotFound`] when no models are configured or it is not a sampling question.
    pub async fn review(&self, q: &Question) -> Result<Review, BrokerError> {
        let engine = self.engine_for(q)?;
        let (qid, rev) = (q.id.clone(), q.revision);
        let (revision, runs) = self
            .db
            .run(move |c| {
                Ok((
                    approvals::revision(c, &qid, rev)?,
                    approvals::runs(c, &qid)?,
                ))
            })
            .await?;
        let params = match revision {
            Some(r) => serde_json::from_str(&r.params)
                .map_err(|_| BrokerError::Corrupt(q.id.clone(), "revision".into()))?,
            None => q.request.clone(),
        };
        let route = route(&params, &q.server, &engine.catalog, &engine.routing);
        Ok(Review {
            revision: q.revision,
            params,
            route,
            runs,
        })
    }

    /// Edits the current revision into a new one (system prompt and text blocks only); the
    /// result must still be a valid request. Approvals of older revisions no longer apply.
    ///
    /// # Errors
    /// [`BrokerError::InvalidAnswer`] for an outdated base revision or an edit that breaks the
    /// request; [`BrokerError::NotFound`], [`BrokerError::AlreadyDecided`].
    pub async fn edit_sampling(
        &self,
        id: &str,
        edit: &Edit,
        actor: &Actor,
    ) -> Result<i32, BrokerError> {
        let q = self.get(id).await?;
        if q.state != State::Pending {
            return Err(BrokerError::AlreadyDecided(q.state));
        }
        let review = self.review(&q).await?;
        if edit.base_revision != q.revision || q.phase != Some(Phase::RequestReview) {
            return Err(outdated("this edit's revision"));
        }
        let mut params = review.params.clone();
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
                .ok_or_else(|| invalid(format!("there is no message {}", t.message)))?;
            let block = match content {
                Value::Array(items) => items.get_mut(t.block),
                single if t.block == 0 => Some(single),
                _ => None,
            }
            .ok_or_else(|| invalid(format!("message {} has no block {}", t.message, t.block)))?;
            if block.get("type").and_then(Value::as_str) != Some("text") {
                return Err(invalid(format!(
                    "block {} of message {} is not text",
                    t.block, t.message
                )));
            }
            block["text"] = json!(t.text);
        }
        sampling::validate_request(q.era, &q.client_capabilities, &params)
            .map_err(|e| invalid(format!("the edited request is not valid: {}", e.message)))?;
        let now = Utc::now().timestamp_millis();
        let new_revision = q.revision + 1;
        let row = RevisionRow {
            question_id: q.id.clone(),
            revision: new_revision,
            params: params.to_string(),
            author: actor.clone(),
            created_at: now,
        };
        let base = q.revision;
        if !self
            .db
            .run(move |c| Ok(approvals::add_revision(c, base, &row)?))
            .await?
        {
            return Err(outdated("this edit's revision"));
        }
        self.audit(
            &q,
            actor,
            AuditAction::Edited,
            None,
            None,
            Some(request_digest(&params)),
            None,
        )
        .await?;
        self.changed(&self.get(id).await?);
        Ok(new_revision)
    }

    /// Applies a decision of either review.
    ///
    /// # Errors
    /// [`BrokerError::InvalidAnswer`] for an outdated or malformed approval id, a decision that
    /// does not fit the phase, an unknown model or "no permitted route"; [`BrokerError::Conflict`]
    /// (as `AlreadyDecided`) when the approval id was used for another decision.
    pub async fn decide_sampling(
        &self,
        id: &str,
        decision: &Decision,
        actor: &Actor,
    ) -> Result<Applied, BrokerError> {
        let q = self.get(id).await?;
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
                Err(invalid(format!(
                    "approval {} was already decided as {}",
                    decision.approval_id, previous.decision
                )))
            };
        }
        if q.state != State::Pending {
            return Err(BrokerError::AlreadyDecided(q.state));
        }
        let approval_id = approval_id_of(&q, &decision.approval_id)?;
        let review = self.review(&q).await?;
        let now = Utc::now().timestamp_millis();
        match (approval_id, decision.decision) {
            (
                ApprovalId::Request { revision, .. },
                kind @ (DecisionKind::Approve | DecisionKind::Reject),
            ) => {
                if revision != q.revision || q.phase != Some(Phase::RequestReview) {
                    return Err(outdated("this request approval"));
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
                    return Err(outdated("this response approval"));
                };
                let from = [Phase::ResponseReview, Phase::ToolUseReview];
                if !q.phase.is_some_and(Phase::reviews_response) {
                    return Err(outdated("this response approval"));
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
                    DecisionKind::Approve => {
                        Err(invalid("a response is sent, regenerated or rejected"))
                    }
                }
            }
            _ => Err(invalid("this decision does not fit the approval id")),
        }
    }

    async fn start_run(
        &self,
        q: &Question,
        engine: &Arc<SamplingEngine>,
        review: &Review,
        decision: &Decision,
        actor: &Actor,
        now: i64,
    ) -> Result<Applied, BrokerError> {
        let model_id = match &decision.model {
            Some(m) => m.clone(),
            None => match &review.route.chosen {
                Some(c) => c.id.clone(),
                None => {
                    return Err(invalid(format!(
                        "no permitted route: {}; pick a model, edit the request, or reject it",
                        review.route.receipt.why
                    )));
                }
            },
        };
        let Some(model) = engine.catalog.get(&model_id).cloned() else {
            return Err(invalid(format!(
                "there is no configured model {model_id:?}"
            )));
        };
        let mut receipt: Receipt = review.route.receipt.clone();
        if review.route.chosen.as_ref().map(|c| c.id.as_str()) != Some(model_id.as_str()) {
            receipt.why = format!("{} The reviewer chose {model_id} instead.", receipt.why);
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
            actor: actor.clone(),
            created_at: now,
        };
        let action = match (decision.decision, actor.is_rule()) {
            (DecisionKind::Regenerate, _) => AuditAction::Regenerated,
            (_, true) => AuditAction::AutoApproved,
            _ => AuditAction::Approved,
        };
        let mut audit = NewAudit::new(now, actor.clone(), action, &q.id, &q.server);
        audit.model_id = Some(model_id.clone());
        audit.request_digest = Some(request_digest(&review.params));
        let run_for_db = run.clone();
        let started = self
            .db
            .run(move |c| {
                Ok(approvals::approve_and_start(
                    c,
                    &approval,
                    &run_for_db,
                    &audit,
                )?)
            })
            .await?;
        if !started {
            return Err(outdated("this approval"));
        }
        self.changed(&self.get(&q.id).await?);
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
    async fn execute_run(
        &self,
        q: Question,
        engine: Arc<SamplingEngine>,
        model: crate::sampling::ModelConfig,
        params: Value,
        mut run: RunRow,
    ) {
        let outcome =
            tokio::time::timeout(MODEL_TIMEOUT, engine.providers.complete(&model, &params)).await;
        let now = Utc::now().timestamp_millis();
        run.finished_at = Some(now);
        let phase = match outcome {
            Ok(Ok(done)) => match sampling::validate_result(q.era, &params, &done.result) {
                Ok(()) => {
                    run.state = RunState::Done;
                    run.result = Some(done.result.to_string());
                    run.input_tokens = i64::try_from(done.input_tokens).ok();
                    run.output_tokens = i64::try_from(done.output_tokens).ok();
                    run.cost_usd = Some(done.cost_usd);
                    let has_tool_use = match done.result.get("content") {
                        Some(Value::Array(items)) => items.iter().any(|b| b["type"] == "tool_use"),
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
            },
            Ok(Err(e)) => {
                run.state = RunState::Failed;
                run.error = Some(e.to_string());
                Phase::RequestReview
            }
            Err(_) => {
                run.state = RunState::Failed;
                run.error = Some(format!(
                    "the model did not answer within {} seconds",
                    MODEL_TIMEOUT.as_secs()
                ));
                Phase::RequestReview
            }
        };
        let stored = run.clone();
        if let Err(e) = self
            .db
            .run(move |c| Ok(approvals::finish_run(c, &stored, phase)?))
            .await
        {
            tracing::error!(error = %e, "cannot store a finished model run");
            return;
        }
        if let Ok(current) = self.get(&q.id).await {
            self.changed(&current);
            if phase != Phase::RequestReview
                && let Err(e) = self.apply_rule(&current, Step::Response).await
            {
                tracing::warn!(error = %e, "auto-approve of a response failed");
            }
        }
    }

    async fn deliver(
        &self,
        q: &Question,
        decision: &Decision,
        actor: &Actor,
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
            actor: actor.clone(),
            created_at: now,
        };
        let action = if actor.is_rule() {
            AuditAction::AutoApproved
        } else {
            AuditAction::Delivered
        };
        let mut audit = NewAudit::new(now, actor.clone(), action, &q.id, &q.server);
        audit.model_id = Some(run.model_id.clone());
        audit.input_tokens = run.input_tokens;
        audit.output_tokens = run.output_tokens;
        audit.cost_usd = run.cost_usd;
        audit.request_digest = Some(request_digest(&q.request));
        audit.response_digest = Some(digest_text(&result.to_string()));
        let done = self
            .db
            .run(move |c| {
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
            return Err(outdated("this response approval"));
        }
        self.after_decision(q, State::Accepted, response, now).await;
        Ok(Applied::Done)
    }

    async fn reject(
        &self,
        q: &Question,
        decision: &Decision,
        actor: &Actor,
        from: &[Phase],
        now: i64,
        run: Option<&RunRow>,
    ) -> Result<Applied, BrokerError> {
        let error = RpcError::user_rejected("decline");
        self.reject_with(q, decision, actor, from, now, run, error)
            .await
    }

    #[allow(clippy::too_many_arguments)]
    async fn reject_with(
        &self,
        q: &Question,
        decision: &Decision,
        actor: &Actor,
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
            actor: actor.clone(),
            created_at: now,
        };
        let mut audit = NewAudit::new(now, actor.clone(), AuditAction::Rejected, &q.id, &q.server);
        audit.model_id = run.map(|r| r.model_id.clone());
        audit.request_digest = Some(request_digest(&q.request));
        let from = from.to_vec();
        let done = self
            .db
            .run(move |c| {
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
            return Err(outdated("this approval"));
        }
        if no_route {
            // Closed as declined, but by a rule, not a person: not a user_declined rejection.
            self.metrics
                .reject(q.kind.as_str(), crate::metrics::RejectReason::NoRoute);
            self.metrics
                .closed
                .with_label_values(&[q.kind.as_str(), State::Declined.as_str()])
                .inc();
            let mut decided = q.clone();
            decided.state = State::Declined;
            decided.phase = None;
            decided.response = Some(response);
            decided.decided_at = chrono::DateTime::from_timestamp_millis(now);
            self.changed(&decided);
        } else {
            self.after_decision(q, State::Declined, response, now).await;
        }
        Ok(Applied::Done)
    }

    async fn after_decision(&self, q: &Question, state: State, response: Value, now: i64) {
        let mut decided = q.clone();
        decided.state = state;
        decided.phase = None;
        decided.response = Some(response);
        decided.decided_at = chrono::DateTime::from_timestamp_millis(now);
        self.count_decision(q, state, decided.decided_at.unwrap_or_default());
        self.changed(&decided);
    }

    #[allow(clippy::too_many_arguments)]
    async fn audit(
        &self,
        q: &Question,
        actor: &Actor,
        action: AuditAction,
        model: Option<String>,
        cost: Option<f64>,
        request_digest: Option<String>,
        response_digest: Option<String>,
    ) -> Result<(), DbError> {
        let mut entry = NewAudit::new(
            Utc::now().timestamp_millis(),
            actor.clone(),
            action,
            &q.id,
            &q.server,
        );
        entry.model_id = model;
        entry.cost_usd = cost;
        entry.request_digest = request_digest;
        entry.response_digest = response_digest;
        self.db
            .run(move |c| Ok(approvals::append_audit(c, &entry)?))
            .await
    }

    /// Marks runs interrupted by a restart as failed (their questions return to request
    /// review). Called once at start.
    ///
    /// # Errors
    /// [`BrokerError::Store`].
    pub async fn recover_runs(&self) -> Result<usize, BrokerError> {
        let now = Utc::now().timestamp_millis();
        Ok(self
            .db
            .run(move |c| Ok(approvals::fail_interrupted_runs(c, now)?))
            .await?
            .len())
    }

    /// Creates an auto-approve rule for `server` covering `scope` (`request` or `both`),
    /// expiring after `days` (default [`RULE_DAYS`]).
    ///
    /// # Errors
    /// [`BrokerError::InvalidAnswer`] for an unknown scope or empty reason.
    pub async fn create_rule(
        &self,
        server: &str,
        scope: &str,
        author: Actor,
        reason: &str,
        days: Option<i64>,
    ) -> Result<approvals::RuleRow, BrokerError> {
        let Ok(scope) = scope.parse::<RuleScope>() else {
            return Err(invalid("scope must be request or both"));
        };
        if reason.trim().is_empty() || server.trim().is_empty() {
            return Err(invalid("a rule needs a server and a reason"));
        }
        let days = days.unwrap_or(RULE_DAYS).clamp(1, 365);
        let now = Utc::now().timestamp_millis();
        let rule = approvals::RuleRow {
            id: uuid::Uuid::now_v7().to_string(),
            server: server.to_owned(),
            scope,
            author,
            reason: reason.to_owned(),
            created_at: now,
            expires_at: now + days * 86_400_000,
            revoked_at: None,
        };
        let row = rule.clone();
        self.db
            .run(move |c| Ok(approvals::insert_rule(c, &row)?))
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

    /// Revokes a rule (a no-op for unknown or revoked ids).
    ///
    /// # Errors
    /// [`BrokerError::Store`].
    pub async fn revoke_rule(&self, id: &str) -> Result<bool, BrokerError> {
        let id = id.to_owned();
        let now = Utc::now().timestamp_millis();
        Ok(self
            .db
            .run(move |c| Ok(approvals::revoke_rule(c, &id, now)?))
            .await?)
    }

    /// Audit entries, newest first.
    ///
    /// # Errors
    /// [`BrokerError::Store`].
    pub async fn audit_log(
        &self,
        server: Option<String>,
        action: Option<AuditAction>,
        limit: i64,
    ) -> Result<Vec<approvals::AuditRow>, BrokerError> {
        Ok(self
            .db
            .run(move |c| Ok(approvals::audit(c, server.as_deref(), action, limit)?))
            .await?)
    }
}
