//! The host's stdin and stdout. When they are pipes or sockets (what hosts give a stdio
//! server), they are read and written on the runtime, non-blocking: the runtime's poller wakes
//! the reading task itself, and a write is a plain `write(2)` from the task that has the
//! bytes, so a line crosses no thread on its way through the proxy. Anything else (a terminal,
//! a file) keeps blocking calls on threads of their own ([`super::lines::host_input_thread`],
//! [`super::output::write_host`]), because such files cannot be polled or must stay blocking
//! for whoever else has them open.
//!
//! Non-blocking mode is a property of the open file, shared by every descriptor of it: stdin
//! and stdout stay blocking when stderr is the same file (stderr is inherited by the server,
//! whose writes must not start failing with `EAGAIN`, and the proxy's own log goes there).

use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};

use bytes::Bytes;
use tokio::io::{AsyncBufRead, AsyncRead, AsyncWrite, BufReader};
use tokio::net::unix::pipe;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::lines::{HOST_CHUNK_BYTES, host_input_thread};
use super::output::{write_host, write_lines};

/// The host's stdin, buffered: polled on the runtime when it is a pipe or a socket that is
/// not also the proxy's stderr, else read by a thread of its own. (When it is the same socket
/// as stdout, stdout is polled too: [`host_output`] decides alike.)
pub(super) fn host_input() -> Box<dyn AsyncBufRead + Send + Unpin> {
    let stdin = std::io::stdin();
    let Some(own) = stdin
        .as_fd()
        .try_clone_to_owned()
        .ok()
        .filter(|_| !same_file(stdin.as_fd(), std::io::stderr().as_fd()))
    else {
        return Box::new(host_input_thread());
    };
    let reader: Option<Box<dyn AsyncRead + Send + Unpin>> = match kind(&own) {
        // Checks the access mode and sets O_NONBLOCK.
        Some(Kind::Pipe) => pipe::Receiver::from_owned_fd(own)
            .ok()
            .map(|r| Box::new(r) as _),
        Some(Kind::Socket) => socket(own).map(|s| Box::new(s) as _),
        None => None,
    };
    match reader {
        Some(reader) => Box::new(BufReader::with_capacity(HOST_CHUNK_BYTES, reader)),
        None => Box::new(host_input_thread()),
    }
}

/// Starts the writer of the host's stdout: a task writing to it non-blocking when it is a
/// pipe or a socket that is not also the proxy's stderr, else a blocking thread. The writer
/// ends when every sender is gone and the queue is written, or when stdout fails.
pub(super) fn host_output(lines: mpsc::Receiver<Bytes>) -> JoinHandle<()> {
    let stdout = std::io::stdout();
    let own = stdout
        .as_fd()
        .try_clone_to_owned()
        .ok()
        .filter(|_| !same_file(stdout.as_fd(), std::io::stderr().as_fd()));
    let writer: Option<Box<dyn AsyncWrite + Send + Unpin>> = match own {
        Some(own) => match kind(&own) {
            Some(Kind::Pipe) => pipe::Sender::from_owned_fd(own)
                .ok()
                .map(|w| Box::new(w) as _),
            Some(Kind::Socket) => socket(own).map(|s| Box::new(s) as _),
            None => None,
        },
        None => None,
    };
    match writer {
        Some(writer) => tokio::spawn(write_lines(writer, lines, None)),
        None => tokio::task::spawn_blocking(move || write_host(lines)),
    }
}

/// What can be polled.
enum Kind {
    Pipe,
    Socket,
}

/// Whether `fd` is a pipe or a socket (`None`: neither, or unknown).
fn kind(fd: &OwnedFd) -> Option<Kind> {
    let kind = File::from(fd.try_clone().ok()?)
        .metadata()
        .ok()?
        .file_type();
    if kind.is_fifo() {
        Some(Kind::Pipe)
    } else if kind.is_socket() {
        Some(Kind::Socket)
    } else {
        None
    }
}

/// A socket (a Unix one: what hosts like Node give a child's stdio) set non-blocking and
/// registered with the runtime.
fn socket(own: OwnedFd) -> Option<tokio::net::UnixStream> {
    let stream = std::os::unix::net::UnixStream::from(own);
    stream.set_nonblocking(true).ok()?;
    tokio::net::UnixStream::from_std(stream).ok()
}

/// Whether two descriptors name the same file (a host that gave stdout and stderr one pipe).
fn same_file(a: BorrowedFd<'_>, b: BorrowedFd<'_>) -> bool {
    let meta = |fd: BorrowedFd<'_>| {
        fd.try_clone_to_owned()
            .ok()
            .and_then(|own| File::from(own).metadata().ok())
            .map(|m| (m.dev(), m.ino()))
    };
    match (meta(a), meta(b)) {
        (Some(a), Some(b)) => a == b,
        // Unknown: assume shared, and keep stdout blocking.
        _ => true,
    }
}
