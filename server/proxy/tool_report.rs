//! Reporting the tool calls this proxy decided alone (allowed or denied by a rule or a grant)
//! to the service, which audits each (digests only) and counts them. One task owns what is not
//! yet reported; the judging side only queues (never waits, never blocks a call), and reports
//! go out at most once a second. A service that cannot be reached loses the report, never a
//! call. A report the service refuses as over the door's hourly budget (429) is sent again as
//! counts only, and until its `Retry-After` is up the decisions go as counts only too: each is
//! still counted, and counted as unaudited.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::{Notify, mpsc, oneshot};

use crate::client::{ClientError, ServiceClient};
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
    /// Decisions the queue had no room for: reported as counts only.
    dropped: Arc<Dropped>,
}

/// Decisions dropped from the queue, by kind, until the task takes them.
#[derive(Debug, Default)]
struct Dropped {
    allowed: AtomicU64,
    denied: AtomicU64,
}

impl Dropped {
    fn count(&self, decision: LocalDecision) {
        let counter = match decision {
            LocalDecision::Allowed => &self.allowed,
            LocalDecision::Denied => &self.denied,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Takes the counts: (allowed, denied).
    fn take(&self) -> (u64, u64) {
        (
            self.allowed.swap(0, Ordering::Relaxed),
            self.denied.swap(0, Ordering::Relaxed),
        )
    }

    fn any(&self) -> bool {
        self.allowed.load(Ordering::Relaxed) + self.denied.load(Ordering::Relaxed) > 0
    }
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
        let dropped = Arc::<Dropped>::default();
        let task = Reporter {
            server,
            client,
            dropped: dropped.clone(),
            held_until: None,
        };
        tokio::spawn(task.run(rx, wake.clone()));
        ToolReporter { tx, wake, dropped }
    }

    /// Queues one decision (never waits). While the task gathers, it is not woken for each
    /// one: a wake-up per call would put a task beside the call's own on the worker that judges
    /// it, and the runtime would wake a second thread to take one of them.
    pub(super) fn record(&self, decided: Decided) {
        if let Err(e) = self.tx.try_send(Message::Decided(decided)) {
            if let Message::Decided(decided) = e.into_inner() {
                self.dropped.count(decided.decision);
            }
            tracing::warn!("too many tool-call decisions at once; one is reported as a count only");
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

/// The task: what it reports to, and whether the service asked it to hold back.
struct Reporter {
    server: String,
    client: ServiceClient,
    dropped: Arc<Dropped>,
    /// Until then the service takes no more decisions from this door: counts only.
    held_until: Option<tokio::time::Instant>,
}

impl Reporter {
    async fn run(mut self, mut rx: mpsc::Receiver<Message>, wake: Arc<Notify>) {
        while let Some(first) = rx.recv().await {
            let mut gathered = Gathered::default();
            gathered.take(first);
            // Gather for a second: one report, not one per call. Meanwhile the queue is
            // emptied when the second is up or the task is woken (a flush, a queue half full).
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
            if !pending.is_empty() || self.dropped.any() {
                self.send(pending).await;
            }
            for done in flushed {
                let _ = done.send(());
            }
            if closed {
                return;
            }
        }
    }

    /// Reports `decided` (and what was dropped since the last report). While held back, or
    /// when the service refuses the decisions as over its budget, they go as counts only.
    async fn send(&mut self, decided: Vec<Decided>) {
        let (dropped_allowed, dropped_denied) = self.dropped.take();
        let count = |d: LocalDecision| decided.iter().filter(|x| x.decision == d).count() as u64;
        let held = self
            .held_until
            .is_some_and(|until| tokio::time::Instant::now() < until);
        let audited = if held { 0 } else { MAX_DECISIONS_PER_REPORT };
        let mut report = ToolDecisionReport {
            server: self.server.clone(),
            allowed: count(LocalDecision::Allowed) + dropped_allowed,
            denied: count(LocalDecision::Denied) + dropped_denied,
            unaudited: (decided.len().saturating_sub(audited) as u64)
                + dropped_allowed
                + dropped_denied,
            decisions: decided
                .into_iter()
                .take(audited)
                .map(|d| ToolDecision {
                    arguments_digest: crate::tools::call::arguments_text_digest(
                        d.arguments.as_deref(),
                    ),
                    tool: d.tool,
                    decision: d.decision,
                    rule: d.rule,
                    at: d.at,
                })
                .collect(),
        };
        match self.client.report_tools(&report).await {
            Ok(()) => {}
            Err(ClientError::TooManyRequests { retry_after, .. })
                if !report.decisions.is_empty() =>
            {
                tracing::warn!(
                    retry_after_secs = retry_after.as_secs(),
                    "the service takes no more tool-call decisions from this door for now (max_stored_bytes_per_door); reporting counts only"
                );
                self.held_until = Some(tokio::time::Instant::now() + retry_after.min(HOLD_AT_MOST));
                report.unaudited += report.decisions.len() as u64;
                report.decisions.clear();
                if let Err(e) = self.client.report_tools(&report).await {
                    tracing::debug!(error = %e, "could not report tool-call counts to the service");
                }
            }
            Err(e) => {
                tracing::debug!(error = %e, "could not report tool-call decisions to the service");
            }
        }
    }
}

/// The longest a refusal holds the decisions back (the service's window is an hour).
const HOLD_AT_MOST: Duration = Duration::from_secs(3600);
