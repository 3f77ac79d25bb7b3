//! `mcp-consent hosts list|wrap|unwrap`: finds the MCP hosts' configuration files, wraps
//! their servers through `mcp-consent proxy`, and puts them back.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use crate::hosts::locate::Env;
use crate::hosts::ops::{self, Run, Selection};
use crate::hosts::{HostId, HostsError};
use crate::protocol::invisible::{escaped, escaped_json};

/// `mcp-consent hosts …`.
#[derive(Debug, Subcommand)]
pub enum HostsCommand {
    /// Print each host's configuration file found, with each server, its transport and whether
    /// it is wrapped.
    List {
        /// Print JSON: `[{"host","file","servers":[{"name","transport","wrapped"}],"skipped":[{"name","reason"}]}]`.
        #[arg(long)]
        json: bool,
        /// Only this host (repeatable).
        #[arg(long = "host", value_name = "NAME")]
        hosts: Vec<HostId>,
    },
    /// Rewrite each server entry so that the host launches it through `mcp-consent proxy`.
    Wrap(Which),
    /// Restore each wrapped entry to what it was.
    Unwrap(Which),
}

/// Which entries `wrap` and `unwrap` change.
#[derive(Debug, Args)]
pub struct Which {
    /// Only this host (repeatable).
    #[arg(long = "host", value_name = "NAME")]
    hosts: Vec<HostId>,
    /// Only the server of this name (repeatable).
    #[arg(long = "server", value_name = "NAME")]
    servers: Vec<String>,
    /// Print a unified diff per file and change nothing.
    #[arg(long)]
    dry_run: bool,
}

/// Errors of `mcp-consent hosts`.
#[derive(Debug, thiserror::Error)]
pub enum HostsCliError {
    /// No home or current directory to look in.
    #[error("cannot find the home directory or the current directory")]
    NoHome,
    /// Some files were left alone (each was reported above).
    #[error("{0} file(s) were left alone; see the messages above")]
    Failed(usize),
    /// The program's own path is unknown.
    #[error(transparent)]
    Hosts(#[from] HostsError),
    /// Output could not be written.
    #[error("cannot write the output")]
    Output(#[source] std::io::Error),
}

/// Runs a `hosts` subcommand; `state` is the state directory (backups, the record of wrapped
/// entries).
///
/// # Errors
/// [`HostsCliError`]; [`HostsCliError::Failed`] when any file was left alone.
pub fn run(command: HostsCommand, state: &Path) -> Result<(), HostsCliError> {
    let env = Env::current().ok_or(HostsCliError::NoHome)?;
    let out = &mut std::io::stdout().lock();
    let w = |r: std::io::Result<()>| r.map_err(HostsCliError::Output);
    match command {
        HostsCommand::List { json, hosts } => {
            let (reports, errors) = ops::list(
                &env,
                &Selection {
                    hosts,
                    servers: Vec::new(),
                },
            );
            for e in &errors {
                eprintln!(
                    "mcp-consent hosts: {}",
                    escaped(&super::with_causes(e), true)
                );
            }
            if json {
                let text =
                    serde_json::to_string_pretty(&reports).unwrap_or_else(|_| "[]".to_owned());
                let text = escaped_json(&text);
                w(writeln!(out, "{text}"))?;
            } else if reports.is_empty() {
                w(writeln!(out, "no MCP host configuration found"))?;
            }
            if !json {
                for r in &reports {
                    w(writeln!(out, "{} {}", r.host.as_str(), r.file.display()))?;
                    for s in &r.servers {
                        let state = if s.wrapped { "wrapped" } else { "not wrapped" };
                        w(writeln!(
                            out,
                            "  {:<24} {:<5} {state}",
                            escaped(&s.name, false),
                            s.transport.as_str()
                        ))?;
                    }
                    for s in &r.skipped {
                        w(writeln!(
                            out,
                            "  {:<24} skipped: {}",
                            escaped(&s.name, false),
                            escaped(&s.reason.to_string(), false)
                        ))?;
                    }
                }
            }
            Ok(())
        }
        HostsCommand::Wrap(which) => {
            let exe = program()?;
            let selection = Selection {
                hosts: which.hosts,
                servers: which.servers,
            };
            let run = ops::wrap(
                &env,
                state,
                &selection,
                &exe.to_string_lossy(),
                which.dry_run,
            );
            finish(out, &run, which.dry_run, "wrapped")
        }
        HostsCommand::Unwrap(which) => {
            let selection = Selection {
                hosts: which.hosts,
                servers: which.servers,
            };
            let run = ops::unwrap(&env, state, &selection, which.dry_run);
            finish(out, &run, which.dry_run, "restored")
        }
    }
}

/// The absolute path of this program, links resolved: what hosts will launch.
///
/// # Errors
/// [`HostsError::NoExe`].
pub fn program() -> Result<PathBuf, HostsError> {
    let exe = std::env::current_exe().map_err(HostsError::NoExe)?;
    std::fs::canonicalize(exe).map_err(HostsError::NoExe)
}

fn finish(out: &mut impl Write, run: &Run, dry_run: bool, done: &str) -> Result<(), HostsCliError> {
    let w = |r: std::io::Result<()>| r.map_err(HostsCliError::Output);
    for change in &run.changes {
        let path = change.file.path.display().to_string();
        if dry_run {
            let diff = similar::TextDiff::from_lines(&change.before, &change.after);
            let text = diff
                .unified_diff()
                .context_radius(3)
                .header(&path, &path)
                .to_string();
            w(write!(out, "{}", escaped(&text, true)))?;
        } else {
            w(writeln!(
                out,
                "{}: {done} {} in {path}",
                change.file.host.as_str(),
                escaped(&change.servers.join(", "), false)
            ))?;
        }
    }
    if run.changes.is_empty() && run.errors.is_empty() {
        w(writeln!(out, "nothing to change"))?;
    }
    for warning in &run.warnings {
        eprintln!("warning: {}", escaped(&warning.to_string(), true));
    }
    for e in &run.errors {
        eprintln!(
            "mcp-consent hosts: {}",
            escaped(&super::with_causes(e), true)
        );
    }
    if !dry_run {
        let mut restart: Vec<&str> = Vec::new();
        let mut reload: Vec<&str> = Vec::new();
        for change in run.changes.iter().filter(|c| c.written) {
            let host = change.file.host;
            let list = if host.needs_restart() {
                &mut restart
            } else {
                &mut reload
            };
            if !list.contains(&host.title()) {
                list.push(host.title());
            }
        }
        if !restart.is_empty() {
            w(writeln!(
                out,
                "restart {} so that it reads the new configuration",
                restart.join(", ")
            ))?;
        }
        if !reload.is_empty() {
            w(writeln!(
                out,
                "{} reload their files themselves (VS Code may ask you to trust changed servers again)",
                reload.join(", ")
            ))?;
        }
    }
    if run.errors.is_empty() {
        Ok(())
    } else {
        Err(HostsCliError::Failed(run.errors.len()))
    }
}
