//! The stdio proxy as a host runs it: the real binary between a test "host" (this test) and a
//! scripted server (`fake_server.py`), with the service running in-process.

use std::process::Stdio;
use std::time::Duration;

use mcp_consent::config::Config;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

use crate::helpers::*;
use crate::host::{Proxy, init_result, pending_question, state_becomes};

#[tokio::test]
async fn everything_else_passes_through_byte_for_byte() {
    let app = spawn_app().await;
    let note = r#"{"jsonrpc":"2.0",  "method":"notifications/message","params":{"level":"info","data":1.50}}"#;
    let script = json!([
        {"until": "initialize"}, init_result("2025-11-25"),
        {"raw": "this line is not JSON"},
        {"raw": note},
        {"until": "server/discover"},
        {"send": {"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "Method not found"}}},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    let init = proxy.initialize().await;
    assert_eq!(
        serde_json::from_str::<Value>(&init).unwrap()["result"]["protocolVersion"],
        "2025-11-25"
    );
    // The server's non-JSON line cannot be judged, so it never reaches the host (fail closed);
    // the valid line after it arrives exactly as written.
    assert_eq!(proxy.recv().await, note);

    // A newer revision's probe: its `_meta` gains the capabilities the proxy answers for, and
    // every other member keeps its text. A non-JSON host line is dropped, as a server's is:
    // the server might read it as something the proxy never judged.
    let probe = r#"{"jsonrpc":"2.0",  "id":2,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","x":1.0}}}"#;
    proxy.send(probe).await;
    assert!(proxy.recv().await.contains("-32601"));
    proxy.send("garbage from the host {").await;
    let marker =
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"marker":"after"}}"#;
    proxy.send(marker).await;
    proxy.server_received("\"after\"").await;

    let log = proxy.server_log();
    assert!(!log.iter().any(|l| l.contains("garbage")), "{log:?}");
    let forwarded = log.iter().find(|l| l.contains("server/discover")).unwrap();
    assert!(forwarded.contains(r#""x":1.0"#), "{forwarded}");
    let forwarded: Value = serde_json::from_str(forwarded).unwrap();
    assert_eq!(
        forwarded["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"],
        json!({"sampling": {"tools": {}}, "elicitation": {"form": {}, "url": {}}})
    );
    let init_seen: Value =
        serde_json::from_str(log.iter().find(|l| l.contains("initialize")).unwrap()).unwrap();
    let caps = &init_seen["params"]["capabilities"];
    assert_eq!(caps["sampling"], json!({"tools": {}}));
    assert_eq!(caps["elicitation"], json!({"form": {}, "url": {}}));
    assert_eq!(caps["roots"], json!({}));

    drop(proxy.stdin);
    let status = tokio::time::timeout(Duration::from_secs(10), proxy.child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(
        status.success(),
        "the proxy exits with the server when the host closes"
    );
}

#[tokio::test]
async fn a_sampling_request_is_answered_through_the_service_and_hidden_from_the_host() {
    let app = spawn_app().await;
    let request = json!({"jsonrpc": "2.0", "id": 0, "method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}], "maxTokens": 10}});
    let script = json!([
        {"until": "initialize"}, init_result("2025-06-18"),
        {"until": "tools/call"},
        {"send": request},
        {"until_response": 0},
        {"send": {"jsonrpc": "2.0", "id": 9, "result": {"content": [{"type": "text", "text": "tool done"}]}}},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    proxy.initialize().await;
    proxy
        .send(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"ask-model","arguments":{}}}"#)
        .await;

    let question = pending_question(&app).await;
    assert_eq!(question["server"], "fake");
    assert_eq!(question["tool"], "ask-model");
    let id = question["id"].as_str().unwrap();
    assert_eq!(app.question(id).await["protocolVersion"], "2025-06-18");
    let result =
        json!({"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "person"});
    let (status, _) = app
        .answer(id, json!({"action": "accept", "result": result}))
        .await;
    assert_eq!(status, reqwest::StatusCode::OK);

    let line = proxy.server_received(r#""id":0"#).await;
    let response: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        response,
        json!({"jsonrpc": "2.0", "id": 0, "result": result})
    );
    let tool_result = proxy.recv().await;
    assert!(
        tool_result.contains("tool done"),
        "the host sees only the tool result: {tool_result}"
    );
}

#[tokio::test]
async fn a_cancelled_request_withdraws_its_question_and_is_not_forwarded() {
    let app = spawn_app().await;
    let script = json!([
        {"until": "initialize"}, init_result("2025-11-25"),
        {"until": "notifications/initialized"},
        {"send": {"jsonrpc": "2.0", "id": 5, "method": "elicitation/create", "params": {"message": "Name?", "requestedSchema": {"type": "object", "properties": {"n": {"type": "string"}}}}}},
        {"sleep": 0.5},
        {"send": {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5, "reason": "timeout"}}},
        {"send": {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "after-cancel"}}},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    proxy.initialized().await;
    let question = pending_question(&app).await;
    let next = proxy.recv().await;
    assert!(
        next.contains("after-cancel"),
        "the cancellation was not forwarded: {next}"
    );
    state_becomes(&app, question["id"].as_str().unwrap(), "withdrawn").await;
    // Barrier: once withdrawn, the ask for id 5 has taken its no-response path; a line the host
    // sends after that reaches the server through the same writer, so when the server has it,
    // anything the proxy wrote for id 5 would already be in the log.
    proxy
        .send(r#"{"jsonrpc":"2.0","method":"after-withdrawal-marker"}"#)
        .await;
    proxy.server_received("after-withdrawal-marker").await;
    assert!(
        !proxy.server_log().iter().any(|l| l.contains(r#""id":5"#)),
        "no response is sent for a cancelled request"
    );
}

#[tokio::test]
async fn an_unreachable_service_gives_the_server_32603_and_the_proxy_keeps_running() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("api-token"), "t\n").unwrap();
    let script = json!([
        {"until": "initialize"}, init_result("2025-11-25"),
        {"send": {"jsonrpc": "2.0", "id": 0, "method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}}},
        {"until_response": 0},
        {"raw": r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"still here"}}"#},
    ]);
    let mut proxy = Proxy::start(tmp.path(), Some("http://127.0.0.1:9"), script);
    proxy.initialize().await;
    let line = proxy.server_received(r#""id":0"#).await;
    let response: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(response["error"]["code"], -32603);
    assert!(
        response["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unreachable"),
        "{response}"
    );
    assert!(proxy.recv().await.contains("still here"));
}

#[tokio::test]
async fn the_answer_reaches_the_server_across_a_service_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let first = spawn_on(Config::default(), &state).await;
    let script = json!([
        {"until": "initialize"}, init_result("2025-11-25"),
        {"send": {"jsonrpc": "2.0", "id": "s-1", "method": "sampling/createMessage", "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "survive"}}], "maxTokens": 5, "_meta": {"progressToken": "tok-9"}}}},
        {"until_response": "s-1"},
    ]);
    let mut proxy = Proxy::start(&state, None, script);
    proxy.initialize().await;
    let id = pending_question(&first).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    first.handle.stop(false).await;

    // A new service on the same state (and another port: the proxy re-reads service-url).
    let second = spawn_on(Config::default(), &state).await;
    let result = json!({"role": "assistant", "content": {"type": "text", "text": "survived"}, "model": "person"});
    let (status, _) = second
        .answer(&id, json!({"action": "accept", "result": result}))
        .await;
    assert_eq!(status, reqwest::StatusCode::OK);
    let line = proxy.server_received(r#""id":"s-1""#).await;
    assert_eq!(
        serde_json::from_str::<Value>(&line).unwrap()["result"],
        result
    );
}

/// The host closes its output while the server is still echoing a long burst: every line the
/// server wrote reaches the host whole (reading the server's output is never restarted
/// mid-line when the host leaves).
#[tokio::test]
async fn a_burst_still_in_flight_when_the_host_leaves_arrives_whole() {
    let dir = tempfile::tempdir().unwrap();
    let line = format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"level\":\"info\",\"data\":\"{}\"}}}}\n",
        "x".repeat(120)
    );
    let input = line.repeat(20_000);
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-consent"))
        .arg("--state-dir")
        .arg(dir.path())
        .args([
            "proxy",
            "--name",
            "cat",
            "--broker",
            "http://127.0.0.1:9",
            "--",
            "cat",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = tokio::spawn(async move {
        stdin.write_all(input.as_bytes()).await.unwrap();
        // Dropping stdin closes it: the host has left.
    });
    let output = child.wait_with_output().await.unwrap();
    writer.await.unwrap();
    assert!(
        !String::from_utf8_lossy(&output.stderr).contains("dropped"),
        "the proxy dropped a line: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(output.stdout.len(), line.len() * 20_000);
    assert!(
        output
            .stdout
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .all(|l| l == line.trim_end().as_bytes())
    );
}

/// `proxy -- cat` with the host's side given as `stdin`/`stdout`: every line comes back whole
/// and in order, nothing is dropped.
fn cat_through(stdin: Stdio, stdout: Stdio) -> std::process::Child {
    let dir = tempfile::tempdir().unwrap();
    std::process::Command::new(env!("CARGO_BIN_EXE_mcp-consent"))
        .arg("--state-dir")
        .arg(dir.path())
        .args(["proxy", "--name", "cat", "--broker", "http://127.0.0.1:9"])
        .args(["--", "cat"])
        .stdin(stdin)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// `count` notifications of about 270 bytes, one a line.
fn notification_lines(count: usize) -> String {
    let line = format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"level\":\"info\",\"data\":\"{}\"}}}}\n",
        "y".repeat(200)
    );
    line.repeat(count)
}

/// A host that gives the proxy files rather than pipes (a terminal or a file cannot be polled):
/// the proxy reads and writes them with blocking calls, and everything passes as through pipes.
#[tokio::test]
async fn files_as_the_hosts_side_pass_every_line() {
    let dir = tempfile::tempdir().unwrap();
    let all = notification_lines(5_000);
    let input = dir.path().join("in.jsonl");
    let output = dir.path().join("out.jsonl");
    std::fs::write(&input, &all).unwrap();
    let child = cat_through(
        std::fs::File::open(&input).unwrap().into(),
        std::fs::File::create(&output).unwrap().into(),
    );
    let done = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    assert!(done.status.success(), "{done:?}");
    assert!(!String::from_utf8_lossy(&done.stderr).contains("dropped"));
    assert_eq!(std::fs::read_to_string(&output).unwrap(), all);
}

/// A host that gives the proxy one Unix socket for stdin and stdout (as Node's child processes
/// get): read and written on the runtime like pipes; every line comes back whole, in order.
#[tokio::test]
async fn a_socket_as_the_hosts_side_passes_every_line() {
    use std::io::{Read, Write};
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
    let all = notification_lines(5_000);
    let child = cat_through(
        std::os::fd::OwnedFd::from(theirs.try_clone().unwrap()).into(),
        std::os::fd::OwnedFd::from(theirs).into(),
    );
    let mut writing = ours.try_clone().unwrap();
    let sent = all.clone();
    let writer = std::thread::spawn(move || {
        writing.write_all(sent.as_bytes()).unwrap();
        writing.shutdown(std::net::Shutdown::Write).unwrap();
    });
    let mut reading = ours;
    let received = tokio::task::spawn_blocking(move || {
        let mut received = Vec::new();
        reading.read_to_end(&mut received).unwrap();
        received
    });
    let done = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    writer.join().unwrap();
    assert!(done.status.success(), "{done:?}");
    assert_eq!(String::from_utf8(received.await.unwrap()).unwrap(), all);
}
