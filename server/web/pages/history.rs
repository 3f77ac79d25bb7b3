//! The history of decided questions, searchable by server, kind, outcome, time and text, with
//! when, where (browser, API or CLI, rule) and by whom each was decided.

use super::ok;
use crate::broker::Kind;
use crate::broker::State;
use crate::domain::Actor;
use crate::domain::AuditAction;
use crate::domain::QuestionId;
use crate::domain::Via;
use crate::i18n::I18n;
use crate::web::AppState;
use crate::web::auth::WebSession;
use crate::web::error::PageError;
use crate::web::views::text::Moment;
use crate::web::views::text::moment;
use crate::web::views::text::preview;
use crate::web::views::url::UrlHost;
use crate::web::views::url::inline_code_points;
use crate::web::views::url::url_host;
use actix_web::HttpResponse;
use actix_web::web;
use askama::Template;
use serde::Deserialize;

use crate::broker::Decided;
use crate::db::history::HistoryFilter;

/// Where a decision was made, as the history names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A person in the browser.
    Browser,
    /// The `mcp-consent questions` commands (the API token over the owner-only socket).
    Cli,
    /// A script holding the API token, over TCP.
    Token,
    /// A script or agent over the API or the CLI, door not recorded (decided before doors
    /// were audited).
    Api,
    /// An auto-approve rule.
    Rule,
    /// The server itself (it withdrew the request, or reported a URL flow complete).
    Server,
    /// Nobody: the deadline passed.
    Deadline,
    /// Not recorded (decided before every decision was audited).
    Unknown,
}

impl Place {
    /// The catalogue key of its name.
    pub fn key(self) -> &'static str {
        match self {
            Place::Browser => "place-browser",
            Place::Cli => "place-cli",
            Place::Token => "place-token",
            Place::Api => "place-api",
            Place::Rule => "place-rule",
            Place::Server => "place-server",
            Place::Deadline => "place-deadline",
            Place::Unknown => "place-unknown",
        }
    }
}

/// A decided question as a history row.
pub struct DecidedRow {
    pub id: QuestionId,
    pub kind: Kind,
    pub server: String,
    pub tool: String,
    pub state: State,
    pub preview: String,
    /// A URL question's host, its registrable domain emphasised ([`url_host`]).
    pub host: Option<UrlHost>,
    /// When it was decided.
    pub decided_at: Moment,
    pub place: Place,
    /// The recorded action (answered, declined, opened, delivered, auto_approved, …).
    pub action: Option<AuditAction>,
    /// The rule that decided it, when one did.
    pub rule: String,
    /// The model whose answer was delivered, when one was.
    pub model: String,
}

impl DecidedRow {
    /// The row of `d`, dated against `now`.
    pub fn of(d: &Decided, now: chrono::DateTime<chrono::Utc>) -> DecidedRow {
        let q = &d.question;
        let place = match (&d.entry, q.state) {
            (Some(e), _) => match (&e.actor, e.via) {
                (_, Some(Via::Cli)) => Place::Cli,
                (_, Some(Via::Token)) => Place::Token,
                (Actor::Human, _) => Place::Browser,
                (Actor::Agent, _) => Place::Api,
                (Actor::Rule(_), _) => Place::Rule,
                (Actor::Server, _) => Place::Server,
            },
            (None, State::Expired) => Place::Deadline,
            (None, State::Withdrawn | State::Completed) => Place::Server,
            (None, _) => Place::Unknown,
        };
        let entry = d.entry.as_ref();
        DecidedRow {
            id: q.id.clone(),
            kind: q.kind,
            server: q.server.clone(),
            tool: inline_code_points(q.tool.as_deref().unwrap_or_default()),
            state: q.state,
            preview: preview(q),
            host: url_host(q),
            decided_at: moment(q.decided_at.unwrap_or(q.created_at), now),
            place,
            action: entry.map(|e| e.action),
            rule: match entry.map(|e| &e.actor) {
                Some(Actor::Rule(id)) => id.clone(),
                _ => String::new(),
            },
            model: entry.and_then(|e| e.model_id.clone()).unwrap_or_default(),
        }
    }
}

/// The periods the history's time filter offers, by their query value.
pub const PERIODS: &[(&str, i64)] = &[
    ("hour", 3_600_000),
    ("day", 86_400_000),
    ("week", 7 * 86_400_000),
    ("month", 30 * 86_400_000),
];

/// `GET /history` query: every part optional; empty means "any".
#[derive(Deserialize, Default)]
pub struct HistoryQuery {
    pub server: Option<String>,
    pub kind: Option<String>,
    pub state: Option<String>,
    /// One of [`PERIODS`]: decided within the last hour, day, week or month.
    pub since: Option<String>,
    pub q: Option<String>,
}

#[derive(Template)]
#[template(path = "history.html")]
pub struct HistoryPage {
    pub i18n: I18n,
    pub csrf: String,
    pub decided: Vec<DecidedRow>,
    pub server: String,
    pub kind: Option<Kind>,
    pub state: Option<State>,
    pub since: String,
    pub text: String,
    pub filtered: bool,
    pub kinds: &'static [Kind],
    /// The outcomes the filter offers (every state but pending).
    pub states: Vec<State>,
    pub periods: &'static [(&'static str, i64)],
    pub servers: Vec<String>,
    /// The list is cut at [`HISTORY_LIMIT`].
    pub cut: bool,
}

/// Most rows the history lists.
pub const HISTORY_LIMIT: i64 = 200;

/// `GET /history?server=&kind=&state=&since=&q=`: decided questions, most recent first.
pub async fn history(
    state: web::Data<AppState>,
    session: WebSession,
    i18n: I18n,
    query: web::Query<HistoryQuery>,
) -> Result<HttpResponse, PageError> {
    let f = query.into_inner();
    let now = state.broker.now();
    let some = |s: Option<String>| s.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
    let (server, kind_text, state_text, since, text) = (
        some(f.server),
        some(f.kind),
        some(f.state),
        some(f.since),
        some(f.q),
    );
    let kind = kind_text.as_deref().map(str::parse::<Kind>);
    let outcome = state_text.as_deref().map(str::parse::<State>);
    let period = since
        .as_deref()
        .and_then(|s| PERIODS.iter().find(|(name, _)| *name == s));
    // A kind or outcome that is no word of the vocabulary matches nothing.
    let unknown = matches!(kind, Some(Err(_))) || matches!(outcome, Some(Err(_)));
    let filter = HistoryFilter {
        server: server.clone(),
        kind: kind.clone().and_then(Result::ok),
        state: outcome.clone().and_then(Result::ok),
        since: period.map(|(_, ms)| now.timestamp_millis() - ms),
        until: None,
        text: text.clone(),
    };
    let decided = if unknown {
        Vec::new()
    } else {
        state.broker.search_history(filter, HISTORY_LIMIT).await?
    };
    ok(&HistoryPage {
        i18n,
        csrf: session.csrf.clone(),
        cut: decided.len() as i64 >= HISTORY_LIMIT,
        decided: decided.iter().map(|d| DecidedRow::of(d, now)).collect(),
        filtered: server.is_some()
            || kind_text.is_some()
            || state_text.is_some()
            || since.is_some()
            || text.is_some(),
        server: server.unwrap_or_default(),
        kind: kind.and_then(Result::ok),
        state: outcome.and_then(Result::ok),
        since: since.unwrap_or_default(),
        text: text.unwrap_or_default(),
        kinds: Kind::ALL,
        states: State::ALL
            .iter()
            .copied()
            .filter(|s| *s != State::Pending)
            .collect(),
        periods: PERIODS,
        servers: state.broker.servers_seen().await?,
    })
}
