//! The shared store's PostgreSQL side: where the database is ([`Target`]: `database_url`, its
//! password, `sslmode` as libpq spells it), and opening it: the first connection, migrations
//! run by one instance while the others wait on an advisory lock, and the refusal to start on a
//! schema newer than this binary.

use diesel::connection::SimpleConnection;
use diesel::migration::MigrationSource;
use diesel::pg::Pg;
use diesel::{Connection, PgConnection};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};

use super::DbError;

/// Migrations compiled into the binary from `migrations_pg/` (the PostgreSQL side of the one
/// schema in `schema.rs`).
pub const MIGRATIONS_PG: EmbeddedMigrations = embed_migrations!("migrations_pg");

/// Advisory lock key held while one instance migrates (the others wait on it).
const MIGRATION_LOCK: i64 = 0x6d63_705f_6d69_6772; // "mcp_migr"

/// Seconds libpq waits for a connection when the URL does not say (`connect_timeout`): an
/// unreachable database fails the start in well under 15 s instead of hanging.
const CONNECT_TIMEOUT_SECS: u32 = 5;

/// `sslmode` values as libpq spells them.
pub const SSL_MODES: &[&str] = &[
    "disable",
    "allow",
    "prefer",
    "require",
    "verify-ca",
    "verify-full",
];

/// A `database_url` that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum UrlError {
    /// Not a URL libpq reads.
    #[error("database_url is not a postgres:// URL: {0}")]
    Syntax(String),
    /// An `sslmode` libpq does not know.
    #[error("database_url: sslmode={0:?} is not one of {modes}", modes = SSL_MODES.join(", "))]
    SslMode(String),
}

/// Where the shared database is: the URL handed to libpq (password and connect timeout set)
/// and, for messages, its host and port (never the password).
#[derive(Clone)]
pub struct Target {
    url: String,
    host_port: String,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("host_port", &self.host_port)
            .finish_non_exhaustive()
    }
}

impl Target {
    /// The database at `url` (`postgres://USER[:PASSWORD]@HOST:PORT/DB?sslmode=…`), with
    /// `password` (from `database_password_file`) replacing any the URL carries.
    ///
    /// # Errors
    /// [`UrlError`] for a URL that is not `postgres://` or `postgresql://`, or an unknown
    /// `sslmode`.
    pub fn new(url: &str, password: Option<&str>) -> Result<Target, UrlError> {
        let mut parsed = match url::Url::parse(url) {
            // libpq takes `user@/db?host=/socket/dir`; the `url` crate refuses an empty host
            // after a user, so a placeholder stands in (the `host` parameter overrides it).
            Err(url::ParseError::EmptyHost) if url.contains("host=") => {
                url::Url::parse(&url.replacen("@/", "@localhost/", 1))
            }
            parsed => parsed,
        }
        .map_err(|e| UrlError::Syntax(e.to_string()))?;
        if !matches!(parsed.scheme(), "postgres" | "postgresql") {
            return Err(UrlError::Syntax(format!(
                "the scheme is {:?}, not postgres",
                parsed.scheme()
            )));
        }
        let mut has_timeout = false;
        let mut socket_host = None;
        for (key, value) in parsed.query_pairs() {
            match key.as_ref() {
                "sslmode" if !SSL_MODES.contains(&value.as_ref()) => {
                    return Err(UrlError::SslMode(value.into_owned()));
                }
                "connect_timeout" => has_timeout = true,
                "host" => socket_host = Some(value.into_owned()),
                _ => {}
            }
        }
        if let Some(password) = password {
            parsed
                .set_password(Some(password))
                .map_err(|()| UrlError::Syntax("the URL cannot carry a password".into()))?;
        }
        if !has_timeout {
            parsed
                .query_pairs_mut()
                .append_pair("connect_timeout", &CONNECT_TIMEOUT_SECS.to_string());
        }
        let host = socket_host
            .or_else(|| parsed.host_str().map(str::to_owned))
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "localhost".to_owned());
        let port = parsed.port().unwrap_or(5432);
        Ok(Target {
            url: parsed.into(),
            host_port: format!("{host}:{port}"),
        })
    }

    /// The URL libpq connects to (holds the password: never log it).
    pub(super) fn url(&self) -> &str {
        &self.url
    }

    /// `HOST:PORT`, for messages.
    pub fn host_port(&self) -> &str {
        &self.host_port
    }
}

/// Connects to `target`, then migrates: the first instance to take [`MIGRATION_LOCK`] runs
/// the pending migrations, the others wait for it and find none left. A database already
/// migrated past this binary's migrations is refused before anything is written.
///
/// # Errors
/// [`DbError::Unreachable`] naming the host and port, [`DbError::SchemaNewer`],
/// [`DbError::Migration`] or [`DbError::Query`].
pub fn connect_and_migrate(target: &Target) -> Result<PgConnection, DbError> {
    let mut conn =
        PgConnection::establish(target.url()).map_err(|source| DbError::Unreachable {
            host_port: target.host_port.clone(),
            source,
        })?;
    conn.batch_execute(&format!("SELECT pg_advisory_lock({MIGRATION_LOCK})"))?;
    let migrated = migrate(&mut conn);
    let unlocked = conn.batch_execute(&format!("SELECT pg_advisory_unlock({MIGRATION_LOCK})"));
    migrated?;
    unlocked?;
    Ok(conn)
}

/// Refuses a schema newer than this binary, then runs what is pending.
fn migrate(conn: &mut PgConnection) -> Result<(), DbError> {
    let known: Vec<String> = MigrationSource::<Pg>::migrations(&MIGRATIONS_PG)
        .map_err(DbError::Migration)?
        .iter()
        .map(|m| m.name().version().to_string())
        .collect();
    let applied = conn.applied_migrations().map_err(DbError::Migration)?;
    if let Some(newer) = applied
        .iter()
        .map(ToString::to_string)
        .find(|v| !known.contains(v))
    {
        return Err(DbError::SchemaNewer(newer));
    }
    conn.run_pending_migrations(MIGRATIONS_PG)
        .map_err(DbError::Migration)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_file_replaces_the_urls_and_a_timeout_is_added() {
        let t = Target::new(
            "postgres://ann:old@db.example:6543/queue?sslmode=verify-full",
            Some("s3cr:t"),
        )
        .unwrap();
        assert_eq!(t.host_port(), "db.example:6543");
        assert_eq!(
            t.url(),
            "postgres://ann:s3cr%3At@db.example:6543/queue?sslmode=verify-full&connect_timeout=5"
        );
        assert!(!format!("{t:?}").contains("s3cr"));
    }

    #[test]
    fn an_unknown_sslmode_and_another_scheme_are_refused() {
        assert!(matches!(
            Target::new("postgres://a@h/d?sslmode=verify_full", None),
            Err(UrlError::SslMode(m)) if m == "verify_full"
        ));
        assert!(matches!(
            Target::new("mysql://a@h/d", None),
            Err(UrlError::Syntax(_))
        ));
        let t = Target::new("postgresql://a@/d?host=/run/postgresql", None).unwrap();
        assert_eq!(t.host_port(), "/run/postgresql:5432");
    }
}
