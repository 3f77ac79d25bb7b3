//! What the proxy's tasks share: the service client, the line channels to either side, the
//! run's names, and the [`Handle`] on the session's owner. Nothing here changes during a run;
//! the session's state is owned by one task, never shared ([`super::session`]).

use std::sync::Arc;

use bytes::Bytes;

use tokio::sync::{Semaphore, mpsc};

use serde_json::Value;

use super::ask::{Progress, Question, ask};
use super::drops::Drops;
use super::session::command::{Command, Handle};
use super::session::{AskHandle, forgotten};
use super::tool_policy::PolicyView;
use super::tool_report::ToolReporter;
use crate::client::ServiceClient;

/// How many questions the proxy opens at once.
pub(super) const CONCURRENT_OPENS: u32 = 8;

/// What the proxy's tasks share.
#[derive(Clone)]
pub(in crate::proxy) struct Context {
    /// The service.
    pub(super) client: ServiceClient,
    /// The session's owner.
    pub(super) session: Handle,
    /// Weak, so the server's stdin closes once the host has gone and no answer is pending.
    pub(super) to_server: mpsc::WeakSender<Bytes>,
    /// Lines for the host.
    pub(super) to_host: mpsc::Sender<Bytes>,
    /// The server's name (`--name`).
    pub(super) server: String,
    /// This proxy run's session id, as questions name it.
    pub(super) session_id: String,
    /// Lines from the server dropped, reported to the service as a metric.
    pub(super) drops: Arc<Drops>,
    /// Bounds the questions being opened at once.
    pub(super) opens: Arc<Semaphore>,
    /// The person's tool rules and grants, as last known.
    pub(super) policy: PolicyView,
    /// Tool calls decided here, on their way to the service's audit.
    pub(super) tool_report: ToolReporter,
}

impl Context {
    /// Asks the person `question` through the service ([`ask`]).
    pub(super) async fn ask(
        &self,
        question: &Question,
        handle: &AskHandle,
        progress: Option<&Progress>,
    ) -> Option<Value> {
        let response = ask(&self.client, &self.opens, question, handle, progress).await;
        // The question is over: its `elicitationId` is watched on only while the server has
        // yet to report an accepted URL elicitation complete.
        if let Some(id) = forgotten(&question.request, response.as_ref()) {
            self.session
                .send(Command::UnwatchUrls { ids: vec![id] })
                .await;
        }
        response
    }

    /// Gives the host a line the proxy wrote (its channel is bounded; the send waits its turn
    /// in a task of its own, so the judging side never waits).
    pub(super) fn answer_host(&self, line: Vec<u8>) {
        send_later(self.to_host.clone(), line);
    }

    /// Gives the server a line the proxy wrote, likewise (nothing when the server's input has
    /// closed).
    pub(super) fn tell_server(&self, line: Vec<u8>) {
        if let Some(to_server) = self.to_server.upgrade() {
            send_later(to_server, line);
        }
    }
}

fn send_later(to: mpsc::Sender<Bytes>, line: Vec<u8>) {
    tokio::spawn(async move {
        let _ = to.send(line.into()).await;
    });
}
