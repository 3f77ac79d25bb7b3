//! The auto-approve rules page.

use super::*;

/// A rule as the page shows it.
pub struct RuleView {
    pub id: String,
    pub server: String,
    pub scope: RuleScope,
    pub author: Actor,
    pub reason: String,
    pub created_at: Moment,
    pub expires_at: Moment,
    /// Neither revoked nor expired.
    pub active: bool,
    /// When it was revoked (local date and time), if it was.
    pub revoked: Option<String>,
    /// Requests of its server waiting in request review (active rules only): the page offers
    /// to apply the rule to them.
    pub waiting: usize,
}

#[derive(Template)]
#[template(path = "rules.html")]
pub struct RulesPage {
    pub i18n: I18n,
    pub csrf: String,
    pub rules: Vec<RuleView>,
}

/// `GET /rules`: auto-approve rules for sampling (off unless created here).
pub async fn rules(
    state: web::Data<AppState>,
    session: WebSession,
    i18n: I18n,
) -> Result<HttpResponse, PageError> {
    let clock = state.broker.now();
    let now = clock.timestamp_millis();
    let mut rules: Vec<RuleView> = state
        .review
        .rules()
        .await?
        .into_iter()
        .map(|r| {
            let revoked = r.revoked_at.map(|at| moment_ms(at, clock).local);
            RuleView {
                active: revoked.is_none() && r.expires_at > now,
                revoked,
                created_at: moment_ms(r.created_at, clock),
                expires_at: moment_ms(r.expires_at, clock),
                id: r.id,
                server: r.server,
                scope: r.scope,
                author: r.author,
                reason: r.reason,
                waiting: 0,
            }
        })
        .collect();
    for r in rules.iter_mut().filter(|r| r.active) {
        r.waiting = state.review.waiting_requests(&r.server).await?.len();
    }
    ok(&RulesPage {
        i18n,
        csrf: session.csrf.clone(),
        rules,
    })
}

/// `POST /rules`: a new rule (`server`, `scope`, `reason`, `days`).
pub async fn create_rule(
    state: web::Data<AppState>,
    session: WebSession,
    payload: web::Payload,
) -> Result<HttpResponse, PageError> {
    let pairs = form_pairs(payload).await?;
    session.check_csrf(last(&pairs, "csrf"))?;
    let get = |k: &str| last(&pairs, k).unwrap_or_default().trim().to_owned();
    let days = get("days").parse().ok();
    match state
        .review
        .create_rule(
            &get("server"),
            &get("scope"),
            Actor::Human,
            &get("reason"),
            days,
        )
        .await
    {
        Ok(_) => Ok(see_other("/rules")),
        Err(e) => Err(e.into()),
    }
}

/// `POST /rules/{rule}/revoke`.
pub async fn revoke_rule(
    state: web::Data<AppState>,
    session: WebSession,
    rule: web::Path<String>,
    payload: web::Payload,
) -> Result<HttpResponse, PageError> {
    let pairs = form_pairs(payload).await?;
    session.check_csrf(last(&pairs, "csrf"))?;
    state.review.revoke_rule(&rule).await?;
    Ok(see_other("/rules"))
}

/// `POST /rules/{rule}/apply`: applies an active rule to the requests of its server that
/// already wait in request review.
pub async fn apply_rule(
    state: web::Data<AppState>,
    session: WebSession,
    rule: web::Path<String>,
    payload: web::Payload,
) -> Result<HttpResponse, PageError> {
    let pairs = form_pairs(payload).await?;
    session.check_csrf(last(&pairs, "csrf"))?;
    state.review.apply_rule_to_waiting(&rule).await?;
    Ok(see_other("/rules"))
}
