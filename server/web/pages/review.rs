//! The model review's decisions and edits posted from the question page.

use super::csrf_form::CsrfForm;
use super::ok;
use super::question::gone;
use super::question::rerender;
use super::see_other;
use crate::broker::BrokerError;
use crate::broker::Kind;
use crate::broker::Question;
use crate::broker::State;
use crate::domain::QuestionId;
use crate::domain::Via;
use crate::i18n::I18n;
use crate::review::Decision;
use crate::review::DecisionKind;
use crate::review::Edit;
use crate::review::TextEdit;
use crate::web::AppState;
use crate::web::auth::WebSession;
use crate::web::error::PageError;
use crate::web::error::Refusal;
use crate::web::views::last;
use crate::web::views::problem::shown_broker;
use crate::web::views::summary::SummaryRow;
use crate::web::views::summary::typed_revision;
use actix_web::HttpResponse;
use actix_web::web;
use askama::Template;

use crate::sampling::receipt::ExclusionReason;

/// `POST /questions/{id}/decide`: a review decision (`approvalId`, `decision`, `model`).
pub async fn decide(
    state: web::Data<AppState>,
    i18n: I18n,
    id: web::Path<QuestionId>,
    form: CsrfForm,
) -> Result<HttpResponse, PageError> {
    let CsrfForm {
        session,
        form: pairs,
    } = form;
    let Some(decision) = last(&pairs, "decision").and_then(|d| d.parse::<DecisionKind>().ok())
    else {
        return Err(PageError::Refused(Refusal::ChooseDecision));
    };
    // The request review is one form: the prompt as shown (maybe edited) comes with Approve.
    // A changed prompt is recorded as a new revision (audited) and the approval moves to it,
    // so what runs is what the person saw.
    let edit = (decision == DecisionKind::Approve && last(&pairs, "baseRevision").is_some())
        .then(|| edit_of(&pairs));
    let model = last(&pairs, "model")
        .filter(|m| !m.is_empty())
        .map(str::to_owned);
    let over_cap_confirmed = last(&pairs, "overCap") == Some(OVER_CAP_CONFIRMED);
    if let (Some(model), false, DecisionKind::Approve | DecisionKind::Regenerate) =
        (&model, over_cap_confirmed, decision)
        && let Some(page) = over_cap_page(&state, &session, &i18n, &id, model, &pairs).await?
    {
        return ok(&page);
    }
    let decision = Decision {
        approval_id: last(&pairs, "approvalId").unwrap_or_default().to_owned(),
        decision,
        model,
        edit,
        over_cap_confirmed,
    };
    match state
        .review
        .decide(&id, &decision, &Via::Browser.into())
        .await
    {
        // Back at the decision: the run's status and then its answer come where the eye is.
        Ok(_) => Ok(see_other(&format!("/questions/{id}#decision"))),
        Err(e) => {
            refused(&state, &i18n, &session, &id, e, |_| {
                typed_revision(&i18n, &pairs)
            })
            .await
        }
    }
}

/// `POST /questions/{id}/revise`: saves an edit of the system prompt and text blocks as a new
/// revision (`baseRevision`, `systemPrompt`, `text.<message>.<block>`).
pub async fn revise(
    state: web::Data<AppState>,
    i18n: I18n,
    id: web::Path<QuestionId>,
    form: CsrfForm,
) -> Result<HttpResponse, PageError> {
    let CsrfForm {
        session,
        form: pairs,
    } = form;
    let edit = edit_of(&pairs);
    match state
        .review
        .edit_sampling(&id, &edit, &Via::Browser.into())
        .await
    {
        Ok(_) => Ok(see_other(&format!("/questions/{id}"))),
        Err(e) => {
            refused(&state, &i18n, &session, &id, e, |_| {
                typed_revision(&i18n, &pairs)
            })
            .await
        }
    }
}

/// The edit a request review form posts (`baseRevision`, `systemPrompt`,
/// `text.<message>.<block>`).
fn edit_of(pairs: &[(String, String)]) -> Edit {
    Edit {
        base_revision: last(pairs, "baseRevision")
            .and_then(|r| r.parse().ok())
            .unwrap_or(0),
        system_prompt: last(pairs, "systemPrompt").map(str::to_owned),
        texts: pairs
            .iter()
            .filter_map(|(k, v)| {
                let mut parts = k.strip_prefix("text.")?.split('.');
                Some(TextEdit {
                    message: parts.next()?.parse().ok()?,
                    block: parts.next()?.parse().ok()?,
                    text: v.clone(),
                })
            })
            .collect(),
    }
}

/// A refused review step: the page again with the problems when the question stays open, the
/// "gone" page (409, with `lost` shown back) when it went away meanwhile, else the error.
async fn refused(
    state: &AppState,
    i18n: &I18n,
    session: &WebSession,
    id: &QuestionId,
    e: BrokerError,
    lost: impl FnOnce(&Question) -> Vec<SummaryRow>,
) -> Result<HttpResponse, PageError> {
    if let Some(errors) = shown_broker(i18n, &e) {
        let q = state.broker.get(id).await?;
        return rerender(state, i18n, session, &q, None, &errors).await;
    }
    if let BrokerError::AlreadyDecided(_) = e {
        // Also raised for a reused approval id while the question is still open.
        if state.broker.get(id).await?.state != State::Pending {
            return gone(state, i18n, session, id, lost).await;
        }
    }
    Err(e.into())
}

/// The value of `overCap` that the over-cap confirmation's button posts.
const OVER_CAP_CONFIRMED: &str = "confirmed";

/// The confirmation before a model over the cost cap runs: its estimate and the cap, what was
/// posted kept so "Run anyway" posts the same decision again with `overCap=confirmed`.
#[derive(Template)]
#[template(path = "over_cap.html")]
pub struct OverCapPage {
    pub i18n: I18n,
    pub csrf: String,
    pub id: QuestionId,
    pub server: String,
    pub model: String,
    /// The model's estimate for this request, e.g. `$0.0032`.
    pub cost: String,
    /// The per-request cap, e.g. `$0.0010`.
    pub cap: String,
    /// What the person posted (all but `csrf`), posted again by "Run anyway".
    pub kept: Vec<(String, String)>,
}

/// The over-cap confirmation when `model` is excluded only for its estimate over the cap, else
/// `None` (the review decides, and refuses any other exclusion).
async fn over_cap_page(
    state: &AppState,
    session: &WebSession,
    i18n: &I18n,
    id: &QuestionId,
    model: &str,
    pairs: &[(String, String)],
) -> Result<Option<OverCapPage>, PageError> {
    let q = state.broker.get(id).await?;
    if q.kind != Kind::Sampling || q.state != State::Pending || state.review.engine().is_none() {
        return Ok(None);
    }
    let review = state.review.review(&q).await?;
    let over = review
        .route
        .receipt
        .exclusions
        .iter()
        .filter(|e| e.model == model && e.only_over_budget())
        .flat_map(|e| &e.reasons)
        .find_map(|r| match r {
            ExclusionReason::OverBudget {
                estimated_cost_usd,
                cap_usd,
            } => Some((*estimated_cost_usd, *cap_usd)),
            _ => None,
        });
    Ok(over.map(|(cost, cap)| OverCapPage {
        i18n: i18n.clone().at(&format!("/questions/{id}")),
        csrf: session.csrf.clone(),
        id: q.id.clone(),
        server: q.server.clone(),
        model: model.to_owned(),
        cost: i18n.usd(Some(cost)),
        cap: i18n.usd(Some(cap)),
        kept: pairs.iter().filter(|(k, _)| k != "csrf").cloned().collect(),
    }))
}
