//! The sampling request review as a person uses it: after a failed model run the
//! page's own Approve and Reject still decide, and every hand-written answer or decline is in
//! the audit.

use std::time::Duration;

use mcp_consent::config::Config;
use mcp_consent::sampling::{ModelConfig, RoutingConfig};
use reqwest::{Client, StatusCode};
use serde_json::{Value, json};

use crate::helpers::*;
use crate::model_review::model;

/// A model whose API nobody listens on (port 1 on loopback): every run of it fails.
fn dead_model(id: &str) -> ModelConfig {
    model(id, "http://127.0.0.1:1/v1/", false, 1.0)
}

async fn app_with(models: Vec<ModelConfig>) -> TestApp {
    spawn_with(Config {
        models,
        routing: RoutingConfig::default(),
        ..Config::default()
    })
    .await
}

/// The value of the page's `approvalId` field in the request review.
fn approval_of(page: &str) -> String {
    let at = page
        .find("name=\"approvalId\" value=\"")
        .unwrap_or_else(|| panic!("no approval id on the page: {page}"));
    let rest = &page[at + "name=\"approvalId\" value=\"".len()..];
    rest[..rest.find('"').unwrap()].to_owned()
}

/// Posts the page's request review form as the browser would: its csrf and approval id, plus
/// `fields`.
async fn post_review(
    app: &TestApp,
    browser: &Client,
    id: &str,
    fields: &[(&str, &str)],
) -> reqwest::Response {
    let page = app.html(browser, &format!("/questions/{id}")).await;
    let (csrf, approval) = (csrf_of(&page), approval_of(&page));
    let mut form = vec![("csrf", csrf.as_str()), ("approvalId", approval.as_str())];
    form.extend_from_slice(fields);
    browser
        .post(format!("{}/questions/{id}/decide", app.base))
        .form(&form)
        .send()
        .await
        .unwrap()
}

/// Posts one decision of the page's form, the prompt left out.
async fn post_decision(app: &TestApp, browser: &Client, id: &str, decision: &str) -> StatusCode {
    post_review(app, browser, id, &[("decision", decision)])
        .await
        .status()
}

/// Waits until the question has `n` runs, all finished and back in request review.
async fn failed_runs(app: &TestApp, id: &str, n: usize) -> Value {
    let reached = eventually(Duration::from_secs(10), || async {
        let q = app.question(id).await;
        let runs = q["review"]["runs"].as_array().map_or(0, Vec::len);
        (q["phase"] == "request_review" && runs == n && q["review"]["runs"][0]["state"] == "failed")
            .then_some(q)
    })
    .await;
    match reached {
        Some(q) => q,
        None => panic!("no {n} failed runs: {}", app.question(id).await),
    }
}

#[tokio::test]
async fn after_a_failed_run_the_request_review_still_approves_and_rejects() {
    let app = app_with(vec![dead_model("dead")]).await;
    let id = app.open_ok(sampling_request(1, "hello")).await;
    let browser = app.login().await;
    assert_eq!(
        post_decision(&app, &browser, &id, "approve").await,
        StatusCode::SEE_OTHER
    );
    failed_runs(&app, &id, 1).await;
    let page = app.html(&browser, &format!("/questions/{id}")).await;
    assert!(page.contains("failed"), "{page}");

    // Approve again from the page: a new run, not a replay of the first approval.
    assert_eq!(
        post_decision(&app, &browser, &id, "approve").await,
        StatusCode::SEE_OTHER
    );
    failed_runs(&app, &id, 2).await;

    // Reject from the page: the question closes with -1.
    assert_eq!(
        post_decision(&app, &browser, &id, "reject").await,
        StatusCode::SEE_OTHER
    );
    let q = app.question(&id).await;
    assert_eq!(q["state"], "declined", "{q}");
    assert_eq!(
        app.response(&id, 0).await.1["response"]["error"]["code"],
        -1
    );
}

#[tokio::test]
async fn hand_written_answers_and_declines_of_sampling_are_audited() {
    let app = spawn_app().await;
    let answered = app.open_ok(sampling_request(1, "PROMPT-77aa")).await;
    let result = json!({"role": "assistant", "content": {"type": "text", "text": "REPLY-77bb"},
        "model": "written-by-hand"});
    let (status, _) = app
        .answer(&answered, json!({"action": "accept", "result": result}))
        .await;
    assert_eq!(status, StatusCode::OK);

    // Declined and cancelled on the page, by the person.
    let browser = app.login().await;
    let mut by_page = Vec::new();
    for (n, action) in [(2, "decline"), (3, "cancel")] {
        let id = app.open_ok(sampling_request(n, "PROMPT-77aa")).await;
        let page = app.html(&browser, &format!("/questions/{id}")).await;
        let csrf = csrf_of(&page);
        let res = browser
            .post(format!("{}/questions/{id}/answer", app.base))
            .form(&[("csrf", csrf.as_str()), ("action", action)])
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::SEE_OTHER);
        by_page.push(id);
    }

    let audit: Value = app.get("/api/v1/audit").await.json().await.unwrap();
    let entries: Vec<(&str, &str, &str)> = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["questionId"].as_str().unwrap(),
                e["actor"].as_str().unwrap(),
                e["action"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        entries,
        [
            (by_page[1].as_str(), "human", "cancelled"),
            (by_page[0].as_str(), "human", "declined"),
            (answered.as_str(), "agent", "answered"),
        ],
        "{audit}"
    );
    // The model a hand-written answer names is the answerer's text: not kept (the response
    // digest covers it).
    assert!(
        audit["entries"][2]["model"]
            .as_str()
            .is_none_or(str::is_empty),
        "{audit}"
    );
    assert!(!audit.to_string().contains("written-by-hand"), "{audit}");
    let text = audit.to_string();
    assert!(!text.contains("PROMPT-77aa") && !text.contains("REPLY-77bb"));
    let page = app.html(&browser, "/audit").await;
    assert!(
        page.contains("answered") && page.contains("declined"),
        "{page}"
    );
}

/// A model that would answer, priced at `usd_per_mtok` for input (4× for output).
fn priced_model(id: &str, usd_per_mtok: f64) -> ModelConfig {
    model(id, "http://127.0.0.1:1/v1/", false, usd_per_mtok)
}

#[tokio::test]
async fn a_model_over_the_cost_cap_runs_only_after_a_confirmation_naming_the_cost_and_the_cap() {
    // maxTokens 100: "cheap" costs at most ~$0.0004, "pricey" at most ~$40.
    let app = spawn_with(Config {
        models: vec![
            priced_model("cheap", 1.0),
            priced_model("pricey", 100_000.0),
        ],
        routing: RoutingConfig {
            max_request_cost_usd: Some(0.01),
        },
        ..Config::default()
    })
    .await;
    let id = app.open_ok(sampling_request(1, "hello")).await;
    let browser = app.login().await;
    let page = app.html(&browser, &format!("/questions/{id}")).await;
    let option = |model: &str| {
        let at = page
            .find(&format!("<option value=\"{model}\""))
            .unwrap_or_else(|| panic!("no option {model}: {page}"));
        page[at..at + page[at..].find("</option>").unwrap()].to_owned()
    };
    let (cheap, pricey) = (option("cheap"), option("pricey"));
    assert!(
        cheap.contains("$0.000") && !cheap.contains("disabled"),
        "{cheap}"
    );
    // Over the cap only: it may be picked, marked so, and asks to confirm.
    assert!(
        !pricey.contains("disabled")
            && pricey.contains("data-over-cap=")
            && pricey.contains("over the cost cap (asks to confirm)"),
        "{pricey}"
    );
    assert!(page.contains("aria-describedby=\"routed-cost\""), "{page}");

    // Posted without the confirmation: the confirmation page naming the cost and the cap,
    // nothing runs, the question stays open.
    let approval = approval_of(&page);
    let res = post_review(
        &app,
        &browser,
        &id,
        &[("model", "pricey"), ("decision", "approve")],
    )
    .await;
    let status = res.status();
    let body = res.text().await.unwrap();
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        body.contains("Run pricey over the cost cap?")
            && body.contains("more than the cap of $0.01")
            && body.contains("name=\"overCap\" value=\"confirmed\""),
        "{body}"
    );
    let q = app.question(&id).await;
    assert_eq!(
        (&q["state"], &q["phase"]),
        (&json!("pending"), &json!("request_review"))
    );
    assert_eq!(q["review"]["runs"], json!([]));
    let res = app
        .post_json(
            &format!("/api/v1/questions/{id}/approvals"),
            &json!({"approvalId": approval, "decision": "approve", "model": "pricey"}),
        )
        .await;
    assert_eq!(res.status(), StatusCode::UNPROCESSABLE_ENTITY);
    // A script's confirmation is not the person's: the token cannot run it over the cap.
    let res = app
        .post_json(
            &format!("/api/v1/questions/{id}/approvals"),
            &json!({"approvalId": approval, "decision": "approve", "model": "pricey",
                "overCapConfirmed": true}),
        )
        .await;
    assert_eq!(res.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(app.question(&id).await["review"]["runs"], json!([]));

    // Confirmed: it runs, and the receipt says the reviewer chose it over the cap.
    let res = post_review(
        &app,
        &browser,
        &id,
        &[
            ("model", "pricey"),
            ("decision", "approve"),
            ("overCap", "confirmed"),
        ],
    )
    .await;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    let q = app.question(&id).await;
    let run = &q["review"]["runs"][0];
    assert_eq!(run["model"], json!("pricey"), "{q}");
}

#[tokio::test]
async fn approve_runs_the_prompt_as_edited_on_the_one_review_form() {
    let app = app_with(vec![dead_model("dead")]).await;
    let id = app.open_ok(sampling_request(1, "ORIGINAL-9c1d")).await;
    let browser = app.login().await;
    let page = app.html(&browser, &format!("/questions/{id}")).await;
    // The prompt is editable in the same form as Approve and run.
    let form_start = page.find("action=\"/questions/").unwrap();
    let form = &page[form_start..];
    let form = &form[..form.find("</form>").unwrap()];
    assert!(
        form.contains("name=\"text.0.0\"")
            && form.contains("ORIGINAL-9c1d")
            && form.contains("Approve and run")
            && form.contains("name=\"model\""),
        "{form}"
    );
    let edited = [
        ("baseRevision", "1"),
        ("systemPrompt", "Be brief."),
        ("text.0.0", "EDITED-4b2a"),
        ("decision", "approve"),
    ];
    let res = post_review(&app, &browser, &id, &edited).await;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    // The edited prompt ran (revision 2), and the edit is audited before the approval.
    let q = failed_runs(&app, &id, 1).await;
    assert_eq!(q["revision"], 2, "{q}");
    assert_eq!(
        q["review"]["params"]["messages"][0]["content"]["text"],
        "EDITED-4b2a"
    );
    assert_eq!(q["review"]["params"]["systemPrompt"], "Be brief.");
    let audit: Value = app.get("/api/v1/audit").await.json().await.unwrap();
    let actions: Vec<&str> = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["approved", "edited"], "{audit}");
    // The page shows the edited prompt in the form, the server's original still visible.
    let page = app.html(&browser, &format!("/questions/{id}")).await;
    assert!(
        page.contains("EDITED-4b2a") && page.contains("ORIGINAL-9c1d"),
        "{page}"
    );
    // The page's words are escaped like any text (askama writes ' as &#39;).
    assert!(page.contains("server&#39;s original"), "{page}");

    // Approving without a change makes no new revision.
    let mut unchanged = edited;
    unchanged[0] = ("baseRevision", "2");
    let res = post_review(&app, &browser, &id, &unchanged).await;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    let q = failed_runs(&app, &id, 2).await;
    assert_eq!(q["revision"], 2, "{q}");
}

#[tokio::test]
async fn a_rule_made_while_requests_wait_is_offered_for_them_and_audited() {
    let app = app_with(vec![dead_model("dead")]).await;
    let waiting = app.open_ok(sampling_request(1, "hello")).await;
    let browser = app.login().await;
    let page = app.html(&browser, "/rules").await;
    let csrf = csrf_of(&page);
    let res = browser
        .post(format!("{}/rules", app.base))
        .form(&[
            ("csrf", csrf.as_str()),
            ("server", "test-server"),
            ("scope", "request"),
            ("reason", "trusted"),
            ("days", "7"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    // Created after the request opened: it does not run by itself, the page offers it.
    assert_eq!(app.question(&waiting).await["review"]["runs"], json!([]));
    let page = app.html(&browser, "/rules").await;
    assert!(page.contains("Apply to the 1 waiting request<"), "{page}");
    let at = page.find("/apply\"").unwrap();
    let action = &page[page[..at].rfind("action=\"").unwrap() + "action=\"".len()..at + 6];
    let res = browser
        .post(format!("{}{action}", app.base))
        .form(&[("csrf", csrf.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    failed_runs(&app, &waiting, 1).await;
    let audit: Value = app.get("/api/v1/audit").await.json().await.unwrap();
    let entry = &audit["entries"][0];
    assert_eq!(
        (&entry["action"], &entry["questionId"]),
        (&json!("auto_approved"), &json!(waiting)),
        "{audit}"
    );
    assert!(
        entry["actor"].as_str().unwrap().starts_with("rule:"),
        "{audit}"
    );
}
