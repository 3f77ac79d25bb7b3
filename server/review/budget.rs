//! Budgets and tool loops: a new sampling request continuing a delivered `tool_use` joins that
//! conversation; rounds, tokens and cost per conversation and per server per UTC day are
//! limited (`[budgets]`), refusing the next round with `-32603` naming the limit. Also what
//! the runs spent per server and day against those budgets ([`Reviewer::spend`]).

use crate::db::spend;
use crate::domain::Via;
use crate::metrics::RejectReason;
use crate::sampling::Usd;
use serde_json::{Value, json};

use serde::Deserialize;

use super::*;

/// `[budgets]`: limits that refuse the next sampling round (`-32603` naming the limit,
/// `data.reason = "budget"`). A round is one sampling question; a conversation is a chain of
/// rounds, each continuing a `tool_use` delivered in the one before. Days are UTC calendar days.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Budgets {
    /// Most rounds in one conversation. Default `20`.
    pub max_rounds_per_conversation: u64,
    /// Most model tokens (input + output) in one conversation. Default: no limit.
    pub max_tokens_per_conversation: Option<u64>,
    /// Most model cost in USD in one conversation. Default: no limit.
    pub max_cost_usd_per_conversation: Option<f64>,
    /// Most model tokens one server may use per day. Default: no limit.
    pub max_tokens_per_server_per_day: Option<u64>,
    /// Most model cost in USD one server may use per day. Default: no limit.
    pub max_cost_usd_per_server_per_day: Option<f64>,
}

impl Default for Budgets {
    fn default() -> Self {
        Budgets {
            max_rounds_per_conversation: 20,
            max_tokens_per_conversation: None,
            max_cost_usd_per_conversation: None,
            max_tokens_per_server_per_day: None,
            max_cost_usd_per_server_per_day: None,
        }
    }
}

fn budget_error(limit: &str, used: String, max: String) -> RpcError {
    let mut e = RpcError::internal(format!(
        "Budget exhausted: {limit} is {max} and {used} is already used; the request was not run"
    ));
    e.data = Some(json!({"reason": RejectReason::Budget.as_str(), "limit": limit}));
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
            Usd(used.cost).to_string(),
            Usd(max).to_string(),
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

impl Reviewer {
    /// Links a new sampling request, opened through door `via`, to the conversation whose
    /// delivered `tool_use` it answers, and checks the budgets: rounds, tokens and cost per
    /// conversation, tokens and cost per server per UTC day. Each is the door's own: a request
    /// joins only a conversation of questions opened through the same door, and the daily
    /// budgets count the runs of that door's questions, so a script naming a server cannot use
    /// up the budgets of the server's own proxy. Without an engine every request is a new round
    /// with no budget.
    pub(super) async fn admit_round(
        &self,
        server: &str,
        params: &Value,
        via: Via,
    ) -> Result<Round, BrokerError> {
        let Some(engine) = self.engine() else {
            return Ok(Round::New);
        };
        let budgets = engine.budgets.clone();
        let answered = answered_tool_uses(params);
        let server = server.to_owned();
        let now = self.broker.now();
        let day_start = now
            .date_naive()
            .and_hms_opt(0, 0, 0)
            .map(|t| t.and_utc().timestamp_millis())
            .unwrap_or_default();
        self.db
            .run(move |c| {
                let day = approvals::server_usage_since(c, &server, via, day_start)?;
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
                let conversation = approvals::delivered_sampling(c, &server, via, 500)?
                    .into_iter()
                    .find(|(_, _, response)| {
                        response
                            .as_deref()
                            .is_some_and(|r| delivered_tool_use(r, &answered))
                    })
                    .map(|(id, conversation, _)| conversation.unwrap_or_else(|| id.to_string()));
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
}

/// What one server's runs spent on one UTC day, against the daily budgets.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerDay {
    /// What the runs spent ([`crate::db::spend::DaySpend`]).
    pub spent: spend::DaySpend,
    /// `max_tokens_per_server_per_day`, when models and that limit are configured.
    pub max_tokens: Option<u64>,
    /// `max_cost_usd_per_server_per_day`, when models and that limit are configured.
    pub max_cost_usd: Option<f64>,
}

impl ServerDay {
    /// True when the day's tokens or cost reached a limit (the next round is refused).
    pub fn exhausted(&self) -> bool {
        let tokens = self
            .max_tokens
            .is_some_and(|max| self.spent.tokens >= i64::try_from(max).unwrap_or(i64::MAX));
        tokens || self.max_cost_usd.is_some_and(|max| self.spent.cost >= max)
    }
}

/// Model spend over recent days: per server and UTC day, and the totals.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Spend {
    /// Newest day first, servers by name; days without runs are left out.
    pub days: Vec<ServerDay>,
    /// Runs over all the days.
    pub runs: i64,
    /// Tokens over all the days.
    pub tokens: i64,
    /// Cost in USD over all the days.
    pub cost: f64,
}

impl Reviewer {
    /// What model runs spent on the last `days` UTC days (today included), per server and
    /// day, with the daily budgets each is held to and the totals. Every run counts, also one
    /// regenerated away or rejected.
    ///
    /// # Errors
    /// [`BrokerError::Store`].
    pub async fn spend(&self, days: i64) -> Result<Spend, BrokerError> {
        let budgets = self.engine().map(|e| e.budgets.clone());
        let today = self.broker.now().date_naive();
        let since = (today - chrono::Days::new(u64::try_from(days.max(1) - 1).unwrap_or(0)))
            .and_hms_opt(0, 0, 0)
            .map(|t| t.and_utc().timestamp_millis())
            .unwrap_or_default();
        let rows = self
            .db
            .run(move |c| Ok(spend::by_server_and_day(c, since)?))
            .await?;
        let mut total = Spend::default();
        for spent in rows {
            total.runs += spent.runs;
            total.tokens += spent.tokens;
            total.cost += spent.cost;
            total.days.push(ServerDay {
                spent,
                max_tokens: budgets
                    .as_ref()
                    .and_then(|b| b.max_tokens_per_server_per_day),
                max_cost_usd: budgets
                    .as_ref()
                    .and_then(|b| b.max_cost_usd_per_server_per_day),
            });
        }
        Ok(total)
    }
}
