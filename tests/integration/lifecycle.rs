//! The service as an operating-system process: SIGTERM ends long-polls and event streams and
//! exits cleanly; SIGKILL while a proxy waits loses nothing; a restart tightens loosened modes.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::process::{Child, Command};

use crate::helpers::{first_pending_id, http_client, listening_on};
use crate::host::{Proxy, init_result};

/// `mcp-consent serve` on a free port; returns the child and its base URL.
async fn serve(state: &Path) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-consent"))
        .args(["serve", "--listen", "127.0.0.1:0", "--state-dir"])
        .arg(state)
        .env_remove("MCP_CONSENT_CONFIG")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let base = listening_on(&mut child).await;
    (child, base)
}

fn signal(child: &Child, sig: i32) {
    let pid = i32::try_from(child.id().unwrap()).unwrap();
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
}

fn token(state: &Path) -> String {
    std::fs::read_to_string(state.join("api-token"))
        .unwrap()
        .trim()
        .to_owned()
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[tokio::test]
async fn sigterm_ends_long_polls_and_event_streams_and_keeps_pending_questions() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let (mut child, base) = serve(&state).await;
    let client = http_client();
    let token = token(&state);
    let opened: Value = client
        .post(format!("{base}/api/v1/requests"))
        .bearer_auth(&token)
        .json(&json!({"server": "s", "protocolVersion": "2025-11-25", "clientCapabilities": {"sampling": {}},
            "request": {"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage",
                "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "keep me"}}], "maxTokens": 5}}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = opened["id"].as_str().unwrap().to_owned();

    let mut events = client
        .get(format!("{base}/api/v1/events"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    events.chunk().await.unwrap();
    let poll = {
        let (client, base, token, id) = (client.clone(), base.clone(), token.clone(), id.clone());
        tokio::spawn(async move {
            client
                .get(format!("{base}/api/v1/requests/{id}/response?wait=60"))
                .bearer_auth(token)
                .send()
                .await
                .unwrap()
                .status()
        })
    };
    // Gives the long-poll time to reach the service. The assertion does not rest on it: a poll
    // that had not arrived before SIGTERM fails to connect (the test fails), it cannot come back
    // 202 — only a poll in flight at shutdown does.
    tokio::time::sleep(Duration::from_millis(300)).await;

    let started = Instant::now();
    signal(&child, libc::SIGTERM);
    assert_eq!(
        poll.await.unwrap(),
        StatusCode::ACCEPTED,
        "the long-poll ends as still pending"
    );
    let rest = tokio::time::timeout(Duration::from_secs(10), events.chunk())
        .await
        .unwrap();
    assert!(matches!(rest, Ok(None)), "the event stream ends: {rest:?}");
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "clean exit: {status:?}");
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "shut down in {:?}",
        started.elapsed()
    );

    let (_child, base) = serve(&state).await;
    let q: Value = client
        .get(format!("{base}/api/v1/questions/{id}"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(q["state"], "pending");
}

#[tokio::test]
async fn after_sigkill_and_loosened_modes_a_restart_tightens_them_and_the_answer_reaches_the_proxy()
{
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let (first, _) = serve(&state).await;
    let script = json!([
        {"until": "initialize"}, init_result("2025-11-25"),
        {"send": {"jsonrpc": "2.0", "id": 42, "method": "elicitation/create", "params": {"message": "Still there?", "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}}},
        {"until_response": 42},
    ]);
    let mut proxy = Proxy::start(&state, None, script);
    proxy.initialize().await;
    let client = http_client();
    let base_file = state.join("service-url");
    let base = std::fs::read_to_string(&base_file)
        .unwrap()
        .trim()
        .to_owned();
    let token = token(&state);
    let id = first_pending_id(|| {
        client
            .get(format!("{base}/api/v1/questions?state=pending"))
            .bearer_auth(&token)
    })
    .await;

    signal(&first, libc::SIGKILL);
    let mut first = first;
    first.wait().await.unwrap();

    let db = state.join("broker/broker.db");
    let loosen = [
        (state.clone(), 0o755),
        (state.join("broker"), 0o755),
        (db.clone(), 0o644),
        (state.join("broker/broker.db-wal"), 0o644),
        (state.join("broker/broker.db-shm"), 0o644),
        (state.join("api-token"), 0o644),
    ];
    for (path, m) in &loosen {
        if path.exists() {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(*m)).unwrap();
        }
    }

    let (_second, base) = serve(&state).await;
    for (path, _) in &loosen {
        if path.exists() {
            let want = if path.is_dir() { 0o700 } else { 0o600 };
            assert_eq!(mode(path), want, "{}", path.display());
        }
    }
    let res = client
        .post(format!("{base}/api/v1/questions/{id}/answer"))
        .bearer_auth(&token)
        .json(&json!({"action": "accept", "content": {"ok": true}}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let line = proxy.server_received(r#""id":42"#).await;
    let response: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        response["result"],
        json!({"action": "accept", "content": {"ok": true}})
    );
}
