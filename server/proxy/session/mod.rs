//! What one proxy run knows about its MCP session: the negotiated revision and capabilities,
//! the host's requests in flight keyed by [`RequestKey`], the questions open for the server's
//! requests, and the answers held for a host's retry. One task owns it ([`super::serve`]):
//! the lines of both sides are judged there with `&mut` access, and the tasks that wait for
//! the person send it [`command::Command`]s through a [`command::Handle`]. Nothing else
//! touches it, so no lock is needed and no two steps of one request can interleave.

pub(in crate::proxy) mod command;
mod request;
mod url_watch;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::oneshot;

pub(in crate::proxy) use request::{AskHandle, Binding, Held, HostRequest, Phase, RequestRef};
pub(in crate::proxy) use url_watch::{UrlWatch, forgotten};

use super::tool_table::ToolTable;
use crate::protocol::era::Era;
use crate::protocol::method::Method;
use crate::protocol::request_key::RequestKey;
use crate::tools::Hints;
use crate::tools::call::ListedTool;

/// The revision assumed when nothing was negotiated (docs/design.md §Glossary, "era").
const DEFAULT_VERSION: Era = Era::V2025_06_18;

/// The session state.
#[derive(Debug, Default)]
pub(in crate::proxy) struct Session {
    /// The host's `initialize`, until its result is seen.
    pub(in crate::proxy) initialize: Option<RequestKey>,
    /// The version the host asked for in `initialize`.
    pub(in crate::proxy) requested_version: Option<String>,
    /// The server's negotiated `protocolVersion`.
    pub(in crate::proxy) negotiated_version: Option<String>,
    /// The newest `_meta` protocol version seen on a host request (2026-07-28 sessions).
    pub(in crate::proxy) meta_version: Option<String>,
    /// Capabilities as last forwarded to the server.
    pub(in crate::proxy) capabilities: Value,
    /// Host requests in flight.
    pub(in crate::proxy) requests: HashMap<RequestKey, HostRequest>,
    /// The last [`HostRequest::serial`] given.
    serials: u64,
    /// Server requests being answered through a question.
    pub(in crate::proxy) server_asks: HashMap<RequestKey, Arc<AskHandle>>,
    /// Server requests forwarded to the host and not yet answered: the only ids a host
    /// response may carry.
    pub(in crate::proxy) forwarded: HashSet<RequestKey>,
    /// `elicitationId`s whose completion notice is the proxy's → who waits for it (bounded:
    /// [`url_watch`]).
    pub(in crate::proxy) url_elicitations: UrlWatch,
    /// Proxy-owned requests to the server (MRTR retries) → who waits for the response.
    pub(in crate::proxy) retries: HashMap<RequestKey, oneshot::Sender<Vec<u8>>>,
    /// Answers held for a host's retry, by the `requestState` token the host was handed.
    pub(in crate::proxy) held: HashMap<String, Held>,
    /// The proxy is shutting down: open no more questions.
    pub(in crate::proxy) closing: bool,
    /// What the server claimed about each tool in its latest `tools/list` listing, by name
    /// (bounded: [`super::tool_table`]).
    pub(in crate::proxy) tools: ToolTable<KnownTool>,
}

/// A tool as the server listed it: the entry's text, read whole only when a question about a
/// call of it is opened, and the hints the rules match on, read once when it was listed (so
/// judging a call never reads a schema of many megabytes again).
#[derive(Debug)]
pub(in crate::proxy) struct KnownTool {
    /// The entry as listed.
    pub(in crate::proxy) listed: ListedTool,
    /// Its `readOnlyHint` and `destructiveHint`.
    pub(in crate::proxy) hints: Hints,
}

impl Session {
    /// The revision a plain server request is judged by: the session's `_meta` version, the
    /// negotiated one, the one the host asked for, or 2025-06-18.
    pub(in crate::proxy) fn session_version(&self) -> String {
        self.meta_version
            .clone()
            .or_else(|| self.negotiated_version.clone())
            .or_else(|| self.requested_version.clone())
            .unwrap_or_else(|| DEFAULT_VERSION.as_str().to_owned())
    }

    /// Whether the session speaks 2026-07-28 or later (results carry `resultType`).
    pub(in crate::proxy) fn speaks_mrtr(&self) -> bool {
        Era::for_revision(&self.session_version()).is_ok_and(|era| era >= Era::V2026_07_28)
    }

    /// A new [`HostRequest::serial`].
    pub(in crate::proxy) fn next_serial(&mut self) -> u64 {
        self.serials += 1;
        self.serials
    }

    /// The entry `r` names, while it is that very entry.
    pub(in crate::proxy) fn request(&self, r: &RequestRef) -> Option<&HostRequest> {
        self.requests.get(&r.key).filter(|e| e.serial == r.serial)
    }

    /// [`Session::request`], to change it.
    pub(in crate::proxy) fn request_mut(&mut self, r: &RequestRef) -> Option<&mut HostRequest> {
        self.requests
            .get_mut(&r.key)
            .filter(|e| e.serial == r.serial)
    }

    /// Forgets the entry `r` names, when it is that very entry (a later request under the same
    /// id stays).
    pub(in crate::proxy) fn take_request(&mut self, r: &RequestRef) -> Option<HostRequest> {
        self.request(r)?;
        self.requests.remove(&r.key)
    }

    /// The tool that asked: with exactly one `tools/call` running at the server
    /// ([`HostRequest::running_at_server`]), that one. A call held for the person never
    /// reached the server, and one the host cancelled is over: a question the server opens
    /// meanwhile is its own.
    pub(in crate::proxy) fn single_tool(&self) -> Option<String> {
        let mut tools = self
            .requests
            .values()
            .filter(|r| r.method == Method::ToolsCall && r.running_at_server());
        match (tools.next(), tools.next()) {
            (Some(only), None) => only.tool.clone(),
            _ => None,
        }
    }

    /// Every open question's handle (for withdrawal on exit).
    pub(in crate::proxy) fn all_asks(&self) -> Vec<Arc<AskHandle>> {
        self.server_asks
            .values()
            .cloned()
            .chain(
                self.requests
                    .values()
                    .flat_map(|r| r.phase.asks().iter().cloned()),
            )
            .collect()
    }
}
