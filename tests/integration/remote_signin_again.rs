//! A second sign-in to a remote server while the host's requests wait on it: a request the
//! host cancels is never sent and takes its sign-in question with it; one declined sign-in
//! answers every request that waited for it, with one question; an access token no header can
//! carry is refused, not kept, so the next request can sign in again.

use std::time::Duration;

use serde_json::{Value, json};

use crate::helpers::*;
use crate::remote::Seen;
use crate::remote_auth::{
    Metadata, SigningIn, UNSENDABLE_TOKEN, accept_the_consent, answer_as_person,
    first_for_the_person, follow, human_questions, open_the_sign_in, person_list, signing_in_with,
};

/// A session signed in once to a server that never refreshes: the host's `initialize` went
/// through with the first token, which the server refuses for `tools/call`.
async fn signed_in_once() -> SigningIn {
    let mut s = signing_in_with(Metadata::NoRefresh).await;
    let id = s.question["id"].as_str().unwrap().to_owned();
    let authorize = open_the_sign_in(&s.app, &s.browser, &id).await;
    assert_eq!(follow(&authorize).await, reqwest::StatusCode::OK);
    let reply = s.host.recv().await;
    assert_eq!(reply["result"]["protocolVersion"], "2025-11-25", "{reply}");
    s
}

fn call(id: u64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "transfer", "arguments": {"to": "alice"}}})
    .to_string()
}

/// The `tools/call` requests the server received.
fn calls(seen: &std::sync::Mutex<Vec<Seen>>) -> Vec<Value> {
    seen.lock()
        .unwrap()
        .iter()
        .filter(|s| s.method == "POST" && s.target == "/mcp")
        .map(crate::remote::rpc)
        .filter(|m| m["method"] == "tools/call")
        .collect()
}

/// Every question of `kind` the person was ever asked, in any state.
async fn ever_asked(app: &TestApp, browser: &reqwest::Client, kind: &str) -> usize {
    let all = person_list(app, browser, "audience=human").await;
    all.iter().filter(|q| q["kind"] == kind).count()
}

#[tokio::test]
async fn a_call_the_host_cancels_during_its_sign_in_is_never_sent_and_its_question_is_withdrawn() {
    let SigningIn {
        app,
        seen,
        mut host,
        browser,
        ..
    } = signed_in_once().await;
    host.send(&call(2)).await;
    // The first token is refused for the call: the person is asked to sign in again.
    accept_the_consent(&app, &browser).await;
    let question = first_for_the_person(&app, &browser, "url").await;
    let id = question["id"].as_str().unwrap();
    host.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#)
        .await;

    let withdrawn = eventually(Duration::from_secs(10), || async {
        (app.question_as(&browser, id).await["state"] == "withdrawn").then_some(())
    })
    .await;
    assert!(
        withdrawn.is_some(),
        "the sign-in nobody waits for is withdrawn"
    );
    // The host's next request is answered; by then the server has had the call only once,
    // refused with the first token, never executed with a new one.
    host.send(r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#)
        .await;
    let reply = host.recv().await;
    assert_eq!(reply["id"], 3, "{reply}");
    assert_eq!(calls(&seen).len(), 1, "{:?}", calls(&seen));
    assert_eq!(human_questions(&app, &browser).await, Vec::<Value>::new());
}

#[tokio::test]
async fn one_declined_sign_in_answers_every_request_that_waited_for_it() {
    let SigningIn {
        app,
        seen,
        mut host,
        browser,
        ..
    } = signed_in_once().await;
    host.send(&call(2)).await;
    host.send(&call(3)).await;
    // Both calls were refused before the person is asked.
    let both = eventually(Duration::from_secs(10), || async {
        (calls(&seen).len() == 2).then_some(())
    })
    .await;
    assert!(both.is_some(), "{:?}", calls(&seen));
    let consent = first_for_the_person(&app, &browser, "form").await;
    let id = consent["id"].as_str().unwrap();
    answer_as_person(&app, &browser, id, &json!({"action": "decline"})).await;

    let mut answered = Vec::new();
    for _ in 0..2 {
        let reply = host.recv().await;
        assert_eq!(reply["error"]["code"], -32603, "{reply}");
        answered.push(reply["id"].as_u64().unwrap());
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.contains("sign-in question"), "{message}");
    }
    answered.sort_unstable();
    assert_eq!(answered, [2, 3]);
    // Asked once for both: the first sign-in's consent and this one.
    assert_eq!(ever_asked(&app, &browser, "form").await, 2);
    assert_eq!(human_questions(&app, &browser).await, Vec::<Value>::new());
}

#[tokio::test]
async fn an_access_token_no_header_can_carry_is_refused_and_not_kept() {
    let SigningIn {
        app,
        mut host,
        browser,
        question,
        ..
    } = signing_in_with(Metadata::UnsendableToken).await;
    let id = question["id"].as_str().unwrap();
    let authorize = open_the_sign_in(&app, &browser, id).await;
    assert_eq!(follow(&authorize).await, reqwest::StatusCode::OK);
    let reply = host.recv().await;
    assert_eq!(reply["error"]["code"], -32603, "{reply}");
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("cannot be sent in an Authorization header"),
        "{message}"
    );
    assert!(!message.contains(UNSENDABLE_TOKEN), "{message}");
    let store = app.state.join("oauth").join("remote.json");
    assert!(!store.exists(), "the token is not kept");

    // The server is not broken: the host's next initialize asks the person to sign in again.
    host.send(crate::host::INIT).await;
    let again = eventually(Duration::from_secs(20), || async {
        (ever_asked(&app, &browser, "form").await == 2).then_some(())
    })
    .await;
    assert!(again.is_some(), "a new sign-in is asked for");
}
