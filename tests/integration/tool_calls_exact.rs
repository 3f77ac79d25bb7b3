//! The person's edit of a held call reaches the server exactly as the person made it, even
//! where it differs from the host's call only in digits a double cannot hold.

use serde_json::json;

use crate::helpers::*;
use crate::host::Proxy;
use crate::tool_calls::{calls_received, host_line, pending_call, person_answers, rules};

#[tokio::test]
async fn an_edit_that_differs_only_past_the_53rd_bit_is_what_the_server_gets() {
    let app = spawn_with(rules("default = \"ask\"\n")).await;
    let browser = app.login().await;
    let script = json!([
        {"until": "initialize"}, crate::host::init_result("2025-11-25"),
        {"until": "tools/call"}, {"reply": {"content": [{"type": "text", "text": "paid"}]}},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    proxy.initialized().await;
    // The host asks to pay account …790; the person corrects it to …789, which is the same
    // double, so a digest through doubles would take the edit for no edit.
    proxy
        .send(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"send_money","arguments":{"account":1234567890123456790,"eur":1000}}}"#)
        .await;
    let question = pending_call(&app, &browser).await;
    let id = question["id"].as_str().unwrap();
    let (status, body) = person_answers(
        &app,
        &browser,
        id,
        json!({"action": "accept", "arguments": {"account": 1234567890123456789_u64, "eur": 1000}}),
    )
    .await;
    assert_eq!(status, reqwest::StatusCode::OK, "{body}");
    assert_eq!(host_line(&mut proxy).await["id"], 7);
    let calls = calls_received(&proxy);
    assert_eq!(calls.len(), 1);
    let sent = proxy
        .server_log()
        .into_iter()
        .find(|l| l.contains("send_money"))
        .unwrap();
    assert!(sent.contains("1234567890123456789"), "{sent}");
    assert!(!sent.contains("1234567890123456790"), "{sent}");
}

#[tokio::test]
async fn an_edit_with_a_number_that_cannot_be_sent_as_typed_is_refused_and_the_call_waits() {
    let app = spawn_with(rules("default = \"ask\"\n")).await;
    let browser = app.login().await;
    let mut proxy = crate::tool_calls::started(&app, 0).await;
    proxy
        .send(&crate::tool_calls::call(8, "delete_file", "/tmp/x"))
        .await;
    let question = pending_call(&app, &browser).await;
    let id = question["id"].as_str().unwrap();
    let page = app.html(&browser, &format!("/questions/{id}")).await;
    let res = browser
        .post(format!("{}/questions/{id}/answer", app.base))
        .form(&[
            ("csrf", csrf_of(&page).as_str()),
            ("action", "accept"),
            (
                "arguments",
                r#"{"path":"/tmp/x","n":123456789012345678901234567890}"#,
            ),
        ])
        .send()
        .await
        .unwrap();
    let body = res.text().await.unwrap();
    assert!(body.contains("cannot be sent exactly as typed"), "{body}");
    assert_eq!(app.question_as(&browser, id).await["state"], "pending");
    // The same edit through the API is refused too, rather than decided rounded.
    let csrf = csrf_of(&app.html(&browser, &format!("/questions/{id}")).await);
    let res = browser
        .post(format!("{}/api/v1/questions/{id}/answer", app.base))
        .header("X-CSRF-Token", csrf)
        .header("Content-Type", "application/json")
        .body(r#"{"action":"accept","arguments":{"path":"/tmp/x","n":123456789012345678901234567890}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), reqwest::StatusCode::BAD_REQUEST);
    let body = res.text().await.unwrap();
    assert!(body.contains("cannot be held exactly as written"), "{body}");
    assert_eq!(app.question_as(&browser, id).await["state"], "pending");
    assert!(calls_received(&proxy).is_empty());
}

/// A held call the person edited, answered by a 2026-07-28 server with a round that is partly
/// the host's (`roots/list`): the host retries the call as it sent it, and the retry reaches
/// the server with the person's edit and the person's answer.
#[tokio::test]
async fn the_retry_of_an_edited_call_goes_on_with_the_edit() {
    let app = spawn_with(rules("default = \"ask\"\n")).await;
    let browser = app.login().await;
    let round = json!({"resultType": "input_required", "inputRequests": {
        "confirm": {"method": "elicitation/create", "params": {"mode": "form", "message": "Delete it?",
            "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}}},
        "roots": {"method": "roots/list"}}});
    let script = json!([
        {"until": "tools/call"}, {"reply": round},
        {"until": "tools/call"}, {"reply": {"content": [{"type": "text", "text": "deleted"}], "resultType": "complete"}},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "delete_file", "arguments": {"path": "/home/me/everything"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
    proxy.send(&call.to_string()).await;
    let held = pending_call(&app, &browser).await;
    let (status, body) = person_answers(
        &app,
        &browser,
        held["id"].as_str().unwrap(),
        json!({"action": "accept", "arguments": {"path": "/home/me/tmp.txt"}}),
    )
    .await;
    assert_eq!(status, reqwest::StatusCode::OK, "{body}");
    let form = crate::host::pending_question(&app).await;
    app.answer(
        form["id"].as_str().unwrap(),
        json!({"action": "accept", "content": {"ok": true}}),
    )
    .await;
    let handed = host_line(&mut proxy).await;
    let state = handed["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_owned();

    let mut retry = call.clone();
    retry["id"] = json!(3);
    retry["params"]["inputResponses"] = json!({"roots": {"roots": []}});
    retry["params"]["requestState"] = json!(state);
    proxy.send(&retry.to_string()).await;
    let done = host_line(&mut proxy).await;
    assert_eq!(done["id"], 3, "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "deleted", "{done}");
    let calls = calls_received(&proxy);
    assert_eq!(calls.len(), 2, "{calls:?}");
    for sent in &calls {
        assert_eq!(
            sent["params"]["arguments"]["path"], "/home/me/tmp.txt",
            "{sent}"
        );
    }
    assert_eq!(
        calls[1]["params"]["inputResponses"]["confirm"],
        json!({"action": "accept", "content": {"ok": true}})
    );
}
