//! What is left of an answer after the prune, and why a form is for the person: a
//! hand-written sampling answer's `model` text (of any length) does not survive in the audit,
//! and a person-only form says, on its page and in the API's 403, which words made it so.

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;

fn raw_files_contain(state: &std::path::Path, marker: &str) -> Vec<String> {
    ["broker.db", "broker.db-wal", "broker.db-shm"]
        .into_iter()
        .filter(|f| {
            std::fs::read(state.join("broker").join(f))
                .map(|bytes| bytes.windows(marker.len()).any(|w| w == marker.as_bytes()))
                .unwrap_or(false)
        })
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn a_hand_written_model_name_does_not_survive_the_prune() {
    let app = spawn_app().await;
    let marker = "model-marker-0c7e";
    let model = format!("{marker}{}", "x".repeat(300_000));
    let id = app.open_ok(sampling_request(1, "hello")).await;
    let browser = app.login().await;
    let csrf = csrf_of(&app.html(&browser, &format!("/questions/{id}")).await);
    let res = browser
        .post(format!("{}/api/v1/questions/{id}/answer", app.base))
        .header("X-CSRF-Token", csrf)
        .json(&json!({"action": "accept", "result": {"role": "assistant",
            "content": {"type": "text", "text": "hi"}, "model": model}}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        res.status(),
        StatusCode::OK,
        "{}",
        res.text().await.unwrap()
    );
    let (status, _) = app.response(&id, 5).await;
    assert_eq!(status, StatusCode::OK);

    let db = mcp_consent::db::Db::open(&app.state.join("broker/broker.db")).unwrap();
    let policy = mcp_consent::config::Retention {
        max_age_days: 30,
        max_terminal: 0,
        interval_secs: 3600,
        audit_max_age_days: 365,
    };
    let report = mcp_consent::jobs::retention::prune_once(
        &db,
        &policy,
        chrono::Utc::now().timestamp_millis(),
    )
    .await
    .unwrap();
    assert_eq!(report.by_count, 1);
    assert_eq!(raw_files_contain(&app.state, marker), Vec::<String>::new());
    // The decision itself is still audited, by digest.
    let page = app.html(&browser, "/audit").await;
    assert!(
        page.contains(&id[..8]) || page.contains("answered"),
        "{page}"
    );
}

#[tokio::test]
async fn a_person_only_form_says_which_words_made_it_so() {
    let app = spawn_app().await;
    let id = app
        .open_ok(
            json!({"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": {
            "message": "Pick a colour",
            "requestedSchema": {"type": "object", "properties": {"colour": {"type": "string",
                "description": "We will never ask for your PIN"}}}}}),
        )
        .await;
    let res = app
        .post_json(
            &format!("/api/v1/questions/{id}/answer"),
            &json!({"action": "accept", "content": {"colour": "red"}}),
        )
        .await;
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    let error = res.json::<serde_json::Value>().await.unwrap()["error"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(error.contains(r#""pin""#), "{error}");
    assert!(
        error.contains(r#"description of field "colour""#),
        "{error}"
    );
    let shown = app.get(&format!("/api/v1/questions/{id}")).await;
    assert_eq!(shown.status(), StatusCode::FORBIDDEN);
    assert!(shown.text().await.unwrap().contains("pin"));

    let browser = app.login().await;
    let page = app.html(&browser, &format!("/questions/{id}")).await;
    assert!(page.contains("Person-only because of “pin”"), "{page}");
    assert!(page.contains("colour"), "{page}");
}
