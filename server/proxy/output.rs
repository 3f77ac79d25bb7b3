//! The lines on their way: a [`Burst`] read from one side, to be judged by the session's owner,
//! and the [`Batch`] that passed, sent on as few buffers; the writers of the server's stdin and
//! the host's stdout.

use std::borrow::Cow;
use std::ops::Range;

use bytes::Bytes;
use tokio::io::{AsyncWriteExt, BufWriter};
use tokio::sync::mpsc;

use super::lines::Seen;

/// A line that passed and is this long or longer goes in a buffer of its own (moved, not
/// copied, when it was gathered over several reads); shorter ones share one buffer per read.
pub(super) const BATCH_BYTES: usize = 64 * 1024;
/// The buffer in front of the host's stdout, in bytes: small bursts are gathered into one
/// write, a batch this long or longer is written without a copy.
const HOST_OUT_BYTES: usize = BATCH_BYTES;

/// The lines of one read, owned, on their way to be judged: short lines share one buffer, a
/// long or gathered line is kept as its own (moved on, not copied, when it passes).
#[derive(Debug, Default)]
pub(in crate::proxy) struct Burst {
    bytes: Vec<u8>,
    items: Vec<Item>,
}

#[derive(Debug)]
enum Item {
    /// A line in [`Burst::bytes`].
    Short(Range<usize>),
    /// A line of its own.
    Own(Vec<u8>),
    /// A line over the limit (see [`Seen::Overlong`]).
    Overlong { id: Option<String>, len: usize },
}

impl Burst {
    /// Adds what [`super::lines::Lines`] showed.
    pub(super) fn add(&mut self, seen: Seen<'_>) {
        match seen {
            Seen::Line(Cow::Borrowed(line)) if line.len() < BATCH_BYTES => {
                let start = self.bytes.len();
                self.bytes.extend_from_slice(line);
                self.items.push(Item::Short(start..self.bytes.len()));
            }
            Seen::Line(line) => self.items.push(Item::Own(line.into_owned())),
            Seen::Overlong { id, len } => self.items.push(Item::Overlong { id, len }),
        }
    }

    /// Whether nothing was added.
    pub(super) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Shows every line, in order, as [`super::lines::Lines`] showed it.
    pub(super) fn each(self, mut each: impl FnMut(Seen<'_>)) {
        let Burst { bytes, items } = self;
        for item in items {
            match item {
                Item::Short(range) => each(Seen::Line(Cow::Borrowed(&bytes[range]))),
                Item::Own(line) => each(Seen::Line(Cow::Owned(line))),
                Item::Overlong { id, len } => each(Seen::Overlong { id, len }),
            }
        }
    }
}

/// Lines that passed, waiting to be sent as one buffer. Lines of [`BATCH_BYTES`] or more go
/// in buffers of their own, in order with the rest.
#[derive(Debug, Default)]
pub(in crate::proxy) struct Batch {
    /// Short lines, concatenated.
    bytes: Vec<u8>,
    /// Buffers ready to go, in order (long lines, and the short lines before them).
    ready: Vec<Bytes>,
}

impl Batch {
    /// Adds a line that passed as it was read: a copy of one borrowed from the read buffer,
    /// the line itself when it was gathered.
    pub(super) fn pass(&mut self, line: Cow<'_, [u8]>) {
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
    pub(super) fn push(&mut self, mut line: Vec<u8>) {
        if line.last() != Some(&b'\n') {
            line.push(b'\n');
        }
        if line.len() >= BATCH_BYTES {
            self.push_ready(line.into());
        } else if self.bytes.is_empty() {
            // The first line's buffer becomes the batch's (no copy for a lone line).
            self.bytes = line;
        } else {
            self.bytes.extend_from_slice(&line);
        }
    }

    /// Adds a whole line (ending in `\n`) that is shared with the session's owner, which
    /// reads it again once it is on its way.
    pub(super) fn push_shared(&mut self, line: Bytes) {
        if line.len() < BATCH_BYTES {
            self.bytes.extend_from_slice(&line);
        } else {
            self.push_ready(line);
        }
    }

    /// Adds a buffer of its own, after the short lines gathered so far.
    fn push_ready(&mut self, buffer: Bytes) {
        if !self.bytes.is_empty() {
            self.ready.push(std::mem::take(&mut self.bytes).into());
        }
        self.ready.push(buffer);
    }

    /// Sends everything, in order; an error when the receiver has gone.
    pub(super) async fn send(&mut self, to: &mpsc::Sender<Bytes>) -> Result<(), ()> {
        if !self.bytes.is_empty() {
            // The next burst is likely as long: room for it at once, not by doubling.
            let room = Vec::with_capacity(self.bytes.len());
            self.ready
                .push(std::mem::replace(&mut self.bytes, room).into());
        }
        for buffer in self.ready.drain(..) {
            to.send(buffer).await.map_err(drop)?;
        }
        Ok(())
    }
}

/// Writes queued lines, flushing only when the queue runs dry (one write per burst, not per
/// line). With `close`, stops and closes the stream once told to (after what is queued).
pub(super) async fn write_lines<W: tokio::io::AsyncWrite + Unpin>(
    out: W,
    mut lines: mpsc::Receiver<Bytes>,
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
pub(super) fn write_host(mut lines: mpsc::Receiver<Bytes>) {
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
        assert_eq!(&sent[0][..], b"{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n");
        assert_eq!(sent[1].len(), BATCH_BYTES + 1);
        assert_eq!(sent[1].last(), Some(&b'\n'));
    }
}
