//! A question says through which door it was opened: a proxy on this computer asks through
//! the owner-only socket, anyone else with the token over TCP. A tool call that came over TCP
//! is flagged on its page before the person allows or grants it, and only the door a question
//! was opened through may read its response or withdraw it.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

fn tool_call(id: i64) -> Value {
    json!({
        "server": "github",
        "session": "s1",
        "tool": "merge_pr",
        "protocolVersion": "2025-11-25",
        "clientCapabilities": {},
        "request": {"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "merge_pr", "arguments": {"pr": 7}}},
    })
}

#[tokio::test]
async fn a_tool_call_sent_with_the_token_over_tcp_is_flagged_and_a_proxys_is_not() {
    let app = spawn_app().await;
    let browser = app.login().await;
    let over_tcp = app.post_json("/api/v1/requests", &tool_call(1)).await;
    assert_eq!(over_tcp.status(), StatusCode::CREATED);
    let over_tcp: Value = over_tcp.json().await.unwrap();
    let over_socket = app
        .post_json_over_socket("/api/v1/requests", &tool_call(2))
        .await;
    assert_eq!(over_socket.status(), StatusCode::CREATED);
    let over_socket: Value = over_socket.json().await.unwrap();

    let warning = "came over the network with the API token";
    let tcp_id = over_tcp["id"].as_str().unwrap();
    let page = app.html(&browser, &format!("/questions/{tcp_id}")).await;
    assert!(page.contains(warning), "{page}");
    assert_eq!(
        app.question_as(&browser, tcp_id).await["openedVia"],
        "token"
    );

    let socket_id = over_socket["id"].as_str().unwrap();
    let page = app.html(&browser, &format!("/questions/{socket_id}")).await;
    assert!(page.contains("merge_pr"), "{page}");
    assert!(!page.contains(warning), "{page}");
    assert_eq!(
        app.question_as(&browser, socket_id).await["openedVia"],
        "cli"
    );
}

#[tokio::test]
async fn only_the_door_a_question_was_opened_through_reads_its_answer_or_withdraws_it() {
    let app = spawn_app().await;
    let browser = app.login().await;
    let opened: Value = app
        .post_json_over_socket("/api/v1/requests", &tool_call(3))
        .await
        .json()
        .await
        .unwrap();
    let id = opened["id"].as_str().unwrap();
    // Another holder of the token, over TCP, cannot withdraw it: it stays pending.
    let res = app
        .post_json(&format!("/api/v1/requests/{id}/cancel"), &json!({}))
        .await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(app.question_as(&browser, id).await["state"], "pending");

    let (status, body) = crate::tool_calls::person_answers(
        &app,
        &browser,
        id,
        json!({"action": "accept", "arguments": {"pr": 8}}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // Nor read the person's decision (and its edited arguments).
    let res = app.get(&format!("/api/v1/requests/{id}/response")).await;
    assert_eq!(res.status(), StatusCode::NOT_FOUND);
    assert!(!res.text().await.unwrap().contains("\"pr\""));
    // The proxy that asked, on the socket, gets it.
    let res = app
        .get_over_socket(&format!("/api/v1/requests/{id}/response"))
        .await;
    assert_eq!(res.status(), StatusCode::OK);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["response"]["result"]["arguments"]["pr"], 8, "{body}");
}

/// Over TCP, where the token may be a script's or another machine's, the audit says nothing
/// of how the person decided a question opened through another door (not even its action),
/// and answering one is refused as the person's before its state is named; of the token's own
/// questions it gives no digest, which would give a short answer back to whoever tries every
/// value. The owner's socket gets it all.
#[tokio::test]
async fn the_audit_over_tcp_tells_nothing_of_the_persons_decisions_on_another_doors_questions() {
    let app = spawn_app().await;
    let browser = app.login().await;
    let opened: Value = app
        .post_json_over_socket("/api/v1/requests", &tool_call(4))
        .await
        .json()
        .await
        .unwrap();
    let id = opened["id"].as_str().unwrap();
    let (status, body) = crate::tool_calls::person_answers(
        &app,
        &browser,
        id,
        json!({"action": "accept", "arguments": {"pr": 1234}}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let own = app.open_ok(form_request(5)).await;
    app.answer(
        &own,
        json!({"action": "accept", "content": {"name": "Ada"}}),
    )
    .await;
    let entry = |audit: &Value, id: &str| {
        audit["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["questionId"] == id)
            .cloned()
    };
    let over_tcp: Value = app.get("/api/v1/audit").await.json().await.unwrap();
    assert_eq!(entry(&over_tcp, id), None, "{over_tcp}");
    let mine = entry(&over_tcp, &own).expect("the token's own question is audited");
    assert!(
        mine["responseDigest"].is_null() && mine["requestDigest"].is_null(),
        "{mine}"
    );
    let (status, body) = app.answer(id, json!({"action": "decline"})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(!body.to_string().contains("accepted"), "{body}");
    let over_socket: Value = app
        .get_over_socket("/api/v1/audit")
        .await
        .json()
        .await
        .unwrap();
    let full = entry(&over_socket, id).expect("the socket sees every entry");
    assert_eq!(full["action"], "tool_edited", "{full}");
    assert!(full["responseDigest"].is_string(), "{over_socket}");
}

/// A form that came with the token over TCP says so on its page, as a tool call does: a form
/// asking for a secret under a real server's name could be anyone's with the token.
#[tokio::test]
async fn a_form_sent_with_the_token_over_tcp_says_so_and_a_proxys_does_not() {
    let app = spawn_app().await;
    let browser = app.login().await;
    let form = |id: i64| {
        json!({"server": "github", "session": "s1", "protocolVersion": "2025-11-25",
            "clientCapabilities": full_caps(), "request": form_request(id)})
    };
    let warning = "This question came over the network with the API token";
    let page_of = |res: reqwest::Response| {
        let (app, browser) = (&app, &browser);
        async move {
            let opened: Value = res.json().await.unwrap();
            let id = opened["id"].as_str().unwrap().to_owned();
            app.html(browser, &format!("/questions/{id}")).await
        }
    };
    let page = page_of(app.post_json("/api/v1/requests", &form(1)).await).await;
    assert!(page.contains(warning), "{page}");
    let page = page_of(
        app.post_json_over_socket("/api/v1/requests", &form(2))
            .await,
    )
    .await;
    assert!(!page.contains(warning), "{page}");
}
