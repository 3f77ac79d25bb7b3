//! A 2026-07-28 call whose round waits for the person meets the person's rules again when it
//! is retried: the retry is the request that runs the tool, so a `deny` rule added while the
//! round waited stops it, whether the host retries (a round partly the host's) or the proxy
//! does (a round only the person answers). Observed at the server.

use std::time::Duration;

use serde_json::{Value, json};

use crate::helpers::*;
use crate::host::{Proxy, pending_question};
use crate::tool_calls::rules;

/// A 2026-07-28 `tools/call` of `tool` under `id`.
fn call(id: u64, tool: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": tool, "arguments": {"to": "mallory", "eur": 500},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}})
}

/// A round asking the person to confirm, and the host for its roots when `roots`.
fn round(roots: bool) -> Value {
    let mut requests = json!({"confirm": {"method": "elicitation/create", "params": {"mode": "form",
        "message": "Send it?", "requestedSchema": {"type": "object",
            "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}}}});
    if roots {
        requests["roots"] = json!({"method": "roots/list"});
    }
    json!({"resultType": "input_required", "inputRequests": requests, "requestState": "s1"})
}

/// The next line for the host that is not a progress notification, if one comes in `wait`.
async fn host_line_within(proxy: &mut Proxy, wait: Duration) -> Option<Value> {
    tokio::time::timeout(wait, async {
        loop {
            let line: Value = serde_json::from_str(&proxy.recv().await).unwrap();
            if line["method"] != "notifications/progress" {
                return line;
            }
        }
    })
    .await
    .ok()
}

/// Denies `transfer` (and the probe `ping_rules`) from now on, and waits until the proxy judges
/// by it: a probe call is refused (probes sent before then reach the server, unanswered).
async fn deny_transfer_now(app: &TestApp, proxy: &mut Proxy) {
    app.reloader
        .apply(rules(
            "default = \"allow\"\n[[rules]]\ntool = \"transfer\"\naction = \"deny\"\n\
             [[rules]]\ntool = \"ping_rules\"\naction = \"deny\"\n",
        ))
        .unwrap();
    for id in 100..200 {
        proxy.send(&call(id, "ping_rules").to_string()).await;
        if let Some(line) = host_line_within(proxy, Duration::from_millis(300)).await {
            assert_eq!(line["id"], id, "{line}");
            assert_eq!(line["result"]["isError"], true, "{line}");
            return;
        }
    }
    panic!("the proxy never judged by the reloaded rules");
}

/// The `tools/call`s of `transfer` the server received.
fn transfers(proxy: &Proxy) -> Vec<Value> {
    proxy
        .server_log()
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["method"] == "tools/call" && m["params"]["name"] == "transfer")
        .collect()
}

async fn flush(proxy: &mut Proxy, marker: &str) {
    proxy
        .send(&json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"marker": marker}}).to_string())
        .await;
    proxy.server_received(marker).await;
}

async fn person_confirms(app: &TestApp) {
    let question = pending_question(app).await;
    let (status, body) = app
        .answer(
            question["id"].as_str().unwrap(),
            json!({"action": "accept", "content": {"ok": true}}),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::OK, "{body}");
}

#[tokio::test]
async fn a_deny_rule_added_while_the_round_waits_stops_the_hosts_retry() {
    let app = spawn_app().await;
    let script = json!([{"until": "tools/call"}, {"reply": round(true)}]);
    let mut proxy = Proxy::start(&app.state, None, script);
    let first = call(2, "transfer");
    proxy.send(&first.to_string()).await;
    // The call went out and its round waits for the person.
    pending_question(&app).await;
    deny_transfer_now(&app, &mut proxy).await;
    person_confirms(&app).await;
    let handed = host_line_within(&mut proxy, Duration::from_secs(20))
        .await
        .unwrap();
    let state = handed["result"]["requestState"].as_str().unwrap();

    let mut retry = first.clone();
    retry["id"] = json!(3);
    retry["params"]["inputResponses"] = json!({"roots": {"roots": []}});
    retry["params"]["requestState"] = json!(state);
    proxy.send(&retry.to_string()).await;
    let refused = host_line_within(&mut proxy, Duration::from_secs(20))
        .await
        .unwrap();
    assert_eq!(refused["id"], 3, "{refused}");
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    flush(&mut proxy, "after-retry").await;
    assert_eq!(transfers(&proxy).len(), 1, "only the first call went out");
}

#[tokio::test]
async fn a_deny_rule_added_while_the_round_waits_stops_the_proxys_own_retry() {
    let app = spawn_app().await;
    let script = json!([{"until": "tools/call"}, {"reply": round(false)}]);
    let mut proxy = Proxy::start(&app.state, None, script);
    proxy.send(&call(2, "transfer").to_string()).await;
    pending_question(&app).await;
    deny_transfer_now(&app, &mut proxy).await;
    person_confirms(&app).await;
    let refused = host_line_within(&mut proxy, Duration::from_secs(20))
        .await
        .unwrap();
    assert_eq!(refused["id"], 2, "{refused}");
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    flush(&mut proxy, "after-answer").await;
    assert_eq!(transfers(&proxy).len(), 1, "only the first call went out");
}
