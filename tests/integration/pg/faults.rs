//! Faults of the shared queue, each on its own cluster: the database unreachable at start, the
//! database restarted while proxies wait, and `kill -9` of an instance during an answer.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::process::{Child, Command};

use super::cluster::{Cluster, free_port};
use super::shared;
use crate::helpers::*;
use crate::host::{Proxy, init_result};

/// `mcp-consent serve` on `state` with the shared database given by the environment.
fn serve_command(state: &Path, url: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcp-consent"));
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--state-dir"])
        .arg(state)
        .env_remove("MCP_CONSENT_CONFIG")
        .env("MCP_CONSENT_DATABASE_URL", url)
        .kill_on_drop(true);
    cmd
}

async fn serve(state: &Path, url: &str) -> (Child, String) {
    let mut child = serve_command(state, url)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let base = listening_on(&mut child).await;
    (child, base)
}

fn token(state: &Path) -> String {
    std::fs::read_to_string(state.join("api-token"))
        .unwrap()
        .trim()
        .to_owned()
}

/// A proxy on `state` whose fake server asks one form question (id 42) and waits for it.
async fn waiting_proxy(state: &Path) -> Proxy {
    let script = json!([
        {"until": "initialize"}, init_result("2025-11-25"),
        {"send": {"jsonrpc": "2.0", "id": 42, "method": "elicitation/create", "params": {"message": "Still there?", "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}}},
        {"until_response": 42},
    ]);
    let mut proxy = Proxy::start(state, None, script);
    proxy.initialize().await;
    proxy
}

/// The database unreachable at start: `serve` exits non-zero within 15 s, naming the host and
/// port, for a closed port and for an address that never answers alike.
#[tokio::test]
async fn serve_exits_within_15_s_naming_the_database_when_it_is_unreachable() {
    let closed = format!("127.0.0.1:{}", free_port());
    // TEST-NET-1 (RFC 5737): nothing answers there, so the connect waits for its timeout.
    let silent = "192.0.2.1:5432".to_owned();
    for named in [closed, silent] {
        let url = format!("postgres://u@{named}/db?sslmode=disable");
        let tmp = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let out = serve_command(&tmp.path().join("state"), &url)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output();
        let out = tokio::time::timeout(Duration::from_secs(20), out)
            .await
            .expect("serve exits instead of hanging")
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{:?}",
            started.elapsed()
        );
        assert!(stderr.contains(&named), "names {named}: {stderr}");
    }
}

/// The database restarted while a proxy waits: the API and `/healthz` answer 503 meanwhile,
/// the proxy keeps waiting, and the answer given afterwards on another instance reaches it.
#[tokio::test]
async fn a_database_restart_while_a_proxy_waits_gives_503s_then_the_answer() {
    let cluster = Cluster::start();
    let url = cluster.database();
    let a = spawn_with(shared(&url)).await;
    let b = spawn_with(shared(&url)).await;
    let proxy = waiting_proxy(&a.state).await;
    let id = first_pending_id(|| {
        b.client
            .get(format!("{}/api/v1/questions?state=pending", b.base))
            .bearer_auth(&b.token)
    })
    .await;

    cluster.stop();
    let health = b
        .client
        .get(format!("{}/healthz", b.base))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), StatusCode::SERVICE_UNAVAILABLE);
    let listed = b.get("/api/v1/questions?state=pending").await;
    assert_eq!(listed.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body: Value = listed.json().await.unwrap();
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("database is unreachable"),
        "{body}"
    );

    cluster.start_server();
    let answered = eventually(Duration::from_secs(20), || async {
        let (status, _) = b
            .answer(&id, json!({"action": "accept", "content": {"ok": true}}))
            .await;
        (status == StatusCode::OK).then_some(())
    })
    .await;
    assert!(
        answered.is_some(),
        "the answer is taken once the database is back"
    );
    let line = proxy.server_received(r#""id":42"#).await;
    let response: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        response["result"],
        json!({"action": "accept", "content": {"ok": true}})
    );
    let health = b
        .client
        .get(format!("{}/healthz", b.base))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), StatusCode::OK);
}

/// `kill -9` of the instance a proxy waits on, during an answer given there: the answer is
/// either stored or not, never half; what is left is answered on the other instance, and the
/// proxy gets the one stored answer after its instance restarts.
#[tokio::test]
async fn kill_9_of_an_instance_during_an_answer_loses_nothing() {
    let cluster = Cluster::start();
    let url = cluster.database();
    let tmp = tempfile::tempdir().unwrap();
    let (state_a, state_b) = (tmp.path().join("a"), tmp.path().join("b"));
    let (mut a, base_a) = serve(&state_a, &url).await;
    let (_b, base_b) = serve(&state_b, &url).await;
    let proxy = waiting_proxy(&state_a).await;
    let client = http_client();
    let (token_a, token_b) = (token(&state_a), token(&state_b));
    let id = first_pending_id(|| {
        client
            .get(format!("{base_b}/api/v1/questions?state=pending"))
            .bearer_auth(&token_b)
    })
    .await;

    let answer = client
        .post(format!("{base_a}/api/v1/questions/{id}/answer"))
        .bearer_auth(&token_a)
        .json(&json!({"action": "accept", "content": {"ok": true}}))
        .send();
    let pid = i32::try_from(a.id().unwrap()).unwrap();
    let (_, ()) = tokio::join!(answer, async {
        // SAFETY: signalling our own child.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    });
    a.wait().await.unwrap();

    let q: Value = client
        .get(format!("{base_b}/api/v1/questions/{id}"))
        .bearer_auth(&token_b)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let expected = match q["state"].as_str().unwrap() {
        "accepted" => json!({"action": "accept", "content": {"ok": true}}),
        "pending" => {
            let res = client
                .post(format!("{base_b}/api/v1/questions/{id}/answer"))
                .bearer_auth(&token_b)
                .json(&json!({"action": "accept", "content": {"ok": false}}))
                .send()
                .await
                .unwrap();
            assert_eq!(res.status(), StatusCode::OK);
            json!({"action": "accept", "content": {"ok": false}})
        }
        other => panic!("state {other}"),
    };
    let (_a, _) = serve(&state_a, &url).await;
    let line = proxy.server_received(r#""id":42"#).await;
    let response: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(response["result"], expected);
    let delivered = proxy
        .server_log()
        .iter()
        .filter(|l| l.contains(r#""id":42"#) && l.contains("result"))
        .count();
    assert_eq!(delivered, 1, "{:?}", proxy.server_log());
}
