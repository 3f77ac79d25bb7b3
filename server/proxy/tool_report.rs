//! Reporting the tool calls this proxy decided alone (allowed or denied by a rule or a grant)
//! to the service, which audits each (digests only) and counts them. One task owns what is not
//! yet reported; the judging side only queues (never waits, never blocks a call), and reports
//! go out at most once a second. A service that cannot be reached loses the report, never a
//! call.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::{Notify, mpsc, oneshot};

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
    /// Wakes the task while it gathers: a flush, or a queue half full.
    wake: Arc<Notify>,
}

impl std::fmt::Debug for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("tool report message")
    }
}

/// How many decisions may wait for the task; beyond, a decision is dropped from the report
/// (logged), and the call itself is unaffected.
const QUEUE: usize = 4 * MAX_DECISIONS_PER_REPORT;
/// How long decisions are gathered into one report.
const GATHER: Duration = Duration::from_secs(1);

impl ToolReporter {
    /// Starts the task for the proxy of `server`.
    pub(super) fn start(server: String, client: ServiceClient) -> ToolReporter {
        let (tx, rx) = mpsc::channel(QUEUE);
        let wake = Arc::new(Notify::new());
        tokio::spawn(run(server, client, rx, wake.clone()));
        ToolReporter { tx, wake }
    }

    /// Queues one decision (never waits). While the task gathers, it is not woken for each
    /// one: a wake-up per call would put a task beside the call's own on the worker that judges
    /// it, and the runtime would wake a second thread to take one of them.
    pub(super) fn record(&self, decided: Decided) {
        if self.tx.try_send(Message::Decided(decided)).is_err() {
            tracing::warn!("too many tool-call decisions at once; one was not reported");
        } else if self.tx.capacity() < QUEUE / 2 {
            self.wake.notify_one();
        }
    }

    /// Sends what is queued now and waits for it (bounded by the caller).
    pub(super) async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(Message::Flush(done)).await.is_ok() {
            self.wake.notify_one();
            let _ = wait.await;
        }
    }
}

/// What the task has taken from its queue for the next report.
#[derive(Default)]
struct Gathered {
    pending: Vec<Decided>,
    flushed: Vec<oneshot::Sender<()>>,
    /// Every handle is gone.
    closed: bool,
}

impl Gathered {
    fn take(&mut self, message: Message) {
        match message {
            Message::Decided(d) => self.pending.push(d),
            Message::Flush(done) => self.flushed.push(done),
        }
    }

    /// Takes everything queued now.
    fn drain(&mut self, rx: &mut mpsc::Receiver<Message>) {
        loop {
            match rx.try_recv() {
                Ok(message) => self.take(message),
                Err(mpsc::error::TryRecvError::Empty) => return,
                Err(mpsc::error::TryRecvError::Disconnected) => {
                    self.closed = true;
                    return;
                }
            }
        }
    }
}

async fn run(
    server: String,
    client: ServiceClient,
    mut rx: mpsc::Receiver<Message>,
    wake: Arc<Notify>,
) {
    while let Some(first) = rx.recv().await {
        let mut gathered = Gathered::default();
        gathered.take(first);
        // Gather for a second: one report, not one per call. Meanwhile the queue is emptied
        // when the second is up or the task is woken (a flush, a queue half full).
        let until = tokio::time::Instant::now() + GATHER;
        while gathered.flushed.is_empty() && !gathered.closed {
            let up = tokio::select! {
                () = tokio::time::sleep_until(until) => true,
                () = wake.notified() => false,
            };
            gathered.drain(&mut rx);
            if up {
                break;
            }
        }
        let Gathered {
            pending,
            flushed,
            closed,
        } = gathered;
        if !pending.is_empty() {
            send(&server, &client, pending).await;
        }
        for done in flushed {
            let _ = done.send(());
        }
        if closed {
            return;
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
