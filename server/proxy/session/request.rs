//! One host request in flight and where it stands ([`Phase`]), the questions opened for it
//! ([`AskHandle`]), and the person's answers held for a host's retry ([`Held`]).

use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::Notify;

use super::super::tool_table::Page;
use crate::protocol::binding;
use crate::protocol::method::Method;
use crate::protocol::mrtr::Members;
use crate::protocol::request_key::RequestKey;

/// One question the proxy is waiting on; the handle lets the host, the server or shutdown
/// withdraw it.
#[derive(Debug, Default)]
pub(in crate::proxy) struct AskHandle {
    cancelled: AtomicBool,
    wake: Notify,
    /// The question id once the service opened it.
    pub(in crate::proxy) question: OnceLock<String>,
}

impl AskHandle {
    /// Withdraws the question: the waiting task cancels it on the service and stops.
    pub(in crate::proxy) fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        self.wake.notify_one();
    }

    /// Whether [`AskHandle::cancel`] was called.
    pub(in crate::proxy) fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// Resolves when [`AskHandle::cancel`] was called (a permit is stored if nobody waits).
    pub(in crate::proxy) async fn woken(&self) {
        self.wake.notified().await;
    }
}

/// Where a host request stands. One value, so a request is never both held for the person and
/// at the server, nor answered by a resolution and by the server at once.
#[derive(Debug)]
pub(in crate::proxy) enum Phase {
    /// At the server under the host's id: the server's response goes to the host.
    AtServer,
    /// At the server, and the host cancelled it: a late response still passes, but nothing
    /// more is asked of the person for it.
    CancelledAtServer,
    /// A `tools/call` held back for the person's answer: the server has not received it, and
    /// receives it only by [`Phase::forward`], once.
    AwaitingPerson {
        /// The question about the call.
        asks: Vec<Arc<AskHandle>>,
    },
    /// The server's response asked for input: a resolution task owns the request, and the
    /// server answers the proxy's retry, never the host's id.
    Resolving {
        /// Questions open for the current round.
        asks: Vec<Arc<AskHandle>>,
        /// The proxy's retry in flight at the server.
        retry: Option<RequestKey>,
    },
    /// The host cancelled it while the person was asked or a resolution owned it: nothing more
    /// reaches the host or the server for it.
    Withdrawn,
}

impl Phase {
    /// The questions open for the request.
    pub(in crate::proxy) fn asks(&self) -> &[Arc<AskHandle>] {
        match self {
            Phase::AwaitingPerson { asks } | Phase::Resolving { asks, .. } => asks,
            _ => &[],
        }
    }

    /// Where questions for it are registered; `None` when no question may be opened for it.
    pub(in crate::proxy) fn asks_mut(&mut self) -> Option<&mut Vec<Arc<AskHandle>>> {
        match self {
            Phase::AwaitingPerson { asks } | Phase::Resolving { asks, .. } => Some(asks),
            _ => None,
        }
    }

    /// The server's response goes to the host as it is.
    pub(in crate::proxy) fn at_server(&self) -> bool {
        matches!(self, Phase::AtServer | Phase::CancelledAtServer)
    }

    /// The host cancelled the request: its questions are withdrawn; returns the proxy's retry
    /// in flight at the server, which the server is told about.
    pub(in crate::proxy) fn cancel(&mut self) -> Option<RequestKey> {
        for ask in self.asks() {
            ask.cancel();
        }
        match std::mem::replace(self, Phase::Withdrawn) {
            Phase::AtServer | Phase::CancelledAtServer => {
                *self = Phase::CancelledAtServer;
                None
            }
            Phase::Resolving { retry, .. } => retry,
            Phase::AwaitingPerson { .. } | Phase::Withdrawn => None,
        }
    }
}

/// A host request as the tasks that see it through (a question about a held call, a round)
/// name it: its key and the serial number of its entry. A step of theirs acts only on that
/// entry, never on a later request the host sent under the same id once this one was over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::proxy) struct RequestRef {
    /// The request's key.
    pub(in crate::proxy) key: RequestKey,
    /// [`HostRequest::serial`] of its entry.
    pub(in crate::proxy) serial: u64,
}

/// A host request in flight (received from the host, no response given to it yet).
#[derive(Debug)]
pub(in crate::proxy) struct HostRequest {
    /// Its entry's number in the session, never given twice ([`RequestRef`]).
    pub(in crate::proxy) serial: u64,
    /// The host's id, as the host wrote it.
    pub(in crate::proxy) id: Box<RawValue>,
    /// `method`.
    pub(in crate::proxy) method: Method,
    /// `params.name` of a `tools/call`.
    pub(in crate::proxy) tool: Option<String>,
    /// Which page of the listing a `tools/list` asks for (by its `cursor`).
    pub(in crate::proxy) page: Page,
    /// The line as forwarded, kept for requests the server may answer with an
    /// `InputRequiredResult` or `-32042` (the proxy re-sends it), and for a held call.
    pub(in crate::proxy) line: Option<Arc<Vec<u8>>>,
    /// The line as the host sent it, when the person edited a held call (`line` is then the
    /// edit): the host's retry repeats this one.
    pub(in crate::proxy) as_host_sent: Option<Arc<Vec<u8>>>,
    /// `params._meta.progressToken`, to keep the host informed while the person thinks.
    pub(in crate::proxy) progress_token: Option<Value>,
    /// `_meta` protocol version (2026-07-28 requests), else `None`.
    pub(in crate::proxy) meta_version: Option<String>,
    /// Capabilities as forwarded with this request.
    pub(in crate::proxy) capabilities: Value,
    /// Progress notifications sent to the host for it (strictly increasing, G13).
    pub(in crate::proxy) progress: Arc<AtomicU64>,
    /// Where it stands.
    pub(in crate::proxy) phase: Phase,
    /// A `tools/call` the person accepted on its `tool_call` question (or the retry of one):
    /// an `ask` rule does not hold back its retries.
    pub(in crate::proxy) person_accepted: bool,
}

impl HostRequest {
    /// The host cancelled the request ([`Phase::cancel`]); returns the proxy's retry in flight
    /// at the server. One still at the server stays in the table, so its id stays in flight (a
    /// late response is never taken for a later request under the same id) until the server
    /// answers, which it need never do: it keeps only what that late response needs (its id
    /// and method), never its line or what it was judged by.
    pub(in crate::proxy) fn cancel(&mut self) -> Option<RequestKey> {
        let retry = self.phase.cancel();
        if matches!(self.phase, Phase::CancelledAtServer) {
            self.tool = None;
            self.line = None;
            self.as_host_sent = None;
            self.progress_token = None;
            self.meta_version = None;
            self.capabilities = Value::Null;
        }
        retry
    }

    /// The bytes its entry holds beyond its fixed size (what grows with the host's line).
    #[cfg(test)]
    pub(in crate::proxy) fn bytes(&self) -> usize {
        self.id.get().len()
            + self.tool.as_ref().map_or(0, String::len)
            + self.line.as_ref().map_or(0, |l| l.len())
            + self.as_host_sent.as_ref().map_or(0, |l| l.len())
            + self
                .progress_token
                .as_ref()
                .map_or(0, |t| t.to_string().len())
            + self.meta_version.as_ref().map_or(0, String::len)
            + match &self.capabilities {
                Value::Null => 0,
                caps => caps.to_string().len(),
            }
    }

    /// Whether it is at the server and the host still waits for it: only such a call is
    /// running there (one held for the person never reached it; one cancelled is over for
    /// the host).
    pub(in crate::proxy) fn running_at_server(&self) -> bool {
        matches!(self.phase, Phase::AtServer | Phase::Resolving { .. })
    }
}

/// What held answers are bound to: the host request's method and
/// [`binding::request_digest`] of the request as the host sent it. A retry gets the answers
/// only when it is that very request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::proxy) struct Binding {
    method: Method,
    digest: String,
}

impl Binding {
    /// The binding of a request as the host sent it; `None` when its digest cannot be
    /// computed.
    pub(in crate::proxy) fn of(method: Method, line: &[u8]) -> Option<Binding> {
        Some(Binding {
            method,
            digest: binding::request_digest(line)?,
        })
    }

    /// Whether `line` (a `method` request) is the request bound.
    pub(in crate::proxy) fn matches(&self, method: Method, line: &[u8]) -> bool {
        self.method == method
            && binding::request_digest(line).as_deref() == Some(self.digest.as_str())
    }
}

/// Answers from the person held until the host retries a request whose remaining entries were
/// for the host (e.g. `roots/list`), bound to that request ([`crate::protocol::binding`]) and
/// kept under the `requestState` token the host was handed.
#[derive(Debug)]
pub(in crate::proxy) struct Held {
    /// The request the answers are for.
    pub(in crate::proxy) binding: Binding,
    /// The request as forwarded when the person edited it: the retry goes on with its
    /// arguments, not the host's.
    pub(in crate::proxy) edited: Option<Arc<Vec<u8>>>,
    /// The server's own `requestState` text, restored in the retry (`None`: it gave none).
    pub(in crate::proxy) server_state: Option<Box<RawValue>>,
    /// The keys of the entries handed to the host: the only `inputResponses` it may give.
    pub(in crate::proxy) foreign: Vec<String>,
    /// The person's `inputResponses` entries.
    pub(in crate::proxy) answers: Members,
    /// When the answers were held; they are dropped after [`HELD_FOR`].
    pub(in crate::proxy) since: Instant,
    /// The request was a `tools/call` the person accepted on its question.
    pub(in crate::proxy) person_accepted: bool,
}

impl Held {
    /// Whether the answers may still be used.
    pub(in crate::proxy) fn fresh(&self) -> bool {
        self.since.elapsed() < HELD_FOR
    }

    /// The bytes it holds: the server's state, the person's answers, the edited call.
    pub(in crate::proxy) fn bytes(&self) -> usize {
        self.server_state.as_ref().map_or(0, |s| s.get().len())
            + self
                .answers
                .iter()
                .map(|(k, v)| k.len() + v.get().len())
                .sum::<usize>()
            + self.edited.as_ref().map_or(0, |e| e.len())
            + self.foreign.iter().map(String::len).sum::<usize>()
    }
}

/// How long answers wait for the host's retry.
pub(in crate::proxy) const HELD_FOR: Duration = Duration::from_secs(3600);

/// At most this many rounds are held for the host's retry in one session, and at most
/// [`MAX_HELD_BYTES`] in all: a server that answers every call with a round (and a large
/// state) the host never retries cannot grow the proxy without bound. Beyond either, the
/// oldest round is dropped (its retry then fails as one no longer held).
pub(in crate::proxy) const MAX_HELD: usize = 64;

/// See [`MAX_HELD`]: 64 MiB.
pub(in crate::proxy) const MAX_HELD_BYTES: usize = 64 << 20;

#[cfg(test)]
mod tests {
    use super::super::Session;
    use super::*;

    /// A `tools/call` of `tool` with arguments of `size` bytes, in `phase`.
    fn call(s: &mut Session, id: u64, tool: &str, size: usize, phase: Phase) -> RequestKey {
        let key = RequestKey::of_raw(&id.to_string()).unwrap();
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{"body":"{}"}}}}}}"#,
            "x".repeat(size)
        );
        let serial = s.next_serial();
        s.requests.insert(
            key.clone(),
            HostRequest {
                serial,
                id: RawValue::from_string(id.to_string()).unwrap(),
                method: Method::ToolsCall,
                tool: Some(tool.into()),
                page: Page::First,
                line: Some(Arc::new(line.into_bytes())),
                as_host_sent: None,
                progress_token: Some(Value::String("p".repeat(size))),
                meta_version: None,
                capabilities: serde_json::json!({"elicitation": {"pad": "c".repeat(size)}}),
                progress: Arc::default(),
                phase,
                person_accepted: false,
            },
        );
        key
    }

    /// 200 cancelled calls of 1 MB each, which the server (rightly) never answers, leave the
    /// proxy holding a few bytes each: their ids, still in flight.
    #[test]
    fn a_cancelled_request_at_the_server_keeps_only_its_id() {
        let mut s = Session::default();
        for id in 0..200 {
            let key = call(&mut s, id, "send_mail", 1 << 20, Phase::AtServer);
            let request = s.requests.get_mut(&key).unwrap();
            assert!(request.bytes() > 3 << 20);
            assert!(request.cancel().is_none());
        }
        assert_eq!(s.requests.len(), 200, "their ids stay in flight");
        let held: usize = s.requests.values().map(HostRequest::bytes).sum();
        assert!(held <= 200 * 3, "{held} bytes held");
        assert!(
            s.requests
                .values()
                .all(|r| matches!(r.phase, Phase::CancelledAtServer))
        );
    }

    /// A question the server opens on its own is attributed to a host call only while that
    /// call runs at the server: not one held for the person, nor one the host cancelled.
    #[test]
    fn only_a_call_at_the_server_is_the_one_running() {
        let mut s = Session::default();
        call(
            &mut s,
            1,
            "send_mail",
            10,
            Phase::AwaitingPerson { asks: Vec::new() },
        );
        assert_eq!(
            s.single_tool(),
            None,
            "a held call never reached the server"
        );
        let cancelled = call(&mut s, 2, "transfer", 10, Phase::AtServer);
        assert_eq!(s.single_tool().as_deref(), Some("transfer"));
        s.requests.get_mut(&cancelled).unwrap().cancel();
        assert_eq!(s.single_tool(), None, "a cancelled call is over");
        call(
            &mut s,
            3,
            "search",
            10,
            Phase::Resolving {
                asks: Vec::new(),
                retry: None,
            },
        );
        assert_eq!(s.single_tool().as_deref(), Some("search"));
        call(&mut s, 4, "read", 10, Phase::AtServer);
        assert_eq!(s.single_tool(), None, "two calls run: neither is named");
    }
}
