//! The sessions page: every logged-in browser, with Revoke, "Log out everywhere else" and
//! "Remember this browser for 30 days".

use super::csrf_form::Checked;
use super::csrf_form::CsrfForm;
use super::ok;
use super::see_other;
use crate::i18n::I18n;
use crate::web::AppState;
use crate::web::auth;
use crate::web::auth::WebSession;
use crate::web::error::PageError;
use crate::web::views::last;
use crate::web::views::text::Moment;
use crate::web::views::text::moment_ms;
use actix_web::HttpResponse;
use actix_web::web;
use askama::Template;

use crate::auth::Lifetime;

/// One session as the page shows it.
pub struct SessionView {
    pub handle: String,
    pub label: String,
    pub created_at: Moment,
    pub last_used_at: Moment,
    pub expires_at: Moment,
    pub current: bool,
}

#[derive(Template)]
#[template(path = "sessions.html")]
pub struct SessionsPage {
    pub i18n: I18n,
    pub csrf: String,
    pub sessions: Vec<SessionView>,
    /// This browser's session already lasts longer than a default one.
    pub remembered: bool,
}

/// `GET /sessions`.
pub async fn sessions(
    state: web::Data<AppState>,
    session: WebSession,
    i18n: I18n,
) -> Result<HttpResponse, PageError> {
    let now = state.broker.now();
    let sessions: Vec<SessionView> = state
        .auth
        .sessions(&session)
        .await?
        .into_iter()
        .map(|s| SessionView {
            handle: s.handle,
            label: s.label,
            created_at: moment_ms(s.created_at, now),
            last_used_at: moment_ms(s.last_used_at, now),
            expires_at: moment_ms(s.expires_at, now),
            current: s.current,
        })
        .collect();
    ok(&SessionsPage {
        i18n,
        csrf: session.csrf.clone(),
        remembered: session.expires_at - now.timestamp_millis() > Lifetime::Day.millis(),
        sessions,
    })
}

/// `POST /sessions/{handle}/revoke`: ends that session (this browser's too, if named).
pub async fn revoke_session(
    state: web::Data<AppState>,
    handle: web::Path<String>,
    _form: CsrfForm<Checked>,
) -> Result<HttpResponse, PageError> {
    if !state.auth.revoke(&handle).await? {
        // Already revoked (or never was): the page's address names nothing.
        return Err(PageError::NoPage);
    }
    Ok(see_other("/sessions"))
}

/// `POST /sessions/revoke-others`: "Log out everywhere else".
pub async fn revoke_other_sessions(
    state: web::Data<AppState>,
    form: CsrfForm<Checked>,
) -> Result<HttpResponse, PageError> {
    let ended = state.auth.end_other_sessions(&form.session).await?;
    tracing::info!(sessions = ended, "logged out everywhere else");
    Ok(see_other("/sessions"))
}

/// `POST /sessions/remember`: this browser's session lasts 30 days from now, and so does its
/// cookie. Back to the queue when posted from there (`back=queue`), else to the sessions page.
pub async fn remember_session(
    req: actix_web::HttpRequest,
    state: web::Data<AppState>,
    form: CsrfForm,
) -> Result<HttpResponse, PageError> {
    let CsrfForm {
        session,
        form: pairs,
    } = form;
    let lifetime = state.auth.remember(&session).await?;
    let mut res = see_other(if last(&pairs, "back") == Some("queue") {
        "/"
    } else {
        "/sessions"
    });
    if let Some(cookie) = req.cookie(auth::SESSION_COOKIE) {
        res.add_cookie(&auth::session_cookie(cookie.value(), lifetime))
            .map_err(|e| PageError::Internal(Box::new(e)))?;
    }
    Ok(res)
}
