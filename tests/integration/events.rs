//! Events are summaries only: a question whose message, schema, URL and answer carry marker
//! strings goes through its whole life, and no event carries any marker.

use std::time::Duration;

use serde_json::{Value, json};

use crate::helpers::*;

const MARKERS: &[&str] = &[
    "MSG-7c1e",
    "PROP-44ab",
    "TITLE-90fd",
    "URLPATH-3b2a",
    "ANSWER-e0c5",
    "PROMPT-5d6f",
    "REPLY-aa17",
];

#[tokio::test]
async fn no_event_carries_request_or_answer_content() {
    let app = spawn_app().await;
    // The person's stream: it carries every question's events, the URL question's too.
    let browser = app.login().await;
    let mut stream = browser
        .get(format!("{}/api/v1/events", app.base))
        .send()
        .await
        .unwrap();
    let mut seen = String::new();

    let form = json!({"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": {
        "message": "Tell us MSG-7c1e",
        "requestedSchema": {"type": "object", "properties": {"PROP-44ab": {"type": "string", "title": "TITLE-90fd"}}}}});
    let form_id = app.open_ok(form).await;
    app.answer(
        &form_id,
        json!({"action": "accept", "content": {"PROP-44ab": "ANSWER-e0c5"}}),
    )
    .await;

    let url = json!({"jsonrpc": "2.0", "id": 2, "method": "elicitation/create", "params": {
        "mode": "url", "elicitationId": "e-marker", "url": "https://example.org/URLPATH-3b2a", "message": "MSG-7c1e"}});
    let url_id = app.open_ok(url).await;
    browser
        .get(format!("{}/questions/{url_id}/open", app.base))
        .send()
        .await
        .unwrap();
    app.post_json("/api/v1/elicitations/e-marker/complete", &json!({}))
        .await;

    let sampling_id = app.open_ok(sampling_request(3, "PROMPT-5d6f")).await;
    let result = json!({"role": "assistant", "content": {"type": "text", "text": "REPLY-aa17"}, "model": "m"});
    app.answer(&sampling_id, json!({"action": "accept", "result": result}))
        .await;
    let withdrawn = app.open_ok(sampling_request(4, "PROMPT-5d6f")).await;
    app.post_json(&format!("/api/v1/requests/{withdrawn}/cancel"), &json!({}))
        .await;

    // opened + accepted (form), opened + accepted + completed (url), opened + accepted and
    // opened + withdrawn (sampling): 9 events.
    let mut events = Vec::new();
    while events.len() < 9 {
        let chunk = tokio::time::timeout(Duration::from_secs(5), stream.chunk())
            .await
            .expect("events arrive")
            .unwrap()
            .unwrap();
        seen.push_str(&String::from_utf8_lossy(&chunk));
        events = seen
            .split("\n\n")
            .filter_map(|frame| frame.lines().find_map(|l| l.strip_prefix("data: ")))
            .map(|data| serde_json::from_str::<Value>(data).unwrap())
            .collect();
    }
    for marker in MARKERS {
        assert!(!seen.contains(marker), "an event leaked {marker}: {seen}");
    }
    let states: Vec<(&str, &str)> = events
        .iter()
        .map(|e| (e["id"].as_str().unwrap(), e["state"].as_str().unwrap()))
        .collect();
    assert!(states.contains(&(form_id.as_str(), "accepted")));
    assert!(states.contains(&(url_id.as_str(), "completed")));
    assert!(states.contains(&(withdrawn.as_str(), "withdrawn")));
    for e in &events {
        let keys: Vec<&str> = e.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "id",
                "kind",
                "server",
                "tool",
                "audience",
                "state",
                "phase",
                "expiresAt",
                "at"
            ]
        );
    }
}

#[tokio::test]
async fn the_tokens_stream_leaves_out_the_persons_questions_as_its_lists_do() {
    let app = spawn_app().await;
    let mut stream = app.get("/api/v1/events").await;
    // A URL question is always the person's; a plain form is for agents too.
    let url = json!({"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": {
        "mode": "url", "elicitationId": "e-1", "url": "https://example.org/x", "message": "Sign in"}});
    let person_only = app.open_ok(url).await;
    let form = json!({"jsonrpc": "2.0", "id": 2, "method": "elicitation/create", "params": {
        "message": "Your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}});
    let for_agents = app.open_ok(form).await;
    // Events arrive in order: once the later question's event is in, the earlier one's would be.
    let mut seen = String::new();
    while !seen.contains(&for_agents) {
        let chunk = tokio::time::timeout(Duration::from_secs(5), stream.chunk())
            .await
            .expect("events arrive")
            .unwrap()
            .unwrap();
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(!seen.contains(&person_only), "{seen}");
}
