//! Tool-call consent, the pure part: the person's rules and grants for the host's
//! `tools/call` ([`policy`]) and the call as the person sees it ([`call`]: digest, argument
//! check, the result a refused call gets). The proxy judges with these, the broker asks and
//! answers with them; nothing here does I/O.

pub mod call;
pub mod policy;
pub mod report;

pub use call::{Refusal, ToolCall, ToolInfo};
pub use policy::{DecidedBy, Grant, Hints, Judgement, Policy, ToolAction, ToolRule, ToolsConfig};
