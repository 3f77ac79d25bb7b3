//! Errors at the HTTP edge, one type per surface: [`ApiError`] renders the JSON error contract
//! of docs/design.md §JSON API, [`PageError`] renders `error.html`. Broker errors are mapped
//! here, once.

use actix_web::http::StatusCode;
use actix_web::http::header::{CONTENT_TYPE, LOCATION};
use actix_web::{HttpResponse, ResponseError};
use askama::Template;
use serde_json::json;

use super::views::problem::{refusal, shown_fields};
use crate::broker::{BrokerError, State, StepRefusal};
use crate::i18n::{Arg, I18n};
use crate::protocol::FieldError;

/// An error of the JSON API (`/api/v1`). Non-2xx bodies are `{"error": "…"}`; 422 is
/// `{"errors": [{"field", "message"}]}`.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 401: missing or wrong bearer token / session.
    #[error("missing or invalid credentials")]
    Unauthorized,
    /// 403: not allowed for this caller.
    #[error("{0}")]
    Forbidden(String),
    /// 404: unknown id.
    #[error("no question with this id")]
    NotFound,
    /// 409: already decided.
    #[error("the question is already {0}")]
    Conflict(State),
    /// 413: body over its limit.
    #[error("request body is larger than {0} bytes")]
    TooLarge(usize),
    /// 400: unreadable body or parameters.
    #[error("{0}")]
    BadRequest(String),
    /// 422: the answer failed validation.
    #[error("the answer is not valid")]
    Invalid(Vec<FieldError>),
    /// 500: logged with its cause, reported without it.
    #[error("internal error")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// 503: the shared database cannot be reached right now; nothing was changed.
    #[error("the database is unreachable; nothing was changed, try again shortly")]
    Unavailable,
    /// 429 with `Retry-After` (whole seconds): over an hourly budget; nothing was taken.
    #[error("{message}")]
    TooManyRequests {
        /// What was over which limit.
        message: String,
        /// When to try again.
        retry_after: std::time::Duration,
    },
}

/// When to try a model run again after [`BrokerError::RunsUnderWay`]: runs take seconds.
const RUN_RETRY: std::time::Duration = std::time::Duration::from_secs(5);

impl From<BrokerError> for ApiError {
    fn from(e: BrokerError) -> Self {
        match e {
            BrokerError::NotFound => ApiError::NotFound,
            BrokerError::AlreadyDecided(s) => ApiError::Conflict(s),
            BrokerError::HumanOnly | BrokerError::TooManyControls(_) => {
                ApiError::Forbidden(e.to_string())
            }
            BrokerError::InvalidAnswer(errors) => ApiError::Invalid(errors),
            // Outdated, conflicting and unroutable decisions answer 422 like an invalid
            // answer: the question stays open.
            BrokerError::Refused(r) => ApiError::Invalid(vec![FieldError::rule("", r.to_string())]),
            BrokerError::DoorFull(over) => ApiError::TooManyRequests {
                message: e.to_string(),
                retry_after: over.retry_after,
            },
            BrokerError::RunsUnderWay(_) => ApiError::TooManyRequests {
                message: e.to_string(),
                retry_after: RUN_RETRY,
            },
            BrokerError::Store(e) if e.is_unavailable() => {
                tracing::warn!(error = %e, "the database is unreachable");
                ApiError::Unavailable
            }
            e @ (BrokerError::Corrupt(..) | BrokerError::Store(_)) => {
                ApiError::Internal(Box::new(e))
            }
        }
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            ApiError::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let body = match self {
            ApiError::Invalid(errors) => json!({ "errors": errors }),
            ApiError::Internal(cause) => {
                tracing::error!(error = %cause, source = ?std::error::Error::source(&**cause), "API request failed");
                json!({ "error": self.to_string() })
            }
            _ => json!({ "error": self.to_string() }),
        };
        let mut res = HttpResponse::build(self.status_code());
        match self {
            ApiError::Unauthorized => {
                res.insert_header(("WWW-Authenticate", "Bearer"));
            }
            ApiError::TooManyRequests { retry_after, .. } => {
                res.insert_header(("Retry-After", retry_after.as_secs().max(1).to_string()));
            }
            _ => {}
        }
        res.json(body)
    }
}

/// An error of the HTML pages.
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    /// No session cookie: redirect to `/login`.
    #[error("log in first")]
    LoginRequired,
    /// A session cookie that is no longer valid (expired, logged out): redirect to
    /// `/login?ended=1`, which says so.
    #[error("your session has ended; log in again")]
    SessionEnded,
    /// 403 (bad CSRF token, wrong Host/Origin, human-only).
    #[error("{0}")]
    Forbidden(String),
    /// 404.
    #[error("There is no question with this id.")]
    NotFound,
    /// 404 for an unknown route.
    #[error("There is no page at this address.")]
    NoPage,
    /// 409: already decided.
    #[error("This question is already {0}; nothing more was sent.")]
    Conflict(State),
    /// 413.
    #[error("The form is larger than {0} bytes.")]
    TooLarge(usize),
    /// 400: an answer that fails validation where the page cannot show it next to its
    /// question (translated problem by problem).
    #[error("the answer is not valid")]
    Invalid(Vec<FieldError>),
    /// 400: a refused review step or rule (translated).
    #[error("{0}")]
    Step(StepRefusal),
    /// 400 or 403: a request the pages refuse, in words of ours (translated).
    #[error("{0}")]
    Refused(Refusal),
    /// 500: logged with its cause.
    #[error("Something went wrong inside mcp-consent; the details are in its log.")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// 503: the shared database cannot be reached right now.
    #[error("The database cannot be reached right now; nothing was changed. Try again shortly.")]
    Unavailable,
}

impl From<BrokerError> for PageError {
    fn from(e: BrokerError) -> Self {
        match e {
            BrokerError::NotFound => PageError::NotFound,
            BrokerError::AlreadyDecided(s) => PageError::Conflict(s),
            BrokerError::HumanOnly => PageError::Refused(Refusal::HumanOnly),
            BrokerError::InvalidAnswer(errors) => PageError::Invalid(errors),
            BrokerError::Refused(r) => PageError::Step(r),
            BrokerError::Store(e) if e.is_unavailable() => {
                tracing::warn!(error = %e, "the database is unreachable");
                PageError::Unavailable
            }
            // The pages never meet the limit on the token's controls (they set them as the
            // person); a door over its budget there is a fault, not the person's error.
            e @ (BrokerError::Corrupt(..)
            | BrokerError::Store(_)
            | BrokerError::DoorFull(_)
            | BrokerError::RunsUnderWay(_)
            | BrokerError::TooManyControls(_)) => PageError::Internal(Box::new(e)),
        }
    }
}

impl From<askama::Error> for PageError {
    fn from(e: askama::Error) -> Self {
        PageError::Internal(Box::new(e))
    }
}

impl From<crate::auth::AuthError> for PageError {
    fn from(e: crate::auth::AuthError) -> Self {
        PageError::Internal(Box::new(e))
    }
}

impl From<crate::auth::AuthError> for ApiError {
    fn from(e: crate::auth::AuthError) -> Self {
        ApiError::Internal(Box::new(e))
    }
}

/// A request the pages refuse, named so the message can be translated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// 403: the form's CSRF token is missing or stale.
    #[error("The form's security token is missing or out of date; reload the page and try again.")]
    Csrf,
    /// 403: only a person in the browser may answer this question.
    #[error("Only a person may answer this question.")]
    HumanOnly,
    /// 400: the form body could not be read.
    #[error("The form could not be read.")]
    UnreadableForm,
    /// 400: an answer form without accept, decline or cancel.
    #[error("Choose Accept, Decline or Cancel.")]
    ChooseAction,
    /// 400: a review form without a decision.
    #[error("Choose a decision.")]
    ChooseDecision,
    /// 400: the confirm page's payload is not JSON.
    #[error("The confirmed answer could not be read; answer again.")]
    UnreadableConfirmation,
    /// 400: a confirmed form/URL answer that is not an accept.
    #[error("Only an accepted answer is confirmed here.")]
    AcceptOnly,
}

impl Refusal {
    /// The catalogue key of its message.
    pub fn key(self) -> &'static str {
        match self {
            Refusal::Csrf => "refused-csrf",
            Refusal::HumanOnly => "refused-human-only",
            Refusal::UnreadableForm => "refused-unreadable-form",
            Refusal::ChooseAction => "refused-choose-action",
            Refusal::ChooseDecision => "refused-choose-decision",
            Refusal::UnreadableConfirmation => "refused-unreadable-confirmation",
            Refusal::AcceptOnly => "refused-accept-only",
        }
    }
}

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorPage {
    i18n: I18n,
    title: String,
    message: String,
    status: u16,
}

impl PageError {
    /// What the error page says, in the page's language. `Forbidden` messages are shown as
    /// they are.
    pub fn message(&self, i18n: &I18n) -> String {
        match self {
            PageError::LoginRequired => i18n.t("error-login-required"),
            PageError::SessionEnded => i18n.t("error-session-ended"),
            PageError::Forbidden(m) => m.clone(),
            PageError::Invalid(errors) => shown_fields(i18n, errors)
                .into_iter()
                .map(|s| {
                    if s.field.is_empty() {
                        s.message
                    } else {
                        format!("{}: {}", s.field, s.message)
                    }
                })
                .collect::<Vec<_>>()
                .join(" "),
            PageError::Step(r) => refusal(i18n, r),
            PageError::NotFound => i18n.t("error-no-question"),
            PageError::NoPage => i18n.t("error-no-page"),
            PageError::Conflict(s) => i18n
                .msg("error-conflict")
                .arg("state", i18n.word("state", s))
                .to_string(),
            PageError::TooLarge(n) => i18n
                .msg("error-too-large")
                .arg("bytes", Arg::from(*n))
                .to_string(),
            PageError::Refused(r) => i18n.t(r.key()),
            PageError::Internal(_) => i18n.t("error-internal"),
            PageError::Unavailable => i18n.t("error-unavailable"),
        }
    }

    /// The styled error page in `i18n`'s language (a redirect to `/login` for the session
    /// errors), with a plain-text fallback if rendering fails.
    pub fn render(&self, i18n: &I18n) -> HttpResponse {
        let login = match self {
            PageError::LoginRequired => Some("/login"),
            PageError::SessionEnded => Some("/login?ended=1"),
            _ => None,
        };
        if let Some(to) = login {
            return HttpResponse::SeeOther()
                .insert_header((LOCATION, to))
                .finish();
        }
        let status = self.status_code();
        let page = ErrorPage {
            i18n: i18n.clone(),
            title: i18n
                .msg("error-title")
                .arg("status", Arg::from(u32::from(status.as_u16())))
                .to_string(),
            message: self.message(i18n),
            status: status.as_u16(),
        };
        match page.render() {
            Ok(html) => HttpResponse::build(status)
                .insert_header((CONTENT_TYPE, "text/html; charset=utf-8"))
                .insert_header(("Cache-Control", "no-store"))
                .body(html),
            Err(_) => HttpResponse::build(status)
                .insert_header((CONTENT_TYPE, "text/plain; charset=utf-8"))
                .body(self.message(i18n)),
        }
    }
}

impl ResponseError for PageError {
    fn status_code(&self) -> StatusCode {
        match self {
            PageError::LoginRequired | PageError::SessionEnded => StatusCode::SEE_OTHER,
            PageError::Forbidden(_) => StatusCode::FORBIDDEN,
            PageError::NotFound | PageError::NoPage => StatusCode::NOT_FOUND,
            PageError::Conflict(_) => StatusCode::CONFLICT,
            PageError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            PageError::Invalid(_) | PageError::Step(_) => StatusCode::BAD_REQUEST,
            PageError::Refused(Refusal::Csrf | Refusal::HumanOnly) => StatusCode::FORBIDDEN,
            PageError::Refused(_) => StatusCode::BAD_REQUEST,
            PageError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            PageError::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// English: the request's language is not known here; `web::lang::localize_errors`
    /// renders the page again in it.
    fn error_response(&self) -> HttpResponse {
        if let PageError::Internal(cause) = self {
            tracing::error!(error = %cause, source = ?std::error::Error::source(&**cause), "page request failed");
        }
        self.render(&I18n::default())
    }
}
