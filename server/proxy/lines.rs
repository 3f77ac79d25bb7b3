//! Reading newline-delimited messages with a bound: a line longer than the limit is never held
//! in memory; it is read through and reported as [`Piece::Overlong`] with the id a byte scanner
//! found in it, so the side waiting for it can be told.
//!
//! The host's stdin is read by a thread of its own with blocking reads into large chunks
//! ([`host_input`]): `tokio::io::stdin()` would hand every read to the blocking pool and wake
//! two threads per read. [`Buffered`] lets the loops see whether another whole line is already
//! buffered, so they can pass a burst of lines on in one batch.

use std::io::Read;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, BufReader, ReadBuf};
use tokio::sync::mpsc;

use crate::protocol::envelope::IdScanner;

/// The size of one read of the host's stdin, in bytes.
const HOST_CHUNK_BYTES: usize = 256 * 1024;
/// Chunks read ahead of the proxy (back-pressure: the thread blocks when they are queued).
const HOST_CHUNKS_AHEAD: usize = 8;

/// A reader whose already-read bytes can be looked at without reading more.
pub(super) trait Buffered {
    /// The bytes read but not yet consumed.
    fn buffered(&self) -> &[u8];

    /// Whether a whole line is already buffered (the next [`next_line`] will not wait).
    fn has_line(&self) -> bool {
        memchr::memchr(b'\n', self.buffered()).is_some()
    }
}

impl<R: AsyncRead> Buffered for BufReader<R> {
    fn buffered(&self) -> &[u8] {
        self.buffer()
    }
}

/// The host's stdin as chunks read by a dedicated thread (blocking reads of up to
/// [`HOST_CHUNK_BYTES`]); end of input or a read error ends the stream.
///
/// The thread is not joined: it may stay blocked in `read` while the host keeps stdin open
/// after the proxy decided to stop, and it ends with the process.
pub(super) fn host_input() -> ChunkReader {
    let (tx, rx) = mpsc::channel::<Vec<u8>>(HOST_CHUNKS_AHEAD);
    let spawned = std::thread::Builder::new()
        .name("host-stdin".to_owned())
        .spawn(move || {
            let mut stdin = std::io::stdin().lock();
            loop {
                let mut chunk = vec![0u8; HOST_CHUNK_BYTES];
                match stdin.read(&mut chunk) {
                    Ok(0) => return,
                    Ok(n) => {
                        chunk.truncate(n);
                        if tx.blocking_send(chunk).is_err() {
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

impl Buffered for ChunkReader {
    fn buffered(&self) -> &[u8] {
        &self.chunk[self.pos..]
    }
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

/// One line, or the news that one was too long.
#[derive(Debug)]
pub(super) enum Piece {
    /// A whole line, with its trailing `\n` when it had one.
    Line(Vec<u8>),
    /// A line over the limit, read and discarded.
    Overlong {
        /// The line's top-level `id`, canonical, if the scanner found one.
        id: Option<String>,
        /// Its length in bytes.
        len: usize,
    },
}

/// Reads the next line from `reader`; `None` at end of input.
///
/// # Errors
/// Any read error.
pub(super) async fn next_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    limit: usize,
) -> std::io::Result<Option<Piece>> {
    let mut line = Vec::new();
    let mut over: Option<IdScanner> = None;
    let mut len = 0usize;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(match over {
                Some(scanner) => Some(Piece::Overlong {
                    id: scanner.finish(),
                    len,
                }),
                None if line.is_empty() => None,
                None => Some(Piece::Line(line)),
            });
        }
        // memchr: a 10 MB line is searched at memory speed, not a byte at a time.
        let (take, ends) = match memchr::memchr(b'\n', available) {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        let chunk = &available[..take];
        len += take;
        match &mut over {
            Some(scanner) => scanner.feed(chunk),
            None if line.len() + take > limit => {
                let mut scanner = IdScanner::default();
                scanner.feed(&line);
                scanner.feed(chunk);
                line = Vec::new();
                over = Some(scanner);
            }
            None => line.extend_from_slice(chunk),
        }
        reader.consume(take);
        if ends {
            return Ok(Some(match over {
                Some(scanner) => Piece::Overlong {
                    id: scanner.finish(),
                    len,
                },
                None => Piece::Line(line),
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn chunks_read_as_one_stream_and_show_what_is_buffered() {
        let (tx, rx) = mpsc::channel(4);
        let mut reader = ChunkReader {
            chunks: rx,
            chunk: Vec::new(),
            pos: 0,
        };
        tx.send(b"{\"a\":1}\n{\"b\"".to_vec()).await.unwrap();
        tx.send(Vec::new()).await.unwrap();
        tx.send(b":2}\n".to_vec()).await.unwrap();
        drop(tx);
        let Some(Piece::Line(first)) = next_line(&mut reader, 1000).await.unwrap() else {
            panic!("first line");
        };
        assert_eq!(first, b"{\"a\":1}\n");
        assert_eq!(reader.buffered(), b"{\"b\"");
        assert!(!reader.has_line());
        let Some(Piece::Line(second)) = next_line(&mut reader, 1000).await.unwrap() else {
            panic!("a line split over chunks");
        };
        assert_eq!(second, b"{\"b\":2}\n");
        assert!(next_line(&mut reader, 1000).await.unwrap().is_none());
    }

    #[tokio::test]
    async fn long_lines_are_reported_not_held() {
        let big = format!("{{\"id\":5,\"result\":\"{}\"}}\n", "x".repeat(10_000));
        let input = format!("{{\"id\":1}}\n{big}tail");
        let mut reader = tokio::io::BufReader::with_capacity(64, input.as_bytes());
        let Some(Piece::Line(first)) = next_line(&mut reader, 1000).await.unwrap() else {
            panic!("first line");
        };
        assert_eq!(first, b"{\"id\":1}\n");
        let Some(Piece::Overlong { id, len }) = next_line(&mut reader, 1000).await.unwrap() else {
            panic!("overlong line");
        };
        assert_eq!((id.as_deref(), len), (Some("5"), big.len()));
        let Some(Piece::Line(tail)) = next_line(&mut reader, 1000).await.unwrap() else {
            panic!("last line without newline");
        };
        assert_eq!(tail, b"tail");
        assert!(next_line(&mut reader, 1000).await.unwrap().is_none());
    }
}
