//! The trait through which another module takes part in a sampling question's life without the
//! broker knowing it: the two-step review on configured models (`crate::review`) implements
//! [`SamplingHooks`], the broker owns the trait, so the dependency points one way.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use super::{BrokerError, Question};
use crate::domain::Via;
use crate::protocol::jsonrpc::RpcError;

/// A boxed `Send` future of a hook (object-safe async).
pub type HookFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, BrokerError>> + Send + 'a>>;

/// Whether a new sampling request may open, and in which conversation.
#[derive(Debug, Clone)]
pub enum Round {
    /// It continues the conversation with this id.
    Continue(String),
    /// It starts a conversation.
    New,
    /// A budget refuses it: the JSON-RPC error for the server.
    Refuse(RpcError),
}

/// What the broker calls while opening a sampling question.
pub trait SamplingHooks: Send + Sync {
    /// Whether the hooks take part now (the review does only while models are configured,
    /// which a config reload may change). Default: always.
    fn active(&self) -> bool {
        true
    }

    /// Before the question is stored: links the request (its `params`), opened through door
    /// `via`, to the conversation whose delivered `tool_use` it answers, and checks the
    /// budgets. Both are the door's own: what another door opened under the same server name
    /// neither joins its conversations nor uses up its budgets.
    fn admit<'a>(&'a self, server: &'a str, params: &'a Value, via: Via) -> HookFuture<'a, Round>;

    /// After the question was stored and announced.
    fn opened<'a>(&'a self, question: &'a Question) -> HookFuture<'a, ()>;
}
