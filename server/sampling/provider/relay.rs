//! The one connection path to a model provider: a relay that bounds the size of its reply.
//!
//! `genai` reads a provider's whole reply into memory and `reqwest` has no limit on a body's
//! size, so a provider (or whatever answers at its address) that streams without end would
//! grow the service until the run's `timeout_secs` passed. Each run therefore gets its own
//! relay: a Unix socket in a new 0700 directory under the temporary directory (a random name,
//! created only if it did not exist, so nobody else can have made, entered or swapped it),
//! which the run's HTTP client uses for every connection
//! ([`reqwest::ClientBuilder::unix_socket`]; TLS stays end to end over it, the certificate
//! checked for the `base_url`'s host). The relay connects each accepted connection to the
//! `base_url`'s host and port and copies bytes both ways, counting what the provider sends;
//! past [`MAX_REPLY_BYTES`] for the run it cuts both sides and the run fails with
//! [`super::ProviderError::TooLarge`]. Nothing of the bytes is looked at or kept. The relay,
//! its connections and its directory end with the run (dropped with [`Relay`]).

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixListener, UnixStream};
use tokio::task::JoinSet;
use url::{Host, Url};

/// The most a provider may send for one run (its reply with headers, and TLS framing over
/// https), in bytes: 16 MiB, the service's own limit on a request (`max_request_bytes`'s
/// default). A completion is text and tool calls; this is far more than any real one.
pub const MAX_REPLY_BYTES: u64 = 16 * 1024 * 1024;

/// How much of the reply is read at once.
const CHUNK: usize = 64 * 1024;

/// Where the relay connects: the `base_url`'s host and port (the scheme's default port when
/// the URL names none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Upstream {
    /// A host name, resolved when a connection is made.
    Name(String, u16),
    /// An IP literal.
    Addr(SocketAddr),
}

impl Upstream {
    /// The upstream of `base_url`; `None` when it has no host or port (the catalog refuses
    /// such a URL before any run).
    pub fn of(base_url: &str) -> Option<Upstream> {
        let url = Url::parse(base_url).ok()?;
        let port = url.port_or_known_default()?;
        Some(match url.host()? {
            Host::Domain(name) => Upstream::Name(name.to_owned(), port),
            Host::Ipv4(ip) => Upstream::Addr(SocketAddr::new(ip.into(), port)),
            Host::Ipv6(ip) => Upstream::Addr(SocketAddr::new(ip.into(), port)),
        })
    }

    async fn connect(&self) -> io::Result<TcpStream> {
        match self {
            Upstream::Name(name, port) => TcpStream::connect((name.as_str(), *port)).await,
            Upstream::Addr(addr) => TcpStream::connect(addr).await,
        }
    }
}

/// What the relay saw, for the run's error.
#[derive(Default)]
struct Seen {
    /// Bytes the provider sent in all, over every connection of the run.
    received: AtomicU64,
    /// The reply went over [`MAX_REPLY_BYTES`] and was cut.
    over: AtomicBool,
    /// The last connection to the provider that could not be made, in words.
    connect_error: Mutex<Option<String>>,
}

/// A running relay for one run; everything of it ends when it is dropped.
pub struct Relay {
    socket: PathBuf,
    seen: Arc<Seen>,
    /// The accepting task; its connections live in a [`JoinSet`] inside it, so aborting it
    /// ends them all.
    accepting: tokio::task::JoinHandle<()>,
    /// Removed (with the socket) on drop.
    _dir: tempfile::TempDir,
}

impl Relay {
    /// Opens a relay to `upstream`, allowing at most `limit` bytes from it, each connection
    /// made within `connect_timeout`.
    ///
    /// # Errors
    /// The I/O error when the directory or the socket cannot be made.
    pub fn start(upstream: Upstream, limit: u64, connect_timeout: Duration) -> io::Result<Relay> {
        use std::os::unix::fs::PermissionsExt;
        // A new directory (a random name, created only if it does not exist), 0700 from the
        // start: nobody else can enter it, put a socket there or replace this one.
        let dir = tempfile::Builder::new()
            .prefix("mcp-consent-model-")
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()?;
        let socket = dir.path().join("relay.sock");
        let listener = UnixListener::bind(&socket)?;
        let seen = Arc::new(Seen::default());
        let accepting = tokio::spawn(accept(
            listener,
            upstream,
            limit,
            connect_timeout,
            seen.clone(),
        ));
        Ok(Relay {
            socket,
            seen,
            accepting,
            _dir: dir,
        })
    }

    /// The socket the run's HTTP client connects to.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Whether the provider's reply went over the limit (and was cut).
    pub fn over_limit(&self) -> bool {
        self.seen.over.load(Ordering::SeqCst)
    }

    /// The last connection to the provider that could not be made, in words.
    pub fn connect_error(&self) -> Option<String> {
        self.seen
            .connect_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

/// Accepts the run's connections (only its own client knows the socket, inside a directory
/// only this user can enter) and relays each on its own task.
async fn accept(
    listener: UnixListener,
    upstream: Upstream,
    limit: u64,
    connect_timeout: Duration,
    seen: Arc<Seen>,
) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((local, _)) = accepted else {
                    // Out of descriptors, say: the run's client sees its connection fail; wait
                    // a moment rather than spin on the same error.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                };
                let (upstream, seen) = (upstream.clone(), seen.clone());
                connections.spawn(async move {
                    let remote = match tokio::time::timeout(connect_timeout, upstream.connect()).await {
                        Ok(Ok(remote)) => remote,
                        Ok(Err(e)) => return note_connect_error(&seen, e.to_string()),
                        Err(_) => {
                            return note_connect_error(
                                &seen,
                                format!("no connection within {} seconds", connect_timeout.as_secs()),
                            );
                        }
                    };
                    relay(local, remote, limit, &seen).await;
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

fn note_connect_error(seen: &Seen, message: String) {
    *seen
        .connect_error
        .lock()
        .unwrap_or_else(PoisonError::into_inner) = Some(message);
}

/// Copies the request to the provider as it comes, and the reply back while the run's total
/// stays within `limit`; over it, both connections are dropped mid-reply.
async fn relay(local: UnixStream, remote: TcpStream, limit: u64, seen: &Seen) {
    let (mut local_read, mut local_write) = local.into_split();
    let (mut remote_read, mut remote_write) = remote.into_split();
    let request = async {
        let _ = tokio::io::copy(&mut local_read, &mut remote_write).await;
        let _ = remote_write.shutdown().await;
        // The request side is done; the reply decides when the connection ends.
        std::future::pending::<()>().await;
    };
    let reply = async {
        let mut buf = vec![0u8; CHUNK];
        loop {
            let n = match remote_read.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let total = seen.received.fetch_add(n as u64, Ordering::SeqCst) + n as u64;
            if total > limit {
                seen.over.store(true, Ordering::SeqCst);
                return;
            }
            if local_write.write_all(&buf[..n]).await.is_err() {
                return;
            }
        }
        let _ = local_write.shutdown().await;
    };
    tokio::select! {
        () = request => {}
        () = reply => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_upstream_is_the_base_urls_host_and_port() {
        assert_eq!(
            Upstream::of("https://api.openai.com/v1/"),
            Some(Upstream::Name("api.openai.com".into(), 443))
        );
        assert_eq!(
            Upstream::of("http://127.0.0.1:11434/v1"),
            Some(Upstream::Addr("127.0.0.1:11434".parse().unwrap()))
        );
        assert_eq!(
            Upstream::of("http://[::1]/v1"),
            Some(Upstream::Addr("[::1]:80".parse().unwrap()))
        );
        assert_eq!(Upstream::of("not a url"), None);
    }

    #[tokio::test]
    async fn the_relay_passes_a_reply_within_the_limit_and_cuts_one_over_it() {
        use std::os::unix::fs::PermissionsExt;
        let provider = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let upstream = Upstream::Addr(provider.local_addr().unwrap());
        tokio::spawn(async move {
            while let Ok((mut s, _)) = provider.accept().await {
                tokio::spawn(async move {
                    let mut b = [0u8; 4];
                    let _ = s.read_exact(&mut b).await;
                    // Echoes the request's length in bytes, then 100 more.
                    let _ = s.write_all(&[7u8; 104]).await;
                });
            }
        });
        let relay = Relay::start(upstream, 150, Duration::from_secs(5)).unwrap();
        let dir_mode = std::fs::metadata(relay.socket().parent().unwrap())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700);
        let mut one = UnixStream::connect(relay.socket()).await.unwrap();
        one.write_all(b"ping").await.unwrap();
        let mut got = Vec::new();
        one.read_to_end(&mut got).await.unwrap();
        assert_eq!(got.len(), 104);
        assert!(!relay.over_limit());
        // The second reply takes the run past 150 bytes: cut before all of it arrives.
        let mut two = UnixStream::connect(relay.socket()).await.unwrap();
        two.write_all(b"ping").await.unwrap();
        let mut got = Vec::new();
        let _ = two.read_to_end(&mut got).await;
        assert!(got.len() < 104, "{}", got.len());
        assert!(relay.over_limit());
        let dir = relay.socket().parent().unwrap().to_owned();
        drop(relay);
        assert!(!dir.exists(), "the directory goes with the run");
    }
}
