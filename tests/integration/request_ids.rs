//! Request ids as servers read them: servers compare ids by the value their JSON reader gives
//! (Python reads `-0` as `0`, JavaScript `5.0` as `5`, both read `"\ud800"` and `"\uD800"`
//! alike), so a request under such an id could pass the proxy's "no id twice in flight" check
//! while the server takes it for another request, and get that one's round or consent. The
//! proxy passes only ids every reader reads alike; any other request, from either side, is
//! refused with an error and never passed on. Observed at the server and at the host.

use serde_json::{Value, json};

use crate::helpers::*;
use crate::host::{Proxy, pending_questions};
use crate::tool_calls::{calls_received, flush};

/// Ids a server may read as another id (or that MCP does not allow), as the host writes them.
const UNSAFE_IDS: [&str; 11] = [
    "-0",
    "5.0",
    "5e0",
    "-1E3",
    "1.5",
    "9007199254740993",
    "-9007199254740993",
    r#""\ud800""#,
    r#""\uD800""#,
    "null",
    "true",
];

fn transfer(raw_id: &str, to: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{raw_id},"method":"tools/call","params":{{"name":"transfer","arguments":{{"to":"{to}","amount":5000}}}}}}"#
    )
}

/// The reported flaw: `tools/call` under `-0` (and every such spelling) reached the server,
/// which read it as `0`, so a consent asked for one call served another. Now each is refused
/// under the id as the host wrote it, and the server never receives it, nor a cancellation
/// naming such an id; plain ids (and escaped spellings of a string) still pass.
#[tokio::test]
async fn host_requests_under_ids_a_server_may_read_as_another_never_reach_it() {
    let app = spawn_app().await;
    let mut proxy = Proxy::start(&app.state, None, json!([]));
    for raw in UNSAFE_IDS {
        proxy.send(&transfer(raw, "Mallory")).await;
        let answer = proxy.recv().await;
        assert!(
            answer.contains(&format!(r#""id":{raw},"#)),
            "answered under the id as written: {answer}"
        );
        assert!(answer.contains(r#""code":-32600"#), "{answer}");
        assert!(answer.contains("it was not passed on"), "{answer}");
    }
    for raw in ["-0", "5.0", r#""\ud800""#] {
        proxy
            .send(&format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{raw}}}}}"#
            ))
            .await;
    }
    proxy.send(&transfer("0", "Alice")).await;
    proxy.send(&transfer(r#""\u0061""#, "Bob")).await;
    flush(&mut proxy, "after-ids").await;

    let calls = calls_received(&proxy);
    let ids: Vec<&Value> = calls.iter().map(|c| &c["id"]).collect();
    assert_eq!(
        ids,
        [&json!(0), &json!("a")],
        "only the plain ids: {calls:?}"
    );
    assert!(
        !proxy.server_got("notifications/cancelled"),
        "{:?}",
        proxy.server_log()
    );
}

/// The other way: a server request under such an id never reaches the host (whose answer
/// could reach the server as the answer to a request the person is asked about), nor becomes
/// a question; the server gets an error under its id as it wrote it.
#[tokio::test]
async fn server_requests_under_ids_a_host_may_read_as_another_never_reach_it() {
    let app = spawn_app().await;
    let script = json!([
        {"raw": r#"{"jsonrpc":"2.0","id":-0,"method":"roots/list"}"#},
        {"raw": r#"{"jsonrpc":"2.0","id":"\uD800","method":"ping"}"#},
        {"raw": r#"{"jsonrpc":"2.0","id":5.0,"method":"elicitation/create","params":{"mode":"form","message":"Allow?","requestedSchema":{"type":"object","properties":{}}}}"#},
        {"send": {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "after"}}},
    ]);
    let mut proxy = Proxy::start(&app.state, None, script);
    // The proxy keeps the server's order: had a request passed, it would come first.
    let first: Value = serde_json::from_str(&proxy.recv().await).unwrap();
    assert_eq!(first["params"]["data"], "after", "{first}");
    for raw in ["-0", r#""\uD800""#, "5.0"] {
        let error = proxy.server_received(&format!(r#""id":{raw},"#)).await;
        assert!(error.contains(r#""code":-32600"#), "{error}");
    }
    assert_eq!(
        pending_questions(&app).await["questions"],
        json!([]),
        "no question was opened"
    );
}
