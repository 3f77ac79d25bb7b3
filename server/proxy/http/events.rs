//! Server-Sent Events from the server (WHATWG HTML §9.2, "event stream interpretation"), parsed
//! in one pass and bounded: every byte is looked at a fixed number of times however the server
//! cuts its events into chunks (a hostile server sending one huge event in small pieces costs
//! linear, not quadratic, work), and the bytes held for one event never exceed the line limit
//! (plus one kibibyte of field names and line ends), so an endless event, or a stream of bytes
//! that never forms one, ends the stream with an error instead of filling memory. The cursor
//! keeps what resumption needs (the last event id and the server's `retry`).
//!
//! Two bounds go beyond the standard, which sets none: an `id` longer than [`MAX_ID`] bytes is
//! ignored (as one holding NUL is), and the id in force is one shared copy that every event it
//! marks points at, so a server that sets a long id and then sends many tiny events costs no
//! more than the bytes it sent; a `retry` over [`MAX_RETRY`] counts as [`MAX_RETRY`], so a
//! request never waits longer than that for its stream to be resumed.

use std::sync::Arc;
use std::time::Duration;

use reqwest::Response;

use super::net::describe;

/// Room for field names and line ends on top of the line limit.
const SLACK: usize = 1024;
/// The longest `id` kept, in bytes; a longer one is ignored.
pub(super) const MAX_ID: usize = 1024;
/// The longest reconnection time a server's `retry` may set.
pub(super) const MAX_RETRY: Duration = Duration::from_secs(30);

/// One dispatched event.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Event {
    /// The event type (`message` when the server named none).
    pub event: String,
    /// The data lines, joined by line feeds.
    pub data: String,
    /// The last event id in force (the stream's, carried from event to event: one copy, shared).
    pub id: Arc<str>,
    /// The server's `retry`, when this event set one.
    pub retry: Option<Duration>,
}

/// Why a stream of events could not go on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum Broken {
    /// The transfer broke ([`describe`]'s text).
    #[error("{0}")]
    Transfer(String),
    /// One event went over the line limit.
    #[error("sent an event over the line limit ({0} bytes)")]
    TooLong(usize),
    /// A line is not UTF-8.
    #[error("sent an event stream that is not UTF-8")]
    NotUtf8,
}

/// The incremental parser: bytes in, events out.
#[derive(Debug)]
pub(super) struct Parser {
    limit: usize,
    /// Bytes received and not yet consumed, from `start`.
    buf: Vec<u8>,
    start: usize,
    /// How far past `start` the search for a line end has already looked.
    scanned: usize,
    /// A line ended with CR: a line feed right after it belongs to the same line end.
    after_cr: bool,
    /// Whether the stream's first bytes (and a byte order mark there) were seen.
    begun: bool,
    /// Bytes of the event being built, line ends included.
    held: usize,
    event: String,
    data: String,
    has_data: bool,
    last_id: Arc<str>,
    retry: Option<Duration>,
    /// Bytes looked at in searches for line ends, for the linearity test.
    looked_at: usize,
}

impl Parser {
    /// A parser holding at most about `limit` bytes for one event.
    pub(super) fn new(limit: usize) -> Parser {
        Parser {
            limit,
            buf: Vec::new(),
            start: 0,
            scanned: 0,
            after_cr: false,
            begun: false,
            held: 0,
            event: String::new(),
            data: String::new(),
            has_data: false,
            last_id: Arc::from(""),
            retry: None,
            looked_at: 0,
        }
    }

    /// Adds the next chunk of the stream.
    pub(super) fn push(&mut self, chunk: &[u8]) {
        if self.start > 0 {
            // Only what follows the consumed lines moves, and only once: from then on the
            // partial line sits at the front and chunks are appended behind it.
            self.buf.drain(..self.start);
            self.start = 0;
        }
        let mut chunk = chunk;
        if !self.begun && !chunk.is_empty() {
            self.begun = true;
            chunk = chunk.strip_prefix("\u{feff}".as_bytes()).unwrap_or(chunk);
        }
        self.buf.extend_from_slice(chunk);
    }

    /// The next complete event in what was pushed, if any.
    ///
    /// # Errors
    /// [`Broken::TooLong`] past the limit, [`Broken::NotUtf8`].
    pub(super) fn next_event(&mut self) -> Result<Option<Event>, Broken> {
        loop {
            if self.after_cr && self.start < self.buf.len() {
                self.after_cr = false;
                if self.buf[self.start] == b'\n' {
                    self.start += 1;
                    self.held += 1;
                }
            }
            let rest = &self.buf[self.start + self.scanned..];
            let Some(at) = rest.iter().position(|b| matches!(b, b'\r' | b'\n')) else {
                self.looked_at += rest.len();
                self.scanned += rest.len();
                if self.held + self.scanned > self.limit.saturating_add(SLACK) {
                    return Err(Broken::TooLong(self.limit));
                }
                return Ok(None);
            };
            self.looked_at += at + 1;
            let end = self.start + self.scanned + at;
            self.after_cr = self.buf[end] == b'\r';
            let line = std::mem::take(&mut self.buf);
            let taken = self.line(&line[self.start..end]);
            self.buf = line;
            self.held += end + 1 - self.start;
            self.start = end + 1;
            self.scanned = 0;
            if self.held > self.limit.saturating_add(SLACK) {
                return Err(Broken::TooLong(self.limit));
            }
            if let Some(event) = taken? {
                return Ok(Some(event));
            }
        }
    }

    /// Interprets one line; a blank line dispatches the event built so far.
    fn line(&mut self, line: &[u8]) -> Result<Option<Event>, Broken> {
        if line.is_empty() {
            return Ok(self.dispatch());
        }
        let line = std::str::from_utf8(line).map_err(|_| Broken::NotUtf8)?;
        let (field, value) = match line.split_once(':') {
            Some(("", _)) => return Ok(None),
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => value.clone_into(&mut self.event),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            // Copied once per `id` line (work in proportion to the line), then only shared.
            "id" if !value.contains('\0') && value.len() <= MAX_ID => {
                self.last_id = Arc::from(value);
            }
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                // Digits only: a value too long for u64 is over the cap too.
                let ms = value.parse::<u64>().unwrap_or(u64::MAX);
                self.retry = Some(Duration::from_millis(ms).min(MAX_RETRY));
            }
            _ => {}
        }
        Ok(None)
    }

    /// Ends the event being built: one with data is handed out, one without is dropped (its
    /// id stays in force).
    fn dispatch(&mut self) -> Option<Event> {
        self.held = 0;
        let event = std::mem::take(&mut self.event);
        let data = std::mem::take(&mut self.data);
        let retry = self.retry.take();
        if !std::mem::take(&mut self.has_data) {
            return None;
        }
        Some(Event {
            event: if event.is_empty() {
                "message".to_owned()
            } else {
                event
            },
            data,
            id: self.last_id.clone(),
            retry,
        })
    }
}

/// The events of one SSE response.
pub(super) struct Events {
    response: Response,
    parser: Parser,
    ended: bool,
}

/// What resumption needs: the last event id seen and the server's reconnection time.
#[derive(Debug, Default, Clone)]
pub(super) struct Cursor {
    /// The `id` of the last event, if the server gave one.
    pub last_id: Option<Arc<str>>,
    /// The server's `retry`, if it sent one.
    pub retry: Option<Duration>,
}

impl Cursor {
    fn note(&mut self, event: &Event) {
        if !event.id.is_empty() {
            self.last_id = Some(Arc::clone(&event.id));
        }
        if let Some(retry) = event.retry {
            self.retry = Some(retry);
        }
    }
}

impl Events {
    /// Reads `response` as an event stream, holding at most about `limit` bytes at a time.
    pub(super) fn new(response: Response, limit: usize) -> Events {
        Events {
            response,
            parser: Parser::new(limit),
            ended: false,
        }
    }

    /// The next event (`None` when the stream ended cleanly; an unfinished event at the end is
    /// dropped, as the standard says); the cursor follows every event, including blank priming
    /// events.
    ///
    /// # Errors
    /// Text naming why the stream broke (transfer, over the limit, not UTF-8).
    pub(super) async fn next(&mut self, cursor: &mut Cursor) -> Option<Result<Event, String>> {
        loop {
            match self.parser.next_event() {
                Ok(Some(event)) => {
                    cursor.note(&event);
                    return Some(Ok(event));
                }
                Ok(None) => {}
                Err(broken) => return self.end(broken),
            }
            if self.ended {
                return None;
            }
            match self.response.chunk().await {
                Ok(Some(chunk)) => self.parser.push(&chunk),
                Ok(None) => self.ended = true,
                Err(e) => return self.end(Broken::Transfer(describe(&e))),
            }
        }
    }

    fn end(&mut self, broken: Broken) -> Option<Result<Event, String>> {
        if self.ended {
            return None;
        }
        self.ended = true;
        Some(Err(broken.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(parser: &mut Parser) -> Vec<Event> {
        let mut out = Vec::new();
        while let Some(event) = parser.next_event().unwrap() {
            out.push(event);
        }
        out
    }

    #[test]
    fn fields_line_ends_and_ids_follow_the_standard() {
        let mut p = Parser::new(1 << 20);
        p.push(
            "\u{feff}: comment\r\nid: 7\r\nretry: 250\r\nevent: endpoint\rdata: /a\r".as_bytes(),
        );
        p.push(b"\n");
        assert_eq!(
            all(&mut p),
            vec![],
            "CR LF split across chunks is one line end"
        );
        p.push(b"\ndata:x\ndata\n\nid\n\ndata: again\n\n");
        let events = all(&mut p);
        assert_eq!(events.len(), 3, "{events:?}");
        assert_eq!(events[0].event, "endpoint");
        assert_eq!(events[0].data, "/a");
        assert_eq!(&*events[0].id, "7");
        assert_eq!(events[0].retry, Some(Duration::from_millis(250)));
        assert_eq!(
            (events[1].event.as_str(), events[1].data.as_str()),
            ("message", "x\n")
        );
        assert_eq!(&*events[1].id, "7");
        assert_eq!(&*events[2].id, "", "an empty id resets the last event id");
        assert_eq!(events[2].retry, None);
    }

    #[test]
    fn an_event_over_the_limit_breaks_the_stream_while_it_arrives() {
        let mut p = Parser::new(100);
        p.push(b"data: ");
        p.push(&[b'x'; 2000]);
        assert_eq!(p.next_event(), Err(Broken::TooLong(100)));
        let mut p = Parser::new(100);
        for _ in 0..2000 {
            p.push(b"data: x\n");
        }
        assert_eq!(p.next_event(), Err(Broken::TooLong(100)));
        let mut p = Parser::new(100);
        p.push(b"data: \xff\n\n");
        assert_eq!(p.next_event(), Err(Broken::NotUtf8));
    }

    #[test]
    fn a_huge_event_in_small_chunks_is_scanned_once() {
        // Quadratic parsing (rescanning what is held on every chunk) looks at each byte once per
        // chunk after it: about 2^31 looks here instead of 2^21.
        let size = 2 << 20;
        let mut p = Parser::new(4 << 20);
        p.push(b"data: ");
        let piece = [b'y'; 1024];
        for _ in 0..size / piece.len() {
            p.push(&piece);
            assert_eq!(p.next_event(), Ok(None));
        }
        p.push(b"\n\n");
        let event = p.next_event().unwrap().unwrap();
        assert_eq!(event.data.len(), size);
        assert!(p.looked_at <= size + 64, "looked at {} bytes", p.looked_at);
        assert!(
            p.buf.capacity() < 3 * size,
            "held {} bytes",
            p.buf.capacity()
        );
    }

    #[test]
    fn a_long_id_is_ignored_and_the_id_in_force_is_shared_by_the_events_it_marks() {
        // A server that sets a huge id and then sends many tiny events must not make the proxy
        // copy the id once per event (work per byte received would no longer be bounded).
        let mut p = Parser::new(1 << 20);
        let long = "x".repeat(MAX_ID + 1);
        p.push(format!("id: 7\n\nid: {long}\n\n").as_bytes());
        for _ in 0..3 {
            p.push(b"data:\n\n");
        }
        let events = all(&mut p);
        assert_eq!(events.len(), 3);
        assert!(
            events.iter().all(|e| &*e.id == "7"),
            "an id over the bound is ignored, the last one stays in force"
        );
        assert!(
            events
                .iter()
                .all(|e| e.id.as_ptr() == events[0].id.as_ptr()),
            "the events share one copy of the id"
        );
        let mut cursor = Cursor::default();
        for event in &events {
            cursor.note(event);
        }
        assert_eq!(
            cursor.last_id.as_deref().map(str::as_ptr),
            Some(events[0].id.as_ptr()),
            "the cursor shares it too"
        );
    }

    #[test]
    fn the_servers_reconnection_time_is_capped() {
        let mut p = Parser::new(1 << 20);
        p.push(b"retry: 999999999999\ndata: x\n\nretry: 1500\ndata: y\n\n");
        let events = all(&mut p);
        assert_eq!(events[0].retry, Some(MAX_RETRY));
        assert_eq!(events[1].retry, Some(Duration::from_millis(1500)));
    }
}
