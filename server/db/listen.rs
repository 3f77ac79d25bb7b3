//! Changes between the instances sharing one PostgreSQL database, over `LISTEN`/`NOTIFY`:
//! each instance announces its committed changes on [`CHANNEL`] and hears every other's.
//!
//! One thread owns one dedicated connection: it sends what was announced (`pg_notify`) and
//! reads what arrived, polling libpq's input every [`POLL`] (libpq reads without blocking), so
//! a change reaches the other instances well within a second. When the connection is lost the
//! thread reconnects and reports [`Heard::Reconnected`]: what was announced meanwhile is lost,
//! so listeners re-read what they wait on.

use std::sync::mpsc;
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::sql_types::Text;
use diesel::{Connection, PgConnection, RunQueryDsl};
use tokio::sync::mpsc as tokio_mpsc;

use super::postgres::Target;

/// The notification channel of the shared queue.
pub const CHANNEL: &str = "mcp_consent";

/// How often the thread reads what arrived.
const POLL: Duration = Duration::from_millis(50);

/// The pause between two attempts to reconnect.
const RECONNECT: Duration = Duration::from_secs(1);

/// What the thread hears.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Heard {
    /// A payload some instance (this one included) announced.
    Payload(String),
    /// The connection was lost and is back: announcements may have been missed.
    Reconnected,
}

/// The sending half: announces payloads to every listening instance. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Announcer {
    outgoing: mpsc::Sender<String>,
}

impl Announcer {
    /// Queues `payload` (at most 8000 bytes: PostgreSQL's limit) for every instance; never
    /// blocks. A payload queued while the database is unreachable is dropped with the lost
    /// connection (listeners hear [`Heard::Reconnected`]).
    pub fn announce(&self, payload: String) {
        let _ = self.outgoing.send(payload);
    }
}

/// Starts the thread for `target`; what it hears goes to the returned receiver.
///
/// # Errors
/// The thread could not be started.
pub fn start(target: Target) -> std::io::Result<(Announcer, tokio_mpsc::UnboundedReceiver<Heard>)> {
    let (outgoing, queued) = mpsc::channel::<String>();
    let (heard, receiver) = tokio_mpsc::unbounded_channel();
    std::thread::Builder::new()
        .name("db-listen".into())
        .spawn(move || listen(&target, &queued, &heard))?;
    Ok((Announcer { outgoing }, receiver))
}

/// The thread: connect, listen, relay; reconnect when the connection fails. Ends when every
/// [`Announcer`] and the receiver are gone.
fn listen(
    target: &Target,
    queued: &mpsc::Receiver<String>,
    heard: &tokio_mpsc::UnboundedSender<Heard>,
) {
    let mut first = true;
    loop {
        let conn = PgConnection::establish(target.url()).and_then(|mut c| {
            c.batch_execute(&format!("LISTEN {CHANNEL}"))
                .map_err(|e| diesel::ConnectionError::BadConnection(e.to_string()))?;
            Ok(c)
        });
        match conn {
            Ok(mut conn) => {
                if !first && heard.send(Heard::Reconnected).is_err() {
                    return;
                }
                first = false;
                match relay(&mut conn, queued, heard) {
                    Ok(()) => return,
                    Err(e) => tracing::warn!(
                        database = target.host_port(),
                        error = %e,
                        "lost the database's notification connection; reconnecting"
                    ),
                }
            }
            Err(e) => {
                tracing::warn!(database = target.host_port(), error = %e, "cannot listen for other instances' changes; retrying");
                first = false;
            }
        }
        if heard.is_closed() {
            return;
        }
        std::thread::sleep(RECONNECT);
        // Announcements queued while disconnected are dropped: listeners re-read anyway.
        while queued.try_recv().is_ok() {}
    }
}

/// Sends queued payloads and relays arrived ones until the connection fails (`Err`) or both
/// ends are gone (`Ok`).
fn relay(
    conn: &mut PgConnection,
    queued: &mpsc::Receiver<String>,
    heard: &tokio_mpsc::UnboundedSender<Heard>,
) -> diesel::QueryResult<()> {
    loop {
        match queued.recv_timeout(POLL) {
            Ok(payload) => {
                send(conn, &payload)?;
                while let Ok(payload) = queued.try_recv() {
                    send(conn, &payload)?;
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(()),
        }
        for note in conn.notifications_iter() {
            if heard.send(Heard::Payload(note?.payload)).is_err() {
                return Ok(());
            }
        }
    }
}

fn send(conn: &mut PgConnection, payload: &str) -> diesel::QueryResult<()> {
    diesel::sql_query("SELECT pg_notify($1, $2)")
        .bind::<Text, _>(CHANNEL)
        .bind::<Text, _>(payload)
        .execute(conn)
        .map(|_| ())
}
