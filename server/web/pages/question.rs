//! The review page of one question, answering it (with the confirm step) and opening a URL question's link.

use super::*;
use crate::domain::QuestionId;

#[derive(Template)]
#[template(path = "question.html")]
pub struct QuestionPage {
    pub i18n: I18n,
    pub csrf: String,
    /// The `<title>`: kind and server, the server name isolated with U+2068/U+2069 (a title
    /// cannot hold markup).
    pub title: String,
    pub id: String,
    pub kind: Kind,
    pub server: String,
    pub tool: String,
    pub state: State,
    pub pending: bool,
    /// A URL question's link may be opened now (the broker's rule, [`State::url_may_open`]).
    pub url_may_open: bool,
    pub audience: Audience,
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
}

impl QuestionPage {
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
    id: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    open_or_confirm(&state, &session, &i18n, &id, false).await
}

/// `POST /questions/{id}/open`: the confirmation page's button (CSRF-checked). Opens the URL
/// only when the form carries `confirm=local-network`; otherwise shows the confirmation again.
pub async fn open_url_confirmed(
    state: web::Data<AppState>,
    session: WebSession,
    i18n: I18n,
    id: web::Path<String>,
    payload: web::Payload,
) -> Result<HttpResponse, PageError> {
    let pairs = form_pairs(payload).await?;
    session.check_csrf(last(&pairs, "csrf"))?;
    let confirmed = last(&pairs, "confirm") == Some(CONFIRM_LOCAL);
    let i18n = i18n.at(&format!("/questions/{id}"));
    open_or_confirm(&state, &session, &i18n, &id, confirmed).await
}

async fn open_or_confirm(
    state: &AppState,
    session: &WebSession,
    i18n: &I18n,
    id: &str,
    confirmed: bool,
) -> Result<HttpResponse, PageError> {
    let q = state.broker.get(id).await?;
    if q.kind == Kind::Url && !confirmed {
        let u = url_view(
            i18n,
            q.request
                .get("url")
                .and_then(Value::as_str)
                .unwrap_or_default(),
        );
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
            "content": [{"type": "tool_use", "id": "call_1", "name": name, "input": {}}],
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
        title: i18n.t2(
            "question-title",
            "kind",
            i18n.word("kind", &q.kind),
            "server",
            Arg::server(&q.server),
        ),
        bidi: bidi_places(i18n, &q.server, q.tool.as_deref(), &q.request),
        lost: Vec::new(),
        id: q.id.to_string(),
        kind: q.kind,
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
        url: (q.kind == Kind::Url).then(|| url_view(i18n, &s("url"))),
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
        errors: errors
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
            .collect(),
        raw_request: pretty(&q.request),
        response: q.response.as_ref().map(pretty).unwrap_or_default(),
        fields,
    })
}

/// `GET /questions/{id}`: the review page (or the outcome, once decided).
pub async fn question(
    state: web::Data<AppState>,
    session: WebSession,
    i18n: I18n,
    id: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let q = state.broker.get(&id).await?;
    let mut page = question_page(state.broker.now(), &i18n, &session, &q, None, &[])?;
    page.model = model_review(&state, &q, &i18n).await?;
    page.why = Some(why(&state, &q).await?);
    ok(&page)
}

#[derive(Template)]
#[template(path = "confirm.html")]
pub struct ConfirmPage {
    pub i18n: I18n,
    pub csrf: String,
    pub id: String,
    pub kind: &'static str,
    pub server: String,
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

/// The answer a submitted review form stands for.
pub fn answer_from_form(
    q: &Question,
    pairs: &[(String, String)],
) -> Result<Answer, Vec<FieldError>> {
    match q.kind {
        Kind::Form => {
            let schema = q.form_schema().map_err(|e| {
                vec![FieldError::whole(Problem::Schema {
                    detail: e.to_string(),
                })]
            })?;
            let content = schema.content_from_form(pairs)?;
            Ok(Answer {
                action: Action::Accept,
                content: Some(Value::Object(content)),
                result: None,
                arguments: None,
                grant: None,
            })
        }
        Kind::Sampling => Ok(Answer {
            action: Action::Accept,
            content: None,
            result: Some(SamplingInput::from_pairs(pairs).answer()?),
            arguments: None,
            grant: None,
        }),
        Kind::Url => Ok(Answer {
            action: Action::Accept,
            content: None,
            result: None,
            arguments: None,
            grant: None,
        }),
        Kind::ToolCall => Ok(Answer {
            action: Action::Accept,
            content: None,
            result: None,
            arguments: edited_arguments(q, pairs)?,
            grant: last(pairs, "grant").and_then(grant_span),
        }),
    }
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
    page.model = model_review(state, q, i18n).await?;
    page.why = Some(why(state, q).await?);
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
    id: &str,
    lost: impl FnOnce(&Question) -> Vec<SummaryRow>,
) -> Result<HttpResponse, PageError> {
    let q = state.broker.get(id).await?;
    let mut page = question_page(state.broker.now(), i18n, session, &q, None, &[])?;
    page.lost = lost(&q);
    page.model = model_review(state, &q, i18n).await?;
    Ok(html(StatusCode::CONFLICT, page.render()?))
}

/// `POST /questions/{id}/answer`: Decline and Cancel are sent at once; Accept validates the
/// input and shows the confirm page with exactly the JSON that "Send" will deliver. Invalid
/// input re-renders the form with the input kept and the fields marked (422).
pub async fn answer(
    state: web::Data<AppState>,
    session: WebSession,
    i18n: I18n,
    id: web::Path<String>,
    payload: web::Payload,
) -> Result<HttpResponse, PageError> {
    let pairs = form_pairs(payload).await?;
    session.check_csrf(last(&pairs, "csrf"))?;
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
    let action = match last(&pairs, "action") {
        Some("accept") => Action::Accept,
        Some("decline") => Action::Decline,
        Some("cancel") => Action::Cancel,
        // "Back" from the confirm page: the form again, exactly as submitted.
        Some("edit") => return rerender(&state, &i18n, &session, &q, Some(&pairs), &[]).await,
        _ => {
            return Err(PageError::Refused(Refusal::ChooseAction));
        }
    };
    if action != Action::Accept {
        let refusal = Answer {
            action,
            content: None,
            result: None,
            arguments: None,
            grant: None,
        };
        return match state.broker.answer(&q.id, &refusal, Answerer::Human).await {
            Ok(_) => Ok(see_other(&format!("/questions/{}", q.id))),
            Err(BrokerError::AlreadyDecided(_)) => {
                gone(&state, &i18n, &session, &q.id, |_| Vec::new()).await
            }
            Err(e) => Err(e.into()),
        };
    }
    let answer = match answer_from_form(&q, &pairs) {
        Ok(a) => a,
        Err(errors) => {
            let errors = shown_fields(&i18n, &errors);
            return rerender(&state, &i18n, &session, &q, Some(&pairs), &errors).await;
        }
    };
    match state.broker.preview(&q.id, &answer, Answerer::Human).await {
        Ok(response) => {
            let result = response.get("result").cloned().unwrap_or(Value::Null);
            let summary = match (q.kind, &answer.content) {
                (Kind::Form, Some(Value::Object(content))) => {
                    content_summary(&i18n, &q.form_schema()?, content)
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
                id: q.id.to_string(),
                kind: q.kind.as_str(),
                server: q.server.clone(),
                rpc_id: q.rpc_id.to_string(),
                result: pretty(&result),
                payload: result.to_string(),
            })
        }
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

/// A tool-call question's form: "Allow once" (with the edit box's arguments when changed), a
/// grant button (allow once and from now on), or "Decline"; sent at once, since the page
/// already shows exactly the call that goes out. Invalid arguments re-render the page (422).
async fn answer_tool_call(
    state: &AppState,
    i18n: &I18n,
    session: &WebSession,
    q: &Question,
    pairs: &[(String, String)],
) -> Result<HttpResponse, PageError> {
    let granted = last(pairs, "grant").and_then(grant_span);
    let answer = match (last(pairs, "action"), granted) {
        (Some("decline"), None) => Answer {
            action: Action::Decline,
            content: None,
            result: None,
            arguments: None,
            grant: None,
        },
        (Some("accept"), _) | (None, Some(_)) => match answer_from_form(q, pairs) {
            Ok(answer) => answer,
            Err(errors) => {
                let errors = shown_fields(i18n, &errors);
                return rerender(state, i18n, session, q, Some(pairs), &errors).await;
            }
        },
        _ => return Err(PageError::Refused(Refusal::ChooseAction)),
    };
    match state.broker.answer(&q.id, &answer, Answerer::Human).await {
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

/// A grant button's value.
fn grant_span(value: &str) -> Option<crate::wire::GrantSpan> {
    match value {
        "hour" => Some(crate::wire::GrantSpan::Hour),
        "day" => Some(crate::wire::GrantSpan::Day),
        "always" => Some(crate::wire::GrantSpan::Always),
        _ => None,
    }
}

/// `POST /questions/{id}/send`: delivers the confirmed answer (validated again), then shows
/// the question's outcome.
pub async fn send(
    state: web::Data<AppState>,
    session: WebSession,
    i18n: I18n,
    id: web::Path<String>,
    payload: web::Payload,
) -> Result<HttpResponse, PageError> {
    let pairs = form_pairs(payload).await?;
    session.check_csrf(last(&pairs, "csrf"))?;
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
    match state.broker.answer(&id, &answer, Answerer::Human).await {
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
                    HintPlace::FieldName(f) => {
                        i18n.t1("form-place-field-name", "field", Arg::server(f))
                    }
                    HintPlace::FieldTitle(f) => {
                        i18n.t1("form-place-field-title", "field", Arg::server(f))
                    }
                    HintPlace::FieldDescription(f) => {
                        i18n.t1("form-place-field-description", "field", Arg::server(f))
                    }
                    HintPlace::Choice(f) => i18n.t1("form-place-choice", "field", Arg::server(f)),
                };
                i18n.t2(
                    "form-person-only-because",
                    "word",
                    h.word,
                    "place",
                    Arg::Text(place.into()),
                )
            })
            .collect(),
        Some(PersonOnly::EveryForm) => vec![i18n.t("form-person-only-every-form")],
        _ => Vec::new(),
    }
}
