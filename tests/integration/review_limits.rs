//! What limits the model review without a person: auto-approve rules (until they expire; with
//! no permitted route a rule refuses with its own code) and budgets (a tool loop is one
//! conversation under the round limit; the daily cost limit per server).

use mcp_consent::config::Config;
use mcp_consent::sampling::RoutingConfig;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;
use crate::model_review::{
    FakeModel, app_with_models, approve_request, decide, hinted, model, phase_becomes,
    weather_round,
};

#[tokio::test]
async fn an_auto_approve_rule_runs_the_request_step_until_it_expires() {
    let fake = FakeModel::start().await;
    let app = app_with_models(&fake, RoutingConfig::default()).await;
    let browser = app.login().await;
    let page = app.html(&browser, "/rules").await;
    let csrf = csrf_of(&page);
    let res = browser
        .post(format!("{}/rules", app.base))
        .form(&[
            ("csrf", csrf.as_str()),
            ("server", "test-server"),
            ("scope", "request"),
            ("reason", "trusted test server"),
            ("days", "7"),
            // The rule is made before the server first asks.
            ("confirm_unknown", "1"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    // A script cannot make rules for itself.
    let res = app
        .post_json(
            "/api/v1/rules",
            &json!({"server": "test-server", "scope": "both", "reason": "me"}),
        )
        .await;
    assert_eq!(res.status(), StatusCode::FORBIDDEN);

    let id = app.open_ok(hinted(6, &[])).await;
    phase_becomes(&app, &id, "response_review").await;
    assert_eq!(
        app.response(&id, 0).await.0,
        StatusCode::ACCEPTED,
        "scope request: the response still waits"
    );
    let audit: Value = app.get("/api/v1/audit").await.json().await.unwrap();
    assert_eq!(audit["entries"][0]["action"], "auto_approved");
    assert!(
        audit["entries"][0]["actor"]
            .as_str()
            .unwrap()
            .starts_with("rule:")
    );

    // Expired: the next request waits for the person.
    let db = mcp_consent::db::Db::open(&app.state.join("broker/broker.db")).unwrap();
    db.write(|c| {
        use diesel::RunQueryDsl;
        diesel::sql_query("UPDATE auto_approve_rules SET expires_at = 0").execute(c)?;
        Ok(())
    })
    .await
    .unwrap();
    // No wait needed: the broker applies rules inside the open (the `opened` hook is awaited
    // before `POST /api/v1/requests` answers), so an approval would already show in the phase.
    let id = app.open_ok(hinted(7, &[])).await;
    assert_eq!(app.question(&id).await["phase"], "request_review");
    assert_eq!(fake.calls().len(), 1);
}

/// Runs a round to its delivered tool_use; returns the assistant message it delivered.
async fn deliver_round(app: &TestApp, request: Value) -> Value {
    let id = app.open_ok(request).await;
    let q = app.question(&id).await;
    decide(
        app,
        &id,
        q["review"]["requestApprovalId"].as_str().unwrap(),
        "approve",
        None,
    )
    .await;
    let q = phase_becomes(app, &id, "tool_use_review").await;
    let (status, _) = decide(
        app,
        &id,
        q["review"]["responseApprovalId"].as_str().unwrap(),
        "send",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let result = app.response(&id, 0).await.1["response"]["result"].clone();
    json!({"role": "assistant", "content": result["content"]})
}

fn tool_result_for(assistant: &Value) -> Value {
    let id = assistant["content"][0]["id"].as_str().unwrap().to_owned();
    json!({"role": "user", "content": [{"type": "tool_result", "toolUseId": id, "content": [{"type": "text", "text": "18C"}]}]})
}

#[tokio::test]
async fn a_tool_loop_is_one_conversation_and_its_round_limit_refuses_the_next_round() {
    let fake = FakeModel::start().await;
    let mut config = Config {
        models: vec![model("big-smart", &fake.base, true, 3.0)],
        ..Config::default()
    };
    config.budgets.max_rounds_per_conversation = 2;
    let app = spawn_with(config).await;

    let first = deliver_round(&app, weather_round(1, &[])).await;
    let history = vec![first.clone(), tool_result_for(&first)];
    let second = deliver_round(&app, weather_round(2, &history)).await;

    // The third round continues the same conversation: over the limit of 2 rounds.
    let mut history = history;
    history.push(second.clone());
    history.push(tool_result_for(&second));
    let (_, body) = app
        .open(weather_round(3, &history), full_caps(), "2025-11-25")
        .await;
    let error = &body["response"]["error"];
    assert_eq!(error["code"], -32603, "{body}");
    assert_eq!(
        error["data"],
        json!({"reason": "budget", "limit": "max_rounds_per_conversation"})
    );
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("max_rounds_per_conversation")
    );

    // A fresh request (no tool results) starts a new conversation and is not refused.
    app.open_ok(weather_round(4, &[])).await;
    let metrics = app.html(&app.client, "/metrics").await;
    assert!(
        metrics.contains("mcp_consent_rejections_total{kind=\"sampling\",reason=\"budget\"} 1"),
        "{metrics}"
    );
}

#[tokio::test]
async fn a_daily_cost_limit_per_server_refuses_the_next_request() {
    let fake = FakeModel::start().await;
    let mut config = Config {
        models: vec![model("fast-mini", &fake.base, false, 0.1)],
        ..Config::default()
    };
    config.budgets.max_cost_usd_per_server_per_day = Some(0.000_001);
    let app = spawn_with(config).await;
    let id = app.open_ok(hinted(1, &[])).await;
    approve_request(&app, &id).await;
    phase_becomes(&app, &id, "response_review").await;
    let (_, body) = app.open(hinted(2, &[]), full_caps(), "2025-11-25").await;
    assert_eq!(
        body["response"]["error"]["data"]["limit"], "max_cost_usd_per_server_per_day",
        "{body}"
    );
}

#[tokio::test]
async fn a_rule_refuses_a_request_without_a_permitted_route_with_its_own_code() {
    let fake = FakeModel::start().await;
    let app = app_with_models(
        &fake,
        RoutingConfig {
            max_request_cost_usd: Some(0.000_000_01),
        },
    )
    .await;
    let browser = app.login().await;
    let page = app.html(&browser, "/rules").await;
    let csrf = csrf_of(&page);
    browser
        .post(format!("{}/rules", app.base))
        .form(&[
            ("csrf", csrf.as_str()),
            ("server", "test-server"),
            ("scope", "both"),
            ("reason", "unattended"),
            ("confirm_both", "1"),
            ("confirm_unknown", "1"),
        ])
        .send()
        .await
        .unwrap();
    let id = app.open_ok(hinted(9, &[])).await;
    let (status, body) = app.response(&id, 5).await;
    assert_eq!(status, StatusCode::OK);
    let error = &body["response"]["error"];
    assert_eq!(error["code"], -2, "not -1: no person rejected it: {body}");
    assert_eq!(error["data"]["reason"], "no_route");
    assert!(fake.calls().is_empty());
}
