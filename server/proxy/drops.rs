//! Counting the server lines the proxy dropped (fail closed) and reporting the counts to the
//! service, which exposes them as `mcp_consent_proxy_dropped_lines_total{reason}`. Reports are
//! coalesced (at most one per reason a second), so a flood of bad lines costs the service little.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

use crate::client::ServiceClient;
use crate::wire::{DropReport, DroppedLine};

const REASONS: [DroppedLine; 3] = [
    DroppedLine::Unparseable,
    DroppedLine::TooLong,
    DroppedLine::Ambiguous,
];

/// Counts not yet reported, per reason, and the total so far.
#[derive(Debug, Default)]
pub(super) struct Drops {
    pending: [AtomicU64; 3],
    total: AtomicU64,
    wake: Notify,
}

fn slot(reason: DroppedLine) -> usize {
    match reason {
        DroppedLine::Unparseable => 0,
        DroppedLine::TooLong => 1,
        DroppedLine::Ambiguous => 2,
    }
}

impl Drops {
    /// Counts one dropped line; returns the total so far (for the log).
    pub(super) fn add(&self, reason: DroppedLine) -> u64 {
        self.pending[slot(reason)].fetch_add(1, Ordering::Relaxed);
        self.wake.notify_one();
        self.total.fetch_add(1, Ordering::Relaxed) + 1
    }
}

/// Sends what is pending now (best effort: a service that cannot be reached loses the counts,
/// never the proxy's work).
pub(super) async fn flush(drops: &Drops, client: &ServiceClient) {
    for reason in REASONS {
        let count = drops.pending[slot(reason)].swap(0, Ordering::Relaxed);
        if count > 0
            && let Err(e) = client.report_dropped(&DropReport { reason, count }).await
        {
            tracing::debug!(error = %e, "could not report dropped lines to the service");
        }
    }
}

/// Reports counts as they come, at most once a second, until the proxy ends.
pub(super) async fn report(drops: Arc<Drops>, client: ServiceClient) {
    loop {
        drops.wake.notified().await;
        tokio::time::sleep(Duration::from_secs(1)).await;
        flush(&drops, &client).await;
    }
}
