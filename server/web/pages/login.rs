//! Login by one-time link or passphrase, and logout.

use super::csrf_form::Checked;
use super::csrf_form::CsrfForm;
use super::form_pairs;
use super::html;
use super::ok;
use crate::auth::throttle::Attempt;
use crate::i18n::I18n;
use crate::web::AppState;
use crate::web::auth;
use crate::web::error::PageError;
use crate::web::views::last;
use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use actix_web::http::header::LOCATION;
use actix_web::web;
use askama::Template;
use serde::Deserialize;

use crate::auth::{Lifetime, label};

#[derive(Template)]
#[template(path = "login.html")]
pub struct LoginPage {
    pub i18n: I18n,
    /// The catalogue key of a message to show above the form.
    pub message: Option<&'static str>,
    /// A passphrase is configured: show its form.
    pub passphrase: bool,
    /// The question page to return to after the passphrase login ([`safe_next`]).
    pub next: Option<String>,
}

#[derive(Deserialize)]
pub struct LoginQuery {
    pub token: Option<String>,
    /// Set when a page sent the browser here because its session ended.
    pub ended: Option<String>,
    /// The question page that sent the browser here (kept only when [`safe_next`]).
    pub next: Option<String>,
}

/// Where a login may send the browser afterwards: a question's page (`/questions/<id>`, the
/// link of a notice) and nothing else, so `next` can never lead to another site.
pub fn safe_next(next: Option<&str>) -> Option<&str> {
    next.filter(|n| {
        n.strip_prefix("/questions/").is_some_and(|id| {
            !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
    })
}

/// A browser sent to log in from a question's page (a notice's link opened on a phone) comes
/// back to it after the passphrase: the login redirect of `GET /questions/<id>` gets
/// `next=/questions/<id>`.
pub async fn return_to_question(
    req: actix_web::dev::ServiceRequest,
    next: actix_web::middleware::Next<actix_web::body::BoxBody>,
) -> Result<actix_web::dev::ServiceResponse<actix_web::body::BoxBody>, actix_web::Error> {
    let path = req.path().to_owned();
    let get = req.method() == actix_web::http::Method::GET;
    let mut res = next.call(req).await?;
    if get && safe_next(Some(&path)).is_some() && res.status() == StatusCode::SEE_OTHER {
        let location = res
            .headers()
            .get(LOCATION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let to = match location {
            "/login" => Some(format!("/login?next={path}")),
            "/login?ended=1" => Some(format!("/login?ended=1&next={path}")),
            _ => None,
        };
        if let Some(value) =
            to.and_then(|t| actix_web::http::header::HeaderValue::from_str(&t).ok())
        {
            res.headers_mut().insert(LOCATION, value);
        }
    }
    Ok(res)
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
            next: safe_next(query.next.as_deref()).map(str::to_owned),
        });
    };
    if !state.auth.take_login_link(token).await? {
        let page = LoginPage {
            // The link's token must not come back in the switcher's return address.
            i18n: i18n.at("/login"),
            message: Some("login-link-invalid"),
            passphrase: state.passphrase_hash.is_some(),
            next: None,
        };
        return Ok(html(
            actix_web::http::StatusCode::UNAUTHORIZED,
            page.render()?,
        ));
    }
    logged_in(&state, &req, Lifetime::Day, None).await
}

/// Starts a session lasting `lifetime` and sends the browser with its cookie to `next` (a
/// [`safe_next`] page), else to the queue.
pub async fn logged_in(
    state: &AppState,
    req: &actix_web::HttpRequest,
    lifetime: Lifetime,
    next: Option<&str>,
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
        .insert_header((LOCATION, safe_next(next).unwrap_or("/")))
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
            next: safe_next(last(&pairs, "next")).map(str::to_owned),
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
    logged_in(&state, &req, lifetime, last(&pairs, "next")).await
}

/// `POST /logout`.
pub async fn logout(
    state: web::Data<AppState>,
    form: CsrfForm<Checked>,
) -> Result<HttpResponse, PageError> {
    state.auth.end_session(&form.session).await?;
    let mut removal = auth::session_cookie("", Lifetime::Day);
    removal.make_removal();
    Ok(HttpResponse::SeeOther()
        .insert_header((LOCATION, "/login"))
        .cookie(removal)
        .finish())
}
