//! What a proxy tells the service about the tool calls it decided alone (by a rule or a grant):
//! `POST /api/v1/tools/decisions`, at most once a second. The service audits each decision
//! (digests only) and counts it in `mcp_consent_tool_calls_total{decision}`.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A decision a proxy made without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LocalDecision {
    /// Passed to the server.
    Allowed,
    /// Refused by a rule; never reached the server.
    Denied,
}

impl LocalDecision {
    /// The metric label and wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            LocalDecision::Allowed => "allowed",
            LocalDecision::Denied => "denied",
        }
    }
}

/// One decided call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolDecision {
    /// The tool's name.
    pub tool: String,
    /// What happened to the call.
    pub decision: LocalDecision,
    /// What decided ([`super::DecidedBy::name`]).
    pub rule: String,
    /// SHA-256 (hex) of the arguments' canonical JSON ([`super::ToolCall::arguments_digest`]).
    pub arguments_digest: String,
    /// When the proxy decided.
    pub at: DateTime<Utc>,
}

/// The most decisions one report carries; more in one second are counted, not audited one by
/// one (a host in a loop must not flood the store).
pub const MAX_DECISIONS_PER_REPORT: usize = 1000;

/// `POST /api/v1/tools/decisions` body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolDecisionReport {
    /// The proxy's `--name`.
    pub server: String,
    /// Calls allowed since the last report (including those beyond `decisions`).
    pub allowed: u64,
    /// Calls denied since the last report (including those beyond `decisions`).
    pub denied: u64,
    /// The decisions, at most [`MAX_DECISIONS_PER_REPORT`].
    pub decisions: Vec<ToolDecision>,
}
