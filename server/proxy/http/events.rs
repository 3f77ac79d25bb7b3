//! Server-Sent Events from the server, parsed by `eventsource-stream` and bounded: the bytes
//! held between two events never exceed the line limit (plus one network chunk), so an endless
//! event, or a stream of bytes that never forms one, ends the stream with an error instead of
//! filling memory. The cursor keeps what resumption needs (the last event id and the server's
//! `retry`).

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures_util::{Stream, StreamExt};
use reqwest::Response;

use super::net::describe;

/// Why the byte stream under the parser stopped.
#[derive(Debug, thiserror::Error)]
enum Cause {
    #[error("{0}")]
    Transfer(String),
    #[error("sent an event over the line limit ({0} bytes)")]
    TooLong(usize),
}

type Parsed = Pin<Box<dyn Stream<Item = Result<Event, EventStreamError<Cause>>> + Send>>;

/// The events of one SSE response.
pub(super) struct Events {
    parsed: Parsed,
    pending: Arc<AtomicUsize>,
}

/// What resumption needs: the last event id seen and the server's reconnection time.
#[derive(Debug, Default, Clone)]
pub(super) struct Cursor {
    /// The `id` of the last event, if the server gave one.
    pub last_id: Option<String>,
    /// The server's `retry`, if it sent one.
    pub retry: Option<Duration>,
}

impl Cursor {
    fn note(&mut self, event: &Event) {
        if !event.id.is_empty() {
            self.last_id = Some(event.id.clone());
        }
        if let Some(retry) = event.retry {
            self.retry = Some(retry);
        }
    }
}

impl Events {
    /// Reads `response` as an event stream, holding at most about `limit` bytes at a time.
    pub(super) fn new(response: Response, limit: usize) -> Events {
        let pending = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&pending);
        let bytes = response.bytes_stream().map(move |chunk| match chunk {
            Ok(bytes) => {
                let held = counter.fetch_add(bytes.len(), Ordering::Relaxed) + bytes.len();
                if held > limit.saturating_add(1024) {
                    Err(Cause::TooLong(limit))
                } else {
                    Ok(bytes)
                }
            }
            Err(e) => Err(Cause::Transfer(describe(&e))),
        });
        Events {
            parsed: Box::pin(bytes.eventsource()),
            pending,
        }
    }

    /// The next event's data (`None` when the stream ended cleanly); the cursor follows every
    /// event, including blank priming events.
    ///
    /// # Errors
    /// Text naming why the stream broke (transfer, over the limit, not UTF-8).
    pub(super) async fn next(&mut self, cursor: &mut Cursor) -> Option<Result<Event, String>> {
        let item = self.parsed.next().await?;
        // The parser has consumed what it held up to this event; count afresh.
        self.pending.store(0, Ordering::Relaxed);
        Some(match item {
            Ok(event) => {
                cursor.note(&event);
                Ok(event)
            }
            Err(EventStreamError::Transport(cause)) => Err(cause.to_string()),
            Err(EventStreamError::Utf8(_)) => Err("sent an event stream that is not UTF-8".into()),
            Err(EventStreamError::Parser(_)) => Err("sent a malformed event stream".into()),
        })
    }
}
