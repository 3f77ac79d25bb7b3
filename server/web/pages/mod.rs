//! The HTML pages: login, the queue, a question's review page, the confirm step, history,
//! rules, audit and sessions.
//! Server-rendered with askama (everything escaped), working with JavaScript off. Nothing
//! reaches a server from these pages except through the confirm page's "Send" (accept) or the
//! Decline/Cancel buttons.

use actix_web::http::StatusCode;
use actix_web::http::header::{CONTENT_TYPE, LOCATION};
use actix_web::{HttpResponse, web};
use askama::Template;
use serde::Deserialize;
use serde_json::{Value, json};

use super::auth::{self, WebSession};
use super::error::{PageError, Refusal};
use super::views::problem::{Shown, shown_broker, shown_fields};
use super::{AppState, MAX_BODY_BYTES, read_body};
use crate::auth::throttle::Attempt;
use crate::broker::{Answerer, BrokerError, Kind, Question, State};
use crate::domain::{
    Action, Actor, Audience, AuditAction, Phase, QuestionId, RuleScope, RunState, StopReason, Via,
};
use crate::i18n::{Arg, I18n};
use crate::protocol::{FieldError, Problem};
use crate::review::{Decision, DecisionKind, Edit, TextEdit};
use crate::wire::Answer;

mod answer;
mod audit;
mod csrf_form;
mod history;
mod login;
mod open;
mod question;
mod queue;
mod review;
mod rules;
mod sessions;
mod tool_call;
mod why;

use super::views::diff::LineChange;
use super::views::form::*;
use super::views::last;
use super::views::review::*;
use super::views::sampling::*;
use super::views::spend::{SPEND_DAYS, SpendView, spend_view};
use super::views::summary::*;
use super::views::text::*;
use super::views::tool_call::*;
use super::views::url::*;
use answer::*;
use audit::*;
pub use csrf_form::{Checked, CsrfForm, Fields};
use history::*;
use login::*;
pub use login::{return_to_question, safe_next};
use open::*;
use question::*;
use queue::*;
use review::*;
use rules::*;
use sessions::*;
use tool_call::*;
use why::*;

/// Registers the page routes.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/login", web::get().to(login))
        .route("/login", web::post().to(login_with_passphrase))
        .route("/logout", web::post().to(logout))
        .route("/", web::get().to(queue))
        .route("/history", web::get().to(history))
        .route("/questions/decline", web::post().to(decline_many))
        .route("/servers/control", web::post().to(control_server))
        .route("/questions/{id}", web::get().to(question))
        .route("/questions/{id}/answer", web::post().to(answer))
        .route("/questions/{id}/send", web::post().to(send))
        .route("/questions/{id}/open", web::get().to(open_url))
        .route("/questions/{id}/open", web::post().to(open_url_confirmed))
        .route("/questions/{id}/decide", web::post().to(decide))
        .route("/questions/{id}/revise", web::post().to(revise))
        .route("/audit", web::get().to(audit))
        .route("/rules", web::get().to(rules))
        .route("/rules", web::post().to(create_rule))
        .route("/rules/{rule}/revoke", web::post().to(revoke_rule))
        .route("/rules/grants/{grant}/revoke", web::post().to(revoke_grant))
        .route("/rules/{rule}/apply", web::post().to(apply_rule))
        .route("/sessions", web::get().to(sessions))
        .route("/sessions/remember", web::post().to(remember_session))
        .route(
            "/sessions/revoke-others",
            web::post().to(revoke_other_sessions),
        )
        .route("/sessions/{handle}/revoke", web::post().to(revoke_session))
        .default_service(web::to(not_found));
}

/// Every unknown route: the styled 404 page, or the JSON API's 404 body under `/api/`.
async fn not_found(req: actix_web::HttpRequest) -> Result<HttpResponse, PageError> {
    if req.path().starts_with("/api/") {
        return Ok(HttpResponse::NotFound().json(json!({"error": "no such API route"})));
    }
    Err(PageError::NoPage)
}

pub fn html(status: actix_web::http::StatusCode, body: String) -> HttpResponse {
    HttpResponse::build(status)
        .insert_header((CONTENT_TYPE, "text/html; charset=utf-8"))
        .insert_header(("Cache-Control", "no-store"))
        .body(body)
}

pub fn ok(t: &impl Template) -> Result<HttpResponse, PageError> {
    Ok(html(actix_web::http::StatusCode::OK, t.render()?))
}

pub fn see_other(to: &str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((LOCATION, to.to_owned()))
        .finish()
}

/// Reads an `application/x-www-form-urlencoded` body as ordered pairs (repeated keys kept).
/// Line breaks are `\n`: browsers send a textarea's line breaks as CRLF (HTML's form
/// submission rules), and what the person typed must reach the server as typed, not with a
/// `\r` before each newline.
pub async fn form_pairs(payload: web::Payload) -> Result<Vec<(String, String)>, PageError> {
    let body = read_body(payload, MAX_BODY_BYTES)
        .await
        .map_err(|e| match e {
            Some(limit) => PageError::TooLarge(limit),
            None => PageError::Refused(Refusal::UnreadableForm),
        })?;
    Ok(form_urlencoded::parse(&body)
        .map(|(k, v)| (k.into_owned(), v.replace("\r\n", "\n")))
        .collect())
}
