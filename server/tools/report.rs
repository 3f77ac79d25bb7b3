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
    /// Calls counted in `allowed`/`denied` whose decision is not in `decisions` (beyond
    /// [`MAX_DECISIONS_PER_REPORT`], refused by the door's budget, or dropped by the proxy):
    /// the service counts them as unaudited. Absent: 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unaudited: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What one audited decision takes in the store beyond its names and digest (its row's id,
/// times, action and actor), as the door's budget counts it.
const AUDIT_ROW_BYTES: u64 = 128;

/// The largest count (`allowed`, `denied`, `unaudited`, a dropped-lines `count`) one report may
/// carry: far beyond what a proxy decides in the second a report gathers, and far from wrapping
/// a counter.
pub const MAX_COUNT_PER_REPORT: u64 = 1_000_000;

/// The longest tool or server name a report may carry (MCP tool names are 1–128 characters,
/// d:2025-11-25/server/tools.mdx §Tool names; server names are the proxy's `--name`).
pub const MAX_NAME_CHARS: usize = 128;
/// The longest `rule` a report may carry (`tools.default`, `tools.rules[N]`, `grant:<id>`).
pub const MAX_RULE_CHARS: usize = 64;
/// How far back a reported decision's `at` may lie; older ones are recorded at that bound.
pub const MAX_REPORT_AGE: chrono::TimeDelta = chrono::TimeDelta::hours(24);

impl ToolDecisionReport {
    /// What auditing `decisions` adds to the store, in bytes, as the door's budget counts it
    /// (a report without decisions adds nothing: counts are metrics).
    pub fn stored_bytes(&self) -> u64 {
        self.decisions
            .iter()
            .map(|d| {
                (self.server.len() + d.tool.len() + d.rule.len() + d.arguments_digest.len()) as u64
                    + AUDIT_ROW_BYTES
            })
            .sum()
    }

    /// Checks what the audit will hold: a `rule` that names a rule or a grant within
    /// [`MAX_RULE_CHARS`] and a SHA-256 hex digest; names longer than [`MAX_NAME_CHARS`] are
    /// kept cut there (ending in `…`), and every `at` is put between [`MAX_REPORT_AGE`] ago and
    /// `now` (a reporter cannot date the person's audit).
    ///
    /// # Errors
    /// The first field that does not fit, as a sentence.
    pub fn checked(mut self, now: DateTime<Utc>) -> Result<ToolDecisionReport, String> {
        if [self.allowed, self.denied, self.unaudited]
            .iter()
            .any(|n| *n > MAX_COUNT_PER_REPORT)
        {
            return Err(format!(
                "allowed, denied and unaudited must each be at most {MAX_COUNT_PER_REPORT}"
            ));
        }
        self.server = bounded_name(&self.server);
        for (i, d) in self.decisions.iter_mut().enumerate() {
            let names_a_rule = d.rule.starts_with("tools.") || d.rule.starts_with("grant:");
            if !names_a_rule || d.rule.chars().count() > MAX_RULE_CHARS {
                return Err(format!(
                    "decisions[{i}].rule must name a rule (tools.…) or a grant (grant:…), at most {MAX_RULE_CHARS} characters"
                ));
            }
            let hex = d.arguments_digest.len() == 64
                && d.arguments_digest
                    .bytes()
                    .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
            if !hex {
                return Err(format!(
                    "decisions[{i}].argumentsDigest must be a SHA-256 in lowercase hex"
                ));
            }
            d.tool = bounded_name(&d.tool);
            d.at = d.at.clamp(now - MAX_REPORT_AGE, now);
        }
        Ok(self)
    }
}

/// `name` cut to [`MAX_NAME_CHARS`] characters, the last one `…`, when it is longer.
fn bounded_name(name: &str) -> String {
    if name.chars().count() <= MAX_NAME_CHARS {
        return name.to_owned();
    }
    let mut cut: String = name.chars().take(MAX_NAME_CHARS - 1).collect();
    cut.push('…');
    cut
}
