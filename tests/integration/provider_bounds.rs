//! A model provider's reply is bounded in size as well as in time: a provider on loopback that
//! answers with a body that never ends (one endless JSON string, so no event or line ever
//! closes) gets its connection cut once the reply passes the limit, long before the model's
//! `timeout_secs`, and the run fails saying the reply was over the limit — to the caller, in
//! the API and on the question page. Observed at the provider: it could hand over only about
//! the limit before the service stopped reading and closed. A provider that answers normally
//! still answers through the same path.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mcp_consent::config::Config;
use mcp_consent::sampling::{
    MAX_REPLY_BYTES, ModelConfig, ProviderError, Providers, RoutingConfig,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::helpers::*;
use crate::model_review::{FakeModel, approve_request, model, phase_becomes};

/// The most the endless provider offers before it stops writing and holds the connection
/// open: four times the limit, so a reader with no limit takes it all and then waits for the
/// model's timeout.
const OFFERED: u64 = 4 * MAX_REPLY_BYTES;

/// What the endless provider saw.
#[derive(Default)]
struct Taken {
    /// Bytes of reply the reader took (written without error).
    bytes: AtomicU64,
    /// The reader closed the connection mid-reply.
    cut: AtomicBool,
}

/// A provider whose every reply is `200 OK` and a chunked body without end, written as fast as
/// it is read.
async fn endless_provider() -> (String, Arc<Taken>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let taken = Arc::new(Taken::default());
    let counted = taken.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let taken = counted.clone();
            tokio::spawn(async move {
                let mut head = vec![0u8; 65536];
                let _ = socket.read(&mut head).await;
                let start = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";
                let opening = r#"{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":""#;
                let mut out = format!("{start}{:x}\r\n{opening}\r\n", opening.len()).into_bytes();
                let filler = vec![b'a'; 64 * 1024];
                loop {
                    if socket.write_all(&out).await.is_err() {
                        taken.cut.store(true, Ordering::SeqCst);
                        return;
                    }
                    let sent = taken.bytes.fetch_add(out.len() as u64, Ordering::SeqCst);
                    if sent >= OFFERED {
                        // Never a last chunk: wait for the reader to go.
                        let mut rest = Vec::new();
                        let _ = socket.read_to_end(&mut rest).await;
                        taken.cut.store(true, Ordering::SeqCst);
                        return;
                    }
                    out = format!("{:x}\r\n", filler.len()).into_bytes();
                    out.extend_from_slice(&filler);
                    out.extend_from_slice(b"\r\n");
                }
            });
        }
    });
    (format!("http://{addr}/v1/"), taken)
}

/// The reader stopped taking the reply near the limit (kernel socket buffers hold a few MiB
/// more) and closed the connection.
async fn assert_cut_near_the_limit(taken: &Taken) {
    let cut = eventually(Duration::from_secs(10), || async {
        taken.cut.load(Ordering::SeqCst).then_some(())
    })
    .await;
    assert!(cut.is_some(), "the provider's connection was closed");
    let bytes = taken.bytes.load(Ordering::SeqCst);
    assert!(
        bytes < 2 * MAX_REPLY_BYTES,
        "the reader took {bytes} bytes of an endless reply"
    );
}

#[tokio::test]
async fn an_endless_reply_is_cut_at_the_limit_and_the_run_says_so() {
    let (base, taken) = endless_provider().await;
    let mut m = model("endless", &base, false, 1.0);
    m.timeout_secs = 60;
    let started = Instant::now();
    let error = Providers::new()
        .unwrap()
        .complete(&m, &sampling_request(1, "hello")["params"])
        .await
        .unwrap_err();
    assert_eq!(
        error,
        ProviderError::TooLarge {
            model: "endless".into(),
            limit_bytes: MAX_REPLY_BYTES
        }
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "ended by its size, not by the model's timeout"
    );
    let text = error.to_string();
    assert!(
        text.contains("reply was over the limit of 16777216 bytes"),
        "{text}"
    );
    assert_cut_near_the_limit(&taken).await;
}

/// A service with the one model `only`, and a sampling question whose request review was
/// approved (so it runs on that model).
async fn approved_on(only: ModelConfig) -> (TestApp, String) {
    let app = spawn_with(Config {
        models: vec![only],
        routing: RoutingConfig::default(),
        ..Config::default()
    })
    .await;
    let id = app.open_ok(sampling_request(1, "hello")).await;
    let (status, _) = approve_request(&app, &id).await;
    assert!(status.is_success(), "{status}");
    (app, id)
}

#[tokio::test]
async fn the_person_sees_that_the_providers_reply_was_over_the_limit() {
    let (base, taken) = endless_provider().await;
    let mut endless = model("endless", &base, false, 1.0);
    endless.timeout_secs = 60;
    let (app, id) = approved_on(endless).await;
    let failed = eventually(Duration::from_secs(30), || async {
        let q = app.question(&id).await;
        (q["review"]["runs"][0]["state"] == "failed").then_some(q)
    })
    .await
    .expect("the run failed");
    let error = failed["review"]["runs"][0]["error"].as_str().unwrap();
    assert!(error.contains("reply was over the limit"), "{error}");
    assert_cut_near_the_limit(&taken).await;

    let browser = app.login().await;
    let page = app.html(&browser, &format!("/questions/{id}")).await;
    assert!(
        page.contains("The last run on endless failed: <bdi>the provider&#39;s reply was over the limit of 16,777,216 bytes"),
        "{page}"
    );
}

#[tokio::test]
async fn a_normal_reply_still_comes_through() {
    let fake = FakeModel::start().await;
    let (app, id) = approved_on(model("fast-mini", &fake.base, false, 0.1)).await;
    let q = phase_becomes(&app, &id, "response_review").await;
    let run = &q["review"]["runs"][0];
    assert_eq!(run["state"], "done", "{q}");
    assert_eq!(
        run["result"]["content"]["text"], "answer 1 from fast-mini",
        "{q}"
    );
    assert_eq!(fake.calls().len(), 1);
}
