//! Upgrades lose nothing: a store written by release 0.1.0 (commit 0cc5355, before the
//! vocabulary became typed columns with CHECK constraints) is opened and migrated by this
//! release, and every question that was pending there is still answerable with the same
//! JSON-RPC response the old release gave for the same answer.
//!
//! The fixture (`tests/fixtures/upgrade-0cc5355/`) was written by [`write_upgrade_fixture`]
//! run against that commit: `broker.db` is the store (taken with `VACUUM INTO`, so it has no
//! WAL beside it) and `expected.json` the responses the old release gave after the snapshot.

use std::path::{Path, PathBuf};
use std::time::Duration;

use actix_web::{App, HttpResponse, HttpServer, web};
use mcp_consent::config::Config;
use mcp_consent::sampling::{ModelConfig, ProviderKind};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

/// A fake OpenAI-compatible API that always gives the same answer, so the old and the new
/// release see identical model results.
async fn fixed_model() -> String {
    let server = HttpServer::new(|| {
        App::new().default_service(web::to(|body: web::Bytes| async move {
            let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let model = request["model"].as_str().unwrap_or("?").to_owned();
            HttpResponse::Ok().json(json!({"id": "c", "object": "chat.completion", "created": 1,
                "model": model, "choices": [{"index": 0, "message": {"role": "assistant",
                "content": "the fixed answer"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}}))
        }))
    })
    .workers(1)
    .bind("127.0.0.1:0")
    .unwrap();
    let addr = server.addrs()[0];
    tokio::spawn(server.run());
    format!("http://{addr}/v1/")
}

fn config(model_base: &str) -> Config {
    Config {
        // Ten years: the fixture's pending questions must not expire before the test runs.
        question_timeout_secs: 10 * 365 * 86_400,
        models: vec![ModelConfig {
            id: "fixture-model".to_owned(),
            provider: ProviderKind::Openai,
            base_url: model_base.to_owned(),
            api_key_env: None,
            api_key_file: None,
            input_usd_per_mtok: 1.0,
            output_usd_per_mtok: 4.0,
            speed: 0.5,
            intelligence: 0.5,
            tools: false,
            images: false,
            audio: false,
            aliases: vec![],
            servers: None,
            timeout_secs: 300,
        }],
        ..Config::default()
    }
}

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upgrade-0cc5355")
}

fn url_request(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": {
        "mode": "url", "elicitationId": "e-fixture", "url": "https://example.com/sign-in",
        "message": "Please sign in"}})
}

fn sampling(id: i64, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        "systemPrompt": "Be kind.", "maxTokens": 100}})
}

async fn approval_ids(app: &TestApp, id: &str) -> (String, Option<String>) {
    let q = app.question(id).await;
    let review = &q["review"];
    (
        review["requestApprovalId"].as_str().unwrap().to_owned(),
        review["responseApprovalId"].as_str().map(str::to_owned),
    )
}

async fn decide(app: &TestApp, id: &str, approval_id: &str, decision: &str) {
    let res = app
        .post_json(
            &format!("/api/v1/questions/{id}/approvals"),
            &json!({"approvalId": approval_id, "decision": decision}),
        )
        .await;
    let status = res.status();
    assert_eq!(status, StatusCode::OK, "{}", res.text().await.unwrap());
}

async fn phase_becomes(app: &TestApp, id: &str, phase: &str) {
    eventually(Duration::from_secs(10), || async {
        (app.question(id).await["phase"] == phase).then_some(())
    })
    .await
    .unwrap_or_else(|| panic!("question {id} never reached phase {phase}"));
}

/// The response, as the proxy that asked reads it: a question stored before the door it was
/// opened through was recorded counts as the owner-only socket's, where proxies on this
/// computer ask.
async fn delivered(app: &TestApp, id: &str) -> Value {
    let res = app
        .get_over_socket(&format!("/api/v1/requests/{id}/response?wait=10"))
        .await;
    let status = res.status();
    let body: Value = res.json().await.unwrap_or(Value::Null);
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

/// Answers every question pending in the fixture the same way, returning the responses the
/// server got, by question id.
async fn answer_all(app: &TestApp, ids: &Value) -> Value {
    let id = |name: &str| ids[name].as_str().unwrap().to_owned();
    let mut out = serde_json::Map::new();

    let form = id("form");
    let (status, body) = app
        .answer(
            &form,
            json!({"action": "accept", "content": {"name": "Ada", "age": 40}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    out.insert(form.clone(), delivered(app, &form).await);

    let url = id("url");
    let browser = app.login().await;
    let res = browser
        .get(format!("{}/questions/{url}/open", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    out.insert(url.clone(), delivered(app, &url).await);

    // Edited to revision 2, waiting for its request approval.
    let edited = id("sampling_request_review");
    let (request, _) = approval_ids(app, &edited).await;
    assert!(request.ends_with(":request:2"), "{request}");
    decide(app, &edited, &request, "approve").await;
    phase_becomes(app, &edited, "response_review").await;
    let (_, response) = approval_ids(app, &edited).await;
    decide(app, &edited, &response.unwrap(), "send").await;
    out.insert(edited.clone(), delivered(app, &edited).await);

    // Its model run done, waiting for the response approval.
    let ran = id("sampling_response_review");
    let (_, response) = approval_ids(app, &ran).await;
    decide(app, &ran, &response.unwrap(), "send").await;
    out.insert(ran.clone(), delivered(app, &ran).await);

    let declined = id("sampling_declined_later");
    let (request, _) = approval_ids(app, &declined).await;
    decide(app, &declined, &request, "reject").await;
    out.insert(declined.clone(), delivered(app, &declined).await);

    Value::Object(out)
}

/// Writes the fixture. Run against commit 0cc5355 only (it documents how the fixture was
/// made): `MCP_CONSENT_WRITE_FIXTURE=1 cargo test --test integration upgrade:: -- --ignored`.
#[tokio::test]
#[ignore = "writes tests/fixtures/upgrade-0cc5355 with the release under test"]
async fn write_upgrade_fixture() {
    if std::env::var_os("MCP_CONSENT_WRITE_FIXTURE").is_none() {
        return;
    }
    let model = fixed_model().await;
    let app = spawn_with(config(&model)).await;
    let open = |request: Value| {
        let app = &app;
        async move {
            let res = app
                .post_json(
                    "/api/v1/requests",
                    &json!({"server": "fixture-server", "session": "s1", "tool": "demo",
                    "protocolVersion": "2025-11-25", "clientCapabilities": full_caps(),
                    "request": request}),
                )
                .await;
            assert_eq!(res.status(), StatusCode::CREATED);
            res.json::<Value>().await.unwrap()["id"]
                .as_str()
                .unwrap()
                .to_owned()
        }
    };

    // Rules: one active (for another server, so it does not decide the fixture's questions)
    // and one revoked.
    let browser = app.login().await;
    for (server, scope) in [("other-server", "both"), ("revoked-server", "request")] {
        let page = app.html(&browser, "/rules").await;
        let csrf = csrf_of(&page);
        let res = browser
            .post(format!("{}/rules", app.base))
            .form(&[
                ("csrf", csrf.as_str()),
                ("server", server),
                ("scope", scope),
                ("reason", "fixture rule"),
                ("days", "365"),
                ("confirm_both", "1"),
                ("confirm_unknown", "1"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::SEE_OTHER);
    }
    let rules: Value = app.get("/api/v1/rules").await.json().await.unwrap();
    let revoked = rules["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["server"] == "revoked-server")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let res = app
        .post_json(&format!("/api/v1/rules/{revoked}/revoke"), &json!({}))
        .await;
    assert_eq!(res.status(), StatusCode::OK);

    // Decided sampling questions, for approvals and audit rows of every kind.
    let delivered_id = open(sampling(10, "delivered question")).await;
    let (request, _) = approval_ids(&app, &delivered_id).await;
    decide(&app, &delivered_id, &request, "approve").await;
    phase_becomes(&app, &delivered_id, "response_review").await;
    let (_, response) = approval_ids(&app, &delivered_id).await;
    decide(&app, &delivered_id, &response.unwrap(), "send").await;
    let rejected_id = open(sampling(11, "rejected question")).await;
    let (request, _) = approval_ids(&app, &rejected_id).await;
    decide(&app, &rejected_id, &request, "reject").await;
    let declined_form = open(form_request(12)).await;
    app.answer(&declined_form, json!({"action": "decline"}))
        .await;

    // Pending questions of every kind and sampling phase.
    let form = open(form_request(1)).await;
    let url = open(url_request(2)).await;
    let edited = open(sampling(3, "question to edit")).await;
    let res = app
        .post_json(
            &format!("/api/v1/questions/{edited}/revisions"),
            &json!({"baseRevision": 1, "systemPrompt": "Be brief.",
                "texts": [{"message": 0, "block": 0, "text": "edited question"}]}),
        )
        .await;
    assert_eq!(res.status(), StatusCode::OK);
    let ran = open(sampling(4, "question that ran")).await;
    let (request, _) = approval_ids(&app, &ran).await;
    decide(&app, &ran, &request, "approve").await;
    phase_becomes(&app, &ran, "response_review").await;
    let declined_later = open(sampling(5, "question to reject")).await;

    let out = fixture_dir();
    std::fs::create_dir_all(&out).unwrap();
    let db_path = out.join("broker.db");
    let _ = std::fs::remove_file(&db_path);
    let db = mcp_consent::db::Db::open(&app.state.join("broker/broker.db")).unwrap();
    let target = db_path.to_str().unwrap().to_owned();
    db.write(move |c| {
        use diesel::RunQueryDsl;
        diesel::sql_query(format!("VACUUM INTO '{target}'")).execute(c)?;
        Ok(())
    })
    .await
    .unwrap();

    let ids = json!({"form": form, "url": url, "sampling_request_review": edited,
        "sampling_response_review": ran, "sampling_declined_later": declined_later});
    let audit: Value = app.get("/api/v1/audit").await.json().await.unwrap();
    let responses = answer_all(&app, &ids).await;
    let expected = json!({
        "ids": ids,
        "responses": responses,
        "rules": rules["rules"].as_array().unwrap().len(),
        "audit": audit["entries"].as_array().unwrap().len(),
    });
    std::fs::write(
        out.join("expected.json"),
        serde_json::to_string_pretty(&expected).unwrap() + "\n",
    )
    .unwrap();
}

#[tokio::test]
async fn a_store_from_0cc5355_migrates_and_its_pending_questions_answer_the_same() {
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(fixture_dir().join("expected.json")).unwrap(),
    )
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    std::fs::create_dir_all(state.join("broker")).unwrap();
    std::fs::copy(
        fixture_dir().join("broker.db"),
        state.join("broker/broker.db"),
    )
    .unwrap();
    let model = fixed_model().await;
    let app = spawn_on(config(&model), &state).await;

    let rules: Value = app.get("/api/v1/rules").await.json().await.unwrap();
    assert_eq!(
        rules["rules"].as_array().unwrap().len() as u64,
        expected["rules"]
    );
    let audit: Value = app.get("/api/v1/audit").await.json().await.unwrap();
    assert_eq!(
        audit["entries"].as_array().unwrap().len() as u64,
        expected["audit"]
    );
    let pending: Value = app
        .get("/api/v1/questions?state=pending")
        .await
        .json()
        .await
        .unwrap();
    assert!(
        pending
            .to_string()
            .contains(expected["ids"]["form"].as_str().unwrap()),
        "{pending}"
    );

    let responses = answer_all(&app, &expected["ids"]).await;
    assert_eq!(responses, expected["responses"]);
    app.stop().await;
}
