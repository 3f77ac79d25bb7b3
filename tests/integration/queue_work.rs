//! Working the queue from the server's side: a paused or blocked server is refused before
//! anything opens, several questions are declined at once only after a confirmation page,
//! rules guard against misspelt servers and an unconfirmed "both steps", and every decision
//! (forms, URLs, sampling, rules) lands in one audit the history reads back.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

async fn post_form(
    app: &TestApp,
    browser: &reqwest::Client,
    path: &str,
    form: &[(&str, &str)],
) -> (StatusCode, String) {
    let res = browser
        .post(format!("{}{path}", app.base))
        .form(form)
        .send()
        .await
        .unwrap();
    let status = res.status();
    (status, res.text().await.unwrap())
}

/// The entries of `GET /api/v1/audit{query}`.
pub(crate) async fn audit(app: &TestApp, query: &str) -> Vec<Value> {
    let body: Value = app
        .get(&format!("/api/v1/audit{query}"))
        .await
        .json()
        .await
        .unwrap();
    body["entries"].as_array().unwrap().clone()
}

#[tokio::test]
async fn a_paused_or_blocked_server_is_refused_and_a_resumed_one_asks_again() {
    let app = spawn_app().await;
    let browser = app.login().await;
    let csrf = csrf_of(&app.html(&browser, "/").await);
    let (status, _) = post_form(
        &app,
        &browser,
        "/servers/control",
        &[
            ("csrf", &csrf),
            ("server", "test-server"),
            ("change", "pause"),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let (status, body) = app.open(form_request(1), full_caps(), "2025-11-25").await;
    assert_eq!(status, StatusCode::OK, "refused before opening: {body}");
    assert_eq!(body["response"]["error"]["code"], -32603, "{body}");
    let message = body["response"]["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("paused requests from this server until"),
        "{message}"
    );
    let queue = app.html(&browser, "/").await;
    assert!(queue.contains("paused until"), "the queue shows the pause");

    post_form(
        &app,
        &browser,
        "/servers/control",
        &[
            ("csrf", &csrf),
            ("server", "test-server"),
            ("change", "block"),
        ],
    )
    .await;
    post_form(
        &app,
        &browser,
        "/servers/control",
        &[
            ("csrf", &csrf),
            ("server", "test-server"),
            ("change", "resume"),
        ],
    )
    .await;
    let (_, body) = app.open(form_request(2), full_caps(), "2025-11-25").await;
    assert_eq!(
        body["response"]["error"]["message"], "the person blocked requests from this server",
        "a block outlasts the end of a pause"
    );
    post_form(
        &app,
        &browser,
        "/servers/control",
        &[
            ("csrf", &csrf),
            ("server", "test-server"),
            ("change", "unblock"),
        ],
    )
    .await;
    app.open_ok(form_request(3)).await;
    let metrics = app.get("/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains("mcp_consent_rejections_total{kind=\"form\",reason=\"server_paused\"} 2"),
        "both refusals are counted"
    );
}

#[tokio::test]
async fn muting_a_server_keeps_its_questions_opening() {
    let app = spawn_app().await;
    let browser = app.login().await;
    let csrf = csrf_of(&app.html(&browser, "/").await);
    post_form(
        &app,
        &browser,
        "/servers/control",
        &[
            ("csrf", &csrf),
            ("server", "test-server"),
            ("change", "mute"),
        ],
    )
    .await;
    app.open_ok(form_request(1)).await;
    let queue = app.html(&browser, "/").await;
    assert!(queue.contains("notices muted"), "{queue}");
    let muted = queue
        .split("data-muted=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    assert!(
        muted.starts_with('[') && muted.contains("test-server"),
        "the page's script skips it too: {muted}"
    );
}

#[tokio::test]
async fn several_questions_are_declined_only_after_a_confirmation_and_each_is_audited() {
    let app = spawn_app().await;
    let a = app.open_ok(form_request(1)).await;
    let b = app
        .open_ok(sampling_request(2, "Summarise the report"))
        .await;
    let keep = app.open_ok(form_request(3)).await;
    let browser = app.login().await;
    let csrf = csrf_of(&app.html(&browser, "/").await);
    let (status, page) = post_form(
        &app,
        &browser,
        "/questions/decline",
        &[("csrf", &csrf), ("id", &a), ("id", &b)],
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.contains("Decline 2 questions?") && page.contains("Summarise the report"),
        "{page}"
    );
    assert_eq!(
        app.question(&a).await["state"],
        "pending",
        "nothing declined before the confirmation"
    );

    let (status, _) = post_form(
        &app,
        &browser,
        "/questions/decline",
        &[("csrf", &csrf), ("confirmed", "1"), ("id", &a), ("id", &b)],
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let (_, form) = app.response(&a, 0).await;
    assert_eq!(form["response"]["result"], json!({"action": "decline"}));
    let (_, sampling) = app.response(&b, 0).await;
    assert_eq!(sampling["response"]["error"]["code"], -1);
    assert_eq!(app.question(&keep).await["state"], "pending");
    let queue = app.html(&browser, "/?declined=2&skipped=0").await;
    assert!(queue.contains("Declined 2 questions."), "{queue}");

    let entries = audit(&app, "?action=declined").await;
    let kinds: Vec<&str> = entries
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["sampling", "form"], "{entries:?}");
    assert!(entries.iter().all(|e| e["actor"] == "human"));
    assert_eq!(audit(&app, "?kind=form").await.len(), 1);
}

#[tokio::test]
async fn the_queue_filters_by_server_kind_and_text_and_groups_by_server() {
    let app = spawn_app().await;
    app.open_ok(form_request(1)).await;
    app.open_ok(sampling_request(2, "Translate the invoice"))
        .await;
    let browser = app.login().await;
    let all = app.html(&browser, "/").await;
    assert!(all.contains("2 questions waiting"), "{all}");
    let sampling = app.html(&browser, "/?kind=sampling").await;
    assert!(
        sampling.contains("Translate the invoice") && !sampling.contains(">Profile<"),
        "{sampling}"
    );
    assert!(sampling.contains("Showing 1 of 2 waiting questions."));
    let text = app.html(&browser, "/?q=INVOICE").await;
    assert!(text.contains("Translate the invoice") && !text.contains(">Profile<"));
    let none = app.html(&browser, "/?server=other").await;
    assert!(
        none.contains("No waiting question matches; 2 wait in all."),
        "{none}"
    );
    let grouped = app.html(&browser, "/?group=server").await;
    assert!(
        grouped.contains("<h2 class=\"group\"><bdi class=\"server\">test-server</bdi>"),
        "{grouped}"
    );
}

#[tokio::test]
async fn a_rule_for_a_server_never_seen_or_both_steps_unconfirmed_is_not_created() {
    let app = spawn_app().await;
    app.open_ok(form_request(1)).await;
    let browser = app.login().await;
    let csrf = csrf_of(&app.html(&browser, "/rules").await);
    let rule =
        |server: &'static str, scope: &'static str, extra: Option<(&'static str, &'static str)>| {
            let mut form = vec![
                ("csrf", csrf.clone()),
                ("server", server.to_owned()),
                ("scope", scope.to_owned()),
                ("reason", "trusted".to_owned()),
                ("hours", "1".to_owned()),
            ];
            if let Some((k, v)) = extra {
                form.push((k, v.to_owned()));
            }
            form
        };
    let send = |form: Vec<(&'static str, String)>| {
        let browser = browser.clone();
        let url = format!("{}/rules", app.base);
        async move {
            let res = browser.post(url).form(&form).send().await.unwrap();
            let status = res.status();
            (status, res.text().await.unwrap())
        }
    };
    let (status, page) = send(rule("test-servr", "request", None)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        page.contains("No server named") && page.contains("value=\"test-server\""),
        "the seen name is offered: {page}"
    );
    let (status, page) = send(rule("test-server", "both", None)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(page.contains("Confirm that both steps send"), "{page}");
    let rules: Value = app.get("/api/v1/rules").await.json().await.unwrap();
    assert_eq!(rules["rules"].as_array().unwrap().len(), 0, "no rule yet");

    let (status, _) = send(rule("test-server", "both", Some(("confirm_both", "1")))).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let (status, _) = send(rule(
        "test-servr",
        "request",
        Some(("confirm_unknown", "1")),
    ))
    .await;
    assert_eq!(
        status,
        StatusCode::SEE_OTHER,
        "a confirmed unknown name is taken as typed"
    );
    let rules: Value = app.get("/api/v1/rules").await.json().await.unwrap();
    let rules = rules["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 2);
    for r in rules {
        let created =
            chrono::DateTime::parse_from_rfc3339(r["createdAt"].as_str().unwrap()).unwrap();
        let expires =
            chrono::DateTime::parse_from_rfc3339(r["expiresAt"].as_str().unwrap()).unwrap();
        assert_eq!(
            (expires - created).num_minutes(),
            60,
            "the shortest rule lasts an hour"
        );
    }
    let id = rules[0]["id"].as_str().unwrap().to_owned();
    let (status, _) = post_form(
        &app,
        &browser,
        &format!("/rules/{id}/revoke"),
        &[("csrf", &csrf)],
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER);

    let entries = audit(&app, "").await;
    let actions: Vec<(&str, &str)> = entries
        .iter()
        .map(|e| (e["action"].as_str().unwrap(), e["server"].as_str().unwrap()))
        .collect();
    assert_eq!(
        actions,
        [
            ("rule_revoked", "test-servr"),
            ("rule_created", "test-servr"),
            ("rule_created", "test-server")
        ]
    );
    assert!(
        entries
            .iter()
            .all(|e| e["questionId"].is_null() && e["ruleId"].is_string() && e["actor"] == "human")
    );
    assert_eq!(entries[0]["ruleId"], json!(id));
    let page = app.html(&browser, "/audit").await;
    assert!(
        page.contains("rule revoked") && page.contains(&format!("/rules#rule-{id}")),
        "{page}"
    );
}

#[tokio::test]
async fn history_says_when_where_and_how_each_question_was_decided() {
    let app = spawn_app().await;
    let by_script = app.open_ok(form_request(1)).await;
    let (status, _) = app.answer(&by_script, json!({"action": "decline"})).await;
    assert_eq!(status, StatusCode::OK);
    let url = app
        .open_ok(json!({"jsonrpc": "2.0", "id": 2, "method": "elicitation/create", "params": {
            "mode": "url", "elicitationId": "e-2", "url": "https://example.com/connect", "message": "Connect your calendar"}}))
        .await;
    let browser = app.login().await;
    let res = browser
        .get(format!("{}/questions/{url}/open", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(
        res.status(),
        StatusCode::SEE_OTHER,
        "opened through the service"
    );
    let sampling = app.open_ok(sampling_request(3, "Write a haiku")).await;
    app.post_json(&format!("/api/v1/requests/{sampling}/cancel"), &json!({}))
        .await;

    let all = app.html(&browser, "/history").await;
    assert!(all.contains("3 decided questions."), "{all}");
    assert!(
        all.contains("a script (API or CLI)")
            && all.contains("you, in the browser")
            && all.contains("the server"),
        "{all}"
    );
    assert!(all.contains("link opened"), "the recorded action: {all}");
    let urls = app.html(&browser, "/history?kind=url").await;
    assert!(
        urls.contains("Connect your calendar") && !urls.contains(">Profile<"),
        "{urls}"
    );
    let text = app.html(&browser, "/history?q=haiku&since=hour").await;
    assert!(
        text.contains("1 decided question.") && text.contains("withdrawn"),
        "{text}"
    );
    let other = app.html(&browser, "/history?server=nobody").await;
    assert!(other.contains("No decided question matches."), "{other}");
    let opened = audit(&app, "?action=opened").await;
    assert_eq!(opened.len(), 1);
    assert_eq!(
        (opened[0]["kind"].as_str(), opened[0]["actor"].as_str()),
        (Some("url"), Some("human"))
    );
}

#[tokio::test]
async fn the_question_page_says_why_it_asks() {
    let app = spawn_app().await;
    let first = app.open_ok(form_request(1)).await;
    app.answer(&first, json!({"action": "decline"})).await;
    let second = app.open_ok(form_request(2)).await;
    let browser = app.login().await;
    let page = app.html(&browser, &format!("/questions/{second}")).await;
    assert!(page.contains("Why am I being asked?"), "{page}");
    assert!(
        page.contains("<code dir=\"ltr\">s1</code>"),
        "the host session the proxy sent"
    );
    assert!(page.contains("2 questions from this session"), "{page}");
    assert!(
        page.contains("the tool <code><bdi>demo</bdi></code>"),
        "the tool call: {page}"
    );
    assert!(page.contains("This server asked 1 time before"), "{page}");
    assert!(
        page.contains(&format!("/questions/{first}")) && page.contains("declined"),
        "how it was answered"
    );
    let first_page = app.html(&browser, &format!("/questions/{first}")).await;
    assert!(first_page.contains("This server never asked anything before."));
}
