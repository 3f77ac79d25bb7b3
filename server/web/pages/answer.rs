//! Answering a question from its page: the answer form's post, the confirm step that shows
//! exactly what "Send" delivers, and the send itself.

use super::csrf_form::CsrfForm;
use super::form_answer::{PageAction, answer_from_form};
use super::ok;
use super::question::gone;
use super::question::rerender;
use super::see_other;
use super::tool_call::answer_tool_call;
use crate::broker::Answerer;
use crate::broker::BrokerError;
use crate::broker::Kind;
use crate::broker::Question;
use crate::broker::State;
use crate::domain::Action;
use crate::domain::QuestionId;
use crate::i18n::I18n;
use crate::web::AppState;
use crate::web::auth::WebSession;
use crate::web::error::PageError;
use crate::web::error::Refusal;
use crate::web::views::last;
use crate::web::views::problem::shown_fields;
use crate::web::views::sampling::pretty;
use crate::web::views::summary::SummaryRow;
use crate::web::views::summary::content_summary;
use crate::web::views::summary::result_summary;
use crate::web::views::summary::typed_summary;
use crate::wire::Answer;
use actix_web::HttpResponse;
use actix_web::web;
use askama::Template;
use serde_json::Value;

#[derive(Template)]
#[template(path = "confirm.html")]
pub struct ConfirmPage {
    pub i18n: I18n,
    pub csrf: String,
    pub id: QuestionId,
    pub kind: &'static str,
    pub server: String,
    /// The server's message (a form question's), shown again above the answer.
    pub message: String,
    /// The JSON-RPC id the result answers.
    pub rpc_id: String,
    /// The `result` that "Send" delivers, pretty-printed (shown as is).
    pub result: String,
    /// The same `result`, compact, carried to `/send` (validated again there).
    pub payload: String,
    /// A form answer field by field, in the form's words (empty for sampling).
    pub summary: Vec<SummaryRow>,
    /// What the person submitted (all but `csrf` and `action`), posted back by "Back" so the
    /// form comes back exactly as they left it.
    pub kept: Vec<(String, String)>,
}

/// `POST /questions/{id}/answer`: Decline and Cancel are sent at once; Accept validates the
/// input and shows the confirm page with exactly the JSON that "Send" will deliver. Invalid
/// input re-renders the form with the input kept and the fields marked (422).
pub async fn answer(
    state: web::Data<AppState>,
    i18n: I18n,
    id: web::Path<QuestionId>,
    form: CsrfForm,
) -> Result<HttpResponse, PageError> {
    let CsrfForm {
        session,
        form: pairs,
    } = form;
    let q = state.broker.get(&id).await?;
    if q.state != State::Pending {
        return gone(&state, &i18n, &session, &q.id, |q| {
            typed_summary(&i18n, q, &pairs)
        })
        .await;
    }
    if q.kind == Kind::ToolCall {
        return answer_tool_call(&state, &i18n, &session, &q, &pairs).await;
    }
    let action = match PageAction::of(&pairs) {
        Some(PageAction::Accept) => Action::Accept,
        Some(PageAction::Decline) => Action::Decline,
        Some(PageAction::Cancel) => Action::Cancel,
        // "Back" from the confirm page: the form again, exactly as submitted.
        Some(PageAction::Edit) => {
            return rerender(&state, &i18n, &session, &q, Some(&pairs), &[]).await;
        }
        None => return Err(PageError::Refused(Refusal::ChooseAction)),
    };
    if action != Action::Accept {
        return send_refusal(&state, &i18n, &session, &q, action).await;
    }
    let answer = match answer_from_form(&q, &pairs) {
        Ok(a) => a,
        Err(errors) => {
            let errors = shown_fields(&i18n, &errors);
            return rerender(&state, &i18n, &session, &q, Some(&pairs), &errors).await;
        }
    };
    match state
        .broker
        .preview(&q.id, &answer, Answerer::Browser)
        .await
    {
        Ok(response) => confirm_page(&i18n, &session, &q, &answer, &pairs, &response),
        Err(BrokerError::InvalidAnswer(errors)) => {
            let errors = shown_fields(&i18n, &errors);
            rerender(&state, &i18n, &session, &q, Some(&pairs), &errors).await
        }
        Err(BrokerError::AlreadyDecided(_)) => {
            gone(&state, &i18n, &session, &q.id, |q| {
                typed_summary(&i18n, q, &pairs)
            })
            .await
        }
        Err(e) => Err(e.into()),
    }
}

/// Sends a decline or cancel at once and shows the question's outcome.
async fn send_refusal(
    state: &AppState,
    i18n: &I18n,
    session: &WebSession,
    q: &Question,
    action: Action,
) -> Result<HttpResponse, PageError> {
    let refusal = Answer {
        action,
        content: None,
        result: None,
        arguments: None,
        grant: None,
    };
    match state
        .broker
        .answer(&q.id, &refusal, Answerer::Browser)
        .await
    {
        Ok(_) => Ok(see_other(&format!("/questions/{}", q.id))),
        Err(BrokerError::AlreadyDecided(_)) => {
            gone(state, i18n, session, &q.id, |_| Vec::new()).await
        }
        Err(e) => Err(e.into()),
    }
}

/// The confirm page: the `result` the previewed `response` carries, which "Send" delivers, and
/// a form answer field by field.
fn confirm_page(
    i18n: &I18n,
    session: &WebSession,
    q: &Question,
    answer: &Answer,
    pairs: &[(String, String)],
    response: &Value,
) -> Result<HttpResponse, PageError> {
    let result = response.get("result").cloned().unwrap_or(Value::Null);
    let summary = match (q.kind, &answer.content) {
        (Kind::Form, Some(Value::Object(content))) => {
            content_summary(i18n, &q.form_schema()?, content)
        }
        _ => Vec::new(),
    };
    ok(&ConfirmPage {
        i18n: i18n.clone().at(&format!("/questions/{}", q.id)),
        summary,
        kept: pairs
            .iter()
            .filter(|(k, _)| k != "csrf" && k != "action")
            .cloned()
            .collect(),
        csrf: session.csrf.clone(),
        id: q.id.clone(),
        kind: q.kind.as_str(),
        server: q.server.clone(),
        message: q
            .request
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        rpc_id: q.rpc_id.to_string(),
        result: pretty(&result),
        payload: result.to_string(),
    })
}

/// `POST /questions/{id}/send`: delivers the confirmed answer (validated again), then shows
/// the question's outcome.
pub async fn send(
    state: web::Data<AppState>,
    i18n: I18n,
    id: web::Path<QuestionId>,
    form: CsrfForm,
) -> Result<HttpResponse, PageError> {
    let CsrfForm {
        session,
        form: pairs,
    } = form;
    if last(&pairs, "action") != Some("send") {
        return Ok(see_other(&format!("/questions/{id}")));
    }
    let result: Value = serde_json::from_str(last(&pairs, "payload").unwrap_or_default())
        .map_err(|_| PageError::Refused(Refusal::UnreadableConfirmation))?;
    let q = state.broker.get(&id).await?;
    if q.state != State::Pending {
        return gone(&state, &i18n, &session, &q.id, |q| {
            result_summary(&i18n, q, &result)
        })
        .await;
    }
    let answer = match q.kind {
        Kind::Sampling => Answer {
            action: Action::Accept,
            content: None,
            result: Some(result.clone()),
            arguments: None,
            grant: None,
        },
        Kind::Form | Kind::Url | Kind::ToolCall => {
            if result.get("action").and_then(Value::as_str) != Some("accept") {
                return Err(PageError::Refused(Refusal::AcceptOnly));
            }
            Answer {
                action: Action::Accept,
                content: result.get("content").cloned(),
                result: None,
                arguments: None,
                grant: None,
            }
        }
    };
    match state.broker.answer(&id, &answer, Answerer::Browser).await {
        Ok(_) => Ok(see_other(&format!("/questions/{id}"))),
        Err(BrokerError::AlreadyDecided(_)) => {
            gone(&state, &i18n, &session, &id, |q| {
                result_summary(&i18n, q, &result)
            })
            .await
        }
        Err(BrokerError::InvalidAnswer(errors)) => {
            let errors = shown_fields(&i18n, &errors);
            rerender(&state, &i18n, &session, &q, None, &errors).await
        }
        Err(e) => Err(e.into()),
    }
}
