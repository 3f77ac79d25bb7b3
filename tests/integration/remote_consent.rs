//! Nothing beyond the server's own metadata is contacted before the person agrees to sign in:
//! when signing in needs dynamic client registration, the proxy first asks the person (a form
//! question with no fields, for them alone, in their language) and registers only once they
//! accept; declined, nothing is registered and the host hears the person declined. With a
//! pre-registered client the sign-in stays one question. Observed at the scripted
//! authorization server, which records every request it receives.

use std::sync::{Arc, Mutex};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;
use crate::host::INIT;
use crate::remote::{Host, Seen, serve, wait_for};
use crate::remote_auth::{
    Metadata, answer_as_person, assert_hidden_from_the_token, first_for_the_person, handler,
    human_questions, param, query,
};

/// The paths the scripted server was asked for, in order.
fn targets(seen: &Mutex<Vec<Seen>>) -> Vec<String> {
    seen.lock()
        .unwrap()
        .iter()
        .map(|s| s.target.clone())
        .collect()
}

/// Neither a registration, nor a sign-in page, nor a token request among `targets`.
fn nothing_beyond_the_metadata(targets: &[String]) -> bool {
    !targets
        .iter()
        .any(|t| t == "/register" || t == "/token" || t.starts_with("/authorize"))
}

/// A proxy (its locale `locale`) whose host sent `initialize` to the honest scripted server,
/// up to the consent question that opened: the service, what the server saw, the host, a
/// logged-in browser and the question's summary.
struct Asked {
    app: TestApp,
    seen: Arc<Mutex<Vec<Seen>>>,
    host: Host,
    browser: reqwest::Client,
    consent: Value,
}

async fn asked(locale: &str) -> Asked {
    let app = spawn_app().await;
    let (url, seen) = serve(handler(Metadata::Honest)).await;
    let mut host = Host::start_env(&app.state, &url, &[], &[("LC_ALL", locale)]);
    host.send(INIT).await;
    let browser = app.login().await;
    let consent = first_for_the_person(&app, &browser, "form").await;
    Asked {
        app,
        seen,
        host,
        browser,
        consent,
    }
}

#[tokio::test]
async fn dynamic_registration_waits_until_the_person_accepts() {
    // The host stays (and so the proxy runs) to the end.
    let Asked {
        app,
        seen,
        host: _host,
        browser,
        consent,
    } = asked("en_US.UTF-8").await;
    // The consent question: a form with no fields, for the person, naming the server, the
    // authorization server's host and what registering sends.
    assert_eq!(consent["server"], "remote");
    assert_eq!(consent["audience"], "human");
    let id = consent["id"].as_str().unwrap();
    let detail = app.question_as(&browser, id).await;
    assert_eq!(
        detail["request"]["requestedSchema"]["properties"],
        json!({})
    );
    let message = detail["request"]["message"].as_str().unwrap();
    for part in [
        "remote asks you to sign in at 127.0.0.1",
        "mcp-consent must first register itself there as a client",
        "public details only",
    ] {
        assert!(message.contains(part), "{message}");
    }

    // A script cannot see or accept it.
    assert_hidden_from_the_token(&app).await;
    let (status, _) = app
        .answer(id, json!({"action": "accept", "content": {}}))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    // Until the person accepts, the authorization server saw its metadata and nothing more.
    let before = targets(&seen);
    assert!(
        before
            .iter()
            .any(|t| t == "/.well-known/oauth-authorization-server"),
        "{before:?}"
    );
    assert!(nothing_beyond_the_metadata(&before), "{before:?}");

    answer_as_person(
        &app,
        &browser,
        id,
        &json!({"action": "accept", "content": {}}),
    )
    .await;
    let registration = wait_for(&seen, |s| s.target == "/register").await;
    assert_eq!(registration.method, "POST");
    // Then the sign-in question as before, with the client id the registration returned.
    let sign_in = first_for_the_person(&app, &browser, "url").await;
    let detail = app
        .question_as(&browser, sign_in["id"].as_str().unwrap())
        .await;
    let authorize = detail["request"]["url"].as_str().unwrap();
    let pairs = query(&authorize[authorize.find("/authorize").unwrap()..]);
    assert_eq!(param(&pairs, "client_id"), Some("client-1"));
    assert!(
        !targets(&seen).iter().any(|t| t.starts_with("/authorize")),
        "the sign-in page waits for the person too"
    );
}

#[tokio::test]
async fn a_declined_consent_registers_nothing_and_the_host_hears_the_person_declined() {
    // The question speaks the person's language, as their locale names it.
    let Asked {
        app,
        seen,
        mut host,
        browser,
        consent,
    } = asked("pt_BR.UTF-8").await;
    let id = consent["id"].as_str().unwrap();
    let message = app.question_as(&browser, id).await["request"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        message.contains("remote pede que você entre em 127.0.0.1"),
        "{message}"
    );

    answer_as_person(&app, &browser, id, &json!({"action": "decline"})).await;
    let reply = host.recv().await;
    assert_eq!(reply["error"]["code"], -32603, "{reply}");
    let text = reply["error"]["message"].as_str().unwrap();
    assert!(text.contains("declined the sign-in"), "{text}");
    // The proxy is done with this sign-in: nothing was registered, nothing else asked.
    let after = targets(&seen);
    assert!(nothing_beyond_the_metadata(&after), "{after:?}");
    assert_eq!(human_questions(&app, &browser).await, Vec::<Value>::new());
}

#[tokio::test]
async fn with_a_pre_registered_client_the_sign_in_is_the_one_question() {
    let app = spawn_app().await;
    let (url, seen) = serve(handler(Metadata::Honest)).await;
    let mut host = Host::start(&app.state, &url, &["--client-id", "pre-1"]);
    host.send(INIT).await;
    let browser = app.login().await;
    let sign_in = first_for_the_person(&app, &browser, "url").await;
    // The consent would have come first: there is none.
    let open = human_questions(&app, &browser).await;
    assert_eq!(open.len(), 1, "{open:?}");
    let detail = app
        .question_as(&browser, sign_in["id"].as_str().unwrap())
        .await;
    let authorize = detail["request"]["url"].as_str().unwrap();
    let pairs = query(&authorize[authorize.find("/authorize").unwrap()..]);
    assert_eq!(param(&pairs, "client_id"), Some("pre-1"));
    let so_far = targets(&seen);
    assert!(nothing_beyond_the_metadata(&so_far), "{so_far:?}");
}

#[tokio::test]
async fn the_host_leaving_withdraws_the_consent_question() {
    let Asked {
        app,
        seen,
        host,
        browser,
        consent,
    } = asked("C").await;
    let id = consent["id"].as_str().unwrap();
    let Host {
        mut child, stdin, ..
    } = host;
    drop(stdin);
    let status = tokio::time::timeout(std::time::Duration::from_secs(10), child.wait()).await;
    assert!(status.is_ok(), "the proxy exits when the host leaves");
    assert_eq!(app.question_as(&browser, id).await["state"], "withdrawn");
    let after = targets(&seen);
    assert!(nothing_beyond_the_metadata(&after), "{after:?}");
}
