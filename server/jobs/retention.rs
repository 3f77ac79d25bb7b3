//! Retention: terminal questions decided more than `max_age_days` ago, or beyond the newest
//! `max_terminal` (by decision time, ties by id), are deleted; pending questions never are.
//! Runs at start and on a tokio interval; deletes in bounded batches so the write lock is held
//! briefly. Deleted content is overwritten (`secure_delete`, set on every connection) and the
//! WAL truncated after each run, so nothing pruned stays readable in the database files.

use std::sync::Arc;
use std::time::Duration;

use diesel::connection::SimpleConnection;

use crate::clock::Clock;
use crate::config::Retention;
use crate::db::{Db, DbError, approvals, models};
use crate::metrics::Metrics;

/// Rows deleted per transaction.
const BATCH: i64 = 500;

/// What one run removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PruneReport {
    /// Questions decided before the age cutoff.
    pub by_age: usize,
    /// Questions beyond the newest `max_terminal`.
    pub by_count: usize,
    /// Expired browser sessions and login links.
    pub expired_logins: usize,
    /// Audit entries older than `audit_max_age_days`.
    pub audit_entries: usize,
}

impl PruneReport {
    /// Questions removed in all.
    pub fn questions(&self) -> usize {
        self.by_age + self.by_count
    }
}

/// Prunes once, judging age against `now_ms` (Unix milliseconds).
///
/// # Errors
/// [`DbError`] from the store.
pub async fn prune_once(db: &Db, policy: &Retention, now_ms: i64) -> Result<PruneReport, DbError> {
    let max_age_ms = i64::try_from(policy.max_age_days)
        .unwrap_or(i64::MAX)
        .saturating_mul(86_400_000);
    let cutoff = now_ms.saturating_sub(max_age_ms);
    let keep = i64::try_from(policy.max_terminal).unwrap_or(i64::MAX);
    let policy = policy.clone();
    db.run(move |conn| {
        let mut report = PruneReport::default();
        loop {
            let n = conn.immediate_transaction(|c| {
                let ids = models::terminal_decided_before(c, cutoff, BATCH)?;
                models::delete_terminal(c, &ids)
            })?;
            report.by_age += n;
            if n == 0 {
                break;
            }
        }
        loop {
            let n = conn.immediate_transaction(|c| {
                let ids = models::terminal_beyond_newest(c, keep, BATCH)?;
                models::delete_terminal(c, &ids)
            })?;
            report.by_count += n;
            if n == 0 {
                break;
            }
        }
        report.expired_logins = models::delete_expired_auth(conn, now_ms)?;
        let audit_age_ms = i64::try_from(policy.audit_max_age_days)
            .unwrap_or(i64::MAX)
            .saturating_mul(86_400_000);
        report.audit_entries = approvals::prune_audit(conn, now_ms.saturating_sub(audit_age_ms))?;
        // Deleted is gone: the connection zeroes deleted content (`secure_delete`), and the WAL,
        // which still holds the pages as they were, is copied back and truncated to nothing.
        conn.batch_execute("PRAGMA wal_checkpoint(TRUNCATE);")
            .map_err(DbError::Query)?;
        Ok(report)
    })
    .await
}

/// Prunes now and then every `policy.interval_secs`, forever; a failed run is logged and the
/// next one tried (one bad run does not stop the job).
pub async fn run(db: Db, policy: Retention, metrics: Metrics, clock: Arc<dyn Clock>) {
    let mut tick = tokio::time::interval(Duration::from_secs(policy.interval_secs.max(1)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tick.tick().await;
        let result = prune_once(&db, &policy, clock.now_ms()).await;
        metrics.retention_runs.inc();
        if let Ok(r) = &result {
            metrics.retention_pruned.inc_by(r.questions() as u64);
        }
        match result {
            Ok(r) if r.questions() > 0 => {
                tracing::info!(
                    by_age = r.by_age,
                    by_count = r.by_count,
                    "pruned decided questions"
                );
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "retention run failed"),
        }
    }
}
