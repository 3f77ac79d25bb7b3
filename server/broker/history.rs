//! The reads behind the history, "why am I being asked" and the servers seen: decided
//! questions by server, kind, state, time and text, with the audit entry that decided each.

use super::{Broker, BrokerError, Question};
use crate::db::approvals::{self, AuditRow};
use crate::db::history::{self, HistoryFilter};
use crate::domain::QuestionId;

/// A decided question and the newest audit entry of it (none for one that expired or was
/// withdrawn, or was decided before every decision was audited).
#[derive(Debug, Clone)]
pub struct Decided {
    /// The question.
    pub question: Question,
    /// Who decided it, and how.
    pub entry: Option<AuditRow>,
}

/// What "why am I being asked" shows of a question's origin.
#[derive(Debug, Clone)]
pub struct Origin {
    /// Questions the same host session of the server opened (this one included).
    pub session_questions: i64,
    /// When that session's first question opened (Unix ms).
    pub session_since: Option<i64>,
    /// The server's questions before this one, newest first (a few), with their deciding entry.
    pub earlier: Vec<Decided>,
    /// How many questions the server asked before this one in all.
    pub earlier_total: i64,
}

/// How many of the most recent server names the pages list (History's filter, the Rules
/// page's suggestions), from the questions and from the audit each.
pub const SERVERS_LISTED: i64 = 200;

impl Broker {
    /// Decided questions matching `filter`, most recently decided first, at most `limit`, each
    /// with the audit entry that decided it.
    ///
    /// # Errors
    /// [`BrokerError::Store`] (also when a stored row does not read back).
    pub async fn search_history(
        &self,
        filter: HistoryFilter,
        limit: i64,
    ) -> Result<Vec<Decided>, BrokerError> {
        let questions = self
            .db
            .run(move |c| Ok(history::decided(c, &filter, limit)?))
            .await?;
        self.with_entries(questions).await
    }

    /// Where `q` comes from: its host session, and what its server asked before.
    ///
    /// # Errors
    /// [`BrokerError::Store`] (also when a stored row does not read back).
    pub async fn origin(&self, q: &Question) -> Result<Origin, BrokerError> {
        let (server, session, id) = (q.server.clone(), q.session.clone(), q.id.clone());
        let ((count, since), (earlier, total)) = self
            .db
            .run(move |c| {
                Ok((
                    history::session_questions(c, &server, &session)?,
                    history::earlier_of_server(c, &server, &id, 5)?,
                ))
            })
            .await?;
        Ok(Origin {
            session_questions: count,
            session_since: since,
            earlier: self.with_entries(earlier).await?,
            earlier_total: total,
        })
    }

    /// The server names that asked something most recently (at most [`SERVERS_LISTED`] from
    /// the questions and as many from the audit), sorted: what the pages offer to pick from,
    /// bounded however many names a script made up.
    ///
    /// # Errors
    /// [`BrokerError::Store`].
    pub async fn servers_seen(&self) -> Result<Vec<String>, BrokerError> {
        Ok(self
            .db
            .run(|c| Ok(history::servers_seen(c, SERVERS_LISTED)?))
            .await?)
    }

    /// Whether `server` ever asked something.
    ///
    /// # Errors
    /// [`BrokerError::Store`].
    pub async fn server_seen(&self, server: &str) -> Result<bool, BrokerError> {
        let name = server.to_owned();
        Ok(self
            .db
            .run(move |c| Ok(history::server_seen(c, &name)?))
            .await?)
    }

    async fn with_entries(&self, questions: Vec<Question>) -> Result<Vec<Decided>, BrokerError> {
        let ids: Vec<QuestionId> = questions.iter().map(|q| q.id.clone()).collect();
        let mut entries = self
            .db
            .run(move |c| Ok(approvals::last_entries(c, &ids)?))
            .await?;
        Ok(questions
            .into_iter()
            .map(|question| {
                let at = entries
                    .iter()
                    .position(|e| e.question_id.as_ref() == Some(&question.id));
                Decided {
                    entry: at.map(|i| entries.swap_remove(i)),
                    question,
                }
            })
            .collect())
    }
}
