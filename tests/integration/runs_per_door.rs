//! Model runs and their budgets belong to a door: a rule's run is counted against the door
//! that opened the question, a door has at most four runs under way, and a script naming a
//! server neither joins that server's conversations nor uses up its daily budget.

use std::time::Duration;

use mcp_consent::config::Config;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;
use crate::model_review::{FakeModel, hinted, model, phase_becomes, weather_round};

/// The body of `POST /api/v1/requests` for `request` from "test-server".
fn opening(request: Value) -> Value {
    json!({"server": "test-server", "session": "s1", "tool": "demo",
        "protocolVersion": "2025-11-25", "clientCapabilities": full_caps(), "request": request})
}

/// Opens `request` over the owner-only socket, as the server's own proxy does.
async fn open_over_socket(app: &TestApp, request: Value) -> Value {
    let res = app
        .post_json_over_socket("/api/v1/requests", &opening(request))
        .await;
    res.json().await.unwrap()
}

/// The person's rule: every request step of "test-server" runs without asking.
async fn request_rule(app: &TestApp, browser: &reqwest::Client) {
    let csrf = csrf_of(&app.html(browser, "/rules").await);
    let res = browser
        .post(format!("{}/rules", app.base))
        .form(&[
            ("csrf", csrf.as_str()),
            ("server", "test-server"),
            ("scope", "request"),
            ("reason", "trusted"),
            ("days", "7"),
            ("confirm_unknown", "1"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn a_rules_model_runs_are_counted_against_the_door_that_opened_the_question() {
    // Each reply stores 20 kB; the door holds 50 kB an hour.
    let fake = FakeModel::start_padded(20_000).await;
    let app = spawn_with(Config {
        models: vec![model("fast-mini", &fake.base, false, 0.1)],
        max_stored_bytes_per_door: 50_000,
        ..Config::default()
    })
    .await;
    request_rule(&app, &app.login().await).await;
    let mut refused = None;
    for n in 1..=10 {
        let (status, body) = app.open(hinted(n, &[]), full_caps(), "2025-11-25").await;
        let error = body["response"]["error"]["message"].as_str().unwrap_or("");
        if error.contains("max_stored_bytes_per_door") {
            refused = Some(n);
            break;
        }
        assert_eq!(status, StatusCode::CREATED, "{body}");
        phase_becomes(&app, body["id"].as_str().unwrap(), "response_review").await;
    }
    let refused = refused.expect("the rule's runs were charged to no door");
    assert!(refused <= 4, "refused only at {refused}");
    assert_eq!(fake.calls().len(), refused as usize - 1);
}

/// A model endpoint that takes every connection and never answers: runs stay under way.
async fn silent_model() -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1/", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    (base, task)
}

#[tokio::test]
async fn a_door_has_at_most_four_model_runs_under_way() {
    let (base, _silent) = silent_model().await;
    let app = spawn_with(Config {
        models: vec![model("slow", &base, false, 0.1)],
        ..Config::default()
    })
    .await;
    let mut ids = Vec::new();
    for n in 1..=6 {
        ids.push(app.open_ok(hinted(n, &[])).await);
    }
    let approve = |id: String| {
        let app = &app;
        async move {
            let q = app.question(&id).await;
            let approval = q["review"]["requestApprovalId"]
                .as_str()
                .unwrap()
                .to_owned();
            app.post_json(
                &format!("/api/v1/questions/{id}/approvals"),
                &json!({"approvalId": approval, "decision": "approve"}),
            )
            .await
        }
    };
    for id in &ids[..4] {
        assert_eq!(approve(id.clone()).await.status(), StatusCode::OK);
    }
    let fifth = approve(ids[4].clone()).await;
    assert_eq!(fifth.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(fifth.headers().contains_key("retry-after"));
    let body: Value = fifth.json().await.unwrap();
    let message = body["error"].as_str().unwrap();
    assert!(message.contains("4 model runs under way"), "{message}");
    assert_eq!(app.question(&ids[4]).await["phase"], "request_review");

    // The person is not a door with a budget: in the browser the run starts.
    let browser = app.login().await;
    let q = app.question(&ids[5]).await;
    let approval = q["review"]["requestApprovalId"].as_str().unwrap();
    let page = app.html(&browser, &format!("/questions/{}", ids[5])).await;
    let res = browser
        .post(format!(
            "{}/api/v1/questions/{}/approvals",
            app.base, ids[5]
        ))
        .header("X-CSRF-Token", csrf_of(&page))
        .json(&json!({"approvalId": approval, "decision": "approve"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_scripts_runs_under_a_servers_name_leave_that_servers_daily_budget() {
    let fake = FakeModel::start().await;
    let mut config = Config {
        models: vec![model("fast-mini", &fake.base, false, 0.1)],
        ..Config::default()
    };
    config.budgets.max_cost_usd_per_server_per_day = Some(0.000_001);
    let app = spawn_with(config).await;
    request_rule(&app, &app.login().await).await;
    let id = app.open_ok(hinted(1, &[])).await;
    phase_becomes(&app, &id, "response_review").await;
    // The token's run used up the token's own day under this name, not the proxy's.
    let (_, body) = app.open(hinted(2, &[]), full_caps(), "2025-11-25").await;
    assert_eq!(
        body["response"]["error"]["data"]["limit"], "max_cost_usd_per_server_per_day",
        "{body}"
    );
    let proxy = open_over_socket(&app, hinted(3, &[])).await;
    assert!(proxy["id"].is_string(), "{proxy}");
}

/// Delivers the model's tool_use answer to `request`, opened over the socket; the assistant
/// message the server got.
async fn deliver_over_socket(app: &TestApp, request: Value) -> Value {
    let opened = open_over_socket(app, request).await;
    let id = opened["id"].as_str().unwrap();
    let q = phase_becomes(app, id, "tool_use_review").await;
    let approval = q["review"]["responseApprovalId"].as_str().unwrap();
    let res = app
        .post_json(
            &format!("/api/v1/questions/{id}/approvals"),
            &json!({"approvalId": approval, "decision": "send"}),
        )
        .await;
    assert_eq!(res.status(), StatusCode::OK);
    let res = app
        .get_over_socket(&format!("/api/v1/requests/{id}/response?wait=5"))
        .await;
    let body: Value = res.json().await.unwrap();
    json!({"role": "assistant", "content": body["response"]["result"]["content"]})
}

#[tokio::test]
async fn a_script_answering_a_servers_tool_use_does_not_join_its_conversation() {
    let fake = FakeModel::start().await;
    let mut config = Config {
        models: vec![model("big-smart", &fake.base, true, 3.0)],
        ..Config::default()
    };
    config.budgets.max_rounds_per_conversation = 2;
    let app = spawn_with(config).await;
    request_rule(&app, &app.login().await).await;
    let first = deliver_over_socket(&app, weather_round(1, &[])).await;
    let tool_use = first["content"][0]["id"].as_str().unwrap().to_owned();
    let history = vec![
        first.clone(),
        json!({"role": "user", "content": [{"type": "tool_result", "toolUseId": tool_use,
            "content": [{"type": "text", "text": "18C"}]}]}),
    ];
    // The token reads nothing of the proxy's, but guesses the next round and opens it twice.
    for n in 10..12 {
        let (status, body) = app
            .open(weather_round(n, &history), full_caps(), "2025-11-25")
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    // The proxy's own second round is still its conversation's second.
    let second = open_over_socket(&app, weather_round(2, &history)).await;
    assert!(second["id"].is_string(), "{second}");
    let q = app.question(second["id"].as_str().unwrap()).await;
    let eventually_ran = eventually(Duration::from_secs(10), || async {
        let q = app.question(second["id"].as_str().unwrap()).await;
        (q["phase"] != "request_review").then_some(())
    })
    .await;
    assert!(eventually_ran.is_some(), "{q}");
}

/// A rule's run that cannot start because the door has four under way leaves the question
/// stored and waiting for the person: the opening is not refused after the fact.
#[tokio::test]
async fn a_rules_run_that_cannot_start_leaves_its_question_for_the_person() {
    let (base, _silent) = silent_model().await;
    let app = spawn_with(Config {
        models: vec![model("slow", &base, false, 0.1)],
        ..Config::default()
    })
    .await;
    request_rule(&app, &app.login().await).await;
    let mut ids = Vec::new();
    for n in 1..=6 {
        ids.push(app.open_ok(hinted(n, &[])).await);
    }
    let waiting: Vec<Value> = {
        let mut w = Vec::new();
        for id in &ids {
            let q = app.question(id).await;
            if q["phase"] == "request_review" {
                w.push(q);
            }
        }
        w
    };
    assert_eq!(waiting.len(), 2, "{waiting:?}");
    assert!(waiting.iter().all(|q| q["state"] == "pending"));
}
