//! The review page of one question: what it shows, and the page again after a refused or lost answer.

use super::html;
use super::ok;
use super::why::WhyView;
use super::why::why;
use crate::broker::Kind;
use crate::broker::Question;
use crate::broker::State;
use crate::domain::Audience;
use crate::domain::Phase;
use crate::domain::QuestionId;
use crate::domain::RunState;
use crate::domain::StopReason;
use crate::i18n::{Arg, I18n};
use crate::review::DecisionKind;
use crate::web::AppState;
use crate::web::auth::WebSession;
use crate::web::error::PageError;
use crate::web::views::diff::LineChange;
use crate::web::views::form::Control;
use crate::web::views::form::FieldView;
use crate::web::views::form::field_views;
use crate::web::views::problem::Shown;
use crate::web::views::review::ModelReview;
use crate::web::views::review::model_review;
use crate::web::views::sampling::BlockKind;
use crate::web::views::sampling::PERSON_MODEL;
use crate::web::views::sampling::SamplingInput;
use crate::web::views::sampling::SamplingView;
use crate::web::views::sampling::pretty;
use crate::web::views::sampling::sampling_view;
use crate::web::views::summary::SummaryRow;
use crate::web::views::text::Moment;
use crate::web::views::text::bidi_places;
use crate::web::views::text::is_bidi_control;
use crate::web::views::text::moment;
use crate::web::views::tool_call::ToolCallView;
use crate::web::views::tool_call::tool_call_view;
use crate::web::views::url::UrlPiece;
use crate::web::views::url::UrlView;
use crate::web::views::url::inline_code_points;
use crate::web::views::url::url_view;
use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use actix_web::web;
use askama::Template;
use serde_json::Value;
use serde_json::json;

#[derive(Template)]
#[template(path = "question.html")]
pub struct QuestionPage {
    pub i18n: I18n,
    pub csrf: String,
    /// The `<title>`: kind and server, the server name isolated with U+2068/U+2069 (a title
    /// cannot hold markup).
    pub title: String,
    pub id: QuestionId,
    pub kind: Kind,
    pub server: String,
    pub tool: String,
    pub state: State,
    pub pending: bool,
    /// A URL question's link may be opened now (the broker's rule, [`State::url_may_open`]).
    pub url_may_open: bool,
    pub audience: Audience,
    /// A form or a link that came with the API token over TCP, not from a proxy on this
    /// computer: the page says so before the person types a secret or opens the link (a tool
    /// call says so in its own part).
    pub over_tcp: bool,
    /// Why a person-only form is so, one line per matched word (empty otherwise).
    pub person_only_because: Vec<String>,
    pub era: &'static str,
    pub protocol_version: String,
    pub created_at: Moment,
    pub expires_at: Moment,
    pub message: String,
    /// Where server text holds invisible bidi controls ([`bidi_places`]); a warning when any.
    pub bidi: Vec<String>,
    /// What the person had typed when the question went away under them (answered elsewhere,
    /// withdrawn, expired): shown back so it is not lost. Empty otherwise.
    pub lost: Vec<SummaryRow>,
    pub url: Option<UrlView>,
    pub fields: Vec<FieldView>,
    pub sampling: Option<SamplingView>,
    /// A tool call: the tool, its claims, the arguments and the edit box.
    pub tool_call: Option<ToolCallView>,
    pub answer_text: String,
    pub answer_model: String,
    /// The stop reason the form shows selected (none for a value the form does not offer).
    pub answer_stop: Option<StopReason>,
    /// The stop reasons the form offers.
    pub stop_reasons: &'static [StopReason],
    /// The JSON answer textarea (a skeleton until the person edits it).
    pub answer_json: String,
    /// Two-step model review, when models are configured.
    pub model: Option<ModelReview>,
    /// Why the person is asked: host session, tool call, the server's earlier questions.
    pub why: Option<WhyView>,
    /// The error summary at the top of the page (every error, form fields' ones linked).
    pub errors: Vec<ErrorItem>,
    pub raw_request: String,
    pub response: String,
    /// Once decided: what happened and when, in one sentence ("Sent to X at 10:42.").
    pub what_happened: String,
    /// Once decided: the oldest other waiting question (as the queue lists them), to go on with.
    pub next: Option<NextQuestion>,
}

/// The next question waiting for a person, linked from a decided question's outcome.
pub struct NextQuestion {
    pub id: QuestionId,
    pub server: String,
    /// The wire name of its kind (the link's words select on it).
    pub kind: String,
    /// How many more wait after it.
    pub more: usize,
}

/// The most waiting questions looked at for the next one.
const NEXT_LOOKAHEAD: i64 = 200;

/// Fills in what the page needs from the service beyond the question itself: the model review
/// of a sampling question and, once decided, the next waiting question.
pub async fn complete_page(
    state: &AppState,
    q: &Question,
    i18n: &I18n,
    page: &mut QuestionPage,
) -> Result<(), PageError> {
    page.model = model_review(state, q, i18n).await?;
    page.why = Some(why(state, q).await?);
    if q.state != State::Pending {
        let waiting: Vec<Question> = state
            .broker
            .pending(NEXT_LOOKAHEAD)
            .await?
            .into_iter()
            .filter(|w| w.id != q.id)
            .collect();
        page.next = waiting.first().map(|w| NextQuestion {
            id: w.id.clone(),
            server: w.server.clone(),
            kind: w.kind.as_str().to_owned(),
            more: waiting.len() - 1,
        });
    }
    Ok(())
}

/// What happened to a decided question and when, in `i18n`'s language (empty while pending).
fn what_happened(i18n: &I18n, q: &Question) -> String {
    let Some(at) = q.decided_at.filter(|_| q.state != State::Pending) else {
        return String::new();
    };
    let clock = at.with_timezone(&chrono::Local).format("%H:%M").to_string();
    i18n.msg("outcome-when")
        .arg("state", Arg::from(q.state.as_str()))
        .arg("kind", Arg::from(q.kind.as_str()))
        .arg("server", Arg::server(&inline_code_points(&q.server)))
        .arg("time", Arg::from(clock))
        .to_string()
}

impl QuestionPage {
    /// Whether the request opens unfolded: while nothing has run (no model review, or its
    /// request review); during and after a run it folds away below the current step.
    pub fn request_open(&self) -> bool {
        self.pending
            && self
                .model
                .as_ref()
                .is_none_or(|m| m.phase == Some(Phase::RequestReview))
    }

    /// Whether the hand-written answer is offered: without a model review, or in one of its
    /// review steps, never while the model runs.
    pub fn manual_offered(&self) -> bool {
        self.model
            .as_ref()
            .is_none_or(|m| m.phase != Some(Phase::Running))
    }

    /// The running step's status, naming the model when known.
    pub fn running_text(&self) -> String {
        match self.model.as_ref().and_then(|m| m.run.as_ref()) {
            Some(r) => self
                .i18n
                .msg("review-running")
                .arg("model", r.model.as_str())
                .to_string(),
            None => self.i18n.t("review-running-unnamed"),
        }
    }

    /// The model Regenerate starts from: the one that just ran, else the routed one.
    pub fn last_model(&self) -> String {
        self.model.as_ref().map_or_else(String::new, |m| {
            m.run
                .as_ref()
                .map_or_else(|| m.routed.clone(), |r| r.model.clone())
        })
    }

    /// What the live page compares to notice a change it may have missed between being rendered
    /// and subscribing to events: the state, and for a model review its phase and the approval
    /// ids (which name the revision and the run). Equal versions show the same decision.
    pub fn live_version(&self) -> String {
        match &self.model {
            Some(m) => format!(
                "{}|{}|{}|{}",
                self.state,
                m.phase.map_or("", |p| p.as_str()),
                m.request_approval_id,
                m.response_approval_id
                    .as_ref()
                    .map_or(String::new(), |a| a.to_string()),
            ),
            None => self.state.to_string(),
        }
    }
}

/// One entry of the error summary: a refused answer's problem, linked to its field when the
/// page has an input for it (WCAG 3.3.1: the person can jump to what to fix).
pub struct ErrorItem {
    /// What names the field: a form field's label, else the answer's field name; empty when the
    /// error concerns the whole answer.
    pub field: String,
    /// The id of the field's input (`field.<name>`), the link's target; empty when none.
    pub target: String,
    /// What is wrong.
    pub message: String,
}

/// A `tool_use` id the conversation has not used yet (`call_1`, `call_2`, …): a result reusing
/// one would answer a call that was already made.
fn fresh_tool_use_id(request: &Value) -> String {
    let text = request
        .get("messages")
        .map(Value::to_string)
        .unwrap_or_default();
    (1..)
        .map(|n| format!("call_{n}"))
        .find(|id| !text.contains(&format!("\"{id}\"")))
        .unwrap_or_default()
}

/// A well-formed `CreateMessageResult` to start the JSON answer from: a `tool_use` of the first
/// offered tool when the request allows tool use, else a text block.
pub fn result_skeleton(request: &Value) -> String {
    let tools_allowed = request
        .get("toolChoice")
        .and_then(|c| c.get("mode"))
        .and_then(Value::as_str)
        != Some("none");
    let first_tool = request
        .get("tools")
        .and_then(Value::as_array)
        .and_then(|t| t.first())
        .and_then(|t| t.get("name"))
        .and_then(Value::as_str);
    let skeleton = match first_tool {
        Some(name) if tools_allowed => json!({
            "role": "assistant",
            "content": [{"type": "tool_use", "id": fresh_tool_use_id(request), "name": name, "input": {}}],
            "model": PERSON_MODEL,
            "stopReason": "toolUse",
        }),
        _ => json!({
            "role": "assistant",
            "content": {"type": "text", "text": ""},
            "model": PERSON_MODEL,
            "stopReason": "endTurn",
        }),
    };
    pretty(&skeleton)
}

/// A server's name for a `<title>`, which cannot hold `<bdi>`: as it is, unless it holds
/// right-to-left letters or direction controls that could reorder the title's own words; then
/// isolated ([`Arg::server`]). Invisible isolates in every title would only get in the way
/// (tab names, bookmarks, screen readers).
fn title_server(name: &str) -> Arg<'static> {
    // Its invisible characters as code points, as every page shows a server's name.
    let name = &inline_code_points(name);
    let rtl = |c: char| {
        is_bidi_control(c)
            || matches!(c, '\u{0590}'..='\u{08FF}' | '\u{FB1D}'..='\u{FDFF}' | '\u{FE70}'..='\u{FEFF}')
    };
    if name.chars().any(rtl) {
        Arg::server(name)
    } else {
        Arg::from(name.to_owned())
    }
}

/// The page's `<title>`: the question's kind and server.
fn page_title(i18n: &I18n, q: &Question) -> String {
    i18n.msg("question-title")
        .arg("kind", i18n.word("kind", &q.kind))
        .arg("server", title_server(&q.server))
        .to_string()
}

/// The error summary: each problem named by its form field's label and linked to its input
/// when the form has one, else by the answer's field name.
fn error_items(errors: &[Shown], fields: &[FieldView]) -> Vec<ErrorItem> {
    errors
        .iter()
        .map(|e| match fields.iter().find(|f| f.name == e.field) {
            Some(f) => ErrorItem {
                field: f.label.clone(),
                target: f.input.clone(),
                message: e.message.clone(),
            },
            None => ErrorItem {
                field: e.field.clone(),
                target: String::new(),
                message: e.message.clone(),
            },
        })
        .collect()
}

/// The page of `q` in `i18n`'s language; `now` (the broker's clock) dates its times.
pub fn question_page(
    now: chrono::DateTime<chrono::Utc>,
    i18n: &I18n,
    session: &WebSession,
    q: &Question,
    input: Option<&[(String, String)]>,
    errors: &[Shown],
) -> Result<QuestionPage, PageError> {
    let fields = match q.kind {
        Kind::Form => field_views(i18n, &q.form_schema()?, input, errors),
        _ => Vec::new(),
    };
    let sampling_input = input.map(SamplingInput::from_pairs);
    let s = |k: &str| {
        q.request
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    Ok(QuestionPage {
        // Also the page of the POSTs that render it (422, 409): the switcher comes back here.
        i18n: i18n.clone().at(&format!("/questions/{}", q.id)),
        csrf: session.csrf.clone(),
        title: page_title(i18n, q),
        bidi: bidi_places(i18n, &q.server, q.tool.as_deref(), &q.request),
        lost: Vec::new(),
        id: q.id.clone(),
        kind: q.kind,
        over_tcp: matches!(q.kind, Kind::Form | Kind::Url)
            && q.opened_via == Some(crate::domain::Via::Token),
        server: q.server.clone(),
        tool: q.tool.clone().unwrap_or_default(),
        state: q.state,
        pending: q.state == State::Pending,
        url_may_open: q.state.url_may_open(),
        audience: q.audience,
        person_only_because: person_only_because(i18n, q),
        era: q.era.as_str(),
        protocol_version: q.protocol_version.clone(),
        created_at: moment(q.created_at, now),
        expires_at: moment(q.expires_at, now),
        message: s("message"),
        url: (q.kind == Kind::Url).then(|| url_view(i18n, &s("url"), &s("message"))),
        sampling: (q.kind == Kind::Sampling).then(|| sampling_view(q)),
        tool_call: (q.kind == Kind::ToolCall).then(|| tool_call_view(i18n, q, input)),
        answer_text: sampling_input
            .as_ref()
            .map(|i| i.text.clone())
            .unwrap_or_default(),
        answer_model: sampling_input
            .as_ref()
            .map_or_else(|| PERSON_MODEL.to_owned(), |i| i.model.clone()),
        answer_json: sampling_input
            .as_ref()
            .and_then(|i| i.json.clone())
            .unwrap_or_else(|| result_skeleton(&q.request)),
        model: None,
        why: None,
        answer_stop: sampling_input
            .map_or(Some(StopReason::EndTurn), |i| i.stop_reason.parse().ok()),
        stop_reasons: StopReason::FORM,
        errors: error_items(errors, &fields),
        raw_request: pretty(&q.request),
        response: q.response.as_ref().map(pretty).unwrap_or_default(),
        what_happened: what_happened(i18n, q),
        next: None,
        fields,
    })
}

/// `GET /questions/{id}`: the review page (or the outcome, once decided).
pub async fn question(
    state: web::Data<AppState>,
    session: WebSession,
    i18n: I18n,
    id: web::Path<QuestionId>,
) -> Result<HttpResponse, PageError> {
    let q = state.broker.get(&id).await?;
    let mut page = question_page(state.broker.now(), &i18n, &session, &q, None, &[])?;
    complete_page(&state, &q, &i18n, &mut page).await?;
    ok(&page)
}

/// The question page again with the person's input: 422 with `errors`, or 200 for "Back".
pub async fn rerender(
    state: &AppState,
    i18n: &I18n,
    session: &WebSession,
    q: &Question,
    pairs: Option<&[(String, String)]>,
    errors: &[Shown],
) -> Result<HttpResponse, PageError> {
    let mut page = question_page(state.broker.now(), i18n, session, q, pairs, errors)?;
    complete_page(state, q, i18n, &mut page).await?;
    let status = if errors.is_empty() {
        StatusCode::OK
    } else {
        StatusCode::UNPROCESSABLE_ENTITY
    };
    Ok(html(status, page.render()?))
}

/// The question went away while the person answered it (answered elsewhere, withdrawn,
/// expired): 409 with the page saying what happened and showing back what they typed.
pub async fn gone(
    state: &AppState,
    i18n: &I18n,
    session: &WebSession,
    id: &QuestionId,
    lost: impl FnOnce(&Question) -> Vec<SummaryRow>,
) -> Result<HttpResponse, PageError> {
    let q = state.broker.get(id).await?;
    let mut page = question_page(state.broker.now(), i18n, session, &q, None, &[])?;
    page.lost = lost(&q);
    complete_page(state, &q, i18n, &mut page).await?;
    Ok(html(StatusCode::CONFLICT, page.render()?))
}

/// The lines saying why a person-only form is so: each listed word that matched and where, or
/// that every form is person-only by the setting.
fn person_only_because(i18n: &I18n, q: &Question) -> Vec<String> {
    use crate::broker::audience::HintPlace;
    use crate::broker::person_only::PersonOnly;
    use crate::i18n::Arg;
    match PersonOnly::of(q) {
        Some(PersonOnly::Secret(hints)) => hints
            .iter()
            .map(|h| {
                let place = match &h.place {
                    HintPlace::Message => i18n.t("form-place-message"),
                    HintPlace::FieldName(f) => i18n
                        .msg("form-place-field-name")
                        .arg("field", Arg::server(f))
                        .to_string(),
                    HintPlace::FieldTitle(f) => i18n
                        .msg("form-place-field-title")
                        .arg("field", Arg::server(f))
                        .to_string(),
                    HintPlace::FieldDescription(f) => i18n
                        .msg("form-place-field-description")
                        .arg("field", Arg::server(f))
                        .to_string(),
                    HintPlace::Choice(f) => i18n
                        .msg("form-place-choice")
                        .arg("field", Arg::server(f))
                        .to_string(),
                };
                i18n.msg("form-person-only-because")
                    .arg("word", h.word)
                    .arg("place", Arg::Text(place.into()))
                    .to_string()
            })
            .collect(),
        Some(PersonOnly::EveryForm) => vec![i18n.t("form-person-only-every-form")],
        _ => Vec::new(),
    }
}
