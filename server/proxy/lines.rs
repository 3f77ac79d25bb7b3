//! Reading newline-delimited messages with a bound: a line longer than the limit is never held
//! in memory; it is read through and reported with the id a byte scanner found in it, so the
//! side waiting for it can be told.
//!
//! [`Lines`] shows each line in place, in the buffer it was read into: judging a line needs no
//! copy of it, and a line that passes is copied once, into the outgoing batch. Only a line that
//! straddles two reads is gathered into a buffer of its own.
//!
//! A host stdin that the runtime cannot poll (a terminal, a file) is read by a thread of its
//! own with blocking reads into large chunks ([`host_input_thread`]): `tokio::io::stdin()`
//! would hand every read to the blocking pool and wake two threads per read. Pipes and sockets
//! are polled instead ([`super::host_io`]).

use std::borrow::Cow;
use std::io::Read;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, ReadBuf};
use tokio::sync::mpsc;

use crate::protocol::envelope::{IdScanner, scan_id};

/// The size of one read of the host's stdin, in bytes.
pub(super) const HOST_CHUNK_BYTES: usize = 256 * 1024;
/// Chunks read ahead of the proxy (back-pressure: the thread blocks when they are queued).
const HOST_CHUNKS_AHEAD: usize = 8;

/// The host's stdin as chunks read by a dedicated thread (blocking reads of up to
/// [`HOST_CHUNK_BYTES`]); end of input or a read error ends the stream.
///
/// The thread is not joined: it may stay blocked in `read` while the host keeps stdin open
/// after the proxy decided to stop, and it ends with the process.
pub(super) fn host_input_thread() -> ChunkReader {
    let (tx, rx) = mpsc::channel::<Vec<u8>>(HOST_CHUNKS_AHEAD);
    let spawned = std::thread::Builder::new()
        .name("host-stdin".to_owned())
        .spawn(move || {
            let mut stdin = std::io::stdin().lock();
            // One buffer for every read; each chunk sent is a copy of what was read (a pipe
            // gives at most 64 KiB a read, so a fresh zeroed buffer per read would cost more).
            let mut buffer = vec![0u8; HOST_CHUNK_BYTES];
            loop {
                match stdin.read(&mut buffer) {
                    Ok(0) => return,
                    Ok(n) => {
                        if tx.blocking_send(buffer[..n].to_vec()).is_err() {
                            return;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        tracing::warn!(error = %e, "reading the host's stdin failed");
                        return;
                    }
                }
            }
        });
    if let Err(e) = spawned {
        // Without the thread the receiver sees end of input at once: the proxy stops as if
        // the host had closed its output.
        tracing::warn!(error = %e, "cannot start the thread that reads the host's stdin");
    }
    ChunkReader {
        chunks: rx,
        chunk: Vec::new(),
        pos: 0,
    }
}

/// An [`AsyncBufRead`] over chunks arriving on a channel (no copy: lines are read straight out
/// of the chunk the thread filled).
pub(super) struct ChunkReader {
    chunks: mpsc::Receiver<Vec<u8>>,
    chunk: Vec<u8>,
    pos: usize,
}

impl AsyncBufRead for ChunkReader {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<&[u8]>> {
        let this = self.get_mut();
        while this.pos >= this.chunk.len() {
            match ready!(this.chunks.poll_recv(cx)) {
                Some(chunk) => {
                    this.chunk = chunk;
                    this.pos = 0;
                }
                None => return Poll::Ready(Ok(&[])),
            }
        }
        Poll::Ready(Ok(&this.chunk[this.pos..]))
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        let this = self.get_mut();
        this.pos = (this.pos + amt).min(this.chunk.len());
    }
}

impl AsyncRead for ChunkReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let available = ready!(self.as_mut().poll_fill_buf(cx))?;
        let n = available.len().min(buf.remaining());
        buf.put_slice(&available[..n]);
        self.consume(n);
        Poll::Ready(Ok(()))
    }
}

/// One line as [`Lines`] shows it.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Seen<'a> {
    /// A whole line, with its trailing `\n` when it had one (only the input's last line may
    /// lack it): borrowed from the read buffer, or owned when it was gathered over several
    /// reads (so a long line is moved on, not copied again).
    Line(Cow<'a, [u8]>),
    /// A line over the limit, read and discarded.
    Overlong {
        /// The line's top-level `id`, canonical, if the scanner found one.
        id: Option<String>,
        /// Its length in bytes.
        len: usize,
    },
}

/// The lines of a stream, shown where they were read ([`Lines::burst`]).
pub(super) struct Lines<R> {
    reader: R,
    limit: usize,
    /// The start of a line that did not end in the read it began in.
    partial: Partial,
}

/// A line gathered over several reads.
#[derive(Default)]
struct Partial {
    bytes: Vec<u8>,
    /// Set once the line went over the limit: its bytes are scanned for the id, not kept.
    over: Option<IdScanner>,
    /// Its length so far, in bytes.
    len: usize,
}

impl Partial {
    fn extend(&mut self, chunk: &[u8], limit: usize) {
        self.len += chunk.len();
        match &mut self.over {
            Some(scanner) => scanner.feed(chunk),
            None if self.len > limit => {
                let mut scanner = IdScanner::default();
                scanner.feed(&self.bytes);
                scanner.feed(chunk);
                self.bytes = Vec::new();
                self.over = Some(scanner);
            }
            None => self.bytes.extend_from_slice(chunk),
        }
    }

    /// Shows the gathered line to `each` and starts over.
    fn show(&mut self, each: &mut impl FnMut(Seen<'_>)) {
        let len = std::mem::take(&mut self.len);
        match self.over.take() {
            Some(scanner) => each(Seen::Overlong {
                id: scanner.finish(),
                len,
            }),
            None => each(Seen::Line(one_line(Cow::Owned(std::mem::take(
                &mut self.bytes,
            ))))),
        }
    }
}

/// The line with every carriage return outside a JSON string made a space. JSON takes a CR
/// there as whitespace, so the message is the same; but a peer that splits lines at CR as
/// well as LF (Node's `readline`, Python's text streams) would read two messages where the
/// proxy judged one, and run the second unjudged. A CR inside a string is left: the line is
/// not JSON, and is refused as such.
fn one_line(line: Cow<'_, [u8]>) -> Cow<'_, [u8]> {
    if memchr::memchr(b'\r', &line).is_none() {
        return line;
    }
    let mut bytes = line.into_owned();
    let (mut in_string, mut escaped) = (false, false);
    for b in &mut bytes {
        if in_string {
            match (escaped, *b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
        } else if *b == b'"' {
            in_string = true;
        } else if *b == b'\r' {
            *b = b' ';
        }
    }
    Cow::Owned(bytes)
}

impl<R: AsyncBufRead + Unpin> Lines<R> {
    /// Lines of `reader`, none longer than `limit` bytes (its `\n` included).
    pub(super) fn new(reader: R, limit: usize) -> Self {
        Lines {
            reader,
            limit,
            partial: Partial::default(),
        }
    }

    /// Waits until at least one line ends (or the input does), then shows `each` every line
    /// that has ended in what was read, in order. Returns `false` at the end of the input,
    /// after showing its last line when that had no `\n`.
    ///
    /// # Errors
    /// Any read error.
    pub(super) async fn burst(&mut self, mut each: impl FnMut(Seen<'_>)) -> std::io::Result<bool> {
        let Lines {
            reader,
            limit,
            partial,
        } = self;
        loop {
            let available = reader.fill_buf().await?;
            if available.is_empty() {
                if partial.len > 0 {
                    partial.show(&mut each);
                }
                return Ok(false);
            }
            let mut start = 0;
            if partial.len > 0 {
                // A line began in an earlier read: it ends here or it goes on.
                let Some(i) = memchr::memchr(b'\n', available) else {
                    partial.extend(available, *limit);
                    let n = available.len();
                    reader.consume(n);
                    continue;
                };
                partial.extend(&available[..=i], *limit);
                partial.show(&mut each);
                start = i + 1;
            }
            // memchr: a long line is searched at memory speed, not a byte at a time.
            let from = start;
            for i in memchr::memchr_iter(b'\n', &available[from..]) {
                let end = from + i + 1;
                let line = &available[start..end];
                if line.len() > *limit {
                    each(Seen::Overlong {
                        id: scan_id(line),
                        len: line.len(),
                    });
                } else {
                    each(Seen::Line(one_line(Cow::Borrowed(line))));
                }
                start = end;
            }
            if start == 0 {
                // Only the start of a line: gather it and read on.
                partial.extend(available, *limit);
                let n = available.len();
                reader.consume(n);
                continue;
            }
            // What follows the last `\n` stays buffered; the next call gathers it.
            reader.consume(start);
            return Ok(true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every burst of `lines`, each line as owned text (or its overlong report).
    async fn bursts<R: AsyncBufRead + Unpin>(lines: &mut Lines<R>) -> Vec<Vec<String>> {
        let mut all = Vec::new();
        loop {
            let mut burst = Vec::new();
            let more = lines
                .burst(|seen| {
                    burst.push(match seen {
                        Seen::Line(line) => String::from_utf8(line.into_owned()).unwrap(),
                        Seen::Overlong { id, len } => format!("overlong {id:?} {len}"),
                    });
                })
                .await
                .unwrap();
            if !burst.is_empty() {
                all.push(burst);
            }
            if !more {
                return all;
            }
        }
    }

    #[tokio::test]
    async fn lines_are_shown_in_place_per_read_and_gathered_across_reads() {
        let (tx, rx) = mpsc::channel(8);
        let reader = ChunkReader {
            chunks: rx,
            chunk: Vec::new(),
            pos: 0,
        };
        for chunk in [
            &b"{\"a\":1}\n{\"b\""[..],
            b"",
            b":2}\n{\"c\":3}\n{\"d",
            b"\":4",
            b"}\n",
            b"{\"e\":5}",
        ] {
            tx.send(chunk.to_vec()).await.unwrap();
        }
        drop(tx);
        let mut lines = Lines::new(reader, 1000);
        assert_eq!(
            bursts(&mut lines).await,
            [
                vec!["{\"a\":1}\n"],
                vec!["{\"b\":2}\n", "{\"c\":3}\n"],
                vec!["{\"d\":4}\n"],
                vec!["{\"e\":5}"],
            ]
        );
    }

    #[tokio::test]
    async fn long_lines_are_reported_in_place_and_across_reads() {
        let big = format!("{{\"id\":5,\"result\":\"{}\"}}\n", "x".repeat(10_000));
        let small = format!("{{\"id\":7,\"result\":\"{}\"}}\n", "y".repeat(2_000));
        let input = format!("{{\"id\":1}}\n{big}{small}tail");
        // Reads of 64 bytes: the long lines straddle reads.
        let mut lines = Lines::new(
            tokio::io::BufReader::with_capacity(64, input.as_bytes()),
            1000,
        );
        let across: Vec<String> = bursts(&mut lines).await.concat();
        assert_eq!(
            across,
            [
                "{\"id\":1}\n".to_owned(),
                format!("overlong Some(\"5\") {}", big.len()),
                format!("overlong Some(\"7\") {}", small.len()),
                "tail".to_owned(),
            ]
        );
        // One read holds them all: the same, found in place.
        let mut lines = Lines::new(
            tokio::io::BufReader::with_capacity(64 * 1024, input.as_bytes()),
            1000,
        );
        assert_eq!(bursts(&mut lines).await.concat(), across);
    }

    #[test]
    fn a_carriage_return_outside_a_string_is_a_space_and_one_inside_is_left() {
        let plain: &[u8] = b"{\"a\":1}\n";
        assert!(matches!(one_line(Cow::Borrowed(plain)), Cow::Borrowed(_)));
        let line = one_line(Cow::Borrowed(&b"{\"a\":\r{\"b\":\"x\\\"\ry\"}\r}\r\n"[..]));
        assert_eq!(&*line, &b"{\"a\": {\"b\":\"x\\\"\ry\"} } \n"[..]);
    }
}
