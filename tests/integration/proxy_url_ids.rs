//! The `elicitationId`s the stdio proxy remembers of a server's elicitations: only while a
//! question needs one (asked, or accepted and waiting for the server's completion notice), and
//! never one longer than the limit, which is refused.

use std::time::Duration;

use serde_json::{Value, json};

use crate::helpers::*;
use crate::host::{Proxy, init_result};
use crate::url::{get_open, post_decline};

fn url_elicitation(id: i64, eid: &str, url: &str) -> Value {
    json!({"send": {"jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": {
        "mode": "url", "elicitationId": eid, "url": url, "message": "Connect your account"}}})
}

fn completion(eid: &str) -> Value {
    json!({"send": {"jsonrpc": "2.0", "method": "notifications/elicitation/complete",
        "params": {"elicitationId": eid}}})
}

/// Reads the host's lines until one contains `needle`; returns those read before it.
async fn host_lines_until(proxy: &mut Proxy, needle: &str) -> Vec<String> {
    let mut before = Vec::new();
    loop {
        let line = proxy.recv().await;
        if line.contains(needle) {
            return before;
        }
        before.push(line);
    }
}

/// A completion notice is the proxy's only for an elicitation the person accepted: the id of
/// one refused before any question opened, or declined, is forgotten (its notice is left to
/// the host like any other), while an accepted one's notice completes its question.
#[tokio::test]
async fn an_elicitation_id_is_remembered_only_while_its_question_needs_it() {
    let app = spawn_app().await;
    let script = json!([
        {"until": "initialize"}, init_result("2025-11-25"),
        url_elicitation(7, "e-refused", "javascript:alert(1)"),
        {"until_response": 7}, completion("e-refused"),
        url_elicitation(8, "e-declined", "https://mcp.example.com/connect?e=8"),
        {"until_response": 8}, completion("e-declined"),
        url_elicitation(9, "e-accepted", "https://mcp.example.com/connect?e=9"),
        {"until_response": 9}, completion("e-accepted"),
        {"send": {"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": "after-the-completion"}}},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    proxy.initialize().await;
    // Refused by the service (not an https/http URL): no question, nothing remembered.
    host_lines_until(&mut proxy, "e-refused").await;
    let refused = proxy.server_received(r#""id":7"#).await;
    assert!(refused.contains("-32602"), "{refused}");

    // URL questions are the person's: listed and answered in the browser only.
    let browser = app.login().await;
    let pending = || browser.get(format!("{}/api/v1/questions?state=pending", app.base));
    let id = first_pending_id(pending).await;
    let queue = app.html(&browser, "/").await;
    let res = post_decline(&app, &browser, &queue, &id).await;
    assert_eq!(res.status(), reqwest::StatusCode::SEE_OTHER);
    host_lines_until(&mut proxy, "e-declined").await;

    let id = first_pending_id(pending).await;
    let res = get_open(&app, &browser, &id).await;
    assert_eq!(res.status(), reqwest::StatusCode::SEE_OTHER);
    let before = host_lines_until(&mut proxy, "after-the-completion").await;
    assert!(
        !before.iter().any(|l| l.contains("e-accepted")),
        "the accepted elicitation's notice is the proxy's: {before:?}"
    );
    eventually(Duration::from_secs(10), || async {
        (app.question_as(&browser, &id).await["state"] == "completed").then_some(())
    })
    .await
    .expect("the accepted question was never completed");
}

/// An `elicitationId` over the limit gets the server an honest error, and no question.
#[tokio::test]
async fn an_elicitation_id_over_the_limit_is_refused() {
    let app = spawn_app().await;
    let long = "e".repeat(1025);
    let script = json!([
        {"until": "initialize"}, init_result("2025-11-25"),
        url_elicitation(7, &long, "https://mcp.example.com/connect"),
        {"until_response": 7},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    proxy.initialize().await;
    let answer: Value = serde_json::from_str(&proxy.server_received(r#""id":7"#).await).unwrap();
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("longer than 1024 bytes"), "{answer}");
    let list: Value = app.get("/api/v1/questions").await.json().await.unwrap();
    assert_eq!(list["questions"], json!([]), "{list}");
}
