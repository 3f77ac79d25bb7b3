//! The old HTTP+SSE transport (2024-11-05), for servers that refuse the initialize POST with a
//! 4xx (the transport spec's backwards-compatibility rule): GET the URL, take the `endpoint`
//! event's URL (same origin only), POST every message there, and read every reply from the GET
//! stream. When that stream ends, the server is gone.

use std::sync::Arc;

use reqwest::Method;

use super::events::{Cursor, Events};
use super::net::media_type;
use super::post::Outgoing;
use super::remote::{ACCEPT_SSE, Mode, Remote};
use super::sink::Sink;

/// Opens the GET stream and waits for its `endpoint` event; then reads the rest into `sink`
/// in a task whose handle is returned.
///
/// # Errors
/// Text naming why the server does not speak the old transport either.
pub(super) async fn open(
    remote: &Arc<Remote>,
    sink: &Sink,
) -> Result<tokio::task::JoinHandle<()>, String> {
    let response = remote
        .send(
            remote
                .request(Method::GET, &remote.url, None)
                .header(reqwest::header::ACCEPT, ACCEPT_SSE),
        )
        .await?;
    let status = response.status();
    if !status.is_success() || media_type(&response) != ACCEPT_SSE {
        return Err(format!(
            "speaks neither Streamable HTTP nor HTTP+SSE (GET answered HTTP {status})"
        ));
    }
    let mut events = Events::new(response, remote.limit);
    let mut cursor = Cursor::default();
    let endpoint = loop {
        match events.next(&mut cursor).await {
            Some(Ok(event)) if event.event == "endpoint" => break event.data,
            Some(Ok(_)) => {}
            Some(Err(why)) => return Err(why),
            None => return Err("closed its HTTP+SSE stream before naming an endpoint".into()),
        }
    };
    let endpoint = remote
        .url
        .join(endpoint.trim())
        .map_err(|_| "named an HTTP+SSE endpoint that is not a URL".to_owned())?;
    if endpoint.origin() != remote.url.origin() {
        return Err("named an HTTP+SSE endpoint on another origin (refused)".into());
    }
    remote.set_mode(Mode::Legacy(endpoint));
    let (remote, sink) = (Arc::clone(remote), sink.clone());
    Ok(tokio::spawn(async move {
        while let Some(item) = events.next(&mut cursor).await {
            match item {
                Ok(event) if event.event == "message" => sink.message(event.data.as_bytes()).await,
                Ok(_) => {}
                Err(why) => {
                    tracing::warn!("remote server's HTTP+SSE stream: {why}");
                    break;
                }
            }
        }
        tracing::warn!("the remote server closed its HTTP+SSE stream");
        remote.gone.notify_one();
    }))
}

/// POSTs one message to the old transport's endpoint; its reply arrives on the stream.
pub(super) async fn send(remote: &Remote, sink: &Sink, endpoint: &reqwest::Url, msg: &Outgoing) {
    let rb = remote.post(endpoint, msg.body.clone(), None);
    let outcome = match remote.send(rb).await {
        Ok(r) if r.status().is_success() => return,
        Ok(r) => format!("refused the message (HTTP {})", r.status()),
        Err(why) => why,
    };
    match msg.id.as_deref() {
        Some(id) => sink.fail(id, &outcome).await,
        None => tracing::warn!("remote server: {outcome}"),
    }
}
