//! The audit log page.

use super::*;

/// An audit entry as the page shows it.
pub struct AuditView {
    pub at: Moment,
    pub actor: Actor,
    pub action: AuditAction,
    pub question: String,
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
    pub entries: Vec<AuditView>,
    /// Model spend per server and day against the daily budgets, with totals.
    pub spend: SpendView,
}

#[derive(Deserialize)]
pub struct AuditFilter {
    pub server: Option<String>,
    pub action: Option<String>,
}

/// `GET /audit?server=&action=`: every decision, newest first (digests, never text).
pub async fn audit(
    state: web::Data<AppState>,
    session: WebSession,
    i18n: I18n,
    query: web::Query<AuditFilter>,
) -> Result<HttpResponse, PageError> {
    let f = query.into_inner();
    let now = state.broker.now();
    let server = f.server.filter(|s| !s.is_empty());
    let filter = f.action.filter(|s| !s.is_empty());
    let action = filter.as_deref().map(str::parse::<AuditAction>);
    // An action that is no word of the vocabulary matches no entry.
    let rows = match action {
        Some(Err(_)) => Vec::new(),
        Some(Ok(a)) => state.review.audit_log(server.clone(), Some(a), 500).await?,
        None => state.review.audit_log(server.clone(), None, 500).await?,
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
        entries: rows
            .iter()
            .map(|r| AuditView {
                at: moment_ms(r.at, now),
                actor: r.actor.clone(),
                action: r.action,
                question: r.question_id.clone(),
                server: r.server.clone(),
                model: r.model_id.clone().unwrap_or_default(),
                tokens: match (r.input_tokens, r.output_tokens) {
                    (Some(i), Some(o)) => i18n.t2("audit-tokens-value", "input", i, "output", o),
                    _ => String::new(),
                },
                cost: r.cost_usd.map(|c| i18n.usd(Some(c))).unwrap_or_default(),
                request_digest: short(&r.request_digest),
                response_digest: short(&r.response_digest),
            })
            .collect(),
    })
}
