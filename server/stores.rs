//! Which stores an instance uses. Its own SQLite store in the state directory always holds
//! what is the instance's alone (API tokens, login links, browser sessions); the questions and
//! the sampling review live there too, or — with `database_url` (or
//! `MCP_CONSENT_DATABASE_URL`) — in a PostgreSQL database shared with other instances.

use std::path::PathBuf;

use crate::config::Config;
use crate::db::postgres::UrlError;
use crate::db::{Db, DbError, Target};
use crate::paths::{PathError, StateDir};

/// The environment variable that names the shared database; it wins over `database_url`.
pub const DATABASE_URL_ENV: &str = "MCP_CONSENT_DATABASE_URL";

/// Why the shared database's settings cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum DatabaseError {
    /// `database_url` (or the environment variable) is unusable.
    #[error(transparent)]
    Url(#[from] UrlError),
    /// `database_password_file` is not owner-only, not the user's, a symlink, or unreadable.
    #[error("database_password_file: {0}")]
    PasswordFile(#[source] PathError),
    /// `database_password_file` holds nothing.
    #[error("database_password_file {} is empty", .0.display())]
    EmptyPassword(PathBuf),
    /// `database_password_file` is set without a database to use it for.
    #[error("database_password_file is set but no database_url (or {DATABASE_URL_ENV}) is")]
    PasswordWithoutUrl,
    /// The store could not be opened.
    #[error(transparent)]
    Db(#[from] DbError),
}

/// The instance's stores: `local` (its own SQLite file) and `queue` (the same store, or the
/// shared database).
#[derive(Clone)]
pub struct Stores {
    /// Tokens, login links and sessions.
    pub local: Db,
    /// Questions, the sampling review, rules and the audit.
    pub queue: Db,
}

/// The shared database `config` names, if any: the environment variable, else
/// `database_url`; the password from `database_password_file` (its trailing newline dropped).
///
/// # Errors
/// [`DatabaseError`] for an unusable URL or password file.
pub fn shared_target(config: &Config) -> Result<Option<Target>, DatabaseError> {
    let url = std::env::var(DATABASE_URL_ENV)
        .ok()
        .filter(|u| !u.is_empty())
        .or_else(|| config.database_url.clone());
    let Some(url) = url else {
        return match config.database_password_file {
            Some(_) => Err(DatabaseError::PasswordWithoutUrl),
            None => Ok(None),
        };
    };
    let password = match &config.database_password_file {
        Some(path) => Some(read_password(path)?),
        None => None,
    };
    Ok(Some(Target::new(&url, password.as_deref())?))
}

/// The password in `path`: the file as it is, less one trailing newline.
fn read_password(path: &std::path::Path) -> Result<String, DatabaseError> {
    let text = crate::access_files::read(path, crate::access_files::Holds::Secret)
        .map_err(DatabaseError::PasswordFile)?;
    let password = text
        .strip_suffix('\n')
        .map(|t| t.strip_suffix('\r').unwrap_or(t))
        .unwrap_or(&text);
    if password.is_empty() {
        return Err(DatabaseError::EmptyPassword(path.to_owned()));
    }
    Ok(password.to_owned())
}

/// Opens the stores of an instance on `state`: its own SQLite store, and the shared database
/// when `config` names one (connecting and migrating on a blocking thread: libpq waits up to
/// its connect timeout).
///
/// # Errors
/// [`DatabaseError`].
pub async fn open(config: &Config, state: &StateDir) -> Result<Stores, DatabaseError> {
    let target = shared_target(config)?;
    let local = Db::open(&state.db_file())?;
    let queue = match target {
        None => local.clone(),
        Some(target) => {
            tracing::info!(database = target.host_port(), "using the shared database");
            tokio::task::spawn_blocking(move || Db::open_shared(&target))
                .await
                .map_err(DbError::Join)??
        }
    };
    Ok(Stores { local, queue })
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn file(dir: &std::path::Path, text: &str, mode: u32) -> PathBuf {
        let path = dir.join("pw");
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path
    }

    #[test]
    fn the_password_file_loses_one_trailing_newline_and_must_be_owner_only() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(
            read_password(&file(tmp.path(), " pass word \n", 0o600)).unwrap(),
            " pass word "
        );
        assert_eq!(
            read_password(&file(tmp.path(), "pw\r\n", 0o600)).unwrap(),
            "pw"
        );
        assert!(matches!(
            read_password(&file(tmp.path(), "pw\n", 0o644)),
            Err(DatabaseError::PasswordFile(_))
        ));
        assert!(matches!(
            read_password(&file(tmp.path(), "\n", 0o600)),
            Err(DatabaseError::EmptyPassword(_))
        ));
    }

    #[test]
    fn a_password_file_without_a_database_is_refused() {
        let config = Config {
            database_password_file: Some("/nonexistent".into()),
            ..Config::default()
        };
        assert!(matches!(
            shared_target(&config),
            Err(DatabaseError::PasswordWithoutUrl)
        ));
    }
}
