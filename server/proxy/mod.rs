//! The stdio MCP proxy: host ⇄ proxy on stdin/stdout, proxy ⇄ server as a child process in a
//! process group of its own (docs/design.md §proxy).
//!
//! - [`host`]: lines from the host; capabilities added to `initialize` and to 2026-07-28
//!   `_meta`; host responses to intercepted ids dropped.
//! - [`judge`]: lines from the server; sampling/elicitation requests become questions, lines
//!   that cannot be judged are dropped (fail closed), the rest passes byte for byte.
//! - [`rounds`]: responses that ask for input (2026-07-28 `InputRequiredResult`, 2025-11-25
//!   `-32042`) are answered through questions and retried; the host gets the final answer.
//! - [`ask`]: one question on the service, waited for through restarts.
//! - [`serve`]: the one task that owns the session's state ([`session`]); the readers of both
//!   sides hand it their lines, the tasks that wait for the person send it commands.
//! - Lifecycle: when the host goes away (stdin closes, SIGTERM, SIGINT, SIGHUP) the proxy
//!   withdraws its open questions at once and ends the server's process group (TERM, then KILL
//!   after a grace); when the server exits, its open questions are withdrawn.

mod ask;
pub mod capabilities;
mod context;
mod drops;
mod error;
mod host;
mod host_io;
pub mod http;
mod judge;
mod lines;
mod output;
mod refusal;
mod retry_gate;
pub mod rounds;
mod serve;
mod session;
mod tool_gate;
mod tool_policy;
mod tool_report;
mod tool_table;
pub mod upstream;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::io::BufReader;
use tokio::sync::mpsc;

pub use capabilities::forward_capabilities;
pub use error::ProxyError;
pub use upstream::Upstream;

use crate::client::ServiceClient;
use context::{CONCURRENT_OPENS, Context};
use lines::{Lines, Seen};
use output::{Burst, write_lines};
use refusal::ProxyRefusal;
use session::command::{Command, Handle};

/// The default bound on one line in either direction, in bytes (64 MiB).
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024 * 1024;
/// How long the server has to exit after the host closed its input, and again after SIGTERM.
const GRACE: Duration = Duration::from_secs(3);
/// The size of one read of the server's output, in bytes (a large result arrives in few reads).
const SERVER_READ_BYTES: usize = 256 * 1024;
/// How many inputs may wait for the session's owner (it never waits on anything else, so
/// this only bounds a burst of commands).
const INPUTS: usize = 256;

/// Settings of one proxy run.
#[derive(Debug, Clone)]
pub struct ProxyOptions {
    /// The server's name shown to the person (`--name`).
    pub name: String,
    /// The server command and its arguments.
    pub command: Vec<String>,
    /// The longest line accepted in either direction, in bytes (`--max-line-bytes`).
    pub max_line_bytes: usize,
    /// The config file the service last started with (`<state>/config-path`), read for the
    /// tool rules while the service cannot be reached.
    pub config_file: Option<std::path::PathBuf>,
}

/// Why the proxy stops.
enum Stop {
    /// The server closed its output (it exited).
    ServerClosed,
    /// The host closed the proxy's input.
    HostClosed,
    /// A terminating signal.
    Signal,
}

/// Runs the proxy until either side closes; returns the server's exit code.
///
/// # Errors
/// [`ProxyError`] when the server cannot be started or stdio fails.
pub async fn run(options: ProxyOptions, client: ServiceClient) -> Result<i32, ProxyError> {
    let upstream = upstream::stdio(&options.command)?;
    run_with(upstream, options, client).await
}

/// Runs the proxy in front of an already started server.
///
/// # Errors
/// [`ProxyError`] when stdio fails.
pub async fn run_with(
    upstream: Upstream,
    options: ProxyOptions,
    client: ServiceClient,
) -> Result<i32, ProxyError> {
    let Upstream {
        input: server_in,
        output: server_out,
        mut server,
    } = upstream;
    let (to_server, to_server_rx) = mpsc::channel::<Bytes>(256);
    let (to_host, to_host_rx) = mpsc::channel::<Bytes>(256);
    let (close_server_in, close_rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(write_lines(server_in, to_server_rx, Some(close_rx)));
    let host_writer = host_io::host_output(to_host_rx);

    let policy = tool_policy::start(client.clone(), options.config_file.clone()).await;
    let tool_report = tool_report::ToolReporter::start(options.name.clone(), client.clone());
    let (inputs, inputs_rx) = mpsc::channel(INPUTS);
    let ctx = Context {
        client,
        session: Handle::new(inputs),
        to_server: to_server.downgrade(),
        to_host,
        server: options.name.clone(),
        session_id: uuid::Uuid::now_v7().to_string(),
        drops: Arc::default(),
        opens: Arc::new(tokio::sync::Semaphore::new(CONCURRENT_OPENS as usize)),
        policy,
        tool_report,
    };
    tokio::spawn(serve::serve(ctx.clone(), inputs_rx));
    let limit = options.max_line_bytes;
    tokio::spawn(drops::report(ctx.drops.clone(), ctx.client.clone()));

    let (host_closed_tx, host_closed) = tokio::sync::oneshot::channel::<()>();
    let host_ctx = ctx.clone();
    tokio::spawn(async move {
        read_host(&host_ctx, to_server, limit).await;
        let _ = host_closed_tx.send(());
    });

    let reader = BufReader::with_capacity(SERVER_READ_BYTES, server_out);
    let code = {
        // One reading of the server's output for the whole run, awaited again for the drain
        // in `wind_down` rather than restarted: stopping it mid-line would lose the part of a line
        // already read (and then drop the rest as unjudgeable) and any lines judged but not
        // yet sent on. A task of its own, on the runtime's workers like the rest of the line
        // path (this future runs on the thread that started the runtime).
        let server_ctx = ctx.clone();
        let mut reading = Reading(tokio::spawn(async move {
            read_server(&server_ctx, reader, limit).await
        }));
        let stop = tokio::select! {
            r = &mut reading.0 => { r.map_err(std::io::Error::other)??; Stop::ServerClosed }
            _ = host_closed => Stop::HostClosed,
            () = terminating() => Stop::Signal,
        };
        wind_down(&ctx, stop, reading, server.as_mut(), close_server_in).await?
    };
    ctx.session.stop().await;
    drop(ctx);
    let _ = tokio::time::timeout(Duration::from_secs(1), host_writer).await;
    Ok(code)
}

/// Ends the run once `stop` happened: the open questions withdrawn, the server's input closed,
/// the last counts reported, and the server waited for (after the host left, for a grace in
/// which its last answers still pass) or ended. Returns its exit code.
async fn wind_down(
    ctx: &Context,
    stop: Stop,
    mut reading: Reading,
    server: &mut dyn upstream::Server,
    close_server_in: tokio::sync::oneshot::Sender<()>,
) -> Result<i32, ProxyError> {
    if matches!(stop, Stop::Signal) {
        // Nothing more passes once a signal ended the run.
        reading.0.abort();
    }
    // Whoever left, nobody can use an answer any more: the open questions are withdrawn
    // rather than left for the person to answer in vain.
    withdraw_all(ctx).await;
    let _ = close_server_in.send(());
    let final_report = async {
        drops::flush(&ctx.drops, &ctx.client).await;
        ctx.tool_report.flush().await;
    };
    let _ = tokio::time::timeout(Duration::from_secs(2), final_report).await;
    Ok(match stop {
        Stop::ServerClosed => server.wait().await?,
        Stop::HostClosed => {
            // The server may still answer what the host sent last; pass that on for a grace,
            // then end it.
            let ended = tokio::time::timeout(GRACE, async {
                let _ = (&mut reading.0).await;
                server.wait().await
            })
            .await;
            match ended {
                Ok(code) => code?,
                Err(_) => server.terminate(GRACE).await?,
            }
        }
        Stop::Signal => server.terminate(GRACE).await?,
    })
}

/// The task reading the server's output; stopped when the run no longer waits for it (after
/// a signal, or when the server outlived the grace), as the reading stopped before it was a
/// task.
struct Reading(tokio::task::JoinHandle<Result<(), ProxyError>>);

impl Drop for Reading {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Resolves on SIGTERM, SIGINT or SIGHUP.
async fn terminating() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
        signal(SignalKind::hangup()),
    ) else {
        // Without signal handlers the default action (exit) still applies.
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
        _ = hup.recv() => {}
    }
}

/// Reads the host's lines and passes them on; returns when the host closes its output.
/// The lines of one read are judged together by the session's owner and what passes is sent
/// on together ([`output::Batch`]).
async fn read_host(ctx: &Context, to_server: mpsc::Sender<Bytes>, limit: usize) {
    let mut lines = Lines::new(host_io::host_input(), limit);
    let mut refusals = Vec::new();
    loop {
        let mut burst = Burst::default();
        let read = lines
            .burst(|seen| match seen {
                Seen::Overlong { id, len } => refusals.extend(refuse_overlong(id, len, limit)),
                line => burst.add(line),
            })
            .await;
        for line in refusals.drain(..) {
            let _ = ctx.to_host.send(line.into()).await;
        }
        let more = matches!(read, Ok(true));
        if !burst.is_empty() {
            let Some(mut batch) = ctx.session.judge(burst, true).await else {
                return;
            };
            if batch.send(&to_server).await.is_err() {
                return;
            }
        }
        if !more {
            return;
        }
    }
}

/// A host line over the limit is not passed on; the host gets an error for it when its id
/// was found.
fn refuse_overlong(id: Option<String>, len: usize, limit: usize) -> Option<Vec<u8>> {
    tracing::warn!(
        bytes = len,
        limit,
        "refused a host line over the line limit"
    );
    let id = serde_json::value::RawValue::from_string(id?).ok()?;
    Some(ProxyRefusal::Overlong { limit }.line(&id))
}

/// Reads the server's lines and has each judged; returns at end of input. The lines of one
/// read go to the session's owner together and what passed is sent on together
/// ([`output::Batch`]), so a burst costs one hop to the owner, one channel hop and one write,
/// not one per line.
async fn read_server<R: tokio::io::AsyncBufRead + Unpin>(
    ctx: &Context,
    reader: R,
    limit: usize,
) -> Result<(), ProxyError> {
    let mut lines = Lines::new(reader, limit);
    loop {
        let mut burst = Burst::default();
        let more = lines.burst(|seen| burst.add(seen)).await?;
        if !burst.is_empty()
            && let Some(mut batch) = ctx.session.judge(burst, false).await
        {
            let _ = batch.send(&ctx.to_host).await;
        }
        if !more {
            return Ok(());
        }
    }
}

/// Withdraws every question still open for this proxy (bounded to a few seconds).
async fn withdraw_all(ctx: &Context) {
    let handles = ctx
        .session
        .ask(|reply| Command::Close { reply })
        .await
        .unwrap_or_default();
    let questions: Vec<String> = handles
        .iter()
        .filter_map(|h| {
            h.cancel();
            h.question.get().cloned()
        })
        .collect();
    let withdrawn = async {
        futures_util::future::join_all(questions.iter().map(|q| ctx.client.cancel(q))).await;
        // Opens still in flight finish first (their asks see the cancellation and withdraw
        // what they opened); then anything opened meanwhile is withdrawn too.
        let _all = ctx.opens.acquire_many(CONCURRENT_OPENS).await;
        let late: Vec<String> = handles
            .iter()
            .filter_map(|h| h.question.get().cloned())
            .filter(|q| !questions.contains(q))
            .collect();
        futures_util::future::join_all(late.iter().map(|q| ctx.client.cancel(q))).await;
    };
    if tokio::time::timeout(Duration::from_secs(10), withdrawn)
        .await
        .is_err()
    {
        tracing::warn!("could not withdraw every open question before exiting");
    }
}
