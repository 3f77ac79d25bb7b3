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
mod tool_gate;
mod tool_policy;
mod tool_report;
pub mod upstream;

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::mpsc;

pub use capabilities::forward_capabilities;

use crate::client::ServiceClient;
use lines::{Lines, Seen};
use state::{SharedState, lock};
pub use upstream::Upstream;

/// The default bound on one line in either direction, in bytes (64 MiB).
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024 * 1024;
/// How long the server has to exit after the host closed its input, and again after SIGTERM.
const GRACE: Duration = Duration::from_secs(3);
/// A line that passed and is this long or longer goes in a buffer of its own (moved, not
/// copied, when it was gathered over several reads); shorter ones share one buffer per read.
const BATCH_BYTES: usize = 64 * 1024;
/// The buffer in front of the host's stdout, in bytes: small bursts are gathered into one
/// write, a batch this long or longer is written without a copy.
const HOST_OUT_BYTES: usize = BATCH_BYTES;
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
    /// The person's tool rules and grants, as last known.
    policy: tool_policy::PolicyView,
    /// Tool calls decided here, on their way to the service's audit.
    tool_report: tool_report::ToolReporter,
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

    let policy = tool_policy::start(client.clone()).await;
    let tool_report = tool_report::ToolReporter::start(options.name.clone(), client.clone());
    let ctx = Context {
        client,
        shared: shared.clone(),
        to_server: to_server.downgrade(),
        to_host,
        server: options.name.clone(),
        session: uuid::Uuid::now_v7().to_string(),
        drops: Arc::default(),
        opens: Arc::new(tokio::sync::Semaphore::new(CONCURRENT_OPENS as usize)),
        policy,
        tool_report,
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
        let final_report = async {
            drops::flush(&ctx.drops, &ctx.client).await;
            ctx.tool_report.flush().await;
        };
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
/// The lines of one read are judged where they lie and sent on together ([`Batch`]).
async fn read_host(ctx: &Context, to_server: mpsc::Sender<Vec<u8>>, limit: usize) {
    let mut lines = Lines::new(lines::host_input(), limit);
    let mut batch = Batch::default();
    let mut refusals = Vec::new();
    loop {
        let burst = lines
            .burst(|seen| match seen {
                Seen::Line(line) => {
                    // `Some(None)`: passes as it is; `Some(Some(..))`: rewritten.
                    let out = host::from_host(ctx, &line).map(|out| match out {
                        Cow::Borrowed(_) => None,
                        Cow::Owned(rewritten) => Some(rewritten),
                    });
                    match out {
                        Some(None) => batch.pass(line),
                        Some(Some(rewritten)) => batch.push(rewritten),
                        None => {}
                    }
                }
                Seen::Overlong { id, len } => refusals.extend(refuse_overlong(id, len, limit)),
            })
            .await;
        for line in refusals.drain(..) {
            let _ = ctx.to_host.send(line).await;
        }
        let more = matches!(burst, Ok(true));
        if batch.send(&to_server).await.is_err() || !more {
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
    Some(crate::protocol::mrtr::error_line(
        &id,
        &crate::protocol::mrtr::error_object(
            crate::protocol::jsonrpc::codes::INVALID_REQUEST,
            &format!("mcp-consent refused a message longer than its line limit ({limit} bytes)"),
        ),
    ))
}

/// Reads the server's lines and judges each; returns at end of input. Every line is judged
/// where it lies in the read buffer before it passes; the lines of one read that passed are
/// copied once into one buffer and sent on together ([`Batch`]), so a burst costs one channel
/// hop and one write, not one per line.
async fn read_server<R: tokio::io::AsyncBufRead + Unpin>(
    ctx: &Context,
    reader: &mut R,
    limit: usize,
) -> Result<(), ProxyError> {
    let mut lines = Lines::new(reader, limit);
    let mut batch = Batch::default();
    loop {
        let more = lines
            .burst(|seen| match seen {
                Seen::Line(line) => {
                    if from_server(ctx, &line, &mut batch) {
                        batch.pass(line);
                    }
                }
                Seen::Overlong { id, .. } => {
                    judge::dropped(ctx, crate::wire::DroppedLine::TooLong, id)
                }
            })
            .await?;
        let _ = batch.send(&ctx.to_host).await;
        if !more {
            return Ok(());
        }
    }
}

/// Judges one server line: `true` when it passes as it is (the caller adds it to the batch);
/// the elements of a batch that passed are added here.
fn from_server(ctx: &Context, line: &[u8], batch: &mut Batch) -> bool {
    match judge::from_server(ctx, line) {
        judge::Verdict::Forward => true,
        judge::Verdict::ForwardLines(lines) => {
            for line in lines {
                batch.push(line);
            }
            false
        }
        judge::Verdict::Handled | judge::Verdict::Dropped => false,
    }
}

/// Lines that passed, waiting to be sent as one buffer. Lines of [`BATCH_BYTES`] or more go
/// in buffers of their own, in order with the rest.
#[derive(Default)]
struct Batch {
    /// Short lines, concatenated.
    bytes: Vec<u8>,
    /// Buffers ready to go, in order (long lines, and the short lines before them).
    ready: Vec<Vec<u8>>,
}

impl Batch {
    /// Adds a line that passed as it was read: a copy of one borrowed from the read buffer,
    /// the line itself when it was gathered.
    fn pass(&mut self, line: Cow<'_, [u8]>) {
        match line {
            Cow::Borrowed(line) => self.push_line(line),
            Cow::Owned(line) => self.push(line),
        }
    }

    /// Adds a copy of a line, ending it with `\n` when it had none (the input's last line).
    fn push_line(&mut self, line: &[u8]) {
        if line.len() >= BATCH_BYTES {
            let mut own = Vec::with_capacity(line.len() + 1);
            own.extend_from_slice(line);
            self.push(own);
            return;
        }
        self.bytes.extend_from_slice(line);
        if line.last() != Some(&b'\n') {
            self.bytes.push(b'\n');
        }
    }

    /// Adds a line the proxy made or rewrote (already ending in `\n`), moved, not copied,
    /// when long.
    fn push(&mut self, mut line: Vec<u8>) {
        if line.last() != Some(&b'\n') {
            line.push(b'\n');
        }
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

    /// Sends everything, in order; an error when the receiver has gone.
    async fn send(&mut self, to: &mpsc::Sender<Vec<u8>>) -> Result<(), ()> {
        if !self.bytes.is_empty() {
            // The next burst is likely as long: room for it at once, not by doubling.
            let room = Vec::with_capacity(self.bytes.len());
            self.ready.push(std::mem::replace(&mut self.bytes, room));
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
    let mut out = BufWriter::with_capacity(BATCH_BYTES, out);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_batch_keeps_the_order_and_ends_every_line() {
        let (tx, mut rx) = mpsc::channel(8);
        let mut batch = Batch::default();
        batch.pass(Cow::Borrowed(&b"{\"a\":1}\n"[..]));
        // The input's last line, in place or gathered, without its newline.
        batch.pass(Cow::Borrowed(&b"{\"b\":2}"[..]));
        batch.pass(Cow::Owned(b"{\"c\":3}".to_vec()));
        let long = vec![b'x'; BATCH_BYTES];
        batch.pass(Cow::Borrowed(&long[..]));
        batch.send(&tx).await.unwrap();
        drop(tx);
        let mut sent = Vec::new();
        while let Some(buffer) = rx.recv().await {
            sent.push(buffer);
        }
        assert_eq!(sent.len(), 2, "the long line goes in a buffer of its own");
        assert_eq!(sent[0], b"{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n");
        assert_eq!(sent[1].len(), BATCH_BYTES + 1);
        assert_eq!(sent[1].last(), Some(&b'\n'));
    }
}
