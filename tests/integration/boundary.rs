//! The trust boundary in the proxy: nothing a host could take as a sampling or elicitation
//! request reaches it. 2026-07-28 `InputRequiredResult`s (MRTR) and 2025-11-25 `-32042` errors
//! become questions; lines the proxy cannot judge are dropped and the waiting side is told;
//! the host's exit withdraws questions and ends the server.

use std::time::Duration;

use serde_json::{Value, json};

use crate::helpers::*;
use crate::host::{Proxy, init_result, pending_question, state_becomes};

/// A 2026-07-28 host's `tools/call`: capabilities only in `_meta`, and none declared.
const CALL: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"think","arguments":{"n":1.50},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

fn asks_for_sampling() -> Value {
    json!({"resultType": "input_required", "inputRequests": {"q1": {"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}], "maxTokens": 10}}},
        "requestState": "opaque-abc"})
}

fn asks_for_a_form() -> Value {
    json!({"resultType": "input_required", "inputRequests": {"who": {"method": "elicitation/create", "params": {
        "mode": "form", "message": "Who are you?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}}},
        "requestState": "s-1"})
}

fn done(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "resultType": "complete"})
}

/// The id of the first pending question, as the logged-in `browser` lists them, once one is open.
async fn pending_id(app: &TestApp, browser: &reqwest::Client) -> String {
    first_pending_id(|| browser.get(format!("{}/api/v1/questions?state=pending", app.base))).await
}

/// The next line the host gets that is not a progress notification.
async fn host_response(proxy: &mut Proxy) -> Value {
    loop {
        let line: Value = serde_json::from_str(&proxy.recv().await).unwrap();
        if line["method"] != "notifications/progress" {
            return line;
        }
    }
}

/// TV-S22: the sampling entry is asked, the request is re-sent under a new id with the answer
/// and `requestState` byte for byte, and the host gets only the final result, under its id.
#[tokio::test]
async fn an_mrtr_sampling_request_is_asked_and_retried() {
    let app = spawn_app().await;
    let script = json!([
        {"until": "tools/call"}, {"reply": asks_for_sampling()},
        {"until": "tools/call"}, {"reply": done("model said 4")},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    proxy.send(CALL).await;

    let question = pending_question(&app).await;
    assert_eq!(
        (question["kind"].as_str(), question["tool"].as_str()),
        (Some("sampling"), Some("think"))
    );
    let id = question["id"].as_str().unwrap();
    assert_eq!(app.question(id).await["protocolVersion"], "2026-07-28");
    let result =
        json!({"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m"});
    let (status, _) = app
        .answer(id, json!({"action": "accept", "result": result}))
        .await;
    assert_eq!(status, reqwest::StatusCode::OK);

    let answer = host_response(&mut proxy).await;
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["result"], done("model said 4"));

    let log = proxy.server_log();
    let calls: Vec<&String> = log.iter().filter(|l| l.contains("tools/call")).collect();
    assert_eq!(calls.len(), 2, "{log:?}");
    let first: Value = serde_json::from_str(calls[0]).unwrap();
    assert_eq!(
        first["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"],
        json!({"sampling": {"tools": {}}, "elicitation": {"form": {}, "url": {}}}),
        "the proxy declares what it answers for in every 2026-07-28 request"
    );
    let retry_text = calls[1];
    assert!(
        retry_text.contains(r#""requestState":"opaque-abc""#),
        "{retry_text}"
    );
    assert!(
        retry_text.contains(r#""arguments":{"n":1.50}"#),
        "other members kept: {retry_text}"
    );
    let retry: Value = serde_json::from_str(retry_text).unwrap();
    assert_ne!(retry["id"], 2, "the retry has an id of its own");
    assert_eq!(retry["params"]["inputResponses"], json!({"q1": result}));
}

/// A person's rejection of a sampling entry ends the host's request with -1; nothing is
/// retried. (The spec lets the client not replay, SA20.)
#[tokio::test]
async fn a_declined_mrtr_sampling_request_fails_the_host_request_with_minus_1() {
    let app = spawn_app().await;
    let script = json!([{"until": "tools/call"}, {"reply": asks_for_sampling()}]);
    let mut proxy = Proxy::start(&app.state, None, script);
    proxy.send(CALL).await;
    let question = pending_question(&app).await;
    let (status, _) = app
        .answer(
            question["id"].as_str().unwrap(),
            json!({"action": "decline"}),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::OK);
    let answer = host_response(&mut proxy).await;
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["error"]["code"], -1);
    assert_eq!(answer["error"]["message"], "User rejected sampling request");
    assert_eq!(
        proxy
            .server_log()
            .iter()
            .filter(|l| l.contains("tools/call"))
            .count(),
        1
    );
}

/// A form decline goes back to the server as that action (TV-E24's shape for forms).
#[tokio::test]
async fn an_mrtr_form_decline_is_sent_as_the_action() {
    let app = spawn_app().await;
    let script = json!([
        {"until": "tools/call"}, {"reply": asks_for_a_form()},
        {"until": "tools/call"}, {"reply": done("you declined")},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    proxy.send(CALL).await;
    let question = pending_question(&app).await;
    assert_eq!(question["kind"], "form");
    app.answer(
        question["id"].as_str().unwrap(),
        json!({"action": "decline"}),
    )
    .await;
    assert_eq!(
        host_response(&mut proxy).await["result"],
        done("you declined")
    );
    let retry: Value =
        serde_json::from_str(&proxy.server_received("inputResponses").await).unwrap();
    assert_eq!(
        retry["params"]["inputResponses"],
        json!({"who": {"action": "decline"}})
    );
    assert_eq!(retry["params"]["requestState"], "s-1");
}

/// Entries the proxy does not answer still reach the host, without the asked ones; the
/// host's retry is completed with the person's answer before it reaches the server.
#[tokio::test]
async fn foreign_entries_go_to_the_host_and_its_retry_gets_the_answers() {
    let app = spawn_app().await;
    let mut mixed = asks_for_a_form();
    mixed["inputRequests"]["roots"] = json!({"method": "roots/list"});
    let script = json!([
        {"until": "tools/call"}, {"reply": mixed},
        {"until": "tools/call"}, {"reply": done("all answered")},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    proxy.send(CALL).await;
    let question = pending_question(&app).await;
    app.answer(
        question["id"].as_str().unwrap(),
        json!({"action": "accept", "content": {"name": "Ada"}}),
    )
    .await;
    let asked = host_response(&mut proxy).await;
    assert_eq!(asked["id"], 2);
    assert_eq!(
        asked["result"]["inputRequests"],
        json!({"roots": {"method": "roots/list"}}),
        "the host sees only what is its to answer"
    );
    // The host is handed a state of the proxy's own, which binds its retry to this round.
    let handed = asked["result"]["requestState"].as_str().unwrap().to_owned();
    assert!(handed.starts_with("mcp-consent-held-"), "{handed}");

    // The host retries with its own answer, and tries to slip in one for the asked entry.
    let retry = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "think", "arguments": {"n": 1.50},
        "inputResponses": {"roots": {"roots": []}, "who": {"action": "accept", "content": {"name": "Mallory"}}},
        "requestState": handed, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
    proxy.send(&retry.to_string()).await;
    assert_eq!(
        host_response(&mut proxy).await["result"],
        done("all answered")
    );
    let retry: Value = serde_json::from_str(&proxy.server_received("Ada").await).unwrap();
    assert_eq!(retry["id"], 3);
    assert_eq!(
        retry["params"]["inputResponses"],
        json!({"roots": {"roots": []}, "who": {"action": "accept", "content": {"name": "Ada"}}})
    );
    assert_eq!(
        retry["params"]["requestState"], "s-1",
        "the server gets its own state back"
    );
}

/// The host cancelling its request withdraws the question asked for it.
#[tokio::test]
async fn the_host_cancelling_withdraws_the_mrtr_question() {
    let app = spawn_app().await;
    let script = json!([{"until": "tools/call"}, {"reply": asks_for_a_form()}]);
    let mut proxy = Proxy::start(&app.state, None, script);
    proxy.send(CALL).await;
    let question = pending_question(&app).await;
    proxy
        .send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#)
        .await;
    state_becomes(&app, question["id"].as_str().unwrap(), "withdrawn").await;
}

/// A server that keeps asking is stopped after 16 rounds with an honest error.
#[tokio::test]
async fn rounds_are_bounded() {
    let app = spawn_app().await;
    let mut steps = vec![];
    for _ in 0..17 {
        steps.push(json!({"until": "tools/call"}));
        steps.push(json!({"reply": asks_for_a_form()}));
    }
    let mut proxy = Proxy::start(&app.state, None, Value::Array(steps));
    proxy.send(CALL).await;
    for _ in 0..16 {
        let question = pending_question(&app).await;
        let id = question["id"].as_str().unwrap().to_owned();
        app.answer(&id, json!({"action": "accept", "content": {"name": "Ada"}}))
            .await;
        state_becomes(&app, &id, "accepted").await;
    }
    let answer = host_response(&mut proxy).await;
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["error"]["code"], -32603);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("16 times")
    );
}

/// 2025-11-25: a `-32042` opens the URL question it lists; the host never gets the URL, and
/// after a decline it gets the error without it.
#[tokio::test]
async fn a_url_elicitation_required_error_becomes_a_question() {
    let app = spawn_app().await;
    let error = json!({"code": -32042, "message": "This request requires more information.", "data": {"elicitations": [
        {"mode": "url", "elicitationId": "e-1", "url": "https://mcp.example.com/connect?elicitationId=e-1", "message": "Authorize"}]}});
    let script = json!([
        {"until": "initialize"}, init_result("2025-11-25"),
        {"until": "tools/call"}, {"reply_error": error},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    proxy.initialize().await;
    proxy
        .send(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"connect","arguments":{}}}"#)
        .await;
    let browser = app.login().await;
    let id = pending_id(&app, &browser).await;
    let full = app.question_as(&browser, &id).await;
    assert_eq!(full["kind"], "url");
    assert_eq!(full["tool"], "connect");
    let page = app.html(&browser, &format!("/questions/{id}")).await;
    assert!(page.contains("mcp.example.com"), "the person sees the URL");
    let res = browser
        .post(format!("{}/questions/{id}/answer", app.base))
        .form(&[("csrf", csrf_of(&page).as_str()), ("action", "decline")])
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success() || res.status().is_redirection());
    let answer = host_response(&mut proxy).await;
    assert_eq!(answer["id"], 5);
    assert_eq!(answer["error"]["code"], -32042);
    assert!(!answer.to_string().contains("mcp.example.com"), "{answer}");
}

/// Lines the proxy cannot judge never reach the host; a dropped response fails the host's
/// request instead of leaving it waiting; a dropped request gets the server an error.
#[tokio::test]
async fn what_cannot_be_judged_is_dropped_and_the_waiting_side_told() {
    let app = spawn_app().await;
    let deep = format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"data":{}1{}}}}}"#,
        "[".repeat(1000),
        "]".repeat(1000)
    );
    let script = json!([
        {"until": "initialize"}, init_result("2025-11-25"),
        {"until": "tools/call"},
        // Python's parser reads NaN; serde_json does not: this must not reach the host.
        {"raw": r#"{"jsonrpc":"2.0","id":40,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":NaN}}"#},
        {"raw": r#"{"jsonrpc":"2.0","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}"#},
        {"raw": r#"{"jsonrpc":"2.0","id":41,"method":"ping","method":"elicitation/create","params":{}}"#},
        {"raw": r#"{"jsonrpc":"2.0","id":77,"result":{"resultType":"input_required","inputRequests":{}}}"#},
        {"raw": r#"{"jsonrpc":"2.0","id":6,"result":{"content":[],"x":Infinity}}"#},
        {"raw": deep},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    proxy.initialize().await;
    proxy
        .send(r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"t","arguments":{}}}"#)
        .await;
    let failed: Value = serde_json::from_str(&proxy.recv().await).unwrap();
    assert_eq!(failed["id"], 6);
    assert_eq!(failed["error"]["code"], -32603);
    let deep_seen = proxy.recv().await;
    assert_eq!(
        deep_seen, deep,
        "valid JSON of any depth passes byte for byte"
    );
    for id in ["40", "41"] {
        let line = proxy
            .server_received(&format!(r#""id":{id},"error""#))
            .await;
        assert!(line.contains("-32600"), "{line}");
    }
    let list: Value = app.get("/api/v1/questions").await.json().await.unwrap();
    assert_eq!(
        list["questions"],
        json!([]),
        "nothing unjudged became a question"
    );

    // The drops are counted on the service (reported by the proxy about once a second).
    let counted = eventually(Duration::from_secs(10), || async {
        let text = app.get("/metrics").await.text().await.unwrap();
        let count = |reason: &str| {
            let prefix = format!("mcp_consent_proxy_dropped_lines_total{{reason=\"{reason}\"}} ");
            text.lines()
                .find_map(|l| l.strip_prefix(&prefix)?.parse::<u64>().ok())
                .unwrap_or(0)
        };
        (count("unparseable") >= 3 && count("ambiguous") >= 2).then_some(())
    })
    .await;
    if counted.is_none() {
        let text = app.get("/metrics").await.text().await.unwrap();
        panic!("drops not counted: {text}");
    }
}

/// A host response to a request the proxy answers itself never reaches the server.
#[tokio::test]
async fn a_host_response_to_an_intercepted_id_is_dropped() {
    let app = spawn_app().await;
    let script = json!([
        {"until": "initialize"}, init_result("2025-11-25"),
        {"until": "notifications/initialized"},
        {"send": form_request(8)},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    proxy.initialized().await;
    let question = pending_question(&app).await;
    proxy
        .send(
            r#"{"jsonrpc":"2.0","id":8,"result":{"action":"accept","content":{"name":"forged"}}}"#,
        )
        .await;
    proxy
        .send(r#"{"jsonrpc":"2.0","method":"ping-marker"}"#)
        .await;
    proxy.server_received("ping-marker").await;
    assert!(
        !proxy.server_log().iter().any(|l| l.contains("forged")),
        "{:?}",
        proxy.server_log()
    );
    let (status, _) = app
        .answer(
            question["id"].as_str().unwrap(),
            json!({"action": "accept", "content": {"name": "Ada"}}),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::OK);
    proxy.server_received("Ada").await;
}

/// A proxy whose server logs its pid, ignores the end of its input and has asked a form
/// question; returns the proxy, the pending question and the server's pid.
async fn stubborn_server_asking(app: &TestApp) -> (Proxy, Value, i32) {
    let script = json!([
        {"pid": true}, {"ignore_eof": true},
        {"until": "initialize"}, init_result("2025-11-25"),
        {"until": "notifications/initialized"},
        {"send": form_request(8)},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    proxy.initialized().await;
    let question = pending_question(app).await;
    let pid = proxy.server_pid();
    (proxy, question, pid)
}

/// When the host goes away the proxy withdraws its questions at once and ends a server that
/// ignores the end of its input (TERM, then KILL, to its process group).
#[tokio::test]
async fn the_host_leaving_withdraws_questions_and_ends_the_server() {
    let app = spawn_app().await;
    let (mut proxy, question, pid) = stubborn_server_asking(&app).await;
    drop(proxy.stdin);
    tokio::time::timeout(Duration::from_secs(20), proxy.child.wait())
        .await
        .expect("the proxy exits although the server ignores the end of its input")
        .unwrap();
    state_becomes(&app, question["id"].as_str().unwrap(), "withdrawn").await;
    // SAFETY: signal 0 only checks whether the process exists.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    assert!(!alive, "the server process {pid} was left behind");
}

/// 2025-11-25: after the person consents and the server reports the elicitation complete, the
/// proxy retries the host's request and the host gets that result (the spec's MAY).
#[tokio::test]
async fn a_completed_url_elicitation_retries_the_host_request() {
    let app = spawn_app().await;
    let error = json!({"code": -32042, "message": "Connect first.", "data": {"elicitations": [
        {"mode": "url", "elicitationId": "e-2", "url": "https://mcp.example.com/connect?e=2", "message": "Authorize"}]}});
    let script = json!([
        {"until": "initialize"}, init_result("2025-11-25"),
        {"until": "tools/call"}, {"reply_error": error},
        {"until": "consented-marker"},
        {"send": {"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": {"elicitationId": "e-2"}}},
        {"until": "tools/call"}, {"reply": {"content": [{"type": "text", "text": "connected"}]}},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    proxy.initialize().await;
    proxy
        .send(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"connect","arguments":{}}}"#)
        .await;
    let browser = app.login().await;
    let id = pending_id(&app, &browser).await;
    let res = browser
        .get(format!("{}/questions/{id}/open", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), reqwest::StatusCode::SEE_OTHER);
    proxy
        .send(r#"{"jsonrpc":"2.0","method":"consented-marker"}"#)
        .await;
    let answer = host_response(&mut proxy).await;
    assert_eq!(answer["id"], 5);
    assert_eq!(answer["result"]["content"][0]["text"], "connected");
    // The service learns of the completion from the proxy, alongside the retry.
    eventually(Duration::from_secs(10), || async {
        (app.question_as(&browser, &id).await["state"] == "completed").then_some(())
    })
    .await
    .expect("never completed");
    let retry = proxy
        .server_log()
        .into_iter()
        .filter(|l| l.contains("tools/call"))
        .nth(1)
        .unwrap();
    let retry: Value = serde_json::from_str(&retry).unwrap();
    assert_ne!(retry["id"], 5, "the retry has an id of its own");
}

/// While the person thinks, a 2026-07-28 host request that carried a progress token gets
/// `notifications/progress` with a strictly increasing `progress` (G13).
#[tokio::test]
async fn the_waiting_host_gets_progress() {
    let app = spawn_app().await;
    let script = json!([{"until": "tools/call"}, {"reply": asks_for_a_form()}]);
    let mut proxy = Proxy::start(&app.state, None, script);
    proxy
        .send(&CALL.replace(r#""_meta":{"#, r#""_meta":{"progressToken":"tok-9","#))
        .await;
    pending_question(&app).await;
    let note: Value = serde_json::from_str(&proxy.recv().await).unwrap();
    assert_eq!(note["method"], "notifications/progress");
    assert_eq!(note["params"]["progressToken"], "tok-9");
    assert_eq!(note["params"]["progress"], 1);
}

/// SIGTERM to the proxy (the host stopping it) withdraws its questions and ends the server's
/// process group.
#[tokio::test]
async fn sigterm_withdraws_questions_and_ends_the_server() {
    let app = spawn_app().await;
    let (mut proxy, question, pid) = stubborn_server_asking(&app).await;
    let proxy_pid = i32::try_from(proxy.child.id().unwrap()).unwrap();
    // SAFETY: sends SIGTERM to the proxy process this test started.
    unsafe { libc::kill(proxy_pid, libc::SIGTERM) };
    tokio::time::timeout(Duration::from_secs(20), proxy.child.wait())
        .await
        .expect("the proxy exits on SIGTERM")
        .unwrap();
    state_becomes(&app, question["id"].as_str().unwrap(), "withdrawn").await;
    // SAFETY: signal 0 only checks whether the process exists.
    assert!(
        unsafe { libc::kill(pid, 0) } != 0,
        "the server {pid} was left behind"
    );
}

/// A `-32042` whose code is spelled so that a host parser still reads -32042 (a float, a
/// duplicated member) is judged like the plain one: the host never gets its URLs.
#[tokio::test]
async fn a_url_required_error_in_any_spelling_loses_its_urls() {
    let app = spawn_app().await;
    let script = json!([
        {"until": "initialize"}, init_result("2025-11-25"),
        {"until": "tools/call"},
        {"raw": r#"{"jsonrpc":"2.0","id":5,"error":{"code":1,"code":-32042.0,"message":"m","data":{"elicitations":[{"mode":"url","elicitationId":"e1","url":"javascript:alert(1)","message":"log in"}]}}}"#},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    proxy.initialize().await;
    proxy
        .send(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"connect","arguments":{}}}"#)
        .await;
    let answer = host_response(&mut proxy).await;
    assert_eq!(answer["id"], 5);
    assert_eq!(answer["error"]["code"], -32042);
    assert!(!answer.to_string().contains("javascript"), "{answer}");
}

/// While the proxy's retry is in flight, a response under the host's own id cannot start a
/// second round (which would reset the round limit); only the retry's answer counts.
#[tokio::test]
async fn a_response_under_the_host_id_during_a_retry_is_dropped() {
    let app = spawn_app().await;
    let again = json!({"jsonrpc": "2.0", "id": 2, "result": asks_for_a_form()});
    let script = json!([
        {"until": "tools/call"}, {"reply": asks_for_a_form()},
        {"until": "tools/call"}, {"send": again}, {"reply": done("one round only")},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    proxy.send(CALL).await;
    let question = pending_question(&app).await;
    app.answer(
        question["id"].as_str().unwrap(),
        json!({"action": "accept", "content": {"name": "Ada"}}),
    )
    .await;
    let answer = host_response(&mut proxy).await;
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["result"], done("one round only"));
    let list: Value = app.get("/api/v1/questions").await.json().await.unwrap();
    assert_eq!(list["questions"].as_array().unwrap().len(), 1, "{list}");
}
