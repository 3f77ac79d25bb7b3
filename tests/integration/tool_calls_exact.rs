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
    assert!(calls_received(&proxy).is_empty());
}
