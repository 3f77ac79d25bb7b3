//! The Upstream's output: every message the transport receives, whatever the HTTP framing
//! (JSON body, POST event stream, GET event stream, old HTTP+SSE stream), becomes exactly one
//! line here, so that the proxy's judge sees it before anything reaches the host. Errors the
//! transport itself gives a host request are written here too, as JSON-RPC error responses.

use serde_json::value::RawValue;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

use crate::protocol::jsonrpc::codes;
use crate::protocol::mrtr::{error_line, error_object};

/// Where received messages go; cheap to clone. The output closes when every clone is gone.
#[derive(Clone)]
pub(super) struct Sink {
    tx: mpsc::Sender<Vec<u8>>,
}

impl Sink {
    /// A sink and the task that writes its lines into `out`.
    pub(super) fn new(out: tokio::io::DuplexStream) -> Sink {
        let (tx, mut rx) = mpsc::channel::<Vec<u8>>(64);
        tokio::spawn(async move {
            let mut out = out;
            while let Some(line) = rx.recv().await {
                if out.write_all(&line).await.is_err() {
                    return;
                }
            }
            let _ = out.shutdown().await;
        });
        Sink { tx }
    }

    /// Writes one received message as one line. Raw line breaks can only be whitespace
    /// between tokens in valid JSON, so they become spaces; the judge sees exactly the bytes the
    /// host would get. Blank messages (an event stream's priming event) are skipped.
    pub(super) async fn message(&self, data: &[u8]) {
        if data.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let mut line: Vec<u8> = data
            .iter()
            .map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b })
            .collect();
        line.push(b'\n');
        let _ = self.tx.send(line).await;
    }

    /// Gives the host request `id` (raw JSON) a -32603 error naming `why`.
    pub(super) async fn fail(&self, id: &RawValue, why: &str) {
        tracing::warn!(request = id.get(), "remote server: {why}");
        let line = error_line(
            id,
            &error_object(
                codes::INTERNAL_ERROR,
                &format!("mcp-consent: the remote server {why}"),
            ),
        );
        let _ = self.tx.send(line).await;
    }
}
