//! What one proxy run remembers about the session: the negotiated revision and capabilities,
//! the host's requests in flight, the questions it has open, and the answers held for a host's
//! retry. One mutex; never held across an await.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::{Notify, oneshot};

use crate::protocol::mrtr::Members;
use crate::tools::ToolInfo;

/// The revision assumed when nothing was negotiated (docs/design.md §Glossary, "era").
pub(super) const DEFAULT_VERSION: &str = "2025-06-18";

/// One question the proxy is waiting on; the handle lets the host, the server or shutdown
/// withdraw it.
#[derive(Debug, Default)]
pub(super) struct AskHandle {
    cancelled: AtomicBool,
    wake: Notify,
    /// The question id once the service opened it.
    pub(super) question: OnceLock<String>,
}

impl AskHandle {
    /// Withdraws the question: the waiting task cancels it on the service and stops.
    pub(super) fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        self.wake.notify_one();
    }

    pub(super) fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// Resolves when [`AskHandle::cancel`] was called (a permit is stored if nobody waits).
    pub(super) async fn woken(&self) {
        self.wake.notified().await;
    }
}

/// A host request in flight (sent to the server, no response given to the host yet).
#[derive(Debug)]
pub(super) struct HostRequest {
    /// The host's id, as the host wrote it.
    pub(super) id: Box<RawValue>,
    /// `method`.
    pub(super) method: String,
    /// `params.name` of a `tools/call`.
    pub(super) tool: Option<String>,
    /// The line as forwarded, kept for requests the server may answer with an
    /// `InputRequiredResult` or `-32042` (the proxy re-sends it).
    pub(super) line: Option<Arc<Vec<u8>>>,
    /// `params._meta.progressToken`, to keep the host informed while the person thinks.
    pub(super) progress_token: Option<Value>,
    /// `_meta` protocol version (2026-07-28 requests), else `None`.
    pub(super) meta_version: Option<String>,
    /// Capabilities as forwarded with this request.
    pub(super) capabilities: Value,
    /// Questions opened on behalf of this request.
    pub(super) asks: Vec<Arc<AskHandle>>,
    /// A proxy retry of this request in flight at the server (its id key).
    pub(super) retry_id: Option<String>,
    /// The host cancelled it.
    pub(super) cancelled: bool,
    /// A resolution task owns it (its response asked for input).
    pub(super) resolving: bool,
    /// A `tools/call` held for the person's answer: not yet sent to the server.
    pub(super) awaiting_person: bool,
    /// Progress notifications sent to the host for it (strictly increasing, G13).
    pub(super) progress: Arc<AtomicU64>,
}

/// Answers from the person held until the host retries a request whose remaining entries were
/// for the host (e.g. `roots/list`), bound to that request ([`crate::protocol::binding`]).
#[derive(Debug)]
pub(super) struct Held {
    /// The host request's method.
    pub(super) method: String,
    /// [`crate::protocol::binding::request_digest`] of the host's request as forwarded.
    pub(super) digest: String,
    /// The server's own `requestState` text, restored in the retry (`None`: it gave none).
    pub(super) server_state: Option<Box<RawValue>>,
    /// The keys of the entries handed to the host: the only `inputResponses` it may give.
    pub(super) foreign: Vec<String>,
    /// The person's `inputResponses` entries.
    pub(super) answers: Members,
    /// When the answers were held; they are dropped after [`HELD_FOR`].
    pub(super) since: std::time::Instant,
}

/// How long answers wait for the host's retry.
pub(super) const HELD_FOR: std::time::Duration = std::time::Duration::from_secs(3600);

/// The session state.
#[derive(Debug, Default)]
pub(super) struct Shared {
    /// Id key of the host's `initialize`, until its result is seen.
    pub(super) initialize_id: Option<String>,
    /// The version the host asked for in `initialize`.
    pub(super) requested_version: Option<String>,
    /// The server's negotiated `protocolVersion`.
    pub(super) negotiated_version: Option<String>,
    /// The newest `_meta` protocol version seen on a host request (2026-07-28 sessions).
    pub(super) meta_version: Option<String>,
    /// Capabilities as last forwarded to the server.
    pub(super) capabilities: Value,
    /// Host requests in flight: id key → request.
    pub(super) host_requests: HashMap<String, HostRequest>,
    /// Server requests being answered through a question: id key → handle.
    pub(super) server_asks: HashMap<String, Arc<AskHandle>>,
    /// Every server request id the proxy intercepted.
    pub(super) intercepted: HashSet<String>,
    /// Server requests forwarded to the host and not yet answered: the only ids a host
    /// response may carry.
    pub(super) forwarded: HashSet<String>,
    /// The host sent a line the proxy could not record (not JSON, a batch): responses to
    /// unknown ids may be awaited by it.
    pub(super) host_unrecorded: bool,
    /// `elicitationId`s of URL elicitations this proxy opened → who waits for completion.
    pub(super) url_elicitations: HashMap<String, Arc<Notify>>,
    /// Proxy-owned requests to the server (MRTR retries): id key → who waits for the response.
    pub(super) retries: HashMap<String, oneshot::Sender<Vec<u8>>>,
    /// Answers held for a host's retry, by the `requestState` token the host was handed.
    pub(super) held: HashMap<String, Held>,
    /// The proxy is shutting down: open no more questions.
    pub(super) closing: bool,
    /// What the server claimed about each tool in its `tools/list` results, by name.
    pub(super) tools: HashMap<String, ToolInfo>,
}

impl Shared {
    /// The revision a plain server request is judged by: the session's `_meta` version, the
    /// negotiated one, the one the host asked for, or 2025-06-18.
    pub(super) fn session_version(&self) -> String {
        self.meta_version
            .clone()
            .or_else(|| self.negotiated_version.clone())
            .or_else(|| self.requested_version.clone())
            .unwrap_or_else(|| DEFAULT_VERSION.to_owned())
    }

    /// The tool that asked: with exactly one `tools/call` in flight, that one.
    pub(super) fn single_tool(&self) -> Option<String> {
        let mut tools = self
            .host_requests
            .values()
            .filter(|r| r.method == "tools/call");
        match (tools.next(), tools.next()) {
            (Some(only), None) => only.tool.clone(),
            _ => None,
        }
    }

    /// Every open question's handle (for withdrawal on exit).
    pub(super) fn all_asks(&self) -> Vec<Arc<AskHandle>> {
        self.server_asks
            .values()
            .cloned()
            .chain(
                self.host_requests
                    .values()
                    .flat_map(|r| r.asks.iter().cloned()),
            )
            .collect()
    }
}

/// The state shared by the proxy's tasks.
pub(super) type SharedState = Arc<Mutex<Shared>>;

/// Locks the state. A panic while holding this lock cannot leave it half-updated in a way that
/// matters more than losing the proxy, so a poisoned lock is used as is.
pub(super) fn lock(shared: &SharedState) -> MutexGuard<'_, Shared> {
    shared
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
