//! The SQLite store: an r2d2 pool of diesel connections, the pragmas every connection gets,
//! embedded migrations, and [`Db::run`], the one way to touch the database from async code
//! (the closure runs on tokio's blocking pool, never on the executor).

pub mod approvals;
pub mod models;
pub mod schema;
pub mod schema_check;

use std::path::Path;
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::r2d2::{ConnectionManager, CustomizeConnection, Pool};
use diesel::{Connection, SqliteConnection};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};

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
}

/// Per-connection pragmas. WAL is set once at open (setting it per connection raced on fresh
/// starts: docs/stack.md §SQLite). `secure_delete` makes SQLite overwrite deleted content with zeros,
/// so a pruned prompt or answer is not left readable in free pages (retention then truncates
/// the WAL, which still holds the old page images).
#[derive(Debug, Clone, Copy)]
struct Pragmas;

impl CustomizeConnection<SqliteConnection, diesel::r2d2::Error> for Pragmas {
    fn on_acquire(&self, conn: &mut SqliteConnection) -> Result<(), diesel::r2d2::Error> {
        conn.batch_execute(
            "PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL; \
             PRAGMA secure_delete = ON;",
        )
        .map_err(diesel::r2d2::Error::QueryError)
    }
}

/// A handle on the store; cheap to clone.
#[derive(Clone)]
pub struct Db {
    pool: Pool<ConnectionManager<SqliteConnection>>,
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
        drop(conn);
        let pool = Pool::builder()
            .max_size(4)
            .connection_timeout(Duration::from_secs(10))
            .connection_customizer(Box::new(Pragmas))
            .build(ConnectionManager::new(url))?;
        Ok(Db { pool })
    }

    /// Runs `job` with a pooled connection on the blocking pool.
    ///
    /// # Errors
    /// Whatever `job` returns, [`DbError::Pool`] when no connection is free, or
    /// [`DbError::Join`] when the task panicked.
    pub async fn run<T, F>(&self, job: F) -> Result<T, DbError>
    where
        T: Send + 'static,
        F: FnOnce(&mut SqliteConnection) -> Result<T, DbError> + Send + 'static,
    {
        let pool = self.pool.clone();
        tokio::task::spawn_blocking(move || {
            let mut conn = pool.get()?;
            job(&mut conn)
        })
        .await?
    }
}
