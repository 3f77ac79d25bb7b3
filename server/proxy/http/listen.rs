//! The GET stream of a Streamable HTTP session: the channel for server messages that are not
//! replies to a POST (requests such as `sampling/createMessage` unrelated to a host request,
//! notifications). Opened once the session is initialized, resumed with `Last-Event-ID` after
//! the server's `retry` (at most [`super::events::MAX_RETRY`]) whenever it ends; a server that
//! does not offer one answers 405.

use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use tokio::sync::oneshot;

use super::events::Cursor;
use super::post::resume;
use super::remote::Remote;
use super::sink::Sink;

/// Consecutive failed connections after which the GET stream is given up.
const MAX_FAILURES: u32 = 5;

/// Keeps the GET stream open until the server refuses it or the task is aborted. `opened` is
/// told once the first attempt has an answer: a server may send on the GET stream only while
/// it is open and drops what it cannot send, so the next message waits for it.
pub(super) async fn listen(remote: Arc<Remote>, sink: Sink, opened: oneshot::Sender<()>) {
    let mut cursor = Cursor::default();
    let mut failures = 0u32;
    let mut opened = Some(opened);
    loop {
        let attempt = resume(&remote, &cursor, None).await;
        if let Some(tell) = opened.take() {
            let _ = tell.send(());
        }
        match attempt {
            Ok(mut events) => {
                let mut got_any = false;
                while let Some(item) = events.next(&mut cursor).await {
                    match item {
                        Ok(event) => {
                            got_any = true;
                            sink.message(event.data.as_bytes()).await;
                        }
                        Err(why) => {
                            tracing::warn!("remote server's GET stream: {why}");
                            break;
                        }
                    }
                }
                failures = if got_any { 0 } else { failures + 1 };
            }
            Err(refused) if refused.status == Some(StatusCode::METHOD_NOT_ALLOWED) => return,
            Err(refused) => {
                failures += 1;
                tracing::debug!("remote server's GET stream: {}", refused.why);
            }
        }
        if failures >= MAX_FAILURES {
            tracing::warn!("gave up the remote server's GET stream after {MAX_FAILURES} failures");
            return;
        }
        let backoff = Duration::from_millis(500u64 << failures.min(5));
        tokio::time::sleep(
            cursor
                .retry
                .unwrap_or(backoff)
                .max(Duration::from_millis(100)),
        )
        .await;
    }
}
