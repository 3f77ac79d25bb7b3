//! Sampling with real models: the model catalog, the route policy and its receipts, input-token
//! estimates, and the providers that run a completion.
//!
//! What the approval engine calls, in order:
//!
//! 1. [`Catalog::new`] once from `Config::models` (already validated at config load);
//!    an empty catalog means the person writes responses, as before.
//! 2. [`route`] for each validated `sampling/createMessage` request: a [`RouteOutcome`] with
//!    the chosen model (or none: "no permitted route") and the [`Receipt`] to store.
//! 3. [`estimate_input_tokens`] for the request-review page when the person picks another
//!    model (the receipt already holds the estimate for every candidate).
//! 4. [`Providers::complete`] once the request is approved: a [`Completion`] whose `result`
//!    is the `CreateMessageResult` to show for response review.
//!
//! This module is pure except [`provider`] (network I/O). Rules: `docs/protocol.md` §2.

pub mod catalog;
pub mod money;
pub mod provider;
pub mod receipt;
pub mod route;
pub mod tokens;
pub mod why;

pub use catalog::{Catalog, CatalogError, ModelConfig, ProviderKind};
pub use money::Usd;
pub use provider::{Completion, MAX_REPLY_BYTES, ProviderError, Providers};
pub use receipt::{ChosenModel, ExclusionReason, POLICY_VERSION, Receipt, request_digest};
pub use route::{RouteOutcome, RoutingConfig, RoutingConfigError, route};
pub use tokens::{TokenEstimate, TokenMethod, estimate_input_tokens};
