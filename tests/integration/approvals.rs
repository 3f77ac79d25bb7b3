//! Two-step approval of sampling on a configured model, against a local fake of an
//! OpenAI-compatible chat-completions API (real HTTP): nothing runs before a request approval,
//! nothing reaches the server before a response approval, and every decision is exactly once.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{App, HttpResponse, HttpServer, web};
use mcp_consent::config::Config;
use mcp_consent::sampling::{ModelConfig, ProviderKind, RoutingConfig};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

/// A fake OpenAI-compatible API: answers "answer <n> from <model>" (or a tool call when the
/// request offers tools) with usage, and records every request body.
pub(crate) struct FakeModel {
    base: String,
    seen: Arc<Mutex<Vec<Value>>>,
}

impl FakeModel {
    pub(crate) async fn start() -> FakeModel {
        let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
        let recorded = seen.clone();
        let server = HttpServer::new(move || {
            let recorded = recorded.clone();
            App::new().default_service(web::to(move |body: web::Bytes| {
                let recorded = recorded.clone();
                async move {
                    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    let n = {
                        let mut seen = recorded.lock().unwrap();
                        seen.push(request.clone());
                        seen.len()
                    };
                    let model = request["model"].as_str().unwrap_or("?").to_owned();
                    let message = if request.get("tools").is_some() {
                        json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("call_{n}"), "type": "function",
                            "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]})
                    } else {
                        json!({"role": "assistant", "content": format!("answer {n} from {model}")})
                    };
                    let finish = if request.get("tools").is_some() { "tool_calls" } else { "stop" };
                    HttpResponse::Ok().json(json!({"id": "c", "object": "chat.completion", "created": 1, "model": model,
                        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                        "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}}))
                }
            }))
        })
        .workers(1)
        .bind("127.0.0.1:0")
        .unwrap();
        let addr = server.addrs()[0];
        tokio::spawn(server.run());
        FakeModel {
            base: format!("http://{addr}/v1/"),
            seen,
        }
    }

    pub(crate) fn calls(&self) -> Vec<Value> {
        self.seen.lock().unwrap().clone()
    }
}

fn model(id: &str, base: &str, tools: bool, input_price: f64) -> ModelConfig {
    ModelConfig {
        id: id.to_owned(),
        provider: ProviderKind::Openai,
        base_url: base.to_owned(),
        api_key_env: None,
        api_key_file: None,
        input_usd_per_mtok: input_price,
        output_usd_per_mtok: input_price * 4.0,
        speed: 0.5,
        intelligence: 0.5,
        tools,
        images: false,
        audio: false,
        aliases: vec![],
        servers: None,
    }
}

pub(crate) async fn app_with_models(fake: &FakeModel, routing: RoutingConfig) -> TestApp {
    spawn_with(Config {
        models: vec![
            model("fast-mini", &fake.base, false, 0.1),
            model("big-smart", &fake.base, true, 3.0),
        ],
        routing,
        ..Config::default()
    })
    .await
}

pub(crate) fn hinted(id: i64, hints: &[&str]) -> Value {
    let hints: Vec<Value> = hints.iter().map(|h| json!({"name": h})).collect();
    json!({"jsonrpc": "2.0", "id": id, "method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "SECRET-PROMPT-1f2e"}}],
        "systemPrompt": "Be kind.", "maxTokens": 100, "modelPreferences": {"hints": hints}}})
}

pub(crate) async fn decide(
    app: &TestApp,
    id: &str,
    approval_id: &str,
    decision: &str,
    model: Option<&str>,
) -> (StatusCode, Value) {
    let mut body = json!({"approvalId": approval_id, "decision": decision});
    if let Some(m) = model {
        body["model"] = json!(m);
    }
    let res = app
        .post_json(&format!("/api/v1/questions/{id}/approvals"), &body)
        .await;
    let status = res.status();
    (status, res.json().await.unwrap_or(Value::Null))
}

pub(crate) async fn phase_becomes(app: &TestApp, id: &str, phase: &str) -> Value {
    let reached = eventually(Duration::from_secs(10), || async {
        let q = app.question(id).await;
        (q["phase"] == phase).then_some(q)
    })
    .await;
    match reached {
        Some(q) => q,
        None => panic!(
            "question {id} never reached phase {phase}: {}",
            app.question(id).await
        ),
    }
}

#[tokio::test]
async fn both_steps_are_approved_exactly_once_and_regenerate_can_switch_models() {
    let fake = FakeModel::start().await;
    let app = app_with_models(&fake, RoutingConfig::default()).await;
    // Hints in order: "nomatch" matches nothing (not a failure), "mini" wins over "big".
    let id = app.open_ok(hinted(1, &["nomatch", "mini", "big"])).await;
    let q = app.question(&id).await;
    assert_eq!(q["phase"], "request_review");
    assert_eq!(
        q["review"]["route"]["chosen"]["id"], "fast-mini",
        "{}",
        q["review"]["route"]
    );
    assert!(
        fake.calls().is_empty(),
        "nothing runs before the request is approved"
    );

    let request_approval = q["review"]["requestApprovalId"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, body) = decide(&app, &id, &request_approval, "approve", None).await;
    assert_eq!(
        (status, body["applied"].as_str()),
        (StatusCode::OK, Some("done")),
        "{body}"
    );
    let q = phase_becomes(&app, &id, "response_review").await;
    assert_eq!(fake.calls().len(), 1);
    assert_eq!(fake.calls()[0]["model"], "fast-mini");
    assert_eq!(
        fake.calls()[0]["messages"][0],
        json!({"role": "system", "content": "Be kind."})
    );
    assert_eq!(
        app.response(&id, 0).await.0,
        StatusCode::ACCEPTED,
        "nothing delivered yet"
    );

    // A double click on the same approval changes nothing and calls no model.
    let (status, body) = decide(&app, &id, &request_approval, "approve", None).await;
    assert_eq!(
        (status, body["applied"].as_str()),
        (StatusCode::OK, Some("replayed"))
    );
    assert_eq!(fake.calls().len(), 1);

    // Regenerate on another model.
    let first_response = q["review"]["responseApprovalId"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, _) = decide(&app, &id, &first_response, "regenerate", Some("big-smart")).await;
    assert_eq!(status, StatusCode::OK);
    let q = phase_becomes(&app, &id, "response_review").await;
    assert_eq!(fake.calls().len(), 2);
    assert_eq!(fake.calls()[1]["model"], "big-smart");
    let second_response = q["review"]["responseApprovalId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(first_response, second_response);

    // Sending the first run's answer is refused: it is outdated.
    let (status, _) = decide(
        &app,
        &id,
        &format!("{id}:response:{}", "not-the-latest-run"),
        "send",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);

    let (status, body) = decide(&app, &id, &second_response, "send", None).await;
    assert_eq!(
        (status, body["state"].as_str()),
        (StatusCode::OK, Some("accepted")),
        "{body}"
    );
    let (status, again) = decide(&app, &id, &second_response, "send", None).await;
    assert_eq!(
        (status, again["applied"].as_str()),
        (StatusCode::OK, Some("replayed"))
    );
    let (_, delivered) = app.response(&id, 0).await;
    assert_eq!(
        delivered["response"]["result"]["content"]["text"],
        "answer 2 from big-smart"
    );
    assert_eq!(delivered["response"]["result"]["role"], "assistant");

    // The audit has every step, with digests and never the prompt or the answer.
    let audit: Value = app.get("/api/v1/audit").await.json().await.unwrap();
    let actions: Vec<&str> = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["delivered", "regenerated", "approved"]);
    let text = audit.to_string();
    assert!(!text.contains("SECRET-PROMPT-1f2e") && !text.contains("answer 2 from"));
    assert_eq!(
        audit["entries"][0]["costUsd"].as_f64().map(|c| c > 0.0),
        Some(true)
    );
}

#[tokio::test]
async fn reject_sends_minus_one_and_no_model_text() {
    let fake = FakeModel::start().await;
    let app = app_with_models(&fake, RoutingConfig::default()).await;
    let id = app.open_ok(hinted(2, &[])).await;
    let q = app.question(&id).await;
    decide(
        &app,
        &id,
        q["review"]["requestApprovalId"].as_str().unwrap(),
        "approve",
        None,
    )
    .await;
    let q = phase_becomes(&app, &id, "response_review").await;
    let (status, _) = decide(
        &app,
        &id,
        q["review"]["responseApprovalId"].as_str().unwrap(),
        "reject",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (_, body) = app.response(&id, 0).await;
    assert_eq!(body["response"]["error"]["code"], -1);
    assert!(
        !body.to_string().contains("answer 1"),
        "no model text reaches the server"
    );
}

#[tokio::test]
async fn an_edit_makes_a_new_revision_and_voids_the_old_approval() {
    let fake = FakeModel::start().await;
    let app = app_with_models(&fake, RoutingConfig::default()).await;
    let id = app.open_ok(hinted(3, &["mini"])).await;
    let old = app.question(&id).await["review"]["requestApprovalId"]
        .as_str()
        .unwrap()
        .to_owned();
    let res = app
        .post_json(
            &format!("/api/v1/questions/{id}/revisions"),
            &json!({"baseRevision": 1, "systemPrompt": "Be brief.", "texts": [{"message": 0, "block": 0, "text": "edited question"}]}),
        )
        .await;
    assert_eq!(res.status(), StatusCode::OK);
    let (status, _) = decide(&app, &id, &old, "approve", None).await;
    assert_eq!(
        status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "an approval of the old revision is refused"
    );
    assert!(fake.calls().is_empty());
    // An edit against the old revision is refused too.
    let res = app
        .post_json(
            &format!("/api/v1/questions/{id}/revisions"),
            &json!({"baseRevision": 1, "systemPrompt": "x"}),
        )
        .await;
    assert_eq!(res.status(), StatusCode::UNPROCESSABLE_ENTITY);

    let q = app.question(&id).await;
    assert_eq!(q["revision"], 2);
    decide(
        &app,
        &id,
        q["review"]["requestApprovalId"].as_str().unwrap(),
        "approve",
        None,
    )
    .await;
    phase_becomes(&app, &id, "response_review").await;
    let call = &fake.calls()[0];
    assert_eq!(call["messages"][0]["content"], "Be brief.");
    assert_eq!(call["messages"][1]["content"], "edited question");
}

#[tokio::test]
async fn without_a_permitted_route_the_question_waits_for_the_person() {
    let fake = FakeModel::start().await;
    // A cap no model fits under: every candidate is over budget.
    let app = app_with_models(
        &fake,
        RoutingConfig {
            max_request_cost_usd: Some(0.000_000_01),
        },
    )
    .await;
    let id = app.open_ok(hinted(4, &["big"])).await;
    let q = app.question(&id).await;
    assert!(
        q["review"]["route"]["chosen"].is_null(),
        "{}",
        q["review"]["route"]
    );
    assert_eq!(
        q["review"]["route"]["exclusions"].as_array().unwrap().len(),
        2
    );
    let (status, body) = decide(
        &app,
        &id,
        q["review"]["requestApprovalId"].as_str().unwrap(),
        "approve",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(body.to_string().contains("no permitted route"), "{body}");
    assert_eq!(app.question(&id).await["state"], "pending");
    assert!(fake.calls().is_empty());

    // Tools gate: only big-smart offers tools, so a tool request routes there even with a "mini" hint.
    let app = app_with_models(&fake, RoutingConfig::default()).await;
    let request = json!({"jsonrpc": "2.0", "id": 5, "method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "weather?"}}], "maxTokens": 50,
        "modelPreferences": {"hints": [{"name": "mini"}]},
        "tools": [{"name": "get_weather", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}]}});
    let id = app.open_ok(request).await;
    let q = app.question(&id).await;
    assert_eq!(q["review"]["route"]["chosen"]["id"], "big-smart");
    decide(
        &app,
        &id,
        q["review"]["requestApprovalId"].as_str().unwrap(),
        "approve",
        None,
    )
    .await;
    let q = phase_becomes(&app, &id, "tool_use_review").await;
    assert_eq!(q["review"]["runs"][0]["result"]["stopReason"], "toolUse");
}

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

#[tokio::test]
async fn the_review_pages_show_the_route_and_take_decisions() {
    let fake = FakeModel::start().await;
    let app = app_with_models(&fake, RoutingConfig::default()).await;
    let id = app.open_ok(hinted(8, &["big"])).await;
    let browser = app.login().await;
    let page = app.html(&browser, &format!("/questions/{id}")).await;
    assert!(
        page.contains("Routed to <strong class=\"routed\">big-smart</strong>"),
        "{page}"
    );
    assert!(page.contains("estimated cost") && page.contains("Approve and run"));
    let csrf = csrf_of(&page);
    let approval = format!("{id}:request:1");
    let res = browser
        .post(format!("{}/questions/{id}/decide", app.base))
        .form(&[
            ("csrf", csrf.as_str()),
            ("approvalId", approval.as_str()),
            ("model", "fast-mini"),
            ("decision", "approve"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    let q = phase_becomes(&app, &id, "response_review").await;
    assert_eq!(
        fake.calls()[0]["model"],
        "fast-mini",
        "the person's choice of model is used"
    );
    let page = app.html(&browser, &format!("/questions/{id}")).await;
    assert!(
        page.contains("answer 1 from fast-mini")
            && page.contains("Regenerate")
            && page.contains("Nothing has been sent")
    );
    let response_approval = q["review"]["responseApprovalId"]
        .as_str()
        .unwrap()
        .to_owned();
    let res = browser
        .post(format!("{}/questions/{id}/decide", app.base))
        .form(&[
            ("csrf", csrf.as_str()),
            ("approvalId", response_approval.as_str()),
            ("decision", "send"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    assert_eq!(
        app.response(&id, 0).await.1["response"]["result"]["content"]["text"],
        "answer 1 from fast-mini"
    );
    let audit = app.html(&browser, "/audit").await;
    assert!(audit.contains("delivered") && !audit.contains("SECRET-PROMPT"));
}

pub(crate) fn weather_round(id: i64, history: &[Value]) -> Value {
    let mut messages =
        vec![json!({"role": "user", "content": {"type": "text", "text": "Weather in Paris?"}})];
    messages.extend(history.iter().cloned());
    json!({"jsonrpc": "2.0", "id": id, "method": "sampling/createMessage", "params": {
        "messages": messages, "maxTokens": 50,
        "tools": [{"name": "get_weather", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}]}})
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
    let q = app.question(&id).await;
    decide(
        &app,
        &id,
        q["review"]["requestApprovalId"].as_str().unwrap(),
        "approve",
        None,
    )
    .await;
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

#[tokio::test]
async fn an_edit_after_the_request_was_approved_is_refused() {
    let fake = FakeModel::start().await;
    let app = app_with_models(&fake, RoutingConfig::default()).await;
    let id = app.open_ok(hinted(10, &[])).await;
    let q = app.question(&id).await;
    decide(
        &app,
        &id,
        q["review"]["requestApprovalId"].as_str().unwrap(),
        "approve",
        None,
    )
    .await;
    phase_becomes(&app, &id, "response_review").await;
    let res = app
        .post_json(
            &format!("/api/v1/questions/{id}/revisions"),
            &json!({"baseRevision": 1, "systemPrompt": "too late"}),
        )
        .await;
    assert_eq!(
        res.status(),
        StatusCode::UNPROCESSABLE_ENTITY,
        "the answer under review belongs to revision 1"
    );
    let q = app.question(&id).await;
    assert_eq!(
        (q["revision"].as_i64(), q["phase"].as_str()),
        (Some(1), Some("response_review"))
    );
    assert_eq!(fake.calls().len(), 1);
}
