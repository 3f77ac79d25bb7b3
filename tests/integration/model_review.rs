//! Shared setup of the model-review tests: a local fake of an OpenAI-compatible
//! chat-completions API (real HTTP), models and an app over it, sampling requests, and the
//! approval calls a script makes.

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
    /// The API's base URL (`http://127.0.0.1:PORT/v1/`).
    pub(crate) base: String,
    seen: Arc<Mutex<Vec<Value>>>,
}

impl FakeModel {
    pub(crate) async fn start() -> FakeModel {
        FakeModel::start_padded(0).await
    }

    /// A fake model whose every text answer carries `pad` more bytes.
    pub(crate) async fn start_padded(pad: usize) -> FakeModel {
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
                        json!({"role": "assistant", "content": format!("answer {n} from {model}{}", "x".repeat(pad))})
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

/// An OpenAI model on `base` priced at `input_price` dollars per million input tokens (4× for
/// output), with tool use when `tools`.
pub(crate) fn model(id: &str, base: &str, tools: bool, input_price: f64) -> ModelConfig {
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
        timeout_secs: 300,
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

/// Approves the request review of the sampling question `id` (as the person would).
pub(crate) async fn approve_request(app: &TestApp, id: &str) -> (StatusCode, Value) {
    let q = app.question(id).await;
    let approval = q["review"]["requestApprovalId"]
        .as_str()
        .expect("the question waits in request review");
    decide(app, id, approval, "approve", None).await
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

pub(crate) fn weather_round(id: i64, history: &[Value]) -> Value {
    let mut messages =
        vec![json!({"role": "user", "content": {"type": "text", "text": "Weather in Paris?"}})];
    messages.extend(history.iter().cloned());
    json!({"jsonrpc": "2.0", "id": id, "method": "sampling/createMessage", "params": {
        "messages": messages, "maxTokens": 50,
        "tools": [{"name": "get_weather", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}]}})
}
