//! The HTML pages: login, the queue, a question's review page, the confirm step, history,
//! rules, audit and sessions.
//! Server-rendered with askama (everything escaped), working with JavaScript off. Nothing
//! reaches a server from these pages except through the confirm page's "Send" (accept) or the
//! Decline/Cancel buttons.

use actix_web::http::header::{CONTENT_TYPE, LOCATION};
use actix_web::{HttpResponse, web};
use askama::Template;
use serde_json::json;

use super::error::{PageError, Refusal};
use super::{MAX_BODY_BYTES, read_body};

mod answer;
mod audit;
mod csrf_form;
mod form_answer;
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

pub use csrf_form::{Checked, CsrfForm, Fields};
pub use login::{return_to_question, safe_next};

use answer::{answer, send};
use audit::audit;
use history::history;
use login::{login, login_with_passphrase, logout};
use open::{open_url, open_url_confirmed};
use question::question;
use queue::{control_server, decline_many, queue};
use review::{decide, revise};
use rules::{apply_rule, create_rule, revoke_grant, revoke_rule, rules};
use sessions::{remember_session, revoke_other_sessions, revoke_session, sessions};

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
