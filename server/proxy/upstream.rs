//! The server side of the proxy as a pair of byte streams: newline-delimited JSON-RPC into the
//! server and out of it, plus how to end it. A stdio server is a child process in a process
//! group of its own ([`stdio`]); another transport (Streamable HTTP) provides the same pair so
//! that everything the proxy guarantees (interception, fail closed, withdraw on exit) holds
//! for it unchanged.

use std::pin::Pin;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::process::{Child, Command};

/// Why a stdio server could not be started.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// No server command was given.
    #[error("no server command given (usage: mcp-consent proxy --name NAME -- COMMAND [ARGS...])")]
    NoCommand,
    /// The server could not be started.
    #[error("cannot start the server {command:?}")]
    Spawn {
        /// The command.
        command: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Its stdio could not be taken.
    #[error("stdio failed")]
    Io(#[source] std::io::Error),
}

/// A boxed future, for the transport-specific end of a server.
pub type Ending<'a> = Pin<Box<dyn Future<Output = std::io::Result<i32>> + Send + 'a>>;

/// How one kind of server is waited for and ended.
pub trait Server: Send {
    /// Waits for the server to end by itself (after its output closed); its exit code.
    fn wait(&mut self) -> Ending<'_>;
    /// Ends the server now (the host left or a signal came); its exit code.
    fn terminate(&mut self, grace: Duration) -> Ending<'_>;
}

/// A running server: its input, its output, and how to end it.
pub struct Upstream {
    /// Lines to the server.
    pub input: Box<dyn AsyncWrite + Send + Unpin>,
    /// Lines from the server.
    pub output: Box<dyn AsyncRead + Send + Unpin>,
    /// Waiting for it and ending it.
    pub server: Box<dyn Server>,
}

/// Starts `command` as a child process in a new process group, stdin/stdout piped, stderr
/// inherited.
///
/// # Errors
/// [`StartError::NoCommand`] for an empty command, [`StartError::Spawn`] when it cannot start.
pub fn stdio(command: &[String]) -> Result<Upstream, StartError> {
    let (program, args) = command.split_first().ok_or(StartError::NoCommand)?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|source| StartError::Spawn {
            command: command.join(" "),
            source,
        })?;
    let (Some(input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(StartError::Io(std::io::Error::other(
            "server stdio not piped",
        )));
    };
    let group = child.id().and_then(|p| i32::try_from(p).ok());
    Ok(Upstream {
        input: Box::new(input),
        output: Box::new(output),
        server: Box::new(ChildServer { child, group }),
    })
}

/// A server run as a child process, leader of its own process group.
struct ChildServer {
    child: Child,
    group: Option<i32>,
}

impl ChildServer {
    fn signal_group(&self, signal: i32) {
        if let Some(pid) = self.group {
            // SAFETY: kill(2) with a negative pid signals the process group the proxy created
            // for the server (`process_group(0)`); no memory is involved.
            unsafe {
                libc::kill(-pid, signal);
            }
        }
    }
}

fn code(status: std::process::ExitStatus) -> i32 {
    status.code().unwrap_or(1)
}

impl Server for ChildServer {
    fn wait(&mut self) -> Ending<'_> {
        Box::pin(async move { self.child.wait().await.map(code) })
    }

    /// SIGTERM, then SIGKILL after `grace`, to the whole process group.
    fn terminate(&mut self, grace: Duration) -> Ending<'_> {
        Box::pin(async move {
            self.signal_group(libc::SIGTERM);
            if let Ok(status) = tokio::time::timeout(grace, self.child.wait()).await {
                // The leader is gone; anything it left in its group goes too.
                self.signal_group(libc::SIGKILL);
                return status.map(code);
            }
            self.signal_group(libc::SIGKILL);
            self.child.wait().await.map(code)
        })
    }
}
