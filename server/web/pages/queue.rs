//! The queue of pending questions and the history of decided ones.

use super::*;
use crate::web::api::MAX_LISTED;

/// A question as a row of the queue or history.
pub struct Row {
    pub id: String,
    pub kind: Kind,
    pub server: String,
    pub tool: String,
    pub audience: Audience,
    pub state: State,
    pub created_at: Moment,
    pub expires_at: Moment,
    /// One line of what it asks ([`preview`]).
    pub preview: String,
}

impl Row {
    fn of(q: &Question, now: chrono::DateTime<chrono::Utc>) -> Row {
        Row {
            id: q.id.to_string(),
            kind: q.kind,
            server: q.server.clone(),
            tool: q.tool.clone().unwrap_or_default(),
            audience: q.audience,
            state: q.state,
            created_at: moment(q.created_at, now),
            expires_at: moment(q.expires_at, now),
            preview: preview(q),
        }
    }
}

#[derive(Template)]
#[template(path = "queue.html")]
pub struct QueuePage {
    pub i18n: I18n,
    pub csrf: String,
    pub pending: Vec<Row>,
    /// Pending questions in all (more than `pending.len()` when the list is cut).
    pub total: i64,
    /// This browser's session is a 12-hour one (e.g. from a login link): offer to remember
    /// the browser for 30 days.
    pub day_session: bool,
}

/// `GET /`: every pending question, oldest first. Updates live through `/api/v1/events` when
/// JavaScript is on; reload otherwise.
pub async fn queue(
    state: web::Data<AppState>,
    session: WebSession,
    i18n: I18n,
) -> Result<HttpResponse, PageError> {
    // Whole questions (for the preview), in the order of the pending index, at most
    // `MAX_LISTED` of them.
    let pending = state.broker.pending(MAX_LISTED).await?;
    let total = state.broker.count_pending().await?;
    let now = state.broker.now();
    ok(&QueuePage {
        i18n,
        csrf: session.csrf.clone(),
        pending: pending.iter().map(|q| Row::of(q, now)).collect(),
        total,
        day_session: session.expires_at - now.timestamp_millis()
            <= crate::auth::Lifetime::Day.millis(),
    })
}

#[derive(Template)]
#[template(path = "history.html")]
pub struct HistoryPage {
    pub i18n: I18n,
    pub csrf: String,
    pub decided: Vec<Row>,
}

/// `GET /history`: the most recently decided questions.
pub async fn history(
    state: web::Data<AppState>,
    session: WebSession,
    i18n: I18n,
) -> Result<HttpResponse, PageError> {
    let decided = state.broker.history(200).await?;
    let now = state.broker.now();
    ok(&HistoryPage {
        i18n,
        csrf: session.csrf.clone(),
        decided: decided.iter().map(|q| Row::of(q, now)).collect(),
    })
}
