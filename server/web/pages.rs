//! The HTML pages: login, the queue, a question's review page, the confirm step and history.
//! Server-rendered with askama (everything escaped), working with JavaScript off. Nothing
//! reaches a server from these pages except through the confirm page's "Send" (accept) or the
//! Decline/Cancel buttons.

use actix_web::http::header::{CONTENT_TYPE, LOCATION};
use actix_web::{HttpResponse, web};
use askama::Template;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::auth::{self, WebSession};
use super::error::PageError;
use super::{AppState, MAX_BODY_BYTES, read_body};
use crate::auth::throttle::Attempt;
use crate::broker::{Answerer, BrokerError, Kind, Question, State, rfc3339};
use crate::domain::{Action, Actor, ApprovalId, Audience, AuditAction, Phase, RuleScope, RunState};
use crate::protocol::FieldError;
use crate::protocol::elicitation::{FieldKind, FormSchema, TextFormat};
use crate::protocol::url_safety::{self, Finding};
use crate::review::{Decision, DecisionKind, Edit, TextEdit};
use crate::wire::Answer;

/// Registers the page routes.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/login", web::get().to(login))
        .route("/login", web::post().to(login_with_passphrase))
        .route("/logout", web::post().to(logout))
        .route("/", web::get().to(queue))
        .route("/history", web::get().to(history))
        .route("/questions/{id}", web::get().to(question))
        .route("/questions/{id}/answer", web::post().to(answer))
        .route("/questions/{id}/send", web::post().to(send))
        .route("/questions/{id}/open", web::get().to(open_url))
        .route("/questions/{id}/decide", web::post().to(decide))
        .route("/questions/{id}/revise", web::post().to(revise))
        .route("/audit", web::get().to(audit))
        .route("/rules", web::get().to(rules))
        .route("/rules", web::post().to(create_rule))
        .route("/rules/{rule}/revoke", web::post().to(revoke_rule));
}

fn html(status: actix_web::http::StatusCode, body: String) -> HttpResponse {
    HttpResponse::build(status)
        .insert_header((CONTENT_TYPE, "text/html; charset=utf-8"))
        .insert_header(("Cache-Control", "no-store"))
        .body(body)
}

fn ok(t: &impl Template) -> Result<HttpResponse, PageError> {
    Ok(html(actix_web::http::StatusCode::OK, t.render()?))
}

fn see_other(to: &str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((LOCATION, to.to_owned()))
        .finish()
}

/// Reads an `application/x-www-form-urlencoded` body as ordered pairs (repeated keys kept).
async fn form_pairs(payload: web::Payload) -> Result<Vec<(String, String)>, PageError> {
    let body = read_body(payload, MAX_BODY_BYTES)
        .await
        .map_err(|e| match e {
            Some(limit) => PageError::TooLarge(limit),
            None => PageError::BadRequest("The form could not be read.".into()),
        })?;
    Ok(form_urlencoded::parse(&body).into_owned().collect())
}

fn last<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

#[derive(Template)]
#[template(path = "login.html")]
struct LoginPage {
    message: Option<String>,
    /// A passphrase is configured: show its form.
    passphrase: bool,
}

#[derive(Deserialize)]
struct LoginQuery {
    token: Option<String>,
}

/// `GET /login[?token=…]`: with a valid one-time token, starts a session and redirects to the
/// queue; without one, explains how to get a link.
async fn login(
    state: web::Data<AppState>,
    query: web::Query<LoginQuery>,
) -> Result<HttpResponse, PageError> {
    let Some(token) = query.token.as_deref() else {
        return ok(&LoginPage {
            message: None,
            passphrase: state.passphrase_hash.is_some(),
        });
    };
    if !state.auth.take_login_link(token).await? {
        let page = LoginPage {
            message: Some("This login link is invalid, expired or already used.".into()),
            passphrase: state.passphrase_hash.is_some(),
        };
        return Ok(html(
            actix_web::http::StatusCode::UNAUTHORIZED,
            page.render()?,
        ));
    }
    logged_in(&state).await
}

/// Starts a session and sends the browser to the queue with its cookie.
async fn logged_in(state: &AppState) -> Result<HttpResponse, PageError> {
    let (secret, _) = state.auth.create_session().await?;
    Ok(HttpResponse::SeeOther()
        .insert_header((LOCATION, "/"))
        .cookie(auth::session_cookie(&secret))
        .finish())
}

/// `POST /login` with `passphrase`: checks it against the configured argon2id hash (on the
/// blocking pool, within `auth::throttle`) and starts a session; 429 when over the limits.
async fn login_with_passphrase(
    req: actix_web::HttpRequest,
    state: web::Data<AppState>,
    payload: web::Payload,
) -> Result<HttpResponse, PageError> {
    let pairs = form_pairs(payload).await?;
    let Some(hash) = state.passphrase_hash.clone() else {
        return Err(PageError::NotFound);
    };
    let given = last(&pairs, "passphrase").unwrap_or_default().to_owned();
    let client = req.peer_addr().map(|a| a.ip());
    let ok = match state.login_guard.attempt(client, hash, given).await {
        Attempt::Accepted => true,
        Attempt::Wrong => false,
        Attempt::TooMany(wait) => return Ok(auth::too_many_attempts(wait)),
    };
    if !ok {
        tracing::warn!("wrong passphrase at /login");
        let page = LoginPage {
            message: Some("Wrong passphrase.".into()),
            passphrase: true,
        };
        return Ok(html(
            actix_web::http::StatusCode::UNAUTHORIZED,
            page.render()?,
        ));
    }
    logged_in(&state).await
}

/// `POST /logout`.
async fn logout(
    state: web::Data<AppState>,
    session: WebSession,
    payload: web::Payload,
) -> Result<HttpResponse, PageError> {
    let pairs = form_pairs(payload).await?;
    session.check_csrf(last(&pairs, "csrf"))?;
    state.auth.end_session(&session).await?;
    let mut removal = auth::session_cookie("");
    removal.make_removal();
    Ok(HttpResponse::SeeOther()
        .insert_header((LOCATION, "/login"))
        .cookie(removal)
        .finish())
}

/// A question as a row of the queue or history.
struct Row {
    id: String,
    kind: Kind,
    server: String,
    tool: String,
    audience: Audience,
    state: State,
    created_at: String,
    expires_at: String,
}

impl Row {
    fn of(q: &Question) -> Row {
        Row {
            id: q.id.clone(),
            kind: q.kind,
            server: q.server.clone(),
            tool: q.tool.clone().unwrap_or_default(),
            audience: q.audience,
            state: q.state,
            created_at: rfc3339(q.created_at),
            expires_at: rfc3339(q.expires_at),
        }
    }
}

#[derive(Template)]
#[template(path = "queue.html")]
struct QueuePage {
    csrf: String,
    pending: Vec<Row>,
    /// Pending questions in all (more than `pending.len()` when the list is cut).
    total: i64,
}

/// `GET /`: every pending question, oldest first. Updates live through `/api/v1/events` when
/// JavaScript is on; reload otherwise.
async fn queue(state: web::Data<AppState>, session: WebSession) -> Result<HttpResponse, PageError> {
    let pending = state.broker.list(Some(State::Pending), None, 1000).await?;
    let total = state.broker.count_pending().await?;
    ok(&QueuePage {
        csrf: session.csrf.clone(),
        pending: pending.iter().map(Row::of).collect(),
        total,
    })
}

#[derive(Template)]
#[template(path = "history.html")]
struct HistoryPage {
    csrf: String,
    decided: Vec<Row>,
}

/// `GET /history`: the most recently decided questions.
async fn history(
    state: web::Data<AppState>,
    session: WebSession,
) -> Result<HttpResponse, PageError> {
    let decided = state.broker.history(200).await?;
    ok(&HistoryPage {
        csrf: session.csrf.clone(),
        decided: decided.iter().map(Row::of).collect(),
    })
}

/// One choice of a select or multi-select as rendered.
struct OptionView {
    value: String,
    title: String,
    selected: bool,
}

/// One form field as rendered.
struct FieldView {
    /// `field.<name>`.
    input: String,
    name: String,
    label: String,
    description: String,
    required: bool,
    /// Which input renders it.
    control: Control,
    value: String,
    checked: bool,
    min: Option<f64>,
    max: Option<f64>,
    step: &'static str,
    minlength: Option<u64>,
    maxlength: Option<u64>,
    hint: String,
    options: Vec<OptionView>,
    error: String,
}

/// The input a form field is rendered as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Control {
    /// `<input type="text">`.
    Text,
    /// `<input type="email">`.
    Email,
    /// `<input type="url">`.
    Url,
    /// `<input type="date">`.
    Date,
    /// A text input with an RFC 3339 hint (browsers have no zoned date-time input).
    DateTime,
    /// `<input type="number">`.
    Number,
    /// A checkbox.
    Boolean,
    /// A single-choice `<select>`.
    Select,
    /// A set of checkboxes.
    Multi,
}

/// Builds the field views from the schema, with values from the person's submission when
/// re-rendering after an error, else from the schema's defaults.
fn field_views(
    schema: &FormSchema,
    input: Option<&[(String, String)]>,
    errors: &[FieldError],
) -> Vec<FieldView> {
    schema
        .fields
        .iter()
        .map(|f| {
            let input_name = format!("field.{}", f.name);
            let submitted: Option<Vec<&str>> = input.map(|pairs| {
                pairs
                    .iter()
                    .filter(|(k, _)| *k == input_name)
                    .map(|(_, v)| v.as_str())
                    .collect()
            });
            let default = f.default_value();
            let scalar = match &submitted {
                Some(values) => values.last().map(|v| (*v).to_owned()).unwrap_or_default(),
                None => match &default {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Number(n)) => n.to_string(),
                    _ => String::new(),
                },
            };
            let mut view = FieldView {
                input: input_name.clone(),
                name: f.name.clone(),
                label: f.label().to_owned(),
                description: f.description.clone().unwrap_or_default(),
                required: f.required,
                control: Control::Text,
                value: scalar.clone(),
                checked: false,
                min: None,
                max: None,
                step: "any",
                minlength: None,
                maxlength: None,
                hint: String::new(),
                options: Vec::new(),
                error: errors
                    .iter()
                    .filter(|e| e.field == f.name)
                    .map(|e| e.message.clone())
                    .collect::<Vec<_>>()
                    .join("; "),
            };
            match &f.kind {
                FieldKind::Text {
                    format,
                    min_length,
                    max_length,
                    ..
                } => {
                    view.control = match format {
                        Some(TextFormat::Email) => Control::Email,
                        Some(TextFormat::Uri) => Control::Url,
                        Some(TextFormat::Date) => Control::Date,
                        Some(TextFormat::DateTime) => Control::DateTime,
                        None => Control::Text,
                    };
                    if *format == Some(TextFormat::DateTime) {
                        view.hint = "RFC 3339, e.g. 2026-01-31T09:30:00Z".into();
                    }
                    view.minlength = *min_length;
                    view.maxlength = *max_length;
                }
                FieldKind::Number {
                    integer,
                    minimum,
                    maximum,
                    ..
                } => {
                    view.control = Control::Number;
                    view.step = if *integer { "1" } else { "any" };
                    view.min = *minimum;
                    view.max = *maximum;
                    view.hint = match (minimum, maximum) {
                        (Some(a), Some(b)) => format!("{a} to {b}"),
                        (Some(a), None) => format!("at least {a}"),
                        (None, Some(b)) => format!("at most {b}"),
                        (None, None) => String::new(),
                    };
                    if *integer {
                        view.hint = format!("whole number {}", view.hint).trim().to_owned();
                    }
                }
                FieldKind::Boolean { default } => {
                    view.control = Control::Boolean;
                    view.checked = match &submitted {
                        Some(values) => values.last() == Some(&"true"),
                        None => default.unwrap_or(false),
                    };
                }
                FieldKind::Select { options, .. } => {
                    view.control = Control::Select;
                    view.options = options
                        .iter()
                        .map(|o| OptionView {
                            value: o.value.clone(),
                            title: o.title.clone(),
                            selected: o.value == scalar,
                        })
                        .collect();
                }
                FieldKind::MultiSelect {
                    options,
                    min_items,
                    max_items,
                    default,
                } => {
                    view.control = Control::Multi;
                    let chosen: Vec<String> = match &submitted {
                        Some(values) => values.iter().map(|v| (*v).to_owned()).collect(),
                        None => default.clone().unwrap_or_default(),
                    };
                    view.options = options
                        .iter()
                        .map(|o| OptionView {
                            value: o.value.clone(),
                            title: o.title.clone(),
                            selected: chosen.contains(&o.value),
                        })
                        .collect();
                    view.hint = match (min_items, max_items) {
                        (Some(a), Some(b)) => format!("choose {a} to {b}"),
                        (Some(a), None) => format!("choose at least {a}"),
                        (None, Some(b)) => format!("choose at most {b}"),
                        (None, None) => String::new(),
                    };
                }
            }
            view
        })
        .collect()
}

/// One content block of a sampling message as rendered.
struct BlockView {
    /// text, image, audio, tool_use, tool_result, other.
    kind: String,
    text: String,
    mime: String,
    /// `data:` URI for images and audio (only `image/*` / `audio/*` MIME types).
    data_uri: String,
    name: String,
    id: String,
    json: String,
    is_error: bool,
}

struct MessageView {
    role: String,
    blocks: Vec<BlockView>,
}

struct SamplingView {
    system_prompt: Option<String>,
    messages: Vec<MessageView>,
    max_tokens: String,
    temperature: String,
    stop_sequences: Vec<String>,
    hints: Vec<String>,
    cost_priority: String,
    speed_priority: String,
    intelligence_priority: String,
    include_context: String,
    tools: Vec<(String, String, String)>,
    tool_choice: String,
    metadata: String,
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

fn is_safe_mime(mime: &str, family: &str) -> bool {
    mime.strip_prefix(family).is_some_and(|rest| {
        !rest.is_empty()
            && rest
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    })
}

fn block_view(block: &Value) -> BlockView {
    let s = |k: &str| {
        block
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let kind = s("type");
    let mime = s("mimeType");
    let data_uri = match kind.as_str() {
        "image" if is_safe_mime(&mime, "image/") => format!("data:{mime};base64,{}", s("data")),
        "audio" if is_safe_mime(&mime, "audio/") => format!("data:{mime};base64,{}", s("data")),
        _ => String::new(),
    };
    let json = match kind.as_str() {
        "tool_use" => pretty(block.get("input").unwrap_or(&Value::Null)),
        "tool_result" => pretty(block.get("content").unwrap_or(&Value::Null)),
        "text" | "image" | "audio" => String::new(),
        _ => pretty(block),
    };
    BlockView {
        text: s("text"),
        mime,
        data_uri,
        name: s("name"),
        id: if kind == "tool_result" {
            s("toolUseId")
        } else {
            s("id")
        },
        json,
        is_error: block
            .get("isError")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        kind: if matches!(
            kind.as_str(),
            "text" | "image" | "audio" | "tool_use" | "tool_result"
        ) {
            kind
        } else {
            "other".into()
        },
    }
}

fn sampling_view(q: &Question) -> SamplingView {
    let p = &q.request;
    let f = |v: Option<&Value>| v.map(|x| x.to_string()).unwrap_or_default();
    let prefs = p.get("modelPreferences");
    let messages = p
        .get("messages")
        .and_then(Value::as_array)
        .map(|ms| {
            ms.iter()
                .map(|m| MessageView {
                    role: m
                        .get("role")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    blocks: match m.get("content") {
                        Some(Value::Array(items)) => items.iter().map(block_view).collect(),
                        Some(b) => vec![block_view(b)],
                        None => Vec::new(),
                    },
                })
                .collect()
        })
        .unwrap_or_default();
    let include_context = p
        .get("includeContext")
        .and_then(Value::as_str)
        .unwrap_or("none")
        .to_owned();
    SamplingView {
        system_prompt: p
            .get("systemPrompt")
            .and_then(Value::as_str)
            .map(str::to_owned),
        messages,
        max_tokens: f(p.get("maxTokens")),
        temperature: f(p.get("temperature")),
        stop_sequences: p
            .get("stopSequences")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
        hints: prefs
            .and_then(|pr| pr.get("hints"))
            .and_then(Value::as_array)
            .map(|hs| {
                hs.iter()
                    .filter_map(|h| h.get("name")?.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default(),
        cost_priority: f(prefs.and_then(|pr| pr.get("costPriority"))),
        speed_priority: f(prefs.and_then(|pr| pr.get("speedPriority"))),
        intelligence_priority: f(prefs.and_then(|pr| pr.get("intelligencePriority"))),
        include_context,
        tools: p
            .get("tools")
            .and_then(Value::as_array)
            .map(|ts| {
                ts.iter()
                    .map(|t| {
                        (
                            t.get("name")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_owned(),
                            t.get("description")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_owned(),
                            pretty(t.get("inputSchema").unwrap_or(&Value::Null)),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default(),
        tool_choice: p.get("toolChoice").map(pretty).unwrap_or_default(),
        metadata: p.get("metadata").map(pretty).unwrap_or_default(),
    }
}

/// The model name the answer form starts with: the person wrote the response, so the form says
/// so; it is an editable field, not something added behind their back.
const PERSON_MODEL: &str = "human-written";

/// What the person typed into the sampling answer form.
struct SamplingInput {
    text: String,
    model: String,
    stop_reason: String,
    /// The "answer as JSON" textarea, when that form was used.
    json: Option<String>,
}

impl SamplingInput {
    fn from_pairs(pairs: &[(String, String)]) -> SamplingInput {
        SamplingInput {
            text: last(pairs, "text").unwrap_or_default().to_owned(),
            model: last(pairs, "model").unwrap_or_default().trim().to_owned(),
            stop_reason: last(pairs, "stopReason").unwrap_or("endTurn").to_owned(),
            json: (last(pairs, "mode") == Some("json"))
                .then(|| last(pairs, "resultJson").unwrap_or_default().to_owned()),
        }
    }

    /// The answer this input stands for.
    fn answer(&self) -> Result<Value, Vec<FieldError>> {
        match &self.json {
            Some(text) => serde_json::from_str(text)
                .map_err(|e| vec![FieldError::new("result", format!("not valid JSON: {e}"))]),
            None => Ok(self.result()),
        }
    }

    /// The `CreateMessageResult` this input stands for; nothing is added beyond what the form
    /// shows (role assistant and a text block are the form's own fields).
    fn result(&self) -> Value {
        let mut r = Map::new();
        r.insert("role".into(), json!("assistant"));
        r.insert("content".into(), json!({"type": "text", "text": self.text}));
        r.insert("model".into(), json!(self.model));
        if !self.stop_reason.is_empty() {
            r.insert("stopReason".into(), json!(self.stop_reason));
        }
        Value::Object(r)
    }
}

#[derive(Template)]
#[template(path = "question.html")]
struct QuestionPage {
    csrf: String,
    id: String,
    kind: Kind,
    server: String,
    tool: String,
    state: State,
    pending: bool,
    /// A URL question's link may be opened now (the broker's rule, [`State::url_may_open`]).
    url_may_open: bool,
    audience: Audience,
    era: &'static str,
    protocol_version: String,
    created_at: String,
    expires_at: String,
    message: String,
    url: Option<UrlView>,
    fields: Vec<FieldView>,
    sampling: Option<SamplingView>,
    answer_text: String,
    answer_model: String,
    answer_stop: String,
    /// The JSON answer textarea (a skeleton until the person edits it).
    answer_json: String,
    /// Two-step model review, when models are configured.
    model: Option<ModelReview>,
    errors: Vec<String>,
    raw_request: String,
    response: String,
}

/// What the page shows about a URL question's link.
struct UrlView {
    verbatim: String,
    subdomain: String,
    registrable: String,
    host_ascii: String,
    host_unicode: String,
    idn: bool,
    warnings: Vec<&'static str>,
    /// The link may be opened (its scheme is https/http).
    openable: bool,
}

fn url_view(raw: &str) -> UrlView {
    match url_safety::review(raw) {
        Ok(r) => UrlView {
            idn: r.findings.contains(&Finding::InternationalizedHost),
            warnings: r.findings.iter().map(|f| f.message()).collect(),
            verbatim: r.verbatim,
            subdomain: r.subdomain,
            registrable: r.registrable,
            host_ascii: r.host_ascii,
            host_unicode: r.host_unicode,
            openable: true,
        },
        // Refused at open time; a stored one can only come from an older version.
        Err(e) => UrlView {
            verbatim: raw.to_owned(),
            subdomain: String::new(),
            registrable: String::new(),
            host_ascii: String::new(),
            host_unicode: String::new(),
            idn: false,
            warnings: vec![if matches!(e, url_safety::UrlError::SchemeNotAllowed(_)) {
                "This is not a web address (only https and http links are opened)."
            } else {
                "This is not a valid web address."
            }],
            openable: false,
        },
    }
}

/// `GET /questions/{id}/open`: the person's explicit click on a URL question's link. Records
/// consent, accepts the question, and redirects to the URL with `Referrer-Policy: no-referrer`.
/// The service itself never fetches the URL.
async fn open_url(
    state: web::Data<AppState>,
    _session: WebSession,
    id: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let url = state.broker.open_url(&id).await?;
    Ok(HttpResponse::SeeOther()
        .insert_header((LOCATION, url))
        .insert_header(("Referrer-Policy", "no-referrer"))
        .insert_header(("Cache-Control", "no-store"))
        .finish())
}

/// A well-formed `CreateMessageResult` to start the JSON answer from: a `tool_use` of the first
/// offered tool when the request allows tool use, else a text block.
fn result_skeleton(request: &Value) -> String {
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

fn question_page(
    session: &WebSession,
    q: &Question,
    input: Option<&[(String, String)]>,
    errors: &[FieldError],
) -> Result<QuestionPage, PageError> {
    let fields = match q.kind {
        Kind::Form => field_views(&q.form_schema()?, input, errors),
        _ => Vec::new(),
    };
    let field_names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    let sampling_input = input.map(SamplingInput::from_pairs);
    let s = |k: &str| {
        q.request
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    Ok(QuestionPage {
        csrf: session.csrf.clone(),
        id: q.id.clone(),
        kind: q.kind,
        server: q.server.clone(),
        tool: q.tool.clone().unwrap_or_default(),
        state: q.state,
        pending: q.state == State::Pending,
        url_may_open: q.state.url_may_open(),
        audience: q.audience,
        era: q.era.as_str(),
        protocol_version: q.protocol_version.clone(),
        created_at: rfc3339(q.created_at),
        expires_at: rfc3339(q.expires_at),
        message: s("message"),
        url: (q.kind == Kind::Url).then(|| url_view(&s("url"))),
        sampling: (q.kind == Kind::Sampling).then(|| sampling_view(q)),
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
        answer_stop: sampling_input
            .map(|i| i.stop_reason)
            .unwrap_or_else(|| "endTurn".into()),
        errors: errors
            .iter()
            .filter(|e| !field_names.contains(&e.field.as_str()))
            .map(|e| {
                if e.field.is_empty() {
                    e.message.clone()
                } else {
                    format!("{}: {}", e.field, e.message)
                }
            })
            .collect(),
        raw_request: pretty(&q.request),
        response: q.response.as_ref().map(pretty).unwrap_or_default(),
        fields,
    })
}

/// `GET /questions/{id}`: the review page (or the outcome, once decided).
async fn question(
    state: web::Data<AppState>,
    session: WebSession,
    id: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let q = state.broker.get(&id).await?;
    let mut page = question_page(&session, &q, None, &[])?;
    page.model = model_review(&state, &q).await?;
    ok(&page)
}

#[derive(Template)]
#[template(path = "confirm.html")]
struct ConfirmPage {
    csrf: String,
    id: String,
    kind: &'static str,
    server: String,
    /// The JSON-RPC id the result answers.
    rpc_id: String,
    /// The `result` that "Send" delivers, pretty-printed (shown as is).
    result: String,
    /// The same `result`, compact, carried to `/send` (validated again there).
    payload: String,
}

/// The answer a submitted review form stands for.
fn answer_from_form(q: &Question, pairs: &[(String, String)]) -> Result<Answer, Vec<FieldError>> {
    match q.kind {
        Kind::Form => {
            let schema = q
                .form_schema()
                .map_err(|e| vec![FieldError::whole(e.to_string())])?;
            let content = schema.content_from_form(pairs)?;
            Ok(Answer {
                action: Action::Accept,
                content: Some(Value::Object(content)),
                result: None,
            })
        }
        Kind::Sampling => Ok(Answer {
            action: Action::Accept,
            content: None,
            result: Some(SamplingInput::from_pairs(pairs).answer()?),
        }),
        Kind::Url => Ok(Answer {
            action: Action::Accept,
            content: None,
            result: None,
        }),
    }
}

async fn rerender(
    state: &AppState,
    session: &WebSession,
    q: &Question,
    pairs: Option<&[(String, String)]>,
    errors: &[FieldError],
) -> Result<HttpResponse, PageError> {
    let mut page = question_page(session, q, pairs, errors)?;
    page.model = model_review(state, q).await?;
    Ok(html(
        actix_web::http::StatusCode::UNPROCESSABLE_ENTITY,
        page.render()?,
    ))
}

/// `POST /questions/{id}/answer`: Decline and Cancel are sent at once; Accept validates the
/// input and shows the confirm page with exactly the JSON that "Send" will deliver. Invalid
/// input re-renders the form with the input kept and the fields marked (422).
async fn answer(
    state: web::Data<AppState>,
    session: WebSession,
    id: web::Path<String>,
    payload: web::Payload,
) -> Result<HttpResponse, PageError> {
    let pairs = form_pairs(payload).await?;
    session.check_csrf(last(&pairs, "csrf"))?;
    let q = state.broker.get(&id).await?;
    let action = match last(&pairs, "action") {
        Some("accept") => Action::Accept,
        Some("decline") => Action::Decline,
        Some("cancel") => Action::Cancel,
        _ => {
            return Err(PageError::BadRequest(
                "Choose Accept, Decline or Cancel.".into(),
            ));
        }
    };
    if action != Action::Accept {
        let refusal = Answer {
            action,
            content: None,
            result: None,
        };
        state
            .broker
            .answer(&q.id, &refusal, Answerer::Human)
            .await?;
        return Ok(see_other(&format!("/questions/{}", q.id)));
    }
    let answer = match answer_from_form(&q, &pairs) {
        Ok(a) => a,
        Err(errors) => return rerender(&state, &session, &q, Some(&pairs), &errors).await,
    };
    match state.broker.preview(&q.id, &answer, Answerer::Human).await {
        Ok(response) => {
            let result = response.get("result").cloned().unwrap_or(Value::Null);
            ok(&ConfirmPage {
                csrf: session.csrf.clone(),
                id: q.id.clone(),
                kind: q.kind.as_str(),
                server: q.server.clone(),
                rpc_id: q.rpc_id.to_string(),
                result: pretty(&result),
                payload: result.to_string(),
            })
        }
        Err(BrokerError::InvalidAnswer(errors)) => {
            rerender(&state, &session, &q, Some(&pairs), &errors).await
        }
        Err(e) => Err(e.into()),
    }
}

/// `POST /questions/{id}/send`: delivers the confirmed answer (validated again), then shows
/// the question's outcome.
async fn send(
    state: web::Data<AppState>,
    session: WebSession,
    id: web::Path<String>,
    payload: web::Payload,
) -> Result<HttpResponse, PageError> {
    let pairs = form_pairs(payload).await?;
    session.check_csrf(last(&pairs, "csrf"))?;
    if last(&pairs, "action") != Some("send") {
        return Ok(see_other(&format!("/questions/{id}")));
    }
    let result: Value =
        serde_json::from_str(last(&pairs, "payload").unwrap_or_default()).map_err(|_| {
            PageError::BadRequest("The confirmed answer could not be read; answer again.".into())
        })?;
    let q = state.broker.get(&id).await?;
    let answer = match q.kind {
        Kind::Sampling => Answer {
            action: Action::Accept,
            content: None,
            result: Some(result),
        },
        Kind::Form | Kind::Url => {
            if result.get("action").and_then(Value::as_str) != Some("accept") {
                return Err(PageError::BadRequest(
                    "Only an accepted answer is confirmed here.".into(),
                ));
            }
            Answer {
                action: Action::Accept,
                content: result.get("content").cloned(),
                result: None,
            }
        }
    };
    match state.broker.answer(&id, &answer, Answerer::Human).await {
        Ok(_) => Ok(see_other(&format!("/questions/{id}"))),
        Err(BrokerError::InvalidAnswer(errors)) => {
            rerender(&state, &session, &q, None, &errors).await
        }
        Err(e) => Err(e.into()),
    }
}

/// The model review as the page shows it.
struct ModelReview {
    phase: Option<Phase>,
    revision: i32,
    request_approval_id: ApprovalId,
    response_approval_id: Option<ApprovalId>,
    routed: String,
    why: String,
    exclusions: Vec<String>,
    estimated_tokens: String,
    token_method: String,
    estimated_cost: String,
    models: Vec<(String, bool)>,
    system_prompt: String,
    texts: Vec<(usize, usize, String)>,
    run: Option<RunView>,
    waiting: String,
}

struct RunView {
    model: String,
    state: RunState,
    error: String,
    text: String,
    tool_uses: Vec<(String, String, String)>,
    stop_reason: String,
    input_tokens: String,
    output_tokens: String,
    cost: String,
    result: String,
}

fn usd(x: Option<f64>) -> String {
    x.map(|v| format!("${v:.6}"))
        .unwrap_or_else(|| "unknown".into())
}

async fn model_review(state: &AppState, q: &Question) -> Result<Option<ModelReview>, PageError> {
    if q.kind != Kind::Sampling || state.review.engine().is_none() {
        return Ok(None);
    }
    let review = match state.review.review(q).await {
        Ok(r) => r,
        Err(BrokerError::NotFound) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let receipt = &review.route.receipt;
    let routed = review
        .route
        .chosen
        .as_ref()
        .map(|c| c.id.clone())
        .unwrap_or_default();
    let models = state
        .review
        .engine()
        .map(|e| {
            e.catalog
                .models()
                .iter()
                .map(|m| (m.id.clone(), m.id == routed))
                .collect()
        })
        .unwrap_or_default();
    let mut texts = Vec::new();
    if let Some(messages) = review.params.get("messages").and_then(Value::as_array) {
        for (m, message) in messages.iter().enumerate() {
            let blocks: Vec<&Value> = match message.get("content") {
                Some(Value::Array(items)) => items.iter().collect(),
                Some(b) => vec![b],
                None => Vec::new(),
            };
            for (b, block) in blocks.iter().enumerate() {
                if let Some(text) = block
                    .get("text")
                    .and_then(Value::as_str)
                    .filter(|_| block["type"] == "text")
                {
                    texts.push((m, b, text.to_owned()));
                }
            }
        }
    }
    let run = review.runs.first().map(|r| {
        let result: Value = r
            .result
            .as_deref()
            .and_then(|t| serde_json::from_str(t).ok())
            .unwrap_or(Value::Null);
        let blocks: Vec<&Value> = match result.get("content") {
            Some(Value::Array(items)) => items.iter().collect(),
            Some(b) => vec![b],
            None => Vec::new(),
        };
        RunView {
            model: r.model_id.clone(),
            state: r.state,
            error: r.error.clone().unwrap_or_default(),
            text: blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            tool_uses: blocks
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| {
                    let s = |k: &str| {
                        b.get(k)
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned()
                    };
                    (
                        s("id"),
                        s("name"),
                        pretty(b.get("input").unwrap_or(&Value::Null)),
                    )
                })
                .collect(),
            stop_reason: result
                .get("stopReason")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            input_tokens: r.input_tokens.map(|t| t.to_string()).unwrap_or_default(),
            output_tokens: r.output_tokens.map(|t| t.to_string()).unwrap_or_default(),
            cost: usd(r.cost_usd),
            result: if result.is_null() {
                String::new()
            } else {
                pretty(&result)
            },
        }
    });
    let waiting = (chrono::Utc::now() - q.created_at).num_seconds().max(0);
    Ok(Some(ModelReview {
        phase: q.phase,
        revision: review.revision,
        request_approval_id: review.request_approval_id(&q.id),
        response_approval_id: review.response_approval_id(&q.id),
        why: receipt.why.clone(),
        exclusions: receipt
            .exclusions
            .iter()
            .map(|e| {
                format!(
                    "{}: {}",
                    e.model,
                    e.reasons
                        .iter()
                        .map(|r| r.message())
                        .collect::<Vec<_>>()
                        .join("; ")
                )
            })
            .collect(),
        estimated_tokens: receipt
            .estimated_input_tokens
            .map(|t| t.to_string())
            .unwrap_or_default(),
        token_method: receipt
            .token_method
            .map(|m| m.label().to_owned())
            .unwrap_or_default(),
        estimated_cost: usd(receipt.estimated_cost_usd),
        routed,
        models,
        system_prompt: review
            .params
            .get("systemPrompt")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        texts,
        run,
        waiting: crate::broker::human_duration(waiting),
    }))
}

/// `POST /questions/{id}/decide`: a review decision (`approvalId`, `decision`, `model`).
async fn decide(
    state: web::Data<AppState>,
    session: WebSession,
    id: web::Path<String>,
    payload: web::Payload,
) -> Result<HttpResponse, PageError> {
    let pairs = form_pairs(payload).await?;
    session.check_csrf(last(&pairs, "csrf"))?;
    let Some(decision) = last(&pairs, "decision").and_then(|d| d.parse::<DecisionKind>().ok())
    else {
        return Err(PageError::BadRequest("Choose a decision.".into()));
    };
    let decision = Decision {
        approval_id: last(&pairs, "approvalId").unwrap_or_default().to_owned(),
        decision,
        model: last(&pairs, "model")
            .filter(|m| !m.is_empty())
            .map(str::to_owned),
    };
    match state
        .review
        .decide_sampling(&id, &decision, &Actor::Human)
        .await
    {
        Ok(_) => Ok(see_other(&format!("/questions/{id}"))),
        Err(e) => match e.field_errors() {
            Some(errors) => {
                let q = state.broker.get(&id).await?;
                rerender(&state, &session, &q, None, &errors).await
            }
            None => Err(e.into()),
        },
    }
}

/// `POST /questions/{id}/revise`: saves an edit of the system prompt and text blocks as a new
/// revision (`baseRevision`, `systemPrompt`, `text.<message>.<block>`).
async fn revise(
    state: web::Data<AppState>,
    session: WebSession,
    id: web::Path<String>,
    payload: web::Payload,
) -> Result<HttpResponse, PageError> {
    let pairs = form_pairs(payload).await?;
    session.check_csrf(last(&pairs, "csrf"))?;
    let edit = Edit {
        base_revision: last(&pairs, "baseRevision")
            .and_then(|r| r.parse().ok())
            .unwrap_or(0),
        system_prompt: last(&pairs, "systemPrompt").map(str::to_owned),
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
    };
    match state.review.edit_sampling(&id, &edit, &Actor::Human).await {
        Ok(_) => Ok(see_other(&format!("/questions/{id}"))),
        Err(e) => match e.field_errors() {
            Some(errors) => {
                let q = state.broker.get(&id).await?;
                rerender(&state, &session, &q, None, &errors).await
            }
            None => Err(e.into()),
        },
    }
}

struct AuditView {
    at: String,
    actor: Actor,
    action: AuditAction,
    question: String,
    server: String,
    model: String,
    tokens: String,
    cost: String,
    request_digest: String,
    response_digest: String,
}

#[derive(Template)]
#[template(path = "audit.html")]
struct AuditPage {
    csrf: String,
    server: String,
    /// The action filtered by, if any.
    action: Option<AuditAction>,
    /// The actions the filter offers.
    actions: &'static [AuditAction],
    entries: Vec<AuditView>,
}

#[derive(Deserialize)]
struct AuditFilter {
    server: Option<String>,
    action: Option<String>,
}

/// `GET /audit?server=&action=`: every decision, newest first (digests, never text).
async fn audit(
    state: web::Data<AppState>,
    session: WebSession,
    query: web::Query<AuditFilter>,
) -> Result<HttpResponse, PageError> {
    let f = query.into_inner();
    let server = f.server.filter(|s| !s.is_empty());
    let filter = f.action.filter(|s| !s.is_empty());
    let action = filter.as_deref().map(str::parse::<AuditAction>);
    // An action that is no word of the vocabulary matches no entry.
    let rows = match action {
        Some(Err(_)) => Vec::new(),
        Some(Ok(a)) => state.review.audit_log(server.clone(), Some(a), 500).await?,
        None => state.review.audit_log(server.clone(), None, 500).await?,
    };
    let short = |d: &Option<String>| {
        d.as_deref()
            .map(|d| d.chars().take(12).collect())
            .unwrap_or_default()
    };
    ok(&AuditPage {
        csrf: session.csrf.clone(),
        server: server.unwrap_or_default(),
        action: action.and_then(Result::ok),
        actions: AuditAction::ALL,
        entries: rows
            .iter()
            .map(|r| AuditView {
                at: chrono::DateTime::from_timestamp_millis(r.at)
                    .map(rfc3339)
                    .unwrap_or_default(),
                actor: r.actor.clone(),
                action: r.action,
                question: r.question_id.clone(),
                server: r.server.clone(),
                model: r.model_id.clone().unwrap_or_default(),
                tokens: match (r.input_tokens, r.output_tokens) {
                    (Some(i), Some(o)) => format!("{i} in / {o} out"),
                    _ => String::new(),
                },
                cost: r.cost_usd.map(|c| format!("${c:.6}")).unwrap_or_default(),
                request_digest: short(&r.request_digest),
                response_digest: short(&r.response_digest),
            })
            .collect(),
    })
}

struct RuleView {
    id: String,
    server: String,
    scope: RuleScope,
    author: Actor,
    reason: String,
    created_at: String,
    expires_at: String,
    active: bool,
    status: String,
}

#[derive(Template)]
#[template(path = "rules.html")]
struct RulesPage {
    csrf: String,
    rules: Vec<RuleView>,
}

/// `GET /rules`: auto-approve rules for sampling (off unless created here).
async fn rules(state: web::Data<AppState>, session: WebSession) -> Result<HttpResponse, PageError> {
    let now = chrono::Utc::now().timestamp_millis();
    let t = |ms: i64| {
        chrono::DateTime::from_timestamp_millis(ms)
            .map(rfc3339)
            .unwrap_or_default()
    };
    let rules = state
        .review
        .rules()
        .await?
        .into_iter()
        .map(|r| {
            let status = match r.revoked_at {
                Some(at) => format!("revoked {}", t(at)),
                None if r.expires_at <= now => "expired".to_owned(),
                None => "active".to_owned(),
            };
            RuleView {
                active: status == "active",
                status,
                created_at: t(r.created_at),
                expires_at: t(r.expires_at),
                id: r.id,
                server: r.server,
                scope: r.scope,
                author: r.author,
                reason: r.reason,
            }
        })
        .collect();
    ok(&RulesPage {
        csrf: session.csrf.clone(),
        rules,
    })
}

/// `POST /rules`: a new rule (`server`, `scope`, `reason`, `days`).
async fn create_rule(
    state: web::Data<AppState>,
    session: WebSession,
    payload: web::Payload,
) -> Result<HttpResponse, PageError> {
    let pairs = form_pairs(payload).await?;
    session.check_csrf(last(&pairs, "csrf"))?;
    let get = |k: &str| last(&pairs, k).unwrap_or_default().trim().to_owned();
    let days = get("days").parse().ok();
    match state
        .review
        .create_rule(
            &get("server"),
            &get("scope"),
            Actor::Human,
            &get("reason"),
            days,
        )
        .await
    {
        Ok(_) => Ok(see_other("/rules")),
        Err(BrokerError::InvalidAnswer(errors)) => Err(PageError::BadRequest(
            errors
                .iter()
                .map(|e| e.message.clone())
                .collect::<Vec<_>>()
                .join("; "),
        )),
        Err(e) => Err(e.into()),
    }
}

/// `POST /rules/{rule}/revoke`.
async fn revoke_rule(
    state: web::Data<AppState>,
    session: WebSession,
    rule: web::Path<String>,
    payload: web::Payload,
) -> Result<HttpResponse, PageError> {
    let pairs = form_pairs(payload).await?;
    session.check_csrf(last(&pairs, "csrf"))?;
    state.review.revoke_rule(&rule).await?;
    Ok(see_other("/rules"))
}
