//! What the proxy keeps of the server's `tools/list` results, observed through the person's
//! `[tools]` rules (a rule on `readOnlyHint` allows a call only while the proxy holds that
//! claim for the tool): a new first page replaces the tools recorded, a later page adds to
//! them, and a tool's claims are read when it is listed, not rebuilt from its whole entry on
//! every call.

use serde_json::{Value, json};

use crate::helpers::*;
use crate::host::{Proxy, init_result};
use crate::tool_calls::{call, calls_received, flush, host_line, pending_call, rules};

const READ_ONLY_ALLOWED: &str =
    "default = \"ask\"\n[[rules]]\nread_only = true\naction = \"allow\"\n";

/// A `tools/list` answer under `id` listing `names`, each claiming `readOnlyHint: true`.
fn listing(id: u64, names: &[&str], next: Option<&str>) -> Value {
    let tools: Vec<Value> = names
        .iter()
        .map(|n| json!({"name": n, "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}))
        .collect();
    let mut result = json!({"tools": tools});
    if let Some(cursor) = next {
        result["nextCursor"] = json!(cursor);
    }
    json!({"send": {"jsonrpc": "2.0", "id": id, "result": result}})
}

fn done() -> Value {
    json!({"reply": {"content": [{"type": "text", "text": "done"}]}})
}

async fn list(proxy: &mut Proxy, id: u64, params: Value) {
    proxy
        .send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params})
                .to_string(),
        )
        .await;
    assert!(proxy.recv().await.contains(&format!("\"id\":{id}")));
}

#[tokio::test]
async fn a_new_first_page_replaces_the_tools_recorded_and_a_later_page_adds() {
    let app = spawn_with(rules(READ_ONLY_ALLOWED)).await;
    let browser = app.login().await;
    let script = json!([
        {"until": "initialize"}, init_result("2025-11-25"),
        {"until": "tools/list"}, listing(2, &["old_tool"], Some("p2")),
        {"until": "tools/list"}, listing(3, &["paged"], None),
        {"until": "tools/call"}, done(),
        {"until": "tools/call"}, done(),
        {"until": "tools/list"}, listing(4, &["fresh"], None),
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    proxy.initialized().await;
    list(&mut proxy, 2, json!({})).await;
    list(&mut proxy, 3, json!({"cursor": "p2"})).await;
    // Both pages of one listing are held: each tool's claim lets the rule allow it.
    for (id, tool) in [(10, "paged"), (11, "old_tool")] {
        proxy.send(&call(id, tool, "/a")).await;
        assert_eq!(
            host_line(&mut proxy).await["result"]["content"][0]["text"],
            "done",
            "{tool}"
        );
    }
    // The server lists its tools afresh without `old_tool`: its old claim no longer counts,
    // so the call is judged as a tool the server never listed (the default asks).
    list(&mut proxy, 4, json!({})).await;
    proxy.send(&call(12, "old_tool", "/a")).await;
    let q = pending_call(&app, &browser).await;
    assert_eq!(q["tool"], "old_tool");
    flush(&mut proxy, "after-relist").await;
    assert_eq!(calls_received(&proxy).len(), 2);
}

#[tokio::test]
async fn a_tools_claims_are_read_when_listed_without_building_its_schema() {
    // A schema nested deeper than a JSON tree is built for: the entry is never built whole
    // to judge a call, so its claim still counts.
    let mut deep = json!({"type": "object"});
    for _ in 0..200 {
        deep = json!({"items": deep});
    }
    let app = spawn_with(rules(READ_ONLY_ALLOWED)).await;
    let script = json!([
        {"until": "initialize"}, init_result("2025-11-25"),
        {"until": "tools/list"},
        {"send": {"jsonrpc": "2.0", "id": 2, "result": {"tools": [
            {"name": "read_deep", "inputSchema": deep, "annotations": {"readOnlyHint": true}}]}}},
        {"until": "tools/call"}, done(),
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    proxy.initialized().await;
    list(&mut proxy, 2, json!({})).await;
    proxy.send(&call(10, "read_deep", "/a")).await;
    assert_eq!(
        host_line(&mut proxy).await["result"]["content"][0]["text"],
        "done"
    );
}
