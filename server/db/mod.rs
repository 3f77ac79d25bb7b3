//! The store. Embedded (the default): SQLite, an r2d2 pool of read-only diesel connections, one writer connection,
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
//!
//! Shared (`database_url`): PostgreSQL, one r2d2 pool for reads and writes (the server orders
//! concurrent writers itself, and several instances write at once), migrated by one instance
//! at a time ([`postgres`]), with changes announced between instances ([`listen`]). The same
//! queries run on both: every job gets a [`Conn`].

pub mod approvals;
pub mod audit;
pub mod columns;
pub mod conn;
pub mod controls;
pub mod grants;
pub mod history;
pub mod listen;
pub mod models;
pub mod postgres;
pub mod prune;
pub mod questions;
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
use diesel::r2d2::{CustomizeConnection, ManageConnection, Pool, R2D2Connection};
use diesel::{Connection, PgConnection, SqliteConnection};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};
use tokio::sync::Semaphore;

pub use conn::{Conn, Engine, lock_for_transaction};
pub use postgres::Target;
pub use questions::Question;

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
    /// The shared database did not answer at start.
    #[error("cannot reach the database at {host_port}: {source}")]
    Unreachable {
        /// `HOST:PORT` of `database_url`.
        host_port: String,
        /// libpq's reason.
        #[source]
        source: diesel::ConnectionError,
    },
    /// The shared database was migrated by a newer mcp-consent than this one.
    #[error(
        "the database's schema is newer than this mcp-consent (it has migration {0}, which this \
         binary does not know): upgrade mcp-consent on this machine; nothing was written"
    )]
    SchemaNewer(String),
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

    /// Whether the database could not be reached (down, restarting, or the connection lost):
    /// a passing condition the web edge answers with 503, not a fault of the service.
    pub fn is_unavailable(&self) -> bool {
        use diesel::result::{DatabaseErrorKind, Error};
        match self {
            DbError::Connect(_) | DbError::Pool(_) | DbError::Unreachable { .. } => true,
            DbError::Query(Error::DatabaseError(
                DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand,
                _,
            )) => true,
            DbError::Query(Error::DatabaseError(_, info)) => {
                // libpq's words for a connection that went away mid-query.
                let m = info.message();
                m.contains("server closed the connection")
                    || m.contains("terminating connection")
                    || m.contains("no connection to the server")
                    || m.contains("the database system is")
            }
            _ => false,
        }
    }
}

/// Reader connections in the pool (and readers running at once).
const READERS: u32 = 4;

/// Connections of an instance's pool on the shared database (reads and writes alike).
const PG_CONNECTIONS: u32 = 8;

/// How long a job waits for a pool connection before failing (on the shared database: how
/// long a request waits while the database is unreachable before it answers 503).
const PG_CHECKOUT: Duration = Duration::from_secs(3);

/// Write jobs between two background checkpoints. SQLite's own automatic checkpoint (off on our
/// connections) runs every 1,000 pages inside whichever commit crosses the mark; a question
/// writes a few pages in a few jobs, so this keeps the WAL at about the same few megabytes.
pub const CHECKPOINT_EVERY: u64 = 256;

/// The WAL size (bytes) past which a background checkpoint also tries to truncate it.
pub const WAL_TRUNCATE_ABOVE: u64 = 64 << 20;

/// The WAL file beside the database file `db`.
fn wal_path(db: &std::path::Path) -> std::path::PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push("-wal");
    std::path::PathBuf::from(name)
}

/// One job for the writer thread.
type WriteJob = Box<dyn FnOnce(&mut Conn) + Send>;

/// Starts the writer thread on `conn`; it runs queued jobs in order until every [`Db`] clone
/// is gone. A job that panics is reported to its caller ([`DbError::Writer`]) and the thread
/// goes on: diesel rolled back the job's transaction while unwinding.
fn spawn_writer(mut conn: Conn) -> std::io::Result<mpsc::Sender<WriteJob>> {
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

impl CustomizeConnection<Conn, diesel::r2d2::Error> for Pragmas {
    fn on_acquire(&self, conn: &mut Conn) -> Result<(), diesel::r2d2::Error> {
        match conn {
            Conn::Sqlite(conn) => conn
                .batch_execute(CONNECTION_PRAGMAS)
                .and_then(|()| conn.batch_execute("PRAGMA query_only = ON;"))
                .map_err(diesel::r2d2::Error::QueryError),
            Conn::Pg(_) => Ok(()),
        }
    }
}

/// Opens the pool's connections on one engine (diesel's own manager would try each engine
/// in turn on the URL).
#[derive(Debug, Clone)]
struct Manager {
    engine: Engine,
    url: String,
}

impl ManageConnection for Manager {
    type Connection = Conn;
    type Error = diesel::r2d2::Error;

    fn connect(&self) -> Result<Conn, diesel::r2d2::Error> {
        match self.engine {
            Engine::Sqlite => SqliteConnection::establish(&self.url).map(Conn::Sqlite),
            Engine::Postgres => PgConnection::establish(&self.url).map(Conn::Pg),
        }
        .map_err(diesel::r2d2::Error::ConnectionError)
    }

    fn is_valid(&self, conn: &mut Conn) -> Result<(), diesel::r2d2::Error> {
        conn.ping().map_err(diesel::r2d2::Error::QueryError)
    }

    fn has_broken(&self, conn: &mut Conn) -> bool {
        std::thread::panicking() || conn.is_broken()
    }
}

/// What only the embedded store has: the writer thread and the checkpoint bookkeeping.
#[derive(Clone)]
struct Embedded {
    /// The queue of the writer thread, which owns the writer connection.
    writer: mpsc::Sender<WriteJob>,
    /// Jobs since the last checkpoint started, and whether one is running.
    jobs: Arc<AtomicU64>,
    checkpointing: Arc<AtomicBool>,
    /// The database file, for [`Db::sync_file`].
    path: Arc<std::path::PathBuf>,
}

/// What only the shared store has: where it is, and the line to the other instances.
#[derive(Clone)]
struct Shared {
    target: Target,
    announcer: listen::Announcer,
    heard: Arc<std::sync::Mutex<Option<tokio::sync::mpsc::UnboundedReceiver<listen::Heard>>>>,
}

/// The engine's own parts of a [`Db`].
#[derive(Clone)]
enum Parts {
    Embedded(Embedded),
    Shared(Shared),
}

/// A handle on the store; cheap to clone.
#[derive(Clone)]
pub struct Db {
    pool: Pool<Manager>,
    /// Permits for jobs on pool connections (one per connection).
    readers: Arc<Semaphore>,
    parts: Parts,
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
            .build(Manager {
                engine: Engine::Sqlite,
                url,
            })?;
        // The migrating connection stays open as the writer.
        let writer = spawn_writer(Conn::Sqlite(conn)).map_err(DbError::Spawn)?;
        Ok(Db {
            pool,
            readers: Arc::new(Semaphore::new(READERS as usize)),
            parts: Parts::Embedded(Embedded {
                writer,
                jobs: Arc::default(),
                checkpointing: Arc::default(),
                path: Arc::new(path.to_owned()),
            }),
        })
    }

    /// Opens the shared store at `target`: connects (failing within libpq's connect timeout,
    /// naming the host and port, when the database does not answer), migrates under the
    /// migration lock ([`postgres::connect_and_migrate`]), builds the pool and starts the
    /// notification thread ([`listen`]). Call from a blocking context or at start.
    ///
    /// # Errors
    /// [`DbError::Unreachable`], [`DbError::SchemaNewer`], [`DbError::Migration`],
    /// [`DbError::Query`] or [`DbError::Spawn`].
    pub fn open_shared(target: &Target) -> Result<Db, DbError> {
        drop(postgres::connect_and_migrate(target)?);
        // Unchecked: connections are made on demand, so a database that goes away later makes
        // requests fail (503) rather than the pool.
        let pool = Pool::builder()
            .max_size(PG_CONNECTIONS)
            .min_idle(Some(1))
            .connection_timeout(PG_CHECKOUT)
            .build_unchecked(Manager {
                engine: Engine::Postgres,
                url: target.url().to_owned(),
            });
        let (announcer, heard) = listen::start(target.clone()).map_err(DbError::Spawn)?;
        Ok(Db {
            pool,
            readers: Arc::new(Semaphore::new(PG_CONNECTIONS as usize)),
            parts: Parts::Shared(Shared {
                target: target.clone(),
                announcer,
                heard: Arc::new(std::sync::Mutex::new(Some(heard))),
            }),
        })
    }

    /// Which engine this store runs on.
    pub fn engine(&self) -> Engine {
        match self.parts {
            Parts::Embedded(_) => Engine::Sqlite,
            Parts::Shared(_) => Engine::Postgres,
        }
    }

    /// `HOST:PORT` of the shared database (`None` for the embedded store).
    pub fn shared_host_port(&self) -> Option<&str> {
        match &self.parts {
            Parts::Embedded(_) => None,
            Parts::Shared(s) => Some(s.target.host_port()),
        }
    }

    /// Announces `payload` to every instance on the shared database (a no-op on the embedded
    /// store, which has no other instance).
    pub fn announce(&self, payload: String) {
        if let Parts::Shared(s) = &self.parts {
            s.announcer.announce(payload);
        }
    }

    /// What the other instances announce, once (the first caller takes it; `None` after, and
    /// on the embedded store).
    pub fn take_heard(&self) -> Option<tokio::sync::mpsc::UnboundedReceiver<listen::Heard>> {
        match &self.parts {
            Parts::Embedded(_) => None,
            Parts::Shared(s) => s
                .heard
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take(),
        }
    }

    /// Whether the store answers a trivial query now (for `/healthz`).
    pub async fn ping(&self) -> bool {
        self.run(|c| Ok(c.ping()?)).await.is_ok()
    }

    /// Flushes the database file's written pages to disk (`fsync`) on the blocking pool, away
    /// from the writer: a checkpoint that must sync the file afterwards (the truncating one of
    /// retention, which holds off every write while it runs) then finds little left to flush.
    ///
    /// # Errors
    /// [`DbError::Sync`] when the file cannot be opened or synced, [`DbError::Join`].
    pub async fn sync_file(&self) -> Result<(), DbError> {
        let Parts::Embedded(embedded) = &self.parts else {
            return Ok(());
        };
        let path = embedded.path.clone();
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
        F: FnOnce(&mut Conn) -> Result<T, DbError> + Send + 'static,
    {
        self.on_reader(job).await.map_err(DbError::reader_error)
    }

    /// Runs `job` on a pool connection once a reader permit is free.
    async fn on_reader<T, F>(&self, job: F) -> Result<T, DbError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Conn) -> Result<T, DbError> + Send + 'static,
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
        F: FnOnce(&mut Conn) -> Result<T, DbError> + Send + 'static,
    {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let db = self.clone();
        let queued = match &self.parts {
            Parts::Embedded(embedded) => embedded
                .writer
                .send(Box::new(move |conn| {
                    // The caller may have gone (a dropped request); the write stands.
                    let _ = tx.send(job(conn));
                }))
                .map_err(|_| DbError::Writer),
            // The shared store writes on any pool connection; the job is started now, so it
            // stands even when the caller goes away, as on the writer.
            Parts::Shared(_) => {
                let writing = self.clone();
                tokio::spawn(async move {
                    let _ = tx.send(writing.on_reader(job).await);
                });
                Ok(())
            }
        };
        async move {
            queued?;
            let result = rx.await.map_err(|_| DbError::Writer)?;
            db.count_job();
            result
        }
    }

    /// Counts a write job; every [`CHECKPOINT_EVERY`] of them starts a checkpoint (reads add
    /// nothing to the WAL, so they are not counted).
    fn count_job(&self) {
        let Parts::Embedded(embedded) = &self.parts else {
            return;
        };
        if embedded.jobs.fetch_add(1, Ordering::Relaxed) + 1 >= CHECKPOINT_EVERY {
            self.checkpoint_in_background(embedded);
        }
    }

    /// Starts a passive checkpoint on a reader connection unless one is running. Passive: it
    /// copies what no reader still needs and never waits for (or blocks) a writer. Under a
    /// steady stream of readers the WAL may never be rewound (a reader still uses it whenever
    /// a writer would), so it only grows; past [`WAL_TRUNCATE_ABOVE`] the checkpoint is
    /// followed by one attempt, on the writer, to copy it all and truncate it
    /// ([`prune::try_truncate_wal`], which never waits for a reader: it is tried again after
    /// the next [`CHECKPOINT_EVERY`] writes when one was in the way).
    fn checkpoint_in_background(&self, embedded: &Embedded) {
        if embedded.checkpointing.swap(true, Ordering::AcqRel) {
            return;
        }
        embedded.jobs.store(0, Ordering::Relaxed);
        let checkpointing = embedded.checkpointing.clone();
        let wal = wal_path(&embedded.path);
        let db = self.clone();
        tokio::spawn(async move {
            let done = db
                .on_reader(|conn| Ok(conn.batch_execute("PRAGMA wal_checkpoint(PASSIVE);")?))
                .await;
            if let Err(e) = done {
                tracing::warn!(error = %e, "background WAL checkpoint failed");
            }
            let grown = std::fs::metadata(&wal).is_ok_and(|m| m.len() > WAL_TRUNCATE_ABOVE);
            if grown {
                match db.write(|c| Ok(prune::try_truncate_wal(c)?)).await {
                    Ok(true) => tracing::info!("truncated a WAL that grew under load"),
                    Ok(false) => {}
                    Err(e) => tracing::warn!(error = %e, "WAL truncation failed"),
                }
            }
            checkpointing.store(false, Ordering::Release);
        });
    }
}

/// Leave to run retention: on the shared database its advisory lock, held by a connection of
/// its own for one run (dropping the lease closes the connection, which releases the lock,
/// also when the task holding it is aborted or the process dies); on the embedded store, whose
/// one writer runs batches one at a time, nothing to hold.
pub struct RetentionLease {
    _conn: Option<Conn>,
}

impl Db {
    /// Takes leave to run retention ([`RetentionLease`]); `None` when another run (on any
    /// instance, or `mcp-consent prune`) holds the shared database's lock.
    ///
    /// # Errors
    /// [`DbError::Connect`] or [`DbError::Query`]; [`DbError::Join`].
    pub async fn lease_retention(&self) -> Result<Option<RetentionLease>, DbError> {
        let Parts::Shared(shared) = &self.parts else {
            return Ok(Some(RetentionLease { _conn: None }));
        };
        let url = shared.target.url().to_owned();
        tokio::task::spawn_blocking(move || {
            let mut conn = Conn::Pg(PgConnection::establish(&url)?);
            let locked = prune::try_lock_retention(&mut conn)?;
            Ok(locked.then_some(RetentionLease { _conn: Some(conn) }))
        })
        .await?
    }
}
