//! Opening a URL question's link: the person's explicit click, and the second confirmation for
//! an address on this computer, a private network or a bare IP.

use super::csrf_form::CsrfForm;
use super::ok;
use crate::broker::Kind;
use crate::i18n::I18n;
use crate::web::AppState;
use crate::web::auth::WebSession;
use crate::web::error::PageError;
use crate::web::views::last;
use crate::web::views::url::UrlView;
use crate::web::views::url::url_view;
use actix_web::HttpResponse;
use actix_web::http::header::LOCATION;
use actix_web::web;
use askama::Template;
use serde_json::Value;

use crate::domain::QuestionId;

/// The second confirmation before a URL to this computer, a private network or a bare IP opens.
#[derive(Template)]
#[template(path = "open_confirm.html")]
pub struct OpenConfirmPage {
    pub i18n: I18n,
    pub csrf: String,
    pub id: QuestionId,
    pub server: String,
    pub u: UrlView,
}

/// The value of `confirm` that the second confirmation's button posts.
const CONFIRM_LOCAL: &str = "local-network";

/// `GET /questions/{id}/open`: the person's explicit click on a URL question's link. Records
/// consent, accepts the question, and redirects to the URL with `Referrer-Policy: no-referrer`.
/// The service itself never fetches the URL. A URL that needs a second confirmation (host on
/// this computer, a private network or a bare IP) is not opened: the confirmation page is shown.
pub async fn open_url(
    state: web::Data<AppState>,
    session: WebSession,
    i18n: I18n,
    id: web::Path<QuestionId>,
) -> Result<HttpResponse, PageError> {
    open_or_confirm(&state, &session, &i18n, &id, false).await
}

/// `POST /questions/{id}/open`: the confirmation page's button (CSRF-checked). Opens the URL
/// only when the form carries `confirm=local-network`; otherwise shows the confirmation again.
pub async fn open_url_confirmed(
    state: web::Data<AppState>,
    i18n: I18n,
    id: web::Path<QuestionId>,
    form: CsrfForm,
) -> Result<HttpResponse, PageError> {
    let CsrfForm {
        session,
        form: pairs,
    } = form;
    let confirmed = last(&pairs, "confirm") == Some(CONFIRM_LOCAL);
    let i18n = i18n.at(&format!("/questions/{id}"));
    open_or_confirm(&state, &session, &i18n, &id, confirmed).await
}

async fn open_or_confirm(
    state: &AppState,
    session: &WebSession,
    i18n: &I18n,
    id: &QuestionId,
    confirmed: bool,
) -> Result<HttpResponse, PageError> {
    let q = state.broker.get(id).await?;
    if q.kind == Kind::Url && !confirmed {
        let text = |k: &str| q.request.get(k).and_then(Value::as_str).unwrap_or_default();
        let u = url_view(i18n, text("url"), text("message"));
        if u.confirm_first {
            return ok(&OpenConfirmPage {
                i18n: i18n.clone(),
                csrf: session.csrf.clone(),
                id: q.id.clone(),
                server: q.server.clone(),
                u,
            });
        }
    }
    let url = state.broker.open_url(id).await?;
    Ok(HttpResponse::SeeOther()
        .insert_header((LOCATION, url))
        .insert_header(("Referrer-Policy", "no-referrer"))
        .insert_header(("Cache-Control", "no-store"))
        .finish())
}
