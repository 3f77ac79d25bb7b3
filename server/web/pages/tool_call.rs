//! A tool-call question's form: the person allows the call once (as shown, or with edited
//! arguments), allows it with a grant, or declines it. Sent at once: the page already shows
//! exactly the call that goes out.

use super::form_answer::{PageAction, answer_from_form, grant_span};
use super::question::gone;
use super::question::rerender;
use super::see_other;
use crate::broker::Answerer;
use crate::broker::BrokerError;
use crate::broker::Question;
use crate::domain::Action;
use crate::i18n::I18n;
use crate::web::AppState;
use crate::web::auth::WebSession;
use crate::web::error::PageError;
use crate::web::error::Refusal;
use crate::web::views::last;
use crate::web::views::problem::shown_fields;
use crate::wire::Answer;
use actix_web::HttpResponse;

/// A tool-call question's form: "Allow once" (with the edit box's arguments when changed), a
/// grant button (allow once and from now on), or "Decline"; sent at once, since the page
/// already shows exactly the call that goes out. Invalid arguments re-render the page (422).
pub async fn answer_tool_call(
    state: &AppState,
    i18n: &I18n,
    session: &WebSession,
    q: &Question,
    pairs: &[(String, String)],
) -> Result<HttpResponse, PageError> {
    let granted = last(pairs, "grant").and_then(grant_span);
    // An unknown action is refused even beside a grant: only a missing one means the grant
    // button alone was pressed.
    let action = last(pairs, "action").map(PageAction::named);
    let answer = match (action, granted) {
        (Some(Some(PageAction::Decline)), None) => Answer {
            action: Action::Decline,
            content: None,
            result: None,
            arguments: None,
            grant: None,
        },
        (Some(Some(PageAction::Accept)), _) | (None, Some(_)) => match answer_from_form(q, pairs) {
            Ok(answer) => answer,
            Err(errors) => {
                let errors = shown_fields(i18n, &errors);
                return rerender(state, i18n, session, q, Some(pairs), &errors).await;
            }
        },
        _ => return Err(PageError::Refused(Refusal::ChooseAction)),
    };
    match state.broker.answer(&q.id, &answer, Answerer::Browser).await {
        Ok(_) => Ok(see_other(&format!("/questions/{}", q.id))),
        Err(BrokerError::InvalidAnswer(errors)) => {
            let errors = shown_fields(i18n, &errors);
            rerender(state, i18n, session, q, Some(pairs), &errors).await
        }
        Err(BrokerError::AlreadyDecided(_)) => {
            gone(state, i18n, session, &q.id, |_| Vec::new()).await
        }
        Err(e) => Err(e.into()),
    }
}
