//! Login by one-time link or passphrase, and logout.

use super::*;
use crate::auth::{Lifetime, label};

#[derive(Template)]
#[template(path = "login.html")]
pub struct LoginPage {
    pub i18n: I18n,
    /// The catalogue key of a message to show above the form.
    pub message: Option<&'static str>,
    /// A passphrase is configured: show its form.
    pub passphrase: bool,
}

#[derive(Deserialize)]
pub struct LoginQuery {
    pub token: Option<String>,
    /// Set when a page sent the browser here because its session ended.
    pub ended: Option<String>,
}

/// `GET /login[?token=…]`: with a valid one-time token, starts a session and redirects to the
/// queue; without one, explains how to get a link.
pub async fn login(
    req: actix_web::HttpRequest,
    state: web::Data<AppState>,
    query: web::Query<LoginQuery>,
    i18n: I18n,
) -> Result<HttpResponse, PageError> {
    let Some(token) = query.token.as_deref() else {
        return ok(&LoginPage {
            i18n,
            message: query.ended.is_some().then_some("login-session-ended"),
            passphrase: state.passphrase_hash.is_some(),
        });
    };
    if !state.auth.take_login_link(token).await? {
        let page = LoginPage {
            // The link's token must not come back in the switcher's return address.
            i18n: i18n.at("/login"),
            message: Some("login-link-invalid"),
            passphrase: state.passphrase_hash.is_some(),
        };
        return Ok(html(
            actix_web::http::StatusCode::UNAUTHORIZED,
            page.render()?,
        ));
    }
    logged_in(&state, &req, Lifetime::Day).await
}

/// Starts a session lasting `lifetime` and sends the browser to the queue with its cookie.
pub async fn logged_in(
    state: &AppState,
    req: &actix_web::HttpRequest,
    lifetime: Lifetime,
) -> Result<HttpResponse, PageError> {
    let user_agent = req
        .headers()
        .get(actix_web::http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok());
    let (secret, _) = state
        .auth
        .create_session(lifetime, label::of_user_agent(user_agent))
        .await?;
    Ok(HttpResponse::SeeOther()
        .insert_header((LOCATION, "/"))
        .cookie(auth::session_cookie(&secret, lifetime))
        .finish())
}

/// `POST /login` with `passphrase`: checks it against the configured argon2id hash (on the
/// blocking pool, within `auth::throttle`) and starts a session; 429 when over the limits.
pub async fn login_with_passphrase(
    req: actix_web::HttpRequest,
    state: web::Data<AppState>,
    i18n: I18n,
    payload: web::Payload,
) -> Result<HttpResponse, PageError> {
    let pairs = form_pairs(payload).await?;
    let Some(hash) = state.passphrase_hash.clone() else {
        return Err(PageError::NotFound);
    };
    let given = last(&pairs, "passphrase").unwrap_or_default().to_owned();
    let client = crate::web::public::client_ip(&req);
    let ok = match state.login_guard.attempt(client, hash, given).await {
        Attempt::Accepted => true,
        Attempt::Wrong => false,
        Attempt::TooMany(wait) => return Ok(auth::too_many_attempts(wait)),
    };
    if !ok {
        tracing::warn!("wrong passphrase at /login");
        let page = LoginPage {
            i18n: i18n.at("/login"),
            message: Some("login-wrong-passphrase"),
            passphrase: true,
        };
        return Ok(html(
            actix_web::http::StatusCode::UNAUTHORIZED,
            page.render()?,
        ));
    }
    let lifetime = if last(&pairs, "remember").is_some() {
        Lifetime::Remembered
    } else {
        Lifetime::Day
    };
    logged_in(&state, &req, lifetime).await
}

/// `POST /logout`.
pub async fn logout(
    state: web::Data<AppState>,
    session: WebSession,
    payload: web::Payload,
) -> Result<HttpResponse, PageError> {
    let pairs = form_pairs(payload).await?;
    session.check_csrf(last(&pairs, "csrf"))?;
    state.auth.end_session(&session).await?;
    let mut removal = auth::session_cookie("", Lifetime::Day);
    removal.make_removal();
    Ok(HttpResponse::SeeOther()
        .insert_header((LOCATION, "/login"))
        .cookie(removal)
        .finish())
}
