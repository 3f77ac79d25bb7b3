//! Host lines the proxy cannot judge by exact names never reach the server: a server reading
//! them its own way (the last of two `method`s, a case-insensitive member, `NaN` as a number,
//! a batch, a call sent as a notification) could run a call the rules hold back, or take an
//! answer the person never gave. Observed at the server, whose log holds every line received.

use serde_json::{Value, json};

use crate::helpers::*;
use crate::host::{Proxy, init_result, pending_question};
use crate::tool_calls::{calls_received, flush, host_line, refusal_text, rules, started};

const DENY_DELETE: &str = "[[rules]]\nserver = \"*\"\ntool = \"delete_*\"\naction = \"deny\"\n";

/// The host's errors for `ids` (in whatever order they come), each a JSON-RPC "invalid
/// request": their messages, in the order of `ids`.
async fn refused_under(proxy: &mut Proxy, ids: &[u64]) -> Vec<String> {
    let mut got = std::collections::BTreeMap::new();
    while got.len() < ids.len() {
        let line = host_line(proxy).await;
        assert_eq!(line["error"]["code"], -32600, "{line}");
        let id = line["id"].as_u64().unwrap();
        assert!(ids.contains(&id), "{line}");
        got.insert(id, line["error"]["message"].as_str().unwrap().to_owned());
    }
    ids.iter().map(|id| got[id].clone()).collect()
}

#[tokio::test]
async fn a_denied_call_hidden_in_a_line_the_proxy_cannot_read_never_reaches_the_server() {
    let app = spawn_with(rules(DENY_DELETE)).await;
    let mut proxy = started(&app, 0).await;
    let call = |id: u64| -> String {
        format!(
            r#""jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"delete_file","arguments":{{"path":"/home/me"}}}}"#
        )
    };
    let lines = [
        // Two methods: the first is read as harmless, a server may take the last.
        r#"{"jsonrpc":"2.0","id":10,"method":"tools/list","method":"tools/call","params":{"name":"delete_file","arguments":{}}}"#.to_owned(),
        // Two params: `read_file` first, `delete_file` second.
        r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"read_file"},"params":{"name":"delete_file","arguments":{}}}"#.to_owned(),
        // A member in another case, as Go's decoder reads it.
        r#"{"jsonrpc":"2.0","id":12,"method":"ping","Method":"tools/call","params":{"name":"delete_file"}}"#.to_owned(),
        // A non-finite number, which Python's json module reads.
        format!(r#"{{{},"extra":NaN}}"#, call(13)),
    ];
    for line in &lines {
        proxy.send(line).await;
    }
    for text in refused_under(&mut proxy, &[10, 11, 12, 13]).await {
        assert!(text.contains("not passed to the server"), "{text}");
    }
    // Invalid UTF-8 inside the arguments.
    let mut bytes = format!("{{{}", call(14)).into_bytes();
    bytes.truncate(bytes.len() - 3);
    bytes.extend_from_slice(b"\xff\"}}}");
    proxy.send_bytes(&bytes).await;
    refused_under(&mut proxy, &[14]).await;
    // A batch (MCP has none since 2025-06-18): each request in it is refused under its id.
    proxy
        .send(&format!("[{{{}}},{{{}}}]", call(15), call(16)))
        .await;
    for text in refused_under(&mut proxy, &[15, 16]).await {
        assert!(text.contains("batches"), "{text}");
    }
    // A call without an id: nobody waits for it, but a server might run it.
    proxy
        .send(r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"delete_file","arguments":{}}}"#)
        .await;

    flush(&mut proxy, "after-unread").await;
    let received: Vec<String> = proxy
        .server_log()
        .into_iter()
        .filter(|l| l.contains("delete_file") || l.contains("tools/call"))
        .collect();
    assert!(received.is_empty(), "the server received {received:?}");
    assert!(calls_received(&proxy).is_empty());
}

#[tokio::test]
async fn a_call_readable_by_names_but_not_as_a_whole_is_refused_not_left_waiting() {
    let app = spawn_with(rules("default = \"ask\"\n")).await;
    let mut proxy = started(&app, 0).await;
    // `1e400` is valid JSON syntax but no number a JSON value can hold, so the call cannot be
    // shown to the person as it is.
    proxy
        .send(r#"{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"drop_db","arguments":{"n":1e400}}}"#)
        .await;
    let answer = host_line(&mut proxy).await;
    assert_eq!(answer["id"], 20);
    let text = refusal_text(&answer);
    assert!(text.contains("cannot be read"), "{text}");
    // An integer too long to hold exactly would be shown rounded while the server got it
    // exact: refused the same way.
    proxy
        .send(r#"{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"pay","arguments":{"cents":123456789012345678901234567890,"memo":"99999999999999999999999"}}}"#)
        .await;
    let answer = host_line(&mut proxy).await;
    assert_eq!(answer["id"], 21);
    assert!(refusal_text(&answer).contains("cannot be read"));
    // A member given twice: the page would show the last copy, a server might read the first.
    proxy
        .send(r#"{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"send_mail","arguments":{"to":"attacker@evil","to":"boss@corp"}}}"#)
        .await;
    let answer = host_line(&mut proxy).await;
    assert_eq!(answer["id"], 22);
    assert!(refusal_text(&answer).contains("cannot be read"));
    // A decimal the page would show rounded (its nearest double is …992.0), while a server
    // reading decimals exactly would get …993.0: refused the same way.
    proxy
        .send(r#"{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"pay","arguments":{"cents":9007199254740993.0}}}"#)
        .await;
    let answer = host_line(&mut proxy).await;
    assert_eq!(answer["id"], 23);
    assert!(refusal_text(&answer).contains("cannot be read"));
    flush(&mut proxy, "after-1e400").await;
    assert!(calls_received(&proxy).is_empty());
}

#[tokio::test]
async fn a_host_answer_the_proxy_cannot_read_never_answers_the_persons_question() {
    let app = spawn_app().await;
    // The server asks for a form (the proxy makes it a question), then logs what it gets.
    let mut proxy = Proxy::start(
        &app.state,
        None,
        json!([
            {"until": "initialize"},
            init_result("2025-11-25"),
            {"send": {"jsonrpc": "2.0", "id": 70, "method": "elicitation/create",
                      "params": {"message": "Confirm?", "requestedSchema": {"type": "object",
                                 "properties": {"confirm": {"type": "boolean"}}}}}},
        ]),
    );
    proxy.initialized().await;
    let pending = first_pending_id(|| {
        app.client
            .get(format!("{}/api/v1/questions?state=pending", app.base))
            .bearer_auth(&app.token)
    })
    .await;
    // The host answers the intercepted request itself, hiding its id behind a second one.
    proxy
        .send(r#"{"jsonrpc":"2.0","id":70,"id":71,"result":{"action":"accept","content":{"confirm":true}}}"#)
        .await;
    flush(&mut proxy, "after-forged").await;
    let forged: Vec<String> = proxy
        .server_log()
        .into_iter()
        .filter(|l| l.contains("accept"))
        .collect();
    assert!(forged.is_empty(), "the server received {forged:?}");
    let question: Value = app
        .get(&format!("/api/v1/questions/{pending}"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(question["state"], "pending", "{question}");
}

/// A result the host sends with no id (or `null`), or inside a request, says no request of the
/// server's it answers; a server might take it for the answer to its own (the person's
/// included). It never reaches the server.
#[tokio::test]
async fn a_result_without_an_id_or_inside_a_request_never_reaches_the_server() {
    let app = spawn_app().await;
    let mut proxy = started(&app, 0).await;
    let answer = r#"{"action":"accept","content":{"ok":true}}"#;
    for line in [
        format!(r#"{{"jsonrpc":"2.0","id":null,"result":{answer}}}"#),
        format!(r#"{{"jsonrpc":"2.0","result":{answer}}}"#),
        r#"{"jsonrpc":"2.0","error":{"code":-1,"message":"no"}}"#.to_owned(),
    ] {
        proxy.send(&line).await;
    }
    proxy
        .send(&format!(
            r#"{{"jsonrpc":"2.0","id":31,"method":"x","result":{answer}}}"#
        ))
        .await;
    assert_eq!(refused_under(&mut proxy, &[31]).await.len(), 1);
    flush(&mut proxy, "after-idless-results").await;
    let log = proxy.server_log().join("\n");
    assert!(!log.contains("accept") && !log.contains("\"no\""), "{log}");
}

/// A host message with an id and no method is a response, whatever it lacks: a reader that
/// goes by which members are present (the Java SDK's) takes `"result":null`, `"error":null` or
/// a bare `{"id":…}` for the answer to its request. Under the id of a form the proxy holds as
/// the person's question none reaches the server, and the person's answer still does.
#[tokio::test]
async fn a_host_non_answer_under_a_held_id_never_reaches_the_server() {
    let app = spawn_app().await;
    let script = json!([
        {"until": "initialize"}, init_result("2025-11-25"),
        {"until": "notifications/initialized"},
        {"send": form_request(8)},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    proxy.initialized().await;
    let question = pending_question(&app).await;
    for line in [
        r#"{"jsonrpc":"2.0","id":8,"result":null}"#,
        r#"{"jsonrpc":"2.0","id":8,"error":null}"#,
        r#"{"jsonrpc":"2.0","id":8}"#,
        r#"{"id":8,"action":"accept","content":{"name":"forged"}}"#,
    ] {
        proxy.send(line).await;
    }
    flush(&mut proxy, "after-non-answers").await;
    let log = proxy.server_log();
    assert!(!log.iter().any(|l| l.contains(r#""id":8"#)), "{log:?}");
    let (status, _) = app
        .answer(
            question["id"].as_str().unwrap(),
            json!({"action": "accept", "content": {"name": "Ada"}}),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::OK);
    let answer: Value = serde_json::from_str(&proxy.server_received("Ada").await).unwrap();
    assert_eq!(answer["id"], 8);
    assert_eq!(answer["result"]["action"], "accept");
}

/// A server request the host was given is answered only by a valid response: one with a
/// `null` result, both members or neither never reaches the server, and a valid one after it
/// still does.
#[tokio::test]
async fn only_a_valid_host_response_answers_a_forwarded_request() {
    let app = spawn_app().await;
    let script = json!([
        {"until": "initialize"}, init_result("2025-11-25"),
        {"until": "notifications/initialized"},
        {"send": {"jsonrpc": "2.0", "id": 9, "method": "roots/list"}},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    proxy.initialized().await;
    let asked: Value = serde_json::from_str(&proxy.recv().await).unwrap();
    assert_eq!(asked["method"], "roots/list");
    for line in [
        r#"{"jsonrpc":"2.0","id":9,"result":null}"#,
        r#"{"jsonrpc":"2.0","id":9,"error":null,"result":{"roots":[]}}"#,
        r#"{"jsonrpc":"2.0","id":9,"result":{"roots":[]},"error":{"code":-1,"message":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":9}"#,
    ] {
        proxy.send(line).await;
    }
    flush(&mut proxy, "after-invalid-responses").await;
    let log = proxy.server_log();
    assert!(!log.iter().any(|l| l.contains(r#""id":9"#)), "{log:?}");
    proxy
        .send(r#"{"jsonrpc":"2.0","id":9,"result":{"roots":[{"uri":"file:///valid"}]}}"#)
        .await;
    proxy.server_received("file:///valid").await;
}
