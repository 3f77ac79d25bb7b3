//! "Why am I being asked": which host session asked, which tool call the question belongs to,
//! and what the server asked before and how each was answered.

use crate::broker::Question;
use crate::web::AppState;
use crate::web::error::PageError;
use crate::web::views::text::Moment;
use crate::web::views::text::moment_ms;

use crate::web::pages::history::DecidedRow;

/// The origin of a question as its page shows it.
pub struct WhyView {
    /// The proxy's session (one run of the host's connection to the server); empty if unknown.
    pub session: String,
    /// Questions that session opened, this one included.
    pub session_questions: i64,
    /// When that session's first question opened.
    pub session_since: Option<Moment>,
    /// The host's tool call the question came during (empty when none is known).
    pub tool: String,
    /// The server's latest earlier questions, newest first.
    pub earlier: Vec<DecidedRow>,
    /// How many the server asked before in all.
    pub earlier_total: i64,
    /// The history of the server's questions.
    pub history_href: String,
}

/// The "why" of `q`.
///
/// # Errors
/// [`PageError`] from the store.
pub async fn why(state: &AppState, q: &Question) -> Result<WhyView, PageError> {
    let origin = state.broker.origin(q).await?;
    let now = state.broker.now();
    Ok(WhyView {
        session: q.session.clone(),
        session_questions: origin.session_questions,
        session_since: origin.session_since.map(|ms| moment_ms(ms, now)),
        tool: q.tool.clone().unwrap_or_default(),
        earlier: origin
            .earlier
            .iter()
            .map(|d| DecidedRow::of(d, now))
            .collect(),
        earlier_total: origin.earlier_total,
        history_href: format!(
            "/history?{}",
            form_urlencoded::Serializer::new(String::new())
                .append_pair("server", &q.server)
                .finish()
        ),
    })
}
