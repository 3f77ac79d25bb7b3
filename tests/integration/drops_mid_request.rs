//! A line from the server the proxy cannot judge, under the id of a host request the server
//! is not answering (one held for the person, one whose round the person is asked about),
//! changes nothing for that request: its question stays its own and its answer serves only
//! it, the host is not told its response was dropped, and the id stays in flight. Observed at
//! the server and at the host.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;
use crate::host::{Proxy, pending_question};
use crate::tool_calls::{calls_received, flush, host_line, pending_call, person_answers, rules};

const META: &str = "io.modelcontextprotocol/protocolVersion";

/// A 2026-07-28 `tools/call` of `transfer` to `to`, under `id`.
fn transfer(id: u64, to: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "transfer", "arguments": {"account": 42, "to": to},
        "_meta": {META: "2026-07-28"}}})
    .to_string()
}

/// The server's notification the host waits for, after the line the proxy drops.
fn sent_after(data: &str) -> Value {
    json!({"send": {"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"level": "info", "data": data}}})
}

/// The reported flaw: the server asks the person to confirm a transfer to Alice, then writes
/// `{"id":1}` (no result, no error); the host was told its response was dropped, sent a
/// transfer to Mallory under the freed id 1, and the person's "yes" for Alice was retried on
/// Mallory's call. Now request 1 stays the Alice call: the host's second id 1 is refused as in
/// flight, and the one retry the server gets is Alice's, with Alice's state.
#[tokio::test]
async fn a_dropped_line_leaves_a_round_with_its_own_request() {
    let app = spawn_app().await;
    let round = json!({"resultType": "input_required", "requestState": "st-alice",
        "inputRequests": {"confirm": {"method": "elicitation/create", "params": {"mode": "form",
            "message": "Confirm the transfer to Alice?", "requestedSchema": {"type": "object",
                "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}}}}});
    let script = json!([
        {"until": "tools/call"}, {"reply": round},
        {"send": {"jsonrpc": "2.0", "id": 1}},
        sent_after("dropped-sent"),
        {"until": "tools/call"},
        {"reply": {"content": [{"type": "text", "text": "transferred"}], "resultType": "complete"}},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    proxy.send(&transfer(1, "Alice")).await;
    let question = pending_question(&app).await;

    // Nothing for request 1 came before the server's next line.
    let next = host_line(&mut proxy).await;
    assert_eq!(next["params"]["data"], "dropped-sent", "{next}");
    proxy.send(&transfer(1, "Mallory")).await;
    let refused = host_line(&mut proxy).await;
    assert_eq!(refused["id"], 1, "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("still in flight"),
        "{refused}"
    );

    let (status, body) = app
        .answer(
            question["id"].as_str().unwrap(),
            json!({"action": "accept", "content": {"ok": true}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let answer = host_line(&mut proxy).await;
    assert_eq!(answer["id"], 1, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "transferred");

    let calls = calls_received(&proxy);
    assert_eq!(calls.len(), 2, "the call and its one retry: {calls:?}");
    assert_eq!(
        calls[1]["params"]["arguments"]["to"], "Alice",
        "{}",
        calls[1]
    );
    assert_eq!(calls[1]["params"]["requestState"], "st-alice");
    assert_eq!(
        calls[1]["params"]["inputResponses"]["confirm"],
        json!({"action": "accept", "content": {"ok": true}})
    );
}

/// The server writes an unreadable line under the id of a call held for the person (a call it
/// never received): the host is not told the server's response was dropped, the question
/// stays, and the person's "accept" sends the call, whose answer the host gets.
#[tokio::test]
async fn a_dropped_line_leaves_a_held_call_with_its_question() {
    let app = spawn_with(rules("default = \"ask\"\n")).await;
    let browser = app.login().await;
    let script = json!([
        {"until": "notifications/message"},
        {"raw": r#"{"jsonrpc":"2.0","id":5,"result":{"#},
        sent_after("dropped-sent"),
        {"until": "tools/call"},
        {"reply": {"content": [{"type": "text", "text": "sent"}]}},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    proxy
        .send(
            &json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
            "params": {"name": "send_mail", "arguments": {"to": "alice"}}})
            .to_string(),
        )
        .await;
    let question = pending_call(&app, &browser).await;
    flush(&mut proxy, "call-held").await;

    let next = host_line(&mut proxy).await;
    assert_eq!(next["params"]["data"], "dropped-sent", "{next}");
    let (status, body) = person_answers(
        &app,
        &browser,
        question["id"].as_str().unwrap(),
        json!({"action": "accept"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let answer = host_line(&mut proxy).await;
    assert_eq!(answer["id"], 5, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "sent", "{answer}");
    let calls = calls_received(&proxy);
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0]["params"]["arguments"]["to"], "alice");
}
