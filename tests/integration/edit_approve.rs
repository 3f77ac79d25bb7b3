//! `POST /api/v1/questions/{id}/approvals` with an `edit`: a script edits the prompt and
//! approves it in one call; the edit is a new, audited revision and the approval is for it; a
//! malformed edit changes nothing.

use mcp_consent::sampling::RoutingConfig;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;
use crate::model_review::{FakeModel, app_with_models, hinted, phase_becomes};

async fn approve_with(app: &TestApp, id: &str, body: Value) -> (StatusCode, Value) {
    let res = app
        .post_json(&format!("/api/v1/questions/{id}/approvals"), &body)
        .await;
    let status = res.status();
    (status, res.json().await.unwrap_or(Value::Null))
}

async fn audit_actions(app: &TestApp) -> Vec<String> {
    let audit: Value = app.get("/api/v1/audit").await.json().await.unwrap();
    audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn one_call_edits_the_prompt_and_approves_the_edited_revision() {
    let fake = FakeModel::start().await;
    let app = app_with_models(&fake, RoutingConfig::default()).await;
    let id = app.open_ok(hinted(1, &["mini"])).await;
    let approval = format!("{id}:request:1");
    let (status, body) = approve_with(
        &app,
        &id,
        json!({"approvalId": approval, "decision": "approve", "edit": {"baseRevision": 1,
            "systemPrompt": "Be brief.", "texts": [{"message": 0, "block": 0, "text": "EDITED-77aa"}]}}),
    )
    .await;
    assert_eq!(
        (status, body["applied"].as_str()),
        (StatusCode::OK, Some("done")),
        "{body}"
    );
    let q = phase_becomes(&app, &id, "response_review").await;
    assert_eq!(q["revision"], 2, "{q}");
    // What ran is the edit, not the server's original.
    let call = &fake.calls()[0];
    assert_eq!(call["messages"][0]["content"], "Be brief.");
    assert_eq!(call["messages"][1]["content"], "EDITED-77aa");
    assert_eq!(fake.calls().len(), 1);
    // The edit is audited, then the approval (newest first).
    assert_eq!(audit_actions(&app).await, ["approved", "edited"]);
}

#[tokio::test]
async fn a_malformed_edit_leaves_the_question_unchanged() {
    let fake = FakeModel::start().await;
    let app = app_with_models(&fake, RoutingConfig::default()).await;
    let id = app.open_ok(hinted(2, &["mini"])).await;
    let approval = format!("{id}:request:1");
    let refused = [
        // No such message.
        json!({"approvalId": approval, "decision": "approve",
            "edit": {"baseRevision": 1, "texts": [{"message": 5, "block": 0, "text": "x"}]}}),
        // An edit only comes with approve.
        json!({"approvalId": approval, "decision": "reject",
            "edit": {"baseRevision": 1, "systemPrompt": "x"}}),
        // The edit's revision is not the approval's.
        json!({"approvalId": approval, "decision": "approve",
            "edit": {"baseRevision": 7, "systemPrompt": "x"}}),
    ];
    for body in refused {
        let (status, answer) = approve_with(&app, &id, body.clone()).await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body} → {answer}"
        );
        assert!(
            answer["errors"][0]["message"].as_str().is_some(),
            "a clear error: {answer}"
        );
    }
    // Not JSON of the right shape: 400 naming the problem.
    let (status, answer) = approve_with(
        &app,
        &id,
        json!({"approvalId": approval, "decision": "approve", "edit": {"baseRevision": 1, "texts": "nope"}}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert!(
        answer["error"]
            .as_str()
            .unwrap()
            .contains("invalid JSON body")
    );

    let q = app.question(&id).await;
    assert_eq!(
        (q["revision"].as_i64(), q["phase"].as_str()),
        (Some(1), Some("request_review")),
        "{q}"
    );
    assert_eq!(
        q["review"]["params"]["messages"][0]["content"]["text"],
        "SECRET-PROMPT-1f2e"
    );
    assert!(fake.calls().is_empty(), "no model ran");
    assert!(audit_actions(&app).await.is_empty(), "nothing audited");

    // The same approval still works afterwards, without an edit.
    let (status, body) = approve_with(
        &app,
        &id,
        json!({"approvalId": approval, "decision": "approve"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    phase_becomes(&app, &id, "response_review").await;
}
