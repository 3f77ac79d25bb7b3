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

use serde_json::Value;

use crate::broker::{Broker, BrokerError, HookFuture, Kind, Question, Round, SamplingHooks, State};
use crate::broker::{Stale, StepRefusal};
use crate::db::approvals::{self, ApprovalRow, NewAudit, RevisionRow};
pub use crate::db::approvals::{AuditFilter, AuditRow, RuleRow, RunRow};
use crate::db::{Db, DbError};
pub use crate::domain::DecisionKind;
use crate::domain::{
    Actor, ApprovalId, AuditAction, Decider, Phase, QuestionId, RuleId, RuleScope, RunState, Step,
};
use crate::protocol::jsonrpc::{RpcError, error_response, result_response};
use crate::protocol::sampling;
pub use crate::wire::{Applied, Decision, Edit, TextEdit};
mod budget;
pub use budget::{Budgets, ServerDay, Spend};
mod decide;
mod edit;
mod rules;
mod run;

use crate::sampling::{
    Catalog, Providers, Receipt, RouteOutcome, RoutingConfig, request_digest, route,
};

/// The code a server gets when a rule refused its request because no configured model may
/// serve it: outside JSON-RPC's reserved range (as MCP 2026-07-28 `basic/index.mdx` §Error Codes
/// asks) and distinct from `-1`, which means a person rejected it. `data.reason` is `no_route`.
pub const NO_ROUTE: i64 = -2;

/// Default lifetime of an auto-approve rule, in days.
pub const RULE_DAYS: i64 = 7;

/// The longest a rule may last, in hours (a year).
pub const RULE_MAX_HOURS: i64 = 365 * 24;

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

/// The two-step review of sampling questions: decisions, edits, runs, rules and the audit log.
/// Cheap to clone. Without an engine (no models configured) every sampling question is answered
/// by the person, and only the rules and the audit log are served.
#[derive(Clone)]
pub struct Reviewer {
    broker: Broker,
    db: Db,
    /// Shared by the clones; replaced when the config is reloaded (runs under way keep the
    /// engine they started with).
    engine: Arc<std::sync::RwLock<Option<Arc<SamplingEngine>>>>,
}

impl Reviewer {
    /// A review of `broker`'s sampling questions on `engine`'s models.
    pub fn new(broker: Broker, db: Db, engine: Option<SamplingEngine>) -> Reviewer {
        Reviewer {
            broker,
            db,
            engine: Arc::new(std::sync::RwLock::new(engine.map(Arc::new))),
        }
    }

    /// Replaces the engine (config reload): `None` when no models are configured any more.
    /// Questions under review stay; their next route and run use the new models.
    pub fn set_engine(&self, engine: Option<SamplingEngine>) {
        *self
            .engine
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = engine.map(Arc::new);
    }

    /// Takes part in the broker's sampling questions (while models are configured, see
    /// [`SamplingHooks::active`]): the returned handle must be kept alive as long as the broker
    /// serves.
    pub fn attach(self) -> Arc<Reviewer> {
        let me = Arc::new(self);
        let hooks: Arc<dyn SamplingHooks> = me.clone();
        me.broker.set_sampling_hooks(&hooks);
        me
    }
}

impl SamplingHooks for Reviewer {
    fn active(&self) -> bool {
        self.engine().is_some()
    }

    fn admit<'a>(
        &'a self,
        server: &'a str,
        params: &'a Value,
        via: crate::domain::Via,
    ) -> HookFuture<'a, Round> {
        Box::pin(self.admit_round(server, params, via))
    }

    fn opened<'a>(&'a self, question: &'a Question) -> HookFuture<'a, ()> {
        Box::pin(self.after_open_sampling(question))
    }
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
    /// The id a decision of the current revision's request review takes: it names the newest
    /// run when there is one (that run failed, or the question would not be back in request
    /// review), so the decision after a failed run is not taken for a replay of the approval
    /// that started it.
    pub fn request_approval_id(&self, question: &str) -> ApprovalId {
        ApprovalId::Request {
            question: question.to_owned(),
            revision: self.revision,
            after_run: self.runs.first().map(|r| r.id.clone()),
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

fn outdated(what: Stale) -> BrokerError {
    BrokerError::Refused(StepRefusal::Outdated(what))
}

fn invalid(refusal: StepRefusal) -> BrokerError {
    BrokerError::Refused(refusal)
}

/// Parses a posted approval id for question `q`, refusing one of another question with the
/// same errors as before the id was typed: an id naming this question with a revision that is
/// not a number is outdated, one naming an unknown step does not fit.
fn approval_id_of(q: &Question, text: &str) -> Result<ApprovalId, BrokerError> {
    match text.parse::<ApprovalId>() {
        Ok(id) if id.question() == q.id.as_str() => Ok(id),
        Ok(_) => Err(invalid(StepRefusal::ApprovalOfAnotherQuestion)),
        Err(_) => match text.splitn(3, ':').collect::<Vec<_>>().as_slice() {
            [qid, step, _] if *qid == q.id.as_str() => Err(if *step == Step::Request.as_str() {
                outdated(Stale::RequestApproval)
            } else {
                invalid(StepRefusal::DecisionDoesNotFit)
            }),
            _ => Err(invalid(StepRefusal::ApprovalOfAnotherQuestion)),
        },
    }
}

fn digest_text(text: &str) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(text.as_bytes()))
}

impl Reviewer {
    /// The engine, when models are configured.
    pub fn engine(&self) -> Option<Arc<SamplingEngine>> {
        self.engine
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The broker the reviews decide questions of.
    pub fn broker(&self) -> &Broker {
        &self.broker
    }

    fn engine_for(&self, q: &Question) -> Result<Arc<SamplingEngine>, BrokerError> {
        match (self.engine(), q.kind) {
            (Some(e), Kind::Sampling) => Ok(e),
            _ => Err(BrokerError::NotFound),
        }
    }

    /// Records revision 1 of a new sampling question and applies an auto-approve rule, if an
    /// active one covers its server.
    async fn after_open_sampling(&self, q: &Question) -> Result<(), BrokerError> {
        let row = RevisionRow {
            question_id: q.id.clone(),
            revision: 1,
            params: q.request.to_string(),
            author: Actor::Server,
            created_at: self.broker.now().timestamp_millis(),
        };
        self.db
            .write(move |c| Ok(approvals::insert_revision(c, &row)?))
            .await?;
        match self.apply_rule(q, Step::Request).await {
            // The question is stored: a rule's run that cannot start now (the door's runs
            // under way, its budget) leaves it for the person, and the opening stands.
            Err(e @ (BrokerError::RunsUnderWay(_) | BrokerError::DoorFull(_))) => {
                tracing::info!(id = %q.id, error = %e, "the rule's run waits for the person");
                Ok(())
            }
            other => other,
        }
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
}
