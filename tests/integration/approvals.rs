//! Two-step approval of sampling on a configured model, against a local fake of an
//! OpenAI-compatible chat-completions API (real HTTP): nothing runs before a request approval,
//! nothing reaches the server before a response approval, and every decision is exactly once.

use mcp_consent::sampling::RoutingConfig;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;
use crate::model_review::{
    FakeModel, app_with_models, approve_request, decide, hinted, phase_becomes,
};

#[tokio::test]
async fn both_steps_are_approved_exactly_once_and_regenerate_can_switch_models() {
    let fake = FakeModel::start().await;
    let app = app_with_models(&fake, RoutingConfig::default()).await;
    // Hints in order: "nomatch" matches nothing (not a failure), "mini" wins over "big".
    let id = app.open_ok(hinted(1, &["nomatch", "mini", "big"])).await;
    let q = app.question(&id).await;
    assert_eq!(q["phase"], "request_review");
    assert_eq!(
        q["review"]["route"]["chosen"]["id"], "fast-mini",
        "{}",
        q["review"]["route"]
    );
    assert!(
        fake.calls().is_empty(),
        "nothing runs before the request is approved"
    );

    let request_approval = q["review"]["requestApprovalId"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, body) = decide(&app, &id, &request_approval, "approve", None).await;
    assert_eq!(
        (status, body["applied"].as_str()),
        (StatusCode::OK, Some("done")),
        "{body}"
    );
    let q = phase_becomes(&app, &id, "response_review").await;
    assert_eq!(fake.calls().len(), 1);
    assert_eq!(fake.calls()[0]["model"], "fast-mini");
    assert_eq!(
        fake.calls()[0]["messages"][0],
        json!({"role": "system", "content": "Be kind."})
    );
    assert_eq!(
        app.response(&id, 0).await.0,
        StatusCode::ACCEPTED,
        "nothing delivered yet"
    );

    // A double click on the same approval changes nothing and calls no model.
    let (status, body) = decide(&app, &id, &request_approval, "approve", None).await;
    assert_eq!(
        (status, body["applied"].as_str()),
        (StatusCode::OK, Some("replayed"))
    );
    assert_eq!(fake.calls().len(), 1);

    // Regenerate on another model.
    let first_response = q["review"]["responseApprovalId"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, _) = decide(&app, &id, &first_response, "regenerate", Some("big-smart")).await;
    assert_eq!(status, StatusCode::OK);
    let q = phase_becomes(&app, &id, "response_review").await;
    assert_eq!(fake.calls().len(), 2);
    assert_eq!(fake.calls()[1]["model"], "big-smart");
    let second_response = q["review"]["responseApprovalId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(first_response, second_response);

    // Sending the first run's answer is refused: it is outdated.
    let (status, _) = decide(
        &app,
        &id,
        &format!("{id}:response:{}", "not-the-latest-run"),
        "send",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);

    let (status, body) = decide(&app, &id, &second_response, "send", None).await;
    assert_eq!(
        (status, body["state"].as_str()),
        (StatusCode::OK, Some("accepted")),
        "{body}"
    );
    let (status, again) = decide(&app, &id, &second_response, "send", None).await;
    assert_eq!(
        (status, again["applied"].as_str()),
        (StatusCode::OK, Some("replayed"))
    );
    let (_, delivered) = app.response(&id, 0).await;
    assert_eq!(
        delivered["response"]["result"]["content"]["text"],
        "answer 2 from big-smart"
    );
    assert_eq!(delivered["response"]["result"]["role"], "assistant");

    // The audit has every step, with digests and never the prompt or the answer.
    let audit: Value = app.get("/api/v1/audit").await.json().await.unwrap();
    let actions: Vec<&str> = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["delivered", "regenerated", "approved"]);
    let text = audit.to_string();
    assert!(!text.contains("SECRET-PROMPT-1f2e") && !text.contains("answer 2 from"));
    assert_eq!(
        audit["entries"][0]["costUsd"].as_f64().map(|c| c > 0.0),
        Some(true)
    );
}

#[tokio::test]
async fn reject_sends_minus_one_and_no_model_text() {
    let fake = FakeModel::start().await;
    let app = app_with_models(&fake, RoutingConfig::default()).await;
    let id = app.open_ok(hinted(2, &[])).await;
    approve_request(&app, &id).await;
    let q = phase_becomes(&app, &id, "response_review").await;
    let (status, _) = decide(
        &app,
        &id,
        q["review"]["responseApprovalId"].as_str().unwrap(),
        "reject",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (_, body) = app.response(&id, 0).await;
    assert_eq!(body["response"]["error"]["code"], -1);
    assert!(
        !body.to_string().contains("answer 1"),
        "no model text reaches the server"
    );
}

#[tokio::test]
async fn an_edit_makes_a_new_revision_and_voids_the_old_approval() {
    let fake = FakeModel::start().await;
    let app = app_with_models(&fake, RoutingConfig::default()).await;
    let id = app.open_ok(hinted(3, &["mini"])).await;
    let old = app.question(&id).await["review"]["requestApprovalId"]
        .as_str()
        .unwrap()
        .to_owned();
    let res = app
        .post_json(
            &format!("/api/v1/questions/{id}/revisions"),
            &json!({"baseRevision": 1, "systemPrompt": "Be brief.", "texts": [{"message": 0, "block": 0, "text": "edited question"}]}),
        )
        .await;
    assert_eq!(res.status(), StatusCode::OK);
    let (status, _) = decide(&app, &id, &old, "approve", None).await;
    assert_eq!(
        status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "an approval of the old revision is refused"
    );
    assert!(fake.calls().is_empty());
    // An edit against the old revision is refused too.
    let res = app
        .post_json(
            &format!("/api/v1/questions/{id}/revisions"),
            &json!({"baseRevision": 1, "systemPrompt": "x"}),
        )
        .await;
    assert_eq!(res.status(), StatusCode::UNPROCESSABLE_ENTITY);

    let q = app.question(&id).await;
    assert_eq!(q["revision"], 2);
    decide(
        &app,
        &id,
        q["review"]["requestApprovalId"].as_str().unwrap(),
        "approve",
        None,
    )
    .await;
    phase_becomes(&app, &id, "response_review").await;
    let call = &fake.calls()[0];
    assert_eq!(call["messages"][0]["content"], "Be brief.");
    assert_eq!(call["messages"][1]["content"], "edited question");
}

#[tokio::test]
async fn without_a_permitted_route_the_question_waits_for_the_person() {
    let fake = FakeModel::start().await;
    // A cap no model fits under: every candidate is over budget.
    let app = app_with_models(
        &fake,
        RoutingConfig {
            max_request_cost_usd: Some(0.000_000_01),
        },
    )
    .await;
    let id = app.open_ok(hinted(4, &["big"])).await;
    let q = app.question(&id).await;
    assert!(
        q["review"]["route"]["chosen"].is_null(),
        "{}",
        q["review"]["route"]
    );
    assert_eq!(
        q["review"]["route"]["exclusions"].as_array().unwrap().len(),
        2
    );
    let (status, body) = decide(
        &app,
        &id,
        q["review"]["requestApprovalId"].as_str().unwrap(),
        "approve",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(body.to_string().contains("no permitted route"), "{body}");
    assert_eq!(app.question(&id).await["state"], "pending");
    assert!(fake.calls().is_empty());

    // Tools gate: only big-smart offers tools, so a tool request routes there even with a "mini" hint.
    let app = app_with_models(&fake, RoutingConfig::default()).await;
    let request = json!({"jsonrpc": "2.0", "id": 5, "method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "weather?"}}], "maxTokens": 50,
        "modelPreferences": {"hints": [{"name": "mini"}]},
        "tools": [{"name": "get_weather", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}]}});
    let id = app.open_ok(request).await;
    let q = app.question(&id).await;
    assert_eq!(q["review"]["route"]["chosen"]["id"], "big-smart");
    decide(
        &app,
        &id,
        q["review"]["requestApprovalId"].as_str().unwrap(),
        "approve",
        None,
    )
    .await;
    let q = phase_becomes(&app, &id, "tool_use_review").await;
    assert_eq!(q["review"]["runs"][0]["result"]["stopReason"], "toolUse");
}

#[tokio::test]
async fn the_review_pages_show_the_route_and_take_decisions() {
    let fake = FakeModel::start().await;
    let app = app_with_models(&fake, RoutingConfig::default()).await;
    let id = app.open_ok(hinted(8, &["big"])).await;
    let browser = app.login().await;
    let page = app.html(&browser, &format!("/questions/{id}")).await;
    assert!(
        page.contains("Routed to <strong class=\"routed\">big-smart</strong>"),
        "{page}"
    );
    assert!(page.contains("estimated cost") && page.contains("Approve and run"));
    let csrf = csrf_of(&page);
    let approval = format!("{id}:request:1");
    let res = browser
        .post(format!("{}/questions/{id}/decide", app.base))
        .form(&[
            ("csrf", csrf.as_str()),
            ("approvalId", approval.as_str()),
            ("model", "fast-mini"),
            ("decision", "approve"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    let q = phase_becomes(&app, &id, "response_review").await;
    assert_eq!(
        fake.calls()[0]["model"],
        "fast-mini",
        "the person's choice of model is used"
    );
    let page = app.html(&browser, &format!("/questions/{id}")).await;
    assert!(
        page.contains("answer 1 from fast-mini")
            && page.contains("Regenerate")
            && page.contains("Nothing has been sent")
    );
    let response_approval = q["review"]["responseApprovalId"]
        .as_str()
        .unwrap()
        .to_owned();
    let res = browser
        .post(format!("{}/questions/{id}/decide", app.base))
        .form(&[
            ("csrf", csrf.as_str()),
            ("approvalId", response_approval.as_str()),
            ("decision", "send"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    assert_eq!(
        app.response(&id, 0).await.1["response"]["result"]["content"]["text"],
        "answer 1 from fast-mini"
    );
    let audit = app.html(&browser, "/audit").await;
    assert!(audit.contains("delivered") && !audit.contains("SECRET-PROMPT"));
}

#[tokio::test]
async fn an_edit_after_the_request_was_approved_is_refused() {
    let fake = FakeModel::start().await;
    let app = app_with_models(&fake, RoutingConfig::default()).await;
    let id = app.open_ok(hinted(10, &[])).await;
    approve_request(&app, &id).await;
    phase_becomes(&app, &id, "response_review").await;
    let res = app
        .post_json(
            &format!("/api/v1/questions/{id}/revisions"),
            &json!({"baseRevision": 1, "systemPrompt": "too late"}),
        )
        .await;
    assert_eq!(
        res.status(),
        StatusCode::UNPROCESSABLE_ENTITY,
        "the answer under review belongs to revision 1"
    );
    let q = app.question(&id).await;
    assert_eq!(
        (q["revision"].as_i64(), q["phase"].as_str()),
        (Some(1), Some("response_review"))
    );
    assert_eq!(fake.calls().len(), 1);
}
