//! `mcp-consent prune`: deletes old decided questions now, as the service does hourly.

use std::path::PathBuf;

use clap::Args;

use crate::app::StartupError;
use crate::config::Config;

/// `mcp-consent prune …`.
#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Config file (for the retention bounds).
    #[arg(long, env = "MCP_CONSENT_CONFIG")]
    config: Option<PathBuf>,
}

/// Prunes the store of the state directory at `root` once and prints what went.
///
/// # Errors
/// [`StartupError`]: the config, the state directory or the store.
pub async fn run(args: PruneArgs, root: PathBuf) -> Result<(), StartupError> {
    super::init_tracing("warn");
    super::owner_only_files();
    let c = Config::load(args.config.as_deref())?;
    let r = crate::app::prune(&c, root).await?;
    if r.held_elsewhere {
        // Not a failure: the run holding the lock prunes with its own instance's bounds.
        println!(
            "another retention run holds the shared database's retention lock; nothing pruned here"
        );
        return Ok(());
    }
    println!(
        "pruned {} questions ({} decided more than {} days ago, {} beyond the newest {}); {} expired logins",
        r.questions(),
        r.by_age,
        c.retention.max_age_days,
        r.by_count,
        c.retention.max_terminal,
        r.expired_logins
    );
    Ok(())
}
