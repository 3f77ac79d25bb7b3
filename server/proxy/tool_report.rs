//! Reporting the tool calls this proxy decided alone (allowed or denied by a rule or a grant)
//! to the service, which audits each (digests only) and counts them. One task owns what is not
//! yet reported; the judging side only queues (never waits, never blocks a call), and reports
//! go out at most once a second. A service that cannot be reached loses the report, never a
//! call.

use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::{mpsc, oneshot};

use crate::client::ServiceClient;
use crate::tools::report::{
    LocalDecision, MAX_DECISIONS_PER_REPORT, ToolDecision, ToolDecisionReport,
};

/// One decision as the judging side queues it: the arguments' text is digested by the task.
#[derive(Debug)]
pub(super) struct Decided {
    /// The tool's name.
    pub(super) tool: String,
    /// Allowed or denied.
    pub(super) decision: LocalDecision,
    /// What decided.
    pub(super) rule: String,
    /// `params.arguments` as the host wrote it (`None`: absent).
    pub(super) arguments: Option<Box<str>>,
    /// When.
    pub(super) at: DateTime<Utc>,
}

enum Message {
    Decided(Decided),
    Flush(oneshot::Sender<()>),
}

/// The judging side's handle.
#[derive(Debug, Clone)]
pub(super) struct ToolReporter {
    tx: mpsc::Sender<Message>,
}

impl std::fmt::Debug for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("tool report message")
    }
}

/// How many decisions may wait for the task; beyond, a decision is dropped from the report
/// (logged), and the call itself is unaffected.
const QUEUE: usize = 4 * MAX_DECISIONS_PER_REPORT;

impl ToolReporter {
    /// Starts the task for the proxy of `server`.
    pub(super) fn start(server: String, client: ServiceClient) -> ToolReporter {
        let (tx, rx) = mpsc::channel(QUEUE);
        tokio::spawn(run(server, client, rx));
        ToolReporter { tx }
    }

    /// Queues one decision (never waits).
    pub(super) fn record(&self, decided: Decided) {
        if self.tx.try_send(Message::Decided(decided)).is_err() {
            tracing::warn!("too many tool-call decisions at once; one was not reported");
        }
    }

    /// Sends what is queued now and waits for it (bounded by the caller).
    pub(super) async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(Message::Flush(done)).await.is_ok() {
            let _ = wait.await;
        }
    }
}

async fn run(server: String, client: ServiceClient, mut rx: mpsc::Receiver<Message>) {
    let mut pending = Vec::new();
    while let Some(first) = rx.recv().await {
        let mut flushed = Vec::new();
        match first {
            Message::Decided(d) => {
                pending.push(d);
                // Gather for a second: one report, not one per call.
                let until = tokio::time::Instant::now() + Duration::from_secs(1);
                loop {
                    match tokio::time::timeout_at(until, rx.recv()).await {
                        Ok(Some(Message::Decided(d))) => pending.push(d),
                        Ok(Some(Message::Flush(done))) => {
                            flushed.push(done);
                            break;
                        }
                        Ok(None) | Err(_) => break,
                    }
                }
            }
            Message::Flush(done) => flushed.push(done),
        }
        if !pending.is_empty() {
            send(&server, &client, std::mem::take(&mut pending)).await;
        }
        for done in flushed {
            let _ = done.send(());
        }
    }
}

async fn send(server: &str, client: &ServiceClient, decided: Vec<Decided>) {
    let count = |d: LocalDecision| decided.iter().filter(|x| x.decision == d).count() as u64;
    let report = ToolDecisionReport {
        server: server.to_owned(),
        allowed: count(LocalDecision::Allowed),
        denied: count(LocalDecision::Denied),
        decisions: decided
            .into_iter()
            .take(MAX_DECISIONS_PER_REPORT)
            .map(|d| ToolDecision {
                arguments_digest: crate::tools::call::arguments_text_digest(d.arguments.as_deref()),
                tool: d.tool,
                decision: d.decision,
                rule: d.rule,
                at: d.at,
            })
            .collect(),
    };
    if let Err(e) = client.report_tools(&report).await {
        tracing::debug!(error = %e, "could not report tool-call decisions to the service");
    }
}
