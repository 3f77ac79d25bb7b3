//! Deadlines: expiring pending questions whose time ran out (the server gets `-32603` naming
//! the expiry), and the long-poll that waits for a decision or the deadline.

use std::time::Duration;

use super::waiters::Waiter;
use super::{Broker, BrokerError, Question, State, Waited};
use crate::domain::{QuestionId, Via};
use crate::protocol::jsonrpc::{RpcError, error_response};

impl Broker {
    /// Expires every pending question whose deadline passed: the server gets `-32603` saying
    /// the request expired and after how long. Returns how many expired.
    ///
    /// # Errors
    /// [`BrokerError::Store`].
    pub async fn expire_due(&self) -> Result<usize, BrokerError> {
        let now = self.now();
        let due = self
            .db
            .run(move |conn| Ok(Question::due(conn, now)?))
            .await?;
        let mut expired = 0;
        for question in due {
            match self.expire(&question).await {
                Ok(()) => expired += 1,
                Err(BrokerError::AlreadyDecided(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(expired)
    }

    /// Expires one pending question whose deadline passed: the server gets `-32603` saying
    /// the request expired and after how long.
    ///
    /// # Errors
    /// [`BrokerError::AlreadyDecided`] when something else decided it first,
    /// [`BrokerError::Store`].
    pub(super) async fn expire(&self, question: &Question) -> Result<(), BrokerError> {
        let waited = (question.expires_at - question.created_at)
            .num_seconds()
            .max(0);
        let error = RpcError::internal(format!(
            "Request expired: nobody answered within {} (question {})",
            human_duration(waited),
            question.id
        ));
        let response = error_response(Some(&question.rpc_id), &error);
        let audit = (question.kind == crate::domain::Kind::ToolCall)
            .then(|| self.tool_expiry_audit(question));
        self.decide_audited(question, State::Expired, Some(response), audit)
            .await
    }

    /// Waits up to `wait` for the question to be decided, for the door `via` that asks: only
    /// the door a question was opened through may read its response (the person's answer to
    /// a person-only form, say, is not for any other holder of the token).
    ///
    /// # Errors
    /// [`BrokerError::NotFound`] (also for a question opened through another door),
    /// [`BrokerError::Store`].
    pub async fn wait_response(
        &self,
        id: &QuestionId,
        wait: Duration,
        via: Via,
    ) -> Result<Waited, BrokerError> {
        let deadline = tokio::time::Instant::now() + wait;
        // Watch before reading: a decision committed after the read still wakes us. A poll
        // that does not wait (`wait=0`) reads once and watches nothing.
        let mut waiter = (!wait.is_zero()).then(|| self.waiters.watch(id));
        loop {
            let question = self.get(id).await?;
            if !question.opened_through(via) {
                return Err(BrokerError::NotFound);
            }
            match (question.state, question.response) {
                (State::Pending, _) => {}
                (_, Some(response)) => return Ok(Waited::Response(response)),
                (state, None) => return Ok(Waited::Closed(state)),
            }
            let until_expiry = (question.expires_at - self.now())
                .to_std()
                .unwrap_or_default();
            let wake =
                deadline.min(tokio::time::Instant::now() + until_expiry + Duration::from_millis(5));
            tokio::select! {
                () = Waiter::changed_opt(waiter.as_mut()) => {}
                () = self.stopping() => return Ok(Waited::Pending),
                () = tokio::time::sleep_until(wake) => {
                    if tokio::time::Instant::now() >= deadline {
                        return Ok(Waited::Pending);
                    }
                }
            }
        }
    }
}

/// "15 minutes", "90 seconds", "2 hours".
pub fn human_duration(secs: i64) -> String {
    let plural = |n: i64, unit: &str| format!("{n} {unit}{}", if n == 1 { "" } else { "s" });
    if secs % 3600 == 0 && secs >= 3600 {
        plural(secs / 3600, "hour")
    } else if secs % 60 == 0 && secs >= 60 {
        plural(secs / 60, "minute")
    } else {
        plural(secs, "second")
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use chrono::{TimeZone, Utc};
    use serde_json::json;

    use super::*;
    use crate::broker::{BrokerSettings, ManualClock, OpenOutcome};
    use crate::db::Db;
    use crate::domain::Via;
    use crate::metrics::Metrics;
    use crate::wire::OpenRequest;

    fn form_request(rpc_id: u64) -> OpenRequest {
        OpenRequest {
            server: "s".into(),
            session: "1".into(),
            tool: None,
            protocol_version: "2025-11-25".into(),
            client_capabilities: json!({"elicitation": {"form": {}}}),
            request: json!({"jsonrpc": "2.0", "id": rpc_id, "method": "elicitation/create", "params": {
                "message": "Name?",
                "requestedSchema": {"type": "object", "properties": {"n": {"type": "string"}}}}}),
            tool_info: None,
        }
    }

    /// A long-poll wakes for its own question's decision, not for another question's, and
    /// leaves no entry behind; a withdrawal wakes it too.
    #[tokio::test]
    async fn a_long_poll_wakes_for_its_own_question() {
        let tmp = tempfile::tempdir().unwrap();
        let db = Db::open(&tmp.path().join("broker.db")).unwrap();
        let settings = BrokerSettings {
            question_timeout: Duration::from_secs(15 * 60),
            max_pending_per_server: 10,
            max_stored_bytes_per_server: u64::MAX,
            max_stored_bytes_per_door: u64::MAX,
            forms_person_only: false,
        };
        let broker = Broker::new(db, settings, Metrics::new().unwrap());
        let mut ids = Vec::new();
        for rpc_id in 1..=3 {
            let OpenOutcome::New(q) = broker.open(form_request(rpc_id), Via::Cli).await.unwrap()
            else {
                panic!("a new question");
            };
            ids.push(q.id);
        }
        let poll = |id: crate::domain::QuestionId| {
            let broker = broker.clone();
            tokio::spawn(async move {
                broker
                    .wait_response(&id, Duration::from_secs(60), Via::Cli)
                    .await
            })
        };
        let answered = poll(ids[0].clone());
        let withdrawn = poll(ids[1].clone());
        while broker.waited_on() < 2 {
            tokio::task::yield_now().await;
        }
        // Another question's decision leaves both waiting.
        let decline = crate::wire::Answer {
            action: crate::domain::Action::Decline,
            content: None,
            result: None,
            arguments: None,
            grant: None,
        };
        broker
            .answer(&ids[2], &decline, crate::broker::Answerer::Cli)
            .await
            .unwrap();
        assert_eq!(broker.waited_on(), 2);
        assert!(!answered.is_finished() && !withdrawn.is_finished());

        broker
            .answer(&ids[0], &decline, crate::broker::Answerer::Cli)
            .await
            .unwrap();
        let response = match answered.await.unwrap().unwrap() {
            Waited::Response(response) => response,
            other => panic!("a response, got {other:?}"),
        };
        assert_eq!(response["result"]["action"], "decline");

        broker.withdraw(&ids[1], Via::Cli).await.unwrap();
        assert!(matches!(
            withdrawn.await.unwrap().unwrap(),
            Waited::Closed(State::Withdrawn)
        ));
        assert_eq!(broker.waited_on(), 0, "the last waiter removed its entry");
    }

    /// The deadline is decided by the broker's clock: a question is pending until the clock
    /// passes its deadline, and then expires with `-32603` naming the wait.
    #[tokio::test]
    async fn a_question_expires_when_the_clock_passes_its_deadline() {
        let tmp = tempfile::tempdir().unwrap();
        let db = Db::open(&tmp.path().join("broker.db")).unwrap();
        let settings = BrokerSettings {
            question_timeout: Duration::from_secs(15 * 60),
            max_pending_per_server: 10,
            max_stored_bytes_per_server: u64::MAX,
            max_stored_bytes_per_door: u64::MAX,
            forms_person_only: false,
        };
        let start = Utc.with_ymd_and_hms(2030, 1, 2, 3, 4, 5).unwrap();
        let clock = ManualClock::at(start);
        let broker =
            Broker::new(db, settings, Metrics::new().unwrap()).with_clock(Arc::new(clock.clone()));
        let OpenOutcome::New(question) = broker.open(form_request(1), Via::Cli).await.unwrap()
        else {
            panic!("a new question");
        };
        assert_eq!(question.expires_at, start + chrono::Duration::minutes(15));

        clock.advance(chrono::Duration::minutes(15) - chrono::Duration::seconds(1));
        assert_eq!(broker.expire_due().await.unwrap(), 0);
        assert_eq!(
            broker.get(&question.id).await.unwrap().state,
            State::Pending
        );

        clock.advance(chrono::Duration::seconds(1));
        let expired = broker.get(&question.id).await.unwrap();
        assert_eq!(expired.state, State::Expired);
        assert_eq!(
            expired.decided_at,
            Some(start + chrono::Duration::minutes(15))
        );
        let message = expired.response.unwrap()["error"]["message"].to_string();
        assert!(message.contains("within 15 minutes"), "{message}");
    }
}
