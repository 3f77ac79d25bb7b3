//! Route receipts: the stored record of why a sampling request went to a model (or to none).
//!
//! A receipt names the request (SHA-256 of its RFC 8785 canonical JSON, so the same params
//! give the same digest whatever their key order or number spelling), the server, the catalog
//! it was routed against (its version), every candidate with its prices, scores,
//! capabilities and estimated cost, the choice and why, and the reason for every excluded
//! candidate or downgrade. Wire JSON is camelCase, like the rest of the API.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::catalog::ProviderKind;
use super::money::Usd;
use super::tokens::TokenMethod;

/// The route policy every receipt of this module is made under.
pub const POLICY_VERSION: &str = "route-policy/v2";

/// SHA-256 (lowercase hex) of the RFC 8785 (JCS) canonical JSON of `params`.
///
/// JCS sorts object keys by UTF-16 code units and prints numbers the ECMAScript way
/// (`1.0` → `1`, `1e2` → `100`), so equal JSON values give equal digests. `serde_json::Value`
/// holds only finite numbers, which JCS always accepts; should serialization ever fail the
/// digest falls back to the compact `serde_json` text.
pub fn request_digest(params: &Value) -> String {
    let bytes = crate::protocol::exact::canonical(params);
    hex::encode(Sha256::digest(bytes))
}

/// The model a route picked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChosenModel {
    /// The model id (its `[[models]].id`, sent to the provider as `model`).
    pub id: String,
    /// The API it is reached through.
    pub provider: ProviderKind,
}

/// How the choice was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Selection {
    /// The first hint that matched an eligible model decided (MCP SA8, SA10, SA11); among the
    /// models it matched the priorities score decided, then the [`Tie`] break.
    Hint,
    /// No hint matched an eligible model; the priorities score decided, then the [`Tie`] break.
    Priorities,
    /// Every model was excluded by a gate ("no permitted route").
    NoPermittedRoute,
}

/// One candidate as it stood when routed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Candidate {
    /// Model id.
    pub id: String,
    /// Provider kind.
    pub provider: ProviderKind,
    /// USD per million input tokens.
    pub input_usd_per_mtok: f64,
    /// USD per million output tokens.
    pub output_usd_per_mtok: f64,
    /// Speed score in [0, 1].
    pub speed: f64,
    /// Intelligence score in [0, 1].
    pub intelligence: f64,
    /// Supports tools.
    pub tools: bool,
    /// Accepts images.
    pub images: bool,
    /// Accepts audio.
    pub audio: bool,
    /// Estimated input tokens of the request for this model.
    pub estimated_input_tokens: u64,
    /// How those tokens were counted.
    pub token_method: TokenMethod,
    /// Estimated cost in USD: input tokens × input price + `maxTokens` × output price.
    pub estimated_cost_usd: f64,
    /// Passed every gate.
    pub eligible: bool,
    /// Priorities score (eligible candidates only), see [`super::route`].
    pub score: Option<f64>,
}

/// A modality a request uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Modality {
    /// An `image` block somewhere in the messages (also inside `tool_result`).
    Image,
    /// An `audio` block somewhere in the messages (also inside `tool_result`).
    Audio,
}

/// Why a gate excluded a candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "code",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ExclusionReason {
    /// The request offers `tools` (or carries `tool_use`/`tool_result` blocks) and the model
    /// does not support tools.
    NoToolSupport,
    /// The messages use a modality the model does not accept.
    MissingModality {
        /// The missing modality.
        modality: Modality,
    },
    /// The estimated cost is over the per-request cap.
    OverBudget {
        /// Estimated cost in USD.
        estimated_cost_usd: f64,
        /// The cap in USD (`[routing] max_request_cost_usd`).
        cap_usd: f64,
    },
    /// The model's `servers` allow-list does not name this server.
    ServerNotAllowed {
        /// The asking server.
        server: String,
    },
}

impl ExclusionReason {
    /// A sentence for pages.
    pub fn message(&self) -> String {
        match self {
            ExclusionReason::NoToolSupport => {
                "the request uses tools and this model does not support tools".to_owned()
            }
            ExclusionReason::MissingModality { modality } => format!(
                "the messages contain {} and this model does not accept {}",
                match modality {
                    Modality::Image => "an image",
                    Modality::Audio => "audio",
                },
                match modality {
                    Modality::Image => "images",
                    Modality::Audio => "audio",
                }
            ),
            ExclusionReason::OverBudget {
                estimated_cost_usd,
                cap_usd,
            } => format!(
                "estimated cost {} is over the per-request cap {}",
                Usd(*estimated_cost_usd),
                Usd(*cap_usd)
            ),
            ExclusionReason::ServerNotAllowed { server } => {
                format!("server {server:?} is not in this model's allow-list")
            }
        }
    }
}

/// A candidate a gate excluded, with every reason that applied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Exclusion {
    /// Model id.
    pub model: String,
    /// Every failed gate, in gate order (tools, modality, budget, server).
    pub reasons: Vec<ExclusionReason>,
}

impl Exclusion {
    /// Every reason as one sentence for pages and errors, `; `-separated.
    pub fn reasons_text(&self) -> String {
        let each: Vec<String> = self.reasons.iter().map(ExclusionReason::message).collect();
        each.join("; ")
    }

    /// Whether the only reason is an estimate over the cost cap: the one exclusion a person
    /// may override, after a confirmation naming the cost and the cap.
    pub fn only_over_budget(&self) -> bool {
        !self.reasons.is_empty()
            && self
                .reasons
                .iter()
                .all(|r| matches!(r, ExclusionReason::OverBudget { .. }))
    }
}

/// A hint that named only excluded models: the request got something other than what the
/// server hinted at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Downgrade {
    /// Position of the hint in `modelPreferences.hints`.
    pub hint_index: usize,
    /// The hint name.
    pub hint: String,
    /// The excluded models it matched (their reasons are in `exclusions`).
    pub matched_excluded: Vec<String>,
}

/// How a hint matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum HintMatch {
    /// The hint is a substring of the model id (MCP SA10).
    Id,
    /// The hint and a configured alias are equal or one contains the other (MCP SA11).
    Alias(String),
}

/// The hint that decided the route.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MatchedHint {
    /// Position in `modelPreferences.hints`.
    pub index: usize,
    /// The hint name as sent.
    pub name: String,
    /// How it matched the chosen model.
    pub via: HintMatch,
    /// Eligible models the hint matched (the chosen one among them), sorted by id.
    pub matched: Vec<String>,
}

/// A hint that did not decide, and why (never a failure, MCP SA12).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkippedHint {
    /// Position in `modelPreferences.hints`.
    pub index: usize,
    /// The hint name (empty when the hint had none).
    pub name: String,
    /// `"no name"`, `"matched no model"` or `"matched only excluded models"`.
    pub reason: String,
}

/// What decided between models with the same priorities score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TieBreak {
    /// The one with the lowest estimated cost for this request.
    Cheaper,
    /// They cost the same too: the smallest id.
    Id,
}

/// Models that shared the highest priorities score, and how one of them was chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tie {
    /// The tied models, sorted by id (the chosen one among them).
    pub models: Vec<String>,
    /// What decided.
    pub by: TieBreak,
}

/// `modelPreferences` priorities as used (missing = 0), MCP 2025-11-25 schema.ts
/// `ModelPreferences`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Priorities {
    /// `costPriority` in [0, 1].
    pub cost: f64,
    /// `speedPriority` in [0, 1].
    pub speed: f64,
    /// `intelligencePriority` in [0, 1].
    pub intelligence: f64,
}

/// The record of one route.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Receipt {
    /// Always [`POLICY_VERSION`].
    pub policy_version: String,
    /// [`request_digest`] of the params routed.
    pub request_digest: String,
    /// The asking server.
    pub server: String,
    /// [`super::Catalog::version`] routed against.
    pub catalog_version: String,
    /// Every configured model, sorted by id.
    pub candidates: Vec<Candidate>,
    /// The choice; `None` = no permitted route.
    pub chosen: Option<ChosenModel>,
    /// How the choice was made.
    pub selection: Selection,
    /// A sentence saying why, for pages.
    pub why: String,
    /// The hint that decided, if any.
    pub matched_hint: Option<MatchedHint>,
    /// Models tied on the priorities score and what broke the tie; `None` when one model
    /// scored highest alone (or none was eligible). Absent in receipts of `route-policy/v1`.
    #[serde(default)]
    pub tie: Option<Tie>,
    /// Hints before the deciding one (or all of them), each with why it did not decide.
    pub skipped_hints: Vec<SkippedHint>,
    /// The priorities as used.
    pub priorities: Priorities,
    /// Estimated input tokens for the chosen model.
    pub estimated_input_tokens: Option<u64>,
    /// How they were counted.
    pub token_method: Option<TokenMethod>,
    /// Estimated output tokens: the request's `maxTokens` (the most it may produce).
    pub estimated_output_tokens: u64,
    /// Estimated cost in USD for the chosen model.
    pub estimated_cost_usd: Option<f64>,
    /// The per-request cap in USD, if configured.
    pub budget_cap_usd: Option<f64>,
    /// Every excluded candidate with its reasons, sorted by model id.
    pub exclusions: Vec<Exclusion>,
    /// Hints that named only excluded models.
    pub downgrades: Vec<Downgrade>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn digest_uses_rfc8785_canonical_form() {
        // RFC 8785 §3.2.3 sorts keys; numbers print in ECMAScript form.
        let canonical = serde_jcs::to_string(&json!({"b": 1.0, "a": [1e2, "x"]})).unwrap();
        assert_eq!(canonical, r#"{"a":[100,"x"],"b":1}"#);
        assert_eq!(
            request_digest(&json!({"b": 1.0, "a": [1e2, "x"]})),
            hex::encode(Sha256::digest(br#"{"a":[100,"x"],"b":1}"#))
        );
        // sha256 of `{}`.
        assert_eq!(
            request_digest(&json!({})),
            "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
    }

    #[test]
    fn exclusion_reasons_serialize_with_a_code() {
        let r = ExclusionReason::OverBudget {
            estimated_cost_usd: 0.5,
            cap_usd: 0.1,
        };
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"code": "overBudget", "estimatedCostUsd": 0.5, "capUsd": 0.1})
        );
        assert!(r.message().contains("over the per-request cap"));
    }
}
