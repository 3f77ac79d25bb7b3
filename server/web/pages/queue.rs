//! The queue of pending questions: searched and filtered (server, kind, text), grouped by
//! server, several declined at once after a confirmation, and each server's pause, block and
//! muted notices.

use std::collections::HashMap;

use super::csrf_form::CsrfForm;
use super::ok;
use super::see_other;
use crate::broker::Answerer;
use crate::broker::BrokerError;
use crate::broker::Kind;
use crate::broker::Question;
use crate::broker::State;
use crate::domain::Action;
use crate::domain::Audience;
use crate::domain::QuestionId;
use crate::domain::Via;
use crate::i18n::I18n;
use crate::web::AppState;
use crate::web::auth::WebSession;
use crate::web::error::PageError;
use crate::web::error::Refusal;
use crate::web::views::last;
use crate::web::views::text::Moment;
use crate::web::views::text::moment;
use crate::web::views::text::preview;
use crate::web::views::url::UrlHost;
use crate::web::views::url::inline_code_points;
use crate::web::views::url::url_host;
use crate::wire::Answer;
use actix_web::HttpResponse;
use actix_web::web;
use askama::Template;
use serde::Deserialize;
use serde_json::Value;

use crate::broker::{ControlChange, ServerControl};
use crate::web::api::MAX_LISTED;

/// A question as a row of the queue.
pub struct Row {
    pub id: QuestionId,
    pub kind: Kind,
    pub server: String,
    pub tool: String,
    pub audience: Audience,
    pub created_at: Moment,
    pub expires_at: Moment,
    /// One line of what it asks ([`preview`]).
    pub preview: String,
    /// A URL question's host, its registrable domain emphasised ([`url_host`]).
    pub host: Option<UrlHost>,
}

impl Row {
    pub fn of(q: &Question, now: chrono::DateTime<chrono::Utc>) -> Row {
        Row {
            id: q.id.clone(),
            kind: q.kind,
            server: q.server.clone(),
            tool: inline_code_points(q.tool.as_deref().unwrap_or_default()),
            audience: q.audience,
            created_at: moment(q.created_at, now),
            expires_at: moment(q.expires_at, now),
            preview: preview(q),
            host: url_host(q),
        }
    }
}

/// The rows of one server, in the queue's order.
pub struct Group {
    pub server: String,
    pub rows: Vec<Row>,
}

/// A server the queue offers controls for: one with waiting questions or a control in force.
pub struct ServerView {
    pub server: String,
    /// Its questions waiting (all of them, not only those the filter shows).
    pub waiting: usize,
    pub control: ServerControl,
    /// Local time the pause ends, when paused.
    pub paused_until: String,
}

/// `GET /` query: every part optional; empty means "any".
#[derive(Deserialize, Default)]
pub struct QueueQuery {
    pub server: Option<String>,
    pub kind: Option<String>,
    pub q: Option<String>,
    /// `server`: one table per server.
    pub group: Option<String>,
    /// How many questions the last bulk decline declined (the notice after it).
    pub declined: Option<usize>,
    /// How many of them were decided already.
    pub skipped: Option<usize>,
}

#[derive(Template)]
#[template(path = "queue.html")]
pub struct QueuePage {
    pub i18n: I18n,
    pub csrf: String,
    /// The rows the filter shows, grouped by server (one group when not grouped).
    pub groups: Vec<Group>,
    pub grouped: bool,
    /// Rows the filter shows.
    pub shown: usize,
    /// Pending questions in all (more than those listed when the list is cut).
    pub total: i64,
    /// Pending questions read (at most `MAX_LISTED`).
    pub listed: usize,
    /// The filter as entered.
    pub server: String,
    pub kind: Option<Kind>,
    pub text: String,
    /// Some filter is set.
    pub filtered: bool,
    pub kinds: &'static [Kind],
    /// Servers with questions waiting, for the server filter.
    pub servers: Vec<String>,
    pub controls: Vec<ServerView>,
    /// Servers whose notices are muted (the browser notifications skip them too).
    pub muted: String,
    pub declined: Option<usize>,
    pub skipped: usize,
    /// This browser's session is a 12-hour one (e.g. from a login link): offer to remember
    /// the browser for 30 days.
    pub day_session: bool,
}

/// The text the queue's search looks in: the server, the tool, and what the question asks.
fn searchable(q: &Question) -> String {
    let mut text = format!(
        "{} {} {}",
        q.server,
        q.tool.as_deref().unwrap_or(""),
        preview(q)
    );
    for key in ["message", "url", "systemPrompt"] {
        if let Some(s) = q.request.get(key).and_then(Value::as_str) {
            text.push(' ');
            text.push_str(s);
        }
    }
    text.to_lowercase()
}

/// `GET /?server=&kind=&q=&group=server`: the pending questions, oldest first, filtered.
/// Updates in place through `/api/v1/events` when JavaScript is on; reload otherwise.
pub async fn queue(
    state: web::Data<AppState>,
    session: WebSession,
    i18n: I18n,
    query: web::Query<QueueQuery>,
) -> Result<HttpResponse, PageError> {
    let f = query.into_inner();
    let pending = state.broker.pending(MAX_LISTED).await?;
    let total = state.broker.count_pending().await?;
    let now = state.broker.now();
    let text = f.q.unwrap_or_default().trim().to_owned();
    let server = f.server.unwrap_or_default().trim().to_owned();
    let kind_text = f.kind.unwrap_or_default();
    let kind = kind_text.parse::<Kind>().ok();
    let grouped = f.group.as_deref() == Some("server");
    let needle = text.to_lowercase();
    let wanted = |q: &&Question| {
        (server.is_empty() || q.server == server)
            && (kind_text.is_empty() || Some(q.kind) == kind)
            && (needle.is_empty() || searchable(q).contains(&needle))
    };
    let (groups, shown) = grouped_rows(pending.iter().filter(wanted), grouped, now);
    let mut servers: Vec<String> = pending.iter().map(|q| q.server.clone()).collect();
    servers.sort();
    servers.dedup();
    let in_force = state.broker.controls().await?;
    let controls = server_views(&pending, &servers, &in_force, now);
    let muted: Vec<&str> = in_force
        .iter()
        .filter(|c| c.muted)
        .map(|c| c.server.as_str())
        .collect();
    ok(&QueuePage {
        i18n,
        csrf: session.csrf.clone(),
        groups,
        grouped,
        shown,
        total,
        listed: pending.len(),
        filtered: !server.is_empty() || !kind_text.is_empty() || !text.is_empty(),
        server,
        kind,
        text,
        kinds: Kind::ALL,
        servers,
        controls,
        muted: serde_json::to_string(&muted).unwrap_or_default(),
        declined: f.declined,
        skipped: f.skipped.unwrap_or(0),
        day_session: session.expires_at - now.timestamp_millis()
            <= crate::auth::Lifetime::Day.millis(),
    })
}

/// The rows shown, in one group, or one group a server when `grouped`; and how many.
fn grouped_rows<'q>(
    shown: impl Iterator<Item = &'q Question>,
    grouped: bool,
    now: chrono::DateTime<chrono::Utc>,
) -> (Vec<Group>, usize) {
    let mut groups: Vec<Group> = Vec::new();
    let mut count = 0;
    for q in shown {
        count += 1;
        let key = if grouped { q.server.as_str() } else { "" };
        let row = Row::of(q, now);
        match groups.iter_mut().find(|g| g.server == key) {
            Some(g) => g.rows.push(row),
            None => groups.push(Group {
                server: key.to_owned(),
                rows: vec![row],
            }),
        }
    }
    (groups, count)
}

/// Each server that asks or has a control in force, by name, with its control and how many of
/// its questions wait. Every control in force is listed: the API token over TCP may hold only
/// [`crate::broker::controls::MAX_CONTROLS_OVER_TCP`] of them, so the list stays short and
/// none of the person's can be pushed off it.
fn server_views(
    pending: &[Question],
    servers: &[String],
    in_force: &[ServerControl],
    now: chrono::DateTime<chrono::Utc>,
) -> Vec<ServerView> {
    let mut waiting: HashMap<&str, usize> = HashMap::new();
    for q in pending {
        *waiting.entry(q.server.as_str()).or_default() += 1;
    }
    let controls: HashMap<&str, &ServerControl> =
        in_force.iter().map(|c| (c.server.as_str(), c)).collect();
    let mut names: Vec<&str> = servers.iter().map(String::as_str).collect();
    names.extend(in_force.iter().map(|c| c.server.as_str()));
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .map(|name| {
            let control = controls
                .get(name)
                .map_or_else(|| ServerControl::none(name), |c| (*c).clone());
            ServerView {
                waiting: waiting.get(name).copied().unwrap_or(0),
                paused_until: control
                    .paused_until
                    .map(|t| moment(t, now).local)
                    .unwrap_or_default(),
                control,
                server: name.to_owned(),
            }
        })
        .collect()
}

#[derive(Template)]
#[template(path = "decline_many.html")]
pub struct DeclineManyPage {
    pub i18n: I18n,
    pub csrf: String,
    /// The selected questions still pending.
    pub rows: Vec<Row>,
    /// Selected questions already decided (nothing to decline).
    pub gone: usize,
}

/// `POST /questions/decline` (`id` repeated; `confirmed=1` on the confirm page's button): first
/// a page listing what will be declined, then each is declined as the person would one by one
/// (the server of each gets a decline; the audit records each). Back to the queue with how many.
pub async fn decline_many(
    state: web::Data<AppState>,
    i18n: I18n,
    form: CsrfForm,
) -> Result<HttpResponse, PageError> {
    let CsrfForm {
        session,
        form: pairs,
    } = form;
    let mut ids: Vec<&str> = pairs
        .iter()
        .filter(|(k, _)| k == "id")
        .map(|(_, v)| v.as_str())
        .collect();
    ids.dedup();
    if ids.is_empty() {
        return Ok(see_other("/"));
    }
    if last(&pairs, "confirmed") != Some("1") {
        let now = state.broker.now();
        let mut rows = Vec::new();
        let mut gone = 0;
        for id in ids {
            // Text that is no question id names no question: gone, like an unknown one.
            let Ok(id) = id.parse::<QuestionId>() else {
                gone += 1;
                continue;
            };
            match state.broker.get(&id).await {
                Ok(q) if q.state == State::Pending => rows.push(Row::of(&q, now)),
                Ok(_) | Err(BrokerError::NotFound) => gone += 1,
                Err(e) => return Err(e.into()),
            }
        }
        return ok(&DeclineManyPage {
            i18n,
            csrf: session.csrf.clone(),
            rows,
            gone,
        });
    }
    let refusal = Answer {
        action: Action::Decline,
        content: None,
        result: None,
        arguments: None,
        grant: None,
    };
    let (mut declined, mut skipped) = (0, 0);
    for id in ids {
        let Ok(id) = id.parse::<QuestionId>() else {
            skipped += 1;
            continue;
        };
        match state.broker.answer(&id, &refusal, Answerer::Browser).await {
            Ok(_) => declined += 1,
            Err(BrokerError::AlreadyDecided(_) | BrokerError::NotFound) => skipped += 1,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(see_other(&format!(
        "/?declined={declined}&skipped={skipped}"
    )))
}

/// The form of a server control's button.
#[derive(Deserialize)]
pub struct ControlForm {
    pub server: String,
    /// pause, resume, block, unblock, mute or unmute ([`ControlChange`]).
    pub change: String,
}

/// `POST /servers/control` (`server`, `change` = pause, resume, block, unblock, mute, unmute).
pub async fn control_server(
    state: web::Data<AppState>,
    form: CsrfForm<ControlForm>,
) -> Result<HttpResponse, PageError> {
    let ControlForm { server, change } = form.form;
    let Ok(change) = change.parse::<ControlChange>() else {
        return Err(PageError::Refused(Refusal::UnreadableForm));
    };
    let server = server.as_str();
    if server.is_empty() {
        return Err(PageError::Refused(Refusal::UnreadableForm));
    }
    state
        .broker
        .set_control(server, change, Via::Browser)
        .await?;
    Ok(see_other("/#servers"))
}
