//! The 2026-07-28 tasks extension: a server's task could ask for input through `tasks/get` and
//! `notifications/tasks` (answered with `tasks/update`), a path the proxy does not answer
//! through questions. So the proxy never offers the extension to a server, and a server that
//! uses it anyway never gets its input requests to the host.

use serde_json::{Value, json};

use crate::helpers::*;
use crate::host::Proxy;

#[tokio::test]
async fn the_tasks_extension_is_never_offered_and_a_server_that_tries_reaches_no_host() {
    let app = spawn_app().await;
    let task = json!({"taskId": "t-1", "status": "input_required", "createdAt": "2026-12-01T00:00:00Z",
        "lastUpdatedAt": "2026-12-01T00:00:00Z", "ttl": 60000,
        "inputRequests": {"q": {"method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5}}}});
    let script = json!([
        {"until": "tools/call"},
        {"reply": {"resultType": "task", "task": {"taskId": "t-1", "status": "working",
            "createdAt": "2026-12-01T00:00:00Z", "lastUpdatedAt": "2026-12-01T00:00:00Z", "ttl": 60000}}},
        {"until": "tasks/get"}, {"reply": task},
        {"send": {"jsonrpc": "2.0", "method": "notifications/tasks", "params": task}},
        {"send": {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "marker"}}},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}});
    proxy
        .send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "slow", "arguments": {}, "_meta": meta}}).to_string())
        .await;
    let created: Value = serde_json::from_str(&proxy.recv().await).unwrap();
    assert_eq!(created["id"], 2);
    let call: Value = serde_json::from_str(&proxy.server_received("tools/call").await).unwrap();
    let offered = &call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"];
    assert!(
        offered["extensions"]
            .get("io.modelcontextprotocol/tasks")
            .is_none(),
        "the server is never offered tasks: {offered}"
    );

    proxy
        .send(&json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"taskId": "t-1", "_meta": meta}}).to_string())
        .await;
    let mut seen = Vec::new();
    loop {
        let line: Value = serde_json::from_str(&proxy.recv().await).unwrap();
        let marker = line["params"]["data"] == "marker";
        seen.push(line);
        if marker {
            break;
        }
    }
    let text = serde_json::to_string(&seen).unwrap();
    assert!(!text.contains("inputRequests"), "{text}");
    assert!(!text.contains("sampling/createMessage"), "{text}");
    let refused = seen
        .iter()
        .find(|l| l["id"] == 3)
        .expect("tasks/get answered");
    assert_eq!(refused["error"]["code"], -32603);
}
