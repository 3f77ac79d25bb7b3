//! `mcp-consent notify test [--channel N]`: sends a harmless notice through each configured
//! channel (or the one named by kind or 1-based position) and says what each answered, so the
//! person can check the setup before a question needs it. Runs in this process from the config
//! file; the service need not run.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::config::{Config, ConfigError};
use crate::notify::channel::ChannelName;
use crate::notify::{Channel, ChannelError, Links, Outbound};
use crate::protocol::invisible::escaped;

/// `mcp-consent notify …`.
#[derive(Debug, Subcommand)]
pub enum NotifyCommand {
    /// Send a test notice through each channel of `[[notifications.channels]]`.
    Test(TestArgs),
}

/// `mcp-consent notify test …`.
#[derive(Debug, Args)]
pub struct TestArgs {
    /// Only this channel: its kind (`webhook`, `ntfy`, `slack`, `email`) or its 1-based position.
    #[arg(long)]
    channel: Option<String>,
    /// Config file. Default: $XDG_CONFIG_HOME/mcp-consent/config.toml if it exists.
    #[arg(long, env = "MCP_CONSENT_CONFIG")]
    config: Option<PathBuf>,
}

/// Why `notify test` failed.
#[derive(Debug, thiserror::Error)]
pub enum NotifyError {
    /// The config cannot be read.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A channel cannot be set up.
    #[error(transparent)]
    Channel(#[from] ChannelError),
    /// Nothing to send through.
    #[error("{0}")]
    NoChannel(String),
    /// These channels did not take the notice.
    #[error("failed: {}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))]
    Failed(Vec<ChannelName>),
}

/// Runs `command`, writing one line per channel to `out`.
///
/// # Errors
/// [`NotifyError`]; [`NotifyError::Failed`] names every channel that failed.
pub async fn run(command: NotifyCommand, out: &mut impl Write) -> Result<(), NotifyError> {
    let NotifyCommand::Test(args) = command;
    let config = Config::load(args.config.as_deref())?;
    let channels: Vec<Channel> = Channel::build_all(&config.notifications.channels.0)?
        .into_iter()
        .filter(|c| args.channel.as_deref().is_none_or(|s| c.is(s)))
        .collect();
    if channels.is_empty() {
        return Err(NotifyError::NoChannel(match args.channel {
            Some(s) => format!("no channel is {s:?} (give a kind or a 1-based position)"),
            None => "no channel is configured under [[notifications.channels]]".to_owned(),
        }));
    }
    let base = config
        .public_url
        .as_ref()
        .map_or_else(|| format!("http://{}", config.listen), |p| p.base());
    let notice = Outbound::test(&Links::new(&base));
    let results = futures_util::future::join_all(channels.iter().map(|c| c.send(&notice))).await;
    let mut failed = Vec::new();
    for (channel, result) in channels.iter().zip(results) {
        let line = match result {
            Ok(answer) => format!("{}: sent; it answered {answer}", channel.name),
            Err(e) => {
                failed.push(channel.name.clone());
                format!("{}: FAILED: {e}", channel.name)
            }
        };
        // A closed stdout loses only the report; the exit status still tells.
        let _ = writeln!(out, "{}", escaped(&line, false));
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(NotifyError::Failed(failed))
    }
}
