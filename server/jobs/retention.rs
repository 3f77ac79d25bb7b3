//! Retention: terminal questions decided more than `max_age_days` ago, or beyond the newest
//! `max_terminal` (by decision time, ties by id), are deleted; pending questions never are.
//! Runs at start (in the background: the service is already serving) and on a tokio interval.
//!
//! A run never holds up other requests for long: the bounds are found once, then rows go in
//! batches of [`BATCH`], each its own statement queued on the store's single writer
//! ([`Db::write`]). The next batch is queued only when the last one is done, so a request's
//! write that arrives meanwhile runs between two batches: it waits for one batch at most,
//! never for the whole prune. Deleted content is overwritten (`secure_delete`, set on every
//! connection) and the WAL, which still holds the pages as they were, is checkpointed and
//! truncated at the end of every run, so nothing pruned stays readable in the database files.
//!
//! On the shared database (PostgreSQL) the same batches run, one run at a time across every
//! instance: a run first takes the retention lock ([`Db::lease_retention`]) and is skipped
//! when another holds it, and it ends with a `VACUUM` of the pruned tables instead of the WAL
//! steps. Questions and the audit go from the shared store, expired logins from the
//! instance's own.
//!
//! `mcp-consent prune` runs through the service when it runs ([`OnDemand`], over the owner's
//! socket), so its batches queue on the service's own writer like the hourly run's, instead of
//! a second process contending for the store's lock.

use std::sync::Arc;
use std::time::Duration;

use crate::clock::Clock;
use crate::config::Retention;
use crate::db::prune::{self, Below};
use crate::db::{Conn, Db, DbError, Engine, models};
use crate::metrics::Metrics;

/// Rows deleted per batch. A batch of decided questions (with their revisions, runs and
/// approvals, and the zeroing of `secure_delete`) takes a few milliseconds: what a request's
/// write may wait behind a running prune.
pub const BATCH: i64 = 500;

/// What one run removed (the wire JSON of `POST /api/v1/retention/run` is camelCase).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PruneReport {
    /// Questions decided before the age cutoff.
    pub by_age: usize,
    /// Questions beyond the newest `max_terminal`.
    pub by_count: usize,
    /// Expired browser sessions and login links.
    pub expired_logins: usize,
    /// Audit entries older than `audit_max_age_days`.
    pub audit_entries: usize,
    /// Whether the WAL, which holds the deleted pages as they were, was truncated to nothing
    /// (`false` when readers kept it in use for the run's whole budget).
    pub wal_truncated: bool,
    /// The shared database: another run held the retention lock, so this one did nothing.
    pub held_elsewhere: bool,
}

impl PruneReport {
    /// Questions removed in all.
    pub fn questions(&self) -> usize {
        self.by_age + self.by_count
    }
}

/// What a batch deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pruned {
    /// Questions decided before the age cutoff.
    ByAge,
    /// Questions beyond the newest `max_terminal`.
    ByCount,
    /// Audit entries older than `audit_max_age_days`.
    Audit,
}

/// One committed batch of a run, as [`prune_with`] reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Batch {
    /// What it deleted.
    pub what: Pruned,
    /// How many rows (at most [`BATCH`]).
    pub rows: usize,
}

/// Prunes once, judging age against `now_ms` (Unix milliseconds).
///
/// # Errors
/// [`DbError`] from the store.
pub async fn prune_once(db: &Db, policy: &Retention, now_ms: i64) -> Result<PruneReport, DbError> {
    prune_with(db, policy, now_ms, |_| {}).await
}

/// [`prune_once`], calling `after_batch` after each batch has committed and before the next
/// one is queued (a write queued from it runs before the next batch).
///
/// # Errors
/// [`DbError`] from the store; batches committed before the error stay deleted.
pub async fn prune_with(
    db: &Db,
    policy: &Retention,
    now_ms: i64,
    after_batch: impl FnMut(Batch) + Send,
) -> Result<PruneReport, DbError> {
    prune_stores(db, db, policy, now_ms, after_batch).await
}

/// [`prune_with`] on an instance whose questions live in `queue` (the shared database, or its
/// own store) and whose logins live in `local`.
///
/// # Errors
/// [`DbError`] from the stores; batches committed before the error stay deleted.
pub async fn prune_stores(
    queue: &Db,
    local: &Db,
    policy: &Retention,
    now_ms: i64,
    mut after_batch: impl FnMut(Batch) + Send,
) -> Result<PruneReport, DbError> {
    let Some(lease) = queue.lease_retention().await? else {
        return Ok(PruneReport {
            held_elsewhere: true,
            ..PruneReport::default()
        });
    };
    let db = queue;
    let cutoff = now_ms.saturating_sub(days_ms(policy.max_age_days));
    let audit_cutoff = now_ms.saturating_sub(days_ms(policy.audit_max_age_days));
    let keep = i64::try_from(policy.max_terminal).unwrap_or(i64::MAX);
    // The count bound, found once on a reader: questions decided while the run goes on are
    // newer than it, so it still marks the oldest questions beyond the newest `keep`.
    let beyond = db.run(move |c| Ok(prune::newest_beyond(c, keep)?)).await?;
    let mut report = PruneReport::default();
    let by_age = Below::Time(cutoff);
    report.by_age = in_batches(db, Pruned::ByAge, &mut after_batch, move |c| {
        prune::delete_decided(c, &by_age, BATCH)
    })
    .await?;
    if let Some(key) = beyond {
        let by_count = Below::Key(key);
        report.by_count = in_batches(db, Pruned::ByCount, &mut after_batch, move |c| {
            prune::delete_decided(c, &by_count, BATCH)
        })
        .await?;
    }
    report.audit_entries = in_batches(db, Pruned::Audit, &mut after_batch, move |c| {
        prune::delete_audit(c, audit_cutoff, BATCH)
    })
    .await?;
    report.expired_logins = local
        .write(move |c| Ok(models::delete_expired_auth(c, now_ms)?))
        .await?;
    // Deleted is gone: `secure_delete` zeroed the content in the database file, and the WAL,
    // which still holds the pages as they were, is copied back and truncated to nothing. On
    // the shared database the deleted rows are vacuumed (see `prune::vacuum`).
    if queue.engine() == Engine::Postgres {
        if report.questions() + report.audit_entries > 0 {
            queue.write(|c| Ok(prune::vacuum(c)?)).await?;
        }
        drop(lease);
        report.wal_truncated = truncate_wal(local).await?;
    } else {
        report.wal_truncated = truncate_wal(db).await?;
        drop(lease);
    }
    Ok(report)
}

/// Batches between two rounds of emptying the WAL during a run ([`drain_wal`]; about 8 MB of
/// WAL for 10 batches of decided questions), so it never grows beyond what the writer drops in
/// a few milliseconds.
const CHECKPOINT_BATCHES: u32 = 10;

/// Rounds before a run gives up truncating the WAL (with [`TRUNCATE_PAUSE`], ten seconds).
const TRUNCATE_TRIES: u32 = 100;
/// The pause after a round that could not finish, during which the writer serves everyone.
const TRUNCATE_PAUSE: Duration = Duration::from_millis(100);
/// WAL frames (pages of 4 KiB) the writer may still have to copy when it truncates: what a
/// write may wait behind at the end of a run.
const TRUNCATE_LEFT_FRAMES: i32 = 256;

/// Empties the WAL without holding up the writer, retrying [`drain_wal`] with pauses for up
/// to [`TRUNCATE_TRIES`] rounds. Returns whether the WAL was emptied; when it was not (readers
/// kept it in use for the whole budget), the old pages stay in it until a later run.
async fn truncate_wal(db: &Db) -> Result<bool, DbError> {
    let mut checkpointed = -1;
    for _ in 0..TRUNCATE_TRIES {
        let (copied, emptied) = drain_wal(db).await?;
        if emptied {
            return Ok(true);
        }
        // A round that copied more goes on at once; one blocked (by another checkpoint, or a
        // reader on an older snapshot) gives the others time.
        if copied.checkpointed <= checkpointed || copied.left() <= TRUNCATE_LEFT_FRAMES {
            tokio::time::sleep(TRUNCATE_PAUSE).await;
        }
        checkpointed = copied.checkpointed;
    }
    tracing::warn!("the WAL was in use for the whole retention run's budget; not truncated");
    Ok(false)
}

/// One round of emptying the WAL, keeping the writer's part small: a passive checkpoint on a
/// reader copies the WAL into the database file (never blocking a write, however much it
/// copies), the file is synced off the writer, and only when at most
/// [`TRUNCATE_LEFT_FRAMES`] are left does the writer make one non-waiting truncating attempt
/// ([`prune::try_truncate_wal`]). Measured before, on a prune of 100k with 8 clients: the
/// writer's truncating checkpoint copied and synced the run's WAL itself, waited in SQLite's
/// busy handler for readers, and dropped a 150–200 MB file, and a request's cycle took
/// 430–560 ms. Returns the checkpoint's report and whether the WAL is now empty.
async fn drain_wal(db: &Db) -> Result<(prune::Checkpoint, bool), DbError> {
    let copied = db.run(|c| Ok(prune::passive_checkpoint(c)?)).await?;
    if copied.busy != 0 || copied.left() > TRUNCATE_LEFT_FRAMES {
        return Ok((copied, false));
    }
    db.sync_file().await?;
    let emptied = db.write(|c| Ok(prune::try_truncate_wal(c)?)).await?;
    Ok((copied, emptied))
}

/// Runs `batch` on the writer until it deletes fewer than [`BATCH`] rows, one job at a time;
/// returns the rows deleted in all.
async fn in_batches<F>(
    db: &Db,
    what: Pruned,
    after_batch: &mut (impl FnMut(Batch) + Send),
    batch: F,
) -> Result<usize, DbError>
where
    F: Fn(&mut Conn) -> diesel::QueryResult<usize> + Clone + Send + 'static,
{
    let (mut total, mut batches) = (0, 0u32);
    loop {
        let job = batch.clone();
        let rows = db.write(move |c| Ok(job(c)?)).await?;
        batches += 1;
        if batches % CHECKPOINT_BATCHES == 0 && db.engine() == Engine::Sqlite {
            // Keeps the WAL small: readers are nearly always in it under load, so SQLite
            // would not restart it by itself, and dropping a WAL of a whole run at the end
            // held the writer for a third of a second.
            drain_wal(db).await?;
        }
        total += rows;
        if rows > 0 {
            after_batch(Batch { what, rows });
        }
        if i64::try_from(rows).unwrap_or(i64::MAX) < BATCH {
            return Ok(total);
        }
    }
}

/// `days` in milliseconds, saturating.
fn days_ms(days: u64) -> i64 {
    i64::try_from(days)
        .unwrap_or(i64::MAX)
        .saturating_mul(86_400_000)
}

/// Prunes now and then every `policy.interval_secs`, forever; a failed run is logged and the
/// next one tried (one bad run does not stop the job).
pub async fn run(db: Db, policy: Retention, metrics: Metrics, clock: Arc<dyn Clock>) {
    run_stores(db.clone(), db, policy, metrics, clock).await;
}

/// [`run`] on an instance whose questions live in `queue` and whose logins live in `local`
/// (see [`prune_stores`]).
pub async fn run_stores(
    queue: Db,
    local: Db,
    policy: Retention,
    metrics: Metrics,
    clock: Arc<dyn Clock>,
) {
    let mut tick = tokio::time::interval(Duration::from_secs(policy.interval_secs.max(1)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tick.tick().await;
        let result = prune_stores(&queue, &local, &policy, clock.now_ms(), |_| {}).await;
        count_run(&metrics, &result);
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

/// Counts a finished run on `/metrics`.
fn count_run(metrics: &Metrics, result: &Result<PruneReport, DbError>) {
    metrics.retention_runs.inc();
    if let Ok(r) = result {
        metrics.retention_pruned.inc_by(r.questions() as u64);
    }
}

/// Runs retention when asked (`mcp-consent prune`, through the service): the same run as the
/// service's own, on its stores and writer, counted on its `/metrics`.
#[derive(Clone)]
pub struct OnDemand {
    queue: Db,
    local: Db,
    metrics: Metrics,
    clock: Arc<dyn Clock>,
}

impl OnDemand {
    /// Runs on `queue` and `local` (see [`prune_stores`]), judging age by `clock`.
    pub fn new(queue: Db, local: Db, metrics: Metrics, clock: Arc<dyn Clock>) -> OnDemand {
        OnDemand {
            queue,
            local,
            metrics,
            clock,
        }
    }

    /// One run now with `policy`'s bounds.
    ///
    /// # Errors
    /// [`DbError`] from the stores; batches committed before the error stay deleted.
    pub async fn run(&self, policy: &Retention) -> Result<PruneReport, DbError> {
        let result = prune_stores(
            &self.queue,
            &self.local,
            policy,
            self.clock.now_ms(),
            |_| {},
        )
        .await;
        count_run(&self.metrics, &result);
        result
    }
}
