//! The queue of pending questions and the history of decided ones.

use super::*;
use crate::web::api::MAX_LISTED;
use crate::wire::Summary;

/// A question as a row of the queue or history.
pub struct Row {
    pub id: String,
    pub kind: Kind,
    pub server: String,
    pub tool: String,
    pub audience: Audience,
    pub state: State,
    pub created_at: String,
    pub expires_at: String,
}

impl Row {
    fn listed(s: Summary) -> Row {
        Row {
            id: s.id,
            kind: s.kind,
            server: s.server,
            tool: s.tool.unwrap_or_default(),
            audience: s.audience,
            state: s.state,
            created_at: s.created_at,
            expires_at: s.expires_at,
        }
    }

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
pub struct QueuePage {
    pub csrf: String,
    pub pending: Vec<Row>,
    /// Pending questions in all (more than `pending.len()` when the list is cut).
    pub total: i64,
}

/// `GET /`: every pending question, oldest first. Updates live through `/api/v1/events` when
/// JavaScript is on; reload otherwise.
pub async fn queue(
    state: web::Data<AppState>,
    session: WebSession,
) -> Result<HttpResponse, PageError> {
    let pending = state
        .broker
        .list(Some(State::Pending), None, MAX_LISTED)
        .await?;
    let total = state.broker.count_pending().await?;
    ok(&QueuePage {
        csrf: session.csrf.clone(),
        pending: pending.into_iter().map(Row::listed).collect(),
        total,
    })
}

#[derive(Template)]
#[template(path = "history.html")]
pub struct HistoryPage {
    pub csrf: String,
    pub decided: Vec<Row>,
}

/// `GET /history`: the most recently decided questions.
pub async fn history(
    state: web::Data<AppState>,
    session: WebSession,
) -> Result<HttpResponse, PageError> {
    let decided = state.broker.history(200).await?;
    ok(&HistoryPage {
        csrf: session.csrf.clone(),
        decided: decided.iter().map(Row::of).collect(),
    })
}
