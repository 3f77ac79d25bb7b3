//! Tool-call consent through the proxy: the host's `tools/call` judged by the person's
//! `[tools]` rules. Each rule's outcome is observed where it happens: at the server (its log
//! of every line received) for what is forwarded or never forwarded, at the host for what it
//! is told.

use std::time::Duration;

use mcp_consent::config::Config;
use mcp_consent::tools::ToolsConfig;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;
use crate::host::{Proxy, init_result};

/// `tools/list` as the server answers it: `delete_file` (a path) and `read_file`.
fn tools_list() -> Value {
    json!({"send": {"jsonrpc": "2.0", "id": 2, "result": {"tools": [
        {"name": "delete_file", "description": "Deletes a file.",
         "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
         "annotations": {"destructiveHint": true}},
        {"name": "read_file", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}]}}})
}

pub(crate) fn call(id: u64, tool: &str, path: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": {"path": path}}}).to_string()
}

pub(crate) fn rules(text: &str) -> Config {
    Config {
        tools: toml::from_str::<ToolsConfig>(text).unwrap(),
        ..Config::default()
    }
}

/// The server script: initialize, list the tools, then answer each `tools/call` it receives
/// with a result naming the path it was asked about.
fn server(calls: usize) -> Value {
    let mut steps = vec![
        json!({"until": "initialize"}),
        init_result("2025-11-25"),
        json!({"until": "tools/list"}),
        tools_list(),
    ];
    for _ in 0..calls {
        steps.push(json!({"until": "tools/call"}));
        steps.push(json!({"reply": {"content": [{"type": "text", "text": "done"}]}}));
    }
    Value::Array(steps)
}

pub(crate) async fn started(app: &TestApp, calls: usize) -> Proxy {
    listed(Proxy::start(&app.state, None, server(calls))).await
}

/// The proxy once initialized and the tools listed (so it knows their schemas and claims).
async fn listed(mut proxy: Proxy) -> Proxy {
    proxy.initialized().await;
    proxy
        .send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#)
        .await;
    let listed: Value = serde_json::from_str(&proxy.recv().await).unwrap();
    assert_eq!(listed["id"], 2);
    proxy
}

/// The host's next line that is not a progress notification.
pub(crate) async fn host_line(proxy: &mut Proxy) -> Value {
    loop {
        let line: Value = serde_json::from_str(&proxy.recv().await).unwrap();
        if line["method"] != "notifications/progress" {
            return line;
        }
    }
}

/// Every `tools/call` the server received, parsed.
pub(crate) fn calls_received(proxy: &Proxy) -> Vec<Value> {
    proxy
        .server_log()
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["method"] == "tools/call")
        .collect()
}

/// After this, everything the host sent before has reached the server (the proxy keeps the
/// order), so an absence in the server's log is observed, not guessed.
pub(crate) async fn flush(proxy: &mut Proxy, marker: &str) {
    proxy
        .send(&json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"marker": marker}}).to_string())
        .await;
    proxy.server_received(marker).await;
}

/// The pending tool-call question, as the person's browser lists it.
pub(crate) async fn pending_call(app: &TestApp, browser: &reqwest::Client) -> Value {
    let id =
        first_pending_id(|| browser.get(format!("{}/api/v1/questions?state=pending", app.base)))
            .await;
    app.question_as(browser, &id).await
}

/// Answers a question as the person, over the API with the page's CSRF token.
pub(crate) async fn person_answers(
    app: &TestApp,
    browser: &reqwest::Client,
    id: &str,
    answer: Value,
) -> (StatusCode, Value) {
    let csrf = csrf_of(&app.html(browser, &format!("/questions/{id}")).await);
    let res = browser
        .post(format!("{}/api/v1/questions/{id}/answer", app.base))
        .header("X-CSRF-Token", csrf)
        .json(&answer)
        .send()
        .await
        .unwrap();
    let status = res.status();
    (status, res.json().await.unwrap_or(Value::Null))
}

pub(crate) fn refusal_text(line: &Value) -> String {
    assert_eq!(line["result"]["isError"], true, "{line}");
    line["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn allow_passes_the_call_byte_for_byte_and_is_audited() {
    let app = spawn_app().await;
    let mut proxy = started(&app, 1).await;
    let line = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"/a","n":1.50}}}"#;
    proxy.send(line).await;
    assert_eq!(host_line(&mut proxy).await["id"], 7);
    assert_eq!(proxy.server_received("\"id\":7").await, line);
    let audit = eventually(Duration::from_secs(10), || async {
        let log: Value = app.get("/api/v1/audit").await.json().await.unwrap();
        log["entries"]
            .as_array()?
            .iter()
            .find(|e| e["action"] == "tool_allowed")
            .cloned()
    })
    .await
    .expect("the allowed call is audited");
    assert_eq!(audit["tool"], "read_file");
    assert_eq!(audit["actor"], "rule:tools.default");
    assert!(
        !audit.to_string().contains("/a"),
        "no arguments in the audit: {audit}"
    );
    let metrics = app.get("/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains(r#"mcp_consent_tool_calls_total{decision="allowed"} 1"#),
        "{metrics}"
    );
}

#[tokio::test]
async fn deny_never_reaches_the_server_and_the_host_is_told_why() {
    let app = spawn_with(rules(
        "[[rules]]\nserver = \"fa?e\"\ntool = \"delete_*\"\naction = \"deny\"\n",
    ))
    .await;
    let mut proxy = started(&app, 0).await;
    proxy
        .send(&call(3, "delete_file", "/home/me/everything"))
        .await;
    let answer = host_line(&mut proxy).await;
    assert_eq!(answer["id"], 3);
    let text = refusal_text(&answer);
    assert!(
        text.contains("delete_file") && text.contains("fake") && text.contains("rules"),
        "{text}"
    );
    flush(&mut proxy, "after-deny").await;
    assert!(
        calls_received(&proxy).is_empty(),
        "{:?}",
        calls_received(&proxy)
    );
}

#[tokio::test]
async fn ask_forwards_exactly_the_call_the_person_accepted_and_only_then() {
    let app = spawn_with(rules("default = \"ask\"\n")).await;
    let browser = app.login().await;
    let mut proxy = started(&app, 1).await;
    proxy
        .send(&call(4, "delete_file", "/home/me/notes-a.txt"))
        .await;
    let q = pending_call(&app, &browser).await;
    assert_eq!(q["kind"], "tool_call");
    assert_eq!(q["server"], "fake");
    assert_eq!(q["tool"], "delete_file");
    assert_eq!(q["request"]["name"], "delete_file");
    assert_eq!(
        q["request"]["arguments"],
        json!({"path": "/home/me/notes-a.txt"})
    );
    assert_eq!(q["toolInfo"]["description"], "Deletes a file.");
    let id = q["id"].as_str().unwrap();

    // The token (an agent) neither sees nor answers it.
    let listed: Value = app
        .get("/api/v1/questions?state=pending")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(listed["questions"], json!([]));
    let (status, refused) = app.answer(id, json!({"action": "accept"})).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(
        refused
            .to_string()
            .contains("must not approve its own calls"),
        "{refused}"
    );
    flush(&mut proxy, "while-asking").await;
    assert!(
        calls_received(&proxy).is_empty(),
        "held until the person answers"
    );

    let (status, body) = person_answers(&app, &browser, id, json!({"action": "accept"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(host_line(&mut proxy).await["id"], 4);
    let calls = calls_received(&proxy);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["id"], 4);
    assert_eq!(
        calls[0]["params"]["arguments"]["path"],
        "/home/me/notes-a.txt"
    );
}

#[tokio::test]
async fn edited_arguments_are_checked_against_the_schema_then_sent_instead() {
    let app = spawn_with(rules("default = \"ask\"\n")).await;
    let browser = app.login().await;
    let mut proxy = started(&app, 1).await;
    proxy
        .send(&call(5, "delete_file", "/home/me/everything"))
        .await;
    let q = pending_call(&app, &browser).await;
    let id = q["id"].as_str().unwrap();
    let (status, body) = person_answers(
        &app,
        &browser,
        id,
        json!({"action": "accept", "arguments": {"path": 7}}),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["errors"][0]["field"], "path");
    assert_eq!(app.question_as(&browser, id).await["state"], "pending");
    let (status, _) = person_answers(
        &app,
        &browser,
        id,
        json!({"action": "accept", "arguments": {"path": "/home/me/tmp.txt"}}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(host_line(&mut proxy).await["id"], 5);
    let calls = calls_received(&proxy);
    assert_eq!(calls.len(), 1);
    assert_eq!(
        calls[0]["params"]["arguments"],
        json!({"path": "/home/me/tmp.txt"})
    );
    // The owner's audit (over the socket: over TCP a person's decisions on the proxy's
    // questions are left out).
    let log: Value = app
        .get_over_socket("/api/v1/audit")
        .await
        .json()
        .await
        .unwrap();
    assert!(
        log["entries"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["action"] == "tool_edited"),
        "{log}"
    );
}

#[tokio::test]
async fn a_declined_call_is_never_forwarded() {
    let app = spawn_with(rules("default = \"ask\"\n")).await;
    let browser = app.login().await;
    let mut proxy = started(&app, 0).await;
    proxy
        .send(&call(6, "delete_file", "/home/me/everything"))
        .await;
    let q = pending_call(&app, &browser).await;
    person_answers(
        &app,
        &browser,
        q["id"].as_str().unwrap(),
        json!({"action": "decline"}),
    )
    .await;
    let answer = host_line(&mut proxy).await;
    assert_eq!(answer["id"], 6);
    assert!(refusal_text(&answer).contains("declined"));
    flush(&mut proxy, "after-decline").await;
    assert!(calls_received(&proxy).is_empty());
}

#[tokio::test]
async fn an_expired_question_is_an_error_result_and_nothing_is_forwarded() {
    let mut config = rules("default = \"ask\"\n");
    config.question_timeout_secs = 1;
    let app = spawn_with(config).await;
    let mut proxy = started(&app, 0).await;
    proxy.send(&call(8, "delete_file", "/x")).await;
    let answer = host_line(&mut proxy).await;
    assert_eq!(answer["id"], 8);
    assert!(refusal_text(&answer).contains("expired"), "{answer}");
    flush(&mut proxy, "after-expiry").await;
    assert!(calls_received(&proxy).is_empty());
}

#[tokio::test]
async fn the_host_cancelling_withdraws_the_question_and_nothing_is_forwarded() {
    let app = spawn_with(rules("default = \"ask\"\n")).await;
    let browser = app.login().await;
    let mut proxy = started(&app, 0).await;
    proxy.send(&call(9, "delete_file", "/x")).await;
    let q = pending_call(&app, &browser).await;
    proxy
        .send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}"#)
        .await;
    let id = q["id"].as_str().unwrap().to_owned();
    let withdrawn = eventually(Duration::from_secs(10), || async {
        (app.question_as(&browser, &id).await["state"] == "withdrawn").then_some(())
    })
    .await;
    assert!(withdrawn.is_some());
    flush(&mut proxy, "after-cancel").await;
    assert!(calls_received(&proxy).is_empty());
    // The server never had the call, so it is not told of its cancellation either.
    assert!(
        !proxy.server_got("notifications/cancelled"),
        "{:?}",
        proxy.server_log()
    );
}

#[tokio::test]
async fn a_grant_answers_the_waiting_calls_of_that_tool_and_the_next_ones() {
    let app = spawn_with(rules("default = \"ask\"\n")).await;
    let browser = app.login().await;
    let mut proxy = started(&app, 3).await;
    proxy.send(&call(10, "delete_file", "/a")).await;
    proxy.send(&call(11, "delete_file", "/b")).await;
    let both = eventually(Duration::from_secs(10), || async {
        let list: Value = browser
            .get(format!("{}/api/v1/questions?state=pending", app.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let q = list["questions"].as_array()?.clone();
        (q.len() == 2).then_some(q)
    })
    .await
    .expect("two questions, one per call");
    let first = both[0]["id"].as_str().unwrap();
    let (status, _) = person_answers(
        &app,
        &browser,
        first,
        json!({"action": "accept", "grant": "hour"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let mut ids = vec![
        host_line(&mut proxy).await["id"].clone(),
        host_line(&mut proxy).await["id"].clone(),
    ];
    ids.sort_by_key(|v| v.as_u64());
    assert_eq!(ids, vec![json!(10), json!(11)]);
    let policy: Value = app.get("/api/v1/tools/policy").await.json().await.unwrap();
    assert_eq!(policy["grants"][0]["tool"], "delete_file");
    // The proxy follows the grant: the next call passes without a question.
    let passed = eventually(Duration::from_secs(10), || async {
        let p: Value = app.get("/api/v1/tools/policy").await.json().await.unwrap();
        (!p["grants"].as_array()?.is_empty()).then_some(())
    })
    .await;
    assert!(passed.is_some());
    tokio::time::sleep(Duration::from_millis(1500)).await;
    proxy.send(&call(12, "delete_file", "/c")).await;
    assert_eq!(host_line(&mut proxy).await["id"], 12);
    assert_eq!(calls_received(&proxy).len(), 3);

    // The rules page lists the grant, and revoking it there ends it at once (audited).
    let page = app.html(&browser, "/rules").await;
    assert!(page.contains("delete_file"), "{page}");
    let grant = policy["grants"][0]["id"].as_str().unwrap();
    let res = browser
        .post(format!("{}/rules/grants/{grant}/revoke", app.base))
        .form(&[("csrf", csrf_of(&page))])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    let after: Value = app.get("/api/v1/tools/policy").await.json().await.unwrap();
    assert_eq!(after["grants"], json!([]));
    let log: Value = app.get("/api/v1/audit").await.json().await.unwrap();
    let entries = log["entries"].as_array().unwrap_or_else(|| panic!("{log}"));
    assert!(
        entries.iter().any(|e| e["action"] == "grant_revoked"),
        "{log}"
    );
}

#[tokio::test]
async fn a_second_request_under_a_pending_id_gets_an_error_of_its_own() {
    let app = spawn_with(rules("default = \"ask\"\n")).await;
    let browser = app.login().await;
    let mut proxy = started(&app, 1).await;
    proxy.send(&call(13, "delete_file", "/a")).await;
    let q = pending_call(&app, &browser).await;
    proxy.send(&call(13, "delete_file", "/everything")).await;
    let refused = host_line(&mut proxy).await;
    assert_eq!(refused["id"], 13);
    assert_eq!(refused["error"]["code"], -32600);
    person_answers(
        &app,
        &browser,
        q["id"].as_str().unwrap(),
        json!({"action": "accept"}),
    )
    .await;
    assert_eq!(host_line(&mut proxy).await["id"], 13);
    let calls = calls_received(&proxy);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["params"]["arguments"]["path"], "/a");
}

#[tokio::test]
async fn a_refusal_under_2026_07_28_is_a_complete_result() {
    let app = spawn_with(rules("default = \"deny\"\n")).await;
    let mut proxy = Proxy::start(&app.state, None, json!([]));
    proxy
        .send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#)
        .await;
    let answer = host_line(&mut proxy).await;
    assert_eq!(answer["result"]["resultType"], "complete");
    assert_eq!(answer["result"]["isError"], true);
}

#[tokio::test]
async fn the_proxy_follows_a_config_reload() {
    let app = spawn_app().await;
    let mut proxy = started(&app, 1).await;
    app.reloader.apply(rules("default = \"deny\"\n")).unwrap();
    let denied = eventually(Duration::from_secs(5), || async {
        let p: Value = app.get("/api/v1/tools/policy").await.json().await.unwrap();
        (p["tools"]["default"] == "deny").then_some(())
    })
    .await;
    assert!(denied.is_some());
    // Within two seconds of the reload the proxy judges by it.
    tokio::time::sleep(Duration::from_millis(2000)).await;
    proxy.send(&call(14, "read_file", "/a")).await;
    assert!(refusal_text(&host_line(&mut proxy).await).contains("rules"));
}

#[tokio::test]
async fn a_read_only_rule_matches_the_servers_claim_and_asks_about_the_rest() {
    let app = spawn_with(rules(
        "default = \"ask\"\n[[rules]]\nread_only = true\naction = \"allow\"\n",
    ))
    .await;
    let browser = app.login().await;
    let mut proxy = started(&app, 1).await;
    // `read_file` is listed with `readOnlyHint: true`: the person's rule allows it.
    proxy.send(&call(15, "read_file", "/a")).await;
    assert_eq!(
        host_line(&mut proxy).await["result"]["content"][0]["text"],
        "done"
    );
    // `delete_file` claims no such thing: the default asks.
    proxy.send(&call(16, "delete_file", "/a")).await;
    let q = pending_call(&app, &browser).await;
    assert_eq!(q["tool"], "delete_file");
    flush(&mut proxy, "after-delete").await;
    let calls = calls_received(&proxy);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["params"]["name"], "read_file");
}

#[tokio::test]
async fn before_the_service_answers_the_proxy_judges_by_the_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        "[tools]\ndefault = \"allow\"\n[[tools.rules]]\ntool = \"delete_*\"\naction = \"ask\"\n[[tools.rules]]\ntool = \"drop_*\"\naction = \"deny\"\n",
    )
    .unwrap();
    let state = dir.path().join("state");
    let proxy = Proxy::start_with_env(
        &state,
        Some("http://127.0.0.1:9"),
        server(1),
        &[("MCP_CONSENT_CONFIG", &config)],
    );
    let mut proxy = listed(proxy).await;
    // `ask` with no service to ask: fail closed.
    proxy.send(&call(17, "delete_file", "/a")).await;
    assert!(refusal_text(&host_line(&mut proxy).await).contains("cannot be reached"));
    proxy.send(&call(18, "drop_db", "/a")).await;
    assert!(refusal_text(&host_line(&mut proxy).await).contains("tools.rules[2]"));
    // `allow` keeps working without the service.
    proxy.send(&call(19, "read_file", "/a")).await;
    assert_eq!(
        host_line(&mut proxy).await["result"]["content"][0]["text"],
        "done"
    );
    let calls = calls_received(&proxy);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["params"]["name"], "read_file");
}

#[tokio::test]
async fn while_the_service_is_down_the_proxy_judges_by_the_config_the_service_started_with() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("elsewhere.toml");
    std::fs::write(
        &config,
        "[tools]\n[[tools.rules]]\ntool = \"drop_*\"\naction = \"deny\"\n",
    )
    .unwrap();
    let state = dir.path().join("state");
    // `serve --config FILE`: not the default location, and no MCP_CONSENT_CONFIG for the
    // proxy; the service records which file it read.
    let mut service = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp-consent"))
        .args(["serve", "--listen", "127.0.0.1:0", "--state-dir"])
        .arg(&state)
        .arg("--config")
        .arg(&config)
        .env_remove("MCP_CONSENT_CONFIG")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    listening_on(&mut service).await;
    service.kill().await.unwrap();
    service.wait().await.unwrap();

    let proxy = Proxy::start(&state, Some("http://127.0.0.1:9"), server(1));
    let mut proxy = listed(proxy).await;
    proxy.send(&call(21, "drop_db", "/a")).await;
    assert!(refusal_text(&host_line(&mut proxy).await).contains("tools.rules[1]"));
    flush(&mut proxy, "after-drop").await;
    assert!(calls_received(&proxy).is_empty());
}
