//! `mcp-consent token rotate`: through the running service over its socket (the old token is
//! refused at once), or, when no service listens, on the store directly (the next start uses the
//! new token).

use clap::Subcommand;

use crate::auth::rotate;
use crate::client::{ClientError, ServiceClient, TransportError};
use crate::db::{Db, DbError};
use crate::paths::{PathError, StateDir};

/// `mcp-consent token …`.
#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Replace the API token (after a leak): the old one stops working at once, and local
    /// clients read the new one from `<state>/api-token`.
    Rotate,
}

/// Why the token could not be rotated.
#[derive(Debug, thiserror::Error)]
pub enum TokenCliError {
    /// The running service refused or failed.
    #[error(transparent)]
    Service(#[from] ClientError),
    /// The offline rotation failed.
    #[error(transparent)]
    Offline(#[from] rotate::TokenError),
    /// The state directory could not be prepared.
    #[error(transparent)]
    State(#[from] PathError),
    /// The store could not be opened.
    #[error(transparent)]
    Db(#[from] DbError),
}

/// Runs `command` for the state directory at `root`; returns the line to print.
///
/// # Errors
/// [`TokenCliError`].
pub async fn run(
    command: &TokenCommand,
    root: std::path::PathBuf,
) -> Result<String, TokenCliError> {
    let TokenCommand::Rotate = command;
    let client = ServiceClient::new(StateDir::at(root.clone()), None);
    match client.rotate_token().await {
        Ok(()) => Ok(format!(
            "rotated: the running service refuses the old token from now on; the new one is in {}",
            StateDir::at(root).api_token_file().display()
        )),
        Err(ClientError::Unreachable {
            source: TransportError::Connect(e),
            ..
        }) if matches!(
            e.kind(),
            std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
        ) =>
        {
            // Nobody listens on the socket: rotate in the store itself.
            let state = StateDir::prepare(root)?;
            let db = Db::open(&state.db_file())?;
            let tokens = crate::auth::ApiTokens::default();
            rotate::rotate(&state, &db, &tokens, &crate::clock::SystemClock).await?;
            Ok(format!(
                "rotated (the service is not running): the old token is no longer valid; the new one is in {}",
                state.api_token_file().display()
            ))
        }
        Err(e) => Err(e.into()),
    }
}
