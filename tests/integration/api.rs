//! The JSON API contract: opening, long-polling, answering exactly once, errors and limits.

use mcp_consent::config::Config;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

#[tokio::test]
async fn a_form_answer_reaches_the_server_once_with_defaults_applied() {
    let app = spawn_app().await;
    let id = app.open_ok(form_request(7)).await;

    // Pending until answered.
    let (status, body) = app.response(&id, 0).await;
    assert_eq!(
        (status, body["state"].as_str()),
        (StatusCode::ACCEPTED, Some("pending"))
    );

    let (status, body) = app
        .answer(&id, json!({"action": "accept", "content": {"name": "Ada"}}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["state"], "accepted");

    let (status, body) = app.response(&id, 0).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body["response"],
        json!({"jsonrpc": "2.0", "id": 7, "result": {"action": "accept", "content": {"name": "Ada", "age": 30, "color": "#f00"}}})
    );

    // A second answer is refused and changes nothing.
    let (status, _) = app.answer(&id, json!({"action": "decline"})).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(
        app.response(&id, 0).await.1["response"]["result"]["action"],
        "accept"
    );
}

#[tokio::test]
async fn racing_answers_produce_exactly_one_response() {
    let app = spawn_app().await;
    let id = app.open_ok(sampling_request(1, "race")).await;
    let mut tasks = Vec::new();
    for i in 0..12 {
        let (client, base, token, id) = (
            app.client.clone(),
            app.base.clone(),
            app.token.clone(),
            id.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let answer = if i % 2 == 0 {
                json!({"action": "accept", "result": {"role": "assistant", "content": {"type": "text", "text": format!("answer {i}")}, "model": "m"}})
            } else {
                json!({"action": "decline"})
            };
            client
                .post(format!("{base}/api/v1/questions/{id}/answer"))
                .bearer_auth(token)
                .json(&answer)
                .send()
                .await
                .unwrap()
                .status()
        }));
    }
    let mut statuses = Vec::new();
    for t in tasks {
        statuses.push(t.await.unwrap());
    }
    assert_eq!(
        statuses.iter().filter(|s| **s == StatusCode::OK).count(),
        1,
        "{statuses:?}"
    );
    assert_eq!(
        statuses
            .iter()
            .filter(|s| **s == StatusCode::CONFLICT)
            .count(),
        11,
        "{statuses:?}"
    );
}

#[tokio::test]
async fn a_declined_sampling_request_gets_error_minus_one() {
    let app = spawn_app().await;
    let id = app.open_ok(sampling_request(3, "hello")).await;
    app.answer(&id, json!({"action": "decline"})).await;
    let (_, body) = app.response(&id, 0).await;
    let error = &body["response"]["error"];
    assert_eq!(error["code"], -1, "{body}");
    assert_eq!(error["message"], "User rejected sampling request");
    assert_eq!(error["data"]["action"], "decline");
    assert_eq!(body["response"]["id"], 3);
}

#[tokio::test]
async fn a_malformed_request_is_refused_with_32602_and_opens_nothing() {
    let app = spawn_app().await;
    let tools_without_capability = json!({"jsonrpc": "2.0", "id": 4, "method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "weather?"}}], "maxTokens": 100,
        "tools": [{"name": "get_weather", "inputSchema": {"type": "object"}}]}});
    let (status, body) = app
        .open(
            tools_without_capability,
            json!({"sampling": {}, "elicitation": {}}),
            "2025-11-25",
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["response"]["error"]["code"], -32602, "{body}");
    assert!(
        body["response"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("sampling.tools")
    );

    let missing = json!({"jsonrpc": "2.0", "id": 5, "method": "sampling/createMessage", "params": {"messages": [
        {"role": "user", "content": {"type": "text", "text": "x"}},
        {"role": "assistant", "content": {"type": "tool_use", "id": "t1", "name": "w", "input": {}}},
        {"role": "user", "content": {"type": "text", "text": "thanks"}}], "maxTokens": 10, "tools": [{"name": "w", "inputSchema": {"type": "object"}}]}});
    let (_, body) = app.open(missing, full_caps(), "2025-11-25").await;
    assert_eq!(
        body["response"]["error"]["message"],
        "Tool result missing in request"
    );

    let null_id = json!({"jsonrpc": "2.0", "id": null, "method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}});
    let (_, body) = app.open(null_id, full_caps(), "2025-11-25").await;
    assert_eq!(body["response"]["error"]["code"], -32600);
    assert!(body["response"].get("id").is_none());

    let list: Value = app.get("/api/v1/questions").await.json().await.unwrap();
    assert_eq!(list["questions"], json!([]));
}

#[tokio::test]
async fn an_invalid_answer_is_refused_and_the_question_stays_open() {
    let app = spawn_app().await;
    let id = app.open_ok(form_request(8)).await;
    let (status, body) = app
        .answer(
            &id,
            json!({"action": "accept", "content": {"name": "A", "age": 12.5}}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let fields: Vec<&str> = body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert!(
        fields.contains(&"name") && fields.contains(&"age"),
        "{body}"
    );
    assert_eq!(app.question(&id).await["state"], "pending");

    // A sampling result without role or model is refused too.
    let id = app.open_ok(sampling_request(9, "x")).await;
    let (status, body) = app
        .answer(
            &id,
            json!({"action": "accept", "result": {"content": {"type": "text", "text": "hi"}}}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(app.question(&id).await["state"], "pending");
}

#[tokio::test]
async fn an_unanswered_question_expires_with_32603_naming_the_expiry() {
    let app = spawn_with(Config {
        question_timeout_secs: 1,
        ..Config::default()
    })
    .await;
    let id = app.open_ok(sampling_request(11, "slow")).await;
    let (status, body) = app.response(&id, 5).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let error = &body["response"]["error"];
    assert_eq!(error["code"], -32603);
    assert!(
        error["message"].as_str().unwrap().contains("expired"),
        "{error}"
    );
    assert!(
        error["message"].as_str().unwrap().contains("1 second"),
        "{error}"
    );
    assert_eq!(app.question(&id).await["state"], "expired");
    let (status, _) = app.answer(&id, json!({"action": "decline"})).await;
    assert_eq!(status, StatusCode::CONFLICT);
}

#[tokio::test]
async fn cancel_withdraws_without_a_response_and_is_idempotent() {
    let app = spawn_app().await;
    let id = app.open_ok(form_request(12)).await;
    for _ in 0..2 {
        let res = app
            .post_json(&format!("/api/v1/requests/{id}/cancel"), &json!({}))
            .await;
        assert_eq!(res.status(), StatusCode::OK);
    }
    let (status, body) = app.response(&id, 0).await;
    assert_eq!(
        (status, body["state"].as_str()),
        (StatusCode::OK, Some("withdrawn"))
    );
    assert!(body.get("response").is_none());
    let res = app
        .post_json("/api/v1/requests/no-such-id/cancel", &json!({}))
        .await;
    assert_eq!(res.status(), StatusCode::OK);
}

#[tokio::test]
async fn reposting_a_pending_request_returns_the_same_question() {
    let app = spawn_app().await;
    let first = app.open_ok(form_request(13)).await;
    let (status, body) = app.open(form_request(13), full_caps(), "2025-11-25").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["id"], first.as_str());
}

#[tokio::test]
async fn credentials_limits_and_unknown_ids() {
    let app = spawn_with(Config {
        max_request_bytes: 4096,
        ..Config::default()
    })
    .await;
    let url = format!("{}/api/v1/questions", app.base);
    assert_eq!(
        app.client.get(&url).send().await.unwrap().status(),
        StatusCode::UNAUTHORIZED
    );
    let wrong = app
        .client
        .get(&url)
        .bearer_auth("not-the-token")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);

    assert_eq!(
        app.get("/api/v1/questions/unknown").await.status(),
        StatusCode::NOT_FOUND
    );
    let (status, _) = app.answer("unknown", json!({"action": "decline"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let big = sampling_request(1, &"x".repeat(8000));
    let (status, body) = app.open(big, full_caps(), "2025-11-25").await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert!(body["error"].as_str().unwrap().contains("4096"));

    // Other bodies are limited to 1 MiB.
    let id = app.open_ok(form_request(1)).await;
    let huge = json!({"action": "accept", "content": {"name": "y".repeat(1_100_000)}});
    let (status, _) = app.answer(&id, huge).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn forms_asking_for_secrets_are_for_humans_only() {
    let app = spawn_app().await;
    let secret = json!({"jsonrpc": "2.0", "id": 21, "method": "elicitation/create", "params": {
        "message": "Enter your OpenAI API key",
        "requestedSchema": {"type": "object", "properties": {"apiKey": {"type": "string"}}}}});
    let id = app.open_ok(secret).await;
    assert_person_only(&app, &id).await;
    let (status, _) = app.answer(&id, json!({"action": "decline"})).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

/// The API hides the question `id` from scripts and refuses to answer it.
async fn assert_person_only(app: &TestApp, id: &str) {
    let list: Value = app
        .get("/api/v1/questions?state=pending")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(list["questions"], json!([]));
    assert_eq!(
        app.get(&format!("/api/v1/questions/{id}")).await.status(),
        StatusCode::FORBIDDEN
    );
    let (status, _) = app
        .answer(id, json!({"action": "accept", "content": {"x": "y"}}))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn look_alike_letters_do_not_hide_a_password_field_from_the_person_only_rule() {
    let app = spawn_app().await;
    // "pаssword" with a Cyrillic "а", and a zero-width space in the message's "PIN".
    let disguised = json!({"jsonrpc": "2.0", "id": 22, "method": "elicitation/create", "params": {
        "message": "Sign in",
        "requestedSchema": {"type": "object", "properties": {"x": {"type": "string", "title": "p\u{0430}ssword"}}}}});
    let id = app.open_ok(disguised).await;
    assert_person_only(&app, &id).await;
    let in_message = json!({"jsonrpc": "2.0", "id": 23, "method": "elicitation/create", "params": {
        "message": "Type your bank P\u{200b}IN below",
        "requestedSchema": {"type": "object", "properties": {"x": {"type": "string"}}}}});
    let id = app.open_ok(in_message).await;
    assert_person_only(&app, &id).await;
}

#[tokio::test]
async fn forms_person_only_makes_a_harmless_form_person_only() {
    let app = spawn_app().await;
    let id = app.open_ok(form_request(24)).await;
    assert_eq!(app.question(&id).await["audience"], "agent");

    let app = spawn_with(Config {
        forms_person_only: true,
        ..Config::default()
    })
    .await;
    let id = app.open_ok(form_request(25)).await;
    assert_person_only(&app, &id).await;
}

#[tokio::test]
async fn a_pending_question_survives_a_restart_and_can_still_be_answered() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let app = spawn_on(Config::default(), &state).await;
    let id = app.open_ok(sampling_request(30, "before restart")).await;
    let token = app.token.clone();
    app.stop().await;

    let app = spawn_on(Config::default(), &state).await;
    assert_eq!(app.token, token, "the API token is kept across restarts");
    assert_eq!(app.question(&id).await["state"], "pending");
    let result = json!({"role": "assistant", "content": {"type": "text", "text": "after"}, "model": "person"});
    let (status, _) = app
        .answer(&id, json!({"action": "accept", "result": result}))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(app.response(&id, 0).await.1["response"]["result"], result);
}

#[tokio::test]
async fn events_carry_summaries_only() {
    let app = spawn_app().await;
    let mut res = app.get("/api/v1/events").await;
    assert_eq!(res.status(), StatusCode::OK);
    let id = app
        .open_ok(sampling_request(40, "MARKER-PROMPT-7f3a"))
        .await;
    let mut seen = String::new();
    while !seen.contains("event: question") {
        let chunk = tokio::time::timeout(std::time::Duration::from_secs(5), res.chunk())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(seen.contains(&id));
    assert!(!seen.contains("MARKER-PROMPT-7f3a"));
}

#[tokio::test]
async fn a_tool_decision_report_holds_only_bounded_well_formed_fields_dated_by_the_service() {
    let app = spawn_app().await;
    let digest = "0".repeat(64);
    let report = |rule: &str, tool: &str, at: &str| {
        json!({"server": "s", "allowed": 1, "denied": 0, "decisions": [
            {"tool": tool, "decision": "allowed", "rule": rule, "argumentsDigest": digest, "at": at}]})
    };
    let now = chrono::Utc::now().to_rfc3339();
    // A rule that names no rule, or a long one: refused, nothing recorded.
    for bad in ["x".repeat(2000), "rule:anything".to_owned()] {
        let res = app
            .post_json("/api/v1/tools/decisions", &report(&bad, "t", &now))
            .await;
        assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    }
    // A long tool name is kept cut; a decision dated a year back is dated within a day.
    let res = app
        .post_json(
            "/api/v1/tools/decisions",
            &report("tools.default", &"t".repeat(2000), "2025-01-01T00:00:00Z"),
        )
        .await;
    assert_eq!(res.status(), StatusCode::OK);
    let log: Value = app.get("/api/v1/audit").await.json().await.unwrap();
    let entries = log["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{log}");
    let tool = entries[0]["tool"].as_str().unwrap();
    assert_eq!(tool.chars().count(), 128);
    assert!(tool.ends_with('…'));
    let at = chrono::DateTime::parse_from_rfc3339(entries[0]["at"].as_str().unwrap()).unwrap();
    assert!(
        chrono::Utc::now() - at.with_timezone(&chrono::Utc)
            <= chrono::TimeDelta::minutes(24 * 60 + 1)
    );
}
