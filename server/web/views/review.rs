//! The model review (route, runs, approval ids) as the page shows it.

use super::diff::{BlockDiff, prompt_diffs};
use super::prompt::{PromptBox, block_label, prompt_boxes, rows_for};
use super::sampling::pretty;
use crate::broker::BrokerError;
use crate::broker::Kind;
use crate::broker::Question;
use crate::domain::ApprovalId;
use crate::domain::Phase;
use crate::domain::RunState;
use crate::i18n::Arg;
use crate::i18n::I18n;
use crate::review::{Review, RunRow};
use crate::sampling::receipt::{ExclusionReason, Modality};
use crate::sampling::why::{HintWhy, Then, Why};
use crate::sampling::{ProviderError, Receipt, TokenMethod};
use crate::web::AppState;
use crate::web::error::PageError;
use serde_json::Value;

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
    /// Rows of the system prompt's box, from its length.
    pub system_rows: usize,
    /// Every block of the prompt: text blocks as edit boxes, the others named read-only.
    pub boxes: Vec<PromptBox>,
    /// What the person changed against the server's original request (empty when nothing),
    /// each with its label (the system prompt, or "Message 2 (user), block 1").
    pub diffs: Vec<(String, BlockDiff)>,
    pub run: Option<RunView>,
    pub waiting: String,
}

/// One model of the picker: its own estimate for this request and whether the route excluded
/// it (then the option is disabled, and the server refuses it too).
pub struct ModelOption {
    pub id: String,
    pub selected: bool,
    /// Estimated cost of this request on this model, e.g. `$0.0007`.
    pub estimate: String,
    /// Why the route excluded it (e.g. over the per-request cost cap); empty when it may run.
    pub excluded: String,
    /// Excluded only for its estimate over the cost cap: the person may still run it after a
    /// confirmation naming the cost and the cap.
    pub over_cap: bool,
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

/// Why the route chose what it chose, in the page's language: the receipt's [`Why`] (decided
/// once, in `sampling::why`) said with the catalogue (the receipt itself keeps its English
/// sentence).
fn why_text(i18n: &I18n, receipt: &Receipt) -> String {
    match Why::of(receipt) {
        Some(why) => say_why(i18n, &why),
        None => receipt.why.clone(),
    }
}

fn say_why(i18n: &I18n, why: &Why<'_>) -> String {
    let hint = |hint: &HintWhy<'_>| match *hint {
        HintWhy::Id { name, number } => i18n
            .msg("route-why-hint-id")
            .arg("name", format!("{name:?}"))
            .arg("index", number)
            .to_string(),
        HintWhy::Alias {
            name,
            number,
            alias,
        } => i18n
            .msg("route-why-hint-alias")
            .arg("name", format!("{name:?}"))
            .arg("index", number)
            .arg("alias", format!("{alias:?}"))
            .to_string(),
    };
    let then = |then: &Then| match *then {
        Then::Cheaper { cost } => i18n
            .msg("route-tie-cheaper")
            .arg("cost", i18n.usd(cost))
            .to_string(),
        Then::Id => i18n.t("route-tie-id"),
    };
    let score = |value: f64| Arg::Number {
        value,
        fraction: Some((0, 2)),
    };
    match why {
        Why::Hint(h) => hint(h),
        Why::HintScored { hint: h, count } => i18n
            .msg("route-why-hint-tie")
            .arg("why", hint(h))
            .arg("count", *count)
            .to_string(),
        Why::HintShared {
            hint: h,
            count,
            tied,
            then: t,
        } => i18n
            .msg("route-why-hint-shared")
            .arg("why", Arg::from(hint(h)))
            .arg("count", Arg::from(*count))
            .arg("tied", Arg::from(*tied))
            .arg("then", Arg::from(then(t)))
            .to_string(),
        Why::OnlyOne => i18n.t("route-why-only-one"),
        Why::AllTied { count, then: t } => i18n
            .msg("route-why-all-tied")
            .arg("count", *count)
            .arg("then", then(t))
            .to_string(),
        Why::SomeTied {
            tied,
            count,
            score: s,
            then: t,
        } => i18n
            .msg("route-why-some-tied")
            .arg("tied", Arg::from(*tied))
            .arg("count", Arg::from(*count))
            .arg("score", score(*s))
            .arg("then", Arg::from(then(t)))
            .to_string(),
        Why::Priorities { score: s, count } => i18n
            .msg("route-why-priorities")
            .arg("score", score(*s))
            .arg("count", *count)
            .to_string(),
        Why::NoModels => i18n.t("route-why-no-models"),
        Why::AllExcluded { count } => i18n
            .msg("route-why-all-excluded")
            .arg("count", *count)
            .to_string(),
    }
}

/// Every reason a model was excluded, in the page's language, `; `-separated
/// ([`crate::sampling::receipt::Exclusion::reasons_text`] in English).
fn reasons_text(i18n: &I18n, reasons: &[ExclusionReason]) -> String {
    reasons
        .iter()
        .map(|r| match r {
            ExclusionReason::NoToolSupport => i18n.t("exclusion-no-tools"),
            ExclusionReason::MissingModality { modality } => i18n
                .msg("exclusion-modality")
                .arg(
                    "modality",
                    match modality {
                        Modality::Image => "image",
                        Modality::Audio => "audio",
                    },
                )
                .to_string(),
            ExclusionReason::OverBudget {
                estimated_cost_usd,
                cap_usd,
            } => i18n
                .msg("exclusion-over-budget")
                .arg("cost", i18n.usd(Some(*estimated_cost_usd)))
                .arg("cap", i18n.usd(Some(*cap_usd)))
                .to_string(),
            ExclusionReason::ServerNotAllowed { server } => i18n
                .msg("exclusion-server-not-allowed")
                .arg("server", Arg::server(&format!("{server:?}")))
                .to_string(),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// A failed run's stored error in the page's language (a provider's failure; any other is
/// stored as a sentence and shown as it is). The provider's own words (its error message, the
/// transport's cause) stay as the provider wrote them.
fn run_error_text(i18n: &I18n, stored: &str) -> String {
    let Some(error) = ProviderError::from_stored(stored) else {
        return stored.to_owned();
    };
    match error {
        ProviderError::MissingKey { env, .. } => i18n
            .msg("run-error-missing-key")
            .arg("env", env)
            .to_string(),
        ProviderError::KeyFile { message, .. } => i18n
            .msg("run-error-key-file")
            .arg("message", message)
            .to_string(),
        ProviderError::Transport { message, .. } => i18n
            .msg("run-error-transport")
            .arg("message", message)
            .to_string(),
        ProviderError::Timeout { seconds, .. } => i18n
            .msg("run-error-timeout")
            .arg("seconds", seconds)
            .to_string(),
        ProviderError::Incomplete { .. } => i18n.t("run-error-incomplete"),
        ProviderError::TooLarge { limit_bytes, .. } => i18n
            .msg("run-error-too-large")
            .arg("bytes", limit_bytes)
            .to_string(),
        ProviderError::Status {
            status, message, ..
        } => i18n
            .msg("run-error-status")
            .arg("status", status.to_string())
            .arg("message", message)
            .to_string(),
        ProviderError::Unparseable { message, .. } => i18n
            .msg("run-error-unparseable")
            .arg("message", message)
            .to_string(),
        ProviderError::Unsupported { message, .. } => i18n
            .msg("run-error-unsupported")
            .arg("message", message)
            .to_string(),
    }
}

/// How the route counted the input tokens, in the page's language.
fn token_method_text(i18n: &I18n, method: TokenMethod) -> String {
    match method {
        // The tokenizer's own names.
        TokenMethod::TiktokenO200kBase | TokenMethod::TiktokenCl100kBase => {
            method.label().to_owned()
        }
        TokenMethod::CharsDiv4 => i18n.t("token-method-chars"),
    }
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
    let system_prompt = review
        .params
        .get("systemPrompt")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let waiting = (state.broker.now() - q.created_at).num_seconds().max(0);
    Ok(Some(ModelReview {
        phase: q.phase,
        revision: review.revision,
        request_approval_id: review.request_approval_id(&q.id),
        response_approval_id: review.response_approval_id(&q.id),
        why: why_text(i18n, receipt),
        exclusions: receipt
            .exclusions
            .iter()
            .map(|e| format!("{}: {}", e.model, reasons_text(i18n, &e.reasons)))
            .collect(),
        estimated_tokens: receipt
            .estimated_input_tokens
            .map(|t| i18n.number(t))
            .unwrap_or_default(),
        token_method: receipt
            .token_method
            .map(|m| token_method_text(i18n, m))
            .unwrap_or_default(),
        estimated_cost: i18n.usd(receipt.estimated_cost_usd),
        models: model_options(i18n, receipt, &routed),
        routed,
        system_rows: rows_for(&system_prompt),
        system_prompt,
        boxes: prompt_boxes(i18n, &review.params),
        diffs: labelled_diffs(i18n, q, &review),
        run: review.runs.first().map(|r| run_view(i18n, r)),
        waiting: i18n.duration(waiting),
    }))
}

/// The picker's models: each candidate with its estimate, and why the route excluded it.
fn model_options(i18n: &I18n, receipt: &Receipt, routed: &str) -> Vec<ModelOption> {
    receipt
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
                .map(|e| reasons_text(i18n, &e.reasons))
                .unwrap_or_default(),
            over_cap: receipt
                .exclusions
                .iter()
                .find(|e| e.model == c.id)
                .is_some_and(|e| e.only_over_budget()),
        })
        .collect()
}

/// What the person changed against the server's request, each with its block's label.
fn labelled_diffs(i18n: &I18n, q: &Question, review: &Review) -> Vec<(String, BlockDiff)> {
    let role_of = |m: usize| {
        review
            .params
            .pointer(&format!("/messages/{m}/role"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    prompt_diffs(&q.request, &review.params)
        .into_iter()
        .map(|d| {
            let label = match d.message {
                None => i18n.t("sampling-system-prompt"),
                Some((m, b)) => block_label(i18n, m, &role_of(m), b),
            };
            (label, d)
        })
        .collect()
}

/// The latest run: its answer's text and tool uses, its numbers, and a one-sentence summary.
fn run_view(i18n: &I18n, r: &RunRow) -> RunView {
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
        summary: i18n
            .msg("review-answer-from")
            .arg("model", Arg::from(r.model_id.as_str()))
            .arg("stop", Arg::from(stop_reason.as_str()))
            .arg("input", Arg::from(tokens(r.input_tokens)))
            .arg("output", Arg::from(tokens(r.output_tokens)))
            .arg("cost", Arg::from(cost.as_str()))
            .to_string(),
        model: r.model_id.clone(),
        state: r.state,
        error: r
            .error
            .as_deref()
            .map(|e| run_error_text(i18n, e))
            .unwrap_or_default(),
        text: blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        tool_uses: tool_uses(&blocks),
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
}

/// The answer's `tool_use` blocks as (id, name, pretty input).
fn tool_uses(blocks: &[&Value]) -> Vec<(String, String, String)> {
    blocks
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
        .collect()
}
