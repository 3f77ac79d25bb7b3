//! `mcp-consent prune`: deletes old decided questions now, as the service does hourly. Through
//! the running service over its socket when there is one (its batches then queue on the
//! service's own writer, so a request waits for one batch at most), else on the store itself.

use std::path::PathBuf;

use clap::Args;

use crate::app::StartupError;
use crate::client::{ClientError, ServiceClient, TransportError};
use crate::config::Config;
use crate::paths::StateDir;

/// `mcp-consent prune …`.
#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Config file (for the retention bounds).
    #[arg(long, env = "MCP_CONSENT_CONFIG")]
    config: Option<PathBuf>,
}

/// Why `prune` failed.
#[derive(Debug, thiserror::Error)]
pub enum PruneError {
    /// The config, the state directory or the store (pruning without the service).
    #[error(transparent)]
    Store(#[from] StartupError),
    /// The running service refused or failed.
    #[error(transparent)]
    Service(#[from] ClientError),
}

/// Prunes the store of the state directory at `root` once and prints what went.
///
/// # Errors
/// [`PruneError`].
pub async fn run(args: PruneArgs, root: PathBuf) -> Result<(), PruneError> {
    super::init_tracing("warn");
    super::owner_only_files();
    let c = Config::load(args.config.as_deref()).map_err(StartupError::from)?;
    let client = ServiceClient::new(StateDir::at(root.clone()), None);
    let (r, how) = match client.prune(&c.retention).await {
        Ok(r) => (r, "through the running service"),
        Err(e) if no_service(&e) => (
            crate::app::prune(&c, root).await?,
            "on the store (the service is not running)",
        ),
        Err(e) => return Err(e.into()),
    };
    if r.held_elsewhere {
        // Not a failure: the run holding the lock prunes with its own instance's bounds.
        println!(
            "another retention run holds the shared database's retention lock; nothing pruned here"
        );
        return Ok(());
    }
    println!(
        "pruned {} questions ({} decided more than {} days ago, {} beyond the newest {}); {} expired logins; {how}",
        r.questions(),
        r.by_age,
        c.retention.max_age_days,
        r.by_count,
        c.retention.max_terminal,
        r.expired_logins
    );
    Ok(())
}

/// Whether `e` says that no service runs for this state directory: nothing listens on its
/// socket, or it never made a token.
fn no_service(e: &ClientError) -> bool {
    match e {
        ClientError::Unreachable {
            source: TransportError::Connect(e),
            ..
        } => matches!(
            e.kind(),
            std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
        ),
        ClientError::NoToken(_) => true,
        _ => false,
    }
}
