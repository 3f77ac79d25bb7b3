//! Route policy `route-policy/v2`: which configured model runs a sampling request. Pure and
//! deterministic: the same params, server, catalog (in any order) and settings always give
//! the same choice and the same receipt.
//!
//! 1. **Gates** (every reason recorded per excluded model): tools — the request offers `tools`
//!    or carries `tool_use`/`tool_result` blocks and the model has `tools = false`; modality —
//!    an `image`/`audio` block anywhere in the messages (also inside `tool_result.content`)
//!    and the model lacks `images`/`audio`; budget — the estimated cost is over
//!    `[routing] max_request_cost_usd`; server — the model's `servers` list does not name the
//!    server.
//! 2. **Hints**, in order (MCP 2025-11-25 schema.ts `ModelPreferences.hints`, SA8): the first
//!    hint that matches an eligible model decides. A hint matches a model when, compared
//!    ASCII-case-insensitively, it is a substring of the model id (SA10) or it and one of the
//!    model's `aliases` are equal or one contains the other (SA11). Several models matched by
//!    that hint are ranked by the priorities score (SA9), then by the tie-break below. A hint matching nothing,
//!    or only excluded models, is skipped and recorded (SA12), never a failure.
//! 3. **Priorities**, when no hint decided: `score = costPriority × (1 − normalized cost) +
//!    speedPriority × speed + intelligencePriority × intelligence`, missing priorities
//!    counting 0. The normalized cost is min–max over the eligible candidates of their
//!    estimated cost for this request: the cheapest gets 0, the dearest 1, and all get 0 when
//!    every cost is equal. The highest score wins.
//! 4. **Ties** on the score (with no hints and no priorities every model scores 0): the model
//!    with the lowest estimated cost for this request wins, then the smallest id among equally
//!    cheap ones. The receipt's `tie` names the tied models and what broke the tie, and its
//!    sentence says so. (v1 broke ties by id alone, so a catalog's priciest model could win
//!    by its name.)
//! 5. No eligible model: "no permitted route", with every exclusion reason.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::catalog::{Catalog, ModelConfig};
use super::receipt::{
    Candidate, ChosenModel, Downgrade, Exclusion, ExclusionReason, HintMatch, MatchedHint,
    Modality, POLICY_VERSION, Priorities, Receipt, Selection, SkippedHint, Tie, TieBreak,
    request_digest,
};
use super::tokens::{TokenEstimate, estimate_input_tokens, method_for};
use super::why::Why;

/// `[routing]`: route policy settings.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RoutingConfig {
    /// Largest estimated cost of one request, in USD (input-token estimate × input price +
    /// `maxTokens` × output price); dearer models are excluded. Default: none (no cap).
    pub max_request_cost_usd: Option<f64>,
}

/// A problem in `[routing]`, found at config load.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RoutingConfigError {
    /// `max_request_cost_usd` is negative or not finite.
    #[error("routing.max_request_cost_usd must be a non-negative number")]
    InvalidCap,
}

impl RoutingConfig {
    /// Checks the settings.
    ///
    /// # Errors
    /// [`RoutingConfigError::InvalidCap`].
    pub fn validate(&self) -> Result<(), RoutingConfigError> {
        match self.max_request_cost_usd {
            Some(cap) if !cap.is_finite() || cap < 0.0 => Err(RoutingConfigError::InvalidCap),
            _ => Ok(()),
        }
    }
}

/// The result of routing one request.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteOutcome {
    /// The model to run; `None` = no permitted route (the question stays for the person).
    pub chosen: Option<ChosenModel>,
    /// The record to store.
    pub receipt: Receipt,
}

impl RouteOutcome {
    /// True when every model was excluded.
    pub fn is_no_permitted_route(&self) -> bool {
        self.chosen.is_none()
    }
}

/// What a request needs of a model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Needs {
    tools: bool,
    image: bool,
    audio: bool,
}

fn needs_of(params: &Value) -> Needs {
    let mut needs = Needs {
        tools: params
            .get("tools")
            .and_then(Value::as_array)
            .is_some_and(|t| !t.is_empty()),
        ..Needs::default()
    };
    fn walk(content: &Value, needs: &mut Needs) {
        let blocks: Vec<&Value> = match content {
            Value::Array(items) => items.iter().collect(),
            other => vec![other],
        };
        for block in blocks {
            match block.get("type").and_then(Value::as_str) {
                Some("image") => needs.image = true,
                Some("audio") => needs.audio = true,
                Some("tool_use") => needs.tools = true,
                Some("tool_result") => {
                    needs.tools = true;
                    if let Some(inner) = block.get("content") {
                        walk(inner, needs);
                    }
                }
                _ => {}
            }
        }
    }
    for message in params
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(content) = message.get("content") {
            walk(content, &mut needs);
        }
    }
    needs
}

fn priorities_of(params: &Value) -> Priorities {
    let prefs = params.get("modelPreferences");
    let get = |key: &str| {
        prefs
            .and_then(|p| p.get(key))
            .and_then(Value::as_f64)
            .filter(|v| v.is_finite())
            .map_or(0.0, |v| v.clamp(0.0, 1.0))
    };
    Priorities {
        cost: get("costPriority"),
        speed: get("speedPriority"),
        intelligence: get("intelligencePriority"),
    }
}

fn hints_of(params: &Value) -> Vec<String> {
    params
        .get("modelPreferences")
        .and_then(|p| p.get("hints"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|h| {
            h.get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

/// How `hint` matches `model`, if it does (see the module docs).
fn hint_match(hint: &str, model: &ModelConfig) -> Option<HintMatch> {
    let hint = hint.to_ascii_lowercase();
    if model.id.to_ascii_lowercase().contains(&hint) {
        return Some(HintMatch::Id);
    }
    model
        .aliases
        .iter()
        .filter(|a| !a.is_empty())
        .find(|a| {
            let a = a.to_ascii_lowercase();
            a.contains(&hint) || hint.contains(&a)
        })
        .map(|a| HintMatch::Alias(a.clone()))
}

/// Routes validated `sampling/createMessage` params from `server` over `catalog` under
/// `settings` (policy [`POLICY_VERSION`], see the module docs for the rules).
///
/// `params` must have passed [`crate::protocol::sampling::validate_request`]; unexpected shapes
/// are read leniently (a missing `maxTokens` counts as 0). Never fails: "no permitted route"
/// is an outcome with `chosen: None` and every exclusion in the receipt.
pub fn route(
    params: &Value,
    server: &str,
    catalog: &Catalog,
    settings: &RoutingConfig,
) -> RouteOutcome {
    let priorities = priorities_of(params);
    let max_tokens = params.get("maxTokens").and_then(Value::as_u64).unwrap_or(0);
    let cap = settings.max_request_cost_usd;

    // Candidates in id order, so the configuration order cannot matter.
    let mut models: Vec<&ModelConfig> = catalog.models().iter().collect();
    models.sort_by(|a, b| a.id.cmp(&b.id));

    let request = Request {
        params,
        server,
        needs: needs_of(params),
        max_tokens,
        cap,
    };
    let (mut candidates, exclusions) = gate(&request, &models);
    score(&mut candidates, priorities);
    let hints = follow_hints(params, &models, &candidates);

    let (chosen_index, selection, matched_hint, tie) = match hints.decided {
        Some((i, hint, tie)) => (Some(i), Selection::Hint, Some(hint), tie),
        None => {
            let eligible: Vec<usize> = (0..candidates.len())
                .filter(|&i| candidates[i].eligible)
                .collect();
            match best(&candidates, &eligible) {
                Some((i, tie)) => (Some(i), Selection::Priorities, None, tie),
                None => (None, Selection::NoPermittedRoute, None, None),
            }
        }
    };
    let chosen = chosen_index.map(|i| ChosenModel {
        id: candidates[i].id.clone(),
        provider: candidates[i].provider,
    });
    let mut receipt = Receipt {
        policy_version: POLICY_VERSION.to_owned(),
        request_digest: request_digest(params),
        server: server.to_owned(),
        catalog_version: catalog.version().to_owned(),
        chosen: chosen.clone(),
        selection,
        why: String::new(),
        matched_hint,
        tie,
        skipped_hints: hints.skipped,
        priorities,
        estimated_input_tokens: chosen_index.map(|i| candidates[i].estimated_input_tokens),
        token_method: chosen_index.map(|i| candidates[i].token_method),
        estimated_output_tokens: max_tokens,
        estimated_cost_usd: chosen_index.map(|i| candidates[i].estimated_cost_usd),
        budget_cap_usd: cap,
        exclusions,
        downgrades: hints.downgrades,
        candidates,
    };
    receipt.why = Why::of(&receipt)
        .map(|why| why.english())
        .unwrap_or_default();
    RouteOutcome { chosen, receipt }
}

/// What the gates look at of one request.
struct Request<'a> {
    params: &'a Value,
    server: &'a str,
    needs: Needs,
    max_tokens: u64,
    cap: Option<f64>,
}

/// Every model as a candidate with its estimated cost, and why each excluded one is (step 1).
fn gate(request: &Request<'_>, models: &[&ModelConfig]) -> (Vec<Candidate>, Vec<Exclusion>) {
    let mut candidates = Vec::with_capacity(models.len());
    let mut exclusions = Vec::new();
    // One count per tokenizer family, shared by the models of that family.
    let mut estimates: Vec<TokenEstimate> = Vec::new();
    for m in models {
        let method = method_for(&m.id);
        let estimate = match estimates.iter().find(|e| e.method == method) {
            Some(e) => *e,
            None => {
                let e = estimate_input_tokens(request.params, &m.id);
                estimates.push(e);
                e
            }
        };
        let cost = estimate.tokens as f64 * m.input_usd_per_mtok / 1e6
            + request.max_tokens as f64 * m.output_usd_per_mtok / 1e6;
        let reasons = exclusion_reasons(request, m, cost);
        let eligible = reasons.is_empty();
        if !eligible {
            exclusions.push(Exclusion {
                model: m.id.clone(),
                reasons,
            });
        }
        candidates.push(Candidate {
            id: m.id.clone(),
            provider: m.provider,
            input_usd_per_mtok: m.input_usd_per_mtok,
            output_usd_per_mtok: m.output_usd_per_mtok,
            speed: m.speed,
            intelligence: m.intelligence,
            tools: m.tools,
            images: m.images,
            audio: m.audio,
            estimated_input_tokens: estimate.tokens,
            token_method: estimate.method,
            estimated_cost_usd: cost,
            eligible,
            score: None,
        });
    }
    (candidates, exclusions)
}

/// Why `m` cannot run the request at `cost`, in gate order; empty when it can.
fn exclusion_reasons(request: &Request<'_>, m: &ModelConfig, cost: f64) -> Vec<ExclusionReason> {
    let needs = request.needs;
    let mut reasons = Vec::new();
    if needs.tools && !m.tools {
        reasons.push(ExclusionReason::NoToolSupport);
    }
    if needs.image && !m.images {
        reasons.push(ExclusionReason::MissingModality {
            modality: Modality::Image,
        });
    }
    if needs.audio && !m.audio {
        reasons.push(ExclusionReason::MissingModality {
            modality: Modality::Audio,
        });
    }
    if let Some(cap_usd) = request.cap
        && cost > cap_usd
    {
        reasons.push(ExclusionReason::OverBudget {
            estimated_cost_usd: cost,
            cap_usd,
        });
    }
    if !m.allows_server(request.server) {
        reasons.push(ExclusionReason::ServerNotAllowed {
            server: request.server.to_owned(),
        });
    }
    reasons
}

/// The priorities score of every eligible candidate (step 3).
fn score(candidates: &mut [Candidate], priorities: Priorities) {
    let eligible_costs = candidates
        .iter()
        .filter(|c| c.eligible)
        .map(|c| c.estimated_cost_usd);
    let min = eligible_costs.clone().fold(f64::INFINITY, f64::min);
    let max = eligible_costs.fold(f64::NEG_INFINITY, f64::max);
    for c in candidates.iter_mut().filter(|c| c.eligible) {
        let normalized = if max > min {
            (c.estimated_cost_usd - min) / (max - min)
        } else {
            0.0
        };
        c.score = Some(
            priorities.cost * (1.0 - normalized)
                + priorities.speed * c.speed
                + priorities.intelligence * c.intelligence,
        );
    }
}

/// Best of the candidates at `ids`: highest score, then the lower estimated cost, then the
/// smaller id (candidates are in id order, so the first of equals wins); with what broke a tie
/// on the score, if anything had to (step 4).
fn best(candidates: &[Candidate], ids: &[usize]) -> Option<(usize, Option<Tie>)> {
    let score = |i: usize| candidates[i].score.unwrap_or(0.0);
    let top = ids.iter().copied().reduce(|j, i| {
        if score(i).total_cmp(&score(j)).is_gt() {
            i
        } else {
            j
        }
    })?;
    let tied: Vec<usize> = ids
        .iter()
        .copied()
        .filter(|&i| score(i).total_cmp(&score(top)).is_eq())
        .collect();
    let cost = |i: usize| candidates[i].estimated_cost_usd;
    let cheapest = tied
        .iter()
        .copied()
        .reduce(|j, i| {
            if cost(i).total_cmp(&cost(j)).is_lt() {
                i
            } else {
                j
            }
        })
        .unwrap_or(top);
    if tied.len() < 2 {
        return Some((top, None));
    }
    let equally_cheap = tied
        .iter()
        .filter(|&&i| cost(i).total_cmp(&cost(cheapest)).is_eq())
        .count();
    let by = if equally_cheap == tied.len() {
        TieBreak::Id
    } else {
        TieBreak::Cheaper
    };
    Some((
        cheapest,
        Some(Tie {
            models: tied.iter().map(|&i| candidates[i].id.clone()).collect(),
            by,
        }),
    ))
}

/// What the hints did (step 2): the one that decided, if any, and those skipped.
struct Hints {
    decided: Option<(usize, MatchedHint, Option<Tie>)>,
    skipped: Vec<SkippedHint>,
    downgrades: Vec<Downgrade>,
}

/// Follows the request's hints in order until one matches an eligible model.
fn follow_hints(params: &Value, models: &[&ModelConfig], candidates: &[Candidate]) -> Hints {
    let mut hints = Hints {
        decided: None,
        skipped: Vec::new(),
        downgrades: Vec::new(),
    };
    for (index, name) in hints_of(params).into_iter().enumerate() {
        if name.is_empty() {
            hints.skipped.push(SkippedHint {
                index,
                name,
                reason: "no name".to_owned(),
            });
            continue;
        }
        let matches: Vec<(usize, HintMatch)> = models
            .iter()
            .enumerate()
            .filter_map(|(i, m)| hint_match(&name, m).map(|h| (i, h)))
            .collect();
        let eligible: Vec<usize> = matches
            .iter()
            .filter(|(i, _)| candidates[*i].eligible)
            .map(|(i, _)| *i)
            .collect();
        if let Some((i, tie)) = best(candidates, &eligible) {
            let via = matches
                .iter()
                .find(|(j, _)| *j == i)
                .map_or(HintMatch::Id, |(_, h)| h.clone());
            hints.decided = Some((
                i,
                MatchedHint {
                    index,
                    name,
                    via,
                    matched: eligible.iter().map(|&j| candidates[j].id.clone()).collect(),
                },
                tie,
            ));
            break;
        }
        if matches.is_empty() {
            hints.skipped.push(SkippedHint {
                index,
                name,
                reason: "matched no model".to_owned(),
            });
        } else {
            hints.downgrades.push(Downgrade {
                hint_index: index,
                hint: name.clone(),
                matched_excluded: matches
                    .iter()
                    .map(|(i, _)| candidates[*i].id.clone())
                    .collect(),
            });
            hints.skipped.push(SkippedHint {
                index,
                name,
                reason: "matched only excluded models".to_owned(),
            });
        }
    }
    hints
}
