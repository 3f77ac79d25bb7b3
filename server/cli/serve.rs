//! `mcp-consent serve`: runs the service until SIGINT/SIGTERM.

use std::path::PathBuf;

use clap::Args;

use crate::app::{Application, StartupError};
use crate::config::Config;

/// `mcp-consent serve …`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Listen address (default from the config: 127.0.0.1:7777; port 0 picks a free port).
    #[arg(long)]
    listen: Option<String>,
    /// Config file. Default: $XDG_CONFIG_HOME/mcp-consent/config.toml if it exists.
    #[arg(long, env = "MCP_CONSENT_CONFIG")]
    config: Option<PathBuf>,
}

/// Loads the config, builds the service on the state directory at `root`, prints the one
/// `listening on` line and serves until stopped.
///
/// # Errors
/// [`StartupError`]: the config, the state directory, the store or the listener; or the web
/// server failing later.
pub async fn run(args: ServeArgs, root: PathBuf) -> Result<(), StartupError> {
    super::init_tracing("info");
    super::owner_only_files();
    let descriptors = crate::app::raise_descriptor_limit(8192);
    let config = Config::load(args.config.as_deref())?;
    let listen = args.listen.unwrap_or_else(|| config.listen.clone());
    let app = Application::build(&config, root, &listen).await?;
    println!("listening on http://{}", app.addr());
    tracing::debug!(descriptors, "open-file limit");
    // stdout carries exactly the one line docs/design.md §serve promises; the hint goes to the
    // log.
    tracing::info!("to log in, run `mcp-consent login` and open the link it prints");
    app.run_until_stopped().await
}
