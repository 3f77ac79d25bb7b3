//! Both provider kinds over real HTTP against local fakes of their APIs (actix-web on
//! `127.0.0.1:0`): each fake records the request it receives so the test checks the mapping
//! (model, system prompt, roles, images, tool calls and results, tools, tool choice, limits),
//! and answers with usage, a tool call or an error status.

use std::sync::{Arc, Mutex};

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use mcp_consent::protocol::era::Era;
use mcp_consent::protocol::sampling::validate_result;
use mcp_consent::sampling::{ModelConfig, ProviderError, ProviderKind, Providers};
use serde_json::{Value, json};

/// What a fake received: path, auth header (`authorization` or `x-api-key`), JSON body.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    auth: String,
    body: Value,
}

struct Fake {
    base: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    handle: actix_web::dev::ServerHandle,
}

impl Fake {
    fn last(&self) -> Seen {
        self.seen
            .lock()
            .unwrap()
            .last()
            .cloned()
            .expect("the fake got no request")
    }
}

/// Starts a fake answering every POST with `status` and `body` (sent verbatim).
async fn fake(status: u16, body: &str) -> Fake {
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let reply = (status, body.to_owned());
    let recorded = seen.clone();
    let server = HttpServer::new(move || {
        let recorded = recorded.clone();
        let reply = reply.clone();
        App::new().default_service(web::to(move |req: HttpRequest, body: web::Bytes| {
            let recorded = recorded.clone();
            let reply = reply.clone();
            async move {
                let header = |name: &str| {
                    req.headers()
                        .get(name)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default()
                        .to_owned()
                };
                let auth = if req.headers().contains_key("x-api-key") {
                    header("x-api-key")
                } else {
                    header("authorization")
                };
                recorded.lock().unwrap().push(Seen {
                    path: req.path().to_owned(),
                    auth,
                    body: serde_json::from_slice(&body).unwrap_or(Value::Null),
                });
                HttpResponse::build(actix_web::http::StatusCode::from_u16(reply.0).unwrap())
                    .content_type("application/json")
                    .body(reply.1)
            }
        }))
    })
    .workers(1)
    .bind("127.0.0.1:0")
    .unwrap();
    let addr = server.addrs()[0];
    let server = server.run();
    let handle = server.handle();
    tokio::spawn(server);
    Fake {
        base: format!("http://{addr}/v1"),
        seen,
        handle,
    }
}

fn model(id: &str, provider: ProviderKind, base: &str) -> ModelConfig {
    ModelConfig {
        id: id.to_owned(),
        provider,
        base_url: base.to_owned(),
        api_key_env: Some("TEST_PROVIDER_KEY".to_owned()),
        api_key_file: None,
        input_usd_per_mtok: 2.0,
        output_usd_per_mtok: 10.0,
        speed: 0.5,
        intelligence: 0.5,
        tools: true,
        images: true,
        audio: false,
        aliases: vec![],
        servers: None,
        timeout_secs: 300,
    }
}

fn providers() -> Providers {
    Providers::with_key_lookup(|name| (name == "TEST_PROVIDER_KEY").then(|| "sk-test".to_owned()))
        .unwrap()
}

fn text_request() -> Value {
    json!({
        "systemPrompt": "You are terse.",
        "messages": [
            {"role": "user", "content": [
                {"type": "text", "text": "What is in this picture?"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
            ]},
            {"role": "assistant", "content": {"type": "text", "text": "A cat."}},
            {"role": "user", "content": {"type": "text", "text": "Which colour?"}}
        ],
        "maxTokens": 50,
        "temperature": 0.2,
        "stopSequences": ["END"]
    })
}

fn tool_request() -> Value {
    json!({
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Weather in Paris and Rome?"}},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "call_a", "name": "get_weather", "input": {"city": "Oslo"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "toolUseId": "call_a", "isError": true,
                 "content": [{"type": "text", "text": "station offline"}]}
            ]}
        ],
        "tools": [{"name": "get_weather", "description": "Current weather",
                   "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}],
        "toolChoice": {"mode": "required"},
        "maxTokens": 200
    })
}

fn assert_valid(request: &Value, result: &Value) {
    validate_result(Era::V2025_11_25, request, result)
        .unwrap_or_else(|e| panic!("invalid CreateMessageResult {result}: {e:?}"));
}

#[tokio::test]
async fn openai_text_answer_with_usage() {
    let fake = fake(
        200,
        r#"{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-2024-08-06",
            "choices":[{"index":0,"message":{"role":"assistant","content":"Grey."},"finish_reason":"stop"}],
            "usage":{"prompt_tokens":31,"completion_tokens":3,"total_tokens":34}}"#,
    )
    .await;
    let m = model("gpt-4o", ProviderKind::Openai, &fake.base);
    let request = text_request();
    let done = providers().complete(&m, &request).await.unwrap();

    let seen = fake.last();
    assert_eq!(seen.path, "/v1/chat/completions");
    assert_eq!(seen.auth, "Bearer sk-test");
    let body = seen.body;
    assert_eq!(body["model"], "gpt-4o");
    assert_eq!(body["max_tokens"], 50);
    assert_eq!(body["temperature"], 0.2);
    assert_eq!(body["stop"], json!(["END"]));
    let msgs = body["messages"].as_array().unwrap();
    assert_eq!(
        msgs[0],
        json!({"role": "system", "content": "You are terse."})
    );
    assert_eq!(msgs[1]["role"], "user");
    assert_eq!(
        msgs[1]["content"][0],
        json!({"type": "text", "text": "What is in this picture?"})
    );
    assert_eq!(msgs[1]["content"][1]["type"], "image_url");
    assert_eq!(
        msgs[1]["content"][1]["image_url"]["url"],
        "data:image/png;base64,iVBORw0KGgo="
    );
    assert_eq!(msgs[2]["role"], "assistant");
    assert_eq!(msgs[2]["content"], "A cat.");
    assert_eq!(msgs[3], json!({"role": "user", "content": "Which colour?"}));
    assert!(body.get("tools").is_none());

    assert_eq!(
        done.result,
        json!({"role": "assistant", "content": {"type": "text", "text": "Grey."},
               "model": "gpt-4o-2024-08-06", "stopReason": "endTurn"})
    );
    assert_valid(&request, &done.result);
    assert_eq!((done.input_tokens, done.output_tokens), (31, 3));
    assert!(done.usage_reported);
    assert!((done.cost_usd - (31.0 * 2.0 + 3.0 * 10.0) / 1e6).abs() < 1e-15);
    fake.handle.stop(false).await;
}

#[tokio::test]
async fn openai_tool_call_answer_becomes_tool_use_blocks() {
    let fake = fake(
        200,
        r#"{"id":"chatcmpl-2","object":"chat.completion","created":1,"model":"llama3.2",
            "choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[
              {"id":"call_p","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
              {"id":"call_r","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Rome\"}"}}]},
              "finish_reason":"tool_calls"}],
            "usage":{"prompt_tokens":80,"completion_tokens":20,"total_tokens":100}}"#,
    )
    .await;
    let mut m = model("llama3.2", ProviderKind::Openai, &fake.base);
    m.api_key_env = None; // a local server without a key
    let request = tool_request();
    let done = providers().complete(&m, &request).await.unwrap();

    let seen = fake.last();
    assert_eq!(seen.auth, "Bearer no-key");
    let body = seen.body;
    assert_eq!(body["tool_choice"], "required");
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][0]["function"]["name"], "get_weather");
    assert_eq!(
        body["tools"][0]["function"]["description"],
        "Current weather"
    );
    assert_eq!(
        body["tools"][0]["function"]["parameters"]["required"],
        json!(["city"])
    );
    let msgs = body["messages"].as_array().unwrap();
    assert_eq!(msgs[1]["role"], "assistant");
    assert_eq!(msgs[1]["tool_calls"][0]["id"], "call_a");
    assert_eq!(msgs[1]["tool_calls"][0]["function"]["name"], "get_weather");
    let args: Value = serde_json::from_str(
        msgs[1]["tool_calls"][0]["function"]["arguments"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(args, json!({"city": "Oslo"}));
    assert_eq!(
        msgs[2],
        json!({"role": "tool", "content": "station offline", "tool_call_id": "call_a"})
    );

    assert_eq!(done.result["stopReason"], "toolUse");
    assert_eq!(
        done.result["content"],
        json!([
            {"type": "tool_use", "id": "call_p", "name": "get_weather", "input": {"city": "Paris"}},
            {"type": "tool_use", "id": "call_r", "name": "get_weather", "input": {"city": "Rome"}}
        ])
    );
    assert_valid(&request, &done.result);
    assert_eq!((done.input_tokens, done.output_tokens), (80, 20));
    fake.handle.stop(false).await;
}

#[tokio::test]
async fn anthropic_text_answer_with_usage() {
    let fake = fake(
        200,
        r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
            "content":[{"type":"text","text":"Grey."}],"stop_reason":"stop_sequence","stop_sequence":"END",
            "usage":{"input_tokens":40,"output_tokens":4}}"#,
    )
    .await;
    let m = model("claude-sonnet-4-5", ProviderKind::Anthropic, &fake.base);
    let request = text_request();
    let done = providers().complete(&m, &request).await.unwrap();

    let seen = fake.last();
    assert_eq!(seen.path, "/v1/messages");
    assert_eq!(seen.auth, "sk-test");
    let body = seen.body;
    assert_eq!(body["model"], "claude-sonnet-4-5");
    assert_eq!(body["max_tokens"], 50);
    assert_eq!(body["temperature"], 0.2);
    assert_eq!(body["stop_sequences"], json!(["END"]));
    let system = &body["system"];
    let system_text = system
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| system[0]["text"].as_str().unwrap().to_owned());
    assert_eq!(system_text, "You are terse.");
    let msgs = body["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 3);
    assert_eq!(msgs[0]["role"], "user");
    assert_eq!(
        msgs[0]["content"][1],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}})
    );
    assert_eq!(msgs[1]["role"], "assistant");
    assert_eq!(msgs[2]["role"], "user");

    assert_eq!(
        done.result,
        json!({"role": "assistant", "content": {"type": "text", "text": "Grey."},
               "model": "claude-sonnet-4-5-20250929", "stopReason": "stopSequence"})
    );
    assert_valid(&request, &done.result);
    assert_eq!((done.input_tokens, done.output_tokens), (40, 4));
    fake.handle.stop(false).await;
}

#[tokio::test]
async fn anthropic_tool_use_answer_becomes_tool_use_blocks() {
    let fake = fake(
        200,
        r#"{"id":"msg_2","type":"message","role":"assistant","model":"claude-haiku-4-5",
            "content":[{"type":"text","text":"Checking."},
                       {"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}],
            "stop_reason":"tool_use","usage":{"input_tokens":120,"output_tokens":30}}"#,
    )
    .await;
    let m = model("claude-haiku-4-5", ProviderKind::Anthropic, &fake.base);
    let request = tool_request();
    let done = providers().complete(&m, &request).await.unwrap();

    let body = fake.last().body;
    assert_eq!(body["tool_choice"], json!({"type": "any"}));
    assert_eq!(body["tools"][0]["name"], "get_weather");
    assert_eq!(
        body["tools"][0]["input_schema"]["required"],
        json!(["city"])
    );
    let msgs = body["messages"].as_array().unwrap();
    assert_eq!(msgs[1]["role"], "assistant");
    let tool_use = msgs[1]["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "tool_use")
        .unwrap();
    assert_eq!(tool_use["id"], "call_a");
    assert_eq!(tool_use["input"], json!({"city": "Oslo"}));
    assert_eq!(msgs[2]["role"], "user");
    assert_eq!(
        msgs[2]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "call_a", "is_error": true,
               "content": [{"type": "text", "text": "station offline"}]})
    );

    assert_eq!(done.result["stopReason"], "toolUse");
    assert_eq!(
        done.result["content"],
        json!([
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
        ])
    );
    assert_valid(&request, &done.result);
    assert!((done.cost_usd - (120.0 * 2.0 + 30.0 * 10.0) / 1e6).abs() < 1e-15);
    fake.handle.stop(false).await;
}

#[tokio::test]
async fn error_statuses_become_typed_errors() {
    let openai = fake(
        429,
        r#"{"error":{"message":"Rate limit reached","type":"rate_limit"}}"#,
    )
    .await;
    let m = model("gpt-4o", ProviderKind::Openai, &openai.base);
    match providers().complete(&m, &text_request()).await {
        Err(ProviderError::Status {
            status: 429,
            message,
            model,
        }) => {
            assert_eq!(message, "Rate limit reached");
            assert_eq!(model, "gpt-4o");
        }
        other => panic!("expected a 429 status error, got {other:?}"),
    }
    openai.handle.stop(false).await;

    let anthropic = fake(
        401,
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
    )
    .await;
    let m = model("claude-haiku-4-5", ProviderKind::Anthropic, &anthropic.base);
    match providers().complete(&m, &text_request()).await {
        Err(ProviderError::Status {
            status: 401,
            message,
            ..
        }) => assert_eq!(message, "invalid x-api-key"),
        other => panic!("expected a 401 status error, got {other:?}"),
    }
    anthropic.handle.stop(false).await;
}

#[tokio::test]
async fn missing_key_unparseable_body_and_unreachable_server_are_distinguished() {
    let garbage = fake(200, "this is not json").await;
    let mut m = model("gpt-4o", ProviderKind::Openai, &garbage.base);

    m.api_key_env = Some("UNSET_TEST_KEY".into());
    match providers().complete(&m, &text_request()).await {
        Err(ProviderError::MissingKey { env, .. }) => assert_eq!(env, "UNSET_TEST_KEY"),
        other => panic!("expected MissingKey, got {other:?}"),
    }
    assert!(
        garbage.seen.lock().unwrap().is_empty(),
        "nothing is sent without a key"
    );

    m.api_key_env = Some("TEST_PROVIDER_KEY".into());
    assert!(matches!(
        providers().complete(&m, &text_request()).await,
        Err(ProviderError::Unparseable { .. })
    ));
    garbage.handle.stop(false).await;

    // A port nobody listens on: bind, note it, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    m.base_url = format!("http://127.0.0.1:{port}/v1/");
    assert!(matches!(
        providers().complete(&m, &text_request()).await,
        Err(ProviderError::Transport { .. })
    ));

    // Audio cannot go to Anthropic: refused before sending.
    let mut audio = text_request();
    audio["messages"][0]["content"][1] =
        json!({"type": "audio", "data": "AAAA", "mimeType": "audio/wav"});
    m.provider = ProviderKind::Anthropic;
    assert!(matches!(
        providers().complete(&m, &audio).await,
        Err(ProviderError::Unsupported { .. })
    ));
}

const GREY: &str = r#"{"id":"chatcmpl-3","object":"chat.completion","created":1,"model":"gpt-4o",
    "choices":[{"index":0,"message":{"role":"assistant","content":"Grey."},"finish_reason":"stop"}]}"#;

#[tokio::test]
async fn an_owner_only_key_file_is_read_and_its_key_sent_without_the_newline() {
    use std::os::unix::fs::PermissionsExt;
    let fake = fake(200, GREY).await;
    let tmp = tempfile::tempdir().unwrap();
    let key = tmp.path().join("openai.key");
    std::fs::write(&key, "sk-from-file\n").unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut m = model("gpt-4o", ProviderKind::Openai, &fake.base);
    m.api_key_env = None;
    m.api_key_file = Some(key.clone());

    let providers = providers().with_key_files(&[m.clone()]).unwrap();
    providers.complete(&m, &text_request()).await.unwrap();
    assert_eq!(fake.last().auth, "Bearer sk-from-file");

    // Providers that never read the file send nothing.
    match self::providers().complete(&m, &text_request()).await {
        Err(ProviderError::KeyFile { message, .. }) => {
            assert!(message.contains(&key.display().to_string()), "{message}")
        }
        other => panic!("expected KeyFile, got {other:?}"),
    }
    assert_eq!(fake.seen.lock().unwrap().len(), 1);
    fake.handle.stop(false).await;
}

#[tokio::test]
async fn a_key_file_others_can_read_stops_the_service_from_starting_and_names_the_path() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let key = tmp.path().join("anthropic.key");
    std::fs::write(&key, "sk-ant\n").unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut m = model(
        "claude",
        ProviderKind::Anthropic,
        "https://api.anthropic.com/v1/",
    );
    m.api_key_env = None;
    m.api_key_file = Some(key.clone());
    let config = mcp_consent::config::Config {
        models: vec![m],
        ..Default::default()
    };
    let err = match mcp_consent::app::Application::build(
        &config,
        tmp.path().join("state"),
        "127.0.0.1:0",
    )
    .await
    {
        Err(e) => crate::helpers::error_chain(&e),
        Ok(_) => panic!("a 0644 key file must stop the start"),
    };
    assert!(err.contains(&key.display().to_string()), "{err}");
    assert!(err.contains("0644") && err.contains("owner-only"), "{err}");

    // The same file made owner-only is accepted.
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let app = crate::helpers::spawn_on(config, &tmp.path().join("state")).await;
    app.stop().await;
}

/// A raw TCP server answering every connection with `reply` (then closing it), or, when `reply`
/// is `None`, reading the request and never answering (the connection stays open).
async fn raw_server(reply: Option<&'static [u8]>) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut buf = vec![0u8; 65536];
            let _ = socket.read(&mut buf).await;
            match reply {
                Some(bytes) => {
                    let _ = socket.write_all(bytes).await;
                    let _ = socket.shutdown().await;
                }
                None => open.push(socket),
            }
        }
    });
    format!("http://{addr}/v1/")
}

#[tokio::test]
async fn a_silent_server_times_out_and_a_cut_answer_is_named_incomplete() {
    let silent = raw_server(None).await;
    let mut m = model("llama-local", ProviderKind::Openai, &silent);
    m.api_key_env = None;
    m.timeout_secs = 1;
    let started = std::time::Instant::now();
    let error = providers().complete(&m, &text_request()).await.unwrap_err();
    assert_eq!(
        error,
        ProviderError::Timeout {
            model: "llama-local".into(),
            seconds: 1
        }
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "bounded by timeout_secs"
    );
    assert!(
        error
            .to_string()
            .contains("did not answer within 1 seconds"),
        "{error}"
    );

    // Headers promise 400 bytes; 40 come, then the connection closes.
    let cut = raw_server(Some(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 400\r\n\r\n{\"id\":\"c\",\"object\":\"chat.completion\",\"ch",
    ))
    .await;
    m.base_url = cut;
    let error = providers().complete(&m, &text_request()).await.unwrap_err();
    assert_eq!(
        error,
        ProviderError::Incomplete {
            model: "llama-local".into()
        }
    );

    // A failed run stores the error as JSON: the API reads it back as the same sentence.
    let stored = error.stored();
    assert!(stored.contains("\"code\":\"incomplete\""), "{stored}");
    assert_eq!(ProviderError::from_stored(&stored), Some(error.clone()));
    assert_eq!(ProviderError::stored_text(&stored), error.to_string());
    assert_eq!(ProviderError::stored_text("plain words"), "plain words");
}
