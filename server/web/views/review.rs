//! The model review (route, runs, approval ids) as the page shows it.

use super::*;

/// The model review as the page shows it.
pub struct ModelReview {
    pub phase: Option<Phase>,
    pub revision: i32,
    pub request_approval_id: ApprovalId,
    pub response_approval_id: Option<ApprovalId>,
    pub routed: String,
    pub why: String,
    pub exclusions: Vec<String>,
    pub estimated_tokens: String,
    pub token_method: String,
    pub estimated_cost: String,
    pub models: Vec<ModelOption>,
    pub system_prompt: String,
    pub texts: Vec<(usize, usize, String)>,
    pub run: Option<RunView>,
    pub waiting: String,
}

/// One model of the picker: its own estimate for this request and whether the route excluded
/// it (then the option is disabled, and the server refuses it too).
pub struct ModelOption {
    pub id: String,
    pub selected: bool,
    /// Estimated cost of this request on this model, e.g. `$0.000700`.
    pub estimate: String,
    /// Why the route excluded it (e.g. over the per-request cost cap); empty when it may run.
    pub excluded: String,
}

/// The latest model run as the page shows it.
pub struct RunView {
    pub model: String,
    pub state: RunState,
    pub error: String,
    pub text: String,
    pub tool_uses: Vec<(String, String, String)>,
    pub stop_reason: String,
    pub input_tokens: String,
    pub output_tokens: String,
    pub cost: String,
    pub result: String,
    /// One sentence: model, stop reason, tokens and cost, in the page's language.
    pub summary: String,
}

/// The model review of a sampling question (`None` without configured models), its words,
/// numbers and amounts in `i18n`'s language.
pub async fn model_review(
    state: &AppState,
    q: &Question,
    i18n: &I18n,
) -> Result<Option<ModelReview>, PageError> {
    if q.kind != Kind::Sampling || state.review.engine().is_none() {
        return Ok(None);
    }
    let review = match state.review.review(q).await {
        Ok(r) => r,
        Err(BrokerError::NotFound) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let receipt = &review.route.receipt;
    let routed = review
        .route
        .chosen
        .as_ref()
        .map(|c| c.id.clone())
        .unwrap_or_default();
    let models = receipt
        .candidates
        .iter()
        .map(|c| ModelOption {
            id: c.id.clone(),
            selected: c.id == routed,
            estimate: i18n.usd(Some(c.estimated_cost_usd)),
            excluded: receipt
                .exclusions
                .iter()
                .find(|e| e.model == c.id)
                .map(|e| e.reasons_text())
                .unwrap_or_default(),
        })
        .collect();
    let mut texts = Vec::new();
    if let Some(messages) = review.params.get("messages").and_then(Value::as_array) {
        for (m, message) in messages.iter().enumerate() {
            let blocks: Vec<&Value> = match message.get("content") {
                Some(Value::Array(items)) => items.iter().collect(),
                Some(b) => vec![b],
                None => Vec::new(),
            };
            for (b, block) in blocks.iter().enumerate() {
                if let Some(text) = block
                    .get("text")
                    .and_then(Value::as_str)
                    .filter(|_| block["type"] == "text")
                {
                    texts.push((m, b, text.to_owned()));
                }
            }
        }
    }
    let run = review.runs.first().map(|r| {
        let result: Value = r
            .result
            .as_deref()
            .and_then(|t| serde_json::from_str(t).ok())
            .unwrap_or(Value::Null);
        let blocks: Vec<&Value> = match result.get("content") {
            Some(Value::Array(items)) => items.iter().collect(),
            Some(b) => vec![b],
            None => Vec::new(),
        };
        let stop_reason = result
            .get("stopReason")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let tokens = |t: Option<i64>| t.map(|t| i18n.number(t)).unwrap_or_default();
        let cost = i18n.usd(r.cost_usd);
        RunView {
            summary: i18n.message(
                "review-answer-from",
                &[
                    ("model", Arg::from(r.model_id.as_str())),
                    ("stop", Arg::from(stop_reason.as_str())),
                    ("input", Arg::from(tokens(r.input_tokens))),
                    ("output", Arg::from(tokens(r.output_tokens))),
                    ("cost", Arg::from(cost.as_str())),
                ],
            ),
            model: r.model_id.clone(),
            state: r.state,
            error: r.error.clone().unwrap_or_default(),
            text: blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            tool_uses: blocks
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| {
                    let s = |k: &str| {
                        b.get(k)
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned()
                    };
                    (
                        s("id"),
                        s("name"),
                        pretty(b.get("input").unwrap_or(&Value::Null)),
                    )
                })
                .collect(),
            input_tokens: tokens(r.input_tokens),
            output_tokens: tokens(r.output_tokens),
            cost,
            stop_reason,
            result: if result.is_null() {
                String::new()
            } else {
                pretty(&result)
            },
        }
    });
    let waiting = (state.broker.now() - q.created_at).num_seconds().max(0);
    Ok(Some(ModelReview {
        phase: q.phase,
        revision: review.revision,
        request_approval_id: review.request_approval_id(&q.id),
        response_approval_id: review.response_approval_id(&q.id),
        why: receipt.why.clone(),
        exclusions: receipt
            .exclusions
            .iter()
            .map(|e| format!("{}: {}", e.model, e.reasons_text()))
            .collect(),
        estimated_tokens: receipt
            .estimated_input_tokens
            .map(|t| i18n.number(t))
            .unwrap_or_default(),
        token_method: receipt
            .token_method
            .map(|m| m.label().to_owned())
            .unwrap_or_default(),
        estimated_cost: i18n.usd(receipt.estimated_cost_usd),
        routed,
        models,
        system_prompt: review
            .params
            .get("systemPrompt")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        texts,
        run,
        waiting: i18n.duration(waiting),
    }))
}
