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
//! - Lifecycle: when the host goes away (stdin closes, SIGTERM, SIGINT, SIGHUP) the proxy
//!   withdraws its open questions at once and ends the server's process group (TERM, then KILL
//!   after a grace); when the server exits, its open questions are withdrawn.

mod ask;
pub mod capabilities;
mod drops;
mod host;
pub mod http;
mod judge;
mod lines;
pub mod rounds;
mod state;
pub mod upstream;

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::mpsc;

pub use capabilities::forward_capabilities;

use crate::client::ServiceClient;
use lines::{Buffered, Piece, next_line};
use state::{SharedState, lock};
pub use upstream::Upstream;

/// The default bound on one line in either direction, in bytes (64 MiB).
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024 * 1024;
/// How long the server has to exit after the host closed its input, and again after SIGTERM.
const GRACE: Duration = Duration::from_secs(3);
/// Lines passed on together are sent in buffers of about this many bytes; a line this long
/// or longer goes on its own, without a copy.
const BATCH_BYTES: usize = 64 * 1024;
/// The buffer in front of the host's stdout, in bytes.
const HOST_OUT_BYTES: usize = 256 * 1024;
/// The size of one read of the server's output, in bytes (a large result arrives in few reads).
const SERVER_READ_BYTES: usize = 256 * 1024;

/// Errors that stop the proxy.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
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
    /// The remote server's transport could not be set up (`--url`).
    #[error("cannot use the remote server")]
    Remote(#[from] http::HttpError),
    /// Reading or writing a stream failed.
    #[error("stdio failed")]
    Io(#[from] std::io::Error),
}

/// Settings of one proxy run.
#[derive(Debug, Clone)]
pub struct ProxyOptions {
    /// The server's name shown to the person (`--name`).
    pub name: String,
    /// The server command and its arguments.
    pub command: Vec<String>,
    /// The longest line accepted in either direction, in bytes (`--max-line-bytes`).
    pub max_line_bytes: usize,
}

/// What the proxy's tasks share.
#[derive(Clone)]
pub(crate) struct Context {
    client: ServiceClient,
    shared: SharedState,
    /// Weak, so the server's stdin closes once the host has gone and no answer is pending.
    to_server: mpsc::WeakSender<Vec<u8>>,
    to_host: mpsc::Sender<Vec<u8>>,
    server: String,
    session: String,
    /// Lines from the server dropped, reported to the service as a metric.
    drops: Arc<drops::Drops>,
    /// Bounds the questions being opened at once.
    opens: Arc<tokio::sync::Semaphore>,
}

/// How many questions the proxy opens at once.
const CONCURRENT_OPENS: u32 = 8;

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
    let shared: SharedState = Arc::default();
    let (to_server, to_server_rx) = mpsc::channel::<Vec<u8>>(256);
    let (to_host, to_host_rx) = mpsc::channel::<Vec<u8>>(256);
    let (close_server_in, close_rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(write_lines(server_in, to_server_rx, Some(close_rx)));
    let host_writer = tokio::task::spawn_blocking(move || write_host(to_host_rx));

    let ctx = Context {
        client,
        shared: shared.clone(),
        to_server: to_server.downgrade(),
        to_host,
        server: options.name,
        session: uuid::Uuid::now_v7().to_string(),
        drops: Arc::default(),
        opens: Arc::new(tokio::sync::Semaphore::new(CONCURRENT_OPENS as usize)),
    };
    let limit = options.max_line_bytes;
    tokio::spawn(drops::report(ctx.drops.clone(), ctx.client.clone()));

    let (host_closed_tx, host_closed) = tokio::sync::oneshot::channel::<()>();
    let host_ctx = ctx.clone();
    tokio::spawn(async move {
        read_host(&host_ctx, to_server, limit).await;
        let _ = host_closed_tx.send(());
    });

    let mut reader = BufReader::with_capacity(SERVER_READ_BYTES, server_out);
    let code = {
        // One reading of the server's output for the whole run, polled again for the drain
        // below rather than dropped and restarted: dropping it mid-line would lose the part of
        // a line already read (and then drop the rest as unjudgeable) and any lines judged
        // but not yet sent on.
        let reading = read_server(&ctx, &mut reader, limit);
        tokio::pin!(reading);
        let stop = tokio::select! {
            r = &mut reading => { r?; Stop::ServerClosed }
            _ = host_closed => Stop::HostClosed,
            () = terminating() => Stop::Signal,
        };
        // Whoever left, nobody can use an answer any more: the open questions are withdrawn
        // rather than left for the person to answer in vain.
        withdraw_all(&ctx).await;
        let _ = close_server_in.send(());
        let final_report = drops::flush(&ctx.drops, &ctx.client);
        let _ = tokio::time::timeout(Duration::from_secs(2), final_report).await;
        match stop {
            Stop::ServerClosed => server.wait().await?,
            Stop::HostClosed => {
                // The server may still answer what the host sent last; pass that on for a
                // grace, then end it.
                let ended = tokio::time::timeout(GRACE, async {
                    let _ = reading.await;
                    server.wait().await
                })
                .await;
                match ended {
                    Ok(code) => code?,
                    Err(_) => server.terminate(GRACE).await?,
                }
            }
            Stop::Signal => server.terminate(GRACE).await?,
        }
    };
    drop(ctx);
    let _ = tokio::time::timeout(Duration::from_secs(1), host_writer).await;
    Ok(code)
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
/// Lines already read are passed on together ([`Batch`]).
async fn read_host(ctx: &Context, to_server: mpsc::Sender<Vec<u8>>, limit: usize) {
    let mut reader = lines::host_input();
    let mut batch = Batch::default();
    loop {
        match next_line(&mut reader, limit).await {
            Ok(Some(Piece::Line(line))) => {
                if let Some(out) = host::from_host(ctx, line) {
                    batch.push(out);
                }
            }
            Ok(Some(Piece::Overlong { id, len })) => {
                tracing::warn!(
                    bytes = len,
                    limit,
                    "refused a host line over the line limit"
                );
                if let Some(id) =
                    id.and_then(|id| serde_json::value::RawValue::from_string(id).ok())
                {
                    let line = crate::protocol::mrtr::error_line(
                        &id,
                        &crate::protocol::mrtr::error_object(
                            crate::protocol::jsonrpc::codes::INVALID_REQUEST,
                            &format!(
                                "mcp-consent refused a message longer than its line limit ({limit} bytes)"
                            ),
                        ),
                    );
                    let _ = ctx.to_host.send(line).await;
                }
            }
            Ok(None) | Err(_) => {
                let _ = batch.send(&to_server).await;
                return;
            }
        }
        if (batch.full() || !reader.has_line()) && batch.send(&to_server).await.is_err() {
            return;
        }
    }
}

/// Reads the server's lines and judges each; returns at end of input. Every line is judged
/// before it passes; the lines that passed are sent on together once no further whole line
/// is buffered ([`Batch`]), so a burst costs one channel hop and one write, not one per line.
async fn read_server<R: tokio::io::AsyncBufRead + Buffered + Unpin>(
    ctx: &Context,
    reader: &mut R,
    limit: usize,
) -> Result<(), ProxyError> {
    let mut batch = Batch::default();
    while let Some(piece) = next_line(reader, limit).await? {
        match piece {
            Piece::Line(line) => match judge::from_server(ctx, &line) {
                judge::Verdict::Forward => {
                    let mut line = line;
                    if line.last() != Some(&b'\n') {
                        line.push(b'\n');
                    }
                    batch.push(line);
                }
                judge::Verdict::ForwardLines(lines) => {
                    for line in lines {
                        batch.push(line);
                    }
                }
                judge::Verdict::Handled | judge::Verdict::Dropped => {}
            },
            Piece::Overlong { id, .. } => {
                judge::dropped(ctx, crate::wire::DroppedLine::TooLong, id)
            }
        }
        if batch.full() || !reader.has_line() {
            let _ = batch.send(&ctx.to_host).await;
        }
    }
    let _ = batch.send(&ctx.to_host).await;
    Ok(())
}

/// Lines that passed, waiting to be sent as one buffer. Lines of [`BATCH_BYTES`] or more are
/// kept as they are (moved, not copied) in order with the rest.
#[derive(Default)]
struct Batch {
    /// Short lines, concatenated.
    bytes: Vec<u8>,
    /// Buffers ready to go, in order (long lines, and the short lines before them).
    ready: Vec<Vec<u8>>,
}

impl Batch {
    fn push(&mut self, line: Vec<u8>) {
        if line.len() >= BATCH_BYTES {
            if !self.bytes.is_empty() {
                self.ready.push(std::mem::take(&mut self.bytes));
            }
            self.ready.push(line);
        } else if self.bytes.is_empty() {
            // The first line's buffer becomes the batch's (no copy for a lone line).
            self.bytes = line;
        } else {
            self.bytes.extend_from_slice(&line);
        }
    }

    /// Whether it should go now rather than wait for more lines.
    fn full(&self) -> bool {
        !self.ready.is_empty() || self.bytes.len() >= BATCH_BYTES
    }

    /// Sends everything, in order; an error when the receiver has gone.
    async fn send(&mut self, to: &mpsc::Sender<Vec<u8>>) -> Result<(), ()> {
        if !self.bytes.is_empty() {
            self.ready.push(std::mem::take(&mut self.bytes));
        }
        for buffer in self.ready.drain(..) {
            to.send(buffer).await.map_err(drop)?;
        }
        Ok(())
    }
}

/// Writes queued lines, flushing only when the queue runs dry (one write per burst, not per
/// line). With `close`, stops and closes the stream once told to (after what is queued).
async fn write_lines<W: tokio::io::AsyncWrite + Unpin>(
    out: W,
    mut lines: mpsc::Receiver<Vec<u8>>,
    close: Option<tokio::sync::oneshot::Receiver<()>>,
) {
    let mut out = BufWriter::with_capacity(64 * 1024, out);
    let mut close = close;
    loop {
        let next = match close.as_mut() {
            Some(signal) => tokio::select! {
                line = lines.recv() => line,
                _ = signal => None,
            },
            None => lines.recv().await,
        };
        let Some(line) = next else { break };
        if out.write_all(&line).await.is_err() {
            return;
        }
        while let Ok(more) = lines.try_recv() {
            if out.write_all(&more).await.is_err() {
                return;
            }
        }
        if out.flush().await.is_err() {
            return;
        }
    }
    while let Ok(more) = lines.try_recv() {
        if out.write_all(&more).await.is_err() {
            return;
        }
    }
    let _ = out.flush().await;
    let _ = out.shutdown().await;
}

/// Writes what the proxy passes to the host to stdout, on a blocking thread of its own: plain
/// `write(2)` calls from a large buffer, flushed when the queue runs dry (not per line).
/// `tokio::io::stdout()` would instead hand every write to the blocking pool. Returns when
/// every sender is gone and the queue is written, or when stdout fails (the host left).
fn write_host(mut lines: mpsc::Receiver<Vec<u8>>) {
    use std::io::Write;
    use std::os::fd::AsFd;
    // A duplicate of fd 1, not `std::io::stdout()`: that one is line-buffered and would
    // write (and flush) once per line.
    let out: Box<dyn Write> = match std::io::stdout().as_fd().try_clone_to_owned() {
        Ok(fd) => Box::new(std::fs::File::from(fd)),
        Err(_) => Box::new(std::io::stdout()),
    };
    let mut out = std::io::BufWriter::with_capacity(HOST_OUT_BYTES, out);
    while let Some(first) = lines.blocking_recv() {
        if out.write_all(&first).is_err() {
            return;
        }
        while let Ok(more) = lines.try_recv() {
            if out.write_all(&more).is_err() {
                return;
            }
        }
        if out.flush().is_err() {
            return;
        }
    }
    let _ = out.flush();
}

/// Withdraws every question still open for this proxy (bounded to a few seconds).
async fn withdraw_all(ctx: &Context) {
    let handles = {
        let mut s = lock(&ctx.shared);
        s.closing = true;
        s.all_asks()
    };
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
