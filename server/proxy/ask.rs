//! Asking the service: open one question for one request and wait for its response, through
//! service restarts, with progress to whoever waits and withdrawal when the asker goes away.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use chrono::Utc;
use serde_json::Value;
use tokio::sync::mpsc;

use super::refusal::AskFailure;
use super::session::AskHandle;
use crate::client::{ClientError, Opened, ServiceClient, Waited};
use crate::protocol::jsonrpc::error_response;
use crate::protocol::notifications;
use crate::wire::OpenRequest;

/// The message of the progress notifications sent while the person thinks.
const AWAITING_REVIEW: &str = "Awaiting user review";
/// How long one long-poll waits, in seconds; also the progress-notification period.
const WAIT_SECS: u64 = 10;
/// Slack after a question's deadline before the proxy gives up on an unreachable service.
const DEADLINE_GRACE: Duration = Duration::from_secs(30);

/// Where progress notifications go while the person thinks: the side that waits (the server
/// for its own request, the host for its request under 2026-07-28), with its token and a
/// counter shared by every question of that request (G13: `progress` strictly increases).
#[derive(Debug, Clone)]
pub(super) struct Progress {
    /// The waiting side's line channel.
    pub(super) to: mpsc::Sender<bytes::Bytes>,
    /// `_meta.progressToken` of the waiting request.
    pub(super) token: Value,
    /// Last `progress` value sent for this token.
    pub(super) counter: Arc<AtomicU64>,
}

impl Progress {
    async fn tick(&self) {
        let progress = self.counter.fetch_add(1, Ordering::SeqCst) + 1;
        let line = notifications::progress_line(&self.token, progress, AWAITING_REVIEW);
        // The waiting side may be gone; its absence is handled where it is noticed.
        let _ = self.to.send(line.into()).await;
    }
}

/// What one question needs to be opened: the `POST /api/v1/requests` body, as the service
/// reads it (for MRTR entries, `request` is one the proxy composed with an id of its own).
pub(super) type Question = OpenRequest;

/// Opens the question and waits for its JSON-RPC response; `None` when it was withdrawn
/// (cancelled through `handle`) and nothing is to be sent. A question that cannot be opened,
/// vanishes or outlives an unreachable service's deadline gets a `-32603` response naming the
/// cause (docs/design.md §proxy).
pub(super) async fn ask(
    client: &ServiceClient,
    opens: &tokio::sync::Semaphore,
    question: &Question,
    handle: &AskHandle,
    progress: Option<&Progress>,
) -> Option<Value> {
    let id = question.request.get("id");
    let fail = |failure: AskFailure| Some(error_response(id, &failure.error()));
    if handle.is_cancelled() {
        return None;
    }
    // Opens are bounded (a flood of requests must not race the withdrawal at exit), and a
    // question opened after its asker left is withdrawn at once by the loop below.
    let opened = {
        let Ok(_permit) = opens.acquire().await else {
            return None;
        };
        if handle.is_cancelled() {
            return None;
        }
        client.open_request(question).await
    };
    let (opened, expires_at) = match opened {
        Ok(Opened::Response(response)) => return Some(response),
        Ok(Opened::Question { id, expires_at }) => {
            let _ = handle.question.set(id.to_string());
            (id, expires_at)
        }
        Err(ClientError::TooLarge) => {
            return fail(AskFailure::TooLarge);
        }
        Err(e) => {
            return fail(AskFailure::CannotOpen(e.to_string()));
        }
    };
    let deadline = expires_at;
    let mut backoff = Duration::from_millis(200);
    loop {
        if handle.is_cancelled() {
            if let Err(e) = client.cancel(&opened).await {
                tracing::warn!(error = %e, "could not withdraw a cancelled question");
            }
            return None;
        }
        let waited = tokio::select! {
            r = client.wait(&opened, WAIT_SECS) => r,
            () = handle.woken() => continue,
        };
        match waited {
            Ok(Waited::Response(response)) => return Some(response),
            Ok(Waited::Closed) => return None,
            Ok(Waited::Pending) => {
                backoff = Duration::from_millis(200);
                if let Some(progress) = progress {
                    progress.tick().await;
                }
            }
            Err(ClientError::NotFound) => {
                return fail(AskFailure::Vanished(opened.to_string()));
            }
            Err(e) => {
                // The service may be restarting; the question is stored, so keep waiting until
                // its deadline has clearly passed.
                if deadline.is_some_and(|d| Utc::now() > d + DEADLINE_GRACE) {
                    return fail(AskFailure::Unreachable(e.to_string()));
                }
                tracing::warn!(error = %e, "waiting for the service");
                tokio::select! {
                    () = tokio::time::sleep(backoff) => {}
                    () = handle.woken() => {}
                }
                backoff = (backoff * 2).min(Duration::from_secs(5));
            }
        }
    }
}
