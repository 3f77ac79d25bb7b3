//! Consent bound to the exact request: the person's answers held for a host's retry reach the
//! server only in the retry of the very request they were asked for, once; never in another
//! request, never moved by a host that reuses, alters or invents a retry. Observed at the
//! server (its log of every line it received).

use serde_json::{Value, json};

use crate::helpers::*;
use crate::host::{Proxy, pending_question};

/// A 2026-07-28 `tools/call` of `delete_file` on `path`, under `id`.
fn delete(id: u64, path: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "delete_file", "arguments": {"path": path},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}})
}

/// The server asks the person to confirm and the host for its roots, with no `requestState`.
fn confirm_and_roots() -> Value {
    json!({"resultType": "input_required", "inputRequests": {
        "confirm": {"method": "elicitation/create", "params": {"mode": "form", "message": "Delete it?",
            "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}}},
        "roots": {"method": "roots/list"}}})
}

fn done(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "resultType": "complete"})
}

/// The host's retry of `original` under `id`, with the state it was handed and its roots.
fn retry_of(original: &Value, id: u64, state: &str) -> Value {
    let mut retry = original.clone();
    retry["id"] = json!(id);
    retry["params"]["inputResponses"] = json!({"roots": {"roots": []}});
    retry["params"]["requestState"] = json!(state);
    retry
}

/// The next line for the host that is not a progress notification.
async fn host_line(proxy: &mut Proxy) -> Value {
    loop {
        let line: Value = serde_json::from_str(&proxy.recv().await).unwrap();
        if line["method"] != "notifications/progress" {
            return line;
        }
    }
}

/// Answers the one pending question with `ok`, and returns the state the host is handed with
/// the entries that are its own.
async fn person_confirms(app: &TestApp, proxy: &mut Proxy, ok: bool) -> String {
    let question = pending_question(app).await;
    app.answer(
        question["id"].as_str().unwrap(),
        json!({"action": "accept", "content": {"ok": ok}}),
    )
    .await;
    let handed = host_line(proxy).await;
    assert_eq!(
        handed["result"]["inputRequests"],
        json!({"roots": {"method": "roots/list"}})
    );
    handed["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The server's log lines that are `tools/call`s, parsed.
fn calls_received(proxy: &Proxy) -> Vec<Value> {
    proxy
        .server_log()
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["method"] == "tools/call")
        .collect()
}

/// A marker request after which everything sent before it has reached the server (the proxy
/// never reorders), so an absence in the log is an observed fact, not a guess.
async fn flush(proxy: &mut Proxy, marker: &str) {
    proxy
        .send(&json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"marker": marker}}).to_string())
        .await;
    proxy.server_received(marker).await;
}

/// The reported flaw: the person confirms deleting notes-a.txt; the host then calls
/// `delete_file /home/me/everything` without any answers. That call reaches the server
/// without the consent, and the real retry of the first call gets it, once.
#[tokio::test]
async fn an_answer_reaches_only_the_retry_of_its_own_request() {
    let app = spawn_app().await;
    let script = json!([
        {"until": "tools/call"}, {"reply": confirm_and_roots()},
        {"until": "tools/call"}, {"reply": done("not deleted: no confirmation")},
        {"until": "tools/call"}, {"reply": done("deleted notes-a.txt")},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    let first = delete(2, "/home/me/notes-a.txt");
    proxy.send(&first.to_string()).await;
    let state = person_confirms(&app, &mut proxy, true).await;

    proxy
        .send(&delete(3, "/home/me/everything").to_string())
        .await;
    assert_eq!(host_line(&mut proxy).await["id"], 3);
    proxy.send(&retry_of(&first, 4, &state).to_string()).await;
    let answer = host_line(&mut proxy).await;
    assert_eq!(answer["id"], 4);
    assert_eq!(answer["result"], done("deleted notes-a.txt"));

    let calls = calls_received(&proxy);
    assert_eq!(calls.len(), 3, "{calls:?}");
    assert_eq!(
        calls[1]["params"]["arguments"]["path"],
        "/home/me/everything"
    );
    assert!(
        calls[1]["params"].get("inputResponses").is_none(),
        "another request never carries the person's consent: {}",
        calls[1]
    );
    assert_eq!(
        calls[2]["params"]["arguments"]["path"],
        "/home/me/notes-a.txt"
    );
    assert_eq!(
        calls[2]["params"]["inputResponses"],
        json!({"roots": {"roots": []}, "confirm": {"action": "accept", "content": {"ok": true}}})
    );
    assert!(
        calls[2]["params"].get("requestState").is_none(),
        "the server gave no state, so it gets none back"
    );
}

/// A host that echoes the handed state on a different request (or uses it twice) gets an
/// honest error, and the server receives neither.
#[tokio::test]
async fn a_moved_or_reused_state_is_refused_and_never_forwarded() {
    let app = spawn_app().await;
    let script = json!([
        {"until": "tools/call"}, {"reply": confirm_and_roots()},
        {"until": "tools/call"}, {"reply": done("deleted notes-a.txt")},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    let first = delete(2, "/home/me/notes-a.txt");
    proxy.send(&first.to_string()).await;
    let state = person_confirms(&app, &mut proxy, true).await;

    // The state moved onto another call: refused, and the answers are dropped with it.
    let moved = retry_of(&delete(2, "/home/me/everything"), 3, &state);
    proxy.send(&moved.to_string()).await;
    let refused = host_line(&mut proxy).await;
    assert_eq!(refused["id"], 3);
    assert_eq!(refused["error"]["code"], -32603);
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not the request the person answered"),
        "{refused}"
    );
    // The genuine retry now finds nothing: the answers were dropped, not kept for anyone.
    proxy.send(&retry_of(&first, 4, &state).to_string()).await;
    let gone = host_line(&mut proxy).await;
    assert_eq!(gone["id"], 4);
    assert!(
        gone["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no longer holds")
    );
    flush(&mut proxy, "after-refusals").await;
    let calls = calls_received(&proxy);
    assert_eq!(
        calls.len(),
        1,
        "only the first call reached the server: {calls:?}"
    );
}

/// Each answer is used once: a second retry with the same state is refused.
#[tokio::test]
async fn held_answers_are_used_at_most_once() {
    let app = spawn_app().await;
    let script = json!([
        {"until": "tools/call"}, {"reply": confirm_and_roots()},
        {"until": "tools/call"}, {"reply": done("deleted notes-a.txt")},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    let first = delete(2, "/home/me/notes-a.txt");
    proxy.send(&first.to_string()).await;
    let state = person_confirms(&app, &mut proxy, true).await;
    proxy.send(&retry_of(&first, 3, &state).to_string()).await;
    assert_eq!(
        host_line(&mut proxy).await["result"],
        done("deleted notes-a.txt")
    );
    proxy.send(&retry_of(&first, 4, &state).to_string()).await;
    let again = host_line(&mut proxy).await;
    assert_eq!(again["id"], 4);
    assert_eq!(again["error"]["code"], -32603);
    flush(&mut proxy, "after-second-retry").await;
    let with_consent = calls_received(&proxy)
        .into_iter()
        .filter(|c| c["params"]["inputResponses"].get("confirm").is_some())
        .count();
    assert_eq!(with_consent, 1);
}

/// Two parallel calls of one tool, answered differently: each retry carries its own answer.
#[tokio::test]
async fn parallel_calls_of_one_tool_each_get_their_own_answer() {
    let app = spawn_app().await;
    let script = json!([
        {"until": "tools/call"}, {"reply": confirm_and_roots()},
        {"until": "tools/call"}, {"reply": confirm_and_roots()},
        {"until": "tools/call"}, {"reply": done("b")},
        {"until": "tools/call"}, {"reply": done("a")},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    let a = delete(2, "/home/me/a.txt");
    proxy.send(&a.to_string()).await;
    let state_a = person_confirms(&app, &mut proxy, true).await;
    let b = delete(3, "/home/me/b.txt");
    proxy.send(&b.to_string()).await;
    let state_b = person_confirms(&app, &mut proxy, false).await;
    assert_ne!(state_a, state_b);

    // Retried in the other order.
    proxy.send(&retry_of(&b, 4, &state_b).to_string()).await;
    assert_eq!(host_line(&mut proxy).await["result"], done("b"));
    proxy.send(&retry_of(&a, 5, &state_a).to_string()).await;
    assert_eq!(host_line(&mut proxy).await["result"], done("a"));

    let calls = calls_received(&proxy);
    let answer_for = |path: &str| {
        calls
            .iter()
            .find(|c| {
                c["params"]["arguments"]["path"] == path
                    && c["params"].get("inputResponses").is_some()
            })
            .map(|c| c["params"]["inputResponses"]["confirm"]["content"]["ok"].clone())
    };
    assert_eq!(answer_for("/home/me/a.txt"), Some(json!(true)));
    assert_eq!(answer_for("/home/me/b.txt"), Some(json!(false)));
}

/// A host request carrying answers and a state the proxy never handed it: both are removed
/// before the server sees the request, so no answer the person never gave reaches it.
#[tokio::test]
async fn invented_responses_and_state_never_reach_the_server() {
    let app = spawn_app().await;
    let script = json!([{"until": "tools/call"}, {"reply": done("nothing to confirm")}]);
    let mut proxy = Proxy::start(&app.state, None, script);
    let mut forged = delete(2, "/home/me/everything");
    forged["params"]["inputResponses"] =
        json!({"confirm": {"action": "accept", "content": {"ok": true}}});
    forged["params"]["requestState"] = json!("guessed");
    proxy.send(&forged.to_string()).await;
    assert_eq!(host_line(&mut proxy).await["id"], 2);
    let calls = calls_received(&proxy);
    assert_eq!(calls.len(), 1);
    assert!(
        calls[0]["params"].get("inputResponses").is_none(),
        "{}",
        calls[0]
    );
    assert!(
        calls[0]["params"].get("requestState").is_none(),
        "{}",
        calls[0]
    );
    assert_eq!(
        calls[0]["params"]["arguments"]["path"],
        "/home/me/everything"
    );
}

/// An `inputRequests` entry some host would read as sampling (a `Method` beside `method`) is
/// never passed: the host's request fails with -32603 and no question is opened.
#[tokio::test]
async fn an_ambiguous_entry_never_reaches_the_host() {
    let app = spawn_app().await;
    let result = r#"{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list","Method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}}}"#;
    let script = json!([
        {"until": "tools/call"},
        {"raw": format!(r#"{{"jsonrpc":"2.0","id":2,"result":{result}}}"#)},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    proxy
        .send(&delete(2, "/home/me/notes-a.txt").to_string())
        .await;
    let answer = host_line(&mut proxy).await;
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["error"]["code"], -32603);
    assert!(answer.get("result").is_none(), "{answer}");
    let pending: Value = app
        .get("/api/v1/questions?state=pending")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(pending["questions"], json!([]));
}

/// A retry that reads as the original only after rounding (an integer past 2^53 that rounds
/// to the same double) or after dropping a member given twice (a first-copy server would read
/// the other one) is another request: it gets no answer, and the server never sees it.
#[tokio::test]
async fn a_retry_that_matches_only_by_rounding_or_by_a_twin_member_gets_no_answer() {
    let app = spawn_app().await;
    let script = json!([
        {"until": "tools/call"}, {"reply": confirm_and_roots()},
        {"until": "tools/call"}, {"reply": confirm_and_roots()},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    let call = |id: u64, arguments: &str, retry: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"transfer","arguments":{{{arguments}}}{retry},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}}}}"#
        )
    };
    let rounds = [
        (
            2,
            r#""account":1234567890123456789"#,
            r#""account":1234567890123456790"#,
        ),
        (
            5,
            r#""to":"Alice","n":1"#,
            r#""to":"Mallory","n":1,"to":"Alice""#,
        ),
    ];
    for (id, original, other) in rounds {
        proxy.send(&call(id, original, "")).await;
        let state = person_confirms(&app, &mut proxy, true).await;
        let retry =
            format!(r#","inputResponses":{{"roots":{{"roots":[]}}}},"requestState":"{state}""#);
        proxy.send(&call(id + 1, other, &retry)).await;
        let refused = host_line(&mut proxy).await;
        assert_eq!(refused["id"], id + 1);
        assert!(
            refused["error"]["message"]
                .as_str()
                .unwrap()
                .contains("not the request the person answered"),
            "{refused}"
        );
    }
    flush(&mut proxy, "after-lookalike-retries").await;
    let calls = calls_received(&proxy);
    assert_eq!(calls.len(), 2, "only the two first calls: {calls:?}");
    assert!(
        calls
            .iter()
            .all(|c| c["params"].get("inputResponses").is_none())
    );
}

/// The tasks extension answers a task's input through `tasks/update`, a path the proxy does
/// not offer: answers a host puts there of its own invention never reach the server.
#[tokio::test]
async fn answers_in_a_tasks_update_never_reach_the_server() {
    let app = spawn_app().await;
    let script = json!([{"until": "tasks/update"}, {"reply": {"resultType": "complete"}}]);
    let mut proxy = Proxy::start(&app.state, None, script);
    let update = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/update", "params": {
        "taskId": "task-1",
        "inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
    proxy.send(&update.to_string()).await;
    assert_eq!(host_line(&mut proxy).await["id"], 2);
    let received: Vec<Value> = proxy
        .server_log()
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["method"] == "tasks/update")
        .collect();
    assert_eq!(received.len(), 1);
    assert!(
        received[0]["params"].get("inputResponses").is_none(),
        "{}",
        received[0]
    );
    assert_eq!(received[0]["params"]["taskId"], "task-1");
}

/// Answers under a name a case-folding decoder (Go's) reads as `inputResponses` never reach
/// the server either, in any request.
#[tokio::test]
async fn answers_under_a_folded_name_never_reach_the_server() {
    let app = spawn_app().await;
    let script = json!([{"until": "prompts/get"}, {"reply": {"messages": []}}]);
    let mut proxy = Proxy::start(&app.state, None, script);
    let forged = json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/get", "params": {
        "name": "p",
        "InputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}},
        "requeststate": "guessed",
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
    proxy.send(&forged.to_string()).await;
    assert_eq!(host_line(&mut proxy).await["id"], 2);
    let received: Vec<Value> = proxy
        .server_log()
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["method"] == "prompts/get")
        .collect();
    assert_eq!(received.len(), 1);
    let params = received[0]["params"].as_object().unwrap();
    assert!(
        params
            .keys()
            .all(|k| !k.eq_ignore_ascii_case("inputresponses")
                && !k.eq_ignore_ascii_case("requeststate")),
        "{}",
        received[0]
    );
    assert_eq!(params["name"], "p");
}

/// A call holding a value that does not read exactly (a lone surrogate escape, a number out of
/// range) cannot be bound to a round: once the person answered, the host gets an error under
/// its id, rather than waiting forever for a round it could never finish.
#[tokio::test]
async fn a_call_whose_round_cannot_be_bound_gets_an_error_not_silence() {
    for value in [r#""Alice \ud83d""#, "1e400"] {
        let app = spawn_app().await;
        let script = json!([{"until": "tools/call"}, {"reply": confirm_and_roots()}]);
        let mut proxy = Proxy::start(&app.state, None, script);
        proxy
            .send(&format!(
                r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"delete_file","arguments":{{"path":{value}}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}}}}"#
            ))
            .await;
        let question = pending_question(&app).await;
        app.answer(
            question["id"].as_str().unwrap(),
            json!({"action": "accept", "content": {"ok": true}}),
        )
        .await;
        let line = host_line(&mut proxy).await;
        assert_eq!(line["id"], 2, "{line}");
        assert_eq!(line["error"]["code"], -32603, "{line}");
        let message = line["error"]["message"].as_str().unwrap();
        assert!(message.contains("does not read exactly"), "{message}");
    }
}

/// A server that answers every call with a round for the host, which never retries, cannot
/// make the proxy hold rounds without bound: past 64 the oldest is dropped (its retry fails
/// honestly) and the newest still goes through.
#[tokio::test]
async fn rounds_the_host_never_retries_are_held_at_most_64() {
    let app = spawn_app().await;
    let roots_only = json!({"resultType": "input_required", "requestState": "server-state",
        "inputRequests": {"roots": {"method": "roots/list"}}});
    let mut script = Vec::new();
    for _ in 0..65 {
        script.push(json!({"until": "tools/call"}));
        script.push(json!({"reply": roots_only}));
    }
    script.push(json!({"until": "tools/call"}));
    script.push(json!({"reply": done("listed")}));
    let mut proxy = Proxy::start(&app.state, None, Value::Array(script));
    let mut states = Vec::new();
    for id in 1..=65 {
        proxy.send(&delete(id, "/tmp/x").to_string()).await;
        let handed = host_line(&mut proxy).await;
        assert_eq!(handed["id"], id, "{handed}");
        states.push(
            handed["result"]["requestState"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    proxy
        .send(&retry_of(&delete(1, "/tmp/x"), 100, &states[0]).to_string())
        .await;
    let dropped = host_line(&mut proxy).await;
    assert_eq!(dropped["id"], 100, "{dropped}");
    assert_eq!(dropped["error"]["code"], -32603, "{dropped}");
    proxy
        .send(&retry_of(&delete(65, "/tmp/x"), 101, &states[64]).to_string())
        .await;
    let newest = host_line(&mut proxy).await;
    assert_eq!(newest["id"], 101, "{newest}");
    assert_eq!(newest["result"], done("listed"));
}

/// A retry sent under the id of a request still in flight is refused and changes nothing: the
/// held answers are still there for the retry under a fresh id.
#[tokio::test]
async fn a_retry_under_an_id_in_flight_uses_up_nothing() {
    let app = spawn_app().await;
    let script = json!([
        {"until": "tools/call"}, {"reply": confirm_and_roots()},
        {"until": "tools/call"},
        {"until": "tools/call"}, {"reply": done("deleted notes-a.txt")},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    let first = delete(2, "/home/me/notes-a.txt");
    proxy.send(&first.to_string()).await;
    let state = person_confirms(&app, &mut proxy, true).await;
    // Call 5 reaches the server and waits there for its answer.
    proxy.send(&delete(5, "/tmp/other").to_string()).await;
    proxy.server_received("/tmp/other").await;
    proxy.send(&retry_of(&first, 5, &state).to_string()).await;
    let refused = host_line(&mut proxy).await;
    assert_eq!(refused["id"], 5, "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    proxy.send(&retry_of(&first, 6, &state).to_string()).await;
    let answer = host_line(&mut proxy).await;
    assert_eq!(answer["id"], 6, "{answer}");
    assert_eq!(answer["result"], done("deleted notes-a.txt"));
}

/// A request of another method under the id of a call still at the server is refused: it
/// never replaces the call, so the call's round (and the person's answer to it) can never be
/// taken for it.
#[tokio::test]
async fn another_method_under_the_id_of_a_call_in_flight_is_refused_and_never_forwarded() {
    let app = spawn_app().await;
    let script = json!([{"until": "tools/call"}]);
    let mut proxy = Proxy::start(&app.state, None, script);
    proxy.send(&delete(1, "/tmp/x").to_string()).await;
    proxy.server_received("/tmp/x").await;
    proxy
        .send(&json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "file:///etc/motd"}}).to_string())
        .await;
    let refused = host_line(&mut proxy).await;
    assert_eq!(refused["id"], 1, "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    flush(&mut proxy, "after-reuse").await;
    assert!(
        !proxy.server_got("resources/read"),
        "{:?}",
        proxy.server_log()
    );
}

/// A call the host cancelled keeps only its id at the proxy; a round the server sends for it
/// late asks nobody and tells the host nothing (no error for a request it gave up), and a
/// later request under the same id gets its own answer.
#[tokio::test]
async fn a_late_round_for_a_cancelled_call_asks_nobody_and_frees_its_id() {
    let app = spawn_app().await;
    let script = json!([
        {"until": "notifications/cancelled"},
        {"send": {"jsonrpc": "2.0", "id": 2, "result": confirm_and_roots()}},
        {"send": {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "after-late-round"}}},
        {"until": "tools/call"}, {"reply": done("the second call")},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    proxy.send(&delete(2, "/home/me/a.txt").to_string()).await;
    proxy
        .send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#)
        .await;
    let next = proxy.recv().await;
    assert!(next.contains("after-late-round"), "{next}");
    proxy.send(&delete(2, "/home/me/b.txt").to_string()).await;
    let answer = host_line(&mut proxy).await;
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["result"], done("the second call"));
}
