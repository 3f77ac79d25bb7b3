//! The audit log page: one audit over forms, URLs, sampling and the rules.

use super::ok;
use crate::broker::Kind;
use crate::domain::Actor;
use crate::domain::AuditAction;
use crate::domain::QuestionId;
use crate::domain::RuleId;
use crate::domain::Via;
use crate::i18n::I18n;
use crate::web::AppState;
use crate::web::auth::WebSession;
use crate::web::error::PageError;
use crate::web::views::spend::SPEND_DAYS;
use crate::web::views::spend::SpendView;
use crate::web::views::spend::spend_view;
use crate::web::views::text::Moment;
use crate::web::views::text::moment_ms;
use actix_web::HttpResponse;
use actix_web::web;
use askama::Template;
use serde::Deserialize;

/// An audit entry as the page shows it.
pub struct AuditView {
    pub at: Moment,
    pub actor: Actor,
    pub action: AuditAction,
    /// The question decided (none for an entry about a rule).
    pub question: Option<QuestionId>,
    /// Its kind, when the entry is about a question.
    pub kind: Option<Kind>,
    /// The rule created or revoked.
    pub rule: Option<RuleId>,
    /// The door the decision came through, when one was recorded.
    pub via: Option<Via>,
    pub server: String,
    pub model: String,
    pub tokens: String,
    pub cost: String,
    pub request_digest: String,
    pub response_digest: String,
}

#[derive(Template)]
#[template(path = "audit.html")]
pub struct AuditPage {
    pub i18n: I18n,
    pub csrf: String,
    pub server: String,
    /// The action filtered by, if any.
    pub action: Option<AuditAction>,
    /// The actions the filter offers.
    pub actions: &'static [AuditAction],
    /// The kind filtered by, if any.
    pub kind: Option<Kind>,
    /// The kinds the filter offers.
    pub kinds: &'static [Kind],
    pub entries: Vec<AuditView>,
    /// Model spend per server and day against the daily budgets, with totals.
    pub spend: SpendView,
}

#[derive(Deserialize)]
pub struct AuditQuery {
    pub server: Option<String>,
    pub action: Option<String>,
    pub kind: Option<String>,
}

/// `GET /audit?server=&action=&kind=`: every decision and rule change, newest first (digests,
/// never text).
pub async fn audit(
    state: web::Data<AppState>,
    session: WebSession,
    i18n: I18n,
    query: web::Query<AuditQuery>,
) -> Result<HttpResponse, PageError> {
    let f = query.into_inner();
    let now = state.broker.now();
    let server = f.server.filter(|s| !s.is_empty());
    let action = f
        .action
        .filter(|s| !s.is_empty())
        .map(|a| a.parse::<AuditAction>());
    let kind = f.kind.filter(|s| !s.is_empty()).map(|k| k.parse::<Kind>());
    // An action or kind that is no word of the vocabulary matches no entry.
    let rows = match (&action, &kind) {
        (Some(Err(_)), _) | (_, Some(Err(_))) => Vec::new(),
        _ => {
            let filter = crate::review::AuditFilter {
                server: server.clone(),
                action: action.clone().and_then(Result::ok),
                kind: kind.clone().and_then(Result::ok),
                rules_only: false,
                over_tcp: false,
            };
            state.review.audit_log(filter, 500).await?
        }
    };
    let short = |d: &Option<String>| {
        d.as_deref()
            .map(|d| d.chars().take(12).collect())
            .unwrap_or_default()
    };
    let spend = spend_view(&i18n, &state.review.spend(SPEND_DAYS).await?, SPEND_DAYS);
    ok(&AuditPage {
        spend,
        i18n: i18n.clone(),
        csrf: session.csrf.clone(),
        server: server.unwrap_or_default(),
        action: action.and_then(Result::ok),
        actions: AuditAction::ALL,
        kind: kind.and_then(Result::ok),
        kinds: Kind::ALL,
        entries: rows
            .iter()
            .map(|r| AuditView {
                at: moment_ms(r.at, now),
                actor: r.actor.clone(),
                action: r.action,
                question: r.question_id.clone(),
                kind: r.kind,
                rule: r.rule_id.clone(),
                via: r.via,
                server: r.server.clone(),
                model: r.model_id.clone().unwrap_or_default(),
                tokens: match (r.input_tokens, r.output_tokens) {
                    (Some(i), Some(o)) => i18n
                        .msg("audit-tokens-value")
                        .arg("input", i)
                        .arg("output", o)
                        .to_string(),
                    _ => String::new(),
                },
                cost: r.cost_usd.map(|c| i18n.usd(Some(c))).unwrap_or_default(),
                request_digest: short(&r.request_digest),
                response_digest: short(&r.response_digest),
            })
            .collect(),
    })
}
