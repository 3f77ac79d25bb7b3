//! The auto-approve rules page: a rule names a server that asked before (a name never seen
//! asks for confirmation, with the closest seen name offered), "both steps" needs an explicit
//! confirmation, and a rule lasts from an hour to a year.

use super::csrf_form::Checked;
use super::csrf_form::CsrfForm;
use super::html;
use super::ok;
use super::see_other;
use crate::domain::Actor;
use crate::domain::GrantId;
use crate::domain::RuleId;
use crate::domain::RuleScope;
use crate::domain::Via;
use crate::i18n::I18n;
use crate::web::AppState;
use crate::web::auth::WebSession;
use crate::web::error::PageError;
use crate::web::views::last;
use crate::web::views::text::Moment;
use crate::web::views::text::moment;
use crate::web::views::text::moment_ms;
use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use actix_web::web;
use askama::Template;

/// A rule as the page shows it.
pub struct RuleView {
    pub id: RuleId,
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

/// The lifetimes the form offers, in hours: an hour, a day, a week (the default), 30 and 90 days.
pub const LIFETIMES: &[i64] = &[1, 24, 7 * 24, 30 * 24, 90 * 24];

/// What the form holds (as typed, when it comes back with a problem).
#[derive(Default)]
pub struct RuleForm {
    pub server: String,
    pub scope: String,
    pub reason: String,
    pub hours: i64,
    /// The server was never seen: the form asks to confirm it (or take the suggestion).
    pub unknown_server: bool,
    /// The seen server name closest to an unknown one.
    pub suggestion: Option<String>,
    /// "Both steps" was chosen without its confirmation.
    pub both_unconfirmed: bool,
    /// A server or reason is missing.
    pub incomplete: bool,
}

impl RuleForm {
    fn has_problem(&self) -> bool {
        self.unknown_server || self.both_unconfirmed || self.incomplete
    }
}

#[derive(Template)]
#[template(path = "rules.html")]
pub struct RulesPage {
    pub i18n: I18n,
    pub csrf: String,
    pub rules: Vec<RuleView>,
    /// Servers that asked something: the server field offers them.
    pub servers: Vec<String>,
    pub form: RuleForm,
    pub lifetimes: &'static [i64],
    /// Tool grants made from tool-call questions, newest first.
    pub grants: Vec<GrantView>,
}

/// A tool grant as the page shows it.
pub struct GrantView {
    pub id: GrantId,
    pub server: String,
    pub tool: String,
    pub created_at: Moment,
    /// `None`: until revoked.
    pub expires_at: Option<Moment>,
    /// Neither revoked nor expired.
    pub active: bool,
    pub revoked: bool,
}

/// The most grants the page lists.
const GRANTS_LISTED: i64 = 200;

async fn grant_views(state: &AppState) -> Result<Vec<GrantView>, PageError> {
    let now = state.broker.now();
    let time = |ms: i64| chrono::DateTime::from_timestamp_millis(ms).unwrap_or(now);
    Ok(state
        .broker
        .recent_grants(GRANTS_LISTED)
        .await?
        .into_iter()
        .map(|g| {
            let expired = g.expires_at.is_some_and(|t| time(t) <= now);
            GrantView {
                active: g.revoked_at.is_none() && !expired,
                revoked: g.revoked_at.is_some(),
                created_at: moment(time(g.created_at), now),
                expires_at: g.expires_at.map(|t| moment(time(t), now)),
                id: g.id,
                server: g.server,
                tool: g.tool,
            }
        })
        .collect())
}

async fn rules_page(
    state: &AppState,
    session: &WebSession,
    i18n: I18n,
    form: RuleForm,
) -> Result<RulesPage, PageError> {
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
    Ok(RulesPage {
        i18n,
        csrf: session.csrf.clone(),
        rules,
        // Offered as suggestions only where the name shows what it holds: a browser lists an
        // option's value as it is, invisible characters and all.
        servers: state
            .broker
            .servers_seen()
            .await?
            .into_iter()
            .filter(|s| !s.chars().any(crate::protocol::url_safety::is_hidden_char))
            .collect(),
        form,
        lifetimes: LIFETIMES,
        grants: grant_views(state).await?,
    })
}

/// `GET /rules`: auto-approve rules for sampling (off unless created here).
pub async fn rules(
    state: web::Data<AppState>,
    session: WebSession,
    i18n: I18n,
) -> Result<HttpResponse, PageError> {
    let form = RuleForm {
        scope: RuleScope::Request.to_string(),
        hours: crate::review::RULE_DAYS * 24,
        ..RuleForm::default()
    };
    ok(&rules_page(&state, &session, i18n, form).await?)
}

/// The seen name closest to `name` (edit distance at most a third of its length, at least 2).
fn closest(name: &str, seen: &[String]) -> Option<String> {
    let most = (name.chars().count() / 3).max(2);
    seen.iter()
        .map(|s| {
            (
                strsim::levenshtein(&name.to_lowercase(), &s.to_lowercase()),
                s,
            )
        })
        .filter(|(d, _)| *d <= most)
        .min_by_key(|(d, _)| *d)
        .map(|(_, s)| s.clone())
}

/// `POST /rules`: a new rule (`server`, `scope`, `reason`, `hours` (or `days`),
/// `confirm_both=1` for both steps, `confirm_unknown=1` for a server never seen). A problem
/// shows the form again (422) with what was typed.
pub async fn create_rule(
    state: web::Data<AppState>,
    i18n: I18n,
    form: CsrfForm,
) -> Result<HttpResponse, PageError> {
    let CsrfForm {
        session,
        form: pairs,
    } = form;
    let get = |k: &str| last(&pairs, k).unwrap_or_default().trim().to_owned();
    let hours = get("hours").parse::<i64>().ok().or_else(|| {
        get("days")
            .parse::<i64>()
            .ok()
            .map(|d| d.saturating_mul(24))
    });
    let mut form = RuleForm {
        server: get("server"),
        scope: get("scope"),
        reason: get("reason"),
        hours: hours.unwrap_or(crate::review::RULE_DAYS * 24),
        ..RuleForm::default()
    };
    form.incomplete = form.server.is_empty() || form.reason.is_empty();
    form.both_unconfirmed = form.scope == RuleScope::Both.as_str() && get("confirm_both") != "1";
    if !form.server.is_empty()
        && get("confirm_unknown") != "1"
        && !state.broker.server_seen(&form.server).await?
    {
        form.unknown_server = true;
        let seen = state.broker.servers_seen().await?;
        form.suggestion = closest(&form.server, &seen);
    }
    if form.has_problem() {
        let page = rules_page(&state, &session, i18n.at("/rules"), form).await?;
        return Ok(html(StatusCode::UNPROCESSABLE_ENTITY, page.render()?));
    }
    state
        .review
        .create_rule(&form.server, &form.scope, Via::Browser, &form.reason, hours)
        .await?;
    Ok(see_other("/rules"))
}

/// `POST /rules/{rule}/revoke`.
pub async fn revoke_rule(
    state: web::Data<AppState>,
    rule: web::Path<RuleId>,
    _form: CsrfForm<Checked>,
) -> Result<HttpResponse, PageError> {
    state.review.revoke_rule(&rule, Via::Browser).await?;
    Ok(see_other("/rules"))
}

/// `POST /rules/grants/{grant}/revoke`: a tool grant stops applying at once (audited); the
/// proxies follow within two seconds.
pub async fn revoke_grant(
    state: web::Data<AppState>,
    grant: web::Path<GrantId>,
    _form: CsrfForm<Checked>,
) -> Result<HttpResponse, PageError> {
    state.broker.revoke_grant(&grant).await?;
    Ok(see_other("/rules"))
}

/// `POST /rules/{rule}/apply`: applies an active rule to the requests of its server that
/// already wait in request review.
pub async fn apply_rule(
    state: web::Data<AppState>,
    rule: web::Path<RuleId>,
    _form: CsrfForm<Checked>,
) -> Result<HttpResponse, PageError> {
    state.review.apply_rule_to_waiting(&rule).await?;
    Ok(see_other("/rules"))
}

#[cfg(test)]
mod tests {
    use super::closest;

    #[test]
    fn a_misspelt_server_is_offered_the_closest_seen_name() {
        let seen = vec!["github".to_owned(), "everything".to_owned()];
        assert_eq!(closest("gitub", &seen).as_deref(), Some("github"));
        assert_eq!(closest("Everythin", &seen).as_deref(), Some("everything"));
        assert_eq!(closest("calendar", &seen), None);
    }
}
