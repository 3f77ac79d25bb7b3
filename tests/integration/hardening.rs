//! Regressions from adversarial testing: malformed envelopes and schemas, media, answers that
//! must not pass, queue flooding, reused ids, unsafe URLs, and the proxy when its server dies.

use std::time::Duration;

use mcp_consent::config::Config;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;
use crate::host::{INIT, Proxy, init_result};

async fn refused_code(app: &TestApp, request: Value, caps: Value) -> i64 {
    let (status, body) = app.open(request, caps, "2025-11-25").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["response"]["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("refused: {body}"))
}

#[tokio::test]
async fn malformed_envelopes_schemas_and_media_open_nothing() {
    let app = spawn_app().await;
    let mut no_version = sampling_request(1, "x");
    no_version.as_object_mut().unwrap().remove("jsonrpc");
    assert_eq!(refused_code(&app, no_version, full_caps()).await, -32600);
    let mut with_result = sampling_request(2, "x");
    with_result["result"] = json!({});
    assert_eq!(refused_code(&app, with_result, full_caps()).await, -32600);
    assert_eq!(
        refused_code(&app, sampling_request(3, "x"), json!({"elicitation": {}})).await,
        -32601
    );

    let impossible = json!({"jsonrpc": "2.0", "id": 4, "method": "elicitation/create", "params": {"message": "m",
        "requestedSchema": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 10, "maximum": 1}}}}});
    assert_eq!(refused_code(&app, impossible, full_caps()).await, -32602);

    for (data, mime) in [("!!!", "image/png"), ("iVBORw0KGgo=", "text/html")] {
        let image = json!({"jsonrpc": "2.0", "id": 5, "method": "sampling/createMessage", "params": {"maxTokens": 5,
            "messages": [{"role": "user", "content": {"type": "image", "data": data, "mimeType": mime}}]}});
        assert_eq!(
            refused_code(&app, image, full_caps()).await,
            -32602,
            "{data} {mime}"
        );
    }
    let crlf = json!({"jsonrpc": "2.0", "id": 6, "method": "elicitation/create", "params": {"mode": "url",
        "elicitationId": "e", "url": "https://a.example/\r\nSet-Cookie: pwn=1", "message": "m"}});
    assert_eq!(refused_code(&app, crlf, full_caps()).await, -32602);

    let list: Value = app.get("/api/v1/questions").await.json().await.unwrap();
    assert_eq!(list["questions"], json!([]));
}

#[tokio::test]
async fn answers_that_would_mislead_the_server_are_refused() {
    let app = spawn_app().await;
    let with_tools = json!({"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage", "params": {"maxTokens": 50,
        "messages": [{"role": "user", "content": {"type": "text", "text": "w?"}}],
        "tools": [{"name": "get_weather", "inputSchema": {"type": "object"}}]}});
    let id = app.open_ok(with_tools).await;
    for (result, why) in [
        (
            json!({"role": "assistant", "model": "m", "stopReason": "toolUse",
            "content": [{"type": "tool_use", "id": "c1", "name": "rm_rf", "input": {}}]}),
            "a tool that was not offered",
        ),
        (
            json!({"role": "assistant", "model": "m",
            "content": [{"type": "tool_result", "toolUseId": "c1", "content": []}]}),
            "a tool_result in a result",
        ),
        (
            json!({"role": "assistant", "model": "m", "content": []}),
            "no content at all",
        ),
    ] {
        let (status, body) = app
            .answer(&id, json!({"action": "accept", "result": result}))
            .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{why}: {body}");
    }
    assert_eq!(app.question(&id).await["state"], "pending");

    let multi = json!({"jsonrpc": "2.0", "id": 2, "method": "elicitation/create", "params": {"message": "m",
        "requestedSchema": {"type": "object", "properties": {"t": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}}}}});
    let id = app.open_ok(multi).await;
    let (status, _) = app
        .answer(
            &id,
            json!({"action": "accept", "content": {"t": ["a", "a"]}}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
}

#[tokio::test]
async fn one_server_cannot_flood_the_queue_and_ids_are_not_merged() {
    let app = spawn_with(Config {
        max_pending_per_server: 2,
        ..Config::default()
    })
    .await;
    app.open_ok(form_request(1)).await;
    app.open_ok(form_request(2)).await;
    let (_, body) = app.open(form_request(3), full_caps(), "2025-11-25").await;
    assert_eq!(body["response"]["error"]["code"], -32603, "{body}");
    assert!(
        body["response"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("limit 2")
    );

    // Another server still gets through.
    let res = app
        .post_json(
            "/api/v1/requests",
            &json!({"server": "other", "session": "s", "protocolVersion": "2025-11-25",
            "clientCapabilities": full_caps(), "request": form_request(3)}),
        )
        .await;
    assert_eq!(res.status(), StatusCode::CREATED);

    // Same id, different content: refused, not merged into the pending question.
    let mut changed = form_request(1);
    changed["params"]["message"] = json!("something else entirely");
    let (_, body) = app.open(changed, full_caps(), "2025-11-25").await;
    assert_eq!(body["response"]["error"]["code"], -32600, "{body}");
}

#[tokio::test]
async fn a_server_that_withdraws_each_question_at_once_cannot_fill_the_disk() {
    let app = spawn_with(Config {
        max_stored_bytes_per_server: 20_000,
        ..Config::default()
    })
    .await;
    let big = |id: i64| {
        let mut request = form_request(id);
        request["params"]["message"] = json!("x".repeat(6_000));
        request
    };
    // Each question is withdrawn at once, so none stays pending; their requests stay stored
    // until retention, and those of the last hour are bounded.
    for id in 1..=3 {
        let opened = app.open_ok(big(id)).await;
        app.post_json(&format!("/api/v1/requests/{opened}/cancel"), &json!({}))
            .await;
    }
    let (_, body) = app.open(big(4), full_caps(), "2025-11-25").await;
    assert_eq!(body["response"]["error"]["code"], -32603, "{body}");
    let message = body["response"]["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("limit 20000 bytes") && message.contains("max_stored_bytes_per_server"),
        "{message}"
    );
    // A small request from another server still gets through.
    let res = app
        .post_json(
            "/api/v1/requests",
            &json!({"server": "other", "session": "s", "protocolVersion": "2025-11-25",
            "clientCapabilities": full_caps(), "request": form_request(5)}),
        )
        .await;
    assert_eq!(res.status(), StatusCode::CREATED);
}

#[tokio::test]
async fn a_tools_long_listing_counts_against_what_its_server_may_store() {
    let app = spawn_with(Config {
        max_stored_bytes_per_server: 20_000,
        ..Config::default()
    })
    .await;
    // A small call of a tool whose listing (claimed description) is long: the listing is
    // stored with each question, so it counts.
    let open = |id: i64| {
        json!({"server": "test-server", "session": "s1", "tool": "send_mail",
            "protocolVersion": "2025-11-25", "clientCapabilities": full_caps(),
            "toolInfo": {"description": "x".repeat(6_000)},
            "request": {"jsonrpc": "2.0", "id": id, "method": "tools/call",
                        "params": {"name": "send_mail", "arguments": {}}}})
    };
    for id in 1..=3 {
        let res = app.post_json("/api/v1/requests", &open(id)).await;
        assert_eq!(res.status(), StatusCode::CREATED);
        let opened: Value = res.json().await.unwrap();
        let qid = opened["id"].as_str().unwrap();
        app.post_json(&format!("/api/v1/requests/{qid}/cancel"), &json!({}))
            .await;
    }
    let body: Value = app
        .post_json("/api/v1/requests", &open(4))
        .await
        .json()
        .await
        .unwrap();
    let message = body["response"]["error"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(message.contains("max_stored_bytes_per_server"), "{body}");
}

#[tokio::test]
async fn the_proxy_exits_with_its_server_and_withdraws_what_it_left_open() {
    let app = spawn_app().await;
    let script = json!([
        {"until": "initialize"}, init_result("2025-11-25"),
        {"send": {"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": {"message": "first", "requestedSchema": {"type": "object", "properties": {}}}}},
        {"send": {"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": {"message": "second", "requestedSchema": {"type": "object", "properties": {}}}}},
        {"sleep": 1.0},
        {"exit": 3},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    // A big number and an escape in _meta must reach the server exactly as written.
    let init = INIT.replace(
        r#""clientInfo""#,
        r#""_meta":{"n":123456789012345678901234567890,"s":"\u00e9"},"clientInfo""#,
    );
    proxy.send(&init).await;
    proxy.recv().await;
    let seen = proxy.server_received("initialize").await;
    assert!(
        seen.contains("123456789012345678901234567890") && seen.contains(r#""\u00e9""#),
        "{seen}"
    );

    // The host keeps stdin open; the proxy must still exit with the server's code.
    let status = tokio::time::timeout(Duration::from_secs(15), proxy.wait())
        .await
        .expect("the proxy exits");
    assert_eq!(status.code(), Some(3));

    let list: Value = app.get("/api/v1/questions").await.json().await.unwrap();
    let questions = list["questions"].as_array().unwrap();
    assert_eq!(
        questions.len(),
        1,
        "the duplicate id opened nothing: {list}"
    );
    assert_eq!(questions[0]["state"], "withdrawn", "{list}");
}
