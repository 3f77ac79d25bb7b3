//! The `mcp-consent` command line: the clap definition, one file per subcommand, and the one
//! error type [`CliError`] that `main` reports.
//!
//! The CLI sits on top: it calls `app`, `client`, `proxy`, `auth` and `jobs`, and nothing below
//! imports it.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::app::StartupError;
use crate::client::{ClientError, ServiceClient};
use crate::paths::{PathError, StateDir};
use crate::proxy::ProxyError;

pub mod doctor;
pub mod hosts;
pub mod login;
pub mod notify;
pub mod passwd;
pub mod proxy;
pub mod prune;
pub mod questions;
pub mod serve;
pub mod service;
pub mod token;

/// The human trust boundary for MCP sampling and elicitation requests.
#[derive(Debug, Parser)]
#[command(name = "mcp-consent", version, about)]
pub struct Cli {
    /// State directory (store, API token, service URL). Default: $XDG_STATE_HOME/mcp-consent.
    #[arg(long, global = true, env = "MCP_CONSENT_STATE_DIR")]
    state_dir: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
enum Command {
    /// Run the service: web UI, JSON API and the question store.
    Serve(serve::ServeArgs),
    /// Wrap an MCP server for a host: `mcp-consent proxy --name NAME -- COMMAND [ARGS...]`, or
    /// a remote one: `mcp-consent proxy --name NAME --url https://…`.
    Proxy(proxy::ProxyArgs),
    /// Delete old decided questions now (as the service does hourly) and print what went.
    Prune(prune::PruneArgs),
    /// List, show and answer questions meant for scripts and agents (same validation as the
    /// pages).
    Questions {
        /// The service's TCP URL (verified before the token is sent). Default: the owner-only
        /// socket <state>/broker/api.sock.
        #[arg(long, env = "MCP_CONSENT_BROKER")]
        broker: Option<String>,
        #[command(subcommand)]
        action: questions::QuestionsCommand,
    },
    /// Make the argon2id hash of a login passphrase (read from the terminal, or one line of
    /// stdin) and print it, or write it to a file (0600) for `passphrase_hash_file`.
    Passwd(passwd::PasswdArgs),
    /// Print a one-time link that logs this browser in.
    Login {
        /// The service's TCP URL (verified before the token is sent). Default: the owner-only
        /// socket <state>/broker/api.sock.
        #[arg(long, env = "MCP_CONSENT_BROKER")]
        broker: Option<String>,
    },
    /// Manage the API token: `token rotate` replaces it after a leak.
    Token {
        #[command(subcommand)]
        action: token::TokenCommand,
    },
    /// Check the notice channels: `notify test [--channel N]` sends a harmless notice through
    /// each.
    Notify {
        #[command(subcommand)]
        action: notify::NotifyCommand,
    },
    /// Find the MCP hosts' configurations (Claude, Cursor, VS Code, Zed, Codex, …), wrap their
    /// servers through `mcp-consent proxy`, and put them back exactly.
    Hosts {
        #[command(subcommand)]
        action: hosts::HostsCommand,
    },
    /// Check the service, the hosts' wrapping, notifications and the config, and say how to
    /// fix what is wrong.
    Doctor(doctor::DoctorArgs),
    /// Run `serve` under the user's service manager: print or install a systemd user unit or
    /// a launchd agent.
    Service {
        #[command(subcommand)]
        action: service::ServiceCommand,
    },
}

/// How a successful command ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Return from `main` with success.
    Done,
    /// Exit the process at once with this code (the proxy: the runtime would otherwise wait
    /// for the blocking read of the host's stdin, which stays open while the host runs).
    ExitNow(i32),
}

/// Why a command failed; each variant is one subcommand's error, reported once by `main`.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// No state directory could be determined.
    #[error(transparent)]
    StateDir(PathError),
    /// `serve` could not start or its server failed.
    #[error(transparent)]
    Serve(StartupError),
    /// `proxy` failed.
    #[error(transparent)]
    Proxy(#[from] ProxyError),
    /// `prune` could not open the store or prune it, or the service refused.
    #[error(transparent)]
    Prune(prune::PruneError),
    /// A `questions` subcommand failed.
    #[error(transparent)]
    Questions(#[from] questions::QuestionsError),
    /// `passwd` failed.
    #[error(transparent)]
    Passwd(#[from] passwd::PasswdError),
    /// `login` could not get a link from the service.
    #[error(transparent)]
    Login(#[from] ClientError),
    /// `token rotate` failed.
    #[error(transparent)]
    Token(#[from] token::TokenCliError),
    /// `service print|install` failed.
    #[error(transparent)]
    Service(#[from] service::ServiceError),
    /// `notify test` failed or a channel did not take the notice.
    #[error(transparent)]
    Notify(#[from] notify::NotifyError),
    /// A `hosts` subcommand failed.
    #[error(transparent)]
    Hosts(#[from] hosts::HostsCliError),
    /// `doctor` found a failure (each was printed), or could not print.
    #[error("{0}")]
    Doctor(String),
}

impl CliError {
    /// The prefix of the report on stderr: the command that failed.
    pub fn command(&self) -> &'static str {
        match self {
            CliError::StateDir(_) | CliError::Serve(_) => "mcp-consent",
            CliError::Proxy(_) => "mcp-consent proxy",
            CliError::Prune(_) => "mcp-consent prune",
            CliError::Questions(_) => "mcp-consent questions",
            CliError::Passwd(_) => "mcp-consent passwd",
            CliError::Login(_) => "mcp-consent login",
            CliError::Token(_) => "mcp-consent token",
            CliError::Service(_) => "mcp-consent service",
            CliError::Notify(_) => "mcp-consent notify",
            CliError::Hosts(_) => "mcp-consent hosts",
            CliError::Doctor(_) => "mcp-consent doctor",
        }
    }

    /// The one line printed on stderr: the command, then the error and each of its causes.
    pub fn report(&self) -> String {
        format!("{}: {}", self.command(), with_causes(self))
    }
}

/// An error and each of its causes on one line, `: `-separated.
pub(crate) fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Runs the parsed command line.
///
/// # Errors
/// [`CliError`], naming the subcommand that failed.
pub async fn run(cli: Cli) -> Result<Outcome, CliError> {
    let root = match &cli.state_dir {
        Some(p) => p.clone(),
        None => StateDir::default_root().map_err(CliError::StateDir)?,
    };
    let client = |broker| ServiceClient::new(StateDir::at(root.clone()), broker);
    match cli.command {
        Command::Serve(args) => serve::run(args, root, cli.state_dir.is_some())
            .await
            .map_err(CliError::Serve)?,
        Command::Proxy(args) => {
            init_tracing("warn");
            let client = client(args.broker.clone());
            return Ok(Outcome::ExitNow(proxy::run(args, client, root).await?));
        }
        Command::Prune(args) => prune::run(args, root).await.map_err(CliError::Prune)?,
        Command::Questions { broker, action } => {
            init_tracing("warn");
            questions::run(action, &client(broker), &mut std::io::stdout()).await?;
        }
        Command::Passwd(args) => passwd::run(args)?,
        Command::Login { broker } => {
            init_tracing("warn");
            login::run(&client(broker)).await?;
        }
        Command::Token { action } => println!("{}", token::run(&action, root).await?),
        Command::Notify { action } => {
            init_tracing("warn");
            notify::run(action, &mut std::io::stdout()).await?;
        }
        Command::Hosts { action } => hosts::run(action, &root)?,
        Command::Doctor(args) => {
            let client = client(args.broker.clone());
            let failed = doctor::run(args, &client, &mut std::io::stdout())
                .await
                .map_err(|e| CliError::Doctor(format!("cannot write the output: {e}")))?;
            if failed {
                return Err(CliError::Doctor(
                    "a check failed; see the fix above".to_owned(),
                ));
            }
        }
        Command::Service { action } => {
            service::run(&action, cli.state_dir.as_deref(), &mut std::io::stdout())?;
        }
    }
    Ok(Outcome::Done)
}

/// Logs to stderr, at `default` unless `RUST_LOG` says otherwise.
fn init_tracing(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
}

/// Sets this process's file-creation mask to owner-only, before any thread creates files.
fn owner_only_files() {
    // SAFETY: umask only changes this process's file-creation mask; it is called before any
    // other thread creates files. Everything the service creates is owner-only.
    unsafe {
        libc::umask(0o077);
    }
}
