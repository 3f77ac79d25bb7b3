//! The SQLite store: an r2d2 pool of read-only diesel connections, one writer connection,
//! the pragmas every connection gets, embedded migrations, and [`Db::run`] (reads) /
//! [`Db::write`] (everything that changes the database), the ways to touch the database from
//! async code (never on the executor).
//!
//! Why one writer: SQLite lets one connection write at a time, and a connection that finds
//! the lock taken sleeps in its busy handler (1, 2, 5, 10 … ms) instead of queueing. Every
//! write goes through [`Db::write`], queued on a channel to one writer thread that owns the
//! writer connection, so writes run back to back without sleeping and without a thread
//! hand-off per write. The pool connections are opened with `PRAGMA query_only = ON`, so a
//! write sent to [`Db::run`] by mistake fails at once ([`DbError::ReadOnly`]) instead of
//! sleeping behind the writer. Reads take a permit before they go to the blocking pool, so no
//! blocking thread is parked waiting for a pool connection (docs/stack.md §SQLite).
//!
//! WAL checkpoints run in the background: connections have automatic checkpoints off, and
//! every [`CHECKPOINT_EVERY`] writes one passive checkpoint is started on a reader
//! connection, off any request's path (a checkpoint only copies committed pages into the
//! database file, which `query_only` allows).

pub mod approvals;
pub mod audit;
pub mod controls;
pub mod grants;
pub mod history;
pub mod models;
pub mod prune;
pub mod schema;
pub mod schema_check;
pub mod sessions;
pub mod spend;

pub mod sql;

#[cfg(test)]
mod tests;

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::r2d2::{ConnectionManager, CustomizeConnection, Pool};
use diesel::{Connection, SqliteConnection};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};
use tokio::sync::Semaphore;

/// Migrations compiled into the binary from `migrations/`.
pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations");

/// Errors of the store.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// Opening the database file failed.
    #[error("cannot open the database")]
    Connect(#[from] diesel::ConnectionError),
    /// No pooled connection became free in time.
    #[error("no database connection available")]
    Pool(#[from] diesel::r2d2::PoolError),
    /// A query failed.
    #[error("database query failed")]
    Query(#[from] diesel::result::Error),
    /// Running the embedded migrations failed.
    #[error("database migration failed")]
    Migration(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The blocking task running the query panicked or was cancelled.
    #[error("database task failed")]
    Join(#[from] tokio::task::JoinError),
    /// The store is closing: its permits were withdrawn.
    #[error("the database is closed")]
    Closed(#[from] tokio::sync::AcquireError),
    /// The writer thread could not be started.
    #[error("cannot start the database writer")]
    Spawn(#[source] std::io::Error),
    /// The writer thread stopped, or a write job panicked.
    #[error("the database writer failed")]
    Writer,
    /// The database file could not be flushed to disk.
    #[error("cannot sync the database file")]
    Sync(#[source] std::io::Error),
    /// A job given to [`Db::run`] tried to change the database: pool connections are
    /// read-only (`query_only`), writes belong on [`Db::write`]. A bug, never a user's error.
    #[error("a write was sent to a read-only database connection")]
    ReadOnly(#[source] diesel::result::Error),
}

/// SQLite's message for `SQLITE_READONLY`, which a `query_only` connection returns for any
/// statement that would change the database (diesel keeps only the message, not the code).
const READ_ONLY_MESSAGE: &str = "attempt to write a readonly database";

impl DbError {
    /// `self`, or [`DbError::ReadOnly`] when it is a reader refusing a write.
    fn reader_error(self) -> DbError {
        match self {
            DbError::Query(diesel::result::Error::DatabaseError(kind, info))
                if info.message() == READ_ONLY_MESSAGE =>
            {
                DbError::ReadOnly(diesel::result::Error::DatabaseError(kind, info))
            }
            other => other,
        }
    }
}

/// Reader connections in the pool (and readers running at once).
const READERS: u32 = 4;

/// Write jobs between two background checkpoints. SQLite's own automatic checkpoint (off on our
/// connections) runs every 1,000 pages inside whichever commit crosses the mark; a question
/// writes a few pages in a few jobs, so this keeps the WAL at about the same few megabytes.
pub const CHECKPOINT_EVERY: u64 = 256;

/// One job for the writer thread.
type WriteJob = Box<dyn FnOnce(&mut SqliteConnection) + Send>;

/// Starts the writer thread on `conn`; it runs queued jobs in order until every [`Db`] clone
/// is gone. A job that panics is reported to its caller ([`DbError::Writer`]) and the thread
/// goes on: diesel rolled back the job's transaction while unwinding.
fn spawn_writer(mut conn: SqliteConnection) -> std::io::Result<mpsc::Sender<WriteJob>> {
    let (tx, rx) = mpsc::channel::<WriteJob>();
    std::thread::Builder::new()
        .name("db-writer".into())
        .spawn(move || {
            while let Ok(job) = rx.recv() {
                let conn = &mut conn;
                if std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || job(conn)))
                    .is_err()
                {
                    tracing::error!("a database write panicked");
                }
            }
        })?;
    Ok(tx)
}

/// Pragmas of every connection the service uses (pool and writer). `wal_autocheckpoint = 0`
/// moves checkpoints out of the committing request (see [`Db::write`]); `journal_size_limit`
/// gives the disk back when a checkpoint resets a WAL that grew under load.
const CONNECTION_PRAGMAS: &str = "PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON; \
     PRAGMA synchronous = NORMAL; PRAGMA secure_delete = ON; PRAGMA wal_autocheckpoint = 0; \
     PRAGMA journal_size_limit = 16777216;";

/// Per-connection pragmas of the pool, which holds the readers. WAL is set once at open
/// (setting it per connection raced on fresh starts: docs/stack.md §SQLite). `secure_delete`
/// makes SQLite overwrite deleted content with zeros, so a pruned prompt or answer is not left
/// readable in free pages (retention then truncates the WAL, which still holds the old page
/// images). `query_only` makes the reader refuse any statement that would change the database;
/// it still runs checkpoints, which only copy committed pages from the WAL into the database
/// file (SQLite's documentation of the pragma), so the background checkpoint stays on a reader.
#[derive(Debug, Clone, Copy)]
struct Pragmas;

impl CustomizeConnection<SqliteConnection, diesel::r2d2::Error> for Pragmas {
    fn on_acquire(&self, conn: &mut SqliteConnection) -> Result<(), diesel::r2d2::Error> {
        conn.batch_execute(CONNECTION_PRAGMAS)
            .and_then(|()| conn.batch_execute("PRAGMA query_only = ON;"))
            .map_err(diesel::r2d2::Error::QueryError)
    }
}

/// A handle on the store; cheap to clone.
#[derive(Clone)]
pub struct Db {
    pool: Pool<ConnectionManager<SqliteConnection>>,
    /// Permits for jobs on pool connections (one per connection).
    readers: Arc<Semaphore>,
    /// The queue of the writer thread, which owns the writer connection.
    writer: mpsc::Sender<WriteJob>,
    /// Jobs since the last checkpoint started, and whether one is running.
    jobs: Arc<AtomicU64>,
    checkpointing: Arc<AtomicBool>,
    /// The database file, for [`Db::sync_file`].
    path: Arc<std::path::PathBuf>,
}

impl Db {
    /// Opens (creating if needed) the database at `path`, switches it to WAL, runs pending
    /// migrations on one connection, then builds the pool.
    ///
    /// # Errors
    /// [`DbError::Connect`], [`DbError::Migration`] or [`DbError::Pool`].
    pub fn open(path: &Path) -> Result<Db, DbError> {
        let url = path.to_string_lossy().into_owned();
        let mut conn = SqliteConnection::establish(&url)?;
        // Foreign keys stay off on the migrating connection: a migration that rebuilds a parent
        // table (SQLite cannot alter constraints in place) must not cascade into its children.
        conn.batch_execute(
            "PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; PRAGMA foreign_keys = OFF; \
             PRAGMA secure_delete = ON;",
        )?;
        conn.run_pending_migrations(MIGRATIONS)
            .map_err(DbError::Migration)?;
        conn.batch_execute(CONNECTION_PRAGMAS)?;
        let pool = Pool::builder()
            .max_size(READERS)
            .connection_timeout(Duration::from_secs(10))
            .connection_customizer(Box::new(Pragmas))
            .build(ConnectionManager::new(url))?;
        // The migrating connection stays open as the writer.
        let writer = spawn_writer(conn).map_err(DbError::Spawn)?;
        Ok(Db {
            pool,
            readers: Arc::new(Semaphore::new(READERS as usize)),
            writer,
            jobs: Arc::default(),
            checkpointing: Arc::default(),
            path: Arc::new(path.to_owned()),
        })
    }

    /// Flushes the database file's written pages to disk (`fsync`) on the blocking pool, away
    /// from the writer: a checkpoint that must sync the file afterwards (the truncating one of
    /// retention, which holds off every write while it runs) then finds little left to flush.
    ///
    /// # Errors
    /// [`DbError::Sync`] when the file cannot be opened or synced, [`DbError::Join`].
    pub async fn sync_file(&self) -> Result<(), DbError> {
        let path = self.path.clone();
        tokio::task::spawn_blocking(move || {
            std::fs::File::open(path.as_path())
                .and_then(|f| f.sync_data())
                .map_err(DbError::Sync)
        })
        .await?
    }

    /// Runs the read-only `job` with a pooled reader connection on the blocking pool, once a
    /// reader permit is free (one per pool connection). Readers run side by side and never wait
    /// for the writer (WAL); a read sees every write whose [`Db::write`] has returned. Several
    /// statements that must agree belong in one `conn.transaction`. The connection is
    /// `query_only`: a statement that would change the database fails, so anything that writes
    /// (INSERT, UPDATE, DELETE, DDL, `VACUUM INTO`, a read followed by a write) goes to
    /// [`Db::write`]; a checkpoint, which only copies committed pages, may run here.
    ///
    /// # Errors
    /// Whatever `job` returns, except that a write refused by the reader becomes
    /// [`DbError::ReadOnly`]; [`DbError::Closed`] when the store is closing,
    /// [`DbError::Pool`] when no connection is free in time, or [`DbError::Join`] when the
    /// task panicked.
    pub async fn run<T, F>(&self, job: F) -> Result<T, DbError>
    where
        T: Send + 'static,
        F: FnOnce(&mut SqliteConnection) -> Result<T, DbError> + Send + 'static,
    {
        self.on_reader(job).await.map_err(DbError::reader_error)
    }

    /// Runs `job` on a pool connection once a reader permit is free.
    async fn on_reader<T, F>(&self, job: F) -> Result<T, DbError>
    where
        T: Send + 'static,
        F: FnOnce(&mut SqliteConnection) -> Result<T, DbError> + Send + 'static,
    {
        let permit = self.readers.clone().acquire_owned().await?;
        let pool = self.pool.clone();
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let mut conn = pool.get()?;
            job(&mut conn)
        })
        .await?
    }

    /// Runs `job` on the writer connection, after every write queued before it. Use it for
    /// anything that writes: it never sleeps in SQLite's busy handler behind another of our
    /// writes. The job is queued when `write` is called, not when the future is first polled,
    /// so writes queued one after another run in that order (retention queues one batch at a
    /// time, and a write queued between two batches runs between them).
    ///
    /// # Errors
    /// Whatever `job` returns, or [`DbError::Writer`] when the writer thread is gone or the
    /// job panicked.
    pub fn write<T, F>(&self, job: F) -> impl Future<Output = Result<T, DbError>> + Send + use<T, F>
    where
        T: Send + 'static,
        F: FnOnce(&mut SqliteConnection) -> Result<T, DbError> + Send + 'static,
    {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let queued = self.writer.send(Box::new(move |conn| {
            // The caller may have gone (a dropped request); the write stands.
            let _ = tx.send(job(conn));
        }));
        let db = self.clone();
        async move {
            queued.map_err(|_| DbError::Writer)?;
            let result = rx.await.map_err(|_| DbError::Writer)?;
            db.count_job();
            result
        }
    }

    /// Counts a write job; every [`CHECKPOINT_EVERY`] of them starts a checkpoint (reads add
    /// nothing to the WAL, so they are not counted).
    fn count_job(&self) {
        if self.jobs.fetch_add(1, Ordering::Relaxed) + 1 >= CHECKPOINT_EVERY {
            self.checkpoint_in_background();
        }
    }

    /// Starts a passive checkpoint on a reader connection unless one is running. Passive: it
    /// copies what no reader still needs and never waits for (or blocks) a writer.
    fn checkpoint_in_background(&self) {
        if self.checkpointing.swap(true, Ordering::AcqRel) {
            return;
        }
        self.jobs.store(0, Ordering::Relaxed);
        let db = self.clone();
        tokio::spawn(async move {
            let done = db
                .on_reader(|conn| Ok(conn.batch_execute("PRAGMA wal_checkpoint(PASSIVE);")?))
                .await;
            if let Err(e) = done {
                tracing::warn!(error = %e, "background WAL checkpoint failed");
            }
            db.checkpointing.store(false, Ordering::Release);
        });
    }
}
