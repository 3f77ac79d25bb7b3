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
pub async fn run(args: ServeArgs, root: PathBuf, explicit_root: bool) -> Result<(), StartupError> {
    super::init_tracing("info");
    super::owner_only_files();
    let descriptors = crate::app::raise_descriptor_limit(8192);
    let config_file = Config::file_to_read(args.config.as_deref());
    let config = Config::load(args.config.as_deref())?;
    let listen = args.listen.unwrap_or_else(|| config.listen.clone());
    let login = login_command(explicit_root, &root);
    let app = Application::build(&config, root.clone(), &listen)
        .await?
        .with_config_file(args.config.clone());
    record_config_file(&root, config_file.as_deref());
    println!("listening on http://{}", app.addr());
    tracing::debug!(descriptors, "open-file limit");
    // stdout carries exactly the one line docs/design.md §serve promises; the rest goes to the
    // log: where everything is, and how to log in from here.
    tracing::info!(
        state_dir = %root.display(),
        config = %config_file.map_or_else(|| "none (defaults)".to_owned(), |p| p.display().to_string()),
        models = ?config.models.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(),
        "mcp-consent started"
    );
    tracing::info!("to log in, run `{login}` and open the link it prints");
    app.run_until_stopped().await
}

/// The login command that works from where the service was started: `cargo run --release --
/// login` when this binary is a build in a cargo target directory (not installed yet), with
/// `--state-dir` when the state directory is not the default one.
fn login_command(explicit_root: bool, root: &std::path::Path) -> String {
    let in_target = std::env::current_exe()
        .is_ok_and(|exe| exe.components().any(|c| c.as_os_str() == "target"));
    let mut command = if in_target {
        "cargo run --release -- login".to_owned()
    } else {
        "mcp-consent login".to_owned()
    };
    if explicit_root {
        command.push_str(&format!(" --state-dir {}", root.display()));
    }
    command
}

/// Writes where the config came from into the state directory (or removes a stale record when
/// the service runs on the defaults), for proxies that start while the service is down. A
/// failure is logged: the proxy then falls back to `MCP_CONSENT_CONFIG` or the default path.
fn record_config_file(root: &std::path::Path, config_file: Option<&std::path::Path>) {
    let record = crate::paths::config_path_file(root);
    let written = match config_file.map(std::path::absolute) {
        Some(Ok(path)) => crate::paths::write_private(&record, &format!("{}\n", path.display()))
            .map_err(|e| e.to_string()),
        Some(Err(e)) => Err(e.to_string()),
        None => match std::fs::remove_file(&record) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.to_string()),
            _ => Ok(()),
        },
    };
    if let Err(e) = written {
        tracing::warn!(error = %e, "cannot record the config file's path for proxies");
    }
}
